/*
 * mcdc/delta.h: Delta Lake tables: log actions, the table schema, snapshots (log replay),
 * commit history and commits with optimistic concurrency and txn idempotency.
 *
 * A table is a directory with a _delta_log/ folder of numbered JSON commits and Parquet
 * checkpoints (PROTOCOL.md in delta-io/delta; notes in reference/specs.md §1). A snapshot
 * is the table's state at one version: protocol, metadata, schema, the live data files
 * with their partition values and stats, the recorded txn version per appId and the
 * domain metadata. Commits create version N's file without replacing it, so two writers
 * can never both take a version; the loser reads the winners and either rebases or
 * retries (architecture §3 invariant 7).
 *
 * Caveats:
 * - A snapshot is immutable and may be read from several threads; nothing else here is
 *   thread-safe.
 * - Strings and arrays handed out by a snapshot are borrowed and live until
 *   mcdc_delta_snapshot_free().
 * - Local POSIX file systems only: version files rely on link(2) failing with EEXIST.
 * - The library refuses reader features it does not implement (MCDC_EUNSUPPORTED, naming
 *   the feature) rather than return wrong rows.
 */
#ifndef MCDC_DELTA_H
#define MCDC_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "mcdc/parquet.h"
#include "mcdc/value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------ */
/* Actions                                                                              */
/* ------------------------------------------------------------------------------------ */

/** One entry of a string map (partitionValues, tags, configuration). */
typedef struct mcdc_delta_kv {
    char *key;   /* owned, never NULL */
    char *value; /* owned; NULL for a JSON null */
} mcdc_delta_kv;

/** A string map in the order it was read or built. */
typedef struct mcdc_delta_map {
    mcdc_delta_kv *kv; /* n entries, owned */
    size_t         n;
} mcdc_delta_map;

/** A deletion vector descriptor (PROTOCOL "Deletion Vector Descriptor Schema"). */
typedef struct mcdc_delta_dv {
    char    storage_type;      /* 'u' (relative, uuid), 'p' (absolute path), 'i' (inline) */
    char   *path_or_inline_dv; /* owned: Z85 text for 'u' and 'i', a path for 'p' */
    int32_t offset;            /* byte offset in the DV file; -1 when absent */
    int32_t size_in_bytes;     /* size of the serialized bitmap */
    int64_t cardinality;       /* number of deleted rows */
} mcdc_delta_dv;

/** A file action: add, remove or cdc. Absent numbers are -1. */
typedef struct mcdc_delta_file {
    char          *path;              /* owned; as written in the log (URI-encoded) */
    mcdc_delta_map partition_values;  /* partition column -> value text or NULL */
    int64_t        size;              /* bytes; -1 when absent (remove without it) */
    int64_t        modification_time; /* ms since the epoch; add only, else -1 */
    int64_t        deletion_timestamp; /* ms; remove only, else -1 */
    bool           data_change;
    bool           extended_file_metadata; /* remove only */
    char          *stats;             /* owned JSON text (add.stats), or NULL */
    mcdc_delta_map tags;
    bool           has_dv;            /* dv is valid */
    mcdc_delta_dv  dv;
    int64_t        base_row_id;       /* -1 when absent */
    int64_t        default_row_commit_version; /* -1 when absent */
} mcdc_delta_file;

/** protocol. */
typedef struct mcdc_delta_protocol {
    int    min_reader_version;
    int    min_writer_version;
    char **reader_features; /* owned; NULL when the field is absent */
    size_t n_reader_features;
    bool   has_reader_features;
    char **writer_features; /* owned; NULL when absent */
    size_t n_writer_features;
    bool   has_writer_features;
} mcdc_delta_protocol;

/** metaData. */
typedef struct mcdc_delta_metadata {
    char          *id;            /* owned table id (a UUID) */
    char          *name;          /* owned or NULL */
    char          *description;   /* owned or NULL */
    char          *format_provider; /* owned; "parquet" */
    char          *schema_string; /* owned JSON text of the schema */
    char         **partition_columns; /* owned, n_partition_columns entries */
    size_t         n_partition_columns;
    mcdc_delta_map configuration;
    int64_t        created_time;  /* ms; -1 when absent */
} mcdc_delta_metadata;

/** txn: an application's last committed version. */
typedef struct mcdc_delta_txn {
    char   *app_id;       /* owned */
    int64_t version;
    int64_t last_updated; /* ms; -1 when absent */
} mcdc_delta_txn;

/** domainMetadata. */
typedef struct mcdc_delta_domain {
    char *domain;        /* owned */
    char *configuration; /* owned */
    bool  removed;
} mcdc_delta_domain;

/** sidecar (V2 checkpoints only). */
typedef struct mcdc_delta_sidecar {
    char   *path; /* owned, relative to _delta_log/_sidecars/ or absolute */
    int64_t size_in_bytes;
    int64_t modification_time;
} mcdc_delta_sidecar;

typedef enum {
    MCDC_DELTA_ACTION_UNKNOWN = 0, /* a name this reader does not know: ignored (PROTOCOL) */
    MCDC_DELTA_ACTION_ADD,
    MCDC_DELTA_ACTION_REMOVE,
    MCDC_DELTA_ACTION_CDC,
    MCDC_DELTA_ACTION_METADATA,
    MCDC_DELTA_ACTION_PROTOCOL,
    MCDC_DELTA_ACTION_TXN,
    MCDC_DELTA_ACTION_COMMIT_INFO,
    MCDC_DELTA_ACTION_DOMAIN_METADATA,
    MCDC_DELTA_ACTION_CHECKPOINT_METADATA,
    MCDC_DELTA_ACTION_SIDECAR
} mcdc_delta_action_kind;

/** One action of a commit or checkpoint. Only the member named by kind is valid. */
typedef struct mcdc_delta_action {
    mcdc_delta_action_kind kind;
    union {
        mcdc_delta_file     file;     /* ADD, REMOVE, CDC */
        mcdc_delta_metadata metadata;
        mcdc_delta_protocol protocol;
        mcdc_delta_txn      txn;
        mcdc_delta_domain   domain;
        mcdc_delta_sidecar  sidecar;
        int64_t             checkpoint_version; /* CHECKPOINT_METADATA */
        char               *commit_info; /* COMMIT_INFO: owned JSON text of the object */
    } u;
} mcdc_delta_action;

/** Parse one action from JSON text (a commit line, or a checkpoint row as JSON where
 *  absent fields are null and maps may be arrays of {"key","value"}).
 *  Unknown action names give kind UNKNOWN (readers must ignore them); unknown fields are
 *  ignored. A row whose action columns are all null also gives UNKNOWN.
 *  @param[out] out  filled; release with mcdc_delta_action_clear() (also on failure).
 *  @return 0; MCDC_ECORRUPT (message names the field) for bad JSON or a missing required
 *          field; MCDC_ENOMEM. */
int mcdc_delta_action_parse(mcdc_delta_action *out, const char *json, size_t len);

/** Append the JSON text of @p a (one line, no newline) as the protocol writes it.
 *  @return 0; MCDC_EINVAL for UNKNOWN; MCDC_ENOMEM. */
int mcdc_delta_action_to_json(mcdc_buf *out, const mcdc_delta_action *a);

/** Free what @p a owns and zero it. Accepts an already cleared action. */
void mcdc_delta_action_clear(mcdc_delta_action *a);

/** Deep copy of a file action into @p out. @return 0; MCDC_ENOMEM. */
int mcdc_delta_file_copy(mcdc_delta_file *out, const mcdc_delta_file *in);
/** Deep copy of a protocol action into @p out (free with mcdc_delta_action_clear() of a
 *  protocol action holding it). @return 0; MCDC_ENOMEM (then @p out is zeroed). */
int mcdc_delta_protocol_copy(mcdc_delta_protocol *out, const mcdc_delta_protocol *in);
/** Deep copy of a metaData action into @p out (free as a metaData action).
 *  @return 0; MCDC_ENOMEM (then @p out is zeroed). */
int mcdc_delta_metadata_copy(mcdc_delta_metadata *out, const mcdc_delta_metadata *in);
/** Make @p out a remove action for live file @p f (dataChange true,
 *  deletionTimestamp now, extendedFileMetadata with partition values, size and its DV).
 *  @return 0; MCDC_ENOMEM. */
int mcdc_delta_remove_of(mcdc_delta_action *out, const mcdc_delta_file *f, int64_t now_ms);
/** Free what @p f owns. */
void mcdc_delta_file_clear(mcdc_delta_file *f);

/** Write @p n deletion vectors into one new file <table>/deletion_vector_<uuid>.bin
 *  (PROTOCOL "Deletion Vector Format"), created without replace and durable before this
 *  returns, so a commit may name it next. @p rows[i] holds @p n_rows[i] row indexes,
 *  ascending and distinct; out[i] gets its descriptor (storage 'u', its offset in the
 *  file, cardinality n_rows[i]), owned by the caller (mcdc_delta_dv_clear).
 *  @return 0; MCDC_EINVAL for unsorted or repeated indexes; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_delta_dv_write(const char *table, const uint64_t *const *rows, const size_t *n_rows,
                        size_t n, mcdc_delta_dv *out);
/** The deleted row indexes of @p dv of a file of the table at @p table, ascending;
 *  @p out is malloc'd (the caller frees it).
 *  @return 0; MCDC_ECORRUPT (bad bitmap, CRC, size or cardinality); MCDC_ENOTFOUND; MCDC_EIO. */
int mcdc_delta_dv_read(uint64_t **out, size_t *n_out, const char *table, const mcdc_delta_dv *dv);
/** Free what @p dv owns and zero it; accepts NULL. */
void mcdc_delta_dv_clear(mcdc_delta_dv *dv);
/** The value of @p key in @p m, or NULL (absent or null; @p found tells which, may be NULL). */
const char *mcdc_delta_map_get(const mcdc_delta_map *m, const char *key, bool *found);
/** Set @p key to @p value (copies both; value may be NULL). @return 0; MCDC_ENOMEM. */
int mcdc_delta_map_set(mcdc_delta_map *m, const char *key, const char *value);
/** Free a map's entries. */
void mcdc_delta_map_clear(mcdc_delta_map *m);

/* ------------------------------------------------------------------------------------ */
/* Schema                                                                               */
/* ------------------------------------------------------------------------------------ */

typedef enum {
    MCDC_DELTA_TYPE_PRIMITIVE = 1,
    MCDC_DELTA_TYPE_STRUCT,
    MCDC_DELTA_TYPE_ARRAY,
    MCDC_DELTA_TYPE_MAP,
    MCDC_DELTA_TYPE_VARIANT /* variantType: read as the JSON text of each value */
} mcdc_delta_type_kind;

typedef struct mcdc_delta_field mcdc_delta_field;

/** A Delta data type (a tree). */
typedef struct mcdc_delta_type {
    mcdc_delta_type_kind    kind;
    mcdc_column             prim;   /* PRIMITIVE: type, precision, scale (name unused) */
    mcdc_delta_field       *fields; /* STRUCT: n_fields entries, owned */
    size_t                  n_fields;
    struct mcdc_delta_type *element; /* ARRAY element, MAP value; owned */
    struct mcdc_delta_type *key;     /* MAP key; owned */
    bool                    contains_null; /* ARRAY containsNull, MAP valueContainsNull */
} mcdc_delta_type;

/** A field of a struct (or of the table). */
struct mcdc_delta_field {
    char           *name;          /* owned: the logical name */
    char           *physical_name; /* owned: delta.columnMapping.physicalName, else name */
    int64_t         field_id;      /* delta.columnMapping.id, or -1 */
    bool            nullable;
    char           *metadata;      /* owned JSON text of the metadata object ("{}") */
    mcdc_delta_type type;
};

/** A table schema: the top-level struct. */
typedef struct mcdc_delta_schema {
    mcdc_delta_field *fields; /* owned */
    size_t            n_fields;
} mcdc_delta_schema;

/** Parse a schemaString. @return 0; MCDC_ECORRUPT for malformed JSON or a missing key;
 *  MCDC_EUNSUPPORTED for a type this build cannot read (the message names it). */
int mcdc_delta_schema_parse(mcdc_delta_schema **out, const char *json);
/** Free a schema; accepts NULL. */
void mcdc_delta_schema_free(mcdc_delta_schema *s);
/** A deep copy of @p in into *@p out (free with mcdc_delta_schema_free()).
 *  @return 0; MCDC_ENOMEM. */
int mcdc_delta_schema_copy(mcdc_delta_schema **out, const mcdc_delta_schema *in);
/** Index of the top-level field @p name (case-insensitive), or -1. */
int mcdc_delta_schema_find(const mcdc_delta_schema *s, const char *name);
/** Append Delta's JSON for @p t (a type string or object). */
int mcdc_delta_type_to_json(mcdc_buf *out, const mcdc_delta_type *t);
/** Append the schemaString of a flat schema; every field gets "metadata":{}. */
int mcdc_delta_schema_json_from_flat(mcdc_buf *out, const mcdc_schema *flat);
/** Whether Delta engines refuse @p name as a Parquet column name (a space or one of
 *  ,;{}()= newline tab): a table created with such a column uses column mapping in name
 *  mode (mcdc_delta_create). */
bool mcdc_delta_name_needs_mapping(const char *name);
/** The columns of @p logical as the data files of the table at @p table_path name them:
 *  physical names and Parquet field ids under column mapping (the table's own mapping
 *  when it exists; for a table not created yet, the mapping mcdc_delta_create will give
 *  it, so a first data file may be written before the table), else the names as they are.
 *  @param[out] out  the schema (free with mcdc_schema_free()).
 *  @param[out] ids  one field id per column under column mapping (free()), else NULL.
 *  @return 0; snapshot codes; MCDC_ENOMEM. */
int mcdc_delta_physical_schema(mcdc_schema **out, int32_t **ids, const char *table_path,
                               const mcdc_schema *logical);
/** A flat schema of the top-level primitive fields (logical names), for tables whose
 *  columns are all primitive. @return 0; MCDC_EUNSUPPORTED naming a nested column. */
int mcdc_delta_schema_to_flat(mcdc_schema **out, const mcdc_delta_schema *s);

/* ------------------------------------------------------------------------------------ */
/* Snapshots                                                                            */
/* ------------------------------------------------------------------------------------ */

/** Column mapping mode of a table. */
typedef enum {
    MCDC_DELTA_CM_NONE = 0,
    MCDC_DELTA_CM_NAME,
    MCDC_DELTA_CM_ID
} mcdc_delta_cm_mode;

/** A table at one version. Read-only; free with mcdc_delta_snapshot_free(). */
typedef struct mcdc_delta_snapshot {
    char               *table_path;  /* owned: the table root as given */
    int64_t             version;     /* the snapshot's version */
    int64_t             checkpoint_version; /* the checkpoint replay started from (or that
                                             * this process wrote for the state), or -1 */
    mcdc_delta_protocol protocol;
    mcdc_delta_metadata metadata;
    mcdc_delta_schema  *schema;      /* parsed metadata.schema_string */
    mcdc_delta_cm_mode  column_mapping;
    mcdc_delta_file    *files;       /* live files (add actions), in path order */
    size_t              n_files;
    mcdc_delta_file    *tombstones;  /* remove actions still in the log state */
    size_t              n_tombstones;
    mcdc_delta_txn     *txns;        /* latest version per appId, in appId order */
    size_t              n_txns;
    mcdc_delta_domain  *domains;     /* live (not removed) domains */
    size_t              n_domains;
    int64_t             timestamp_ms; /* modification time of the version's commit file, or -1 */
    struct mcdc_delta__snapshot_priv *priv; /* private to src/delta: sharing through the
                                             * snapshot cache; NULL when not shared */
} mcdc_delta_snapshot;

/** Load the table at @p path at @p version (-1: the latest).
 *  Reads _last_checkpoint (falls back to listing when missing or corrupt), the newest
 *  complete checkpoint at or below the version (classic, multi-part or V2 with
 *  sidecars), then the JSON commits after it, which must be contiguous.
 *  Through the in-process snapshot cache (see mcdc_delta_snapshot_cache_limit): when this
 *  process already loaded the table at a version at or below the one wanted, only the
 *  commits after it are read (probing N+1.json, N+2.json, ...); the result is always the
 *  latest version at the time of the call (or exactly @p version), never a stale state.
 *  The snapshot returned may be shared with other callers (read-only, thread-safe).
 *  @param[out] out  the snapshot, NULL on failure.
 *  @return 0; MCDC_ENOTFOUND when there is no _delta_log or the version does not exist;
 *          MCDC_ECORRUPT naming the file and line for a malformed log or a gap in the
 *          versions; MCDC_EUNSUPPORTED naming an unknown reader feature; MCDC_EIO. */
int mcdc_delta_snapshot_open(mcdc_delta_snapshot **out, const char *path, int64_t version);
/** Free a snapshot (drop this caller's reference to it); accepts NULL. */
void mcdc_delta_snapshot_free(mcdc_delta_snapshot *s);

/** Counters of the in-process snapshot cache, since the process started. */
typedef struct mcdc_delta_cache_stats {
    uint64_t hits;         /* opens served from the cache with no new commit */
    uint64_t incremental;  /* opens that read only the commits after the cached version */
    uint64_t full;         /* opens that loaded from the log (no usable cached state) */
    uint64_t copies;       /* cached states copied because another holder still used them */
    uint64_t commits_read; /* commit files read by incremental opens */
} mcdc_delta_cache_stats;

/** The cache's counters. Thread-safe. */
void mcdc_delta_snapshot_cache_stats(mcdc_delta_cache_stats *out);

/** Keep the latest snapshot of at most @p max_tables tables in the process (least
 *  recently used dropped first; capped at 64); 0 turns the cache off and empties it.
 *  The default is 8, or the environment variable MCDC_SNAPSHOT_CACHE (a count; 0 turns
 *  it off) when set. Thread-safe; snapshots already handed out stay valid. */
void mcdc_delta_snapshot_cache_limit(int max_tables);
/** The latest version of the table, by listing (cheap: no replay).
 *  @return 0; MCDC_ENOTFOUND; MCDC_EIO. */
int mcdc_delta_latest_version(int64_t *out, const char *path);
/** The txn version recorded for @p app_id, or -1 when none. */
int64_t mcdc_delta_snapshot_txn(const mcdc_delta_snapshot *s, const char *app_id);
/** A configuration value of the snapshot's metadata, or @p dflt. */
const char *mcdc_delta_snapshot_config(const mcdc_delta_snapshot *s, const char *key,
                                       const char *dflt);
/** The absolute path of a data file of the snapshot (percent-decoded, joined with the
 *  table root unless absolute). Caller frees with free(). NULL when out of memory. */
char *mcdc_delta_file_abspath(const mcdc_delta_snapshot *s, const char *log_path);

/** Check that this build can read a table with @p p and configuration @p m.
 *  @return 0; MCDC_EUNSUPPORTED naming the feature or version. */
int mcdc_delta_check_readable(const mcdc_delta_protocol *p, const mcdc_delta_metadata *m);

/* ------------------------------------------------------------------------------------ */
/* History                                                                              */
/* ------------------------------------------------------------------------------------ */

/** One version's commit information. */
typedef struct mcdc_delta_history_entry {
    int64_t version;
    int64_t timestamp_ms;    /* commitInfo.inCommitTimestamp, else .timestamp, else file mtime */
    char   *operation;       /* owned or NULL */
    char   *user_metadata;   /* owned or NULL */
    char   *commit_info;     /* owned JSON text of the commitInfo object, or NULL */
    mcdc_delta_txn *txns;    /* txn actions of the commit, owned */
    size_t  n_txns;
} mcdc_delta_history_entry;

/** The history of the versions still in the log (oldest first). Versions whose JSON
 *  commit was cleaned up are not listed.
 *  @return 0; MCDC_ENOTFOUND; MCDC_ECORRUPT for a version missing after the newest
 *          checkpoint (as a snapshot refuses it) or an empty commit file; MCDC_EIO. */
int mcdc_delta_history(mcdc_delta_history_entry **out, size_t *n_out, const char *path);
/** Free a history array. */
void mcdc_delta_history_free(mcdc_delta_history_entry *h, size_t n);

/* ------------------------------------------------------------------------------------ */
/* Commits                                                                              */
/* ------------------------------------------------------------------------------------ */

/** What a read-modify-write operation read, for conflict detection (invariant 7). */
typedef enum {
    MCDC_DELTA_PRED_NONE = 0, /* read nothing (a blind append) */
    MCDC_DELTA_PRED_ALL,      /* read everything: any added file conflicts */
    MCDC_DELTA_PRED_EQ,       /* column = value */
    MCDC_DELTA_PRED_GE,       /* column >= value */
    MCDC_DELTA_PRED_LE        /* column <= value */
} mcdc_delta_pred_op;

/** A simple predicate over one column; the value is typed by the table's column. */
typedef struct mcdc_delta_pred {
    mcdc_delta_pred_op op;
    const char        *column; /* logical column name (borrowed) */
    mcdc_value         value;  /* strings borrowed */
} mcdc_delta_pred;

/** Options of a commit. Start from MCDC_DELTA_COMMIT_OPTIONS_INIT. */
typedef struct mcdc_delta_commit_options {
    int             version;         /* 1 */
    const char     *operation;       /* commitInfo.operation, e.g. "WRITE" */
    const char     *operation_parameters; /* JSON object text, or NULL for {} */
    const char     *user_metadata;   /* commitInfo.userMetadata, or NULL */
    const char     *app_id;          /* txn appId, or NULL for no txn */
    int64_t         txn_version;     /* txn version (with app_id) */
    mcdc_delta_pred read_pred;       /* what the operation read (NONE for blind) */
    int64_t         retry_budget_ms; /* total time for conflict retries; default 60000 */
    int64_t         backoff_start_ms; /* first backoff; default 10 */
    int64_t         backoff_max_ms;  /* backoff cap; default 1000 */
    bool            no_checkpoint;   /* do not write a checkpoint after this commit */
    int64_t         txn_expect;      /* with app_id: the txn version the caller last saw (-1
                                        none); a recorded version above it and below
                                        txn_version is another writer's: MCDC_ECONFLICT.
                                        MCDC_DELTA_TXN_ANY (the default) skips the check */
    const char     *expect_key;      /* with expect_value: the commit holds only while the
                                      * table's configuration has expect_key = expect_value
                                      * (checked on every attempt's snapshot; otherwise
                                      * MCDC_ECONFLICT, nothing written); NULL: no check */
    const char     *expect_value;
    const struct mcdc_delta_evolution *evolve; /* a schema change made in the same commit
                                      * (re-applied to every attempt's snapshot; see
                                      * mcdc_delta_evolve_plan); NULL: none */
    const mcdc_delta_txn *txns;      /* more txn actions recorded by the same commit (appId
                                      * and version; no idempotency check): markers of what
                                      * the commit has done. NULL: none */
    size_t          n_txns;
    bool            compact_in_background; /* mcdc_delta_append: an automatic compaction
                                      * this append leaves due runs on the background
                                      * writer (as checkpoints do) instead of before the
                                      * append returns; mcdc_delta_checkpoints_wait and
                                      * exit() wait for it (docs/decisions/0046) */
} mcdc_delta_commit_options;

#define MCDC_DELTA_TXN_ANY INT64_MIN

#define MCDC_DELTA_COMMIT_OPTIONS_INIT \
    { 1, "WRITE", NULL, NULL, NULL, -1, { MCDC_DELTA_PRED_NONE, NULL, { true, { 0 } } }, 60000, 10, 1000, false, MCDC_DELTA_TXN_ANY, NULL, NULL, NULL, NULL, 0, false }

/** What a commit did. */
typedef struct mcdc_delta_commit_result {
    int64_t version;   /* the version written, or the table version when already committed */
    int     n_conflicts; /* conflicts that forced a retry from a fresh snapshot */
    int     n_rebases;   /* lost races resolved by moving to the next version */
    bool    already_committed; /* the txn was found recorded; nothing was written */
    bool    checkpointed; /* a checkpoint was due and asked of the background writer */
} mcdc_delta_commit_result;

/** Called to (re)build the actions of an operation from a snapshot, on the first try and
 *  after each conflict. Append add/remove/metaData/domainMetadata actions to @p actions
 *  (protocol, txn and commitInfo are added by the writer). Return 0, or a negative code
 *  that stops the commit and reaches the caller unchanged. */
typedef int (*mcdc_delta_build_fn)(const mcdc_delta_snapshot *snap, mcdc_delta_action **actions,
                                   size_t *n_actions, void *payload);

/** Create the table at @p path (version 0) with @p schema partitioned by
 *  @p partition_columns and @p configuration (mcdc.schema_version is added when absent).
 *  Protocol (1,2), or (3,7) with timestampNtz when a timestamp_ntz column exists. When a
 *  column name needs it (mcdc_delta_name_needs_mapping), column mapping in name mode:
 *  each field gets an id and a physical name, the configuration
 *  delta.columnMapping.mode = name and maxColumnId, the protocol (2,5) or, with
 *  timestampNtz, columnMapping in both feature lists.
 *  When another writer created the table first, its table is taken if its schema holds
 *  the same columns and types.
 *  @param[out] result  may be NULL.
 *  @return 0; MCDC_EEXISTS when a table with another schema is there; MCDC_EIO. */
int mcdc_delta_create(const char *path, const mcdc_schema *schema,
                      const char *const *partition_columns, size_t n_partition_columns,
                      const mcdc_delta_map *configuration, mcdc_delta_commit_result *result);

/** Commit the actions produced by @p build, with optimistic concurrency: on a lost race the
 *  winners are read; no conflict rebases at once, a conflict (metadata or protocol change,
 *  our appId recorded, a file we removed or read removed, an added file that may match
 *  our read predicate) retries from a fresh snapshot with exponential backoff and jitter.
 *  With opts->app_id, a txn version at or below the recorded one writes nothing and
 *  returns MCDC_EALREADY ("already committed"), checked before writing and on conflicts;
 *  with opts->txn_expect too, a recorded version between the expected one and ours
 *  writes nothing and returns MCDC_ECONFLICT (another writer uses the appId).
 *  @return 0; MCDC_EALREADY; MCDC_ECONFLICT; MCDC_ETIMEOUT when the retry budget ran out
 *          (message names the conflict); MCDC_ENOTFOUND when there is no table; codes
 *          from @p build. */
int mcdc_delta_commit(const char *path, mcdc_delta_build_fn build, void *payload,
                      const mcdc_delta_commit_options *opts, mcdc_delta_commit_result *result);

/** Append the given data files (already written and fsynced) as add actions: a blind
 *  append unless opts->read_pred says otherwise. After the commit, when the table then
 *  holds enough small files, runs mcdc_delta_auto_compact (bounded; see there), or with
 *  opts->compact_in_background asks the background writer to run it and returns; its
 *  failure is logged (a lost conflict at INFO, anything else at WARN) and never changes
 *  the append's result. */
int mcdc_delta_append(const char *path, const mcdc_delta_file *files, size_t n_files,
                      const mcdc_delta_commit_options *opts, mcdc_delta_commit_result *result);

/** Set configuration keys of the table by a metaData commit (a copy of the current
 *  metadata with @p set applied; a NULL value removes the key). With opts->expect_key the
 *  change holds only while that key has opts->expect_value (NULL: absent), so two
 *  writers racing for one key cannot both win. A change that sets nothing new writes
 *  nothing (result->version is then the table's version).
 *  @param[in] opts  operation, userMetadata, expect_key/value; NULL for defaults.
 *  @return 0; MCDC_ECONFLICT when expect_key does not hold (message names the value
 *          found); MCDC_ENOTFOUND when there is no table; snapshot and I/O codes. */
int mcdc_delta_set_config(const char *path, const mcdc_delta_map *set,
                          const mcdc_delta_commit_options *opts, mcdc_delta_commit_result *result);

/** Add nullable columns to the table's schema by a metaData commit. Columns already
 *  present with the same type are skipped.
 *  @return 0; MCDC_ESCHEMA when a column exists with another type or is not nullable. */
int mcdc_delta_add_columns(const char *path, const mcdc_schema *columns,
                           mcdc_delta_commit_result *result);

/** A schema change made in the same commit as the data that needs it (bronze evolving
 *  with a batch whose capture instance captures more or wider columns). Start from
 *  MCDC_DELTA_EVOLUTION_INIT; both lists may be NULL. The change is idempotent: what the
 *  table already holds is left out, so a retried or replayed commit changes nothing twice.
 *
 *  Use: plan on the snapshot the data files are written against, write them with the
 *  planned schema, then commit them with the same evolution:
 *  @code
 *  mcdc_delta_evolution ev = MCDC_DELTA_EVOLUTION_INIT;
 *  ev.add = new_cols;                 // nullable, appended after the table's columns
 *  ev.widen = wider;                  // e.g. qty: long where the table has integer
 *  mcdc_schema *write_schema = NULL;
 *  rc = mcdc_delta_evolve_plan(&write_schema, snap, &ev);   // MCDC_ESCHEMA: refuse
 *  ... write the data files with write_schema ...
 *  mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
 *  co.evolve = &ev;                   // + app_id, txn_version as usual
 *  rc = mcdc_delta_append(path, files, n_files, &co, &res);
 *  @endcode
 *  Widening (PROTOCOL.md "Type Widening") needs delta.enableTypeWidening=true in the
 *  table's configuration; the commit then records {fromType, toType} in the field's
 *  delta.typeChanges metadata and, unless the table supports typeWidening (or
 *  typeWidening-preview) already, carries a protocol adding the typeWidening reader and
 *  writer feature (reader 3, writer 7). A table with column mapping gives each new
 *  column an id and a physical name. Readers of this library convert values of files
 *  written before a widening to the wider type. */
typedef struct mcdc_delta_evolution {
    int                version; /* 1 */
    const mcdc_schema *add;     /* columns to add (each nullable), after the table's; NULL none */
    const mcdc_schema *widen;   /* columns of the table, by name, with the wider type each
                                 * takes; NULL none */
} mcdc_delta_evolution;

#define MCDC_DELTA_EVOLUTION_INIT { 1, NULL, NULL }

/** Whether a column of type @p from may become @p to under the typeWidening feature:
 *  byte -> short -> int -> long; float -> double; byte, short, int -> double;
 *  date -> timestamp_ntz; decimal(p,s) -> decimal(p+k1,s+k2) with k1 >= k2 >= 0;
 *  byte, short, int -> decimal(10+k1,k2) and long -> decimal(20+k1,k2) with k1 >= k2 >= 0.
 *  Names and nullability are not looked at. Thread-safe. */
bool mcdc_delta_type_widens(const mcdc_column *from, const mcdc_column *to);

/** Check that @p ev can be applied to @p snap and give the flat schema the data files of
 *  the commit must be written with (the table's columns, widened, then the new ones).
 *  Changes nothing.
 *  @param[out] out  the schema, or NULL on failure; free with mcdc_schema_free().
 *  @return 0; MCDC_ESCHEMA for a column to add that exists with another type or is not
 *          nullable, a column to widen that is missing, nested or would narrow or change
 *          kind (string to int: not a widening), or a widening on a table without
 *          delta.enableTypeWidening=true (the hint names the property); MCDC_EUNSUPPORTED
 *          for a table with nested columns; MCDC_ENOMEM. */
int mcdc_delta_evolve_plan(mcdc_schema **out, const mcdc_delta_snapshot *snap,
                           const mcdc_delta_evolution *ev);

/** Whether two columns have the same Delta type (decimals: precision and scale too). */
bool mcdc_delta_type_same(const mcdc_column *a, const mcdc_column *b);

/** Append data files written with @p schema, evolving the table to hold it in the same
 *  commit (mcdc_delta_commit_options.evolve): columns the table lacks are added, columns
 *  whose type @p schema widens are widened. A schema the table already holds is an
 *  ordinary mcdc_delta_append. With @p n_files 0, only the schema change is committed.
 *  @return 0; MCDC_ESCHEMA (nothing written) as mcdc_delta_evolve_plan: a change that is
 *          not a widening, or a widening on a table without delta.enableTypeWidening=true;
 *          codes of mcdc_delta_append. */
int mcdc_delta_append_evolving(const char *path, const mcdc_delta_file *files, size_t n_files,
                               const mcdc_schema *schema, const mcdc_delta_commit_options *opts,
                               mcdc_delta_commit_result *result);

/** Let the table's column types widen: set delta.enableTypeWidening=true and add the
 *  typeWidening reader and writer feature (protocol 3, 7) in one commit. Engines without
 *  the feature can no longer read the table. Nothing is written when both are there.
 *  @return 0; MCDC_ENOTFOUND when there is no table; codes of mcdc_delta_commit. */
int mcdc_delta_enable_type_widening(const char *path, mcdc_delta_commit_result *result);

/** Let writers mark deleted rows with deletion vectors: set delta.enableDeletionVectors=true
 *  and add the deletionVectors reader and writer feature (protocol 3, 7) in one commit.
 *  Engines without the feature can no longer read the table. Nothing is written when both
 *  are there. @return 0; MCDC_ENOTFOUND when there is no table; codes of mcdc_delta_commit. */
int mcdc_delta_enable_deletion_vectors(const char *path, mcdc_delta_commit_result *result);

/** Have checkpoints written as V2 checkpoints with sidecars: set
 *  delta.checkpointPolicy=v2 and add the v2Checkpoint reader and writer feature
 *  (protocol 3, 7) in one commit. Every later checkpoint of the table is a UUID-named V2
 *  checkpoint whose add and remove rows are in _delta_log/_sidecars/. Engines without the
 *  feature can no longer read the table. Nothing is written when both are there.
 *  @return 0; MCDC_ENOTFOUND when there is no table; codes of mcdc_delta_commit. */
int mcdc_delta_enable_v2_checkpoints(const char *path, mcdc_delta_commit_result *result);

/* ------------------------------------------------------------------------------------ */
/* Rows: scanning and writing                                                           */
/* ------------------------------------------------------------------------------------ */

typedef struct mcdc_delta_scan mcdc_delta_scan;

/** Scan options. Start from MCDC_DELTA_SCAN_OPTIONS_INIT. */
typedef struct mcdc_delta_scan_options {
    int                version;   /* 1 */
    const char *const *columns;   /* logical names to read, in output order; NULL: all */
    size_t             n_columns;
    mcdc_delta_pred    pred;      /* skip files that cannot match (rows are not filtered) */
} mcdc_delta_scan_options;

#define MCDC_DELTA_SCAN_OPTIONS_INIT { 1, NULL, 0, { MCDC_DELTA_PRED_NONE, NULL, { true, { 0 } } } }

/** Start reading the rows of @p snap (borrowed: it must outlive the scan).
 *  @return 0; MCDC_ENOTFOUND for an unknown column; MCDC_ENOMEM. */
int mcdc_delta_scan_open(mcdc_delta_scan **out, const mcdc_delta_snapshot *snap,
                         const mcdc_delta_scan_options *opts);
/** The output columns: logical names and table types; a nested column is a STRING whose
 *  cells hold its JSON text (see mcdc_delta_scan_is_nested). Borrowed from the scan. */
const mcdc_schema *mcdc_delta_scan_schema(const mcdc_delta_scan *s);
/** Whether output column @p i is nested (its cells are JSON text; a variant column's
 *  cells are each value's JSON text, decoded from its metadata and value binaries). */
bool mcdc_delta_scan_is_nested(const mcdc_delta_scan *s, size_t i);
/** The next row (borrowed until the next call). Files are read in path order; rows
 *  deleted by a deletion vector are skipped; partition values come from the log.
 *  @return 1 with a row; 0 at the end; MCDC_ECORRUPT, MCDC_EIO, MCDC_ENOTFOUND (a data
 *          file is missing), MCDC_EUNSUPPORTED. Errors are sticky. */
int mcdc_delta_scan_next(mcdc_delta_scan *s, const mcdc_value **row);
/** The index in its data file of the row mcdc_delta_scan_next returned last (rows a
 *  deletion vector deletes count: the index a deletion vector names), or -1 before the
 *  first row. */
int64_t mcdc_delta_scan_row_index(const mcdc_delta_scan *s);
/** Files skipped by the predicate so far. */
int64_t mcdc_delta_scan_files_skipped(const mcdc_delta_scan *s);
/** Free a scan; accepts NULL. */
void mcdc_delta_scan_free(mcdc_delta_scan *s);

typedef struct mcdc_delta_writer mcdc_delta_writer;

/** Options of a row writer. Start from MCDC_DELTA_WRITER_OPTIONS_INIT. */
typedef struct mcdc_delta_writer_options {
    int         version;           /* 1 */
    int64_t     target_file_bytes; /* start a new file past this many bytes; default 128 MiB */
    const char *codec;             /* NULL: delta.parquet.compression.codec, else zstd */
    bool        no_dictionary;     /* no dictionary pages: about half the CPU for mostly
                                    * distinct values (bronze), somewhat larger files else */
} mcdc_delta_writer_options;

#define MCDC_DELTA_WRITER_OPTIONS_INIT { 1, 0, NULL, false }

/** Start writing rows (in the table's column order) into new data files of the table of
 *  @p snap. Nothing is visible until the files are committed (mcdc_delta_append or a
 *  build function that adds them).
 *  @return 0; MCDC_EUNSUPPORTED for column mapping in id mode (or name mode with a nested column);
 *          MCDC_EINVAL. A name-mode table gets files under physical names (field ids). */
int mcdc_delta_writer_open(mcdc_delta_writer **out, const mcdc_delta_snapshot *snap,
                           const mcdc_delta_writer_options *opts);
/** Write one row. @return 0; MCDC_EINVAL for a value that does not fit its column (the row
 *  is refused, the writer stays usable); MCDC_EIO, MCDC_ENOMEM (sticky). */
int mcdc_delta_writer_write(mcdc_delta_writer *w, const mcdc_value *row);
/** Close every open file (data fsynced) and hand out their add actions with stats.
 *  @param[out] files  caller frees with mcdc_delta_files_free(). */
int mcdc_delta_writer_finish(mcdc_delta_writer *w, mcdc_delta_file **files, size_t *n_files);
/** Free a writer; files not handed out by finish are deleted. Accepts NULL. */
void mcdc_delta_writer_free(mcdc_delta_writer *w);

/** Append the add action's stats JSON (numRecords, minValues, maxValues, nullCount) for a
 *  data file written with @p schema, from its Parquet writer's result. Bounds are exact
 *  (decimals as written, timestamps cut down to milliseconds, a string min cut to a
 *  32-code-point prefix, a longer string max, NaN and booleans left out, as readers take
 *  a missing bound as "may match"). Every writer of data files uses this one function.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_delta_stats_json(mcdc_buf *out, const mcdc_schema *schema,
                          const mcdc_parquet_write_result *r);
/** One new data file of a table and its add action: the one writer of data files (table
 *  rows, bronze, facts, control, silver). The file gets a unique name (a UUID, the codec's
 *  extension) at the table root; the Parquet writer fsyncs it and links it in without
 *  replacing (storage seam), so it is whole before an add action names it and invisible
 *  until a commit does. Stats come from mcdc_delta_stats_json. Freed before finish, the
 *  file is removed. */
typedef struct mcdc_delta_datafile mcdc_delta_datafile;

/** Options of one data file. Start from MCDC_DELTA_DATAFILE_OPTIONS_INIT. */
typedef struct mcdc_delta_datafile_options {
    mcdc_parquet_writer_options parquet; /* codec, level, pages, dictionary; field_ids
                                          * used only without column_mapping */
    bool    column_mapping;    /* write @p schema under the table's physical names and field
                                * ids (mcdc_delta_physical_schema; reads the table's log) */
    bool    make_dirs;         /* create the table directory first (a first file before
                                * the table's log) */
    bool    whole_strings;     /* stats keep strings whole (no 32-code-point cut), so an
                                * equality predicate on them is decided exactly */
    int64_t modification_time; /* ms since the epoch for the add action; <= 0: now */
} mcdc_delta_datafile_options;

#define MCDC_DELTA_DATAFILE_OPTIONS_INIT { MCDC_PARQUET_WRITER_OPTIONS_INIT, false, false, false, 0 }

/** Start a data file of the table at @p table_path for rows of @p schema (copied).
 *  @return 0; snapshot codes (column_mapping); MCDC_EIO; MCDC_ENOMEM. */
int mcdc_delta_datafile_open(mcdc_delta_datafile **out, const char *table_path,
                             const mcdc_schema *schema, const mcdc_delta_datafile_options *opts);
/** Append one row in @p schema's order (strings copied before return).
 *  @return 0; MCDC_EINVAL for a value that does not fit its column; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_delta_datafile_write(mcdc_delta_datafile *f, const mcdc_value *row);
/** Rows written so far. */
int64_t mcdc_delta_datafile_rows(const mcdc_delta_datafile *f);
/** Set a partition value (@p value NULL: null) or a tag of the add action; copied. Set
 *  before finish. @return 0; MCDC_ENOMEM. */
int mcdc_delta_datafile_set_partition(mcdc_delta_datafile *f, const char *key, const char *value);
int mcdc_delta_datafile_set_tag(mcdc_delta_datafile *f, const char *key, const char *value);
/** Close the file (footer, fsync, link, directory fsync) and fill @p out with its add
 *  action: relative path, size, modification time, dataChange, stats, partition values,
 *  tags (clear with mcdc_delta_file_clear()). On failure no file is left. The file then
 *  belongs to @p out; free the datafile after. @return 0; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_delta_datafile_finish(mcdc_delta_datafile *f, mcdc_delta_file *out);
/** Free; a file not finished is removed. Accepts NULL. */
void mcdc_delta_datafile_free(mcdc_delta_datafile *f);
/** Remove a finished data file @p rel_path of the table at @p table_path that no commit
 *  names. Errors are ignored (vacuum removes debris). */
void mcdc_delta_datafile_remove(const char *table_path, const char *rel_path);

/** Free an array of file actions. */
void mcdc_delta_files_free(mcdc_delta_file *files, size_t n);

/** Write a checkpoint of the table at @p version (-1: latest), update _last_checkpoint
 *  and clean up log files past the log retention. A version whose checkpoint is there
 *  already (the one the snapshot loads from) is not written again; *@p written (may be
 *  NULL) says whether a checkpoint was written. A V2-checkpoint table gets a V2
 *  checkpoint with its sidecar.
 *  @return 0; snapshot and I/O codes. */
int mcdc_delta_checkpoint(const char *path, int64_t version, bool *written);

/** Wait until every checkpoint this process's commits asked for is written or given up,
 *  and every automatic compaction appends left to the background writer has run.
 *  Commits never wait for their checkpoints: a commit that makes one due (every
 *  delta.checkpointInterval versions, or any later version while it is missing) asks a
 *  background thread for it and returns; exit() waits for them too, so call this only to
 *  wait earlier (before timing, or before reading the log's files). A checkpoint that
 *  failed is logged and asked for again by the next commit to the table.
 *  Thread-safe. @return 0. */
int mcdc_delta_checkpoints_wait(void);

/** What an optimize did. */
typedef struct mcdc_delta_optimize_result {
    int64_t version;   /* the version committed, or the table's version when nothing to do */
    int64_t n_removed; /* small files rewritten */
    int64_t n_added;   /* files written */
    int64_t n_rows;    /* rows moved */
} mcdc_delta_optimize_result;

/** Rewrite the small files of each partition (under half of @p target_bytes, default
 *  128 MiB when <= 0, or carrying a deletion vector) into files of the target size, in
 *  one commit with dataChange=false. Files are combined in commit order (modificationTime,
 *  or the mcdc.compact.order tag of a compacted file), each new file from at most
 *  @p target_bytes of input.
 *  @return 0 (also when nothing is small); MCDC_EINVAL for a finalization control table
 *          (mcdc.kind = control: one file per row by design); MCDC_ECONFLICT when another
 *          writer removed one of the files meanwhile; MCDC_EUNSUPPORTED for nested
 *          columns or column mapping; snapshot and I/O codes. */
int mcdc_delta_optimize(const char *path, int64_t target_bytes, mcdc_delta_optimize_result *result);

/** Automatic compaction, as mcdc_delta_append runs it after each append that leaves work:
 *  when the table's configuration enables it (`delta.autoOptimize.autoCompact` true or
 *  auto; when absent, on for mcdc.kind bronze and facts; never for mcdc.kind control) and
 *  a partition holds a run of `mcdc.autoCompact.minNumFiles` (default 50) consecutive
 *  small files of one size tier (small: under `mcdc.autoCompact.minFileSize`, default half
 *  of `delta.targetFileSize`, default 128 MiB), combine that run, in commit order, into
 *  one file with dataChange=false. One run reads at most `delta.targetFileSize` of input.
 *  A lost conflict gives up at once (no retries). docs/decisions/0005.
 *  @param[out] result  may be NULL; n_removed 0 when there was nothing to do.
 *  @return 0 (also when disabled or nothing to do); MCDC_ECONFLICT or MCDC_ETIMEOUT when
 *          another writer removed an input meanwhile (nothing committed, the new file
 *          deleted); snapshot, scan and I/O codes. */
int mcdc_delta_auto_compact(const char *path, mcdc_delta_optimize_result *result);

/* ------------------------------------------------------------------------------------ */
/* Maintenance                                                                          */
/* ------------------------------------------------------------------------------------ */

/** What a vacuum did. */
typedef struct mcdc_delta_vacuum_result {
    int64_t n_deleted;     /* files deleted (or that would be, in a dry run) */
    int64_t bytes_deleted;
    int64_t n_kept;        /* data files kept */
    int64_t n_failed;      /* files that could not be removed (logged) */
} mcdc_delta_vacuum_result;

/** Delete data files that no version within @p retention_us references and whose
 *  modification time is older than the retention; never _delta_log or any name starting
 *  with '_' or '.'. @p retention_us < 0 means 7 days.
 *  @return 0; MCDC_EINVAL for a retention under 7 days without @p force; snapshot codes. */
int mcdc_delta_vacuum(const char *path, int64_t retention_us, bool force, bool dry_run,
                      mcdc_delta_vacuum_result *result);

/** A new random UUID (version 4) in @p out (37 bytes). */
char *mcdc_delta_uuid(char out[37]);

/** Percent-encode a relative file path for add.path (RFC 3986 unreserved and '/'). */
int mcdc_delta_path_encode(mcdc_buf *out, const char *path);

#ifdef __cplusplus
}
#endif
#endif
