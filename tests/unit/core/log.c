/* Unit tests for core/log.c: the sink, the level threshold, level names and the
 * "once, then at most every interval" rate limiter. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/log.h"

static char last[8192];
static char last_logger[64];
static int n_calls;

static void sink(mcdc_log_level level, const char *logger, const char *msg, void *payload)
{
    (void)level;
    *(int *)payload += 1;
    n_calls++;
    snprintf(last, sizeof last, "%s", msg);
    snprintf(last_logger, sizeof last_logger, "%s", logger);
}

static void test_core_log__threshold_and_sink(void **state)
{
    (void)state;
    int payload = 0;
    n_calls = 0;
    mcdc_log(MCDC_LOG_ERROR, "x", "dropped: no sink");
    assert_int_equal(0, n_calls);
    mcdc_log_set_sink(sink, &payload);
    assert_int_equal(MCDC_LOG_INFO, mcdc_log_get_level());
    mcdc_log(MCDC_LOG_DEBUG, "stream", "below the threshold");
    assert_int_equal(0, n_calls);
    mcdc_log(MCDC_LOG_INFO, "stream", "batch %d committed", 7);
    assert_int_equal(1, n_calls);
    assert_int_equal(1, payload);
    assert_string_equal("batch 7 committed", last);
    assert_string_equal("stream", last_logger);
    mcdc_log(MCDC_LOG_WARN, NULL, "no logger");
    assert_string_equal("mcdc", last_logger);
    mcdc_log_set_level(MCDC_LOG_ERROR);
    mcdc_log(MCDC_LOG_WARN, "stream", "dropped");
    assert_int_equal(2, n_calls);
    mcdc_log_set_level(MCDC_LOG_DEBUG);
    mcdc_log(MCDC_LOG_DEBUG, "stream", "now shown");
    assert_int_equal(3, n_calls);
    /* Long messages are cut, never overflow. */
    char big[6000];
    memset(big, 'y', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    mcdc_log(MCDC_LOG_INFO, "stream", "%s", big);
    assert_int_equal(4095, strlen(last));
    mcdc_log_set_sink(NULL, NULL);
    mcdc_log_set_level(MCDC_LOG_INFO);
}

static void test_core_log__level_names(void **state)
{
    (void)state;
    mcdc_log_level l;
    assert_int_equal(0, mcdc_log_level_parse(&l, "DEBUG"));
    assert_int_equal(MCDC_LOG_DEBUG, l);
    assert_int_equal(0, mcdc_log_level_parse(&l, "info"));
    assert_int_equal(MCDC_LOG_INFO, l);
    assert_int_equal(0, mcdc_log_level_parse(&l, "Warn"));
    assert_int_equal(MCDC_LOG_WARN, l);
    assert_int_equal(0, mcdc_log_level_parse(&l, "warning"));
    assert_int_equal(MCDC_LOG_WARN, l);
    assert_int_equal(0, mcdc_log_level_parse(&l, "error"));
    assert_int_equal(MCDC_LOG_ERROR, l);
    assert_int_equal(MCDC_EINVAL, mcdc_log_level_parse(&l, "verbose"));
    assert_string_equal("bad log level 'verbose': expected debug, info, warn or error", mcdc_error_last()->message);
    assert_int_equal(MCDC_EINVAL, mcdc_log_level_parse(&l, NULL));
    assert_string_equal("DEBUG", mcdc_log_level_name(MCDC_LOG_DEBUG));
    assert_string_equal("INFO", mcdc_log_level_name(MCDC_LOG_INFO));
    assert_string_equal("WARN", mcdc_log_level_name(MCDC_LOG_WARN));
    assert_string_equal("ERROR", mcdc_log_level_name(MCDC_LOG_ERROR));
}

static void test_core_log__ratelimit_once_then_every_interval(void **state)
{
    (void)state;
    mcdc_ratelimit rl = MCDC_RATELIMIT_INIT(MCDC_RATELIMIT_WARN_US);
    int64_t t0 = 5000000;
    assert_true(mcdc_ratelimit_allow(&rl, t0));
    assert_false(mcdc_ratelimit_allow(&rl, t0 + 1));
    assert_false(mcdc_ratelimit_allow(&rl, t0 + MCDC_RATELIMIT_WARN_US - 1));
    assert_int_equal(2, rl.n_suppressed);
    assert_true(mcdc_ratelimit_allow(&rl, t0 + MCDC_RATELIMIT_WARN_US));
    assert_int_equal(0, rl.n_suppressed);
    assert_false(mcdc_ratelimit_allow(&rl, t0 + MCDC_RATELIMIT_WARN_US + 10));
    mcdc_ratelimit_reset(&rl);
    assert_true(mcdc_ratelimit_allow(&rl, t0 + MCDC_RATELIMIT_WARN_US + 11));
    /* A monotonic clock reading 0 still counts as an event. */
    mcdc_ratelimit z = MCDC_RATELIMIT_INIT(100);
    assert_true(mcdc_ratelimit_allow(&z, 0));
    assert_false(mcdc_ratelimit_allow(&z, 50));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_log__threshold_and_sink),
        cmocka_unit_test(test_core_log__level_names),
        cmocka_unit_test(test_core_log__ratelimit_once_then_every_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
