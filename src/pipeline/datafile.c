/*
 * pipeline/datafile.c: one new Parquet data file of a bronze or facts table and its add
 * action (interface in pipeline/datafile.h), a thin user of the Delta layer's one writer of
 * data files (mcdc_delta_datafile: unique name, fsync and link, stats, column mapping).
 *
 * What is bronze's own: snappy without dictionary pages, row groups of 16 MiB, and the
 * table directory created first (a table's first file may come before its log).
 */
#include "pipeline/datafile.h"

int mcdc_datafile__open(mcdc_datafile **out, const char *table_path, const mcdc_schema *schema)
{
    /* No dictionary pages: bronze's columns are mostly distinct values (LSNs, seqvals, keys),
     * for which building a dictionary that then falls back to PLAIN cost 2.5 times the
     * encoding time (bench/stream); snappy still compresses repeated values. */
    mcdc_delta_datafile_options o = MCDC_DELTA_DATAFILE_OPTIONS_INIT;
    o.parquet.dictionary = false;
    /* Row groups of 16 MiB, not 128: the row pipe's writer thread writes a large batch's
     * row groups while the batch is read, so the commit after the read writes one, and a
     * stream holds 16 MiB of encoded pages, not a whole batch's (ADR 0053). */
    o.parquet.row_group_bytes = (size_t)16 << 20;
    o.column_mapping = true;
    o.make_dirs = true;
    return mcdc_delta_datafile_open(out, table_path, schema, &o);
}

int mcdc_datafile__add(mcdc_datafile *f, const mcdc_value *row)
{
    return mcdc_delta_datafile_write(f, row);
}

int mcdc_datafile__add_rows(mcdc_datafile *f, const mcdc_value *rows, size_t n_rows)
{
    return mcdc_delta_datafile_write_rows(f, rows, n_rows);
}

int64_t mcdc_datafile__rows(const mcdc_datafile *f)
{
    return mcdc_delta_datafile_rows(f);
}

int mcdc_datafile__finish(mcdc_datafile *f, mcdc_delta_file *out)
{
    int rc = mcdc_delta_datafile_finish(f, out);
    mcdc_delta_datafile_free(f);
    return rc;
}

void mcdc_datafile__discard(mcdc_datafile *f)
{
    mcdc_delta_datafile_free(f);
}

void mcdc_datafile__remove(const char *table_path, const char *rel_path)
{
    mcdc_delta_datafile_remove(table_path, rel_path);
}
