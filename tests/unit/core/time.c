/* Unit tests for core/time.c: ISO-8601 parsing and formatting, strictness on bad input,
 * truncation (also before 1970), durations and the civil-date helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/time.h"

static int64_t parse(const char *s)
{
    int64_t us = 0;
    if (mcdc_time_parse(&us, s) != 0)
        fail_msg("parse(%s): %s", s, mcdc_error_last()->message);
    return us;
}

static void refused(const char *s, const char *why)
{
    int64_t us = 12345;
    if (mcdc_time_parse(&us, s) != MCDC_EINVAL)
        fail_msg("'%s' was accepted", s);
    assert_int_equal(12345, us);
    if (!strstr(mcdc_error_last()->message, why))
        fail_msg("'%s': message '%s' lacks '%s'", s, mcdc_error_last()->message, why);
}

static void test_core_time__parse_known_instants(void **state)
{
    (void)state;
    assert_int_equal(0, parse("1970-01-01T00:00:00Z"));
    assert_int_equal(0, parse("1970-01-01"));
    assert_int_equal(INT64_C(1735689600) * MCDC_US_PER_SEC, parse("2025-01-01T00:00:00"));
    assert_int_equal(INT64_C(1735689600) * MCDC_US_PER_SEC, parse("2025-01-01 00:00:00"));
    assert_int_equal(INT64_C(1735689600) * MCDC_US_PER_SEC, parse("2025-01-01t00:00:00z"));
    assert_int_equal(-MCDC_US_PER_SEC, parse("1969-12-31T23:59:59Z"));
    assert_int_equal(parse("2025-06-01T12:00:00Z"), parse("2025-06-01T14:00:00+02:00"));
    assert_int_equal(parse("2025-06-01T12:00:00Z"), parse("2025-06-01T07:00:00-05:00"));
    assert_int_equal(parse("2025-06-01T12:00:00Z"), parse("2025-06-01T17:30:00+0530"));
    assert_int_equal(parse("2025-06-01T12:00:00Z"), parse("2025-06-02T02:00:00+14:00"));
    assert_int_equal(parse("2025-06-01T12:00:00Z"), parse("2025-05-31T22:00:00-14:00"));
    assert_int_equal(parse("2025-06-01T12:34:00Z"), parse("2025-06-01T12:34"));
    assert_int_equal(parse("2024-02-29T00:00:00Z"), parse("2024-02-28T00:00:00Z") + MCDC_US_PER_DAY);
    assert_int_equal(parse("2000-02-29"), parse("2000-02-28") + MCDC_US_PER_DAY);
    bool zone = true;
    int64_t us;
    assert_int_equal(0, mcdc_time_parse_ex(&us, &zone, "2025-01-01T00:00:00"));
    assert_false(zone);
    assert_int_equal(0, mcdc_time_parse_ex(&us, &zone, "2025-01-01T00:00:00Z"));
    assert_true(zone);
    assert_int_equal(0, mcdc_time_parse_ex(&us, &zone, "2025-01-01T00:00:00-01:00"));
    assert_true(zone);
}

static void test_core_time__fraction_digits_one_to_seven(void **state)
{
    (void)state;
    int64_t base = parse("2025-03-04T05:06:07Z");
    assert_int_equal(base + 100000, parse("2025-03-04T05:06:07.1Z"));
    assert_int_equal(base + 120000, parse("2025-03-04T05:06:07.12"));
    assert_int_equal(base + 123000, parse("2025-03-04T05:06:07.123"));
    assert_int_equal(base + 123400, parse("2025-03-04T05:06:07.1234"));
    assert_int_equal(base + 123450, parse("2025-03-04T05:06:07.12345"));
    assert_int_equal(base + 123456, parse("2025-03-04T05:06:07.123456"));
    assert_int_equal(base + 123456, parse("2025-03-04T05:06:07.1234567")); /* 100 ns truncated */
    assert_int_equal(base + 999999, parse("2025-03-04T05:06:07.9999999"));
    assert_int_equal(base + 500000, parse("2025-03-04T05:06:07,5"));
    refused("2025-03-04T05:06:07.12345678", "at most 7 fraction digits");
    refused("2025-03-04T05:06:07.", "digits after the decimal point");
    refused("2025-03-04T05:06:07.Z", "digits after the decimal point");
}

static void test_core_time__bad_dates_and_times_refused(void **state)
{
    (void)state;
    refused("2025-02-29T00:00:00", "day out of range");
    refused("1900-02-29", "day out of range");
    refused("2025-04-31", "day out of range");
    refused("2025-00-10", "month must be 01 to 12");
    refused("2025-13-10", "month must be 01 to 12");
    refused("2025-01-00", "day out of range");
    refused("0000-01-01", "year must be 0001 to 9999");
    refused("2025-12-31T23:59:60Z", "leap seconds");
    refused("2016-12-31T23:59:60", "leap seconds");
    refused("2025-01-01T24:00:00", "24:00");
    refused("2025-01-01T24:00", "24:00");
    refused("2025-01-01T25:00:00", "hour must be 00 to 23");
    refused("2025-01-01T23:60:00", "minute must be 00 to 59");
    refused("2025-01-01T23:59:61", "second must be 00 to 59");
    refused("2025-01-01T00:00:00+14:01", "zone offset out of range");
    refused("2025-01-01T00:00:00-15:00", "zone offset out of range");
    refused("2025-01-01T00:00:00+99:00", "zone offset out of range");
    refused("2025-01-01T00:00:00+05:60", "zone offset out of range");
    refused("2025-01-01T00:00:00+5:00", "zone offset");
    refused("2025-01-01T00:00:00+05", "zone offset");
    refused("2025-1-01", "expected YYYY-MM-DD");
    refused("25-01-01", "expected YYYY-MM-DD");
    refused("2025/01/01", "expected YYYY-MM-DD");
    refused("", "expected YYYY-MM-DD");
    refused("2025-01-01X10:00:00", "expected T or a space");
    refused("2025-01-01T1:00:00", "expected HH:MM:SS");
    refused("2025-01-01T10:00:0", "two digits of seconds");
    refused("2025-01-01T10:00:00ZZ", "unexpected text");
    refused("2025-01-01T10:00:00 ", "unexpected text");
    refused("2025-01-01T10:00:00 UTC", "unexpected text");
    refused("0001-01-01T00:00:00+01:00", "out of range");
    refused("9999-12-31T23:30:00-01:00", "out of range");
    assert_int_equal(parse("0001-01-01T00:00:00Z"), parse("0001-01-01T01:00:00+01:00"));
    assert_int_equal(parse("9999-12-31T23:59:59.999999Z"), parse("9999-12-31T22:59:59.999999-01:00"));
    int64_t us;
    assert_int_equal(MCDC_EINVAL, mcdc_time_parse(&us, NULL));
    assert_string_equal("bad time '2025-02-29T00:00:00': day out of range for the month",
                        (mcdc_time_parse(&us, "2025-02-29T00:00:00"), mcdc_error_last()->message));
}

static void test_core_time__format_and_round_trip(void **state)
{
    (void)state;
    char s[MCDC_TIME_STRLEN];
    assert_string_equal("1970-01-01T00:00:00Z", mcdc_time_format(s, 0, 0, true));
    assert_string_equal("2025-03-04T05:06:07.123", mcdc_time_format(s, parse("2025-03-04T05:06:07.123456"), 3, false));
    assert_string_equal("2025-03-04T05:06:07.123456Z", mcdc_time_format(s, parse("2025-03-04T05:06:07.1234567"), 6, true));
    assert_string_equal("2025-03-04T05:06:07.123456Z", mcdc_time_format(s, parse("2025-03-04T05:06:07.123456"), 9, true));
    assert_string_equal("1969-12-31T23:59:59.999999Z", mcdc_time_format(s, -1, 6, true));
    assert_string_equal("0001-01-01T00:00:00Z", mcdc_time_format(s, parse("0001-01-01T00:00:00"), 0, true));
    assert_string_equal("9999-12-31T23:59:59.999999Z", mcdc_time_format(s, parse("9999-12-31T23:59:59.999999"), 6, true));
    /* Round trips over the whole range, with odd microseconds and both signs. */
    int64_t lo = parse("0001-01-01T00:00:00Z"), hi = parse("9999-12-31T23:59:59.999999Z");
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        int64_t t = lo + (int64_t)(x % (uint64_t)(hi - lo));
        mcdc_time_format(s, t, 6, i % 2);
        int64_t back;
        if (mcdc_time_parse(&back, s) != 0 || back != t)
            fail_msg("round trip of %lld through '%s' gave %lld", (long long)t, s, (long long)back);
        if (i % 3 == 0) {
            s[10] = ' ';
            assert_int_equal(0, mcdc_time_parse(&back, s));
            assert_int_equal(t, back);
        }
    }
}

static void test_core_time__truncation_floors_also_before_1970(void **state)
{
    (void)state;
    int64_t t = parse("2025-03-04T05:06:07.891Z");
    assert_int_equal(parse("2025-03-04T05:06:00Z"), mcdc_time_truncate(t, MCDC_GRAN_MINUTE));
    assert_int_equal(parse("2025-03-04T05:00:00Z"), mcdc_time_truncate(t, MCDC_GRAN_HOUR));
    assert_int_equal(parse("2025-03-04T00:00:00Z"), mcdc_time_truncate(t, MCDC_GRAN_DAY));
    int64_t n = parse("1969-12-31T23:59:30.5Z");
    assert_int_equal(parse("1969-12-31T23:59:00Z"), mcdc_time_truncate(n, MCDC_GRAN_MINUTE));
    assert_int_equal(parse("1969-12-31T23:00:00Z"), mcdc_time_truncate(n, MCDC_GRAN_HOUR));
    assert_int_equal(parse("1969-12-31T00:00:00Z"), mcdc_time_truncate(n, MCDC_GRAN_DAY));
    assert_int_equal(-MCDC_US_PER_MIN, mcdc_time_truncate(-1, MCDC_GRAN_MINUTE));
    /* Already on a boundary: unchanged. */
    int64_t b = parse("1969-12-31T00:00:00Z");
    assert_int_equal(b, mcdc_time_truncate(b, MCDC_GRAN_DAY));
    assert_int_equal(b, mcdc_time_truncate(b, MCDC_GRAN_MINUTE));
    assert_int_equal(0, mcdc_time_truncate(0, MCDC_GRAN_HOUR));

    mcdc_granularity g;
    assert_int_equal(0, mcdc_granularity_parse(&g, "Minute"));
    assert_int_equal(MCDC_GRAN_MINUTE, g);
    assert_int_equal(0, mcdc_granularity_parse(&g, "HOUR"));
    assert_int_equal(MCDC_GRAN_HOUR, g);
    assert_int_equal(0, mcdc_granularity_parse(&g, "day"));
    assert_int_equal(MCDC_GRAN_DAY, g);
    assert_int_equal(MCDC_EINVAL, mcdc_granularity_parse(&g, "week"));
    assert_string_equal("bad granularity 'week': expected minute, hour or day", mcdc_error_last()->message);
    assert_true(strlen(mcdc_error_last()->hint) > 0);
    assert_int_equal(MCDC_EINVAL, mcdc_granularity_parse(&g, NULL));
    assert_string_equal("minute", mcdc_granularity_name(MCDC_GRAN_MINUTE));
    assert_string_equal("hour", mcdc_granularity_name(MCDC_GRAN_HOUR));
    assert_string_equal("day", mcdc_granularity_name(MCDC_GRAN_DAY));
}

static void test_core_time__durations(void **state)
{
    (void)state;
    int64_t us;
    assert_int_equal(0, mcdc_duration_parse(&us, "250ms"));
    assert_int_equal(250000, us);
    assert_int_equal(0, mcdc_duration_parse(&us, "90s"));
    assert_int_equal(90 * MCDC_US_PER_SEC, us);
    assert_int_equal(0, mcdc_duration_parse(&us, "5m"));
    assert_int_equal(5 * MCDC_US_PER_MIN, us);
    assert_int_equal(0, mcdc_duration_parse(&us, "1h"));
    assert_int_equal(MCDC_US_PER_HOUR, us);
    assert_int_equal(0, mcdc_duration_parse(&us, "3d"));
    assert_int_equal(3 * MCDC_US_PER_DAY, us);
    assert_int_equal(0, mcdc_duration_parse(&us, "0s"));
    assert_int_equal(0, us);
    static const char *bad[] = {"", "5", "m", "-5m", "+5m", "5 m", "5M", "5min", "1.5h", "5mss", "1w", "5m ",
                                " 5m", "106751992d", "99999999999999999999ms"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        us = 77;
        if (mcdc_duration_parse(&us, bad[i]) != MCDC_EINVAL)
            fail_msg("duration '%s' accepted as %lld", bad[i], (long long)us);
        assert_non_null(strstr(mcdc_error_last()->message, "bad duration"));
    }
    assert_int_equal(MCDC_EINVAL, mcdc_duration_parse(&us, NULL));
    assert_int_equal(MCDC_EINVAL, mcdc_duration_parse(&us, "7y"));
    assert_string_equal("bad duration '7y': unit must be ms, s, m, h or d", mcdc_error_last()->message);
}

static void test_core_time__civil_dates_and_clocks(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_days_from_civil(1970, 1, 1));
    assert_int_equal(-1, mcdc_days_from_civil(1969, 12, 31));
    assert_int_equal(20089, mcdc_days_from_civil(2025, 1, 1));
    assert_int_equal(-719162, mcdc_days_from_civil(1, 1, 1));
    for (int64_t d = -800000; d < 3000000; d += 97) {
        int64_t y;
        unsigned m, dd;
        mcdc_civil_from_days(d, &y, &m, &dd);
        assert_int_equal(d, mcdc_days_from_civil(y, m, dd));
    }
    int64_t a = mcdc_time_mono_us(), b = mcdc_time_mono_us();
    assert_true(b >= a);
    assert_true(mcdc_time_now_us() > parse("2020-01-01T00:00:00Z"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_time__parse_known_instants),
        cmocka_unit_test(test_core_time__fraction_digits_one_to_seven),
        cmocka_unit_test(test_core_time__bad_dates_and_times_refused),
        cmocka_unit_test(test_core_time__format_and_round_trip),
        cmocka_unit_test(test_core_time__truncation_floors_also_before_1970),
        cmocka_unit_test(test_core_time__durations),
        cmocka_unit_test(test_core_time__civil_dates_and_clocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
