/*
 * pipeline/snapshot_state.c: the recorded state of a chunked snapshot, read and written.
 *
 * The one owner of these formats (docs/decisions/0014-chunked-snapshot-state.md): a chunked
 * snapshot lives in the facts table and in bronze, never in a checkpoint directory, so the
 * stream and a backfill in another process (or on another machine) see the same state.
 *
 *   row             event           txn {appId, version}              detail
 *   open            snapshot_open   <app>#snapshots, generation       {mode, kind, generation,
 *                                                                      lost_from_ts, lost_to_ts,
 *                                                                      keys, plan: extent}
 *   plan            snapshot_plan   <app>#snapplan.<S>, 0             {snapshot, kind, keys,
 *                                                                      chunk_rows, chunks}
 *   chunk read      snapshot_chunk  <app>#snapchunks.<S>, wave        {snapshot, chunk, wave,
 *                                                                      lo, hi, last}
 *   completion      bootstrap       <app>#events, 0                   {snapshot, chunks, rows,
 *                                                                      last_lsn}
 *
 * A wave's bronze commit carries txn{<app>#snap.<S>, wave} and the userMetadata
 * {"snapshot": S, "wave": w, "lsn": L, "commit_ts", "rows", "chunks": [{"chunk", "lo", "hi",
 * "rows", "max_lsn", "read_seconds"}...]}, from which its chunk rows are written again
 * after a crash. Facts rows are written once (Delta's txn); readers take the first row of
 * a kind and ignore keys they do not know. "Open" = a snapshot_open row (mode chunked) of
 * the stream family with no bootstrap/resnapshot row at or above its S.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/backfill.h"
#include "mcdc/log.h"
#include "pipeline/snapshot_int.h"

int mcdc_snap__key_name(char *out, size_t cap, const char *app_id, const char *suffix,
                        const mcdc_lsn *S)
{
    char l[MCDC_LSN_STRLEN] = "";
    if (S)
        mcdc_stream__lsn_text(l, S);
    if ((size_t)snprintf(out, cap, "%s%s%s", app_id, suffix, l) >= cap)
        return mcdc_error_set(MCDC_EINVAL, "app_id %s: too long", app_id);
    return 0;
}

void mcdc_snap__state_clear(snap_state *st)
{
    free(st->app_id);
    free(st->kind);
    json_decref(st->open_detail);
    json_decref(st->plan);
    free(st->chunks);
    memset(st, 0, sizeof *st);
}

static bool str_is(const mcdc_value *v, const char *s)
{
    size_t n = strlen(s);
    return !v->is_null && v->v.s.len == n && memcmp(v->v.s.ptr, s, n) == 0;
}

static bool lsn_of(const mcdc_value *v, mcdc_lsn *out)
{
    char t[MCDC_LSN_STRLEN + 8];
    if (v->is_null || v->v.s.len >= sizeof t)
        return false;
    memcpy(t, v->v.s.ptr, v->v.s.len);
    t[v->v.s.len] = 0;
    return mcdc_lsn_parse(out, t) == 0;
}

static json_t *json_of(const mcdc_value *v)
{
    return v->is_null ? NULL : json_loadb(v->v.s.ptr, v->v.s.len, 0, NULL);
}

enum { C_APP, C_EVENT, C_ROWS, C_MAX, C_MIN_TS, C_DETAIL, C_TARGET, C_WRITTEN, C_N };

int mcdc_snap__state_read(snap_state *out, const char *facts_path, const char *target,
                          const char *family)
{
    memset(out, 0, sizeof *out);
    mcdc_delta_snapshot *fs = NULL;
    int rc = mcdc_delta_snapshot_open(&fs, facts_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    static const char *const cols[C_N] = { "app_id", "event", "rows", "max_lsn", "min_commit_ts",
                                           "detail", "target", "written_at" };
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = C_N;
    mcdc_delta_scan *sc = NULL;
    rc = mcdc_delta_scan_open(&sc, fs, &so);
    /* completions and full opens are kept as LSN lists, chunks and plans for every S seen,
     * then narrowed to the newest chunked open */
    mcdc_lsn *done = NULL, *fulls = NULL;
    size_t n_done = 0, n_fulls = 0;
    typedef struct { mcdc_lsn S; json_t *d; } keyed;
    keyed *plans = NULL, *chunks = NULL;
    size_t n_plans = 0, n_chunks = 0;
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        char fam[256], app[256];
        if (r[C_APP].is_null || r[C_APP].v.s.len >= sizeof app || !str_is(&r[C_TARGET], target))
            continue;
        memcpy(app, r[C_APP].v.s.ptr, r[C_APP].v.s.len);
        app[r[C_APP].v.s.len] = 0;
        if (family && (mcdc_stream_family(fam, sizeof fam, app) < 0 || strcmp(fam, family) != 0))
            continue;
        mcdc_lsn at;
        if (!lsn_of(&r[C_MAX], &at))
            continue;
        if (str_is(&r[C_EVENT], "bootstrap") || str_is(&r[C_EVENT], "resnapshot") ||
            str_is(&r[C_EVENT], "snapshot_open")) {
            json_t *d = str_is(&r[C_EVENT], "snapshot_open") ? json_of(&r[C_DETAIL]) : NULL;
            const char *mode = json_string_value(json_object_get(d, "mode"));
            if (!str_is(&r[C_EVENT], "snapshot_open")) {
                mcdc_lsn *nd = realloc(done, (n_done + 1) * sizeof *nd);
                if (!nd) { rc = mcdc_error_set(MCDC_ENOMEM, "facts: out of memory"); break; }
                (done = nd)[n_done++] = at;
            } else if (mode && !strcmp(mode, "full")) {
                mcdc_lsn *nf = realloc(fulls, (n_fulls + 1) * sizeof *nf);
                if (!nf) { json_decref(d); rc = mcdc_error_set(MCDC_ENOMEM, "facts: out of memory"); break; }
                (fulls = nf)[n_fulls++] = at;
            } else if (!out->has_open || mcdc_lsn_cmp(&at, &out->S.lsn) > 0) {
                json_decref(out->open_detail);
                free(out->app_id);
                free(out->kind);
                out->open_detail = d;
                d = NULL;
                out->has_open = true;
                out->S.lsn = at;
                out->S.has_commit_ts = !r[C_MIN_TS].is_null;
                out->S.commit_ts_us = r[C_MIN_TS].v.i;
                out->open_written_at_us = r[C_WRITTEN].is_null ? 0 : r[C_WRITTEN].v.i;
                out->app_id = strdup(app);
                json_t *g = json_object_get(out->open_detail, "generation");
                out->generation = json_is_integer(g) ? json_integer_value(g) : 0;
                const char *kind = json_string_value(json_object_get(out->open_detail, "kind"));
                if (!kind) /* an unreleased form put the kind in mode */
                    kind = out->generation ? "resnapshot" : "bootstrap";
                out->kind = strdup(kind);
                if (!out->app_id || !out->kind) rc = mcdc_error_set(MCDC_ENOMEM, "facts: out of memory");
            }
            json_decref(d);
        } else if (str_is(&r[C_EVENT], "snapshot_plan") || str_is(&r[C_EVENT], "snapshot_chunk")) {
            bool plan = str_is(&r[C_EVENT], "snapshot_plan");
            json_t *d = json_of(&r[C_DETAIL]);
            mcdc_lsn S;
            const char *st = json_string_value(json_object_get(d, "snapshot"));
            if (!d || !st || mcdc_lsn_parse(&S, st) < 0) {
                json_decref(d);
                continue;
            }
            if (!plan)
                json_object_set_new(d, "_rows", json_integer(r[C_ROWS].is_null ? 0 : r[C_ROWS].v.i));
            keyed **arr = plan ? &plans : &chunks;
            size_t *n = plan ? &n_plans : &n_chunks;
            keyed *na = realloc(*arr, (*n + 1) * sizeof *na);
            if (!na) { json_decref(d); rc = mcdc_error_set(MCDC_ENOMEM, "facts: out of memory"); break; }
            na[*n].S = S;
            na[*n].d = d;
            *arr = na;
            (*n)++;
        }
    }
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(fs);
    if (rc == 0 && out->has_open) {
        for (size_t i = 0; i < n_done; i++)
            if (mcdc_lsn_cmp(&done[i], &out->S.lsn) >= 0)
                out->completed = true;
        for (size_t i = 0; i < n_plans && !out->plan; i++)
            if (mcdc_lsn_cmp(&plans[i].S, &out->S.lsn) == 0)
                out->plan = json_incref(plans[i].d);
        for (size_t i = 0; rc == 0 && i < n_chunks; i++) {
            if (mcdc_lsn_cmp(&chunks[i].S, &out->S.lsn) != 0)
                continue;
            snap_chunk_fact *nc = realloc(out->chunks, (out->n_chunks + 1) * sizeof *nc);
            if (!nc) { rc = mcdc_error_set(MCDC_ENOMEM, "facts: out of memory"); break; }
            out->chunks = nc;
            nc[out->n_chunks].chunk = json_integer_value(json_object_get(chunks[i].d, "chunk"));
            nc[out->n_chunks].wave = json_integer_value(json_object_get(chunks[i].d, "wave"));
            nc[out->n_chunks].rows = json_integer_value(json_object_get(chunks[i].d, "_rows"));
            out->n_chunks++;
        }
    }
    for (size_t i = 0; i < n_fulls; i++) { /* a full open of the family not completed */
        bool closed = false;
        for (size_t k = 0; k < n_done; k++)
            if (mcdc_lsn_cmp(&done[k], &fulls[i]) >= 0)
                closed = true;
        if (!closed)
            out->has_full_open = true;
    }
    for (size_t i = 0; i < n_plans; i++)
        json_decref(plans[i].d);
    for (size_t i = 0; i < n_chunks; i++)
        json_decref(chunks[i].d);
    free(plans);
    free(chunks);
    free(done);
    free(fulls);
    if (rc < 0)
        mcdc_snap__state_clear(out);
    return rc;
}

/* ---- writing event rows ---------------------------------------------------------------- */

void mcdc_snap__events_clear(snap_event *ev, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(ev[i].detail);
        ev[i].detail = NULL;
    }
}

static void set_str(mcdc_value *v, const char *s)
{
    v->is_null = false;
    v->v.s.ptr = s;
    v->v.s.len = strlen(s);
}

static void set_i64(mcdc_value *v, int64_t x)
{
    v->is_null = false;
    v->v.i = x;
}

int mcdc_snap__write_events(mcdc_stream *s, snap_event *ev, size_t n, const char *txn_app,
                            int64_t version)
{
    mcdc_value row[MCDC_FACTS_N_COLUMNS];
    char at[MCDC_LSN_STRLEN], mx[MCDC_LSN_STRLEN];
    int64_t now = mcdc_time_now_us();
    mcdc_datafile *df = NULL;
    int rc = mcdc_datafile__open(&df, s->o.facts_path, s->facts_schema);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const snap_event *e = &ev[i];
        for (int c = 0; c < MCDC_FACTS_N_COLUMNS; c++)
            row[c].is_null = true;
        set_str(&row[MCDC_FACTS_APP_ID], e->app_id);
        if (e->rows >= 0)
            set_i64(&row[MCDC_FACTS_ROWS], e->rows);
        set_str(&row[MCDC_FACTS_MIN_LSN], mcdc_stream__lsn_text(at, &e->at.lsn));
        set_str(&row[MCDC_FACTS_MAX_LSN], e->has_max ? mcdc_stream__lsn_text(mx, &e->max_lsn) : at);
        set_str(&row[MCDC_FACTS_END_LSN], at);
        if (e->at.has_commit_ts) {
            set_i64(&row[MCDC_FACTS_MIN_COMMIT_TS], e->at.commit_ts_us);
            set_i64(&row[MCDC_FACTS_MAX_COMMIT_TS], e->at.commit_ts_us);
            set_i64(&row[MCDC_FACTS_END_COMMIT_TS], e->at.commit_ts_us);
        }
        set_i64(&row[MCDC_FACTS_DELETES], 0);
        set_i64(&row[MCDC_FACTS_INSERTS], 0);
        set_i64(&row[MCDC_FACTS_UPDATES], 0);
        if (e->started_at_us) {
            set_i64(&row[MCDC_FACTS_STARTED_AT], e->started_at_us);
            set_i64(&row[MCDC_FACTS_DURATION_MS], e->duration_ms);
        }
        if (e->read_seconds >= 0) {
            row[MCDC_FACTS_READ_SECONDS].is_null = false;
            row[MCDC_FACTS_READ_SECONDS].v.d = e->read_seconds;
        }
        if (e->has_lost_from)
            set_i64(&row[MCDC_FACTS_LOST_FROM_TS], e->lost_from_us);
        if (e->has_lost_to) {
            set_i64(&row[MCDC_FACTS_LOST_TO_TS], e->lost_to_us);
            set_i64(&row[MCDC_FACTS_RETENTION_WATERMARK_TS], e->lost_to_us);
        }
        set_str(&row[MCDC_FACTS_EVENT], e->event);
        if (e->detail)
            set_str(&row[MCDC_FACTS_DETAIL], e->detail);
        set_str(&row[MCDC_FACTS_TARGET], s->o.target);
        set_i64(&row[MCDC_FACTS_WRITTEN_AT], now);
        rc = mcdc_datafile__add(df, row);
    }
    if (rc < 0) {
        mcdc_datafile__discard(df);
        return rc;
    }
    return mcdc_stream__commit_facts_file(s, df, "WRITE", txn_app, version, NULL);
}

int mcdc_chunked_snapshot_find(mcdc_chunked_snapshot *out, const char *facts_path,
                               const char *target)
{
    memset(out, 0, sizeof *out);
    snap_state st;
    int rc = mcdc_snap__state_read(&st, facts_path, target, NULL);
    if (rc < 0)
        return rc;
    out->found = st.has_open;
    out->is_open = st.has_open && !st.completed;
    out->snapshot = st.S.lsn;
    out->chunks_done = (int64_t)st.n_chunks;
    out->chunks_total = (int64_t)json_array_size(json_object_get(st.plan, "chunks"));
    snprintf(out->app_id, sizeof out->app_id, "%s", st.app_id ? st.app_id : "");
    mcdc_snap__state_clear(&st);
    return 0;
}

int mcdc_chunked_snapshot_plan(char **out, const char *facts_path, const char *target)
{
    *out = NULL;
    snap_state st;
    int rc = mcdc_snap__state_read(&st, facts_path, target, NULL);
    if (rc < 0)
        return rc;
    if (json_is_object(st.plan) && !(*out = json_dumps(st.plan, JSON_COMPACT)))
        rc = mcdc_error_set(MCDC_ENOMEM, "facts: out of memory");
    mcdc_snap__state_clear(&st);
    return rc;
}

int mcdc_chunked_snapshot_last_chunk(const char *facts_path, const char *target, int64_t wave,
                                     int64_t *out)
{
    *out = -1;
    snap_state st;
    int rc = mcdc_snap__state_read(&st, facts_path, target, NULL);
    if (rc < 0)
        return rc;
    bool seen = false;
    for (size_t i = 0; i < st.n_chunks; i++) {
        if (st.chunks[i].wave == wave)
            seen = true;
        if (st.chunks[i].wave <= wave && st.chunks[i].chunk > *out)
            *out = st.chunks[i].chunk;
    }
    if (!seen)
        *out = -1;
    mcdc_snap__state_clear(&st);
    return 0;
}

static int cmp_chunk(const void *a, const void *b)
{
    const mcdc_snapshot_chunk_fact *x = a, *y = b;
    return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

int mcdc_chunked_snapshot_chunks(mcdc_chunked_snapshot *out, mcdc_snapshot_chunk_fact **chunks,
                                 size_t *n_chunks, const char *facts_path, const char *target)
{
    memset(out, 0, sizeof *out);
    *chunks = NULL;
    *n_chunks = 0;
    snap_state st;
    int rc = mcdc_snap__state_read(&st, facts_path, target, NULL);
    if (rc < 0)
        return rc;
    out->found = st.has_open;
    out->is_open = st.has_open && !st.completed;
    out->snapshot = st.S.lsn;
    out->chunks_done = (int64_t)st.n_chunks;
    out->chunks_total = (int64_t)json_array_size(json_object_get(st.plan, "chunks"));
    if (st.n_chunks) {
        mcdc_snapshot_chunk_fact *c = malloc(st.n_chunks * sizeof *c);
        if (!c) {
            mcdc_snap__state_clear(&st);
            return mcdc_error_set(MCDC_ENOMEM, "facts: out of memory");
        }
        for (size_t i = 0; i < st.n_chunks; i++)
            c[i] = (mcdc_snapshot_chunk_fact){ st.chunks[i].chunk, st.chunks[i].wave, st.chunks[i].rows };
        qsort(c, st.n_chunks, sizeof *c, cmp_chunk);
        *chunks = c;
        *n_chunks = st.n_chunks;
    }
    mcdc_snap__state_clear(&st);
    return 0;
}

int mcdc_snap__headroom(const char *facts_path, const char *target, const char *family,
                        bool *has, double *hours, int64_t *written_at_us)
{
    *has = false;
    mcdc_delta_snapshot *fs = NULL;
    int rc = mcdc_delta_snapshot_open(&fs, facts_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    static const char *const cols[] = { "app_id", "target", "retention_headroom_hours", "written_at" };
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = 4;
    mcdc_delta_scan *sc = NULL;
    rc = mcdc_delta_scan_open(&sc, fs, &so);
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        char fam[256], app[256];
        if (r[0].is_null || r[0].v.s.len >= sizeof app || r[2].is_null || r[3].is_null ||
            !str_is(&r[1], target))
            continue;
        memcpy(app, r[0].v.s.ptr, r[0].v.s.len);
        app[r[0].v.s.len] = 0;
        if (mcdc_stream_family(fam, sizeof fam, app) < 0 || strcmp(fam, family) != 0)
            continue;
        if (!*has || r[3].v.i > *written_at_us) {
            *has = true;
            *hours = r[2].v.d;
            *written_at_us = r[3].v.i;
        }
    }
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(fs);
    return rc;
}
