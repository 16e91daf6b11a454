/*
 * pipeline/ci_switch.c: following a newer capture instance of the stream's source table.
 *
 * A DBA who needs a column captured enables a second capture instance with it, and once
 * every consumer follows, disables the first (sql/switch_capture_instance.sql). SQL
 * Server gives the newer instance a start LSN S (its enable's commit); transactions that
 * wrote the table before the enable land only in the older instance, below S, and the
 * older instance below S with the newer from S read every commit once (anchor-features
 * §4.4 item 6). So:
 *
 * (S1) The stream's chain is the configured instance and the newer instances of its
 *      source table, oldest first. The instance a batch (after, upto] reads is the newest
 *      of the chain whose S is at or below increment(after); the planner cuts upto at
 *      decrement(S') of the next newer one, so no batch straddles a switch: the older
 *      instance reads (after, S-1], the newer [S, upto] in the next batch. Both follow
 *      from the range and the instances alone, so a replay (a kill -9 at the cut) reads
 *      exactly what the first run would have.
 * (S2) The stream follows when the newer instance captures every key column and each
 *      column it shares with the older one in a type the stream's holds (bronze evolves:
 *      new columns, widenings); otherwise MCDC_ESCHEMA at S, before anything past S is read.
 *      Columns the newer instance does not capture read NULL from S on.
 * (S3) The first batch that reads the newer instance (the one starting at S-1) carries one
 *      capture_instance_switched facts row ("old -> new", the columns no longer captured),
 *      in the batch's own facts commit, so it is written once.
 * (S4) A configured instance that was disabled resolves through bronze's recorded source
 *      table (mcdc.source_table) to that table's instances: a batch reads the newest one
 *      its range has reached, so after the switch procedure, the newest.
 * The retention guard runs on the instance the batch reads (its min_lsn).
 * Design: docs/guides/schema-changes.md; anchor-features §1 ("Following a newer CI").
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/log.h"
#include "pipeline/stream_int.h"

void mcdc_stream__switch_clear(mcdc_stream *s)
{
    free(s->switch_detail);
    s->switch_detail = NULL;
    s->switch_batch = -1;
}

/* The start LSN of an instance: the enable's commit (known before capture processed it). */
static const mcdc_lsn *start_of(const mcdc_capture_instance *c)
{
    return mcdc_lsn_is_zero(&c->enable_lsn) ? &c->start_lsn : &c->enable_lsn;
}

int mcdc_stream__resolve_instance(mcdc_stream *s)
{
    /* the source table bronze recorded */
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, s->o.target_path, -1);
    if (rc < 0)
        return rc == MCDC_ENOTFOUND ? MCDC_ENOTFOUND : rc;
    char table[300];
    const char *t = mcdc_delta_snapshot_config(snap, "mcdc.source_table", NULL);
    snprintf(table, sizeof table, "%s", t ? t : "");
    mcdc_delta_snapshot_free(snap);
    if (!table[0])
        return mcdc_error_set(MCDC_ENOTFOUND, "no source table recorded");
    mcdc_capture_instance *a = NULL;
    size_t n = 0;
    if ((rc = s->o.source->ops->capture_instances(s->o.source, table, &a, &n)) < 0)
        return rc == MCDC_ENOTFOUND ? MCDC_ENOTFOUND : rc;
    if (n == 0) {
        mcdc_capture_instances_free(a, n);
        return mcdc_error_set(MCDC_ENOTFOUND, "no capture instance on %s", table);
    }
    /* the oldest left; each batch then reads the newest one its range has reached (S1) */
    snprintf(s->ci, sizeof s->ci, "%s", a[0].name);
    snprintf(s->source_table, sizeof s->source_table, "%s.%s", a[0].source_schema,
             a[0].source_table);
    mcdc_log(MCDC_LOG_INFO, LOGGER, "capture instance %s is gone (disabled): following the "
             "instances of %s, from %s", s->o.capture_instance, table, s->ci);
    mcdc_capture_instances_free(a, n);
    return 0;
}

/* Refuse a newer instance the stream cannot follow (S2); the columns the older one
 * captured and the newer does not into @p gone. */
static int check_follow(mcdc_stream *s, const char *to, const mcdc_schema *now,
                        const mcdc_lsn *S, mcdc_buf *gone)
{
    char l[MCDC_LSN_STRLEN], t1[48], t2[48];
    mcdc_lsn_format(l, S);
    char **keys = NULL;
    size_t n_keys = 0;
    int rc = s->o.source->ops->key_columns(s->o.source, to, &keys, &n_keys);
    for (size_t i = 0; rc == 0 && i < n_keys; i++) {
        if (mcdc_schema_find(now, keys[i]) >= 0)
            continue;
        rc = mcdc_error_set(MCDC_ESCHEMA, "%s: the newer capture instance %s (from %s) does not "
                            "capture the key column %s, which the stream needs", s->ci, to, l,
                            keys[i]);
        mcdc_error_hint("nothing past %s was read; enable the new capture instance again with "
                        "every key column in its column list (sql/switch_capture_instance.sql)",
                        l);
    }
    for (size_t i = 0; i < n_keys; i++)
        free(keys[i]);
    free(keys);
    for (size_t i = 0; rc == 0 && i < s->captured->n_cols; i++) {
        const mcdc_column *o = &s->captured->cols[i];
        int k = mcdc_schema_find(now, o->name);
        if (k < 0) {
            rc = mcdc_buf_printf(gone, "%s%s", gone->len ? ", " : "", o->name);
            continue;
        }
        if (mcdc_stream__type_holds(o, &now->cols[k]))
            continue;
        rc = mcdc_error_set(MCDC_ESCHEMA, "%s: the newer capture instance %s (from %s) captures "
                            "%s as %s, which the stream's %s cannot hold", s->ci, to, l, o->name,
                            mcdc_type_name(t2, sizeof t2, &now->cols[k]),
                            mcdc_type_name(t1, sizeof t1, o));
        mcdc_error_hint("nothing past %s was read; stream the table to a new --target with a "
                        "new --checkpoint and --app-id (docs/guides/schema-changes.md)", l);
    }
    return rc;
}

int mcdc_stream__plan_instance(mcdc_stream *s, const mcdc_lsn *after, mcdc_lsn *upto,
                               int64_t batch_id)
{
    mcdc_stream__switch_clear(s);
    if (!s->o.source->ops->capture_instances || !s->source_table[0])
        return 0;
    mcdc_capture_instance *a = NULL;
    size_t n = 0;
    mcdc_schema *now = NULL;
    mcdc_buf gone = MCDC_BUF_INIT(1 << 16), d = MCDC_BUF_INIT(1 << 16);
    int rc = s->o.source->ops->capture_instances(s->o.source, s->source_table, &a, &n);
    if (rc < 0)
        goto done;
    /* the chain: the configured instance on (S1), or every instance of the table when it
     * is gone (S4) */
    size_t first = 0;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(a[i].name, s->o.capture_instance) == 0)
            first = i;
    if (n == 0) {
        /* the instance and every other of its table are gone (disabled while the stream
         * ran, or between two runs of one kept open): refused with the check's error
         * before anything of the batch is recorded */
        mcdc_capture_instances_free(a, n);
        a = NULL;
        if ((rc = mcdc_stream__find_capture_instance(s)) == 0)
            rc = mcdc_error_set(MCDC_ENOTFOUND, "capture instance '%s': gone from the source",
                                s->o.capture_instance);
        goto done;
    }
    mcdc_lsn next;
    if ((rc = mcdc_lsn_increment(&next, after)) < 0)
        goto done;
    size_t cur = first;
    for (size_t j = first + 1; j < n; j++)
        if (!mcdc_lsn_is_zero(start_of(&a[j])) && mcdc_lsn_cmp(start_of(&a[j]), &next) <= 0)
            cur = j;
    for (size_t j = cur + 1; j < n; j++) {
        const mcdc_lsn *S = start_of(&a[j]);
        if (mcdc_lsn_is_zero(S) || mcdc_lsn_cmp(S, &next) <= 0)
            continue;
        mcdc_lsn before;
        if ((rc = mcdc_lsn_decrement(&before, S)) < 0)
            goto done;
        if (mcdc_lsn_cmp(&before, upto) < 0)
            *upto = before; /* the older instance up to S-1; the newer from S, next batch */
        break;
    }
    if (strcasecmp(a[cur].name, s->ci) == 0)
        goto done;
    /* a switch: the newer instance's columns, checked, then taken (S2) */
    const mcdc_lsn *S = start_of(&a[cur]);
    if ((rc = s->o.source->ops->captured_columns(s->o.source, a[cur].name, &now)) < 0 ||
        (rc = check_follow(s, a[cur].name, now, S, &gone)) < 0)
        goto done;
    char old[256];
    snprintf(old, sizeof old, "%s", s->ci);
    if ((rc = mcdc_stream__take_columns(s, now)) < 0)
        goto done;
    now = NULL;
    snprintf(s->ci, sizeof s->ci, "%s", a[cur].name);
    if (mcdc_lsn_cmp(S, &next) != 0) /* a restart past S: switched before, no second row */
        goto done;
    rc = mcdc_buf_printf(&d, "%s -> %s", old, s->ci);
    if (rc == 0 && gone.len)
        rc = mcdc_buf_printf(&d, "; no longer captured, read as NULL: %s", gone.ptr);
    if (rc < 0)
        goto done;
    s->switch_detail = mcdc_buf_detach(&d);
    s->switch_batch = batch_id;
    s->switch_lsn = *S;
    mcdc_log(MCDC_LOG_INFO, LOGGER, "batch %" PRId64 ": capture instance switch %s",
             batch_id, s->switch_detail);
done:
    mcdc_buf_dispose(&gone);
    mcdc_buf_dispose(&d);
    mcdc_schema_free(now);
    mcdc_capture_instances_free(a, n);
    return rc;
}

int mcdc_stream__add_switch_row(facts_rows *f, mcdc_stream *s, int64_t batch_id)
{
    if (s->switch_batch != batch_id || !s->switch_detail)
        return 0;
    mcdc_offset at = { s->switch_lsn, 0, false };
    int rc = mcdc_stream__offset_at(s, &s->switch_lsn, &at); /* S is the enable's commit */
    if (rc < 0)
        return rc;
    return mcdc_stream__add_text_event_row(f, s, batch_id, "capture_instance_switched", &at,
                                           s->switch_detail);
}
