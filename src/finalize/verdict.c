/*
 * finalize/verdict.c: what a verdict means, independent of where it is stored.
 *
 * The candidate of an end offset is its commit time truncated down to the start of its
 * minute, hour or day (UTC): the period holding the end commit is left out, since other
 * commits with that exact time may still be in flight (an end commit at 14:00:00.000
 * gives 14:00, so a later commit at 14:00:00.000 falls in a period not yet final).
 * A candidate moves a verdict only forward. Design: mcdc/finalize.h, architecture §3 (4).
 */
#include "mcdc/error.h"
#include "mcdc/finalize.h"

static bool granularity_ok(mcdc_granularity g)
{
    return g == MCDC_GRAN_MINUTE || g == MCDC_GRAN_HOUR || g == MCDC_GRAN_DAY;
}

int mcdc_finalize_candidate(int64_t *out_us, const mcdc_offset *end, mcdc_granularity g)
{
    MCDC_ASSERT_ARG(out_us && end);
    if (!granularity_ok(g))
        return mcdc_error_set(MCDC_EINVAL, "granularity %d: expected minute, hour or day",
                              (int)g);
    if (!end->has_commit_ts)
        return mcdc_error_set(MCDC_ENOTFOUND,
                              "end offset has no commit time: it gives no verdict");
    *out_us = mcdc_time_truncate(end->commit_ts_us, g);
    return 0;
}

bool mcdc_finalize_moves(const mcdc_verdict *current, int64_t candidate_us)
{
    return !current->has || candidate_us > current->until_us;
}

bool mcdc_finalize_covers(const mcdc_verdict *v, int64_t period_end_us)
{
    return v->has && v->until_us >= period_end_us;
}

int mcdc_finalize_granularity_parse(mcdc_granularity *out, const char *s)
{
    if (!s) {
        *out = MCDC_GRAN_HOUR;
        return 0;
    }
    if (mcdc_granularity_parse(out, s) < 0)
        return mcdc_error_set(MCDC_EINVAL, "granularity '%.64s': expected minute, hour or day",
                              s);
    return 0;
}
