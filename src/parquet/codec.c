/*
 * parquet/codec.c: compress and decompress page bodies with snappy, zlib (gzip), zstd,
 * brotli and lz4.
 *
 * Every decompression yields exactly the size the page header states: output never
 * exceeds it, and a result of any other size is an error. Memory follows the output, not
 * the header: a size beyond what the input could inflate to (the codec's maximum ratio,
 * or the size snappy and zstd frames state) is refused before anything is allocated, and
 * the streamed codecs (gzip, zstd, brotli) grow their buffer as the output arrives, so a
 * header that lies costs no more than the data really inflates to. Inputs larger than
 * the libraries' int limits are refused rather than truncated. Formats: codec.h.
 */
#include "parquet/codec.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <limits.h>
#include <stdlib.h>
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

static int too_much(int codec, size_t want)
{
    return mcdc_error_set(MCDC_ECORRUPT, "%s: inflates to more than the %zu bytes the page says",
                          mcdc_pq__codec_name(codec), want);
}

/* ---- the output buffer ---------------------------------------------------------------- */

/* A malloc'd buffer (*p, *cap bytes) that receives exactly @p want bytes. It grows as the
 * output arrives (realloc keeps what is there), doubling from FIRST_GROW, never past want. */
typedef struct sink {
    uint8_t **p;
    size_t   *cap;
    size_t    want;
} sink;

#define FIRST_GROW ((size_t)64 << 10)

/* Make the buffer hold at least @p need bytes (need <= want). */
static int sink_reserve(sink *o, size_t need)
{
    if (*o->p && *o->cap >= need)
        return 0;
    uint8_t *q = realloc(*o->p, need ? need : 1);
    if (!q)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory for a page of %zu bytes", need);
    *o->p = q;
    *o->cap = need ? need : 1;
    return 0;
}

/* Room past @p got for the next piece of output: twice the buffer, at least FIRST_GROW,
 * at most want. Returns the bytes free past got (0 when got == want). */
static int sink_more(sink *o, size_t got, size_t *room)
{
    size_t have = *o->p ? *o->cap : 0;
    if (have > o->want)
        have = o->want;
    if (got < have) {
        *room = have - got;
        return 0;
    }
    size_t next = have < FIRST_GROW / 2 ? FIRST_GROW : have;
    next = next > o->want - have ? o->want : have + next;
    int rc = sink_reserve(o, next);
    *room = rc < 0 ? 0 : next - got;
    return rc;
}

/* ---- codecs ----------------------------------------------------------------------------- */

/* Deflate turns one input byte into at most 258 / (1/4 byte) = 1032 output bytes (zlib's
 * technical details); an LZ4 sequence gains at most 255 output bytes per input byte. */
#define DEFLATE_MAX_RATIO 1032
#define LZ4_MAX_RATIO     255

size_t mcdc_codec__inflate_bound(int codec, const void *src, size_t src_len)
{
    size_t n;
    switch (codec) {
    case MCDC_PQ_CODEC_UNCOMPRESSED:
        return src_len;
    case MCDC_PQ_CODEC_SNAPPY:
        return snappy_uncompressed_length(src, src_len, &n) == SNAPPY_OK ? n : 0;
    case MCDC_PQ_CODEC_GZIP:
        return mcdc_mul_overflow(src_len, DEFLATE_MAX_RATIO, &n) ? SIZE_MAX : n;
    case MCDC_PQ_CODEC_LZ4:
    case MCDC_PQ_CODEC_LZ4_RAW:
        return mcdc_mul_overflow(src_len, LZ4_MAX_RATIO, &n) ? SIZE_MAX : n;
    default: /* ZSTD and BROTLI streams have no bound short of their own end */
        return SIZE_MAX;
    }
}

static int gzip_decompress(sink *o, const uint8_t *src, size_t src_len)
{
    if (src_len > UINT_MAX || o->want > UINT_MAX)
        return mcdc_error_set(MCDC_EINVAL, "GZIP: page over 4 GiB");
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK)
        return mcdc_error_set(MCDC_ERROR, "GZIP: inflateInit2 failed");
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)src_len;
    size_t got = 0, room = 0;
    int rc = 0;
    for (;;) {
        if ((rc = sink_more(o, got, &room)) < 0)
            break;
        z.next_out = *o->p + got;
        z.avail_out = (uInt)room;
        int zr = inflate(&z, Z_FINISH);
        got += room - z.avail_out;
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
        if ((zr == Z_BUF_ERROR || zr == Z_OK) && z.avail_out == 0) {
            if (got < o->want)
                continue; /* more room, more output */
            rc = too_much(MCDC_PQ_CODEC_GZIP, o->want);
            break;
        }
        rc = mcdc_error_set(MCDC_ECORRUPT, "GZIP: %s", z.msg ? z.msg : "truncated stream");
        break;
    }
    inflateEnd(&z);
    if (rc == 0 && got != o->want)
        rc = size_mismatch(MCDC_PQ_CODEC_GZIP, got, o->want);
    return rc;
}

void mcdc_codec__dctx_dispose(mcdc_codec_dctx *d)
{
    ZSTD_freeDCtx(d->zstd);
    d->zstd = NULL;
}

static int zstd_decompress(sink *o, const uint8_t *src, size_t src_len, mcdc_codec_dctx *ctx)
{
    /* one frame that states its size: checked, then decoded in one call */
    unsigned long long fs = ZSTD_getFrameContentSize(src, src_len);
    if (fs != ZSTD_CONTENTSIZE_UNKNOWN && fs != ZSTD_CONTENTSIZE_ERROR &&
        ZSTD_findFrameCompressedSize(src, src_len) == src_len) {
        if (fs != o->want)
            return size_mismatch(MCDC_PQ_CODEC_ZSTD, fs > SIZE_MAX ? SIZE_MAX : (size_t)fs, o->want);
        int rc = sink_reserve(o, o->want);
        if (rc < 0)
            return rc;
        if (ctx && !ctx->zstd && !(ctx->zstd = ZSTD_createDCtx()))
            return mcdc_error_set(MCDC_ENOMEM, "ZSTD: out of memory for a decoder");
        size_t n = ctx ? ZSTD_decompressDCtx(ctx->zstd, *o->p, o->want, src, src_len)
                       : ZSTD_decompress(*o->p, o->want, src, src_len);
        if (ZSTD_isError(n))
            return mcdc_error_set(MCDC_ECORRUPT, "ZSTD: %s", ZSTD_getErrorName(n));
        return n == o->want ? 0 : size_mismatch(MCDC_PQ_CODEC_ZSTD, n, o->want);
    }
    /* else streamed: frames without sizes, or several */
    ZSTD_DCtx *d = ZSTD_createDCtx();
    if (!d)
        return mcdc_error_set(MCDC_ENOMEM, "ZSTD: out of memory for a decoder");
    ZSTD_inBuffer in = { src, src_len, 0 };
    size_t got = 0, room = 0, zr = 1;
    int rc = 0;
    while (rc == 0) {
        if ((rc = sink_more(o, got, &room)) < 0)
            break;
        uint8_t spare; /* at want: one more byte would be too much */
        ZSTD_outBuffer out = { room ? *o->p + got : &spare, room ? room : 1, 0 };
        size_t in_before = in.pos;
        zr = ZSTD_decompressStream(d, &out, &in);
        if (ZSTD_isError(zr)) {
            rc = mcdc_error_set(MCDC_ECORRUPT, "ZSTD: %s", ZSTD_getErrorName(zr));
            break;
        }
        if (!room && out.pos) {
            rc = too_much(MCDC_PQ_CODEC_ZSTD, o->want);
            break;
        }
        got += room ? out.pos : 0;
        if (zr == 0 && in.pos == in.size)
            break; /* every frame decoded and flushed */
        if (out.pos < out.size && in.pos == in.size && in.pos == in_before)
            rc = mcdc_error_set(MCDC_ECORRUPT, "ZSTD: truncated stream");
    }
    ZSTD_freeDCtx(d);
    if (rc == 0 && got != o->want)
        rc = size_mismatch(MCDC_PQ_CODEC_ZSTD, got, o->want);
    return rc;
}

static int brotli_decompress(sink *o, const uint8_t *src, size_t src_len)
{
    BrotliDecoderState *s = BrotliDecoderCreateInstance(NULL, NULL, NULL);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "BROTLI: out of memory for a decoder");
    const uint8_t *next_in = src;
    size_t avail_in = src_len, got = 0, room = 0;
    int rc = 0;
    for (;;) {
        if ((rc = sink_more(o, got, &room)) < 0)
            break;
        uint8_t *next_out = *o->p + got;
        size_t avail_out = room;
        BrotliDecoderResult br =
            BrotliDecoderDecompressStream(s, &avail_in, &next_in, &avail_out, &next_out, NULL);
        got += room - avail_out;
        if (br == BROTLI_DECODER_RESULT_SUCCESS)
            break;
        if (br == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT) {
            if (got < o->want)
                continue;
            rc = too_much(MCDC_PQ_CODEC_BROTLI, o->want);
            break;
        }
        rc = mcdc_error_set(MCDC_ECORRUPT, "BROTLI: %s",
                            br == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT
                                ? "truncated stream"
                                : BrotliDecoderErrorString(BrotliDecoderGetErrorCode(s)));
        break;
    }
    BrotliDecoderDestroyInstance(s);
    if (rc == 0 && got != o->want)
        rc = size_mismatch(MCDC_PQ_CODEC_BROTLI, got, o->want);
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

int mcdc_codec__decompress(uint8_t **dst, size_t *cap, size_t dst_len, int codec, const void *src,
                           size_t src_len)
{
    return mcdc_codec__decompress_ctx(NULL, dst, cap, dst_len, codec, src, src_len);
}

int mcdc_codec__decompress_ctx(mcdc_codec_dctx *ctx, uint8_t **dst, size_t *cap, size_t dst_len,
                               int codec, const void *src, size_t src_len)
{
    if (!mcdc_codec__supported(codec))
        return unsupported(codec);
    const char *name = mcdc_pq__codec_name(codec);
    size_t bound = mcdc_codec__inflate_bound(codec, src, src_len);
    bool exact = codec == MCDC_PQ_CODEC_UNCOMPRESSED || codec == MCDC_PQ_CODEC_SNAPPY;
    if (exact && bound != dst_len)
        return size_mismatch(codec, bound, dst_len);
    if (dst_len > bound)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: %zu bytes cannot inflate to the %zu bytes "
                              "the page says (at most %zu)", name, src_len, dst_len, bound);
    sink o = { dst, cap, dst_len };
    if (src_len == 0 && dst_len == 0)
        return sink_reserve(&o, 0);
    int rc;
    switch (codec) {
    case MCDC_PQ_CODEC_GZIP:
        return gzip_decompress(&o, src, src_len);
    case MCDC_PQ_CODEC_ZSTD:
        return zstd_decompress(&o, src, src_len, ctx);
    case MCDC_PQ_CODEC_BROTLI:
        return brotli_decompress(&o, src, src_len);
    default:
        break;
    }
    /* the codecs decoded in one call, into the whole size (within their bound) */
    if ((rc = sink_reserve(&o, dst_len)) < 0)
        return rc;
    switch (codec) {
    case MCDC_PQ_CODEC_UNCOMPRESSED:
        memcpy(*dst, src, src_len);
        return 0;
    case MCDC_PQ_CODEC_SNAPPY: {
        size_t n = dst_len;
        if (snappy_uncompress(src, src_len, (char *)*dst, &n) != SNAPPY_OK || n != dst_len)
            return mcdc_error_set(MCDC_ECORRUPT, "SNAPPY: malformed block");
        return 0;
    }
    case MCDC_PQ_CODEC_LZ4:
    case MCDC_PQ_CODEC_LZ4_RAW: {
        if (src_len > INT_MAX || dst_len > INT_MAX)
            return mcdc_error_set(MCDC_EINVAL, "%s: page over 2 GiB", name);
        if (codec == MCDC_PQ_CODEC_LZ4 && hadoop_lz4(*dst, dst_len, src, src_len) == 0)
            return 0;
        int n = LZ4_decompress_safe(src, (char *)*dst, (int)src_len, (int)dst_len);
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
