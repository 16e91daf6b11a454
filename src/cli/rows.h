/*
 * cli/rows.h: printing rows of a flat schema on standard output, for `parquet cat` and
 * `table cat` (one printer, so both print the same rows the same way).
 *
 * Formats:
 *   text   a header line of column names, then one line per row, tab-separated, each
 *          cell as mcdc_value_to_text (NULL as "NULL")
 *   jsonl  one object per row as in architecture §7 (mcdc_value_to_json); a nested cell
 *          (its JSON text, see mcdc_parquet_reader_next) is copied as it is
 *   csv    RFC 4180 with a header of column names; nested cells as their JSON text
 *
 * Output is buffered and flushed every 64 KiB; a cell larger than that goes straight out
 * after what is buffered, so the memory of a row is its values' text and no second copy.
 * The buffer has no cap of its own: it holds one row's text, and the values of that row
 * are already bounded by the reader that produced them.
 */
#ifndef MCDC_CLI_ROWS_H
#define MCDC_CLI_ROWS_H

#include <stdbool.h>
#include <stdio.h>

#include "mcdc/buf.h"
#include "mcdc/value.h"

typedef enum { MCDC_CLI_ROWS_TEXT, MCDC_CLI_ROWS_JSONL, MCDC_CLI_ROWS_CSV } mcdc_cli_rows_format;

/** Whether column @p col of the rows from @p src is nested (its cells are JSON text). */
typedef bool (*mcdc_cli_rows_nested_fn)(const void *src, size_t col);

typedef struct mcdc_cli_rows {
    FILE                   *f;
    const mcdc_schema      *schema;    /* borrowed */
    mcdc_cli_rows_format    format;
    mcdc_cli_rows_nested_fn is_nested; /* NULL: no column is nested */
    const void             *src;       /* argument of is_nested */
    mcdc_buf                out;
} mcdc_cli_rows;

/** The format named @p name ("text", "jsonl", "csv"; NULL means text), or -1. */
int mcdc_cli_rows_format_named(const char *name);

/** Start printing rows of @p s to @p f in @p format: the header line for text and csv.
 *  @return 0; MCDC_EIO when writing fails; MCDC_ENOMEM. Call mcdc_cli_rows_end in every
 *  case. */
int mcdc_cli_rows_begin(mcdc_cli_rows *p, FILE *f, mcdc_cli_rows_format format,
                        const mcdc_schema *s, mcdc_cli_rows_nested_fn is_nested, const void *src);

/** Print one row (one cell per column of the schema).
 *  @return 0; MCDC_EIO when writing fails; MCDC_ENOMEM. */
int mcdc_cli_rows_put(mcdc_cli_rows *p, const mcdc_value *row);

/** Write what is buffered, flush @p f and free the buffer.
 *  @return 0; MCDC_EIO when writing or flushing fails. */
int mcdc_cli_rows_end(mcdc_cli_rows *p);

#endif
