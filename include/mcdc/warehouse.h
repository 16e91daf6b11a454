/*
 * mcdc/warehouse.h: where table names live (architecture §4).
 *
 * The warehouse is a directory: --warehouse DIR, else $MSSQL_CDC_WAREHOUSE, else ./lake.
 * A table NAME is either a dotted name, `a.b` -> `<warehouse>/a/b` (any number of
 * parts), or, when it contains '/', a path used exactly as given. Dotted names may not
 * leave the warehouse: empty parts (which is what ".." and a leading or trailing dot
 * give), backslashes, control characters and names longer than the path limit are
 * refused. Paths are only checked for control characters and emptiness. A table or
 * warehouse may be an S3 location, "s3://bucket/prefix": resolving a name there checks the
 * credentials and the store (mcdc_storage_check) before anything is written. Any other URI
 * scheme ("abfss://", "file://") is refused (MCDC_EUNSUPPORTED, exit 2), never taken as a
 * local directory named "abfss:".
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
 *          on how to write a table name (also a bad s3:// bucket, missing S3 credentials,
 *          or a store that ignores If-None-Match); MCDC_EUNSUPPORTED for a URI name of
 *          another scheme, or such a warehouse when @p name is dotted (the message names
 *          it, password masked); MCDC_EIO when an S3 store cannot be reached. */
int mcdc_warehouse_resolve(char out[MCDC_PATH_MAX], const char *warehouse, const char *name);

#ifdef __cplusplus
}
#endif
#endif
