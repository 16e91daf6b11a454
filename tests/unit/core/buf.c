/* Unit tests for core/buf.c: growth, the hard cap (a failed append changes nothing),
 * NUL termination, printf, detach, and the overflow helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/buf.h"

static void test_core_buf__appends_keep_nul_and_grow(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    assert_null(b.ptr);
    assert_int_equal(0, mcdc_buf_puts(&b, "ab"));
    assert_int_equal(0, mcdc_buf_putc(&b, 'c'));
    assert_int_equal(0, mcdc_buf_put(&b, "d\0e", 3));
    assert_int_equal(6, b.len);
    assert_memory_equal("abcd\0e", b.ptr, 7);
    assert_int_equal(0, mcdc_buf_printf(&b, "|%d|%s|", 42, "x"));
    assert_string_equal("|42|x|", b.ptr + 6);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(0, mcdc_buf_putc(&b, (char)('a' + i % 26)));
    assert_int_equal(10012, b.len);
    assert_int_equal('\0', b.ptr[b.len]);
    assert_true(b.cap > b.len);
    size_t cap = b.cap;
    mcdc_buf_clear(&b);
    assert_int_equal(0, b.len);
    assert_string_equal("", b.ptr);
    assert_int_equal(cap, b.cap);
    assert_int_equal(0, mcdc_buf_put(&b, NULL, 0));
    mcdc_buf_dispose(&b);
    assert_null(b.ptr);
    assert_int_equal(0, b.len);
    mcdc_buf_dispose(&b);
    mcdc_buf_dispose(NULL);
    assert_int_equal(0, mcdc_buf_puts(&b, "reused"));
    assert_string_equal("reused", b.ptr);
    mcdc_buf_dispose(&b);
}

static void test_core_buf__cap_is_hard_and_failure_changes_nothing(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(8);
    assert_int_equal(0, mcdc_buf_puts(&b, "12345"));
    assert_int_equal(MCDC_ENOMEM, mcdc_buf_puts(&b, "6789"));
    assert_non_null(strstr(mcdc_error_last()->message, "limit is 8 bytes"));
    assert_string_equal("12345", b.ptr);
    assert_int_equal(5, b.len);
    assert_int_equal(MCDC_ENOMEM, mcdc_buf_printf(&b, "%s", "abcd"));
    assert_string_equal("12345", b.ptr);
    assert_int_equal(0, mcdc_buf_puts(&b, "678"));
    assert_string_equal("12345678", b.ptr);
    assert_true(b.cap <= 9);
    assert_int_equal(MCDC_ENOMEM, mcdc_buf_putc(&b, '9'));
    assert_int_equal(MCDC_ENOMEM, mcdc_buf_grow(&b, SIZE_MAX));
    mcdc_buf_dispose(&b);

    mcdc_buf z = MCDC_BUF_INIT(0);
    assert_int_equal(0, mcdc_buf_put(&z, "", 0));
    assert_int_equal(MCDC_ENOMEM, mcdc_buf_putc(&z, 'x'));
    mcdc_buf_dispose(&z);

    mcdc_buf big = MCDC_BUF_INIT(SIZE_MAX); /* no cap at all must not wrap around */
    assert_int_equal(0, mcdc_buf_puts(&big, "fine"));
    assert_string_equal("fine", big.ptr);
    mcdc_buf_dispose(&big);
}

static void test_core_buf__detach_hands_over_memory(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(100);
    char *s = mcdc_buf_detach(&b);
    assert_string_equal("", s);
    free(s);
    assert_int_equal(0, mcdc_buf_puts(&b, "mine"));
    s = mcdc_buf_detach(&b);
    assert_string_equal("mine", s);
    assert_null(b.ptr);
    assert_int_equal(0, b.len);
    assert_int_equal(100, b.max);
    free(s);
}

static void test_core_buf__overflow_helpers(void **state)
{
    (void)state;
    size_t r;
    assert_false(mcdc_add_overflow(1, 2, &r));
    assert_int_equal(3, r);
    assert_true(mcdc_add_overflow(SIZE_MAX, 1, &r));
    assert_false(mcdc_mul_overflow(SIZE_MAX / 2, 2, &r));
    assert_true(mcdc_mul_overflow(SIZE_MAX / 2 + 1, 2, &r));
    assert_false(mcdc_mul_overflow(0, SIZE_MAX, &r));
    assert_int_equal(0, r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_buf__appends_keep_nul_and_grow),
        cmocka_unit_test(test_core_buf__cap_is_hard_and_failure_changes_nothing),
        cmocka_unit_test(test_core_buf__detach_hands_over_memory),
        cmocka_unit_test(test_core_buf__overflow_helpers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
