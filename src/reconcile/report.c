/*
 * reconcile/report.c: the reconcile report table (kind `reconcile`, schema version 0;
 * anchor-features §2.8): one row per bucket and one per key named, per run, with run_id,
 * so mismatches can be queried and charted.
 *
 * A run's rows are appended in one Delta commit (a blind append), so a reader sees a run
 * whole or not at all; the table is created on the first run with mcdc.kind = reconcile,
 * and a table of another kind is refused before anything is read or written.
 */
#include <string.h>

#include "mcdc/delta.h"
#include "mcdc/pipeline.h"
#include "reconcile/report.h"

enum { C_RUN_ID, C_RUN_AT, C_SILVER, C_SILVER_VERSION, C_SILVER_LSN, C_SOURCE_LSN, C_LO, C_HI,
       C_SRC_ROWS, C_SRC_SUM, C_SIL_ROWS, C_SIL_SUM, C_STATUS, C_HASHED, C_KEY, C_FAILURE, C_DETAIL, N_COLS };

static mcdc_schema *report_schema(void)
{
    mcdc_schema *s = mcdc_schema_new();
    if (!s)
        return NULL;
    int rc = 0;
    rc |= mcdc_schema_add(s, "run_id", MCDC_TYPE_STRING, 0, 0, false);
    rc |= mcdc_schema_add(s, "run_at", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, false);
    rc |= mcdc_schema_add(s, "silver", MCDC_TYPE_STRING, 0, 0, false);
    rc |= mcdc_schema_add(s, "silver_version", MCDC_TYPE_LONG, 0, 0, true);
    rc |= mcdc_schema_add(s, "silver_lsn", MCDC_TYPE_STRING, 0, 0, true);
    rc |= mcdc_schema_add(s, "source_lsn", MCDC_TYPE_STRING, 0, 0, true);
    rc |= mcdc_schema_add(s, "bucket_lo", MCDC_TYPE_STRING, 0, 0, true);
    rc |= mcdc_schema_add(s, "bucket_hi", MCDC_TYPE_STRING, 0, 0, true);
    rc |= mcdc_schema_add(s, "source_rows", MCDC_TYPE_LONG, 0, 0, true);
    rc |= mcdc_schema_add(s, "source_key_sum", MCDC_TYPE_DECIMAL, 38, 0, true);
    rc |= mcdc_schema_add(s, "silver_rows", MCDC_TYPE_LONG, 0, 0, true);
    rc |= mcdc_schema_add(s, "silver_key_sum", MCDC_TYPE_DECIMAL, 38, 0, true);
    rc |= mcdc_schema_add(s, "status", MCDC_TYPE_STRING, 0, 0, true);
    rc |= mcdc_schema_add(s, "hashed", MCDC_TYPE_BOOLEAN, 0, 0, true);
    rc |= mcdc_schema_add(s, "key", MCDC_TYPE_STRING, 0, 0, true);
    rc |= mcdc_schema_add(s, "failure_type", MCDC_TYPE_STRING, 0, 0, true);
    rc |= mcdc_schema_add(s, "detail", MCDC_TYPE_STRING, 0, 0, true);
    if (rc) {
        mcdc_schema_free(s);
        return NULL;
    }
    return s;
}

int mcdc_reconcile__report_check(const char *path, const char *name)
{
    return mcdc_table_check_kind(path, name, "reconcile", "--report");
}

static void str(mcdc_value *v, const char *s)
{
    v->is_null = s == NULL;
    if (s) {
        v->v.s.ptr = s;
        v->v.s.len = strlen(s);
    }
}

int mcdc_reconcile__report_append(const char *path, const char *run_id, int64_t run_at_us,
                                  const char *silver, int64_t silver_version, const char *silver_lsn,
                                  const mcdc_reconcile__row *rows, size_t n)
{
    mcdc_schema *schema = report_schema();
    if (!schema)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int64_t v;
    int rc = mcdc_delta_latest_version(&v, path);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        mcdc_delta_map conf = { 0 };
        rc = mcdc_delta_map_set(&conf, "mcdc.kind", "reconcile");
        if (rc == 0)
            rc = mcdc_delta_create(path, schema, NULL, 0, &conf, NULL);
        mcdc_delta_map_clear(&conf);
    }
    mcdc_delta_snapshot *snap = NULL;
    mcdc_delta_writer *w = NULL;
    mcdc_delta_file *files = NULL;
    size_t n_files = 0;
    if (rc == 0)
        rc = mcdc_delta_snapshot_open(&snap, path, -1);
    mcdc_delta_writer_options wo = MCDC_DELTA_WRITER_OPTIONS_INIT;
    if (rc == 0)
        rc = mcdc_delta_writer_open(&w, snap, &wo);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const mcdc_reconcile__row *r = &rows[i];
        mcdc_value c[N_COLS];
        memset(c, 0, sizeof c);
        str(&c[C_RUN_ID], run_id);
        c[C_RUN_AT].v.i = run_at_us;
        str(&c[C_SILVER], silver);
        c[C_SILVER_VERSION].v.i = silver_version;
        str(&c[C_SILVER_LSN], silver_lsn);
        str(&c[C_SOURCE_LSN], r->source_lsn);
        str(&c[C_LO], r->bucket_lo);
        str(&c[C_HI], r->bucket_hi);
        c[C_SRC_ROWS].is_null = c[C_SIL_ROWS].is_null = !r->has_counts;
        c[C_SRC_ROWS].v.i = r->source_rows;
        c[C_SIL_ROWS].v.i = r->silver_rows;
        c[C_SRC_SUM].is_null = c[C_SIL_SUM].is_null = !r->has_sums;
        c[C_SRC_SUM].v.dec = r->source_sum;
        c[C_SIL_SUM].v.dec = r->silver_sum;
        str(&c[C_STATUS], r->status);
        c[C_HASHED].is_null = !r->has_hashed;
        c[C_HASHED].v.b = r->hashed;
        str(&c[C_KEY], r->key);
        str(&c[C_FAILURE], r->failure_type);
        str(&c[C_DETAIL], r->detail);
        rc = mcdc_delta_writer_write(w, c);
    }
    if (rc == 0)
        rc = mcdc_delta_writer_finish(w, &files, &n_files);
    if (rc == 0 && n_files) {
        mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        o.operation = "WRITE";
        rc = mcdc_delta_append(path, files, n_files, &o, NULL);
    }
    mcdc_delta_files_free(files, n_files);
    mcdc_delta_writer_free(w);
    mcdc_delta_snapshot_free(snap);
    mcdc_schema_free(schema);
    return rc;
}
