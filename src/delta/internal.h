/*
 * delta/internal.h: what the files of src/delta/ share and nobody else sees: the log
 * listing, reading commit files action by action, the replay state, and small file
 * helpers (read whole, create without replace, atomic replace, fsync of directories).
 */
#ifndef MCDC_DELTA_INTERNAL_H
#define MCDC_DELTA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mcdc/delta.h"

/* Caps on what we read from the log: hostile sizes never reach malloc. */
#define MCDC_DELTA_MAX_COMMIT_BYTES    ((size_t)512 << 20)
#define MCDC_DELTA_MAX_LASTCP_BYTES    ((size_t)1 << 20)

/* ---- log listing (log.c) ------------------------------------------------------------ */

typedef enum {
    CP_CLASSIC = 1, /* NNN.checkpoint.parquet (V1 or V2 content) */
    CP_MULTI,       /* NNN.checkpoint.PPPPPPPPPP.TTTTTTTTTT.parquet */
    CP_V2_UUID      /* NNN.checkpoint.<uuid>.json|parquet */
} mcdc_delta__cp_kind;

typedef struct mcdc_delta__cp_file {
    int64_t             version;
    mcdc_delta__cp_kind kind;
    int                 part, n_parts; /* multi-part: 1-based part, total; else 1, 1 */
    char               *name;          /* owned file name in _delta_log */
} mcdc_delta__cp_file;

/* A listing of _delta_log, sorted. */
typedef struct mcdc_delta__listing {
    int64_t             *commits;      /* versions of NNN.json, ascending */
    size_t               n_commits;
    mcdc_delta__cp_file *cps;          /* checkpoint files, ascending version then name */
    size_t               n_cps;
} mcdc_delta__listing;

/* List <table>/_delta_log. MCDC_ENOTFOUND when there is no _delta_log. */
int mcdc_delta__list(mcdc_delta__listing *out, const char *table);
void mcdc_delta__listing_free(mcdc_delta__listing *l);

/* A chosen checkpoint: the files that make it up (all parts). */
typedef struct mcdc_delta__cp_choice {
    int64_t version; /* -1 when none */
    const mcdc_delta__cp_file *files[1024]; /* borrowed from the listing */
    size_t  n_files;
} mcdc_delta__cp_choice;

/* The newest complete checkpoint at or below @p version (any of the files of a
 * multi-part checkpoint present; a V2 UUID checkpoint preferred over a classic one at the
 * same version). */
void mcdc_delta__choose_checkpoint(mcdc_delta__cp_choice *out, const mcdc_delta__listing *l,
                                   int64_t version);

/* The version in _last_checkpoint, or -1 when missing or unreadable (never an error). */
int64_t mcdc_delta__read_last_checkpoint(const char *table);

/* Name of version @p v's commit file: 20 digits + ".json". */
void mcdc_delta__commit_name(char out[32], int64_t v);

/* Callback for each action read. Return 0 to go on, non-zero to stop (passed back). */
typedef int (*mcdc_delta__action_cb)(mcdc_delta_action *a, void *payload);

/* Read a newline-delimited JSON file of actions (a commit or a V2 JSON checkpoint).
 * Errors name the file and line. Empty lines are skipped. */
int mcdc_delta__read_json_actions(const char *path, mcdc_delta__action_cb cb, void *payload);

/* The same for @p len bytes of such a file already in memory; @p name is the file's name
 * in messages. */
int mcdc_delta__parse_json_actions(const char *name, const char *data, size_t len,
                                   mcdc_delta__action_cb cb, void *payload);

/* Parse an already decoded JSON object into an action (actions.c). */
int mcdc_delta__action_from_json(mcdc_delta_action *out, json_t *root);

/* Read a checkpoint (all parts; for V2 also its sidecars) and hand each action to @p cb
 * (checkpoint_read.c). */
int mcdc_delta__read_checkpoint(const char *table, const mcdc_delta__cp_choice *cp,
                                 mcdc_delta__action_cb cb, void *payload);

/* Read a Parquet file of actions (a checkpoint part or a sidecar), one action per row
 * (checkpoint_parquet.c). */
int mcdc_delta__read_parquet_actions(const char *path, mcdc_delta__action_cb cb, void *payload);

/* The same, every row through the JSON action parser (the reference the columnar decode
 * is tested against). */
int mcdc_delta__read_parquet_actions_json(const char *path, mcdc_delta__action_cb cb,
                                          void *payload);

/* Decode the rows of @p r (its action columns selected, no row read yet) column by
 * column into actions (checkpoint_columns.c). @return 0; 1 when the file's layout is one
 * this decoder does not take (no row read: use the JSON way); <0 on error, the message
 * naming @p path and the row. */
struct mcdc_parquet_reader;
int mcdc_delta__read_parquet_columns(struct mcdc_parquet_reader *r, const char *path,
                                     mcdc_delta__action_cb cb, void *payload);

/* ---- stats (stats.c) --------------------------------------------------------------- */

/* May file @p f of @p snap hold a row matching @p pred? Conservative: false only when
 * the partition value or the stats prove it. PRED_NONE gives false, PRED_ALL true. */
bool mcdc_delta__may_match(const mcdc_delta_snapshot *snap, const mcdc_delta_file *f,
                           const mcdc_delta_pred *pred);

/* Restrict a scan (before its first row) to the files at these indexes of its snapshot. */
int mcdc_delta__scan_restrict(mcdc_delta_scan *s, const size_t *files, size_t n);

/* ---- deletion vectors (dv.c) -------------------------------------------------------- */

/* The deleted row indexes of a DV, ascending. @p out is malloc'd (caller frees). */
int mcdc_delta__dv_load(uint64_t **out, size_t *n_out, const char *table, const mcdc_delta_dv *dv);
/* The file of a 'u' or 'p' DV (caller frees), NULL for a bad or inline one. A 'p' path is
 * an absolute URI: its escapes are decoded and a file: scheme is dropped. */
char *mcdc_delta__dv_path(const char *table, const mcdc_delta_dv *dv);
/* Append the portable RoaringBitmapArray of @p rows (ascending, distinct) (dv_write.c). */
int mcdc_delta__dv_bitmap(mcdc_buf *b, const uint64_t *rows, size_t n);

/* The column mapping mode of a table: delta.columnMapping.mode of @p conf, only when
 * @p p supports column mapping (reader 2, or 3 with the feature); else NONE (snapshot.c). */
mcdc_delta_cm_mode mcdc_delta__cm_mode(const mcdc_delta_protocol *p, const mcdc_delta_map *conf);

/* @p uri with its %XX escapes decoded (a path in the log is a URI); caller frees; NULL
 * when out of memory (snapshot.c). */
char *mcdc_delta__uri_decode(const char *uri);

/* ---- checkpoints (checkpoint.c) ---------------------------------------------------- */

/* After committing @p version: write a checkpoint when it is a multiple of @p interval. */
int mcdc_delta__maybe_checkpoint(const char *path, int64_t version, int64_t interval,
                                 bool *written);

int mcdc_delta__checkpoint_write(const mcdc_delta_snapshot *s);

/* The pieces of a checkpoint's Parquet schema (mcdc_delta__cp_schema): txn, metaData,
 * protocol, domainMetadata; add, remove; checkpointMetadata, sidecar (V2). */
#define MCDC_DELTA__CP_NONFILE 1u
#define MCDC_DELTA__CP_FILES   2u
#define MCDC_DELTA__CP_V2      4u
struct mcdc_parquet_node;
struct mcdc_parquet_writer;
struct mcdc_parquet_node *mcdc_delta__cp_schema(unsigned parts);
/* One checkpoint row: an action (by its JSON), or a live file / tombstone; counts it. */
int mcdc_delta__cp_write_action(struct mcdc_parquet_writer *pw, const mcdc_delta_action *a,
                                int64_t *n_rows);
int mcdc_delta__cp_write_file(struct mcdc_parquet_writer *pw, const mcdc_delta_file *f,
                              bool add, int64_t *n_rows);
/* Tombstones deleted before this time (ms) are expired: no checkpoint keeps them. */
int64_t mcdc_delta__cp_tombstone_cutoff(const mcdc_delta_snapshot *s);
/* The V2 checkpoint of @p s (checkpoint_v2.c): the table has the v2Checkpoint feature. */
int mcdc_delta__cp_write_v2(const mcdc_delta_snapshot *s);
/* Log cleanup of a V2 table (checkpoint_v2.c): delete the sidecars in _delta_log/_sidecars/
 * that no checkpoint of @p l at or above @p keep_from names, modified before @p cutoff_ms
 * and more than an hour ago. Best effort (errors cleared); the count deleted. */
size_t mcdc_delta__cleanup_sidecars(const mcdc_delta_snapshot *s, const mcdc_delta__listing *l,
                                    int64_t keep_from, int64_t cutoff_ms);
/* After committing @p version of @p path: when a checkpoint is due (a multiple of
 * @p interval at or below @p version has none, per _last_checkpoint) ask the background
 * writer for one; never waits for it (checkpoint_bg.c). True when asked. */
bool mcdc_delta__checkpoint_request(const char *path, int64_t version, int64_t interval);
/* Ask the background writer for one automatic compaction of @p path (an append with
 * compact_in_background left work; checkpoint_bg.c, B6). False when it cannot be asked
 * (no free entry, no thread): the caller compacts itself. */
bool mcdc_delta__compact_request(const char *path);
/* mcdc_delta_auto_compact of @p path with its outcome logged and the error cleared: the
 * post-commit hook of an append (commit.c), run by the append or by the background writer. */
void mcdc_delta__auto_compact_logged(const char *path);
/* Test hook: while @p hold, the background writer starts no new checkpoint or compaction
 * (requests queue up); releasing it lets them run. Never wait for them while holding. */
void mcdc_delta__background_hold(bool hold);
int mcdc_delta__cleanup_log(const mcdc_delta_snapshot *s);
/* A Delta interval ("interval 1 week", "30 days") in ms, or @p dflt_ms when absent/bad. */
int64_t mcdc_delta__interval_ms(const char *text, int64_t dflt_ms);

/* ---- files (dfs.c) ------------------------------------------------------------------ */

/* Read the whole file into @p out (capped at @p max bytes). MCDC_ENOTFOUND, MCDC_EIO,
 * MCDC_ENOMEM (over the cap). */
int mcdc_delta__read_file(mcdc_buf *out, const char *path, size_t max);
/* Create @p dir/@p name with @p data, atomically and without replacing: a temp file in
 * @p dir is written and fsynced, then linked to the name; the directory is fsynced.
 * MCDC_EEXISTS when the name exists (nothing changed); MCDC_EIO. */
int mcdc_delta__create_noreplace(const char *dir, const char *name, const void *data, size_t len);
/* Replace @p dir/@p name atomically (temp, fsync, rename, fsync dir). */
int mcdc_delta__replace_atomic(const char *dir, const char *name, const void *data, size_t len);
/* mkdir -p. */
int mcdc_delta__mkdirs(const char *dir);
/* "a/b" joined. Caller frees. NULL when out of memory. */
char *mcdc_delta__join(const char *a, const char *b);
/* Milliseconds since the epoch. */
int64_t mcdc_delta__now_ms(void);
/* Append a decimal (@p scale) or a date (days since the epoch, YYYY-MM-DD, in quotes when
 * @p quoted) as stats and partition values write them (datafile.c). */
int mcdc_delta__put_decimal(mcdc_buf *b, mcdc_int128 v, int scale);
int mcdc_delta__put_date(mcdc_buf *b, int64_t days, bool quoted);

/* ---- replay (snapshot.c) and the snapshot cache (snapshot_cache.c) ------------------- */

/* What tells one file from another at the same name: the storage's change token (a
 * recreated table's commit file has another inode, size or change time locally, another
 * size or ETag on an object store). */
typedef struct mcdc_delta__file_id {
    bool valid;        /* false: unknown (the file could not be stat'ed) */
    char token[96];    /* mcdc_storage_info.token */
    int64_t mtime_ms;  /* the file's modification time, ms since the epoch */
} mcdc_delta__file_id;

/* The change token of @p path into @p out (out->valid false when it fails; never an error). */
void mcdc_delta__file_id_of(mcdc_delta__file_id *out, const char *path);
/* Both valid and equal. */
bool mcdc_delta__file_id_same(const mcdc_delta__file_id *a, const mcdc_delta__file_id *b);

/* The full load behind mcdc_delta_snapshot_open (no cache): listing, checkpoint, commits.
 * When @p id is not NULL it receives the identity of the target version's commit file if
 * that file was the same before and after the replay (else id->valid is false). */
int mcdc_delta__snapshot_load(mcdc_delta_snapshot **out, const char *path, int64_t version,
                              mcdc_delta__file_id *id);

/* A checkpoint of @p s's version was written: when @p s is the cached state and the
 * caller holds the only other reference, it now counts as read from that checkpoint
 * (checkpoint_version, expired tombstones dropped), as a fresh load would be. */
void mcdc_delta__snapshot_checkpointed(mcdc_delta_snapshot *s);
/* The same for the cached state of @p path, told by the background writer that a
 * checkpoint of @p version exists: applied when only the cache holds the state and it is
 * at or past @p version (else the next full load learns it). */
void mcdc_delta__snapshot_cache_checkpointed(const char *path, int64_t version);
/* Bring @p *s, a snapshot of @p path that no one else holds and that is not in the cache
 * (or NULL), to the newest version by reading the commits after it; anything unusual (or
 * NULL) takes a full load instead. On failure *s is NULL. Cost: the new commits, or a
 * full load. Not cached: the background checkpoint writer's own state (checkpoint_bg.c). */
int mcdc_delta__snapshot_private_latest(mcdc_delta_snapshot **s, const char *path);

/* Drop one reference to @p s: true when it was the last one (or @p s is not shared), so
 * the caller frees the snapshot's contents. */
bool mcdc_delta__snapshot_unref(mcdc_delta_snapshot *s);


/* ---- column mapping (colmap.c) ------------------------------------------------------ */

/* Whether a column of @p s needs column mapping (mcdc_delta_name_needs_mapping). */
bool mcdc_delta__schema_needs_mapping(const mcdc_schema *s);
/* The physical name this library gives the logical column @p logical: "col-" + a
 * UUID-shaped text of SHA-256 over the name (the same every time). */
void mcdc_delta__physical_name(char out[48], const char *logical);
/* The schemaString of a flat schema under column mapping: ids 1..n, physical names. */
int mcdc_delta__schema_json_mapped(mcdc_buf *out, const mcdc_schema *flat);

/* ---- variant values (variant.c) ---------------------------------------------------- */

/* Append the JSON text of the Variant value @p value with its @p meta dictionary
 * (Parquet VariantEncoding.md). MCDC_ECORRUPT for a malformed encoding (nothing is read
 * past either buffer); MCDC_EUNSUPPORTED for a metadata version or primitive type this
 * build does not know; MCDC_ENOMEM. */
int mcdc_delta__variant_to_json(mcdc_buf *out, const uint8_t *meta, size_t meta_len,
                                const uint8_t *value, size_t value_len);

/* ---- schema evolution (evolve.c) ---------------------------------------------------- */

/* Append to @p acts the metaData (and, for a first widening, the protocol) that apply
 * @p ev to @p snap; nothing when the snapshot holds the change already. MCDC_EINVAL when
 * @p acts carries a metaData or protocol of its own; MCDC_ESCHEMA as mcdc_delta_evolve_plan. */
int mcdc_delta__evolve_actions(const mcdc_delta_snapshot *snap, const mcdc_delta_evolution *ev,
                               mcdc_delta_action **acts, size_t *n_acts);
/* Whether @p p supports the reader-writer feature @p feature (or @p preview, may be NULL). */
bool mcdc_delta__supports_feature(const mcdc_delta_protocol *p, const char *feature,
                                  const char *preview);
/* @p in with @p feature added to writerFeatures (and readerFeatures when @p reader), on
 * reader 3 (when @p reader or already 3) and writer 7, listing the features the legacy
 * versions implied. @p out is owned by the caller (clear it as a protocol action). */
int mcdc_delta__protocol_with(mcdc_delta_protocol *out, const mcdc_delta_protocol *in,
                              const char *feature, bool reader);

/* Check an action may appear in a commit file (not checkpointMetadata / sidecar). */
bool mcdc_delta__commit_action_allowed(const mcdc_delta_action *a);

#endif
