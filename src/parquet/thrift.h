/*
 * parquet/thrift.h: the Thrift compact protocol, as Parquet uses it for its metadata.
 *
 * A writer appends to an mcdc_buf and keeps the first error sticky (check it once, at the
 * end, with mcdc_thrift__writer_rc); a reader decodes from a byte range that it never reads
 * past and names the byte offset of every problem it finds. The reader limits nesting to
 * MCDC_THRIFT_MAX_DEPTH and can skip any field it does not know. Only what Parquet needs
 * is here: no maps of structs as values are built, no sets, no service calls.
 *
 * Wire format (apache/thrift doc/specs/thrift-compact-protocol.md):
 *
 *   item              bytes               meaning
 *   ----------------  ------------------  ------------------------------------------------
 *   varint            1..10               unsigned LEB128, 7 bits a byte, low group first
 *   i16 / i32 / i64   varint              zigzag first: (n << 1) ^ (n >> 63)
 *   i8                1                   the byte itself
 *   double            8                   IEEE 754, little-endian
 *   binary / string   varint + n          length, then the bytes
 *   field header      1                   (delta << 4) | type, delta = id - previous id, 1..15
 *                     1 + varint          type (high nibble 0), then zigzag i16 field id
 *   bool field        (header only)       type 1 = true, 2 = false; no payload
 *   list / set        1                   (n << 4) | elemtype when n < 15
 *                     1 + varint          0xF0 | elemtype, then n
 *   bool element      1                   1 = true, anything else false (2 is written)
 *   map               varint (+1)         n, then (keytype << 4) | valtype when n > 0
 *   struct            fields + 0x00       the stop byte ends it; ids ascend when written
 *
 * Worked example: struct { 1: i32 = 1, 2: list<string> = ["a"], 4: i64 = -1, 20: bool = true }
 *
 *   15 02        field 1 (delta 1), type I32 (5); zigzag(1) = 2
 *   19 18 01 61  field 2 (delta 1), type LIST (9); 1 element of BINARY (8); len 1, 'a'
 *   26 01        field 4 (delta 2), type I64 (6); zigzag(-1) = 1
 *   01 28        long form (delta 16 > 15): type BOOL_TRUE (1), zigzag i16 id 20 = 40
 *   00           stop
 */
#ifndef MCDC_PARQUET_THRIFT_H
#define MCDC_PARQUET_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"

/* Compact protocol type nibbles. */
enum {
    MCDC_THRIFT_STOP       = 0,
    MCDC_THRIFT_BOOL_TRUE  = 1,
    MCDC_THRIFT_BOOL_FALSE = 2,
    MCDC_THRIFT_I8         = 3,
    MCDC_THRIFT_I16        = 4,
    MCDC_THRIFT_I32        = 5,
    MCDC_THRIFT_I64        = 6,
    MCDC_THRIFT_DOUBLE     = 7,
    MCDC_THRIFT_BINARY     = 8,
    MCDC_THRIFT_LIST       = 9,
    MCDC_THRIFT_SET        = 10,
    MCDC_THRIFT_MAP        = 11,
    MCDC_THRIFT_STRUCT     = 12,
    MCDC_THRIFT_UUID       = 13
};

/** Deepest struct/list nesting either side accepts (Parquet metadata needs about 8). */
#define MCDC_THRIFT_MAX_DEPTH 64

/* ---------------------------------------------------------------- writer */

/** Appends compact-protocol bytes to a buffer. Zero-initialise it or use ..._writer_init. */
typedef struct mcdc_thrift_writer {
    mcdc_buf *out;                              /* borrowed; bytes are appended */
    int16_t   last_id[MCDC_THRIFT_MAX_DEPTH];   /* previous field id per open struct */
    int       depth;                            /* open structs; 0 before the first begin */
    int       rc;                               /* first error (sticky), 0 while fine */
} mcdc_thrift_writer;

/** Start writing into @p out (appends; existing contents stay). */
void mcdc_thrift__writer_init(mcdc_thrift_writer *w, mcdc_buf *out);
/** The first error met by any write since init (MCDC_ENOMEM past the buffer's cap,
 *  MCDC_EINVAL for nesting past MCDC_THRIFT_MAX_DEPTH), or 0. */
int mcdc_thrift__writer_rc(const mcdc_thrift_writer *w);

/** Open a struct (top level, list element, or after a STRUCT field header). */
void mcdc_thrift__struct_begin(mcdc_thrift_writer *w);
/** Write the stop byte and close the innermost struct. */
void mcdc_thrift__struct_end(mcdc_thrift_writer *w);
/** A field header; ids must ascend within a struct. For bool fields use ..._field_bool. */
void mcdc_thrift__field(mcdc_thrift_writer *w, int16_t id, int type);
/** A list header of @p n elements of @p elem_type; the elements follow. */
void mcdc_thrift__list_begin(mcdc_thrift_writer *w, int elem_type, size_t n);

/* Whole fields: header and value. */
void mcdc_thrift__field_bool(mcdc_thrift_writer *w, int16_t id, bool v);
void mcdc_thrift__field_i8(mcdc_thrift_writer *w, int16_t id, int8_t v);
void mcdc_thrift__field_i16(mcdc_thrift_writer *w, int16_t id, int16_t v);
void mcdc_thrift__field_i32(mcdc_thrift_writer *w, int16_t id, int32_t v);
void mcdc_thrift__field_i64(mcdc_thrift_writer *w, int16_t id, int64_t v);
void mcdc_thrift__field_double(mcdc_thrift_writer *w, int16_t id, double v);
void mcdc_thrift__field_binary(mcdc_thrift_writer *w, int16_t id, const void *p, size_t len);
/** A string field from a NUL-terminated C string. */
void mcdc_thrift__field_string(mcdc_thrift_writer *w, int16_t id, const char *s);
/** A field holding an empty struct (Parquet's unit types: StringType, MICROS, TYPE_ORDER). */
void mcdc_thrift__field_empty_struct(mcdc_thrift_writer *w, int16_t id);

/* Bare values (list elements). */
void mcdc_thrift__write_varint(mcdc_thrift_writer *w, uint64_t v);
void mcdc_thrift__write_i32(mcdc_thrift_writer *w, int32_t v);
void mcdc_thrift__write_i64(mcdc_thrift_writer *w, int64_t v);
void mcdc_thrift__write_binary(mcdc_thrift_writer *w, const void *p, size_t len);
void mcdc_thrift__write_bool(mcdc_thrift_writer *w, bool v);

/* ---------------------------------------------------------------- reader */

/** Decodes from [pos, end). Every read checks the end; errors are MCDC_ECORRUPT with the
 *  byte offset (base_off + position) in the message. The scalar reads (varint, i8..i64,
 *  double, binary) set their outputs on every path: zero (NULL, 0) when they fail. */
typedef struct mcdc_thrift_reader {
    const uint8_t *start;                       /* first byte of the range */
    const uint8_t *pos;                         /* next byte to decode */
    const uint8_t *end;                         /* one past the range; no read reaches it */
    uint64_t       base_off;                    /* file offset of start, for messages */
    const char    *what;                        /* names the range in messages ("footer") */
    int16_t        last_id[MCDC_THRIFT_MAX_DEPTH]; /* previous field id per open struct */
    int            depth;                       /* open structs and lists */
    bool           bool_value;                  /* value of the last bool field header */
} mcdc_thrift_reader;

/** Start decoding @p len bytes at @p p; @p base_off is their offset in the file and
 *  @p what names them in error messages (borrowed, e.g. "footer", "page header"). */
void mcdc_thrift__reader_init(mcdc_thrift_reader *r, const void *p, size_t len,
                              uint64_t base_off, const char *what);
/** File offset of the next byte to decode. */
uint64_t mcdc_thrift__reader_offset(const mcdc_thrift_reader *r);
/** Record MCDC_ECORRUPT "<what> at byte <offset>: <why>" and return it. */
int mcdc_thrift__corrupt(const mcdc_thrift_reader *r, const char *fmt, ...) MCDC_PRINTF(2, 3);

/** Enter a struct. @return 0; MCDC_ECORRUPT past MCDC_THRIFT_MAX_DEPTH. */
int mcdc_thrift__read_struct_begin(mcdc_thrift_reader *r);
/** Leave the struct whose stop byte ..._read_field just returned. */
void mcdc_thrift__read_struct_end(mcdc_thrift_reader *r);
/** Next field header: *id and *type; *type == MCDC_THRIFT_STOP at the end of the struct.
 *  For a bool field the value is in r->bool_value (see ..._read_bool). */
int mcdc_thrift__read_field(mcdc_thrift_reader *r, int16_t *id, int *type);
/** A list or set header: element type and count. The count is refused when the remaining
 *  bytes could not hold that many elements (each takes at least one byte, bools aside).
 *  Call ..._read_list_end after the elements. */
int mcdc_thrift__read_list_begin(mcdc_thrift_reader *r, int *elem_type, uint32_t *n);
void mcdc_thrift__read_list_end(mcdc_thrift_reader *r);

int mcdc_thrift__read_varint(mcdc_thrift_reader *r, uint64_t *v);
/** i8 (one byte), i16, i32, i64 (zigzag varints, range-checked), double (8 bytes LE). */
int mcdc_thrift__read_i8(mcdc_thrift_reader *r, int8_t *v);
int mcdc_thrift__read_i16(mcdc_thrift_reader *r, int16_t *v);
int mcdc_thrift__read_i32(mcdc_thrift_reader *r, int32_t *v);
int mcdc_thrift__read_i64(mcdc_thrift_reader *r, int64_t *v);
int mcdc_thrift__read_double(mcdc_thrift_reader *r, double *v);
/** A binary/string: *p points into the input (borrowed), *len bytes. */
int mcdc_thrift__read_binary(mcdc_thrift_reader *r, const uint8_t **p, size_t *len);
/** A bool of wire type @p type: a field (@p in_list false: the value came in its header)
 *  or a list element (@p in_list true: one byte, 1 = true). */
int mcdc_thrift__read_bool(mcdc_thrift_reader *r, int type, bool in_list, bool *v);
/** Read a value of wire type @p type and any fields inside it, and drop it. Bool fields
 *  (type 1/2 right after a header) have no payload. @p in_list says whether the value is a
 *  list element (where a bool is a byte). */
int mcdc_thrift__skip(mcdc_thrift_reader *r, int type, bool in_list);

#endif
