/*
 * mcdc/silver.h: silver, a Delta table kept equal to the source table from bronze's
 * change log (anchor-features §2.7, the original apply_changes; architecture §3, §5).
 *
 * Silver holds the captured columns plus `_start_lsn` (commit LSN of the transaction that
 * wrote the row's current image; a snapshot's LSN for a row unchanged since a snapshot)
 * and `_commit_ts` (its UTC commit time). Deletes are hard.
 *
 * Two parts:
 * - The change set (changes.c): the latest image per key of the bronze rows one call
 *   applies, in memory bounded by the number of changed keys, and the rule that decides
 *   what becomes of an existing silver row. Pure data; no I/O.
 * - The apply (apply.c): the merge on Delta, the position and the verdict.
 *
 * Rules of the change set (numbered; tests cite them):
 * (S1) Rows rank per key by (_start_lsn, _command_id, _seqval, _operation), a NULL
 *      _command_id or _seqval below any value; the highest wins. One refinement: within
 *      one statement (same _start_lsn and a non-NULL _command_id) a row entering the key
 *      (0, 2, 4) outranks a row leaving it (1, 3) whatever their seqvals, since a key holds
 *      a row after a statement exactly when a row entered it (a swap of two keys in one
 *      UPDATE, a MERGE that deletes and re-inserts a key). Without _command_id the log
 *      order (seqval) decides. Keys compare null-safe and byte-exact (decimals as
 *      128-bit integers, strings and binaries as bytes).
 * (S2) Operation 1 deletes its key. Operation 3 deletes its key too, but the 4 of the same
 *      row update (same LSN, command and seqval, higher operation) outranks it on the same
 *      key, so a 3 only wins when the update moved the row to another key. Operations 0,
 *      2 and 4 upsert.
 * (S3) An image replaces an existing silver row only when its _start_lsn is newer than the
 *      row's; a winning upsert of a key silver does not hold is inserted; a winning delete
 *      of a key silver does not hold does nothing. So applying the same rows again
 *      changes nothing and resurrects nothing.
 * (S4) Only rows of the allowed capture instances are taken (case-insensitive); a row of
 *      another instance is an error, never silently dropped.
 * (W1) An open chunked snapshot at S (backfill waves) is applied as its waves arrive: the
 *      rows of the waves new since the last apply (by chunk, the control row's
 *      snapshot_wave) go into the change set with every bronze change after S (and every
 *      change not applied yet), so by S1 a wave's row, stamped with its wave's L, loses
 *      to a change after L to its key (a delete after the stamp stays deleted, also when
 *      silver applied it before the wave arrived) and, at equal LSN, to a change (a row
 *      without _command_id and _seqval ranks below one with them). At completion silver
 *      is rebuilt from the snapshot's rows and the changes after S, latest per key,
 *      deletes applied. The verdict is held while the snapshot is open.
 * (W2) Range deletes: a key silver holds in a new chunk [lo, hi) stamped L, with no image at
 *      or above L in the change set (the chunk's row or a later change), is deleted only if
 *      silver's image of it has _start_lsn < L (it was gone by L: a delete lost in a gap,
 *      an older snapshot's row); a key inserted after L keeps its row. Bounds are compared
 *      in the source's key order (the plan's key columns, composite keys column by column):
 *      the value order for integers, bit, decimals, floats, dates and timestamps, and for a
 *      character or binary column the order the plan recorded from the source
 *      (mcdc/key_order.h: case-insensitive text, a uniqueidentifier's byte groups, bytes).
 *      A character or binary key whose order the source does not tell (SQL Server: its
 *      collation) is left to the completion's rebuild, as are chunks whose stamp is not
 *      known yet.
 * (W3) Partial backfills (`backfill --range`, ADR 0022): the op-0 rows of their waves not
 *      applied yet (a range's bronze txn <app>#range.<R> above silver's txn of the same
 *      appId) go into an incremental change set with every change after their stamps, so
 *      a change after a wave's stamp L wins and a row read at L replaces an older image;
 *      a key missing from one of its chunks [lo, hi) is deleted as in W2 (so never outside
 *      [LO, HI)). The merge commit records silver's txn{<app>#range.<R>, last wave}, so a
 *      wave is applied once, crash or not. Never a rebuild; a rebuild or an open snapshot
 *      defers them to a later call.
 *
 * Caveats:
 * - Not thread-safe; one owner at a time. The one exception: after
 *   mcdc_silver_changes_sort() and until the next add or sort, several threads may call
 *   mcdc_silver_changes_match_key(), _match_at(), _at(), _row_at(), _marks(),
 *   _set_marks(), the sorted look-ups and _row_key() at once, provided no two of them
 *   decide rows of the same key (each thread owns a disjoint key range).
 * - Images and keys handed out are borrowed from the change set and live until the next
 *   mcdc_silver_changes_add(), _sort() or its free. An image's row is decoded into cells the
 *   caller owns (a scratch row per thread, which also holds its _start_lsn text); its
 *   other strings are borrowed the same way.
 */
#ifndef MCDC_SILVER_H
#define MCDC_SILVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/lsn.h"
#include "mcdc/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* Schemas and keys                                                                     */

/** True when @p name is one of bronze's metadata columns (_capture_instance, _start_lsn,
 *  _seqval, _operation, _command_id, _commit_ts, _batch_id, _snapshot, _chunk). */
bool mcdc_silver_is_bronze_meta(const char *name);

/** Silver's schema for bronze schema @p bronze: the columns of @p existing (silver's
 *  current schema, or NULL for a new table) in their order, then bronze's captured
 *  columns silver lacks (schema evolution: appended, nullable). A new table gets the
 *  captured columns in bronze's order, then `_start_lsn STRING`, `_commit_ts
 *  TIMESTAMP_NTZ`.
 *  @param[out] out  free with mcdc_schema_free(); NULL on failure.
 *  @return 0; MCDC_EINVAL when bronze lacks _start_lsn, _operation or _commit_ts;
 *          MCDC_ESCHEMA when a column has another type in silver than in bronze (types
 *          are never changed: widen silver by hand); MCDC_ENOMEM. */
int mcdc_silver_schema(mcdc_schema **out, const mcdc_schema *bronze, const mcdc_schema *existing);

/** Append the order-preserving encoding of one key value: memcmp order of two encodings
 *  of the same column is the column's value order (NULL first; integers, dates and times
 *  numerically; decimals exactly as unscaled integers of the column's scale; floats
 *  numerically with -0 = 0; strings and binaries bytewise). Concatenating the encodings
 *  of the key columns gives a composite key with the same property.
 *  @return 0; MCDC_ENOMEM past the buffer's cap. */
int mcdc_silver_key_encode(mcdc_buf *out, const mcdc_column *col, const mcdc_value *v);

/* ------------------------------------------------------------------------------------ */
/* The change set                                                                       */

typedef struct mcdc_silver_changes mcdc_silver_changes;

/** Which bronze rows a change set takes, and its memory cap. Start from
 *  MCDC_SILVER_CHANGES_OPTIONS_INIT. */
typedef struct mcdc_silver_changes_options {
    int                version;          /* 1 */
    const char *const *capture_instances; /* allowed instances (S4); n == 0: any */
    size_t             n_capture_instances;
    bool               has_after;        /* take changes (ops 1-4) only with _start_lsn > after */
    mcdc_lsn           after;
    bool               has_snapshot;     /* take op-0 rows of this snapshot only: those with
                                            coalesce(_snapshot, _start_lsn) = snapshot;
                                            without it op-0 rows are skipped */
    mcdc_lsn           snapshot;
    size_t             max_bytes;        /* cap on the memory held; 0: 4 GiB */
    const mcdc_lsn    *range_stamps;     /* also take the op-0 rows of partial backfills
                                            (_snapshot NULL, _chunk set) whose _start_lsn is
                                            one of these (rule W3); copied */
    size_t             n_range_stamps;
} mcdc_silver_changes_options;

#define MCDC_SILVER_CHANGES_OPTIONS_INIT { 1, NULL, 0, false, { { 0 } }, false, { { 0 } }, 0, NULL, 0 }

/** What a change set took. */
typedef struct mcdc_silver_changes_stats {
    uint64_t rows_seen;      /* rows offered */
    uint64_t rows_taken;     /* rows that ranked (changes beyond `after`, the snapshot's rows) */
    uint64_t snapshot_rows;  /* op-0 rows taken */
    uint64_t n_keys;         /* distinct keys */
    bool     has_max_change; /* a change (ops 1-4) was taken */
    mcdc_lsn max_change_lsn; /* the highest _start_lsn of the changes taken */
    size_t   bytes;          /* memory held by images and the index */
} mcdc_silver_changes_stats;

/** A new empty change set.
 *  @param bronze    bronze's schema (the rows given to add are in its order); copied.
 *  @param silver    silver's schema (from mcdc_silver_schema); images come out in its
 *                   order, columns bronze lacks as NULL; copied.
 *  @param keys      the key columns (names, case-insensitive), at least one.
 *  @param opts      NULL for defaults; copied (capture instance names too).
 *  @param[out] out  free with mcdc_silver_changes_free().
 *  @return 0; MCDC_EINVAL for a key that is not a captured column of bronze and silver
 *          (the message names it), a bronze schema without _start_lsn, _operation or
 *          _commit_ts, or silver without _start_lsn and _commit_ts; MCDC_ENOMEM. */
int mcdc_silver_changes_new(mcdc_silver_changes **out, const mcdc_schema *bronze,
                            const mcdc_schema *silver, const char *const *keys, size_t n_keys,
                            const mcdc_silver_changes_options *opts);

/** Free a change set; accepts NULL. */
void mcdc_silver_changes_free(mcdc_silver_changes *cs);

/** Offer one bronze row (values in bronze's schema order, strings borrowed for the call).
 *  It is taken when the options select it, and becomes its key's image when it outranks
 *  the current one (S1, S2). Cost: O(row size) plus an amortised hash insert.
 *  @return 0 (taken or skipped); MCDC_EINVAL for a row of a capture instance not allowed
 *          (S4; the hint says to pass the source or the instances) or a key whose
 *          encoding is longer than 1 MiB; MCDC_ECORRUPT for a row with a NULL or malformed
 *          _start_lsn or _seqval, or an _operation outside 0-4; MCDC_ENOMEM past max_bytes
 *          (the hint says how to raise it) or for a row of 4 GiB or more. */
int mcdc_silver_changes_add(mcdc_silver_changes *cs, const mcdc_value *bronze_row);

/** Size the key index for about @p n_keys distinct keys ahead (e.g. the rows about to be
 *  offered), so that it is not rehashed while it fills. A hint: it takes at most a quarter
 *  of the memory cap and never fails. */
void mcdc_silver_changes_reserve(mcdc_silver_changes *cs, uint64_t n_keys);

/** The counters so far. */
void mcdc_silver_changes_get_stats(const mcdc_silver_changes *cs, mcdc_silver_changes_stats *out);

/** The number of distinct keys. */
size_t mcdc_silver_changes_count(const mcdc_silver_changes *cs);

/** The fate of an existing silver row. */
typedef enum {
    MCDC_SILVER_KEEP = 0, /* no newer image: keep the row as it is */
    MCDC_SILVER_REPLACE,  /* a newer upsert: write *image instead */
    MCDC_SILVER_DROP      /* a newer delete (or a second copy of a replaced key): drop it */
} mcdc_silver_fate;

/** Decide what becomes of one existing silver row (values in silver's schema order) by
 *  rule S3, and mark its key as held by silver. A key met a second time after a REPLACE
 *  is dropped, so silver never holds a key twice.
 *  @param[out] image  with REPLACE: the new row in silver's order, decoded into
 *                     @p scratch (so *image == scratch); else NULL.
 *  @param scratch     the caller's silver->n_cols + 1 cells (the images are stored
 *                     compactly; see mcdc_silver_changes_row_at()).
 *  @return 0; MCDC_ECORRUPT for a silver row with a malformed _start_lsn. */
int mcdc_silver_changes_match(mcdc_silver_changes *cs, const mcdc_value *silver_row,
                              mcdc_silver_fate *fate, const mcdc_value **image,
                              mcdc_value *scratch);

/** As mcdc_silver_changes_match(), for a row whose encoded key the caller has (from
 *  mcdc_silver_changes_row_key()); uses no scratch of the change set. */
int mcdc_silver_changes_match_key(mcdc_silver_changes *cs, const uint8_t *key, size_t key_len,
                                  const mcdc_value *silver_row, mcdc_silver_fate *fate,
                                  const mcdc_value **image, mcdc_value *scratch);

/** As mcdc_silver_changes_match(), for a row whose key is the one of the @p i-th image in
 *  key order (the caller found it, e.g. by walking a file sorted by key beside the
 *  sorted images). Needs sort. */
int mcdc_silver_changes_match_at(mcdc_silver_changes *cs, size_t i, const mcdc_value *silver_row,
                                 mcdc_silver_fate *fate, const mcdc_value **image,
                                 mcdc_value *scratch);

/** The marks the matches left on the @p i-th image in key order (bit 0: met in silver,
 *  bit 1: placed by a REPLACE), to save them before a pass that may be undone. */
unsigned mcdc_silver_changes_marks(const mcdc_silver_changes *cs, size_t i);

/** Restore marks saved with mcdc_silver_changes_marks(). */
void mcdc_silver_changes_set_marks(mcdc_silver_changes *cs, size_t i, unsigned marks);

/** The image of one key, in key order after mcdc_silver_changes_sort(). */
typedef struct mcdc_silver_image {
    const uint8_t    *key;       /* encoded key (mcdc_silver_key_encode of each key column) */
    size_t            key_len;
    mcdc_lsn          start_lsn; /* of the winning row */
    int               operation; /* 0-4 of the winning row */
    bool              is_delete; /* operation 1 or 3 (S2) */
    bool              matched;   /* mcdc_silver_changes_match met the key in silver */
} mcdc_silver_image;

/** Order the images by encoded key (ascending). Cost O(n log n). @return 0; MCDC_ENOMEM. */
int mcdc_silver_changes_sort(mcdc_silver_changes *cs);

/** The @p i-th image in key order (0 <= i < count); call after mcdc_silver_changes_sort. */
void mcdc_silver_changes_at(const mcdc_silver_changes *cs, size_t i, mcdc_silver_image *out);

/** The row of the @p i-th image in key order, in silver's order (for a delete: the key
 *  columns and metadata are set, the rest as read), decoded into @p scratch (the caller's
 *  silver->n_cols + 1 cells, returned; the last holds the _start_lsn text): images are
 *  stored compactly, not as cells. Its other strings point into the change set. Needs
 *  sort. */
const mcdc_value *mcdc_silver_changes_row_at(const mcdc_silver_changes *cs, size_t i,
                                             mcdc_value *scratch);

/** The encoded key of the @p i-th image in key order, from a copy of the keys kept back to
 *  back (reading keys in order touches no image). Needs sort. */
const uint8_t *mcdc_silver_changes_key_at(const mcdc_silver_changes *cs, size_t i, size_t *len);

/** Whether the @p i-th image in key order is a delete (operation 1 or 3), without a visit
 *  to the image. Needs sort. */
bool mcdc_silver_changes_is_delete_at(const mcdc_silver_changes *cs, size_t i);

/** The index (in key order) of the image whose encoded key is @p key, or -1. Needs sort. */
int64_t mcdc_silver_changes_find_sorted(const mcdc_silver_changes *cs, const uint8_t *key,
                                        size_t key_len);

/** The first index (in key order) whose key is >= @p key (count when none). Needs sort. */
size_t mcdc_silver_changes_lower_bound(const mcdc_silver_changes *cs, const uint8_t *key,
                                       size_t key_len);

/** Encode the key of a row in silver's order into @p out (cleared first).
 *  @return 0; MCDC_ENOMEM. */
int mcdc_silver_changes_row_key(const mcdc_silver_changes *cs, mcdc_buf *out,
                                const mcdc_value *silver_row);

/** A bronze row of snapshot @p snapshot (operation 0 with coalesce(_snapshot, _start_lsn)
 *  = snapshot) as a silver row: @p out gets silver's columns (strings borrowed from the
 *  row and from @p lsn_text, which receives the _start_lsn text). Snapshot rows are not
 *  ranked: a snapshot holds each key once, so a rebuild streams them past the change set
 *  (mcdc_silver_changes_match) instead of holding them.
 *  @return 1 when the row is one of the snapshot's; 0 for any other row; MCDC_EINVAL for
 *          a capture instance not allowed (S4); MCDC_ECORRUPT for a malformed LSN. */
int mcdc_silver_changes_snapshot_row(const mcdc_silver_changes *cs, const mcdc_value *bronze_row,
                                     const mcdc_lsn *snapshot, mcdc_value *out,
                                     char lsn_text[MCDC_LSN_STRLEN]);

/** Silver's schema the change set was made with (borrowed). */
const mcdc_schema *mcdc_silver_changes_schema(const mcdc_silver_changes *cs);

/** Indices of the key columns in silver's schema (borrowed, count in @p n_out). */
const int *mcdc_silver_changes_key_index(const mcdc_silver_changes *cs, size_t *n_out);


/* ------------------------------------------------------------------------------------ */
/* The apply (apply.c)                                                                  */

/** One silver apply. Start from MCDC_SILVER_APPLY_OPTIONS_INIT. Strings are borrowed. */
/** What silver keeps (silver apply --mode).
 *  - SCD1: the source table as it is now, one row per key, deletes hard.
 *  - SCD2: one row per version of a key (silver/scd2.c): the captured columns, then
 *    _valid_from_lsn, _valid_to_lsn (NULL for the current version), _valid_from_ts,
 *    _valid_to_ts (commit times) and _is_current. A version is a transaction's effect on a
 *    key (its final state after the transaction by rule S1); an update to the same values,
 *    or a key inserted and deleted in one transaction, opens none; a delete closes the
 *    current version. Only files holding a current version of a changed key are rewritten;
 *    new versions go into a new file. A snapshot newer than the one the table was built
 *    from is refused (MCDC_EUNSUPPORTED). */
typedef enum { MCDC_SILVER_SCD1 = 0, MCDC_SILVER_SCD2 = 1 } mcdc_silver_mode;

/** How an incremental scd1 merge changes the files holding changed keys
 *  (docs/decisions/0045-silver-deletion-vectors.md): REWRITE writes each such file again;
 *  DELETION_VECTORS marks the replaced rows in the file's deletion vector and writes the
 *  new images into one new file (Delta feature deletionVectors: reader 3, writer 7), a
 *  file past the table's mcdc.silver.dv_fold_share of deleted rows (default 0.2) and files
 *  under half the target size being written again instead. DEFAULT takes the table's
 *  mcdc.silver.write_mode (rewrite when absent); an explicit mode is recorded there. */
typedef enum {
    MCDC_SILVER_WRITE_DEFAULT = 0,
    MCDC_SILVER_WRITE_REWRITE = 1,
    MCDC_SILVER_WRITE_DELETION_VECTORS = 2
} mcdc_silver_write_mode;

typedef struct mcdc_silver_apply_options {
    int                version;        /* 1 */
    const char        *bronze_name;    /* bronze as given: its control row and facts target */
    const char        *bronze_path;    /* bronze's directory */
    const char        *silver_name;    /* silver as given: its control row */
    const char        *silver_path;    /* silver's directory (created on the first call) */
    const char        *control_path;   /* the control table's directory */
    const char        *facts_path;     /* the facts table's directory, or NULL: the verdict
                                          is held (an emptied table's snapshot is only
                                          visible in the facts) */
    const char *const *capture_instances; /* the source table's instances (S4), >= 1 */
    size_t             n_capture_instances;
    const char *const *keys;           /* key columns, >= 1 */
    size_t             n_keys;
    mcdc_granularity   granularity;    /* of the verdict; default hour */
    int64_t            target_file_rows; /* rows per silver file; a file past 1.5x is split;
                                            default 262144 */
    size_t             max_bytes;      /* memory cap of the change set; 0: 4 GiB */
    int                threads;        /* silver files rewritten at once (each holds at
                                          most one file); 0: the online CPUs, at most 8 */
    mcdc_silver_mode   mode;           /* scd1 (the default) or scd2; recorded in the table
                                          (mcdc.silver.mode) and checked on every call */
    bool               soft_deletes;   /* scd1 only: a deleted key stays, with _deleted true,
                                          _deleted_lsn and _deleted_ts and its last values;
                                          live rows _deleted false (mcdc.silver.soft_deletes) */
    mcdc_silver_write_mode write_mode; /* scd1 without soft deletes only, for another mode */
} mcdc_silver_apply_options;

#define MCDC_SILVER_APPLY_OPTIONS_INIT \
    { 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, 0, MCDC_GRAN_HOUR, 262144, 0, 0, \
      MCDC_SILVER_SCD1, false, MCDC_SILVER_WRITE_DEFAULT }

/** What an apply did. */
typedef struct mcdc_silver_apply_result {
    bool         bronze_found;    /* false: bronze does not exist yet; nothing was done */
    bool         rebuilt;         /* silver was rebuilt from a (newer) snapshot */
    bool         has_applied_lsn;
    mcdc_lsn     applied_lsn;     /* the position after the call */
    bool         has_snapshot_lsn;
    mcdc_lsn     snapshot_lsn;    /* the snapshot silver was last rebuilt from */
    mcdc_verdict finalized_until; /* silver's verdict after the call */
    int64_t      bronze_version;  /* the bronze version read (pinned) */
    int64_t      silver_version;  /* silver's version after the call (-1: none) */
    uint64_t     bronze_files_read, bronze_files_skipped;
    uint64_t     bronze_rows_read;
    uint64_t     changed_keys;    /* distinct keys in the change set */
    uint64_t     rows_inserted, rows_updated, rows_deleted;
    uint64_t     silver_files_before;  /* live files before the merge */
    uint64_t     silver_files_rewritten; /* removed by the merge (marked ones included) */
    uint64_t     silver_files_marked;    /* of those, kept with a new deletion vector */
    uint64_t     silver_files_added;
    uint64_t     silver_rows_read;     /* rows of rewritten files */
    size_t       change_set_bytes;     /* peak memory of the change set */
    /* Wall seconds of the phases (monotonic clock), for benchmarks and logs: */
    double       seconds_read;    /* reading bronze's changes into the change set (for a
                                     rebuild: the changes, not the snapshot's rows) */
    double       seconds_sort;    /* sorting the change set by key */
    double       seconds_merge;   /* the rest of the merge: reading and writing silver
                                     files (a rebuild's snapshot rows included) */
    double       seconds_commit;  /* the merge commit, the position and the verdict */
    bool         snapshot_open;   /* a chunked snapshot of bronze is open: its waves so
                                     far were applied (rule W1), the verdict is held */
} mcdc_silver_apply_result;

/** Apply what bronze holds beyond silver's position, then record the position and
 *  advance silver's verdict (anchor-features §2.7):
 *  1. take the lock <silver>/_mcdc_silver_apply.lock (one call per silver table);
 *  2. read bronze's verdict and silver's control row, then pin bronze at its latest
 *     version;
 *  3. find the newest snapshot (facts bootstrap/resnapshot rows, bronze's op-0 rows);
 *     rebuild when it is newer than the one silver was built from, or on the first call;
 *  4. merge the latest image per changed key (rules S1-S4) by copy-on-write of the silver
 *     files whose key range holds a changed key, one Delta commit that declares what it
 *     read; a column bronze gained is first added to silver;
 *  5. record applied_lsn and snapshot_lsn in the control table (failpoint
 *     silver.after_merge before this, silver.after_position after it);
 *  6. with facts_path, advance silver's finalized_until to at most bronze's verdict read
 *     in step 2.
 *  A crash anywhere is repaired by running again: the merge is idempotent (S3).
 *  @param[out] out  filled (also partly on failure).
 *  @return 0; MCDC_ELOCKED when another apply holds the lock; MCDC_EINVAL for bad
 *          options, rows of another table (S4), keys that differ from the ones silver was
 *          built with; MCDC_ESCHEMA for a column whose type changed; MCDC_ENOMEM past
 *          the memory cap; MCDC_ECONFLICT or MCDC_ETIMEOUT when another writer changed
 *          silver meanwhile; codes of the Delta, Parquet and control layers. */
int mcdc_silver_apply(const mcdc_silver_apply_options *opts, mcdc_silver_apply_result *out);

/** Validate an apply's inputs reading only, as mcdc_silver_apply does before its first
 *  write: silver, control, facts and bronze, where they exist, are tables of their kind;
 *  a silver table's recorded keys are the ones given; the keys are columns of bronze.
 *  @return 0; MCDC_EINVAL naming the table, key or column and how to go on; codes of the
 *          Delta layer. */
int mcdc_silver_apply_check(const mcdc_silver_apply_options *opts);


/* ------------------------------------------------------------------------------------ */
/* Reading as of a source position (as_of.c)                                            */

/** Where to read a table as of: an LSN (the commit at it included), or a time (the
 *  largest commit LSN whose commit time is before it). Start from MCDC_SILVER_AS_OF_INIT. */
typedef struct mcdc_silver_as_of {
    int         version;     /* 1 */
    bool        by_time;     /* false: lsn; true: before_us */
    mcdc_lsn    lsn;
    int64_t     before_us;   /* UTC microseconds */
    const char *bronze_path; /* a silver table's bronze (mcdc_silver_as_of_bronze_name); NULL for bronze */
} mcdc_silver_as_of;

#define MCDC_SILVER_AS_OF_INIT { 1, false, { { 0 } }, 0, NULL }

/** What an as-of read starts from. */
typedef struct mcdc_silver_as_of_result {
    mcdc_lsn lsn;            /* the position read (a time resolved to its LSN) */
    int64_t  table_version;  /* bronze: the version scanned; silver: the version the state
                                starts from */
    uint64_t bronze_changes; /* silver: bronze changes read after that version's position */
} mcdc_silver_as_of_result;

typedef struct mcdc_silver_as_of_reader mcdc_silver_as_of_reader;

/** Open a read of bronze or silver table @p path as the source held it at @p at.
 *  Bronze: its rows with _start_lsn <= L. Silver: the newest version whose merge commit
 *  records a position C <= L (userMetadata silver_apply.applied_lsn), with bronze's
 *  changes in (C, L] applied over it, latest per key (rule S1), deletes removed.
 *  Silver with soft deletes: every key changed between the version's position and L gets
 *  the row the apply would give it from all its bronze changes up to L (a key deleted by L
 *  kept, _deleted true, _deleted_lsn/_deleted_ts of its delete, its last values).
 *  An scd2 silver table (mcdc_silver_mode) holds every version: its rows valid at L
 *  (_valid_from_lsn <= L < _valid_to_lsn, or current), once its newest commit covers L.
 *  @p columns (NULL: all of the table's, in its order) are the output columns.
 *  Rows come in no particular order (silver's rows of that version, then the images).
 *  @return 0; MCDC_EINVAL, naming why and how to go on, when the read cannot be exact:
 *          L beyond bronze's newest batch end, a time with no bronze change at or after
 *          it, silver without a recorded version at or before L, a snapshot in (C, L], an
 *          L inside a re-snapshot's gap (bronze read nothing there; ADR 0040), a
 *          table that is neither bronze nor silver, silver without @p at->bronze_path;
 *          codes of the Delta layer (a vacuumed version: MCDC_ENOTFOUND). */
int mcdc_silver_as_of_open(mcdc_silver_as_of_reader **out, const char *path, const mcdc_silver_as_of *at,
                    const char *const *columns, size_t n_columns);
/** The output columns (borrowed from the reader). */
const mcdc_schema *mcdc_silver_as_of_schema(const mcdc_silver_as_of_reader *r);
/** Whether output column @p i is nested (its cells hold JSON text). */
bool mcdc_silver_as_of_is_nested(const mcdc_silver_as_of_reader *r, size_t i);
/** The position read and what the state starts from. */
const mcdc_silver_as_of_result *mcdc_silver_as_of_get_result(const mcdc_silver_as_of_reader *r);
/** The next row (borrowed until the next call). @return 1; 0 at the end; codes of the
 *  Delta layer. */
int mcdc_silver_as_of_next(mcdc_silver_as_of_reader *r, const mcdc_value **row);
/** Free a reader; accepts NULL. */
void mcdc_silver_as_of_free(mcdc_silver_as_of_reader *r);
/** The bronze table name silver's newest merge commit records (as given to silver apply).
 *  @param[out] out  NULL when none is recorded; free with free().
 *  @return 0; codes of the Delta layer. */
int mcdc_silver_as_of_bronze_name(char **out, const char *silver_path);


/* ------------------------------------------------------------------------------------ */
/* Following a stream (follow.c)                                                        */

/** Applies silver after a stream's batches, on a worker thread of its own. */
typedef struct mcdc_silver_follower mcdc_silver_follower;

/** Start the worker (it waits for a notify). @p opts is copied, strings included.
 *  @param[out] out  free with mcdc_silver_follower_free().
 *  @return 0; MCDC_EINVAL as mcdc_silver_apply; MCDC_ENOMEM; MCDC_ERROR when the thread
 *          cannot start. */
int mcdc_silver_follower_start(mcdc_silver_follower **out, const mcdc_silver_apply_options *opts);

/** Let the follower's applies take rows of capture instance @p ci too (a newer instance
 *  the stream switched to while running: a capture_instance_switched batch): from the next
 *  apply on; one already listed changes nothing. Called from the stream's listener: takes
 *  the follower's lock only briefly, never waits for an apply.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_silver_follower_add_instance(mcdc_silver_follower *f, const char *ci);
/** A batch of bronze is committed: apply soon. Never blocks on I/O (a flag and a signal);
 *  batches that land during an apply are taken by the next one. Thread-safe. */
void mcdc_silver_follower_notify(mcdc_silver_follower *f);

/** Stop the worker after the applies pending (and one more with @p apply_once_more),
 *  and report the last apply.
 *  @param[out] last       its result; may be NULL.
 *  @param[out] n_applies  how many applies ran; may be NULL.
 *  @return 0 when the last apply succeeded (or none ran); else its code, with its error
 *          recorded on the calling thread. */
int mcdc_silver_follower_finish(mcdc_silver_follower *f, bool apply_once_more,
                                mcdc_silver_apply_result *last, uint64_t *n_applies);

/** Stop (dropping a pending apply) and free; accepts NULL. */
void mcdc_silver_follower_free(mcdc_silver_follower *f);

#ifdef __cplusplus
}
#endif
#endif
