/*
 * parquet/codec.c: compress and decompress page bodies with snappy, zlib (gzip), zstd,
 * brotli and lz4.
 *
 * Every decompression is into a buffer of known size: output never exceeds it, and a
 * result of any other size is an error. Inputs larger than the libraries' int limits are
 * refused rather than truncated. Formats: codec.h.
 */
#include "parquet/codec.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <limits.h>
#include <lz4.h>
#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "parquet/format.h"

bool mcdc_codec__supported(int codec)
{
    switch (codec) {
    case MCDC_PQ_CODEC_UNCOMPRESSED:
    case MCDC_PQ_CODEC_SNAPPY:
    case MCDC_PQ_CODEC_GZIP:
    case MCDC_PQ_CODEC_BROTLI:
    case MCDC_PQ_CODEC_LZ4:
    case MCDC_PQ_CODEC_ZSTD:
    case MCDC_PQ_CODEC_LZ4_RAW:
        return true;
    default:
        return false;
    }
}

static int unsupported(int codec)
{
    return mcdc_error_set(MCDC_EUNSUPPORTED, "compression codec %s (%d) is not supported",
                          mcdc_pq__codec_name(codec), codec);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int gzip_compress(mcdc_buf *out, int level, const void *src, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return mcdc_error_set(MCDC_ERROR, "GZIP: deflateInit2 failed");
    size_t bound = deflateBound(&z, (uLong)len);
    int rc = mcdc_buf_grow(out, bound);
    if (rc < 0) {
        deflateEnd(&z);
        return rc;
    }
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out->ptr + out->len;
    z.avail_out = (uInt)bound;
    int zr = deflate(&z, Z_FINISH);
    size_t n = bound - z.avail_out;
    deflateEnd(&z);
    if (zr != Z_STREAM_END)
        return mcdc_error_set(MCDC_ERROR, "GZIP: deflate failed (%d)", zr);
    out->len += n;
    out->ptr[out->len] = 0;
    return 0;
}

int mcdc_codec__compress(mcdc_buf *out, int codec, int level, const void *src, size_t len)
{
    if (!mcdc_codec__supported(codec))
        return unsupported(codec);
    if (len > INT_MAX - 4096)
        return mcdc_error_set(MCDC_EINVAL, "%s: a page of %zu bytes is too large to compress",
                              mcdc_pq__codec_name(codec), len);
    int rc;
    switch (codec) {
    case MCDC_PQ_CODEC_UNCOMPRESSED:
        return mcdc_buf_put(out, src, len);
    case MCDC_PQ_CODEC_SNAPPY: {
        size_t n = snappy_max_compressed_length(len);
        if ((rc = mcdc_buf_grow(out, n)) < 0)
            return rc;
        if (snappy_compress(src, len, out->ptr + out->len, &n) != SNAPPY_OK)
            return mcdc_error_set(MCDC_ERROR, "SNAPPY: compression failed");
        out->len += n;
        out->ptr[out->len] = 0;
        return 0;
    }
    case MCDC_PQ_CODEC_GZIP:
        return gzip_compress(out, level, src, len);
    case MCDC_PQ_CODEC_ZSTD: {
        size_t bound = ZSTD_compressBound(len);
        if ((rc = mcdc_buf_grow(out, bound)) < 0)
            return rc;
        size_t n = ZSTD_compress(out->ptr + out->len, bound, src, len, level ? level : 3);
        if (ZSTD_isError(n))
            return mcdc_error_set(MCDC_ERROR, "ZSTD: %s", ZSTD_getErrorName(n));
        out->len += n;
        out->ptr[out->len] = 0;
        return 0;
    }
    case MCDC_PQ_CODEC_BROTLI: {
        size_t n = BrotliEncoderMaxCompressedSize(len);
        if (n == 0)
            n = len + 1024;
        if ((rc = mcdc_buf_grow(out, n)) < 0)
            return rc;
        if (!BrotliEncoderCompress(level ? level : 5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC,
                                   len, src, &n, (uint8_t *)out->ptr + out->len))
            return mcdc_error_set(MCDC_ERROR, "BROTLI: compression failed");
        out->len += n;
        out->ptr[out->len] = 0;
        return 0;
    }
    case MCDC_PQ_CODEC_LZ4:
    case MCDC_PQ_CODEC_LZ4_RAW: {
        size_t hdr = codec == MCDC_PQ_CODEC_LZ4 ? 8 : 0;
        int bound = LZ4_compressBound((int)len);
        if ((rc = mcdc_buf_grow(out, hdr + (size_t)bound)) < 0)
            return rc;
        uint8_t *dst = (uint8_t *)out->ptr + out->len;
        int n = LZ4_compress_default(src, (char *)dst + hdr, (int)len, bound);
        if (n <= 0 && len > 0)
            return mcdc_error_set(MCDC_ERROR, "%s: compression failed", mcdc_pq__codec_name(codec));
        if (hdr) {
            put_be32(dst, (uint32_t)len);
            put_be32(dst + 4, (uint32_t)n);
        }
        out->len += hdr + (size_t)n;
        out->ptr[out->len] = 0;
        return 0;
    }
    default:
        return unsupported(codec);
    }
}

static int size_mismatch(int codec, size_t got, size_t want)
{
    return mcdc_error_set(MCDC_ECORRUPT, "%s: inflates to %zu bytes, the page says %zu",
                          mcdc_pq__codec_name(codec), got, want);
}

static int gzip_decompress(uint8_t *dst, size_t dst_len, const uint8_t *src, size_t src_len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return mcdc_error_set(MCDC_ERROR, "GZIP: inflateInit2 failed");
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)src_len;
    z.next_out = dst;
    z.avail_out = (uInt)dst_len;
    int rc = 0;
    for (;;) {
        int zr = inflate(&z, Z_FINISH);
        if (zr == Z_STREAM_END) {
            /* Another member may follow (concatenated gzip); padding zeros end it. */
            if (z.avail_in == 0 || z.next_in[0] == 0)
                break;
            if (inflateReset(&z) != Z_OK) {
                rc = mcdc_error_set(MCDC_ERROR, "GZIP: inflateReset failed");
                break;
            }
            continue;
        }
        if (zr == Z_BUF_ERROR && z.avail_out == 0) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "GZIP: inflates to more than the %zu bytes the "
                                "page says", dst_len);
            break;
        }
        rc = mcdc_error_set(MCDC_ECORRUPT, "GZIP: %s", z.msg ? z.msg : "truncated stream");
        break;
    }
    size_t got = dst_len - z.avail_out;
    inflateEnd(&z);
    if (rc == 0 && got != dst_len)
        rc = size_mismatch(MCDC_PQ_CODEC_GZIP, got, dst_len);
    return rc;
}

/* Hadoop LZ4 framing; returns 1 (not an error) when the input does not parse as such, so
 * the caller can try a bare block. */
static int hadoop_lz4(uint8_t *dst, size_t dst_len, const uint8_t *src, size_t src_len)
{
    size_t out = 0;
    while (src_len > 0) {
        if (src_len < 8)
            return 1;
        uint32_t ulen = get_be32(src), clen = get_be32(src + 4);
        src += 8;
        src_len -= 8;
        if (clen > src_len || ulen > dst_len - out || clen > INT_MAX || ulen > INT_MAX)
            return 1;
        int n = LZ4_decompress_safe((const char *)src, (char *)dst + out, (int)clen, (int)ulen);
        if (n < 0 || (uint32_t)n != ulen)
            return 1;
        out += ulen;
        src += clen;
        src_len -= clen;
    }
    return out == dst_len ? 0 : 1;
}

int mcdc_codec__decompress(void *dst, size_t dst_len, int codec, const void *src, size_t src_len)
{
    if (!mcdc_codec__supported(codec))
        return unsupported(codec);
    if (src_len == 0 && dst_len == 0)
        return 0;
    const char *name = mcdc_pq__codec_name(codec);
    switch (codec) {
    case MCDC_PQ_CODEC_UNCOMPRESSED:
        if (src_len != dst_len)
            return size_mismatch(codec, src_len, dst_len);
        memcpy(dst, src, src_len);
        return 0;
    case MCDC_PQ_CODEC_SNAPPY: {
        size_t n;
        if (snappy_uncompressed_length(src, src_len, &n) != SNAPPY_OK)
            return mcdc_error_set(MCDC_ECORRUPT, "SNAPPY: bad block header");
        if (n != dst_len)
            return size_mismatch(codec, n, dst_len);
        if (snappy_uncompress(src, src_len, dst, &n) != SNAPPY_OK || n != dst_len)
            return mcdc_error_set(MCDC_ECORRUPT, "SNAPPY: malformed block");
        return 0;
    }
    case MCDC_PQ_CODEC_GZIP:
        if (src_len > UINT_MAX || dst_len > UINT_MAX)
            return mcdc_error_set(MCDC_EINVAL, "GZIP: page over 4 GiB");
        return gzip_decompress(dst, dst_len, src, src_len);
    case MCDC_PQ_CODEC_ZSTD: {
        size_t n = ZSTD_decompress(dst, dst_len, src, src_len);
        if (ZSTD_isError(n))
            return mcdc_error_set(MCDC_ECORRUPT, "ZSTD: %s", ZSTD_getErrorName(n));
        if (n != dst_len)
            return size_mismatch(codec, n, dst_len);
        return 0;
    }
    case MCDC_PQ_CODEC_BROTLI: {
        size_t n = dst_len;
        BrotliDecoderResult br = BrotliDecoderDecompress(src_len, src, &n, dst);
        if (br != BROTLI_DECODER_RESULT_SUCCESS)
            return mcdc_error_set(MCDC_ECORRUPT, "BROTLI: %s",
                                  br == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT
                                      ? "inflates to more than the page says"
                                      : "malformed or truncated stream");
        if (n != dst_len)
            return size_mismatch(codec, n, dst_len);
        return 0;
    }
    case MCDC_PQ_CODEC_LZ4:
    case MCDC_PQ_CODEC_LZ4_RAW: {
        if (src_len > INT_MAX || dst_len > INT_MAX)
            return mcdc_error_set(MCDC_EINVAL, "%s: page over 2 GiB", name);
        if (codec == MCDC_PQ_CODEC_LZ4 && hadoop_lz4(dst, dst_len, src, src_len) == 0)
            return 0;
        int n = LZ4_decompress_safe(src, dst, (int)src_len, (int)dst_len);
        if (n < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: malformed block", name);
        if ((size_t)n != dst_len)
            return size_mismatch(codec, (size_t)n, dst_len);
        return 0;
    }
    default:
        return unsupported(codec);
    }
}
