/*
 * mcdc/source.h: the source interface: what mssql-cdc reads from SQL Server CDC.
 *
 * One vtable, two implementations: the embedded simulator (sim:PATH) and SQL Server over
 * ODBC (odbc:CONNECTION-STRING). Everything above this layer is tested on the simulator
 * and runs unchanged against SQL Server. Design: docs/architecture.md §6.
 *
 * Ranges are half-open below and closed above: read_changes(ci, after, upto) returns the
 * changes with after < __$start_lsn <= upto, ordered by (__$start_lsn, __$command_id,
 * __$seqval, __$operation). Commit times come back in UTC, converted from the server's
 * clock and corrected for the fall-back hour by LSN order, so they never go backwards
 * along LSNs.
 *
 * Caveats:
 * - A source handle is used by one thread at a time.
 * - Rows are handed to a callback and are valid only during the call: copy what you keep.
 * - Reads are paged: a cleanup may run between two pages of one read. Check min_lsn again
 *   after every read (the data-loss guard).
 */
#ifndef MCDC_SOURCE_H
#define MCDC_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/error.h"
#include "mcdc/key_order.h"
#include "mcdc/lsn.h"
#include "mcdc/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcdc_source mcdc_source;

/** One change row as read from cdc.<ci>_CT, with its commit time. */
typedef struct mcdc_change {
    mcdc_lsn       start_lsn;   /* __$start_lsn: the commit LSN of its transaction */
    mcdc_lsn       seqval;      /* __$seqval: the LSN of its own log record */
    int            operation;   /* __$operation: 1 delete, 2 insert, 3 before, 4 after */
    int            command_id;  /* __$command_id: statement number within the transaction */
    int64_t        commit_ts_us;/* UTC commit time (tran_end_time converted) */
    const uint8_t *update_mask; /* __$update_mask bytes, borrowed */
    size_t         update_mask_len;
    const mcdc_value *values;   /* captured columns, in captured_columns() order; borrowed */
} mcdc_change;

/** One source row of a snapshot, in captured_columns() order; borrowed. */
typedef int (*mcdc_change_cb)(const mcdc_change *change, void *payload);
typedef int (*mcdc_row_cb)(const mcdc_value *values, void *payload);

/** A capture instance of a source table. */
typedef struct mcdc_capture_instance {
    char    *name;          /* e.g. "dbo_orders" */
    char    *source_schema; /* "dbo" */
    char    *source_table;  /* "orders" */
    mcdc_lsn start_lsn;     /* min_lsn: 0x00.. until capture processed the enable */
    mcdc_lsn enable_lsn;    /* the start_lsn the enable recorded (sp_cdc_help_change_data_capture),
                               also before capture processed it; 0x00.. when not known */
    int64_t  create_ts_us;  /* when it was enabled, UTC */
} mcdc_capture_instance;

/** A DDL history entry (cdc.ddl_history). */
typedef struct mcdc_ddl_entry {
    mcdc_lsn ddl_lsn;
    int64_t  ddl_time_us;   /* UTC */
    char    *ddl_command;   /* the statement text */
    char    *column_name;   /* the column it changed, or NULL */
} mcdc_ddl_entry;

/** What one grouped query over a source table computes (key_buckets). */
typedef struct mcdc_key_bucket_spec {
    int                version;  /* 1 */
    const char *const *keys;     /* key columns (captured column names), >= 1 */
    size_t             n_keys;
    bool               by_hash;  /* false: by the ordinal of a single integer or date key
                                    (rows with a NULL key are left out); true: by the key
                                    hash of mcdc/keyhash.h (every row) */
    int64_t            origin;   /* by ordinal: bucket = floor((ordinal - origin) / width) */
    int64_t            width;    /* by ordinal: >= 1, or 0 for one bucket 0 over the table;
                                    by hash: the number of buckets (>= 1), bucket =
                                    hash % width */
} mcdc_key_bucket_spec;

/** One bucket of a grouped query: its rows, the sum of their ordinals or key hashes and,
 *  by ordinal, the smallest and largest ordinal. */
typedef struct mcdc_key_bucket {
    int64_t     bucket;
    int64_t     n_rows;
    mcdc_int128 key_sum;
    int64_t     key_min, key_max; /* by ordinal only */
} mcdc_key_bucket;

/** Which database a source reads (the identity bronze records, so that tables of different
 *  databases are never mixed: docs/decisions/0039-source-identity.md). Never a password
 *  or a connection string. */
typedef struct mcdc_source_identity {
    char server[256];       /* @@SERVERNAME ("mssql-cdc-sim" for the simulator) */
    char database[256];     /* DB_NAME() (the simulator: its file's stem, as sim serve names it) */
    char database_guid[40]; /* sys.database_recovery_status.database_guid, lower-case
                               8-4-4-4-12 hex; "" when the login cannot see it (it needs
                               VIEW ANY DATABASE or ownership of the database) */
} mcdc_source_identity;

/** The isolation of a snapshot read of the source table. */
typedef enum {
    MCDC_ISOLATION_SOURCE = 0,         /* as the source was opened (odbc: isolationLevel=) */
    MCDC_ISOLATION_READ_COMMITTED = 1, /* READ COMMITTED */
    MCDC_ISOLATION_SNAPSHOT = 2        /* SNAPSHOT (ALLOW_SNAPSHOT_ISOLATION ON) */
} mcdc_isolation;

/** What one mcdc_source_positions call asks (MCDC_POS_* bits in ask). */
enum {
    MCDC_POS_MAX    = 1 << 0, /* max_lsn */
    MCDC_POS_MAX_TS = 1 << 1, /* and its commit time, unless max_lsn is known_max */
    MCDC_POS_MIN    = 1 << 2, /* min_lsn of ci */
    MCDC_POS_MIN_TS = 1 << 3, /* and its commit time, unless min_lsn is known_min */
    MCDC_POS_AT     = 1 << 4, /* the commit times of at[0..n_at) */
    MCDC_POS_NTH    = 1 << 5, /* nth_commit_after(nth_after, nth_n) */
    MCDC_POS_NOW    = 1 << 6  /* the source's clock */
};
#define MCDC_POS_MAX_AT 4

/** Several position questions of a stream batch, answered in one round trip
 *  (mcdc_source_positions). A commit time is "known" (has_*) only when a mapping entry has
 *  that LSN; the zero LSN has none and is never looked up. */
typedef struct mcdc_positions {
    unsigned    ask;                    /* MCDC_POS_* */
    const char *ci;                     /* MCDC_POS_MIN */
    bool        has_known_max, has_known_min;
    mcdc_lsn    known_max, known_min;   /* commit times the caller holds already */
    mcdc_lsn    at[MCDC_POS_MAX_AT];    /* MCDC_POS_AT */
    int         n_at;
    mcdc_lsn    nth_after;              /* MCDC_POS_NTH */
    int64_t     nth_n;
    /* answers */
    mcdc_lsn    max_lsn, min_lsn;
    bool        has_max_ts, has_min_ts; /* false too when not looked up (known) */
    int64_t     max_ts_us, min_ts_us;
    bool        has_at_ts[MCDC_POS_MAX_AT];
    int64_t     at_ts_us[MCDC_POS_MAX_AT];
    mcdc_lsn    nth;                    /* as nth_commit_after */
    int64_t     nth_ts_us, nth_found;
    bool        has_now;                /* false when the source could not tell its clock */
    int64_t     now_us;
} mcdc_positions;

/** The operations of a source. Every function returns 0 or a negative mcdc_error_code
 *  and records the reason (MCDC_ESOURCE for a refusal of the source, MCDC_ENOTFOUND for
 *  an unknown capture instance). */
typedef struct mcdc_source_ops {
    /** sys.fn_cdc_get_max_lsn(): the highest LSN capture has processed (zero when none). */
    int (*max_lsn)(mcdc_source *src, mcdc_lsn *out);
    /** sys.fn_cdc_get_min_lsn(ci): the lowest LSN still available for @p ci. */
    int (*min_lsn)(mcdc_source *src, const char *ci, mcdc_lsn *out);
    /** UTC commit time of the commit at @p lsn (from cdc.lsn_time_mapping).
     *  MCDC_ENOTFOUND when no mapping entry has that start_lsn. */
    int (*lsn_to_commit_ts)(mcdc_source *src, const mcdc_lsn *lsn, int64_t *out_us);
    /** The n-th commit (mapping entry, idle ones included) after @p after, or the last one
     *  when fewer exist (*found = number of commits seen, 0 when none). */
    int (*nth_commit_after)(mcdc_source *src, const mcdc_lsn *after, int64_t n, mcdc_lsn *out,
                            int64_t *out_commit_ts_us, int64_t *found);
    /** The source's clock, UTC microseconds (SYSUTCDATETIME(), the simulator's clock). */
    int (*server_now)(mcdc_source *src, int64_t *out_us);
    /** Capture instances of a source table ("dbo.orders"), oldest first; with @p table
     *  NULL, those of every table (table by table). Caller frees with
     *  mcdc_capture_instances_free. */
    int (*capture_instances)(mcdc_source *src, const char *table, mcdc_capture_instance **out,
                             size_t *n_out);
    /** The captured columns of @p ci as a schema (types mapped as anchor-features §8);
     *  caller frees with mcdc_schema_free. */
    int (*captured_columns)(mcdc_source *src, const char *ci, mcdc_schema **out);
    /** The key columns of @p ci's unique index, in index order; caller frees each name and
     *  the array with free(). */
    int (*key_columns)(mcdc_source *src, const char *ci, char ***out, size_t *n_out);
    /** DDL history entries of @p ci with after < ddl_lsn <= upto; caller frees with
     *  mcdc_ddl_entries_free. */
    int (*ddl_history)(mcdc_source *src, const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                       mcdc_ddl_entry **out, size_t *n_out);
    /** Stream the changes of @p ci with after < start_lsn <= upto, in order, to @p cb.
     *  A non-zero return from cb stops the read and is returned unchanged. */
    int (*read_changes)(mcdc_source *src, const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                        mcdc_change_cb cb, void *payload);
    /** Stream the current rows of @p ci's source table (captured columns), ordered by key.
     *  @p key_lo / @p key_hi: NULL for the whole table (key ranges are for backfill); a range
     *  is half-open, key_lo <= key < key_hi, values in key_columns() order. */
    int (*snapshot)(mcdc_source *src, const char *ci, const mcdc_value *key_lo, const mcdc_value *key_hi,
                    mcdc_row_cb cb, void *payload);
    /** The server's time zone as an IANA name ("UTC", "America/New_York"). Borrowed. */
    const char *(*server_time_zone)(mcdc_source *src);
    /** Release everything. */
    void (*close)(mcdc_source *src);
    /** Keyset planning of a chunked snapshot: call @p cb once with the key (values in
     *  key_columns() order, borrowed during the call) of the row @p n places after
     *  @p from in key order, @p from included (NULL: from the first key, or with
     *  @p descending the last); no call when fewer rows remain. n = 0 with @p from NULL
     *  is the smallest (largest) key. The source's equivalent of SELECT keys ... WHERE
     *  key >= @from ORDER BY key OFFSET n ROWS FETCH NEXT 1 ROWS ONLY. Cost: one seek and
     *  n index entries. NULL when the source cannot plan chunks. */
    int (*key_at)(mcdc_source *src, const char *ci, const mcdc_value *from, int64_t n, bool descending,
                  mcdc_row_cb cb, void *payload);
    /** Grid planning: the number of rows with key_lo <= key < key_hi (NULL: open), as
     *  snapshot() would read them. NULL when the source cannot plan chunks. */
    int (*key_count)(mcdc_source *src, const char *ci, const mcdc_value *key_lo, const mcdc_value *key_hi,
                     int64_t *out);
    /** Tier 1 of reconcile: count and sum per bucket over @p ci's source table, read-only,
     *  in one grouped query (T-SQL: COUNT_BIG and SUM(CAST(... AS decimal(38,0))) GROUP
     *  BY the bucket expression; never NOLOCK). Buckets come back in bucket order, empty
     *  ones left out; caller frees *out with free(). NULL in a source that does not
     *  implement it yet (callers refuse with MCDC_EUNSUPPORTED).
     *  @return 0; MCDC_ENOTFOUND for an unknown instance or key column; MCDC_EINVAL for a
     *          key without the ordinal or text asked for; MCDC_ESOURCE. */
    int (*key_buckets)(mcdc_source *src, const char *ci, const mcdc_key_bucket_spec *spec,
                       mcdc_key_bucket **out, size_t *n_out);
    /** The largest commit LSN at or before the source's clock now (T-SQL:
     *  fn_cdc_map_time_to_lsn('largest less than or equal', SYSDATETIME())), zero when
     *  no commit is mapped yet. Asked right after a snapshot read: a row read may be newer
     *  than the LSN stamped before it, never newer than this. NULL in a source that does
     *  not implement it (callers record no consistent_lsn). */
    int (*consistent_lsn)(mcdc_source *src, mcdc_lsn *out);
    /** The warnings the source raised since the last call (one line of text each, e.g. the
     *  server's UTC offset differs from the one its zone gives), oldest first; the caller
     *  frees each string and the array with free(). The stream puts them in the batch's
     *  facts row (detail {"warnings": [...]}). NULL in a source that never has any. */
    int (*take_warnings)(mcdc_source *src, char ***out, size_t *n_out);
    /** The isolation level (MCDC_ISOLATION_SOURCE: the source's own setting) and lock
     *  timeout (milliseconds, 0 fails at once; -1: the source's own) of the snapshot reads
     *  of the source table (snapshot(), key_at, key_count) from now on. NULL in a source
     *  that has no such setting.
     *  @return 0; MCDC_EINVAL when a value contradicts one the source was opened with (the
     *          connection string's isolationLevel or lockTimeoutMs) or cannot be honoured by
     *          the source (the message says why), nothing changed. */
    int (*snapshot_reads)(mcdc_source *src, mcdc_isolation isolation, int64_t lock_timeout_ms);
    /** The largest commit LSN at or before UTC time @p utc_us (T-SQL:
     *  fn_cdc_map_time_to_lsn('largest less than or equal', <that time on the server's
     *  clock>)), zero when no commit that old is mapped. NULL in a source that cannot. */
    int (*time_to_lsn)(mcdc_source *src, int64_t utc_us, mcdc_lsn *out);
    /** Optional: the questions of @p q (MCDC_POS_* in q->ask) in one round trip, answers
     *  as the single operations would give them (a missing mapping entry is no error:
     *  its has_* is false). NULL: mcdc_source_positions asks them one by one. */
    int (*positions)(mcdc_source *src, mcdc_positions *q);
    /** The source's identity: server name, database name and database GUID (T-SQL:
     *  @@SERVERNAME, DB_NAME() and database_guid of sys.database_recovery_status for
     *  DB_ID()). The simulator's GUID is made at `sim init` and kept in its file. NULL in a
     *  source that cannot tell (the stream then records and checks no identity). */
    int (*identity)(mcdc_source *src, mcdc_source_identity *out);
    /** The last commit (mapping entry, idle ones included) at or before @p lsn that capture
     *  has processed, into @p out and its UTC commit time into @p out_commit_ts_us (T-SQL:
     *  the TOP (1) cdc.lsn_time_mapping entry with start_lsn <= lsn, newest first). What a
     *  DDL LSN, which is no commit's, is timed by (its schema_change facts row).
     *  MCDC_ENOTFOUND when there is none. NULL in a source that cannot tell (the row then
     *  has no commit time). */
    int (*commit_at_or_before)(mcdc_source *src, const mcdc_lsn *lsn, mcdc_lsn *out,
                               int64_t *out_commit_ts_us);
    /** How the source orders each key column of @p ci, in key_columns() order (as
     *  snapshot(), key_at and key_count compare keys): one mcdc_key_order per column into
     *  @p *out (caller frees with free()). What lets a reader of bronze tell which chunk
     *  of a keyset plan holds a key. NULL in a source that cannot tell (a SQL Server
     *  character column's order is its collation's). */
    int (*key_orders)(mcdc_source *src, const char *ci, mcdc_key_order **out, size_t *n_out);
} mcdc_source_ops;

/** A selection of captured columns (--columns); see mcdc_source_select_columns. */
typedef struct mcdc_column_select mcdc_column_select;

/** The base of every source; implementations embed it first. */
struct mcdc_source {
    const mcdc_source_ops *ops;
    char *description; /* e.g. "sim:/tmp/db.sqlite" or the odbc string with the password masked */
    const mcdc_column_select *select; /* set by mcdc_source_select_columns on the source it
                                         wraps (NULL: every column); borrowed from the wrapper.
                                         A source may leave out the columns it does not name
                                         before mapping their types. */
    int num_partitions;               /* set by mcdc_source_set_partitions (0: one) */
};

/** Open a source from its text form: "sim:PATH", "odbc:CONNECTION-STRING" or "@FILE" (the
 *  first line of FILE). @return 0; MCDC_EINVAL for an unknown scheme or a bad connection
 *  string (the message shows the string with its password masked); MCDC_ENOTFOUND for a
 *  missing simulator database or ODBC driver; MCDC_ESOURCE when SQL Server cannot be
 *  reached or refuses the login (see mcdc_mssql_source_open). */
int mcdc_source_open(mcdc_source **out, const char *spec);
/** Close a source; accepts NULL. */
void mcdc_source_close(mcdc_source *src);

/** `--option numPartitions=N`: read each batch's range over N connections at once, in LSN
 *  ranges that end on commits (about as many change rows each, at least a page), delivered
 *  in LSN order. The SQL Server source does; the simulator reads one range whatever N. Set
 *  it before mcdc_source_select_columns. @return 0; MCDC_EINVAL for N outside 1..64. */
int mcdc_source_set_partitions(mcdc_source *src, int n);

/** Select or retype captured columns (`--columns`, `--option columns=`): @p spec is
 *  "name [TYPE], name [TYPE], ..." with Spark/Delta type names (boolean, tinyint, smallint,
 *  int, bigint, float, double, decimal(p,s), string, binary, date, timestamp,
 *  timestamp_ntz; Delta's byte, short, integer, long too), names as captured (any case,
 *  `backticks` for names with spaces or commas). Replaces @p *src by a source that shows
 *  only those columns, in that order, for every capture instance, and forwards everything
 *  else to the one it wraps (which it owns and closes). A TYPE other than the captured
 *  column's type converts each value: to a wider integer, to double (from an integer up to
 *  int, or from float), to a decimal that holds every value (integer digits and scale at
 *  least the source's), date to timestamp_ntz, or anything to string (its text as `table
 *  cat` prints it). A key column keeps its type. The names and types are checked against
 *  each capture instance when its columns are first asked for (captured_columns), before a
 *  stream writes anything: an unknown name or a conversion that could lose values is
 *  MCDC_EINVAL listing the captured columns. A column the selection leaves out is never
 *  read: SQL Server's unmapped types (sql_variant, geography, ...) are no obstacle then.
 *  @return 0; MCDC_EINVAL for a malformed @p spec (*src unchanged); MCDC_ENOMEM. */
int mcdc_source_select_columns(mcdc_source **src, const char *spec);

/** Answer @p q (see mcdc_positions): through the source's positions op in one round trip,
 *  or, when it has none, through max_lsn, min_lsn, lsn_to_commit_ts, nth_commit_after and
 *  server_now, one by one. @return 0 or the first error of a question (a server_now that
 *  fails only leaves has_now false). */
int mcdc_source_positions(mcdc_source *src, mcdc_positions *q);

/** Why @p src lists no capture instance named @p ci, when the source can tell: SQL Server
 *  hides an instance from a login that can read its change table but not its source table,
 *  which its captured_columns reports as MCDC_ESOURCE. Asked only after a listing missed the
 *  name (one round trip more, on that path alone). @return MCDC_ESOURCE with the error set
 *  (a permission to grant, exit 3); 0 with no error left when the source knows nothing more
 *  (the caller reports the name as unknown). */
int mcdc_source_why_missing(mcdc_source *src, const char *ci);
/** The same through the single operations of @p src, one question at a time (what a
 *  source's positions op may build on when its questions cost no round trip). */
int mcdc_source_positions_each(mcdc_source *src, mcdc_positions *q);

void mcdc_capture_instances_free(mcdc_capture_instance *a, size_t n);
void mcdc_ddl_entries_free(mcdc_ddl_entry *a, size_t n);

#ifdef __cplusplus
}
#endif
#endif
