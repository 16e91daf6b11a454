/*
 * mcdc/parquet.h: the Parquet codec.
 */
#ifndef MCDC_PARQUET_H
#define MCDC_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "mcdc/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ======================================================================================
 * Reader
 *
 * Reads any Parquet file: every encoding (PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY, RLE,
 * BIT_PACKED, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
 * BYTE_STREAM_SPLIT), data pages v1 and v2, every codec of codec.h, flat and nested
 * schemas. Row groups are read one at a time and, within one, each projected column
 * chunk is read whole and decoded a page at a time: memory stays about the size of the
 * projected column chunks of one row group plus one decoded page per column.
 *
 * Two ways to get rows:
 * - mcdc_parquet_reader_next: one mcdc_value per projected top-level column, typed per
 *   mcdc_parquet_reader_schema. A nested column (struct, list, map, repeated field) comes
 *   as MCDC_TYPE_STRING holding its JSON text (see below); the caller can tell with
 *   mcdc_parquet_reader_is_nested.
 * - mcdc_parquet_reader_next_json: one jansson object per row, keys the projected
 *   top-level columns in schema order. Structs are objects, lists and repeated fields
 *   arrays, maps arrays of {"key": k, "value": v}. Scalars: booleans, integers (byte,
 *   short, int, long, unsigned up to 32 bits), reals for float and double (NaN and the
 *   infinities as the strings "NaN", "Infinity", "-Infinity"), strings for everything else
 *   in the jsonl spellings of architecture §7: decimals with exactly scale digits ("12.30"),
 *   binary "0x…" uppercase hex, date "YYYY-MM-DD", timestamp_ntz "YYYY-MM-DDTHH:MM:SS.ffffff",
 *   timestamp the same with "Z".
 *
 * Types: INT32/INT64 by logical or converted type (INT_8 byte, INT_16 short, INT_32 int,
 * INT_64 long, UINT_8 short, UINT_16 int, UINT_32 long, UINT_64 decimal(20,0), DATE date,
 * DECIMAL decimal), TIMESTAMP millis/micros: timestamp when adjusted to UTC (and for the
 * legacy converted types), else timestamp_ntz; TIMESTAMP nanos: a string
 * "YYYY-MM-DDTHH:MM:SS.fffffffff" (with "Z" when adjusted to UTC), since the value model
 * holds microseconds; INT96: timestamp (nanoseconds truncated to microseconds, as Spark
 * does); TIME: a string "HH:MM:SS.fff", ".ffffff" or ".fffffffff" by unit; FLOAT16: float;
 * UUID: string 8-4-4-4-12; BYTE_ARRAY/FIXED_LEN_BYTE_ARRAY decimals: decimal (precision up
 * to 38); STRING/UTF8/ENUM/JSON: string; other byte arrays (BSON, INTERVAL, none): binary.
 *
 * Caveats:
 * - A reader is not thread-safe; use one per thread.
 * - Values handed out are borrowed and valid until the next call on the reader.
 * - Predicates skip whole row groups by their statistics; rows of a row group that may
 *   match are all returned (filter them yourself when you need exact rows).
 * - Encrypted files are refused (MCDC_EUNSUPPORTED).
 * ====================================================================================== */

typedef struct mcdc_parquet_reader mcdc_parquet_reader;

/** Limits on what a reader will allocate for hostile input. */
typedef struct mcdc_parquet_read_options {
    int    version;          /* 1 */
    size_t max_page_bytes;   /* decompressed page body; default 1 GiB */
    size_t max_page_values;  /* level entries in one page; default 2^24 */
    size_t max_footer_bytes; /* default 256 MiB */
} mcdc_parquet_read_options;
#define MCDC_PARQUET_READ_OPTIONS_INIT { 1, (size_t)1 << 30, (size_t)1 << 24, (size_t)1 << 28 }

/** Comparison of a predicate: column = value, column >= value, column <= value. */
typedef enum { MCDC_PARQUET_EQ = 1, MCDC_PARQUET_GE, MCDC_PARQUET_LE } mcdc_parquet_op;

/** Open the Parquet file at @p path and read its footer.
 * @param[out] out   the reader, or NULL on failure; free with mcdc_parquet_reader_free().
 * @param opt        limits, or NULL for the defaults.
 * @return 0; MCDC_ENOTFOUND when the file is absent; MCDC_EIO; MCDC_ECORRUPT for a file
 *         that is not Parquet or whose footer is damaged ("<file>: footer at byte N: why");
 *         MCDC_EUNSUPPORTED for an encrypted file or a schema this reader cannot map. */
int mcdc_parquet_reader_open(mcdc_parquet_reader **out, const char *path,
                             const mcdc_parquet_read_options *opt);

/** As mcdc_parquet_reader_open, reading from an open descriptor (borrowed: not closed by
 *  the reader) and naming it @p name in messages. */
int mcdc_parquet_reader_open_fd(mcdc_parquet_reader **out, int fd, const char *name,
                                const mcdc_parquet_read_options *opt);

/** As mcdc_parquet_reader_open, reading a whole file held in memory (borrowed: it must
 *  outlive the reader). */
int mcdc_parquet_reader_open_mem(mcdc_parquet_reader **out, const void *data, size_t len,
                                 const char *name, const mcdc_parquet_read_options *opt);

/** Close the reader and free everything; accepts NULL. */
void mcdc_parquet_reader_free(mcdc_parquet_reader *r);

/** Rows in the file, from the footer. */
int64_t mcdc_parquet_reader_num_rows(const mcdc_parquet_reader *r);

/** Row groups in the file. */
size_t mcdc_parquet_reader_num_row_groups(const mcdc_parquet_reader *r);

/** Row groups skipped by predicates so far. */
int64_t mcdc_parquet_reader_row_groups_skipped(const mcdc_parquet_reader *r);

/** Read only the top-level columns named in @p names (case-sensitive first, then
 *  case-insensitive), in that order. Call before the first row.
 *  @return 0; MCDC_ENOTFOUND naming an unknown column; MCDC_EINVAL after rows were read. */
int mcdc_parquet_reader_select(mcdc_parquet_reader *r, const char *const *names, size_t n);

/** Add a predicate "column op value" on a flat top-level column; @p v is typed as the
 *  column is in mcdc_parquet_reader_schema (copied). Row groups whose statistics prove
 *  that no row matches are skipped. Call before the first row.
 *  @return 0; MCDC_ENOTFOUND; MCDC_EINVAL for a nested column or after rows were read. */
int mcdc_parquet_reader_filter(mcdc_parquet_reader *r, const char *column, mcdc_parquet_op op,
                               const mcdc_value *v);

/** The projected top-level columns as a flat schema (borrowed; valid until the reader is
 *  freed or mcdc_parquet_reader_select is called). */
const mcdc_schema *mcdc_parquet_reader_schema(const mcdc_parquet_reader *r);

/** Whether projected column @p i is nested (its cells are JSON text). */
bool mcdc_parquet_reader_is_nested(const mcdc_parquet_reader *r, size_t i);

/** The next row as cells, one per projected column.
 * @param[out] row  borrowed, valid until the next call on the reader.
 * @return 1 with a row; 0 at the end; MCDC_ECORRUPT ("<file>: column c, page at byte N:
 *         why"), MCDC_EIO, MCDC_EUNSUPPORTED (a codec or encoding this build lacks),
 *         MCDC_ENOMEM. After an error every later call returns it. */
int mcdc_parquet_reader_next(mcdc_parquet_reader *r, const mcdc_value **row);

/** The next row as a JSON object (see the overview).
 * @param[out] row  a new reference owned by the caller (json_decref), NULL at the end.
 * @return 1, 0 or an error as mcdc_parquet_reader_next. */
struct json_t;
int mcdc_parquet_reader_next_json(mcdc_parquet_reader *r, struct json_t **row);

/** The file's metadata as one JSON document: schema (name, repetition, physical, logical
 *  and converted types, levels), key-value metadata, created_by, and per row group its
 *  rows and sizes and per column chunk its path, codec, encodings, offsets, sizes, value
 *  count and statistics (min and max decoded to the column's type where it has an order).
 * @param[out] out  a new reference owned by the caller. */
int mcdc_parquet_reader_meta_json(const mcdc_parquet_reader *r, struct json_t **out);

#ifdef __cplusplus
}
#endif
#endif
