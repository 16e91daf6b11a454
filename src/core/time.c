/*
 * core/time.c: ISO-8601 parsing and formatting, truncation and durations on UTC
 * microseconds.
 *
 * Guarantees: parse(format(t)) == t for every instant in years 1..9999; parsing is
 * strict (every field has its exact width and range; nothing may trail) and never
 * reads the process's TZ or locale.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mcdc/error.h"
#include "mcdc/time.h"

/* Howard Hinnant's civil-date algorithms, proleptic Gregorian calendar. */
int64_t mcdc_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void mcdc_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

static bool is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned days_in_month(int64_t y, unsigned m)
{
    static const unsigned dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}

/* Read exactly n digits at *p. */
static bool digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

/* 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z in seconds since the epoch. */
#define MIN_SECS (INT64_C(-62135596800))
#define MAX_SECS (INT64_C(253402300799))

/* The accepted form, the hint of every bad time. */
#define TIME_FORM "a time is ISO-8601 YYYY-MM-DDTHH:MM:SS[.fffffff][Z|+HH:MM|-HH:MM], UTC without a " \
                  "zone, e.g. 2026-10-01T15:00:00 or 2026-10-01T17:00:00+02:00"
#define BAD(why) (mcdc_error_set(MCDC_EINVAL, "bad time '%s': %s", s, why), mcdc_error_hint(TIME_FORM))

int mcdc_time_parse_ex(int64_t *out_us, bool *has_zone, const char *s)
{
    const char *p = s;
    int y, mo, d, h, mi, se, frac_us = 0, off_min = 0;
    bool zone = false;
    if (!s)
        return (mcdc_error_set(MCDC_EINVAL, "bad time: none given"), mcdc_error_hint(TIME_FORM));
    if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' || !digits(&p, 2, &d))
        return BAD("expected YYYY-MM-DD");
    if (y < 1)
        return BAD("year must be 0001 to 9999");
    if (mo < 1 || mo > 12)
        return BAD("month must be 01 to 12");
    if (d < 1 || (unsigned)d > days_in_month(y, (unsigned)mo))
        return BAD("day out of range for the month");
    if (*p == '\0') {
        h = mi = se = 0;
    } else {
        if (*p != 'T' && *p != 't' && *p != ' ')
            return BAD("expected T or a space between date and time");
        p++;
        if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi))
            return BAD("expected HH:MM:SS");
        if (*p == ':') {
            p++;
            if (!digits(&p, 2, &se))
                return BAD("expected two digits of seconds");
        } else {
            se = 0;
        }
        if (h == 24)
            return BAD("24:00 is not accepted; use 00:00 of the next day");
        if (h > 23)
            return BAD("hour must be 00 to 23");
        if (mi > 59)
            return BAD("minute must be 00 to 59");
        if (se == 60)
            return BAD("leap seconds are not accepted");
        if (se > 59)
            return BAD("second must be 00 to 59");
        if (*p == '.' || *p == ',') {
            int n = 0, scale = 100000;
            p++;
            while (isdigit((unsigned char)*p)) {
                if (n >= 7)
                    return BAD("at most 7 fraction digits");
                if (n < 6) {
                    frac_us += (*p - '0') * scale;
                    scale /= 10;
                }
                n++;
                p++;
            }
            if (n == 0)
                return BAD("expected digits after the decimal point");
        }
        if (*p == 'Z' || *p == 'z') {
            zone = true;
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p == '-' ? -1 : 1, oh, om;
            p++;
            if (!digits(&p, 2, &oh))
                return BAD("expected a zone offset ±HH:MM");
            if (*p == ':')
                p++;
            if (!digits(&p, 2, &om))
                return BAD("expected a zone offset ±HH:MM");
            if (oh > 14 || om > 59 || (oh == 14 && om > 0))
                return BAD("zone offset out of range (-14:00 to +14:00)");
            off_min = sign * (oh * 60 + om);
            zone = true;
        }
    }
    if (*p != '\0')
        return BAD("unexpected text after the time");
    int64_t days = mcdc_days_from_civil(y, (unsigned)mo, (unsigned)d);
    int64_t secs = days * 86400 + h * 3600 + mi * 60 + se - (int64_t)off_min * 60;
    /* An offset can push the instant out of 0001..9999 (UTC), where format would not
     * give text that parses back. */
    if (secs < MIN_SECS || secs > MAX_SECS)
        return BAD("instant out of range (years 0001 to 9999 in UTC)");
    *out_us = secs * MCDC_US_PER_SEC + frac_us;
    if (has_zone)
        *has_zone = zone;
    return 0;
}

int mcdc_time_parse(int64_t *out_us, const char *s)
{
    return mcdc_time_parse_ex(out_us, NULL, s);
}

char *mcdc_time_format(char out[MCDC_TIME_STRLEN], int64_t us, int frac_digits, bool zulu)
{
    int64_t days = us / MCDC_US_PER_DAY, rem = us % MCDC_US_PER_DAY, y;
    unsigned m, d;
    if (rem < 0) {
        rem += MCDC_US_PER_DAY;
        days--;
    }
    mcdc_civil_from_days(days, &y, &m, &d);
    int64_t secs = rem / MCDC_US_PER_SEC, frac = rem % MCDC_US_PER_SEC;
    int n = snprintf(out, MCDC_TIME_STRLEN, "%04lld-%02u-%02uT%02d:%02d:%02d", (long long)y, m, d,
                     (int)(secs / 3600), (int)(secs / 60 % 60), (int)(secs % 60));
    if (frac_digits > 0) {
        if (frac_digits > 6)
            frac_digits = 6;
        char f[8];
        snprintf(f, sizeof f, "%06lld", (long long)frac);
        n += snprintf(out + n, (size_t)(MCDC_TIME_STRLEN - n), ".%.*s", frac_digits, f);
    }
    if (zulu)
        snprintf(out + n, (size_t)(MCDC_TIME_STRLEN - n), "Z");
    return out;
}

static int64_t floor_to(int64_t v, int64_t step)
{
    int64_t r = v % step;
    return r < 0 ? v - r - step : v - r;
}

int64_t mcdc_time_truncate(int64_t us, mcdc_granularity g)
{
    switch (g) {
    case MCDC_GRAN_MINUTE: return floor_to(us, MCDC_US_PER_MIN);
    case MCDC_GRAN_DAY:    return floor_to(us, MCDC_US_PER_DAY);
    case MCDC_GRAN_HOUR:
    default:               return floor_to(us, MCDC_US_PER_HOUR);
    }
}

int mcdc_granularity_parse(mcdc_granularity *out, const char *s)
{
    if (s && !strcasecmp(s, "minute")) *out = MCDC_GRAN_MINUTE;
    else if (s && !strcasecmp(s, "hour")) *out = MCDC_GRAN_HOUR;
    else if (s && !strcasecmp(s, "day")) *out = MCDC_GRAN_DAY;
    else {
        mcdc_error_set(MCDC_EINVAL, "bad granularity '%s': expected minute, hour or day", s ? s : "");
        return mcdc_error_hint("use --granularity minute, hour or day (default hour)");
    }
    return 0;
}

const char *mcdc_granularity_name(mcdc_granularity g)
{
    return g == MCDC_GRAN_MINUTE ? "minute" : g == MCDC_GRAN_DAY ? "day" : "hour";
}

int mcdc_duration_parse(int64_t *out_us, const char *s)
{
    const char *p = s;
    int64_t v = 0, unit;
    if (!s || !isdigit((unsigned char)*p))
        return mcdc_error_set(MCDC_EINVAL, "bad duration '%s': expected a number and a unit, as 250ms, 90s, 5m, 1h or 3d",
                              s ? s : "");
    while (isdigit((unsigned char)*p)) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
            return mcdc_error_set(MCDC_EINVAL, "bad duration '%s': too large", s);
        p++;
    }
    if (!strcmp(p, "ms")) unit = 1000;
    else if (!strcmp(p, "s")) unit = MCDC_US_PER_SEC;
    else if (!strcmp(p, "m")) unit = MCDC_US_PER_MIN;
    else if (!strcmp(p, "h")) unit = MCDC_US_PER_HOUR;
    else if (!strcmp(p, "d")) unit = MCDC_US_PER_DAY;
    else
        return mcdc_error_set(MCDC_EINVAL, "bad duration '%s': unit must be ms, s, m, h or d", s);
    if (__builtin_mul_overflow(v, unit, out_us))
        return mcdc_error_set(MCDC_EINVAL, "bad duration '%s': too large", s);
    return 0;
}

int64_t mcdc_time_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * MCDC_US_PER_SEC + ts.tv_nsec / 1000;
}

int64_t mcdc_time_mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * MCDC_US_PER_SEC + ts.tv_nsec / 1000;
}
