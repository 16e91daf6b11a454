/*
 * silver/datafile.h: one new silver data file and its add action (datafile.c).
 * Internal to the silver layer.
 */
#ifndef MCDC_SILVER_DATAFILE_H
#define MCDC_SILVER_DATAFILE_H

#include "mcdc/delta.h"
#include "mcdc/parquet.h"
#include "mcdc/value.h"

/* The Delta layer's one writer of data files (mcdc_delta_datafile) with silver's options. */
typedef mcdc_delta_datafile mcdc_silver_datafile;

/** Start a new data file of the table at @p table_path with the columns of @p schema
 *  (copied). @return 0; Parquet writer codes. */
int mcdc_silver_datafile_open(mcdc_silver_datafile **out, const char *table_path,
                              const mcdc_schema *schema);
/** Write one row in @p schema's order. @return 0; Parquet writer codes. */
int mcdc_silver_datafile_write(mcdc_silver_datafile *f, const mcdc_value *row);
/** Close the file (fsynced, linked in) and fill @p out with its add action (path, size,
 *  time, stats; dataChange true). @return 0; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_silver_datafile_close(mcdc_silver_datafile *f, mcdc_delta_file *out);
/** Free; a file not closed is removed. Accepts NULL. */
void mcdc_silver_datafile_free(mcdc_silver_datafile *f);

#endif
