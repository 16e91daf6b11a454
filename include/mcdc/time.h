/*
 * mcdc/time.h: UTC instants, ISO-8601 text, truncation to periods, durations.
 *
 * An instant is int64 microseconds since 1970-01-01T00:00:00Z (years 0001 to 9999).
 * Text: YYYY-MM-DD(T| )HH:MM:SS[.f{1,7}][Z|±HH:MM]; without a zone the time is UTC.
 * A 7th fraction digit (100 ns, as datetime2(7)) is truncated to microseconds.
 * Leap seconds (:60) and 24:00 are refused. Durations: <integer><unit> with unit
 * ms, s, m, h or d ("250ms", "90s", "5m", "1h", "3d").
 */
#ifndef MCDC_TIME_H
#define MCDC_TIME_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MCDC_US_PER_SEC  INT64_C(1000000)
#define MCDC_US_PER_MIN  (60 * MCDC_US_PER_SEC)
#define MCDC_US_PER_HOUR (60 * MCDC_US_PER_MIN)
#define MCDC_US_PER_DAY  (24 * MCDC_US_PER_HOUR)

/** Text size enough for any formatted instant, with NUL. */
#define MCDC_TIME_STRLEN 40

/** Periods for truncation. */
typedef enum { MCDC_GRAN_MINUTE = 1, MCDC_GRAN_HOUR = 2, MCDC_GRAN_DAY = 3 } mcdc_granularity;

/** Parse ISO-8601 into UTC microseconds.
 *  @return 0; MCDC_EINVAL with the reason (bad field, out-of-range value, leap second,
 *          24:00, bad offset, trailing text, an instant outside years 0001..9999 in UTC). */
int mcdc_time_parse(int64_t *out_us, const char *s);
/** Parse without a zone and report whether a zone was given (for local-time inputs).
 *  @param[out] has_zone  true when the text carried Z or ±HH:MM. */
int mcdc_time_parse_ex(int64_t *out_us, bool *has_zone, const char *s);

/** Format @p us as "YYYY-MM-DDTHH:MM:SS" plus @p frac_digits (0..6) fraction digits and,
 *  when @p zulu, a trailing Z. Returns out. */
char *mcdc_time_format(char out[MCDC_TIME_STRLEN], int64_t us, int frac_digits, bool zulu);

/** Truncate down to the start of the minute, hour or day (UTC); floor for negatives. */
int64_t mcdc_time_truncate(int64_t us, mcdc_granularity g);
/** Parse "minute", "hour" or "day" (any case). @return 0; MCDC_EINVAL otherwise. */
int mcdc_granularity_parse(mcdc_granularity *out, const char *s);
/** "minute", "hour" or "day". */
const char *mcdc_granularity_name(mcdc_granularity g);

/** Parse a duration into microseconds. @return 0; MCDC_EINVAL for a missing number or
 *  unit, a negative value or overflow. */
int mcdc_duration_parse(int64_t *out_us, const char *s);

/** Days since 1970-01-01 for a proleptic Gregorian date (no range check). */
int64_t mcdc_days_from_civil(int64_t y, unsigned m, unsigned d);
/** The date of a day number. */
void mcdc_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/** The host's clock, UTC microseconds. */
int64_t mcdc_time_now_us(void);
/** A monotonic clock in microseconds, for measuring durations. */
int64_t mcdc_time_mono_us(void);

#ifdef __cplusplus
}
#endif
#endif
