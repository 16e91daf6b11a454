/*
 * parquet/decode.c: the Parquet encodings, decoded over a bounded cursor.
 *
 * Guarantees: no read at or past cursor->end; every count from the input is checked
 * against the bytes left (in 64-bit arithmetic) and the caller's capacity before a loop
 * or an allocation uses it; corrupt input returns MCDC_ECORRUPT with a one-line reason.
 * Formats and worked examples: decode.h; the spec is parquet-format's Encodings.md.
 */
#include "parquet/decode.h"

#include <inttypes.h>
#include <string.h>

#include "mcdc/error.h"

#define CORRUPT(...) mcdc_error_set(MCDC_ECORRUPT, __VA_ARGS__)

int mcdc_pqdec_uleb(mcdc_pqdec_cursor *c, uint64_t *out)
{
    uint64_t v = 0;
    *out = 0; /* defined on every path, failures included */
    for (int shift = 0; shift < 70; shift += 7) {
        if (c->pos >= c->end)
            return CORRUPT("varint: truncated");
        uint8_t b = *c->pos++;
        if (shift == 63 && (b & 0x7e))
            return CORRUPT("varint: more than 64 bits");
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return CORRUPT("varint: more than 10 bytes");
}

static inline uint64_t zigzag(uint64_t v)
{
    return (v >> 1) ^ (~(v & 1) + 1);
}

/* Read @p width bits (0..64) at bit offset @p bit of @p p, LSB first. The caller
 * guarantees that bytes [bit/8, (bit+width+7)/8) are readable. */
static inline uint64_t get_bits_lsb(const uint8_t *p, uint64_t bit, int width)
{
    if (width == 0)
        return 0;
    const uint8_t *q = p + (bit >> 3);
    int shift = (int)(bit & 7);
    int n_bytes = (shift + width + 7) >> 3; /* 1..9 */
    uint64_t lo = 0;
    int i = 0;
    for (; i < n_bytes && i < 8; i++)
        lo |= (uint64_t)q[i] << (8 * i);
    uint64_t v = lo >> shift;
    if (n_bytes == 9)
        v |= (uint64_t)q[8] << (64 - shift);
    if (width < 64)
        v &= ((uint64_t)1 << width) - 1;
    return v;
}

/* ---- RLE / bit-packed hybrid ---------------------------------------------------------- */

/* Eight bytes at @p p as a little-endian number. */
static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* The hybrid decoder, once per output type: a bit-packed value is read with one 8-byte
 * load while eight bytes are readable from its first byte (width <= 32 and a shift of
 * at most 7 fit in 64 bits), else byte by byte; an RLE run is a fill. */
#define DEFINE_RLE(NAME, T, MAX_WIDTH)                                                      \
    int NAME(mcdc_pqdec_cursor *c, int bit_width, T *out, size_t n)                          \
    {                                                                                        \
        if (bit_width < 0 || bit_width > MAX_WIDTH)                                          \
            return CORRUPT("rle: bit width %d outside 0..%d", bit_width, MAX_WIDTH);         \
        size_t got = 0;                                                                      \
        size_t value_bytes = (size_t)(bit_width + 7) / 8;                                    \
        uint64_t mask = bit_width == 0 ? 0 : ((uint64_t)1 << bit_width) - 1;                 \
        while (got < n) {                                                                    \
            uint64_t header;                                                                 \
            if (c->pos >= c->end)                                                            \
                return CORRUPT("rle: data ends after %zu of %zu values", got, n);            \
            if (mcdc_pqdec_uleb(c, &header) < 0)                                             \
                return CORRUPT("rle: truncated run header after %zu of %zu values", got, n); \
            if (header & 1) {                                                                \
                uint64_t groups = header >> 1;                                               \
                if (groups > (uint64_t)1 << 40)                                              \
                    return CORRUPT("rle: bit-packed run of %" PRIu64 " groups", groups);     \
                uint64_t run_values = groups * 8;                                            \
                uint64_t run_bytes = groups * (uint64_t)bit_width;                           \
                uint64_t need = n - got < run_values ? n - got : run_values;                 \
                uint64_t need_bytes = (need * (uint64_t)bit_width + 7) / 8;                  \
                size_t left = mcdc_pqdec_left(c);                                            \
                if (need_bytes > left)                                                       \
                    return CORRUPT("rle: bit-packed run needs %" PRIu64 " bytes, %zu left",  \
                                   need_bytes, left);                                        \
                const uint8_t *p = c->pos;                                                   \
                T *o = out + got;                                                            \
                uint64_t i = 0;                                                              \
                if (bit_width > 0 && left >= 8) {                                            \
                    uint64_t fast = ((uint64_t)(left - 8) * 8) / (uint64_t)bit_width + 1;    \
                    if (fast > need)                                                         \
                        fast = need;                                                         \
                    for (; i < fast; i++) {                                                  \
                        uint64_t bit = i * (uint64_t)bit_width;                              \
                        o[i] = (T)((load_le64(p + (bit >> 3)) >> (bit & 7)) & mask);         \
                    }                                                                        \
                }                                                                            \
                for (; i < need; i++)                                                        \
                    o[i] = (T)get_bits_lsb(p, i * (uint64_t)bit_width, bit_width);           \
                got += (size_t)need;                                                         \
                /* a final run may be cut short of its padding; skip what is there */        \
                c->pos += run_bytes <= left ? run_bytes : left;                              \
            } else {                                                                         \
                uint64_t count = header >> 1;                                                \
                if (value_bytes > mcdc_pqdec_left(c))                                        \
                    return CORRUPT("rle: run value needs %zu bytes, %zu left", value_bytes,  \
                                   mcdc_pqdec_left(c));                                      \
                uint32_t v = 0;                                                              \
                for (size_t i = 0; i < value_bytes; i++)                                     \
                    v |= (uint32_t)c->pos[i] << (8 * i);                                     \
                c->pos += value_bytes;                                                       \
                if (bit_width < 32 && (v >> bit_width) != 0)                                 \
                    return CORRUPT("rle: run value %" PRIu32 " wider than %d bits", v,       \
                                   bit_width);                                               \
                uint64_t take = n - got < count ? n - got : count;                           \
                for (uint64_t i = 0; i < take; i++)                                          \
                    out[got + i] = (T)v;                                                     \
                got += (size_t)take;                                                         \
            }                                                                                \
        }                                                                                    \
        return 0;                                                                            \
    }                                                                                        \
                                                                                             \
    int NAME##_prefixed(mcdc_pqdec_cursor *c, int bit_width, T *out, size_t n)               \
    {                                                                                        \
        if (mcdc_pqdec_left(c) < 4)                                                          \
            return CORRUPT("rle: length prefix truncated (%zu bytes left)",                  \
                           mcdc_pqdec_left(c));                                              \
        uint32_t len = (uint32_t)c->pos[0] | (uint32_t)c->pos[1] << 8 |                      \
                       (uint32_t)c->pos[2] << 16 | (uint32_t)c->pos[3] << 24;                \
        c->pos += 4;                                                                         \
        if (len > mcdc_pqdec_left(c))                                                        \
            return CORRUPT("rle: length prefix %" PRIu32 " exceeds the %zu bytes left", len, \
                           mcdc_pqdec_left(c));                                              \
        mcdc_pqdec_cursor sub = { c->pos, c->pos + len };                                    \
        c->pos += len;                                                                       \
        return NAME(&sub, bit_width, out, n);                                                \
    }

DEFINE_RLE(mcdc_pqdec_rle, uint32_t, 32)
DEFINE_RLE(mcdc_pqdec_rle_u8, uint8_t, 8)

int mcdc_pqdec_bitpacked_legacy(mcdc_pqdec_cursor *c, int bit_width, uint32_t *out, size_t n)
{
    if (bit_width < 0 || bit_width > 32)
        return CORRUPT("bit-packed: bit width %d outside 0..32", bit_width);
    uint64_t bytes = ((uint64_t)n * (uint64_t)bit_width + 7) / 8;
    if (bytes > mcdc_pqdec_left(c))
        return CORRUPT("bit-packed: %zu values need %" PRIu64 " bytes, %zu left", n, bytes,
                       mcdc_pqdec_left(c));
    uint64_t bit = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = 0;
        for (int k = 0; k < bit_width; k++, bit++)
            v = (v << 1) | ((c->pos[bit >> 3] >> (7 - (bit & 7))) & 1);
        out[i] = v;
    }
    c->pos += bytes;
    return 0;
}

/* ---- PLAIN ---------------------------------------------------------------------------- */

static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int fixed_width(int ptype, int32_t type_len, size_t *out)
{
    *out = 0; /* defined on every path, failures included */
    switch (ptype) {
    case MCDC_PQDEC_INT32:
    case MCDC_PQDEC_FLOAT: *out = 4; return 0;
    case MCDC_PQDEC_INT64:
    case MCDC_PQDEC_DOUBLE: *out = 8; return 0;
    case MCDC_PQDEC_INT96: *out = 12; return 0;
    case MCDC_PQDEC_FIXED_LEN_BYTE_ARRAY:
        if (type_len <= 0)
            return CORRUPT("fixed_len_byte_array: type length %" PRId32, type_len);
        *out = (size_t)type_len;
        return 0;
    default: return CORRUPT("physical type %d has no fixed width", ptype);
    }
}

static void set_fixed(mcdc_pqdec_val *v, int ptype, const uint8_t *p, size_t w)
{
    switch (ptype) {
    case MCDC_PQDEC_INT32: v->i32 = (int32_t)le32(p); break;
    case MCDC_PQDEC_INT64: v->i64 = (int64_t)le64(p); break;
    case MCDC_PQDEC_FLOAT: {
        uint32_t u = le32(p);
        memcpy(&v->f, &u, 4);
        break;
    }
    case MCDC_PQDEC_DOUBLE: {
        uint64_t u = le64(p);
        memcpy(&v->d, &u, 8);
        break;
    }
    default:
        v->ba.ptr = p;
        v->ba.len = (uint32_t)w;
        break;
    }
}

int mcdc_pqdec_plain_span(mcdc_pqdec_cursor *c, int ptype, int32_t type_len, size_t n,
                          const uint8_t **span, size_t *width)
{
    *span = NULL;
    size_t w, total;
    int rc = fixed_width(ptype, type_len, &w);
    *width = w;
    if (rc < 0)
        return rc;
    if (mcdc_mul_overflow(w, n, &total) || total > mcdc_pqdec_left(c))
        return CORRUPT("plain: %zu values of %zu bytes exceed the %zu bytes left", n, w,
                       mcdc_pqdec_left(c));
    *span = c->pos;
    c->pos += total;
    return 0;
}

int mcdc_pqdec_plain(mcdc_pqdec_cursor *c, int ptype, int32_t type_len, mcdc_pqdec_val *out,
                     size_t n)
{
    if (ptype == MCDC_PQDEC_BOOLEAN) {
        size_t bytes = n / 8 + (n % 8 != 0);
        if (bytes > mcdc_pqdec_left(c))
            return CORRUPT("plain boolean: %zu values need %zu bytes, %zu left", n, bytes,
                           mcdc_pqdec_left(c));
        for (size_t i = 0; i < n; i++)
            out[i].b = (c->pos[i >> 3] >> (i & 7)) & 1;
        c->pos += bytes;
        return 0;
    }
    if (ptype == MCDC_PQDEC_BYTE_ARRAY) {
        for (size_t i = 0; i < n; i++) {
            if (mcdc_pqdec_left(c) < 4)
                return CORRUPT("plain byte_array: value %zu of %zu: length truncated", i, n);
            uint32_t len = le32(c->pos);
            c->pos += 4;
            if (len > mcdc_pqdec_left(c))
                return CORRUPT("plain byte_array: value %zu of %zu: length %" PRIu32
                               " exceeds the %zu bytes left",
                               i, n, len, mcdc_pqdec_left(c));
            out[i].ba.ptr = c->pos;
            out[i].ba.len = len;
            c->pos += len;
        }
        return 0;
    }
    const uint8_t *q;
    size_t w;
    int rc = mcdc_pqdec_plain_span(c, ptype, type_len, n, &q, &w); /* checks and advances */
    if (rc < 0)
        return rc;
    switch (ptype) { /* one loop per type: this is the hot path of PLAIN pages */
    case MCDC_PQDEC_INT32:
        for (size_t i = 0; i < n; i++)
            out[i].i32 = (int32_t)le32(q + 4 * i);
        break;
    case MCDC_PQDEC_INT64:
        for (size_t i = 0; i < n; i++)
            out[i].i64 = (int64_t)le64(q + 8 * i);
        break;
    case MCDC_PQDEC_FLOAT:
        for (size_t i = 0; i < n; i++) {
            uint32_t u = le32(q + 4 * i);
            memcpy(&out[i].f, &u, 4);
        }
        break;
    case MCDC_PQDEC_DOUBLE:
        for (size_t i = 0; i < n; i++) {
            uint64_t u = le64(q + 8 * i);
            memcpy(&out[i].d, &u, 8);
        }
        break;
    default:
        for (size_t i = 0; i < n; i++) {
            out[i].ba.ptr = q + i * w;
            out[i].ba.len = (uint32_t)w;
        }
        break;
    }
    return 0;
}

/* ---- DELTA_BINARY_PACKED -------------------------------------------------------------- */

/* The decoder behind both entry points: values go to out64[i] when it is set, else to the
 * slot outv[i] as INT32 (ptype INT32) or INT64. */
static int delta_core(mcdc_pqdec_cursor *c, int64_t *out64, mcdc_pqdec_val *outv, int ptype,
                      size_t cap, size_t *n_out)
{
    uint64_t block_size, n_mini, total, first;
    *n_out = 0;
    if (mcdc_pqdec_uleb(c, &block_size) < 0 || mcdc_pqdec_uleb(c, &n_mini) < 0 ||
        mcdc_pqdec_uleb(c, &total) < 0 || mcdc_pqdec_uleb(c, &first) < 0)
        return CORRUPT("delta_binary_packed: truncated header");
    if (block_size == 0 || block_size % 128 != 0 || block_size > ((uint64_t)1 << 20))
        return CORRUPT("delta_binary_packed: block size %" PRIu64 " is not a multiple of 128 "
                       "up to 2^20",
                       block_size);
    if (n_mini == 0 || block_size % n_mini != 0 || (block_size / n_mini) % 32 != 0)
        return CORRUPT("delta_binary_packed: %" PRIu64 " miniblocks do not split a block of %" PRIu64
                       " into multiples of 32",
                       n_mini, block_size);
    if (total > cap)
        return CORRUPT("delta_binary_packed: %" PRIu64 " values where at most %zu fit", total,
                       cap);
    uint64_t per_mini = block_size / n_mini;
    uint64_t prev = zigzag(first);
    size_t got = 0;
    if (total == 0) {
        *n_out = 0;
        return 0;
    }
#define PUT(v)                                                   \
    do {                                                         \
        if (out64)                                               \
            out64[got] = (int64_t)(v);                           \
        else if (ptype == MCDC_PQDEC_INT32)                      \
            outv[got].i32 = (int32_t)(uint32_t)(v);              \
        else                                                     \
            outv[got].i64 = (int64_t)(v);                        \
        got++;                                                   \
    } while (0)
    PUT(prev);
    uint8_t widths[256];
    if (n_mini > sizeof widths)
        return CORRUPT("delta_binary_packed: %" PRIu64 " miniblocks per block (at most 256)",
                       n_mini);
    while (got < total) {
        uint64_t min_delta;
        if (mcdc_pqdec_uleb(c, &min_delta) < 0)
            return CORRUPT("delta_binary_packed: block header truncated after %zu of %" PRIu64
                           " values",
                           got, total);
        min_delta = zigzag(min_delta);
        if (n_mini > mcdc_pqdec_left(c))
            return CORRUPT("delta_binary_packed: miniblock widths truncated after %zu of %" PRIu64
                           " values",
                           got, total);
        memcpy(widths, c->pos, (size_t)n_mini);
        c->pos += n_mini;
        for (uint64_t m = 0; m < n_mini && got < total; m++) {
            int w = widths[m];
            if (w > 64)
                return CORRUPT("delta_binary_packed: miniblock bit width %d above 64", w);
            uint64_t mini_bytes = per_mini * (uint64_t)w / 8;
            uint64_t need = total - got < per_mini ? total - got : per_mini;
            uint64_t need_bytes = (need * (uint64_t)w + 7) / 8;
            size_t left = mcdc_pqdec_left(c);
            if (need_bytes > left)
                return CORRUPT("delta_binary_packed: miniblock needs %" PRIu64 " bytes, %zu left",
                               need_bytes, left);
            for (uint64_t i = 0; i < need; i++) {
                uint64_t d = get_bits_lsb(c->pos, i * (uint64_t)w, w);
                prev = prev + min_delta + d; /* wraps, as the format says */
                PUT(prev);
            }
            c->pos += mini_bytes <= left ? mini_bytes : left;
        }
    }
#undef PUT
    *n_out = got;
    return 0;
}

int mcdc_pqdec_delta_binary(mcdc_pqdec_cursor *c, int64_t *out, size_t cap, size_t *n_out)
{
    return delta_core(c, out, NULL, MCDC_PQDEC_INT64, cap, n_out);
}

int mcdc_pqdec_delta_binary_vals(mcdc_pqdec_cursor *c, int ptype, mcdc_pqdec_val *out, size_t n)
{
    if (ptype != MCDC_PQDEC_INT32 && ptype != MCDC_PQDEC_INT64)
        return CORRUPT("delta_binary_packed: physical type %d is not INT32 or INT64", ptype);
    size_t got;
    int rc = delta_core(c, NULL, out, ptype, n, &got);
    if (rc < 0)
        return rc;
    if (got != n)
        return CORRUPT("delta_binary_packed: %zu values where %zu were expected", got, n);
    return 0;
}

/* ---- DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY ---------------------------------------- */

int mcdc_pqdec_delta_length(mcdc_pqdec_cursor *c, mcdc_pqdec_val *out, size_t n,
                            int64_t *scratch)
{
    size_t got;
    int rc = mcdc_pqdec_delta_binary(c, scratch, n, &got);
    if (rc < 0)
        return rc;
    if (got != n)
        return CORRUPT("delta_length_byte_array: %zu lengths where %zu were expected", got, n);
    for (size_t i = 0; i < n; i++) {
        int64_t len = scratch[i];
        if (len < 0 || (uint64_t)len > mcdc_pqdec_left(c))
            return CORRUPT("delta_length_byte_array: value %zu of %zu: length %" PRId64
                           " with %zu bytes left",
                           i, n, len, mcdc_pqdec_left(c));
        out[i].ba.ptr = c->pos;
        out[i].ba.len = (uint32_t)len;
        c->pos += len;
    }
    return 0;
}

int mcdc_pqdec_delta_byte_array(mcdc_pqdec_cursor *c, mcdc_pqdec_val *out, size_t n,
                                int64_t *scratch, int32_t type_len, mcdc_buf *arena)
{
    size_t got;
    int64_t *prefix = scratch, *offs = scratch + n;
    int rc = mcdc_pqdec_delta_binary(c, prefix, n, &got);
    if (rc < 0)
        return rc;
    if (got != n)
        return CORRUPT("delta_byte_array: %zu prefix lengths where %zu were expected", got, n);
    rc = mcdc_pqdec_delta_length(c, out, n, offs);
    if (rc < 0)
        return rc;
    /* build each value in the arena; record offsets, since the arena may move */
    size_t prev_off = 0, prev_len = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t p = prefix[i];
        if (p < 0 || (uint64_t)p > prev_len)
            return CORRUPT("delta_byte_array: value %zu: prefix %" PRId64
                           " longer than the previous value (%zu)",
                           i, p, prev_len);
        size_t suffix_len = out[i].ba.len, len = (size_t)p + suffix_len;
        if (len > UINT32_MAX)
            return CORRUPT("delta_byte_array: value %zu of %zu bytes", i, len);
        if (type_len > 0 && len != (size_t)type_len)
            return CORRUPT("delta_byte_array: value %zu has %zu bytes, the type says %" PRId32, i,
                           len, type_len);
        if (mcdc_buf_grow(arena, len) < 0)
            return CORRUPT("delta_byte_array: values exceed %zu bytes when built", arena->max);
        size_t off = arena->len;
        if (p > 0)
            memcpy(arena->ptr + off, arena->ptr + prev_off, (size_t)p);
        if (suffix_len)
            memcpy(arena->ptr + off + p, out[i].ba.ptr, suffix_len);
        arena->len += len;
        arena->ptr[arena->len] = 0;
        offs[i] = (int64_t)off;
        out[i].ba.len = (uint32_t)len;
        prev_off = off;
        prev_len = len;
    }
    for (size_t i = 0; i < n; i++)
        out[i].ba.ptr = (const uint8_t *)arena->ptr + offs[i];
    return 0;
}

/* ---- BYTE_STREAM_SPLIT ---------------------------------------------------------------- */

int mcdc_pqdec_byte_stream_split(mcdc_pqdec_cursor *c, int ptype, int32_t type_len,
                                 mcdc_pqdec_val *out, size_t n, mcdc_buf *arena)
{
    size_t w;
    if (ptype != MCDC_PQDEC_FLOAT && ptype != MCDC_PQDEC_DOUBLE && ptype != MCDC_PQDEC_INT32 &&
        ptype != MCDC_PQDEC_INT64 && ptype != MCDC_PQDEC_FIXED_LEN_BYTE_ARRAY)
        return CORRUPT("byte_stream_split: physical type %d not allowed", ptype);
    int rc = fixed_width(ptype, type_len, &w);
    if (rc < 0)
        return rc;
    size_t stride = mcdc_pqdec_left(c) / w;
    if (stride < n)
        return CORRUPT("byte_stream_split: %zu values of %zu bytes exceed the %zu bytes left", n,
                       w, mcdc_pqdec_left(c));
    const uint8_t *src = c->pos;
    if (ptype == MCDC_PQDEC_FIXED_LEN_BYTE_ARRAY) {
        size_t total;
        if (mcdc_mul_overflow(n, w, &total) || mcdc_buf_grow(arena, total) < 0)
            return CORRUPT("byte_stream_split: values exceed %zu bytes when built", arena->max);
        size_t off = arena->len;
        uint8_t *dst = (uint8_t *)arena->ptr + off;
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < w; k++)
                dst[i * w + k] = src[k * stride + i];
        arena->len += total;
        arena->ptr[arena->len] = 0;
        for (size_t i = 0; i < n; i++) {
            out[i].ba.ptr = dst + i * w;
            out[i].ba.len = (uint32_t)w;
        }
    } else {
        uint8_t tmp[8];
        for (size_t i = 0; i < n; i++) {
            for (size_t k = 0; k < w; k++)
                tmp[k] = src[k * stride + i];
            set_fixed(&out[i], ptype, tmp, w);
        }
    }
    c->pos += stride * w;
    return 0;
}
