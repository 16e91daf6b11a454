/*
 * pipeline/datafile.h: one new Parquet data file of a Delta table, written row by row
 * and handed back as the add action that will name it (internal to the pipeline).
 *
 * The file is written under a hidden temp name in the table directory, so a crash
 * leaves only debris that vacuum removes; finish() flushes, fsyncs and publishes it under
 * a unique part-<uuid>.parquet name before any commit names it (invariant 6). Rows are
 * never held whole: the Parquet writer flushes row groups as they fill, so memory is
 * bounded by one row group whatever the batch size.
 */
#ifndef MCDC_PIPELINE_DATAFILE_H
#define MCDC_PIPELINE_DATAFILE_H

#include <stdint.h>

#include "mcdc/delta.h"
#include "mcdc/value.h"

/* The Delta layer's one writer of data files (mcdc_delta_datafile) with bronze's options. */
typedef mcdc_delta_datafile mcdc_datafile;

/** Start a data file in the table directory @p table_path for rows of @p schema
 *  (copied). @return 0; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_datafile__open(mcdc_datafile **out, const char *table_path, const mcdc_schema *schema);

/** Append one row (values in schema order; strings are copied before return).
 *  @return 0; MCDC_EINVAL for a NULL in a non-nullable column; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_datafile__add(mcdc_datafile *f, const mcdc_value *row);
/** Append @p n_rows rows laid out one after the other (mcdc_datafile__add of each).
 *  @return as mcdc_datafile__add. */
int mcdc_datafile__add_rows(mcdc_datafile *f, const mcdc_value *rows, size_t n_rows);

/** Rows added so far. */
int64_t mcdc_datafile__rows(const mcdc_datafile *f);

/** Finish the file: footer, fsync, publish under its final name, fsync the directory.
 *  @param[out] out  its add action (relative path, size, modification time, stats JSON
 *                   with numRecords, minValues, maxValues, nullCount); clear with
 *                   mcdc_delta_file_clear(). The datafile is freed, success or not. */
int mcdc_datafile__finish(mcdc_datafile *f, mcdc_delta_file *out);

/** Abandon the file (removes the temp file) and free; accepts NULL. */
void mcdc_datafile__discard(mcdc_datafile *f);

/** Remove a published data file that no commit names (its commit was found already
 *  done): @p rel_path relative to @p table_path. Errors are ignored (vacuum removes it). */
void mcdc_datafile__remove(const char *table_path, const char *rel_path);

#endif
