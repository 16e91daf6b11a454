/*
 * pipeline/snapshot_open.c: `stream --bootstrap --bootstrap-mode chunked`: open a chunked
 * snapshot and start streaming at once.
 *
 * Records S = max_lsn (or, for a capture instance enabled after the last commit capture
 * processed, its start LSN minus one), the key and its extent in a snapshot_open facts row
 * (txn{app_id#snapshots, generation}), and returns S: the stream reads every change after
 * S while `mssql-cdc backfill` reads the table's rows in chunks. Nothing is read from the
 * table here and nothing is written to the source. A later run (or a rerun after a crash
 * before the first batch) finds the open row and starts from the same S: one open row per
 * generation. Design: anchor-features §1 (to_delta snapshot="chunked"), ADR 0014.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/failpoint.h"
#include "mcdc/log.h"
#include "pipeline/snapshot_int.h"

static int reuse(mcdc_stream *s, const snap_state *st, mcdc_offset *S)
{
    *S = st->S;
    char l[MCDC_LSN_STRLEN];
    mcdc_log(MCDC_LOG_INFO, LOGGER, "bootstrap: the chunked snapshot of %s at %s is already "
             "open; streaming from it", s->o.target, mcdc_stream__lsn_text(l, &S->lsn));
    return 0;
}

int mcdc_stream__snapshot_open(mcdc_stream *s, mcdc_offset *S)
{
    snap_state st;
    int rc = mcdc_snap__state_read(&st, s->o.facts_path, s->o.target, s->family);
    if (rc < 0)
        return rc;
    if (st.has_open && !strcmp(st.app_id, s->o.app_id)) {
        rc = reuse(s, &st, S);
        mcdc_snap__state_clear(&st);
        return rc;
    }
    if (st.has_full_open && s->gen.n == 0) {
        mcdc_snap__state_clear(&st);
        mcdc_error_set(MCDC_EINVAL, "%s: a full snapshot of app_id %s is open: one snapshot "
                       "mode per stream at a time", s->o.target, s->family);
        return mcdc_error_hint("complete it with --bootstrap-mode full, or wait until CDC "
                               "cleanup passes its LSN");
    }
    mcdc_snap__state_clear(&st);

    snap_keydef k;
    if ((rc = mcdc_snap__keydef(&k, s->o.source, s->ci, s->captured)) < 0)
        return rc;
    mcdc_lsn M;
    bool before = false;
    json_t *extent = NULL, *detail = NULL;
    snap_event ev = { 0 };
    /* as the full bootstrap: before capture processed a just-enabled instance, S is its
     * start LSN minus one (no commit time) */
    if ((rc = mcdc_stream__before_instance_start(s, &M, &before)) < 0)
        goto done;
    if (before) {
        memset(S, 0, sizeof *S);
        S->lsn = M;
    } else if ((rc = mcdc_stream__max_lsn(s, &M)) < 0 || (rc = mcdc_stream__offset_at(s, &M, S)) < 0) {
        goto done;
    }
    if ((rc = mcdc_snap__extent(s->o.source, s->ci, &k, &extent)) < 0)
        goto done;
    detail = json_pack("{s:s,s:s,s:I,s:n,s:n,s:o,s:O}", "mode", "chunked", "kind", "bootstrap",
                       "generation", (json_int_t)0, "lost_from_ts", "lost_to_ts", "keys",
                       mcdc_snap__key_names(&k), "plan", extent);
    ev.event = "snapshot_open";
    ev.app_id = s->o.app_id;
    ev.rows = 0;
    ev.at = *S;
    ev.read_seconds = -1;
    if (s->gen.n > 0) { /* a re-snapshot: its kind, generation and gap (resnapshot.c) */
        ev.has_lost_from = s->gen.has_lost_from;
        ev.lost_from_us = s->gen.lost_from_us;
        ev.has_lost_to = s->gen.has_lost_to;
        ev.lost_to_us = s->gen.lost_to_us;
    }
    if (detail && (rc = mcdc_stream__open_detail_gap(s, detail)) < 0)
        goto done;
    if (!detail || !(ev.detail = json_dumps(detail, JSON_COMPACT | JSON_PRESERVE_ORDER))) {
        rc = mcdc_error_set(MCDC_ENOMEM, "snapshot: out of memory");
        goto done;
    }
    char txn[300];
    if ((rc = mcdc_stream__base_key(txn, sizeof txn, s, "#snapshots")) < 0 ||
        (rc = mcdc_snap__write_events(s, &ev, 1, txn, s->gen.n)) < 0)
        goto done;
    mcdc_failpoint("stream.snapshot_open.after_event");
    /* the row in the table is the open (another run may have written it first) */
    if ((rc = mcdc_snap__state_read(&st, s->o.facts_path, s->o.target, s->family)) < 0)
        goto done;
    if (!st.has_open) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: the snapshot_open row just written is not there",
                            s->o.facts);
    } else {
        *S = st.S;
        char l[MCDC_LSN_STRLEN];
        mcdc_log(MCDC_LOG_INFO, LOGGER, "bootstrap: opened a chunked snapshot of %s at %s; "
                 "run `mssql-cdc backfill` to read its rows", s->ci,
                 mcdc_stream__lsn_text(l, &S->lsn));
    }
    mcdc_snap__state_clear(&st);
done:
    mcdc_snap__events_clear(&ev, 1);
    json_decref(detail);
    json_decref(extent);
    mcdc_snap__keydef_clear(&k);
    return rc;
}

int mcdc_stream__check_no_chunked_open(mcdc_stream *s)
{
    if (!s->o.facts_path)
        return 0;
    snap_state st;
    int rc = mcdc_snap__state_read(&st, s->o.facts_path, s->o.target, s->family);
    if (rc < 0)
        return rc;
    /* an older generation's open never completes: a re-snapshot abandoned it */
    bool open = st.has_open && !st.completed && st.generation >= s->gen.n;
    char l[MCDC_LSN_STRLEN];
    if (open)
        mcdc_stream__lsn_text(l, &st.S.lsn);
    mcdc_snap__state_clear(&st);
    if (!open)
        return 0;
    mcdc_error_set(MCDC_EINVAL, "%s: a chunked snapshot at %s is open: a full bootstrap is "
                   "refused while it is (one snapshot mode per stream)", s->o.target, l);
    return mcdc_error_hint("finish it with `mssql-cdc backfill`, or pass --bootstrap-mode chunked");
}
