/*
 * mcdc/parquet.h: the Parquet codec: a writer (flat rows of mcdc_value, or nested rows as
 * JSON) and a reader (any Parquet file, flat or nested).
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
 * Writer
 *
 * A writer streams rows into one file: values are encoded into pages as they arrive
 * (dictionary first, PLAIN once the dictionary outgrows its limit), pages are compressed
 * and kept until their row group is full, then the row group goes to disk. Memory stays
 * about one row group (compressed pages plus the open page of every column) however
 * many rows are written. The footer carries statistics per column chunk (min, max,
 * null_count: true bounds, never truncated, in the order the column's type defines),
 * created_by "mssql-cdc version X (build mcdc)" and optional key-value metadata.
 *
 * Type mapping (Delta type -> Parquet physical type, logical type, legacy converted type):
 *   boolean BOOLEAN | byte, short INT32 INTEGER(8|16, signed) INT_8|INT_16 | integer INT32 |
 *   long INT64 | float FLOAT | double DOUBLE | decimal(p,s) INT32 (p <= 9), INT64 (p <= 18),
 *   FIXED_LEN_BYTE_ARRAY of the fewest bytes (p > 18), DECIMAL(s,p) DECIMAL |
 *   string BYTE_ARRAY STRING UTF8 | binary BYTE_ARRAY | date INT32 DATE DATE |
 *   timestamp INT64 TIMESTAMP(UTC, MICROS) TIMESTAMP_MICROS |
 *   timestamp_ntz INT64 TIMESTAMP(local, MICROS), no converted type.
 * Nested rows add groups: structs, 3-level LISTs (list / element) and MAPs (key_value /
 * key / value), as Spark writes them.
 *
 * Caveats:
 * - One thread per writer. Different writers are independent.
 * - The file appears at its path only when mcdc_parquet_writer_close succeeds: rows are
 *   written to a hidden temporary file in the same directory (".<name>.<random>.tmp"),
 *   fsynced, linked to the path (never replacing a file there) and the directory is
 *   fsynced. mcdc_parquet_writer_free without a close removes the temporary file.
 * - A refused row (MCDC_EINVAL: a value that does not fit its column) is dropped whole and
 *   the writer stays usable. After an I/O or memory failure the writer is failed: every
 *   later call returns the same error. Close it (which fails again) or free it; either
 *   way the temporary file is removed.
 * - Strings and binaries in rows are copied before the call returns.
 * ====================================================================================== */

/** Compression codecs a writer offers (numbers as in parquet.thrift). */
typedef enum {
    MCDC_PARQUET_UNCOMPRESSED = 0,
    MCDC_PARQUET_SNAPPY       = 1,
    MCDC_PARQUET_GZIP         = 2,
    MCDC_PARQUET_ZSTD         = 6
} mcdc_parquet_codec;

/** Parse a codec name ("snappy", "zstd", "gzip", "uncompressed"/"none", any case).
 *  @return 0; MCDC_EINVAL for another name. */
int mcdc_parquet_codec_parse(mcdc_parquet_codec *out, const char *name);

/** One key-value pair of the footer's metadata. */
typedef struct mcdc_parquet_kv {
    const char *key;   /* borrowed for the duration of the open call; copied */
    const char *value; /* NUL-terminated; NULL for a key without a value */
} mcdc_parquet_kv;

#define MCDC_PARQUET_WRITER_OPTIONS_VERSION 1

/** Writer options. Start from MCDC_PARQUET_WRITER_OPTIONS_INIT. */
typedef struct mcdc_parquet_writer_options {
    unsigned            version;              /* MCDC_PARQUET_WRITER_OPTIONS_VERSION */
    mcdc_parquet_codec  codec;                /* default SNAPPY */
    int                 codec_level;          /* 0: the codec's default (zstd 3, gzip 6) */
    size_t              row_group_bytes;      /* encoded bytes per row group; default 128 MiB */
    size_t              page_bytes;           /* encoded bytes per data page; default 1 MiB */
    size_t              page_max_values;      /* level entries per page at most; default 128 Ki */
    bool                dictionary;           /* try dictionary encoding; default true */
    size_t              dictionary_max_bytes; /* PLAIN after the dictionary passes this; 1 MiB */
    bool                page_crc;             /* write a CRC-32 per page; default true */
    const char         *created_by;           /* NULL: "mssql-cdc version X (build mcdc)" */
    const mcdc_parquet_kv *kv;                /* n_kv footer key-value pairs, copied at open */
    size_t              n_kv;
    const int32_t      *field_ids;            /* flat rows: one Parquet field_id per column
                                               * (negative: none), read at open; NULL: none */
} mcdc_parquet_writer_options;

#define MCDC_PARQUET_WRITER_OPTIONS_INIT                                                    \
    { MCDC_PARQUET_WRITER_OPTIONS_VERSION, MCDC_PARQUET_SNAPPY, 0, (size_t)128 << 20,       \
      (size_t)1 << 20, (size_t)1 << 17, true, (size_t)1 << 20, true, NULL, NULL, 0, NULL }

/** Fill @p opts with the defaults (same as MCDC_PARQUET_WRITER_OPTIONS_INIT). */
void mcdc_parquet_writer_options_init(mcdc_parquet_writer_options *opts);

/** Statistics of one leaf column over the whole file. */
typedef struct mcdc_parquet_column_stats {
    char      *path;        /* dotted leaf path ("add.partitionValues.key_value.key"); owned */
    mcdc_column type;       /* the leaf's type (name NULL) */
    int64_t    null_count;  /* entries without a value, nulls of parents included */
    bool       has_min_max; /* false when every value was null (or NaN) */
    mcdc_value min, max;    /* string/binary bytes owned by the result */
} mcdc_parquet_column_stats;

/** What a closed writer produced. Dispose with mcdc_parquet_write_result_dispose. */
typedef struct mcdc_parquet_write_result {
    uint64_t                   file_size;    /* bytes of the file */
    int64_t                    num_rows;
    size_t                     n_row_groups;
    size_t                     n_cols;       /* leaf columns, in schema order */
    mcdc_parquet_column_stats *cols;         /* owned */
} mcdc_parquet_write_result;

/** Free what a result owns; accepts NULL; leaves it zeroed. */
void mcdc_parquet_write_result_dispose(mcdc_parquet_write_result *r);

typedef struct mcdc_parquet_writer mcdc_parquet_writer;

/** Start a file of flat rows at @p path with the columns of @p schema (copied).
 *  @param[out] out  the writer, or NULL on failure; free with mcdc_parquet_writer_free.
 *  @param[in]  opts NULL for the defaults.
 *  @return 0; MCDC_EINVAL for an empty schema or bad options; MCDC_EEXISTS when @p path
 *          exists already; MCDC_EIO when the temporary file cannot be created. */
int mcdc_parquet_writer_open(mcdc_parquet_writer **out, const char *path,
                             const mcdc_schema *schema, const mcdc_parquet_writer_options *opts);

/** Append one row: @p values holds one cell per schema column, in order.
 *  @return 0; MCDC_EINVAL for a NULL in a non-nullable column or a value out of its
 *          type's range (decimal over its precision, byte out of -128..127): nothing of
 *          the row is written and the writer stays usable; MCDC_EIO, MCDC_ENOMEM (the
 *          writer is then failed). */
int mcdc_parquet_writer_write_row(mcdc_parquet_writer *w, const mcdc_value *values);

/** Append @p n_rows rows stored one after another (n_rows * n_cols cells).
 *  @return as mcdc_parquet_writer_write_row; rows before a refused one are written. */
int mcdc_parquet_writer_write_rows(mcdc_parquet_writer *w, const mcdc_value *values,
                                   size_t n_rows);
/** Rows written so far (a refused row is not counted). */
int64_t mcdc_parquet_writer_rows(const mcdc_parquet_writer *w);

/** Write the last row group and the footer, fsync, link the file to its path, fsync the
 *  directory. Whatever the outcome, the writer is done: free it afterwards.
 *  @param[out] result  file size, row count and statistics per leaf column; may be NULL.
 *  @return 0; MCDC_EEXISTS when a file appeared at the path meanwhile; MCDC_EIO;
 *          the writer's earlier error if it had failed. */
int mcdc_parquet_writer_close(mcdc_parquet_writer *w, mcdc_parquet_write_result *result);

/** Free a writer; without a successful close the temporary file is removed. Accepts NULL. */
void mcdc_parquet_writer_free(mcdc_parquet_writer *w);

/* ----------------------------------------------------------------- nested rows */

/** A node of a nested schema: a leaf (one mcdc type), a struct, a list or a map. */
typedef struct mcdc_parquet_node mcdc_parquet_node;

/** A leaf named @p name of the type in @p type (its name is ignored; nullable, precision and
 *  scale are used). @return the node, or NULL when out of memory or the type is bad. */
mcdc_parquet_node *mcdc_parquet_node_leaf(const char *name, const mcdc_column *type);
/** An empty struct; add fields with mcdc_parquet_node_add. */
mcdc_parquet_node *mcdc_parquet_node_struct(const char *name, bool nullable);
/** A list (LIST: repeated group "list" of field "element"). Takes ownership of @p element
 *  (even on failure); the element's own name is replaced by "element". */
mcdc_parquet_node *mcdc_parquet_node_list(const char *name, bool nullable,
                                          mcdc_parquet_node *element);
/** A map (MAP: repeated group "key_value" of "key", "value"). Takes ownership of @p key
 *  (made non-nullable) and @p value; their names become "key" and "value". JSON rows give
 *  maps as objects (string keys only) or as arrays of {"key":..,"value":..}. */
mcdc_parquet_node *mcdc_parquet_node_map(const char *name, bool nullable, mcdc_parquet_node *key,
                                         mcdc_parquet_node *value);
/** Append @p child to struct @p parent, taking ownership of it (even on failure).
 *  @return 0; MCDC_EINVAL when parent is not a struct or the name repeats; MCDC_ENOMEM. */
int mcdc_parquet_node_add(mcdc_parquet_node *parent, mcdc_parquet_node *child);
/** Free a node and its children; accepts NULL. Nodes given to a writer stay the caller's. */
void mcdc_parquet_node_free(mcdc_parquet_node *n);

/** Start a file of nested rows; @p root is a struct whose fields are the top-level
 *  columns (its own name and nullability are ignored; the tree is copied).
 *  @return as mcdc_parquet_writer_open. */
int mcdc_parquet_writer_open_nested(mcdc_parquet_writer **out, const char *path,
                                    const mcdc_parquet_node *root,
                                    const mcdc_parquet_writer_options *opts);

/** Append one nested row given as a JSON object (a jansson json_t *, passed as void * so
 *  this header needs no jansson). Missing keys and JSON null are nulls; lists are arrays;
 *  leaves: booleans; integers for byte..long, date (days) and timestamps (microseconds);
 *  numbers for float/double; strings for string and binary (bytes as given), decimals
 *  ("12.30") and dates ("2024-01-31").
 *  @return 0; MCDC_EINVAL for a value that does not fit its node (the row is shredded
 *          whole before any column sees it, so it is dropped and the writer stays
 *          usable); MCDC_EIO; MCDC_ENOMEM (the writer is then failed). */
int mcdc_parquet_writer_write_json(mcdc_parquet_writer *w, const void *row);

/* ======================================================================================
 * Reader
 *
 * Reads any Parquet file: every encoding (PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY, RLE,
 * BIT_PACKED, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
 * BYTE_STREAM_SPLIT), data pages v1 and v2, every codec of codec.h, flat and nested
 * schemas. Row groups are read one at a time and, within one, each projected column a
 * page at a time: memory stays about one page (compressed and decoded) plus the
 * dictionary per projected column, whatever the size of the file or its column chunks
 * (a file opened from memory is read in place).
 *
 * Three ways to get rows:
 * - mcdc_parquet_reader_next: one mcdc_value per projected top-level column, typed per
 *   mcdc_parquet_reader_schema. A nested column (struct, list, map, repeated field) comes
 *   as MCDC_TYPE_STRING holding its JSON text (see below); the caller can tell with
 *   mcdc_parquet_reader_is_nested. mcdc_parquet_reader_next_batch gives the same rows
 *   several at a time (cheaper per row for flat columns).
 * - mcdc_parquet_reader_next_json: one jansson object per row, keys the projected
 *   top-level columns in schema order. Structs are objects, lists and repeated fields
 *   arrays, maps arrays of {"key": k, "value": v}. Scalars: booleans, integers (byte,
 *   short, int, long, unsigned up to 32 bits), reals for float and double (NaN and the
 *   infinities as the strings "NaN", "Infinity", "-Infinity"), strings for everything else
 *   in the jsonl spellings of architecture §7: decimals with exactly scale digits ("12.30"),
 *   binary "0x…" uppercase hex, date "YYYY-MM-DD", timestamp_ntz "YYYY-MM-DDTHH:MM:SS.ffffff",
 *   timestamp the same with "Z".
 * - mcdc_parquet_reader_next_leaves: the row as the entries of each leaf column under the
 *   projected columns (repetition and definition levels, typed values), for callers that
 *   decode nested columns themselves without building JSON.
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
    size_t max_page_bytes;   /* decompressed page body; default 2^31-1, the format's own
                                limit (page sizes are i32) */
    size_t max_page_values;  /* level entries in one page; default 2^24 */
    size_t max_footer_bytes; /* default 256 MiB */
} mcdc_parquet_read_options;
#define MCDC_PARQUET_READ_OPTIONS_INIT { 1, (size_t)INT32_MAX, (size_t)1 << 24, (size_t)1 << 28 }

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
 *  @return 0; MCDC_ENOTFOUND naming an unknown column; MCDC_EINVAL for a column named
 *          twice (also by two spellings) or after rows were read. */
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

/** The Parquet field_id of column @p i of mcdc_parquet_reader_schema, or -1 when the file
 *  gives it none (or @p i is out of range). Delta's column mapping 'id' mode finds columns
 *  by it. */
int64_t mcdc_parquet_reader_field_id(const mcdc_parquet_reader *r, size_t i);

/** Whether projected column @p i is nested (its cells are JSON text). */
bool mcdc_parquet_reader_is_nested(const mcdc_parquet_reader *r, size_t i);

/** The next row as cells, one per projected column.
 * @param[out] row  borrowed, valid until the next call on the reader.
 * @return 1 with a row; 0 at the end; MCDC_ECORRUPT ("<file>: column c, page at byte N:
 *         why"), MCDC_EIO, MCDC_EUNSUPPORTED (a codec or encoding this build lacks),
 *         MCDC_ENOMEM. After an error every later call returns it. */
int mcdc_parquet_reader_next(mcdc_parquet_reader *r, const mcdc_value **row);

/** Up to @p max next rows at once, as mcdc_parquet_reader_next would return them one by
 *  one: row k's cells are (*rows)[k * n .. k * n + n) for the n projected columns.
 *  A batch stops at the end of a row group and at the end of any projected column's
 *  current page, and before a row whose cell cannot be made (that row's error comes on
 *  the next call), so it may hold fewer rows than asked; when a projected column is
 *  nested or its cells are formatted text (nanosecond timestamps, times, UUIDs), every
 *  batch holds one row. May be mixed with
 *  mcdc_parquet_reader_next and _next_json: each row is returned once.
 * @param max       rows wanted, at least 1 (larger values are cut to 4096).
 * @param[out] rows borrowed, valid until the next call on the reader.
 * @param[out] n    rows in the batch (0 at the end).
 * @return 1 with at least one row; 0 at the end; errors as mcdc_parquet_reader_next. */
int mcdc_parquet_reader_next_batch(mcdc_parquet_reader *r, size_t max, const mcdc_value **rows,
                                   size_t *n);

/* ----------------------------------------------------------------- leaf columns */

/** How the reader assembles one component of a leaf's path (see _next_json). */
typedef enum {
    MCDC_PARQUET_PART_STRUCT = 0,   /* a group: an object */
    MCDC_PARQUET_PART_LIST,         /* LIST whose repeated child holds the element */
    MCDC_PARQUET_PART_LIST_LEGACY,  /* LIST whose repeated child is the element itself */
    MCDC_PARQUET_PART_MAP,          /* MAP / MAP_KEY_VALUE */
    MCDC_PARQUET_PART_LEAF          /* the primitive */
} mcdc_parquet_part_kind;

/** One leaf (primitive) column under the projected top-level columns. */
typedef struct mcdc_parquet_leaf_info {
    const char  *path;    /* dotted path from its top-level column, as the file names the
                           * groups ("add.partitionValues.key_value.key"); borrowed */
    mcdc_column  type;    /* typed as a flat column would be (name NULL) */
    int          max_def; /* definition level of a present value */
    int          max_rep; /* repetition level of its innermost repeated ancestor (0: none) */
    size_t       depth;   /* components of the path */
    const int   *defs;    /* depth entries: the definition level at which component k is
                           * present (not null; for a repeated one: has an entry); borrowed */
    const bool  *repeated;/* depth entries: whether component k is a repeated field */
    const uint8_t *kinds; /* depth entries: mcdc_parquet_part_kind of component k */
} mcdc_parquet_leaf_info;

/** Leaves under the projected columns, in file order (indices for _leaf_info and the
 *  runs of _next_leaves). */
size_t mcdc_parquet_reader_num_leaves(const mcdc_parquet_reader *r);

/** What leaf @p i is (see mcdc_parquet_leaf_info; borrowed until the reader is freed or
 *  mcdc_parquet_reader_select is called).
 *  @return 0; MCDC_EINVAL when @p i is out of range; MCDC_ENOMEM. */
int mcdc_parquet_reader_leaf_info(mcdc_parquet_reader *r, size_t i, mcdc_parquet_leaf_info *out);

/** The entries of one leaf column in one row: n >= 1 level pairs (the Dremel encoding:
 *  rep[0] is 0, rep[k] > 0 continues a repeated ancestor) and a value for each entry
 *  whose def is the leaf's max_def (vals[k].is_null otherwise). */
typedef struct mcdc_parquet_leaf_run {
    size_t            n;
    const uint8_t    *rep, *def;
    const mcdc_value *vals; /* strings and binaries copied: valid until the next call */
} mcdc_parquet_leaf_run;

/** The next row as the entries of every projected leaf, without building JSON: run k is
 *  leaf k of mcdc_parquet_reader_leaf_info. May be mixed with the other ways to read rows:
 *  each row is returned once.
 * @param[out] runs  mcdc_parquet_reader_num_leaves runs, borrowed until the next call.
 * @return 1, 0 or an error as mcdc_parquet_reader_next. */
int mcdc_parquet_reader_next_leaves(mcdc_parquet_reader *r, const mcdc_parquet_leaf_run **runs);

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
