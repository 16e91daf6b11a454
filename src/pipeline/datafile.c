/*
 * pipeline/datafile.c: one new Parquet data file of a Delta table and its add action
 * (interface in pipeline/datafile.h).
 *
 * Rows go through the Parquet writer, which keeps about one row group in memory and
 * publishes the file (fsync, link without replace, directory fsync) only on close.
 * The add action's stats are the Delta layer's (mcdc_delta_stats_json, shared by every
 * writer of data files: exact bounds, timestamps cut down to milliseconds, a long string's
 * max left out so readers take it as "may match").
 */
#include "pipeline/datafile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcdc/delta.h"
#include "mcdc/parquet.h"
#include "mcdc/storage.h"
#include "mcdc/time.h"

struct mcdc_datafile {
    mcdc_parquet_writer *w;     /* the open writer; NULL once closed */
    mcdc_schema *schema;        /* the file's columns: physical names under column mapping */
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
    if (!f || !path || !(f->table_path = strdup(table_path)) || !(f->name = malloc(nlen))) {
        free(path);
        mcdc_datafile__discard(f);
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", table_path);
    }
    /* the file's columns: physical names and field ids under column mapping, so stats are
     * keyed by physical name too (delta/colmap.c) */
    int32_t *ids = NULL;
    int rc = mcdc_delta_physical_schema(&f->schema, &ids, table_path, schema);
    if (rc < 0) {
        free(path);
        mcdc_datafile__discard(f);
        return rc;
    }
    snprintf(f->name, nlen, "part-00000-%s-c000.snappy.parquet", uuid);
    snprintf(path, plen, "%s/%s", table_path, f->name);
    /* No dictionary pages: bronze's columns are mostly distinct values (LSNs, seqvals, keys),
     * for which building a dictionary that then falls back to PLAIN cost 2.5 times the
     * encoding time (bench/stream); snappy still compresses repeated values. */
    mcdc_parquet_writer_options wo = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    wo.dictionary = false;
    wo.field_ids = ids;
    rc = mcdc_storage_mkdirs(table_path); /* a table's first file may come before its log */
    if (rc == 0)
        rc = mcdc_parquet_writer_open(&f->w, path, f->schema, &wo);
    free(path);
    free(ids);
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

int mcdc_datafile__finish(mcdc_datafile *f, mcdc_delta_file *out)
{
    memset(out, 0, sizeof *out);
    mcdc_parquet_write_result r = { 0 };
    int rc = mcdc_parquet_writer_close(f->w, &r);
    mcdc_parquet_writer_free(f->w);
    f->w = NULL;
    mcdc_buf st = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    if (rc == 0)
        rc = mcdc_delta_stats_json(&st, f->schema, &r);
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
    if (mcdc_storage_delete(p) < 0)
        mcdc_error_clear(); /* debris for vacuum */
    free(p);
}
