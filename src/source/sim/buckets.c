/*
 * source/sim/buckets.c: the simulator's key_buckets (reconcile's tier 1): counts and sums
 * per key bucket over a source table, in one pass over its rows in key order.
 *
 * The simulator aggregates in C with core's keyhash functions, which define the ordinal,
 * the key text and the key hash that SQL Server computes in T-SQL, so both sources give
 * the same buckets for the same rows. Read-only. Cost: one read of the table; memory
 * O(buckets). Design: docs/decisions/0015-reconcile-buckets-by-key-hash.md.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/keyhash.h"
#include "source/sim/sim_int.h"

#define MAX_HASH_BUCKETS ((int64_t)1 << 24)

typedef struct agg {
    const mcdc_key_bucket_spec *spec;
    const mcdc_column **cols;   /* the key columns' schema entries */
    int                *idx;    /* their positions in a row */
    const mcdc_value  **vals;   /* scratch: the key cells of the row */
    mcdc_buf            text;   /* scratch: the key text */
    mcdc_key_bucket    *b;      /* by ordinal: appended, merged at the end; by hash: width */
    size_t              n, cap;
} agg;

static int add_to(agg *g, int64_t bucket, mcdc_int128 v, int64_t ord)
{
    mcdc_key_bucket *k = NULL;
    if (g->spec->by_hash) {
        k = &g->b[bucket];
    } else if (g->n && g->b[g->n - 1].bucket == bucket) {
        k = &g->b[g->n - 1];
    } else {
        if (g->n == g->cap) {
            size_t nc = g->cap ? g->cap * 2 : 64;
            mcdc_key_bucket *nb = realloc(g->b, nc * sizeof *nb);
            if (!nb)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            g->b = nb;
            g->cap = nc;
        }
        k = &g->b[g->n++];
        memset(k, 0, sizeof *k);
        k->bucket = bucket;
        k->key_min = k->key_max = ord;
    }
    k->bucket = bucket;
    if (!g->spec->by_hash) {
        if (ord < k->key_min) k->key_min = ord;
        if (ord > k->key_max) k->key_max = ord;
    }
    k->n_rows++;
    k->key_sum += v;
    return 0;
}

static int on_row(const mcdc_value *values, void *payload)
{
    agg *g = payload;
    const mcdc_key_bucket_spec *sp = g->spec;
    if (sp->by_hash) {
        for (size_t i = 0; i < sp->n_keys; i++)
            g->vals[i] = &values[g->idx[i]];
        mcdc_buf_clear(&g->text);
        int64_t h;
        int rc = mcdc_keyhash_text(&g->text, g->cols, g->vals, sp->n_keys);
        if (rc == 0)
            rc = mcdc_keyhash_of_text(&h, g->text.ptr ? g->text.ptr : "", g->text.len);
        if (rc < 0)
            return rc;
        return add_to(g, h % sp->width, h, 0);
    }
    const mcdc_value *v = &values[g->idx[0]];
    if (v->is_null)
        return 0;
    int64_t o = v->v.i;
    int64_t bucket = sp->width ? mcdc_keyhash_floor_div(o - sp->origin, sp->width) : 0;
    return add_to(g, bucket, o, o);
}

static int cmp_bucket(const void *a, const void *b)
{
    int64_t x = ((const mcdc_key_bucket *)a)->bucket, y = ((const mcdc_key_bucket *)b)->bucket;
    return x < y ? -1 : x > y;
}

int sim__key_buckets(mcdc_source *src, const char *ci, const mcdc_key_bucket_spec *spec,
                     mcdc_key_bucket **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!spec || spec->n_keys < 1 || (!spec->by_hash && spec->n_keys != 1))
        return mcdc_error_set(MCDC_EINVAL, "key buckets: by ordinal takes one key column, by hash at least one");
    if (spec->by_hash ? (spec->width < 1 || spec->width > MAX_HASH_BUCKETS) : spec->width < 0)
        return mcdc_error_set(MCDC_EINVAL, "key buckets: width %lld out of range", (long long)spec->width);
    mcdc_schema *schema = NULL;
    int rc = src->ops->captured_columns(src, ci, &schema);
    if (rc < 0)
        return rc;
    agg g = { .spec = spec, .text = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX) };
    g.cols = calloc(spec->n_keys, sizeof *g.cols);
    g.idx = calloc(spec->n_keys, sizeof *g.idx);
    g.vals = calloc(spec->n_keys, sizeof *g.vals);
    if (!g.cols || !g.idx || !g.vals) {
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < spec->n_keys; i++) {
        int k = mcdc_schema_find(schema, spec->keys[i]);
        if (k < 0) {
            rc = mcdc_error_set(MCDC_ENOTFOUND, "capture instance %s has no column %s", ci, spec->keys[i]);
            goto done;
        }
        g.idx[i] = k;
        g.cols[i] = &schema->cols[k];
        if (spec->by_hash ? !mcdc_keyhash_type_ok(g.cols[i]) : !mcdc_keyhash_has_ordinal(g.cols[i])) {
            rc = mcdc_error_set(MCDC_EINVAL, "key column %s of %s has no %s", spec->keys[i], ci,
                                spec->by_hash ? "key text (a floating-point key)" : "ordinal (not an integer or date)");
            goto done;
        }
    }
    if (spec->by_hash) {
        g.b = calloc((size_t)spec->width, sizeof *g.b);
        if (!g.b) {
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            goto done;
        }
        g.n = (size_t)spec->width;
    }
    if ((rc = src->ops->snapshot(src, ci, NULL, NULL, on_row, &g)) < 0)
        goto done;
    size_t n = 0;
    if (spec->by_hash) {
        for (size_t i = 0; i < g.n; i++)
            if (g.b[i].n_rows)
                g.b[n++] = g.b[i];
    } else if (g.n) {
        qsort(g.b, g.n, sizeof *g.b, cmp_bucket);
        for (size_t i = 0; i < g.n; i++) {
            if (n && g.b[n - 1].bucket == g.b[i].bucket) {
                mcdc_key_bucket *k = &g.b[n - 1];
                k->n_rows += g.b[i].n_rows;
                k->key_sum += g.b[i].key_sum;
                if (g.b[i].key_min < k->key_min) k->key_min = g.b[i].key_min;
                if (g.b[i].key_max > k->key_max) k->key_max = g.b[i].key_max;
            } else {
                g.b[n++] = g.b[i];
            }
        }
    }
    *out = g.b;
    *n_out = n;
    g.b = NULL;
done:
    free(g.b);
    free(g.cols);
    free(g.idx);
    free(g.vals);
    mcdc_buf_dispose(&g.text);
    mcdc_schema_free(schema);
    return rc;
}
