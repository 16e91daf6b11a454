/*
 * source/columns.c: --columns 'name TYPE, ...': a source that shows a selection of the captured
 * columns, retyped where asked, over any other source.
 *
 * The wrapper forwards every operation to the source it wraps. captured_columns maps the
 * wrapped source's columns to the selection (by name, ignoring case) and checks it: a name no
 * column has, or a type the column's values do not all convert to exactly, is refused before
 * anything is read (MCDC_EINVAL, listing the columns). read_changes and snapshot copy each
 * row's values into the selection's order, converting the retyped ones, and hand them on; the
 * strings they point to are the wrapped source's, valid during the callback as before. The
 * wrapped source sees the selection through its base `select` and may leave the other columns
 * out of its reads (the SQL Server source does, so an unmapped type is never fetched).
 * Key-range operations (key_at, key_count, key_buckets) take key values in key order and are
 * forwarded unchanged; a key column keeps its type, so they stay right. Cost: one copy of a
 * row's value structs per row, plus the text of a column retyped to string.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/source.h"
#include "source/columns.h"

#define MAX_SELECT 4096

typedef struct sel_col {
    char       *name;     /* as written (brackets and backticks removed) */
    bool        typed;    /* a TYPE was given */
    mcdc_column type;     /* the TYPE (name unused) */
} sel_col;

struct mcdc_column_select {
    sel_col *cols;
    size_t   n;
};

/* How a value becomes the selection's type. */
typedef enum { CV_NONE, CV_TO_DOUBLE_I, CV_TO_DOUBLE_F, CV_INT_TO_DEC, CV_DEC_TO_DEC, CV_DATE_TO_TS, CV_TO_STRING } conv;

/* The selection mapped onto one capture instance's columns. */
typedef struct ci_map {
    char        *ci;
    mcdc_schema *in;      /* the wrapped source's columns */
    mcdc_schema *out;     /* the selection's */
    int         *from;    /* per selected column: its index in `in` */
    conv        *cv;
    mcdc_int128 *mul;     /* CV_*_TO_DEC: 10^(scale difference) */
    mcdc_value  *vals;    /* one row, reused */
    mcdc_buf    *text;    /* CV_TO_STRING: the text of the current row */
} ci_map;

typedef struct col_source {
    mcdc_source        base;
    mcdc_source       *inner;  /* owned */
    mcdc_column_select sel;
    ci_map            *maps;
    size_t             n_maps;
} col_source;

static col_source *C(mcdc_source *b)
{
    return (col_source *)b;
}

/* ---- parsing ------------------------------------------------------------------------------- */

static void sel_clear(mcdc_column_select *s)
{
    for (size_t i = 0; s->cols && i < s->n; i++) free(s->cols[i].name);
    free(s->cols);
    s->cols = NULL;
    s->n = 0;
}

static const struct { const char *name; mcdc_type_id t; } aliases[] = {
    {"boolean", MCDC_TYPE_BOOLEAN}, {"bool", MCDC_TYPE_BOOLEAN},     {"tinyint", MCDC_TYPE_BYTE},
    {"byte", MCDC_TYPE_BYTE},       {"smallint", MCDC_TYPE_SHORT},   {"short", MCDC_TYPE_SHORT},
    {"int", MCDC_TYPE_INT},         {"integer", MCDC_TYPE_INT},      {"bigint", MCDC_TYPE_LONG},
    {"long", MCDC_TYPE_LONG},       {"float", MCDC_TYPE_FLOAT},      {"real", MCDC_TYPE_FLOAT},
    {"double", MCDC_TYPE_DOUBLE},   {"string", MCDC_TYPE_STRING},    {"binary", MCDC_TYPE_BINARY},
    {"date", MCDC_TYPE_DATE},       {"timestamp", MCDC_TYPE_TIMESTAMP}, {"timestamp_ntz", MCDC_TYPE_TIMESTAMP_NTZ},
    {NULL, 0}
};

/* A type name (any case): into @p out. */
static int parse_type(mcdc_column *out, const char *t, size_t n, const char *col)
{
    char low[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k < sizeof low - 1; i++)
        if (!isspace((unsigned char)t[i])) low[k++] = (char)tolower((unsigned char)t[i]);
    low[k] = '\0';
    memset(out, 0, sizeof *out);
    for (int i = 0; aliases[i].name; i++)
        if (!strcmp(low, aliases[i].name)) {
            out->type = aliases[i].t;
            return 0;
        }
    int p = 10, s = 0, end = -1;
    if (!strncmp(low, "numeric", 7)) memcpy(low, "decimal", 7); /* the same length */
    if (!strcmp(low, "decimal") || (sscanf(low, "decimal(%d)%n", &p, &end) == 1 && end > 0 && !low[end] && (s = 0, 1)) ||
        (sscanf(low, "decimal(%d,%d)%n", &p, &s, &end) == 2 && end > 0 && !low[end])) {
        if (p < 1 || p > 38 || s < 0 || s > p)
            return mcdc_error_set(MCDC_EINVAL, "--columns: column %s: %.*s: a decimal needs 1 <= precision <= 38 and "
                                  "0 <= scale <= precision", col, (int)n, t);
        out->type = MCDC_TYPE_DECIMAL;
        out->precision = p;
        out->scale = s;
        return 0;
    }
    mcdc_error_set(MCDC_EINVAL, "--columns: column %s: unknown type '%.*s'", col, (int)n, t);
    return mcdc_error_hint("types: boolean, tinyint, smallint, int, bigint, float, double, decimal(p,s), string, "
                           "binary, date, timestamp, timestamp_ntz");
}

static int parse_spec(mcdc_column_select *out, const char *spec)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(spec), cap = 0;
    if (len > MAX_SELECT * 300)
        return mcdc_error_set(MCDC_EINVAL, "--columns: the list is longer than %d bytes", MAX_SELECT * 300);
    const char *p = spec, *end = spec + len;
    int rc = 0;
    while (rc == 0) {
        while (p < end && isspace((unsigned char)*p)) p++;
        if (p == end) break;
        /* the name: `...` ([...]) or up to a space or a comma */
        char name[260];
        size_t k = 0;
        if (*p == '`' || *p == '[') {
            char close = *p == '`' ? '`' : ']';
            for (p++;; p++) {
                if (p == end) {
                    rc = mcdc_error_set(MCDC_EINVAL, "--columns: a quoted name has no closing %c", close);
                    break;
                }
                if (*p == close) {
                    if (p + 1 < end && p[1] == close) p++;
                    else { p++; break; }
                }
                if (k < sizeof name - 1) name[k++] = *p;
            }
            if (rc < 0) break;
        } else {
            while (p < end && !isspace((unsigned char)*p) && *p != ',')
                if (k < sizeof name - 1) name[k++] = *p++;
                else p++;
        }
        name[k] = '\0';
        if (!k) {
            rc = mcdc_error_set(MCDC_EINVAL, "--columns '%s': an empty column name", spec);
            mcdc_error_hint("give 'name TYPE, name TYPE, ...', e.g. --columns 'order_id int, amount decimal(12,2)'");
            break;
        }
        /* the type: up to the next comma outside parentheses */
        while (p < end && isspace((unsigned char)*p)) p++;
        const char *t = p;
        int depth = 0;
        while (p < end && (depth || *p != ',')) {
            if (*p == '(') depth++;
            else if (*p == ')' && depth) depth--;
            p++;
        }
        size_t tn = (size_t)(p - t);
        while (tn && isspace((unsigned char)t[tn - 1])) tn--;
        if (p < end) p++; /* the comma */
        for (size_t i = 0; i < out->n; i++)
            if (!strcasecmp(out->cols[i].name, name)) {
                rc = mcdc_error_set(MCDC_EINVAL, "--columns: column %s is listed twice", name);
                mcdc_error_hint("list each column once (names match ignoring case)");
                break;
            }
        if (rc < 0) break;
        if (out->n == cap) {
            cap = cap ? cap * 2 : 8;
            if (cap > MAX_SELECT) {
                rc = mcdc_error_set(MCDC_EINVAL, "--columns: more than %d columns", MAX_SELECT);
                break;
            }
            sel_col *nc = realloc(out->cols, cap * sizeof *nc);
            if (!nc) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            out->cols = nc;
        }
        sel_col *c = &out->cols[out->n];
        memset(c, 0, sizeof *c);
        if (tn && (rc = parse_type(&c->type, t, tn, name)) < 0) break;
        c->typed = tn > 0;
        if (!(c->name = strdup(name))) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
        out->n++;
    }
    if (rc == 0 && out->n == 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "--columns '%s': no column", spec);
        mcdc_error_hint("give 'name TYPE, name TYPE, ...', e.g. --columns 'order_id int, amount decimal(12,2)'");
    }
    if (rc < 0) sel_clear(out);
    return rc;
}

/* ---- checks -------------------------------------------------------------------------------- */

bool mcdc_source__select_has(const mcdc_column_select *sel, const char *name)
{
    if (!sel) return true;
    for (size_t i = 0; i < sel->n; i++)
        if (!strcasecmp(sel->cols[i].name, name)) return true;
    return false;
}

int mcdc_source__select_check(const mcdc_column_select *sel, const char *ci, const char *const *names, size_t n)
{
    for (size_t i = 0; sel && i < sel->n; i++) {
        bool found = false;
        for (size_t j = 0; j < n && !found; j++) found = !strcasecmp(sel->cols[i].name, names[j]);
        if (found) continue;
        mcdc_buf list = MCDC_BUF_INIT(1 << 16);
        for (size_t j = 0; j < n; j++) mcdc_buf_printf(&list, "%s%s", j ? ", " : "", names[j]);
        mcdc_error_set(MCDC_EINVAL, "--columns: column %s is not a captured column of %s", sel->cols[i].name, ci);
        mcdc_error_hint("the captured columns of %s: %s (computed columns are left out: CDC stores them as NULL)", ci,
                        list.ptr ? list.ptr : "(none)");
        mcdc_buf_dispose(&list);
        return MCDC_EINVAL;
    }
    return 0;
}

static int int_digits(mcdc_type_id t)
{
    return t == MCDC_TYPE_BYTE ? 3 : t == MCDC_TYPE_SHORT ? 5 : t == MCDC_TYPE_INT ? 10 : 20;
}

static bool is_int(mcdc_type_id t)
{
    return t == MCDC_TYPE_BYTE || t == MCDC_TYPE_SHORT || t == MCDC_TYPE_INT || t == MCDC_TYPE_LONG;
}

/* The conversion from @p from to @p to; false when some value could not be held. */
static bool conversion(const mcdc_column *from, const mcdc_column *to, conv *cv, mcdc_int128 *mul)
{
    *mul = 1;
    if (from->type == to->type && (from->type != MCDC_TYPE_DECIMAL ||
                                   (from->precision == to->precision && from->scale == to->scale))) {
        *cv = CV_NONE;
        return true;
    }
    if (to->type == MCDC_TYPE_STRING) {
        *cv = CV_TO_STRING;
        return true;
    }
    if (is_int(from->type) && is_int(to->type)) {
        *cv = CV_NONE;
        return int_digits(to->type) >= int_digits(from->type);
    }
    if (to->type == MCDC_TYPE_DOUBLE && is_int(from->type) && from->type != MCDC_TYPE_LONG) {
        *cv = CV_TO_DOUBLE_I;
        return true;
    }
    if (to->type == MCDC_TYPE_DOUBLE && from->type == MCDC_TYPE_FLOAT) {
        *cv = CV_TO_DOUBLE_F;
        return true;
    }
    if (to->type == MCDC_TYPE_DECIMAL && is_int(from->type)) {
        *cv = CV_INT_TO_DEC;
        for (int i = 0; i < to->scale; i++) *mul *= 10;
        return to->precision - to->scale >= int_digits(from->type);
    }
    if (to->type == MCDC_TYPE_DECIMAL && from->type == MCDC_TYPE_DECIMAL) {
        *cv = CV_DEC_TO_DEC;
        for (int i = from->scale; i < to->scale; i++) *mul *= 10;
        return to->scale >= from->scale && to->precision - to->scale >= from->precision - from->scale;
    }
    if (to->type == MCDC_TYPE_TIMESTAMP_NTZ && from->type == MCDC_TYPE_DATE) {
        *cv = CV_DATE_TO_TS;
        return true;
    }
    return false;
}

/* ---- the mapping of one capture instance --------------------------------------------------- */

static void map_clear(ci_map *m, size_t n_sel)
{
    free(m->ci);
    mcdc_schema_free(m->in);
    mcdc_schema_free(m->out);
    free(m->from);
    free(m->cv);
    free(m->mul);
    free(m->vals);
    for (size_t i = 0; m->text && i < n_sel; i++) mcdc_buf_dispose(&m->text[i]);
    free(m->text);
    memset(m, 0, sizeof *m);
}

static int build_map(col_source *w, const char *ci, ci_map *m)
{
    memset(m, 0, sizeof *m);
    size_t n = w->sel.n;
    char **keys = NULL;
    size_t n_keys = 0;
    int rc = w->inner->ops->captured_columns(w->inner, ci, &m->in);
    if (rc < 0) return rc;
    const char **names = calloc(m->in->n_cols + 1, sizeof *names);
    if (!names) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->in->n_cols; i++) names[i] = m->in->cols[i].name;
    rc = mcdc_source__select_check(&w->sel, ci, names, m->in->n_cols);
    free(names);
    if (rc < 0) goto fail;
    if ((rc = w->inner->ops->key_columns(w->inner, ci, &keys, &n_keys)) < 0) goto fail;
    m->ci = strdup(ci);
    m->out = mcdc_schema_new();
    m->from = calloc(n, sizeof *m->from);
    m->cv = calloc(n, sizeof *m->cv);
    m->mul = calloc(n, sizeof *m->mul);
    m->vals = calloc(n, sizeof *m->vals);
    m->text = calloc(n, sizeof *m->text);
    if (!m->ci || !m->out || !m->from || !m->cv || !m->mul || !m->vals || !m->text) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        const sel_col *sc = &w->sel.cols[i];
        int at = mcdc_schema_find(m->in, sc->name);
        const mcdc_column *from = &m->in->cols[at];
        mcdc_column to = sc->typed ? sc->type : *from;
        m->from[i] = at;
        m->text[i] = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 20);
        char a[64], b[64];
        bool is_key = false;
        for (size_t k = 0; k < n_keys; k++) is_key |= !strcasecmp(keys[k], from->name);
        if (!conversion(from, &to, &m->cv[i], &m->mul[i]) || (is_key && m->cv[i] != CV_NONE) ||
            (is_key && from->type != to.type)) {
            rc = mcdc_error_set(MCDC_EINVAL, "--columns: column %s of %s is %s and cannot be read as %s%s", from->name,
                                ci, mcdc_type_name(a, sizeof a, from), mcdc_type_name(b, sizeof b, &to),
                                is_key ? " (a key column keeps its type)" : "");
            mcdc_error_hint("give its own type (%s), a wider one (integers, float to double, a decimal with at least "
                            "as many integer and fraction digits, date to timestamp_ntz), or string", a);
            goto fail;
        }
        if ((rc = mcdc_schema_add(m->out, from->name, to.type, to.precision, to.scale, from->nullable)) < 0) goto fail;
    }
    for (size_t k = 0; k < n_keys; k++) free(keys[k]);
    free(keys);
    return 0;
fail:
    for (size_t k = 0; keys && k < n_keys; k++) free(keys[k]);
    free(keys);
    map_clear(m, n);
    return rc;
}

/* The mapping of @p ci, built on first use and again by each captured_columns call. */
static int get_map(col_source *w, const char *ci, bool refresh, ci_map **out)
{
    ci_map *m = NULL;
    for (size_t i = 0; i < w->n_maps; i++)
        if (!strcmp(w->maps[i].ci, ci)) m = &w->maps[i];
    if (m && !refresh) {
        *out = m;
        return 0;
    }
    ci_map fresh;
    int rc = build_map(w, ci, &fresh);
    if (rc < 0) return rc;
    if (!m) {
        ci_map *nm = realloc(w->maps, (w->n_maps + 1) * sizeof *nm);
        if (!nm) {
            map_clear(&fresh, w->sel.n);
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        }
        w->maps = nm;
        m = &w->maps[w->n_maps++];
    } else {
        map_clear(m, w->sel.n);
    }
    *m = fresh;
    *out = m;
    return 0;
}

/* The selection's values of one row of the wrapped source. */
static int project(col_source *w, ci_map *m, const mcdc_value *in)
{
    for (size_t i = 0; i < w->sel.n; i++) {
        const mcdc_value *v = &in[m->from[i]];
        mcdc_value *o = &m->vals[i];
        *o = *v;
        if (v->is_null) continue;
        switch (m->cv[i]) {
        case CV_NONE: break;
        case CV_TO_DOUBLE_I: o->v.d = (double)v->v.i; break;
        case CV_TO_DOUBLE_F: o->v.d = (double)v->v.f; break;
        case CV_INT_TO_DEC: o->v.dec = (mcdc_int128)v->v.i * m->mul[i]; break;
        case CV_DEC_TO_DEC: o->v.dec = v->v.dec * m->mul[i]; break;
        case CV_DATE_TO_TS: o->v.i = v->v.i * INT64_C(86400000000); break;
        case CV_TO_STRING: {
            mcdc_buf *t = &m->text[i];
            mcdc_buf_clear(t);
            if (mcdc_value_to_text(t, &m->in->cols[m->from[i]], v) < 0) return MCDC_ENOMEM;
            if (!t->ptr && mcdc_buf_put(t, "", 0) < 0) return MCDC_ENOMEM;
            o->v.s.ptr = t->ptr;
            o->v.s.len = t->len;
            break;
        }
        }
    }
    return 0;
}

/* ---- operations ---------------------------------------------------------------------------- */

static int op_max_lsn(mcdc_source *b, mcdc_lsn *out)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->max_lsn(i, out);
}

static int op_min_lsn(mcdc_source *b, const char *ci, mcdc_lsn *out)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->min_lsn(i, ci, out);
}

static int op_lsn_to_commit_ts(mcdc_source *b, const mcdc_lsn *lsn, int64_t *out)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->lsn_to_commit_ts(i, lsn, out);
}

static int op_nth_commit_after(mcdc_source *b, const mcdc_lsn *after, int64_t n, mcdc_lsn *out, int64_t *ts,
                               int64_t *found)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->nth_commit_after(i, after, n, out, ts, found);
}

static int op_server_now(mcdc_source *b, int64_t *out)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->server_now(i, out);
}

static int op_capture_instances(mcdc_source *b, const char *table, mcdc_capture_instance **out, size_t *n)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->capture_instances(i, table, out, n);
}

static int op_captured_columns(mcdc_source *b, const char *ci, mcdc_schema **out)
{
    ci_map *m;
    *out = NULL;
    int rc = get_map(C(b), ci, true, &m);
    if (rc < 0) return rc;
    return (*out = mcdc_schema_copy(m->out)) ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
}

static int op_key_columns(mcdc_source *b, const char *ci, char ***out, size_t *n)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->key_columns(i, ci, out, n);
}

static int op_ddl_history(mcdc_source *b, const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                          mcdc_ddl_entry **out, size_t *n)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->ddl_history(i, ci, after, upto, out, n);
}

typedef struct fwd {
    col_source    *w;
    ci_map        *m;
    mcdc_change_cb change_cb;
    mcdc_row_cb    row_cb;
    void          *payload;
} fwd;

static int on_change(const mcdc_change *ch, void *payload)
{
    fwd *f = payload;
    int rc = project(f->w, f->m, ch->values);
    if (rc < 0) return rc;
    mcdc_change c = *ch;
    c.values = f->m->vals;
    return f->change_cb(&c, f->payload);
}

static int on_row(const mcdc_value *values, void *payload)
{
    fwd *f = payload;
    int rc = project(f->w, f->m, values);
    return rc < 0 ? rc : f->row_cb(f->m->vals, f->payload);
}

static int op_read_changes(mcdc_source *b, const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                           mcdc_change_cb cb, void *payload)
{
    col_source *w = C(b);
    fwd f = { .w = w, .change_cb = cb, .payload = payload };
    int rc = get_map(w, ci, false, &f.m);
    return rc < 0 ? rc : w->inner->ops->read_changes(w->inner, ci, after, upto, on_change, &f);
}

static int op_snapshot(mcdc_source *b, const char *ci, const mcdc_value *lo, const mcdc_value *hi, mcdc_row_cb cb,
                       void *payload)
{
    col_source *w = C(b);
    fwd f = { .w = w, .row_cb = cb, .payload = payload };
    int rc = get_map(w, ci, false, &f.m);
    return rc < 0 ? rc : w->inner->ops->snapshot(w->inner, ci, lo, hi, on_row, &f);
}

static const char *op_server_time_zone(mcdc_source *b)
{
    mcdc_source *i = C(b)->inner;
    return i->ops->server_time_zone(i);
}

static void op_close(mcdc_source *b)
{
    col_source *w = C(b);
    mcdc_source_close(w->inner);
    for (size_t i = 0; i < w->n_maps; i++) map_clear(&w->maps[i], w->sel.n);
    free(w->maps);
    sel_clear(&w->sel);
    free(w->base.description);
    free(w);
}

static int op_key_at(mcdc_source *b, const char *ci, const mcdc_value *from, int64_t n, bool desc, mcdc_row_cb cb,
                     void *payload)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->key_at) return mcdc_error_set(MCDC_EUNSUPPORTED, "this source cannot plan chunks");
    return i->ops->key_at(i, ci, from, n, desc, cb, payload);
}

static int op_key_count(mcdc_source *b, const char *ci, const mcdc_value *lo, const mcdc_value *hi, int64_t *out)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->key_count) return mcdc_error_set(MCDC_EUNSUPPORTED, "this source cannot plan chunks");
    return i->ops->key_count(i, ci, lo, hi, out);
}

static int op_key_buckets(mcdc_source *b, const char *ci, const mcdc_key_bucket_spec *spec, mcdc_key_bucket **out,
                          size_t *n)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->key_buckets) return mcdc_error_set(MCDC_EUNSUPPORTED, "key buckets are not supported by this source yet");
    return i->ops->key_buckets(i, ci, spec, out, n);
}

static int op_consistent_lsn(mcdc_source *b, mcdc_lsn *out)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->consistent_lsn) return mcdc_error_set(MCDC_EUNSUPPORTED, "this source cannot map its clock to an LSN");
    return i->ops->consistent_lsn(i, out);
}

static int op_take_warnings(mcdc_source *b, char ***out, size_t *n)
{
    mcdc_source *i = C(b)->inner;
    *out = NULL;
    *n = 0;
    return i->ops->take_warnings ? i->ops->take_warnings(i, out, n) : 0;
}

static int op_snapshot_reads(mcdc_source *b, mcdc_isolation isolation, int64_t lock_timeout_ms)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->snapshot_reads) return mcdc_error_set(MCDC_EUNSUPPORTED, "this source has no isolation or lock timeout to set");
    return i->ops->snapshot_reads(i, isolation, lock_timeout_ms);
}

static int op_time_to_lsn(mcdc_source *b, int64_t utc_us, mcdc_lsn *out)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->time_to_lsn) return mcdc_error_set(MCDC_EUNSUPPORTED, "this source cannot map a time to an LSN");
    return i->ops->time_to_lsn(i, utc_us, out);
}

static int op_positions(mcdc_source *b, mcdc_positions *q)
{
    return mcdc_source_positions(C(b)->inner, q);
}

static int op_identity(mcdc_source *b, mcdc_source_identity *out)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->identity) return mcdc_error_set(MCDC_EUNSUPPORTED, "this source cannot tell its identity");
    return i->ops->identity(i, out);
}

static int op_commit_at_or_before(mcdc_source *b, const mcdc_lsn *lsn, mcdc_lsn *out, int64_t *out_us)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->commit_at_or_before) return mcdc_error_set(MCDC_EUNSUPPORTED, "this source cannot find the commit before an LSN");
    return i->ops->commit_at_or_before(i, lsn, out, out_us);
}

static int op_key_orders(mcdc_source *b, const char *ci, mcdc_key_order **out, size_t *n_out)
{
    mcdc_source *i = C(b)->inner;
    if (!i->ops->key_orders) return mcdc_error_set(MCDC_EUNSUPPORTED, "this source cannot tell its key order");
    return i->ops->key_orders(i, ci, out, n_out);
}

static const mcdc_source_ops col_ops = {
    op_max_lsn, op_min_lsn, op_lsn_to_commit_ts, op_nth_commit_after, op_server_now, op_capture_instances,
    op_captured_columns, op_key_columns, op_ddl_history, op_read_changes, op_snapshot, op_server_time_zone, op_close,
    op_key_at, op_key_count, op_key_buckets, op_consistent_lsn, op_take_warnings, op_snapshot_reads, op_time_to_lsn,
    op_positions,
    op_identity,
    op_commit_at_or_before,
    op_key_orders,
};

int mcdc_source_select_columns(mcdc_source **src, const char *spec)
{
    col_source *w = calloc(1, sizeof *w);
    if (!w) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int rc = parse_spec(&w->sel, spec);
    if (rc < 0) {
        free(w);
        return rc;
    }
    mcdc_source *in = *src;
    w->base.ops = &col_ops;
    w->base.description = strdup(in->description ? in->description : "");
    if (!w->base.description) {
        sel_clear(&w->sel);
        free(w);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    w->inner = in;
    in->select = &w->sel;
    *src = &w->base;
    return 0;
}
