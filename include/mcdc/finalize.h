/*
 * mcdc/finalize.h: the completeness verdict `finalized_until`, its control table and the
 * tracker that advances it while a stream runs.
 *
 * The verdict of a table is the commit time of a committed batch's end offset truncated
 * to the period (minute, hour or day). The period that contains the end commit is left
 * out, because other transactions with that exact commit time may still be on their way.
 * Meaning (architecture §3, invariant 4): every source commit with commit_ts <
 * finalized_until is in the table; a consumer of the period [start, end) waits for
 * finalized_until >= end. The verdict never moves backwards, and an end offset that does
 * not move it writes nothing.
 *
 * Three parts:
 * - Semantics (verdict.c): the candidate verdict of an end offset, and the tests on it.
 * - Tracker (tracker.c, ADR 0026 of the original design): one worker thread per stream
 *   run that advances the verdict from the newest progress the stream reports, off the
 *   stream's own threads. It writes through a store interface, so it can be driven
 *   without a source or a Delta table.
 * - Control table (control.c): the verdicts on Delta, one row per table
 *   (docs/decisions/0002-control-table-one-file-per-row.md).
 *
 * Caveats:
 * - Call advance only after the batch's data and its checkpoint commit are durable
 *   (data first, verdict after). An early verdict claims data the table does not have.
 * - Rows are keyed by the exact string given: "bronze.orders" and its path are two rows.
 * - Times are UTC microseconds; the control table stores them as timestamp_ntz (UTC).
 */
#ifndef MCDC_FINALIZE_H
#define MCDC_FINALIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/log.h"
#include "mcdc/offset.h"
#include "mcdc/time.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Semantics -------------------------------------------------------------------- */

/** A table's verdict: none before the first advance. */
typedef struct mcdc_verdict {
    bool    has;      /* false: no verdict yet */
    int64_t until_us; /* finalized_until, UTC microseconds; valid when has */
} mcdc_verdict;

/** The candidate verdict of an end offset: its commit time truncated to @p g.
 *  @param[out] out_us  the candidate (the start of the period holding the end commit).
 *  @return 0; MCDC_ENOTFOUND when the offset carries no commit time (no candidate);
 *          MCDC_EINVAL for a granularity that is not minute, hour or day. */
int mcdc_finalize_candidate(int64_t *out_us, const mcdc_offset *end, mcdc_granularity g);

/** True when @p candidate_us would move @p current forward (no verdict yet, or later). */
bool mcdc_finalize_moves(const mcdc_verdict *current, int64_t candidate_us);

/** True when the period ending at @p period_end_us is complete under @p v:
 *  a verdict exists and finalized_until >= period_end. */
bool mcdc_finalize_covers(const mcdc_verdict *v, int64_t period_end_us);

/** Parse a granularity ("minute", "hour", "day", any case); NULL gives the default, hour.
 *  @return 0; MCDC_EINVAL naming the value and the choices. */
int mcdc_finalize_granularity_parse(mcdc_granularity *out, const char *s);

/* ---- Checkpoint (the separate finalization job) ------------------------------------ */

/** The last committed end offset of a stream's checkpoint directory: the "end" offset of
 *  offsets/<N> for the largest N present in commits/ (architecture §5). An offsets/<N>
 *  without commits/<N> is a batch that will be replayed, not a processed one, and is
 *  never used. Reads only; takes no lock, so it can run beside the stream.
 *  @param[out] out       the end offset (its commit time may be unknown).
 *  @param[out] batch_id  N; may be NULL.
 *  @return 0; MCDC_ENOTFOUND when the directory does not exist or no batch finished yet;
 *          MCDC_ECORRUPT naming the file for an unreadable or malformed offsets/<N> (or
 *          a missing one for a finished batch); MCDC_EIO. */
int mcdc_finalize_checkpoint_last(mcdc_offset *out, int64_t *batch_id, const char *dir);

/* ---- Tracker (continuous finalization) ---------------------------------------------- */

/** Where a tracker writes: advance the verdict for one end offset and return the table's
 *  verdict after it. Called only from the tracker's worker thread, one call at a time.
 *  Returns 0 or a negative mcdc code with the error recorded on the calling thread. */
typedef int (*mcdc_finalize_advance_fn)(void *payload, const mcdc_offset *end,
                                        mcdc_granularity g, mcdc_verdict *out);

typedef struct mcdc_finalize_store {
    mcdc_finalize_advance_fn advance; /* required */
    void *payload;                    /* passed to advance; must outlive the tracker */
} mcdc_finalize_store;

typedef struct mcdc_tracker_options {
    int              version;          /* 1 */
    mcdc_granularity granularity;      /* the period; default hour */
    const char      *table_name;       /* for log messages only; may be NULL */
    int64_t          retry_delay_us[2];/* after the stream terminates, a failed advance is
                                          tried twice more, these long after; 1 s and 2 s */
    int64_t          warn_interval_us; /* at most one WARN per interval during a streak of
                                          failures; 10 minutes */
    int64_t        (*clock_us)(void *payload); /* monotonic clock for the rate limit;
                                                  NULL: mcdc_time_mono_us */
    void            *clock_payload;
} mcdc_tracker_options;

#define MCDC_TRACKER_OPTIONS_INIT \
    { 1, MCDC_GRAN_HOUR, NULL, { 1000000, 2000000 }, MCDC_RATELIMIT_WARN_US, NULL, NULL }

/** What a tracker did so far (a copy, taken under its lock). */
typedef struct mcdc_tracker_stats {
    mcdc_verdict verdict;       /* the verdict the last successful advance returned */
    uint64_t     n_advances;    /* successful store->advance calls */
    uint64_t     n_skipped;     /* progress that would not move the verdict: no write */
    uint64_t     n_ignored;     /* progress or termination of another run */
    uint64_t     failures;      /* failed attempts in a row; 0 after a success (the
                                   tries after termination count once) */
    uint64_t     total_failures;/* failed attempts overall; the tries after termination
                                   count once, when the last of them fails */
    bool         pending_failed;/* the newest candidate is not written (the last attempt
                                   failed): after join, the verdict lags the data */
    bool         finished;      /* the worker stopped */
    char         last_error[1024]; /* message of the last failed attempt; "" after a success */
} mcdc_tracker_stats;

typedef struct mcdc_tracker mcdc_tracker;

/** Start a tracker for the stream run @p run_id: one worker thread that waits for
 *  progress. Nothing is written until a progress (or a seed) arrives.
 *  @param[out] out  the tracker; free with mcdc_tracker_free().
 *  @param opts      NULL for defaults; copied.
 *  @return 0; MCDC_EINVAL for a missing store or run id or a bad granularity;
 *          MCDC_ENOMEM; MCDC_ERROR when the thread cannot start. */
int mcdc_tracker_start(mcdc_tracker **out, const mcdc_finalize_store *store,
                       const char *run_id, const mcdc_tracker_options *opts);

/** Seed the tracker with the checkpoint's last committed end offset (before the stream
 *  reads anything), so a run that finds nothing new still writes a verdict a crash left
 *  behind. The same as a progress of this run. */
void mcdc_tracker_seed(mcdc_tracker *t, const mcdc_offset *last_committed);

/** The stream's progress listener: a batch of run @p run_id is committed (data and
 *  checkpoint) and ended at @p end. Stores the offset in one slot (a newer one replaces a
 *  waiting one) and wakes the worker; never blocks on I/O. Progress of another run, or
 *  after this run terminated, is ignored. Thread-safe. */
void mcdc_tracker_on_progress(mcdc_tracker *t, const char *run_id, const mcdc_offset *end);

/** The stream run @p run_id terminated (with or without an error): the worker applies
 *  what is left, retries a failed advance twice more, then stops. Another run's
 *  termination is ignored. Thread-safe. */
void mcdc_tracker_on_terminated(mcdc_tracker *t, const char *run_id);

/** Wait up to @p timeout_us (negative: forever) for the worker to stop. Call from one
 *  thread at a time (the one that will free the tracker).
 *  @return true when it finished; false when the timeout passed first. Whether the last
 *  advance failed is in the stats (pending_failed, last_error), not in this result. */
bool mcdc_tracker_join(mcdc_tracker *t, int64_t timeout_us);

/** Copy the tracker's counters and last error into @p out. Thread-safe. */
void mcdc_tracker_get_stats(mcdc_tracker *t, mcdc_tracker_stats *out);

/** Stop the worker (after an advance in flight returns; pending progress is dropped) and
 *  free the tracker. NULL is a no-op. Call mcdc_tracker_join first to keep what is left. */
void mcdc_tracker_free(mcdc_tracker *t);

#ifdef __cplusplus
}
#endif
#endif
