/*
 * bench/timing.h: the clock and the percentiles every timing benchmark uses.
 *
 * Wall time is CLOCK_MONOTONIC in milliseconds. A percentile sorts the samples in place and
 * takes the nearest rank, clamped to the samples, so p50 and p99 mean the same in every
 * benchmark's output.
 */
#ifndef MCDC_BENCH_TIMING_H
#define MCDC_BENCH_TIMING_H

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

/** Monotonic wall time in milliseconds. */
static inline double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/** qsort order of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/** The q-quantile (0..1) of the N samples V by nearest rank; sorts V. N must be > 0. */
static inline double bench_pct(double *v, size_t n, double q)
{
    qsort(v, n, sizeof *v, bench_cmp_double);
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return v[i < n ? i : n - 1];
}

#endif
