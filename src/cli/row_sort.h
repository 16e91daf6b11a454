/*
 * cli/row_sort.h: rows held in memory and sorted by some of their columns, for `table
 * cat`'s natural order (bronze by change order, silver by key).
 *
 * Each added row is copied whole (its values and their bytes, one allocation per row), so
 * the rows of a scan outlive the scan's next call. Sorting is stable (ties keep the order
 * rows were added in) and compares typed values: NULL first, numbers, dates and times by
 * value, decimals by their unscaled value (one scale per column), strings and binaries by
 * their bytes (so LSN text and LSN bytes sort as LSNs). Memory: the whole table's values.
 */
#ifndef MCDC_CLI_ROW_SORT_H
#define MCDC_CLI_ROW_SORT_H

#include <stddef.h>

#include "mcdc/value.h"

typedef struct mcdc_cli_row_sort {
    const mcdc_schema *schema;  /* borrowed: the columns of every row */
    const size_t      *by;      /* borrowed: column indexes to sort by, most significant first */
    size_t             n_by;
    mcdc_value       **rows;    /* owned: n_rows copies, each one allocation */
    size_t             n_rows, cap;
} mcdc_cli_row_sort;

/** Start an empty set of rows of @p schema sorted by the @p n_by columns @p by. */
void mcdc_cli_row_sort_init(mcdc_cli_row_sort *rs, const mcdc_schema *schema, const size_t *by, size_t n_by);
/** Copy @p row (schema->n_cols values) in. @return 0; MCDC_ENOMEM. */
int mcdc_cli_row_sort_add(mcdc_cli_row_sort *rs, const mcdc_value *row);
/** Sort the rows (stable). O(n log n) comparisons. */
void mcdc_cli_row_sort_sort(mcdc_cli_row_sort *rs);
/** Free the rows; accepts an initialized, empty set. */
void mcdc_cli_row_sort_free(mcdc_cli_row_sort *rs);

#endif
