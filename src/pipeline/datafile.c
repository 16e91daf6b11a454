/*
 * pipeline/datafile.c: one new Parquet data file of a Delta table and its add action
 * (interface in pipeline/datafile.h).
 *
 * Rows go through the Parquet writer, which keeps about one row group in memory and
 * publishes the file (fsync, link without replace, directory fsync) only on close.
 * The add action's stats follow what Spark writes (PROTOCOL "Per-file Statistics"):
 * numRecords, nullCount for every column, minValues/maxValues for numbers, dates,
 * timestamps (milliseconds, truncated, so a reader widens a max by 999 µs; timestamp with
 * a Z, timestamp_ntz without) and strings of at most 32 bytes; none for booleans,
 * binaries, NaN or longer strings, which readers then take as "may match".
 */
#include "pipeline/datafile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcdc/fs.h"
#include "mcdc/parquet.h"
#include "mcdc/time.h"

#define MAX_STAT_STRING 32

struct mcdc_datafile {
    mcdc_parquet_writer *w;     /* the open writer; NULL once closed */
    mcdc_schema *schema;        /* copy */
    char        *table_path;    /* the table root */
    char        *name;          /* file name relative to the root */
    int64_t      rows;          /* rows added */
};

int mcdc_datafile__open(mcdc_datafile **out, const char *table_path, const mcdc_schema *schema)
{
    *out = NULL;
    mcdc_datafile *f = calloc(1, sizeof *f);
    char uuid[37];
    mcdc_delta_uuid(uuid);
    size_t nlen = strlen(uuid) + 40, plen = strlen(table_path) + nlen + 2;
    char *path = malloc(plen);
    if (!f || !path || !(f->schema = mcdc_schema_copy(schema)) ||
        !(f->table_path = strdup(table_path)) || !(f->name = malloc(nlen))) {
        free(path);
        mcdc_datafile__discard(f);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", table_path);
    }
    snprintf(f->name, nlen, "part-00000-%s-c000.snappy.parquet", uuid);
    snprintf(path, plen, "%s/%s", table_path, f->name);
    /* No dictionary pages: bronze's columns are mostly distinct values (LSNs, seqvals, keys),
     * for which building a dictionary that then falls back to PLAIN cost 2.5 times the
     * encoding time (bench/stream); snappy still compresses repeated values. */
    mcdc_parquet_writer_options wo = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    wo.dictionary = false;
    int rc = mcdc_fs_mkdirs(table_path); /* a table's first file may come before its log */
    if (rc == 0)
        rc = mcdc_parquet_writer_open(&f->w, path, schema, &wo);
    free(path);
    if (rc < 0) {
        mcdc_datafile__discard(f);
        return rc;
    }
    *out = f;
    return 0;
}

int mcdc_datafile__add(mcdc_datafile *f, const mcdc_value *row)
{
    int rc = mcdc_parquet_writer_write_row(f->w, row);
    if (rc == 0)
        f->rows++;
    return rc;
}

int64_t mcdc_datafile__rows(const mcdc_datafile *f)
{
    return f->rows;
}

/* Append the stats value of one column, or nothing (returns 1) when it has none. */
static int stat_value(mcdc_buf *b, const mcdc_column *c, const mcdc_value *v)
{
    char t[MCDC_TIME_STRLEN];
    switch (c->type) {
    case MCDC_TYPE_BYTE:
    case MCDC_TYPE_SHORT:
    case MCDC_TYPE_INT:
    case MCDC_TYPE_LONG:
        return mcdc_buf_printf(b, "%lld", (long long)v->v.i);
    case MCDC_TYPE_FLOAT:
        if (!isfinite(v->v.f))
            return 1;
        return mcdc_buf_printf(b, "%.9g", (double)v->v.f);
    case MCDC_TYPE_DOUBLE:
        if (!isfinite(v->v.d))
            return 1;
        return mcdc_buf_printf(b, "%.17g", v->v.d);
    case MCDC_TYPE_DECIMAL: {
        char d[48];
        return mcdc_buf_puts(b, mcdc_decimal_format(d, v->v.dec, c->scale));
    }
    case MCDC_TYPE_DATE: {
        int64_t y;
        unsigned m, d;
        mcdc_civil_from_days(v->v.i, &y, &m, &d);
        return mcdc_buf_printf(b, "\"%04lld-%02u-%02u\"", (long long)y, m, d);
    }
    case MCDC_TYPE_TIMESTAMP:
    case MCDC_TYPE_TIMESTAMP_NTZ: {
        int64_t ms = v->v.i - (((v->v.i % 1000) + 1000) % 1000); /* truncate to ms */
        mcdc_time_format(t, ms, 3, c->type == MCDC_TYPE_TIMESTAMP);
        return mcdc_buf_printf(b, "\"%s\"", t);
    }
    case MCDC_TYPE_STRING:
        if (v->v.s.len > MAX_STAT_STRING)
            return 1;
        return mcdc_json_quote(b, v->v.s.ptr, v->v.s.len);
    default:
        return 1; /* booleans, binaries */
    }
}

static int stats_json(mcdc_buf *b, const mcdc_schema *s, const mcdc_parquet_write_result *r)
{
    int rc = mcdc_buf_printf(b, "{\"numRecords\":%lld", (long long)r->num_rows);
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        rc = mcdc_buf_puts(b, pass == 0 ? ",\"minValues\":{" : "},\"maxValues\":{");
        bool first = true;
        for (size_t i = 0; i < s->n_cols && i < r->n_cols && rc == 0; i++) {
            const mcdc_parquet_column_stats *cs = &r->cols[i];
            if (!cs->has_min_max)
                continue;
            size_t mark = b->len;
            if (!first)
                rc = mcdc_buf_putc(b, ',');
            if (rc == 0)
                rc = mcdc_json_quote(b, s->cols[i].name, strlen(s->cols[i].name));
            if (rc == 0)
                rc = mcdc_buf_putc(b, ':');
            if (rc == 0)
                rc = stat_value(b, &s->cols[i], pass == 0 ? &cs->min : &cs->max);
            if (rc == 1) { /* no value for this column: take the key back */
                b->len = mark;
                b->ptr[mark] = '\0';
                rc = 0;
                continue;
            }
            first = false;
        }
    }
    if (rc == 0)
        rc = mcdc_buf_puts(b, "},\"nullCount\":{");
    for (size_t i = 0; i < s->n_cols && i < r->n_cols && rc == 0; i++) {
        if (i)
            rc = mcdc_buf_putc(b, ',');
        if (rc == 0)
            rc = mcdc_json_quote(b, s->cols[i].name, strlen(s->cols[i].name));
        if (rc == 0)
            rc = mcdc_buf_printf(b, ":%lld", (long long)r->cols[i].null_count);
    }
    if (rc == 0)
        rc = mcdc_buf_puts(b, "}}");
    return rc;
}

int mcdc_datafile__finish(mcdc_datafile *f, mcdc_delta_file *out)
{
    memset(out, 0, sizeof *out);
    mcdc_parquet_write_result r = { 0 };
    int rc = mcdc_parquet_writer_close(f->w, &r);
    mcdc_parquet_writer_free(f->w);
    f->w = NULL;
    mcdc_buf st = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    if (rc == 0)
        rc = stats_json(&st, f->schema, &r);
    if (rc == 0) {
        out->path = strdup(f->name);
        out->size = (int64_t)r.file_size;
        out->modification_time = mcdc_time_now_us() / 1000;
        out->deletion_timestamp = -1;
        out->data_change = true;
        out->stats = mcdc_buf_detach(&st);
        out->base_row_id = -1;
        out->default_row_commit_version = -1;
        if (!out->path || !out->stats)
            rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", f->table_path);
    }
    if (rc < 0)
        mcdc_delta_file_clear(out);
    mcdc_buf_dispose(&st);
    mcdc_parquet_write_result_dispose(&r);
    mcdc_datafile__discard(f);
    return rc;
}

void mcdc_datafile__discard(mcdc_datafile *f)
{
    if (!f)
        return;
    mcdc_parquet_writer_free(f->w);
    mcdc_schema_free(f->schema);
    free(f->table_path);
    free(f->name);
    free(f);
}

void mcdc_datafile__remove(const char *table_path, const char *rel_path)
{
    size_t n = strlen(table_path) + strlen(rel_path) + 2;
    char *p = malloc(n);
    if (!p)
        return;
    snprintf(p, n, "%s/%s", table_path, rel_path);
    unlink(p);
    free(p);
}
