/* Unit tests for parquet/thrift.c: the compact protocol writer and the bounded reader. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "parquet/thrift.h"

/* The worked example of thrift.h. */
static const uint8_t example[] = { 0x15, 0x02, 0x19, 0x18, 0x01, 0x61, 0x26, 0x01, 0x01, 0x28, 0x00 };

static void test_parquet_thrift__writes_the_header_example(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    mcdc_thrift_writer w;
    mcdc_thrift__writer_init(&w, &b);
    mcdc_thrift__struct_begin(&w);
    mcdc_thrift__field_i32(&w, 1, 1);
    mcdc_thrift__field(&w, 2, MCDC_THRIFT_LIST);
    mcdc_thrift__list_begin(&w, MCDC_THRIFT_BINARY, 1);
    mcdc_thrift__write_binary(&w, "a", 1);
    mcdc_thrift__field_i64(&w, 4, -1);
    mcdc_thrift__field_bool(&w, 20, true);
    mcdc_thrift__struct_end(&w);
    assert_int_equal(0, mcdc_thrift__writer_rc(&w));
    assert_int_equal(sizeof example, b.len);
    assert_memory_equal(example, b.ptr, sizeof example);
    mcdc_buf_dispose(&b);
}

static void test_parquet_thrift__reads_the_header_example(void **state)
{
    (void)state;
    mcdc_thrift_reader r;
    mcdc_thrift__reader_init(&r, example, sizeof example, 0, "test");
    int16_t id;
    int type, et;
    int32_t i32;
    int64_t i64;
    uint32_t n;
    const uint8_t *p;
    size_t len;
    bool b;
    assert_int_equal(0, mcdc_thrift__read_struct_begin(&r));
    assert_int_equal(0, mcdc_thrift__read_field(&r, &id, &type));
    assert_int_equal(1, id);
    assert_int_equal(MCDC_THRIFT_I32, type);
    assert_int_equal(0, mcdc_thrift__read_i32(&r, &i32));
    assert_int_equal(1, i32);
    assert_int_equal(0, mcdc_thrift__read_field(&r, &id, &type));
    assert_int_equal(2, id);
    assert_int_equal(0, mcdc_thrift__read_list_begin(&r, &et, &n));
    assert_int_equal(MCDC_THRIFT_BINARY, et);
    assert_int_equal(1, n);
    assert_int_equal(0, mcdc_thrift__read_binary(&r, &p, &len));
    assert_int_equal(1, len);
    assert_int_equal('a', p[0]);
    mcdc_thrift__read_list_end(&r);
    assert_int_equal(0, mcdc_thrift__read_field(&r, &id, &type));
    assert_int_equal(4, id);
    assert_int_equal(0, mcdc_thrift__read_i64(&r, &i64));
    assert_int_equal(-1, i64);
    assert_int_equal(0, mcdc_thrift__read_field(&r, &id, &type));
    assert_int_equal(20, id);
    assert_int_equal(0, mcdc_thrift__read_bool(&r, type, false, &b));
    assert_true(b);
    assert_int_equal(0, mcdc_thrift__read_field(&r, &id, &type));
    assert_int_equal(MCDC_THRIFT_STOP, type);
    mcdc_thrift__read_struct_end(&r);
    assert_ptr_equal(r.end, r.pos);
}

static void test_parquet_thrift__integers_round_trip_at_their_extremes(void **state)
{
    (void)state;
    const int64_t v64[] = { 0, 1, -1, 63, -64, 64, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN };
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    mcdc_thrift_writer w;
    mcdc_thrift__writer_init(&w, &b);
    for (size_t i = 0; i < sizeof v64 / sizeof *v64; i++)
        mcdc_thrift__write_i64(&w, v64[i]);
    mcdc_thrift__write_i32(&w, INT32_MIN);
    mcdc_thrift__write_varint(&w, UINT64_MAX);
    assert_int_equal(0, w.rc);
    mcdc_thrift_reader r;
    mcdc_thrift__reader_init(&r, b.ptr, b.len, 0, "test");
    for (size_t i = 0; i < sizeof v64 / sizeof *v64; i++) {
        int64_t x;
        assert_int_equal(0, mcdc_thrift__read_i64(&r, &x));
        assert_true(x == v64[i]);
    }
    int32_t x32;
    uint64_t u;
    assert_int_equal(0, mcdc_thrift__read_i32(&r, &x32));
    assert_int_equal(INT32_MIN, x32);
    assert_int_equal(0, mcdc_thrift__read_varint(&r, &u));
    assert_true(u == UINT64_MAX);
    assert_ptr_equal(r.end, r.pos);
    mcdc_buf_dispose(&b);
}

static void test_parquet_thrift__reader_names_the_offset_of_a_truncation(void **state)
{
    (void)state;
    mcdc_thrift_reader r;
    const uint8_t bin[] = { 0x0A, 'a', 'b' }; /* says 10 bytes, has 2 */
    mcdc_thrift__reader_init(&r, bin, sizeof bin, 1000, "footer");
    const uint8_t *p;
    size_t len;
    assert_int_equal(MCDC_ECORRUPT, mcdc_thrift__read_binary(&r, &p, &len));
    assert_string_equal("footer at byte 1000: binary of 10 bytes runs past the end (2 left)",
                        mcdc_error_last()->message);
    const uint8_t i32_big[] = { 0xFE, 0xFF, 0xFF, 0xFF, 0x7F }; /* 2^33-2 -> 2^32-1 */
    mcdc_thrift__reader_init(&r, i32_big, sizeof i32_big, 0, "t");
    int32_t x;
    assert_int_equal(MCDC_ECORRUPT, mcdc_thrift__read_i32(&r, &x));
    assert_non_null(strstr(mcdc_error_last()->message, "out of range"));
    const uint8_t long_varint[11] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 };
    mcdc_thrift__reader_init(&r, long_varint, sizeof long_varint, 0, "t");
    uint64_t u;
    assert_int_equal(MCDC_ECORRUPT, mcdc_thrift__read_varint(&r, &u));
}

static void test_parquet_thrift__list_count_beyond_the_bytes_is_refused(void **state)
{
    (void)state;
    const uint8_t list[] = { 0xF5, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x02 };
    mcdc_thrift_reader r;
    mcdc_thrift__reader_init(&r, list, sizeof list, 7, "t");
    int et;
    uint32_t n;
    assert_int_equal(MCDC_ECORRUPT, mcdc_thrift__read_list_begin(&r, &et, &n));
    assert_non_null(strstr(mcdc_error_last()->message, "t at byte 7: list of 4294967295 elements"));
}

static void test_parquet_thrift__skip_passes_unknown_nested_fields(void **state)
{
    (void)state;
    /* struct { 1: struct { 1: list<i64> [1,2], 3: map<binary,i32>{"k":5}, 4: double },
     *          2: bool false, 32767: binary "x", 3: i32 7 } */
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    mcdc_thrift_writer w;
    mcdc_thrift__writer_init(&w, &b);
    mcdc_thrift__struct_begin(&w);
    mcdc_thrift__field(&w, 1, MCDC_THRIFT_STRUCT);
    mcdc_thrift__struct_begin(&w);
    mcdc_thrift__field(&w, 1, MCDC_THRIFT_LIST);
    mcdc_thrift__list_begin(&w, MCDC_THRIFT_I64, 2);
    mcdc_thrift__write_i64(&w, 1);
    mcdc_thrift__write_i64(&w, 2);
    mcdc_thrift__field(&w, 3, MCDC_THRIFT_MAP);
    mcdc_thrift__write_varint(&w, 1);
    mcdc_buf_putc(&b, (char)((MCDC_THRIFT_BINARY << 4) | MCDC_THRIFT_I32));
    mcdc_thrift__write_binary(&w, "k", 1);
    mcdc_thrift__write_i32(&w, 5);
    mcdc_thrift__field_double(&w, 4, 2.5);
    mcdc_thrift__struct_end(&w);
    mcdc_thrift__field_bool(&w, 2, false);
    mcdc_thrift__field_binary(&w, 32767, "x", 1);
    mcdc_thrift__struct_end(&w);
    /* Field 3 after 32767 is out of order on purpose: readers take ids as they come. */
    b.len--; /* reopen the struct */
    w.depth = 1;
    mcdc_thrift__field_i32(&w, 3, 7);
    mcdc_thrift__struct_end(&w);
    assert_int_equal(0, w.rc);

    mcdc_thrift_reader r;
    mcdc_thrift__reader_init(&r, b.ptr, b.len, 0, "t");
    int16_t id;
    int type;
    int32_t seven = 0;
    assert_int_equal(0, mcdc_thrift__read_struct_begin(&r));
    for (;;) {
        assert_int_equal(0, mcdc_thrift__read_field(&r, &id, &type));
        if (type == MCDC_THRIFT_STOP)
            break;
        if (id == 3)
            assert_int_equal(0, mcdc_thrift__read_i32(&r, &seven));
        else
            assert_int_equal(0, mcdc_thrift__skip(&r, type, false));
    }
    assert_int_equal(7, seven);
    assert_ptr_equal(r.end, r.pos);
    mcdc_buf_dispose(&b);
}

static void test_parquet_thrift__nesting_past_the_limit_is_refused(void **state)
{
    (void)state;
    uint8_t deep[200];
    for (size_t i = 0; i < sizeof deep; i++)
        deep[i] = 0x1C; /* field +1, STRUCT: each opens another struct */
    mcdc_thrift_reader r;
    mcdc_thrift__reader_init(&r, deep, sizeof deep, 0, "t");
    assert_int_equal(MCDC_ECORRUPT, mcdc_thrift__skip(&r, MCDC_THRIFT_STRUCT, false));
    assert_non_null(strstr(mcdc_error_last()->message, "nesting deeper than 64"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_thrift__writes_the_header_example),
        cmocka_unit_test(test_parquet_thrift__reads_the_header_example),
        cmocka_unit_test(test_parquet_thrift__integers_round_trip_at_their_extremes),
        cmocka_unit_test(test_parquet_thrift__reader_names_the_offset_of_a_truncation),
        cmocka_unit_test(test_parquet_thrift__list_count_beyond_the_bytes_is_refused),
        cmocka_unit_test(test_parquet_thrift__skip_passes_unknown_nested_fields),
        cmocka_unit_test(test_parquet_thrift__nesting_past_the_limit_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
