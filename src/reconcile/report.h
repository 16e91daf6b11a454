/*
 * reconcile/report.h: the reconcile report table (kind `reconcile`), internal to
 * reconcile. See report.c.
 */
#ifndef MCDC_RECONCILE_REPORT_H
#define MCDC_RECONCILE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/value.h"

/** One report row: a bucket row (counts, sums, status) or a key row (key, failure_type).
 *  Strings borrowed; NULL is SQL NULL. */
typedef struct mcdc_reconcile__row {
    const char *source_lsn;
    const char *bucket_lo, *bucket_hi;  /* JSON keys */
    bool        has_counts;             /* source_rows and silver_rows set */
    int64_t     source_rows, silver_rows;
    bool        has_sums;               /* the key sums set (ordinal buckets) */
    mcdc_int128 source_sum, silver_sum;
    const char *status;                 /* bucket rows: MATCH, IN_FLIGHT, MISMATCH */
    bool        has_hashed, hashed;
    const char *key;                    /* key rows: JSON object */
    const char *failure_type;           /* key rows: MISSING, EXTRA, DIFFERENT, DUPLICATE, IN_FLIGHT */
    const char *detail;                 /* JSON object */
} mcdc_reconcile__row;

/** Refuse a report table of another kind (reads only; absent is fine). */
int mcdc_reconcile__report_check(const char *path, const char *name);

/** Append one run's rows to the report table at @p path (created when absent, kind
 *  reconcile) in one commit. */
int mcdc_reconcile__report_append(const char *path, const char *run_id, int64_t run_at_us,
                                  const char *silver, int64_t silver_version, const char *silver_lsn,
                                  const mcdc_reconcile__row *rows, size_t n);

#endif
