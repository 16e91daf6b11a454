/* Unit tests for finalize/verdict.c: candidates, monotonic moves, coverage, granularity. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/finalize.h"

static mcdc_offset off(const char *ts)
{
    mcdc_offset o;
    memset(&o, 0, sizeof o);
    o.lsn = mcdc_lsn_from_u64(0, 42);
    if (ts) {
        assert_int_equal(0, mcdc_time_parse(&o.commit_ts_us, ts));
        o.has_commit_ts = true;
    }
    return o;
}

static int64_t at(const char *ts)
{
    int64_t us;
    assert_int_equal(0, mcdc_time_parse(&us, ts));
    return us;
}

static void test_finalize_verdict__hour_leaves_out_the_end_commits_period(void **state)
{
    (void)state;
    int64_t c;
    mcdc_offset o = off("2026-10-01T15:10:00.123");
    assert_int_equal(0, mcdc_finalize_candidate(&c, &o, MCDC_GRAN_HOUR));
    assert_int_equal(at("2026-10-01T15:00:00"), c);
    mcdc_verdict v = { true, c };
    assert_true(mcdc_finalize_covers(&v, at("2026-10-01T15:00:00")));
    assert_false(mcdc_finalize_covers(&v, at("2026-10-01T16:00:00")));
    assert_true(mcdc_finalize_covers(&v, at("2026-10-01T14:00:00")));
}

static void test_finalize_verdict__minute_and_day(void **state)
{
    (void)state;
    int64_t c;
    mcdc_offset o = off("2026-10-01T15:10:59.999");
    assert_int_equal(0, mcdc_finalize_candidate(&c, &o, MCDC_GRAN_MINUTE));
    assert_int_equal(at("2026-10-01T15:10:00"), c);
    assert_int_equal(0, mcdc_finalize_candidate(&c, &o, MCDC_GRAN_DAY));
    assert_int_equal(at("2026-10-01T00:00:00"), c);
}

static void test_finalize_verdict__boundary_commit_keeps_its_period_open(void **state)
{
    (void)state;
    int64_t c;
    /* An end commit at 14:00:00.000 gives 14:00: [14:00, 15:00) is not final, so another
     * commit at 14:00:00.000 with a higher LSN, read later, is in a period not yet final. */
    mcdc_offset o = off("2026-10-01T14:00:00.000");
    assert_int_equal(0, mcdc_finalize_candidate(&c, &o, MCDC_GRAN_HOUR));
    assert_int_equal(at("2026-10-01T14:00:00"), c);
    mcdc_verdict v = { true, c };
    assert_false(mcdc_finalize_covers(&v, at("2026-10-01T15:00:00")));
    assert_true(at("2026-10-01T14:00:00.000") >= v.until_us); /* the late commit: not covered */
    /* one microsecond earlier is the previous hour */
    o = off("2026-10-01T13:59:59.999999");
    assert_int_equal(0, mcdc_finalize_candidate(&c, &o, MCDC_GRAN_HOUR));
    assert_int_equal(at("2026-10-01T13:00:00"), c);
}

static void test_finalize_verdict__only_forward(void **state)
{
    (void)state;
    mcdc_verdict none = { false, 0 }, v = { true, at("2026-10-01T15:00:00") };
    assert_true(mcdc_finalize_moves(&none, at("1970-01-01T00:00:00")));
    assert_false(mcdc_finalize_moves(&v, at("2026-10-01T14:00:00")));
    assert_false(mcdc_finalize_moves(&v, at("2026-10-01T15:00:00")));
    assert_true(mcdc_finalize_moves(&v, at("2026-10-01T16:00:00")));
    assert_false(mcdc_finalize_covers(&none, at("1970-01-01T00:00:00")));
}

static void test_finalize_verdict__no_commit_time_no_candidate(void **state)
{
    (void)state;
    int64_t c = 7;
    mcdc_offset o = off(NULL);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_finalize_candidate(&c, &o, MCDC_GRAN_HOUR));
    assert_int_equal(7, c);
}

static void test_finalize_verdict__granularity_parse(void **state)
{
    (void)state;
    mcdc_granularity g;
    assert_int_equal(0, mcdc_finalize_granularity_parse(&g, NULL));
    assert_int_equal(MCDC_GRAN_HOUR, g);
    assert_int_equal(0, mcdc_finalize_granularity_parse(&g, "MINUTE"));
    assert_int_equal(MCDC_GRAN_MINUTE, g);
    assert_int_equal(0, mcdc_finalize_granularity_parse(&g, "day"));
    assert_int_equal(MCDC_GRAN_DAY, g);
    assert_int_equal(MCDC_EINVAL, mcdc_finalize_granularity_parse(&g, "week"));
    assert_non_null(strstr(mcdc_error_last()->message, "'week'"));
    int64_t c;
    mcdc_offset o = off("2026-10-01T15:10:00");
    assert_int_equal(MCDC_EINVAL, mcdc_finalize_candidate(&c, &o, (mcdc_granularity)9));
}

static void test_finalize_verdict__offset_json_round_trip(void **state)
{
    (void)state;
    mcdc_offset o;
    char js[MCDC_OFFSET_JSON_MAX];
    const char *in = "{\"lsn\": \"0x0000002D000001A00003\", \"commit_ts\": \"2026-10-01T15:10:00.120\"}";
    assert_int_equal(0, mcdc_offset_parse_json(&o, in, strlen(in)));
    assert_true(o.has_commit_ts);
    assert_string_equal(in, mcdc_offset_format_json(js, &o));
    const char *nots = "{\"lsn\": \"0x2A\", \"commit_ts\": \"\"}";
    assert_int_equal(0, mcdc_offset_parse_json(&o, nots, strlen(nots)));
    assert_false(o.has_commit_ts);
    const char *bad = "{\"lsn\": \"0x2A\", \"commit_ts\": \"yesterday\"}";
    assert_int_equal(MCDC_ECORRUPT, mcdc_offset_parse_json(&o, bad, strlen(bad)));
    assert_non_null(strstr(mcdc_error_last()->message, "commit_ts 'yesterday'"));
    assert_int_equal(MCDC_ECORRUPT, mcdc_offset_parse_json(&o, "[1]", 3));
    assert_int_equal(MCDC_ECORRUPT, mcdc_offset_parse_json(&o, "{\"lsn\": \"2A\"}", 13));
    assert_int_equal(MCDC_ECORRUPT, mcdc_offset_parse_json(&o, "{\"lsn\"", 6));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finalize_verdict__hour_leaves_out_the_end_commits_period),
        cmocka_unit_test(test_finalize_verdict__minute_and_day),
        cmocka_unit_test(test_finalize_verdict__boundary_commit_keeps_its_period_open),
        cmocka_unit_test(test_finalize_verdict__only_forward),
        cmocka_unit_test(test_finalize_verdict__no_commit_time_no_candidate),
        cmocka_unit_test(test_finalize_verdict__granularity_parse),
        cmocka_unit_test(test_finalize_verdict__offset_json_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
