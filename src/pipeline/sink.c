/*
 * pipeline/sink.c: where a batch goes: rows into one bronze data file as they are read,
 * the bronze commit with txn{app_id, N} and the facts as userMetadata, the facts rows
 * with txn{app_id#facts, N}, and the txn checks that make a replay write nothing twice.
 *
 * A batch is never held in memory: each row goes to the Parquet writer as the source
 * hands it over, and the facts are counted from the same rows (invariant 5). A batch
 * without rows opens no file and writes no bronze commit. Bronze's schema rules: captured
 * columns it lacks are added (nullable) and widened types widen (delta.enableTypeWidening
 * only), both in the commit that adds the rows; columns it has that the capture instance
 * no longer captures are written NULL; any other type change stops with MCDC_ESCHEMA.
 * Design: docs/architecture.md §3, §5; anchor-features §2.3-§2.5.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/failpoint.h"
#include "mcdc/log.h"
#include "mcdc/storage.h"
#include "pipeline/stream_int.h"

int mcdc_stream__table_txn(const char *path, const char *app_id, int64_t *out, bool *exists,
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
int mcdc_stream__find_commit_metadata(const char *path, const char *app_id, int64_t version,
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

/* Whether bronze commit N is this checkpoint's batch N (invariant 10): the range in its
 * userMetadata @p um must equal offsets/N's. A commit that log cleanup removed (@p um
 * NULL) or one written before commits recorded their range cannot tell and is taken
 * as the batch, as before. */
int mcdc_stream__check_bronze_range(mcdc_stream *s, const mcdc_batch_range *r, const char *um,
                                    int64_t bronze_version)
{
    if (!um)
        return 0;
    mcdc_lsn a, b;
    int rc = mcdc_batch_meta_range(um, &a, &b);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        mcdc_log(MCDC_LOG_INFO, LOGGER, "batch %" PRId64 ": bronze version %" PRId64 " records "
                 "no range (an older commit); taken as the batch", r->batch_id, bronze_version);
        return 0;
    }
    if (rc < 0)
        return rc;
    if (mcdc_lsn_cmp(&a, &r->start.lsn) == 0 && mcdc_lsn_cmp(&b, &r->end.lsn) == 0)
        return 0;
    char t[4][MCDC_LSN_STRLEN];
    mcdc_error_set(MCDC_ECONFLICT, "%s: batch %" PRId64 " of app_id '%s' in bronze (version %"
                   PRId64 ") is the range (%s, %s] but checkpoint %s recorded (%s, %s]: another "
                   "stream with the same app_id writes to this table", s->o.target, r->batch_id,
                   s->o.app_id, bronze_version, mcdc_lsn_format(t[0], &a),
                   mcdc_lsn_format(t[1], &b), s->o.checkpoint,
                   mcdc_lsn_format(t[2], &r->start.lsn), mcdc_lsn_format(t[3], &r->end.lsn));
    return mcdc_error_hint("nothing of this batch was written; run one stream per app_id: stop "
                           "the other one, or give this one a new --app-id and --checkpoint");
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
int mcdc_stream__ensure_table(const char *path, const mcdc_schema *schema, const char *kind,
                        const char *version, const mcdc_delta_map *extra)
{
    int64_t v;
    if (mcdc_delta_latest_version(&v, path) == 0)
        return 0;
    mcdc_error_clear();
    mcdc_delta_map cfg = { 0 };
    int rc = table_config(&cfg, kind, version);
    for (size_t i = 0; extra && rc == 0 && i < extra->n; i++)
        rc = mcdc_delta_map_set(&cfg, extra->kv[i].key, extra->kv[i].value);
    if (rc == 0)
        rc = mcdc_storage_mkdirs(path);
    if (rc == 0)
        rc = mcdc_delta_create(path, schema, NULL, 0, &cfg, NULL);
    mcdc_delta_map_clear(&cfg);
    return rc;
}

static bool is_integer(mcdc_type_id t)
{
    return t == MCDC_TYPE_BYTE || t == MCDC_TYPE_SHORT || t == MCDC_TYPE_INT ||
           t == MCDC_TYPE_LONG;
}

/* Bronze's write schema and the map from its columns to where values come from. When
 * bronze exists its schema rules: captured columns it lacks are added first; columns it
 * has that are no longer captured are written NULL. */
int mcdc_stream__prepare_bronze(mcdc_stream *s)
{
    mcdc_schema *want = NULL;
    int rc = mcdc_bronze_schema(&want, s->captured, s->o.include_command_id);
    if (rc < 0)
        return rc;
    mcdc_delta_snapshot *snap = NULL;
    rc = mcdc_stream__table_txn(s->o.target_path, s->o.app_id, &s->bronze_txn, &s->bronze_exists, &snap);
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
            mcdc_column *h = &have->cols[k];
            if (mcdc_delta_type_same(h, w))
                continue;
            char a[64], b[64];
            mcdc_type_name(a, sizeof a, h);
            mcdc_type_name(b, sizeof b, w);
            if (mcdc_delta_type_widens(h, w) && mcdc_stream__type_holds(h, w)) {
                /* a widening: bronze's column widens in the batch's commit, where allowed */
                if (strcasecmp(mcdc_delta_snapshot_config(snap, "delta.enableTypeWidening",
                                                          "false"), "true") != 0) {
                    rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s is %s in bronze and %s in "
                                        "the capture instance %s now: bronze does not have "
                                        "delta.enableTypeWidening=true", s->o.target, w->name,
                                        a, b, s->ci);
                    mcdc_stream__schema_hint(s);
                    break;
                }
                if (!s->bronze_widened && !(s->bronze_widened = mcdc_schema_new())) {
                    rc = mcdc_error_set(MCDC_ENOMEM, "bronze schema: out of memory");
                    break;
                }
                if (mcdc_schema_find(s->bronze_widened, h->name) < 0 &&
                    (rc = mcdc_schema_add(s->bronze_widened, h->name, h->type, h->precision,
                                          h->scale, true)) < 0)
                    break;
                h->type = w->type;
                h->precision = w->precision;
                h->scale = w->scale;
                continue;
            }
            /* a narrower type that bronze's column holds as it is (integers; decimals of
             * one scale) */
            bool same_repr = (is_integer(h->type) && is_integer(w->type)) ||
                             (h->type == w->type &&
                              (h->type != MCDC_TYPE_DECIMAL || h->scale == w->scale));
            if (mcdc_stream__type_holds(w, h) && same_repr)
                continue;
            rc = mcdc_error_set(MCDC_ESCHEMA, "%s: column %s is %s in bronze but the capture "
                                "instance %s gives %s, which %s cannot hold", s->o.target,
                                w->name, a, s->ci, b, a);
            mcdc_error_hint("nothing was read or written; the stream cannot go on through this "
                            "change: stream the table to a new --target with a new --checkpoint "
                            "and --app-id (with --bootstrap), or capture the column again in a "
                            "new capture instance (docs/guides/schema-changes.md)");
        }
        for (size_t i = 0; i < missing->n_cols && rc == 0; i++) {
            const mcdc_column *c = &missing->cols[i]; /* added by the run, before writing */
            rc = mcdc_schema_add(have, c->name, c->type, c->precision, c->scale, true);
        }
        if (rc == 0 && missing->n_cols > 0) {
            s->bronze_missing = missing;
            missing = NULL;
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

/* Take the next row of @p f (its index in @p idx) for the event @p event of batch
 * @p batch_id: the stream's app id, no rows of any operation, every other column NULL.
 * @return 0; MCDC_ERROR when @p f is full. */
static int fset_event_row(facts_rows *f, const mcdc_stream *s, int64_t batch_id,
                          const char *event, int *idx)
{
    if (f->n >= MAX_FACTS_ROWS)
        return mcdc_error_set(MCDC_ERROR, "batch %" PRId64 ": too many event rows", batch_id);
    *idx = f->n++;
    mcdc_value *v = f->v[*idx];
    fset_null(v);
    fset_str(v, MCDC_FACTS_APP_ID, s->o.app_id);
    fset_i64(v, MCDC_FACTS_BATCH_ID, batch_id);
    fset_i64(v, MCDC_FACTS_ROWS, 0);
    fset_i64(v, MCDC_FACTS_DELETES, 0);
    fset_i64(v, MCDC_FACTS_INSERTS, 0);
    fset_i64(v, MCDC_FACTS_UPDATES, 0);
    fset_str(v, MCDC_FACTS_EVENT, event);
    return 0;
}

/* The LSN and commit-time columns of an event at one position (min = max = end), the LSN
 * text kept in @p text. */
static void fset_point(mcdc_value *v, char *text, const mcdc_offset *at)
{
    fset_str(v, MCDC_FACTS_MIN_LSN, mcdc_stream__lsn_text(text, &at->lsn));
    fset_str(v, MCDC_FACTS_MAX_LSN, text);
    fset_str(v, MCDC_FACTS_END_LSN, text);
    if (at->has_commit_ts) {
        fset_i64(v, MCDC_FACTS_MIN_COMMIT_TS, at->commit_ts_us);
        fset_i64(v, MCDC_FACTS_MAX_COMMIT_TS, at->commit_ts_us);
        fset_i64(v, MCDC_FACTS_END_COMMIT_TS, at->commit_ts_us);
    }
}

void mcdc_stream__facts_rows_clear(facts_rows *f)
{
    for (int i = 0; i < MAX_FACTS_ROWS; i++)
        free(f->detail[i]);
}

bool mcdc_stream__headroom_hours(double *out, const batch_metrics *m, const mcdc_batch_range *r,
                                 const mcdc_batch_facts *bf)
{
    if (!m->has_watermark)
        return false;
    int64_t ref = r->end.has_commit_ts ? r->end.commit_ts_us
                                        : (bf->rows > 0 ? bf->max_commit_ts_us : INT64_MIN);
    if (ref == INT64_MIN)
        return false;
    *out = round((double)(ref - m->watermark_ts_us) / 3600e6 * 100.0) / 100.0;
    return true;
}

/* The batch's own row, in slot 0 (reserved when the batch started). */
void mcdc_stream__set_batch_row(facts_rows *f, mcdc_stream *s, int64_t batch_id,
                          const mcdc_batch_facts *bf, const mcdc_batch_range *r,
                          const batch_metrics *m)
{
    mcdc_value *v = f->v[0];
    char (*t)[MCDC_TIME_STRLEN] = f->text[0];
    fset_null(v);
    fset_str(v, MCDC_FACTS_APP_ID, s->o.app_id);
    fset_i64(v, MCDC_FACTS_BATCH_ID, batch_id);
    if (bf->counts_known) {
        fset_i64(v, MCDC_FACTS_ROWS, bf->rows);
        fset_i64(v, MCDC_FACTS_DELETES, bf->deletes);
        fset_i64(v, MCDC_FACTS_INSERTS, bf->inserts);
        fset_i64(v, MCDC_FACTS_UPDATES, bf->updates);
        if (bf->rows > 0) {
            fset_str(v, MCDC_FACTS_MIN_LSN, mcdc_stream__lsn_text(t[0], &bf->min_lsn));
            fset_str(v, MCDC_FACTS_MAX_LSN, mcdc_stream__lsn_text(t[1], &bf->max_lsn));
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
    fset_str(v, MCDC_FACTS_END_LSN, mcdc_stream__lsn_text(t[2], &r->end.lsn));
    if (r->end.has_commit_ts)
        fset_i64(v, MCDC_FACTS_END_COMMIT_TS, r->end.commit_ts_us);
    if (m->has_watermark)
        fset_i64(v, MCDC_FACTS_RETENTION_WATERMARK_TS, m->watermark_ts_us);
    double headroom;
    if (mcdc_stream__headroom_hours(&headroom, m, r, bf))
        fset_dbl(v, MCDC_FACTS_RETENTION_HEADROOM_HOURS, headroom);
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
    if (m->detail) {
        free(f->detail[0]);
        f->detail[0] = strdup(m->detail);
        if (f->detail[0])
            fset_str(v, MCDC_FACTS_DETAIL, f->detail[0]);
    }
}

/* The data_skipped event row of batch @p batch_id (one per batch): changes from..to are
 * gone, to at most the batch's end; lost_from_ts is the commit time of the batch's start,
 * lost_to_ts that of `to`. */
int mcdc_stream__add_skip_row(facts_rows *f, mcdc_stream *s, int64_t batch_id, const mcdc_lsn *from,
                        const mcdc_lsn *to, const mcdc_batch_range *r, bool certain)
{
    int idx, rc;
    if ((rc = fset_event_row(f, s, batch_id, "data_skipped", &idx)) < 0)
        return rc;
    mcdc_value *v = f->v[idx];
    char (*t)[MCDC_TIME_STRLEN] = f->text[idx];
    /* lost_to_ts: the commit time at `to` (the batch's end when the whole batch was lost);
     * where no mapping entry has that LSN, the first commit at or after it */
    mcdc_offset at;
    if (mcdc_lsn_cmp(to, &r->end.lsn) == 0 && r->end.has_commit_ts)
        at = r->end;
    else if ((rc = mcdc_stream__offset_at(s, to, &at)) < 0)
        return rc;
    mcdc_lsn before;
    if (!at.has_commit_ts && mcdc_lsn_decrement(&before, to) == 0) {
        mcdc_lsn nth;
        int64_t ts = 0, found = 0;
        if ((rc = s->o.source->ops->nth_commit_after(s->o.source, &before, 1, &nth, &ts,
                                                     &found)) < 0)
            return rc;
        if (found > 0) {
            at.has_commit_ts = true;
            at.commit_ts_us = ts;
        }
    }
    at.lsn = *to;
    fset_point(v, t[0], &at);
    if (at.has_commit_ts)
        fset_i64(v, MCDC_FACTS_LOST_TO_TS, at.commit_ts_us);
    if (r->start.has_commit_ts)
        fset_i64(v, MCDC_FACTS_LOST_FROM_TS, r->start.commit_ts_us);
    char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN];
    mcdc_buf d = MCDC_BUF_INIT(4096);
    rc = mcdc_buf_printf(&d, "{\"from\":\"%s\",\"to\":\"%s\",\"certain\":%s", mcdc_stream__lsn_text(a, from),
                         mcdc_stream__lsn_text(b, to), certain ? "true" : "false");
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

int mcdc_stream__add_start_row(facts_rows *f, mcdc_stream *s, int64_t batch_id,
                               const mcdc_batch_range *r)
{
    int idx, rc;
    if ((rc = fset_event_row(f, s, batch_id, "stream_started", &idx)) < 0)
        return rc;
    mcdc_value *v = f->v[idx];
    char (*t)[MCDC_TIME_STRLEN] = f->text[idx];
    fset_point(v, t[0], &r->end);
    char ts[MCDC_TIME_STRLEN] = "";
    if (r->end.has_commit_ts)
        mcdc_time_format(ts, r->end.commit_ts_us, 3, false);
    mcdc_buf d = MCDC_BUF_INIT(4096);
    rc = mcdc_buf_printf(&d, "{\"starting\":\"latest\",\"lsn\":\"%s\",\"commit_ts\":%s%s%s}",
                         t[0], ts[0] ? "\"" : "", ts[0] ? ts : "null", ts[0] ? "\"" : "");
    if (rc < 0) {
        mcdc_buf_dispose(&d);
        return rc;
    }
    f->detail[idx] = mcdc_buf_detach(&d);
    fset_str(v, MCDC_FACTS_DETAIL, f->detail[idx]);
    fset_str(v, MCDC_FACTS_TARGET, s->o.target);
    return 0;
}

int mcdc_stream__add_text_event_row(facts_rows *f, mcdc_stream *s, int64_t batch_id,
                                    const char *event, const mcdc_offset *at, const char *detail)
{
    int idx, rc;
    if ((rc = fset_event_row(f, s, batch_id, event, &idx)) < 0)
        return rc;
    mcdc_value *v = f->v[idx];
    fset_point(v, f->text[idx][0], at);
    if (!(f->detail[idx] = strdup(detail ? detail : "")))
        return mcdc_error_set(MCDC_ENOMEM, "facts: out of memory");
    fset_str(v, MCDC_FACTS_DETAIL, f->detail[idx]);
    fset_str(v, MCDC_FACTS_TARGET, s->o.target);
    return 0;
}

/* Write the rows as one facts commit with txn{app_id, version}. */
int mcdc_stream__write_facts(mcdc_stream *s, facts_rows *f, const char *app_id, int64_t version,
                       int64_t *out_version)
{
    *out_version = -1;
    int64_t now = mcdc_time_now_us();
    for (int i = 0; i < f->n; i++)
        fset_i64(f->v[i], MCDC_FACTS_WRITTEN_AT, now);
    mcdc_datafile *df = NULL;
    int rc = mcdc_datafile__open(&df, s->o.facts_path, s->facts_schema);
    for (int i = 0; i < f->n && rc == 0; i++)
        rc = mcdc_datafile__add(df, f->v[i]);
    if (rc < 0) {
        mcdc_datafile__discard(df);
        return rc;
    }
    return mcdc_stream__commit_facts_file(s, df, "STREAMING UPDATE", app_id, version, out_version);
}

int mcdc_stream__commit_facts_file(mcdc_stream *s, mcdc_datafile *df, const char *operation,
                                   const char *app_id, int64_t version, int64_t *out_version)
{
    if (out_version)
        *out_version = -1;
    mcdc_delta_file add = { 0 };
    int rc = mcdc_datafile__finish(df, &add);
    if (rc < 0)
        return rc;
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    co.operation = operation;
    co.app_id = app_id;
    co.txn_version = version;
    co.compact_in_background = true; /* as bronze's (ADR 0046) */
    mcdc_delta_commit_result res = { 0 };
    rc = mcdc_delta_append(s->o.facts_path, &add, 1, &co, &res);
    if (rc == MCDC_EALREADY) { /* a replay: the rows are there already */
        mcdc_error_clear();
        mcdc_datafile__remove(s->o.facts_path, add.path);
        rc = 0;
    } else if (rc == 0 && out_version) {
        *out_version = res.version;
    }
    mcdc_delta_file_clear(&add);
    return rc;
}

/* ---- data loss ------------------------------------------------------------------------------ */


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
        if (rc == 0) /* reading and Parquet encoding overlap on two threads */
            rc = mcdc_rowpipe__start(&x->pipe, x->df, s->bronze_schema);
        if (rc < 0)
            return rc;
    }
    const mcdc_schema *bs = s->bronze_schema;
    if (ch) {
        if (!x->start_is_text || memcmp(x->start_of_text.b, ch->start_lsn.b, sizeof ch->start_lsn.b) != 0) {
            mcdc_stream__lsn_text(x->start_text, &ch->start_lsn); /* a commit's rows share it */
            x->start_of_text = ch->start_lsn;
            x->start_is_text = true;
        }
        mcdc_stream__lsn_text(x->seq_text, &ch->seqval);
    } else {
        x->start_is_text = false;
        mcdc_stream__lsn_text(x->start_text, x->stamp ? x->stamp : x->snapshot);
        mcdc_stream__lsn_text(x->snap_text, x->snapshot);
    }
    mcdc_value *row = mcdc_rowpipe__row(x->pipe); /* filled in place */
    if (!row)
        return MCDC_ENOMEM;
    for (size_t i = 0; i < bs->n_cols; i++) {
        mcdc_value *v = &row[i];
        v->is_null = false;
        switch (s->bronze_map[i]) {
        case BCOL_CI:
            v->v.s.ptr = s->ci;
            v->v.s.len = strlen(s->ci);
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
            if (ch || x->range_rows) {
                v->is_null = true;
            } else {
                v->v.s.ptr = x->snap_text;
                v->v.s.len = MCDC_LSN_STRLEN - 1;
            }
            break;
        case BCOL_CHUNK:
            if (!ch && x->has_chunk)
                v->v.i = x->chunk;
            else
                v->is_null = true;
            break;
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
    return mcdc_rowpipe__push(x->pipe);
}

int mcdc_stream__on_change(const mcdc_change *ch, void *payload)
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

int mcdc_stream__on_snapshot_row(const mcdc_value *values, void *payload)
{
    read_ctx *x = payload;
    mcdc_failpoint("stream.bootstrap.mid_read");
    int rc = put_row(x, values, NULL);
    if (rc == 0)
        x->facts.rows++;
    return rc;
}

int mcdc_stream__read_init(read_ctx *x, mcdc_stream *s)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    x->facts = (mcdc_batch_facts)MCDC_BATCH_FACTS_INIT;
    return 0;
}

void mcdc_stream__read_dispose(read_ctx *x)
{
    mcdc_rowpipe__abort(x->pipe); /* before the file it writes */
    x->pipe = NULL;
    mcdc_datafile__discard(x->df);
    x->df = NULL;
}

/* Append the finished data file of @p x to bronze with txn{app_id, version}.
 * *out_version: the version written, -1 when found already committed. */
int mcdc_stream__commit_bronze(mcdc_stream *s, read_ctx *x, const char *app_id, int64_t version,
                         const char *user_metadata, const char *operation,
                         const mcdc_batch_range *r, int64_t *out_version)
{
    *out_version = -1;
    mcdc_delta_file add = { 0 };
    mcdc_datafile *df = x->df;
    int rc = mcdc_rowpipe__finish(x->pipe); /* every row is in the file */
    x->pipe = NULL;
    x->df = NULL;
    if (rc < 0) {
        mcdc_datafile__discard(df);
        return rc;
    }
    rc = mcdc_datafile__finish(df, &add);
    if (rc < 0)
        return rc;
    mcdc_failpoint(x->snapshot ? "stream.bootstrap.after_data_file" : "stream.after_data_file");
    if (!s->bronze_exists) {
        mcdc_delta_map own = { NULL, 0 };
        rc = mcdc_stream__bronze_config(&own, s);
        if (rc == 0)
            rc = mcdc_stream__ensure_table(s->o.target_path, s->bronze_schema, "bronze", "2", &own);
        mcdc_delta_map_clear(&own);
        if (rc < 0)
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
    if (r) /* a batch of another writer with this app_id in between is refused, not skipped */
        co.txn_expect = s->bronze_txn;
    co.expect_key = "mcdc.owner"; /* (O3): only while the table is still this stream's */
    co.expect_value = s->family;
    /* a batch never waits for the compaction its file makes due (ADR 0046): the compaction
     * is dataChange=false and its own commit, so what the batch committed is the same */
    co.compact_in_background = true;
    mcdc_delta_commit_result res = { 0 };
    /* bronze's schema evolves in the commit that adds the rows written with it */
    rc = mcdc_delta_append_evolving(s->o.target_path, &add, 1, s->bronze_schema, &co, &res);
    if (rc == MCDC_EALREADY || rc == MCDC_ECONFLICT || rc == MCDC_ESCHEMA)
        mcdc_datafile__remove(s->o.target_path, add.path);
    if (rc == MCDC_ESCHEMA)
        mcdc_stream__schema_hint(s);
    if (rc == MCDC_ECONFLICT && mcdc_stream__owner_changed(s)) {
        rc = mcdc_stream__owner_lost(s); /* (O3) */
    } else if (rc == MCDC_ECONFLICT && r) {
        int64_t now = -1;
        mcdc_error saved = *mcdc_error_last();
        if (mcdc_stream__table_txn(s->o.target_path, app_id, &now, NULL, NULL) < 0)
            now = -1;
        if (now < 0 || now == s->bronze_txn) { /* not the txn check: pass the error on */
            mcdc_error_restore(&saved);
            goto done;
        }
        char was[32] = "none";
        if (s->bronze_txn >= 0)
            snprintf(was, sizeof was, "%" PRId64, s->bronze_txn);
        mcdc_error_set(MCDC_ECONFLICT, "%s: batch %" PRId64 " of app_id '%s' was not written: "
                       "bronze's txn for it moved from %s to %" PRId64 " meanwhile: another "
                       "stream with the same app_id writes to this table", s->o.target,
                       version, app_id, was, now);
        mcdc_error_hint("nothing of this batch was written; run one stream per app_id: stop the "
                        "other one, or give this one a new --app-id and --checkpoint");
    } else if (rc == MCDC_EALREADY) {
        mcdc_error_clear();
        rc = 0;
        if (r) { /* committed meanwhile: by this stream's earlier run only if the range is its */
            char *um = NULL;
            int64_t found = -1;
            rc = mcdc_stream__find_commit_metadata(s->o.target_path, app_id, version, &um, &found);
            if (rc == 0)
                rc = mcdc_stream__check_bronze_range(s, r, um, found);
            free(um);
            if (rc == 0)
                *out_version = found;
        }
    } else if (rc == 0) {
        *out_version = res.version;
    }
done:
    mcdc_delta_file_clear(&add);
    return rc;
}

/* ---- one batch ------------------------------------------------------------------------------ */

int mcdc_stream__write_adopted_event(mcdc_stream *s, const mcdc_offset *after,
                                     int64_t first_batch, const char *from_owner)
{
    if (!s->o.facts_path)
        return 0;
    facts_rows f = { 0 };
    int idx;
    fset_event_row(&f, s, first_batch, "adopted", &idx); /* the first row: never full */
    mcdc_value *v = f.v[idx];
    fset_point(v, f.text[0][0], after);
    fset_i64(v, MCDC_FACTS_STARTED_AT, mcdc_time_now_us());
    fset_str(v, MCDC_FACTS_TARGET, s->o.target);
    mcdc_buf d = MCDC_BUF_INIT(4096);
    int rc = mcdc_buf_puts(&d, "{\"from_owner\":");
    if (rc == 0)
        rc = mcdc_json_quote(&d, from_owner, strlen(from_owner));
    if (rc == 0)
        rc = mcdc_buf_puts(&d, ",\"owner\":");
    if (rc == 0)
        rc = mcdc_json_quote(&d, s->family, strlen(s->family));
    if (rc == 0)
        rc = mcdc_buf_printf(&d, ",\"resumed_after\":\"%s\",\"first_batch\":%" PRId64 "}",
                             f.text[0][0], first_batch);
    if (rc < 0) {
        mcdc_buf_dispose(&d);
        return rc;
    }
    f.detail[0] = mcdc_buf_detach(&d);
    fset_str(v, MCDC_FACTS_DETAIL, f.detail[0]);
    size_t n = strlen(s->o.app_id) + 8;
    char *key = malloc(n);
    if (!key) {
        mcdc_stream__facts_rows_clear(&f);
        return mcdc_error_set(MCDC_ENOMEM, "facts: out of memory");
    }
    snprintf(key, n, "%s#adopt", s->o.app_id);
    int64_t fv;
    rc = mcdc_stream__write_facts(s, &f, key, first_batch, &fv);
    free(key);
    mcdc_stream__facts_rows_clear(&f);
    return rc;
}

int mcdc_stream__write_bootstrap_event(mcdc_stream *s, const mcdc_offset *S, int64_t rows,
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
    fset_point(v, f.text[0][0], S);
    fset_i64(v, MCDC_FACTS_DELETES, 0);
    fset_i64(v, MCDC_FACTS_INSERTS, 0);
    fset_i64(v, MCDC_FACTS_UPDATES, 0);
    if (started_at_us) {
        fset_i64(v, MCDC_FACTS_STARTED_AT, started_at_us);
        fset_i64(v, MCDC_FACTS_DURATION_MS, duration_ms);
    }
    /* a re-snapshot (generation n > 0) is the generation's one `resnapshot` row, with its
     * gap, txn{<base app id>#events, n} */
    fset_str(v, MCDC_FACTS_EVENT, s->gen.n > 0 ? "resnapshot" : "bootstrap");
    fset_str(v, MCDC_FACTS_TARGET, s->o.target);
    mcdc_stream__set_gap_columns(s, v);
    /* detail: a full read's consistent_lsn (a chunked one has its own row); a re-snapshot's
     * lost_after, the last LSN read before its gap (the gap starts above it) */
    char detail[128], cl[MCDC_LSN_STRLEN], la[MCDC_LSN_STRLEN];
    int dl = 0;
    if (s->has_snap_consistent)
        dl += snprintf(detail + dl, sizeof detail - (size_t)dl, "%s\"consistent_lsn\":\"%s\"",
                       dl ? "," : "{", mcdc_stream__lsn_text(cl, &s->snap_consistent));
    if (s->gen.n > 0)
        dl += snprintf(detail + dl, sizeof detail - (size_t)dl, "%s\"lost_after\":\"%s\"",
                       dl ? "," : "{", mcdc_stream__lsn_text(la, &s->gen.lost_after));
    if (dl) {
        snprintf(detail + dl, sizeof detail - (size_t)dl, "}");
        fset_str(v, MCDC_FACTS_DETAIL, detail);
    }
    char events[300];
    int rc = mcdc_stream__base_key(events, sizeof events, s, "#events");
    if (rc < 0)
        return rc;
    int64_t fv;
    rc = mcdc_stream__write_facts(s, &f, events, s->gen.n, &fv);
    mcdc_stream__facts_rows_clear(&f);
    return rc;
}

