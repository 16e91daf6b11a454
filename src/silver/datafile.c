/*
 * silver/datafile.c: one new silver data file and the add action that will name it
 * (interface in silver/datafile.h), a thin user of the Delta layer's one writer of data
 * files (mcdc_delta_datafile: unique name at the table root, fsync and link without
 * replacing, stats, column mapping). What is silver's own: zstd at level 1 with pages of
 * at most 20000 values. Silver's exact key range goes into tags (apply.c).
 */
#include "silver/datafile.h"

void mcdc_silver_datafile_free(mcdc_silver_datafile *f)
{
    mcdc_delta_datafile_free(f); /* removes the file when not closed */
}

int mcdc_silver_datafile_open(mcdc_silver_datafile **out, const char *table_path,
                              const mcdc_schema *schema)
{
    mcdc_delta_datafile_options o = MCDC_DELTA_DATAFILE_OPTIONS_INIT;
    o.parquet.codec = MCDC_PARQUET_ZSTD;
    o.parquet.page_max_values = 20000;
    o.parquet.codec_level = 1;
    o.column_mapping = true;
    return mcdc_delta_datafile_open(out, table_path, schema, &o);
}

int mcdc_silver_datafile_write(mcdc_silver_datafile *f, const mcdc_value *row)
{
    return mcdc_delta_datafile_write(f, row);
}

int mcdc_silver_datafile_close(mcdc_silver_datafile *f, mcdc_delta_file *out)
{
    return mcdc_delta_datafile_finish(f, out);
}
