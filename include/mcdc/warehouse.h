/*
 * mcdc/warehouse.h: where table names live (architecture §4).
 *
 * The warehouse is a directory: --warehouse DIR, else $MSSQL_CDC_WAREHOUSE, else ./lake.
 * A table NAME is either a dotted name, `a.b` -> `<warehouse>/a/b` (any number of
 * parts), or, when it contains '/', a path used exactly as given. Dotted names may not
 * leave the warehouse: empty parts (which is what ".." and a leading or trailing dot
 * give), backslashes, control characters and names longer than the path limit are
 * refused. Paths are only checked for control characters and emptiness. A table or
 * warehouse location with a URI scheme ("s3://bucket/x") is refused until object storage
 * exists (MCDC_EUNSUPPORTED, exit 2), never taken as a local directory named "s3:".
 *
 * Caveats:
 * - Facts and the control table key tables by the string as given: "bronze.orders" and
 *   its path are different keys even though they resolve to the same directory.
 * - Pure functions apart from reading the environment variable: thread-safe.
 */
#ifndef MCDC_WAREHOUSE_H
#define MCDC_WAREHOUSE_H

#include <stdbool.h>
#include <stddef.h>

#include "mcdc/error.h"
#include "mcdc/fs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The warehouse directory: @p flag_value when not NULL, else $MSSQL_CDC_WAREHOUSE when
 *  set and not empty, else "./lake". Borrowed (static or from the environment). */
const char *mcdc_warehouse_dir(const char *flag_value);

/** True when @p name is a path (contains '/') rather than a dotted table name. */
bool mcdc_warehouse_is_path(const char *name);

/** True when @p location starts with a URI scheme and "://" (s3://, abfss://, file://). */
bool mcdc_warehouse_is_uri(const char *location);

/** Resolve table @p name against @p warehouse into @p out (MCDC_PATH_MAX bytes).
 *  @return 0; MCDC_EINVAL with a message naming the name and what is wrong, and a hint
 *          on how to write a table name; MCDC_EUNSUPPORTED for a URI name, or a URI
 *          warehouse when @p name is dotted (the message names it, password masked). */
int mcdc_warehouse_resolve(char out[MCDC_PATH_MAX], const char *warehouse, const char *name);

#ifdef __cplusplus
}
#endif
#endif
