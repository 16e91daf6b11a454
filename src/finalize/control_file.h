/*
 * finalize/control_file.h: one control row as one data file of the control table
 * (internal to src/finalize; design: docs/decisions/0002-control-table-one-file-per-row.md).
 */
#ifndef MCDC_FINALIZE_CONTROL_FILE_H
#define MCDC_FINALIZE_CONTROL_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "mcdc/delta.h"
#include "mcdc/finalize.h"

/** The add-action tag holding the row as one JSON object (exact values). */
#define MCDC_CONTROL_ROW_TAG "mcdc.control_row"

/** Write @p r as a one-row Parquet file in the table at @p table_path (fsynced, with its
 *  directory) and fill @p add (path relative to the table, size, modification time
 *  @p now_ms, dataChange, stats with min = max = the row, the row tag).
 *  @param[out] abs  the file's absolute path (to delete it if its commit loses).
 *  @return 0; MCDC_EIO; MCDC_ENOMEM. On failure no file is left behind. */
int mcdc_control__write_row_file(mcdc_delta_file *add, char *abs, size_t abs_cap,
                                 const char *table_path, const mcdc_control_row *r,
                                 int64_t now_ms);

#endif
