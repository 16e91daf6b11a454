/*
 * silver/ranges.c: deletes of keys missing from a chunk read by key range (rules W2, W3 in
 * mcdc/silver.h); see ranges.h. The bounds are compared with silver's keys in the source's
 * key order, column by column, so a composite key's chunk is the same set of keys here as
 * in the read. A key is deleted only when it is inside a chunk stamped L, silver's image of
 * it is older than L and no image at or above L is in the change set: the key was gone by
 * L (a delete lost in a gap, an older snapshot's row, a row removed without CDC), and a key
 * inserted after L keeps its row. Cost: one read of silver's key columns and _start_lsn,
 * O(rows log chunks); memory: the keys deleted.
 */
#include "silver/ranges.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "mcdc/key_order.h"
#include "mcdc/time.h"
#include "silver/common.h"

void mcdc_silver__keyorder_clear(mcdc_silver_keyorder *k)
{
    free(k->s_col);
    free(k->b_col);
    free(k->perm);
    free(k->ord);
    memset(k, 0, sizeof *k);
}

/* Whether silver can compare column type @p t in the source's order @p ord. */
static bool comparable(mcdc_type_id t, int ord)
{
    if (t == MCDC_TYPE_STRING)
        return ord == MCDC_KEY_ORDER_TEXT_CI || ord == MCDC_KEY_ORDER_GUID;
    if (t == MCDC_TYPE_BINARY)
        return ord == MCDC_KEY_ORDER_BYTES;
    return true; /* a value order, the same in every source */
}

/* Append one key value of column @p c in the source's order @p ord. */
static int encode_one(mcdc_buf *b, const mcdc_column *c, const mcdc_value *v, int ord)
{
    if (c->type != MCDC_TYPE_STRING || v->is_null)
        return mcdc_silver_key_encode(b, c, v);
    int rc = mcdc_buf_putc(b, 1);
    if (rc == 0)
        rc = ord == MCDC_KEY_ORDER_GUID ? mcdc_key_order_guid(b, v->v.s.ptr, v->v.s.len)
                                        : mcdc_key_order_text_ci(b, v->v.s.ptr, v->v.s.len);
    return rc;
}

int mcdc_silver__keyorder(mcdc_silver_keyorder *out, bool *ok, const char **why,
                          const json_t *names, const json_t *orders, const char *const *keys,
                          size_t n_keys, const mcdc_schema *silver, const mcdc_schema *bronze)
{
    memset(out, 0, sizeof *out);
    *ok = false;
    *why = NULL;
    size_t n = json_is_array(names) ? json_array_size(names) : 1;
    if (!json_is_array(names) && n_keys != 1) {
        *why = "the chunks do not name their key columns";
        return 0;
    }
    if (n != n_keys) {
        *why = "the source's key is not silver's key";
        return 0;
    }
    out->s_col = calloc(n, sizeof *out->s_col);
    out->b_col = calloc(n, sizeof *out->b_col);
    out->perm = calloc(n, sizeof *out->perm);
    out->ord = calloc(n, sizeof *out->ord);
    if (!out->s_col || !out->b_col || !out->perm || !out->ord) {
        mcdc_silver__keyorder_clear(out);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    out->n = n;
    bool *seen = calloc(n_keys, sizeof *seen);
    if (!seen) {
        mcdc_silver__keyorder_clear(out);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = json_is_array(names) ? json_string_value(json_array_get(names, i)) : keys[0];
        size_t j = 0;
        while (name && j < n_keys && (seen[j] || strcasecmp(keys[j], name) != 0))
            j++;
        if (!name || j == n_keys) {
            *why = "the source's key is not silver's key";
            goto not_ok;
        }
        seen[j] = true;
        out->perm[j] = i;
        out->s_col[i] = mcdc_schema_find(silver, keys[j]);
        out->b_col[i] = mcdc_schema_find(bronze, keys[j]);
        if (out->s_col[i] < 0 || out->b_col[i] < 0) {
            *why = "a key column is missing from silver or bronze";
            goto not_ok;
        }
        int ord = json_is_array(orders) && json_array_size(orders) == n
                      ? mcdc_key_order_parse(json_string_value(json_array_get(orders, i))) : -1;
        out->ord[i] = ord < 0 ? MCDC_KEY_ORDER_VALUE : ord;
        if (!comparable(silver->cols[out->s_col[i]].type, ord)) {
            *why = "the key has a character or binary column whose order in the source (its "
                   "collation) the plan does not record";
            goto not_ok;
        }
    }
    free(seen);
    *ok = true;
    return 0;
not_ok:
    free(seen);
    mcdc_silver__keyorder_clear(out);
    return 0;
}

static int hexdigit(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One JSON key value of column @p c (as the snapshot facts write it) into @p v. */
static bool value_of_json(const mcdc_column *c, const json_t *j, mcdc_value *v, char *tmp,
                          size_t tmp_cap)
{
    memset(v, 0, sizeof *v);
    if (json_is_null(j)) {
        v->is_null = true;
        return true;
    }
    const char *t = json_string_value(j);
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN:
        if (json_is_boolean(j))
            v->v.b = json_is_true(j);
        else if (json_is_integer(j))
            v->v.b = json_integer_value(j) != 0;
        else
            return false;
        return true;
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
        if (!json_is_integer(j))
            return false;
        v->v.i = json_integer_value(j);
        return true;
    case MCDC_TYPE_FLOAT: case MCDC_TYPE_DOUBLE:
        if (!json_is_number(j))
            return false;
        if (c->type == MCDC_TYPE_FLOAT)
            v->v.f = (float)json_number_value(j);
        else
            v->v.d = json_number_value(j);
        return true;
    case MCDC_TYPE_DECIMAL:
        return t && mcdc_decimal_parse(&v->v.dec, t, strlen(t), c->precision, c->scale) == 0;
    case MCDC_TYPE_DATE: {
        char buf[64];
        int64_t us;
        if (!t || strlen(t) != 10)
            return false;
        snprintf(buf, sizeof buf, "%sT00:00:00", t);
        if (mcdc_time_parse(&us, buf) < 0)
            return false;
        v->v.i = us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL);
        return true;
    }
    case MCDC_TYPE_TIMESTAMP: case MCDC_TYPE_TIMESTAMP_NTZ:
        return t && mcdc_time_parse(&v->v.i, t) == 0;
    case MCDC_TYPE_STRING:
        if (!t)
            return false;
        v->v.s.ptr = t;
        v->v.s.len = json_string_length(j);
        return true;
    case MCDC_TYPE_BINARY: { /* "0x" hex, decoded into @p tmp */
        size_t n = t ? strlen(t) : 0;
        if (!t || n < 2 || t[0] != '0' || (t[1] != 'x' && t[1] != 'X') || n % 2 || n / 2 > tmp_cap)
            return false;
        for (size_t i = 2; i < n; i += 2) {
            int h = hexdigit(t[i]), l = hexdigit(t[i + 1]);
            if (h < 0 || l < 0)
                return false;
            tmp[(i - 2) / 2] = (char)(h << 4 | l);
        }
        v->v.s.ptr = tmp;
        v->v.s.len = (n - 2) / 2;
        return true;
    }
    default:
        return false;
    }
}

/* The encoding of JSON key @p j in the key order. */
static int encode_bound(uint8_t **out, size_t *len, const mcdc_silver_keyorder *k,
                        const mcdc_schema *silver, const json_t *j)
{
    *out = NULL;
    *len = 0;
    if (k->n > 1 && (!json_is_array(j) || json_array_size(j) != k->n))
        return mcdc_error_set(MCDC_ECORRUPT, "a chunk bound is not a list of %zu key values", k->n);
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < k->n; i++) {
        const mcdc_column *c = &silver->cols[k->s_col[i]];
        mcdc_value v;
        const json_t *e = k->n > 1 ? json_array_get(j, i) : j;
        size_t cap = json_is_string(e) ? json_string_length(e) : 0;
        char *tmp = malloc(cap + 1);
        if (!tmp)
            rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        else if (!value_of_json(c, e, &v, tmp, cap))
            rc = mcdc_error_set(MCDC_ECORRUPT, "a chunk bound does not fit key column %s", c->name);
        else
            rc = encode_one(&b, c, &v, k->ord[i]);
        free(tmp);
    }
    if (rc == 0 && b.len == 0 && mcdc_buf_putc(&b, 0) < 0)
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    if (rc < 0) {
        mcdc_buf_dispose(&b);
        return rc;
    }
    *len = b.len;
    *out = (uint8_t *)mcdc_buf_detach(&b);
    return 0;
}

int mcdc_silver__kchunk_set(mcdc_silver_kchunk *c, const mcdc_silver_keyorder *k,
                            const mcdc_schema *silver, const json_t *lo, const json_t *hi)
{
    c->lo_open = !lo || json_is_null(lo);
    c->hi_open = !hi || json_is_null(hi);
    int rc = 0;
    if (!c->lo_open)
        rc = encode_bound(&c->lo, &c->lo_len, k, silver, lo);
    if (rc == 0 && !c->hi_open)
        rc = encode_bound(&c->hi, &c->hi_len, k, silver, hi);
    return rc;
}

void mcdc_silver__kchunks_free(mcdc_silver_kchunk *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) {
        free(c[i].lo);
        free(c[i].hi);
    }
    free(c);
}

static int chunk_lo_cmp(const void *pa, const void *pb)
{
    const mcdc_silver_kchunk *a = pa, *b = pb;
    if (a->has_stamp != b->has_stamp)
        return a->has_stamp ? -1 : 1; /* stamped first */
    if (a->lo_open || b->lo_open)
        return a->lo_open == b->lo_open ? 0 : a->lo_open ? -1 : 1;
    return mcdc_silver__key_cmp(a->lo, a->lo_len, b->lo, b->lo_len);
}

/* The chunk of @p chunks[0..n) (sorted by lo, disjoint) holding key @p key, or NULL. */
static const mcdc_silver_kchunk *chunk_of(const mcdc_silver_kchunk *chunks, size_t n,
                                          const uint8_t *key, size_t len)
{
    size_t lo = 0, hi = n; /* first chunk whose lo is above the key */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (chunks[mid].lo_open || mcdc_silver__key_cmp(chunks[mid].lo, chunks[mid].lo_len, key, len) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const mcdc_silver_kchunk *c = &chunks[lo - 1];
    if (!c->hi_open && mcdc_silver__key_cmp(key, len, c->hi, c->hi_len) >= 0)
        return NULL;
    return c;
}

typedef struct del {
    mcdc_value *key; /* k->n cells with their bytes (mcdc_silver__values_dup) */
    mcdc_lsn    at;
} del;

int mcdc_silver__chunk_deletes(const mcdc_delta_snapshot *silver, const mcdc_schema *silver_flat,
                               const mcdc_schema *bronze_flat, mcdc_silver_changes *cs,
                               const mcdc_silver_keyorder *k, mcdc_silver_kchunk *chunks,
                               size_t n, const char *ci, size_t *n_deleted)
{
    *n_deleted = 0;
    qsort(chunks, n, sizeof *chunks, chunk_lo_cmp);
    size_t n_st = 0;
    while (n_st < n && chunks[n_st].has_stamp)
        n_st++;
    if (n_st == 0 || k->n == 0)
        return 0;
    int s_lsn = mcdc_schema_find(silver_flat, "_start_lsn");
    int b_lsn = mcdc_schema_find(bronze_flat, "_start_lsn"), b_op = mcdc_schema_find(bronze_flat, "_operation");
    int b_ci = mcdc_schema_find(bronze_flat, "_capture_instance");
    if (s_lsn < 0 || b_lsn < 0 || b_op < 0)
        return 0;
    int rc = mcdc_silver_changes_sort(cs);
    if (rc < 0)
        return rc;
    const char **cols = calloc(k->n + 1, sizeof *cols);
    mcdc_column *key_cols = calloc(k->n + 1, sizeof *key_cols);
    if (!cols || !key_cols) {
        free(cols);
        free(key_cols);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    for (size_t i = 0; i < k->n; i++) {
        cols[i] = silver_flat->cols[k->s_col[i]].name;
        key_cols[i] = silver_flat->cols[k->s_col[i]];
    }
    cols[k->n] = "_start_lsn";
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = k->n + 1;
    mcdc_delta_scan *sc = NULL;
    rc = mcdc_delta_scan_open(&sc, silver, &so);
    mcdc_buf pk = MCDC_BUF_INIT(1 << 20), ck = MCDC_BUF_INIT(1 << 20);
    del *dels = NULL;
    size_t n_dels = 0, cap = 0;
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        if (r[k->n].is_null)
            continue;
        pk.len = 0;
        for (size_t i = 0; rc == 0 && i < k->n; i++)
            rc = encode_one(&pk, &silver_flat->cols[k->s_col[i]], &r[i], k->ord[i]);
        if (rc < 0)
            break;
        const mcdc_silver_kchunk *in = chunk_of(chunks, n_st, (const uint8_t *)pk.ptr, pk.len);
        mcdc_lsn have;
        if (!in || mcdc_lsn_parse_n(&have, r[k->n].v.s.ptr, r[k->n].v.s.len) < 0 ||
            mcdc_lsn_cmp(&have, &in->stamp) >= 0)
            continue;
        ck.len = 0; /* the change set's key: silver's key columns in --keys order */
        for (size_t j = 0; rc == 0 && j < k->n; j++)
            rc = mcdc_silver_key_encode(&ck, &silver_flat->cols[k->s_col[k->perm[j]]], &r[k->perm[j]]);
        if (rc < 0)
            break;
        int64_t at = mcdc_silver_changes_find_sorted(cs, (const uint8_t *)ck.ptr, ck.len);
        if (at >= 0) {
            mcdc_silver_image im;
            mcdc_silver_changes_at(cs, (size_t)at, &im);
            if (mcdc_lsn_cmp(&im.start_lsn, &in->stamp) >= 0)
                continue; /* the chunk's own row, or a change after its stamp */
        }
        if (n_dels == cap) {
            size_t nc = cap ? cap * 2 : 64;
            del *nd = realloc(dels, nc * sizeof *nd);
            if (!nd) {
                rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
                break;
            }
            dels = nd;
            cap = nc;
        }
        if (!(dels[n_dels].key = mcdc_silver__values_dup(key_cols, r, NULL, k->n))) {
            rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
            break;
        }
        dels[n_dels].at = in->stamp;
        n_dels++;
    }
    mcdc_delta_scan_free(sc);
    mcdc_buf_dispose(&pk);
    mcdc_buf_dispose(&ck);
    free(cols);
    free(key_cols);
    /* the deletes, as bronze rows of operation 1 at their chunk's stamp */
    mcdc_value *row = rc == 0 ? calloc(bronze_flat->n_cols + 1, sizeof *row) : NULL;
    if (rc == 0 && !row)
        rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    char lsn_text[MCDC_LSN_STRLEN];
    for (size_t i = 0; rc == 0 && i < n_dels; i++) {
        for (size_t j = 0; j < bronze_flat->n_cols; j++) {
            memset(&row[j], 0, sizeof row[j]);
            row[j].is_null = true;
        }
        for (size_t j = 0; j < k->n; j++)
            row[k->b_col[j]] = dels[i].key[j];
        mcdc_lsn_format(lsn_text, &dels[i].at);
        row[b_lsn].is_null = false;
        row[b_lsn].v.s.ptr = lsn_text;
        row[b_lsn].v.s.len = strlen(lsn_text);
        row[b_op].is_null = false;
        row[b_op].v.i = 1;
        if (b_ci >= 0 && ci) {
            row[b_ci].is_null = false;
            row[b_ci].v.s.ptr = ci;
            row[b_ci].v.s.len = strlen(ci);
        }
        rc = mcdc_silver_changes_add(cs, row);
    }
    if (rc == 0)
        *n_deleted = n_dels;
    free(row);
    for (size_t i = 0; i < n_dels; i++)
        free(dels[i].key);
    free(dels);
    return rc;
}
