/*
 * run/supervisor.c: the tables of a plan on a bounded pool of worker threads
 * (`mssql-cdc run --config`): --workers N read slots, 2N workers (ADR 0063): at most N
 * tables read their source at once, and a table whose batch is read finishes it (file,
 * commits, verdict, silver) on its worker while another takes the slot.
 *
 * Each table runs in rounds: a round is one run of the table's job (src/run/job.c) with the
 * available-now trigger: checkpoint, tracker seeded from it, follower, the batches up to the
 * max_lsn seen at its start, the verdict, silver once more. The job is checked once before
 * any round (every table before the first write), and an interval table's job stays open
 * across its successful rounds (its checkpoint locked, its checks not redone: ADR 0043, and
 * pipeline/stream.c says which invariant keeps each one true); a failed round frees it. An interval table polls on its
 * source's grid (multiples of its interval from the run's start), so the tables of one
 * source come due together: the first asks the source's max_lsn on the shared poll, the
 * others take that answer, and a table whose last round already read up to it is idle for
 * this poll without a round (ADR 0026). available-now and once tables end after one
 * successful round. Guarantees: every table is checked before anything is written (the
 * checks on up to 2N threads; a refusal names the first refused table in plan order); a
 * failed round backs off (doubling from backoff_min_us, capped at backoff_max_us) and is
 * retried, without holding up the others (a refusal of the checks, such as a capture
 * instance disabled, shows the table in state error while it is retried); a data loss or
 * a schema change stops only its table (state error) unless on_error is stop-all; mcdc_run_stop lets the rounds in flight
 * finish their batch and write their verdict, and waits for them up to the drain timeout;
 * mcdc_run_reload starts the tables a new plan adds, stops those it drops and leaves every
 * table whose settings did not change running as it was. Each worker's log lines carry
 * the table it runs (mcdc_log_set_context).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/delta.h"
#include "mcdc/finalize.h"
#include "mcdc/log.h"
#include "mcdc/run.h"
#include "run_int.h"

static volatile sig_atomic_t stop_requested, reload_requested;

void mcdc_run_stop(void)
{
    stop_requested = 1;
}

void mcdc_run_reload(void)
{
    reload_requested = 1;
}

const char *mcdc_run_state_name(mcdc_run_state s)
{
    static const char *const names[] = { "running", "idle", "backoff", "error", "stopped" };
    return s <= MCDC_RUN_STATE_STOPPED ? names[s] : "?";
}

typedef struct slot slot;

/* What a table's state record says (state.c), as a worker left it for the main thread. */
typedef struct state_rec {
    mcdc_run_state state;
    int            failures;
    int64_t        batches, rows;
    char           message[1024];
} state_rec;

typedef struct listen_ctx {
    struct sup *s;
    slot       *sl;
} listen_ctx;

struct slot {
    const mcdc_run_table *t;
    const mcdc_run_plan  *plan;  /* the plan t belongs to */
    mcdc_run__source *rs;        /* its source, shared with the tables of that source */
    mcdc_run_state state;
    bool           busy, done, once, removed;
    struct slot   *after;        /* a table of an earlier plan with the same target: this one
                                  * starts when that one has stopped */
    int64_t        interval_us;  /* 0: one round */
    int64_t        due_mono_us;
    int            failures;
    mcdc_job      *job;          /* while a round runs */
    mcdc_job      *kept;         /* the table's job between rounds: checked, and after a
                                  * successful round of an interval table open (checkpoint
                                  * lock held), so the next round begins at planning */
    listen_ctx     lc;           /* the kept job's progress listener, and its read slot's
                                  * callbacks' payload */
    bool           reading;      /* its round holds one of the read slots */
    bool           st_dirty;     /* st is newer than the state record on disk */
    int64_t        st_mono_us;   /* when st was last set */
    state_rec      st;           /* what the table's state record is to say */
    int64_t        batches, rows;/* committed by this process */
    bool           has_caught_up;
    mcdc_lsn       caught_up;    /* the last successful round read at least up to here */
    /* metrics (under the supervisor's lock) */
    uint64_t       rounds_failed;
    uint64_t       duration_buckets[MCDC_RUN_DURATION_BUCKETS];
    double         duration_sum_s, bytes;
    bool           has_end_ts, has_latest_ts, has_verdict, had_success, has_headroom;
    int64_t        end_ts_us, latest_ts_us, verdict_us, last_ok_mono_us;
    double         headroom_hours;
    char           message[1024];
};

typedef struct sup sup;
struct sup {
    const mcdc_run_options *o;
    const char             *state_dir;
    bool                    stop_all_on_error;
    slot                  **slots;
    size_t                  n, cap;
    mcdc_run__source      **srcs;
    size_t                  n_srcs;
    pthread_mutex_t         mu, event_mu;
    pthread_cond_t          cv;
    bool                    stopping, stopped_all;
    int                     alive;       /* workers still running */
    int                     free_reads;  /* read slots not held (of n_reads) */
    int                     n_reads;     /* --workers: tables that read at once */
    size_t                  n_error;
    int                     first_error_rc;
    int64_t                 started_mono_us;
};

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
    sl->bytes += p->read_bytes;
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
    if (p->has_headroom) {
        sl->has_headroom = true;
        sl->headroom_hours = p->headroom_hours;
    }
    pthread_mutex_unlock(&lc->s->mu);
    mcdc_run_event e = { .kind = MCDC_RUN_EVENT_BATCH, .table = lc->sl->t, .progress = p };
    emit(lc->s, &e);
}

static void stop_all_locked(sup *s)
{
    s->stopping = true;
    for (size_t i = 0; i < s->n; i++)
        if (s->slots[i]->job)
            mcdc_job_stop(s->slots[i]->job);
    pthread_cond_broadcast(&s->cv);
}

/* Write a table's state record in the state directory (a failure to write it is a warning:
 * the data path does not depend on it). */
static void write_state(sup *s, const slot *sl, const state_rec *r)
{
    const mcdc_run_table *t = sl->t;
    mcdc_run_table_state st = {
        .table = t->value[MCDC_RUN_KEY_TARGET], .capture_instance = t->value[MCDC_RUN_KEY_CAPTURE_INSTANCE],
        .checkpoint = t->checkpoint_path, .control = t->value[MCDC_RUN_KEY_CONTROL],
        .control_path = t->control_path, .state = r->state, .message = (char *)r->message,
        .pid = (int64_t)getpid(), .updated_at_us = mcdc_time_now_us(), .batches = r->batches,
        .rows = r->rows, .failures = r->failures
    };
    mcdc_error saved = *mcdc_error_last();
    if (mcdc_run_state_write(s->state_dir, &st) < 0)
        mcdc_log(MCDC_LOG_WARN, "run", "%s: state not recorded: %s", st.table,
                 mcdc_error_last()->message);
    mcdc_error_restore(&saved);
}

/* A round's "running" record is written once the round has run this long: a shorter
 * round's record goes from the state before it to the round's outcome in one write, not
 * two (each a temp file, two fsyncs and a rename on the disk the batches commit to). */
#define RUNNING_RECORD_AFTER_US INT64_C(1000000)

/* Under the lock: what the table's state record is to say from now on. The main thread
 * writes it (flush_states_locked), so a round's worker pays no fsync for it, and a record
 * not written yet when the next change comes is written once, with the newer state. */
static void record_locked(sup *s, slot *sl, mcdc_run_state state, int failures, const char *message)
{
    sl->st.state = state;
    sl->st.failures = failures;
    sl->st.batches = sl->batches;
    sl->st.rows = sl->rows;
    snprintf(sl->st.message, sizeof sl->st.message, "%s", message);
    sl->st_dirty = true;
    sl->st_mono_us = mcdc_time_mono_us();
    pthread_cond_broadcast(&s->cv);
}

/* On the main thread, the lock held: write every record changed since the last flush, in
 * the order of the tables (the lock is let go while each is written; only this thread
 * writes records, so the newest state of a table is the one on disk after it). A
 * "running" record younger than RUNNING_RECORD_AFTER_US waits for a later flush (the main
 * loop flushes every 50 ms), unless @p all. */
static void flush_states_locked(sup *s, bool all)
{
    int64_t now = mcdc_time_mono_us();
    for (size_t i = 0; i < s->n; i++) {
        slot *sl = s->slots[i];
        if (!sl->st_dirty)
            continue;
        if (!all && sl->st.state == MCDC_RUN_STATE_RUNNING && now - sl->st_mono_us < RUNNING_RECORD_AFTER_US)
            continue;
        state_rec r = sl->st;
        sl->st_dirty = false;
        pthread_mutex_unlock(&s->mu);
        write_state(s, sl, &r);
        pthread_mutex_lock(&s->mu);
    }
}

static int round_on(sup *s, slot *sl, mcdc_source *src, mcdc_run_event *done);

/* One round of a table's job, on a connection of its source's pool. Returns its code;
 * the error stays recorded. */
static int round_of(sup *s, slot *sl, mcdc_run_event *done)
{
    int rc = 0;
    mcdc_source *src = NULL;
    if ((rc = mcdc_run__source_acquire(&src, sl->rs)) < 0) {
        mcdc_error_prefix("source %s", sl->rs->name);
        return rc;
    }
    rc = round_on(s, sl, src, done);
    mcdc_error saved = *mcdc_error_last();
    mcdc_run__source_release(sl->rs, src, rc < 0);
    if (rc < 0) {
        mcdc_error_restore(&saved);
    }
    return rc;
}

/* Read slots (ADR 0063): --workers N tables read their source at once. A worker takes a
 * slot before it picks a table; the table's round holds it while it plans and reads a
 * batch, and gives it back once the batch is read (mcdc_stream_options.slot_release), so
 * that batch's file, commits, verdict and silver run beside another table's read on
 * another of the 2N workers. A round asks for a slot again before it reads once more.
 * Under the lock: a slot is taken only while free_reads > 0, and every release wakes the
 * workers waiting for one, so at most N rounds read at once and none waits while one is
 * free. */
static void reads_give_locked(sup *s, slot *sl)
{
    if (!sl->reading)
        return;
    sl->reading = false;
    s->free_reads++;
    mcdc_log(MCDC_LOG_DEBUG, "run", "read slot given back (%d of %d in use)",
             s->n_reads - s->free_reads, s->n_reads);
    pthread_cond_broadcast(&s->cv);
}

static int read_slot_acquire(void *payload)
{
    listen_ctx *lc = payload;
    sup *s = lc->s;
    pthread_mutex_lock(&s->mu);
    while (!lc->sl->reading && s->free_reads == 0 && !s->stopping)
        pthread_cond_wait(&s->cv, &s->mu);
    int rc = 0;
    if (!lc->sl->reading && s->free_reads == 0) {
        rc = 1; /* stopping: the round ends as stopped */
    } else if (!lc->sl->reading) {
        s->free_reads--;
        lc->sl->reading = true;
        mcdc_log(MCDC_LOG_DEBUG, "run", "read slot taken (%d of %d in use)",
                 s->n_reads - s->free_reads, s->n_reads);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static void read_slot_release(void *payload)
{
    listen_ctx *lc = payload;
    pthread_mutex_lock(&lc->s->mu);
    reads_give_locked(lc->s, lc->sl);
    pthread_mutex_unlock(&lc->s->mu);
}

/* A new job for table @p sl on connection @p src: the supervisor keeps the interval, each
 * round reads what is there (available-now, or once); an interval table's job is kept open
 * across its rounds. */
static int new_job(sup *s, slot *sl, mcdc_source *src, mcdc_job **out)
{
    int rc;
    mcdc_job_options jo;
    *out = NULL;
    if ((rc = mcdc_run__job_options(&jo, sl->t, src)) < 0)
        return rc;
    jo.stream.trigger = sl->once ? MCDC_TRIGGER_ONCE : MCDC_TRIGGER_AVAILABLE_NOW;
    jo.stream.interval_us = 0;
    jo.stream.slot_acquire = read_slot_acquire;
    jo.stream.slot_release = read_slot_release;
    jo.stream.slot_payload = &sl->lc;
    mcdc_job *j = NULL;
    sl->lc = (listen_ctx){ s, sl };
    if ((rc = mcdc_job_new(&j, &jo)) < 0)
        return rc;
    if ((rc = mcdc_job_add_listener(j, on_progress, &sl->lc)) < 0) {
        mcdc_job_free(j);
        return rc;
    }
    mcdc_job_keep_open(j, sl->interval_us > 0);
    *out = j;
    return 0;
}

/* Free a table's kept job (its checkpoint lock released): the table is done, or its next
 * round starts afresh. No round of it runs. */
static void drop_kept(slot *sl)
{
    mcdc_job_free(sl->kept);
    sl->kept = NULL;
}

/* The round of round_of on connection @p src: the table's kept job (checked at the start
 * or open since its last successful round), else a new one. */
static int round_on(sup *s, slot *sl, mcdc_source *src, mcdc_run_event *done)
{
    int rc;
    mcdc_job *j = sl->kept;
    sl->kept = NULL;
    if (j)
        mcdc_job_set_source(j, src);
    else if ((rc = new_job(s, sl, src, &j)) < 0)
        return rc;
    pthread_mutex_lock(&s->mu);
    bool stopping = s->stopping || sl->removed;
    if (!stopping)
        sl->job = j;
    pthread_mutex_unlock(&s->mu);
    if (stopping) {
        mcdc_job_free(j);
        return 1; /* not run */
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
    if (rc == 0 && sl->interval_us) {
        sl->kept = j; /* the next round begins at planning */
        return 0;
    }
    /* a failure: the next round checks and opens again (a data loss or a schema change
     * ends the table); one round only: done */
    mcdc_error saved = *mcdc_error_last();
    mcdc_job_free(j);
    if (rc < 0) {
        mcdc_error_restore(&saved);
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
    pthread_mutex_lock(&s->mu);
    mcdc_run_table_metrics *m = calloc(s->n + 1, sizeof *m);
    mcdc_run_source_metrics *sm = calloc(s->n_srcs + 1, sizeof *sm);
    uint64_t (*q)[MCDC_RUN_SRC_NOPS] = calloc(s->n_srcs + 1, sizeof *q);
    static const char *names[MCDC_RUN_SRC_NOPS];
    if (!m || !sm || !q) {
        pthread_mutex_unlock(&s->mu);
        free(m);
        free(sm);
        free(q);
        mcdc_buf_puts(body, "out of memory\n");
        return 500;
    }
    int64_t now_mono = mcdc_time_mono_us(), now = mcdc_time_now_us();
    size_t n_unready = 0, n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const slot *sl = s->slots[i];
        if (sl->removed)
            continue;
        mcdc_run_table_metrics *t = &m[n++];
        t->table = sl->t->value[MCDC_RUN_KEY_TARGET];
        t->source = sl->rs->name;
        t->state = sl->state;
        t->rows = (uint64_t)sl->rows;
        t->batches = (uint64_t)sl->batches;
        t->bytes = sl->bytes;
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
        t->has_headroom = sl->has_headroom;
        t->headroom_hours = sl->headroom_hours;
        /* stuck: no successful round or idle poll for 3x the interval plus 60 s */
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
    for (int k = 0; k < MCDC_RUN_SRC_NOPS; k++)
        names[k] = mcdc_run__src_op_name(k);
    for (size_t i = 0; i < s->n_srcs; i++) {
        for (int k = 0; k < MCDC_RUN_SRC_NOPS; k++)
            q[i][k] = __atomic_load_n(&s->srcs[i]->queries[k], __ATOMIC_RELAXED);
        sm[i] = (mcdc_run_source_metrics){
            .source = s->srcs[i]->name, .n_queries = MCDC_RUN_SRC_NOPS, .query_names = names,
            .queries = q[i], .errors = __atomic_load_n(&s->srcs[i]->errors, __ATOMIC_RELAXED)
        };
    }
    int status = 200;
    if (!strcmp(path, "/readyz")) {
        if (n_unready)
            status = 503;
        else
            mcdc_buf_printf(body, "ready: %zu tables\n", n);
    } else {
        mcdc_buf_clear(body);
        if (mcdc_run_metrics_text(body, m, n, sm, s->n_srcs, now,
                                  now_mono - s->started_mono_us) < 0)
            status = 500;
    }
    pthread_mutex_unlock(&s->mu);
    free(m);
    free(sm);
    free(q);
    return status;
}

static int64_t backoff(const mcdc_run_options *o, int failures)
{
    int64_t d = o->backoff_min_us;
    for (int i = 1; i < failures && d < o->backoff_max_us; i++)
        d *= 2;
    return d < o->backoff_max_us ? d : o->backoff_max_us;
}

/* the next poll of an interval table after @p now: its source's grid, multiples of the
 * interval from the run's start, so the tables of a source poll together */
static int64_t next_poll(const sup *s, const slot *sl, int64_t now)
{
    int64_t k = (now - s->started_mono_us) / sl->interval_us + 1;
    return s->started_mono_us + k * sl->interval_us;
}

static bool runnable(const slot *c)
{
    return !c->done && !c->busy && !(c->after && !c->after->done);
}

/* After a successful round of @p t: every consistent set holding it moves its control row
 * "consistent:NAME" to the set's cut (never back: mcdc_control_advance). A cut that cannot
 * be taken yet (a table without a batch, a snapshot open) waits for a later round. */
static void advance_consistent(const mcdc_run_plan *plan, const mcdc_run_table *t)
{
    const mcdc_run_config *c = plan->config;
    for (size_t i = 0; i < plan->n_consistent; i++) {
        const mcdc_run_consistent *cs = &c->consistent[i];
        bool member = false;
        for (size_t j = 0; j < cs->n_targets && !member; j++)
            member = !strcmp(cs->targets[j], t->value[MCDC_RUN_KEY_TARGET]);
        if (!member)
            continue;
        /* each target's bronze, as its table's stream writes it: the cut checks they hold
         * one source (a target of no planned table is left to the cut's other checks) */
        const char **paths = calloc(cs->n_targets ? cs->n_targets : 1, sizeof *paths);
        if (!paths) {
            mcdc_log(MCDC_LOG_WARN, "run", "consistent set %s: out of memory", cs->name);
            continue;
        }
        bool all = true;
        for (size_t j = 0; j < cs->n_targets; j++) {
            for (size_t k = 0; k < plan->n_tables && !paths[j]; k++)
                if (!strcmp(cs->targets[j], plan->tables[k].value[MCDC_RUN_KEY_TARGET]))
                    paths[j] = plan->tables[k].target_path;
            all &= paths[j] != NULL;
        }
        mcdc_cut cut;
        int rc = mcdc_finalize_cut(&cut, plan->consistent_control[i], plan->consistent_facts[i],
                                   (const char *const *)cs->targets, all ? paths : NULL,
                                   cs->n_targets);
        free(paths);
        if (rc == MCDC_EINVAL) {
            mcdc_log(MCDC_LOG_DEBUG, "run", "consistent set %s: no cut yet: %s", cs->name,
                     mcdc_error_last()->message);
            mcdc_error_clear();
            continue;
        }
        char row[300];
        snprintf(row, sizeof row, "consistent:%s", cs->name);
        mcdc_granularity g = MCDC_GRAN_HOUR;
        const char *gs = t->value[MCDC_RUN_KEY_GRANULARITY];
        if (gs && mcdc_granularity_parse(&g, gs) < 0) {
            mcdc_error_clear();
            g = MCDC_GRAN_HOUR;
        }
        if (rc == 0 && cut.has_commit_ts) {
            mcdc_offset end = { .lsn = cut.lsn, .has_commit_ts = true, .commit_ts_us = cut.commit_ts_us };
            mcdc_advance_result ar;
            rc = mcdc_control_advance(plan->consistent_control[i], row, &end, g, &ar);
        }
        if (rc < 0) {
            mcdc_log(MCDC_LOG_WARN, "run", "consistent set %s: the cut was not recorded: %s",
                     cs->name, mcdc_error_last()->message);
            mcdc_error_clear();
        }
        mcdc_cut_clear(&cut);
    }
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
        for (size_t i = 0; i < s->n; i++) {
            slot *c = s->slots[i];
            if (!runnable(c))
                continue;
            if (c->due_mono_us <= now && (!sl || c->due_mono_us < sl->due_mono_us))
                sl = c;
            else if (c->due_mono_us < next)
                next = c->due_mono_us;
        }
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
        if (s->free_reads == 0) {
            /* due, but N tables read already: one gives its slot back when its batch is
             * read (or its round ends) */
            pthread_cond_wait(&s->cv, &s->mu);
            continue;
        }
        s->free_reads--;
        sl->reading = true; /* the slot goes with the table: its round, or back if idle */
        int in_use = s->n_reads - s->free_reads;
        sl->busy = true;
        pthread_mutex_unlock(&s->mu);
        mcdc_log_set_context(sl->t->value[MCDC_RUN_KEY_TARGET]);
        mcdc_log(MCDC_LOG_DEBUG, "run", "read slot taken (%d of %d in use)", in_use, s->n_reads);

        /* the shared poll: what the source holds now, asked once for its tables */
        mcdc_lsn polled;
        bool has_polled = false;
        if (sl->interval_us) {
            has_polled = mcdc_run__source_max_lsn(sl->rs, sl->interval_us / 2, &polled) == 0;
            if (!has_polled)
                mcdc_error_clear(); /* the round meets the same failure and reports it */
        }
        pthread_mutex_lock(&s->mu);
        if (sl->removed) {
            /* dropped by a reload while it polled */
            reads_give_locked(s, sl);
            sl->busy = false;
            drop_kept(sl);
            sl->done = true;
            sl->state = MCDC_RUN_STATE_STOPPED;
            record_locked(s, sl, MCDC_RUN_STATE_STOPPED, sl->failures, "removed from the config");
            mcdc_log_set_context(NULL);
            continue;
        }
        if (has_polled && sl->had_success && sl->has_caught_up && !sl->failures &&
            mcdc_lsn_cmp(&polled, &sl->caught_up) <= 0) {
            /* idle: nothing new since the last round read */
            int64_t t = mcdc_time_mono_us();
            reads_give_locked(s, sl);
            sl->busy = false;
            sl->last_ok_mono_us = t;
            sl->due_mono_us = next_poll(s, sl, t);
            mcdc_log_set_context(NULL);
            continue;
        }
        sl->state = MCDC_RUN_STATE_RUNNING;
        record_locked(s, sl, MCDC_RUN_STATE_RUNNING, sl->failures, "");
        pthread_mutex_unlock(&s->mu);

        mcdc_run_event e = { .kind = MCDC_RUN_EVENT_DONE, .table = sl->t };
        int rc = round_of(s, sl, &e);
        bool ran = rc != 1; /* 1: stopping or removed before it began */
        if (!ran)
            rc = 0;
        bool fatal = rc == MCDC_EDATALOSS || rc == MCDC_ESCHEMA;
        if (rc < 0) {
            e.kind = fatal ? MCDC_RUN_EVENT_ERROR : MCDC_RUN_EVENT_RETRY;
            e.rc = rc;
            e.retry_in_us = fatal ? 0 : backoff(s->o, sl->failures + 1);
            emit(s, &e);
        } else if (!sl->interval_us && ran) {
            emit(s, &e);
        }

        char message[1024];
        snprintf(message, sizeof message, "%s", rc < 0 ? mcdc_error_last()->message : "");
        if (rc == 0 && ran)
            advance_consistent(sl->plan, sl->t);
        pthread_mutex_lock(&s->mu);
        reads_give_locked(s, sl); /* a round that ended before it read, or failed */
        sl->busy = false;
        snprintf(sl->message, sizeof sl->message, "%s", message);
        if (rc < 0) {
            sl->rounds_failed++;
        } else if (ran) {
            sl->had_success = true;
            sl->last_ok_mono_us = mcdc_time_mono_us();
            sl->has_caught_up = has_polled;
            if (has_polled)
                sl->caught_up = polled;
            if (e.has_verdict && e.verdict.has) {
                sl->has_verdict = true;
                sl->verdict_us = e.verdict.until_us;
            }
        }
        if (sl->removed) {
            sl->state = MCDC_RUN_STATE_STOPPED;
            drop_kept(sl); /* its checkpoint free for a table that replaces it */
            sl->done = true;
            snprintf(message, sizeof message, "removed from the config");
        } else if (!ran) {
            sl->state = MCDC_RUN_STATE_IDLE; /* stopping: the drain records it stopped */
        } else if (rc < 0 && fatal) {
            sl->state = MCDC_RUN_STATE_ERROR;
            sl->done = true;
            if (!s->n_error++)
                s->first_error_rc = rc;
            if (s->stop_all_on_error) {
                s->stopped_all = true;
                stop_all_locked(s);
            }
        } else if (rc < 0) {
            /* a refusal of the checks (the capture instance gone, a checkpoint of another
             * stream, a login refused) waits for an operator: the table is in error, and
             * still retried, so it comes back once mended */
            bool needs_operator = rc == MCDC_EINVAL || rc == MCDC_ENOTFOUND || rc == MCDC_EPERM ||
                            rc == MCDC_ECORRUPT;
            sl->failures++;
            sl->state = needs_operator ? MCDC_RUN_STATE_ERROR : MCDC_RUN_STATE_BACKOFF;
            sl->due_mono_us = mcdc_time_mono_us() + backoff(s->o, sl->failures);
        } else {
            sl->failures = 0;
            if (!sl->interval_us) {
                sl->state = MCDC_RUN_STATE_STOPPED;
                sl->done = true;
            } else {
                sl->state = MCDC_RUN_STATE_IDLE;
                sl->due_mono_us = next_poll(s, sl, mcdc_time_mono_us());
            }
        }
        record_locked(s, sl, sl->state, sl->failures, message);
        mcdc_log_set_context(NULL);
    }
    s->alive--;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* the shared source of config source @p i of @p p (one per name and string) */
static mcdc_run__source *source_of(sup *s, const mcdc_run_plan *p, size_t i)
{
    const mcdc_run_source *cs = &p->config->sources[i];
    for (size_t k = 0; k < s->n_srcs; k++)
        if (!strcmp(s->srcs[k]->name, cs->name) && !strcmp(s->srcs[k]->spec, cs->spec))
            return s->srcs[k];
    mcdc_run__source **a = realloc(s->srcs, (s->n_srcs + 1) * sizeof *a);
    if (!a)
        return NULL;
    s->srcs = a;
    if (!(a[s->n_srcs] = mcdc_run__source_new(cs->name, cs->spec)))
        return NULL;
    return a[s->n_srcs++];
}

/* a slot for table @p t of @p p, due now (under the lock) */
static slot *add_slot(sup *s, const mcdc_run_plan *p, const mcdc_run_table *t)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        slot **a = realloc(s->slots, cap * sizeof *a);
        if (!a)
            return NULL;
        s->slots = a;
        s->cap = cap;
    }
    slot *sl = calloc(1, sizeof *sl);
    if (!sl || !(sl->rs = source_of(s, p, t->source))) {
        free(sl);
        return NULL;
    }
    sl->t = t;
    sl->plan = p;
    sl->state = MCDC_RUN_STATE_IDLE;
    sl->due_mono_us = mcdc_time_mono_us();
    const char *tr = t->value[MCDC_RUN_KEY_TRIGGER];
    mcdc_trigger kind = MCDC_TRIGGER_AVAILABLE_NOW;
    int64_t us = 0;
    if (tr)
        mcdc_trigger_parse(&kind, &us, tr); /* checked by the plan */
    sl->once = kind == MCDC_TRIGGER_ONCE;
    sl->interval_us = kind == MCDC_TRIGGER_INTERVAL ? (us > 0 ? us : 1) : 0;
    s->slots[s->n++] = sl;
    return sl;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* whether two tables of two plans are the same table with the same settings */
static bool same_table(const mcdc_run_plan *pa, const mcdc_run_table *a,
                       const mcdc_run_plan *pb, const mcdc_run_table *b)
{
    const mcdc_run_source *sa = &pa->config->sources[a->source], *sb = &pb->config->sources[b->source];
    bool same = !strcmp(sa->name, sb->name) && !strcmp(sa->spec, sb->spec) &&
                same_str(a->target_path, b->target_path) && same_str(a->facts_path, b->facts_path) &&
                same_str(a->control_path, b->control_path) && same_str(a->silver_path, b->silver_path) &&
                same_str(a->checkpoint_path, b->checkpoint_path) && a->n_options == b->n_options;
    for (int k = 0; same && k < MCDC_RUN_NKEYS; k++)
        same = same_str(a->value[k], b->value[k]);
    for (size_t k = 0; same && k < a->n_options; k++)
        same = !strcmp(a->options[k], b->options[k]);
    return same;
}

/* The process's snapshot cache sized to the tables @p p commits to and reads (each target,
 * its silver, and the facts and control tables they share; at most the cache's cap of 64):
 * with its default of 8, the tables of a run evicted each other between a table's check
 * and its round, and between the rounds of an interval table, so each open read the
 * table's log again from its checkpoint. MCDC_SNAPSHOT_CACHE, when set, wins. Never
 * shrinks it (a reload that drops tables leaves the cache as it was). */
static void size_snapshot_cache(const mcdc_run_plan *p)
{
    static int sized = 8;
    if (getenv("MCDC_SNAPSHOT_CACHE"))
        return;
    size_t n = 0;
    for (size_t i = 0; i < p->n_tables && n < 64; i++) {
        const mcdc_run_table *t = &p->tables[i];
        n += 1 + (t->silver_path != NULL);
        const char *shared[2] = { t->facts_path, t->control_path };
        for (int k = 0; k < 2; k++) {
            bool seen = !shared[k] || (k == 1 && same_str(shared[0], shared[1]));
            for (size_t j = 0; !seen && j < i; j++)
                seen = same_str(p->tables[j].facts_path, shared[k]) ||
                       same_str(p->tables[j].control_path, shared[k]);
            n += !seen;
        }
    }
    if ((int)n > sized) {
        sized = n > 64 ? 64 : (int)n;
        mcdc_delta_snapshot_cache_limit(sized);
    }
}

/* SIGHUP: take the new plan; tables it keeps unchanged go on, the others are stopped after
 * their batch in flight, the new ones start (under the lock) */
static void apply_reload(sup *s, const mcdc_run_plan *np)
{
    size_t kept = 0, added = 0, removed = 0, n_old = s->n;
    size_snapshot_cache(np);
    for (size_t i = 0; i < n_old; i++) {
        slot *sl = s->slots[i];
        if (sl->removed)
            continue;
        bool keep = false;
        for (size_t k = 0; !keep && k < np->n_tables; k++)
            keep = same_table(sl->plan, sl->t, np, &np->tables[k]);
        if (keep)
            continue;
        sl->removed = true;
        removed++;
        if (sl->job)
            mcdc_job_stop(sl->job);
        if (!sl->busy) {
            bool was_done = sl->done;
            drop_kept(sl);
            sl->done = true;
            sl->state = MCDC_RUN_STATE_STOPPED;
            if (!was_done)
                record_locked(s, sl, MCDC_RUN_STATE_STOPPED, sl->failures, "removed from the config");
        }
    }
    for (size_t k = 0; k < np->n_tables; k++) {
        const mcdc_run_table *t = &np->tables[k];
        slot *prev = NULL;
        bool keep = false;
        for (size_t i = 0; i < n_old && !keep; i++) {
            slot *sl = s->slots[i];
            if (!sl->removed && same_table(sl->plan, sl->t, np, t))
                keep = true;
            else if (sl->removed && !strcmp(sl->t->value[MCDC_RUN_KEY_TARGET], t->value[MCDC_RUN_KEY_TARGET]))
                prev = sl;
        }
        if (keep) {
            kept++;
            continue;
        }
        slot *sl = add_slot(s, np, t);
        if (!sl) {
            mcdc_log(MCDC_LOG_ERROR, "run", "reload: out of memory adding %s", t->value[MCDC_RUN_KEY_TARGET]);
            continue;
        }
        sl->after = prev && !prev->done ? prev : NULL;
        added++;
    }
    mcdc_log(MCDC_LOG_INFO, "run", "reloaded: %zu table%s kept, %zu started, %zu stopped", kept,
             kept == 1 ? "" : "s", added, removed);
    pthread_cond_broadcast(&s->cv);
}

/* The start-up checks of check_all on @p threads threads: each takes the next table in
 * plan order; a failure stops the handing out, the checks in flight finish. */
typedef struct check_pool {
    sup            *s;
    pthread_mutex_t mu;
    size_t          next;   /* the next table to check */
    bool            failed; /* a check failed: hand out no more */
    int            *rc;     /* per table: 0, or the failure's code */
    mcdc_error     *err;    /* per table: the failure, named */
} check_pool;

/* Check one table on a connection of its source's pool; a checked job is kept for its
 * first round. */
static int check_one(sup *s, slot *sl)
{
    mcdc_source *src = NULL;
    mcdc_job *j = NULL;
    mcdc_log_set_context(sl->t->value[MCDC_RUN_KEY_TARGET]);
    int rc = mcdc_run__source_acquire(&src, sl->rs);
    if (rc < 0)
        mcdc_error_prefix("source %s", sl->rs->name);
    else if ((rc = new_job(s, sl, src, &j)) == 0)
        rc = mcdc_job_check(j);
    if (src) {
        mcdc_error saved = *mcdc_error_last();
        mcdc_run__source_release(sl->rs, src, rc < 0);
        if (rc < 0)
            mcdc_error_restore(&saved);
    }
    mcdc_log_set_context(NULL);
    if (rc < 0) {
        mcdc_job_free(j);
        return mcdc_error_prefix("table %s (line %d)", sl->t->value[MCDC_RUN_KEY_TARGET],
                                 sl->t->line);
    }
    sl->kept = j;
    return 0;
}

static void *check_worker(void *arg)
{
    check_pool *cp = arg;
    for (;;) {
        pthread_mutex_lock(&cp->mu);
        size_t i = cp->failed ? cp->s->n : cp->next++;
        pthread_mutex_unlock(&cp->mu);
        if (i >= cp->s->n)
            return NULL;
        int rc = check_one(cp->s, cp->s->slots[i]);
        if (rc < 0) {
            cp->rc[i] = rc;
            cp->err[i] = *mcdc_error_last();
            mcdc_error_clear();
            pthread_mutex_lock(&cp->mu);
            cp->failed = true;
            pthread_mutex_unlock(&cp->mu);
        }
    }
}

/* Every table checked before anything is written (as mcdc_run_plan_check does), each on a
 * connection of its source's pool and on up to @p threads threads at once (the checks ask
 * the source and read the tables: with many tables, the start-up's longest part). Each
 * checked job is kept for the table's first round, which then does not check again. The
 * tables are handed out in plan order and the checks in flight finish after a failure, so
 * the failure returned is that of the first failing table in plan order, as when they
 * were checked one by one; it names its table. */
static int check_all(sup *s, int threads)
{
    if (threads < 1 || s->n < 2)
        threads = 1;
    if ((size_t)threads > s->n)
        threads = (int)s->n;
    check_pool cp = { .s = s, .next = 0, .failed = false };
    cp.rc = calloc(s->n ? s->n : 1, sizeof *cp.rc);
    cp.err = calloc(s->n ? s->n : 1, sizeof *cp.err);
    if (!cp.rc || !cp.err) {
        free(cp.rc);
        free(cp.err);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&cp.mu, NULL);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    int started = 0;
    for (int i = 1; th && i < threads; i++) /* this thread is the first checker */
        if (pthread_create(&th[started], NULL, check_worker, &cp) == 0)
            started++;
    check_worker(&cp);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    free(th);
    pthread_mutex_destroy(&cp.mu);
    int rc = 0;
    for (size_t i = 0; i < s->n && rc == 0; i++)
        if (cp.rc[i] < 0) {
            rc = cp.rc[i];
            mcdc_error_restore(&cp.err[i]);
        }
    free(cp.rc);
    free(cp.err);
    return rc;
}

/* A kept job holds its checkpoint's lock open between rounds: as many descriptors as the
 * hard limit allows, so hundreds of tables fit under a soft limit of 1024. */
static void more_files(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int mcdc_run_plan_run(const mcdc_run_plan *p, const mcdc_run_options *o, mcdc_run_summary *out)
{
    memset(out, 0, sizeof *out);
    out->n_tables = p->n_tables;
    int rc = 0;
    mcdc_run_http *http = NULL;
    int started = 0;
    sup *s = calloc(1, sizeof *s);
    int workers = o->workers > 0 ? o->workers : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (workers < 1)
        workers = 1;
    if (!o->reload && (size_t)workers > p->n_tables)
        workers = p->n_tables ? (int)p->n_tables : 1;
    /* N read slots, 2N workers: N tables read while up to N more commit (ADR 0063) */
    int threads = 2 * workers;
    if (!o->reload && (size_t)threads > p->n_tables)
        threads = p->n_tables ? (int)p->n_tables : 1;
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    if (!s || !th) {
        free(s);
        free(th);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    s->o = o;
    s->state_dir = p->config->state_dir;
    s->stop_all_on_error = p->config->stop_all;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->event_mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->started_mono_us = mcdc_time_mono_us();
    size_snapshot_cache(p);
    for (size_t i = 0; i < p->n_tables; i++)
        if (!add_slot(s, p, &p->tables[i])) {
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            goto out;
        }
    int64_t t_check = mcdc_time_mono_us();
    if ((rc = check_all(s, threads)) < 0)
        goto out;
    mcdc_log(MCDC_LOG_DEBUG, "run", "%zu table%s checked in %lld ms", s->n, s->n == 1 ? "" : "s",
             (long long)((mcdc_time_mono_us() - t_check) / 1000));
    more_files();
    stop_requested = 0;
    reload_requested = 0;
    const char *listen = o->metrics_listen ? o->metrics_listen : p->config->metrics_listen;
    if (listen && (rc = mcdc_run_http_start(&http, listen, fill, s)) < 0)
        goto out;
    pthread_mutex_lock(&s->mu);
    s->free_reads = s->n_reads = workers;
    for (int i = 0; i < threads; i++) {
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
    mcdc_run__notify_ready();
    int64_t deadline = 0, watchdog_us = mcdc_run__notify_watchdog_us(), last_ping = 0;
    out->drained = true;
    while (s->alive > 0) {
        int64_t now = mcdc_time_mono_us();
        if (watchdog_us && now - last_ping >= watchdog_us / 2) {
            mcdc_run__notify("WATCHDOG=1");
            last_ping = now;
        }
        if (stop_requested && !s->stopping) {
            mcdc_run__notify("STOPPING=1");
            stop_all_locked(s);
        }
        if (reload_requested && !s->stopping) {
            reload_requested = 0;
            if (o->reload) {
                mcdc_run__notify("RELOADING=1");
                pthread_mutex_unlock(&s->mu);
                const mcdc_run_plan *np = NULL;
                int rrc = o->reload(&np, o->payload);
                pthread_mutex_lock(&s->mu);
                if (rrc < 0)
                    mcdc_log(MCDC_LOG_WARN, "run", "reload refused, the tables run on as they "
                             "were: %s", mcdc_error_last()->message);
                else if (!s->stopping)
                    apply_reload(s, np);
                mcdc_run__notify_ready();
            }
        }
        bool all_done = true;
        for (size_t i = 0; all_done && i < s->n; i++)
            all_done = s->slots[i]->done;
        if (all_done && !s->stopping) {
            s->stopping = true; /* every table ended: the workers leave */
            pthread_cond_broadcast(&s->cv);
        }
        if (s->stopping && !deadline)
            deadline = mcdc_time_mono_us() + o->drain_timeout_us;
        if (deadline && mcdc_time_mono_us() > deadline) {
            out->drained = false;
            break;
        }
        flush_states_locked(s, false);
        if (s->alive <= 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50000000;
        ts.tv_sec += ts.tv_nsec / 1000000000;
        ts.tv_nsec %= 1000000000;
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    flush_states_locked(s, true); /* what the workers left, before the end's records */
    out->n_tables = 0;
    for (size_t i = 0; i < s->n; i++)
        out->n_tables += !s->slots[i]->removed;
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
    for (size_t i = 0; i < s->n; i++) /* drained: no round runs, the kept jobs go */
        drop_kept(s->slots[i]);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->n; i++) /* drained: what was not done is stopped */
        if (!s->slots[i]->done)
            record_locked(s, s->slots[i], MCDC_RUN_STATE_STOPPED, s->slots[i]->failures,
                          s->slots[i]->failures ? s->slots[i]->message : "");
    flush_states_locked(s, true);
    pthread_mutex_unlock(&s->mu);
out:
    mcdc_run_http_stop(http);
    for (size_t i = 0; i < s->n; i++) {
        drop_kept(s->slots[i]);
        free(s->slots[i]);
    }
    for (size_t i = 0; i < s->n_srcs; i++)
        mcdc_run__source_free(s->srcs[i]);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->event_mu);
    pthread_mutex_destroy(&s->mu);
    free(s->slots);
    free(s->srcs);
    free(th);
    free(s);
    return rc;
}
