/*
 * mcdc/run.h: the run layer: one table's job (its stream, its finalization tracker and its
 * silver follower, wired by the stream's progress events), and the supervisor that runs
 * the jobs of a config file.
 *
 * A job is what `mssql-cdc stream` runs and what `mssql-cdc run --config` runs once per
 * table: the stream publishes progress; the tracker and the follower subscribe to it. The
 * job validates every input before the first write (the stream's, the control table's,
 * silver's and its keys), then takes the checkpoint, seeds the tracker from it and starts
 * the follower before anything is read. Callers (the CLI) only parse, call and print.
 */
#ifndef MCDC_RUN_H
#define MCDC_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/fs.h"
#include "mcdc/log.h"
#include "mcdc/options.h"
#include "mcdc/pipeline.h"
#include "mcdc/backfill.h"
#include "mcdc/silver.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "mcdc/warehouse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- One table's job (job.c) ----------------------------------------------------------- */

/** Options of a job. Start from MCDC_JOB_OPTIONS_INIT. Strings are borrowed and must
 *  outlive the job. */
typedef struct mcdc_job_options {
    int                 version;       /* 1 */
    mcdc_stream_options stream;        /* the stream's options (source open, paths resolved);
                                        * run_id NULL: the job makes one */
    const char         *source_time_zone; /* sourceTimeZone as given, or NULL ("auto") */
    const char         *control;       /* control table name as given, or NULL */
    const char         *control_path;  /* its directory (with control) */
    mcdc_granularity    granularity;   /* verdict period; default hour */
    const char         *silver;        /* silver table name as given, or NULL (needs control) */
    const char         *silver_path;   /* its directory (with silver) */
    const char         *keys;          /* "k1,k2" or NULL: the capture instance's unique index */
    mcdc_source        *backfill_source; /* stream --backfill: a second connection to the
                                        * source for the open chunked snapshot's waves, run
                                        * after each batch (needs the facts table); NULL none */
} mcdc_job_options;

#define MCDC_JOB_OPTIONS_INIT                                                               \
    { 1, MCDC_STREAM_OPTIONS_INIT, NULL, NULL, NULL, MCDC_GRAN_HOUR, NULL, NULL, NULL, NULL }

/** What a job's end reports about its tracker and follower (mcdc_job_verdict,
 *  mcdc_job_finish_silver). */
typedef struct mcdc_job_silver_result {
    mcdc_silver_apply_result last;  /* the last apply's result */
    uint64_t                 n_applies;
} mcdc_job_silver_result;

typedef struct mcdc_job mcdc_job;

/** Prepare a job (nothing is opened or read). @p opts is copied (strings borrowed).
 *  @return 0; MCDC_EINVAL (silver without control); MCDC_ENOMEM; codes of
 *  mcdc_stream_new. */
int mcdc_job_new(mcdc_job **out, const mcdc_job_options *opts);

/** Validate everything before the first write, reading only: the source's time zone
 *  against sourceTimeZone, the stream (mcdc_stream_check), the control table, silver and
 *  its keys (from the options or the capture instance's unique index, which they must
 *  equal when it has one).
 *  @return 0; MCDC_EINVAL naming what to fix; codes of the checks. */
int mcdc_job_check(mcdc_job *j);

/** stream --backfill: run the waves the open chunked snapshot has left (the follower ran
 *  one after each batch), then stop its thread. Call after mcdc_job_run, before
 *  mcdc_job_finish_silver (whose last apply then sees the snapshot complete).
 *  @param[out] has_backfill whether the job had one; @param[out] st its last status;
 *  @param[out] n_waves waves it ran. @return 0; the first failed wave's code. */
int mcdc_job_finish_backfill(mcdc_job *j, bool *has_backfill, mcdc_backfill_status *st, int64_t *n_waves);

/** Add a listener of the stream's progress (printing, metrics). Listeners added before
 *  mcdc_job_open run before the tracker and follower see the event.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_job_add_listener(mcdc_job *j, mcdc_stream_listener_fn fn, void *payload);

/** mcdc_job_check when not called, then take the checkpoint (creating it when new: the
 *  first write), create or check the control table and start the tracker seeded from the
 *  checkpoint's last committed offset, and start the silver follower.
 *  @return 0; codes of mcdc_stream_open, mcdc_control_track, mcdc_silver_follower_start. */
int mcdc_job_open(mcdc_job *j);

/** Run the stream until its trigger ends or mcdc_job_stop. On an error the follower and
 *  the tracker are stopped (what they had is kept) and the stream's error is the one
 *  recorded.
 *  @return 0; the stream's codes. */
int mcdc_job_run(mcdc_job *j, mcdc_stream_result *result);

/** Stop the run after the batch in flight. Async-signal-safe; thread-safe. */
void mcdc_job_stop(mcdc_job *j);

/** Keep the job open across runs (@p keep true): after a successful mcdc_job_run (with its
 *  mcdc_job_verdict and mcdc_job_finish_silver) the stream stays open (checkpoint lock and
 *  checks kept, mcdc_stream_keep_open) and the next mcdc_job_run starts a new tracker
 *  (seeded from the checkpoint) and follower, then goes on planning. The job's own checks
 *  (the source's time zone, the control table, silver and its keys) are not redone either:
 *  a time zone is the server's setting, a table's kind is fixed at its creation and silver's
 *  keys are those of its capture instance, whose changes each batch's plan sees. A failed
 *  run releases everything and the next one checks again. */
void mcdc_job_keep_open(mcdc_job *j, bool keep);

/** Read from @p src from the next run on (another connection to the same source). */
void mcdc_job_set_source(mcdc_job *j, mcdc_source *src);

/** After mcdc_job_run: wait for the tracker to write what is left and report the verdict.
 *  @param[out] has_tracker  false without a control table (then nothing else is set).
 *  @return 0; MCDC_EIO when the last verdict could not be written (the data is committed;
 *          the verdict lags). */
int mcdc_job_verdict(mcdc_job *j, bool *has_tracker, mcdc_verdict *out);

/** After mcdc_job_verdict: apply silver once more (so it follows the last verdict) and stop
 *  the follower.
 *  @param[out] has_silver  false without silver (then @p out is not set).
 *  @return 0; the apply's code, its message prefixed with the silver table. */
int mcdc_job_finish_silver(mcdc_job *j, bool *has_silver, mcdc_job_silver_result *out);

/** The job's run id (its stream's), valid for the job's life. */
const char *mcdc_job_run_id(const mcdc_job *j);

/** Stop what runs and free; NULL is a no-op. Does not close the source. */
void mcdc_job_free(mcdc_job *j);


/* ---- A config file of many tables (config.c, plan.c) ------------------------------------ */

/** The settings a table (or `defaults:`) may give, in the order of the config reference. */
typedef enum {
    MCDC_RUN_KEY_SOURCE = 0, MCDC_RUN_KEY_CAPTURE_INSTANCE, MCDC_RUN_KEY_TARGET,
    MCDC_RUN_KEY_APP_ID, MCDC_RUN_KEY_CHECKPOINT, MCDC_RUN_KEY_FACTS, MCDC_RUN_KEY_CONTROL,
    MCDC_RUN_KEY_SILVER, MCDC_RUN_KEY_KEYS, MCDC_RUN_KEY_TRIGGER, MCDC_RUN_KEY_GRANULARITY,
    MCDC_RUN_KEY_STARTING_LSN, MCDC_RUN_KEY_MAX_COMMITS_PER_BATCH, MCDC_RUN_KEY_BOOTSTRAP,
    MCDC_RUN_KEY_BOOTSTRAP_MODE, MCDC_RUN_KEY_ON_DATA_LOSS, MCDC_RUN_KEY_RESNAPSHOT_INTERVAL,
    MCDC_RUN_KEY_SNAPSHOT_ON_SWITCH, MCDC_RUN_KEY_LEASE, MCDC_RUN_NKEYS
} mcdc_run_key;

/** A table entry of the config as written (or its defaults): values NULL when not given;
 *  line numbers are 1-based. */
typedef struct mcdc_run_entry {
    char   *value[MCDC_RUN_NKEYS];
    int     key_line[MCDC_RUN_NKEYS];
    char  **include, **exclude;      /* patterns (fnmatch) over capture instance names */
    size_t  n_include, n_exclude;
    char  **options;                 /* "KEY=VALUE" source options */
    size_t  n_options;
    int     options_line;
    int     line;                    /* where the entry starts */
} mcdc_run_entry;

/** A named source of the config. */
typedef struct mcdc_run_source {
    char *name;
    char *spec;                      /* sim:PATH, odbc:..., @FILE (paths resolved) */
    int   line;
} mcdc_run_source;

/** A config file, parsed and checked for its shape (keys, types), nothing opened. */
/** A set of tables whose consistent cut the run keeps in the control table
 *  (`consistent:` in the config): after a round of one of them, the newest LSN at which
 *  every one is complete (mcdc_finalize_cut) moves the control row `consistent:NAME`
 *  forward, never back, so a consumer can gate a join of those tables on one row. */
typedef struct mcdc_run_consistent {
    char   *name;    /* the set's name; its control row is "consistent:<name>" */
    char  **targets; /* the tables' targets, as the tables name them */
    size_t  n_targets;
    int     line;
} mcdc_run_consistent;

typedef struct mcdc_run_config {
    char            *path;           /* the file as given */
    char            *dir;            /* its directory: relative paths resolve against it */
    char            *warehouse;      /* `warehouse:` resolved, or NULL */
    mcdc_run_source *sources;
    size_t           n_sources;
    mcdc_run_entry   defaults;
    mcdc_run_entry  *entries;
    size_t           n_entries;
    char            *metrics_listen; /* `metrics: {listen: HOST:PORT}`, or NULL */
    char            *state_dir;      /* `state_dir:` resolved; default run-state beside the
                                      * config: where a run records each table's state */
    bool             stop_all;       /* `on_error: stop-all` */
    mcdc_run_consistent *consistent; /* `consistent: {NAME: [target, ...]}` */
    size_t           n_consistent;
} mcdc_run_config;

/** Parse the YAML config at @p path (format: docs/guides/operating.md).
 *  @return 0; MCDC_EINVAL naming the file, the line and the key for an unknown key, a
 *  wrong type, a missing required key or a YAML syntax error; MCDC_ENOTFOUND; MCDC_EIO. */
int mcdc_run_config_load(mcdc_run_config **out, const char *path);

/** Free; NULL is a no-op. */
void mcdc_run_config_free(mcdc_run_config *c);

/** One table of the plan: every setting resolved (templates expanded, defaults applied,
 *  paths resolved against the config's directory and the warehouse). */
typedef struct mcdc_run_table {
    size_t source;                   /* index into the config's sources */
    char  *value[MCDC_RUN_NKEYS];    /* as for the entry; names kept as given */
    char  *target_path, *facts_path, *control_path, *silver_path, *checkpoint_path;
    char **options;
    size_t n_options;
    int    line;                     /* the entry it comes from */
} mcdc_run_table;

/** The tables a config runs. */
typedef struct mcdc_run_plan {
    const mcdc_run_config *config;   /* borrowed */
    char                  *warehouse;
    mcdc_run_table        *tables;
    size_t                 n_tables;
    size_t                 n_consistent;       /* the config's consistent sets */
    char                 **consistent_control; /* per set: its tables' control table */
    char                 **consistent_facts;   /* ...and their facts table */
} mcdc_run_plan;

/** Expand @p c into its tables: every source is opened to list its capture instances
 *  (include/exclude patterns; the heartbeat's instance is left out unless named; an
 *  explicit table wins over an include of the same instance), templates `{ci}`, `{schema}`
 *  and `{table}` are filled, defaults applied, and names resolved in @p warehouse (the
 *  config's `warehouse:` when NULL, else "./lake"). Two tables with one target or one
 *  checkpoint are refused. Reads only.
 *  @return 0; MCDC_EINVAL naming the line and key; the source's codes (unreachable: 3). */
int mcdc_run_plan_make(mcdc_run_plan **out, const mcdc_run_config *c, const char *warehouse);

/** Check every table of @p p as its job would before the first write (mcdc_job_check),
 *  reading only. @p report, when not NULL, is called once per table with its result
 *  (rc 0 or the code, the error recorded).
 *  @return 0 when every table passes; else the first failure's code. */
int mcdc_run_plan_check(const mcdc_run_plan *p,
                        void (*report)(const mcdc_run_table *t, int rc, void *payload),
                        void *payload);

/** Free; NULL is a no-op. */
void mcdc_run_plan_free(mcdc_run_plan *p);

/* ---- Running the tables of a plan (supervisor.c) ----------------------------------------- */

/** What a table is doing. */
typedef enum {
    MCDC_RUN_STATE_RUNNING = 0, MCDC_RUN_STATE_IDLE, MCDC_RUN_STATE_BACKOFF,
    MCDC_RUN_STATE_ERROR, MCDC_RUN_STATE_STOPPED
} mcdc_run_state;

/** The name of a state ("running", "idle", "backoff", "error", "stopped"). */
const char *mcdc_run_state_name(mcdc_run_state s);

/** Events of the supervisor, for printing: a committed batch (progress set), a failure that
 *  will be retried or that stopped the table (rc, the error recorded on the calling thread),
 *  and a table's end (verdict set when it has a control table). Called from worker threads,
 *  one call at a time. */
typedef struct mcdc_run_event {
    enum { MCDC_RUN_EVENT_BATCH = 1, MCDC_RUN_EVENT_RETRY, MCDC_RUN_EVENT_ERROR,
           MCDC_RUN_EVENT_DONE } kind;
    const mcdc_run_table       *table;
    const mcdc_stream_progress *progress;  /* BATCH */
    int                         rc;        /* RETRY, ERROR */
    int64_t                     retry_in_us; /* RETRY */
    bool                        has_verdict; /* DONE */
    mcdc_verdict                verdict;     /* DONE */
} mcdc_run_event;

/** Options of a run. Start from MCDC_RUN_OPTIONS_INIT. */
typedef struct mcdc_run_options {
    int     version;          /* 1 */
    int     workers;          /* worker threads; 0: the number of cores */
    int64_t drain_timeout_us; /* after mcdc_run_stop: how long the batches in flight get */
    int64_t backoff_min_us;   /* first retry delay (doubles, capped at backoff_max_us) */
    int64_t backoff_max_us;
    void  (*on_event)(const mcdc_run_event *e, void *payload);
    void   *payload;
    const char *metrics_listen; /* HOST:PORT: serve /metrics, /healthz, /readyz; NULL: none */
    /* after mcdc_run_reload: the new plan, checked (mcdc_run_plan_check), which must live
     * until mcdc_run_plan_run returns; < 0 (the error recorded) keeps the tables as they
     * are. Called on the thread of mcdc_run_plan_run with @p payload. NULL: no reload. */
    int   (*reload)(const mcdc_run_plan **out, void *payload);
} mcdc_run_options;

#define MCDC_RUN_OPTIONS_INIT { 1, 0, 30000000, 1000000, 60000000, NULL, NULL, NULL, NULL }

/** The end of a run, per table: its final state and, for an error, its message. */
typedef struct mcdc_run_summary {
    size_t  n_tables, n_error;
    bool    drained;          /* false: the drain timeout passed with batches in flight */
    bool    stopped_all;      /* on_error: stop-all ended the run */
    int     first_error_rc;   /* the first table error's code (0 when none) */
} mcdc_run_summary;

/** Run every table of @p p on a pool of workers until each table's trigger ends (an
 *  interval trigger never ends) or mcdc_run_stop is called. Each table's job is checked
 *  before the first round; a round takes the checkpoint, starts the tracker and follower,
 *  runs the batches, writes the verdict and applies silver. An interval table's job is kept
 *  open across its successful rounds (checkpoint lock and checks kept, ADR 0043); a failed
 *  round frees it, and the next one checks and opens it again;
 *  an interval table polls every interval on its source's grid, and the tables of a source
 *  share one max_lsn query per poll: a table that has read up to it has no round. Under
 *  systemd (NOTIFY_SOCKET) it reports READY=1 once the workers run, STOPPING=1 and
 *  RELOADING=1, and pings WATCHDOG=1 at half of WATCHDOG_USEC. A failed
 *  round backs off (doubling, capped) and is retried; a data loss or schema change stops
 *  only that table (state error) unless the config says `on_error: stop-all`. Every table
 *  is checked before any writes (as mcdc_run_plan_check does, on the pool's connections).
 *  @return 0 (see @p out for tables in error and the drain); the check's codes. */
int mcdc_run_plan_run(const mcdc_run_plan *p, const mcdc_run_options *o, mcdc_run_summary *out);

/** Ask the running mcdc_run_plan_run to drain and return. Async-signal-safe. */
void mcdc_run_stop(void);

/** Ask the running mcdc_run_plan_run to take a new plan from its options' reload: the
 *  tables it adds start, those it drops (or whose settings changed) stop after their batch
 *  in flight and write their verdict, every other table goes on untouched. A refused
 *  reload (an invalid config) is logged and changes nothing. Async-signal-safe. */
void mcdc_run_reload(void);

/* ---- Metrics and health (metrics.c, http.c) --------------------------------------------- */

#define MCDC_RUN_DURATION_BUCKETS 10

/** What the metrics say of one table (a snapshot taken under the supervisor's lock). */
typedef struct mcdc_run_table_metrics {
    const char    *table;             /* the target as given (label table=) */
    const char    *source;            /* the source's name (label source=) */
    mcdc_run_state state;
    uint64_t       rows, batches;     /* since the process started */
    int            failures;          /* consecutive failed rounds */
    uint64_t       rounds_failed;     /* failed rounds since the process started */
    uint64_t       duration_buckets[MCDC_RUN_DURATION_BUCKETS]; /* batches per bucket (not cumulative) */
    double         duration_sum_s;
    bool           has_end_ts;        /* the last committed batch's end commit time */
    int64_t        end_ts_us;
    bool           has_latest_ts;     /* the newest commit time the source showed */
    int64_t        latest_ts_us;
    bool           has_verdict;
    int64_t        verdict_us;        /* finalized_until */
    bool           ready;             /* a successful round, and not stuck */
    const char    *message;           /* the last error ("" when none) */
    double         bytes;             /* bytes read from the source (facts read_mb x 1e6) */
    bool           has_headroom;      /* the last batch's retention headroom */
    double         headroom_hours;
} mcdc_run_table_metrics;

/** What the metrics say of one source of the config: the operations its connections
 *  asked (label query= the operation: max_lsn, read_changes, ...) and those that failed. */
typedef struct mcdc_run_source_metrics {
    const char            *source;      /* its name in the config (label source=) */
    size_t                 n_queries;
    const char *const     *query_names; /* n_queries names */
    const uint64_t        *queries;     /* n_queries counts */
    uint64_t               errors;
} mcdc_run_source_metrics;

/** The upper bounds (seconds) of the batch duration histogram's buckets. */
extern const double mcdc_run_duration_bounds[MCDC_RUN_DURATION_BUCKETS];

/** Append the Prometheus text exposition (format 0.0.4) of @p n tables, @p n_src
 *  sources, the process's uptime and resident memory to @p out.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_run_metrics_text(mcdc_buf *out, const mcdc_run_table_metrics *t, size_t n,
                          const mcdc_run_source_metrics *src, size_t n_src, int64_t now_us,
                          int64_t uptime_us);

/** An HTTP server of the metrics and health endpoints; each request calls @p fill for
 *  the body of a path ("/metrics", "/healthz", "/readyz"), which returns the status. */
typedef struct mcdc_run_http mcdc_run_http;
typedef int (*mcdc_run_http_fill_fn)(const char *path, mcdc_buf *body, void *payload);

/** Listen on @p listen ("HOST:PORT", numeric IPv4 host; port 0 for one the kernel picks)
 *  on a thread of its own, and log the address it listens on (info level).
 *  @return 0; MCDC_EINVAL for a bad address; MCDC_EIO when it cannot listen. */
int mcdc_run_http_start(mcdc_run_http **out, const char *listen, mcdc_run_http_fill_fn fill,
                        void *payload);

/** Stop and free; NULL is a no-op. */
void mcdc_run_http_stop(mcdc_run_http *h);

/* ---- Each table's state on disk (state.c) ------------------------------------------------ */

/** What a run records of a table in the config's state directory (one JSON file per
 *  table, replaced atomically at each change of state), and what `run --status` reads. */
typedef struct mcdc_run_table_state {
    char          *table;           /* the target as given */
    char          *capture_instance;
    char          *checkpoint;      /* its directory */
    char          *control;         /* name as given, or NULL */
    char          *control_path;    /* or NULL */
    mcdc_run_state state;
    char          *message;         /* the last error ("" when none) */
    int64_t        pid;             /* the process that wrote it */
    int64_t        updated_at_us;   /* host clock, UTC */
    int64_t        batches, rows;   /* committed by that process */
    int            failures;        /* consecutive failed rounds */
    bool           alive;           /* read_all: the process that wrote it still runs */
} mcdc_run_table_state;

/** Record @p st in @p dir (created when missing), atomically and durably.
 *  @return 0; MCDC_EIO. */
int mcdc_run_state_write(const char *dir, const mcdc_run_table_state *st);

/** Read every table's state recorded in @p dir, sorted by table.
 *  @param[out] out  free with mcdc_run_states_free().
 *  @return 0 (none when the directory does not exist); MCDC_ECORRUPT naming a file that
 *          is not a state record; MCDC_EIO. */
int mcdc_run_state_read_all(mcdc_run_table_state **out, size_t *n, const char *dir);

/** Free what mcdc_run_state_read_all returned. */
void mcdc_run_states_free(mcdc_run_table_state *a, size_t n);

#ifdef __cplusplus
}
#endif
#endif
