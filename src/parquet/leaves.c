/*
 * parquet/leaves.c: rows as the level/value entries of each projected leaf column, for
 * callers that decode nested columns themselves (the Delta checkpoint reader) and want
 * no JSON built per row.
 *
 * Guarantees: a row's runs hold every entry of that row in every projected leaf (the
 * first with repetition level 0, the rest up to the next such entry), so the reader ends
 * each call at the start of the next row as the other row calls do. String and binary
 * values of repeated leaves are copied into a per-leaf arena, since reading ahead to find
 * a row's end may replace the page a value lived in; those of flat leaves are borrowed
 * (no read-ahead) until the next call. Leaf descriptions are built on first use.
 */
#include <stdlib.h>

#include "parquet/reader_int.h"

typedef struct pqr_leafrow {
    int         leaf;     /* leaf index in the file */
    char       *path;     /* owned dotted path */
    int        *defs;     /* owned, depth entries */
    bool       *repeated; /* owned, depth entries */
    uint8_t    *kinds;    /* owned, depth entries */
    size_t      depth;
    uint8_t    *rep, *def;
    mcdc_value *vals;
    size_t      cap;      /* entries allocated in rep, def, vals */
    mcdc_buf    bytes;    /* copies of this row's strings (repeated leaves) */
    char        tmp[96];  /* a formatted value of a flat leaf (a time, a UUID, ...) */
} pqr_leafrow;

void pqr_leaves_free(mcdc_parquet_reader *r)
{
    for (size_t i = 0; r->lrow && i < r->n_lrow; i++) {
        pqr_leafrow *lr = &r->lrow[i];
        free(lr->path);
        free(lr->defs);
        free(lr->repeated);
        free(lr->kinds);
        free(lr->rep);
        free(lr->def);
        free(lr->vals);
        mcdc_buf_dispose(&lr->bytes);
    }
    free(r->lrow);
    free(r->lruns);
    r->lrow = NULL;
    r->lruns = NULL;
    r->n_lrow = 0;
}

static int describe(pqr_leafrow *lr, const pqr_node *leaf)
{
    size_t depth = 0, len = 0;
    for (const pqr_node *n = leaf; n && n->parent; n = n->parent) {
        depth++;
        len += strlen(n->name) + 1;
    }
    lr->depth = depth;
    lr->path = malloc(len ? len : 1);
    lr->defs = calloc(depth ? depth : 1, sizeof *lr->defs);
    lr->repeated = calloc(depth ? depth : 1, sizeof *lr->repeated);
    lr->kinds = calloc(depth ? depth : 1, sizeof *lr->kinds);
    if (!lr->path || !lr->defs || !lr->repeated || !lr->kinds)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    size_t k = depth, end = len ? len - 1 : 0;
    lr->path[end] = '\0';
    for (const pqr_node *n = leaf; n && n->parent; n = n->parent) {
        k--;
        size_t nl = strlen(n->name);
        end -= nl;
        memcpy(lr->path + end, n->name, nl);
        if (k > 0)
            lr->path[--end] = '.';
        lr->defs[k] = n->def_level;
        lr->repeated[k] = n->repetition == MCDC_PQ_REPEATED;
        lr->kinds[k] = n->kind == PQR_LEAF  ? MCDC_PARQUET_PART_LEAF
                       : n->kind == PQR_MAP ? MCDC_PARQUET_PART_MAP
                       : n->kind == PQR_LIST
                           ? (n->elem_is_repeated ? MCDC_PARQUET_PART_LIST_LEGACY
                                                  : MCDC_PARQUET_PART_LIST)
                           : MCDC_PARQUET_PART_STRUCT;
    }
    return 0;
}

static int build(mcdc_parquet_reader *r)
{
    if (r->lrow)
        return 0;
    size_t n = 0;
    for (size_t l = 0; l < r->n_leaves; l++)
        n += r->leaf_used[l];
    r->lrow = calloc(n ? n : 1, sizeof *r->lrow);
    r->lruns = calloc(n ? n : 1, sizeof *r->lruns);
    if (!r->lrow || !r->lruns) {
        pqr_leaves_free(r);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    r->n_lrow = n;
    size_t k = 0;
    for (size_t l = 0; l < r->n_leaves; l++) {
        if (!r->leaf_used[l])
            continue;
        r->lrow[k].leaf = (int)l;
        r->lrow[k].bytes = (mcdc_buf)MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
        if (describe(&r->lrow[k], r->leaves[l]) < 0) {
            pqr_leaves_free(r);
            return MCDC_ENOMEM;
        }
        k++;
    }
    return 0;
}

size_t mcdc_parquet_reader_num_leaves(const mcdc_parquet_reader *r)
{
    size_t n = 0;
    for (size_t l = 0; r && l < r->n_leaves; l++)
        n += r->leaf_used[l];
    return n;
}

int mcdc_parquet_reader_leaf_info(mcdc_parquet_reader *r, size_t i, mcdc_parquet_leaf_info *out)
{
    MCDC_ASSERT_ARG(r && out);
    int rc = build(r);
    if (rc < 0)
        return rc;
    if (i >= r->n_lrow)
        return mcdc_error_set(MCDC_EINVAL, "%s: leaf %zu of %zu", r->name, i, r->n_lrow);
    const pqr_leafrow *lr = &r->lrow[i];
    const pqr_node *leaf = r->leaves[lr->leaf];
    out->path = lr->path;
    out->type = leaf->col;
    out->type.name = NULL;
    out->max_def = leaf->def_level;
    out->max_rep = leaf->rep_level;
    out->depth = lr->depth;
    out->defs = lr->defs;
    out->repeated = lr->repeated;
    out->kinds = lr->kinds;
    return 0;
}

static int grow(pqr_leafrow *lr, size_t need)
{
    if (need <= lr->cap)
        return 0;
    size_t cap = lr->cap ? lr->cap * 2 : 4;
    while (cap < need)
        cap *= 2;
    uint8_t *rep = realloc(lr->rep, cap);
    if (rep)
        lr->rep = rep;
    uint8_t *def = realloc(lr->def, cap);
    if (def)
        lr->def = def;
    mcdc_value *vals = realloc(lr->vals, cap * sizeof *vals);
    if (vals)
        lr->vals = vals;
    if (!rep || !def || !vals)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    lr->cap = cap;
    return 0;
}

/* Read the current row's entries of one leaf. */
static int read_leaf(mcdc_parquet_reader *r, pqr_leafrow *lr)
{
    pqr_col *c = &r->cols[lr->leaf];
    const pqr_node *leaf = r->leaves[lr->leaf];
    /* only a repeated leaf reads ahead (to find the row's end), which may replace the page
     * its values point into; a flat leaf's values stay valid until the next call */
    bool text = leaf->rep_level > 0 &&
                (leaf->col.type == MCDC_TYPE_STRING || leaf->col.type == MCDC_TYPE_BINARY);
    size_t n = 0;
    if (text)
        mcdc_buf_clear(&lr->bytes);
    for (;;) {
        int rep, def;
        const mcdc_pqdec_val *v;
        int rc = pqr_col_peek(c, &rep, &def, &v);
        if (rc < 0)
            return rc;
        if (rc == 0 || (n > 0 && rep == 0))
            break;
        if ((rc = grow(lr, n + 1)) < 0)
            return rc;
        lr->rep[n] = (uint8_t)rep;
        lr->def[n] = (uint8_t)def;
        mcdc_value *cell = &lr->vals[n];
        memset(cell, 0, sizeof *cell);
        if (!v) {
            cell->is_null = true;
        } else {
            rc = pqr_leaf_value(leaf, v, cell, lr->tmp, sizeof lr->tmp);
            if (rc < 0)
                return pqr_col_fail(c, rc);
            if (text) { /* offsets now, pointers once the arena stops moving */
                size_t at = lr->bytes.len;
                if (mcdc_buf_put(&lr->bytes, cell->v.s.ptr, cell->v.s.len) < 0)
                    return mcdc_error_set(MCDC_ENOMEM, "out of memory");
                cell->v.s.ptr = (const char *)(uintptr_t)at;
            }
        }
        n++;
        pqr_col_next(c);
        if (leaf->rep_level == 0)
            break; /* one entry a row: no need to look ahead */
    }
    if (text)
        for (size_t k = 0; k < n; k++)
            if (!lr->vals[k].is_null)
                lr->vals[k].v.s.ptr = (const char *)lr->bytes.ptr + (uintptr_t)lr->vals[k].v.s.ptr;
    mcdc_parquet_leaf_run *run = &r->lruns[lr - r->lrow];
    run->n = n;
    run->rep = lr->rep;
    run->def = lr->def;
    run->vals = lr->vals;
    return 0;
}

int mcdc_parquet_reader_next_leaves(mcdc_parquet_reader *r, const mcdc_parquet_leaf_run **runs)
{
    MCDC_ASSERT_ARG(r && runs);
    *runs = NULL;
    int rc = pqr_row_ready(r);
    if (rc != 1)
        return rc;
    if ((rc = build(r)) < 0)
        return pqr_fail(r, rc);
    for (size_t i = 0; i < r->n_lrow; i++)
        if ((rc = read_leaf(r, &r->lrow[i])) < 0)
            return pqr_fail(r, rc);
    r->rg_row++;
    *runs = r->lruns;
    return 1;
}
