/* Unit tests for core/error.c: the thread-local record, hints, prefixes, cutting long
 * messages, and mcdc_strerror for every code. */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"

static void test_core_error__set_hint_prefix_clear(void **state)
{
    (void)state;
    mcdc_error_clear();
    assert_int_equal(0, mcdc_error_last()->code);
    assert_string_equal("", mcdc_error_last()->message);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_error_set(MCDC_ENOTFOUND, "table %s: no _delta_log", "bronze.orders"));
    assert_int_equal(MCDC_ENOTFOUND, mcdc_error_hint("create it with %s", "stream"));
    assert_string_equal("table bronze.orders: no _delta_log", mcdc_error_last()->message);
    assert_string_equal("create it with stream", mcdc_error_last()->hint);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_error_prefix("%s", "/lake/x"));
    assert_string_equal("/lake/x: table bronze.orders: no _delta_log", mcdc_error_last()->message);
    assert_string_equal("create it with stream", mcdc_error_last()->hint); /* a prefix keeps the hint */
    /* A new error clears the old hint. */
    mcdc_error_set(MCDC_EIO, "disk full");
    assert_string_equal("", mcdc_error_last()->hint);
    assert_int_equal(MCDC_EIO, mcdc_error_last()->code);
    mcdc_error_clear();
    assert_int_equal(0, mcdc_error_last()->code);
    assert_string_equal("", mcdc_error_last()->hint);
}

/* A saved record comes back whole (code, message, hint) after other errors replaced it. */
static void test_core_error__restore_brings_back_a_saved_record(void **state)
{
    (void)state;
    mcdc_error_set(MCDC_ECONFLICT, "batch %d was taken", 7);
    mcdc_error_hint("keep one stream per checkpoint");
    mcdc_error saved = *mcdc_error_last();
    mcdc_error_set(MCDC_EIO, "cleanup failed");
    assert_int_equal(MCDC_ECONFLICT, mcdc_error_restore(&saved));
    assert_int_equal(MCDC_ECONFLICT, mcdc_error_last()->code);
    assert_string_equal("batch 7 was taken", mcdc_error_last()->message);
    assert_string_equal("keep one stream per checkpoint", mcdc_error_last()->hint);
    mcdc_error_set(MCDC_EIO, "no hint");
    mcdc_error_clear();
    mcdc_error none = *mcdc_error_last();
    mcdc_error_set(MCDC_EIO, "again");
    mcdc_error_hint("a hint");
    assert_int_equal(0, mcdc_error_restore(&none));
    assert_string_equal("", mcdc_error_last()->hint);
    assert_int_equal(MCDC_ECONFLICT, mcdc_error_restore(&saved));
    assert_int_equal(MCDC_ECONFLICT, mcdc_error_restore(mcdc_error_last())); /* itself */
}

static void test_core_error__long_messages_are_cut_not_overflowed(void **state)
{
    (void)state;
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    mcdc_error_set(MCDC_ECORRUPT, "%s", big);
    const mcdc_error *e = mcdc_error_last();
    assert_int_equal(sizeof e->message - 1, strlen(e->message));
    mcdc_error_hint("%s", big);
    assert_int_equal(sizeof e->hint - 1, strlen(e->hint));
    /* The prefix survives whole; the old message is cut to fit after it. */
    mcdc_error_prefix("file %s", "p");
    assert_int_equal(sizeof e->message - 1, strlen(e->message));
    assert_memory_equal("file p: xxx", e->message, 11);
    /* A prefix longer than its own buffer is cut, still NUL-terminated. */
    mcdc_error_set(MCDC_ECORRUPT, "short");
    mcdc_error_prefix("%s", big);
    assert_true(strlen(e->message) < sizeof e->message);
    assert_non_null(strstr(e->message, ": short"));
}

static void *other_thread(void *arg)
{
    (void)arg;
    /* A fresh thread starts clear and does not see the main thread's error. */
    int clear = mcdc_error_last()->code == 0;
    mcdc_error_set(MCDC_ETIMEOUT, "thread's own");
    return clear ? (void *)1 : NULL;
}

static void test_core_error__record_is_per_thread(void **state)
{
    (void)state;
    mcdc_error_set(MCDC_ECONFLICT, "main's");
    pthread_t t;
    void *res = NULL;
    assert_int_equal(0, pthread_create(&t, NULL, other_thread, NULL));
    assert_int_equal(0, pthread_join(t, &res));
    assert_non_null(res);
    assert_int_equal(MCDC_ECONFLICT, mcdc_error_last()->code);
    assert_string_equal("main's", mcdc_error_last()->message);
}

static void test_core_error__strerror_covers_every_code(void **state)
{
    (void)state;
    for (int c = 0; c >= MCDC_EPERM; c--) { /* MCDC_EPERM: the last code */
        const char *s = mcdc_strerror(c);
        assert_non_null(s);
        assert_string_not_equal("unknown error code", s);
        for (int d = c + 1; d <= 0; d++)
            assert_string_not_equal(mcdc_strerror(d), s);
    }
    assert_string_equal("unknown error code", mcdc_strerror(MCDC_EPERM - 1));
    assert_string_equal("unknown error code", mcdc_strerror(7));
    assert_string_equal("locked by another process", mcdc_strerror(MCDC_ELOCKED));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_error__set_hint_prefix_clear),
        cmocka_unit_test(test_core_error__restore_brings_back_a_saved_record),
        cmocka_unit_test(test_core_error__long_messages_are_cut_not_overflowed),
        cmocka_unit_test(test_core_error__record_is_per_thread),
        cmocka_unit_test(test_core_error__strerror_covers_every_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
