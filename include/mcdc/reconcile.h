/*
 * mcdc/reconcile.h: prove that a silver table equals its source table, and name the keys
 * where it does not (anchor-features §1 "reconcile", §2.8; issue 19).
 *
 * Tier 1: the source table and silver are compared per key bucket, row count and key sum.
 * A single integer or date key is bucketed by its ordinal (fine buckets of width
 * ceil(span / 100,000) merged until one holds bucket_rows rows of the larger side); any
 * other key (composite, strings, uniqueidentifier) by its 7-byte key hash modulo the
 * number of buckets, and the sum is over the key hashes (mcdc/keyhash.h). The source side
 * is one grouped query (the source's key_buckets op); silver's side comes from its files.
 * Tier 2: every bucket that differs and a sample of the others are compared row by row,
 * by the SHA-256 row hash of the captured columns; each differing key is named MISSING
 * (in the source, not in silver), EXTRA (in silver, not in the source), DIFFERENT (values
 * differ) or DUPLICATE (silver holds the key more than once); a named key changed after
 * silver's applied_lsn is IN_FLIGHT instead.
 *
 * Chunk checks (with a facts table): for a completed chunked snapshot of bronze, each
 * chunk's rows in bronze equal its snapshot_chunk facts row.
 *
 * With a report table, one Delta row per bucket, per key named and per chunk that differs is
 * appended per run (kind `reconcile`, columns as anchor-features §2.8, with run_id), in one
 * commit.
 *
 * Caveats:
 * - Never writes to the source, silver, bronze or control; only the report table.
 * - The source is read while it moves. A differing key with a change after silver's
 *   applied_lsn (in bronze, or in the change table up to the max_lsn read after the
 *   source) is IN_FLIGHT, not a mismatch; a commit capture has not harvested yet still
 *   reads as a mismatch until a later run.
 * - Silver's side holds one 8-byte ordinal or hash per silver row in memory, and the rows
 *   of the buckets compared row by row; a source without key_buckets is refused with
 *   MCDC_EUNSUPPORTED.
 */
#ifndef MCDC_RECONCILE_H
#define MCDC_RECONCILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/error.h"
#include "mcdc/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One reconcile run. Start from MCDC_RECONCILE_OPTIONS_INIT. Strings are borrowed. */
typedef struct mcdc_reconcile_options {
    int                version;       /* 1 */
    mcdc_source       *source;        /* borrowed, open */
    const char        *capture_instance;
    const char        *silver_name;   /* as given (for messages and the control row) */
    const char        *silver_path;   /* silver's directory; must exist */
    const char        *control_path;  /* the control table; silver's row gives applied_lsn */
    const char *const *keys;          /* key columns, or NULL: the instance's unique index */
    size_t             n_keys;
    int64_t            bucket_rows;   /* rows per bucket (of the larger side); default 1000000 */
    double             sample;        /* fraction of matching buckets compared row by row,
                                         0..1; default 0.01 */
    uint64_t           seed;          /* of the sample */
    bool               has_seed;      /* false: a seed from the clock */
    const char        *bronze_path;   /* bronze's directory: a differing key changed after
                                         silver's applied_lsn, in bronze or in the change
                                         table, is IN_FLIGHT; NULL: no such re-check */
    const char        *report_name;   /* the report table as given, or NULL: no report */
    const char        *report_path;   /* its directory (created on the first run) */
    const char        *bronze_name;   /* bronze as the stream was given it (the facts rows'
                                         target); NULL: bronze_path */
    const char        *facts_path;    /* the facts table: chunk checks of bronze's newest
                                         completed chunked snapshot; NULL: none */
    int                threads;       /* silver files read at once for tier 1; 0: one per
                                         CPU, at most 8 */
    int64_t            settle_us;     /* keys no change explains are re-checked once more
                                         after capture has passed the time of the source
                                         read, waiting at most this long; 0: no wait */
} mcdc_reconcile_options;

#define MCDC_RECONCILE_OPTIONS_INIT { 1, NULL, NULL, NULL, NULL, NULL, NULL, 0, 1000000, 0.01, 0, false, NULL, NULL, NULL, NULL, NULL, 0, 0 }

/** How one key differs. */
typedef enum {
    MCDC_RECONCILE_MISSING = 1, /* in the source, not in silver */
    MCDC_RECONCILE_EXTRA,       /* in silver, not in the source */
    MCDC_RECONCILE_DIFFERENT,   /* in both, captured values differ */
    MCDC_RECONCILE_DUPLICATE,   /* silver holds the key more than once */
    MCDC_RECONCILE_IN_FLIGHT    /* differs, and changed after silver's position */
} mcdc_reconcile_status;

/** "MISSING", "EXTRA", "DIFFERENT", "DUPLICATE", "IN_FLIGHT". */
const char *mcdc_reconcile_status_name(mcdc_reconcile_status s);

/** A key named by tier 2. */
typedef struct mcdc_reconcile_key {
    char                 *key_json; /* owned: {"column": value, ...} in key order (jsonl values) */
    mcdc_reconcile_status status;
} mcdc_reconcile_key;

/** Where the chunked snapshot checked by the chunk checks stands. */
typedef enum {
    MCDC_RECONCILE_CHUNKS_NONE = 0, /* bronze never had a chunked snapshot: nothing checked */
    MCDC_RECONCILE_CHUNKS_OPEN,     /* its newest is still open: not checked */
    MCDC_RECONCILE_CHUNKS_COMPLETE  /* completed: every chunk checked */
} mcdc_reconcile_chunk_state;

/** A chunk whose rows in bronze differ from its snapshot_chunk facts row. */
typedef struct mcdc_reconcile_chunk {
    int64_t chunk;       /* its index; -1 for bronze rows of S with a chunk outside the plan */
    int64_t facts_rows;  /* its facts row's rows; -1 when it has none */
    int64_t bronze_rows; /* rows of bronze with _snapshot = S and this _chunk */
} mcdc_reconcile_chunk;

/** What a run found. Release with mcdc_reconcile_result_clear(). */
typedef struct mcdc_reconcile_result {
    int64_t             silver_version; /* the silver version compared (pinned) */
    char               *silver_lsn;     /* owned: silver's applied_lsn, or NULL */
    bool                by_hash;        /* buckets by key hash (else by ordinal) */
    int64_t             buckets;        /* compared */
    int64_t             matched;        /* equal in tier 1 and in tier 2 where compared */
    int64_t             in_flight;      /* buckets whose differing keys are all in flight */
    int64_t             mismatched;
    int64_t             hashed;         /* buckets compared row by row */
    int64_t             source_rows, silver_rows;
    char                run_id[37];     /* UUID of the run (the report's run_id) */
    double              seconds;        /* wall time of the run */
    mcdc_reconcile_key *keys;           /* owned, in key text order */
    size_t              n_keys;
    /* chunk checks (opts->facts_path) */
    bool                chunks_checked; /* the facts table was read */
    mcdc_reconcile_chunk_state chunk_state;
    char                chunk_snapshot[MCDC_LSN_STRLEN]; /* its S ("" for none) */
    int64_t             chunks;         /* chunks checked */
    int64_t             chunks_mismatched;
    mcdc_reconcile_chunk *chunk_diffs;  /* owned, by chunk */
    size_t              n_chunk_diffs;
} mcdc_reconcile_result;

/** Compare silver with the source table of the capture instance.
 *  Every input is checked before the source's table is read.
 *  @return 0 with @p out filled (mismatches and chunks that differ are in it, not an
 *          error); MCDC_EINVAL for a
 *          bad option, an unknown key column or a silver without the captured columns;
 *          MCDC_ENOTFOUND for a silver or control table that does not exist or an unknown
 *          capture instance; MCDC_EUNSUPPORTED for a source without key_buckets or a
 *          floating-point key; MCDC_ESOURCE, MCDC_EIO, MCDC_ECORRUPT. */
int mcdc_reconcile_run(const mcdc_reconcile_options *opts, mcdc_reconcile_result *out);

/** Release what a result owns; accepts a zeroed result. */
void mcdc_reconcile_result_clear(mcdc_reconcile_result *r);

#ifdef __cplusplus
}
#endif
#endif
