/*
 * pipeline/bootstrap.c: the first snapshot of a stream (--bootstrap).
 *
 * S = max_lsn is written to <checkpoint>/bootstrap before the table is read, so rows may
 * be newer than S, never older; before capture processed the enable of a just-enabled
 * instance, S is the instance's start LSN minus one, so the first batch reads from its start. The rows go to bronze as operation 0 with _start_lsn =
 * _snapshot = S, in one commit with txn{app_id#snapshot, 0} and userMetadata {"snapshot",
 * "lsn", "commit_ts", "rows"}; then the facts get a `bootstrap` row with
 * txn{app_id#events, 0}. A rerun that finds bronze's #snapshot txn reads nothing again and
 * only offers the event row (Delta keeps it once). A crash before the bronze commit takes
 * the snapshot again with a new S; the stream starts after S only once it is committed.
 * An empty table writes no bronze commit. With --bootstrap-mode chunked the snapshot is only
 * opened here (snapshot_open.c) and read by `backfill`; a full one is refused while a
 * chunked one is open. Design: anchor-features §1 (bootstrap), §3.3.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/failpoint.h"
#include "mcdc/fs.h"
#include "mcdc/storage.h"
#include "mcdc/log.h"
#include "pipeline/snapshot_int.h"


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
    int rc = mcdc_storage_read(&b, NULL, path);
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

/* A re-snapshot's open row (generation n > 0, full mode): {mode: full, kind: resnapshot,
 * generation, lost_from_ts, lost_to_ts} at S, txn{<base app id>#snapshots, n}, so the
 * gap is recorded before the table is read. */
static int write_full_open(mcdc_stream *s, const mcdc_offset *S)
{
    if (s->gen.n <= 0 || !s->o.facts_path)
        return 0;
    json_t *d = json_pack("{s:s}", "mode", "full");
    snap_event ev = { .event = "snapshot_open", .app_id = s->o.app_id, .rows = 0, .at = *S,
                      .read_seconds = -1, .has_lost_from = s->gen.has_lost_from,
                      .lost_from_us = s->gen.lost_from_us, .has_lost_to = s->gen.has_lost_to,
                      .lost_to_us = s->gen.lost_to_us };
    int rc = d ? mcdc_stream__open_detail_gap(s, d) : mcdc_error_set(MCDC_ENOMEM, "bootstrap: "
                                                                      "out of memory");
    if (rc == 0 && !(ev.detail = json_dumps(d, JSON_COMPACT | JSON_PRESERVE_ORDER)))
        rc = mcdc_error_set(MCDC_ENOMEM, "bootstrap: out of memory");
    json_decref(d);
    char txn[300];
    if (rc == 0 && (rc = mcdc_stream__base_key(txn, sizeof txn, s, "#snapshots")) == 0)
        rc = mcdc_snap__write_events(s, &ev, 1, txn, s->gen.n);
    mcdc_snap__events_clear(&ev, 1);
    if (rc == 0)
        mcdc_failpoint("stream.resnapshot.after_open");
    return rc;
}

/* Take (or find) the bootstrap snapshot; *S gets its offset. */
int mcdc_stream__bootstrap(mcdc_stream *s, mcdc_offset *S)
{
    if (s->o.bootstrap_mode == MCDC_BOOTSTRAP_CHUNKED)
        return mcdc_stream__snapshot_open(s, S);
    char path[MCDC_PATH_MAX];
    int rc = bootstrap_path(path, s);
    if (rc < 0)
        return rc;
    if ((rc = mcdc_stream__check_no_chunked_open(s)) < 0)
        return rc;
    size_t n = strlen(s->o.app_id) + 16;
    char *snap_app = malloc(n);
    if (!snap_app)
        return mcdc_error_set(MCDC_ENOMEM, "bootstrap: out of memory");
    snprintf(snap_app, n, "%s#snapshot", s->o.app_id);
    int64_t snap_txn = -1;
    bool found = false;
    read_ctx x = { 0 };
    if ((rc = mcdc_stream__table_txn(s->o.target_path, snap_app, &snap_txn, NULL, NULL)) < 0)
        goto done;
    if ((rc = read_bootstrap(path, S, &found)) < 0)
        goto done;
    if (snap_txn >= 0) {
        /* the snapshot is in bronze: read nothing again */
        char *um = NULL;
        int64_t ver;
        if ((rc = mcdc_stream__find_commit_metadata(s->o.target_path, snap_app, 0, &um, &ver)) < 0)
            goto done;
        json_t *j = um ? json_loads(um, 0, NULL) : NULL;
        free(um);
        json_t *jr = json_object_get(j, "rows");
        int64_t rows = json_is_integer(jr) ? json_integer_value(jr) : -1;
        const char *cl = json_string_value(json_object_get(j, "consistent_lsn"));
        s->has_snap_consistent = cl && mcdc_lsn_parse(&s->snap_consistent, cl) == 0;
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
        rc = mcdc_stream__write_bootstrap_event(s, S, rows, rows >= 0, 0, 0);
        goto done;
    }
    /* record S before the table is read: rows may be newer than S, never older */
    int64_t t0 = mcdc_time_mono_us(), started = mcdc_time_now_us();
    /* before capture processed a just-enabled instance, S is its start LSN minus one (not
     * max_lsn, which may be 0x00 or another instance's: every later batch would then see
     * a false data loss); the first batch reads from the instance's start */
    mcdc_lsn M;
    bool before;
    if ((rc = mcdc_stream__before_instance_start(s, &M, &before)) < 0)
        goto done;
    if (before) {
        memset(S, 0, sizeof *S);
        S->lsn = M; /* not a commit: no commit time */
    } else if ((rc = mcdc_stream__max_lsn(s, &M)) < 0 ||
               (rc = mcdc_stream__offset_at(s, &M, S)) < 0) {
        goto done;
    }
    {
        char js[128];
        mcdc_offset_to_json(js, sizeof js, S);
        if ((rc = mcdc_storage_put(path, js, strlen(js))) < 0)
            goto done;
    }
    if ((rc = write_full_open(s, S)) < 0)
        goto done;
    if ((rc = mcdc_stream__read_init(&x, s)) < 0)
        goto done;
    x.batch_id = -1;
    x.snapshot = &S->lsn;
    x.has_snapshot_ts = S->has_commit_ts;
    x.snapshot_ts_us = S->commit_ts_us;
    if ((rc = s->o.source->ops->snapshot(s->o.source, s->ci, NULL, NULL,
                                         mcdc_stream__on_snapshot_row, &x)) < 0)
        goto done;
    int64_t rows = x.facts.rows;
    /* right after the read: no row read is newer than this commit (a row may be newer than S) */
    if (s->o.source->ops->consistent_lsn &&
        (rc = s->o.source->ops->consistent_lsn(s->o.source, &s->snap_consistent)) < 0)
        goto done;
    s->has_snap_consistent = s->o.source->ops->consistent_lsn != NULL;
    if (x.df) {
        char lsn[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN] = "";
        if (S->has_commit_ts)
            mcdc_time_format(ts, S->commit_ts_us, 3, false);
        json_t *j = json_pack("{s:s,s:s,s:s,s:I}", "snapshot", s->ci, "lsn",
                              mcdc_stream__lsn_text(lsn, &S->lsn), "commit_ts", ts, "rows", (json_int_t)rows);
        char cl[MCDC_LSN_STRLEN];
        if (j && s->has_snap_consistent)
            json_object_set_new(j, "consistent_lsn", json_string(mcdc_stream__lsn_text(cl, &s->snap_consistent)));
        char *um = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        if (!um) {
            rc = mcdc_error_set(MCDC_ENOMEM, "bootstrap: out of memory");
            goto done;
        }
        int64_t ver;
        rc = mcdc_stream__commit_bronze(s, &x, snap_app, 0, um, "WRITE", NULL, &ver);
        free(um);
        if (rc < 0)
            goto done;
    }
    mcdc_failpoint("stream.bootstrap.after_snapshot");
    s->res->n_snapshot_rows = rows;
    mcdc_log(MCDC_LOG_INFO, LOGGER, "bootstrap: %" PRId64 " rows of %s as of %s", rows,
             s->ci, mcdc_stream__lsn_text((char[MCDC_LSN_STRLEN]){ 0 }, &S->lsn));
    rc = mcdc_stream__write_bootstrap_event(s, S, rows, true, started, (mcdc_time_mono_us() - t0) / 1000);
    if (rc == 0)
        mcdc_failpoint("stream.bootstrap.after_event");
done:
    mcdc_stream__read_dispose(&x);
    free(snap_app);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------- */
