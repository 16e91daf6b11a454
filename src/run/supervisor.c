/*
 * run/supervisor.c: the tables of a plan on a bounded pool of worker threads
 * (`mssql-cdc run --config`).
 *
 * Each table runs in rounds: a round is one job (src/run/job.c) with the available-now
 * trigger: checks, checkpoint, tracker seeded from it, follower, the batches up to the
 * max_lsn seen at its start, the verdict, silver once more. An interval table's next round
 * is due its interval after the last one started; available-now and once tables end after
 * one successful round. Guarantees: every table is checked before anything is written; a
 * failed round backs off (doubling from backoff_min_us, capped at backoff_max_us) and is
 * retried, without holding up the others; a data loss or a schema change stops only its
 * table (state error) unless on_error is stop-all; mcdc_run_stop lets the rounds in flight
 * finish their batch and write their verdict, and waits for them up to the drain timeout.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/run.h"
#include "run_int.h"

static volatile sig_atomic_t stop_requested;

void mcdc_run_stop(void)
{
    stop_requested = 1;
}

const char *mcdc_run_state_name(mcdc_run_state s)
{
    static const char *const names[] = { "running", "idle", "backoff", "error", "stopped" };
    return s <= MCDC_RUN_STATE_STOPPED ? names[s] : "?";
}

typedef struct slot {
    const mcdc_run_table *t;
    mcdc_source   *src;          /* opened at the first round, kept */
    mcdc_run_state state;
    bool           busy, done, once;
    int64_t        interval_us;  /* 0: one round */
    int64_t        due_mono_us;
    int            failures;
    mcdc_job      *job;          /* while a round runs */
    int64_t        batches, rows;/* committed by this process */
    /* metrics (under the supervisor's lock) */
    uint64_t       rounds_failed;
    uint64_t       duration_buckets[MCDC_RUN_DURATION_BUCKETS];
    double         duration_sum_s;
    bool           has_end_ts, has_latest_ts, has_verdict, had_success;
    int64_t        end_ts_us, latest_ts_us, verdict_us, last_ok_mono_us;
    char           message[1024];
} slot;

typedef struct sup {
    const mcdc_run_plan    *plan;
    const mcdc_run_options *o;
    slot                   *slots;
    size_t                  n;
    pthread_mutex_t         mu, event_mu;
    pthread_cond_t          cv;
    bool                    stopping, stopped_all;
    int                     alive;       /* workers still running */
    size_t                  n_error;
    int                     first_error_rc;
    int64_t                 started_mono_us;
} sup;

typedef struct listen_ctx {
    sup  *s;
    slot *sl;
} listen_ctx;

static void emit(sup *s, mcdc_run_event *e)
{
    if (!s->o->on_event)
        return;
    pthread_mutex_lock(&s->event_mu);
    s->o->on_event(e, s->o->payload);
    pthread_mutex_unlock(&s->event_mu);
}

static void on_progress(const mcdc_stream_progress *p, void *payload)
{
    listen_ctx *lc = payload;
    if (p->kind != MCDC_PROGRESS_BATCH)
        return;
    slot *sl = lc->sl;
    pthread_mutex_lock(&lc->s->mu);
    sl->batches++;
    sl->rows += p->num_input_rows;
    double d = (double)p->duration_ms / 1000.0;
    int k = 0;
    while (k < MCDC_RUN_DURATION_BUCKETS - 1 && d > mcdc_run_duration_bounds[k])
        k++;
    if (d <= mcdc_run_duration_bounds[k])
        sl->duration_buckets[k]++;
    sl->duration_sum_s += d;
    if (p->end.has_commit_ts) {
        sl->has_end_ts = true;
        sl->end_ts_us = p->end.commit_ts_us;
    }
    if (p->has_latest && p->latest.has_commit_ts) {
        sl->has_latest_ts = true;
        sl->latest_ts_us = p->latest.commit_ts_us;
    }
    pthread_mutex_unlock(&lc->s->mu);
    mcdc_run_event e = { .kind = MCDC_RUN_EVENT_BATCH, .table = lc->sl->t, .progress = p };
    emit(lc->s, &e);
}

static void stop_all_locked(sup *s)
{
    s->stopping = true;
    for (size_t i = 0; i < s->n; i++)
        if (s->slots[i].job)
            mcdc_job_stop(s->slots[i].job);
    pthread_cond_broadcast(&s->cv);
}

/* Record a table's state in the state directory (a failure to write it is a warning: the
 * data path does not depend on it). */
static void record(sup *s, const slot *sl, mcdc_run_state state, int failures, const char *message)
{
    const mcdc_run_table *t = sl->t;
    mcdc_run_table_state st = {
        .table = t->value[MCDC_RUN_KEY_TARGET], .capture_instance = t->value[MCDC_RUN_KEY_CAPTURE_INSTANCE],
        .checkpoint = t->checkpoint_path, .control = t->value[MCDC_RUN_KEY_CONTROL],
        .control_path = t->control_path, .state = state, .message = (char *)message,
        .pid = (int64_t)getpid(), .updated_at_us = mcdc_time_now_us(), .batches = sl->batches,
        .rows = sl->rows, .failures = failures
    };
    mcdc_error saved = *mcdc_error_last();
    if (mcdc_run_state_write(s->plan->config->state_dir, &st) < 0)
        mcdc_log(MCDC_LOG_WARN, "run", "%s: state not recorded: %s", st.table,
                 mcdc_error_last()->message);
    mcdc_error_set(saved.code, "%s", saved.message);
    if (saved.hint[0])
        mcdc_error_hint("%s", saved.hint);
}

/* One round of a table's job. Returns its code; the error stays recorded. */
static int round_of(sup *s, slot *sl, mcdc_run_event *done)
{
    const mcdc_run_config *c = s->plan->config;
    int rc = 0;
    if (!sl->src && (rc = mcdc_source_open(&sl->src, c->sources[sl->t->source].spec)) < 0) {
        mcdc_error_prefix("source %s", c->sources[sl->t->source].name);
        return rc;
    }
    mcdc_job_options jo;
    if ((rc = mcdc_run__job_options(&jo, sl->t, sl->src)) < 0)
        return rc;
    /* the supervisor keeps the interval; each round reads what is there */
    jo.stream.trigger = sl->once ? MCDC_TRIGGER_ONCE : MCDC_TRIGGER_AVAILABLE_NOW;
    mcdc_job *j = NULL;
    listen_ctx lc = { s, sl };
    if ((rc = mcdc_job_new(&j, &jo)) < 0)
        return rc;
    if ((rc = mcdc_job_add_listener(j, on_progress, &lc)) < 0) {
        mcdc_job_free(j);
        return rc;
    }
    pthread_mutex_lock(&s->mu);
    bool stopping = s->stopping;
    if (!stopping)
        sl->job = j;
    pthread_mutex_unlock(&s->mu);
    if (stopping) {
        mcdc_job_free(j);
        return 0;
    }
    mcdc_stream_result res;
    bool has = false;
    mcdc_job_silver_result sr;
    if ((rc = mcdc_job_open(j)) == 0 && (rc = mcdc_job_run(j, &res)) == 0 &&
        (rc = mcdc_job_verdict(j, &done->has_verdict, &done->verdict)) == 0)
        rc = mcdc_job_finish_silver(j, &has, &sr);
    pthread_mutex_lock(&s->mu);
    sl->job = NULL;
    pthread_mutex_unlock(&s->mu);
    mcdc_error saved = *mcdc_error_last();
    mcdc_job_free(j);
    if (rc < 0) {
        mcdc_error_set(saved.code, "%s", saved.message);
        if (saved.hint[0])
            mcdc_error_hint("%s", saved.hint);
    }
    return rc;
}

/* the body of /metrics, /healthz or /readyz (runs on the HTTP thread) */
static int fill(const char *path, mcdc_buf *body, void *payload)
{
    sup *s = payload;
    if (!strcmp(path, "/healthz")) {
        mcdc_buf_puts(body, "ok\n");
        return 200;
    }
    mcdc_run_table_metrics *m = calloc(s->n + 1, sizeof *m);
    if (!m) {
        mcdc_buf_puts(body, "out of memory\n");
        return 500;
    }
    int64_t now_mono = mcdc_time_mono_us(), now = mcdc_time_now_us();
    size_t n_unready = 0;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n; i++) {
        const slot *sl = &s->slots[i];
        mcdc_run_table_metrics *t = &m[i];
        t->table = sl->t->value[MCDC_RUN_KEY_TARGET];
        t->source = s->plan->config->sources[sl->t->source].name;
        t->state = sl->state;
        t->rows = (uint64_t)sl->rows;
        t->batches = (uint64_t)sl->batches;
        t->failures = sl->failures;
        t->rounds_failed = sl->rounds_failed;
        memcpy(t->duration_buckets, sl->duration_buckets, sizeof t->duration_buckets);
        t->duration_sum_s = sl->duration_sum_s;
        t->has_end_ts = sl->has_end_ts;
        t->end_ts_us = sl->end_ts_us;
        t->has_latest_ts = sl->has_latest_ts;
        t->latest_ts_us = sl->latest_ts_us;
        t->has_verdict = sl->has_verdict;
        t->verdict_us = sl->verdict_us;
        /* stuck: no successful round for 3x the interval plus 60 s */
        int64_t limit = 3 * sl->interval_us + 60000000;
        t->ready = sl->state != MCDC_RUN_STATE_ERROR && sl->had_success &&
                   (sl->done || now_mono - sl->last_ok_mono_us <= limit);
        if (!t->ready) {
            n_unready++;
            mcdc_buf_printf(body, "%s: %s%s%s\n", t->table,
                            sl->state == MCDC_RUN_STATE_ERROR ? "error"
                            : sl->had_success ? "stuck (no successful round lately)"
                                              : "no successful round yet",
                            sl->message[0] ? ": " : "", sl->message);
        }
    }
    int status = 200;
    if (!strcmp(path, "/readyz")) {
        if (n_unready)
            status = 503;
        else
            mcdc_buf_printf(body, "ready: %zu tables\n", s->n);
    } else {
        mcdc_buf_clear(body);
        if (mcdc_run_metrics_text(body, m, s->n, now, now_mono - s->started_mono_us) < 0)
            status = 500;
    }
    pthread_mutex_unlock(&s->mu);
    free(m);
    return status;
}

static int64_t backoff(const mcdc_run_options *o, int failures)
{
    int64_t d = o->backoff_min_us;
    for (int i = 1; i < failures && d < o->backoff_max_us; i++)
        d *= 2;
    return d < o->backoff_max_us ? d : o->backoff_max_us;
}

static void *worker(void *arg)
{
    sup *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (s->stopping)
            break;
        int64_t now = mcdc_time_mono_us(), next = now + 100000;
        slot *sl = NULL;
        bool all_done = true;
        for (size_t i = 0; i < s->n; i++) {
            slot *c = &s->slots[i];
            if (c->done)
                continue;
            all_done = false;
            if (c->busy)
                continue;
            if (c->due_mono_us <= now && (!sl || c->due_mono_us < sl->due_mono_us))
                sl = c;
            else if (c->due_mono_us < next)
                next = c->due_mono_us;
        }
        if (all_done)
            break;
        if (!sl) {
            int64_t wait = next - now;
            if (wait > 100000)
                wait = 100000; /* see a stop request soon */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += (long)(wait % 1000000) * 1000;
            ts.tv_sec += (time_t)(wait / 1000000) + ts.tv_nsec / 1000000000;
            ts.tv_nsec %= 1000000000;
            pthread_cond_timedwait(&s->cv, &s->mu, &ts);
            continue;
        }
        sl->busy = true;
        sl->state = MCDC_RUN_STATE_RUNNING;
        int64_t started = now;
        int failures = sl->failures;
        pthread_mutex_unlock(&s->mu);
        record(s, sl, MCDC_RUN_STATE_RUNNING, failures, "");

        mcdc_run_event e = { .kind = MCDC_RUN_EVENT_DONE, .table = sl->t };
        int rc = round_of(s, sl, &e);
        bool fatal = rc == MCDC_EDATALOSS || rc == MCDC_ESCHEMA;
        if (rc < 0) {
            e.kind = fatal ? MCDC_RUN_EVENT_ERROR : MCDC_RUN_EVENT_RETRY;
            e.rc = rc;
            e.retry_in_us = fatal ? 0 : backoff(s->o, sl->failures + 1);
            emit(s, &e);
        } else if (!sl->interval_us) {
            emit(s, &e);
        }

        char message[1024];
        snprintf(message, sizeof message, "%s", rc < 0 ? mcdc_error_last()->message : "");
        pthread_mutex_lock(&s->mu);
        sl->busy = false;
        snprintf(sl->message, sizeof sl->message, "%s", message);
        if (rc < 0) {
            sl->rounds_failed++;
        } else {
            sl->had_success = true;
            sl->last_ok_mono_us = mcdc_time_mono_us();
            if (e.has_verdict && e.verdict.has) {
                sl->has_verdict = true;
                sl->verdict_us = e.verdict.until_us;
            }
        }
        if (rc < 0 && fatal) {
            sl->state = MCDC_RUN_STATE_ERROR;
            sl->done = true;
            if (!s->n_error++)
                s->first_error_rc = rc;
            if (s->plan->config->stop_all) {
                s->stopped_all = true;
                stop_all_locked(s);
            }
        } else if (rc < 0) {
            sl->failures++;
            sl->state = MCDC_RUN_STATE_BACKOFF;
            sl->due_mono_us = mcdc_time_mono_us() + backoff(s->o, sl->failures);
        } else {
            sl->failures = 0;
            if (!sl->interval_us) {
                sl->state = MCDC_RUN_STATE_STOPPED;
                sl->done = true;
            } else {
                sl->state = MCDC_RUN_STATE_IDLE;
                sl->due_mono_us = started + sl->interval_us;
            }
        }
        mcdc_run_state now_state = sl->state;
        failures = sl->failures;
        pthread_mutex_unlock(&s->mu);
        record(s, sl, now_state, failures, message);
        pthread_mutex_lock(&s->mu);
        pthread_cond_broadcast(&s->cv);
    }
    s->alive--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int mcdc_run_plan_run(const mcdc_run_plan *p, const mcdc_run_options *o, mcdc_run_summary *out)
{
    memset(out, 0, sizeof *out);
    out->n_tables = p->n_tables;
    int rc = mcdc_run_plan_check(p, NULL, NULL);
    if (rc < 0)
        return rc;
    sup *s = calloc(1, sizeof *s);
    slot *slots = calloc(p->n_tables + 1, sizeof *slots);
    int workers = o->workers > 0 ? o->workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (workers < 1)
        workers = 1;
    if ((size_t)workers > p->n_tables)
        workers = (int)p->n_tables;
    pthread_t *th = calloc((size_t)workers, sizeof *th);
    if (!s || !slots || !th) {
        free(s);
        free(slots);
        free(th);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    s->plan = p;
    s->o = o;
    s->slots = slots;
    s->n = p->n_tables;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->event_mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    int64_t now = mcdc_time_mono_us();
    for (size_t i = 0; i < p->n_tables; i++) {
        slot *sl = &slots[i];
        sl->t = &p->tables[i];
        sl->state = MCDC_RUN_STATE_IDLE;
        sl->due_mono_us = now;
        const char *tr = sl->t->value[MCDC_RUN_KEY_TRIGGER];
        mcdc_trigger kind = MCDC_TRIGGER_AVAILABLE_NOW;
        int64_t us = 0;
        if (tr)
            mcdc_trigger_parse(&kind, &us, tr); /* checked by the plan */
        sl->once = kind == MCDC_TRIGGER_ONCE;
        sl->interval_us = kind == MCDC_TRIGGER_INTERVAL ? (us > 0 ? us : 1) : 0;
    }
    stop_requested = 0;
    s->started_mono_us = mcdc_time_mono_us();
    mcdc_run_http *http = NULL;
    const char *listen = o->metrics_listen ? o->metrics_listen : p->config->metrics_listen;
    if (listen && (rc = mcdc_run_http_start(&http, listen, fill, s)) < 0)
        goto out;
    pthread_mutex_lock(&s->mu);
    int started = 0;
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&th[i], NULL, worker, s) != 0)
            break;
        started++;
    }
    s->alive = started;
    if (started == 0) {
        pthread_mutex_unlock(&s->mu);
        rc = mcdc_error_set(MCDC_ERROR, "run: cannot start a worker thread");
        goto out;
    }
    int64_t deadline = 0;
    out->drained = true;
    while (s->alive > 0) {
        if (stop_requested && !s->stopping)
            stop_all_locked(s);
        if (s->stopping && !deadline)
            deadline = mcdc_time_mono_us() + o->drain_timeout_us;
        if (deadline && mcdc_time_mono_us() > deadline) {
            out->drained = false;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50000000;
        ts.tv_sec += ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    out->n_error = s->n_error;
    out->first_error_rc = s->first_error_rc;
    out->stopped_all = s->stopped_all;
    pthread_mutex_unlock(&s->mu);
    if (!out->drained)
        return 0; /* the rounds in flight are abandoned: their checkpoints replay them */
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    mcdc_run_http_stop(http);
    http = NULL;
    for (size_t i = 0; i < p->n_tables; i++) /* drained: what was not done is stopped */
        if (!slots[i].done)
            record(s, &slots[i], MCDC_RUN_STATE_STOPPED, slots[i].failures, "");
out:
    mcdc_run_http_stop(http);
    for (size_t i = 0; i < p->n_tables; i++)
        mcdc_source_close(slots[i].src);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->event_mu);
    pthread_mutex_destroy(&s->mu);
    free(th);
    free(slots);
    free(s);
    return rc;
}
