/*
 * mcdc/keyhash.h: the canonical texts and hashes that reconcile compares, computed the
 * same way by every source and by the lake side (docs/decisions/0015-reconcile-buckets-by-key-hash.md).
 *
 * Key text. For key columns c1..cn, the text is the concatenation, column by column, of
 * "-;" for NULL, else "<n>:<t>;" where t is the column's text and n the number of UTF-16
 * code units of t (so no two keys share a text). The column's text t:
 *   BYTE, SHORT, INT, LONG   decimal digits, "-" for negatives   CONVERT(nvarchar(20), c)
 *   BOOLEAN                  "0" or "1"                          CONVERT(nvarchar(1), c)
 *   DECIMAL(p,s)             exactly s fraction digits            CONVERT(nvarchar(41), CAST(c AS decimal(p,s)))
 *   STRING                   the value itself                    CONVERT(nvarchar(max), c)
 *   BINARY                   "0x" + uppercase hex                CONVERT(nvarchar(max), c, 1)
 *   DATE                     "YYYY-MM-DD"                        CONVERT(nvarchar(10), c, 23)
 *   TIMESTAMP_NTZ            microseconds since 1970-01-01       DATEDIFF_BIG(microsecond, '19700101', c)
 *   TIMESTAMP                UTC microseconds since the epoch    DATEDIFF_BIG(microsecond, '19700101', c)
 *                            (DATEDIFF of a datetimeoffset and a datetime2 counts in UTC)
 * FLOAT and DOUBLE keys are refused (no text both sides print alike).
 *
 * Key hash. The first 7 bytes of SHA-256 over the key text in UTF-16LE, read big-endian:
 * a value in [0, 2^56), in T-SQL (source/mssql/buckets.c)
 *   CONVERT(bigint, SUBSTRING(HASHBYTES('SHA2_256', <text as nvarchar(max)>), 1, 7))
 * so a bucket's sum of key hashes fits DECIMAL(38,0) for any row count below 2^70.
 *
 * Key ordinal. A single integer key is its value, a date key its days since 1970-01-01.
 *
 * Row hash. SHA-256 over the captured values: per column "<n>:<json>;" with json the
 * value's jsonl text (architecture §7, "null" for NULL) and n its length in bytes. Both
 * sides of a tier-2 comparison compute it here from mcdc_value cells.
 *
 * Pure functions, no I/O; thread-safe.
 */
#ifndef MCDC_KEYHASH_H
#define MCDC_KEYHASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/value.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MCDC_KEYHASH_ROW_LEN 32

/** Whether a key column of this type has an ordinal (a single integer or date key). */
bool mcdc_keyhash_has_ordinal(const mcdc_column *col);

/** Whether a key column of this type has a key text (every type but FLOAT and DOUBLE). */
bool mcdc_keyhash_type_ok(const mcdc_column *col);

/** The ordinal of one non-NULL value of an integer or date column.
 *  @return 0; MCDC_EINVAL for another type or a NULL value. */
int mcdc_keyhash_ordinal(int64_t *out, const mcdc_column *col, const mcdc_value *v);

/** Append the key text (UTF-8) of @p n key cells, @p cols[i] describing @p vals[i].
 *  @return 0; MCDC_EUNSUPPORTED for a FLOAT or DOUBLE column; MCDC_ENOMEM. */
int mcdc_keyhash_text(mcdc_buf *out, const mcdc_column *const *cols, const mcdc_value *const *vals,
                      size_t n);

/** The key hash of a key text made by mcdc_keyhash_text (UTF-8, @p len bytes).
 *  @return 0; MCDC_ECORRUPT for text that is not UTF-8; MCDC_ENOMEM. */
int mcdc_keyhash_of_text(int64_t *out, const char *text, size_t len);

/** The row hash of @p n cells. @p scratch is cleared and reused (give one per thread).
 *  @return 0; MCDC_ENOMEM. */
int mcdc_keyhash_row(uint8_t out[MCDC_KEYHASH_ROW_LEN], mcdc_buf *scratch,
                     const mcdc_column *const *cols, const mcdc_value *const *vals, size_t n);

/** floor(a / b) for b > 0 (C's division truncates toward zero). */
int64_t mcdc_keyhash_floor_div(int64_t a, int64_t b);

#ifdef __cplusplus
}
#endif
#endif
