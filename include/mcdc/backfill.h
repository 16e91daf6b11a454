/*
 * mcdc/backfill.h: reading a chunked snapshot's rows into bronze, in waves, beside a
 * running stream (`mssql-cdc backfill`).
 *
 * Overview. `stream --bootstrap --bootstrap-mode chunked --facts F` opens a chunked
 * snapshot at S (a snapshot_open facts row) and streams every change after S at once.
 * A backfill then plans the chunks once (a snapshot_plan row: key ranges of at most
 * chunk_rows rows) and reads them in waves: each wave stamps L = max_lsn (L >= S) before
 * its read, reads whole chunks by key range, appends their rows to bronze in one commit
 * with txn{<app_id>#snap.<S>, wave} (operation 0, _start_lsn = L, _snapshot = S, _chunk),
 * then writes one snapshot_chunk facts row per chunk. After the last chunk it writes the
 * `bootstrap` completion row. A crash anywhere resumes where it stopped: Delta's txn keeps
 * each wave once, and a wave whose facts rows are missing gets them from its bronze
 * commit's userMetadata; no chunk is read twice into bronze. Nothing is ever written to
 * the source. Each chunk records its consistent_lsn (the newest commit at or before the
 * server's clock when its read ended). While a wave commits, the next one is read on a
 * second thread. With opts->range it is a partial backfill of one key range instead,
 * outside every snapshot (ADR 0022). mcdc_seed_run takes a stream's first snapshot from
 * an existing copy. Design: anchor-features §1 (bootstrap/backfill), §2.5, §3.3; ADR 0014.
 *
 * Caveats:
 * - Run one backfill per snapshot at a time: a second one finds its wave committed by the
 *   other and stops with MCDC_ECONFLICT (nothing is written twice).
 * - The plan never changes while the snapshot is open; a later chunk_rows is ignored with
 *   a warning.
 * - Not thread-safe; runs on the caller's thread and, while a wave commits, one read-ahead
 *   thread of its own that uses opts->source (nobody else may use the source meanwhile).
 */
#ifndef MCDC_BACKFILL_H
#define MCDC_BACKFILL_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/error.h"
#include "mcdc/lsn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcdc_source mcdc_source;

/** Where a backfill stands (also what --status prints). */
typedef struct mcdc_backfill_status {
    bool     open_found;       /* a chunked snapshot was opened for the target */
    bool     complete;         /* every chunk is in bronze and the completion row written */
    bool     planned;          /* the snapshot_plan row exists */
    mcdc_lsn snapshot;         /* S */
    int64_t  generation;       /* 0 for the bootstrap */
    char     app_id[256];      /* the generation's app id */
    int64_t  chunks_total;     /* of the plan; 0 before planning */
    int64_t  chunks_done;      /* chunks in bronze */
    int64_t  rows_done;        /* their rows */
    int64_t  rows_estimate;    /* rows counted at planning; -1 unknown */
    int64_t  waves;            /* waves committed, all runs */
    /* this run */
    int64_t  run_waves, run_chunks, run_rows;
    double   run_seconds;
    /* a partial backfill (opts->range): the chunk and row figures above are its own */
    bool     partial;          /* this run was one */
    bool     partial_complete; /* every chunk of its range read, its snapshot_range row written */
    mcdc_lsn partial_lsn;      /* its point P (max_lsn as it started) */
} mcdc_backfill_status;

/** A wave just committed (data, then its facts rows). Runs on the backfill's thread. */
typedef void (*mcdc_backfill_progress_fn)(const mcdc_backfill_status *st, int64_t wave,
                                          double rows_per_second, double seconds_left,
                                          void *payload);

/** Options of a backfill. Start from MCDC_BACKFILL_OPTIONS_INIT; strings borrowed. */
typedef struct mcdc_backfill_options {
    int          version;          /* 1 */
    mcdc_source *source;           /* borrowed, open */
    const char  *capture_instance; /* required */
    const char  *target, *target_path; /* bronze name as given and its directory */
    const char  *facts, *facts_path;   /* required: where the snapshot's state lives */
    const char  *app_id;           /* the stream's base app id (the generation is found) */
    int64_t      chunk_rows;       /* planning only; 0: 1,000,000 */
    int64_t      max_waves;        /* stop after this many waves; 0: no limit */
    int64_t      max_us;           /* stop starting waves after this long; 0: no limit */
    int64_t      target_wave_us;   /* wave width from the last wave's pace; 0: one chunk */
    bool         status_only;      /* read the state, read and write nothing else */
    mcdc_backfill_progress_fn progress; /* may be NULL */
    void        *progress_payload;
    const char  *progress_path;    /* append one JSON line per wave, or NULL */
    int64_t      min_headroom_us;  /* pause before a wave while the stream's retention
                                    * headroom (the newest batch's, less its age) is below
                                    * this, or unknown; 0: never */
    const char  *range;            /* "LO..HI" (JSON key values, null open): a partial
                                    * backfill of LO <= key < HI; NULL: the open snapshot */
    int          isolation;        /* mcdc_isolation of the reads; 0: the source's own */
    int64_t      lock_timeout_ms;  /* of the reads; -1: the source's own */
    bool         whole_range;      /* with range "null..null": read every key as a partial
                                    * backfill (stream --snapshot-on-switch), which a user's
                                    * --range may not (that is a new snapshot) */
} mcdc_backfill_options;

#define MCDC_BACKFILL_DEFAULT_CHUNK_ROWS 1000000
#define MCDC_BACKFILL_OPTIONS_INIT \
    { 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 300000000, false, NULL, NULL, NULL, 0, NULL, 0, -1, \
      false }

/** Read the open chunked snapshot's chunks until done or a limit stops it.
 *  @param[out] out  where it stands at the end (also on most failures).
 *  With opts->progress_path, each wave appends one line of JSON to it: {"event":"wave",
 *  "snapshot", "wave", "chunks", "chunks_total", "rows", "rows_estimate",
 *  "rows_per_second", "seconds_left", "timestamp"}.
 *  @return 0 (out->complete says whether chunks are left); MCDC_ENOTFOUND when no
 *          chunked snapshot was ever opened for the target by the app id's stream
 *          family; MCDC_EINVAL for bad options, a changed unique index or another
 *          snapshot mode open; MCDC_ESOURCE for a stale max_lsn below S (a readable
 *          secondary behind the primary) and source errors; MCDC_ECONFLICT when another
 *          backfill committed the same wave; MCDC_EUNSUPPORTED when the source cannot
 *          plan chunks or set the reads' isolation; MCDC_EINVAL when the isolation or lock
 *          timeout contradicts the source's or cannot be honoured by it; MCDC_EINVAL when the progress file cannot be opened
 *          (before anything is written); table and I/O codes. */
int mcdc_backfill_run(const mcdc_backfill_options *opts, mcdc_backfill_status *out);

/** The waves of a stream's open chunked snapshot, run in the stream's process after its
 *  batches (`stream --backfill`): one thread of its own, one wave per notification (those
 *  that come while a wave runs are coalesced). */
typedef struct mcdc_backfill_follower mcdc_backfill_follower;

/** Start the wave thread. @p opts as for mcdc_backfill_run (copied; its source is
 *  borrowed and used by the wave thread only until finish); progress, range and
 *  status_only are ignored. @return 0; MCDC_EINVAL; MCDC_ENOMEM; MCDC_ERROR (no thread). */
int mcdc_backfill_follower_start(mcdc_backfill_follower **out, const mcdc_backfill_options *opts);
/** A batch (or idle poll) of the stream ended: run a wave. Never blocks on I/O; a no-op
 *  once the snapshot is complete or a wave failed. Thread-safe. */
void mcdc_backfill_follower_notify(mcdc_backfill_follower *f);
/** Stop the thread; with @p drain first run every wave left. @param[out] st the last
 *  run's status (complete or not); @param[out] n_waves waves the follower ran.
 *  @return 0; the first failed wave's code (its error record restored). */
int mcdc_backfill_follower_finish(mcdc_backfill_follower *f, bool drain, mcdc_backfill_status *st,
                                  int64_t *n_waves);
/** Free a finished follower; accepts NULL. */
void mcdc_backfill_follower_free(mcdc_backfill_follower *f);

/** Options of a seed (`mssql-cdc seed`): a stream's first snapshot from an existing copy.
 *  Start from MCDC_SEED_OPTIONS_INIT; strings borrowed. */
typedef struct mcdc_seed_options {
    int          version;          /* 1 */
    mcdc_source *source;           /* borrowed, open */
    const char  *capture_instance; /* required */
    const char  *target, *target_path; /* bronze name as given and its directory */
    const char  *from, *from_path; /* the copy (a Delta table) as given and its directory */
    const char  *as_of;            /* "0x..." a commit LSN, or an ISO-8601 time (UTC without zone) */
    const char  *app_id;           /* the stream's base app id */
    const char  *facts, *facts_path; /* required: the bootstrap row goes there */
} mcdc_seed_options;

#define MCDC_SEED_OPTIONS_INIT { 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/** What a seed did. */
typedef struct mcdc_seed_result {
    mcdc_lsn lsn;          /* L, the rows' stamp */
    int64_t  commit_ts_us; /* L's commit time, UTC */
    int64_t  rows;         /* rows appended (0 on a rerun) */
    bool     already;      /* bronze held this seed already: nothing read again */
} mcdc_seed_result;

/** Append the rows of the Delta table at opts->from_path to bronze as snapshot rows
 *  stamped with the commit LSN of opts->as_of (operation 0, _start_lsn = _snapshot = L),
 *  in one commit with txn{<app_id>#snapshot, 0}, then write the `bootstrap` facts row;
 *  `stream --bootstrap` afterwards finds it and starts after L. Columns are matched to the
 *  captured ones by name ignoring case. Every input is checked before the first write.
 *  Not thread-safe; runs on the caller's thread.
 *  @return 0 (also a rerun of the same seed, out->already); MCDC_EINVAL for bad options, a
 *          copy that is not a Delta table, lacks a captured column, has another type or no
 *          rows, an LSN that is not a commit, a time after the source's clock, a target
 *          that already holds another first snapshot or a chunked snapshot open;
 *          MCDC_EDATALOSS when --as-of is older than what CDC still holds (the changes
 *          after it may be purged); source, table and I/O codes. */
int mcdc_seed_run(const mcdc_seed_options *opts, mcdc_seed_result *out);

/** The newest chunked snapshot of a target, as its facts rows say (any stream family). */
typedef struct mcdc_chunked_snapshot {
    bool     found;          /* a chunked snapshot_open row for the target */
    bool     is_open;        /* found, and no bootstrap/resnapshot row at or above its S */
    mcdc_lsn snapshot;       /* its S */
    int64_t  chunks_done;    /* snapshot_chunk rows of S */
    int64_t  chunks_total;   /* chunks of its plan; 0 before planning */
    char     app_id[256];    /* the app id of its generation (its waves' txn is
                              * "<app_id>#snap.<S>" in bronze) */
} mcdc_chunked_snapshot;

/** Read the facts table at @p facts_path (a missing one: nothing found) for the newest
 *  chunked snapshot of @p target (the name as given). Reads only.
 *  @return 0; table and I/O codes. */
int mcdc_chunked_snapshot_find(mcdc_chunked_snapshot *out, const char *facts_path,
                               const char *target);

/** The plan of the newest chunked snapshot of @p target: the JSON text of its
 *  snapshot_plan row's detail ({"keys": [names in index order], "chunks": [[lo, hi], ...]
 *  (key values as JSON, null = open), ...}), malloc'd into @p *out, or NULL before
 *  planning. Reads only.
 *  @return 0; MCDC_ENOMEM; table and I/O codes. */
int mcdc_chunked_snapshot_plan(char **out, const char *facts_path, const char *target);

/** The highest chunk of waves 0..@p wave of the newest chunked snapshot of @p target, as
 *  its snapshot_chunk facts rows say, into @p out (-1 when the rows of wave @p wave are
 *  not there yet: a wave's rows follow its bronze commit). Reads only.
 *  @return 0; table and I/O codes. */
int mcdc_chunked_snapshot_last_chunk(const char *facts_path, const char *target, int64_t wave,
                                     int64_t *out);

/** One snapshot_chunk facts row: a chunk read into bronze and the rows it read. */
typedef struct mcdc_snapshot_chunk_fact {
    int64_t chunk, wave, rows;
} mcdc_snapshot_chunk_fact;

/** As mcdc_chunked_snapshot_find, and the snapshot_chunk rows of that snapshot (its S),
 *  sorted by chunk, in @p *chunks (caller frees with free(); NULL when none).
 *  @return 0; MCDC_ENOMEM; table and I/O codes. */
int mcdc_chunked_snapshot_chunks(mcdc_chunked_snapshot *out, mcdc_snapshot_chunk_fact **chunks,
                                 size_t *n_chunks, const char *facts_path, const char *target);

#ifdef __cplusplus
}
#endif
#endif
