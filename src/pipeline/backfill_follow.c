/*
 * pipeline/backfill_follow.c: `stream --backfill`: the open chunked snapshot's waves run in
 * the stream's process, one after each batch (or idle poll) the stream reports, on a
 * thread of their own with a source connection of their own.
 *
 * The stream's listener only sets a flag and signals (it never blocks); notifications that
 * come while a wave runs are coalesced into the next wave. Each wave is a whole
 * mcdc_backfill_run with max_waves 1, so everything a backfill guarantees holds (resume
 * after a crash, no chunk twice into bronze). finish() runs the waves left when asked
 * (drain), joins the thread and reports the outcome. Once the snapshot is complete, or a
 * wave failed, later notifications do nothing; the failure is what finish() returns.
 * Design: mcdc/backfill.h, docs/guides/bootstrap.md.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/backfill.h"
#include "mcdc/log.h"

struct mcdc_backfill_follower {
    mcdc_backfill_options opts;      /* strings below are owned copies; source borrowed */
    char           *strs[6];
    char            log_ctx[256];    /* the starter's log context, for the wave thread */
    pthread_t       thread;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    bool            pending;         /* guarded by mu: a batch came, a wave waits */
    bool            stop, drain;     /* guarded by mu: finish() was called (and drains) */
    bool            done;            /* guarded by mu: complete, or a wave failed */
    int             last_rc;         /* guarded by mu */
    mcdc_error      last_err;        /* guarded by mu */
    mcdc_backfill_status st;         /* guarded by mu: the last run's status */
    int64_t         n_waves;         /* guarded by mu: waves run by the follower */
};

static void *worker(void *arg)
{
    mcdc_backfill_follower *f = arg;
    mcdc_log_set_context(f->log_ctx);
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (!f->pending && !f->stop)
            pthread_cond_wait(&f->cv, &f->mu);
        bool last = f->stop;
        if (f->done || (last && !f->drain && !f->pending))
            break;
        f->pending = false;
        mcdc_backfill_options o = f->opts;
        o.max_waves = last && f->drain ? 0 : 1; /* at the end: every wave left */
        pthread_mutex_unlock(&f->mu);
        mcdc_backfill_status st;
        int rc = mcdc_backfill_run(&o, &st);
        pthread_mutex_lock(&f->mu);
        f->st = st;
        f->n_waves += st.run_waves;
        f->last_rc = rc;
        if (rc < 0) {
            f->last_err = *mcdc_error_last();
            f->done = true;
        } else if (st.complete) {
            f->done = true;
        }
        if (last)
            break;
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

void mcdc_backfill_follower_free(mcdc_backfill_follower *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    for (size_t i = 0; i < sizeof f->strs / sizeof f->strs[0]; i++)
        free(f->strs[i]);
    free(f);
}

static char *dup(const char *s, bool *bad)
{
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *bad = true;
    return d;
}

int mcdc_backfill_follower_start(mcdc_backfill_follower **out, const mcdc_backfill_options *o)
{
    *out = NULL;
    if (!o || !o->source || !o->capture_instance || !o->target || !o->target_path || !o->app_id ||
        !o->facts || !o->facts_path)
        return mcdc_error_set(MCDC_EINVAL, "stream --backfill: source, capture instance, target, app id "
                              "and facts are required");
    mcdc_backfill_follower *f = calloc(1, sizeof *f);
    if (!f)
        return mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->opts = *o;
    bool bad = false;
    f->opts.capture_instance = f->strs[0] = dup(o->capture_instance, &bad);
    f->opts.target = f->strs[1] = dup(o->target, &bad);
    f->opts.target_path = f->strs[2] = dup(o->target_path, &bad);
    f->opts.facts = f->strs[3] = dup(o->facts, &bad);
    f->opts.facts_path = f->strs[4] = dup(o->facts_path, &bad);
    f->opts.app_id = f->strs[5] = dup(o->app_id, &bad);
    f->opts.progress = NULL;
    f->opts.progress_path = NULL;
    f->opts.range = NULL;
    f->opts.status_only = false;
    if (bad) {
        mcdc_backfill_follower_free(f);
        return mcdc_error_set(MCDC_ENOMEM, "backfill: out of memory");
    }
    snprintf(f->log_ctx, sizeof f->log_ctx, "%s", mcdc_log_context() ? mcdc_log_context() : "");
    if (pthread_create(&f->thread, NULL, worker, f) != 0) {
        mcdc_backfill_follower_free(f);
        return mcdc_error_set(MCDC_ERROR, "backfill: cannot start the wave thread");
    }
    *out = f;
    return 0;
}

void mcdc_backfill_follower_notify(mcdc_backfill_follower *f)
{
    pthread_mutex_lock(&f->mu);
    if (!f->done) {
        f->pending = true;
        pthread_cond_signal(&f->cv);
    }
    pthread_mutex_unlock(&f->mu);
}

int mcdc_backfill_follower_finish(mcdc_backfill_follower *f, bool drain, mcdc_backfill_status *st,
                                  int64_t *n_waves)
{
    pthread_mutex_lock(&f->mu);
    f->stop = true;
    f->drain = drain;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    if (st)
        *st = f->st;
    if (n_waves)
        *n_waves = f->n_waves;
    if (f->last_rc < 0) {
        mcdc_error_restore(&f->last_err);
        return f->last_rc;
    }
    return 0;
}
