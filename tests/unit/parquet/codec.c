/* Unit tests for parquet/codec.c: round trips for every codec, size mismatches, gzip
 * members, both LZ4 framings, and memory that follows the output, not the header. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "mcdc/error.h"
#include "parquet/codec.h"
#include "parquet/format.h"

static const int codecs[] = { MCDC_PQ_CODEC_UNCOMPRESSED, MCDC_PQ_CODEC_SNAPPY, MCDC_PQ_CODEC_GZIP,
                              MCDC_PQ_CODEC_BROTLI, MCDC_PQ_CODEC_LZ4, MCDC_PQ_CODEC_ZSTD,
                              MCDC_PQ_CODEC_LZ4_RAW };

static void fill(uint8_t *p, size_t n, int compressible)
{
    uint32_t s = 99;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        p[i] = compressible ? (uint8_t)("parquet "[i % 8] + (i % 64 == 0 ? s >> 31 : 0)) : (uint8_t)(s >> 24);
    }
}

/* Decompress into a buffer of this test's own (freed at the end of each test). */
static uint8_t *out_buf;
static size_t   out_cap;

static int dec(size_t n, int codec, const void *src, size_t len)
{
    return mcdc_codec__decompress(&out_buf, &out_cap, n, codec, src, len);
}

static int teardown(void **state)
{
    (void)state;
    free(out_buf);
    out_buf = NULL;
    out_cap = 0;
    return 0;
}

static void test_parquet_codec__every_codec_round_trips(void **state)
{
    (void)state;
    const size_t sizes[] = { 0, 1, 100, 70000, 1 << 20 };
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            for (int comp = 0; comp < 2; comp++) {
                size_t n = sizes[s];
                uint8_t *src = malloc(n + 1);
                fill(src, n, comp);
                mcdc_buf z = MCDC_BUF_INIT((size_t)1 << 26);
                assert_int_equal(0, mcdc_codec__compress(&z, codecs[c], 0, src, n));
                if (comp && n >= 70000 && codecs[c] != MCDC_PQ_CODEC_UNCOMPRESSED)
                    assert_true(z.len < n / 2);
                assert_int_equal(0, dec(n, codecs[c], z.ptr, z.len));
                assert_memory_equal(src, out_buf, n);
                mcdc_buf_dispose(&z);
                free(src);
            }
        }
    }
}

static void test_parquet_codec__a_wrong_size_is_an_error(void **state)
{
    (void)state;
    uint8_t src[1000];
    fill(src, sizeof src, 1);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        mcdc_buf z = MCDC_BUF_INIT(1 << 20);
        assert_int_equal(0, mcdc_codec__compress(&z, codecs[c], 0, src, sizeof src));
        assert_int_equal(MCDC_ECORRUPT, dec(999, codecs[c], z.ptr, z.len));
        assert_int_equal(MCDC_ECORRUPT, dec(1001, codecs[c], z.ptr, z.len));
        if (codecs[c] != MCDC_PQ_CODEC_UNCOMPRESSED) /* garbage in: an error, not a crash */
            assert_int_equal(MCDC_ECORRUPT,
                             dec(1000, codecs[c], z.ptr, z.len / 2));
        mcdc_buf_dispose(&z);
    }
    assert_int_equal(MCDC_ECORRUPT, dec(999, MCDC_PQ_CODEC_SNAPPY, src, 1000));
    uint8_t one = 0;
    int rc = dec(1, MCDC_PQ_CODEC_SNAPPY, "\x05\x10xxxxx", 7);
    assert_int_equal(MCDC_ECORRUPT, rc);
    assert_string_equal("SNAPPY: inflates to 5 bytes, the page says 1", mcdc_error_last()->message);
    (void)one;
    assert_int_equal(MCDC_EUNSUPPORTED, dec(1, MCDC_PQ_CODEC_LZO, src, 1));
    assert_string_equal("compression codec LZO (3) is not supported", mcdc_error_last()->message);
}

static void test_parquet_codec__gzip_reads_concatenated_members(void **state)
{
    (void)state;
    mcdc_buf z = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_GZIP, 0, "hello ", 6));
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_GZIP, 9, "world", 5));
    assert_int_equal(0, dec(11, MCDC_PQ_CODEC_GZIP, z.ptr, z.len));
    assert_memory_equal("hello world", out_buf, 11);
    mcdc_buf_dispose(&z);
}

static void test_parquet_codec__lz4_reads_hadoop_blocks_and_bare_blocks(void **state)
{
    (void)state;
    uint8_t src[3000];
    fill(src, sizeof src, 1);
    /* Two Hadoop blocks back to back. */
    mcdc_buf z = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_LZ4, 0, src, 1000));
    assert_int_equal(0, (uint8_t)z.ptr[0]);
    assert_int_equal(0x03, (uint8_t)z.ptr[2]); /* 1000 = 0x03E8, big-endian */
    assert_int_equal(0xE8, (uint8_t)z.ptr[3]);
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_LZ4, 0, src + 1000, 2000));
    assert_int_equal(0, dec(3000, MCDC_PQ_CODEC_LZ4, z.ptr, z.len));
    assert_memory_equal(src, out_buf, 3000);
    /* A bare block under the legacy LZ4 codec. */
    mcdc_buf_clear(&z);
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_LZ4_RAW, 0, src, 3000));
    assert_int_equal(0, dec(3000, MCDC_PQ_CODEC_LZ4, z.ptr, z.len));
    assert_memory_equal(src, out_buf, 3000);
    mcdc_buf_dispose(&z);
}

static void test_parquet_codec__empty_input_to_empty_output_is_fine(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++)
        assert_int_equal(0, dec(0, codecs[c], "", 0));
}

/* A header that promises far more than the data holds: refused before allocating where
 * the codec bounds its output, else the buffer grows only as far as the data inflates. */
static void test_parquet_codec__memory_follows_the_output_not_the_header(void **state)
{
    (void)state;
    enum { N = 100000 };
    uint8_t *src = malloc(N);
    fill(src, N, 1);
    const size_t lie = (size_t)1 << 30;
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        mcdc_buf z = MCDC_BUF_INIT(1 << 20);
        assert_int_equal(0, mcdc_codec__compress(&z, codecs[c], 0, src, N));
        if (codecs[c] == MCDC_PQ_CODEC_ZSTD) /* a second frame: decoded as a stream */
            assert_int_equal(0, mcdc_codec__compress(&z, codecs[c], 0, src, N));
        size_t real = codecs[c] == MCDC_PQ_CODEC_ZSTD ? 2 * N : N;
        assert_int_equal(MCDC_ECORRUPT, dec(lie, codecs[c], z.ptr, z.len));
        assert_true(out_cap <= 4 * (size_t)N);
        assert_true(strstr(mcdc_error_last()->message, "1073741824") != NULL);
        if (mcdc_codec__inflate_bound(codecs[c], z.ptr, z.len) < lie)
            assert_int_equal(0, out_cap); /* refused before anything was allocated */
        /* one byte short and one byte over */
        assert_int_equal(MCDC_ECORRUPT, dec(real - 1, codecs[c], z.ptr, z.len));
        assert_int_equal(MCDC_ECORRUPT, dec(real + 1, codecs[c], z.ptr, z.len));
        assert_int_equal(0, dec(real, codecs[c], z.ptr, z.len));
        assert_memory_equal(src, out_buf, N);
        assert_memory_equal(src, out_buf + real - N, N);
        mcdc_buf_dispose(&z);
        teardown(NULL);
    }
    /* the bounds themselves */
    assert_int_equal(10, mcdc_codec__inflate_bound(MCDC_PQ_CODEC_UNCOMPRESSED, src, 10));
    assert_int_equal(10 * 1032, mcdc_codec__inflate_bound(MCDC_PQ_CODEC_GZIP, src, 10));
    assert_int_equal(10 * 255, mcdc_codec__inflate_bound(MCDC_PQ_CODEC_LZ4_RAW, src, 10));
    assert_int_equal(5, mcdc_codec__inflate_bound(MCDC_PQ_CODEC_SNAPPY, "\x05\x10xxxxx", 7));
    assert_int_equal(SIZE_MAX, mcdc_codec__inflate_bound(MCDC_PQ_CODEC_BROTLI, src, 10));
    assert_int_equal(MCDC_ECORRUPT, dec(2551, MCDC_PQ_CODEC_LZ4_RAW, src, 10));
    assert_string_equal("LZ4_RAW: 10 bytes cannot inflate to the 2551 bytes the page says (at "
                        "most 2550)",
                        mcdc_error_last()->message);
    free(src);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_parquet_codec__every_codec_round_trips, teardown),
        cmocka_unit_test_teardown(test_parquet_codec__a_wrong_size_is_an_error, teardown),
        cmocka_unit_test_teardown(test_parquet_codec__gzip_reads_concatenated_members, teardown),
        cmocka_unit_test_teardown(test_parquet_codec__lz4_reads_hadoop_blocks_and_bare_blocks, teardown),
        cmocka_unit_test_teardown(test_parquet_codec__empty_input_to_empty_output_is_fine, teardown),
        cmocka_unit_test_teardown(test_parquet_codec__memory_follows_the_output_not_the_header,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
