/*
 * pipeline/owner.c: what a table is and whose it is (architecture §3 invariant 10).
 *
 * Every table records its kind in its configuration (mcdc.kind); bronze also the source
 * table of its capture instance (mcdc.source_table) and its owner (mcdc.owner): the
 * stream family, the app id without a re-snapshot generation suffix ".g<n>", so a new
 * generation and a capture-instance switch of the same source table keep the owner.
 *
 * Ownership rules (docs/decisions/0007-table-kind-and-owner.md):
 * (O1) A stream refuses a target of another kind, of another source table, of another
 *      source database (its recorded identity, source_identity.c) or of another owner,
 *      before it writes anything (mcdc_stream__check_target reads only).
 * (O2) A table written before these keys existed is inferred: its kind from its columns,
 *      its owner from the families of its txn app ids (one family: that one; two: the
 *      table is refused, its changes are likely there twice). The keys are recorded by
 *      the first stream that writes it (mcdc_stream__own_target).
 * (O2b) A new checkpoint of another app id of the owner's family (a generation, "x.g2")
 *      on a bronze that holds that family's batches must say where it starts: with
 *      --bootstrap (a re-snapshot), --adopt or --starting-lsn; from "earliest" by default
 *      it would write every change CDC still holds a second time.
 * (O3) Every bronze commit holds only while mcdc.owner is this stream's family (a commit
 *      option checked on each attempt), so a stream whose table was adopted meanwhile
 *      fails its next commit with MCDC_ECONFLICT and writes nothing.
 * (O4) `--adopt` resumes after the last batch the recorded owner committed: the largest
 *      end_lsn in the userMetadata of its commits (a snapshot commit: its lsn); where log
 *      cleanup dropped some of them, also the largest _start_lsn of bronze's change rows
 *      (and _snapshot of snapshot rows). It takes ownership in a metaData commit of
 *      bronze before its first batch.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/log.h"
#include "pipeline/stream_int.h"

#define KEY_KIND    "mcdc.kind"
#define KEY_SOURCE  "mcdc.source_table"
#define KEY_OWNER   "mcdc.owner"
#define KEY_ADOPTED "mcdc.adopted_from"
#define KEY_SILVER_KEYS "mcdc.silver.keys"

/* ---- kinds --------------------------------------------------------------------------- */

static bool has_col(const mcdc_delta_snapshot *s, const char *name)
{
    return s->schema && mcdc_delta_schema_find(s->schema, name) >= 0;
}

const char *mcdc_table_kind(const mcdc_delta_snapshot *snap, bool *recorded)
{
    const char *k = mcdc_delta_snapshot_config(snap, KEY_KIND, NULL);
    if (recorded)
        *recorded = k != NULL;
    if (k)
        return k;
    /* written before kinds were recorded (O2) */
    if (mcdc_delta_snapshot_config(snap, KEY_SILVER_KEYS, NULL))
        return "silver";
    if (has_col(snap, "_start_lsn") && has_col(snap, "_operation") && has_col(snap, "_seqval"))
        return "bronze";
    if (has_col(snap, "table_name") && has_col(snap, "finalized_until"))
        return "control";
    if (has_col(snap, "app_id") && has_col(snap, "batch_id") && has_col(snap, "event"))
        return "facts";
    return NULL;
}

static int kind_error(const char *flag, const char *name, const char *have, const char *want)
{
    if (have)
        mcdc_error_set(MCDC_EINVAL, "%s %s: is a %s table, not a %s table", flag, name, have,
                       want);
    else
        mcdc_error_set(MCDC_EINVAL, "%s %s: is not a table mssql-cdc writes (no mcdc.kind, "
                       "and not the columns of a %s table)", flag, name, want);
    return mcdc_error_hint("give %s a %s table, or a new name to create one (mssql-cdc table "
                           "info NAME shows a table's mcdc.kind)", flag, want);
}

int mcdc_table_check_kind(const char *path, const char *name, const char *want, const char *flag)
{
    MCDC_ASSERT_ARG(path && name && want && flag);
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    const char *have = mcdc_table_kind(snap, NULL);
    if (!have || strcmp(have, want) != 0)
        rc = kind_error(flag, name, have, want);
    mcdc_delta_snapshot_free(snap);
    return rc;
}

int mcdc_stream_family(char *out, size_t cap, const char *app_id)
{
    MCDC_ASSERT_ARG(out && app_id);
    size_t n = strcspn(app_id, "#");
    if (n + 1 > cap)
        return mcdc_error_set(MCDC_EINVAL, "app_id '%s': too long", app_id);
    memcpy(out, app_id, n);
    out[n] = 0;
    /* a trailing .g<digits>: a re-snapshot generation of the same stream */
    char *g = strrchr(out, '.');
    if (g && g > out && g[1] == 'g' && g[2]) {
        bool digits = true;
        for (const char *p = g + 2; *p; p++)
            digits &= *p >= '0' && *p <= '9';
        if (digits)
            *g = 0;
    }
    return 0;
}

/* ---- the capture instance ------------------------------------------------------------ */

int mcdc_stream__find_capture_instance(mcdc_stream *s)
{
    mcdc_capture_instance *a = NULL;
    size_t n = 0;
    s->source_table[0] = 0;
    snprintf(s->ci, sizeof s->ci, "%s", s->o.capture_instance);
    if (!s->o.source->ops->capture_instances)
        return 0; /* a source that cannot list them: captured_columns is the check */
    int rc = s->o.source->ops->capture_instances(s->o.source, NULL, &a, &n);
    if (rc < 0)
        return rc;
    bool found = false;
    for (size_t i = 0; i < n && !found; i++) {
        if (strcasecmp(a[i].name, s->o.capture_instance) == 0) {
            snprintf(s->source_table, sizeof s->source_table, "%s.%s", a[i].source_schema,
                     a[i].source_table);
            snprintf(s->ci, sizeof s->ci, "%s", a[i].name);
            found = true;
        }
    }
    /* disabled after a switch: its table's newest instance (ci_switch.c) */
    if (!found && (rc = mcdc_stream__resolve_instance(s)) != MCDC_ENOTFOUND) {
        mcdc_capture_instances_free(a, n);
        return rc;
    }
    rc = 0;
    mcdc_error_clear();
    /* a permission the source can name (a hidden instance) is exit 3, not a name to correct */
    if (!found && (rc = mcdc_source_why_missing(s->o.source, s->o.capture_instance)) < 0) {
        mcdc_capture_instances_free(a, n);
        return rc;
    }
    if (!found) {
        mcdc_buf list = MCDC_BUF_INIT(1 << 16);
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = mcdc_buf_printf(&list, "%s%s", i ? ", " : "", a[i].name);
        const char *where = s->o.source->description ? s->o.source->description : "the source";
        if (n)
            mcdc_error_set(MCDC_EINVAL, "capture instance '%s': not in %s (it has %s)",
                           s->o.capture_instance, where, list.ptr ? list.ptr : "");
        else
            mcdc_error_set(MCDC_EINVAL, "capture instance '%s': not in %s (it has none)",
                           s->o.capture_instance, where);
        rc = mcdc_error_hint(n ? "pass one of them to --capture-instance" :
                             "enable CDC on the source table first (sys.sp_cdc_enable_table; "
                             "mssql-cdc sim enable on the simulator)");
        mcdc_buf_dispose(&list);
    }
    mcdc_capture_instances_free(a, n);
    return rc;
}

/* ---- owners of a table ----------------------------------------------------------------- */

/* The families of the txn app ids of @p snap: the first two distinct ones; *n how many
 * distinct (2 means two or more). */
static void txn_families(const mcdc_delta_snapshot *snap, char f[2][256], int *n)
{
    *n = 0;
    for (size_t i = 0; i < snap->n_txns && *n < 2; i++) {
        char fam[256];
        if (mcdc_stream_family(fam, sizeof fam, snap->txns[i].app_id) < 0) {
            mcdc_error_clear();
            continue;
        }
        if (*n == 1 && strcmp(f[0], fam) == 0)
            continue;
        snprintf(f[*n], 256, "%s", fam);
        (*n)++;
    }
}

static bool in_family(const char *app_id, const char *family)
{
    char fam[256];
    if (mcdc_stream_family(fam, sizeof fam, app_id) < 0) {
        mcdc_error_clear();
        return false;
    }
    return strcmp(fam, family) == 0;
}

static void lsn_max(bool *has, mcdc_lsn *acc, const mcdc_lsn *v)
{
    if (!*has || mcdc_lsn_cmp(v, acc) > 0) {
        *acc = *v;
        *has = true;
    }
}

/* The LSN up to which commit @p um (userMetadata) of txn @p app_id holds changes: its
 * end_lsn, or a snapshot commit's lsn. */
static bool commit_end(const char *um, const char *app_id, mcdc_lsn *out)
{
    json_t *j = um ? json_loads(um, 0, NULL) : NULL;
    const char *l = json_string_value(json_object_get(j, "end_lsn"));
    const char *hash = strchr(app_id, '#');
    if (!l && hash && strcmp(hash, "#snapshot") == 0)
        l = json_string_value(json_object_get(j, "lsn"));
    bool ok = l && mcdc_lsn_parse(out, l) == 0;
    json_decref(j);
    return ok;
}

/* The largest _start_lsn of change rows (operations 1-4) and _snapshot of snapshot rows. */
static int scan_rows_end(const mcdc_delta_snapshot *snap, bool *has, mcdc_lsn *acc)
{
    static const char *const cols[] = { "_start_lsn", "_operation", "_snapshot" };
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = 3;
    mcdc_delta_scan *sc = NULL;
    int rc = mcdc_delta_scan_open(&sc, snap, &so);
    const mcdc_value *row;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        rc = 0;
        if (row[1].is_null)
            continue;
        const mcdc_value *v = row[1].v.i == 0 ? &row[2] : &row[0];
        mcdc_lsn l;
        if (v->is_null || (row[1].v.i < 0 || row[1].v.i > 4))
            continue;
        if (mcdc_lsn_parse_n(&l, v->v.s.ptr, v->v.s.len) == 0)
            lsn_max(has, acc, &l);
        else
            mcdc_error_clear();
    }
    mcdc_delta_scan_free(sc);
    return rc < 0 ? rc : 0;
}

/* --adopt: where to resume (O4) and the first batch number; reads only. */
static int plan_adoption(mcdc_stream *s, const mcdc_delta_snapshot *snap, const char *from)
{
    int64_t vb = mcdc_delta_snapshot_txn(snap, s->o.app_id), vf = -1;
    int rc;
    if (s->o.facts_path &&
        (rc = mcdc_stream__table_txn(s->o.facts_path, s->facts_app_id, &vf, NULL, NULL)) < 0)
        return rc;
    s->first_batch = (vb > vf ? vb : vf) + 1;

    mcdc_delta_history_entry *h = NULL;
    size_t n = 0;
    if ((rc = mcdc_delta_history(&h, &n, s->o.target_path)) < 0)
        return rc;
    bool has = false, need_scan = false;
    mcdc_lsn end = { { 0 } };
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < h[i].n_txns; k++) {
            mcdc_lsn l;
            if (from[0] && in_family(h[i].txns[k].app_id, from) &&
                commit_end(h[i].user_metadata, h[i].txns[k].app_id, &l))
                lsn_max(&has, &end, &l);
        }
    /* the owner's newest commit per app id must still be in the log, else scan rows */
    for (size_t t = 0; t < snap->n_txns; t++) {
        if (from[0] && !in_family(snap->txns[t].app_id, from))
            continue;
        const char *hash = strchr(snap->txns[t].app_id, '#');
        if (hash && strcmp(hash, "#snapshot") != 0)
            continue;
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++)
            for (size_t k = 0; k < h[i].n_txns && !seen; k++) {
                mcdc_lsn l;
                seen = strcmp(h[i].txns[k].app_id, snap->txns[t].app_id) == 0 &&
                       h[i].txns[k].version == snap->txns[t].version &&
                       commit_end(h[i].user_metadata, h[i].txns[k].app_id, &l);
            }
        need_scan |= !seen;
    }
    mcdc_delta_history_free(h, n);
    if (need_scan || !has) {
        mcdc_log(MCDC_LOG_INFO, LOGGER, "--adopt: %s: the owner's last commits are not all in "
                 "the log; reading the largest _start_lsn of its rows", s->o.target);
        if ((rc = scan_rows_end(snap, &has, &end)) < 0)
            return rc;
    }
    if (!has) {
        mcdc_error_set(MCDC_EINVAL, "--adopt: %s holds no batch to resume after", s->o.target);
        return mcdc_error_hint("leave --adopt out: a stream without it starts from "
                               "--starting-lsn (default earliest)");
    }
    /* the changes after the end must still be at the source */
    mcdc_lsn min, next;
    if ((rc = s->o.source->ops->min_lsn(s->o.source, s->o.capture_instance, &min)) < 0 ||
        (rc = mcdc_lsn_increment(&next, &end)) < 0)
        return rc;
    if (!mcdc_lsn_is_zero(&min) && mcdc_lsn_cmp(&next, &min) < 0) {
        char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN];
        mcdc_error_set(MCDC_EDATALOSS, "--adopt: %s: the changes after %s, where its last batch "
                       "ended, are purged from %s (min_lsn is now %s)", s->o.target,
                       mcdc_stream__lsn_text(a, &end), s->o.capture_instance,
                       mcdc_stream__lsn_text(b, &min));
        return mcdc_error_hint("take a new snapshot: stream into a new --target with "
                               "--bootstrap, a new --app-id and a new --checkpoint");
    }
    if ((rc = mcdc_stream__offset_at(s, &end, &s->adopt_after)) < 0)
        return rc;
    snprintf(s->adopt_from, sizeof s->adopt_from, "%s", from);
    s->adopt_planned = true;
    char a[MCDC_LSN_STRLEN];
    mcdc_log(MCDC_LOG_INFO, LOGGER, "--adopt: %s: resuming after %s (the last batch of '%s'), "
             "first batch %" PRId64, s->o.target, mcdc_stream__lsn_text(a, &end),
             from[0] ? from : "(no owner recorded)", s->first_batch);
    return 0;
}

/* The first app id of @p family in @p snap's txns other than @p app_id (batches or a
 * snapshot, not facts or events keys), or NULL. Borrowed from the snapshot. */
static const char *sibling_app(const mcdc_delta_snapshot *snap, const char *family,
                               const char *app_id)
{
    for (size_t i = 0; i < snap->n_txns; i++) {
        const char *a = snap->txns[i].app_id, *hash = strchr(a, '#');
        size_t n = hash ? (size_t)(hash - a) : strlen(a);
        if (hash && strcmp(hash, "#snapshot") != 0)
            continue;
        if ((n != strlen(app_id) || strncmp(a, app_id, n) != 0) && in_family(a, family))
            return a;
    }
    return NULL;
}

int mcdc_stream__check_target(mcdc_stream *s, bool plan_adopt, bool new_checkpoint)
{
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_stream__read_identity(s); /* recorded when bronze is created */
    if (rc == 0)
        rc = mcdc_delta_snapshot_open(&snap, s->o.target_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        if (!s->o.adopt)
            return 0;
        mcdc_error_set(MCDC_ENOTFOUND, "--adopt: %s does not exist: there is no stream's "
                       "table to take over", s->o.target);
        return mcdc_error_hint("leave --adopt out to create it");
    }
    if (rc < 0)
        return rc;
    bool kind_recorded = false;
    const char *kind = mcdc_table_kind(snap, &kind_recorded);
    const char *src = mcdc_delta_snapshot_config(snap, KEY_SOURCE, NULL);
    const char *owner = mcdc_delta_snapshot_config(snap, KEY_OWNER, NULL);
    char fam[2][256];
    int n_fam = 0;
    if (!kind || strcmp(kind, "bronze") != 0) {
        rc = kind_error("--target", s->o.target, kind, "bronze");
        goto done;
    }
    if (src && s->source_table[0] && strcasecmp(src, s->source_table) != 0) {
        mcdc_error_set(MCDC_EINVAL, "--target %s: holds the changes of %s, not of %s (capture "
                       "instance %s)", s->o.target, src, s->source_table, s->o.capture_instance);
        rc = mcdc_error_hint("one bronze per source table: give this stream a --target of its "
                             "own (a new name creates it)");
        goto done;
    }
    s->has_recorded_owner = owner != NULL;
    snprintf(s->recorded_owner, sizeof s->recorded_owner, "%s", owner ? owner : "");
    if (!owner) {
        txn_families(snap, fam, &n_fam);
        if (n_fam > 1) {
            mcdc_error_set(MCDC_EINVAL, "--target %s: holds batches of two streams, '%s' and "
                           "'%s' (written before tables recorded their owner): its changes "
                           "are likely there twice", s->o.target, fam[0], fam[1]);
            rc = mcdc_error_hint("rebuild it: stream into a new --target with --bootstrap, a "
                                 "new --app-id and a new --checkpoint");
            goto done;
        }
    }
    const char *who = owner ? owner : n_fam == 1 ? fam[0] : NULL;
    s->own_record = !kind_recorded || !src || !owner;
    if ((rc = mcdc_stream__check_identity(s, snap)) < 0) /* may set own_record */
        goto done;
    if (!s->o.adopt) {
        if (who && strcmp(who, s->family) != 0) {
            mcdc_error_set(MCDC_EINVAL, "--target %s: belongs to stream '%s', not '%s' (app id "
                           "%s): a second stream would write every change again", s->o.target,
                           who, s->family, s->o.app_id);
            rc = mcdc_error_hint("run the owning stream (--app-id %s with its checkpoint); to "
                                 "take the table over (a lost checkpoint, a new app id) run this "
                                 "one with --adopt and a new --checkpoint; or stream into a new "
                                 "--target", who);
            goto done;
        }
        const char *sib = sibling_app(snap, s->family, s->o.app_id);
        if (new_checkpoint && sib && !s->o.bootstrap && !s->o.starting_given &&
            mcdc_delta_snapshot_txn(snap, s->o.app_id) < 0) { /* (O2b) */
            char sibling[256];
            snprintf(sibling, sizeof sibling, "%.*s", (int)strcspn(sib, "#"), sib);
            mcdc_error_set(MCDC_EINVAL, "--target %s: holds batches of '%s', of this stream's "
                           "family: a new checkpoint of '%s' from the earliest change would "
                           "write them again", s->o.target, sibling, s->o.app_id);
            rc = mcdc_error_hint("say where it starts: --bootstrap for a new snapshot (a "
                                 "re-snapshot generation), --adopt to continue after the last "
                                 "batch, or --starting-lsn");
        }
        goto done;
    }
    if (plan_adopt)
        rc = plan_adoption(s, snap, who ? who : "");
done:
    mcdc_delta_snapshot_free(snap);
    return rc;
}

/* ---- recording the owner ------------------------------------------------------------- */

int mcdc_stream__bronze_config(mcdc_delta_map *m, mcdc_stream *s)
{
    int rc = mcdc_delta_map_set(m, KEY_KIND, "bronze");
    if (rc == 0 && s->source_table[0])
        rc = mcdc_delta_map_set(m, KEY_SOURCE, s->source_table);
    if (rc == 0)
        rc = mcdc_delta_map_set(m, KEY_OWNER, s->family);
    if (rc == 0)
        rc = mcdc_stream__identity_config(m, s);
    return rc;
}

/* The owner bronze records now (malloc'd; NULL when none or no table). */
static char *current_owner(const char *path)
{
    mcdc_delta_snapshot *snap = NULL;
    char *o = NULL;
    if (mcdc_delta_snapshot_open(&snap, path, -1) == 0) {
        const char *v = mcdc_delta_snapshot_config(snap, KEY_OWNER, NULL);
        o = v ? strdup(v) : NULL;
    }
    mcdc_error_clear();
    mcdc_delta_snapshot_free(snap);
    return o;
}

bool mcdc_stream__owner_changed(mcdc_stream *s)
{
    char *now = current_owner(s->o.target_path);
    bool changed = !now || strcmp(now, s->family) != 0;
    free(now);
    return changed;
}

int mcdc_stream__owner_lost(mcdc_stream *s)
{
    char *now = current_owner(s->o.target_path);
    mcdc_error_set(MCDC_ECONFLICT, "%s: now belongs to stream '%s', not '%s': it was adopted by "
                   "another stream while this one ran; nothing of this batch was written",
                   s->o.target, now ? now : "(none)", s->family);
    free(now);
    return mcdc_error_hint("stop this stream: `mssql-cdc stream --adopt` moved the table to "
                           "another stream, which continues where this one left off");
}

int mcdc_stream__own_target(mcdc_stream *s, const char *adopted_from)
{
    if (!s->bronze_exists || (!s->own_record && !adopted_from))
        return 0;
    mcdc_delta_map set = { NULL, 0 };
    int rc = mcdc_stream__bronze_config(&set, s);
    if (rc == 0 && adopted_from && adopted_from[0] && strcmp(adopted_from, s->family) != 0)
        rc = mcdc_delta_map_set(&set, KEY_ADOPTED, adopted_from);
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = adopted_from ? "SET TBLPROPERTIES (adopt)" : "SET TBLPROPERTIES";
    o.expect_key = KEY_OWNER;
    o.expect_value = s->has_recorded_owner ? s->recorded_owner : NULL;
    mcdc_delta_commit_result res;
    if (rc == 0)
        rc = mcdc_delta_set_config(s->o.target_path, &set, &o, &res);
    if (rc == MCDC_ECONFLICT) {
        char *now = current_owner(s->o.target_path);
        if (now && strcmp(now, s->family) == 0) {
            rc = mcdc_delta_set_config(s->o.target_path, &set, NULL, &res); /* a rerun */
        } else {
            mcdc_error_set(MCDC_ECONFLICT, "%s: its owner changed to '%s' while this stream "
                           "started", s->o.target, now ? now : "(none)");
            mcdc_error_hint("another stream took the table: run that one, or start this one "
                            "again to see why it is refused");
        }
        free(now);
    }
    if (rc == 0 && adopted_from)
        mcdc_log(MCDC_LOG_INFO, LOGGER, "%s: now owned by '%s'%s%s", s->o.target, s->family,
                 adopted_from[0] ? ", adopted from " : "", adopted_from);
    mcdc_delta_map_clear(&set);
    return rc;
}
