/* Unit tests for core/keyhash.c: the key text, key hash, ordinal and row hash reconcile
 * compares on both sides. Expected hashes were worked out independently (SHA-256 of the
 * UTF-16LE text, first 7 bytes big-endian), as T-SQL's
 * CONVERT(bigint, SUBSTRING(HASHBYTES('SHA2_256', N'2:42;'), 1, 7)) gives them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/keyhash.h"

static mcdc_column col(const char *name, mcdc_type_id t, int scale)
{
    mcdc_column c = { (char *)name, t, t == MCDC_TYPE_DECIMAL ? 12 : 0, scale, true };
    return c;
}

static void text_is(const char *want, const mcdc_column *cols, const mcdc_value *vals, size_t n)
{
    const mcdc_column *cp[4];
    const mcdc_value *vp[4];
    for (size_t i = 0; i < n; i++) {
        cp[i] = &cols[i];
        vp[i] = &vals[i];
    }
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_keyhash_text(&b, cp, vp, n));
    assert_int_equal(strlen(want), b.len);
    assert_memory_equal(want, b.ptr, b.len);
    mcdc_buf_dispose(&b);
}

static void test_core_keyhash__texts_are_length_prefixed_per_column(void **state)
{
    (void)state;
    mcdc_column c[3] = { col("a", MCDC_TYPE_INT, 0), col("s", MCDC_TYPE_STRING, 0), col("d", MCDC_TYPE_DECIMAL, 2) };
    mcdc_value v[3] = { { .v.i = -42 }, { .v.s = { "a;b", 3 } }, { .v.dec = 105 } };
    text_is("3:-42;3:a;b;4:1.05;", c, v, 3);
    v[1].is_null = true;
    text_is("3:-42;-;4:1.05;", c, v, 3);
    /* a character outside the BMP counts two UTF-16 code units, as DATALENGTH(x)/2 does */
    mcdc_value e = { .v.s = { "\xF0\x9F\x98\x80", 4 } };
    text_is("2:\xF0\x9F\x98\x80;", &c[1], &e, 1);
    mcdc_column dt[2] = { col("d", MCDC_TYPE_DATE, 0), col("b", MCDC_TYPE_BINARY, 0) };
    mcdc_value dv[2] = { { .v.i = 20362 }, { .v.s = { "\x01\xAB", 2 } } };
    text_is("10:2025-10-01;6:0x01AB;", dt, dv, 2);
}

static void test_core_keyhash__hash_is_sha256_of_utf16le_first_7_bytes(void **state)
{
    (void)state;
    int64_t h;
    assert_int_equal(0, mcdc_keyhash_of_text(&h, "2:42;", 5));
    assert_int_equal(INT64_C(6362924643553687), h);
    assert_int_equal(0, mcdc_keyhash_of_text(&h, "2:ab;1:7;", 9));
    assert_int_equal(INT64_C(10962938122466935), h);
    assert_int_equal(0, mcdc_keyhash_of_text(&h, "-;", 2));
    assert_int_equal(INT64_C(62002834440994925), h);
    assert_int_equal(0, mcdc_keyhash_of_text(&h, "2:\xF0\x9F\x98\x80;", 7));
    assert_int_equal(INT64_C(20577367275893886), h);
    assert_true(h >= 0 && h < (INT64_C(1) << 56));
    assert_int_equal(MCDC_ECORRUPT, mcdc_keyhash_of_text(&h, "\xC3", 1));
}

static void test_core_keyhash__floating_keys_are_refused(void **state)
{
    (void)state;
    mcdc_column c = col("f", MCDC_TYPE_DOUBLE, 0);
    mcdc_value v = { .v.d = 1.5 };
    const mcdc_column *cp = &c;
    const mcdc_value *vp = &v;
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(MCDC_EUNSUPPORTED, mcdc_keyhash_text(&b, &cp, &vp, 1));
    mcdc_buf_dispose(&b);
    assert_false(mcdc_keyhash_type_ok(&c));
    assert_false(mcdc_keyhash_has_ordinal(&c));
}

static void test_core_keyhash__ordinals_and_floor_division(void **state)
{
    (void)state;
    mcdc_column i = col("i", MCDC_TYPE_LONG, 0), d = col("d", MCDC_TYPE_DATE, 0), s = col("s", MCDC_TYPE_STRING, 0);
    mcdc_value v = { .v.i = -7 }, n = { .is_null = true };
    int64_t o;
    assert_int_equal(0, mcdc_keyhash_ordinal(&o, &i, &v));
    assert_int_equal(-7, o);
    assert_int_equal(0, mcdc_keyhash_ordinal(&o, &d, &v));
    assert_int_equal(MCDC_EINVAL, mcdc_keyhash_ordinal(&o, &s, &v));
    assert_int_equal(MCDC_EINVAL, mcdc_keyhash_ordinal(&o, &i, &n));
    assert_int_equal(-3, mcdc_keyhash_floor_div(-7, 3));
    assert_int_equal(-1, mcdc_keyhash_floor_div(-3, 3));
    assert_int_equal(2, mcdc_keyhash_floor_div(7, 3));
    assert_int_equal(0, mcdc_keyhash_floor_div(0, 3));
}

static void test_core_keyhash__row_hash_covers_each_value_and_null(void **state)
{
    (void)state;
    mcdc_column c[4] = { col("id", MCDC_TYPE_INT, 0), col("s", MCDC_TYPE_STRING, 0), col("d", MCDC_TYPE_DECIMAL, 2),
                         col("n", MCDC_TYPE_STRING, 0) };
    mcdc_value v[4] = { { .v.i = 1 }, { .v.s = { "a", 1 } }, { .v.dec = 100 }, { .is_null = true } };
    const mcdc_column *cp[4] = { &c[0], &c[1], &c[2], &c[3] };
    const mcdc_value *vp[4] = { &v[0], &v[1], &v[2], &v[3] };
    uint8_t h[MCDC_KEYHASH_ROW_LEN], h2[MCDC_KEYHASH_ROW_LEN];
    mcdc_buf scratch = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_keyhash_row(h, &scratch, cp, vp, 4));
    /* SHA-256 of 1:1;3:"a";6:"1.00";4:null; */
    static const uint8_t want[8] = { 0xf1, 0x27, 0x9b, 0xa9, 0x37, 0x97, 0x31, 0xe0 };
    assert_memory_equal(want, h, sizeof want);
    v[3].is_null = false;
    v[3].v.s.ptr = "null";
    v[3].v.s.len = 4;
    assert_int_equal(0, mcdc_keyhash_row(h2, &scratch, cp, vp, 4));
    assert_memory_not_equal(h, h2, sizeof h); /* the string "null" is not NULL */
    mcdc_buf_dispose(&scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_keyhash__texts_are_length_prefixed_per_column),
        cmocka_unit_test(test_core_keyhash__hash_is_sha256_of_utf16le_first_7_bytes),
        cmocka_unit_test(test_core_keyhash__floating_keys_are_refused),
        cmocka_unit_test(test_core_keyhash__ordinals_and_floor_division),
        cmocka_unit_test(test_core_keyhash__row_hash_covers_each_value_and_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
