/*
 * run/job.c: one table's job: its stream, its finalization tracker and its silver
 * follower, wired by the stream's progress (the stream publishes; the tracker and the
 * follower subscribe here, so the stream never calls them).
 *
 * Guarantees: every input is checked before the first write (the source's time zone, the
 * stream, the control table, silver and its keys); the checkpoint is then taken, the
 * tracker started from the checkpoint's last committed offset (a verdict a crash left
 * behind catches up even when nothing new arrives) and the follower started, all before
 * anything is read. An error of the stream stays the recorded error after the tracker and
 * the follower are stopped. Kept open (mcdc_job_keep_open), a job runs again without its
 * checks: each run has its own tracker and follower, started from the checkpoint as at the
 * first; a failed run forgets the checks, so the next one makes them again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/backfill.h"
#include "mcdc/delta.h"
#include "mcdc/run.h"

#define MAX_KEYS 64

struct mcdc_job {
    mcdc_job_options      o;
    char                  run_id[40];
    mcdc_stream          *stream;
    mcdc_tracker         *tracker;
    mcdc_silver_follower *silver;
    mcdc_backfill_follower *backfill;    /* stream --backfill: waves after each batch */
    mcdc_control_target   control;
    bool                  checked, opened, listening;
    bool                  ran;            /* a run ended: its tracker and follower are done */
    /* silver's apply options and what they point to */
    mcdc_silver_apply_options silver_o;
    char                  keybuf[1024];
    const char           *keys[MAX_KEYS];
    const char           *cis[3];         /* silver's instances: the configured one and the
                                             others of its source table, at the start */
    char                  ci_names[3][256];
};


int mcdc_job_new(mcdc_job **out, const mcdc_job_options *opts)
{
    *out = NULL;
    if (opts->silver && !opts->control) {
        mcdc_error_set(MCDC_EINVAL, "--silver needs --control (silver's position and verdict "
                       "live there)");
        return mcdc_error_hint("name a control table");
    }
    mcdc_job *j = calloc(1, sizeof *j);
    if (!j)
        return mcdc_error_set(MCDC_ENOMEM, "job: out of memory");
    j->o = *opts;
    if (j->o.stream.run_id)
        snprintf(j->run_id, sizeof j->run_id, "%s", j->o.stream.run_id);
    else
        mcdc_delta_uuid(j->run_id);
    j->o.stream.run_id = j->run_id;
    int rc = mcdc_stream_new(&j->stream, &j->o.stream);
    if (rc < 0) {
        free(j);
        return rc;
    }
    *out = j;
    return 0;
}

const char *mcdc_job_run_id(const mcdc_job *j)
{
    return j->run_id;
}

/* silver's apply options: keys from the options or from the capture instance's unique
 * index; given keys must be that index when the source has one. Reads only. */
static int silver_options(mcdc_job *j)
{
    const mcdc_stream_options *so = &j->o.stream;
    mcdc_source *src = so->source;
    char **src_keys = NULL, srckeybuf[1024];
    size_t n_keys = 0, n_src_keys = 0;
    /* the configured instance, or, when it was disabled after a switch, the newest of
     * bronze's recorded source table (as the stream resolves it) */
    const char *key_ci = so->capture_instance;
    mcdc_capture_instance *ia = NULL;
    size_t ni = 0;
    int rc = src->ops->capture_instances ? src->ops->capture_instances(src, NULL, &ia, &ni) : 0;
    if (rc < 0)
        return rc;
    const mcdc_capture_instance *mine = NULL;
    for (size_t i = 0; i < ni; i++)
        if (strcasecmp(ia[i].name, so->capture_instance) == 0)
            mine = &ia[i];
    mcdc_delta_snapshot *bs = NULL;
    if (!mine && ni && mcdc_delta_snapshot_open(&bs, so->target_path, -1) == 0) {
        const char *tab = mcdc_delta_snapshot_config(bs, "mcdc.source_table", "");
        for (size_t i = 0; i < ni; i++) {
            char full[300];
            snprintf(full, sizeof full, "%s.%s", ia[i].source_schema, ia[i].source_table);
            if (strcasecmp(full, tab) == 0)
                mine = &ia[i]; /* the newest of the table: the list is oldest first */
        }
    }
    mcdc_delta_snapshot_free(bs);
    mcdc_error_clear();
    if (mine)
        key_ci = mine->name;
    rc = src->ops->key_columns(src, key_ci, &src_keys, &n_src_keys);
    if (rc < 0) {
        mcdc_capture_instances_free(ia, ni);
        return rc;
    }
    srckeybuf[0] = 0;
    for (size_t i = 0; i < n_src_keys; i++)
        snprintf(srckeybuf + strlen(srckeybuf), sizeof srckeybuf - strlen(srckeybuf), "%s%s",
                 i ? "," : "", src_keys[i]);
    char *save = NULL;
    if (j->o.keys) {
        snprintf(j->keybuf, sizeof j->keybuf, "%s", j->o.keys);
        for (char *p = strtok_r(j->keybuf, ",", &save); p && n_keys < MAX_KEYS;
             p = strtok_r(NULL, ",", &save))
            j->keys[n_keys++] = p;
        bool same = n_keys == n_src_keys;
        for (size_t i = 0; same && i < n_keys; i++)
            same = strcasecmp(j->keys[i], src_keys[i]) == 0;
        if (n_src_keys && !same) {
            rc = mcdc_error_set(MCDC_EINVAL, "--keys %s: capture instance %s is keyed by its "
                                "unique index (%s)", j->o.keys, so->capture_instance, srckeybuf);
            mcdc_error_hint("pass --keys %s, or leave --keys out to take them from the source",
                            srckeybuf);
        }
    } else {
        snprintf(j->keybuf, sizeof j->keybuf, "%s", srckeybuf);
        for (char *p = strtok_r(j->keybuf, ",", &save); p && n_keys < MAX_KEYS;
             p = strtok_r(NULL, ",", &save))
            j->keys[n_keys++] = p;
    }
    if (rc == 0 && n_keys == 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "--silver: capture instance %s has no unique index to "
                            "key silver by", so->capture_instance);
        mcdc_error_hint("pass --keys k1,k2");
    } else if (rc == 0) {
        mcdc_silver_apply_options o = MCDC_SILVER_APPLY_OPTIONS_INIT;
        /* the instances of the table (a newer one the stream may switch to, the one the
         * configured instance was before a switch): bronze holds rows of each */
        size_t n_cis = 0;
        j->cis[n_cis++] = so->capture_instance;
        for (size_t i = 0; mine && i < ni && n_cis < 3; i++) {
            if (strcasecmp(ia[i].name, so->capture_instance) == 0 ||
                strcasecmp(ia[i].source_schema, mine->source_schema) ||
                strcasecmp(ia[i].source_table, mine->source_table))
                continue;
            snprintf(j->ci_names[n_cis], sizeof j->ci_names[n_cis], "%s", ia[i].name);
            j->cis[n_cis] = j->ci_names[n_cis];
            n_cis++;
        }
        o.bronze_name = so->target;
        o.bronze_path = so->target_path;
        o.silver_name = j->o.silver;
        o.silver_path = j->o.silver_path;
        o.control_path = j->o.control_path;
        o.facts_path = so->facts_path;
        o.capture_instances = j->cis;
        o.n_capture_instances = n_cis;
        o.keys = j->keys;
        o.n_keys = n_keys;
        o.granularity = j->o.granularity;
        j->silver_o = o;
        rc = mcdc_silver_apply_check(&j->silver_o);
    }
    for (size_t i = 0; i < n_src_keys; i++)
        free(src_keys[i]);
    free(src_keys);
    mcdc_capture_instances_free(ia, ni);
    return rc;
}

int mcdc_job_check(mcdc_job *j)
{
    int rc;
    mcdc_source *src = j->o.stream.source;
    const char *tz = j->o.source_time_zone;
    if (tz && strcasecmp(tz, "auto") != 0) {
        const char *have = src->ops->server_time_zone(src);
        if (have && strcasecmp(have, tz) != 0) {
            mcdc_error_set(MCDC_EINVAL, "sourceTimeZone=%s but %s keeps its clock in %s", tz,
                           src->description ? src->description : "the source", have);
            return mcdc_error_hint("leave sourceTimeZone out (auto), or give the source's zone");
        }
    }
    /* the stream's inputs, then the control table's and silver's */
    if ((rc = mcdc_stream_check(j->stream)) < 0)
        return rc;
    if (j->o.control && (rc = mcdc_control_check(j->o.control_path)) < 0)
        return rc;
    if (j->o.silver && (rc = silver_options(j)) < 0)
        return rc;
    j->checked = true;
    return 0;
}

int mcdc_job_add_listener(mcdc_job *j, mcdc_stream_listener_fn fn, void *payload)
{
    return mcdc_stream_add_listener(j->stream, fn, payload);
}

/* the tracker and the follower, as subscribers of the stream's progress */
static void subscriber(const mcdc_stream_progress *p, void *payload)
{
    mcdc_job *j = payload;
    switch (p->kind) {
    case MCDC_PROGRESS_START: /* the tracker was seeded from the checkpoint at its start */
        break;
    case MCDC_PROGRESS_BATCH:
        if (j->tracker)
            mcdc_tracker_on_progress(j->tracker, p->run_id, &p->end);
        if (j->silver && p->capture_instance && /* a switch while running (ADR 0032) */
            mcdc_silver_follower_add_instance(j->silver, p->capture_instance) < 0)
            mcdc_log(MCDC_LOG_WARN, "run", "silver: %s", mcdc_error_last()->message);
        if (j->silver)
            mcdc_silver_follower_notify(j->silver);
        if (j->backfill)
            mcdc_backfill_follower_notify(j->backfill);
        break;
    case MCDC_PROGRESS_IDLE:
        if (j->tracker && p->has_end)
            mcdc_tracker_on_progress(j->tracker, p->run_id, &p->end);
        if (j->backfill)
            mcdc_backfill_follower_notify(j->backfill);
        break;
    case MCDC_PROGRESS_TERMINATED:
        if (j->tracker)
            mcdc_tracker_on_terminated(j->tracker, p->run_id);
        break;
    }
}

void mcdc_job_keep_open(mcdc_job *j, bool keep)
{
    mcdc_stream_keep_open(j->stream, keep);
}

void mcdc_job_set_source(mcdc_job *j, mcdc_source *src)
{
    j->o.stream.source = src;
    mcdc_stream_set_source(j->stream, src);
}

/* The tracker and the follower of the run that ended (joined and finished by then). */
static void end_followers(mcdc_job *j)
{
    mcdc_silver_follower_free(j->silver);
    j->silver = NULL;
    mcdc_tracker_free(j->tracker);
    j->tracker = NULL;
    j->ran = false;
    j->opened = false;
}

int mcdc_job_open(mcdc_job *j)
{
    int rc;
    if (j->ran)
        end_followers(j);
    if (!j->checked && (rc = mcdc_job_check(j)) < 0)
        return rc;
    if ((rc = mcdc_stream_open(j->stream)) < 0)
        return rc;
    if (j->o.control) {
        /* the control table is created or checked before anything is read; the tracker
         * starts from the checkpoint's last committed offset */
        mcdc_offset seed;
        bool has_seed = mcdc_checkpoint_read_last(&seed, NULL, j->o.stream.checkpoint) == 0;
        mcdc_error_clear();
        j->control.path = j->o.control_path;
        j->control.table_name = j->o.stream.target;
        mcdc_tracker_options to = MCDC_TRACKER_OPTIONS_INIT;
        to.granularity = j->o.granularity;
        to.table_name = j->o.stream.target;
        if ((rc = mcdc_control_track(&j->tracker, &j->control, j->run_id, &to,
                                     has_seed ? &seed : NULL)) < 0)
            return rc;
    }
    if (j->o.silver && (rc = mcdc_silver_follower_start(&j->silver, &j->silver_o)) < 0)
        return rc;
    if (j->o.backfill_source && !j->backfill) {
        const mcdc_stream_options *so = &j->o.stream;
        mcdc_backfill_options bo = MCDC_BACKFILL_OPTIONS_INIT;
        bo.source = j->o.backfill_source;
        bo.capture_instance = so->capture_instance;
        bo.target = so->target;
        bo.target_path = so->target_path;
        bo.facts = so->facts;
        bo.facts_path = so->facts_path;
        bo.app_id = so->app_id;
        if ((rc = mcdc_backfill_follower_start(&j->backfill, &bo)) < 0)
            return rc;
    }
    if (!j->listening) {
        if ((rc = mcdc_stream_add_listener(j->stream, subscriber, j)) < 0)
            return rc;
        j->listening = true;
    }
    j->opened = true;
    return 0;
}

int mcdc_job_run(mcdc_job *j, mcdc_stream_result *result)
{
    int rc;
    if ((j->ran || !j->opened) && (rc = mcdc_job_open(j)) < 0)
        return rc;
    rc = mcdc_stream_run(j->stream, result);
    j->ran = true;
    if (rc < 0) {
        /* the stream let go of everything: the next run checks again */
        j->checked = false;
        mcdc_error saved = *mcdc_error_last();
        if (j->silver) {
            mcdc_silver_follower_finish(j->silver, false, NULL, NULL);
            mcdc_error_restore(&saved);
        }
        if (j->tracker) {
            mcdc_tracker_join(j->tracker, -1);
            mcdc_error_restore(&saved);
        }
    }
    return rc;
}

void mcdc_job_stop(mcdc_job *j)
{
    if (j && j->stream)
        mcdc_stream_stop(j->stream);
}

int mcdc_job_verdict(mcdc_job *j, bool *has_tracker, mcdc_verdict *out)
{
    *has_tracker = j->tracker != NULL;
    if (!j->tracker)
        return 0;
    mcdc_tracker_join(j->tracker, -1);
    mcdc_tracker_stats ts;
    mcdc_tracker_get_stats(j->tracker, &ts);
    if (ts.pending_failed) {
        mcdc_error_set(MCDC_EIO, "%s: data committed but the verdict could not be written: %s",
                       j->o.control, ts.last_error);
        return mcdc_error_hint("the verdict lags the data; the next run (or mssql-cdc "
                               "finalization advance --checkpoint) catches it up");
    }
    *out = ts.verdict;
    return 0;
}

int mcdc_job_finish_backfill(mcdc_job *j, bool *has_backfill, mcdc_backfill_status *st, int64_t *n_waves)
{
    *has_backfill = j->backfill != NULL;
    if (!j->backfill)
        return 0;
    int rc = mcdc_backfill_follower_finish(j->backfill, true, st, n_waves);
    mcdc_backfill_follower_free(j->backfill);
    j->backfill = NULL;
    return rc;
}

int mcdc_job_finish_silver(mcdc_job *j, bool *has_silver, mcdc_job_silver_result *out)
{
    *has_silver = j->silver != NULL;
    if (!j->silver)
        return 0;
    memset(out, 0, sizeof *out);
    int rc = mcdc_silver_follower_finish(j->silver, true, &out->last, &out->n_applies);
    if (rc < 0)
        mcdc_error_prefix("silver %s: data of bronze committed, silver not applied",
                          j->o.silver);
    return rc;
}

void mcdc_job_free(mcdc_job *j)
{
    if (!j)
        return;
    mcdc_silver_follower_free(j->silver);
    if (j->backfill) { /* a job freed without finish: stop the waves, keep nothing */
        mcdc_backfill_follower_finish(j->backfill, false, NULL, NULL);
        mcdc_backfill_follower_free(j->backfill);
    }
    mcdc_tracker_free(j->tracker);
    mcdc_stream_free(j->stream);
    free(j);
}
