/*
 * pipeline/switch_snapshot.c: `stream --snapshot-on-switch`: after the stream follows a
 * newer capture instance, read the source table again in chunks, so rows not changed
 * since the switch get the new instance's columns (a column the old instance did not
 * capture holds NULL in bronze and silver until its row changes).
 *
 * The snapshot is a partial backfill of the whole key range (ADR 0022: `backfill --range
 * null..null`), run in the stream's process on the stream's thread, with the newer
 * instance's columns: snapshot rows stamped with their wave's L = max_lsn (at or past S),
 * outside every snapshot, so silver ranks each against the changes to its key (rule W3)
 * and is never rebuilt, and no bootstrap or resnapshot row is written. Its state is the
 * facts table's, so a crash at any point is repaired by the next run:
 * (W1) The newest capture_instance_switched row of the target, at S, is pending until a
 *      snapshot_range row of the target covers the whole key range ("range":[null,null])
 *      from an LSN at or past S.
 * (W2) The stream checks this when it starts and after the batch that switched; a pending
 *      switch is read whole again (a run stopped half-way is read again whole, as any
 *      partial backfill; the waves it committed are repairs as good as the next run's).
 * Design: docs/guides/schema-changes.md; anchor-features §1 (snapshot_on_switch).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/backfill.h"
#include "mcdc/log.h"
#include "pipeline/stream_int.h"

enum { C_TARGET, C_EVENT, C_MIN_LSN, C_DETAIL, N_C };

static bool str_is(const mcdc_value *v, const char *s)
{
    return !v->is_null && strlen(s) == v->v.s.len && memcmp(v->v.s.ptr, s, v->v.s.len) == 0;
}

static bool lsn_of(mcdc_lsn *out, const mcdc_value *v)
{
    char t[MCDC_LSN_STRLEN + 2];
    if (v->is_null || v->v.s.len >= sizeof t)
        return false;
    memcpy(t, v->v.s.ptr, v->v.s.len);
    t[v->v.s.len] = 0;
    return mcdc_lsn_parse(out, t) == 0;
}

/* The newer instance of a switch row's detail "old -> new[; ...]" into @p out. */
static void newer_of(char out[256], const mcdc_value *d)
{
    out[0] = 0;
    if (d->is_null)
        return;
    const char *p = memmem(d->v.s.ptr, d->v.s.len, " -> ", 4);
    if (!p)
        return;
    p += 4;
    size_t n = 0, left = d->v.s.len - (size_t)(p - d->v.s.ptr);
    while (n < left && n < 255 && p[n] != ';')
        n++;
    memcpy(out, p, n);
    out[n] = 0;
}

/* (W1) Whether the target's newest switch waits for its snapshot; its S into @p S and
 * its newer instance into @p ci. */
static int pending(mcdc_stream *s, bool *out, mcdc_lsn *S, char ci[256])
{
    *out = false;
    mcdc_delta_snapshot *snap = NULL;
    mcdc_delta_scan *sc = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, s->o.facts_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0; /* no facts yet: no switch either */
    }
    static const char *const cols[N_C] = { "target", "event", "min_lsn", "detail" };
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = N_C;
    if (rc == 0)
        rc = mcdc_delta_scan_open(&sc, snap, &so);
    bool has_switch = false, has_whole = false;
    mcdc_lsn whole = mcdc_lsn_zero();
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        mcdc_lsn l;
        if (!str_is(&r[C_TARGET], s->o.target) || !lsn_of(&l, &r[C_MIN_LSN]))
            continue;
        if (str_is(&r[C_EVENT], "capture_instance_switched")) {
            if (!has_switch || mcdc_lsn_cmp(&l, S) > 0) {
                *S = l;
                newer_of(ci, &r[C_DETAIL]);
            }
            has_switch = true;
        } else if (str_is(&r[C_EVENT], "snapshot_range") && !r[C_DETAIL].is_null &&
                   memmem(r[C_DETAIL].v.s.ptr, r[C_DETAIL].v.s.len, "\"range\":[null,null]", 19)) {
            if (!has_whole || mcdc_lsn_cmp(&l, &whole) > 0)
                whole = l;
            has_whole = true;
        }
    }
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    if (rc < 0)
        return mcdc_error_prefix("facts table %s", s->o.facts);
    *out = has_switch && !(has_whole && mcdc_lsn_cmp(&whole, S) >= 0);
    return 0;
}

int mcdc_stream__snapshot_on_switch(mcdc_stream *s)
{
    if (!s->o.snapshot_on_switch || !s->o.facts_path)
        return 0;
    bool due;
    mcdc_lsn S;
    char ci[256] = "";
    int rc = pending(s, &due, &S, ci);
    if (rc < 0 || !due)
        return rc;
    if (!ci[0]) /* a detail this engine does not write: the instance the stream reads */
        snprintf(ci, sizeof ci, "%s", s->ci);
    char l[MCDC_LSN_STRLEN];
    mcdc_log(MCDC_LOG_INFO, LOGGER, "--snapshot-on-switch: reading %s again through %s (the "
             "switch at %s), so rows not changed since get its columns", s->source_table, ci,
             mcdc_stream__lsn_text(l, &S));
    mcdc_backfill_options o = MCDC_BACKFILL_OPTIONS_INIT;
    o.source = s->o.source;
    o.capture_instance = ci;
    o.target = s->o.target;
    o.target_path = s->o.target_path;
    o.facts = s->o.facts;
    o.facts_path = s->o.facts_path;
    o.app_id = s->family;
    o.range = "null..null";
    o.whole_range = true;
    o.target_wave_us = 0;
    mcdc_backfill_status st;
    if ((rc = mcdc_backfill_run(&o, &st)) < 0)
        return mcdc_error_prefix("--snapshot-on-switch");
    mcdc_log(MCDC_LOG_INFO, LOGGER, "--snapshot-on-switch: %lld rows of %s read into %s",
             (long long)st.run_rows, ci, s->o.target);
    return 0;
}
