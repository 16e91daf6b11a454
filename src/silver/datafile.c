/*
 * silver/datafile.c: one new silver data file: rows through the Parquet writer, then the
 * add action that will name it (interface in silver/datafile.h).
 *
 * The file gets a unique name at the table root (part-<uuid>.zstd.parquet); the Parquet
 * writer fsyncs it and links it in without replacing, so it is whole before any commit
 * names it, and invisible until then. The add action's stats are the Delta layer's
 * (mcdc_delta_stats_json, shared by every writer of data files). Silver's own exact key
 * range goes into tags (apply.c).
 */
#include "silver/datafile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/delta.h"
#include "mcdc/time.h"

struct mcdc_silver_datafile {
    mcdc_parquet_writer *pw;
    mcdc_schema         *schema; /* the file's columns: physical names under column mapping */
    char                *rel;    /* file name relative to the table */
    char                *abs;    /* its path */
};

void mcdc_silver_datafile_free(mcdc_silver_datafile *f)
{
    if (!f)
        return;
    mcdc_parquet_writer_free(f->pw); /* removes the temp file when not closed */
    mcdc_schema_free(f->schema);
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
    if (!f->rel || !f->abs) {
        mcdc_silver_datafile_free(f);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    int32_t *ids = NULL; /* column mapping: physical names, field ids (delta/colmap.c) */
    int rc = mcdc_delta_physical_schema(&f->schema, &ids, table_path, schema);
    if (rc < 0) {
        mcdc_silver_datafile_free(f);
        return rc;
    }
    snprintf(f->abs, n, "%s/%s", table_path, rel);
    mcdc_parquet_writer_options po = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    po.codec = MCDC_PARQUET_ZSTD;
    po.page_max_values = 20000;
    po.codec_level = 1;
    po.field_ids = ids;
    rc = mcdc_parquet_writer_open(&f->pw, f->abs, f->schema, &po);
    free(ids);
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
    rc = mcdc_delta_stats_json(&st, f->schema, &r);
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
