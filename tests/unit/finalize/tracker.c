/* Unit tests for finalize/tracker.c: the worker driven by synthetic progress, against an
 * in-memory store (no source, no Delta). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/finalize.h"

#include "unit/finalize/fake_store.h"

static mcdc_offset off(uint64_t lsn, const char *ts)
{
    mcdc_offset o;
    memset(&o, 0, sizeof o);
    o.lsn = mcdc_lsn_from_u64(0, lsn);
    assert_int_equal(0, mcdc_time_parse(&o.commit_ts_us, ts));
    o.has_commit_ts = true;
    return o;
}

static int64_t at(const char *ts)
{
    int64_t us;
    assert_int_equal(0, mcdc_time_parse(&us, ts));
    return us;
}

/* The injectable clock of the rate limiter. */
static atomic_llong fake_now;
static int64_t fake_clock(void *payload)
{
    (void)payload;
    return atomic_load(&fake_now);
}

static mcdc_tracker_options fast_opts(void)
{
    mcdc_tracker_options o = MCDC_TRACKER_OPTIONS_INIT;
    o.table_name = "bronze.orders";
    o.retry_delay_us[0] = 10000;
    o.retry_delay_us[1] = 20000;
    o.clock_us = fake_clock;
    return o;
}

static uint64_t handled(mcdc_tracker *t)
{
    mcdc_tracker_stats s;
    mcdc_tracker_get_stats(t, &s);
    return s.n_advances + s.n_skipped + s.total_failures;
}

/* Wait (up to 5 s) until the worker handled @p n progress events in all. */
static void wait_handled(mcdc_tracker *t, uint64_t n)
{
    for (int i = 0; i < 5000 && handled(t) < n; i++)
        sleep_ms(1);
    assert_true(handled(t) >= n);
}

static int setup(void **state)
{
    (void)state;
    rec_reset();
    atomic_store(&fake_now, 1000000);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    mcdc_log_set_sink(NULL, NULL);
    return 0;
}

static void test_finalize_tracker__other_runs_are_ignored(void **state)
{
    (void)state;
    fake_store f;
    fake_store_init(&f);
    mcdc_finalize_store st = { fake_advance, &f };
    mcdc_tracker_options o = fast_opts();
    mcdc_tracker *t;
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-A", &o));
    mcdc_offset p = off(10, "2026-10-01T15:10:00");
    mcdc_tracker_on_progress(t, "run-B", &p);
    mcdc_tracker_on_terminated(t, "run-B");
    assert_false(mcdc_tracker_join(t, 50000)); /* B's termination does not stop A's tracker */
    assert_int_equal(0, fake_calls(&f));
    mcdc_tracker_stats s;
    mcdc_tracker_get_stats(t, &s);
    assert_int_equal(2, s.n_ignored);
    mcdc_tracker_on_progress(t, "run-A", &p);
    mcdc_tracker_on_terminated(t, "run-A");
    assert_true(mcdc_tracker_join(t, 5000000));
    mcdc_tracker_get_stats(t, &s);
    assert_true(s.finished);
    assert_int_equal(1, s.n_advances);
    assert_true(s.verdict.has);
    assert_int_equal(at("2026-10-01T15:00:00"), s.verdict.until_us);
    mcdc_tracker_free(t);
    fake_store_dispose(&f);
}

static void test_finalize_tracker__same_period_writes_nothing(void **state)
{
    (void)state;
    fake_store f;
    fake_store_init(&f);
    mcdc_finalize_store st = { fake_advance, &f };
    mcdc_tracker_options o = fast_opts();
    mcdc_tracker *t;
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-A", &o));
    mcdc_offset p1 = off(10, "2026-10-01T15:10:00"), p2 = off(11, "2026-10-01T15:40:00"),
                p3 = off(12, "2026-10-01T15:59:59.999"), p4 = off(13, "2026-10-01T16:00:00");
    mcdc_tracker_on_progress(t, "run-A", &p1);
    wait_handled(t, 1);
    mcdc_tracker_on_progress(t, "run-A", &p2);
    wait_handled(t, 2);
    mcdc_tracker_on_progress(t, "run-A", &p3);
    wait_handled(t, 3);
    assert_int_equal(1, fake_calls(&f)); /* the store is not even asked */
    mcdc_tracker_on_progress(t, "run-A", &p4);
    mcdc_tracker_on_terminated(t, "run-A");
    assert_true(mcdc_tracker_join(t, 5000000));
    mcdc_tracker_stats s;
    mcdc_tracker_get_stats(t, &s);
    assert_int_equal(2, fake_calls(&f));
    assert_int_equal(2, s.n_advances);
    assert_int_equal(2, s.n_skipped);
    assert_int_equal(at("2026-10-01T16:00:00"), s.verdict.until_us);
    mcdc_tracker_free(t);
    fake_store_dispose(&f);
}

static void test_finalize_tracker__failure_logged_once_then_rate_limited(void **state)
{
    (void)state;
    fake_store f;
    fake_store_init(&f);
    fake_set(&f, -1, false);
    mcdc_finalize_store st = { fake_advance, &f };
    mcdc_tracker_options o = fast_opts();
    mcdc_tracker *t;
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-A", &o));
    mcdc_offset p = off(10, "2026-10-01T15:10:00");
    for (int i = 1; i <= 5; i++) {
        p.lsn = mcdc_lsn_from_u64(0, 10 + (uint64_t)i); /* idle progress, same period */
        mcdc_tracker_on_progress(t, "run-A", &p);
        wait_handled(t, (uint64_t)i);
        atomic_fetch_add(&fake_now, 60 * MCDC_US_PER_SEC); /* a minute between progress */
    }
    assert_int_equal(5, fake_calls(&f)); /* every progress retries the unwritten verdict */
    assert_int_equal(1, atomic_load(&log_n_error));
    assert_int_equal(0, atomic_load(&log_n_warn));
    mcdc_tracker_stats s;
    mcdc_tracker_get_stats(t, &s);
    assert_int_equal(5, s.failures);
    assert_true(s.pending_failed);
    assert_non_null(strstr(s.last_error, "disk on fire"));
    assert_non_null(strstr(log_last, "bronze.orders"));

    atomic_fetch_add(&fake_now, 10 * 60 * MCDC_US_PER_SEC); /* ten minutes later: one WARN */
    p.lsn = mcdc_lsn_from_u64(0, 20);
    mcdc_tracker_on_progress(t, "run-A", &p);
    wait_handled(t, 6);
    p.lsn = mcdc_lsn_from_u64(0, 21);
    mcdc_tracker_on_progress(t, "run-A", &p);
    wait_handled(t, 7);
    assert_int_equal(1, atomic_load(&log_n_error));
    assert_int_equal(1, atomic_load(&log_n_warn));

    fake_set(&f, 0, false); /* it heals: the next progress writes, the streak ends */
    p.lsn = mcdc_lsn_from_u64(0, 22);
    mcdc_tracker_on_progress(t, "run-A", &p);
    wait_handled(t, 8);
    mcdc_tracker_get_stats(t, &s);
    assert_int_equal(0, s.failures);
    assert_int_equal(7, s.total_failures);
    assert_string_equal("", s.last_error);
    assert_false(s.pending_failed);
    assert_int_equal(at("2026-10-01T15:00:00"), s.verdict.until_us);

    fake_set(&f, -1, false); /* a new streak logs ERROR again */
    mcdc_offset q = off(30, "2026-10-01T16:05:00");
    mcdc_tracker_on_progress(t, "run-A", &q);
    wait_handled(t, 9);
    assert_int_equal(2, atomic_load(&log_n_error));
    fake_set(&f, 0, false);
    mcdc_tracker_on_terminated(t, "run-A");
    assert_true(mcdc_tracker_join(t, 5000000));
    mcdc_tracker_get_stats(t, &s);
    assert_int_equal(at("2026-10-01T16:00:00"), s.verdict.until_us);
    mcdc_tracker_free(t);
    fake_store_dispose(&f);
}

static void test_finalize_tracker__retried_after_termination(void **state)
{
    (void)state;
    fake_store f;
    fake_store_init(&f);
    mcdc_finalize_store st = { fake_advance, &f };
    mcdc_tracker_options o = fast_opts();
    mcdc_tracker *t;
    /* The last progress fails while running; after termination two more tries, the second
     * of which succeeds. */
    fake_set(&f, 2, false);
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-A", &o));
    mcdc_offset p = off(10, "2026-10-01T15:10:00");
    mcdc_tracker_on_progress(t, "run-A", &p);
    wait_handled(t, 1);
    assert_int_equal(1, fake_calls(&f));
    mcdc_tracker_on_terminated(t, "run-A");
    assert_true(mcdc_tracker_join(t, 5000000));
    mcdc_tracker_stats s;
    mcdc_tracker_get_stats(t, &s);
    assert_int_equal(3, fake_calls(&f));
    assert_int_equal(1, s.n_advances);
    assert_false(s.pending_failed);
    assert_string_equal("", s.last_error);
    assert_int_equal(at("2026-10-01T15:00:00"), s.verdict.until_us);
    mcdc_tracker_free(t);

    /* A progress applied after termination gets three tries in all; a permanent failure
     * leaves pending_failed and last_error, and join still finishes. */
    fake_set(&f, -1, false);
    f.n_calls = 0;
    rec_reset();
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-B", &o));
    p = off(20, "2026-10-01T17:10:00");
    mcdc_tracker_on_progress(t, "run-B", &p);
    mcdc_tracker_on_terminated(t, "run-B");
    assert_true(mcdc_tracker_join(t, 5000000));
    mcdc_tracker_get_stats(t, &s);
    assert_int_equal(3, fake_calls(&f));
    assert_true(s.pending_failed);
    assert_non_null(strstr(s.last_error, "disk on fire"));
    assert_int_equal(1, atomic_load(&log_n_error));
    mcdc_tracker_free(t);
    fake_store_dispose(&f);
}

static void test_finalize_tracker__failed_while_running_gets_two_more_tries(void **state)
{
    (void)state;
    fake_store f;
    fake_store_init(&f);
    fake_set(&f, -1, true); /* hold the first call until terminated is set */
    mcdc_finalize_store st = { fake_advance, &f };
    mcdc_tracker_options o = fast_opts();
    mcdc_tracker *t;
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-A", &o));
    mcdc_offset p = off(10, "2026-10-01T15:10:00");
    mcdc_tracker_on_progress(t, "run-A", &p);
    for (int i = 0; i < 5000 && fake_calls(&f) < 1; i++)
        sleep_ms(1);
    mcdc_tracker_on_terminated(t, "run-A");
    fake_set(&f, -1, false);
    assert_true(mcdc_tracker_join(t, 5000000));
    /* the running attempt failed, then the failed offset got two more tries */
    assert_int_equal(3, fake_calls(&f));
    mcdc_tracker_free(t);
    fake_store_dispose(&f);
}

static void test_finalize_tracker__join_times_out_while_an_advance_runs(void **state)
{
    (void)state;
    fake_store f;
    fake_store_init(&f);
    fake_set(&f, 0, true);
    mcdc_finalize_store st = { fake_advance, &f };
    mcdc_tracker_options o = fast_opts();
    mcdc_tracker *t;
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-A", &o));
    mcdc_offset p = off(10, "2026-10-01T15:10:00");
    mcdc_tracker_on_progress(t, "run-A", &p);
    mcdc_tracker_on_terminated(t, "run-A");
    int64_t t0 = mcdc_time_mono_us();
    assert_false(mcdc_tracker_join(t, 100000));
    assert_true(mcdc_time_mono_us() - t0 >= 90000);
    mcdc_tracker_stats s;
    mcdc_tracker_get_stats(t, &s);
    assert_false(s.finished);
    fake_set(&f, 0, false);
    assert_true(mcdc_tracker_join(t, -1));
    assert_true(mcdc_tracker_join(t, 0)); /* joining again is harmless */
    mcdc_tracker_get_stats(t, &s);
    assert_true(s.finished);
    assert_int_equal(1, s.n_advances);
    mcdc_tracker_free(t);
    fake_store_dispose(&f);
}

static void test_finalize_tracker__finished_stream_and_seed(void **state)
{
    (void)state;
    fake_store f;
    fake_store_init(&f);
    mcdc_finalize_store st = { fake_advance, &f };
    mcdc_tracker_options o = fast_opts();
    mcdc_tracker *t;
    /* A stream that finds nothing new: only the seed (the checkpoint's last commit). */
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-A", &o));
    mcdc_offset seed = off(10, "2026-10-01T15:10:00");
    mcdc_tracker_seed(t, &seed);
    mcdc_tracker_on_terminated(t, "run-A");
    assert_true(mcdc_tracker_join(t, 5000000));
    assert_int_equal(1, fake_writes(&f));
    mcdc_tracker_free(t);

    /* Started on a stream that already finished: its last progress, then termination.
     * An older progress arriving late does not replace the newer one in the slot. */
    assert_int_equal(0, mcdc_tracker_start(&t, &st, "run-B", &o));
    mcdc_offset newer = off(30, "2026-10-01T18:30:00"), older = off(20, "2026-10-01T17:30:00");
    fake_set(&f, 0, true);
    mcdc_tracker_seed(t, &seed);
    for (int i = 0; i < 5000 && fake_calls(&f) < 2; i++)
        sleep_ms(1);
    mcdc_tracker_on_progress(t, "run-B", &newer);
    mcdc_tracker_on_progress(t, "run-B", &older);
    mcdc_tracker_on_terminated(t, "run-B");
    mcdc_tracker_on_progress(t, "run-B", &older); /* after termination: ignored */
    fake_set(&f, 0, false);
    assert_true(mcdc_tracker_join(t, 5000000));
    mcdc_tracker_stats s;
    mcdc_tracker_get_stats(t, &s);
    assert_int_equal(at("2026-10-01T18:00:00"), s.verdict.until_us);
    assert_int_equal(1, s.n_ignored);
    assert_int_equal(3, fake_calls(&f)); /* seed (no move), newer; older never applied */
    mcdc_tracker_free(t);
    fake_store_dispose(&f);
}

static void test_finalize_tracker__bad_arguments(void **state)
{
    (void)state;
    fake_store f;
    fake_store_init(&f);
    mcdc_finalize_store st = { fake_advance, &f }, none = { NULL, NULL };
    mcdc_tracker_options o = fast_opts();
    mcdc_tracker *t = (mcdc_tracker *)&f;
    assert_int_equal(MCDC_EINVAL, mcdc_tracker_start(&t, &none, "run-A", &o));
    assert_null(t);
    assert_int_equal(MCDC_EINVAL, mcdc_tracker_start(&t, &st, "", &o));
    o.granularity = (mcdc_granularity)0;
    assert_int_equal(MCDC_EINVAL, mcdc_tracker_start(&t, &st, "run-A", &o));
    mcdc_tracker_free(NULL);
    fake_store_dispose(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_finalize_tracker__other_runs_are_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_tracker__same_period_writes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_tracker__failure_logged_once_then_rate_limited, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_tracker__retried_after_termination, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_tracker__failed_while_running_gets_two_more_tries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_tracker__join_times_out_while_an_advance_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_tracker__finished_stream_and_seed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_tracker__bad_arguments, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
