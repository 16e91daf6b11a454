/*
 * mcdc/sim.h: the embedded SQL Server CDC simulator.
 *
 * A simulator database is one SQLite file holding source tables, change tables, the
 * commit log (cdc.lsn_time_mapping) and a virtual clock. It runs a T-SQL subset (INSERT,
 * UPDATE, DELETE; ALTER TABLE ADD/DROP/ALTER COLUMN) in atomic transactions, captures
 * committed transactions in scans, cleans up by retention, and is read through the source
 * interface (mcdc_sim_source_open, or mcdc_source_open("sim:PATH")). What it reproduces and
 * what it does not: docs/guides/simulator.md.
 *
 * Caveats:
 * - One writer process at a time (SQLite's write lock, with a busy timeout); any number of
 *   readers. A handle is used by one thread at a time.
 * - Times are UTC microseconds. MCDC_SIM_NOW means "the host's clock, or the simulator's
 *   clock when that is ahead"; MCDC_SIM_CLOCK "the simulator's clock, unmoved". An explicit
 *   time before the simulator's clock is refused.
 * - Every write call is one SQLite transaction: it fails whole, leaving the file unchanged.
 */
#ifndef MCDC_SIM_H
#define MCDC_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/error.h"
#include "mcdc/lsn.h"
#include "mcdc/source.h"
#include "mcdc/value.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcdc_sim mcdc_sim;

/** "Now": the host's clock, or the simulator's clock when it is ahead. */
#define MCDC_SIM_NOW INT64_MIN
/** The simulator's clock as it stands: a call at this time does not move it (a capture
 *  scan without --at, which must not jump a scripted history to the host's date). */
#define MCDC_SIM_CLOCK (INT64_MIN + 1)

/** Open a simulator database. With @p create, a missing file is created (its zone is
 *  @p time_zone, NULL for UTC); otherwise a missing file is MCDC_ENOTFOUND.
 *  @return 0; MCDC_ENOTFOUND; MCDC_ECORRUPT for a file that is not a simulator database;
 *  MCDC_EINVAL for a zone that differs from the database's; MCDC_EIO. */
int mcdc_sim_open(mcdc_sim **out, const char *path, bool create, const char *time_zone);
/** Open read-only (for queries and status). */
int mcdc_sim_open_readonly(mcdc_sim **out, const char *path);
/** Close; accepts NULL. */
void mcdc_sim_close(mcdc_sim *sim);

/** Create a table and enable CDC on it (capture instance @p ci, default schema_table).
 *  @p columns: "name TYPE [NULL|NOT NULL], ..."; @p keys: comma-separated key columns.
 *  @return 0; MCDC_EINVAL for a bad schema, type or key; MCDC_EEXISTS for a table that exists. */
int mcdc_sim_create_table(mcdc_sim *sim, const char *table, const char *columns, const char *keys,
                          const char *ci, int64_t at_us);

/** `sim init`: open the database at @p path, creating it when absent (zone @p time_zone,
 *  NULL for UTC), then, when @p table is not NULL, create that table with CDC enabled as
 *  mcdc_sim_create_table() does. All or nothing: when any step fails and the file did not
 *  exist before, no file is left behind (a retry starts afresh, with any zone); an
 *  existing database is left unchanged.
 *  @param[out] out  the open database, or NULL on failure; close with mcdc_sim_close().
 *  @return 0; the codes of mcdc_sim_open() and mcdc_sim_create_table(). */
int mcdc_sim_init(mcdc_sim **out, const char *path, const char *time_zone, const char *table,
                  const char *columns, const char *keys, const char *ci, int64_t at_us);

/** What one transaction did. */
typedef struct mcdc_sim_exec_result {
    mcdc_lsn commit_lsn;  /* zero when nothing was logged for CDC */
    int64_t  n_rows;      /* source rows inserted, updated or deleted */
    int64_t  n_changes;   /* change rows written over all capture instances */
    int64_t  commit_us;   /* the commit time (UTC) */
} mcdc_sim_exec_result;

/** Run statements separated by ';' as one transaction begun at @p begin_us (MCDC_SIM_NOW:
 *  at the commit time) and committed at @p at_us. A failing statement changes nothing.
 *  @return 0; MCDC_EINVAL for a statement SQL Server refuses (its message and number) or one
 *  the simulator does not run; MCDC_ENOTFOUND for an unknown table. */
int mcdc_sim_exec(mcdc_sim *sim, const char *sql, int64_t begin_us, int64_t at_us,
                  mcdc_sim_exec_result *out);

/** Capture scan settings. */
typedef struct mcdc_sim_capture_options {
    int     max_trans;      /* transactions per scan (default 500) */
    int     max_scans;      /* scans in this call (default 1; the capture job's cycle is 10) */
    int64_t idle_after_us;  /* idle entry when nothing was found and this long passed since the
                               last mapping entry (default 5 minutes; <0 never) */
} mcdc_sim_capture_options;
#define MCDC_SIM_CAPTURE_OPTIONS_INIT { 500, 1, 5 * 60 * INT64_C(1000000) }

typedef struct mcdc_sim_capture_result {
    int64_t  n_trans;   /* commits processed (transactions, enables and DDL) */
    int64_t  n_scans;   /* scans that processed something */
    bool     idle;      /* an idle entry was written */
    mcdc_lsn max_lsn;   /* sys.fn_cdc_get_max_lsn() after the call */
    int64_t  pending;   /* committed transactions still waiting for a scan */
} mcdc_sim_capture_result;

/** Run capture scans at @p at_us (MCDC_SIM_CLOCK: at the simulator's clock, which then does
 *  not move). @p opts NULL for the defaults. */
int mcdc_sim_capture(mcdc_sim *sim, int64_t at_us, const mcdc_sim_capture_options *opts,
                     mcdc_sim_capture_result *out);
/** Write an idle mapping entry (tran_id 0x00) at @p at_us, as capture does on a quiet
 *  database. @return 0; MCDC_EINVAL while committed transactions wait for a scan. */
int mcdc_sim_idle(mcdc_sim *sim, int64_t at_us, mcdc_lsn *out);

typedef struct mcdc_sim_cleanup_result {
    mcdc_lsn low_water;      /* the new start_lsn (zero when nothing was old enough) */
    int64_t  n_change_rows;  /* change rows deleted */
    int64_t  n_mapping_rows; /* mapping entries deleted */
    bool     done;           /* every batch ran */
} mcdc_sim_cleanup_result;

/** Cleanup by retention: move every capture instance's start_lsn to the low water mark
 *  (max tran_end_time - retention, lowered to the first entry of its commit time), then delete
 *  change rows and mapping entries below it in batches of @p threshold rows (0: 5000), at most
 *  @p max_batches of them (<0: all; 0: only move start_lsn). Each batch is its own transaction,
 *  so readers see the new min_lsn and the rows not yet deleted. Calling again finishes. */
int mcdc_sim_cleanup(mcdc_sim *sim, int64_t retention_us, int64_t at_us, int64_t threshold,
                     int64_t max_batches, mcdc_sim_cleanup_result *out);

typedef struct mcdc_sim_rewind_result {
    mcdc_lsn max_lsn;        /* max_lsn after the rewind */
    int64_t  n_change_rows;  /* change rows dropped (every instance) */
    int64_t  n_mapping_rows; /* log entries dropped: commits, idle entries */
    int64_t  n_source_rows;  /* source-table row changes undone */
} mcdc_sim_rewind_result;

/** The database as a restore to @p to leaves it (a restore from backup, a failover to a
 *  lagging replica): change rows and log entries after @p to are dropped, source tables'
 *  rows go back to their state at @p to (through the capture instance capturing the most
 *  columns; columns no instance captures keep their values), capture's progress moves
 *  back to @p to. One transaction. The clock and LSN allocation keep going forward.
 *  @return 0; MCDC_EINVAL, nothing changed, when an instance was enabled or a table
 *          altered after @p to, or @p to is below an instance's start_lsn (cleaned up). */
int mcdc_sim_rewind(mcdc_sim *sim, const mcdc_lsn *to, mcdc_sim_rewind_result *out);

/** Enable a capture instance on @p table (at most two per table). */
int mcdc_sim_enable(mcdc_sim *sim, const char *table, const char *ci, int64_t at_us);
/** mcdc_sim_enable capturing only the columns of @p columns (comma-separated names, as
 *  sp_cdc_enable_table's @captured_column_list; NULL: every column). An unknown name is
 *  MCDC_EINVAL. */
int mcdc_sim_enable_columns(mcdc_sim *sim, const char *table, const char *ci, const char *columns,
                            int64_t at_us);
/** Disable a capture instance: its change table and DDL history are gone at once. */
int mcdc_sim_disable(mcdc_sim *sim, const char *ci, int64_t at_us);
/** Run ALTER TABLE t ADD c TYPE | DROP COLUMN c | ALTER COLUMN c TYPE, with DDL history. */
int mcdc_sim_ddl(mcdc_sim *sim, const char *sql, int64_t at_us);

/** A deterministic synthetic workload. */
typedef struct mcdc_sim_workload_options {
    const char *table;          /* "dbo.orders" */
    int64_t     transactions;   /* how many */
    uint64_t    seed;
    int64_t     start_us;       /* first commit time (MCDC_SIM_NOW: the simulator's clock) */
    int64_t     interval_us;    /* between commits (default 10 ms) */
    int         pct_insert, pct_update, pct_delete; /* the mix, summing to 100 */
    int         rows_per_transaction;               /* changes per transaction (default 1) */
    int64_t     capture_every_us; /* a capture cycle (10 scans of 500) this often; <0 never */
    bool        realtime;       /* commit each transaction when the host clock reaches it */
    int64_t     heartbeat_every_us; /* > 0: the heartbeat (mcdc_sim_heartbeat_setup) beats
                                       this often among the transactions; 0: none */
} mcdc_sim_workload_options;
#define MCDC_SIM_WORKLOAD_OPTIONS_INIT \
    { NULL, 0, 1, MCDC_SIM_NOW, 10000, 60, 30, 10, 1, 5 * INT64_C(1000000), false, 0 }

typedef struct mcdc_sim_workload_result {
    int64_t n_transactions, n_inserts, n_updates, n_deletes, n_changes, n_scans;
    int64_t n_beats;     /* heartbeat beats among them (not counted in n_transactions) */
    int64_t end_us;      /* the last commit time */
    int64_t elapsed_us;  /* host time taken */
    int64_t pending;     /* commits still waiting for a capture scan at the end (0 unless
                            capture_every_us < 0) */
} mcdc_sim_workload_result;

/** Run a workload. Deterministic for a seed, a start and the database's prior state (not
 *  with realtime, whose commit times follow the host clock). With capture cycles, it ends
 *  with a capture of every commit still waiting, so all of them are visible when it returns;
 *  without (capture_every_us < 0), out->pending says how many wait. Realtime workloads on
 *  one database at once share its clock: each commits at the later of its time and the
 *  clock. */
int mcdc_sim_workload(mcdc_sim *sim, const mcdc_sim_workload_options *opts, mcdc_sim_workload_result *out);

/** The optional heartbeat of sql/heartbeat.sql: the table dbo.cdc_heartbeat(id tinyint
 *  PK, beat_at datetime2(3)) with one row and CDC enabled (capture instance
 *  dbo_cdc_heartbeat), created at @p at_us when absent. Idempotent: a table, instance or row
 *  already there is kept. @p created (may be NULL) tells whether anything was made.
 *  @return 0; the codes of mcdc_sim_create_table() and mcdc_sim_enable(). */
int mcdc_sim_heartbeat_setup(mcdc_sim *sim, int64_t at_us, bool *created);

/** Heartbeat beats, as the script's Agent job runs them. Start from
 *  MCDC_SIM_HEARTBEAT_OPTIONS_INIT. */
typedef struct mcdc_sim_heartbeat_options {
    int64_t every_us; /* between beats (default 10 s) */
    int64_t beats;    /* how many (default 1) */
    int64_t start_us; /* first beat (MCDC_SIM_NOW: the clock + every, or now with realtime) */
    bool    realtime; /* beat when the host clock reaches each beat's time */
} mcdc_sim_heartbeat_options;
#define MCDC_SIM_HEARTBEAT_OPTIONS_INIT { 10 * INT64_C(1000000), 1, MCDC_SIM_NOW, false }

typedef struct mcdc_sim_heartbeat_result {
    bool     created;          /* the table or its instance was set up by this call */
    int64_t  n_beats;
    int64_t  first_us, last_us; /* commit times of the first and last beat */
    mcdc_lsn max_lsn;          /* after the last beat's capture scan */
} mcdc_sim_heartbeat_result;

/** Set the heartbeat up (mcdc_sim_heartbeat_setup, at the first beat's time) and beat:
 *  each beat updates the row (beat_at = its time, UTC) in its own transaction, then runs a
 *  capture cycle, so max_lsn is that commit after each beat (when the setup made the row,
 *  its INSERT is the first beat). @return 0; MCDC_EINVAL for bad options; as
 *  mcdc_sim_exec() and mcdc_sim_capture(). */
int mcdc_sim_heartbeat(mcdc_sim *sim, const mcdc_sim_heartbeat_options *opts,
                       mcdc_sim_heartbeat_result *out);

/** A query result row: column names and types (the value model), values. Borrowed. Called
 *  once with @p values NULL before the rows (the header: names are final, types of computed
 *  columns are settled per row). */
typedef int (*mcdc_sim_row_cb)(const mcdc_schema *schema, const mcdc_value *values, void *payload);

/** Run a read-only SELECT written with SQL Server's names (dbo.orders, cdc.dbo_orders_CT,
 *  cdc.lsn_time_mapping, cdc.change_tables, ...). Values come back typed as the columns they
 *  read (decimals exact, LSNs binary). @return 0; MCDC_EINVAL for a bad or writing query. */
int mcdc_sim_query(mcdc_sim *sim, const char *sql, mcdc_sim_row_cb cb, void *payload);

/** Per capture instance status. */
typedef struct mcdc_sim_instance_status {
    char    *name;
    char    *table;       /* "dbo.orders" */
    mcdc_lsn min_lsn;     /* sys.fn_cdc_get_min_lsn() */
    int64_t  change_rows; /* visible change rows */
    int64_t  source_rows;
} mcdc_sim_instance_status;

typedef struct mcdc_sim_status {
    mcdc_lsn max_lsn;
    int64_t  max_lsn_commit_us; /* UTC, 0 when max_lsn is zero */
    int64_t  clock_us;
    int64_t  pending;           /* committed, not yet scanned */
    char     time_zone[128];
    mcdc_sim_instance_status *inst;
    size_t   n_inst;
} mcdc_sim_status;

int  mcdc_sim_get_status(mcdc_sim *sim, mcdc_sim_status *out);
void mcdc_sim_status_dispose(mcdc_sim_status *st);

/** Create SQL login @p user with @p password (sim login add; sim serve --user). Only a salted
 *  hash of the password is stored. With @p if_missing, an existing login is left as it is.
 *  @return 0; MCDC_EINVAL for an empty or over-long name or password; MCDC_EEXISTS when the
 *  login exists (and not @p if_missing). */
int mcdc_sim_login_add(mcdc_sim *sim, const char *user, const char *password, bool if_missing);

/** Read a password from the first line of @p path (a trailing newline, or CR LF, is not part
 *  of it). @param[out] out the password, malloc'd; the caller clears and frees it.
 *  @return 0; MCDC_EINVAL for a missing file or an empty first line; MCDC_EIO. */
int mcdc_sim_password_file_read(char **out, const char *path);

/** Give login @p user SELECT on @p object ("dbo.orders", "cdc.dbo_orders_CT"). A login with
 *  grants reads only what it was granted; one without reads everything (db_owner).
 *  @return 0; MCDC_EINVAL for a bad name; MCDC_ENOTFOUND for an unknown login or object. */
int mcdc_sim_grant(mcdc_sim *sim, const char *user, const char *object);

/** Take back login @p user's SELECT on @p object (REVOKE SELECT ON object FROM user); the
 *  login's open sim serve sessions lose it at their next request. *@p had says whether the
 *  grant existed (a login left with no grant reads everything again, as one never granted).
 *  @return 0; MCDC_EINVAL for a bad name; MCDC_ENOTFOUND for an unknown login. */
int mcdc_sim_revoke(mcdc_sim *sim, const char *user, const char *object, bool *had);

/** Open the simulator at @p path as a source (what mcdc_source_open("sim:PATH") does).
 *  @return 0; MCDC_ENOTFOUND for a missing database. */
int mcdc_sim_source_open(mcdc_source **out, const char *path);

/** Test hook: read changes in pages of @p page_rows rows and call @p between_pages after each
 *  full page, before the next is read (a cleanup may run there). */
typedef void (*mcdc_sim_page_hook)(int page, void *payload);
int mcdc_sim_source_set_paging(mcdc_source *src, int64_t page_rows, mcdc_sim_page_hook between_pages,
                               void *payload);

/** Test hook: answer commit-time questions from the index kept between calls (@p enabled,
 *  the default; one index per database file in a process, shared by every source open on
 *  it; a source on the walk leaves it) or by the seeded walk, each question re-fed from the mapping entry 3 hours
 *  before it (the reference the index is checked against). @return 0; MCDC_EINVAL when
 *  @p src is not a simulator source. */
int mcdc_sim_source_set_commit_index(mcdc_source *src, bool enabled);

/** Test hook: how many mapping entries @p src has fed to a commit-time sequencer so far
 *  (-1 when @p src is not a simulator source). */
int64_t mcdc_sim_source_commit_entries_fed(const mcdc_source *src);

/** Test hook: how many times @p src's commit-time questions checked the ends of the index
 *  against the database (for a rewind or a cleanup); a question after no commit since the
 *  source's last check skips it (-1 when @p src is not a simulator source). */
int64_t mcdc_sim_source_commit_syncs(const mcdc_source *src);

/** Test hook: how many database pages @p src's connection has fetched so far (SQLite's page
 *  cache hits and misses), a measure of how much of the file its questions read (-1 when
 *  @p src is not a simulator source). The first call turns the connection's memory-mapped
 *  reads off, which SQLite does not count: call it once before the reads to measure. */
int64_t mcdc_sim_source_pages_fetched(const mcdc_source *src);

#ifdef __cplusplus
}
#endif
#endif
