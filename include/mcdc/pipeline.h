/*
 * mcdc/pipeline.h: the stream: micro-batches from a CDC source into a bronze Delta table
 * and a facts table, exactly once, with a checkpoint directory of its own.
 *
 * Overview. A stream reads one capture instance in batches. Batch N covers the changes
 * with start < __$start_lsn <= end, where end is a commit LSN at or below max_lsn, so every
 * batch is a prefix of the commit history and ends on a commit boundary. The range is
 * recorded in <checkpoint>/offsets/N before anything is read, the rows go straight into
 * one bronze data file as they are read, bronze is committed with Delta txn{app_id, N},
 * the facts row with txn{app_id#facts, N}, and <checkpoint>/commits/N closes the batch.
 * A crash anywhere replays exactly the recorded range; Delta's txn makes the replay write
 * nothing twice. Design: docs/architecture.md §3 (invariants 1, 2, 5, 6, 8) and §5.
 *
 * Checkpoint directory (one per stream):
 *
 *   <checkpoint>/metadata     {"version":1,"id":UUID,"app_id":..,"capture_instance":..,
 *                              "target":..,"created_at":"YYYY-MM-DDTHH:MM:SS.mmm"}
 *   <checkpoint>/offsets/<N>  {"batch_id":N,"start":OFFSET,"end":OFFSET,"planned_at":..}
 *                             (+ "skipped":{"from":LSN,"to":LSN} when failOnDataLoss=false
 *                             skipped purged changes in this batch)
 *   <checkpoint>/commits/<N>  {"batch_id":N,"bronze_version":V|null,
 *                              "facts_version":V|null,"committed_at":..}
 *   <checkpoint>/lock         flock held while a stream runs; holds the holder's pid
 *   <checkpoint>/lease        on object storage, instead of the lock: {"owner":..,"host":..,
 *                             "pid":..,"expires_at":..,...}, renewed while a stream runs
 *   <checkpoint>/adopted      `stream --adopt` only: {"first_batch":K,"after":OFFSET,
 *                              "from_owner":..,"adopted_at":..}, written before batch K
 *
 *   OFFSET = {"lsn":"0x" + 20 uppercase hex,"commit_ts":"YYYY-MM-DDTHH:MM:SS.mmm"} in UTC,
 *   commit_ts "" when unknown (a start before the first commit the source still maps).
 *   Every file is written to a temp name, fsynced, linked in without replace and the
 *   directory fsynced. Formats only ever gain keys; readers ignore keys they do not know.
 *
 * Caveats:
 * - One writer per checkpoint: mcdc_checkpoint_open takes the lock and a second opener
 *   fails at once with MCDC_ELOCKED ("already locked by pid N"). The lock dies with the
 *   process that holds it. On object storage (s3://) the lock is a lease object renewed
 *   by a thread while the checkpoint is open (mcdc_checkpoint_open_leased): a live lease
 *   of another stream is MCDC_ECONFLICT, a killed stream's is waited for until it expires.
 *   The lease is no fence: batch files and Delta commits are created only if absent.
 * - A checkpoint belongs to one app_id, capture instance and target; reusing it with
 *   another is refused. A new checkpoint needs a new app_id (Delta's txn would otherwise
 *   skip its batches): the stream refuses to run when bronze already holds batches of
 *   the app_id that the checkpoint has not recorded.
 * - A table knows its owner: every table records its kind in its configuration
 *   (mcdc.kind: bronze, facts, control, silver, reconcile); bronze also its source table
 *   (mcdc.source_table) and its owner (mcdc.owner, the stream family: the app id without
 *   a re-snapshot generation suffix ".g<n>"). A stream refuses a target of another kind,
 *   source table or owner before it writes anything; `--adopt` moves the owner.
 * - Nothing here is thread-safe; a stream runs on one thread (listeners run on it too).
 */
#ifndef MCDC_PIPELINE_H
#define MCDC_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "mcdc/lsn.h"
#include "mcdc/offset.h"
#include "mcdc/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* Offsets                                                                               */

/** Append @p o as {"lsn":"0x…","commit_ts":"…mmm"} (commit_ts "" when unknown) to the
 *  NUL-terminated text in @p out of @p cap bytes (at least MCDC_OFFSET_JSON_MAX). Returns
 *  out. (The same text as mcdc_offset_format_json, for callers with their own buffer.) */
char *mcdc_offset_to_json(char *out, size_t cap, const mcdc_offset *o);

/* ------------------------------------------------------------------------------------ */
/* Checkpoint directory                                                                  */

typedef struct mcdc_checkpoint mcdc_checkpoint;

/** What <checkpoint>/metadata records. Strings owned by the checkpoint. */
typedef struct mcdc_checkpoint_meta {
    const char *id;               /* stream id (UUID), stable across runs */
    const char *app_id;           /* the Delta txn appId of bronze */
    const char *capture_instance; /* as given when the checkpoint was created */
    const char *target;           /* bronze table name or path, as given */
    int64_t     created_at_us;    /* UTC */
} mcdc_checkpoint_meta;

/** The recorded range of one batch (offsets/N). */
typedef struct mcdc_batch_range {
    int64_t     batch_id;    /* N >= 0 */
    mcdc_offset start;       /* exclusive: the last offset processed before the batch */
    mcdc_offset end;         /* inclusive: a commit LSN at or below max_lsn */
    bool        has_skip;    /* failOnDataLoss=false: purged changes skipped */
    mcdc_lsn    skip_from;   /* first LSN not read (increment of the previous end) */
    mcdc_lsn    skip_to;     /* min_lsn the batch resumed at */
    int64_t     planned_at_us; /* host clock when the range was recorded */
} mcdc_batch_range;

/** A finished batch (commits/N). */
typedef struct mcdc_batch_commit {
    int64_t batch_id;       /* N */
    int64_t bronze_version; /* bronze's Delta version holding N, -1 when none or unknown */
    int64_t facts_version;  /* facts' Delta version holding N's row, -1 when none/unknown */
    int64_t committed_at_us;/* host clock */
} mcdc_batch_commit;

/** Open (creating when missing) the checkpoint directory @p dir for a stream and lock it.
 *  A new directory gets its metadata; an existing one must have been created for the
 *  same @p app_id, @p capture_instance (ignoring case) and @p target.
 *  The offsets and commits present are checked: (C3) their numbers must be contiguous and
 *  commits may trail offsets by at most one batch.
 *  @param[out] out  the checkpoint, NULL on failure; close with mcdc_checkpoint_close().
 *  @return 0; MCDC_ELOCKED when another process holds it ("already locked by pid N");
 *          MCDC_EINVAL when the metadata names another app_id, capture instance or
 *          target; MCDC_ECORRUPT for an unreadable file, a hole in the numbering, or
 *          offsets or commits without metadata (C5: nothing is written); MCDC_EIO. */
int mcdc_checkpoint_open(mcdc_checkpoint **out, const char *dir, const char *app_id,
                         const char *capture_instance, const char *target);

/** The lease of a checkpoint on object storage when none is given (`--lease`): 30 s. */
#define MCDC_CHECKPOINT_LEASE_DEFAULT_US (30 * 1000000LL)
/** The shortest lease (it is renewed every third of its duration). */
#define MCDC_CHECKPOINT_LEASE_MIN_US 1000000LL
/** No lease at all (`--lease off`): nothing keeps a second stream off the checkpoint;
 *  exactly-once still holds (create-if-absent offsets/N, commits/N and Delta commits). */
#define MCDC_CHECKPOINT_LEASE_OFF 0

/** A lease's duration as written (`--lease`, a run config's `lease:`): "off"
 *  (MCDC_CHECKPOINT_LEASE_OFF) or a duration of at least MCDC_CHECKPOINT_LEASE_MIN_US.
 *  @p subject names the value in the message of a too short one ("SUBJECT is too short").
 *  @return 0; MCDC_EINVAL (with a hint) for a value that is neither. */
int mcdc_checkpoint_lease_parse(int64_t *lease_us, const char *text, const char *subject);

/** mcdc_checkpoint_open() with the lease of a checkpoint on object storage (s3://) lasting
 *  @p lease_us (at least MCDC_CHECKPOINT_LEASE_MIN_US, or MCDC_CHECKPOINT_LEASE_OFF). There
 *  the one-writer rule is a lease object, <checkpoint>/lease, in place of the flock:
 *  created if absent with an owner id and expiry, renewed every third of @p lease_us by a
 *  thread until close, taken over once expired. A stream of this host that died holding it
 *  is waited for until it expires (logged with the seconds left). A local directory keeps
 *  its flock and ignores @p lease_us.
 *  @return as mcdc_checkpoint_open(); MCDC_ECONFLICT when another stream holds a live lease
 *          (the message names its owner and the seconds until it expires). */
int mcdc_checkpoint_open_leased(mcdc_checkpoint **out, const char *dir, const char *app_id,
                                const char *capture_instance, const char *target,
                                int64_t lease_us);

/** Release the lock and free; accepts NULL. */
void mcdc_checkpoint_close(mcdc_checkpoint *ck);

/** The metadata; borrowed, lives as long as @p ck. */
const mcdc_checkpoint_meta *mcdc_checkpoint_meta_get(const mcdc_checkpoint *ck);

/** The newest recorded range (offsets/N with the largest N).
 *  @return 0; MCDC_ENOTFOUND when no batch was ever planned. */
int mcdc_checkpoint_last_range(const mcdc_checkpoint *ck, mcdc_batch_range *out);

/** The newest finished batch (commits/N with the largest N).
 *  @return 0; MCDC_ENOTFOUND when none finished yet. */
int mcdc_checkpoint_last_commit(const mcdc_checkpoint *ck, mcdc_batch_commit *out);

/** Batch @p n's recorded range (offsets/N) and, when @p commit is not NULL, its commit
 *  (commits/N).
 *  @return 0; MCDC_ENOTFOUND when the checkpoint does not keep it (never planned or
 *          finished, or pruned); MCDC_ECORRUPT, MCDC_EIO reading it. */
int mcdc_checkpoint_batch(const mcdc_checkpoint *ck, int64_t n, mcdc_batch_range *range,
                          mcdc_batch_commit *commit);

/** The newest finished batch whose commits/N recorded a bronze version (a batch without
 *  rows has no bronze commit), among the batches the checkpoint keeps.
 *  @return 0; MCDC_ENOTFOUND when none did; MCDC_ECORRUPT, MCDC_EIO reading one. */
int mcdc_checkpoint_last_bronze_commit(const mcdc_checkpoint *ck, mcdc_batch_commit *out);

/** Record batch @p r->batch_id's range durably (C1): it must be the batch after the last
 *  finished one, with no range recorded for it yet (C3).
 *  @return 0; MCDC_EINVAL for a batch id out of sequence; MCDC_EEXISTS when offsets/N is
 *          already there; MCDC_EIO. */
int mcdc_checkpoint_record_range(mcdc_checkpoint *ck, const mcdc_batch_range *r);

/** A range being recorded while the batch is read (mcdc_checkpoint_record_range_begin). */
typedef struct mcdc_checkpoint_pending mcdc_checkpoint_pending;

/** Record @p r as mcdc_checkpoint_record_range does, its durable write (temp file, fsync,
 *  rename without replace, directory fsync) on a thread of its own, so that reading the
 *  batch overlaps it. The checks (sequence, lease) are made here, before anything is
 *  written; the checkpoint itself changes only in mcdc_checkpoint_record_range_end, which
 *  must come before anything of batch N is committed (C1) and before any other call on
 *  @p ck that writes. @return 0 with *out; the errors of the checks (then *out is NULL). */
int mcdc_checkpoint_record_range_begin(mcdc_checkpoint *ck, const mcdc_batch_range *r,
                                       mcdc_checkpoint_pending **out);

/** Wait for the write mcdc_checkpoint_record_range_begin started, then record the range;
 *  frees @p p (NULL: nothing to wait for, returns 0). @return what
 *  mcdc_checkpoint_record_range would have: 0; MCDC_ECONFLICT when another stream took
 *  the batch meanwhile (offsets/N exists); MCDC_EIO. */
int mcdc_checkpoint_record_range_end(mcdc_checkpoint *ck, mcdc_checkpoint_pending *p);

/** What <checkpoint>/adopted records (`stream --adopt`, C6). */
typedef struct mcdc_checkpoint_adoption {
    int64_t     first_batch;   /* the checkpoint's first batch number */
    mcdc_offset after;         /* where its first batch starts: the end of the last batch
                                * the previous owner committed */
    const char *from_owner;    /* the owner the table was taken from ("" when it had none
                                * recorded); owned by the checkpoint */
    int64_t     adopted_at_us; /* host clock, UTC */
} mcdc_checkpoint_adoption;

/** The checkpoint's adoption. @return 0; MCDC_ENOTFOUND when it adopted nothing. */
int mcdc_checkpoint_adoption_get(const mcdc_checkpoint *ck, mcdc_checkpoint_adoption *out);

/** Record durably that this checkpoint adopted a table: its batches start at
 *  @p first_batch after @p after. Only on a checkpoint without batches, once.
 *  @return 0; MCDC_EINVAL when it has batches or an adoption; MCDC_EIO. */
int mcdc_checkpoint_record_adoption(mcdc_checkpoint *ck, int64_t first_batch,
                                    const mcdc_offset *after, const char *from_owner);

/** Look at a checkpoint directory without locking or changing it: whether it has its
 *  metadata (*exists) and any offsets/N or commits/N (*has_batches). A missing directory
 *  is neither.
 *  @return 0; MCDC_EUNSUPPORTED for a URI (object storage is not supported yet); MCDC_EIO. */
int mcdc_checkpoint_peek(const char *dir, bool *exists, bool *has_batches);

/** The last committed end offset of a stream's checkpoint (of its newest re-snapshot
 *  generation): the end of offsets/<N> for the largest N in commits/ (architecture §5).
 *  An offsets/<N> without commits/<N> is a batch that will be replayed, not a processed
 *  one, and is never used. Reads only and takes no lock, so it runs beside the stream
 *  (the finalization job, a tracker's seed, `run --status`).
 *  @param[out] batch_id  N; may be NULL.
 *  @return 0; MCDC_ENOTFOUND when the directory does not exist or no batch finished yet;
 *          MCDC_ECORRUPT naming the file for an unreadable or malformed offsets/<N> (or
 *          a missing one for a finished batch); MCDC_EIO. */
int mcdc_checkpoint_read_last(mcdc_offset *out, int64_t *batch_id, const char *dir);

/** Check that the checkpoint at @p dir belongs to the stream of @p table (the target its
 *  metadata records, compared as given), so a verdict is never advanced for a table from
 *  another table's checkpoint. Reads only.
 *  @return 0; MCDC_EINVAL naming the checkpoint's target; MCDC_ENOTFOUND when there is
 *          no such directory; MCDC_ECORRUPT when its metadata is missing or malformed. */
int mcdc_checkpoint_check_target(const char *dir, const char *table);

/** Record batch @p c->batch_id as finished (C2): call only after its bronze and facts
 *  commits. It must be the newest recorded range, not yet finished.
 *  @return 0; MCDC_EINVAL out of sequence; MCDC_EEXISTS; MCDC_EIO. */
int mcdc_checkpoint_record_commit(mcdc_checkpoint *ck, const mcdc_batch_commit *c);

/* ------------------------------------------------------------------------------------ */
/* Facts of a batch, bronze and facts table schemas                                      */

/** Facts of one batch, counted from the rows as they are written (invariant 5), or read
 *  back from bronze commit N's userMetadata on a replay. */
typedef struct mcdc_batch_facts {
    int64_t  rows;             /* change rows written, all operations */
    int64_t  deletes;          /* operation 1 */
    int64_t  inserts;          /* operation 2 */
    int64_t  updates;          /* operation 4 (the after-images; 3 is not counted) */
    mcdc_lsn min_lsn, max_lsn; /* smallest and largest _start_lsn; valid when rows > 0 */
    int64_t  min_commit_ts_us; /* UTC; valid when rows > 0 */
    int64_t  max_commit_ts_us;
    bool     counts_known;     /* false: read back from a commit that carried no counts */
} mcdc_batch_facts;

#define MCDC_BATCH_FACTS_INIT { 0, 0, 0, 0, { { 0 } }, { { 0 } }, 0, 0, true }

/** Count one change row. */
void mcdc_batch_facts_add(mcdc_batch_facts *f, const mcdc_lsn *start_lsn, int operation,
                          int64_t commit_ts_us);

/** Append the bronze commit userMetadata of a batch: compact JSON with the keys rows,
 *  min_lsn, max_lsn, min_commit_ts, max_commit_ts, deletes, inserts, updates, batch_id,
 *  app_id (LSNs and times null when rows = 0; times with milliseconds), then, when
 *  @p range is not NULL, start_lsn and end_lsn: the batch's range (after, upto], LSN text
 *  as in offsets/N ("0x" + 20 uppercase hex).
 *  @return 0; MCDC_ENOMEM past the buffer's cap. */
int mcdc_batch_facts_to_json(mcdc_buf *out, const mcdc_batch_facts *f, int64_t batch_id,
                             const char *app_id, const mcdc_batch_range *range);

/** The range (start_lsn, end_lsn) recorded in a batch's bronze commit userMetadata.
 *  @return 0; MCDC_ENOTFOUND when it has neither key (a commit written before batches
 *          recorded their range); MCDC_ECORRUPT when it is not a JSON object or a key is
 *          missing or not an LSN. */
int mcdc_batch_meta_range(const char *json, mcdc_lsn *start, mcdc_lsn *end);

/** Parse such userMetadata. Counts that are null give counts_known = false.
 *  @param[out] batch_id  the batch_id key (-1 when absent or null).
 *  @param[out] app_id    when not NULL, a malloc'd copy of the app_id key (NULL if absent).
 *  @return 0; MCDC_ECORRUPT when it is not such an object. */
int mcdc_batch_facts_parse_json(mcdc_batch_facts *out, int64_t *batch_id, char **app_id,
                                const char *json);

/** Columns of the facts table, in table order (anchor-features §2.5). */
enum {
    MCDC_FACTS_APP_ID = 0, MCDC_FACTS_BATCH_ID, MCDC_FACTS_ROWS, MCDC_FACTS_MIN_LSN,
    MCDC_FACTS_MAX_LSN, MCDC_FACTS_MIN_COMMIT_TS, MCDC_FACTS_MAX_COMMIT_TS,
    MCDC_FACTS_DELETES, MCDC_FACTS_INSERTS, MCDC_FACTS_UPDATES, MCDC_FACTS_STARTED_AT,
    MCDC_FACTS_DURATION_MS, MCDC_FACTS_SOURCE_RTT_MS, MCDC_FACTS_READ_SECONDS,
    MCDC_FACTS_READ_MB, MCDC_FACTS_NETWORK_WAIT_MS, MCDC_FACTS_RETENTION_WATERMARK_TS,
    MCDC_FACTS_RETENTION_HEADROOM_HOURS, MCDC_FACTS_EVENT, MCDC_FACTS_LOST_FROM_TS,
    MCDC_FACTS_LOST_TO_TS, MCDC_FACTS_SOURCE_MAX_COMMIT_TS, MCDC_FACTS_CAPTURE_LAG_SECONDS,
    MCDC_FACTS_INGESTION_LAG_SECONDS, MCDC_FACTS_END_LSN, MCDC_FACTS_END_COMMIT_TS,
    MCDC_FACTS_DETAIL, MCDC_FACTS_TARGET, MCDC_FACTS_WRITTEN_AT,
    MCDC_FACTS_N_COLUMNS /* 29 */
};

/** The facts table's schema: the 29 columns of anchor-features §2.5, same names and
 *  types (times timestamp_ntz in UTC). @param[out] out free with mcdc_schema_free().
 *  @return 0; MCDC_ENOMEM. */
int mcdc_facts_schema(mcdc_schema **out);

/** Bronze's schema for the captured columns @p captured: _capture_instance, _start_lsn,
 *  _seqval, _operation, [_command_id,] _commit_ts, the captured columns, _batch_id,
 *  _snapshot, _chunk (anchor-features §2.3; LSNs as "0x…" strings, _commit_ts
 *  timestamp_ntz in UTC).
 *  @return 0; MCDC_EINVAL when a captured column is named like a metadata column;
 *          MCDC_ENOMEM. */
int mcdc_bronze_schema(mcdc_schema **out, const mcdc_schema *captured, bool include_command_id);

/* ------------------------------------------------------------------------------------ */
/* Table kinds and owners                                                                */

struct mcdc_delta_snapshot;

/** The kind of the table of @p snap: its configuration's mcdc.kind, else what its columns
 *  say for a table written before kinds were recorded ("bronze", "facts", "control",
 *  "silver"), else NULL (not a table of ours). @p recorded (may be NULL) tells whether
 *  the kind was recorded. Borrowed from the snapshot or static. */
const char *mcdc_table_kind(const struct mcdc_delta_snapshot *snap, bool *recorded);

/** Refuse to write the table at @p path as a @p want table when it exists and is of
 *  another kind. Reads only. @p flag names the option that gave it ("--facts").
 *  @return 0 (also when the table does not exist); MCDC_EINVAL naming both kinds and
 *          how to go on; snapshot codes. */
int mcdc_table_check_kind(const char *path, const char *name, const char *want,
                          const char *flag);

/* ------------------------------------------------------------------------------------ */
/* The source a bronze table holds (docs/decisions/0039-source-identity.md)              */

struct mcdc_source_identity;

/** The source identity @p snap's configuration records (mcdc.source.server,
 *  mcdc.source.database, mcdc.source.database_guid) into @p out; *recorded false (and
 *  @p out empty) for a table written before identities were recorded. */
void mcdc_bronze_source_identity(const struct mcdc_delta_snapshot *snap,
                                 struct mcdc_source_identity *out, bool *recorded);

/** Whether @p a and @p b are one database: when both know the database GUID, equal GUIDs
 *  (a renamed database keeps its GUID); otherwise equal server and database names (SQL
 *  Server compares names case-insensitively). */
bool mcdc_source_identity_same(const struct mcdc_source_identity *a,
                               const struct mcdc_source_identity *b);

/** "server SRV, database DB (database_guid G)" into @p out (the GUID part only when
 *  known), for messages. @return out. */
char *mcdc_source_identity_text(char *out, size_t cap, const struct mcdc_source_identity *id);

/** The stream family of @p app_id into @p out: the app id up to a '#' (facts, snapshot
 *  and event keys), without a trailing ".g<digits>" (a re-snapshot generation). This is
 *  the owner a bronze table records. @return 0; MCDC_EINVAL when it does not fit. */
int mcdc_stream_family(char *out, size_t cap, const char *app_id);

/* ------------------------------------------------------------------------------------ */
/* Re-snapshot generations (pipeline/generation.c)                                       */

/** A stream's generation, as its checkpoint's `generation` file records it. Generation 0
 *  (no file) is the checkpoint and app id as given; generation n > 0, started by a
 *  re-snapshot after data loss, lives in `<checkpoint>/_generations/<n>` with app id
 *  `<app_id>.g<n>`. */
typedef struct mcdc_generation {
    int64_t  n;               /* 0: no re-snapshot yet */
    bool     has_started_at;
    int64_t  started_at_us;   /* the source's clock when generation n was started */
    bool     has_lost_from;
    int64_t  lost_from_us;    /* commit time of the last offset read before the gap */
    bool     has_lost_to;
    int64_t  lost_to_us;      /* commit time of min_lsn when the loss was found */
    mcdc_lsn lost_after;      /* the last LSN read before the gap */
    mcdc_lsn lost_min;        /* min_lsn when the loss was found */
} mcdc_generation;

/** Read the generation file of the checkpoint directory @p checkpoint (the one given to
 *  the stream). A missing file (or directory) is generation 0. Reads only.
 *  @return 0; MCDC_ECORRUPT for a file that is not a generation record; MCDC_EIO. */
int mcdc_generation_read(mcdc_generation *out, const char *checkpoint);

/** Check a checkpoint location before anything reads it: a local directory, or s3://
 *  (its configuration and the bucket's conditional PUTs checked, mcdc_storage_check());
 *  another URI scheme is refused.
 *  @return 0; MCDC_EUNSUPPORTED naming another scheme (password masked); MCDC_EINVAL for
 *  a bad s3:// location, missing credentials or a store that ignores If-None-Match; MCDC_EIO. */
int mcdc_checkpoint_check_location(const char *dir);
/** Record @p g as the checkpoint's generation (atomic and durable: a temp file, fsync,
 *  rename, directory fsync). @return 0; MCDC_EIO; MCDC_EINVAL for a path too long. */
int mcdc_generation_write(const char *checkpoint, const mcdc_generation *g);
/** The checkpoint directory of generation @p n of @p checkpoint into @p out (the
 *  directory itself for 0). @return 0; MCDC_EINVAL when it does not fit. */
int mcdc_generation_checkpoint(char *out, size_t cap, const char *checkpoint, int64_t n);
/** The app id of generation @p n of @p app_id into @p out (@p app_id itself for 0,
 *  else "<app_id>.g<n>"; an app id that already ends in ".g<k>" counts on: ".g<k+n>",
 *  so the stream family stays the same). @return 0; MCDC_EINVAL when it does not fit. */
int mcdc_generation_app_id(char *out, size_t cap, const char *app_id, int64_t n);

/* ------------------------------------------------------------------------------------ */
/* The stream engine                                                                     */

typedef struct mcdc_source mcdc_source;

/** When a stream stops. */
typedef enum {
    MCDC_TRIGGER_AVAILABLE_NOW = 1, /* read up to the max_lsn seen at start, in batches */
    MCDC_TRIGGER_ONCE,              /* one batch (honouring the batch limit), then stop */
    MCDC_TRIGGER_INTERVAL           /* a batch every interval until stopped */
} mcdc_trigger;

/** Where a new checkpoint starts (ignored once the checkpoint has offsets). */
typedef enum {
    MCDC_START_EARLIEST = 1, /* after = decrement(min_lsn): everything CDC still holds */
    MCDC_START_LATEST,       /* after = max_lsn at start: only what comes next */
    MCDC_START_LSN           /* after = the given LSN, taken as already processed */
} mcdc_start_kind;

/** Parse "available-now", "once" or "interval:DURATION".
 *  @return 0; MCDC_EINVAL naming the value and the choices. */
int mcdc_trigger_parse(mcdc_trigger *out, int64_t *interval_us, const char *s);
/** Parse "earliest", "latest" or an LSN ("0x" optional, up to 20 hex digits).
 *  @return 0; MCDC_EINVAL. */
int mcdc_start_parse(mcdc_start_kind *out, mcdc_lsn *lsn, const char *s);

/** What a progress event reports. */
typedef enum {
    MCDC_PROGRESS_START = 1,  /* the run holds its checkpoint; nothing read yet */
    MCDC_PROGRESS_BATCH,      /* batch committed: data, facts and commits/N */
    MCDC_PROGRESS_IDLE,       /* nothing new (about every idle_event_interval_us) */
    MCDC_PROGRESS_TERMINATED  /* the run ended (rc tells how) */
} mcdc_progress_kind;

/** A progress event, modelled on Spark's StreamingQueryProgress. Borrowed: valid during
 *  the listener call only. */
typedef struct mcdc_stream_progress {
    mcdc_progress_kind kind;
    const char *id;          /* stream id (the checkpoint's), stable across runs */
    const char *run_id;      /* this run */
    int64_t     batch_id;    /* the batch (BATCH), the next one (IDLE), -1 otherwise */
    int64_t     num_input_rows;  /* rows of the batch; 0 for other kinds */
    bool        replayed;    /* BATCH: a replay of a batch recorded by an earlier run */
    bool        has_end;     /* start/end are valid: a batch, or (START, IDLE, TERMINATED)
                                the last committed offset when there is one */
    mcdc_offset start;       /* exclusive */
    mcdc_offset end;         /* inclusive: the offset committed */
    bool        has_latest;
    mcdc_offset latest;      /* max_lsn seen while planning */
    int64_t     duration_ms; /* the trigger's duration */
    int         rc;          /* TERMINATED: the run's result code (0 or negative) */
    const char *json;        /* BATCH and IDLE: the event as one line of JSON */
    double      read_bytes;  /* BATCH: bytes read from the source (facts read_mb x 1e6);
                                0 for a replay bronze already held */
    bool        has_headroom;
    double      headroom_hours; /* BATCH: facts retention_headroom_hours */
    const char *capture_instance; /* BATCH: the capture instance the batch read (a newer
                                     one than configured after a switch); NULL otherwise */
} mcdc_stream_progress;

/** A listener. Runs on the stream's thread: it must not block (hand work to another
 *  thread) and must not call back into the stream. */
typedef void (*mcdc_stream_listener_fn)(const mcdc_stream_progress *p, void *payload);

/** Options of a stream. Start from MCDC_STREAM_OPTIONS_INIT. Strings are borrowed and
 *  must outlive mcdc_stream_run(). */
typedef struct mcdc_stream_options {
    int          version;            /* 1 */
    mcdc_source *source;             /* borrowed, open */
    const char  *capture_instance;   /* required */
    const char  *target;             /* bronze name as given (facts' target column) */
    const char  *target_path;        /* bronze table directory */
    const char  *facts;              /* facts table name as given, or NULL */
    const char  *facts_path;         /* its directory, or NULL */
    const char  *app_id;             /* required: Delta txn appId of bronze */
    const char  *checkpoint;         /* required: checkpoint directory */
    const char  *run_id;             /* NULL: a new UUID */
    mcdc_trigger trigger;            /* default available-now */
    int64_t      interval_us;        /* MCDC_TRIGGER_INTERVAL: time between batch starts */
    int64_t      max_commits_per_batch; /* 0: unlimited */
    mcdc_start_kind starting;        /* default earliest */
    mcdc_lsn     starting_lsn;       /* MCDC_START_LSN */
    bool         starting_given;     /* a starting point was given (refused with bootstrap) */
    bool         bootstrap;          /* snapshot the table first (once per target) */
    bool         fail_on_data_loss;  /* default true; false needs facts */
    bool         include_command_id; /* default true */
    const char  *progress_path;      /* append events as JSON lines, or NULL */
    int64_t      idle_event_interval_us; /* default 10 s */
    int64_t      poll_interval_us;   /* sleep granularity while waiting; default 100 ms */
    bool         adopt;              /* take over an existing bronze of another stream (or
                                      * of a lost checkpoint): needs a new or empty
                                      * checkpoint; resumes after the owner's last batch */
    int          bootstrap_mode;     /* with bootstrap: MCDC_BOOTSTRAP_FULL (one read) or
                                      * MCDC_BOOTSTRAP_CHUNKED (open a chunked snapshot for
                                      * `backfill`; needs facts); also the mode of a
                                      * re-snapshot (on_data_loss resnapshot) */
    int          on_data_loss;       /* MCDC_ON_DATA_LOSS_FAIL (default), _SKIP (as
                                      * fail_on_data_loss false) or _RESNAPSHOT (needs facts
                                      * and fail_on_data_loss true) */
    int64_t      resnapshot_interval_us; /* at most one automatic re-snapshot per this long,
                                      * on the source's clock; default 7 days, 0: no limit */
    int          schema_change;      /* MCDC_SCHEMA_CHANGE_CLASSIFY (default): go on through
                                      * DDL the stream can follow; _FAIL: stop at any DDL */
    int64_t      lease_us;           /* a checkpoint on object storage: its lease's duration
                                      * (default MCDC_CHECKPOINT_LEASE_DEFAULT_US;
                                      * MCDC_CHECKPOINT_LEASE_OFF: none) */
    bool         snapshot_on_switch; /* after following a newer capture instance, read the
                                      * table again in chunks (a partial backfill of every
                                      * key) so rows not changed since get its columns;
                                      * needs facts */
    /* The caller's read slots (`run --workers`: how many tables read their source at
     * once). NULL: none. The caller holds a slot when it calls mcdc_stream_run; the stream
     * gives it back with slot_release once a batch is read (before its file, commits and
     * verdict, which need only the disk), and asks for one with slot_acquire before it
     * reads the source again (the next plan, a snapshot). slot_acquire returns 0 with a
     * slot (at once when the slot is still held), or 1 when the caller is stopping: the run
     * then ends as after mcdc_stream_stop. Both may be called any number of times. */
    int        (*slot_acquire)(void *payload);
    void       (*slot_release)(void *payload);
    void        *slot_payload;
} mcdc_stream_options;

/** What a stream does on finding changes purged before it read them. */
enum { MCDC_ON_DATA_LOSS_FAIL = 0, MCDC_ON_DATA_LOSS_SKIP = 1, MCDC_ON_DATA_LOSS_RESNAPSHOT = 2 };
#define MCDC_RESNAPSHOT_INTERVAL_DEFAULT_US (7LL * 24 * 3600 * 1000000)

/** What a stream does at DDL on its source table (--schema-change). */
enum { MCDC_SCHEMA_CHANGE_CLASSIFY = 0, MCDC_SCHEMA_CHANGE_FAIL = 1 };

/** How --bootstrap takes its snapshot. */
enum { MCDC_BOOTSTRAP_FULL = 0, MCDC_BOOTSTRAP_CHUNKED = 1 };

#define MCDC_STREAM_OPTIONS_INIT                                                            \
    { 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, MCDC_TRIGGER_AVAILABLE_NOW, 0, 0, \
      MCDC_START_EARLIEST, { { 0 } }, false, false, true, true, NULL, 10000000, 100000, false, 0, \
      MCDC_ON_DATA_LOSS_FAIL, MCDC_RESNAPSHOT_INTERVAL_DEFAULT_US, MCDC_SCHEMA_CHANGE_CLASSIFY,   \
      MCDC_CHECKPOINT_LEASE_DEFAULT_US, false }

/** What a run did. */
typedef struct mcdc_stream_result {
    int64_t     n_batches;   /* batches committed by this run (replays included) */
    int64_t     n_rows;      /* change rows written by this run */
    int64_t     n_snapshot_rows; /* rows of a bootstrap snapshot taken by this run */
    bool        has_end;     /* end is valid */
    mcdc_offset end;         /* the last committed offset (this run's or an earlier one) */
    int64_t     last_batch_id; /* -1 when none ever */
    char        run_id[40];
    char        id[40];
} mcdc_stream_result;

typedef struct mcdc_stream mcdc_stream;

/** Prepare a stream (nothing is opened yet). @p opts is copied.
 *  @return 0; MCDC_EINVAL for missing or contradictory options (bootstrap with a
 *  starting point, failOnDataLoss=false without facts); MCDC_ENOMEM. */
int mcdc_stream_new(mcdc_stream **out, const mcdc_stream_options *opts);
/** Validate everything the stream needs before it writes anything, reading only: the
 *  capture instance at the source (an unknown one is refused with the list of those that
 *  exist), the target's kind, source table and owner, the facts table's kind, a new
 *  checkpoint against bronze's txn, and with --adopt where it would resume. Called by
 *  mcdc_stream_open when not called before.
 *  @return 0; MCDC_EINVAL (each refusal says what to do); MCDC_ENOTFOUND (--adopt of a
 *          bronze that does not exist); MCDC_EDATALOSS (--adopt: the changes after the
 *          owner's last batch are purged); MCDC_ESCHEMA; source and snapshot codes. */
int mcdc_stream_check(mcdc_stream *s);
/** mcdc_stream_check, then lock the checkpoint (creating it when new: the first write)
 *  and check it against the arguments and bronze. Called by mcdc_stream_run when not
 *  called before. The lock is held until mcdc_stream_run returns or mcdc_stream_free.
 *  @return 0; MCDC_ELOCKED; MCDC_EINVAL (a checkpoint of another stream, bronze holding
 *          batches it does not know); codes of mcdc_stream_check. */
int mcdc_stream_open(mcdc_stream *s);
/** Add a progress listener (at most 8). Call before mcdc_stream_run. */
int mcdc_stream_add_listener(mcdc_stream *s, mcdc_stream_listener_fn fn, void *payload);
/** Run the stream until its trigger says stop, mcdc_stream_stop() is called or an error
 *  (mcdc_stream_open first, when not called before).
 *  @return 0; MCDC_ELOCKED (checkpoint in use); MCDC_EINVAL (checkpoint of another
 *          stream, bronze holding batches the checkpoint does not know); MCDC_EDATALOSS
 *          (changes purged before they were read; message names the capture instance,
 *          the lost range and the ways out); MCDC_ESCHEMA; MCDC_ESOURCE; MCDC_EIO;
 *          MCDC_ECORRUPT. */
int mcdc_stream_run(mcdc_stream *s, mcdc_stream_result *result);
/** Keep the stream open across runs (@p keep true): after a successful mcdc_stream_run
 *  the checkpoint stays locked and what mcdc_stream_check, mcdc_stream_open and the writes
 *  before the first batch found or did stays valid, so the next mcdc_stream_run begins at
 *  planning, as the next trigger of one long-running stream would. What can change between
 *  runs is what can change between two batches of such a stream, and each batch checks it
 *  (the capture instance and its columns in the plan, another writer of bronze in the
 *  conditional commit). A failed run releases everything, as without it: the next run
 *  checks and opens again. */
void mcdc_stream_keep_open(mcdc_stream *s, bool keep);
/** Read from @p src from the next run on (another connection to the same source; between
 *  runs only). */
void mcdc_stream_set_source(mcdc_stream *s, mcdc_source *src);
/** Whether the stream is open between runs (kept open after a successful run). */
bool mcdc_stream_is_open(const mcdc_stream *s);
/** Release what a stream kept open holds (the checkpoint lock included); the next run
 *  checks and opens again. */
void mcdc_stream_close(mcdc_stream *s);
/** Ask the stream to stop after the current batch. Async-signal-safe. */
void mcdc_stream_stop(mcdc_stream *s);
/** Free; accepts NULL. */
void mcdc_stream_free(mcdc_stream *s);

#ifdef __cplusplus
}
#endif
#endif
