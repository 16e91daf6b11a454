/* Unit tests for core/key_order.c: the source orders of text (case-insensitive, trailing
 * spaces ignored) and uniqueidentifier (SQL Server's byte groups) as memcmp order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/buf.h"
#include "mcdc/key_order.h"

/* memcmp order of the encodings of @p a and @p b (a prefix first) */
static int cmp(int (*enc)(mcdc_buf *, const char *, size_t), const char *a, const char *b)
{
    mcdc_buf x = MCDC_BUF_INIT(1 << 16), y = MCDC_BUF_INIT(1 << 16);
    assert_int_equal(0, enc(&x, a, strlen(a)));
    assert_int_equal(0, enc(&y, b, strlen(b)));
    size_t n = x.len < y.len ? x.len : y.len;
    int c = memcmp(x.ptr, y.ptr, n);
    if (c == 0)
        c = x.len < y.len ? -1 : x.len > y.len;
    mcdc_buf_dispose(&x);
    mcdc_buf_dispose(&y);
    return c < 0 ? -1 : c > 0;
}

static void test_core_key_order__text_is_case_insensitive(void **state)
{
    (void)state;
    assert_int_equal(-1, cmp(mcdc_key_order_text_ci, "a", "B"));  /* bytewise: B < a */
    assert_int_equal(-1, cmp(mcdc_key_order_text_ci, "B", "c"));
    assert_int_equal(0, cmp(mcdc_key_order_text_ci, "East", "eAST"));
    assert_int_equal(0, cmp(mcdc_key_order_text_ci, "ab", "ab  ")); /* trailing spaces */
    assert_int_equal(-1, cmp(mcdc_key_order_text_ci, "ab", "abc")); /* a prefix first */
    assert_int_equal(0, cmp(mcdc_key_order_text_ci, "\xc3\xa9", "\xc3\x89")); /* é = É */
    assert_int_equal(-1, cmp(mcdc_key_order_text_ci, "z", "\xc3\xa9"));    /* by code point */
}

static void test_core_key_order__guid_by_byte_groups(void **state)
{
    (void)state;
    /* the last group decides first, the first group last */
    assert_int_equal(-1, cmp(mcdc_key_order_guid, "00000005-0000-0000-0000-000000000001",
                             "00000001-0000-0000-0000-000000000002"));
    assert_int_equal(-1, cmp(mcdc_key_order_guid, "00000000-0000-0001-0000-000000000000",
                             "00000000-0000-0000-0001-000000000000"));
    assert_int_equal(0, cmp(mcdc_key_order_guid, "0000000A-0000-0000-0000-00000000000B",
                            "0000000a-0000-0000-0000-00000000000b"));
}

static void test_core_key_order__names(void **state)
{
    (void)state;
    for (int o = MCDC_KEY_ORDER_VALUE; o <= MCDC_KEY_ORDER_BYTES; o++)
        assert_int_equal(o, mcdc_key_order_parse(mcdc_key_order_name((mcdc_key_order)o)));
    assert_int_equal(-1, mcdc_key_order_parse("collation"));
    assert_int_equal(-1, mcdc_key_order_parse(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_key_order__text_is_case_insensitive),
        cmocka_unit_test(test_core_key_order__guid_by_byte_groups),
        cmocka_unit_test(test_core_key_order__names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
