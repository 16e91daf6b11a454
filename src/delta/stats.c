/*
 * delta/stats.c: per-file statistics (add.stats): deciding whether a file may hold rows
 * matching a simple predicate, for conflict detection and scan skipping.
 *
 * The answer is conservative: "no" only when the stats prove it. Others' stats may be
 * truncated (PROTOCOL "Per-file Statistics"; reference/specs.md §1.6): timestamps to
 * milliseconds, so a max is widened by 999 µs; strings to a prefix of 32 characters, so a
 * value above a max of 32 or more characters that is its prefix may still be in the file.
 * Numbers are read from their JSON tokens as written, so decimals compare exactly and
 * longs keep 64 bits. Missing stats, missing columns, booleans, binaries and anything
 * unparsable mean "may match".
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "delta/internal.h"
#include "mcdc/time.h"

/* ---- a tiny JSON token scanner ------------------------------------------------------ */

typedef struct tok {
    const char *p;   /* start of the token */
    size_t      len; /* bytes */
} tok;

static const char *skip_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Skip one JSON value starting at p; returns the end or NULL when malformed. */
static const char *skip_value(const char *p, const char *e, int depth)
{
    p = skip_ws(p, e);
    if (p >= e || depth > 64)
        return NULL;
    if (*p == '"') {
        for (p++; p < e; p++) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                return p + 1;
        }
        return NULL;
    }
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = skip_ws(p + 1, e);
        if (p < e && *p == close)
            return p + 1;
        for (;;) {
            if (close == '}') {
                p = skip_value(p, e, depth + 1); /* key */
                if (!p)
                    return NULL;
                p = skip_ws(p, e);
                if (p >= e || *p != ':')
                    return NULL;
                p++;
            }
            p = skip_value(p, e, depth + 1);
            if (!p)
                return NULL;
            p = skip_ws(p, e);
            if (p < e && *p == ',') {
                p++;
                continue;
            }
            if (p < e && *p == close)
                return p + 1;
            return NULL;
        }
    }
    while (p < e && (isalnum((unsigned char)*p) || *p == '-' || *p == '+' || *p == '.'))
        p++;
    return p;
}

/* Find member @p key of the object at p..e; the value's token goes to out. */
static bool find_member(tok *out, const char *p, const char *e, const char *key)
{
    p = skip_ws(p, e);
    if (p >= e || *p != '{')
        return false;
    p = skip_ws(p + 1, e);
    size_t klen = strlen(key);
    while (p < e && *p == '"') {
        const char *ks = p + 1;
        const char *ke = skip_value(p, e, 0);
        if (!ke)
            return false;
        bool match = (size_t)(ke - 1 - ks) == klen && memcmp(ks, key, klen) == 0;
        p = skip_ws(ke, e);
        if (p >= e || *p != ':')
            return false;
        const char *vs = skip_ws(p + 1, e);
        const char *ve = skip_value(vs, e, 0);
        if (!ve)
            return false;
        if (match) {
            out->p = vs;
            out->len = (size_t)(ve - vs);
            return true;
        }
        p = skip_ws(ve, e);
        if (p < e && *p == ',')
            p = skip_ws(p + 1, e);
        else
            break;
    }
    return false;
}

/* ---- typed bounds ------------------------------------------------------------------- */

/* A bound decoded into a comparable form. */
typedef struct bound {
    bool        ok;
    int64_t     i;
    double      d;
    mcdc_int128 dec;
    char       *s; /* owned, strings */
} bound;

static bool tok_string(char **out, tok t)
{
    json_t *j = json_loadb(t.p, t.len, JSON_DECODE_ANY, NULL);
    if (!json_is_string(j)) {
        json_decref(j);
        return false;
    }
    *out = strdup(json_string_value(j));
    json_decref(j);
    return *out != NULL;
}

/* Decode text (a stats token's text or a partition value) for @p col. */
static bound decode_text(const mcdc_column *col, const char *s, size_t n, bool is_max)
{
    bound b = { 0 };
    char tmp[128];
    if (col->type != MCDC_TYPE_STRING) {
        if (n >= sizeof tmp)
            return b;
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        s = tmp;
    }
    char *end;
    switch (col->type) {
    case MCDC_TYPE_BYTE:
    case MCDC_TYPE_SHORT:
    case MCDC_TYPE_INT:
    case MCDC_TYPE_LONG:
        b.i = strtoll(s, &end, 10);
        b.ok = end != s && *end == '\0';
        break;
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE:
        b.d = strtod(s, &end);
        b.ok = end != s && *end == '\0' && !isnan(b.d);
        break;
    case MCDC_TYPE_DECIMAL:
        b.ok = mcdc_decimal_parse(&b.dec, s, strlen(s), 38, col->scale) == 0;
        break;
    case MCDC_TYPE_DATE: {
        int y, m, d;
        char tail;
        if (sscanf(s, "%d-%d-%d%c", &y, &m, &d, &tail) == 3) {
            b.i = mcdc_days_from_civil(y, (unsigned)m, (unsigned)d);
            b.ok = true;
        }
        break;
    }
    case MCDC_TYPE_TIMESTAMP:
    case MCDC_TYPE_TIMESTAMP_NTZ: {
        /* partition values use a space; stats use 'T' */
        if (strlen(s) > 10 && s[10] == ' ')
            tmp[10] = 'T';
        bool has_zone;
        b.ok = mcdc_time_parse_ex(&b.i, &has_zone, s) == 0;
        if (b.ok && is_max)
            b.i += 999; /* stats truncated to milliseconds */
        break;
    }
    case MCDC_TYPE_STRING:
        b.s = strndup(s, n);
        b.ok = b.s != NULL;
        break;
    default:
        break;
    }
    if (col->type != MCDC_TYPE_STRING || !b.ok)
        mcdc_error_clear();
    return b;
}

static bound decode_tok(const mcdc_column *col, tok t, bool is_max)
{
    bound b = { 0 };
    if (t.len == 4 && memcmp(t.p, "null", 4) == 0)
        return b;
    if (col->type == MCDC_TYPE_STRING || col->type == MCDC_TYPE_DATE ||
        col->type == MCDC_TYPE_TIMESTAMP || col->type == MCDC_TYPE_TIMESTAMP_NTZ) {
        char *s;
        if (!tok_string(&s, t))
            return b;
        b = decode_text(col, s, strlen(s), is_max);
        free(s);
        return b;
    }
    return decode_text(col, t.p, t.len, is_max);
}

/* Compare a predicate value with a bound: <0, 0, >0. */
static int cmp_value(const mcdc_column *col, const mcdc_value *v, const bound *b)
{
    switch (col->type) {
    case MCDC_TYPE_FLOAT:
    case MCDC_TYPE_DOUBLE: {
        double x = col->type == MCDC_TYPE_FLOAT ? v->v.f : v->v.d;
        return x < b->d ? -1 : x > b->d;
    }
    case MCDC_TYPE_DECIMAL:
        return v->v.dec < b->dec ? -1 : v->v.dec > b->dec;
    case MCDC_TYPE_STRING: {
        size_t n = strlen(b->s);
        size_t m = v->v.s.len < n ? v->v.s.len : n;
        int c = memcmp(v->v.s.ptr, b->s, m);
        if (c)
            return c;
        return v->v.s.len < n ? -1 : v->v.s.len > n;
    }
    default:
        return v->v.i < b->i ? -1 : v->v.i > b->i;
    }
}

static bool comparable(const mcdc_column *col)
{
    return col->type != MCDC_TYPE_BOOLEAN && col->type != MCDC_TYPE_BINARY;
}

/* Writers truncate string stats to a prefix of this many characters (Delta's
 * dataSkippingStringPrefixLength, 32 by default; parquet-rs keeps 64 bytes): a shorter
 * max is the exact value. */
#define STRING_STATS_PREFIX_CHARS 32

static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* v above max? For strings, a max that is a prefix of v may be truncated (when it is as
 * long as a truncated prefix): not above. */
static bool above_max(const mcdc_column *col, const mcdc_value *v, const bound *max)
{
    if (cmp_value(col, v, max) <= 0)
        return false;
    if (col->type == MCDC_TYPE_STRING) {
        size_t n = strlen(max->s);
        if (v->v.s.len >= n && memcmp(v->v.s.ptr, max->s, n) == 0 &&
            utf8_chars(max->s) >= STRING_STATS_PREFIX_CHARS)
            return false;
    }
    return true;
}

bool mcdc_delta__may_match(const mcdc_delta_snapshot *snap, const mcdc_delta_file *f,
                           const mcdc_delta_pred *pred)
{
    if (pred->op == MCDC_DELTA_PRED_NONE)
        return false;
    if (pred->op == MCDC_DELTA_PRED_ALL)
        return true;
    int ci = mcdc_delta_schema_find(snap->schema, pred->column);
    if (ci < 0)
        return true;
    const mcdc_delta_field *fld = &snap->schema->fields[ci];
    if (fld->type.kind != MCDC_DELTA_TYPE_PRIMITIVE || !comparable(&fld->type.prim))
        return true;
    const mcdc_column *col = &fld->type.prim;
    const char *phys = snap->column_mapping != MCDC_DELTA_CM_NONE ? fld->physical_name : fld->name;
    bool matches = true;
    bound lo = { 0 }, hi = { 0 };

    /* a partition column: its exact value */
    for (size_t i = 0; i < snap->metadata.n_partition_columns; i++) {
        if (strcasecmp(snap->metadata.partition_columns[i], fld->name) != 0)
            continue;
        bool found;
        const char *pv = mcdc_delta_map_get(&f->partition_values, phys, &found);
        if (!found)
            pv = mcdc_delta_map_get(&f->partition_values, fld->name, &found);
        if (!pv || !*pv) /* NULL partition */
            return pred->value.is_null;
        if (pred->value.is_null)
            return false;
        lo = decode_text(col, pv, strlen(pv), false);
        hi = decode_text(col, pv, strlen(pv), false);
        goto compare;
    }
    if (!f->stats)
        return true;
    const char *s = f->stats, *e = s + strlen(s);
    tok t, sec;
    int64_t num_records = -1, null_count = -1;
    if (find_member(&t, s, e, "numRecords"))
        num_records = strtoll(t.p, NULL, 10);
    if (num_records == 0)
        return false;
    if (find_member(&sec, s, e, "nullCount") && find_member(&t, sec.p, sec.p + sec.len, phys))
        null_count = strtoll(t.p, NULL, 10);
    if (pred->value.is_null)
        return null_count != 0;
    if (num_records > 0 && null_count == num_records)
        return false; /* only NULLs: no comparison is true */
    if (find_member(&sec, s, e, "minValues") && find_member(&t, sec.p, sec.p + sec.len, phys))
        lo = decode_tok(col, t, false);
    if (find_member(&sec, s, e, "maxValues") && find_member(&t, sec.p, sec.p + sec.len, phys))
        hi = decode_tok(col, t, true);
compare:
    switch (pred->op) {
    case MCDC_DELTA_PRED_EQ:
        if (lo.ok && cmp_value(col, &pred->value, &lo) < 0)
            matches = false;
        if (hi.ok && above_max(col, &pred->value, &hi))
            matches = false;
        break;
    case MCDC_DELTA_PRED_GE: /* some row >= v  <=>  max >= v */
        if (hi.ok && above_max(col, &pred->value, &hi))
            matches = false;
        break;
    case MCDC_DELTA_PRED_LE: /* some row <= v  <=>  min <= v */
        if (lo.ok && cmp_value(col, &pred->value, &lo) < 0)
            matches = false;
        break;
    default:
        break;
    }
    free(lo.s);
    free(hi.s);
    return matches;
}
