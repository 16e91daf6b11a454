/*
 * fuzz_parquet_reader.c: libFuzzer target for the Parquet reader.
 *
 * Treats the input as a whole file held in memory: opens it, prints its metadata document,
 * reads every row as JSON (every column, nested ones assembled), then reopens it and reads
 * every row as cells with the first column projected and a predicate on it. Limits are
 * lowered so that one input cannot ask for gigabytes. Any crash, leak or sanitizer report
 * is a bug; errors are expected.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mcdc/parquet.h"

static const mcdc_parquet_read_options opts = { 1, (size_t)16 << 20, (size_t)1 << 20, (size_t)1 << 20 };

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
    return 0;
}
