/*
 * parquet/decode.h: decoders for every Parquet value and level encoding, as pure
 * functions over a bounded cursor.
 *
 * Each decoder reads from a cursor (pos, end) and never reads at or past end; every
 * count and length it reads is hostile and is checked against the bytes left and the
 * caller's capacity before use. Failures return MCDC_ECORRUPT with a message naming the
 * encoding and the reason ("rle: bit-packed run needs 12 bytes, 3 left"); the reader
 * prefixes it with the file, column and byte offset. Nothing here allocates except the
 * decoders that must build new bytes (DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT of
 * FIXED_LEN_BYTE_ARRAY), which append to a caller-supplied capped arena.
 *
 * Physical types use parquet.thrift's Type numbering (MCDC_PQDEC_BOOLEAN = 0 ...).
 * Decoded values land in mcdc_pqdec_val slots: INT96 and FIXED_LEN_BYTE_ARRAY values are
 * byte ranges like BYTE_ARRAY ones, borrowed from the page (or from the arena).
 *
 * Encodings (parquet-format Encodings.md):
 *   RLE/bit-packed hybrid   runs of <uleb header>: header&1 = 1 -> (header>>1) groups of 8
 *                           values bit-packed LSB first; header&1 = 0 -> (header>>1) repeats
 *                           of one value in ceil(width/8) little-endian bytes.
 *                           Worked: width 3, values 0..7 bit-packed = 03 88 C6 FA
 *   BIT_PACKED (legacy)     values packed MSB first, ceil(n*width/8) bytes.
 *   DELTA_BINARY_PACKED     <block size><miniblocks per block><total count><zigzag first>
 *                           then blocks of <zigzag min delta><one width byte per miniblock>
 *                           <miniblocks bit-packed LSB first>; arithmetic wraps.
 *                           Worked: 1,2,3,4,5 = 80 01 04 05 02 02 00 00 00 00 (block 128,
 *                           4 miniblocks, 5 values, first 1, min delta 1, widths 0)
 *   DELTA_LENGTH_BYTE_ARRAY DELTA_BINARY_PACKED lengths, then the bytes concatenated.
 *   DELTA_BYTE_ARRAY        DELTA_BINARY_PACKED prefix lengths, then the suffixes as
 *                           DELTA_LENGTH_BYTE_ARRAY; value i = value[i-1][0:prefix] + suffix.
 *   BYTE_STREAM_SPLIT       byte k of value i at k*n + i, for n values of width w.
 */
#ifndef MCDC_PARQUET_DECODE_H
#define MCDC_PARQUET_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"

/* Physical types, numbered as parquet.thrift's Type. */
enum {
    MCDC_PQDEC_BOOLEAN = 0,
    MCDC_PQDEC_INT32 = 1,
    MCDC_PQDEC_INT64 = 2,
    MCDC_PQDEC_INT96 = 3,
    MCDC_PQDEC_FLOAT = 4,
    MCDC_PQDEC_DOUBLE = 5,
    MCDC_PQDEC_BYTE_ARRAY = 6,
    MCDC_PQDEC_FIXED_LEN_BYTE_ARRAY = 7
};

/* A bounded read position. */
typedef struct mcdc_pqdec_cursor {
    const uint8_t *pos; /* next byte to read */
    const uint8_t *end; /* one past the last readable byte; no read reaches it */
} mcdc_pqdec_cursor;

/* One decoded physical value (16 bytes). */
typedef union mcdc_pqdec_val {
    bool    b;   /* BOOLEAN */
    int32_t i32; /* INT32 */
    int64_t i64; /* INT64 */
    float   f;   /* FLOAT */
    double  d;   /* DOUBLE */
    struct {
        const uint8_t *ptr; /* borrowed from the page buffer or the arena */
        uint32_t       len; /* bytes; 12 for INT96, type_length for FIXED_LEN_BYTE_ARRAY */
    } ba;        /* BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY, INT96 */
} mcdc_pqdec_val;

/* Largest number of values one call decodes (2^31 - 1): counts above are corrupt. */
#define MCDC_PQDEC_MAX_VALUES ((size_t)INT32_MAX)

static inline mcdc_pqdec_cursor mcdc_pqdec_cursor_make(const void *p, size_t len)
{
    mcdc_pqdec_cursor c = { (const uint8_t *)p, (const uint8_t *)p + len };
    return c;
}

static inline size_t mcdc_pqdec_left(const mcdc_pqdec_cursor *c)
{
    return (size_t)(c->end - c->pos);
}

/* Read an unsigned LEB128 varint of at most 64 bits into *out (0 when it fails).
 * @return 0; MCDC_ECORRUPT. */
int mcdc_pqdec_uleb(mcdc_pqdec_cursor *c, uint64_t *out);

/* Decode @p n values of the RLE/bit-packed hybrid of @p bit_width (0..32) from the whole
 * cursor (no length prefix), into @p out. Bytes left after the n-th value are ignored;
 * the cursor is advanced past the runs read. @return 0; MCDC_ECORRUPT when the runs end
 * before n values or a width is out of range. */
int mcdc_pqdec_rle(mcdc_pqdec_cursor *c, int bit_width, uint32_t *out, size_t n);

/* As mcdc_pqdec_rle, for data preceded by its 4-byte little-endian length (levels of data
 * page v1, RLE booleans); the cursor ends just past those length bytes. */
int mcdc_pqdec_rle_prefixed(mcdc_pqdec_cursor *c, int bit_width, uint32_t *out, size_t n);

/* As mcdc_pqdec_rle and mcdc_pqdec_rle_prefixed into bytes, for widths 0..8 (levels):
 * the same values and the same failures ("0..8" in the width's message). */
int mcdc_pqdec_rle_u8(mcdc_pqdec_cursor *c, int bit_width, uint8_t *out, size_t n);
int mcdc_pqdec_rle_u8_prefixed(mcdc_pqdec_cursor *c, int bit_width, uint8_t *out, size_t n);

/* Decode @p n values of the legacy BIT_PACKED encoding (MSB first) of @p bit_width
 * (0..32); consumes ceil(n*width/8) bytes. */
int mcdc_pqdec_bitpacked_legacy(mcdc_pqdec_cursor *c, int bit_width, uint32_t *out, size_t n);

/* Decode @p n PLAIN values of physical type @p ptype into @p out. @p type_len is the
 * FIXED_LEN_BYTE_ARRAY width (ignored otherwise). Byte ranges are borrowed from the
 * cursor's buffer. */
int mcdc_pqdec_plain(mcdc_pqdec_cursor *c, int ptype, int32_t type_len, mcdc_pqdec_val *out,
                     size_t n);

/* As mcdc_pqdec_plain for a fixed-width @p ptype (not BOOLEAN or BYTE_ARRAY), without
 * decoding: checks that @p n values fit, sets *span to their bytes (borrowed from the
 * cursor's buffer; value i at i * *width, little-endian) and moves past them. Fails as
 * mcdc_pqdec_plain would, with the same message. */
int mcdc_pqdec_plain_span(mcdc_pqdec_cursor *c, int ptype, int32_t type_len, size_t n,
                          const uint8_t **span, size_t *width);

/* Decode a DELTA_BINARY_PACKED stream whole (all its values, so the cursor ends just past
 * it), writing the values as int64 (an INT32 column's values are the low 32 bits) into
 * @p out of @p cap entries and their count into @p n_out. @return 0; MCDC_ECORRUPT for a
 * bad header, a count above @p cap, a miniblock width above 64 or a truncated block. */
int mcdc_pqdec_delta_binary(mcdc_pqdec_cursor *c, int64_t *out, size_t cap, size_t *n_out);

/* As mcdc_pqdec_delta_binary into slots of type INT32 or INT64; the stream must hold
 * exactly @p n values. */
int mcdc_pqdec_delta_binary_vals(mcdc_pqdec_cursor *c, int ptype, mcdc_pqdec_val *out, size_t n);

/* Decode @p n DELTA_LENGTH_BYTE_ARRAY values; byte ranges are borrowed from the cursor's
 * buffer. @p scratch holds n int64 lengths. */
int mcdc_pqdec_delta_length(mcdc_pqdec_cursor *c, mcdc_pqdec_val *out, size_t n,
                            int64_t *scratch);

/* Decode @p n DELTA_BYTE_ARRAY values; the built values are appended to @p arena (its cap
 * bounds the total; past it MCDC_ECORRUPT) and the slots point into it. Pointers into the
 * arena from earlier calls are invalidated. @p scratch holds 2n int64. @p type_len > 0
 * requires every value to have that length (FIXED_LEN_BYTE_ARRAY). */
int mcdc_pqdec_delta_byte_array(mcdc_pqdec_cursor *c, mcdc_pqdec_val *out, size_t n,
                                int64_t *scratch, int32_t type_len, mcdc_buf *arena);

/* Decode @p n BYTE_STREAM_SPLIT values of type FLOAT, DOUBLE, INT32, INT64 or
 * FIXED_LEN_BYTE_ARRAY (@p type_len wide; built in @p arena) from the whole cursor: the
 * streams are (bytes left / width) long, which must be at least n. */
int mcdc_pqdec_byte_stream_split(mcdc_pqdec_cursor *c, int ptype, int32_t type_len,
                                 mcdc_pqdec_val *out, size_t n, mcdc_buf *arena);

#endif
