/*
 * mcdc/value.h: the value model shared by every layer: column types (Delta's primitive
 * types), flat schemas, and one cell value.
 *
 * A row travels as an array of mcdc_value in schema order, together with the schema,
 * from the source through the Parquet writer into Delta tables and back out of the
 * reader. Values are plain data: strings and binaries are borrowed (ptr, len) and live
 * as long as the producer says (for a source row: until the row callback returns).
 *
 * Representations (exact, never through a double where the type is exact):
 *   BOOLEAN        v.b
 *   BYTE, SHORT, INT, LONG, DATE (days since 1970-01-01)   v.i (int64)
 *   FLOAT          v.f      DOUBLE  v.d
 *   DECIMAL(p,s)   v.dec    unscaled two's-complement 128-bit integer; value = dec / 10^s
 *   STRING         v.s      UTF-8 bytes, not NUL-terminated
 *   BINARY         v.s      raw bytes
 *   TIMESTAMP      v.i      UTC microseconds since the epoch
 *   TIMESTAMP_NTZ  v.i      wall-clock microseconds since 1970-01-01T00:00:00 (no zone)
 */
#ifndef MCDC_VALUE_H
#define MCDC_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

__extension__ typedef __int128 mcdc_int128;

typedef enum {
    MCDC_TYPE_BOOLEAN = 1,
    MCDC_TYPE_BYTE,
    MCDC_TYPE_SHORT,
    MCDC_TYPE_INT,
    MCDC_TYPE_LONG,
    MCDC_TYPE_FLOAT,
    MCDC_TYPE_DOUBLE,
    MCDC_TYPE_DECIMAL,
    MCDC_TYPE_STRING,
    MCDC_TYPE_BINARY,
    MCDC_TYPE_DATE,
    MCDC_TYPE_TIMESTAMP,
    MCDC_TYPE_TIMESTAMP_NTZ
} mcdc_type_id;

/** A column of a flat schema. */
typedef struct mcdc_column {
    char        *name;      /* owned by the schema */
    mcdc_type_id type;
    int          precision; /* DECIMAL only: 1..38 */
    int          scale;     /* DECIMAL only: 0..precision */
    bool         nullable;
} mcdc_column;

/** A flat schema: columns in order. Create with mcdc_schema_new, free with mcdc_schema_free. */
typedef struct mcdc_schema {
    mcdc_column *cols;   /* n_cols entries, owned */
    size_t       n_cols;
} mcdc_schema;

/** One cell. */
typedef struct mcdc_value {
    bool is_null;
    union {
        bool        b;
        int64_t     i;
        float       f;
        double      d;
        mcdc_int128 dec;
        struct {
            const char *ptr; /* borrowed; not NUL-terminated */
            size_t      len;
        } s;
    } v;
} mcdc_value;

/** A new empty schema (never NULL unless out of memory). */
mcdc_schema *mcdc_schema_new(void);
/** Append a column (the name is copied). @return 0; MCDC_EINVAL for a bad decimal
 *  precision/scale or a duplicate name (case-insensitive); MCDC_ENOMEM. */
int mcdc_schema_add(mcdc_schema *s, const char *name, mcdc_type_id type, int precision, int scale,
                    bool nullable);
/** A deep copy, or NULL when out of memory. */
mcdc_schema *mcdc_schema_copy(const mcdc_schema *s);
/** Index of the column named @p name (case-insensitive), or -1. */
int mcdc_schema_find(const mcdc_schema *s, const char *name);
/** Free a schema; accepts NULL. */
void mcdc_schema_free(mcdc_schema *s);

/** Delta's name for a type: "boolean", "byte", ..., "decimal(12,2)", "timestamp_ntz".
 *  Writes into @p out (at least 24 bytes) and returns it. */
char *mcdc_type_name(char *out, size_t cap, const mcdc_column *col);
/** Parse Delta's type name (as in a schemaString) into @p col's type, precision, scale.
 *  @return 0; MCDC_EUNSUPPORTED for a type this model does not hold. */
int mcdc_type_parse(mcdc_column *col, const char *name);

/** Format a decimal's unscaled value with exactly @p scale fraction digits ("-12.30").
 *  @p out needs 42 bytes. Returns out. */
char *mcdc_decimal_format(char out[48], mcdc_int128 unscaled, int scale);
/** Parse decimal text ("12.3", "-0.05", "1e3" refused) into an unscaled value at
 *  @p scale. @return 0; MCDC_EINVAL for bad text, too many fraction digits for the
 *  scale (never rounds silently), more than @p precision digits, or a precision outside
 *  1..38 or scale outside 0..precision. */
int mcdc_decimal_parse(mcdc_int128 *out, const char *s, size_t len, int precision, int scale);

/** Append one value in the jsonl encoding of architecture §7 (null, numbers, decimals as
 *  strings with exactly scale digits, binary as "0x…" uppercase hex, date "YYYY-MM-DD",
 *  timestamp_ntz "YYYY-MM-DDTHH:MM:SS.ffffff", timestamp with a trailing Z, NaN and
 *  infinities as strings). */
int mcdc_value_to_json(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v);
/** Append one value as a CSV field (RFC 4180; NULL empty; binary 0x…). */
int mcdc_value_to_csv(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v);
/** Append one value as plain text (as jsonl but strings unquoted, NULL as "NULL"). */
int mcdc_value_to_text(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v);
/** Append a JSON string literal (quotes and escapes) of @p len bytes of UTF-8. */
int mcdc_json_quote(mcdc_buf *out, const char *s, size_t len);

#ifdef __cplusplus
}
#endif
#endif
