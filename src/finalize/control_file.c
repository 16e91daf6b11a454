/*
 * finalize/control_file.c: write one control row as a one-row Parquet data file with its
 * Delta add action (stats: numRecords 1, min = max = the row; the "mcdc.control_row" tag).
 *
 * Guarantees: the file is complete and fsynced (with its directory) before the add
 * action exists; on any failure no file is left. Stats keep table_name whole (never
 * truncated), so the predicate table_name = <key> is decided exactly by the Delta layer's
 * conflict check. Timestamps in stats are in milliseconds (as Delta writers do), the tag
 * keeps microseconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/parquet.h"
#include "mcdc/storage.h"

#include "finalize/control_file.h"

static int stat_value(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v)
{
    if (col->type == MCDC_TYPE_TIMESTAMP_NTZ) {
        char t[MCDC_TIME_STRLEN];
        mcdc_time_format(t, v->v.i, 3, false);
        return mcdc_json_quote(out, t, strlen(t));
    }
    return mcdc_value_to_json(out, col, v);
}

int mcdc_control__row_stats(mcdc_buf *out, const mcdc_control_row *r)
{
    const mcdc_schema *s = mcdc_control_schema();
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "control schema: out of memory");
    mcdc_value v[MCDC_CONTROL_NCOLS];
    char lsn[MCDC_LSN_STRLEN];
    mcdc_control_row_values(r, v, lsn);
    int rc = mcdc_buf_put(out, "{\"numRecords\":1", 15);
    static const char *const part[2] = { ",\"minValues\":{", ",\"maxValues\":{" };
    for (int p = 0; p < 2 && rc == 0; p++) {
        rc = mcdc_buf_put(out, part[p], strlen(part[p]));
        bool first = true;
        for (size_t i = 0; i < s->n_cols && rc == 0; i++) {
            if (v[i].is_null)
                continue;
            if (!first)
                rc = mcdc_buf_put(out, ",", 1);
            first = false;
            if (rc == 0)
                rc = mcdc_json_quote(out, s->cols[i].name, strlen(s->cols[i].name));
            if (rc == 0)
                rc = mcdc_buf_put(out, ":", 1);
            if (rc == 0)
                rc = stat_value(out, &s->cols[i], &v[i]);
        }
        if (rc == 0)
            rc = mcdc_buf_put(out, "}", 1);
    }
    if (rc == 0)
        rc = mcdc_buf_put(out, ",\"nullCount\":{", 14);
    for (size_t i = 0; i < s->n_cols && rc == 0; i++) {
        char item[96];
        int n = snprintf(item, sizeof item, "%s\"%s\":%d", i ? "," : "", s->cols[i].name,
                         v[i].is_null ? 1 : 0);
        rc = mcdc_buf_put(out, item, (size_t)n);
    }
    if (rc == 0)
        rc = mcdc_buf_put(out, "}}", 2);
    return rc;
}

int mcdc_control__write_row_file(mcdc_delta_file *add, char *abs, size_t abs_cap,
                                 const char *table_path, const mcdc_control_row *r,
                                 int64_t now_ms)
{
    const mcdc_schema *s = mcdc_control_schema();
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "control schema: out of memory");
    char uuid[37], rel[96];
    snprintf(rel, sizeof rel, "part-00000-%s-c000.snappy.parquet", mcdc_delta_uuid(uuid));
    if (snprintf(abs, abs_cap, "%s/%s", table_path, rel) >= (int)abs_cap)
        return mcdc_error_set(MCDC_EINVAL, "%s: path too long", table_path);

    mcdc_value v[MCDC_CONTROL_NCOLS];
    char lsn[MCDC_LSN_STRLEN];
    mcdc_control_row_values(r, v, lsn);
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    o.dictionary = false; /* one row: a dictionary only costs bytes */
    mcdc_parquet_writer *w = NULL;
    mcdc_parquet_write_result res;
    memset(&res, 0, sizeof res);
    int rc = mcdc_parquet_writer_open(&w, abs, s, &o);
    if (rc == 0)
        rc = mcdc_parquet_writer_write_row(w, v);
    if (rc == 0)
        rc = mcdc_parquet_writer_close(w, &res);
    mcdc_parquet_writer_free(w);
    if (rc < 0)
        return rc;

    mcdc_buf stats = MCDC_BUF_INIT(1 << 20), tag = MCDC_BUF_INIT(1 << 20);
    memset(add, 0, sizeof *add);
    add->path = strdup(rel);
    add->size = (int64_t)res.file_size;
    add->modification_time = now_ms;
    add->deletion_timestamp = -1;
    add->data_change = true;
    add->base_row_id = -1;
    add->default_row_commit_version = -1;
    mcdc_parquet_write_result_dispose(&res);
    rc = add->path ? 0 : mcdc_error_set(MCDC_ENOMEM, "control: out of memory");
    if (rc == 0)
        rc = mcdc_control__row_stats(&stats, r);
    if (rc == 0)
        rc = mcdc_control_row_to_json(&tag, r);
    if (rc == 0)
        rc = mcdc_delta_map_set(&add->tags, MCDC_CONTROL_ROW_TAG, tag.ptr);
    if (rc == 0) {
        add->stats = mcdc_buf_detach(&stats);
        rc = add->stats ? 0 : mcdc_error_set(MCDC_ENOMEM, "control: out of memory");
    }
    mcdc_buf_dispose(&stats);
    mcdc_buf_dispose(&tag);
    if (rc < 0) {
        mcdc_delta_file_clear(add);
        if (mcdc_storage_delete(abs) < 0)
            mcdc_error_clear(); /* debris for vacuum */
    }
    return rc;
}
