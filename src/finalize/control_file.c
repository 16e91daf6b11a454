/*
 * finalize/control_file.c: write one control row as a one-row Parquet data file with its
 * Delta add action (stats: numRecords 1, min = max = the row; the "mcdc.control_row" tag),
 * through the Delta layer's one writer of data files (mcdc_delta_datafile).
 *
 * Guarantees: the file is complete and fsynced (with its directory) before the add
 * action exists; on any failure no file is left. Stats keep table_name whole (never
 * truncated), so the predicate table_name = <key> is decided exactly by the Delta layer's
 * conflict check. Timestamps in stats are in milliseconds (as Delta writers do), the tag
 * keeps microseconds.
 */
#include <stdio.h>
#include <string.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"

#include "finalize/control_file.h"

int mcdc_control__write_row_file(mcdc_delta_file *add, char *abs, size_t abs_cap,
                                 const char *table_path, const mcdc_control_row *r,
                                 int64_t now_ms)
{
    memset(add, 0, sizeof *add);
    const mcdc_schema *s = mcdc_control_schema();
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "control schema: out of memory");
    mcdc_value v[MCDC_CONTROL_NCOLS];
    char lsn[MCDC_LSN_STRLEN];
    mcdc_control_row_values(r, v, lsn);
    mcdc_delta_datafile_options o = MCDC_DELTA_DATAFILE_OPTIONS_INIT;
    o.parquet.dictionary = false; /* one row: a dictionary only costs bytes */
    o.whole_strings = true;
    o.modification_time = now_ms;
    mcdc_buf tag = MCDC_BUF_INIT(1 << 20);
    mcdc_delta_datafile *f = NULL;
    int rc = mcdc_control_row_to_json(&tag, r);
    if (rc == 0)
        rc = mcdc_delta_datafile_open(&f, table_path, s, &o);
    if (rc == 0)
        rc = mcdc_delta_datafile_set_tag(f, MCDC_CONTROL_ROW_TAG, tag.ptr);
    if (rc == 0)
        rc = mcdc_delta_datafile_write(f, v);
    if (rc == 0)
        rc = mcdc_delta_datafile_finish(f, add);
    mcdc_delta_datafile_free(f);
    mcdc_buf_dispose(&tag);
    if (rc == 0 && snprintf(abs, abs_cap, "%s/%s", table_path, add->path) >= (int)abs_cap) {
        mcdc_delta_datafile_remove(table_path, add->path);
        mcdc_delta_file_clear(add);
        rc = mcdc_error_set(MCDC_EINVAL, "%s: path too long", table_path);
    }
    return rc;
}
