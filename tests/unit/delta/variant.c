/* Unit tests for delta/variant.c: Variant values (Parquet VariantEncoding.md) as JSON text,
 * encoded here by hand byte by byte; malformed encodings are refused without reading past
 * either buffer. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "delta/internal.h"

static const uint8_t meta_a[] = { 0x01, 0x01, 0x00, 0x01, 'a' }; /* version 1, ["a"] */
static const uint8_t meta_empty[] = { 0x01, 0x00, 0x00 };

static char *decode(const uint8_t *m, size_t nm, const uint8_t *v, size_t nv, int *rc)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    *rc = mcdc_delta__variant_to_json(&b, m, nm, v, nv);
    char *s = mcdc_buf_detach(&b);
    mcdc_buf_dispose(&b);
    return s;
}

static void expect(const uint8_t *m, size_t nm, const uint8_t *v, size_t nv, const char *want)
{
    int rc;
    char *s = decode(m, nm, v, nv, &rc);
    if (rc)
        fail_msg("%s", mcdc_error_last()->message);
    assert_string_equal(want, s);
    free(s);
}

#define EXPECT(m, v, want) expect(m, sizeof m, v, sizeof v, want)

static void test_delta_variant__the_worked_example(void **state)
{
    (void)state;
    /* {"a": 1}: object, 1 element, field id 0, offsets 0 and 2, int8 1 */
    static const uint8_t v[] = { 0x02, 0x01, 0x00, 0x00, 0x02, 0x0C, 0x01 };
    EXPECT(meta_a, v, "{\"a\":1}");
}

static void test_delta_variant__primitives(void **state)
{
    (void)state;
    static const uint8_t null_[] = { 0x00 }, t[] = { 0x04 }, f[] = { 0x08 };
    EXPECT(meta_empty, null_, "null");
    EXPECT(meta_empty, t, "true");
    EXPECT(meta_empty, f, "false");
    static const uint8_t i16[] = { 0x10, 0x18, 0xFC };                   /* -1000 */
    static const uint8_t i32[] = { 0x14, 0x40, 0x42, 0x0F, 0x00 };       /* 1000000 */
    static const uint8_t i64[] = { 0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F };
    EXPECT(meta_empty, i16, "-1000");
    EXPECT(meta_empty, i32, "1000000");
    EXPECT(meta_empty, i64, "9223372036854775807");
    static const uint8_t dbl[] = { 0x1C, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F }; /* 1.5 */
    static const uint8_t flt[] = { 0x38, 0xCD, 0xCC, 0xCC, 0x3D };       /* 0.1f */
    EXPECT(meta_empty, dbl, "1.5");
    EXPECT(meta_empty, flt, "0.1");
    static const uint8_t dec4[] = { 0x20, 0x02, 0xCE, 0x04, 0x00, 0x00 };  /* 12.30 */
    static const uint8_t dec8[] = { 0x24, 0x03, 0x2E, 0xFB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF }; /* -1.234 */
    EXPECT(meta_empty, dec4, "12.30");
    EXPECT(meta_empty, dec8, "-1.234");
    static const uint8_t date[] = { 0x2C, 0x01, 0x00, 0x00, 0x00 };
    EXPECT(meta_empty, date, "\"1970-01-02\"");
    static const uint8_t ts[] = { 0x30, 0x40, 0x42, 0x0F, 0, 0, 0, 0, 0 };  /* 1 s, UTC */
    static const uint8_t ntz[] = { 0x34, 0x40, 0x42, 0x0F, 0, 0, 0, 0, 0 };
    EXPECT(meta_empty, ts, "\"1970-01-01T00:00:01.000000Z\"");
    EXPECT(meta_empty, ntz, "\"1970-01-01T00:00:01.000000\"");
    static const uint8_t bin[] = { 0x3C, 0x02, 0, 0, 0, 0xAB, 0x01 };
    static const uint8_t str[] = { 0x40, 0x03, 0, 0, 0, 'a', '"', 'b' };
    static const uint8_t shortstr[] = { 0x09, 'h', 'i' };
    EXPECT(meta_empty, bin, "\"0xAB01\"");
    EXPECT(meta_empty, str, "\"a\\\"b\"");
    EXPECT(meta_empty, shortstr, "\"hi\"");
    static const uint8_t uuid[] = { 0x50, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                                    0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0 };
    EXPECT(meta_empty, uuid, "\"12345678-9abc-def0-1234-56789abcdef0\"");
}

static void test_delta_variant__nested_objects_and_arrays(void **state)
{
    (void)state;
    /* metadata ["b", "a"] (unsorted), 2-byte offsets */
    static const uint8_t meta[] = { 0x41, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x02, 0x00, 'b', 'a' };
    /* {"a": [true, null, "hi"], "b": {}}: field ids in name order (a = 1, b = 0); the
     * values stored b first, then a */
    static const uint8_t v[] = {
        0x02, 0x02, 0x01, 0x00, 0x0A, 0x00, 0x0C, /* object: 2, ids 1 0, offsets 10 0 12 */
        0x02, 0x00, 0x00,                         /* b: {} (0 elements, offset 0) */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* padding the offsets skip */
        0x03, 0x03, 0x00, 0x01, 0x02, 0x05,       /* a: array of 3, offsets 0 1 2 5 */
        0x04, 0x00, 0x09, 'h', 'i',
    };
    /* offsets: b at 0 (3 bytes), a at 10; the array ends at 10 + 11 = 21 */
    uint8_t fixed[sizeof v];
    memcpy(fixed, v, sizeof v);
    fixed[4] = 10; /* a */
    fixed[5] = 0;  /* b */
    fixed[6] = 21; /* end */
    expect(meta, sizeof meta, fixed, sizeof fixed, "{\"a\":[true,null,\"hi\"],\"b\":{}}");
}

static void test_delta_variant__malformed_is_refused(void **state)
{
    (void)state;
    int rc;
    static const uint8_t v[] = { 0x02, 0x01, 0x00, 0x00, 0x02, 0x0C, 0x01 };
    char *s = decode(meta_a, sizeof meta_a, v, sizeof v - 1, &rc); /* value cut short */
    assert_int_equal(MCDC_ECORRUPT, rc);
    free(s);
    static const uint8_t far[] = { 0x02, 0x01, 0x00, 0x40, 0x02, 0x0C, 0x01 }; /* offset 64 */
    static const uint8_t end[] = { 0x02, 0x01, 0x00, 0x00, 0x40, 0x0C, 0x01 }; /* end 64 */
    s = decode(meta_a, sizeof meta_a, end, sizeof end, &rc);
    assert_int_equal(MCDC_ECORRUPT, rc);
    free(s);
    s = decode(meta_a, sizeof meta_a, far, sizeof far, &rc);
    assert_int_equal(MCDC_ECORRUPT, rc);
    free(s);
    static const uint8_t id[] = { 0x02, 0x01, 0x05, 0x00, 0x02, 0x0C, 0x01 }; /* field id 5 */
    s = decode(meta_a, sizeof meta_a, id, sizeof id, &rc);
    assert_int_equal(MCDC_ECORRUPT, rc);
    assert_non_null(strstr(mcdc_error_last()->message, "field id past the metadata dictionary"));
    free(s);
    static const uint8_t meta2[] = { 0x02, 0x00, 0x00 }; /* version 2 */
    static const uint8_t one[] = { 0x04 };
    s = decode(meta2, sizeof meta2, one, sizeof one, &rc);
    assert_int_equal(MCDC_EUNSUPPORTED, rc);
    free(s);
    static const uint8_t meta_long[] = { 0x01, 0xFF, 0x00 }; /* 255 names in 3 bytes */
    s = decode(meta_long, sizeof meta_long, one, sizeof one, &rc);
    assert_int_equal(MCDC_ECORRUPT, rc);
    free(s);
    static const uint8_t bigstr[] = { 0x40, 0xFF, 0xFF, 0xFF, 0x7F, 'x' };
    s = decode(meta_empty, sizeof meta_empty, bigstr, sizeof bigstr, &rc);
    assert_int_equal(MCDC_ECORRUPT, rc);
    free(s);
    static const uint8_t notutf8[] = { 0x40, 0x03, 0, 0, 0, 0xF3, 'a', '"' }; /* found by the fuzzer */
    s = decode(meta_empty, sizeof meta_empty, notutf8, sizeof notutf8, &rc);
    assert_int_equal(MCDC_ECORRUPT, rc);
    assert_non_null(strstr(mcdc_error_last()->message, "not UTF-8"));
    free(s);
    static const uint8_t shortbad[] = { 0x09, 0xC0, 0x80 }; /* overlong NUL */
    s = decode(meta_empty, sizeof meta_empty, shortbad, sizeof shortbad, &rc);
    assert_int_equal(MCDC_ECORRUPT, rc);
    free(s);
    static const uint8_t dec39[] = { 0x28, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                     0, 0x60 }; /* 2^126: 39 digits, past decimal(38) */
    s = decode(meta_empty, sizeof meta_empty, dec39, sizeof dec39, &rc);
    assert_int_equal(MCDC_ECORRUPT, rc);
    free(s);
    static const uint8_t unknown[] = { 0x7C }; /* primitive 31 */
    s = decode(meta_empty, sizeof meta_empty, unknown, sizeof unknown, &rc);
    assert_int_equal(MCDC_EUNSUPPORTED, rc);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_variant__the_worked_example),
        cmocka_unit_test(test_delta_variant__primitives),
        cmocka_unit_test(test_delta_variant__nested_objects_and_arrays),
        cmocka_unit_test(test_delta_variant__malformed_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
