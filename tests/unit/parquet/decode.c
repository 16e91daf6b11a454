/* Unit tests for parquet/decode.c: every encoding on hand-worked bytes (Encodings.md
 * examples where it has them) and hostile inputs that must end in MCDC_ECORRUPT. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "parquet/decode.h"
#include "parquet/levels.h"

#define CUR(arr) mcdc_pqdec_cursor_make((arr), sizeof(arr))
#define HAS(msg) assert_non_null(strstr(mcdc_error_last()->message, (msg)))

static void test_parquet_decode__rle_bitpacked_spec_example(void **state)
{
    (void)state;
    static const uint8_t in[] = { 0x03, 0x88, 0xC6, 0xFA };
    uint32_t v[8];
    mcdc_pqdec_cursor c = CUR(in);
    assert_int_equal(0, mcdc_pqdec_rle(&c, 3, v, 8));
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(i, v[i]);
    assert_ptr_equal(c.pos, c.end);
    /* fewer values than the run holds need only the bytes for them */
    static const uint8_t cut[] = { 0x03, 0x88, 0xC6 };
    c = CUR(cut);
    assert_int_equal(0, mcdc_pqdec_rle(&c, 3, v, 5));
    assert_int_equal(4, v[4]);
}

static void test_parquet_decode__rle_runs_and_widths_0_and_32(void **state)
{
    (void)state;
    static const uint8_t run[] = { 0x0A, 0x01, 0x04, 0x00 };
    uint32_t v[8];
    mcdc_pqdec_cursor c = CUR(run);
    assert_int_equal(0, mcdc_pqdec_rle(&c, 1, v, 7));
    assert_int_equal(1, v[0]);
    assert_int_equal(1, v[4]);
    assert_int_equal(0, v[5]);
    assert_int_equal(0, v[6]);
    /* width 0: a run has no value bytes, a bit-packed group no data bytes */
    static const uint8_t w0[] = { 0x08, 0x03 };
    memset(v, 0xAA, sizeof v);
    c = CUR(w0);
    assert_int_equal(0, mcdc_pqdec_rle(&c, 0, v, 8));
    for (int i = 0; i < 8; i++)
        assert_int_equal(0, v[i]);
    static const uint8_t w32[] = { 0x04, 0xFF, 0xFF, 0xFF, 0xFF };
    c = CUR(w32);
    assert_int_equal(0, mcdc_pqdec_rle(&c, 32, v, 2));
    assert_int_equal(0xFFFFFFFFu, v[1]);
    static const uint8_t bp32[] = { 0x03, 1, 0, 0, 0x80, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0,
                                    5, 0, 0, 0,   6, 0, 0, 0,    7, 0, 0, 0, 8, 0, 0, 0 };
    c = CUR(bp32);
    assert_int_equal(0, mcdc_pqdec_rle(&c, 32, v, 8));
    assert_int_equal(0x80000001u, v[0]);
    assert_int_equal(8, v[7]);
}

static void test_parquet_decode__rle_prefixed_and_its_bounds(void **state)
{
    (void)state;
    static const uint8_t ok[] = { 0x02, 0, 0, 0, 0x0A, 0x01, 0xEE };
    uint32_t v[5];
    mcdc_pqdec_cursor c = CUR(ok);
    assert_int_equal(0, mcdc_pqdec_rle_prefixed(&c, 1, v, 5));
    assert_int_equal(1, v[4]);
    assert_int_equal(0xEE, *c.pos); /* just past the prefixed bytes */
    static const uint8_t over[] = { 0x09, 0, 0, 0, 0x0A, 0x01 };
    c = CUR(over);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle_prefixed(&c, 1, v, 5));
    HAS("length prefix 9 exceeds the 2 bytes left");
    static const uint8_t short_prefix[] = { 0x02, 0 };
    c = CUR(short_prefix);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle_prefixed(&c, 1, v, 5));
}

static void test_parquet_decode__rle_hostile_inputs(void **state)
{
    (void)state;
    uint32_t v[16];
    static const uint8_t trunc[] = { 0x03, 0x88 };
    mcdc_pqdec_cursor c = CUR(trunc);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle(&c, 3, v, 8));
    HAS("bit-packed run needs 3 bytes, 1 left");
    static const uint8_t ends[] = { 0x04, 0x01 };
    c = CUR(ends);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle(&c, 1, v, 3));
    HAS("data ends after 2 of 3 values");
    c = CUR(ends);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle(&c, 33, v, 1));
    HAS("bit width 33");
    c = CUR(ends);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle(&c, -1, v, 1));
    /* 2^62 groups */
    static const uint8_t huge[] = { 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 };
    c = CUR(huge);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle(&c, 1, v, 16));
    /* a run value wider than the bit width */
    static const uint8_t wide[] = { 0x02, 0x05 };
    c = CUR(wide);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle(&c, 2, v, 1));
    HAS("wider than 2 bits");
    static const uint8_t bad_varint[] = { 0x80, 0x80 };
    c = CUR(bad_varint);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle(&c, 1, v, 1));
}

/* Bit-packed runs of every width 1..32, the values read with whole-word loads where eight
 * bytes are left and byte by byte at the end: the same values as the encoder wrote; widths
 * up to 8 also into bytes (levels). Runs end exactly at the buffer's end. */
static void test_parquet_decode__rle_bitpacked_every_width_to_the_last_byte(void **state)
{
    (void)state;
    enum { N = 203 };
    uint32_t in[N], out[N];
    uint8_t out8[N];
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int w = 1; w <= 32; w++) {
        uint64_t mask = w == 32 ? 0xFFFFFFFFULL : ((uint64_t)1 << w) - 1;
        for (int i = 0; i < N; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            in[i] = (uint32_t)(x & mask);
        }
        mcdc_buf b = MCDC_BUF_INIT(1 << 20);
        assert_int_equal(0, mcdc_rle__encode_u32(&b, in, N, w, false));
        /* a copy of exactly the encoded size, so reads past it would be caught by ASan */
        uint8_t *exact = malloc(b.len);
        memcpy(exact, b.ptr, b.len);
        mcdc_pqdec_cursor c = mcdc_pqdec_cursor_make(exact, b.len);
        memset(out, 0xAB, sizeof out);
        assert_int_equal(0, mcdc_pqdec_rle(&c, w, out, N));
        assert_memory_equal(in, out, sizeof in);
        if (w <= 8) {
            c = mcdc_pqdec_cursor_make(exact, b.len);
            assert_int_equal(0, mcdc_pqdec_rle_u8(&c, w, out8, N));
            for (int i = 0; i < N; i++)
                assert_int_equal(in[i], out8[i]);
        }
        free(exact);
        mcdc_buf_dispose(&b);
    }
    /* bytes: widths above 8 are refused as the 32-bit decoder refuses those above 32 */
    uint8_t one[2] = { 2, 1 };
    mcdc_pqdec_cursor c = mcdc_pqdec_cursor_make(one, 2);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_rle_u8(&c, 9, out8, 1));
    assert_non_null(strstr(mcdc_error_last()->message, "rle: bit width 9 outside 0..8"));
}

static void test_parquet_decode__bitpacked_legacy_spec_example(void **state)
{
    (void)state;
    static const uint8_t in[] = { 0x05, 0x39, 0x77 };
    uint32_t v[8];
    mcdc_pqdec_cursor c = CUR(in);
    assert_int_equal(0, mcdc_pqdec_bitpacked_legacy(&c, 3, v, 8));
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(i, v[i]);
    c = CUR(in);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_bitpacked_legacy(&c, 3, v, 9));
    c = CUR(in);
    assert_int_equal(0, mcdc_pqdec_bitpacked_legacy(&c, 0, v, 8));
    assert_int_equal(0, v[7]);
}

static void test_parquet_decode__plain_every_type(void **state)
{
    (void)state;
    mcdc_pqdec_val v[4];
    static const uint8_t b[] = { 0x05 }; /* 1,0,1 */
    mcdc_pqdec_cursor c = CUR(b);
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_BOOLEAN, 0, v, 3));
    assert_true(v[0].b);
    assert_false(v[1].b);
    assert_true(v[2].b);
    static const uint8_t i32[] = { 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF };
    c = CUR(i32);
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_INT32, 0, v, 2));
    assert_int_equal(1, v[0].i32);
    assert_int_equal(-1, v[1].i32);
    static const uint8_t i64[] = { 0, 0, 0, 0, 0, 0, 0, 0x80 };
    c = CUR(i64);
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_INT64, 0, v, 1));
    assert_true(v[0].i64 == INT64_MIN);
    static const uint8_t f[] = { 0, 0, 0x80, 0x3F, 0, 0, 0, 0, 0, 0, 0xF0, 0xBF };
    c = CUR(f);
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_FLOAT, 0, v, 1));
    assert_true(v[0].f == 1.0f);
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_DOUBLE, 0, v, 1));
    assert_true(v[0].d == -1.0);
    static const uint8_t ba[] = { 2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0 };
    c = CUR(ba);
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_BYTE_ARRAY, 0, v, 2));
    assert_int_equal(2, v[0].ba.len);
    assert_memory_equal("ab", v[0].ba.ptr, 2);
    assert_int_equal(0, v[1].ba.len);
    static const uint8_t i96[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    c = CUR(i96);
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_INT96, 0, v, 1));
    assert_int_equal(12, v[0].ba.len);
    assert_ptr_equal(i96, v[0].ba.ptr);
    static const uint8_t flba[] = { 'a', 'b', 'c', 'd', 'e', 'f' };
    c = CUR(flba);
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_FIXED_LEN_BYTE_ARRAY, 3, v, 2));
    assert_memory_equal("def", v[1].ba.ptr, 3);
}

static void test_parquet_decode__plain_hostile_inputs(void **state)
{
    (void)state;
    mcdc_pqdec_val v[4];
    static const uint8_t ba[] = { 0xFF, 0xFF, 0xFF, 0x7F, 'a' };
    mcdc_pqdec_cursor c = CUR(ba);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_plain(&c, MCDC_PQDEC_BYTE_ARRAY, 0, v, 1));
    HAS("length 2147483647 exceeds the 1 bytes left");
    c = CUR(ba);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_plain(&c, MCDC_PQDEC_INT64, 0, v, 1));
    c = CUR(ba);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_plain(&c, MCDC_PQDEC_FIXED_LEN_BYTE_ARRAY, 0, v, 1));
    c = mcdc_pqdec_cursor_make(ba, 0);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_plain(&c, MCDC_PQDEC_BOOLEAN, 0, v, 4));
    assert_int_equal(0, mcdc_pqdec_plain(&c, MCDC_PQDEC_BOOLEAN, 0, v, 0));
    c = CUR(ba);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_plain(&c, 9, 0, v, 1));
}

static void test_parquet_decode__delta_binary_spec_examples(void **state)
{
    (void)state;
    int64_t v[16];
    size_t n;
    static const uint8_t seq[] = { 0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0 };
    mcdc_pqdec_cursor c = CUR(seq);
    assert_int_equal(0, mcdc_pqdec_delta_binary(&c, v, 16, &n));
    assert_int_equal(5, n);
    for (int i = 0; i < 5; i++)
        assert_int_equal(i + 1, v[i]);
    assert_ptr_equal(c.pos, c.end);
    /* 7 5 3 1 2 3 4 5: min delta -2, relative 0 0 0 3 3 3 3 at width 2 */
    static const uint8_t ex2[] = { 0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 0x02, 0,    0,
                                   0,    0xC0, 0xFF, 0,    0,    0,    0,    0,    0 };
    c = CUR(ex2);
    assert_int_equal(0, mcdc_pqdec_delta_binary(&c, v, 16, &n));
    assert_int_equal(8, n);
    static const int64_t want[] = { 7, 5, 3, 1, 2, 3, 4, 5 };
    assert_memory_equal(want, v, sizeof want);
    assert_ptr_equal(c.pos, c.end);
    /* one value only: no block follows */
    static const uint8_t one[] = { 0x80, 0x01, 0x04, 0x01, 0x0D };
    c = CUR(one);
    assert_int_equal(0, mcdc_pqdec_delta_binary(&c, v, 1, &n));
    assert_int_equal(-7, v[0]);
    /* into INT32 slots, with wrapping */
    mcdc_pqdec_val s[8];
    c = CUR(ex2);
    assert_int_equal(0, mcdc_pqdec_delta_binary_vals(&c, MCDC_PQDEC_INT32, s, 8));
    assert_int_equal(3, s[2].i32);
    c = CUR(ex2);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_binary_vals(&c, MCDC_PQDEC_INT32, s, 7));
}

static void test_parquet_decode__delta_binary_width_64_wraps(void **state)
{
    (void)state;
    uint8_t in[10 + 256] = { 0x80, 0x01, 0x04, 0x03, 0x0A, 0x00, 0x40, 0, 0, 0 };
    memset(in + 10, 0xFF, 8);    /* d0 = 2^64-1: 5 + (2^64-1) wraps to 4 */
    in[10 + 8 + 7] = 0x80;       /* d1 = 2^63: 4 + 2^63 */
    int64_t v[3];
    size_t n;
    mcdc_pqdec_cursor c = CUR(in);
    assert_int_equal(0, mcdc_pqdec_delta_binary(&c, v, 3, &n));
    assert_int_equal(3, n);
    assert_int_equal(5, v[0]);
    assert_int_equal(4, v[1]);
    assert_true(v[2] == INT64_MIN + 4);
    assert_ptr_equal(c.pos, c.end);
}

static void test_parquet_decode__delta_binary_hostile_inputs(void **state)
{
    (void)state;
    int64_t v[8];
    size_t n;
    static const uint8_t w65[] = { 0x80, 0x01, 0x04, 0x03, 0x00, 0x00, 65, 0, 0, 0 };
    mcdc_pqdec_cursor c = CUR(w65);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_binary(&c, v, 8, &n));
    HAS("bit width 65 above 64");
    static const uint8_t many[] = { 0x80, 0x01, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00 };
    c = CUR(many);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_binary(&c, v, 8, &n));
    HAS("4294967295 values where at most 8 fit");
    static const uint8_t bad_block[] = { 0x64, 0x04, 0x01, 0x00 };
    c = CUR(bad_block);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_binary(&c, v, 8, &n));
    static const uint8_t bad_mini[] = { 0x80, 0x01, 0x03, 0x01, 0x00 };
    c = CUR(bad_mini);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_binary(&c, v, 8, &n));
    static const uint8_t trunc[] = { 0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x08, 0 };
    c = CUR(trunc);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_binary(&c, v, 8, &n));
    static const uint8_t no_data[] = { 0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x08, 0, 0, 0 };
    c = CUR(no_data);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_binary(&c, v, 8, &n));
    HAS("miniblock needs 4 bytes, 0 left");
}

static void test_parquet_decode__delta_length_byte_array(void **state)
{
    (void)state;
    static const uint8_t in[] = { 0x80, 0x01, 0x04, 0x04, 0x0A, 0x00, 0x01, 0, 0, 0, 0x02, 0, 0, 0,
                                  'H',  'e',  'l',  'l',  'o',  'W',  'o',  'r', 'l', 'd', 'F', 'o',
                                  'o',  'b',  'a',  'r',  'A',  'B',  'C',  'D', 'E', 'F' };
    mcdc_pqdec_val v[4];
    int64_t scratch[4];
    mcdc_pqdec_cursor c = CUR(in);
    assert_int_equal(0, mcdc_pqdec_delta_length(&c, v, 4, scratch));
    assert_int_equal(6, v[2].ba.len);
    assert_memory_equal("Foobar", v[2].ba.ptr, 6);
    assert_memory_equal("ABCDEF", v[3].ba.ptr, 6);
    assert_ptr_equal(c.pos, c.end);
    /* the bytes run out before the lengths say */
    mcdc_pqdec_cursor t = mcdc_pqdec_cursor_make(in, sizeof in - 1);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_length(&t, v, 4, scratch));
    HAS("value 3 of 4: length 6 with 5 bytes left");
}

static void test_parquet_decode__delta_byte_array_spec_example(void **state)
{
    (void)state;
    static const uint8_t in[] = {
        /* prefixes 0 2 0 3 */
        0x80, 0x01, 0x04, 0x04, 0x00, 0x03, 0x03, 0, 0, 0, 0x44, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        /* suffix lengths 4 2 6 5 */
        0x80, 0x01, 0x04, 0x04, 0x08, 0x03, 0x03, 0, 0, 0, 0x70, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        'a', 'x', 'i', 's', 'l', 'e', 'b', 'a', 'b', 'b', 'l', 'e', 'y', 'h', 'o', 'o', 'd'
    };
    mcdc_pqdec_val v[4];
    int64_t scratch[8];
    mcdc_buf arena = MCDC_BUF_INIT(1024);
    mcdc_pqdec_cursor c = CUR(in);
    assert_int_equal(0, mcdc_pqdec_delta_byte_array(&c, v, 4, scratch, 0, &arena));
    const char *want[] = { "axis", "axle", "babble", "babyhood" };
    for (int i = 0; i < 4; i++) {
        assert_int_equal(strlen(want[i]), v[i].ba.len);
        assert_memory_equal(want[i], v[i].ba.ptr, v[i].ba.len);
    }
    assert_ptr_equal(c.pos, c.end);
    /* fixed length must match */
    c = CUR(in);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_byte_array(&c, v, 4, scratch, 4, &arena));
    /* a prefix longer than the value before it */
    uint8_t bad[sizeof in];
    memcpy(bad, in, sizeof in);
    bad[4] = 0x02; /* first prefix 1, with no previous value */
    c = CUR(bad);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_byte_array(&c, v, 4, scratch, 0, &arena));
    HAS("prefix 1 longer than the previous value (0)");
    /* the arena's cap bounds what may be built */
    mcdc_buf tiny = MCDC_BUF_INIT(8);
    c = CUR(in);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_delta_byte_array(&c, v, 4, scratch, 0, &tiny));
    mcdc_buf_dispose(&tiny);
    mcdc_buf_dispose(&arena);
}

static void test_parquet_decode__byte_stream_split(void **state)
{
    (void)state;
    static const uint8_t f[] = { 0, 0, 0, 0, 0x80, 0, 0x3F, 0x40 };
    mcdc_pqdec_val v[2];
    mcdc_buf arena = MCDC_BUF_INIT(1024);
    mcdc_pqdec_cursor c = CUR(f);
    assert_int_equal(0, mcdc_pqdec_byte_stream_split(&c, MCDC_PQDEC_FLOAT, 0, v, 2, &arena));
    assert_true(v[0].f == 1.0f);
    assert_true(v[1].f == 2.0f);
    c = CUR(f);
    assert_int_equal(0, mcdc_pqdec_byte_stream_split(&c, MCDC_PQDEC_INT64, 0, v, 1, &arena));
    assert_true(v[0].i64 == (int64_t)0x403F008000000000LL); /* one value: stride 1 */
    static const uint8_t fl[] = { 'a', 'd', 'b', 'e', 'c', 'f' };
    c = CUR(fl);
    assert_int_equal(0,
                     mcdc_pqdec_byte_stream_split(&c, MCDC_PQDEC_FIXED_LEN_BYTE_ARRAY, 3, v, 2, &arena));
    assert_memory_equal("abc", v[0].ba.ptr, 3);
    assert_memory_equal("def", v[1].ba.ptr, 3);
    c = CUR(fl);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_byte_stream_split(&c, MCDC_PQDEC_DOUBLE, 0, v, 1, &arena));
    c = CUR(fl);
    assert_int_equal(MCDC_ECORRUPT, mcdc_pqdec_byte_stream_split(&c, MCDC_PQDEC_BYTE_ARRAY, 0, v, 1, &arena));
    mcdc_buf_dispose(&arena);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_decode__rle_bitpacked_spec_example),
        cmocka_unit_test(test_parquet_decode__rle_runs_and_widths_0_and_32),
        cmocka_unit_test(test_parquet_decode__rle_prefixed_and_its_bounds),
        cmocka_unit_test(test_parquet_decode__rle_hostile_inputs),
        cmocka_unit_test(test_parquet_decode__rle_bitpacked_every_width_to_the_last_byte),
        cmocka_unit_test(test_parquet_decode__bitpacked_legacy_spec_example),
        cmocka_unit_test(test_parquet_decode__plain_every_type),
        cmocka_unit_test(test_parquet_decode__plain_hostile_inputs),
        cmocka_unit_test(test_parquet_decode__delta_binary_spec_examples),
        cmocka_unit_test(test_parquet_decode__delta_binary_width_64_wraps),
        cmocka_unit_test(test_parquet_decode__delta_binary_hostile_inputs),
        cmocka_unit_test(test_parquet_decode__delta_length_byte_array),
        cmocka_unit_test(test_parquet_decode__delta_byte_array_spec_example),
        cmocka_unit_test(test_parquet_decode__byte_stream_split),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
