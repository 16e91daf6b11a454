/*
 * parquet/levels.h: the RLE / bit-packing hybrid encoding (Encodings.md), used for
 * definition and repetition levels, dictionary indices and RLE booleans, and bit widths.
 *
 * Encoding side only; decoders live with the reader.
 *
 *   item             bytes                 meaning
 *   ---------------  --------------------  ---------------------------------------------
 *   [length]         4                     u32 LE byte length of the runs; only for v1
 *                                          page levels (and RLE booleans)
 *   RLE run          varint + ceil(w/8)    header = count << 1; the repeated value, LE
 *   bit-packed run   varint + groups * w   header = (groups << 1) | 1; 8 values a group,
 *                                          value i in bits i*w .. i*w+w-1, LSB first
 *
 * The encoder writes an RLE run for every stretch of 8 or more equal values that starts
 * on a group boundary of the bit-packed section before it, and bit-packs the rest; the
 * last bit-packed group is padded with zeros (readers decode only num_values).
 *
 * Worked example, width 1, values 1 1 1 1 1 1 1 1 1 1 0 1 0:
 *   14 01        RLE run: header 10 << 1 = 20 = 0x14, value 1 (one byte)
 *   03 02        bit-packed: 1 group (1 << 1 | 1 = 3); values 0 1 0 and 5 zeros of
 *                padding, LSB first: bit0 = 0, bit1 = 1, bit2 = 0 -> 0b00000010
 * With the v1 length prefix the stream is 04 00 00 00 14 01 03 02 (tests/unit/parquet/levels.c).
 */
#ifndef MCDC_PARQUET_LEVELS_H
#define MCDC_PARQUET_LEVELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"

/** Bits needed for values 0..@p max_value: 0 for 0, 1 for 1, 2 for 2..3, ... 64. */
int mcdc_rle__bit_width(uint64_t max_value);

/** Append the hybrid encoding of @p n values of @p bit_width bits (0..32) to @p out,
 *  preceded by a u32 LE byte length when @p length_prefix is set. Values must fit in the
 *  width (checked in debug builds only: they come from the writer, not from input).
 *  @return 0; MCDC_ENOMEM past the buffer's cap; MCDC_EINVAL for a width over 32. */
int mcdc_rle__encode_u16(mcdc_buf *out, const uint16_t *values, size_t n, int bit_width,
                         bool length_prefix);
int mcdc_rle__encode_u32(mcdc_buf *out, const uint32_t *values, size_t n, int bit_width,
                         bool length_prefix);
/** The same bytes as mcdc_rle__encode_u32 of @p n copies of @p value, without the
 *  array (definition levels of a page without nulls). Same returns. */
int mcdc_rle__encode_repeat(mcdc_buf *out, uint32_t value, size_t n, int bit_width,
                            bool length_prefix);

#endif
