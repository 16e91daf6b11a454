/* Unit tests for parquet/levels.c: the RLE / bit-packing hybrid encoder, checked byte for
 * byte on hand-worked streams and by a small reference decoder on random data. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "parquet/levels.h"

/* Reference decoder (straight from Encodings.md, deliberately simple). */
static size_t ref_decode(const uint8_t *p, size_t len, int w, uint32_t *out, size_t n)
{
    size_t pos = 0, got = 0;
    while (got < n && pos < len) {
        uint64_t h = 0;
        int shift = 0;
        while (p[pos] & 0x80)
            h |= (uint64_t)(p[pos++] & 0x7F) << shift, shift += 7;
        h |= (uint64_t)p[pos++] << shift;
        if (h & 1) {
            size_t count = (size_t)(h >> 1) * 8;
            for (size_t i = 0; i < count; i++) {
                uint32_t v = 0;
                for (int b = 0; b < w; b++) {
                    size_t bit = i * (size_t)w + (size_t)b;
                    v |= (uint32_t)((p[pos + bit / 8] >> (bit % 8)) & 1) << b;
                }
                if (got < n)
                    out[got++] = v;
            }
            pos += (size_t)(h >> 1) * (size_t)w;
        } else {
            uint32_t v = 0;
            for (int b = 0; b < (w + 7) / 8; b++)
                v |= (uint32_t)p[pos++] << (8 * b);
            for (size_t i = 0; i < (h >> 1) && got < n; i++)
                out[got++] = v;
        }
    }
    return got;
}

static void test_parquet_levels__bit_widths(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_rle__bit_width(0));
    assert_int_equal(1, mcdc_rle__bit_width(1));
    assert_int_equal(2, mcdc_rle__bit_width(2));
    assert_int_equal(2, mcdc_rle__bit_width(3));
    assert_int_equal(3, mcdc_rle__bit_width(4));
    assert_int_equal(8, mcdc_rle__bit_width(255));
    assert_int_equal(9, mcdc_rle__bit_width(256));
    assert_int_equal(64, mcdc_rle__bit_width(UINT64_MAX));
}

static void test_parquet_levels__header_example_byte_for_byte(void **state)
{
    (void)state;
    const uint16_t v[] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0 };
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_rle__encode_u16(&b, v, 13, 1, true));
    const uint8_t want[] = { 0x04, 0x00, 0x00, 0x00, 0x14, 0x01, 0x03, 0x02 };
    assert_int_equal(sizeof want, b.len);
    assert_memory_equal(want, b.ptr, sizeof want);
    mcdc_buf_dispose(&b);
}

static void test_parquet_levels__short_run_after_odd_prefix_is_packed(void **state)
{
    (void)state;
    /* 3 distinct values then 9 sevens (width 3): the first 5 sevens finish the packed
     * group, the last 4 are too few for a run and join a second group.
     * packed: 2 groups, header (2<<1)|1 = 5, then 6 bytes */
    const uint32_t v[] = { 1, 2, 3, 7, 7, 7, 7, 7, 7, 7, 7, 7 };
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_rle__encode_u32(&b, v, 12, 3, false));
    assert_int_equal(7, b.len);
    assert_int_equal(0x05, (uint8_t)b.ptr[0]);
    /* values 1,2,3,7,7,7,7,7 in 3 bits LSB first: 001 010 011 111 111 111 111 111
     * -> byte0 = 0b11_010_001 = 0xD1 */
    assert_int_equal(0xD1, (uint8_t)b.ptr[1]);
    uint32_t out[12];
    assert_int_equal(12, ref_decode((uint8_t *)b.ptr, b.len, 3, out, 12));
    assert_memory_equal(v, out, sizeof v);
    /* 8 sevens after a full group: an RLE run 0x10 0x07 follows the packed group. */
    const uint32_t v2[] = { 0, 1, 2, 3, 4, 5, 6, 5, 7, 7, 7, 7, 7, 7, 7, 7 };
    mcdc_buf_clear(&b);
    assert_int_equal(0, mcdc_rle__encode_u32(&b, v2, 16, 3, false));
    assert_int_equal(1 + 3 + 2, b.len);
    assert_int_equal(0x03, (uint8_t)b.ptr[0]);
    assert_int_equal(0x10, (uint8_t)b.ptr[4]);
    assert_int_equal(0x07, (uint8_t)b.ptr[5]);
    mcdc_buf_dispose(&b);
}

static void test_parquet_levels__width_zero_and_wide_values(void **state)
{
    (void)state;
    uint16_t zeros[100] = { 0 };
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_rle__encode_u16(&b, zeros, 100, 0, false));
    assert_int_equal(2, b.len); /* varint(200) = C8 01, no value bytes */
    assert_int_equal(0xC8, (uint8_t)b.ptr[0]);
    mcdc_buf_clear(&b);
    const uint32_t big[] = { 0xFFFFFFFFu, 0x12345678u, 0, 0xFFFFFFFFu };
    assert_int_equal(0, mcdc_rle__encode_u32(&b, big, 4, 32, false));
    uint32_t out[4];
    assert_int_equal(4, ref_decode((uint8_t *)b.ptr, b.len, 32, out, 4));
    assert_memory_equal(big, out, sizeof big);
    assert_int_equal(MCDC_EINVAL, mcdc_rle__encode_u32(&b, big, 4, 33, false));
    mcdc_buf_dispose(&b);
}

static void test_parquet_levels__repeat_matches_the_array_encoder(void **state)
{
    (void)state;
    const size_t counts[] = { 0, 1, 7, 8, 9, 100, 20000, 200000 };
    const int widths[] = { 1, 2, 7, 9, 16, 32 };
    static uint32_t v[200000];
    for (size_t ci = 0; ci < sizeof counts / sizeof *counts; ci++) {
        for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++) {
            int w = widths[wi];
            uint32_t value = w == 32 ? 0xFEDCBA98u : (1u << w) - 1;
            for (size_t i = 0; i < counts[ci]; i++)
                v[i] = value;
            for (int prefix = 0; prefix < 2; prefix++) {
                mcdc_buf a = MCDC_BUF_INIT(1 << 20), b = MCDC_BUF_INIT(1 << 20);
                assert_int_equal(0, mcdc_buf_put(&a, "x", 1));
                assert_int_equal(0, mcdc_buf_put(&b, "x", 1));
                assert_int_equal(0, mcdc_rle__encode_u32(&a, v, counts[ci], w, prefix));
                assert_int_equal(0, mcdc_rle__encode_repeat(&b, value, counts[ci], w, prefix));
                assert_int_equal(a.len, b.len);
                assert_memory_equal(a.ptr, b.ptr, a.len);
                mcdc_buf_dispose(&a);
                mcdc_buf_dispose(&b);
            }
        }
    }
    mcdc_buf out = MCDC_BUF_INIT(64);
    assert_int_equal(MCDC_EINVAL, mcdc_rle__encode_repeat(&out, 1, 100, 33, true));
    assert_int_equal(0, out.len);
    mcdc_buf_dispose(&out);
}

static void test_parquet_levels__random_runs_round_trip(void **state)
{
    (void)state;
    uint32_t seed = 7;
    for (int iter = 0; iter < 300; iter++) {
        seed = seed * 1103515245u + 12345u;
        int w = (int)(seed >> 16) % 21;
        size_t n = (seed >> 8) % 3000;
        uint32_t *v = malloc((n + 1) * sizeof *v), *out = malloc((n + 1) * sizeof *out);
        for (size_t i = 0; i < n;) {
            seed = seed * 1103515245u + 12345u;
            uint32_t x = w ? (seed >> 3) & (uint32_t)((1ull << w) - 1) : 0;
            size_t run = (seed >> 28) < 4 ? 1 + (seed >> 20) % 40 : 1;
            for (size_t k = 0; k < run && i < n; k++)
                v[i++] = x;
        }
        mcdc_buf b = MCDC_BUF_INIT(1 << 24);
        assert_int_equal(0, mcdc_rle__encode_u32(&b, v, n, w, true));
        uint32_t len = (uint8_t)b.ptr[0] | (uint32_t)(uint8_t)b.ptr[1] << 8 |
                       (uint32_t)(uint8_t)b.ptr[2] << 16 | (uint32_t)(uint8_t)b.ptr[3] << 24;
        assert_int_equal(b.len - 4, len);
        assert_int_equal(n, ref_decode((uint8_t *)b.ptr + 4, len, w, out, n));
        if (n)
            assert_memory_equal(v, out, n * sizeof *v);
        mcdc_buf_dispose(&b);
        free(v);
        free(out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_levels__bit_widths),
        cmocka_unit_test(test_parquet_levels__header_example_byte_for_byte),
        cmocka_unit_test(test_parquet_levels__short_run_after_odd_prefix_is_packed),
        cmocka_unit_test(test_parquet_levels__width_zero_and_wide_values),
        cmocka_unit_test(test_parquet_levels__repeat_matches_the_array_encoder),
        cmocka_unit_test(test_parquet_levels__random_runs_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
