/*
 * pipeline/snapshot_keys.c: a chunked snapshot's keys: their JSON form and the chunk plan.
 *
 * Key values travel as JSON (facts payloads, bronze userMetadata): a scalar for one key
 * column, a list for several, null for an open end; dates, timestamps and decimals as
 * text, binary as "0x" hex (the jsonl encoding of architecture §7), so they read back to
 * the same values. Planning, once per snapshot (anchor-features §1 "Chunk planning"):
 * - one integer key: rows counted on a grid over [MIN, MAX] (about 16 slices per chunk,
 *   at most 100,000 slices); a slice holding more than chunk_rows is counted again on a
 *   finer grid, down to one value; consecutive slices are packed into chunks of at most
 *   chunk_rows rows (short of it by less than one slice); the last chunk ends at MAX+1
 *   (open when that does not fit the type);
 * - any other unique key (composite, strings, dates, uniqueidentifier): keyset bounds
 *   chunk_rows keys apart, found with the source's key_at; the last chunk is open.
 * The first chunk is open below and each starts where the previous ends, so the chunks
 * cover every key. Costs: O(slices) or O(chunks) source questions, O(chunks) memory.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/log.h"
#include "mcdc/time.h"
#include "pipeline/snapshot_int.h"

#define GRID_PER_CHUNK 16
#define GRID_MAX_SLICES 100000

static bool is_int_type(mcdc_type_id t)
{
    return t == MCDC_TYPE_BYTE || t == MCDC_TYPE_SHORT || t == MCDC_TYPE_INT || t == MCDC_TYPE_LONG;
}

static void int_range(mcdc_type_id t, int64_t *lo, int64_t *hi)
{
    switch (t) {
    case MCDC_TYPE_BYTE: *lo = 0; *hi = 255; break; /* tinyint is unsigned */
    case MCDC_TYPE_SHORT: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case MCDC_TYPE_INT: *lo = INT32_MIN; *hi = INT32_MAX; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX;
    }
}

void mcdc_snap__keydef_clear(snap_keydef *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->names[i]);
    free(k->names);
    free(k->cols);
    memset(k, 0, sizeof *k);
}

int mcdc_snap__keydef(snap_keydef *out, mcdc_source *src, const char *ci, const mcdc_schema *captured)
{
    memset(out, 0, sizeof *out);
    int rc = src->ops->key_columns(src, ci, &out->names, &out->n);
    if (rc < 0)
        return rc;
    if (out->n == 0) {
        mcdc_snap__keydef_clear(out);
        mcdc_error_set(MCDC_EINVAL, "capture instance %s has no unique index: a chunked snapshot "
                       "reads the table by key ranges", ci);
        return mcdc_error_hint("use --bootstrap-mode full, or enable CDC with @index_name or a "
                               "primary key");
    }
    if (!(out->cols = calloc(out->n, sizeof *out->cols))) {
        mcdc_snap__keydef_clear(out);
        return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
    }
    for (size_t i = 0; i < out->n; i++) {
        int c = mcdc_schema_find(captured, out->names[i]);
        if (c < 0) {
            rc = mcdc_error_set(MCDC_EINVAL, "capture instance %s: key column %s is not captured",
                                ci, out->names[i]);
            mcdc_snap__keydef_clear(out);
            return rc;
        }
        out->cols[i] = captured->cols[c];
        out->cols[i].name = out->names[i];
    }
    out->is_int = out->n == 1 && is_int_type(out->cols[0].type);
    return 0;
}

json_t *mcdc_snap__key_names(const snap_keydef *k)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < k->n; i++)
        json_array_append_new(a, json_string(k->names[i]));
    return a;
}

json_t *mcdc_snap__key_orders(mcdc_source *src, const char *ci, const snap_keydef *k)
{
    mcdc_key_order *o = NULL;
    size_t n = 0;
    if (!src->ops->key_orders || src->ops->key_orders(src, ci, &o, &n) < 0 || n != k->n) {
        mcdc_error_clear();
        free(o);
        return NULL;
    }
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_string(mcdc_key_order_name(o[i])));
    free(o);
    return a;
}

int mcdc_snap__key_to_json(const snap_keydef *k, const mcdc_value *vals, json_t **out)
{
    *out = NULL;
    json_t *arr = k->n > 1 ? json_array() : NULL;
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < k->n; i++) {
        b.len = 0;
        if ((rc = mcdc_value_to_json(&b, &k->cols[i], &vals[i])) < 0)
            break;
        json_t *j = json_loadb(b.ptr, b.len, JSON_DECODE_ANY, NULL);
        if (!j) {
            rc = mcdc_error_set(MCDC_ENOMEM, "snapshot: key %s as JSON", k->names[i]);
            break;
        }
        if (arr)
            json_array_append_new(arr, j);
        else
            *out = j;
    }
    mcdc_buf_dispose(&b);
    if (rc < 0) {
        json_decref(arr);
        json_decref(*out);
        *out = NULL;
        return rc;
    }
    if (arr)
        *out = arr;
    return 0;
}

void mcdc_snap__keyvals_clear(snap_keyvals *kv)
{
    for (size_t i = 0; kv->str && i < kv->n; i++)
        free(kv->str[i]);
    free(kv->str);
    free(kv->v);
    memset(kv, 0, sizeof *kv);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int one_from_json(const mcdc_column *c, const json_t *j, mcdc_value *v, char **str)
{
    memset(v, 0, sizeof *v);
    if (json_is_null(j)) {
        v->is_null = true;
        return 0;
    }
    const char *t = json_string_value(j);
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN:
        if (!json_is_boolean(j)) break;
        v->v.b = json_is_true(j);
        return 0;
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
        if (!json_is_integer(j)) break;
        v->v.i = json_integer_value(j);
        return 0;
    case MCDC_TYPE_FLOAT: case MCDC_TYPE_DOUBLE:
        if (!json_is_number(j)) break;
        if (c->type == MCDC_TYPE_FLOAT) v->v.f = (float)json_number_value(j);
        else v->v.d = json_number_value(j);
        return 0;
    case MCDC_TYPE_DECIMAL:
        if (!t || mcdc_decimal_parse(&v->v.dec, t, strlen(t), c->precision, c->scale) < 0) break;
        return 0;
    case MCDC_TYPE_DATE: {
        char buf[64];
        int64_t us;
        if (!t || strlen(t) != 10) break;
        snprintf(buf, sizeof buf, "%sT00:00:00", t);
        if (mcdc_time_parse(&us, buf) < 0) break;
        v->v.i = us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL);
        return 0;
    }
    case MCDC_TYPE_TIMESTAMP: case MCDC_TYPE_TIMESTAMP_NTZ:
        if (!t || mcdc_time_parse(&v->v.i, t) < 0) break;
        return 0;
    case MCDC_TYPE_STRING:
        if (!t) break;
        if (!(*str = strdup(t))) return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
        v->v.s.ptr = *str;
        v->v.s.len = json_string_length(j);
        return 0;
    case MCDC_TYPE_BINARY: {
        size_t n = t ? strlen(t) : 0;
        if (!t || n < 2 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || n % 2) break;
        if (!(*str = malloc(n / 2 + 1))) return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
        size_t m = 0;
        for (size_t i = 2; i < n; i += 2) {
            int h = hexval(t[i]), l = hexval(t[i + 1]);
            if (h < 0 || l < 0) break;
            (*str)[m++] = (char)(h * 16 + l);
        }
        if (m != (n - 2) / 2) break;
        v->v.s.ptr = *str;
        v->v.s.len = m;
        return 0;
    }
    }
    char *txt = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
    int rc = mcdc_error_set(MCDC_ECORRUPT, "key column %s: %s is not a %s key value", c->name,
                            txt ? txt : "?", mcdc_type_name((char[64]){ 0 }, 64, c));
    free(txt);
    return rc;
}

int mcdc_snap__key_from_json(const snap_keydef *k, const json_t *j, snap_keyvals *out)
{
    memset(out, 0, sizeof *out);
    if (!j || json_is_null(j))
        return 0;
    if (k->n > 1 && (!json_is_array(j) || json_array_size(j) != k->n))
        return mcdc_error_set(MCDC_ECORRUPT, "a key bound of %zu columns must be a list of %zu "
                              "values", k->n, k->n);
    out->n = k->n;
    out->v = calloc(k->n, sizeof *out->v);
    out->str = calloc(k->n, sizeof *out->str);
    if (!out->v || !out->str) {
        mcdc_snap__keyvals_clear(out);
        return mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
    }
    for (size_t i = 0; i < k->n; i++) {
        int rc = one_from_json(&k->cols[i], k->n > 1 ? json_array_get(j, i) : j, &out->v[i], &out->str[i]);
        if (rc < 0) {
            mcdc_snap__keyvals_clear(out);
            return rc;
        }
    }
    return 0;
}

/* ---- asking the source ------------------------------------------------------------------ */

typedef struct key_capture {
    const snap_keydef *k;
    json_t *json;   /* the key seen, or NULL */
    int64_t i;      /* its integer value (integer keys) */
} key_capture;

static int on_key(const mcdc_value *vals, void *payload)
{
    key_capture *c = payload;
    json_decref(c->json);
    c->json = NULL;
    c->i = vals[0].v.i;
    return mcdc_snap__key_to_json(c->k, vals, &c->json);
}

static int need_planning_ops(mcdc_source *src)
{
    if (src->ops->key_at && src->ops->key_count)
        return 0;
    mcdc_error_set(MCDC_EUNSUPPORTED, "%s: this source cannot plan a chunked snapshot yet (no key "
                   "range reads)", src->description ? src->description : "source");
    return mcdc_error_hint("use --bootstrap-mode full for this source");
}

static int key_at(mcdc_source *src, const char *ci, const snap_keydef *k, const json_t *from,
                  int64_t n, bool desc, key_capture *out)
{
    snap_keyvals kv;
    out->k = k;
    out->json = NULL;
    int rc = mcdc_snap__key_from_json(k, from, &kv);
    if (rc == 0)
        rc = src->ops->key_at(src, ci, kv.v, n, desc, on_key, out);
    mcdc_snap__keyvals_clear(&kv);
    return rc;
}

static int count_int(mcdc_source *src, const char *ci, mcdc_int128 lo, mcdc_int128 hi, int64_t *out)
{
    mcdc_value l = { .is_null = false }, h = { .is_null = false };
    l.v.i = (int64_t)lo;
    h.v.i = (int64_t)hi;
    return src->ops->key_count(src, ci, &l, hi > INT64_MAX ? NULL : &h, out);
}

int mcdc_snap__extent(mcdc_source *src, const char *ci, const snap_keydef *k, json_t **out)
{
    *out = NULL;
    int rc = need_planning_ops(src);
    key_capture mn = { 0 }, mx = { 0 };
    int64_t rows = 0;
    if (rc == 0 && k->is_int)
        rc = key_at(src, ci, k, NULL, 0, false, &mn);
    if (rc == 0)
        rc = key_at(src, ci, k, NULL, 0, true, &mx);
    if (rc == 0 && k->is_int)
        rc = src->ops->key_count(src, ci, NULL, NULL, &rows);
    if (rc == 0) {
        if (k->is_int)
            *out = json_pack("{s:s,s:O?,s:O?,s:I}", "kind", "int", "lo", mn.json, "hi", mx.json,
                             "rows", (json_int_t)rows);
        else
            *out = json_pack("{s:s,s:O?}", "kind", "keyset", "max", mx.json);
        if (!*out)
            rc = mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
    }
    json_decref(mn.json);
    json_decref(mx.json);
    return rc;
}

/* ---- planning ----------------------------------------------------------------------------- */

typedef struct slice {
    mcdc_int128 lo;   /* first value */
    int64_t     rows;
} slice;

typedef struct slices {
    slice *a;
    size_t n, cap;
} slices;

static int slice_push(slices *s, mcdc_int128 lo, int64_t rows)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        slice *na = realloc(s->a, cap * sizeof *na);
        if (!na)
            return mcdc_error_set(MCDC_ENOMEM, "snapshot plan: out of memory");
        s->a = na;
        s->cap = cap;
    }
    s->a[s->n].lo = lo;
    s->a[s->n].rows = rows;
    s->n++;
    return 0;
}

/* Count [lo, hi) in @p n_slices slices, refining those above chunk_rows. */
static int grid(mcdc_source *src, const char *ci, mcdc_int128 lo, mcdc_int128 hi, int64_t n_slices,
                int64_t chunk_rows, slices *out)
{
    mcdc_int128 width = hi - lo;
    mcdc_int128 step = (width + n_slices - 1) / n_slices;
    if (step < 1)
        step = 1;
    int rc = 0;
    for (mcdc_int128 a = lo; rc == 0 && a < hi; a += step) {
        mcdc_int128 b = a + step > hi ? hi : a + step;
        int64_t c = 0;
        if ((rc = count_int(src, ci, a, b, &c)) < 0)
            break;
        if (c > chunk_rows && b - a > 1)
            rc = grid(src, ci, a, b, GRID_PER_CHUNK, chunk_rows, out);
        else if (c > 0 || out->n == 0)
            rc = slice_push(out, a, c);
    }
    return rc;
}

static json_t *int_json(mcdc_int128 v, mcdc_int128 type_hi)
{
    return v > type_hi ? json_null() : json_integer((json_int_t)v);
}

static int plan_int(mcdc_source *src, const char *ci, const snap_keydef *k, int64_t chunk_rows,
                    const json_t *extent, json_t *chunks, int64_t *total)
{
    key_capture mn = { 0 }, mx = { 0 };
    int rc = 0;
    json_t *elo = json_object_get(extent, "lo"), *ehi = json_object_get(extent, "hi");
    if (json_is_integer(elo) && json_is_integer(ehi)) { /* the extent recorded at the open */
        mn.json = json_incref(elo);
        mn.i = json_integer_value(elo);
        mx.json = json_incref(ehi);
        mx.i = json_integer_value(ehi);
    } else if (!extent || !json_is_null(elo)) { /* no extent: ask; null: empty at the open */
        if ((rc = key_at(src, ci, k, NULL, 0, false, &mn)) == 0)
            rc = key_at(src, ci, k, NULL, 0, true, &mx);
    }
    if (rc == 0)
        rc = src->ops->key_count(src, ci, NULL, NULL, total);
    if (rc < 0 || !mn.json || !mx.json) { /* an empty table: one open chunk */
        if (rc == 0)
            json_array_append_new(chunks, json_pack("[n,n]"));
        json_decref(mn.json);
        json_decref(mx.json);
        return rc;
    }
    int64_t tlo, thi;
    int_range(k->cols[0].type, &tlo, &thi);
    mcdc_int128 lo = mn.i, hi = (mcdc_int128)mx.i + 1;
    json_decref(mn.json);
    json_decref(mx.json);
    int64_t n_slices = (*total * GRID_PER_CHUNK + chunk_rows - 1) / chunk_rows;
    if (n_slices < 1) n_slices = 1;
    if (n_slices > GRID_MAX_SLICES) n_slices = GRID_MAX_SLICES;
    slices s = { 0 };
    rc = grid(src, ci, lo, hi, n_slices, chunk_rows, &s);
    /* pack consecutive slices */
    json_t *start = json_null();
    int64_t acc = 0;
    for (size_t i = 0; rc == 0 && i < s.n; i++) {
        if (acc > 0 && acc + s.a[i].rows > chunk_rows) {
            json_t *b = int_json(s.a[i].lo, thi);
            json_array_append_new(chunks, json_pack("[oO]", start, b));
            start = b;
            acc = 0;
        }
        acc += s.a[i].rows;
    }
    if (rc == 0)
        json_array_append_new(chunks, json_pack("[oo]", start, int_json(hi, thi)));
    else
        json_decref(start);
    free(s.a);
    return rc;
}

static int plan_keyset(mcdc_source *src, const char *ci, const snap_keydef *k, int64_t chunk_rows,
                       json_t *chunks, int64_t *total)
{
    int rc = src->ops->key_count(src, ci, NULL, NULL, total);
    json_t *start = json_null();
    while (rc == 0) {
        key_capture next = { 0 };
        if ((rc = key_at(src, ci, k, start, chunk_rows, false, &next)) < 0)
            break;
        if (!next.json) {
            json_array_append_new(chunks, json_pack("[on]", start));
            start = NULL;
            break;
        }
        json_array_append_new(chunks, json_pack("[oO]", start, next.json));
        start = next.json;
    }
    json_decref(start);
    return rc;
}

int mcdc_snap__plan(mcdc_source *src, const char *ci, const snap_keydef *k, int64_t chunk_rows,
                    const json_t *extent, json_t **chunks, int64_t *total_rows)
{
    *chunks = NULL;
    *total_rows = 0;
    int rc = need_planning_ops(src);
    if (rc < 0)
        return rc;
    MCDC_ASSERT_ARG(chunk_rows > 0);
    json_t *a = json_array();
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot plan: out of memory");
    rc = k->is_int ? plan_int(src, ci, k, chunk_rows, extent, a, total_rows)
                   : plan_keyset(src, ci, k, chunk_rows, a, total_rows);
    if (rc < 0) {
        json_decref(a);
        return rc;
    }
    *chunks = a;
    return 0;
}

/* A key range's plan: keyset bounds chunk_rows keys apart from @p lo, the last chunk ending
 * at @p hi, so no chunk reaches outside [lo, hi). Whether a bound b is below hi is asked
 * as key_count(b, hi) > 0 (b itself is a key), which needs no key comparison here. */
int mcdc_snap__plan_range(mcdc_source *src, const char *ci, const snap_keydef *k, int64_t chunk_rows,
                          const json_t *lo, const json_t *hi, json_t **chunks, int64_t *total_rows)
{
    *chunks = NULL;
    *total_rows = 0;
    int rc = need_planning_ops(src);
    if (rc < 0)
        return rc;
    MCDC_ASSERT_ARG(chunk_rows > 0 && lo && hi);
    json_t *a = json_array();
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot plan: out of memory");
    snap_keyvals l = { 0 }, h = { 0 };
    if ((rc = mcdc_snap__key_from_json(k, lo, &l)) == 0 && (rc = mcdc_snap__key_from_json(k, hi, &h)) == 0)
        rc = src->ops->key_count(src, ci, l.v, h.v, total_rows);
    json_t *start = json_incref((json_t *)lo);
    while (rc == 0) {
        key_capture next = { 0 };
        if ((rc = key_at(src, ci, k, start, chunk_rows, false, &next)) < 0)
            break;
        int64_t below = 0;
        if (next.json && !json_is_null(hi)) {
            snap_keyvals b = { 0 };
            if ((rc = mcdc_snap__key_from_json(k, next.json, &b)) == 0)
                rc = src->ops->key_count(src, ci, b.v, h.v, &below);
            mcdc_snap__keyvals_clear(&b);
            if (rc < 0) {
                json_decref(next.json);
                break;
            }
        } else if (next.json) {
            below = 1;
        }
        if (below == 0) { /* no key past this chunk inside the range: it ends at hi */
            json_decref(next.json);
            json_array_append_new(a, json_pack("[oO]", start, hi));
            start = NULL;
            break;
        }
        json_array_append_new(a, json_pack("[oO]", start, next.json));
        start = next.json;
    }
    json_decref(start);
    mcdc_snap__keyvals_clear(&l);
    mcdc_snap__keyvals_clear(&h);
    if (rc < 0) {
        json_decref(a);
        return rc;
    }
    *chunks = a;
    return 0;
}
