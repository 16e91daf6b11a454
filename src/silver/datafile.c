/*
 * silver/datafile.c: one new silver data file: rows through the Parquet writer, then the
 * add action that will name it (interface in silver/datafile.h).
 *
 * The file gets a unique name at the table root (part-<uuid>.zstd.parquet); the Parquet
 * writer fsyncs it and links it in without replacing, so it is whole before any commit
 * names it, and invisible until then. The add action's stats follow what Spark writes
 * (PROTOCOL "Per-file Statistics"): numRecords, nullCount per column, minValues/maxValues
 * for numbers, decimals (exact text), dates, timestamps (truncated to milliseconds, so
 * readers widen a max by 999 us) and strings of at most 32 bytes; none for booleans,
 * binaries, NaN or longer strings, which readers take as "may match". Silver's own exact
 * key range goes into tags (apply.c).
 */
#include "silver/datafile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/time.h"

#define MAX_STAT_STRING 32

struct mcdc_silver_datafile {
    mcdc_parquet_writer *pw;
    const mcdc_schema   *schema; /* borrowed */
    char                *rel;    /* file name relative to the table */
    char                *abs;    /* its path */
};

void mcdc_silver_datafile_free(mcdc_silver_datafile *f)
{
    if (!f)
        return;
    mcdc_parquet_writer_free(f->pw); /* removes the temp file when not closed */
    free(f->rel);
    free(f->abs);
    free(f);
}

int mcdc_silver_datafile_open(mcdc_silver_datafile **out, const char *table_path,
                              const mcdc_schema *schema)
{
    *out = NULL;
    mcdc_silver_datafile *f = calloc(1, sizeof *f);
    if (!f)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    char uuid[37], rel[96];
    mcdc_delta_uuid(uuid);
    snprintf(rel, sizeof rel, "part-00000-%s-c000.zstd.parquet", uuid);
    size_t n = strlen(table_path) + strlen(rel) + 2;
    f->rel = strdup(rel);
    f->abs = malloc(n);
    f->schema = schema;
    if (!f->rel || !f->abs) {
        mcdc_silver_datafile_free(f);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    snprintf(f->abs, n, "%s/%s", table_path, rel);
    mcdc_parquet_writer_options po = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    po.codec = MCDC_PARQUET_ZSTD;
    int rc = mcdc_parquet_writer_open(&f->pw, f->abs, schema, &po);
    if (rc < 0) {
        mcdc_silver_datafile_free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int mcdc_silver_datafile_write(mcdc_silver_datafile *f, const mcdc_value *row)
{
    return mcdc_parquet_writer_write_row(f->pw, row);
}

/* Append the stats value of one column; 1 (nothing appended) when it has none. */
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
        return isfinite(v->v.f) ? mcdc_buf_printf(b, "%.9g", (double)v->v.f) : 1;
    case MCDC_TYPE_DOUBLE:
        return isfinite(v->v.d) ? mcdc_buf_printf(b, "%.17g", v->v.d) : 1;
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
        int64_t ms = v->v.i - (((v->v.i % 1000) + 1000) % 1000);
        mcdc_time_format(t, ms, 3, c->type == MCDC_TYPE_TIMESTAMP);
        return mcdc_buf_printf(b, "\"%s\"", t);
    }
    case MCDC_TYPE_STRING:
        return v->v.s.len > MAX_STAT_STRING ? 1 : mcdc_json_quote(b, v->v.s.ptr, v->v.s.len);
    default:
        return 1;
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

int mcdc_silver_datafile_close(mcdc_silver_datafile *f, mcdc_delta_file *out)
{
    memset(out, 0, sizeof *out);
    mcdc_parquet_write_result r;
    memset(&r, 0, sizeof r);
    int rc = mcdc_parquet_writer_close(f->pw, &r);
    mcdc_parquet_writer_free(f->pw);
    f->pw = NULL;
    if (rc < 0)
        return rc;
    mcdc_buf st = MCDC_BUF_INIT(1 << 24);
    rc = stats_json(&st, f->schema, &r);
    if (rc == 0) {
        out->path = strdup(f->rel); /* letters, digits, '-' and '.': nothing to encode */
        out->stats = mcdc_buf_detach(&st);
        out->size = (int64_t)r.file_size;
        out->modification_time = mcdc_time_now_us() / 1000;
        out->deletion_timestamp = -1;
        out->data_change = true;
        out->base_row_id = -1;
        out->default_row_commit_version = -1;
        if (!out->path || !out->stats)
            rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    if (rc < 0)
        mcdc_delta_file_clear(out);
    mcdc_buf_dispose(&st);
    mcdc_parquet_write_result_dispose(&r);
    return rc;
}
