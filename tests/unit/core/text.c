/*
 * tests/unit/core/text.c: UTF-8 to UTF-16LE and CP1252 (mcdc/text.h), the bytes SQL Server
 * stores for an nvarchar and a varchar: worked examples, surrogate pairs, malformed input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mcdc/text.h"

static void test_core_text__utf16le_of_ascii_latin_and_a_pair(void **state)
{
    (void)state;
    uint8_t out[32];
    const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* a é € 😀 */
    size_t n = strlen(s);
    assert_int_equal(5, mcdc_text_utf16_units(s, n));
    assert_int_equal(10, mcdc_text_utf16le(out, s, n));
    const uint8_t want[] = {0x61, 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE};
    assert_memory_equal(want, out, sizeof want);
}

static void test_core_text__malformed_bytes_are_one_replacement_each(void **state)
{
    (void)state;
    uint8_t out[32];
    size_t used;
    /* an overlong '/', a lone surrogate, a truncated sequence */
    assert_int_equal(-1, mcdc_text_utf8_next("\xc0\xaf", 2, &used));
    assert_int_equal(1, used);
    assert_int_equal(-1, mcdc_text_utf8_next("\xed\xa0\x80", 3, &used));
    assert_int_equal(-1, mcdc_text_utf8_next("\xe2\x82", 2, &used));
    assert_int_equal(0x20AC, mcdc_text_utf8_next("\xe2\x82\xac", 3, &used));
    assert_int_equal(3, used);
    assert_int_equal(3, mcdc_text_utf16_units("x\xe2\x82", 3));
    assert_int_equal(6, mcdc_text_utf16le(out, "x\xe2\x82", 3));
    const uint8_t want[] = {'x', 0, 0xFD, 0xFF, 0xFD, 0xFF};
    assert_memory_equal(want, out, sizeof want);
}

static void test_core_text__cp1252_holds_latin1_and_its_own_30_and_no_more(void **state)
{
    (void)state;
    uint8_t out[32];
    const char *s = "\xc3\xa9\xe2\x82\xac\xc5\xb8\xc2\x81\xce\xb1z"; /* é € Ÿ U+0081 α z */
    size_t n = strlen(s);
    assert_int_equal(6, mcdc_text_cp1252_len(s, n));
    assert_int_equal(6, mcdc_text_cp1252(out, s, n));
    const uint8_t want[] = {0xE9, 0x80, 0x9F, 0x81, '?', 'z'};
    assert_memory_equal(want, out, sizeof want);
    assert_true(mcdc_text_cp1252_has(0x20AC));
    assert_false(mcdc_text_cp1252_has(0x3B1));
    assert_int_equal(0x20AC, mcdc_text_cp1252_cp(0x80));
    assert_int_equal(0x81, mcdc_text_cp1252_cp(0x81));
    assert_int_equal(0xE9, mcdc_text_cp1252_cp(0xE9));
    uint8_t b[4];
    assert_int_equal(3, mcdc_text_utf8_put(b, 0x20AC));
    assert_memory_equal("\xe2\x82\xac", b, 3);
    assert_int_equal(4, mcdc_text_utf8_put(b, 0x1F600));
    assert_memory_equal("\xf0\x9f\x98\x80", b, 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_text__utf16le_of_ascii_latin_and_a_pair),
        cmocka_unit_test(test_core_text__malformed_bytes_are_one_replacement_each),
        cmocka_unit_test(test_core_text__cp1252_holds_latin1_and_its_own_30_and_no_more),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
