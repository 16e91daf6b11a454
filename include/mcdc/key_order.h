/*
 * mcdc/key_order.h: order-preserving encodings of key values in the orders a source sorts
 * them by when the type alone does not say it: text in the simulator's collation (SQL
 * Server's default, case-insensitive: letters folded to upper case for Latin-1, Latin
 * Extended-A, Greek and Cyrillic, trailing spaces ignored, then code point order) and
 * uniqueidentifier in SQL Server's order (bytes 10-15, 8-9, 6-7, 4-5, 0-3 of its text).
 * memcmp order of two encodings is the source's order of the values. The simulator keys
 * its tables with these (so they are its order by definition), and silver compares chunk
 * bounds with them. Pure functions; thread-safe.
 */
#ifndef MCDC_KEY_ORDER_H
#define MCDC_KEY_ORDER_H

#include <stddef.h>

#include "mcdc/buf.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a source orders a key column: by its type's value order, text by the simulator's
 *  case-insensitive collation, uniqueidentifier by SQL Server's byte groups, bytes as
 *  bytes. */
typedef enum {
    MCDC_KEY_ORDER_VALUE = 0,
    MCDC_KEY_ORDER_TEXT_CI,
    MCDC_KEY_ORDER_GUID,
    MCDC_KEY_ORDER_BYTES
} mcdc_key_order;

/** The name of an order ("value", "text_ci", "guid", "bytes"). */
const char *mcdc_key_order_name(mcdc_key_order o);
/** The order named @p s, or -1 when it is none of them. */
int mcdc_key_order_parse(const char *s);

/** Append the encoding of UTF-8 text @p s (@p n bytes; a malformed byte counts as its own
 *  value) in the case-insensitive collation: per code point after folding, 3 big-endian
 *  bytes (a NUL as 00 00 00 FF), then 00 00 00 00. @return 0; MCDC_ENOMEM. */
int mcdc_key_order_text_ci(mcdc_buf *out, const char *s, size_t n);

/** Append the encoding of uniqueidentifier text @p s (36 characters with dashes, hex of
 *  either case) in SQL Server's order: its 16 bytes reordered 10-15, 8-9, 6-7, 4-5, 0-3.
 *  Text of another length is encoded as mcdc_key_order_text_ci does.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_key_order_guid(mcdc_buf *out, const char *s, size_t n);

#ifdef __cplusplus
}
#endif
#endif
