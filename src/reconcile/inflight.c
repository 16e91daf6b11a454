/*
 * reconcile/inflight.c: the keys changed after silver's applied_lsn, so reconcile can tell
 * a key still in flight (its change is in bronze or in the change table, not yet in silver)
 * from a real mismatch.
 *
 * Reads bronze first (its rows with _start_lsn > after, snapshot rows left out), then the
 * change table from bronze's newest change up to the max_lsn read after the source, so a
 * change purged from the change table but held by bronze still counts. Read-only. Memory:
 * one key text per distinct changed key. Design: anchor-features §2.8 (IN_FLIGHT).
 */
#include <stdlib.h>
#include <string.h>

#include "mcdc/delta.h"
#include "mcdc/keyhash.h"
#include "reconcile/inflight.h"

struct mcdc_reconcile__changed {
    char  **text;   /* owned key texts; sorted and unique after finish() */
    size_t *len;
    size_t  n, cap;
};

typedef struct collect {
    mcdc_reconcile__changed *c;
    const mcdc_column      **cols; /* key columns */
    const mcdc_value       **vals; /* scratch */
    const int               *idx;  /* positions of the keys in a change row */
    size_t                   n_keys;
    mcdc_buf                 text;
} collect;

static int add_key(collect *k)
{
    mcdc_reconcile__changed *c = k->c;
    mcdc_buf_clear(&k->text);
    int rc = mcdc_keyhash_text(&k->text, k->cols, k->vals, k->n_keys);
    if (rc < 0)
        return rc;
    if (c->n == c->cap) {
        size_t nc = c->cap ? c->cap * 2 : 256;
        char **nt = realloc(c->text, nc * sizeof *nt);
        if (nt) c->text = nt;
        size_t *nl = realloc(c->len, nc * sizeof *nl);
        if (nl) c->len = nl;
        if (!nt || !nl)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        c->cap = nc;
    }
    c->len[c->n] = k->text.len;
    c->text[c->n] = mcdc_buf_detach(&k->text);
    if (!c->text[c->n])
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    c->n++;
    return 0;
}

static int on_change(const mcdc_change *ch, void *payload)
{
    collect *k = payload;
    for (size_t i = 0; i < k->n_keys; i++)
        k->vals[i] = &ch->values[k->idx[i]];
    return add_key(k);
}

typedef struct kv { char *t; size_t n; } kv;

static int cmp_kv(const void *a, const void *b)
{
    const kv *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int c = memcmp(x->t, y->t, n);
    return c ? c : (x->n < y->n ? -1 : x->n > y->n);
}

static int finish(mcdc_reconcile__changed *c)
{
    kv *a = malloc((c->n + 1) * sizeof *a);
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < c->n; i++)
        a[i] = (kv){ c->text[i], c->len[i] };
    qsort(a, c->n, sizeof *a, cmp_kv);
    size_t m = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (m && cmp_kv(&a[m - 1], &a[i]) == 0) {
            free(a[i].t);
            continue;
        }
        a[m++] = a[i];
    }
    for (size_t i = 0; i < m; i++) {
        c->text[i] = a[i].t;
        c->len[i] = a[i].n;
    }
    c->n = m;
    free(a);
    return 0;
}

static int read_bronze(collect *k, const char *bronze_path, const char *const *keys, const mcdc_lsn *after,
                       mcdc_lsn *newest)
{
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, bronze_path, -1);
    if (rc < 0)
        return rc;
    const char **names = calloc(k->n_keys + 2, sizeof *names);
    if (!names) {
        mcdc_delta_snapshot_free(snap);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    names[0] = "_start_lsn";
    names[1] = "_operation";
    for (size_t i = 0; i < k->n_keys; i++)
        names[2 + i] = keys[i];
    char after_text[MCDC_LSN_STRLEN];
    mcdc_lsn_format(after_text, after);
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = names;
    so.n_columns = k->n_keys + 2;
    so.pred.op = MCDC_DELTA_PRED_GE;
    so.pred.column = "_start_lsn";
    so.pred.value.is_null = false;
    so.pred.value.v.s.ptr = after_text;
    so.pred.value.v.s.len = strlen(after_text);
    mcdc_delta_scan *sc = NULL;
    rc = mcdc_delta_scan_open(&sc, snap, &so);
    const mcdc_value *row;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        rc = 0;
        if (row[0].is_null || row[1].is_null || row[1].v.i == 0)
            continue;
        mcdc_lsn l;
        if ((rc = mcdc_lsn_parse_n(&l, row[0].v.s.ptr, row[0].v.s.len)) < 0)
            break;
        if (mcdc_lsn_cmp(&l, after) <= 0)
            continue;
        if (mcdc_lsn_cmp(&l, newest) > 0)
            *newest = l;
        for (size_t i = 0; i < k->n_keys; i++)
            k->vals[i] = &row[2 + i];
        rc = add_key(k);
    }
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    free(names);
    return rc < 0 ? rc : 0;
}

int mcdc_reconcile__changed_keys(mcdc_reconcile__changed **out, const char *bronze_path, mcdc_source *src,
                                 const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                                 const char *const *keys, size_t n_keys, const mcdc_schema *cap)
{
    *out = NULL;
    mcdc_reconcile__changed *c = calloc(1, sizeof *c);
    collect k = { c, NULL, NULL, NULL, n_keys, MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX) };
    int *idx = calloc(n_keys, sizeof *idx);
    k.cols = calloc(n_keys, sizeof *k.cols);
    k.vals = calloc(n_keys, sizeof *k.vals);
    int rc = 0;
    if (!c || !idx || !k.cols || !k.vals) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_keys; i++) {
        int j = mcdc_schema_find(cap, keys[i]);
        if (j < 0) {
            rc = mcdc_error_set(MCDC_ENOTFOUND, "key column %s is not captured", keys[i]);
            goto done;
        }
        idx[i] = j;
        k.cols[i] = &cap->cols[j];
    }
    k.idx = idx;
    mcdc_lsn from = *after;
    if ((rc = read_bronze(&k, bronze_path, keys, after, &from)) < 0)
        goto done;
    if (mcdc_lsn_cmp(&from, upto) < 0 &&
        (rc = src->ops->read_changes(src, ci, &from, upto, on_change, &k)) < 0)
        goto done;
    rc = finish(c);
done:
    free(idx);
    free(k.cols);
    free(k.vals);
    mcdc_buf_dispose(&k.text);
    if (rc < 0) {
        mcdc_reconcile__changed_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

bool mcdc_reconcile__changed_has(const mcdc_reconcile__changed *c, const char *text, size_t len)
{
    kv key = { (char *)text, len };
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        kv m = { c->text[mid], c->len[mid] };
        int r = cmp_kv(&key, &m);
        if (r == 0)
            return true;
        if (r < 0) hi = mid;
        else lo = mid + 1;
    }
    return false;
}

size_t mcdc_reconcile__changed_count(const mcdc_reconcile__changed *c)
{
    return c ? c->n : 0;
}

void mcdc_reconcile__changed_free(mcdc_reconcile__changed *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->text[i]);
    free(c->text);
    free(c->len);
    free(c);
}
