/*
 * parquet/levels.c: RLE / bit-packing hybrid encoder and bit widths.
 *
 * One pass over the values: stretches of 8 or more equal values become RLE runs, the rest
 * are bit-packed in groups of 8. n copies of one value (encode_repeat) give the bytes the
 * array encoder would, without the array. Cost O(n); output at most about n * w / 8 + n / 8 * 5
 * bytes. Format and a worked example: levels.h.
 */
#include "parquet/levels.h"

#include <assert.h>
#include <string.h>

int mcdc_rle__bit_width(uint64_t max_value)
{
    return max_value ? 64 - __builtin_clzll(max_value) : 0;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

static int rle_run(mcdc_buf *out, uint32_t value, size_t count, int w)
{
    uint8_t tmp[16];
    size_t n = put_varint(tmp, (uint64_t)count << 1);
    for (int b = 0; b < (w + 7) / 8; b++)
        tmp[n++] = (uint8_t)(value >> (8 * b));
    return mcdc_buf_put(out, tmp, n);
}

#define DEFINE_ENCODER(NAME, T)                                                               \
    static int NAME##_packed(mcdc_buf *out, const T *v, size_t count, int w)                 \
    {                                                                                         \
        size_t groups = (count + 7) / 8;                                                      \
        int rc = mcdc_buf_grow(out, 10 + groups * (size_t)w);                                 \
        if (rc < 0)                                                                           \
            return rc;                                                                        \
        uint8_t *p = (uint8_t *)out->ptr + out->len;                                          \
        p += put_varint(p, ((uint64_t)groups << 1) | 1);                                      \
        uint64_t acc = 0;                                                                     \
        int nbits = 0;                                                                        \
        for (size_t i = 0; i < groups * 8; i++) {                                             \
            uint64_t x = i < count ? v[i] : 0;                                                \
            acc |= x << nbits;                                                                \
            nbits += w;                                                                       \
            while (nbits >= 8) {                                                              \
                *p++ = (uint8_t)acc;                                                          \
                acc >>= 8;                                                                    \
                nbits -= 8;                                                                   \
            }                                                                                 \
        }                                                                                     \
        out->len = (size_t)(p - (uint8_t *)out->ptr);                                         \
        out->ptr[out->len] = 0;                                                               \
        return 0;                                                                             \
    }                                                                                         \
    int mcdc_rle__encode_##NAME(mcdc_buf *out, const T *v, size_t n, int w, bool length_prefix) \
    {                                                                                         \
        if (w < 0 || w > 32)                                                                  \
            return mcdc_error_set(MCDC_EINVAL, "rle: bit width %d is over 32", w);            \
        size_t start = out->len;                                                              \
        int rc = 0;                                                                           \
        if (length_prefix && (rc = mcdc_buf_put(out, "\0\0\0\0", 4)) < 0)                     \
            return rc;                                                                        \
        size_t ps = 0; /* start of the pending bit-packed stretch [ps, i) */                  \
        size_t i = 0;                                                                         \
        while (i < n && rc == 0) {                                                            \
            assert(w == 32 || (uint64_t)v[i] < ((uint64_t)1 << w));                           \
            size_t run = 1;                                                                   \
            while (i + run < n && v[i + run] == v[i])                                         \
                run++;                                                                        \
            if (run < 8) {                                                                    \
                i += run;                                                                     \
                continue;                                                                     \
            }                                                                                 \
            size_t pend = i - ps;                                                             \
            if (pend % 8) {                                                                   \
                size_t take = 8 - pend % 8; /* finish the group with values of the run */    \
                i += take;                                                                    \
                continue;                                                                     \
            }                                                                                 \
            if (pend)                                                                         \
                rc = NAME##_packed(out, v + ps, pend, w);                                     \
            if (rc == 0)                                                                      \
                rc = rle_run(out, v[i], run, w);                                              \
            i += run;                                                                         \
            ps = i;                                                                           \
        }                                                                                     \
        if (rc == 0 && ps < n)                                                                \
            rc = NAME##_packed(out, v + ps, n - ps, w);                                       \
        if (rc < 0) {                                                                         \
            out->len = start;                                                                 \
            if (out->ptr)                                                                     \
                out->ptr[start] = 0;                                                          \
            return rc;                                                                        \
        }                                                                                     \
        if (length_prefix) {                                                                  \
            uint32_t len = (uint32_t)(out->len - start - 4);                                  \
            uint8_t *p = (uint8_t *)out->ptr + start;                                         \
            p[0] = (uint8_t)len;                                                              \
            p[1] = (uint8_t)(len >> 8);                                                       \
            p[2] = (uint8_t)(len >> 16);                                                      \
            p[3] = (uint8_t)(len >> 24);                                                      \
        }                                                                                     \
        return 0;                                                                             \
    }

DEFINE_ENCODER(u16, uint16_t)
DEFINE_ENCODER(u32, uint32_t)

int mcdc_rle__encode_repeat(mcdc_buf *out, uint32_t value, size_t n, int w, bool length_prefix)
{
    if (n < 8) { /* bit-packed, as the array encoder writes it */
        uint32_t v[8];
        for (size_t i = 0; i < n; i++)
            v[i] = value;
        return mcdc_rle__encode_u32(out, v, n, w, length_prefix);
    }
    if (w < 0 || w > 32)
        return mcdc_error_set(MCDC_EINVAL, "rle: bit width %d is over 32", w);
    assert(w == 32 || (uint64_t)value < ((uint64_t)1 << w));
    size_t start = out->len;
    int rc = 0;
    if (length_prefix && (rc = mcdc_buf_put(out, "\0\0\0\0", 4)) < 0)
        return rc;
    if ((rc = rle_run(out, value, n, w)) < 0) {
        out->len = start;
        if (out->ptr)
            out->ptr[start] = 0;
        return rc;
    }
    if (length_prefix) {
        uint32_t len = (uint32_t)(out->len - start - 4);
        uint8_t *p = (uint8_t *)out->ptr + start;
        p[0] = (uint8_t)len;
        p[1] = (uint8_t)(len >> 8);
        p[2] = (uint8_t)(len >> 16);
        p[3] = (uint8_t)(len >> 24);
    }
    return 0;
}
