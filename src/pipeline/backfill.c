/*
 * pipeline/backfill.c: read an open chunked snapshot's chunks into bronze, in waves.
 *
 * A wave, in order (the failpoints name each step):
 *   1. L = max_lsn, refused when below S (a readable secondary's stale max_lsn);
 *   2. read its chunks, each by key range [lo, hi) into a bronze data file of its own
 *      (operation 0, _start_lsn = L, _snapshot = S, _chunk = i), so memory stays one
 *      row group whatever the wave's size; right after each chunk's read its consistent_lsn
 *      (the newest commit at or before the server's clock: no row read is newer)
 *                                                                      backfill.mid_read
 *   3. append the files to bronze in one commit with txn{<app>#snap.<S>, wave} and the
 *      wave's userMetadata (backfill.after_data_files before, backfill.after_bronze after);
 *   4. one snapshot_chunk facts row per chunk, txn{<app>#snapchunks.<S>, wave}
 *                                                                      backfill.after_chunk_facts
 * Steps 3 and 4 of wave w run on the backfill's thread while steps 1 and 2 of wave w + 1 run
 * on a read-ahead thread (backfill.read_ahead as it starts); at most one wave is read ahead,
 * and only the backfill's thread commits, in wave order.
 * and after the last chunk the completion row (`bootstrap`, txn{<app>#events, 0})
 *                                                                      backfill.after_completion.
 * Resuming (invariants):
 *   (B1) bronze's txn for <app>#snap.<S> is the last wave committed; the next wave starts
 *        at the chunk after that commit's last one (its userMetadata), so no chunk is read
 *        twice into bronze and none is skipped;
 *   (B2) a wave committed to bronze without its facts rows gets them from the commit's
 *        userMetadata before anything else is read;
 *   (B3) the plan is written once (txn v0) and read back: the plan in the facts table is
 *        the plan, whoever wrote it.
 * Design: anchor-features §1 (bootstrap/backfill), §3.3; ADR 0014.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/backfill.h"
#include "mcdc/failpoint.h"
#include "mcdc/fs.h"
#include "mcdc/log.h"
#include "pipeline/snapshot_int.h"

#undef LOGGER
#define LOGGER "backfill"
#define MAX_WAVE_CHUNKS 4096

typedef struct bf {
    const mcdc_backfill_options *o;
    mcdc_backfill_status *st;
    mcdc_stream s;            /* the stream's bronze and facts writers, no checkpoint */
    snap_state state;
    snap_keydef k;
    json_t *chunks;           /* the plan's [[lo, hi], ...] (a reference of its own) */
    size_t n_chunks;
    int64_t next;             /* first chunk not in bronze */
    int64_t wave;             /* next wave number */
    char snap_app[300], chunk_app[300], plan_app[300], events_app[300];
    mcdc_lsn last_lsn;        /* newest wave stamp */
    bool has_last_lsn;
    mcdc_lsn consistent;      /* newest consistent_lsn of a chunk read (this run or the
                               * last wave committed before it) */
    bool has_consistent;
    int progress_fd;          /* --progress file, -1 none */
    mcdc_lsn snap;            /* the rows' _snapshot: S, or a partial backfill's P */
    bool partial;             /* --range: a partial backfill of [range_lo, range_hi) */
    json_t *range_lo, *range_hi; /* its bounds as JSON keys (null: open), owned */
    json_t *key_order;        /* how the source orders the key's columns, or NULL; owned */
    char range_id[40];        /* its run id: names its txns, in its facts rows */
} bf;

/* One JSON line per wave in the progress file (O_APPEND: one write per line). */
static void progress_line(bf *b, int64_t wave, double rate, double left)
{
    if (b->progress_fd < 0)
        return;
    char S[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN];
    json_t *j = json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:s}", "event", "wave", "snapshot",
                          mcdc_stream__lsn_text(S, &b->snap), "wave", (json_int_t)wave,
                          "chunks", (json_int_t)b->st->chunks_done, "chunks_total",
                          (json_int_t)b->st->chunks_total, "rows", (json_int_t)b->st->rows_done,
                          "rows_estimate", (json_int_t)b->st->rows_estimate, "rows_per_second",
                          rate, "seconds_left", left, "timestamp",
                          mcdc_time_format(ts, mcdc_time_now_us(), 3, true));
    char *t = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!t)
        return;
    size_t n = strlen(t);
    t[n] = '\n'; /* the NUL becomes the line's end */
    if (mcdc_fs_append(b->progress_fd, t, n + 1, b->o->progress_path) < 0) {
        mcdc_log(MCDC_LOG_WARN, LOGGER, "progress line not written: %s", mcdc_error_last()->message);
        mcdc_error_clear();
    }
    free(t);
}

static int refuse_options(const mcdc_backfill_options *o)
{
    if (!o->source || !o->capture_instance || !o->target || !o->target_path || !o->app_id)
        return mcdc_error_set(MCDC_EINVAL, "backfill: source, capture instance, target and app_id "
                              "are required");
    if (!o->facts || !o->facts_path) {
        mcdc_error_set(MCDC_EINVAL, "backfill needs the facts table");
        return mcdc_error_hint("pass the stream's --facts NAME: the snapshot's state is there");
    }
    if (!o->app_id[0] || strchr(o->app_id, '#'))
        return mcdc_error_set(MCDC_EINVAL, "app_id '%s': must be non-empty and without '#'", o->app_id);
    if (o->chunk_rows < 0 || o->max_waves < 0 || o->max_us < 0 || o->target_wave_us < 0)
        return mcdc_error_set(MCDC_EINVAL, "backfill: limits must not be negative");
    return 0;
}

/* The stream's checks that apply to a backfill (reads only). */
static int prepare(bf *b)
{
    mcdc_stream *s = &b->s;
    const mcdc_backfill_options *o = b->o;
    s->o = (mcdc_stream_options)MCDC_STREAM_OPTIONS_INIT;
    s->o.source = o->source;
    s->o.capture_instance = o->capture_instance;
    snprintf(s->ci, sizeof s->ci, "%s", o->capture_instance);
    s->o.target = o->target;
    s->o.target_path = o->target_path;
    s->o.facts = o->facts;
    s->o.facts_path = o->facts_path;
    s->o.app_id = o->app_id;
    s->o.checkpoint = "";
    s->progress_fd = -1;
    s->bronze_txn = -1;
    mcdc_delta_uuid(s->run_id);
    snprintf(s->stream_id, sizeof s->stream_id, "%s", s->run_id);
    int rc;
    if ((rc = mcdc_stream_family(s->family, sizeof s->family, o->app_id)) < 0)
        return rc;
    if (strcmp(s->family, o->app_id) != 0) {
        mcdc_error_set(MCDC_EINVAL, "--app-id %s: pass the stream's base app id", o->app_id);
        return mcdc_error_hint("--app-id %s (the backfill finds the newest generation itself)", s->family);
    }
    if ((rc = mcdc_table_check_kind(o->facts_path, o->facts, "facts", "--facts")) < 0 ||
        (rc = mcdc_stream__find_capture_instance(s)) < 0 ||
        (rc = o->source->ops->captured_columns(o->source, o->capture_instance, &s->captured)) < 0 ||
        (rc = mcdc_stream__check_target(s, false, false)) < 0 ||
        (rc = mcdc_stream__prepare_bronze(s)) < 0 ||
        (rc = mcdc_facts_schema(&s->facts_schema)) < 0)
        return rc;
    return 0;
}

/* --isolation and the lock timeout of the snapshot reads, set on the source before any
 * read (a source that cannot honour them refuses, nothing written). */
static int read_settings(bf *b)
{
    const mcdc_backfill_options *o = b->o;
    if (o->isolation == MCDC_ISOLATION_SOURCE && o->lock_timeout_ms < 0)
        return 0;
    if (o->isolation < MCDC_ISOLATION_SOURCE || o->isolation > MCDC_ISOLATION_SNAPSHOT)
        return mcdc_error_set(MCDC_EINVAL, "backfill: isolation %d: not a level", o->isolation);
    if (!o->source->ops->snapshot_reads) {
        mcdc_error_set(MCDC_EUNSUPPORTED, "%s: this source has no isolation or lock timeout to set",
                       o->source->description ? o->source->description : "source");
        return mcdc_error_hint("drop --isolation and --lock-timeout for this source");
    }
    return o->source->ops->snapshot_reads(o->source, (mcdc_isolation)o->isolation, o->lock_timeout_ms);
}

static void release(bf *b)
{
    mcdc_schema_free(b->s.captured);
    mcdc_schema_free(b->s.bronze_schema);
    mcdc_schema_free(b->s.bronze_missing);
    mcdc_schema_free(b->s.bronze_widened);
    free(b->s.bronze_map);
    mcdc_schema_free(b->s.facts_schema);
    mcdc_snap__state_clear(&b->state);
    mcdc_snap__keydef_clear(&b->k);
    json_decref(b->chunks);
    json_decref(b->range_lo);
    json_decref(b->range_hi);
    json_decref(b->key_order);
}

static int fill_status(bf *b)
{
    mcdc_backfill_status *st = b->st;
    st->open_found = b->state.has_open;
    st->complete = b->state.completed;
    st->snapshot = b->state.S.lsn;
    st->generation = b->state.generation;
    snprintf(st->app_id, sizeof st->app_id, "%s", b->state.app_id ? b->state.app_id : "");
    st->planned = b->state.plan != NULL;
    json_t *ch = json_object_get(b->state.plan, "chunks");
    st->chunks_total = (int64_t)json_array_size(ch);
    json_t *est = json_object_get(b->state.plan, "rows");
    st->rows_estimate = json_is_integer(est) ? json_integer_value(est) : -1;
    st->chunks_done = (int64_t)b->state.n_chunks;
    st->rows_done = 0;
    st->waves = 0;
    for (size_t i = 0; i < b->state.n_chunks; i++) {
        st->rows_done += b->state.chunks[i].rows;
        if (b->state.chunks[i].wave + 1 > st->waves)
            st->waves = b->state.chunks[i].wave + 1;
    }
    return 0;
}

static int reread_state(bf *b)
{
    mcdc_snap__state_clear(&b->state);
    int rc = mcdc_snap__state_read(&b->state, b->o->facts_path, b->o->target, b->s.family);
    if (rc == 0)
        fill_status(b);
    return rc;
}

/* The unique index must be the one the snapshot was opened with. */
static int check_keys(bf *b)
{
    json_t *keys = json_object_get(b->state.open_detail, "keys");
    json_t *now = mcdc_snap__key_names(&b->k);
    bool same = !keys || json_equal(keys, now);
    char *was = keys ? json_dumps(keys, JSON_COMPACT) : NULL, *is = json_dumps(now, JSON_COMPACT);
    json_decref(now);
    int rc = 0;
    if (!same) {
        mcdc_error_set(MCDC_EINVAL, "%s: the unique index of %s changed since the snapshot was "
                       "opened (keys %s, now %s)", b->o->target, b->o->capture_instance,
                       was ? was : "?", is ? is : "?");
        rc = mcdc_error_hint("a chunk plan holds only for the key it was made for: open a new "
                             "snapshot (a new stream with --bootstrap-mode chunked)");
    }
    free(was);
    free(is);
    return rc;
}

/* (B3) plan once, then take the plan the facts table holds. */
static int plan(bf *b)
{
    int rc = 0;
    if (!b->state.plan) {
        int64_t chunk_rows = b->o->chunk_rows ? b->o->chunk_rows : MCDC_BACKFILL_DEFAULT_CHUNK_ROWS;
        json_t *chunks = NULL;
        int64_t total = 0;
        int64_t t0 = mcdc_time_mono_us(), started = mcdc_time_now_us();
        if ((rc = mcdc_snap__plan(b->o->source, b->o->capture_instance, &b->k, chunk_rows,
                                  json_object_get(b->state.open_detail, "plan"), &chunks,
                                  &total)) < 0)
            return rc;
        char S[MCDC_LSN_STRLEN];
        size_t n_planned = json_array_size(chunks);
        mcdc_stream__lsn_text(S, &b->state.S.lsn);
        json_t *d = json_pack("{s:s,s:s,s:o,s:I,s:o,s:I}", "snapshot", S, "kind",
                              b->k.is_int ? "int" : "keyset", "keys", mcdc_snap__key_names(&b->k),
                              "chunk_rows", (json_int_t)chunk_rows, "chunks", chunks,
                              "rows", (json_int_t)total);
        snap_event ev = { .event = "snapshot_plan", .app_id = b->state.app_id, .rows = 0,
                          .at = b->state.S, .started_at_us = started, .read_seconds = -1,
                          .duration_ms = (mcdc_time_mono_us() - t0) / 1000 };
        json_t *ko = mcdc_snap__key_orders(b->o->source, b->o->capture_instance, &b->k);
        if (d && ko)
            json_object_set_new(d, "key_order", ko);
        else
            json_decref(ko);
        ev.detail = d ? json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(d);
        if (!ev.detail)
            return mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
        rc = mcdc_snap__write_events(&b->s, &ev, 1, b->plan_app, 0);
        mcdc_snap__events_clear(&ev, 1);
        if (rc < 0)
            return rc;
        mcdc_log(MCDC_LOG_INFO, LOGGER, "planned %s: %zu chunks of at most %" PRId64 " rows, %"
                 PRId64 " rows", b->o->target, n_planned, chunk_rows, total);
        mcdc_failpoint("backfill.after_plan");
        if ((rc = reread_state(b)) < 0)
            return rc;
        if (!b->state.plan)
            return mcdc_error_set(MCDC_ECORRUPT, "%s: the snapshot_plan row just written is not there",
                                  b->o->facts);
    } else if (b->o->chunk_rows) {
        json_t *cr = json_object_get(b->state.plan, "chunk_rows");
        if (json_integer_value(cr) != b->o->chunk_rows)
            mcdc_log(MCDC_LOG_WARN, LOGGER, "--chunk-rows %" PRId64 " ignored: the snapshot was "
                     "planned with %" JSON_INTEGER_FORMAT " rows per chunk, and its plan never "
                     "changes", b->o->chunk_rows, json_integer_value(cr));
    }
    b->chunks = json_incref(json_object_get(b->state.plan, "chunks")); /* outlives rereads */
    b->n_chunks = json_array_size(b->chunks);
    if (!json_is_array(b->chunks) || b->n_chunks == 0)
        return mcdc_error_set(MCDC_ECORRUPT, "%s: the snapshot_plan row of %s has no chunks",
                              b->o->facts, b->o->target);
    return 0;
}

/* The chunk rows of a wave from its userMetadata. */
static int chunk_events(bf *b, const json_t *um, snap_event **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    json_t *chs = json_object_get(um, "chunks");
    const char *L = json_string_value(json_object_get(um, "lsn"));
    const char *ts = json_string_value(json_object_get(um, "commit_ts"));
    json_t *w = json_object_get(um, "wave");
    mcdc_offset at = { { { 0 } }, 0, false };
    if (!json_is_array(chs) || !L || mcdc_lsn_parse(&at.lsn, L) < 0 || !json_is_integer(w))
        return mcdc_error_set(MCDC_ECORRUPT, "%s: a wave commit of %s has no chunk list in its "
                              "userMetadata", b->o->target, b->snap_app);
    if (ts && ts[0] && mcdc_time_parse(&at.commit_ts_us, ts) == 0)
        at.has_commit_ts = true;
    size_t n = json_array_size(chs);
    snap_event *ev = calloc(n ? n : 1, sizeof *ev);
    if (!ev)
        return mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
    char S[MCDC_LSN_STRLEN];
    mcdc_stream__lsn_text(S, &b->snap);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *c = json_array_get(chs, i);
        json_t *ci = json_object_get(c, "chunk"), *rs = json_object_get(c, "rows");
        json_t *sec = json_object_get(c, "read_seconds");
        const char *mx = json_string_value(json_object_get(c, "max_lsn"));
        ev[i].event = b->partial ? "snapshot_range_chunk" : "snapshot_chunk";
        ev[i].app_id = b->state.app_id ? b->state.app_id : b->s.family; /* a partial backfill of a stream that never opened a snapshot */
        ev[i].rows = json_integer_value(rs);
        ev[i].at = at;
        ev[i].has_max = mx && mcdc_lsn_parse(&ev[i].max_lsn, mx) == 0;
        ev[i].read_seconds = json_is_number(sec) ? json_number_value(sec) : -1;
        int64_t idx = json_integer_value(ci);
        /* a partial backfill's chunk names its run and range, never a snapshot */
        json_t *d = b->partial ? json_pack("{s:s,s:[OO]}", "range_id", b->range_id, "range",
                                           b->range_lo, b->range_hi)
                               : json_pack("{s:s}", "snapshot", S);
        json_t *lo = json_object_get(c, "lo"), *hi = json_object_get(c, "hi");
        if (d && json_object_update_new(d, json_pack("{s:I,s:O,s:O,s:O,s:b}", "chunk", (json_int_t)idx,
                                                 "wave", w, "lo", lo ? lo : json_null(), "hi",
                                                 hi ? hi : json_null(), "last",
                                                 idx + 1 == (int64_t)b->n_chunks)) < 0) {
            json_decref(d);
            d = NULL;
        }
        json_t *cl = json_object_get(c, "consistent_lsn");
        if (d && json_is_string(cl))
            json_object_set(d, "consistent_lsn", cl);
        ev[i].detail = d ? json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(d);
        if (!ev[i].detail)
            rc = mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
    }
    if (rc < 0) {
        mcdc_snap__events_clear(ev, n);
        free(ev);
        return rc;
    }
    *out = ev;
    *n_out = n;
    return 0;
}

static int write_chunk_facts(bf *b, const json_t *um, int64_t wave)
{
    snap_event *ev;
    size_t n;
    int rc = chunk_events(b, um, &ev, &n);
    if (rc < 0)
        return rc;
    rc = mcdc_snap__write_events(&b->s, ev, n, b->chunk_app, wave);
    mcdc_snap__events_clear(ev, n);
    free(ev);
    return rc;
}

/* (B1, B2) where the last run stopped. */
static int resume(bf *b)
{
    int64_t w = -1, fw = -1;
    int rc = mcdc_stream__table_txn(b->o->target_path, b->snap_app, &w, NULL, NULL);
    if (rc == 0)
        rc = mcdc_stream__table_txn(b->o->facts_path, b->chunk_app, &fw, NULL, NULL);
    if (rc < 0 || w < 0) {
        b->next = 0;
        b->wave = 0;
        return rc;
    }
    char *um = NULL;
    int64_t ver = -1;
    if ((rc = mcdc_stream__find_commit_metadata(b->o->target_path, b->snap_app, w, &um, &ver)) < 0)
        return rc;
    json_t *j = um ? json_loads(um, 0, NULL) : NULL;
    free(um);
    json_t *chs = json_object_get(j, "chunks");
    json_t *lastc = json_array_get(chs, json_array_size(chs) - 1);
    if (!lastc || !json_is_integer(json_object_get(lastc, "chunk"))) {
        json_decref(j);
        mcdc_error_set(MCDC_ECORRUPT, "%s: wave %" PRId64 " of %s is committed but its commit's "
                       "userMetadata (the chunks it holds) is gone", b->o->target, w, b->snap_app);
        return mcdc_error_hint("the log was cleaned up past an unfinished backfill; open a new "
                               "snapshot");
    }
    b->next = json_integer_value(json_object_get(lastc, "chunk")) + 1;
    b->wave = w + 1;
    const char *L = json_string_value(json_object_get(j, "lsn"));
    b->has_last_lsn = L && mcdc_lsn_parse(&b->last_lsn, L) == 0;
    const char *C = json_string_value(json_object_get(j, "consistent_lsn"));
    b->has_consistent = C && mcdc_lsn_parse(&b->consistent, C) == 0;
    if (fw < w) {
        mcdc_log(MCDC_LOG_INFO, LOGGER, "wave %" PRId64 " is in bronze without its facts rows: "
                 "writing them from its commit", w);
        rc = write_chunk_facts(b, j, w);
        if (rc == 0)
            rc = reread_state(b);
    }
    json_decref(j);
    return rc;
}

/* The completion row: bootstrap (or resnapshot) with {snapshot, chunks, rows, last_lsn}. */
static int complete(bf *b)
{
    char S[MCDC_LSN_STRLEN], last[MCDC_LSN_STRLEN];
    mcdc_stream__lsn_text(S, &b->state.S.lsn);
    if (!b->has_last_lsn) { /* the newest stamp from the chunk rows is not kept: S */
        b->last_lsn = b->state.S.lsn;
    }
    mcdc_stream__lsn_text(last, &b->last_lsn);
    json_t *d = json_pack("{s:s,s:I,s:I,s:s}", "snapshot", S, "chunks", (json_int_t)b->n_chunks,
                          "rows", (json_int_t)b->st->rows_done, "last_lsn", last);
    if (d && b->has_consistent) { /* the newest read's: every row read is at or below it */
        char cl[MCDC_LSN_STRLEN];
        json_object_set_new(d, "consistent_lsn", json_string(mcdc_stream__lsn_text(cl, &b->consistent)));
    }
    snap_event ev = { .event = b->state.kind, .app_id = b->state.app_id, .rows = b->st->rows_done,
                      .at = b->state.S, .read_seconds = -1,
                      .started_at_us = b->state.open_written_at_us };
    ev.duration_ms = (mcdc_time_now_us() - b->state.open_written_at_us) / 1000;
    /* a re-snapshot's row carries the gap its open recorded */
    const char *lf = json_string_value(json_object_get(b->state.open_detail, "lost_from_ts"));
    const char *lt = json_string_value(json_object_get(b->state.open_detail, "lost_to_ts"));
    ev.has_lost_from = lf && mcdc_time_parse(&ev.lost_from_us, lf) == 0;
    ev.has_lost_to = lt && mcdc_time_parse(&ev.lost_to_us, lt) == 0;
    ev.detail = d ? json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(d);
    if (!ev.detail)
        return mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
    int rc = mcdc_snap__write_events(&b->s, &ev, 1, b->events_app, b->state.generation);
    mcdc_snap__events_clear(&ev, 1);
    if (rc < 0)
        return rc;
    mcdc_failpoint("backfill.after_completion");
    mcdc_log(MCDC_LOG_INFO, LOGGER, "%s: the snapshot at %s is complete: %zu chunks, %" PRId64
             " rows", b->o->target, S, b->n_chunks, b->st->rows_done);
    b->st->complete = true;
    return 0;
}

/* Commit a wave: its data files (one per chunk that has rows; none when the wave read no
 * rows: its txn alone records the chunks as read) in one bronze commit with
 * txn{<app>#snap.<S>, wave}, while the table is still the stream family's (O3). */
static int commit_wave(bf *b, mcdc_delta_file *adds, size_t n_adds, const char *um, int64_t wave)
{
    int rc = 0;
    mcdc_stream *s = &b->s;
    if (!s->bronze_exists) {
        mcdc_delta_map own = { NULL, 0 };
        rc = mcdc_stream__bronze_config(&own, s);
        if (rc == 0)
            rc = mcdc_stream__ensure_table(b->o->target_path, s->bronze_schema, "bronze", "2", &own);
        mcdc_delta_map_clear(&own);
        if (rc < 0)
            return rc;
        s->bronze_exists = true;
    }
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    co.operation = "WRITE";
    co.user_metadata = um;
    co.app_id = b->snap_app;
    co.txn_version = wave;
    co.expect_key = "mcdc.owner";
    co.expect_value = s->family;
    mcdc_delta_commit_result res = { 0 };
    /* bronze's new columns go into the commit of the rows written with them */
    rc = mcdc_delta_append_evolving(b->o->target_path, adds, n_adds, s->bronze_schema, &co, &res);
    if (rc == MCDC_EALREADY || rc == MCDC_ECONFLICT)
        for (size_t i = 0; i < n_adds; i++)
            mcdc_datafile__remove(b->o->target_path, adds[i].path);
    if (rc == MCDC_ECONFLICT && mcdc_stream__owner_changed(s))
        return mcdc_stream__owner_lost(s);
    if (rc == MCDC_EALREADY) {
        mcdc_error_set(MCDC_ECONFLICT, "%s: wave %" PRId64 " of %s was committed by another "
                       "backfill meanwhile", b->o->target, wave, b->snap_app);
        return mcdc_error_hint("run one backfill per snapshot; rerun this one to go on");
    }
    return rc;
}

typedef struct wave_chunk {
    int64_t idx, rows;
    mcdc_lsn max_lsn;
    mcdc_lsn consistent;      /* consistent_lsn when the read ended */
    bool has_consistent;      /* the source answers consistent_lsn */
    double seconds;
} wave_chunk;

/* Read chunk @p idx into its own data file (none when it has no rows): *add gets the file,
 * *has_add whether there is one. Memory: one row group, whatever the chunk's size. */
static int read_chunk(bf *b, int64_t idx, const mcdc_lsn *L, const mcdc_offset *Lo,
                      wave_chunk *wc, mcdc_delta_file *add, bool *has_add)
{
    mcdc_stream *s = &b->s;
    *has_add = false;
    read_ctx x;
    int rc = mcdc_stream__read_init(&x, s);
    if (rc < 0)
        return rc;
    x.batch_id = -1;
    x.snapshot = &b->snap;
    x.range_rows = b->partial;
    x.stamp = L;
    x.has_snapshot_ts = Lo->has_commit_ts;
    x.snapshot_ts_us = Lo->commit_ts_us;
    x.has_chunk = true;
    x.chunk = idx;
    json_t *c = json_array_get(b->chunks, (size_t)idx);
    snap_keyvals lo = { 0 }, hi = { 0 };
    int64_t tc = mcdc_time_mono_us();
    if ((rc = mcdc_snap__key_from_json(&b->k, json_array_get(c, 0), &lo)) == 0 &&
        (rc = mcdc_snap__key_from_json(&b->k, json_array_get(c, 1), &hi)) == 0)
        rc = s->o.source->ops->snapshot(s->o.source, s->o.capture_instance, lo.v, hi.v,
                                        mcdc_stream__on_snapshot_row, &x);
    mcdc_snap__keyvals_clear(&lo);
    mcdc_snap__keyvals_clear(&hi);
    if (rc == 0 && s->o.source->ops->consistent_lsn &&
        (rc = s->o.source->ops->consistent_lsn(s->o.source, &wc->consistent)) == 0)
        wc->has_consistent = true;
    if (rc == 0)
        rc = mcdc_stream__max_lsn(s, &wc->max_lsn);
    wc->idx = idx;
    wc->rows = x.facts.rows;
    wc->seconds = (double)(mcdc_time_mono_us() - tc) / 1e6;
    if (rc == 0 && x.df) { /* every row into the file, then the file closed and fsynced */
        mcdc_datafile *df = x.df;
        rc = mcdc_rowpipe__finish(x.pipe);
        x.pipe = NULL;
        x.df = NULL;
        if (rc < 0)
            mcdc_datafile__discard(df);
        else if ((rc = mcdc_datafile__finish(df, add)) == 0)
            *has_add = true;
    }
    mcdc_stream__read_dispose(&x);
    if (rc == 0)
        mcdc_failpoint("backfill.mid_read");
    return rc;
}

/* One wave read into data files, not committed yet. Filled by read_wave (on the read-ahead
 * thread or the backfill's), then owned by commit_read on the backfill's thread. */
typedef struct wave_read {
    int64_t wave, first, width; /* wave number, its first chunk, its chunks */
    mcdc_lsn L;                 /* the stamp, max_lsn before the read */
    mcdc_offset Lo;             /* L with its commit time */
    wave_chunk *wc;             /* width entries */
    mcdc_delta_file *adds;      /* n_adds data files (chunks with rows) */
    size_t n_adds;
    int64_t rows;
    int64_t t0_us;              /* monotonic start of the read */
    double read_seconds;
    int rc;                     /* the read's outcome */
    mcdc_error err;             /* its error record (a thread's is its own) */
} wave_read;

/* Free a wave's read; @p remove also deletes its data files (read, never committed). */
static void wave_read_clear(bf *b, wave_read *w, bool remove)
{
    for (size_t i = 0; i < w->n_adds; i++) {
        if (remove)
            mcdc_datafile__remove(b->o->target_path, w->adds[i].path);
        mcdc_delta_file_clear(&w->adds[i]);
    }
    free(w->adds);
    free(w->wc);
    memset(w, 0, sizeof *w);
}

/* Read chunks [w->first, w->first + w->width) stamped L = max_lsn now into data files.
 * Touches only the source, @p w and the table directory (no state of b it shares with a
 * commit), so it may run beside commit_read of the wave before. */
static int read_wave(bf *b, wave_read *w)
{
    mcdc_stream *s = &b->s;
    char Ltxt[MCDC_LSN_STRLEN], Stxt[MCDC_LSN_STRLEN];
    w->t0_us = mcdc_time_mono_us();
    int rc = mcdc_stream__max_lsn(s, &w->L);
    if (rc < 0)
        return rc;
    if (mcdc_lsn_cmp(&w->L, &b->snap) < 0) {
        mcdc_error_set(MCDC_ESOURCE, "%s: max_lsn %s is below the snapshot's LSN %s: the source "
                       "is behind the one the snapshot was opened on (a readable secondary?)",
                       s->o.source->description ? s->o.source->description : "source",
                       mcdc_stream__lsn_text(Ltxt, &w->L), mcdc_stream__lsn_text(Stxt, &b->snap));
        return mcdc_error_hint("point --source at the primary, or wait until the secondary "
                               "caught up; nothing was written");
    }
    if ((rc = mcdc_stream__offset_at(s, &w->L, &w->Lo)) < 0)
        return rc;
    w->wc = calloc((size_t)w->width, sizeof *w->wc);
    w->adds = calloc((size_t)w->width, sizeof *w->adds);
    if (!w->wc || !w->adds)
        return mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
    for (int64_t i = 0; rc == 0 && i < w->width; i++) {
        bool has = false;
        rc = read_chunk(b, w->first + i, &w->L, &w->Lo, &w->wc[i], &w->adds[w->n_adds], &has);
        if (has)
            w->n_adds++;
        w->rows += w->wc[i].rows;
    }
    w->read_seconds = (double)(mcdc_time_mono_us() - w->t0_us) / 1e6;
    return rc;
}

/* Commit a wave read: its data files with its userMetadata in one bronze commit, then its
 * facts rows; then b's position moves past it. On failure its files are removed when they
 * were not committed. */
static int commit_read(bf *b, wave_read *w)
{
    char Ltxt[MCDC_LSN_STRLEN], Stxt[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN] = "";
    if (w->Lo.has_commit_ts)
        mcdc_time_format(ts, w->Lo.commit_ts_us, 3, false);
    json_t *chs = json_array();
    mcdc_lsn wave_cl = mcdc_lsn_zero();
    bool has_cl = false;
    for (int64_t i = 0; chs && i < w->width; i++) {
        json_t *c = json_array_get(b->chunks, (size_t)w->wc[i].idx);
        char mx[MCDC_LSN_STRLEN], cl[MCDC_LSN_STRLEN];
        json_t *e = json_pack("{s:I,s:O,s:O,s:I,s:s,s:f}", "chunk", (json_int_t)w->wc[i].idx, "lo",
                              json_array_get(c, 0), "hi", json_array_get(c, 1), "rows",
                              (json_int_t)w->wc[i].rows, "max_lsn",
                              mcdc_stream__lsn_text(mx, &w->wc[i].max_lsn), "read_seconds",
                              w->wc[i].seconds);
        if (e && w->wc[i].has_consistent) {
            json_object_set_new(e, "consistent_lsn",
                                json_string(mcdc_stream__lsn_text(cl, &w->wc[i].consistent)));
            if (!has_cl || mcdc_lsn_cmp(&w->wc[i].consistent, &wave_cl) > 0)
                wave_cl = w->wc[i].consistent;
            has_cl = true;
        }
        json_array_append_new(chs, e);
    }
    /* a partial backfill's wave names its key columns, so that silver can tell which of
     * its keys each chunk holds (W3) */
    json_t *um = b->partial ? json_pack("{s:s,s:[OO],s:o}", "range_id", b->range_id, "range", b->range_lo,
                                        b->range_hi, "keys", mcdc_snap__key_names(&b->k))
                            : json_pack("{s:s}", "snapshot", mcdc_stream__lsn_text(Stxt, &b->snap));
    if (um && json_object_update_new(um, json_pack("{s:I,s:s,s:s,s:I,s:o}", "wave", (json_int_t)w->wave,
                                               "lsn", mcdc_stream__lsn_text(Ltxt, &w->L), "commit_ts",
                                               ts, "rows", (json_int_t)w->rows, "chunks", chs)) < 0) {
        json_decref(um);
        um = NULL;
    }
    if (um && b->partial && b->key_order)
        json_object_set(um, "key_order", b->key_order);
    if (um && has_cl) {
        char cl[MCDC_LSN_STRLEN];
        json_object_set_new(um, "consistent_lsn", json_string(mcdc_stream__lsn_text(cl, &wave_cl)));
    }
    char *umtxt = um ? json_dumps(um, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    int rc = umtxt ? 0 : mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
    if (rc == 0) {
        mcdc_failpoint("backfill.after_data_files");
        rc = commit_wave(b, w->adds, w->n_adds, umtxt, w->wave);
    } else {
        for (size_t i = 0; i < w->n_adds; i++) /* read but not committed: not left behind */
            mcdc_datafile__remove(b->o->target_path, w->adds[i].path);
    }
    if (rc == 0) {
        mcdc_failpoint("backfill.after_bronze");
        rc = write_chunk_facts(b, um, w->wave);
    }
    if (rc == 0) {
        mcdc_failpoint("backfill.after_chunk_facts");
        b->st->run_waves++;
        b->st->run_chunks += w->width;
        b->st->run_rows += w->rows;
        b->st->chunks_done += w->width;
        b->st->rows_done += w->rows;
        b->st->waves = w->wave + 1;
        b->next = w->first + w->width;
        b->wave = w->wave + 1;
        b->last_lsn = w->L;
        b->has_last_lsn = true;
        if (has_cl && (!b->has_consistent || mcdc_lsn_cmp(&wave_cl, &b->consistent) > 0)) {
            b->consistent = wave_cl;
            b->has_consistent = true;
        }
    }
    json_decref(um);
    free(umtxt);
    return rc;
}

typedef struct read_ahead {
    bf *b;
    wave_read *w;
} read_ahead;

/* The read-ahead thread: one wave, its outcome and error record kept in the wave. */
static void *read_ahead_main(void *arg)
{
    read_ahead *r = arg;
    mcdc_failpoint("backfill.read_ahead");
    r->w->rc = read_wave(r->b, r->w);
    if (r->w->rc < 0)
        r->w->err = *mcdc_error_last();
    return NULL;
}

/* --min-headroom: wait until the stream's retention headroom (its newest batch's, less
 * the row's age) is at least the minimum, or until --max-seconds is spent (*go false). A
 * backfill must not push the stream into data loss. */
static int wait_for_headroom(bf *b, int64_t t_start, bool wait, bool *go)
{
    *go = true;
    if (!b->o->min_headroom_us)
        return 0;
    bool said = false;
    for (;;) {
        bool has = false;
        double hours = 0;
        int64_t at = 0;
        int rc = mcdc_snap__headroom(b->o->facts_path, b->o->target, b->s.family, &has, &hours, &at);
        if (rc < 0)
            return rc;
        double left_s = has ? hours * 3600.0 - (double)(mcdc_time_now_us() - at) / 1e6 : 0;
        if (has && left_s * 1e6 >= (double)b->o->min_headroom_us) {
            if (said)
                mcdc_log(MCDC_LOG_INFO, LOGGER, "retention headroom back to %.0fs: going on", left_s);
            return 0;
        }
        if (!wait) { /* no read ahead while it is low; the next wave waits for it */
            *go = false;
            return 0;
        }
        if (!said) {
            if (has)
                mcdc_log(MCDC_LOG_WARN, LOGGER, "paused: the stream's retention headroom is %.0fs, "
                         "below --min-headroom %.0fs", left_s, (double)b->o->min_headroom_us / 1e6);
            else
                mcdc_log(MCDC_LOG_WARN, LOGGER, "paused: the facts table has no retention headroom "
                         "of the stream yet (--min-headroom)");
            said = true;
        }
        if (b->o->max_us && mcdc_time_mono_us() - t_start >= b->o->max_us) {
            *go = false;
            return 0;
        }
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

/* May a wave start now (the limits, the headroom), and how many chunks: the width from the
 * last read's pace. @p in_flight waves are read but not committed yet. */
static int may_start(bf *b, int64_t t_start, int64_t first, int64_t in_flight, bool wait,
                     double per_chunk, int64_t *width, bool *go)
{
    const mcdc_backfill_options *o = b->o;
    *go = false;
    if (first >= (int64_t)b->n_chunks)
        return 0;
    if (o->max_waves && b->st->run_waves + in_flight >= o->max_waves)
        return 0;
    if (o->max_us && mcdc_time_mono_us() - t_start >= o->max_us)
        return 0;
    int rc = wait_for_headroom(b, t_start, wait, go);
    if (rc < 0 || !*go)
        return rc;
    int64_t elapsed = mcdc_time_mono_us() - t_start;
    *width = 1;
    if (b->st->run_waves + in_flight > 0 && o->target_wave_us > 0 && per_chunk > 0) {
        double budget = (double)o->target_wave_us / 1e6;
        if (o->max_us && (double)(o->max_us - elapsed) / 1e6 < budget)
            budget = (double)(o->max_us - elapsed) / 1e6;
        *width = (int64_t)(budget / per_chunk);
        if (*width < 1) *width = 1;
        if (*width > MAX_WAVE_CHUNKS) *width = MAX_WAVE_CHUNKS;
    }
    if (first + *width > (int64_t)b->n_chunks)
        *width = (int64_t)b->n_chunks - first;
    return 0;
}

/* Waves until every chunk of b->chunks is in bronze or a limit stops them. While a wave is
 * committed (bronze, then its facts rows) on this thread, the next one is read on another
 * (at most one reading and one committing): a crash leaves the read-ahead's data files
 * uncommitted, as a crash during any read does, and the rerun reads that wave again. */
static int run_waves(bf *b, int64_t t_start)
{
    const mcdc_backfill_options *o = b->o;
    mcdc_backfill_status *out = b->st;
    int rc = 0;
    double per_chunk = 0;
    wave_read cur, ahead;
    memset(&cur, 0, sizeof cur);
    memset(&ahead, 0, sizeof ahead);
    bool have_cur = false;
    for (;;) {
        bool go = false;
        int64_t width = 1;
        if (!have_cur) {
            if ((rc = may_start(b, t_start, b->next, 0, true, per_chunk, &width, &go)) < 0 || !go)
                break;
            cur.wave = b->wave;
            cur.first = b->next;
            cur.width = width;
            if ((rc = read_wave(b, &cur)) < 0) {
                wave_read_clear(b, &cur, true);
                break;
            }
            have_cur = true;
        }
        if (cur.width > 0 && cur.read_seconds > 0)
            per_chunk = cur.read_seconds / (double)cur.width;
        /* read the next wave while this one commits */
        pthread_t th;
        read_ahead ra = { b, &ahead };
        bool reading = false;
        if ((rc = may_start(b, t_start, cur.first + cur.width, 1, false, per_chunk, &width, &go)) < 0) {
            wave_read_clear(b, &cur, true);
            break;
        }
        if (go) {
            ahead.wave = cur.wave + 1;
            ahead.first = cur.first + cur.width;
            ahead.width = width;
            if (pthread_create(&th, NULL, read_ahead_main, &ra) == 0)
                reading = true;
            else
                memset(&ahead, 0, sizeof ahead); /* no thread: read after the commit */
        }
        int64_t w = cur.wave, rows = cur.rows, t0 = cur.t0_us;
        rc = commit_read(b, &cur);
        wave_read_clear(b, &cur, false);
        have_cur = false;
        if (reading) {
            pthread_join(th, NULL);
            if (rc == 0 && ahead.rc < 0) {
                mcdc_error_restore(&ahead.err);
                rc = ahead.rc;
            }
            if (rc < 0) {
                wave_read_clear(b, &ahead, true);
                break;
            }
            cur = ahead;
            memset(&ahead, 0, sizeof ahead);
            have_cur = true;
        }
        if (rc < 0)
            break;
        double secs = (double)(mcdc_time_mono_us() - t0) / 1e6;
        double rate = secs > 0 ? (double)rows / secs : 0;
        double left = per_chunk * (double)((int64_t)b->n_chunks - b->next);
        if (o->progress) {
            out->run_seconds = (double)(mcdc_time_mono_us() - t_start) / 1e6;
            o->progress(out, w, rate, left, o->progress_payload);
        }
        progress_line(b, w, rate, left);
    }
    return rc;
}

/* "LO..HI": the first ".." outside a JSON string splits it; each side is a JSON key value
 * (null or nothing: open). Both open (unless opts->whole_range: stream
 * --snapshot-on-switch), or a side that is not JSON, is refused. */
static int parse_range(bf *b)
{
    const char *t = b->o->range, *dots = NULL;
    bool in_str = false;
    for (const char *p = t; *p && !dots; p++) {
        if (in_str && *p == '\\' && p[1])
            p++;
        else if (*p == '"')
            in_str = !in_str;
        else if (!in_str && p[0] == '.' && p[1] == '.')
            dots = p;
    }
    if (!dots) {
        mcdc_error_set(MCDC_EINVAL, "--range %s: expected LO..HI", t);
        return mcdc_error_hint("bounds are JSON key values as in the facts rows: --range 100..200, "
                               "--range '[\"east\",\"2026-09-01\"]..[\"west\",\"2026-09-01\"]', null for an open end");
    }
    json_t *side[2] = { NULL, NULL };
    const char *from[2] = { t, dots + 2 };
    size_t len[2] = { (size_t)(dots - t), strlen(dots + 2) };
    for (int i = 0; i < 2; i++) {
        while (len[i] && (*from[i] == ' ')) { from[i]++; len[i]--; }
        while (len[i] && from[i][len[i] - 1] == ' ') len[i]--;
        json_error_t je;
        side[i] = len[i] ? json_loadb(from[i], len[i], JSON_DECODE_ANY, &je) : json_null();
        if (!side[i]) {
            json_decref(side[0]);
            mcdc_error_set(MCDC_EINVAL, "--range %s: %s bound '%.*s' is not a JSON value: %s", t,
                           i ? "the upper" : "the lower", (int)len[i], from[i], je.text);
            return mcdc_error_hint("a string key is quoted (\"east\"), a composite key is a list of "
                                   "its columns' values in index order");
        }
    }
    b->range_lo = side[0];
    b->range_hi = side[1];
    if (json_is_null(b->range_lo) && json_is_null(b->range_hi) && !b->o->whole_range) {
        mcdc_error_set(MCDC_EINVAL, "--range %s: both ends are open", t);
        return mcdc_error_hint("a backfill of the whole table is a new snapshot; give a bound");
    }
    for (int i = 0; i < 2; i++) {
        snap_keyvals kv;
        int rc = mcdc_snap__key_from_json(&b->k, i ? b->range_hi : b->range_lo, &kv);
        if (rc < 0) {
            json_t *kn = mcdc_snap__key_names(&b->k);
            char *names = kn ? json_dumps(kn, JSON_COMPACT) : NULL, why[1024];
            json_decref(kn);
            snprintf(why, sizeof why, "%s", mcdc_error_last()->message);
            mcdc_error_set(MCDC_EINVAL, "--range %s: the %s bound does not fit the key %s: %s", t,
                           i ? "upper" : "lower", names ? names : "?", why);
            free(names);
            return mcdc_error_hint("give one value per key column, in index order, as JSON");
        }
        mcdc_snap__keyvals_clear(&kv);
    }
    if ((json_equal(b->range_lo, b->range_hi) && !json_is_null(b->range_lo)) ||
        (b->k.is_int && json_is_integer(b->range_lo) && json_is_integer(b->range_hi) &&
         json_integer_value(b->range_lo) >= json_integer_value(b->range_hi))) {
        mcdc_error_set(MCDC_EINVAL, "--range %s: empty (the range is LO <= key < HI)", t);
        return mcdc_error_hint("give HI above LO");
    }
    return 0;
}

/* The closing row of a partial backfill: snapshot_range (never bootstrap or resnapshot),
 * txn{<app>#rangedone.<R>, 0}, detail {range_id: R, range, keys, chunks, rows, first_lsn: P,
 * last_lsn, consistent_lsn}. */
static int complete_range(bf *b, int64_t started_at_us)
{
    char P[MCDC_LSN_STRLEN], last[MCDC_LSN_STRLEN];
    mcdc_stream__lsn_text(P, &b->snap);
    mcdc_stream__lsn_text(last, b->has_last_lsn ? &b->last_lsn : &b->snap);
    json_t *d = json_pack("{s:s,s:[OO],s:o,s:I,s:I,s:s,s:s}", "range_id", b->range_id, "range",
                          b->range_lo, b->range_hi, "keys", mcdc_snap__key_names(&b->k), "chunks",
                          (json_int_t)b->n_chunks, "rows", (json_int_t)b->st->run_rows, "first_lsn", P,
                          "last_lsn", last);
    if (d && b->has_consistent) {
        char cl[MCDC_LSN_STRLEN];
        json_object_set_new(d, "consistent_lsn", json_string(mcdc_stream__lsn_text(cl, &b->consistent)));
    }
    mcdc_offset at;
    int rc = mcdc_stream__offset_at(&b->s, &b->snap, &at);
    if (rc < 0) {
        json_decref(d);
        return rc;
    }
    snap_event ev = { .event = "snapshot_range", .app_id = b->state.app_id ? b->state.app_id : b->s.family,
                      .rows = b->st->run_rows, .at = at, .read_seconds = -1,
                      .started_at_us = started_at_us };
    ev.duration_ms = (mcdc_time_now_us() - started_at_us) / 1000;
    ev.detail = d ? json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(d);
    if (!ev.detail)
        return mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
    rc = mcdc_snap__write_events(&b->s, &ev, 1, b->events_app, 0);
    mcdc_snap__events_clear(&ev, 1);
    if (rc < 0)
        return rc;
    mcdc_log(MCDC_LOG_INFO, LOGGER, "%s: partial backfill %s of %s complete: %zu chunks, %" PRId64
             " rows", b->o->target, P, b->o->range, b->n_chunks, b->st->run_rows);
    b->st->partial_complete = true;
    return 0;
}

/* --range: a partial backfill (ADR 0022). It needs the stream's bronze and no snapshot
 * open, reads [LO, HI) in chunks stamped as usual under its own point P (max_lsn at its
 * start) and txns, and writes no bootstrap or resnapshot row: the stream's snapshot LSN
 * stays, silver is not rebuilt, and no chunk reaches outside [LO, HI). */
static int run_range(bf *b, int64_t t_start)
{
    const mcdc_backfill_options *o = b->o;
    mcdc_backfill_status *st = b->st;
    int rc;
    char S[MCDC_LSN_STRLEN];
    if (o->status_only) {
        mcdc_error_set(MCDC_EINVAL, "--status and --range: --status shows the open snapshot only");
        return mcdc_error_hint("drop --range to see the snapshot's state; a partial backfill's "
                               "rows are its snapshot_chunk and snapshot_range facts rows");
    }
    if ((b->state.has_open && !b->state.completed) || b->state.has_full_open) {
        mcdc_error_set(MCDC_EINVAL, "%s: a snapshot%s%s is open: a partial backfill repairs a "
                       "complete one", o->target, b->state.has_open && !b->state.completed ? " at " : "",
                       b->state.has_open && !b->state.completed ? mcdc_stream__lsn_text(S, &b->state.S.lsn) : "");
        return mcdc_error_hint("run the backfill without --range until the snapshot is complete; "
                               "it reads every key");
    }
    if (!b->s.bronze_exists) {
        mcdc_error_set(MCDC_ENOTFOUND, "%s: no such bronze table: a partial backfill repairs the rows "
                       "of a stream's table", o->target);
        return mcdc_error_hint("run the stream first (with --bootstrap for its first snapshot)");
    }
    const char *app = b->state.app_id ? b->state.app_id : b->s.family;
    if ((rc = mcdc_snap__keydef(&b->k, o->source, o->capture_instance, b->s.captured)) < 0 ||
        (rc = parse_range(b)) < 0)
        return rc;
    if (b->state.has_open && (rc = check_keys(b)) < 0)
        return rc;
    /* P: the point of this partial backfill, max_lsn as it starts */
    if ((rc = mcdc_stream__max_lsn(&b->s, &b->snap)) < 0)
        return rc;
    /* R: this run's id (txns of their own, so two partial backfills at one max_lsn never meet) */
    snprintf(b->range_id, sizeof b->range_id, "%s", b->s.run_id);
    if ((size_t)snprintf(b->snap_app, sizeof b->snap_app, "%s#range.%s", app, b->range_id) >= sizeof b->snap_app ||
        (size_t)snprintf(b->chunk_app, sizeof b->chunk_app, "%s#rangechunks.%s", app, b->range_id) >= sizeof b->chunk_app ||
        (size_t)snprintf(b->events_app, sizeof b->events_app, "%s#rangedone.%s", app, b->range_id) >= sizeof b->events_app)
        return mcdc_error_set(MCDC_EINVAL, "app_id %s: too long", app);
    int64_t chunk_rows = o->chunk_rows ? o->chunk_rows : MCDC_BACKFILL_DEFAULT_CHUNK_ROWS;
    int64_t total = 0, started = mcdc_time_now_us();
    json_t *chunks = NULL;
    if ((rc = mcdc_snap__plan_range(o->source, o->capture_instance, &b->k, chunk_rows, b->range_lo,
                                    b->range_hi, &chunks, &total)) < 0)
        return rc;
    b->chunks = chunks;
    b->n_chunks = json_array_size(chunks);
    b->key_order = mcdc_snap__key_orders(o->source, o->capture_instance, &b->k);
    b->partial = true;
    st->partial = true;
    st->partial_lsn = b->snap;
    st->chunks_total = (int64_t)b->n_chunks;
    st->chunks_done = 0;
    st->rows_done = 0;
    st->rows_estimate = total;
    st->waves = 0;
    mcdc_log(MCDC_LOG_INFO, LOGGER, "partial backfill of %s, keys %s: %zu chunks of at most %" PRId64
             " rows, %" PRId64 " rows, at %s", o->target, o->range, b->n_chunks, chunk_rows, total,
             mcdc_stream__lsn_text(S, &b->snap));
    b->next = 0;
    b->wave = 0;
    if ((rc = run_waves(b, t_start)) == 0 && b->next >= (int64_t)b->n_chunks)
        rc = complete_range(b, started);
    return rc;
}

int mcdc_backfill_run(const mcdc_backfill_options *o, mcdc_backfill_status *out)
{
    MCDC_ASSERT_ARG(o && out);
    memset(out, 0, sizeof *out);
    out->rows_estimate = -1;
    int rc = refuse_options(o);
    if (rc < 0)
        return rc;
    bf b;
    memset(&b, 0, sizeof b);
    b.o = o;
    b.st = out;
    b.progress_fd = -1;
    int64_t t_start = mcdc_time_mono_us();
    if ((rc = prepare(&b)) < 0 || (rc = read_settings(&b)) < 0)
        goto done;
    if ((rc = reread_state(&b)) < 0)
        goto done;
    if (!b.state.has_open && !o->range) {
        mcdc_error_set(MCDC_ENOTFOUND, "%s: no chunked snapshot was ever opened for it by app_id %s "
                       "(facts %s)", o->target, b.s.family, o->facts);
        rc = mcdc_error_hint("open one with: mssql-cdc stream --bootstrap --bootstrap-mode chunked "
                             "--facts %s ... (the same --target and --app-id)", o->facts);
        goto done;
    }
    if (!o->range && (o->status_only || b.state.completed))
        goto done;
    if (o->progress_path && mcdc_fs_append_open(&b.progress_fd, o->progress_path) < 0) {
        char why[sizeof mcdc_error_last()->message];
        snprintf(why, sizeof why, "%s", mcdc_error_last()->message);
        mcdc_error_set(MCDC_EINVAL, "--progress %s: cannot be opened: %s", o->progress_path, why);
        rc = mcdc_error_hint("pass a file in a directory that exists and is writable");
        goto done;
    }
    if (o->range) {
        rc = run_range(&b, t_start);
        goto done;
    }
    b.snap = b.state.S.lsn;
    if ((rc = mcdc_snap__key_name(b.snap_app, sizeof b.snap_app, b.state.app_id, "#snap.", &b.state.S.lsn)) < 0 ||
        (rc = mcdc_snap__key_name(b.chunk_app, sizeof b.chunk_app, b.state.app_id, "#snapchunks.", &b.state.S.lsn)) < 0 ||
        (rc = mcdc_snap__key_name(b.plan_app, sizeof b.plan_app, b.state.app_id, "#snapplan.", &b.state.S.lsn)) < 0 ||
        (rc = mcdc_snap__key_name(b.events_app, sizeof b.events_app, b.s.family, "#events", NULL)) < 0)
        goto done;
    if ((rc = mcdc_snap__keydef(&b.k, o->source, o->capture_instance, b.s.captured)) < 0 ||
        (rc = check_keys(&b)) < 0 || (rc = plan(&b)) < 0 || (rc = resume(&b)) < 0)
        goto done;
    if ((rc = run_waves(&b, t_start)) == 0 && b.next >= (int64_t)b.n_chunks)
        rc = complete(&b);
done:
    out->run_seconds = (double)(mcdc_time_mono_us() - t_start) / 1e6;
    mcdc_fs_close(b.progress_fd);
    release(&b);
    return rc;
}
