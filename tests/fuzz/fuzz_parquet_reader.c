/*
 * fuzz_parquet_reader.c: libFuzzer target for the Parquet reader.
 *
 * Treats the input as a whole file held in memory: opens it, prints its metadata document,
 * reads every row as JSON (every column, nested ones assembled), then reopens it and reads
 * every row as the entries of its leaf columns (checking each run's levels against the
 * leaf's), then every row as cells with the first column projected and a predicate on
 * it, and last reads every column row by row beside a second reader in batches, which must give the same cells
 * and end the same way. Limits are lowered so that one input cannot ask for gigabytes. Any
 * crash, leak, sanitizer report or disagreement is a bug; errors are expected.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mcdc/parquet.h"

static const mcdc_parquet_read_options opts = { 1, (size_t)16 << 20, (size_t)1 << 20, (size_t)1 << 20 };

static bool same_cell(mcdc_type_id t, const mcdc_value *a, const mcdc_value *b)
{
    if (a->is_null || b->is_null)
        return a->is_null == b->is_null;
    switch (t) {
    case MCDC_TYPE_BOOLEAN: return a->v.b == b->v.b;
    case MCDC_TYPE_FLOAT: return memcmp(&a->v.f, &b->v.f, sizeof a->v.f) == 0;
    case MCDC_TYPE_DOUBLE: return memcmp(&a->v.d, &b->v.d, sizeof a->v.d) == 0;
    case MCDC_TYPE_DECIMAL: return a->v.dec == b->v.dec;
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        return a->v.s.len == b->v.s.len &&
               (a->v.s.len == 0 || memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len) == 0);
    default: return a->v.i == b->v.i;
    }
}

/* Rows one by one from @p a and in batches from @p b must agree. */
static void compare_batches(mcdc_parquet_reader *a, mcdc_parquet_reader *b)
{
    const mcdc_schema *s = mcdc_parquet_reader_schema(a);
    size_t w = s->n_cols;
    long rows = 0;
    for (size_t it = 0; rows < 100000; it++) {
        const mcdc_value *batch, *row;
        size_t n;
        int rb = mcdc_parquet_reader_next_batch(b, 1 + it % 5, &batch, &n);
        if (rb != 1) {
            if (mcdc_parquet_reader_next(a, &row) != rb)
                __builtin_trap();
            return;
        }
        for (size_t k = 0; k < n; k++, rows++) {
            if (mcdc_parquet_reader_next(a, &row) != 1)
                __builtin_trap();
            for (size_t j = 0; j < w; j++)
                if (!same_cell(s->cols[j].type, &row[j], &batch[k * w + j]))
                    __builtin_trap();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mcdc_parquet_reader *r;
    if (mcdc_parquet_reader_open_mem(&r, data, size, "fuzz.parquet", &opts) < 0)
        return 0;
    json_t *meta = NULL;
    if (mcdc_parquet_reader_meta_json(r, &meta) == 0)
        json_decref(meta);
    json_t *row;
    int rc;
    long n = 0;
    while ((rc = mcdc_parquet_reader_next_json(r, &row)) == 1 && n++ < 100000)
        json_decref(row);
    mcdc_parquet_reader_free(r);

    if (mcdc_parquet_reader_open_mem(&r, data, size, "fuzz.parquet", &opts) < 0)
        return 0;
    size_t n_leaves = mcdc_parquet_reader_num_leaves(r);
    const mcdc_parquet_leaf_run *runs;
    n = 0;
    while (mcdc_parquet_reader_next_leaves(r, &runs) == 1 && n++ < 100000)
        for (size_t l = 0; l < n_leaves; l++) {
            mcdc_parquet_leaf_info li;
            if (mcdc_parquet_reader_leaf_info(r, l, &li) < 0)
                break;
            if (runs[l].n < 1 || runs[l].rep[0] != 0)
                __builtin_trap();
            for (size_t k = 0; k < runs[l].n; k++)
                if (runs[l].def[k] > li.max_def || runs[l].rep[k] > li.max_rep ||
                    runs[l].vals[k].is_null != (runs[l].def[k] != li.max_def))
                    __builtin_trap();
        }
    mcdc_parquet_reader_free(r);

    if (mcdc_parquet_reader_open_mem(&r, data, size, "fuzz.parquet", &opts) < 0)
        return 0;
    const mcdc_schema *s = mcdc_parquet_reader_schema(r);
    if (s->n_cols > 0) {
        char name[256];
        const char *np = name;
        snprintf(name, sizeof name, "%s", s->cols[0].name); /* select frees the old schema */
        if (mcdc_parquet_reader_select(r, &np, 1) == 0 && !mcdc_parquet_reader_is_nested(r, 0)) {
            mcdc_value v = { .is_null = false };
            mcdc_type_id t = mcdc_parquet_reader_schema(r)->cols[0].type;
            if (t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY) {
                v.v.s.ptr = "m";
                v.v.s.len = 1;
            } else if (t == MCDC_TYPE_DECIMAL) {
                v.v.dec = 1;
            } else if (t == MCDC_TYPE_FLOAT) {
                v.v.f = 1;
            } else if (t == MCDC_TYPE_DOUBLE) {
                v.v.d = 1;
            } else {
                v.v.i = 1;
            }
            mcdc_parquet_reader_filter(r, name, MCDC_PARQUET_GE, &v);
        }
    }
    const mcdc_value *cells;
    n = 0;
    while ((rc = mcdc_parquet_reader_next(r, &cells)) == 1 && n++ < 100000)
        ;
    mcdc_parquet_reader_free(r);

    mcdc_parquet_reader *b;
    if (mcdc_parquet_reader_open_mem(&r, data, size, "fuzz.parquet", &opts) < 0)
        return 0;
    if (mcdc_parquet_reader_open_mem(&b, data, size, "fuzz.parquet", &opts) == 0) {
        compare_batches(r, b);
        mcdc_parquet_reader_free(b);
    }
    mcdc_parquet_reader_free(r);
    return 0;
}
