/*
 * parquet/codec.h: page compression for every Parquet codec.
 *
 * Compression appends to a capped mcdc_buf; decompression yields exactly the size the
 * page header promises, in a buffer that grows with the output, and fails (MCDC_ECORRUPT)
 * when the data inflates to any other size, could not inflate to it, or is malformed.
 * Codec numbers are parquet.thrift's (MCDC_PQ_CODEC_* in format.h). LZO is not supported.
 *
 *   codec          on the wire
 *   -------------  ---------------------------------------------------------------------
 *   UNCOMPRESSED   the bytes
 *   SNAPPY         one raw snappy block (not the framing format)
 *   GZIP           an RFC 1952 gzip stream; readers accept concatenated members
 *   BROTLI         a brotli stream
 *   LZ4            Hadoop framing: blocks of [u32 BE uncompressed][u32 BE compressed]
 *                  [LZ4 block]; some writers put a bare LZ4 block instead, which is
 *                  tried when the framing does not parse (as Arrow and parquet-mr do)
 *   ZSTD           one or more zstd frames
 *   LZ4_RAW        one bare LZ4 block
 *
 * Worked example (Hadoop LZ4 of 10 bytes that compress to 12): 00 00 00 0A 00 00 00 0C
 * followed by the 12 bytes of the LZ4 block.
 */
#ifndef MCDC_PARQUET_CODEC_H
#define MCDC_PARQUET_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"

/** Whether this build can compress and decompress @p codec. */
bool mcdc_codec__supported(int codec);

/** Compress @p len bytes at @p src with @p codec and append the result to @p out.
 *  @p level is the codec's level (0 = its default; used by ZSTD, GZIP and BROTLI).
 *  @return 0; MCDC_EUNSUPPORTED for LZO or an unknown codec; MCDC_ENOMEM past the
 *          buffer's cap; MCDC_ERROR when the library fails. */
int mcdc_codec__compress(mcdc_buf *out, int codec, int level, const void *src, size_t len);

/** The most bytes @p src_len bytes at @p src can inflate to with @p codec: the size itself
 *  (UNCOMPRESSED), the size a snappy block states, 1032 times the input (GZIP: deflate's
 *  maximum ratio), 255 times (LZ4, LZ4_RAW); SIZE_MAX for ZSTD and BROTLI, whose streams
 *  are bounded only by their own end (decompression grows with their output). */
size_t mcdc_codec__inflate_bound(int codec, const void *src, size_t src_len);

/** Decompress @p src_len bytes into exactly @p dst_len bytes at *dst.
 *  *dst is a malloc'd buffer of *cap bytes (NULL and 0 at first), reused and grown with
 *  realloc as needed; the caller frees it. A @p dst_len beyond mcdc_codec__inflate_bound
 *  is refused before anything is allocated; GZIP, ZSTD and BROTLI grow the buffer as
 *  their output arrives, never past @p dst_len, so memory follows what the data really
 *  inflates to whatever the header claims. An empty input with @p dst_len 0 is fine for
 *  every codec.
 *  @return 0; MCDC_ECORRUPT ("<codec>: why", e.g. "SNAPPY: inflates to 90 bytes, the page
 *          says 100"); MCDC_EUNSUPPORTED; MCDC_ENOMEM. Callers add the file and offset
 *          with mcdc_error_prefix. */
int mcdc_codec__decompress(uint8_t **dst, size_t *cap, size_t dst_len, int codec, const void *src,
                           size_t src_len);

/** Decoder state kept from one page to the next (a zstd context), so that pages do not
 *  each build their own. Zero it before first use; one per thread (a reader has one). */
typedef struct mcdc_codec_dctx {
    void *zstd; /* ZSTD_DCtx, made on first use */
} mcdc_codec_dctx;

/** Free what @p d holds; leaves it zeroed (reusable). */
void mcdc_codec__dctx_dispose(mcdc_codec_dctx *d);

/** As mcdc_codec__decompress, with the decoder state of @p ctx (NULL: none kept). */
int mcdc_codec__decompress_ctx(mcdc_codec_dctx *ctx, uint8_t **dst, size_t *cap, size_t dst_len,
                               int codec, const void *src, size_t src_len);

#endif
