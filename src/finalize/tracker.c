/*
 * finalize/tracker.c: continuous finalization, one worker thread per stream run
 * (ADR 0026 of the original design; mcdc/finalize.h).
 *
 * The stream's listener only stores the newest end offset of its run in one slot and
 * wakes the worker; the worker calls store->advance when the offset's candidate is newer
 * than the verdict it last wrote, so the control table gets about one write per period
 * crossed, not one per batch. Guarantees:
 * (T1) The listener never waits on I/O: it takes the lock, copies 40 bytes, signals.
 * (T2) Only this run counts: progress and termination of another run are ignored.
 * (T3) A failure never reaches the stream. It is counted (failures, last_error), logged
 *      at ERROR with its reason the first time in a streak and then as at most one WARN
 *      per warn interval until a success, and retried on the next progress.
 * (T4) After termination the worker applies what is left; a failed advance is tried
 *      twice more (retry_delay_us[0] and [1] later) before the failure is recorded; then
 *      the worker stops. A run that terminated before any progress reached the tracker
 *      is applied from its seed or last progress the same way.
 *
 * State (guarded by mu): slot (newest unapplied offset), failed (offset whose advance
 * failed last and is not covered by a later success), terminated, abandon, done.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/log.h"

#define LOGGER "finalization"

struct mcdc_tracker {
    mcdc_finalize_store  store;     /* immutable after start */
    mcdc_tracker_options opts;      /* immutable after start */
    char                 run_id[128];
    char                 log_ctx[256];  /* the starter's log context, for the worker's lines */
    char                 table[256];/* for messages; "" when not given */
    pthread_t            thread;
    bool                 thread_joined; /* set by join/free, on the caller's thread */

    pthread_mutex_t      mu;
    pthread_cond_t       wake;      /* worker waits: progress, termination, abandon */
    pthread_cond_t       done_cv;   /* joiners wait: done */
    /* guarded by mu: */
    bool                 has_slot;
    mcdc_offset          slot;
    bool                 has_failed;
    mcdc_offset          failed;
    bool                 has_written;  /* the worker wrote (or found) a verdict */
    int64_t              written_us;   /* the newest verdict the worker knows is stored */
    bool                 terminated;
    bool                 abandon;      /* free(): stop at once */
    bool                 done;
    mcdc_ratelimit       rl;
    mcdc_tracker_stats   st;
};

static int64_t clock_now(const mcdc_tracker *t)
{
    return t->opts.clock_us ? t->opts.clock_us(t->opts.clock_payload) : mcdc_time_mono_us();
}

static const char *table_of(const mcdc_tracker *t)
{
    return t->table[0] ? t->table : "(table)";
}

/* Wait on t->wake for up to us microseconds (CLOCK_MONOTONIC), mu held. Returns early on
 * abandon. */
static void sleep_locked(mcdc_tracker *t, int64_t us)
{
    struct timespec now, until;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ns = (int64_t)now.tv_nsec + (us % 1000000) * 1000;
    until.tv_sec = now.tv_sec + (time_t)(us / 1000000) + (time_t)(ns / 1000000000);
    until.tv_nsec = (long)(ns % 1000000000);
    while (!t->abandon) {
        int rc = pthread_cond_timedwait(&t->wake, &t->mu, &until);
        if (rc == ETIMEDOUT)
            break;
    }
}

/* One call of the store, without the lock. The error message is copied on this thread. */
static int call_store(mcdc_tracker *t, const mcdc_offset *off, mcdc_verdict *v, char *err,
                      size_t err_len)
{
    mcdc_error_clear();
    int rc = t->store.advance(t->store.payload, off, t->opts.granularity, v);
    if (rc < 0)
        snprintf(err, err_len, "%s", mcdc_error_last()->message[0]
                                         ? mcdc_error_last()->message : mcdc_strerror(rc));
    return rc;
}

static void record_success(mcdc_tracker *t, int64_t candidate, const mcdc_verdict *v)
{
    if (t->st.failures > 0)
        mcdc_log(MCDC_LOG_INFO, LOGGER, "verdict of %s written again after %llu failed attempts",
                 table_of(t), (unsigned long long)t->st.failures);
    t->st.failures = 0;
    t->st.last_error[0] = 0;
    t->st.n_advances++;
    t->st.verdict = *v;
    t->has_written = true;
    /* The store never moves backwards, so its verdict is at least the candidate; take the
     * larger in case another writer moved it further. */
    t->written_us = v->has && v->until_us > candidate ? v->until_us : candidate;
    t->has_failed = false;
    mcdc_ratelimit_reset(&t->rl);
}

static void record_failure(mcdc_tracker *t, const mcdc_offset *off, int64_t candidate,
                           const char *err)
{
    char when[MCDC_TIME_STRLEN];
    mcdc_time_format(when, candidate, 0, false);
    t->st.failures++;
    t->st.total_failures++;
    snprintf(t->st.last_error, sizeof t->st.last_error, "%s", err);
    t->failed = *off;
    t->has_failed = true;
    bool allowed = mcdc_ratelimit_allow(&t->rl, clock_now(t));
    if (t->st.failures == 1)
        mcdc_log(MCDC_LOG_ERROR, LOGGER, "advancing the verdict of %s to %s failed: %s",
                 table_of(t), when, err);
    else if (allowed)
        mcdc_log(MCDC_LOG_WARN, LOGGER,
                 "advancing the verdict of %s to %s still fails (%llu attempts in a row): %s",
                 table_of(t), when, (unsigned long long)t->st.failures, err);
}

/* Apply @p off, mu held (released around the store call). When final, a failure is tried
 * again retry_delay_us[i] later, up to two more times (T4); with first_now false the
 * first try also waits (the offset already failed before termination). */
static void apply(mcdc_tracker *t, const mcdc_offset *off, bool final, bool first_now)
{
    int64_t candidate;
    if (mcdc_finalize_candidate(&candidate, off, t->opts.granularity) < 0) {
        t->st.n_skipped++; /* no commit time: no verdict to write */
        return;
    }
    if (t->has_written && candidate <= t->written_us) {
        t->st.n_skipped++;
        if (t->has_failed) {
            int64_t fc;
            if (mcdc_finalize_candidate(&fc, &t->failed, t->opts.granularity) == 0 &&
                fc <= t->written_us)
                t->has_failed = false;
        }
        return;
    }
    int tries = final ? (first_now ? 3 : 2) : 1;
    char err[sizeof t->st.last_error];
    int rc = 0;
    mcdc_verdict v = { 0 };
    for (int i = 0; i < tries && !t->abandon; i++) {
        bool wait = final && (i > 0 || !first_now);
        if (wait) {
            int k = first_now ? i - 1 : i;
            sleep_locked(t, t->opts.retry_delay_us[k]);
            if (t->abandon)
                break;
        }
        pthread_mutex_unlock(&t->mu);
        rc = call_store(t, off, &v, err, sizeof err);
        pthread_mutex_lock(&t->mu);
        if (rc == 0)
            break;
        if (i + 1 < tries)
            mcdc_log(MCDC_LOG_DEBUG, LOGGER, "advancing the verdict of %s failed, trying again: %s",
                     table_of(t), err);
    }
    if (t->abandon && rc != 0)
        return;
    if (rc == 0)
        record_success(t, candidate, &v);
    else
        record_failure(t, off, candidate, err);
}

static void *worker(void *arg)
{
    mcdc_tracker *t = arg;
    mcdc_log_set_context(t->log_ctx);
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->has_slot && !t->terminated && !t->abandon)
            pthread_cond_wait(&t->wake, &t->mu);
        if (t->abandon)
            break;
        if (t->has_slot) {
            mcdc_offset off = t->slot;
            t->has_slot = false;
            bool final = t->terminated;
            apply(t, &off, final, true);
            if (final)
                break; /* no progress is taken after termination: nothing is left */
            continue;
        }
        /* terminated, nothing new: one last chance for an offset that failed earlier */
        if (t->has_failed) {
            mcdc_offset off = t->failed;
            apply(t, &off, true, false);
        }
        break;
    }
    t->st.pending_failed = t->has_failed;
    t->st.finished = true;
    t->done = true;
    pthread_cond_broadcast(&t->done_cv);
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int mcdc_tracker_start(mcdc_tracker **out, const mcdc_finalize_store *store,
                       const char *run_id, const mcdc_tracker_options *opts)
{
    MCDC_ASSERT_ARG(out);
    *out = NULL;
    if (!store || !store->advance)
        return mcdc_error_set(MCDC_EINVAL, "tracker: no store to write the verdict to");
    if (!run_id || !*run_id)
        return mcdc_error_set(MCDC_EINVAL, "tracker: empty run id");
    if (strlen(run_id) >= sizeof((mcdc_tracker *)0)->run_id)
        return mcdc_error_set(MCDC_EINVAL, "tracker: run id longer than %zu bytes",
                              sizeof((mcdc_tracker *)0)->run_id - 1);
    mcdc_tracker_options o = MCDC_TRACKER_OPTIONS_INIT;
    if (opts)
        o = *opts;
    int64_t cand;
    mcdc_offset probe = { .has_commit_ts = true };
    if (mcdc_finalize_candidate(&cand, &probe, o.granularity) < 0)
        return MCDC_EINVAL;
    if (o.retry_delay_us[0] < 0 || o.retry_delay_us[1] < 0 || o.warn_interval_us < 0)
        return mcdc_error_set(MCDC_EINVAL, "tracker: negative delay");

    mcdc_tracker *t = calloc(1, sizeof *t);
    if (!t)
        return mcdc_error_set(MCDC_ENOMEM, "tracker: out of memory");
    t->store = *store;
    t->opts = o;
    t->opts.table_name = NULL; /* copied below; the caller's string may not live on */
    snprintf(t->run_id, sizeof t->run_id, "%s", run_id);
    if (o.table_name)
        snprintf(t->table, sizeof t->table, "%s", o.table_name);
    t->rl = (mcdc_ratelimit)MCDC_RATELIMIT_INIT(o.warn_interval_us);
    snprintf(t->log_ctx, sizeof t->log_ctx, "%s", mcdc_log_context() ? mcdc_log_context() : "");

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->wake, &ca);
    pthread_cond_init(&t->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&t->thread, NULL, worker, t) != 0) {
        pthread_cond_destroy(&t->wake);
        pthread_cond_destroy(&t->done_cv);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return mcdc_error_set(MCDC_ERROR, "tracker: cannot start the worker thread");
    }
    *out = t;
    return 0;
}

/* Keep the newer of two offsets of one run (a run's progress only moves forward). */
static void store_slot(mcdc_tracker *t, const mcdc_offset *end)
{
    if (t->has_slot && mcdc_lsn_cmp(&end->lsn, &t->slot.lsn) < 0)
        return;
    t->slot = *end;
    t->has_slot = true;
    pthread_cond_signal(&t->wake);
}

void mcdc_tracker_seed(mcdc_tracker *t, const mcdc_offset *last_committed)
{
    if (!t || !last_committed)
        return;
    pthread_mutex_lock(&t->mu);
    if (!t->terminated)
        store_slot(t, last_committed);
    pthread_mutex_unlock(&t->mu);
}

void mcdc_tracker_on_progress(mcdc_tracker *t, const char *run_id, const mcdc_offset *end)
{
    if (!t || !end)
        return;
    pthread_mutex_lock(&t->mu);
    if (!run_id || strcmp(run_id, t->run_id) != 0 || t->terminated)
        t->st.n_ignored++;
    else
        store_slot(t, end);
    pthread_mutex_unlock(&t->mu);
}

void mcdc_tracker_on_terminated(mcdc_tracker *t, const char *run_id)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    if (!run_id || strcmp(run_id, t->run_id) != 0) {
        t->st.n_ignored++;
    } else {
        t->terminated = true;
        pthread_cond_signal(&t->wake);
    }
    pthread_mutex_unlock(&t->mu);
}

bool mcdc_tracker_join(mcdc_tracker *t, int64_t timeout_us)
{
    if (!t)
        return true;
    pthread_mutex_lock(&t->mu);
    if (timeout_us < 0) {
        while (!t->done)
            pthread_cond_wait(&t->done_cv, &t->mu);
    } else {
        struct timespec now, until;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t ns = (int64_t)now.tv_nsec + (timeout_us % 1000000) * 1000;
        until.tv_sec = now.tv_sec + (time_t)(timeout_us / 1000000) + (time_t)(ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        while (!t->done) {
            if (pthread_cond_timedwait(&t->done_cv, &t->mu, &until) == ETIMEDOUT)
                break;
        }
    }
    bool done = t->done;
    pthread_mutex_unlock(&t->mu);
    if (done && !t->thread_joined) {
        pthread_join(t->thread, NULL);
        t->thread_joined = true;
    }
    return done;
}

void mcdc_tracker_get_stats(mcdc_tracker *t, mcdc_tracker_stats *out)
{
    pthread_mutex_lock(&t->mu);
    *out = t->st;
    if (!t->done)
        out->pending_failed = t->has_failed;
    pthread_mutex_unlock(&t->mu);
}

void mcdc_tracker_free(mcdc_tracker *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->abandon = true;
    pthread_cond_broadcast(&t->wake);
    pthread_mutex_unlock(&t->mu);
    if (!t->thread_joined)
        pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->wake);
    pthread_cond_destroy(&t->done_cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
