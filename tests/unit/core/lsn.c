/* Unit tests for core/lsn.c: parsing, formatting, ordering and stepping of LSNs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/lsn.h"

static void test_core_lsn__parse_pads_and_formats_upper(void **state)
{
    (void)state;
    mcdc_lsn l;
    char s[MCDC_LSN_STRLEN];
    assert_int_equal(0, mcdc_lsn_parse(&l, "0x2a"));
    assert_string_equal("0x0000000000000000002A", mcdc_lsn_format(s, &l));
    assert_int_equal(0, mcdc_lsn_parse(&l, "0X0000002D000001A00003"));
    assert_string_equal("0x0000002D000001A00003", mcdc_lsn_format(s, &l));
    assert_int_equal(0, mcdc_lsn_parse(&l, "0xffffffffffffffffffff"));
    assert_string_equal("0xFFFFFFFFFFFFFFFFFFFF", mcdc_lsn_format(s, &l));
}

static void test_core_lsn__parse_refuses_malformed(void **state)
{
    (void)state;
    mcdc_lsn l;
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse(&l, "2A"));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse(&l, "0x"));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse(&l, "0x12G4"));
    assert_non_null(strstr(mcdc_error_last()->message, "'G' is not a hex digit"));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse(&l, "0x000000000000000000001")); /* 21 digits */
    assert_non_null(strstr(mcdc_error_last()->message, "21 hex digits"));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse(&l, NULL));
}

static void test_core_lsn__parse_n_reads_only_its_bytes(void **state)
{
    (void)state;
    mcdc_lsn l, m;
    char buf[MCDC_LSN_STRLEN];
    /* the text is followed by more digits that are not part of it */
    assert_int_equal(0, mcdc_lsn_parse_n(&l, "0x0000002D000001A00003FF", 22));
    assert_string_equal("0x0000002D000001A00003", mcdc_lsn_format(buf, &l));
    assert_int_equal(0, mcdc_lsn_parse_n(&l, "0x2a9", 4));
    assert_int_equal(0, mcdc_lsn_parse(&m, "0x2a"));
    assert_int_equal(0, mcdc_lsn_cmp(&l, &m));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse_n(&l, "0x1\0" "2", 5)); /* a NUL is no digit */
    assert_non_null(strstr(mcdc_error_last()->message, "byte 0x00 is not a hex digit"));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse_n(&l, "0x12", 2));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse_n(&l, "0x12", 1));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_parse_n(&l, "", 0));
}

static void test_core_lsn__compare_is_unsigned_big_endian(void **state)
{
    (void)state;
    mcdc_lsn a, b;
    mcdc_lsn_parse(&a, "0x00000001000000000000");
    mcdc_lsn_parse(&b, "0x000000000000000000FF");
    assert_true(mcdc_lsn_cmp(&a, &b) > 0);
    assert_true(mcdc_lsn_cmp(&b, &a) < 0);
    assert_int_equal(0, mcdc_lsn_cmp(&a, &a));
    mcdc_lsn_parse(&a, "0x80000000000000000000");
    assert_true(mcdc_lsn_cmp(&a, &b) > 0);
}

static void test_core_lsn__increment_decrement_carry_and_ends(void **state)
{
    (void)state;
    mcdc_lsn a, r;
    char s[MCDC_LSN_STRLEN];
    mcdc_lsn_parse(&a, "0x000000000000000000FF");
    assert_int_equal(0, mcdc_lsn_increment(&r, &a));
    assert_string_equal("0x00000000000000000100", mcdc_lsn_format(s, &r));
    assert_int_equal(0, mcdc_lsn_decrement(&r, &r));
    assert_string_equal("0x000000000000000000FF", mcdc_lsn_format(s, &r));
    mcdc_lsn_parse(&a, "0x00000001000000000000");
    assert_int_equal(0, mcdc_lsn_decrement(&r, &a));
    assert_string_equal("0x00000000FFFFFFFFFFFF", mcdc_lsn_format(s, &r));
    a = mcdc_lsn_zero();
    assert_true(mcdc_lsn_is_zero(&a));
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_decrement(&r, &a));
    mcdc_lsn_parse(&a, "0xFFFFFFFFFFFFFFFFFFFF");
    assert_int_equal(MCDC_EINVAL, mcdc_lsn_increment(&r, &a));
    assert_non_null(strstr(mcdc_error_last()->message, "largest"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_lsn__parse_pads_and_formats_upper),
        cmocka_unit_test(test_core_lsn__parse_refuses_malformed),
        cmocka_unit_test(test_core_lsn__parse_n_reads_only_its_bytes),
        cmocka_unit_test(test_core_lsn__compare_is_unsigned_big_endian),
        cmocka_unit_test(test_core_lsn__increment_decrement_carry_and_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
