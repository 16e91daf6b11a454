/*
 * pipeline/stream_int.h: what the stream engine's files share (internal).
 *
 * stream.c plans and runs batches; sink.c writes them (bronze data files and commits, the
 * facts rows, the tables' txn checks); bootstrap.c takes the first snapshot. All run on the
 * stream's one thread. Design: docs/architecture.md §3, §5.
 */
#ifndef MCDC_PIPELINE_STREAM_INT_H
#define MCDC_PIPELINE_STREAM_INT_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcdc/delta.h"
#include "mcdc/fs.h"
#include "mcdc/pipeline.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "pipeline/datafile.h"
#include "pipeline/rowpipe.h"

#define MAX_LISTENERS 8
#define LOGGER "stream"

/* One DDL the batch about to run crosses: its facts row (schema_change_plan). */
typedef struct ddl_event {
    mcdc_lsn lsn;     /* ddl_lsn */
    char    *detail;  /* the statement text, then what the stream did about it; owned */
    bool     has_ts;  /* commit_ts_us known */
    int64_t  commit_ts_us; /* UTC commit time of the last commit at or before lsn (a DDL
                              LSN is no commit's: anchor-features §2.5) */
} ddl_event;

struct mcdc_stream { /* one stream; its run state lives from mcdc_stream_run to its return */
    mcdc_stream_options o;        /* copied; strings borrowed from the caller */
    struct { mcdc_stream_listener_fn fn; void *payload; } listeners[MAX_LISTENERS];
    int n_listeners;
    volatile sig_atomic_t stop;   /* set by mcdc_stream_stop (signal handlers) */
    char run_id[40];
    char stream_id[40];

    /* state of one run, owned by mcdc_stream_run */
    mcdc_checkpoint *ck;
    mcdc_schema *captured;        /* the capture instance's columns */
    mcdc_schema *bronze_schema;   /* what data files are written with */
    int         *bronze_map;      /* per bronze column: BCOL_* or a captured index */
    bool         bronze_exists;
    int64_t      bronze_txn;      /* bronze's txn version for app_id, -1 none */
    mcdc_schema *facts_schema;
    char        *facts_app_id;    /* app_id#facts */
    int          progress_fd;     /* --progress file, -1 none */
    bool         has_last;        /* last committed offset known */
    mcdc_offset  last_end;
    int64_t      last_batch;      /* last committed batch id, -1 none */
    bool         has_latest;
    mcdc_offset  latest;          /* max_lsn seen last */
    bool         has_plan_min;    /* plan_min was read by the plan of the batch about to run */
    mcdc_lsn     plan_min;
    bool         has_watermark;   /* min_lsn last seen after a read, with its commit time */
    mcdc_offset  watermark;
    bool         has_fresh_max;   /* fresh_max was just read and not used by a plan yet */
    mcdc_lsn     fresh_max;
    int64_t      plan_ms;         /* the batch's planning time (latestOffset), for its event */
    int64_t      wal_ms;          /* the time to record offsets/N (walCommit): its wait
                                   * after the read, which the write overlaps */
    mcdc_checkpoint_pending *pending; /* offsets/N being written while batch N is read */
    mcdc_stream_result *res;      /* the caller's, during mcdc_stream_run */

    /* what mcdc_stream_check found (reads only) and mcdc_stream_open locked */
    bool         checked;         /* mcdc_stream_check passed */
    bool         opened;          /* mcdc_stream_open passed: ck is held */
    bool         keep_open;       /* mcdc_stream_keep_open: a successful run keeps ck and
                                     what the checks found */
    bool         prepared;        /* prepare_writes done in this opening (a kept run) */
    mcdc_schema *bronze_widened;  /* bronze's columns (their types in bronze) that the run
                                     widens in bronze_schema; NULL none */
    mcdc_schema *bronze_missing;  /* captured columns bronze lacks: in bronze_schema, added
                                     to bronze by the first commit of rows */
    char         family[256];     /* this stream's owner name (mcdc_stream_family) */
    bool         has_snap_consistent; /* a full bootstrap's read recorded its consistent_lsn */
    mcdc_lsn     snap_consistent;     /* it: the newest commit at or before the server's clock after the read */
    char         source_table[300]; /* "dbo.orders": the capture instance's source table */
    bool         own_record;      /* bronze lacks kind, source table, owner or source
                                     identity: record them */
    bool         identity_read;   /* identity holds what the source told (source_identity.c) */
    bool         has_identity;    /* the source told one */
    mcdc_source_identity identity;
    bool         has_recorded_owner;
    char         recorded_owner[256]; /* bronze's mcdc.owner when the check read it */
    int64_t      first_batch;     /* a new checkpoint's first batch: 0, or --adopt's */
    bool         adopt_planned;   /* --adopt: adopt_after and first_batch are known */
    mcdc_offset  adopt_after;     /* where the adopted stream resumes */
    char         adopt_from[256]; /* the owner the table is taken from ("" none known) */

    /* re-snapshot generations (generation.c, resnapshot.c): o.app_id and o.checkpoint are
     * the live generation's, set by mcdc_stream_check from the generation file */
    const char  *base_app_id;     /* the app id as given (borrowed from the caller) */
    const char  *base_checkpoint; /* the checkpoint as given */
    mcdc_generation gen;          /* the live generation */
    char         gen_app_id[256];
    char         gen_checkpoint[MCDC_PATH_MAX];
    bool         has_loss;        /* the last MCDC_EDATALOSS was found at loss_after */
    mcdc_offset  loss_after;      /* the last offset read before the gap */
    mcdc_lsn     loss_min;        /* min_lsn that showed the gap */

    /* capture-instance switch (ci_switch.c) */
    char         ci[256];         /* the instance the batch about to run reads: the configured
                                     one, from a newer instance's start LSN on that one (a
                                     configured instance that was disabled: the newest of
                                     its source table) */
    char        *switch_detail;   /* the capture_instance_switched row of batch switch_batch:
                                     "old -> new" and the columns no longer captured; owned */
    int64_t      switch_batch;    /* -1 none */
    mcdc_lsn     switch_lsn;      /* S, the newer instance's start LSN */

    /* schema changes (schema_change.c): what the plan of batch ddl_batch found */
    ddl_event   *ddl;             /* n_ddl entries, owned; NULL none */
    size_t       n_ddl;
    int64_t      ddl_batch;       /* the batch they belong to; -1 none planned */
};

enum { /* bronze column sources (negative; >= 0 is a captured column index) */
    BCOL_CI = -1, BCOL_START = -2, BCOL_SEQVAL = -3, BCOL_OP = -4, BCOL_CMD = -5,
    BCOL_COMMIT_TS = -6, BCOL_BATCH = -7, BCOL_SNAPSHOT = -8, BCOL_CHUNK = -9, BCOL_NULL = -10
};


/* ---- facts rows ---------------------------------------------------------------------- */

#define MAX_DDL_ROWS 8   /* schema_change rows of one batch; more DDL shares the last */
#define MAX_FACTS_ROWS (4 + MAX_DDL_ROWS + 1) /* a batch row and its event rows (a skip
                            planned, found before and found after the read; the start of a
                            stream at latest; DDL; a capture-instance switch) */
typedef struct facts_rows {
    mcdc_value v[MAX_FACTS_ROWS][MCDC_FACTS_N_COLUMNS];
    char text[MAX_FACTS_ROWS][3][MCDC_TIME_STRLEN]; /* LSN texts the values borrow */
    char *detail[MAX_FACTS_ROWS];                    /* malloc'd detail text */
    int n;                                           /* rows used */
} facts_rows;

/* What a batch measured beyond its facts. */
typedef struct batch_metrics {
    int64_t started_at_us;     /* host clock */
    int64_t duration_ms;       /* to the end of the bronze write; -1 unknown */
    double  read_seconds;      /* < 0 unknown */
    double  read_mb;           /* < 0 unknown */
    bool    has_watermark;
    int64_t watermark_ts_us;   /* commit time of min_lsn after the read */
    bool    has_source_max;
    int64_t source_max_ts_us;  /* commit time of max_lsn after the read */
    bool    has_server_now;
    int64_t server_now_us;     /* the source's clock after the read */
    char   *detail;            /* {"warnings": [...]} the source raised, or NULL; owned */
} batch_metrics;

/* ---- reading rows into a bronze data file ---------------------------------------------- */

/* One read (a batch's changes or the bootstrap snapshot) going into one data file. */
typedef struct read_ctx {
    mcdc_stream      *s;
    mcdc_datafile    *df;        /* opened at the first row: no file for an empty batch */
    mcdc_rowpipe     *pipe;      /* hands rows to the thread that encodes df (with df) */
    mcdc_batch_facts  facts;
    int64_t           batch_id;  /* -1 for snapshot rows */
    const mcdc_lsn   *snapshot;  /* S for snapshot rows, NULL for changes */
    const mcdc_lsn   *stamp;     /* chunked snapshot rows: their wave's L (_start_lsn), else NULL */
    bool              has_chunk; /* chunked snapshot rows: _chunk = chunk */
    bool              range_rows;   /* a partial backfill's rows: _snapshot NULL (no snapshot's) */
    int64_t           chunk;
    int64_t           snapshot_ts_us;
    bool              has_snapshot_ts;
    double            bytes;     /* size of the values read */
    char              start_text[MCDC_LSN_STRLEN], seq_text[MCDC_LSN_STRLEN];
    mcdc_lsn          start_of_text; /* the change LSN start_text holds (start_is_text) */
    bool              start_is_text;
    char              snap_text[MCDC_LSN_STRLEN];
} read_ctx;

/* ---- stream.c ------------------------------------------------------------------------ */

/* "0x" + 20 hex of @p l into @p buf; returns buf. */
char *mcdc_stream__lsn_text(char buf[MCDC_LSN_STRLEN], const mcdc_lsn *l);
/* @p lsn and its commit time (has_commit_ts false when the source maps none). */
int mcdc_stream__offset_at(mcdc_stream *s, const mcdc_lsn *lsn, mcdc_offset *o);
/* While capture has not processed the capture instance's enable (min_lsn 0x00), the LSN
 * just before the instance's start into @p out (*found true): a stream or a snapshot that
 * starts there reads from the instance's first change. */
int mcdc_stream__before_instance_start(mcdc_stream *s, mcdc_lsn *out, bool *found);
/* sys.fn_cdc_get_max_lsn(). */
int mcdc_stream__max_lsn(mcdc_stream *s, mcdc_lsn *out);

/* ---- sink.c ---------------------------------------------------------------------------- */

/* The txn version of @p app_id in the table at @p path (-1: none, or no table); with
 * @p keep, the snapshot read (caller frees). */
int mcdc_stream__table_txn(const char *path, const char *app_id, int64_t *out, bool *exists,
                           mcdc_delta_snapshot **keep);
/* userMetadata (malloc'd, or NULL) and version of the commit that recorded
 * txn{app_id, version}; *out_version -1 when no commit in the log has it. */
int mcdc_stream__find_commit_metadata(const char *path, const char *app_id, int64_t version,
                                      char **out, int64_t *out_version);
/* Create the table unless it exists (configuration mcdc.kind, mcdc.schema_version and
 * the entries of @p extra, which may be NULL). */
int mcdc_stream__ensure_table(const char *path, const mcdc_schema *schema, const char *kind,
                              const char *version, const mcdc_delta_map *extra);
/* Bronze's write schema and column map, reading only: captured columns bronze lacks go
 * to s->bronze_missing (a type change is refused with MCDC_ESCHEMA). */
int mcdc_stream__prepare_bronze(mcdc_stream *s);
/* The `adopted` event row: this checkpoint's first batch @p first_batch resumes after
 * @p after, taken over from @p from_owner; txn{app_id#adopt, first_batch}. */
int mcdc_stream__write_adopted_event(mcdc_stream *s, const mcdc_offset *after,
                                     int64_t first_batch, const char *from_owner);
void mcdc_stream__facts_rows_clear(facts_rows *f);
/* Fill slot 0 with the batch's row. */
/* The retention headroom of a batch, in hours rounded to 0.01 (facts column
 * retention_headroom_hours): its end's commit time minus min_lsn's after the read. False
 * when either is unknown. */
bool mcdc_stream__headroom_hours(double *out, const batch_metrics *m, const mcdc_batch_range *r,
                                 const mcdc_batch_facts *bf);
void mcdc_stream__set_batch_row(facts_rows *f, mcdc_stream *s, int64_t batch_id,
                                const mcdc_batch_facts *bf, const mcdc_batch_range *r,
                                const batch_metrics *m);
/* Append a data_skipped row: changes from..to of batch @p batch_id are gone. */
int mcdc_stream__add_skip_row(facts_rows *f, mcdc_stream *s, int64_t batch_id,
                              const mcdc_lsn *from, const mcdc_lsn *to,
                              const mcdc_batch_range *r, bool certain);
/* Append the stream_started event row of batch @p batch_id, whose range (L, L] records
 * where a stream started at latest begins. */
int mcdc_stream__add_start_row(facts_rows *f, mcdc_stream *s, int64_t batch_id,
                               const mcdc_batch_range *r);
/* Append an event row @p event of batch @p batch_id at @p at with text @p detail (copied). */
int mcdc_stream__add_text_event_row(facts_rows *f, mcdc_stream *s, int64_t batch_id,
                                    const char *event, const mcdc_offset *at, const char *detail);
/* Write the rows as one facts commit with txn{app_id, version} (already committed: 0,
 * *out_version -1). */
int mcdc_stream__write_facts(mcdc_stream *s, facts_rows *f, const char *app_id,
                             int64_t version, int64_t *out_version);
/* Finish @p df (facts rows added to it; taken) and append it to the facts table with
 * txn {app_id, version} as @p operation; a txn already committed removes the file and
 * is success. @p out_version (or NULL): the commit's version, -1 for a replay. */
int mcdc_stream__commit_facts_file(mcdc_stream *s, mcdc_datafile *df, const char *operation,
                                   const char *app_id, int64_t version, int64_t *out_version);
/* The bootstrap event row, txn{app_id#events, 0}. */
int mcdc_stream__write_bootstrap_event(mcdc_stream *s, const mcdc_offset *S, int64_t rows,
                                       bool rows_known, int64_t started_at_us,
                                       int64_t duration_ms);
int mcdc_stream__read_init(read_ctx *x, mcdc_stream *s);
void mcdc_stream__read_dispose(read_ctx *x);
/* Source callbacks: one change / one snapshot row into the data file. */
int mcdc_stream__on_change(const mcdc_change *ch, void *payload);
int mcdc_stream__on_snapshot_row(const mcdc_value *values, void *payload);
/* Finish x's data file and append it to bronze with txn{app_id, version}; *out_version
 * -1 when it was found already committed (the file is then removed). With @p r (a
 * batch), a commit found already there must record r's range (then *out_version is its
 * version; MCDC_ECONFLICT if not), and bronze's txn must still be s->bronze_txn
 * (MCDC_ECONFLICT when another writer committed a batch of the app_id meanwhile). */
int mcdc_stream__commit_bronze(mcdc_stream *s, read_ctx *x, const char *app_id,
                               int64_t version, const char *user_metadata,
                               const char *operation, const mcdc_batch_range *r,
                               int64_t *out_version);
/* 0 when bronze commit @p bronze_version (userMetadata @p um, NULL when gone) records
 * batch r's range or none; MCDC_ECONFLICT naming both ranges otherwise. */
int mcdc_stream__check_bronze_range(mcdc_stream *s, const mcdc_batch_range *r, const char *um,
                                    int64_t bronze_version);

/* ---- owner.c ------------------------------------------------------------------------ */

/* The capture instance at the source, and its source table into s->source_table; an
 * unknown one is refused (MCDC_EINVAL) naming those that exist. */
int mcdc_stream__find_capture_instance(mcdc_stream *s);
/* Refuse a target of another kind, source table or owner (O1, O2), or a new checkpoint
 * (@p new_checkpoint) of a sibling generation that does not say where it starts (O2b);
 * with --adopt and @p plan_adopt, find where to resume (O4). Reads only. */
int mcdc_stream__check_target(mcdc_stream *s, bool plan_adopt, bool new_checkpoint);
/* Bronze's configuration keys for a new table: kind, source table, owner. */
int mcdc_stream__bronze_config(mcdc_delta_map *m, mcdc_stream *s);
/* Record bronze's kind, source table and owner when it lacks them (O2), or, with
 * @p adopted_from (not NULL), take ownership from that owner (O4). */
int mcdc_stream__own_target(mcdc_stream *s, const char *adopted_from);
/* ---- source_identity.c ---------------------------------------------------------------- */

/* Ask the source its identity once (s->identity; none from a source that cannot tell). */
int mcdc_stream__read_identity(mcdc_stream *s);
/* Refuse (MCDC_EINVAL) a bronze that records another source's identity; one without any
 * is accepted and marked for stamping (s->own_record). Reads only. */
int mcdc_stream__check_identity(mcdc_stream *s, const mcdc_delta_snapshot *snap);
/* The identity keys of bronze's configuration (nothing when the source told none). */
int mcdc_stream__identity_config(mcdc_delta_map *m, const mcdc_stream *s);

/* Whether bronze's recorded owner is no longer this stream's family (O3). */
bool mcdc_stream__owner_changed(mcdc_stream *s);
/* The error of a bronze commit refused because the table changed owner (O3). */
int mcdc_stream__owner_lost(mcdc_stream *s);

/* ---- ci_switch.c ---------------------------------------------------------------------- */

/* The capture instance batch @p batch_id reads, from its start (after): the newest instance
 * of the stream's chain (the configured one and newer ones of its source table) whose start
 * LSN S is at or below increment(after); *upto is cut to decrement(S') of the next newer
 * one, so a batch never straddles a switch. When that instance is not the one s->ci had,
 * the stream switches: its captured columns replace s->captured (MCDC_ESCHEMA at S when
 * it lacks a key column of the old one or has a type the stream cannot hold), bronze's
 * write schema is prepared again, and the batch gets a capture_instance_switched row.
 * Reads only (capture_instances, and captured_columns and key_columns on a switch). */
int mcdc_stream__plan_instance(mcdc_stream *s, const mcdc_lsn *after, mcdc_lsn *upto,
                               int64_t batch_id);
/* Add the capture_instance_switched row of batch @p batch_id, if it switched. */
int mcdc_stream__add_switch_row(facts_rows *f, mcdc_stream *s, int64_t batch_id);
/* Forget a planned switch row. */
void mcdc_stream__switch_clear(mcdc_stream *s);
/* Resolve the configured capture instance into s->ci and s->source_table: itself, or, when
 * it was disabled, the newest instance of bronze's recorded source table. MCDC_ENOTFOUND
 * (message set) when neither exists. */
int mcdc_stream__resolve_instance(mcdc_stream *s);

/* ---- switch_snapshot.c ---------------------------------------------------------------- */

/* --snapshot-on-switch: when the target's newest capture_instance_switched row has no
 * whole-table partial backfill at or past its S yet, read the table again through s->ci
 * (mcdc_backfill_run with the range null..null), on this thread. Nothing without the
 * option or facts. */
int mcdc_stream__snapshot_on_switch(mcdc_stream *s);

/* ---- schema_change.c ----------------------------------------------------------------- */

/* Whether values of type @p from fit a column of type @p to without loss (the widening
 * rule, anchor-features §1): the same type, or a widening. */
bool mcdc_stream__type_holds(const mcdc_column *from, const mcdc_column *to);
/* The column a DDL statement names after ADD, DROP COLUMN or ALTER COLUMN (brackets and
 * quotes removed) into @p out, "" when none: SQL Server's DDL history gives only the
 * statement. */
void mcdc_stream__ddl_column(char out[130], const char *ddl);
/* Before batch @p batch_id reads (after, upto]: the DDL history of the capture instance
 * in that range (one question), and when there is some, its captured columns (one more).
 * --schema-change fail: any DDL is MCDC_ESCHEMA. classify: a captured type the stream's
 * type cannot hold is MCDC_ESCHEMA; otherwise s->captured takes the new columns, bronze's
 * write schema is prepared again (new columns, widened types: evolved in the batch's
 * commit) and the DDL is kept for the batch's schema_change rows. Writes nothing. */
int mcdc_stream__plan_ddl(mcdc_stream *s, const mcdc_lsn *after, const mcdc_lsn *upto,
                          int64_t batch_id);
/* Add the schema_change rows of batch @p batch_id (planned by mcdc_stream__plan_ddl). */
int mcdc_stream__add_ddl_rows(facts_rows *f, mcdc_stream *s, int64_t batch_id);
/* Make @p now (taken on success) the stream's captured columns and prepare bronze's write
 * schema and map again (reads only); on failure nothing changes and @p now is the caller's. */
int mcdc_stream__take_columns(mcdc_stream *s, mcdc_schema *now);
/* Forget what mcdc_stream__plan_ddl found. */
void mcdc_stream__ddl_clear(mcdc_stream *s);
/* Add the hint to a bronze commit refused by MCDC_ESCHEMA (no type widening). */
void mcdc_stream__schema_hint(mcdc_stream *s);

/* ---- bootstrap.c --------------------------------------------------------------------- */

/* Take (or find) the bootstrap snapshot; *S gets its offset. */
int mcdc_stream__bootstrap(mcdc_stream *s, mcdc_offset *S);

/* ---- resnapshot.c ---------------------------------------------------------------------- */

/* After a data loss found at s->loss_after (--on-data-loss resnapshot): refuse a second
 * one inside --resnapshot-interval (MCDC_EDATALOSS naming it), else record generation
 * n+1 with the gap in the checkpoint's generation file. */
int mcdc_stream__next_generation(mcdc_stream *s);
/* The gap of the live generation into a facts row's lost_from_ts, lost_to_ts and
 * retention_watermark_ts columns (nothing for generation 0). */
void mcdc_stream__set_gap_columns(const mcdc_stream *s, mcdc_value *row);
/* "<base app id><suffix>" into @p out: the key of a generation-versioned txn. */
int mcdc_stream__base_key(char *out, size_t cap, const mcdc_stream *s, const char *suffix);
/* The snapshot_open detail's kind, generation and gap fields added to @p detail. */
int mcdc_stream__open_detail_gap(const mcdc_stream *s, json_t *detail);

/* ---- snapshot_open.c ------------------------------------------------------------------ */

/* --bootstrap-mode chunked: open a chunked snapshot (or find the open one); *S gets its
 * offset. Needs facts. */
int mcdc_stream__snapshot_open(mcdc_stream *s, mcdc_offset *S);
/* MCDC_EINVAL while a chunked snapshot of the stream family is open (a full bootstrap is
 * refused then). */
int mcdc_stream__check_no_chunked_open(mcdc_stream *s);

#endif
