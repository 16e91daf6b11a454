/*
 * silver/follow.c: a silver table that follows a running stream: one worker thread runs
 * mcdc_silver_apply after the stream commits batches, off the stream's thread.
 *
 * The stream's listener only sets a flag and signals (never blocks on I/O). Batches that
 * land while an apply runs are coalesced into the next apply, which reads everything
 * bronze holds by then, so each batch is applied once its commit is visible and no batch
 * is skipped. finish() runs a last apply when one is pending, joins the worker and
 * reports the last apply's outcome. A capture instance the stream switched to while
 * running is added to the applies' instances before the apply of its first batch
 * (mcdc_silver_follower_add_instance, from the stream's listener). Design: mcdc/silver.h, anchor-features §2.7.
 */
#include "mcdc/silver.h"
#include "mcdc/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct mcdc_silver_follower {
    mcdc_silver_apply_options opts;  /* strings below are owned copies */
    char  *strs[8];                  /* bronze/silver names and paths, control, facts */
    char **cis, **keys;              /* owned copies of the lists */
    char   log_ctx[256];             /* the starter's log context, for the apply thread */
    pthread_t       thread;
    bool            started;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    bool            pending;         /* guarded by mu: a batch waits to be applied */
    bool            stop;            /* guarded by mu: finish() was called */
    int             last_rc;         /* guarded by mu: outcome of the last apply */
    mcdc_error      last_err;        /* guarded by mu: its error record */
    mcdc_silver_apply_result last;   /* guarded by mu */
    uint64_t        n_applies;       /* guarded by mu */
    char           *added[16];       /* guarded by mu: instances to allow from the next
                                        apply on (mcdc_silver_follower_add_instance); owned */
    size_t          n_added;         /* guarded by mu */
};

/* Take the instances added since the last apply into the options (the worker, holding mu:
 * the options change only here, between applies). */
static void take_added(mcdc_silver_follower *f)
{
    for (size_t k = 0; k < f->n_added; k++) {
        char **l = realloc(f->cis, (f->opts.n_capture_instances + 2) * sizeof *l);
        if (!l) {
            free(f->added[k]); /* out of memory: the apply then refuses the rows, naming them */
            continue;
        }
        f->cis = l;
        f->cis[f->opts.n_capture_instances++] = f->added[k];
        f->cis[f->opts.n_capture_instances] = NULL;
        f->opts.capture_instances = (const char *const *)f->cis;
    }
    f->n_added = 0;
}

static void *worker(void *arg)
{
    mcdc_silver_follower *f = arg;
    mcdc_log_set_context(f->log_ctx);
    pthread_mutex_lock(&f->mu);
    for (;;) {
        while (!f->pending && !f->stop)
            pthread_cond_wait(&f->cv, &f->mu);
        if (!f->pending)
            break;
        f->pending = false;
        take_added(f);
        pthread_mutex_unlock(&f->mu);
        mcdc_silver_apply_result r;
        int rc = mcdc_silver_apply(&f->opts, &r);
        pthread_mutex_lock(&f->mu);
        f->last_rc = rc;
        f->last = r;
        f->n_applies++;
        if (rc < 0)
            f->last_err = *mcdc_error_last();
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

static char *dup_or_null(const char *s, bool *bad)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *bad = true;
    return d;
}

static char **dup_list(const char *const *l, size_t n, bool *bad)
{
    char **d = calloc(n + 1, sizeof *d);
    if (!d) {
        *bad = true;
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        d[i] = dup_or_null(l[i], bad);
    return d;
}

static void free_list(char **l, size_t n)
{
    for (size_t i = 0; l && i < n; i++)
        free(l[i]);
    free(l);
}

void mcdc_silver_follower_free(mcdc_silver_follower *f)
{
    if (!f)
        return;
    if (f->started) {
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        f->pending = false;
        pthread_cond_signal(&f->cv);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->thread, NULL);
    }
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    for (size_t i = 0; i < 8; i++)
        free(f->strs[i]);
    free_list(f->cis, f->opts.n_capture_instances);
    for (size_t i = 0; i < f->n_added; i++)
        free(f->added[i]);
    free_list(f->keys, f->opts.n_keys);
    free(f);
}

int mcdc_silver_follower_start(mcdc_silver_follower **out, const mcdc_silver_apply_options *o)
{
    *out = NULL;
    if (!o || !o->bronze_name || !o->bronze_path || !o->silver_name || !o->silver_path ||
        !o->control_path || o->n_keys == 0 || o->n_capture_instances == 0)
        return mcdc_error_set(MCDC_EINVAL, "silver: bronze, silver, control, keys and the "
                              "capture instance are required");
    mcdc_silver_follower *f = calloc(1, sizeof *f);
    if (!f)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->opts = *o;
    bool bad = false;
    f->opts.bronze_name = f->strs[0] = dup_or_null(o->bronze_name, &bad);
    f->opts.bronze_path = f->strs[1] = dup_or_null(o->bronze_path, &bad);
    f->opts.silver_name = f->strs[2] = dup_or_null(o->silver_name, &bad);
    f->opts.silver_path = f->strs[3] = dup_or_null(o->silver_path, &bad);
    f->opts.control_path = f->strs[4] = dup_or_null(o->control_path, &bad);
    f->opts.facts_path = f->strs[5] = dup_or_null(o->facts_path, &bad);
    f->cis = dup_list(o->capture_instances, o->n_capture_instances, &bad);
    f->keys = dup_list(o->keys, o->n_keys, &bad);
    f->opts.capture_instances = (const char *const *)f->cis;
    f->opts.keys = (const char *const *)f->keys;
    if (bad) {
        mcdc_silver_follower_free(f);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    snprintf(f->log_ctx, sizeof f->log_ctx, "%s", mcdc_log_context() ? mcdc_log_context() : "");
    if (pthread_create(&f->thread, NULL, worker, f) != 0) {
        mcdc_silver_follower_free(f);
        return mcdc_error_set(MCDC_ERROR, "silver: cannot start the apply thread");
    }
    f->started = true;
    *out = f;
    return 0;
}

int mcdc_silver_follower_add_instance(mcdc_silver_follower *f, const char *ci)
{
    int rc = 0;
    pthread_mutex_lock(&f->mu);
    bool known = false;
    for (size_t i = 0; i < f->opts.n_capture_instances && !known; i++)
        known = strcasecmp(f->cis[i], ci) == 0;
    for (size_t i = 0; i < f->n_added && !known; i++)
        known = strcasecmp(f->added[i], ci) == 0;
    if (!known && f->n_added < sizeof f->added / sizeof *f->added) {
        if (!(f->added[f->n_added] = strdup(ci)))
            rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
        else
            f->n_added++;
    }
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void mcdc_silver_follower_notify(mcdc_silver_follower *f)
{
    pthread_mutex_lock(&f->mu);
    f->pending = true;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

int mcdc_silver_follower_finish(mcdc_silver_follower *f, bool apply_once_more,
                                mcdc_silver_apply_result *last, uint64_t *n_applies)
{
    pthread_mutex_lock(&f->mu);
    if (apply_once_more)
        f->pending = true;
    f->stop = true;
    pthread_cond_signal(&f->cv);
    pthread_mutex_unlock(&f->mu);
    pthread_join(f->thread, NULL);
    f->started = false;
    if (last)
        *last = f->last;
    if (n_applies)
        *n_applies = f->n_applies;
    if (f->last_rc < 0) {
        mcdc_error_restore(&f->last_err);
        return f->last_rc;
    }
    return 0;
}
