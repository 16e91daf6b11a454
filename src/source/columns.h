/*
 * source/columns.h: the column selection of --columns inside the source layer.
 *
 * mcdc_source_select_columns (mcdc/source.h) wraps a source and sets its base `select`, so a
 * source can leave out, before mapping their types, the captured columns the selection does
 * not name (SQL Server: an unmapped sql_variant or geography column is then never fetched
 * nor refused). These are the helpers such a source calls; the wrapper itself lives in
 * columns.c.
 */
#ifndef MCDC_SOURCE_COLUMNS_H
#define MCDC_SOURCE_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>

#include "mcdc/source.h"

/** True when @p sel names column @p name (ignoring case); true for every name when @p sel is
 *  NULL (no selection). */
bool mcdc_source__select_has(const mcdc_column_select *sel, const char *name);

/** Check that every column @p sel names is among @p names (the captured columns of @p ci
 *  that can be read). @return 0; MCDC_EINVAL naming the first unknown one, with a hint
 *  listing @p names. */
int mcdc_source__select_check(const mcdc_column_select *sel, const char *ci, const char *const *names, size_t n);

#endif
