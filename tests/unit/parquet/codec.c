/* Unit tests for parquet/codec.c: round trips for every codec, size mismatches, gzip
 * members and both LZ4 framings. */
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

static void test_parquet_codec__every_codec_round_trips(void **state)
{
    (void)state;
    const size_t sizes[] = { 0, 1, 100, 70000, 1 << 20 };
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            for (int comp = 0; comp < 2; comp++) {
                size_t n = sizes[s];
                uint8_t *src = malloc(n + 1), *dst = malloc(n + 1);
                fill(src, n, comp);
                mcdc_buf z = MCDC_BUF_INIT((size_t)1 << 26);
                assert_int_equal(0, mcdc_codec__compress(&z, codecs[c], 0, src, n));
                if (comp && n >= 70000 && codecs[c] != MCDC_PQ_CODEC_UNCOMPRESSED)
                    assert_true(z.len < n / 2);
                assert_int_equal(0, mcdc_codec__decompress(dst, n, codecs[c], z.ptr, z.len));
                assert_memory_equal(src, dst, n);
                mcdc_buf_dispose(&z);
                free(src);
                free(dst);
            }
        }
    }
}

static void test_parquet_codec__a_wrong_size_is_an_error(void **state)
{
    (void)state;
    uint8_t src[1000], dst[1001];
    fill(src, sizeof src, 1);
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++) {
        mcdc_buf z = MCDC_BUF_INIT(1 << 20);
        assert_int_equal(0, mcdc_codec__compress(&z, codecs[c], 0, src, sizeof src));
        assert_int_equal(MCDC_ECORRUPT, mcdc_codec__decompress(dst, 999, codecs[c], z.ptr, z.len));
        assert_int_equal(MCDC_ECORRUPT, mcdc_codec__decompress(dst, 1001, codecs[c], z.ptr, z.len));
        if (codecs[c] != MCDC_PQ_CODEC_UNCOMPRESSED) /* garbage in: an error, not a crash */
            assert_int_equal(MCDC_ECORRUPT,
                             mcdc_codec__decompress(dst, 1000, codecs[c], z.ptr, z.len / 2));
        mcdc_buf_dispose(&z);
    }
    assert_int_equal(MCDC_ECORRUPT, mcdc_codec__decompress(dst, 999, MCDC_PQ_CODEC_SNAPPY, src, 1000));
    uint8_t one = 0;
    int rc = mcdc_codec__decompress(dst, 1, MCDC_PQ_CODEC_SNAPPY, "\x05\x10xxxxx", 7);
    assert_int_equal(MCDC_ECORRUPT, rc);
    assert_string_equal("SNAPPY: inflates to 5 bytes, the page says 1", mcdc_error_last()->message);
    (void)one;
    assert_int_equal(MCDC_EUNSUPPORTED, mcdc_codec__decompress(dst, 1, MCDC_PQ_CODEC_LZO, src, 1));
    assert_string_equal("compression codec LZO (3) is not supported", mcdc_error_last()->message);
}

static void test_parquet_codec__gzip_reads_concatenated_members(void **state)
{
    (void)state;
    mcdc_buf z = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_GZIP, 0, "hello ", 6));
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_GZIP, 9, "world", 5));
    char out[11];
    assert_int_equal(0, mcdc_codec__decompress(out, 11, MCDC_PQ_CODEC_GZIP, z.ptr, z.len));
    assert_memory_equal("hello world", out, 11);
    mcdc_buf_dispose(&z);
}

static void test_parquet_codec__lz4_reads_hadoop_blocks_and_bare_blocks(void **state)
{
    (void)state;
    uint8_t src[3000], out[3000];
    fill(src, sizeof src, 1);
    /* Two Hadoop blocks back to back. */
    mcdc_buf z = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_LZ4, 0, src, 1000));
    assert_int_equal(0, (uint8_t)z.ptr[0]);
    assert_int_equal(0x03, (uint8_t)z.ptr[2]); /* 1000 = 0x03E8, big-endian */
    assert_int_equal(0xE8, (uint8_t)z.ptr[3]);
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_LZ4, 0, src + 1000, 2000));
    assert_int_equal(0, mcdc_codec__decompress(out, 3000, MCDC_PQ_CODEC_LZ4, z.ptr, z.len));
    assert_memory_equal(src, out, 3000);
    /* A bare block under the legacy LZ4 codec. */
    mcdc_buf_clear(&z);
    assert_int_equal(0, mcdc_codec__compress(&z, MCDC_PQ_CODEC_LZ4_RAW, 0, src, 3000));
    assert_int_equal(0, mcdc_codec__decompress(out, 3000, MCDC_PQ_CODEC_LZ4, z.ptr, z.len));
    assert_memory_equal(src, out, 3000);
    mcdc_buf_dispose(&z);
}

static void test_parquet_codec__empty_input_to_empty_output_is_fine(void **state)
{
    (void)state;
    char out[1];
    for (size_t c = 0; c < sizeof codecs / sizeof *codecs; c++)
        assert_int_equal(0, mcdc_codec__decompress(out, 0, codecs[c], "", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_codec__every_codec_round_trips),
        cmocka_unit_test(test_parquet_codec__a_wrong_size_is_an_error),
        cmocka_unit_test(test_parquet_codec__gzip_reads_concatenated_members),
        cmocka_unit_test(test_parquet_codec__lz4_reads_hadoop_blocks_and_bare_blocks),
        cmocka_unit_test(test_parquet_codec__empty_input_to_empty_output_is_fine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
