/*
 * parquet/format.h: the Parquet file metadata (parquet.thrift) as C structs, with
 * serialisation and a parser that survives hostile input.
 *
 * Covers FileMetaData, SchemaElement (with LogicalType and ConvertedType), RowGroup,
 * ColumnChunk, ColumnMetaData, Statistics, PageEncodingStats, KeyValue, SortingColumn,
 * ColumnOrder, and PageHeader with DataPageHeader v1/v2 and DictionaryPageHeader. Fields
 * we do not model (page index details, bloom filter headers, size and geospatial
 * statistics, crypto metadata contents) are skipped when parsed and never written;
 * encryption is detected (FileMetaData.encryption_algorithm, ColumnChunk crypto
 * metadata, and the "PARE" magic) so the reader can refuse it.
 *
 * File layout (apache/parquet-format README):
 *
 *   offset          size   meaning
 *   --------------  -----  ----------------------------------------------------------
 *   0               4      "PAR1" ("PARE" when the footer is encrypted)
 *   4               ...    column chunks: [dictionary page] data page+, each page a
 *                          PageHeader (Thrift compact) followed by its body
 *   F               L      FileMetaData (Thrift compact)
 *   EOF - 8         4      L, u32 little-endian
 *   EOF - 4         4      "PAR1" / "PARE"
 *
 * Field ids written (parquet.thrift); * marks required fields:
 *
 *   FileMetaData     1 version* i32, 2 schema* list<SchemaElement>, 3 num_rows* i64,
 *                    4 row_groups* list<RowGroup>, 5 key_value_metadata list<KeyValue>,
 *                    6 created_by string, 7 column_orders list<ColumnOrder>
 *                    (8 encryption_algorithm, 9 footer_signing_key_metadata: detected)
 *   SchemaElement    1 type, 2 type_length, 3 repetition_type, 4 name*, 5 num_children,
 *                    6 converted_type, 7 scale, 8 precision, 9 field_id, 10 logicalType
 *   LogicalType      union: 1 STRING, 2 MAP, 3 LIST, 4 ENUM, 5 DECIMAL{1 scale, 2 precision},
 *                    6 DATE, 7 TIME{1 isAdjustedToUTC, 2 unit}, 8 TIMESTAMP{same},
 *                    10 INTEGER{1 bitWidth i8, 2 isSigned}, 11 UNKNOWN, 12 JSON, 13 BSON,
 *                    14 UUID, 15 FLOAT16; TimeUnit union: 1 MILLIS, 2 MICROS, 3 NANOS
 *   RowGroup         1 columns*, 2 total_byte_size* i64, 3 num_rows* i64,
 *                    4 sorting_columns, 5 file_offset, 6 total_compressed_size, 7 ordinal i16
 *   ColumnChunk      1 file_path, 2 file_offset* i64, 3 meta_data, 4/5 offset index
 *                    offset/length, 6/7 column index offset/length (8, 9 crypto: detected)
 *   ColumnMetaData   1 type*, 2 encodings* list<i32>, 3 path_in_schema* list<string>,
 *                    4 codec*, 5 num_values* i64, 6 total_uncompressed_size* i64,
 *                    7 total_compressed_size* i64, 8 key_value_metadata,
 *                    9 data_page_offset* i64, 10 index_page_offset, 11 dictionary_page_offset,
 *                    12 statistics, 13 encoding_stats list<PageEncodingStats>,
 *                    14 bloom_filter_offset, 15 bloom_filter_length i32
 *   Statistics       1 max, 2 min (deprecated), 3 null_count, 4 distinct_count,
 *                    5 max_value, 6 min_value, 7 is_max_value_exact, 8 is_min_value_exact
 *   PageEncodingStats 1 page_type*, 2 encoding*, 3 count* i32
 *   SortingColumn    1 column_idx* i32, 2 descending* bool, 3 nulls_first* bool
 *   KeyValue         1 key* string, 2 value string
 *   PageHeader       1 type*, 2 uncompressed_page_size* i32, 3 compressed_page_size* i32,
 *                    4 crc i32, 5 data_page_header, 7 dictionary_page_header,
 *                    8 data_page_header_v2
 *   DataPageHeader   1 num_values*, 2 encoding*, 3 definition_level_encoding*,
 *                    4 repetition_level_encoding*, 5 statistics
 *   DictionaryPageHeader 1 num_values*, 2 encoding*, 3 is_sorted
 *   DataPageHeaderV2 1 num_values*, 2 num_nulls*, 3 num_rows*, 4 encoding*,
 *                    5 definition_levels_byte_length*, 6 repetition_levels_byte_length*,
 *                    7 is_compressed (absent = true), 8 statistics
 *
 * Worked example: the PageHeader of a v1 data page, 100 values, PLAIN, RLE levels,
 * 812 bytes uncompressed, 600 compressed:
 *
 *   15 00          1 type: I32, DATA_PAGE = 0
 *   15 D8 0C       2 uncompressed_page_size: zigzag(812) = 1624 = 0xD8 0x0C
 *   15 B0 09       3 compressed_page_size:   zigzag(600) = 1200 = 0xB0 0x09
 *   2C             5 data_page_header (delta 2, STRUCT)
 *     15 C8 01       1 num_values: zigzag(100) = 200
 *     15 00          2 encoding: PLAIN
 *     15 06          3 definition_level_encoding: RLE = 3 -> 6
 *     15 06          4 repetition_level_encoding: RLE
 *     00             stop
 *   00             stop
 */
#ifndef MCDC_PARQUET_FORMAT_H
#define MCDC_PARQUET_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"

#define MCDC_PQ_MAGIC           "PAR1"
#define MCDC_PQ_MAGIC_ENCRYPTED "PARE"

/* Caps on what a parsed footer may hold (hostile input). */
#define MCDC_PQ_MAX_SCHEMA      100000   /* schema elements */
#define MCDC_PQ_MAX_ROW_GROUPS  1000000
#define MCDC_PQ_MAX_KV          100000   /* key-value pairs */

/* Enums: values as in parquet.thrift. */
enum { /* Type */
    MCDC_PQ_BOOLEAN = 0, MCDC_PQ_INT32 = 1, MCDC_PQ_INT64 = 2, MCDC_PQ_INT96 = 3,
    MCDC_PQ_FLOAT = 4, MCDC_PQ_DOUBLE = 5, MCDC_PQ_BYTE_ARRAY = 6, MCDC_PQ_FIXED_LEN_BYTE_ARRAY = 7
};
enum { /* ConvertedType */
    MCDC_PQ_CT_UTF8 = 0, MCDC_PQ_CT_MAP = 1, MCDC_PQ_CT_MAP_KEY_VALUE = 2, MCDC_PQ_CT_LIST = 3,
    MCDC_PQ_CT_ENUM = 4, MCDC_PQ_CT_DECIMAL = 5, MCDC_PQ_CT_DATE = 6, MCDC_PQ_CT_TIME_MILLIS = 7,
    MCDC_PQ_CT_TIME_MICROS = 8, MCDC_PQ_CT_TIMESTAMP_MILLIS = 9, MCDC_PQ_CT_TIMESTAMP_MICROS = 10,
    MCDC_PQ_CT_UINT_8 = 11, MCDC_PQ_CT_UINT_16 = 12, MCDC_PQ_CT_UINT_32 = 13,
    MCDC_PQ_CT_UINT_64 = 14, MCDC_PQ_CT_INT_8 = 15, MCDC_PQ_CT_INT_16 = 16, MCDC_PQ_CT_INT_32 = 17,
    MCDC_PQ_CT_INT_64 = 18, MCDC_PQ_CT_JSON = 19, MCDC_PQ_CT_BSON = 20, MCDC_PQ_CT_INTERVAL = 21
};
enum { /* FieldRepetitionType */
    MCDC_PQ_REQUIRED = 0, MCDC_PQ_OPTIONAL = 1, MCDC_PQ_REPEATED = 2
};
enum { /* Encoding */
    MCDC_PQ_ENC_PLAIN = 0, MCDC_PQ_ENC_PLAIN_DICTIONARY = 2, MCDC_PQ_ENC_RLE = 3,
    MCDC_PQ_ENC_BIT_PACKED = 4, MCDC_PQ_ENC_DELTA_BINARY_PACKED = 5,
    MCDC_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6, MCDC_PQ_ENC_DELTA_BYTE_ARRAY = 7,
    MCDC_PQ_ENC_RLE_DICTIONARY = 8, MCDC_PQ_ENC_BYTE_STREAM_SPLIT = 9
};
enum { /* CompressionCodec */
    MCDC_PQ_CODEC_UNCOMPRESSED = 0, MCDC_PQ_CODEC_SNAPPY = 1, MCDC_PQ_CODEC_GZIP = 2,
    MCDC_PQ_CODEC_LZO = 3, MCDC_PQ_CODEC_BROTLI = 4, MCDC_PQ_CODEC_LZ4 = 5,
    MCDC_PQ_CODEC_ZSTD = 6, MCDC_PQ_CODEC_LZ4_RAW = 7
};
enum { /* PageType */
    MCDC_PQ_PAGE_DATA = 0, MCDC_PQ_PAGE_INDEX = 1, MCDC_PQ_PAGE_DICTIONARY = 2,
    MCDC_PQ_PAGE_DATA_V2 = 3
};
enum { /* LogicalType union field ids; 0 = none */
    MCDC_PQ_LT_NONE = 0, MCDC_PQ_LT_STRING = 1, MCDC_PQ_LT_MAP = 2, MCDC_PQ_LT_LIST = 3,
    MCDC_PQ_LT_ENUM = 4, MCDC_PQ_LT_DECIMAL = 5, MCDC_PQ_LT_DATE = 6, MCDC_PQ_LT_TIME = 7,
    MCDC_PQ_LT_TIMESTAMP = 8, MCDC_PQ_LT_INTEGER = 10, MCDC_PQ_LT_UNKNOWN = 11,
    MCDC_PQ_LT_JSON = 12, MCDC_PQ_LT_BSON = 13, MCDC_PQ_LT_UUID = 14, MCDC_PQ_LT_FLOAT16 = 15,
    MCDC_PQ_LT_UNSUPPORTED = -1 /* parsed: a union member this code does not know */
};
enum { /* TimeUnit union field ids */
    MCDC_PQ_UNIT_MILLIS = 1, MCDC_PQ_UNIT_MICROS = 2, MCDC_PQ_UNIT_NANOS = 3
};

/** Bytes owned by the struct that holds them (malloc'd; freed by its dispose). */
typedef struct mcdc_pq_bytes {
    uint8_t *ptr;   /* NULL when absent (or empty and absent); owned */
    size_t   len;
    bool     set;   /* the field was present (it may be empty) */
} mcdc_pq_bytes;

typedef struct mcdc_pq_logical_type {
    int     kind;              /* MCDC_PQ_LT_*, the union member set; 0 when absent */
    int32_t dec_scale;         /* DECIMAL */
    int32_t dec_precision;     /* DECIMAL */
    bool    is_adjusted_utc;   /* TIME, TIMESTAMP */
    int     unit;              /* TIME, TIMESTAMP: MCDC_PQ_UNIT_* (0 if unknown) */
    int8_t  int_bit_width;     /* INTEGER: 8, 16, 32, 64 */
    bool    int_signed;        /* INTEGER */
} mcdc_pq_logical_type;

typedef struct mcdc_pq_schema_element {
    char   *name;              /* owned, NUL-terminated; never NULL once parsed */
    bool    has_type;          int32_t type;             /* Type, leaves only */
    bool    has_type_length;   int32_t type_length;      /* FIXED_LEN_BYTE_ARRAY bytes */
    bool    has_repetition;    int32_t repetition;       /* FieldRepetitionType */
    bool    has_num_children;  int32_t num_children;     /* groups only */
    bool    has_converted;     int32_t converted_type;   /* ConvertedType */
    bool    has_scale;         int32_t scale;
    bool    has_precision;     int32_t precision;
    bool    has_field_id;      int32_t field_id;
    mcdc_pq_logical_type logical;                         /* kind 0 when absent */
} mcdc_pq_schema_element;

typedef struct mcdc_pq_statistics {
    mcdc_pq_bytes max, min;                 /* deprecated 1/2: signed order only */
    bool    has_null_count;     int64_t null_count;
    bool    has_distinct_count; int64_t distinct_count;
    mcdc_pq_bytes max_value, min_value;     /* PLAIN, byte arrays without length prefix */
    bool    has_is_max_value_exact; bool is_max_value_exact;
    bool    has_is_min_value_exact; bool is_min_value_exact;
} mcdc_pq_statistics;

typedef struct mcdc_pq_key_value {
    char *key;                 /* owned */
    char *value;               /* owned; NULL when absent */
    size_t value_len;          /* bytes in value (it may hold NULs) */
} mcdc_pq_key_value;

typedef struct mcdc_pq_encoding_stats {
    int32_t page_type, encoding, count;
} mcdc_pq_encoding_stats;

typedef struct mcdc_pq_sorting_column {
    int32_t column_idx;
    bool    descending, nulls_first;
} mcdc_pq_sorting_column;

typedef struct mcdc_pq_column_meta {
    int32_t  type;                          /* Type */
    int32_t *encodings;   size_t n_encodings;       /* owned */
    char   **path;        size_t n_path;            /* path_in_schema; owned strings */
    int32_t  codec;                         /* CompressionCodec */
    int64_t  num_values;                    /* level entries, nulls included */
    int64_t  total_uncompressed_size;       /* bytes, page headers included */
    int64_t  total_compressed_size;         /* bytes, page headers included */
    mcdc_pq_key_value *kv; size_t n_kv;     /* owned */
    int64_t  data_page_offset;
    bool     has_index_page_offset;      int64_t index_page_offset;
    bool     has_dictionary_page_offset; int64_t dictionary_page_offset;
    bool     has_statistics;             mcdc_pq_statistics statistics;
    mcdc_pq_encoding_stats *encoding_stats; size_t n_encoding_stats; /* owned */
    bool     has_bloom_filter_offset;    int64_t bloom_filter_offset;
    bool     has_bloom_filter_length;    int32_t bloom_filter_length;
} mcdc_pq_column_meta;

typedef struct mcdc_pq_column_chunk {
    char    *file_path;                     /* owned; NULL when absent (always, in practice) */
    int64_t  file_offset;                   /* deprecated; do not trust it when reading */
    bool     has_meta_data;  mcdc_pq_column_meta meta_data;
    bool     has_offset_index; int64_t offset_index_offset; int32_t offset_index_length;
    bool     has_column_index; int64_t column_index_offset; int32_t column_index_length;
    bool     is_encrypted;                  /* crypto_metadata or encrypted_column_metadata seen */
} mcdc_pq_column_chunk;

typedef struct mcdc_pq_row_group {
    mcdc_pq_column_chunk *columns; size_t n_columns;       /* owned */
    int64_t  total_byte_size;               /* uncompressed bytes of the data */
    int64_t  num_rows;
    mcdc_pq_sorting_column *sorting_columns; size_t n_sorting_columns; /* owned */
    bool     has_file_offset;           int64_t file_offset;
    bool     has_total_compressed_size; int64_t total_compressed_size;
    bool     has_ordinal;               int16_t ordinal;
} mcdc_pq_row_group;

typedef struct mcdc_pq_file_metadata {
    int32_t  version;                       /* 1 (2 from pyarrow) */
    mcdc_pq_schema_element *schema; size_t n_schema;       /* owned; root first */
    int64_t  num_rows;
    mcdc_pq_row_group *row_groups;  size_t n_row_groups;   /* owned */
    mcdc_pq_key_value *kv;          size_t n_kv;           /* owned */
    char    *created_by;                    /* owned; NULL when absent */
    int32_t *column_orders; size_t n_column_orders; /* owned; 1 = TYPE_ORDER, 0 = unknown */
    bool     has_column_orders;
    bool     is_encrypted;                  /* encryption_algorithm present */
} mcdc_pq_file_metadata;

typedef struct mcdc_pq_data_page_header {
    int32_t num_values;                     /* level entries, nulls included */
    int32_t encoding;
    int32_t definition_level_encoding;
    int32_t repetition_level_encoding;
    bool    has_statistics; mcdc_pq_statistics statistics;
} mcdc_pq_data_page_header;

typedef struct mcdc_pq_dictionary_page_header {
    int32_t num_values;
    int32_t encoding;
    bool    has_is_sorted; bool is_sorted;
} mcdc_pq_dictionary_page_header;

typedef struct mcdc_pq_data_page_header_v2 {
    int32_t num_values, num_nulls, num_rows;
    int32_t encoding;
    int32_t definition_levels_byte_length;
    int32_t repetition_levels_byte_length;
    bool    is_compressed;                  /* true when the field is absent */
    bool    has_statistics; mcdc_pq_statistics statistics;
} mcdc_pq_data_page_header_v2;

typedef struct mcdc_pq_page_header {
    int32_t type;                           /* PageType */
    int32_t uncompressed_page_size;         /* body bytes, header excluded */
    int32_t compressed_page_size;           /* body bytes, header excluded */
    bool    has_crc;  int32_t crc;          /* CRC-32 (zlib) of the compressed body */
    bool    has_data_page_header;       mcdc_pq_data_page_header       data_page_header;
    bool    has_dictionary_page_header; mcdc_pq_dictionary_page_header dictionary_page_header;
    bool    has_data_page_header_v2;    mcdc_pq_data_page_header_v2    data_page_header_v2;
} mcdc_pq_page_header;

/* ---------------------------------------------------------------- writing */

/** Append the Thrift encoding of @p m to @p out (not the length or magic).
 *  @return 0; MCDC_ENOMEM past the buffer's cap. */
int mcdc_pq__write_file_metadata(mcdc_buf *out, const mcdc_pq_file_metadata *m);
/** Append the Thrift encoding of @p h to @p out. @return 0; MCDC_ENOMEM. */
int mcdc_pq__write_page_header(mcdc_buf *out, const mcdc_pq_page_header *h);

/* ---------------------------------------------------------------- parsing */

/** Parse a footer of @p len bytes at @p p (file offset @p base_off, for messages).
 *  Unknown fields are skipped; required fields must be present; list sizes are capped.
 *  @param[out] out  filled on success (free with mcdc_pq__file_metadata_dispose); zeroed
 *                   and holding nothing on failure.
 *  @return 0; MCDC_ECORRUPT ("footer at byte N: why"); MCDC_ENOMEM. */
int mcdc_pq__parse_file_metadata(mcdc_pq_file_metadata *out, const uint8_t *p, size_t len,
                                 uint64_t base_off);
/** Parse a page header from the first bytes of [p, p+len).
 *  @param[out] out       filled on success (dispose with mcdc_pq__page_header_dispose).
 *  @param[out] consumed  bytes the header took.
 *  @return 0; MCDC_ECORRUPT ("page header at byte N: why"), also for negative sizes or a
 *          missing header struct for the page type; MCDC_ENOMEM. */
int mcdc_pq__parse_page_header(mcdc_pq_page_header *out, size_t *consumed, const uint8_t *p,
                               size_t len, uint64_t base_off);

/** Free everything a parsed (or hand-built with malloc'd members) struct owns; accepts
 *  NULL; leaves the struct zeroed. */
void mcdc_pq__file_metadata_dispose(mcdc_pq_file_metadata *m);
void mcdc_pq__page_header_dispose(mcdc_pq_page_header *h);
void mcdc_pq__statistics_dispose(mcdc_pq_statistics *s);
void mcdc_pq__column_meta_dispose(mcdc_pq_column_meta *c);

/** Names for messages: "INT32", "SNAPPY", "RLE_DICTIONARY", "DATA_PAGE" ("?" when unknown). */
const char *mcdc_pq__type_name(int type);
const char *mcdc_pq__codec_name(int codec);
const char *mcdc_pq__encoding_name(int encoding);
const char *mcdc_pq__page_type_name(int page_type);

#endif
