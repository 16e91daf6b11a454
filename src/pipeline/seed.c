/*
 * pipeline/seed.c: a stream's first snapshot from an existing copy of the table
 * (`mssql-cdc seed`), as the original design's seed (anchor-features §1).
 *
 * The rows of a Delta table made elsewhere (a migration's copy) go to bronze as snapshot
 * rows stamped with L, the commit LSN of --as-of (an LSN, or the largest commit at or
 * before a time: fn_cdc_map_time_to_lsn('largest less than or equal', ...)): operation 0,
 * _start_lsn = _snapshot = L, _commit_ts L's commit time, in one commit with
 * txn{<app>#snapshot, 0} and userMetadata {"seed", "lsn", "commit_ts", "rows"} (the
 * bootstrap's txn and keys, so `stream --bootstrap` then finds the snapshot, reads nothing
 * and starts after L); then the `bootstrap` facts row (txn{<app>#events, 0}). Columns are
 * matched to the captured ones by name ignoring case (extra ones left out; a missing one,
 * or a type that does not widen to the captured one, is refused). Everything is checked
 * before the first write: an --as-of older than what CDC still holds (changes after it
 * may be purged) is MCDC_EDATALOSS, a snapshot already in bronze (other than this seed's),
 * or one open, is refused. A rerun of the same seed writes nothing new.
 * Design: anchor-features §1 (seed); docs/guides/bootstrap.md.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/backfill.h"
#include "mcdc/delta.h"
#include "mcdc/failpoint.h"
#include "mcdc/log.h"
#include "pipeline/snapshot_int.h"

#undef LOGGER
#define LOGGER "seed"

/* L from --as-of: "0x..." an LSN that must be a commit; else a time, at most the source's
 * clock, mapped to the largest commit at or before it. */
static int resolve_as_of(mcdc_stream *s, const char *as_of, mcdc_offset *L)
{
    mcdc_source *src = s->o.source;
    memset(L, 0, sizeof *L);
    int rc;
    if (!strncasecmp(as_of, "0x", 2)) {
        if (mcdc_lsn_parse(&L->lsn, as_of) < 0) {
            mcdc_error_set(MCDC_EINVAL, "--as-of %s: not an LSN", as_of);
            return mcdc_error_hint("an LSN is 0x and 20 hex digits, a time ISO-8601 (2026-10-01T14:00:00)");
        }
    } else {
        int64_t at = 0, now = 0;
        if (mcdc_time_parse(&at, as_of) < 0) {
            mcdc_error_set(MCDC_EINVAL, "--as-of %s: neither an LSN nor a time", as_of);
            return mcdc_error_hint("an LSN is 0x and 20 hex digits, a time ISO-8601 (2026-10-01T14:00:00, UTC "
                                   "without a zone)");
        }
        if ((rc = src->ops->server_now(src, &now)) < 0)
            return rc;
        if (at > now) {
            char t[MCDC_TIME_STRLEN];
            mcdc_error_set(MCDC_EINVAL, "--as-of %s: later than the source's clock (%sZ)", as_of,
                           mcdc_time_format(t, now, 3, false));
            return mcdc_error_hint("give the time the copy was taken at");
        }
        if (!src->ops->time_to_lsn) {
            mcdc_error_set(MCDC_EUNSUPPORTED, "%s: cannot map a time to an LSN",
                           src->description ? src->description : "source");
            return mcdc_error_hint("give --as-of as an LSN");
        }
        if ((rc = src->ops->time_to_lsn(src, at, &L->lsn)) < 0)
            return rc;
        if (mcdc_lsn_is_zero(&L->lsn)) {
            mcdc_error_set(MCDC_EDATALOSS, "--as-of %s: older than any commit CDC still maps", as_of);
            return mcdc_error_hint("the changes after the copy are gone: take a new snapshot (stream "
                                   "--bootstrap) or a newer copy");
        }
    }
    /* the stream starts after L: every change after it must still be there */
    mcdc_lsn min;
    if ((rc = src->ops->min_lsn(src, s->o.capture_instance, &min)) < 0)
        return rc;
    mcdc_lsn before_min;
    if (!mcdc_lsn_is_zero(&min) && mcdc_lsn_decrement(&before_min, &min) == 0 &&
        mcdc_lsn_cmp(&L->lsn, &before_min) < 0) {
        char a[MCDC_LSN_STRLEN], m[MCDC_LSN_STRLEN];
        mcdc_error_set(MCDC_EDATALOSS, "--as-of %s: its commit %s is older than what CDC still holds for "
                       "%s (min_lsn %s): changes after the copy may be purged", as_of,
                       mcdc_stream__lsn_text(a, &L->lsn), s->o.capture_instance, mcdc_stream__lsn_text(m, &min));
        return mcdc_error_hint("take a new snapshot (stream --bootstrap) or a copy newer than min_lsn");
    }
    rc = src->ops->lsn_to_commit_ts(src, &L->lsn, &L->commit_ts_us);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_set(MCDC_EINVAL, "--as-of %s: not a commit LSN of the source", as_of);
        return mcdc_error_hint("give the LSN of a commit (cdc.lsn_time_mapping), or a time");
    }
    if (rc < 0)
        return rc;
    L->has_commit_ts = true;
    return 0;
}

/* Where each captured column comes from in the copy (its index), by name ignoring case. */
static int match_columns(const mcdc_schema *captured, const mcdc_schema *copy, const char *from, int *at)
{
    for (size_t i = 0; i < captured->n_cols; i++) {
        const mcdc_column *c = &captured->cols[i];
        int k = mcdc_schema_find(copy, c->name);
        if (k < 0) {
            mcdc_error_set(MCDC_EINVAL, "--from %s: no column %s (captured by the capture instance)", from,
                           c->name);
            return mcdc_error_hint("the copy needs every captured column, matched by name ignoring case");
        }
        const mcdc_column *f = &copy->cols[k];
        bool ints = f->type >= MCDC_TYPE_BYTE && f->type <= MCDC_TYPE_LONG && c->type >= MCDC_TYPE_BYTE &&
                    c->type <= MCDC_TYPE_LONG && f->type <= c->type;
        bool same = f->type == c->type &&
                    (c->type != MCDC_TYPE_DECIMAL || (f->scale == c->scale && f->precision <= c->precision));
        if (!ints && !same) {
            char ft[40], ct[40];
            mcdc_error_set(MCDC_EINVAL, "--from %s: column %s is %s, captured as %s", from, f->name,
                           mcdc_type_name(ft, sizeof ft, f), mcdc_type_name(ct, sizeof ct, c));
            return mcdc_error_hint("the copy's types must be the captured ones (or narrower integers)");
        }
        at[i] = k;
    }
    return 0;
}

/* A seed already in bronze: the same one (*same) or another snapshot (refused). */
static int existing(mcdc_stream *s, const char *snap_app, const mcdc_offset *L, bool *same)
{
    *same = false;
    int64_t v = -1;
    int rc = mcdc_stream__table_txn(s->o.target_path, snap_app, &v, NULL, NULL);
    if (rc < 0 || v < 0)
        return rc;
    char *um = NULL;
    int64_t ver;
    if ((rc = mcdc_stream__find_commit_metadata(s->o.target_path, snap_app, 0, &um, &ver)) < 0)
        return rc;
    json_t *j = um ? json_loads(um, 0, NULL) : NULL;
    free(um);
    const char *l = json_string_value(json_object_get(j, "lsn"));
    bool seed = json_object_get(j, "seed") != NULL;
    char a[MCDC_LSN_STRLEN];
    mcdc_stream__lsn_text(a, &L->lsn);
    *same = seed && l && !strcmp(l, a);
    if (!*same) {
        mcdc_error_set(MCDC_EINVAL, "%s: already holds the first snapshot of app_id %s (%s at %s)",
                       s->o.target, s->o.app_id, seed ? "a seed" : "a bootstrap", l ? l : "?");
        rc = mcdc_error_hint("a stream has one first snapshot; seed a new target or app id");
    }
    json_decref(j);
    return rc;
}

int mcdc_seed_run(const mcdc_seed_options *o, mcdc_seed_result *out)
{
    MCDC_ASSERT_ARG(o && out);
    memset(out, 0, sizeof *out);
    if (!o->source || !o->capture_instance || !o->target || !o->target_path || !o->app_id ||
        !o->from || !o->from_path || !o->as_of || !o->facts || !o->facts_path)
        return mcdc_error_set(MCDC_EINVAL, "seed: source, capture instance, target, --from, --as-of, "
                              "app_id and facts are required");
    if (!o->app_id[0] || strchr(o->app_id, '#'))
        return mcdc_error_set(MCDC_EINVAL, "app_id '%s': must be non-empty and without '#'", o->app_id);
    mcdc_stream st;
    memset(&st, 0, sizeof st);
    mcdc_stream *s = &st;
    s->o = (mcdc_stream_options)MCDC_STREAM_OPTIONS_INIT;
    s->o.source = o->source;
    s->o.capture_instance = o->capture_instance;
    s->o.target = o->target;
    s->o.target_path = o->target_path;
    s->o.facts = o->facts;
    s->o.facts_path = o->facts_path;
    s->o.app_id = o->app_id;
    s->o.checkpoint = "";
    s->progress_fd = -1;
    s->bronze_txn = -1;
    mcdc_delta_uuid(s->run_id);
    memcpy(s->stream_id, s->run_id, sizeof s->stream_id); /* both 40 bytes */
    mcdc_delta_snapshot *copy = NULL;
    mcdc_delta_scan *sc = NULL;
    mcdc_value *vals = NULL;
    int *at = NULL;
    char snap_app[300], *um = NULL;
    read_ctx x;
    memset(&x, 0, sizeof x);
    int64_t t0 = mcdc_time_mono_us(), started = mcdc_time_now_us();
    int rc = mcdc_stream_family(s->family, sizeof s->family, o->app_id);
    if (rc == 0 && strcmp(s->family, o->app_id) != 0) {
        mcdc_error_set(MCDC_EINVAL, "--app-id %s: a seed is the first snapshot of a stream: pass its base "
                       "app id", o->app_id);
        rc = mcdc_error_hint("--app-id %s", s->family);
    }
    if (rc < 0 ||
        (rc = mcdc_table_check_kind(o->facts_path, o->facts, "facts", "--facts")) < 0 ||
        (rc = mcdc_stream__find_capture_instance(s)) < 0 ||
        (rc = o->source->ops->captured_columns(o->source, o->capture_instance, &s->captured)) < 0 ||
        (rc = mcdc_stream__check_target(s, false, false)) < 0 ||
        (rc = mcdc_stream__prepare_bronze(s)) < 0 ||
        (rc = mcdc_facts_schema(&s->facts_schema)) < 0 ||
        (rc = mcdc_stream__check_no_chunked_open(s)) < 0)
        goto done;
    mcdc_offset L;
    if ((rc = resolve_as_of(s, o->as_of, &L)) < 0)
        goto done;
    out->lsn = L.lsn;
    out->commit_ts_us = L.commit_ts_us;
    snprintf(snap_app, sizeof snap_app, "%s#snapshot", o->app_id);
    bool same = false;
    if ((rc = existing(s, snap_app, &L, &same)) < 0)
        goto done;
    /* the copy */
    rc = mcdc_delta_snapshot_open(&copy, o->from_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_set(MCDC_EINVAL, "--from %s: not a Delta table", o->from);
        rc = mcdc_error_hint("give the copy's table name or path");
    }
    if (rc < 0)
        goto done;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    if ((rc = mcdc_delta_scan_open(&sc, copy, &so)) < 0)
        goto done;
    at = calloc(s->captured->n_cols + 1, sizeof *at);
    vals = calloc(s->captured->n_cols + 1, sizeof *vals);
    if (!at || !vals) {
        rc = mcdc_error_set(MCDC_ENOMEM, "seed: out of memory");
        goto done;
    }
    if ((rc = match_columns(s->captured, mcdc_delta_scan_schema(sc), o->from, at)) < 0)
        goto done;
    if (same) { /* a rerun: the rows are in bronze; offer the event row again (kept once) */
        out->already = true;
        mcdc_log(MCDC_LOG_INFO, LOGGER, "%s already holds this seed at %s: nothing read again",
                 o->target, o->as_of);
        rc = mcdc_stream__write_bootstrap_event(s, &L, -1, false, 0, 0);
        goto done;
    }
    /* the rows, stamped L */
    if ((rc = mcdc_stream__read_init(&x, s)) < 0)
        goto done;
    x.batch_id = -1;
    x.snapshot = &L.lsn;
    x.has_snapshot_ts = true;
    x.snapshot_ts_us = L.commit_ts_us;
    const mcdc_value *r;
    while ((rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        for (size_t i = 0; i < s->captured->n_cols; i++)
            vals[i] = r[at[i]];
        if ((rc = mcdc_stream__on_snapshot_row(vals, &x)) < 0)
            break;
    }
    if (rc < 0)
        goto done;
    out->rows = x.facts.rows;
    if (!x.df) {
        mcdc_error_set(MCDC_EINVAL, "--from %s: the copy has no rows", o->from);
        rc = mcdc_error_hint("an empty table needs no seed: stream --bootstrap reads it");
        goto done;
    }
    {
        char lsn[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN];
        mcdc_time_format(ts, L.commit_ts_us, 3, false);
        json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:I}", "seed", o->capture_instance, "from", o->from, "lsn",
                              mcdc_stream__lsn_text(lsn, &L.lsn), "commit_ts", ts, "rows", (json_int_t)out->rows);
        um = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        json_decref(j);
        if (!um) {
            rc = mcdc_error_set(MCDC_ENOMEM, "seed: out of memory");
            goto done;
        }
    }
    int64_t ver;
    if ((rc = mcdc_stream__ensure_table(o->facts_path, s->facts_schema, "facts", "12", NULL)) < 0 ||
        (rc = mcdc_stream__commit_bronze(s, &x, snap_app, 0, um, "WRITE", NULL, &ver)) < 0)
        goto done;
    mcdc_failpoint("seed.after_bronze");
    rc = mcdc_stream__write_bootstrap_event(s, &L, out->rows, true, started, (mcdc_time_mono_us() - t0) / 1000);
    if (rc == 0)
        mcdc_log(MCDC_LOG_INFO, LOGGER, "%s: %" PRId64 " rows of %s seeded as of %s", o->target, out->rows,
                 o->from, o->as_of);
done:
    mcdc_stream__read_dispose(&x);
    free(um);
    free(vals);
    free(at);
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(copy);
    mcdc_schema_free(s->captured);
    mcdc_schema_free(s->bronze_schema);
    mcdc_schema_free(s->bronze_missing);
    free(s->bronze_map);
    mcdc_schema_free(s->facts_schema);
    return rc;
}
