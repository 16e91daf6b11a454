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
#include "mcdc/value.h"

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

/* ---- Control table ------------------------------------------------------------------- */

/* The control table (architecture §5, anchor-features §2.6): one row per table, one data
 * file per row (docs/decisions/0002-control-table-one-file-per-row.md). Functions take
 * the table's directory (resolve names with the warehouse first). Every write goes
 * through Delta's optimistic concurrency: advances of different tables never conflict;
 * advances of the same table retry from a fresh snapshot with backoff for up to a
 * minute. */

/** Columns of a control row. NULL columns have has_* false or a NULL pointer. */
typedef struct mcdc_control_row {
    char        *table_name;       /* owned; the key, exactly as given */
    mcdc_verdict finalized_until;  /* the verdict (none: NULL) */
    bool         has_end_lsn;
    mcdc_lsn     end_lsn;          /* commit LSN of the end offset that last moved it */
    bool         has_end_commit_ts;
    int64_t      end_commit_ts_us; /* its commit time, UTC */
    bool         has_updated_at;
    int64_t      updated_at_us;    /* host clock when the verdict last moved, UTC */
    char        *applied_lsn;      /* owned or NULL; silver only */
    char        *snapshot_lsn;     /* owned or NULL; silver only */
    char        *open_snapshot_lsn;/* owned or NULL; silver only */
    bool         has_snapshot_wave;
    int32_t      snapshot_wave;    /* silver only */
} mcdc_control_row;

/** Free what @p r owns and zero it. */
void mcdc_control_row_clear(mcdc_control_row *r);

/** Columns of the control table, in order: table_name, finalized_until, end_lsn,
 *  end_commit_ts, updated_at, applied_lsn, snapshot_lsn, open_snapshot_lsn,
 *  snapshot_wave. */
#define MCDC_CONTROL_NCOLS 9

/** The control table's schema (borrowed, static; NULL only when out of memory). */
const mcdc_schema *mcdc_control_schema(void);

/** The cells of @p r in schema order (strings borrowed from @p r and @p lsn_buf). */
int mcdc_control_row_values(const mcdc_control_row *r, mcdc_value out[MCDC_CONTROL_NCOLS],
                            char lsn_buf[MCDC_LSN_STRLEN]);

/** Append @p r as one JSON object in the jsonl encoding (architecture §7), keys in schema
 *  order. @return 0; MCDC_ENOMEM. */
int mcdc_control_row_to_json(mcdc_buf *out, const mcdc_control_row *r);

/** What an advance did. */
typedef struct mcdc_advance_result {
    mcdc_verdict verdict;     /* the table's verdict after the call */
    bool         wrote;       /* a commit was written (for advance: it moved the verdict) */
    bool         created;     /* this call created the control table */
    int64_t      version;     /* control table version written, or read when not written */
    int          n_conflicts; /* lost conflicts retried from a fresh snapshot */
    int          n_rebases;   /* lost version races moved on without rebuilding */
} mcdc_advance_result;

/** Create the control table at @p path when missing, or check that the table there has
 *  the control columns with their types.
 *  @param[out] created  may be NULL; true when this call created it.
 *  @return 0; MCDC_EINVAL when @p path holds another kind of table (the message names
 *          the missing or mistyped column); MCDC_EIO; codes of the Delta layer. */
int mcdc_control_ensure(const char *path, bool *created);

/** Check, reading only, that the table at @p path, when it exists, is a control table
 *  (its mcdc.kind, and the control columns with their types), so a command can refuse a
 *  wrong --control before it writes anything.
 *  @return 0 (also when there is no table); MCDC_EINVAL naming the kind or column found;
 *          codes of the Delta layer. */
int mcdc_control_check(const char *path);

/** Changes one control row in place. Called with the row as stored (@p exists true), or
 *  with a new row holding only table_name. Return 0 when the row changed, MCDC_EALREADY
 *  to write nothing, or a negative code that stops the update and is returned. Called
 *  again with a fresh row after each lost conflict; must not change table_name. */
typedef int (*mcdc_control_mutate_fn)(mcdc_control_row *row, bool exists, void *payload);

/** Read-modify-write of one row (@p table_name) with the guarantees of advance: a
 *  copy-on-write of the row's file with read predicate table_name = <key>, retried from
 *  a fresh snapshot for up to a minute on conflicts with writers of the same row; writers
 *  of other rows never conflict. Creates the control table on first use. For silver's
 *  position columns and for advance itself.
 *  @param[out] out  may be NULL; verdict is the row's finalized_until after the call.
 *  @return 0 (also when @p fn wrote nothing); codes of @p fn; MCDC_ETIMEOUT; MCDC_EIO. */
int mcdc_control_update(const char *path, const char *table_name, mcdc_control_mutate_fn fn,
                        void *payload, mcdc_advance_result *out);

/** Advance the verdict of @p table_name to the candidate of @p end (mcdc_finalize_candidate)
 *  when that moves it forward; otherwise write nothing. Creates the control table and the
 *  row on first use. Call only after the data up to @p end is committed.
 *  @param[out] out  may be NULL.
 *  @return 0; MCDC_EINVAL for an empty name, a bad granularity or an end offset without a
 *          commit time (checked before anything is written); MCDC_ETIMEOUT when conflicts
 *          with writers of the same row outlasted the retry budget (a minute); MCDC_EIO;
 *          MCDC_ECORRUPT for a control file that cannot be read. */
int mcdc_control_advance(const char *path, const char *table_name, const mcdc_offset *end,
                         mcdc_granularity g, mcdc_advance_result *out);

/** Every row of the control table, sorted by table_name.
 *  @param[out] rows  an array of @p n_out rows; free with mcdc_control_rows_free().
 *  @return 0; MCDC_ENOTFOUND when there is no control table at @p path; MCDC_EINVAL
 *          when the table there is not a control table; MCDC_ECORRUPT; MCDC_EIO. */
int mcdc_control_read_all(mcdc_control_row **rows, size_t *n_out, const char *path);

/** Free an array from mcdc_control_read_all; accepts NULL. */
void mcdc_control_rows_free(mcdc_control_row *rows, size_t n);

/** The row of @p table_name.
 *  @param[out] out  filled; release with mcdc_control_row_clear().
 *  @return 0; MCDC_ENOTFOUND when the control table or the row does not exist (the
 *          message says which); other codes as mcdc_control_read_all. */
int mcdc_control_get(mcdc_control_row *out, const char *path, const char *table_name);

/** Whether the period ending at @p period_end_us is complete for @p table_name:
 *  finalized_until >= period_end.
 *  @return 0 with *out set; MCDC_ENOTFOUND when the control table or the row does not
 *          exist, so that a typo never reads as "not yet". */
int mcdc_control_is_final(bool *out, const char *path, const char *table_name,
                          int64_t period_end_us);

/** The verdict of @p table_name (none when the row has no verdict yet).
 *  @return 0; MCDC_ENOTFOUND as mcdc_control_get. */
int mcdc_control_finalized_until(mcdc_verdict *out, const char *path, const char *table_name);

/** How fresh a table's verdict is, and why it may lag (anchor-features §1, monitoring). */
typedef struct mcdc_freshness {
    int64_t      now_us;          /* the clock every age is measured against */
    bool         now_is_source;   /* now_us is the source's server_now (else host clock) */
    mcdc_verdict verdict;         /* finalized_until */
    int64_t      verdict_age_us;  /* now - finalized_until; valid when verdict.has */
    bool         has_updated_at;
    int64_t      updated_at_us;   /* when the verdict last moved (host clock) */
    bool         has_facts_end;   /* the facts table holds a batch row of the table */
    int64_t      facts_end_commit_ts_us; /* newest end_commit_ts of its batch rows */
    int64_t      facts_end_age_us;       /* now - facts_end_commit_ts */
    bool         has_facts_written;
    int64_t      facts_written_at_us;    /* newest written_at of its batch rows (host) */
    bool         has_source;      /* source_max_commit_ts is known */
    int64_t      source_max_commit_ts_us; /* commit time of the source's max LSN (from the
                                             source, else the newest facts row's
                                             source_max_commit_ts) */
    int64_t      source_lag_us;   /* now - source_max_commit_ts */
} mcdc_freshness;

/** A consistent cut across tables of one database (finalize/cut.c). */
typedef struct mcdc_cut {
    mcdc_lsn  lsn;           /* the newest LSN at which every listed table is complete */
    bool      has_commit_ts;
    int64_t   commit_ts_us;  /* its commit time (the end_commit_ts of the batch ending there) */
    bool      lossless;      /* false: a recorded gap of a listed table begins at or below lsn */
    mcdc_lsn *ends;          /* owned: each table's newest committed batch end, in list order */
    bool     *unidentified;  /* owned, in list order: the table's bronze records no source
                                identity (written before identities were), so the cut could
                                not check that it is of the others' database */
    size_t    n_tables;
    size_t    n_facts_files;      /* data files of the facts table */
    size_t    n_facts_files_read; /* of them, opened (the rest pruned by their stats) */
} mcdc_cut;

/** The newest LSN L at which each of @p tables (bronze targets, as the streams name them)
 *  holds every commit: the smallest of their newest batch ends in the facts table (batch
 *  rows, event NULL). @p table_paths (NULL: no source check) are the tables' directories,
 *  whose configuration says which source each holds (mcdc_bronze_source_identity). Reads
 *  only, and only the facts files whose stats say they may change the cut (the listed
 *  tables' event rows, and their newest batch ends): the cost follows those tables' events,
 *  not the facts table's size.
 *  @return 0; MCDC_EINVAL, naming the table and how to go on, for tables of different
 *          sources (naming both and both sources), a table without a control row or a
 *          batch row, one whose chunked snapshot is open, a table listed twice, or an L
 *          below a table's first state (its bootstrap or resnapshot, or a stream started at
 *          latest there); MCDC_EINVAL for a facts table that does not exist or is not one;
 *          codes of the Delta layer. */
int mcdc_finalize_cut(mcdc_cut *out, const char *control_path, const char *facts_path,
                      const char *const *tables, const char *const *table_paths,
                      size_t n_tables);
/** Free what a cut owns; accepts NULL. */
void mcdc_cut_clear(mcdc_cut *c);

/** Where one table stands in capture-instance switches (mcdc_finalize_switches): what a
 *  DBA running sql/switch_capture_instance.sql waits for before disabling the old
 *  instance, a capture_instance_switched row and one more batch of every stream. */
typedef struct mcdc_switch_state {
    char    *target;          /* owned: the bronze table, as the facts' target */
    char    *from_instance;   /* owned: the newest switch's older instance; NULL: none */
    char    *to_instance;     /* owned: its newer instance, the one the stream reads now */
    char     at_lsn[MCDC_LSN_STRLEN]; /* its start LSN S ("" when no switch) */
    int64_t  switch_batch;    /* the batch that first read the newer instance; -1 none */
    int64_t  last_batch;      /* the newest batch of the table (of the switch's app id when
                                 it switched): -1 none */
} mcdc_switch_state;

/** The capture-instance switches the facts table at @p facts_path records, one state per
 *  target that has a batch or a capture_instance_switched row, sorted by target: the
 *  newest switch (by batch, the largest) and the newest batch after it. A switch is done
 *  for a stream once last_batch > switch_batch. Reads only (one scan of the facts).
 *  @param[out] out  an array of @p n_out states; free with mcdc_switch_states_free().
 *  @return 0; MCDC_EINVAL for a facts table that does not exist or is not one (message and
 *          hint set); codes of the Delta layer. */
int mcdc_finalize_switches(mcdc_switch_state **out, size_t *n_out, const char *facts_path);
/** Free an array from mcdc_finalize_switches; accepts NULL. */
void mcdc_switch_states_free(mcdc_switch_state *a, size_t n);

/** Measure the freshness of @p table_name's verdict.
 *  @param facts_path  the facts table's directory, or NULL: its batch rows (event NULL)
 *                     whose target is @p table_name give the newest end offset seen, so a
 *                     held verdict (facts move, verdict does not) can be told from a
 *                     stopped stream (neither moves).
 *  @param src         an open source, or NULL: its server_now is the clock and its max
 *                     LSN's commit time the source position; without one the host clock
 *                     is used.
 *  @return 0; MCDC_ENOTFOUND when the control table, the row or the facts table does not
 *          exist; MCDC_EINVAL when the facts table lacks target or end_commit_ts;
 *          MCDC_ESOURCE and other codes from the source; MCDC_ECORRUPT; MCDC_EIO. */
struct mcdc_source;
int mcdc_control_freshness(mcdc_freshness *out, const char *path, const char *table_name,
                           const char *facts_path, struct mcdc_source *src);

/** A tracker store that writes to a control table: pass &target as the payload of
 *  mcdc_control_store_advance. The strings are borrowed and must outlive the tracker. */
typedef struct mcdc_control_target {
    const char         *path;       /* the control table's directory */
    const char         *table_name; /* the row's key */
    mcdc_advance_result last;       /* the result of the last successful advance
                                       (written by the tracker's worker thread) */
} mcdc_control_target;

/** mcdc_finalize_advance_fn over mcdc_control_advance; @p payload is a
 *  mcdc_control_target. */
int mcdc_control_store_advance(void *payload, const mcdc_offset *end, mcdc_granularity g,
                               mcdc_verdict *out);

/** Start a tracker that advances @p target's row, as a stream does with --control: the
 *  control table is created (or checked) first, so a wrong name fails before the stream
 *  reads anything; then the worker starts and, when @p seed is not NULL (the checkpoint's
 *  last committed end offset), applies it, so a run that finds nothing new still catches
 *  up a verdict a crash left behind.
 *  @param[out] out  the tracker; free with mcdc_tracker_free().
 *  @return 0; codes of mcdc_control_ensure and mcdc_tracker_start. */
int mcdc_control_track(mcdc_tracker **out, mcdc_control_target *target, const char *run_id,
                       const mcdc_tracker_options *opts, const mcdc_offset *seed);

#ifdef __cplusplus
}
#endif
#endif
