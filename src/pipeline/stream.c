/*
 * pipeline/stream.c: the stream engine: plan, record, read, commit, report, batch after
 * batch, exactly once.
 *
 * One batch, in this order (each step is a failpoint "stream.<step>" for crash tests):
 *
 *   plan       max_lsn (an idle poll stops here: one query), the batch limit through
 *              nth_commit_after, the data-loss guard on min_lsn
 *   record     offsets/N, durable                        -> after_offsets       (C1)
 *   read       (after, upto] streamed into one bronze data file, facts counted from
 *              the same rows (invariant 5)               -> mid_read (per row)
 *              min_lsn checked again (a purge between pages)
 *   file       footer, fsync, publish                    -> after_data_file
 *   bronze     append with txn{app_id, N} + userMetadata -> after_bronze_commit
 *              (a batch without rows: no file, no commit)
 *   facts      the batch row (+ event rows), txn{app_id#facts, N} -> after_facts
 *   commit     commits/N                                 -> before_commit       (C2)
 *   report     progress event to listeners and --progress
 *
 * Replay (invariant 2): an offsets/N without commits/N is run again with exactly its
 * recorded range. When bronze already holds N (its txn for app_id is N or more), nothing
 * is read: the facts row comes from bronze commit N's userMetadata. A batch without
 * rows has no bronze commit and is simply read again; the data-loss guard then applies.
 *
 * Checkpoint safety (invariant 8): the checkpoint lock; its metadata against the
 * arguments; bronze's txn for app_id (and facts' for app_id#facts) may not be above the
 * checkpoint's newest batch, or the checkpoint was deleted or rewound and the stream
 * refuses to run rather than let Delta silently skip its writes.
 *
 * Bootstrap: <checkpoint>/bootstrap records S = max_lsn before the table is read; the
 * snapshot goes to bronze with txn{app_id#snapshot, 0} and its event row to facts with
 * txn{app_id#events, 0}. A rerun that finds the snapshot reads nothing again.
 * Design: docs/architecture.md §3, §5, §6; docs/guides/streaming.md.
 */
#include "mcdc/pipeline.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/delta.h"
#include "mcdc/failpoint.h"
#include "mcdc/fs.h"
#include "mcdc/log.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "pipeline/datafile.h"

#define MAX_LISTENERS 8
#define LOGGER "stream"

struct mcdc_stream {
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
    mcdc_stream_result *res;
};

enum { /* bronze column sources (negative; >= 0 is a captured column index) */
    BCOL_CI = -1, BCOL_START = -2, BCOL_SEQVAL = -3, BCOL_OP = -4, BCOL_CMD = -5,
    BCOL_COMMIT_TS = -6, BCOL_BATCH = -7, BCOL_SNAPSHOT = -8, BCOL_CHUNK = -9, BCOL_NULL = -10
};

/* ---- parsing helpers ------------------------------------------------------------------- */

int mcdc_trigger_parse(mcdc_trigger *out, int64_t *interval_us, const char *s)
{
    *interval_us = 0;
    if (s && strcmp(s, "available-now") == 0) {
        *out = MCDC_TRIGGER_AVAILABLE_NOW;
        return 0;
    }
    if (s && strcmp(s, "once") == 0) {
        *out = MCDC_TRIGGER_ONCE;
        return 0;
    }
    if (s && strncmp(s, "interval:", 9) == 0) {
        int rc = mcdc_duration_parse(interval_us, s + 9);
        if (rc < 0)
            return rc;
        *out = MCDC_TRIGGER_INTERVAL;
        return 0;
    }
    mcdc_error_set(MCDC_EINVAL, "trigger '%s': not available-now, once or interval:DURATION",
                   s ? s : "");
    return mcdc_error_hint("for example --trigger interval:30s");
}

int mcdc_start_parse(mcdc_start_kind *out, mcdc_lsn *lsn, const char *s)
{
    if (s && strcmp(s, "earliest") == 0) {
        *out = MCDC_START_EARLIEST;
        return 0;
    }
    if (s && strcmp(s, "latest") == 0) {
        *out = MCDC_START_LATEST;
        return 0;
    }
    char buf[32];
    if (s && s[0] && strlen(s) <= 22) {
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
            snprintf(buf, sizeof buf, "%s", s);
        else
            snprintf(buf, sizeof buf, "0x%s", s);
        if (mcdc_lsn_parse(lsn, buf) == 0) {
            *out = MCDC_START_LSN;
            return 0;
        }
    }
    mcdc_error_set(MCDC_EINVAL, "starting LSN '%s': not earliest, latest or an LSN (up to 20 "
                   "hex digits)", s ? s : "");
    return mcdc_error_hint("for example --starting-lsn 0x0000002D000001A00003");
}

/* ---- small helpers ----------------------------------------------------------------------- */

static char *lsn_text(char buf[MCDC_LSN_STRLEN], const mcdc_lsn *l)
{
    return mcdc_lsn_format(buf, l);
}

/* The commit time of @p lsn into @p o (has_commit_ts false when the source maps none). */
static int offset_at(mcdc_stream *s, const mcdc_lsn *lsn, mcdc_offset *o)
{
    o->lsn = *lsn;
    o->has_commit_ts = false;
    o->commit_ts_us = 0;
    if (mcdc_lsn_is_zero(lsn))
        return 0;
    int rc = s->o.source->ops->lsn_to_commit_ts(s->o.source, lsn, &o->commit_ts_us);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    o->has_commit_ts = true;
    return 0;
}

static int src_max_lsn(mcdc_stream *s, mcdc_lsn *out)
{
    return s->o.source->ops->max_lsn(s->o.source, out);
}

static int src_min_lsn(mcdc_stream *s, mcdc_lsn *out)
{
    return s->o.source->ops->min_lsn(s->o.source, s->o.capture_instance, out);
}

static void emit(mcdc_stream *s, const mcdc_stream_progress *p)
{
    if (p->json && s->progress_fd >= 0) {
        size_t len = strlen(p->json);
        char *line = malloc(len + 2);
        if (line) {
            memcpy(line, p->json, len);
            line[len] = '\n';
            ssize_t w = write(s->progress_fd, line, len + 1); /* O_APPEND: one write per line */
            if (w != (ssize_t)(len + 1))
                mcdc_log(MCDC_LOG_WARN, LOGGER, "%s: progress event not written: %s",
                         s->o.progress_path, w < 0 ? strerror(errno) : "short write");
            free(line);
        }
    }
    for (int i = 0; i < s->n_listeners; i++)
        s->listeners[i].fn(p, s->listeners[i].payload);
}

/* The JSON of a progress event, like Spark's StreamingQueryProgress. */
static int progress_json(mcdc_buf *b, mcdc_stream *s, const mcdc_stream_progress *p,
                         int64_t plan_ms, int64_t wal_ms, int64_t add_ms, int64_t commit_ms)
{
    char ts[MCDC_TIME_STRLEN], o1[96], o2[96], o3[96];
    mcdc_time_format(ts, mcdc_time_now_us(), 3, true);
    double secs = p->duration_ms > 0 ? (double)p->duration_ms / 1000.0 : 0.0;
    double rate = secs > 0 ? (double)p->num_input_rows / secs : 0.0;
    int rc = mcdc_buf_printf(b, "{\"id\":\"%s\",\"runId\":\"%s\",\"name\":", s->stream_id,
                             s->run_id);
    if (rc == 0)
        rc = mcdc_json_quote(b, s->o.app_id, strlen(s->o.app_id));
    if (rc == 0)
        rc = mcdc_buf_printf(b, ",\"timestamp\":\"%s\",\"batchId\":%" PRId64
                                ",\"numInputRows\":%" PRId64 ",\"processedRowsPerSecond\":%.1f,"
                                "\"durationMs\":{\"latestOffset\":%" PRId64 ",\"walCommit\":%"
                                PRId64 ",\"addBatch\":%" PRId64 ",\"commitOffsets\":%" PRId64
                                ",\"triggerExecution\":%" PRId64 "},\"sources\":[{"
                                "\"description\":",
                             ts, p->batch_id, p->num_input_rows, rate, plan_ms, wal_ms, add_ms,
                             commit_ms, p->duration_ms);
    if (rc == 0) {
        char desc[256];
        snprintf(desc, sizeof desc, "mssql-cdc[%s]", s->o.capture_instance);
        rc = mcdc_json_quote(b, desc, strlen(desc));
    }
    if (rc == 0)
        rc = mcdc_buf_printf(b, ",\"startOffset\":%s,\"endOffset\":%s,\"latestOffset\":%s,"
                                "\"numInputRows\":%" PRId64 "}],\"sink\":{\"description\":",
                             p->has_end ? mcdc_offset_to_json(o1, sizeof o1, &p->start) : "null",
                             p->has_end ? mcdc_offset_to_json(o2, sizeof o2, &p->end) : "null",
                             p->has_latest ? mcdc_offset_to_json(o3, sizeof o3, &p->latest)
                                           : "null",
                             p->num_input_rows);
    if (rc == 0) {
        char desc[1024];
        snprintf(desc, sizeof desc, "DeltaSink[%s]", s->o.target);
        rc = mcdc_json_quote(b, desc, strlen(desc));
    }
    if (rc == 0)
        rc = mcdc_buf_printf(b, ",\"numOutputRows\":%" PRId64 "}}", p->num_input_rows);
    return rc;
}

/* ---- tables ------------------------------------------------------------------------------- */

/* The txn version of @p app_id in the table at @p path (-1 when none or no table). */
static int table_txn(const char *path, const char *app_id, int64_t *out, bool *exists,
                     mcdc_delta_snapshot **keep)
{
    *out = -1;
    if (exists)
        *exists = false;
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    if (exists)
        *exists = true;
    *out = mcdc_delta_snapshot_txn(snap, app_id);
    if (keep)
        *keep = snap;
    else
        mcdc_delta_snapshot_free(snap);
    return 0;
}

/* userMetadata of the commit that recorded txn{app_id, version}, or NULL (malloc'd). */
static int find_commit_metadata(const char *path, const char *app_id, int64_t version,
                                char **out, int64_t *out_version)
{
    *out = NULL;
    *out_version = -1;
    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    int rc = mcdc_delta_history(&h, &n, path);
    if (rc < 0)
        return rc;
    for (size_t i = n; i-- > 0 && *out_version < 0;) {
        for (size_t k = 0; k < h[i].n_txns; k++) {
            if (strcmp(h[i].txns[k].app_id, app_id) == 0 && h[i].txns[k].version == version) {
                *out_version = h[i].version;
                if (h[i].user_metadata && !(*out = strdup(h[i].user_metadata)))
                    rc = mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", path);
                break;
            }
        }
    }
    mcdc_delta_history_free(h, n);
    return rc;
}

static int table_config(mcdc_delta_map *m, const char *kind, const char *version)
{
    int rc = mcdc_delta_map_set(m, "mcdc.schema_version", version);
    if (rc == 0)
        rc = mcdc_delta_map_set(m, "mcdc.kind", kind);
    return rc;
}

/* Create the table at @p path unless it exists (a create that loses the race takes the
 * winner's table when its schema is the same). */
static int ensure_table(const char *path, const mcdc_schema *schema, const char *kind,
                        const char *version)
{
    int64_t v;
    if (mcdc_delta_latest_version(&v, path) == 0)
        return 0;
    mcdc_error_clear();
    mcdc_delta_map cfg = { 0 };
    int rc = table_config(&cfg, kind, version);
    if (rc == 0)
        rc = mcdc_fs_mkdirs(path);
    if (rc == 0)
        rc = mcdc_delta_create(path, schema, NULL, 0, &cfg, NULL);
    mcdc_delta_map_clear(&cfg);
    return rc;
}

/* Bronze's write schema and the map from its columns to where values come from. When
 * bronze exists its schema rules: captured columns it lacks are added first; columns it
 * has that are no longer captured are written NULL. */
static int prepare_bronze(mcdc_stream *s)
{
    mcdc_schema *want = NULL;
    int rc = mcdc_bronze_schema(&want, s->captured, s->o.include_command_id);
    if (rc < 0)
        return rc;
    mcdc_delta_snapshot *snap = NULL;
    rc = table_txn(s->o.target_path, s->o.app_id, &s->bronze_txn, &s->bronze_exists, &snap);
    if (rc < 0)
        goto done;
    if (s->bronze_exists) {
        mcdc_schema *have = NULL;
        if ((rc = mcdc_delta_schema_to_flat(&have, snap->schema)) < 0)
            goto done;
        mcdc_schema *missing = mcdc_schema_new();
        if (!missing) {
            mcdc_schema_free(have);
            rc = mcdc_error_set(MCDC_ENOMEM, "bronze schema: out of memory");
            goto done;
        }
        for (size_t i = 0; i < want->n_cols && rc == 0; i++) {
            const mcdc_column *w = &want->cols[i];
            int k = mcdc_schema_find(have, w->name);
            if (k < 0) {
                rc = mcdc_schema_add(missing, w->name, w->type, w->precision, w->scale, true);
                continue;
            }
            const mcdc_column *h = &have->cols[k];
            if (h->type != w->type || (w->type == MCDC_TYPE_DECIMAL &&
                                       (h->precision != w->precision || h->scale != w->scale))) {
                char a[64], b[64];
                rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s is %s in bronze but the "
                                    "capture instance %s gives %s", s->o.target, w->name,
                                    mcdc_type_name(a, sizeof a, h),
                                    s->o.capture_instance, mcdc_type_name(b, sizeof b, w));
                mcdc_error_hint("a type change needs a decision: write to a new target, or "
                                "change bronze's column type first");
            }
        }
        if (rc == 0 && missing->n_cols > 0) {
            mcdc_log(MCDC_LOG_INFO, LOGGER, "%s: adding %zu column(s) the capture instance "
                     "captures", s->o.target, missing->n_cols);
            rc = mcdc_delta_add_columns(s->o.target_path, missing, NULL);
            for (size_t i = 0; i < missing->n_cols && rc == 0; i++) {
                const mcdc_column *c = &missing->cols[i];
                rc = mcdc_schema_add(have, c->name, c->type, c->precision, c->scale, true);
            }
        }
        mcdc_schema_free(missing);
        if (rc < 0) {
            mcdc_schema_free(have);
            goto done;
        }
        s->bronze_schema = have;
    } else {
        s->bronze_schema = want;
        want = NULL;
    }
    s->bronze_map = calloc(s->bronze_schema->n_cols ? s->bronze_schema->n_cols : 1, sizeof(int));
    if (!s->bronze_map) {
        rc = mcdc_error_set(MCDC_ENOMEM, "bronze schema: out of memory");
        goto done;
    }
    static const struct { const char *name; int src; } meta[] = {
        { "_capture_instance", BCOL_CI }, { "_start_lsn", BCOL_START },
        { "_seqval", BCOL_SEQVAL }, { "_operation", BCOL_OP }, { "_command_id", BCOL_CMD },
        { "_commit_ts", BCOL_COMMIT_TS }, { "_batch_id", BCOL_BATCH },
        { "_snapshot", BCOL_SNAPSHOT }, { "_chunk", BCOL_CHUNK },
    };
    for (size_t i = 0; i < s->bronze_schema->n_cols; i++) {
        const char *name = s->bronze_schema->cols[i].name;
        int src = BCOL_NULL;
        for (size_t k = 0; k < sizeof meta / sizeof *meta; k++)
            if (strcmp(name, meta[k].name) == 0)
                src = meta[k].src;
        if (src == BCOL_CMD && !s->o.include_command_id)
            src = BCOL_NULL;
        if (src == BCOL_NULL) {
            int k = mcdc_schema_find(s->captured, name);
            if (k >= 0)
                src = k;
        }
        s->bronze_map[i] = src;
    }
done:
    mcdc_delta_snapshot_free(snap);
    mcdc_schema_free(want);
    return rc;
}

/* ---- facts rows --------------------------------------------------------------------------- */

typedef struct facts_rows {
    mcdc_value v[2][MCDC_FACTS_N_COLUMNS]; /* at most a batch row and one event row */
    char text[2][6][MCDC_TIME_STRLEN];      /* LSN texts the values borrow */
    char *detail[2];                        /* malloc'd detail text */
    int n;
} facts_rows;

static void fset_null(mcdc_value *v)
{
    for (int i = 0; i < MCDC_FACTS_N_COLUMNS; i++)
        v[i].is_null = true;
}
static void fset_i64(mcdc_value *v, int c, int64_t x)
{
    v[c].is_null = false;
    v[c].v.i = x;
}
static void fset_dbl(mcdc_value *v, int c, double x)
{
    v[c].is_null = false;
    v[c].v.d = x;
}
static void fset_str(mcdc_value *v, int c, const char *x)
{
    if (!x)
        return;
    v[c].is_null = false;
    v[c].v.s.ptr = x;
    v[c].v.s.len = strlen(x);
}

static void facts_rows_clear(facts_rows *f)
{
    for (int i = 0; i < 2; i++)
        free(f->detail[i]);
}

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
} batch_metrics;

static void add_batch_row(facts_rows *f, mcdc_stream *s, int64_t batch_id,
                          const mcdc_batch_facts *bf, const mcdc_batch_range *r,
                          const batch_metrics *m)
{
    mcdc_value *v = f->v[f->n];
    char (*t)[MCDC_TIME_STRLEN] = f->text[f->n];
    f->n++;
    fset_null(v);
    fset_str(v, MCDC_FACTS_APP_ID, s->o.app_id);
    fset_i64(v, MCDC_FACTS_BATCH_ID, batch_id);
    if (bf->counts_known) {
        fset_i64(v, MCDC_FACTS_ROWS, bf->rows);
        fset_i64(v, MCDC_FACTS_DELETES, bf->deletes);
        fset_i64(v, MCDC_FACTS_INSERTS, bf->inserts);
        fset_i64(v, MCDC_FACTS_UPDATES, bf->updates);
        if (bf->rows > 0) {
            fset_str(v, MCDC_FACTS_MIN_LSN, lsn_text(t[0], &bf->min_lsn));
            fset_str(v, MCDC_FACTS_MAX_LSN, lsn_text(t[1], &bf->max_lsn));
            fset_i64(v, MCDC_FACTS_MIN_COMMIT_TS, bf->min_commit_ts_us);
            fset_i64(v, MCDC_FACTS_MAX_COMMIT_TS, bf->max_commit_ts_us);
        }
    }
    fset_i64(v, MCDC_FACTS_STARTED_AT, m->started_at_us);
    if (m->duration_ms >= 0)
        fset_i64(v, MCDC_FACTS_DURATION_MS, m->duration_ms);
    if (m->read_seconds >= 0)
        fset_dbl(v, MCDC_FACTS_READ_SECONDS, m->read_seconds);
    if (m->read_mb >= 0)
        fset_dbl(v, MCDC_FACTS_READ_MB, m->read_mb);
    fset_str(v, MCDC_FACTS_END_LSN, lsn_text(t[2], &r->end.lsn));
    if (r->end.has_commit_ts)
        fset_i64(v, MCDC_FACTS_END_COMMIT_TS, r->end.commit_ts_us);
    if (m->has_watermark) {
        fset_i64(v, MCDC_FACTS_RETENTION_WATERMARK_TS, m->watermark_ts_us);
        int64_t ref = r->end.has_commit_ts ? r->end.commit_ts_us
                                            : (bf->rows > 0 ? bf->max_commit_ts_us : INT64_MIN);
        if (ref != INT64_MIN)
            fset_dbl(v, MCDC_FACTS_RETENTION_HEADROOM_HOURS,
                     round((double)(ref - m->watermark_ts_us) / 3600e6 * 100.0) / 100.0);
    }
    if (m->has_source_max) {
        fset_i64(v, MCDC_FACTS_SOURCE_MAX_COMMIT_TS, m->source_max_ts_us);
        if (m->has_server_now)
            fset_dbl(v, MCDC_FACTS_CAPTURE_LAG_SECONDS,
                     (double)(m->server_now_us - m->source_max_ts_us) / 1e6);
        if (r->end.has_commit_ts)
            fset_dbl(v, MCDC_FACTS_INGESTION_LAG_SECONDS,
                     (double)(m->source_max_ts_us - r->end.commit_ts_us) / 1e6);
    }
    fset_str(v, MCDC_FACTS_TARGET, s->o.target);
}

/* A data_skipped event row of batch @p batch_id: changes from..to are gone. */
static int add_skip_row(facts_rows *f, mcdc_stream *s, int64_t batch_id, const mcdc_lsn *from,
                        const mcdc_lsn *to, const mcdc_batch_range *r, bool certain)
{
    mcdc_value *v = f->v[f->n];
    char (*t)[MCDC_TIME_STRLEN] = f->text[f->n];
    int idx = f->n++;
    fset_null(v);
    fset_str(v, MCDC_FACTS_APP_ID, s->o.app_id);
    fset_i64(v, MCDC_FACTS_BATCH_ID, batch_id);
    fset_i64(v, MCDC_FACTS_ROWS, 0);
    fset_i64(v, MCDC_FACTS_DELETES, 0);
    fset_i64(v, MCDC_FACTS_INSERTS, 0);
    fset_i64(v, MCDC_FACTS_UPDATES, 0);
    fset_str(v, MCDC_FACTS_EVENT, "data_skipped");
    mcdc_offset at;
    int rc = offset_at(s, to, &at);
    if (rc < 0)
        return rc;
    fset_str(v, MCDC_FACTS_MIN_LSN, lsn_text(t[0], to));
    fset_str(v, MCDC_FACTS_MAX_LSN, t[0]);
    fset_str(v, MCDC_FACTS_END_LSN, t[0]);
    if (at.has_commit_ts) {
        fset_i64(v, MCDC_FACTS_MIN_COMMIT_TS, at.commit_ts_us);
        fset_i64(v, MCDC_FACTS_MAX_COMMIT_TS, at.commit_ts_us);
        fset_i64(v, MCDC_FACTS_END_COMMIT_TS, at.commit_ts_us);
        fset_i64(v, MCDC_FACTS_LOST_TO_TS, at.commit_ts_us);
    }
    if (r->start.has_commit_ts)
        fset_i64(v, MCDC_FACTS_LOST_FROM_TS, r->start.commit_ts_us);
    char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN];
    mcdc_buf d = MCDC_BUF_INIT(4096);
    rc = mcdc_buf_printf(&d, "{\"from\":\"%s\",\"to\":\"%s\",\"certain\":%s", lsn_text(a, from),
                         lsn_text(b, to), certain ? "true" : "false");
    if (rc == 0 && !certain)
        rc = mcdc_buf_printf(&d, ",\"reason\":\"CDC cleanup moved min_lsn past the start of the "
                                 "range %s..%s while it was read: its changes below min_lsn may "
                                 "be missing\"", a, b);
    if (rc == 0)
        rc = mcdc_buf_putc(&d, '}');
    if (rc < 0) {
        mcdc_buf_dispose(&d);
        return rc;
    }
    f->detail[idx] = mcdc_buf_detach(&d);
    fset_str(v, MCDC_FACTS_DETAIL, f->detail[idx]);
    fset_str(v, MCDC_FACTS_TARGET, s->o.target);
    return 0;
}

/* Write the rows as one facts commit with txn{app_id, version}. */
static int write_facts(mcdc_stream *s, facts_rows *f, const char *app_id, int64_t version,
                       int64_t *out_version)
{
    *out_version = -1;
    int64_t now = mcdc_time_now_us();
    for (int i = 0; i < f->n; i++)
        fset_i64(f->v[i], MCDC_FACTS_WRITTEN_AT, now);
    mcdc_datafile *df = NULL;
    mcdc_delta_file add = { 0 };
    int rc = mcdc_datafile__open(&df, s->o.facts_path, s->facts_schema);
    for (int i = 0; i < f->n && rc == 0; i++)
        rc = mcdc_datafile__add(df, f->v[i]);
    if (rc < 0) {
        mcdc_datafile__discard(df);
        return rc;
    }
    if ((rc = mcdc_datafile__finish(df, &add)) < 0)
        return rc;
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    co.operation = "STREAMING UPDATE";
    co.app_id = app_id;
    co.txn_version = version;
    mcdc_delta_commit_result res = { 0 };
    rc = mcdc_delta_append(s->o.facts_path, &add, 1, &co, &res);
    if (rc == MCDC_EALREADY) {
        mcdc_error_clear();
        mcdc_datafile__remove(s->o.facts_path, add.path);
        rc = 0;
    } else if (rc == 0) {
        *out_version = res.version;
    }
    mcdc_delta_file_clear(&add);
    return rc;
}

/* ---- data loss ------------------------------------------------------------------------------ */

static int data_loss_error(mcdc_stream *s, const mcdc_lsn *after, const mcdc_lsn *min,
                           bool during_read)
{
    char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN], c[MCDC_LSN_STRLEN];
    mcdc_lsn from = *after, to = *min;
    mcdc_lsn_increment(&from, after);
    mcdc_lsn_decrement(&to, min);
    mcdc_error_set(MCDC_EDATALOSS, "%s: change data from %s to %s is gone (min_lsn is now %s): "
                   "purged by CDC cleanup%s", s->o.capture_instance, lsn_text(a, &from),
                   lsn_text(b, &to), lsn_text(c, min),
                   during_read ? " while the batch was read" : " before it was read");
    return mcdc_error_hint("take a new snapshot: run a new stream with --bootstrap, a new "
                           "--checkpoint and a new --app-id; or skip the lost changes with "
                           "--option failOnDataLoss=false (needs --facts; the gap is recorded "
                           "as a data_skipped facts row)");
}

/* ---- reading a batch into bronze --------------------------------------------------------- */

typedef struct read_ctx {
    mcdc_stream      *s;
    mcdc_datafile    *df;        /* opened at the first row: no file for an empty batch */
    mcdc_value       *row;       /* bronze row under construction */
    mcdc_batch_facts  facts;
    int64_t           batch_id;  /* -1 for snapshot rows */
    const mcdc_lsn   *snapshot;  /* S for snapshot rows, NULL for changes */
    int64_t           snapshot_ts_us;
    bool              has_snapshot_ts;
    double            bytes;     /* size of the values read */
    char              start_text[MCDC_LSN_STRLEN], seq_text[MCDC_LSN_STRLEN];
} read_ctx;

static double value_bytes(const mcdc_column *c, const mcdc_value *v)
{
    if (v->is_null)
        return 0;
    if (c->type == MCDC_TYPE_STRING || c->type == MCDC_TYPE_BINARY)
        return (double)v->v.s.len;
    return c->type == MCDC_TYPE_DECIMAL ? 16 : 8;
}

static int put_row(read_ctx *x, const mcdc_value *captured, const mcdc_change *ch)
{
    mcdc_stream *s = x->s;
    if (!x->df) {
        int rc = mcdc_datafile__open(&x->df, s->o.target_path, s->bronze_schema);
        if (rc < 0)
            return rc;
    }
    const mcdc_schema *bs = s->bronze_schema;
    if (ch) {
        lsn_text(x->start_text, &ch->start_lsn);
        lsn_text(x->seq_text, &ch->seqval);
    } else {
        lsn_text(x->start_text, x->snapshot);
    }
    for (size_t i = 0; i < bs->n_cols; i++) {
        mcdc_value *v = &x->row[i];
        v->is_null = false;
        switch (s->bronze_map[i]) {
        case BCOL_CI:
            v->v.s.ptr = s->o.capture_instance;
            v->v.s.len = strlen(s->o.capture_instance);
            break;
        case BCOL_START:
            v->v.s.ptr = x->start_text;
            v->v.s.len = MCDC_LSN_STRLEN - 1;
            break;
        case BCOL_SEQVAL:
            if (ch) {
                v->v.s.ptr = x->seq_text;
                v->v.s.len = MCDC_LSN_STRLEN - 1;
            } else {
                v->is_null = true;
            }
            break;
        case BCOL_OP:
            v->v.i = ch ? ch->operation : 0;
            break;
        case BCOL_CMD:
            if (ch)
                v->v.i = ch->command_id;
            else
                v->is_null = true;
            break;
        case BCOL_COMMIT_TS:
            if (ch)
                v->v.i = ch->commit_ts_us;
            else if (x->has_snapshot_ts)
                v->v.i = x->snapshot_ts_us;
            else
                v->is_null = true;
            break;
        case BCOL_BATCH:
            if (ch)
                v->v.i = x->batch_id;
            else
                v->is_null = true;
            break;
        case BCOL_SNAPSHOT:
            if (ch) {
                v->is_null = true;
            } else {
                v->v.s.ptr = x->start_text;
                v->v.s.len = MCDC_LSN_STRLEN - 1;
            }
            break;
        case BCOL_CHUNK:
        case BCOL_NULL:
            v->is_null = true;
            break;
        default: {
            int k = s->bronze_map[i];
            *v = captured[k];
            x->bytes += value_bytes(&s->captured->cols[k], v);
        }
        }
    }
    return mcdc_datafile__add(x->df, x->row);
}

static int on_change(const mcdc_change *ch, void *payload)
{
    read_ctx *x = payload;
    mcdc_failpoint("stream.mid_read");
    int rc = put_row(x, ch->values, ch);
    if (rc < 0)
        return rc;
    mcdc_batch_facts_add(&x->facts, &ch->start_lsn, ch->operation, ch->commit_ts_us);
    x->bytes += 60; /* the metadata columns */
    return 0;
}

static int on_snapshot_row(const mcdc_value *values, void *payload)
{
    read_ctx *x = payload;
    mcdc_failpoint("stream.bootstrap.mid_read");
    int rc = put_row(x, values, NULL);
    if (rc == 0)
        x->facts.rows++;
    return rc;
}

static int read_ctx_init(read_ctx *x, mcdc_stream *s)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    x->facts = (mcdc_batch_facts)MCDC_BATCH_FACTS_INIT;
    x->row = calloc(s->bronze_schema->n_cols ? s->bronze_schema->n_cols : 1, sizeof *x->row);
    if (!x->row)
        return mcdc_error_set(MCDC_ENOMEM, "bronze row: out of memory");
    return 0;
}

static void read_ctx_dispose(read_ctx *x)
{
    mcdc_datafile__discard(x->df);
    x->df = NULL;
    free(x->row);
    x->row = NULL;
}

/* Append the finished data file of @p x to bronze with txn{app_id, version}.
 * *out_version: the version written, -1 when found already committed. */
static int commit_bronze(mcdc_stream *s, read_ctx *x, const char *app_id, int64_t version,
                         const char *user_metadata, const char *operation, int64_t *out_version)
{
    *out_version = -1;
    mcdc_delta_file add = { 0 };
    mcdc_datafile *df = x->df;
    x->df = NULL;
    int rc = mcdc_datafile__finish(df, &add);
    if (rc < 0)
        return rc;
    mcdc_failpoint(x->snapshot ? "stream.bootstrap.after_data_file" : "stream.after_data_file");
    if (!s->bronze_exists) {
        if ((rc = ensure_table(s->o.target_path, s->bronze_schema, "bronze", "2")) < 0)
            goto done;
        s->bronze_exists = true;
    }
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    char params[160];
    snprintf(params, sizeof params, "{\"outputMode\":\"Append\",\"queryId\":\"%s\",\"epochId\":"
             "\"%" PRId64 "\"}", s->stream_id, version);
    co.operation = operation;
    co.operation_parameters = x->snapshot ? NULL : params;
    co.user_metadata = user_metadata;
    co.app_id = app_id;
    co.txn_version = version;
    mcdc_delta_commit_result res = { 0 };
    rc = mcdc_delta_append(s->o.target_path, &add, 1, &co, &res);
    if (rc == MCDC_EALREADY) {
        mcdc_error_clear();
        mcdc_datafile__remove(s->o.target_path, add.path);
        rc = 0;
    } else if (rc == 0) {
        *out_version = res.version;
    }
done:
    mcdc_delta_file_clear(&add);
    return rc;
}

/* ---- one batch ------------------------------------------------------------------------------ */

static int run_batch(mcdc_stream *s, const mcdc_batch_range *r, bool replay)
{
    int64_t t0 = mcdc_time_mono_us();
    int64_t N = r->batch_id;
    batch_metrics m = { .started_at_us = mcdc_time_now_us(), .duration_ms = -1,
                        .read_seconds = -1, .read_mb = -1 };
    mcdc_batch_facts bf = MCDC_BATCH_FACTS_INIT;
    facts_rows fr = { 0 };
    read_ctx x;
    int rc = read_ctx_init(&x, s);
    if (rc < 0)
        return rc;
    int64_t bronze_version = -1, facts_version = -1;
    bool mid_read_loss = false;
    mcdc_lsn mid_min = { { 0 } };
    mcdc_lsn read_after = r->start.lsn;
    if (r->has_skip) {
        /* recorded when planned: the gap goes into the facts with the batch, replays too */
        mcdc_lsn_decrement(&read_after, &r->skip_to);
        if ((rc = add_skip_row(&fr, s, N, &r->skip_from, &r->skip_to, r, true)) < 0)
            goto done;
    }

    if (replay && s->bronze_txn >= N) {
        /* invariant 2: bronze holds N; take its facts from the commit, read nothing */
        char *um = NULL;
        if ((rc = find_commit_metadata(s->o.target_path, s->o.app_id, N, &um,
                                       &bronze_version)) < 0)
            goto done;
        int64_t bid;
        if (um && mcdc_batch_facts_parse_json(&bf, &bid, NULL, um) == 0 && bid == N) {
            mcdc_log(MCDC_LOG_INFO, LOGGER, "batch %" PRId64 ": bronze already holds it "
                     "(version %" PRId64 "); facts from its commit", N, bronze_version);
        } else {
            mcdc_error_clear();
            bf = (mcdc_batch_facts)MCDC_BATCH_FACTS_INIT;
            bf.counts_known = false;
            mcdc_log(MCDC_LOG_WARN, LOGGER, "batch %" PRId64 ": bronze holds it but its commit "
                     "information is gone (log cleanup); facts row without counts", N);
        }
        free(um);
    } else {
        /* the data-loss guard, for ranges bronze does not hold yet */
        mcdc_lsn min, from;
        if ((rc = src_min_lsn(s, &min)) < 0)
            goto done;
        if ((rc = mcdc_lsn_increment(&from, &read_after)) < 0)
            goto done;
        if (!mcdc_lsn_is_zero(&min) && mcdc_lsn_cmp(&from, &min) < 0) {
            /* purged after the range was recorded */
            if (s->o.fail_on_data_loss) {
                rc = data_loss_error(s, &read_after, &min, false);
                goto done;
            }
            if ((rc = add_skip_row(&fr, s, N, &from, &min, r, true)) < 0)
                goto done;
            mcdc_lsn_decrement(&read_after, &min);
            from = min;
            mcdc_log(MCDC_LOG_WARN, LOGGER, "%s: changes purged before they were read; skipped "
                     "ahead (failOnDataLoss=false)", s->o.capture_instance);
        }
        int64_t tr = mcdc_time_mono_us();
        x.batch_id = N;
        rc = s->o.source->ops->read_changes(s->o.source, s->o.capture_instance, &read_after,
                                            &r->end.lsn, on_change, &x);
        if (rc < 0)
            goto done;
        m.read_seconds = (double)(mcdc_time_mono_us() - tr) / 1e6;
        m.read_mb = x.bytes / 1e6;
        bf = x.facts;
        /* a purge between two pages of the read is caught here */
        if ((rc = src_min_lsn(s, &min)) < 0)
            goto done;
        if (!mcdc_lsn_is_zero(&min) && mcdc_lsn_cmp(&from, &min) < 0) {
            if (s->o.fail_on_data_loss) {
                rc = data_loss_error(s, &read_after, &min, true);
                goto done;
            }
            mid_read_loss = true;
            mid_min = min;
        }
        if (!mcdc_lsn_is_zero(&min)) {
            mcdc_offset w;
            if ((rc = offset_at(s, &min, &w)) < 0)
                goto done;
            m.has_watermark = w.has_commit_ts;
            m.watermark_ts_us = w.commit_ts_us;
        }
        mcdc_lsn mx;
        if ((rc = src_max_lsn(s, &mx)) < 0)
            goto done;
        mcdc_offset mo;
        if ((rc = offset_at(s, &mx, &mo)) < 0)
            goto done;
        m.has_source_max = mo.has_commit_ts;
        m.source_max_ts_us = mo.commit_ts_us;
        s->has_latest = true;
        s->latest = mo;
        if ((rc = s->o.source->ops->server_now(s->o.source, &m.server_now_us)) == 0)
            m.has_server_now = true;
        else
            mcdc_error_clear(), rc = 0;
        if (mid_read_loss && (rc = add_skip_row(&fr, s, N, &from, &mid_min, r, false)) < 0)
            goto done;
        if (x.df) {
            mcdc_buf um = MCDC_BUF_INIT(1 << 16);
            rc = mcdc_batch_facts_to_json(&um, &bf, N, s->o.app_id);
            if (rc == 0)
                rc = commit_bronze(s, &x, s->o.app_id, N, um.ptr, "STREAMING UPDATE",
                                   &bronze_version);
            mcdc_buf_dispose(&um);
            if (rc < 0)
                goto done;
            if (bronze_version >= 0 && N > s->bronze_txn)
                s->bronze_txn = N;
            mcdc_failpoint("stream.after_bronze_commit");
        }
        m.duration_ms = (mcdc_time_mono_us() - t0) / 1000;
    }

    if (s->o.facts_path) {
        /* the batch row first, then event rows (they were added first: rotate) */
        facts_rows all = { 0 };
        add_batch_row(&all, s, N, &bf, r, &m);
        for (int i = 0; i < fr.n; i++) {
            memcpy(all.v[all.n], fr.v[i], sizeof fr.v[i]);
            memcpy(all.text[all.n], fr.text[i], sizeof fr.text[i]);
            /* re-point the borrowed LSN texts at the copy */
            for (int c = 0; c < MCDC_FACTS_N_COLUMNS; c++) {
                mcdc_value *v = &all.v[all.n][c];
                if (v->is_null || (c != MCDC_FACTS_MIN_LSN && c != MCDC_FACTS_MAX_LSN &&
                                   c != MCDC_FACTS_END_LSN))
                    continue;
                v->v.s.ptr = all.text[all.n][0];
            }
            all.detail[all.n] = fr.detail[i];
            fr.detail[i] = NULL;
            all.n++;
        }
        rc = write_facts(s, &all, s->facts_app_id, N, &facts_version);
        facts_rows_clear(&all);
        if (rc < 0)
            goto done;
        mcdc_failpoint("stream.after_facts");
    }
    mcdc_failpoint("stream.before_commit");
    mcdc_batch_commit c = { .batch_id = N, .bronze_version = bronze_version,
                            .facts_version = facts_version,
                            .committed_at_us = mcdc_time_now_us() };
    if ((rc = mcdc_checkpoint_record_commit(s->ck, &c)) < 0)
        goto done;
    s->has_last = true;
    s->last_end = r->end;
    s->last_batch = N;
    s->res->n_batches++;
    s->res->n_rows += bf.counts_known ? bf.rows : 0;

    mcdc_stream_progress p = { .kind = MCDC_PROGRESS_BATCH, .id = s->stream_id,
                               .run_id = s->run_id, .batch_id = N,
                               .num_input_rows = bf.counts_known ? bf.rows : 0,
                               .replayed = replay, .has_end = true, .start = r->start,
                               .end = r->end, .has_latest = s->has_latest, .latest = s->latest,
                               .duration_ms = (mcdc_time_mono_us() - t0) / 1000 };
    mcdc_buf js = MCDC_BUF_INIT(1 << 16);
    if (progress_json(&js, s, &p, 0, 0, p.duration_ms, 0) == 0)
        p.json = js.ptr;
    emit(s, &p);
    mcdc_buf_dispose(&js);
done:
    facts_rows_clear(&fr);
    read_ctx_dispose(&x);
    return rc;
}

/* ---- planning ---------------------------------------------------------------------------- */

/* Plan the batch after @p after: *has = false when there is nothing new (an idle poll). */
static int plan_batch(mcdc_stream *s, const mcdc_offset *after, const mcdc_lsn *cap,
                      int64_t batch_id, mcdc_batch_range *out, bool *has)
{
    *has = false;
    mcdc_lsn M;
    int rc = src_max_lsn(s, &M);
    if (rc < 0)
        return rc;
    if (!s->has_latest || mcdc_lsn_cmp(&M, &s->latest.lsn) != 0) {
        s->has_latest = true;
        if ((rc = offset_at(s, &M, &s->latest)) < 0)
            return rc;
    }
    mcdc_lsn upto = M;
    if (cap && mcdc_lsn_cmp(cap, &upto) < 0)
        upto = *cap;
    if (mcdc_lsn_cmp(&upto, &after->lsn) <= 0)
        return 0;
    memset(out, 0, sizeof *out);
    out->batch_id = batch_id;
    out->start = *after;
    bool have_ts = false;
    if (s->o.max_commits_per_batch > 0) {
        mcdc_lsn nth;
        int64_t ts = 0, found = 0;
        rc = s->o.source->ops->nth_commit_after(s->o.source, &after->lsn,
                                                s->o.max_commits_per_batch, &nth, &ts, &found);
        if (rc < 0)
            return rc;
        if (found > 0 && mcdc_lsn_cmp(&nth, &upto) < 0) {
            upto = nth;
            out->end.lsn = nth;
            out->end.commit_ts_us = ts;
            out->end.has_commit_ts = true;
            have_ts = true;
        }
    }
    if (!have_ts && (rc = offset_at(s, &upto, &out->end)) < 0)
        return rc;
    /* the guard: increment(after) below min_lsn means purged changes */
    mcdc_lsn min, from;
    if ((rc = src_min_lsn(s, &min)) < 0)
        return rc;
    if ((rc = mcdc_lsn_increment(&from, &after->lsn)) < 0)
        return rc;
    if (!mcdc_lsn_is_zero(&min) && mcdc_lsn_cmp(&from, &min) < 0) {
        if (s->o.fail_on_data_loss)
            return data_loss_error(s, &after->lsn, &min, false);
        out->has_skip = true;
        out->skip_from = from;
        out->skip_to = mcdc_lsn_cmp(&min, &upto) <= 0 ? min : upto;
        mcdc_log(MCDC_LOG_WARN, LOGGER, "%s: changes purged before they were read; skipping "
                 "ahead to min_lsn (failOnDataLoss=false)", s->o.capture_instance);
    }
    out->planned_at_us = mcdc_time_now_us();
    *has = true;
    return 0;
}

/* ---- bootstrap --------------------------------------------------------------------------- */

static int bootstrap_path(char out[MCDC_PATH_MAX], const mcdc_stream *s)
{
    if ((size_t)snprintf(out, MCDC_PATH_MAX, "%s/bootstrap", s->o.checkpoint) >= MCDC_PATH_MAX)
        return mcdc_error_set(MCDC_EINVAL, "%s: path too long", s->o.checkpoint);
    return 0;
}

static int read_bootstrap(const char *path, mcdc_offset *out, bool *found)
{
    *found = false;
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    int rc = mcdc_fs_read_all(&b, path);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        mcdc_buf_dispose(&b);
        return 0;
    }
    if (rc == 0) {
        json_t *j = json_loadb(b.ptr ? b.ptr : "", b.len, 0, NULL);
        const char *l = json_string_value(json_object_get(j, "lsn"));
        const char *t = json_string_value(json_object_get(j, "commit_ts"));
        memset(out, 0, sizeof *out);
        if (!l || !t || mcdc_lsn_parse(&out->lsn, l) < 0 ||
            (t[0] && mcdc_time_parse(&out->commit_ts_us, t) < 0))
            rc = mcdc_error_set(MCDC_ECORRUPT, "%s: not a snapshot offset {lsn, commit_ts}", path);
        else {
            out->has_commit_ts = t[0] != '\0';
            *found = true;
        }
        json_decref(j);
    }
    mcdc_buf_dispose(&b);
    return rc;
}

static int write_bootstrap_event(mcdc_stream *s, const mcdc_offset *S, int64_t rows,
                                 bool rows_known, int64_t started_at_us, int64_t duration_ms)
{
    if (!s->o.facts_path)
        return 0;
    facts_rows f = { 0 };
    mcdc_value *v = f.v[0];
    f.n = 1;
    fset_null(v);
    fset_str(v, MCDC_FACTS_APP_ID, s->o.app_id);
    if (rows_known)
        fset_i64(v, MCDC_FACTS_ROWS, rows);
    fset_str(v, MCDC_FACTS_MIN_LSN, lsn_text(f.text[0][0], &S->lsn));
    fset_str(v, MCDC_FACTS_MAX_LSN, f.text[0][0]);
    fset_str(v, MCDC_FACTS_END_LSN, f.text[0][0]);
    if (S->has_commit_ts) {
        fset_i64(v, MCDC_FACTS_MIN_COMMIT_TS, S->commit_ts_us);
        fset_i64(v, MCDC_FACTS_MAX_COMMIT_TS, S->commit_ts_us);
        fset_i64(v, MCDC_FACTS_END_COMMIT_TS, S->commit_ts_us);
    }
    fset_i64(v, MCDC_FACTS_DELETES, 0);
    fset_i64(v, MCDC_FACTS_INSERTS, 0);
    fset_i64(v, MCDC_FACTS_UPDATES, 0);
    if (started_at_us) {
        fset_i64(v, MCDC_FACTS_STARTED_AT, started_at_us);
        fset_i64(v, MCDC_FACTS_DURATION_MS, duration_ms);
    }
    fset_str(v, MCDC_FACTS_EVENT, "bootstrap");
    fset_str(v, MCDC_FACTS_TARGET, s->o.target);
    size_t n = strlen(s->o.app_id) + 8;
    char *events = malloc(n);
    if (!events)
        return mcdc_error_set(MCDC_ENOMEM, "facts: out of memory");
    snprintf(events, n, "%s#events", s->o.app_id);
    int64_t fv;
    int rc = write_facts(s, &f, events, 0, &fv);
    free(events);
    facts_rows_clear(&f);
    return rc;
}

/* Take (or find) the bootstrap snapshot; *S gets its offset. */
static int bootstrap(mcdc_stream *s, mcdc_offset *S)
{
    char path[MCDC_PATH_MAX];
    int rc = bootstrap_path(path, s);
    if (rc < 0)
        return rc;
    size_t n = strlen(s->o.app_id) + 16;
    char *snap_app = malloc(n);
    if (!snap_app)
        return mcdc_error_set(MCDC_ENOMEM, "bootstrap: out of memory");
    snprintf(snap_app, n, "%s#snapshot", s->o.app_id);
    int64_t snap_txn = -1;
    bool found = false;
    read_ctx x = { 0 };
    if ((rc = table_txn(s->o.target_path, snap_app, &snap_txn, NULL, NULL)) < 0)
        goto done;
    if ((rc = read_bootstrap(path, S, &found)) < 0)
        goto done;
    if (snap_txn >= 0) {
        /* the snapshot is in bronze: read nothing again */
        char *um = NULL;
        int64_t ver;
        if ((rc = find_commit_metadata(s->o.target_path, snap_app, 0, &um, &ver)) < 0)
            goto done;
        json_t *j = um ? json_loads(um, 0, NULL) : NULL;
        free(um);
        json_t *jr = json_object_get(j, "rows");
        int64_t rows = json_is_integer(jr) ? json_integer_value(jr) : -1;
        if (!found) {
            const char *l = json_string_value(json_object_get(j, "lsn"));
            const char *t = json_string_value(json_object_get(j, "commit_ts"));
            memset(S, 0, sizeof *S);
            if (!l || mcdc_lsn_parse(&S->lsn, l) < 0) {
                json_decref(j);
                rc = mcdc_error_set(MCDC_ECORRUPT, "%s: holds the snapshot of app_id %s but "
                                    "neither the checkpoint nor the commit says its LSN",
                                    s->o.target, s->o.app_id);
                goto done;
            }
            if (t && t[0] && mcdc_time_parse(&S->commit_ts_us, t) == 0)
                S->has_commit_ts = true;
        }
        json_decref(j);
        mcdc_log(MCDC_LOG_INFO, LOGGER, "bootstrap: %s already holds the snapshot; not read "
                 "again", s->o.target);
        rc = write_bootstrap_event(s, S, rows, rows >= 0, 0, 0);
        goto done;
    }
    /* record S before the table is read: rows may be newer than S, never older */
    int64_t t0 = mcdc_time_mono_us(), started = mcdc_time_now_us();
    mcdc_lsn M;
    if ((rc = src_max_lsn(s, &M)) < 0 || (rc = offset_at(s, &M, S)) < 0)
        goto done;
    {
        char js[128];
        mcdc_offset_to_json(js, sizeof js, S);
        if ((rc = mcdc_fs_write_atomic(path, js, strlen(js))) < 0)
            goto done;
    }
    if ((rc = read_ctx_init(&x, s)) < 0)
        goto done;
    x.batch_id = -1;
    x.snapshot = &S->lsn;
    x.has_snapshot_ts = S->has_commit_ts;
    x.snapshot_ts_us = S->commit_ts_us;
    if ((rc = s->o.source->ops->snapshot(s->o.source, s->o.capture_instance, NULL, NULL,
                                         on_snapshot_row, &x)) < 0)
        goto done;
    int64_t rows = x.facts.rows;
    if (x.df) {
        char lsn[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN] = "";
        if (S->has_commit_ts)
            mcdc_time_format(ts, S->commit_ts_us, 3, false);
        json_t *j = json_pack("{s:s,s:s,s:s,s:I}", "snapshot", s->o.capture_instance, "lsn",
                              lsn_text(lsn, &S->lsn), "commit_ts", ts, "rows", (json_int_t)rows);
        char *um = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        if (!um) {
            rc = mcdc_error_set(MCDC_ENOMEM, "bootstrap: out of memory");
            goto done;
        }
        int64_t ver;
        rc = commit_bronze(s, &x, snap_app, 0, um, "WRITE", &ver);
        free(um);
        if (rc < 0)
            goto done;
    }
    mcdc_failpoint("stream.bootstrap.after_snapshot");
    s->res->n_snapshot_rows = rows;
    mcdc_log(MCDC_LOG_INFO, LOGGER, "bootstrap: %" PRId64 " rows of %s as of %s", rows,
             s->o.capture_instance, lsn_text((char[MCDC_LSN_STRLEN]){ 0 }, &S->lsn));
    rc = write_bootstrap_event(s, S, rows, true, started, (mcdc_time_mono_us() - t0) / 1000);
    if (rc == 0)
        mcdc_failpoint("stream.bootstrap.after_event");
done:
    read_ctx_dispose(&x);
    free(snap_app);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------- */

int mcdc_stream_new(mcdc_stream **out, const mcdc_stream_options *opts)
{
    MCDC_ASSERT_ARG(out && opts);
    *out = NULL;
    if (!opts->source || !opts->capture_instance || !opts->target || !opts->target_path ||
        !opts->app_id || !opts->checkpoint)
        return mcdc_error_set(MCDC_EINVAL, "stream: source, capture instance, target, app_id "
                              "and checkpoint are required");
    if (!opts->app_id[0] || strchr(opts->app_id, '#'))
        return mcdc_error_set(MCDC_EINVAL, "app_id '%s': must be non-empty and without '#' "
                              "(reserved for the facts and snapshot keys)", opts->app_id);
    if (opts->bootstrap && opts->starting_given) {
        mcdc_error_set(MCDC_EINVAL, "--bootstrap and a starting LSN: pass one or the other");
        return mcdc_error_hint("--bootstrap starts the stream at its snapshot's LSN");
    }
    if (!opts->fail_on_data_loss && !opts->facts_path) {
        mcdc_error_set(MCDC_EINVAL, "failOnDataLoss=false needs a facts table");
        return mcdc_error_hint("add --facts NAME: skipped changes are recorded there as a "
                               "data_skipped row");
    }
    if ((opts->facts == NULL) != (opts->facts_path == NULL))
        return mcdc_error_set(MCDC_EINVAL, "stream: facts name and path go together");
    if (opts->trigger == MCDC_TRIGGER_INTERVAL && opts->interval_us <= 0)
        return mcdc_error_set(MCDC_EINVAL, "trigger interval must be positive");
    if (opts->max_commits_per_batch < 0)
        return mcdc_error_set(MCDC_EINVAL, "maxCommitsPerBatch must be at least 1");
    mcdc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "stream: out of memory");
    s->o = *opts;
    if (s->o.idle_event_interval_us <= 0)
        s->o.idle_event_interval_us = 10 * MCDC_US_PER_SEC;
    if (s->o.poll_interval_us <= 0)
        s->o.poll_interval_us = 100000;
    if (opts->run_id)
        snprintf(s->run_id, sizeof s->run_id, "%s", opts->run_id);
    else
        mcdc_delta_uuid(s->run_id);
    s->progress_fd = -1;
    *out = s;
    return 0;
}

int mcdc_stream_add_listener(mcdc_stream *s, mcdc_stream_listener_fn fn, void *payload)
{
    MCDC_ASSERT_ARG(s && fn);
    if (s->n_listeners >= MAX_LISTENERS)
        return mcdc_error_set(MCDC_EINVAL, "stream: at most %d listeners", MAX_LISTENERS);
    s->listeners[s->n_listeners].fn = fn;
    s->listeners[s->n_listeners].payload = payload;
    s->n_listeners++;
    return 0;
}

void mcdc_stream_stop(mcdc_stream *s)
{
    if (s)
        s->stop = 1;
}

void mcdc_stream_free(mcdc_stream *s)
{
    free(s);
}

/* Sleep until @p until_mono_us or a stop request. */
static void wait_until(mcdc_stream *s, int64_t until_mono_us)
{
    while (!s->stop) {
        int64_t left = until_mono_us - mcdc_time_mono_us();
        if (left <= 0)
            return;
        if (left > s->o.poll_interval_us)
            left = s->o.poll_interval_us;
        struct timespec ts = { (time_t)(left / 1000000), (long)(left % 1000000) * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* Where a checkpoint without offsets starts; *ready false while it cannot be known yet
 * (earliest on a capture instance capture has not processed). */
static int initial_offset(mcdc_stream *s, mcdc_offset *out, bool *ready)
{
    *ready = false;
    int rc;
    mcdc_lsn l;
    switch (s->o.starting) {
    case MCDC_START_LATEST:
        if ((rc = src_max_lsn(s, &l)) < 0)
            return rc;
        break;
    case MCDC_START_LSN:
        l = s->o.starting_lsn;
        break;
    default: {
        mcdc_lsn min;
        if ((rc = src_min_lsn(s, &min)) < 0)
            return rc;
        if (mcdc_lsn_is_zero(&min)) {
            mcdc_log(MCDC_LOG_INFO, LOGGER, "%s: min_lsn is 0x00: capture has not processed "
                     "the capture instance yet; nothing to read", s->o.capture_instance);
            return 0;
        }
        if ((rc = mcdc_lsn_decrement(&l, &min)) < 0)
            return rc;
    }
    }
    if ((rc = offset_at(s, &l, out)) < 0)
        return rc;
    *ready = true;
    return 0;
}

static int check_txns(mcdc_stream *s, int64_t last_planned)
{
    if (s->bronze_txn > last_planned) {
        if (last_planned < 0)
            mcdc_error_set(MCDC_EINVAL, "%s: already holds batches of app_id '%s' (up to %"
                           PRId64 ") but checkpoint %s has none: it was deleted or belongs to "
                           "another stream", s->o.target, s->o.app_id, s->bronze_txn,
                           s->o.checkpoint);
        else
            mcdc_error_set(MCDC_EINVAL, "%s: holds batch %" PRId64 " of app_id '%s' but "
                           "checkpoint %s reaches only batch %" PRId64 ": it was rewound",
                           s->o.target, s->bronze_txn, s->o.app_id, s->o.checkpoint,
                           last_planned);
        return mcdc_error_hint("Delta would skip every batch up to %" PRId64 " silently: restore "
                               "the checkpoint, or start again with a new --app-id and "
                               "--checkpoint", s->bronze_txn);
    }
    if (s->o.facts_path) {
        int64_t vf = -1;
        int rc = table_txn(s->o.facts_path, s->facts_app_id, &vf, NULL, NULL);
        if (rc < 0)
            return rc;
        if (vf > last_planned) {
            mcdc_error_set(MCDC_EINVAL, "%s: holds facts of batch %" PRId64 " of app_id '%s' "
                           "but checkpoint %s reaches only batch %" PRId64 ": it was deleted "
                           "or rewound", s->o.facts, vf, s->o.app_id, s->o.checkpoint,
                           last_planned);
            return mcdc_error_hint("restore the checkpoint, or start again with a new "
                                   "--app-id and --checkpoint");
        }
    }
    return 0;
}

static int run_loop(mcdc_stream *s)
{
    mcdc_batch_range last;
    bool has_range = mcdc_checkpoint_last_range(s->ck, &last) == 0;
    mcdc_batch_commit lc;
    bool has_commit = mcdc_checkpoint_last_commit(s->ck, &lc) == 0;
    mcdc_error_clear();
    int rc;
    int64_t last_planned = has_range ? last.batch_id : -1;
    s->last_batch = has_commit ? lc.batch_id : -1;
    if ((rc = check_txns(s, last_planned)) < 0)
        return rc;

    /* where the next batch starts: the end of the last finished one; while a batch is
     * pending (offsets/N without commits/N) its start, which is that same end */
    mcdc_offset after = { { { 0 } }, 0, false };
    bool has_after = false;
    if (has_range) {
        after = (has_commit && lc.batch_id == last.batch_id) ? last.end : last.start;
        has_after = true;
    }
    if (has_commit) {
        s->has_last = true;
        s->last_end = after;
    }

    /* bootstrap: only for a checkpoint that never planned a batch */
    if (!has_range && s->o.bootstrap) {
        if ((rc = bootstrap(s, &after)) < 0)
            return rc;
        has_after = true;
    }

    mcdc_stream_progress sp = { .kind = MCDC_PROGRESS_START, .id = s->stream_id,
                                .run_id = s->run_id, .batch_id = -1, .has_end = s->has_last,
                                .end = s->last_end, .start = s->last_end };
    emit(s, &sp);

    /* replay first (invariant 2) */
    int n_done = 0;
    if (has_range && (!has_commit || lc.batch_id < last.batch_id)) {
        mcdc_log(MCDC_LOG_INFO, LOGGER, "batch %" PRId64 ": replaying the recorded range",
                 last.batch_id);
        if ((rc = run_batch(s, &last, true)) < 0)
            return rc;
        after = last.end;
        n_done++;
    }
    if (s->o.trigger == MCDC_TRIGGER_ONCE && n_done)
        return 0;

    /* available-now: read up to max_lsn as seen at start */
    mcdc_lsn target;
    bool has_target = s->o.trigger == MCDC_TRIGGER_AVAILABLE_NOW;
    if (has_target && (rc = src_max_lsn(s, &target)) < 0)
        return rc;

    int64_t next_trigger = mcdc_time_mono_us();
    int64_t last_event = mcdc_time_mono_us();
    while (!s->stop) {
        int64_t tstart = mcdc_time_mono_us();
        if (!has_after) {
            bool ready;
            if ((rc = initial_offset(s, &after, &ready)) < 0)
                return rc;
            has_after = ready;
        }
        mcdc_batch_range r;
        bool has = false;
        if (has_after) {
            if ((rc = plan_batch(s, &after, has_target ? &target : NULL, s->last_batch + 1, &r,
                                 &has)) < 0)
                return rc;
        } else if (!s->has_latest) {
            mcdc_lsn M;
            if ((rc = src_max_lsn(s, &M)) == 0)
                rc = offset_at(s, &M, &s->latest), s->has_latest = rc == 0;
            if (rc < 0)
                return rc;
        }
        if (has) {
            if ((rc = mcdc_checkpoint_record_range(s->ck, &r)) < 0)
                return rc;
            mcdc_failpoint("stream.after_offsets");
            if ((rc = run_batch(s, &r, false)) < 0)
                return rc;
            after = r.end;
            last_event = mcdc_time_mono_us();
            if (s->o.trigger == MCDC_TRIGGER_ONCE)
                return 0;
            if (s->o.trigger == MCDC_TRIGGER_AVAILABLE_NOW)
                continue;
        } else {
            if (s->o.trigger != MCDC_TRIGGER_INTERVAL)
                return 0;
            if (mcdc_time_mono_us() - last_event >= s->o.idle_event_interval_us) {
                mcdc_stream_progress p = { .kind = MCDC_PROGRESS_IDLE, .id = s->stream_id,
                                           .run_id = s->run_id, .batch_id = s->last_batch + 1,
                                           .has_end = s->has_last, .start = s->last_end,
                                           .end = s->last_end, .has_latest = s->has_latest,
                                           .latest = s->latest,
                                           .duration_ms = (mcdc_time_mono_us() - tstart) / 1000 };
                mcdc_buf js = MCDC_BUF_INIT(1 << 16);
                if (progress_json(&js, s, &p, p.duration_ms, 0, 0, 0) == 0)
                    p.json = js.ptr;
                emit(s, &p);
                mcdc_buf_dispose(&js);
                last_event = mcdc_time_mono_us();
            }
        }
        /* interval: the next batch starts one interval after this one started */
        next_trigger += s->o.interval_us;
        if (next_trigger < mcdc_time_mono_us())
            next_trigger = mcdc_time_mono_us();
        wait_until(s, next_trigger);
    }
    return 0;
}

int mcdc_stream_run(mcdc_stream *s, mcdc_stream_result *result)
{
    MCDC_ASSERT_ARG(s && result);
    memset(result, 0, sizeof *result);
    result->last_batch_id = -1;
    snprintf(result->run_id, sizeof result->run_id, "%s", s->run_id);
    s->res = result;
    s->bronze_txn = -1;
    s->last_batch = -1;
    int rc = mcdc_checkpoint_open(&s->ck, s->o.checkpoint, s->o.app_id, s->o.capture_instance,
                                  s->o.target);
    if (rc < 0)
        goto done;
    snprintf(s->stream_id, sizeof s->stream_id, "%s", mcdc_checkpoint_meta_get(s->ck)->id);
    snprintf(result->id, sizeof result->id, "%s", s->stream_id);
    if (s->o.progress_path) {
        s->progress_fd = open(s->o.progress_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
        if (s->progress_fd < 0) {
            rc = mcdc_error_set(MCDC_EIO, "%s: cannot open the progress file: %s",
                                s->o.progress_path, strerror(errno));
            goto done;
        }
    }
    if ((rc = s->o.source->ops->captured_columns(s->o.source, s->o.capture_instance,
                                                 &s->captured)) < 0)
        goto done;
    if ((rc = prepare_bronze(s)) < 0)
        goto done;
    if (s->o.facts_path) {
        size_t n = strlen(s->o.app_id) + 8;
        if (!(s->facts_app_id = malloc(n))) {
            rc = mcdc_error_set(MCDC_ENOMEM, "stream: out of memory");
            goto done;
        }
        snprintf(s->facts_app_id, n, "%s#facts", s->o.app_id);
        if ((rc = mcdc_facts_schema(&s->facts_schema)) < 0 ||
            (rc = ensure_table(s->o.facts_path, s->facts_schema, "facts", "12")) < 0)
            goto done;
    }
    rc = run_loop(s);
done:
    result->has_end = s->has_last;
    result->end = s->last_end;
    result->last_batch_id = s->last_batch;
    {
        mcdc_stream_progress p = { .kind = MCDC_PROGRESS_TERMINATED, .id = s->stream_id,
                                   .run_id = s->run_id, .batch_id = s->last_batch,
                                   .has_end = s->has_last, .start = s->last_end,
                                   .end = s->last_end, .rc = rc };
        if (rc < 0) {
            /* listeners must not lose the error record */
            mcdc_error saved = *mcdc_error_last();
            emit(s, &p);
            mcdc_error_set(saved.code, "%s", saved.message);
            if (saved.hint[0])
                mcdc_error_hint("%s", saved.hint);
        } else {
            emit(s, &p);
        }
    }
    if (s->progress_fd >= 0)
        close(s->progress_fd);
    s->progress_fd = -1;
    mcdc_checkpoint_close(s->ck);
    s->ck = NULL;
    mcdc_schema_free(s->captured);
    s->captured = NULL;
    mcdc_schema_free(s->bronze_schema);
    s->bronze_schema = NULL;
    free(s->bronze_map);
    s->bronze_map = NULL;
    mcdc_schema_free(s->facts_schema);
    s->facts_schema = NULL;
    free(s->facts_app_id);
    s->facts_app_id = NULL;
    s->res = NULL;
    return rc;
}
