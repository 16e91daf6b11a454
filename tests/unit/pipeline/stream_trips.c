/* Unit tests of how often a stream asks its source (issue 22): a counting source wraps the
 * simulator's and counts every call of its interface as one round trip. A batch with rows
 * asks at most five, plus one ddl_history per capture instance read (captured_columns only
 * when DDL is found); an idle poll asks max_lsn alone; the commit times of max_lsn and of
 * the batch's end are read once per batch. The same history streams to the same rows as
 * without the counting source. */
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/pipeline.h"
#include "mcdc/sim.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "unit/pipeline/scratch.h"

static int setup(void **state)
{
    (void)state;
    return scratch_setup("stream-trips");
}


/* ---- the counting source ------------------------------------------------------------------ */

enum { C_MAX, C_MIN, C_TS, C_NTH, C_NOW, C_CIS, C_COLS, C_KEYS, C_DDL, C_READ, C_SNAP, C_OTHER,
       C_POS, C_N };
static const char *const op_names[C_N] = { "max_lsn", "min_lsn", "lsn_to_commit_ts",
    "nth_commit_after", "server_now", "capture_instances", "captured_columns", "key_columns",
    "ddl_history", "read_changes", "snapshot", "other", "positions" };

#define MAX_TS_ASKS 64

typedef struct counting {
    mcdc_source  base;
    mcdc_source *inner;
    int          n[C_N];        /* calls of each op */
    int          total;         /* every call: one round trip each */
    mcdc_lsn     ts_asked[MAX_TS_ASKS]; /* the LSNs whose commit times were asked */
    int          n_ts_asked;
} counting;

#define CS(b) ((counting *)(b))
#define IN(b) (CS(b)->inner)

/* run's read slots as a stream sees them (mcdc_stream_options.slot_*): one slot, held
 * from the start of the run; each source call made without it is counted */
typedef struct slot_track {
    bool held;
    int  acquires, releases, stop_at_acquire; /* > 0: that acquire answers "stopping" */
    int  outside[C_N];                        /* source calls without the slot */
    int  batches_with_slot;                   /* BATCH events seen while it was held */
} slot_track;
static slot_track *g_slots;

static int slot_acquire(void *payload)
{
    slot_track *t = payload;
    if (t->held)
        return 0;
    if (++t->acquires == t->stop_at_acquire)
        return 1;
    t->held = true;
    return 0;
}

static void slot_release(void *payload)
{
    slot_track *t = payload;
    if (t->held)
        t->releases++;
    t->held = false;
}

static void count(mcdc_source *b, int op)
{
    if (g_slots && !g_slots->held)
        g_slots->outside[op]++;
    CS(b)->n[op]++;
    CS(b)->total++;
}

static void ts_asked(mcdc_source *b, const mcdc_lsn *l)
{
    counting *c = CS(b);
    if (c->n_ts_asked < MAX_TS_ASKS)
        c->ts_asked[c->n_ts_asked++] = *l;
}

static int c_max_lsn(mcdc_source *b, mcdc_lsn *out)
{
    count(b, C_MAX);
    return IN(b)->ops->max_lsn(IN(b), out);
}

static int c_min_lsn(mcdc_source *b, const char *ci, mcdc_lsn *out)
{
    count(b, C_MIN);
    return IN(b)->ops->min_lsn(IN(b), ci, out);
}

static int c_ts(mcdc_source *b, const mcdc_lsn *lsn, int64_t *out)
{
    count(b, C_TS);
    ts_asked(b, lsn);
    return IN(b)->ops->lsn_to_commit_ts(IN(b), lsn, out);
}

static int c_nth(mcdc_source *b, const mcdc_lsn *after, int64_t n, mcdc_lsn *out, int64_t *ts,
                 int64_t *found)
{
    count(b, C_NTH);
    return IN(b)->ops->nth_commit_after(IN(b), after, n, out, ts, found);
}

static int c_now(mcdc_source *b, int64_t *out)
{
    count(b, C_NOW);
    return IN(b)->ops->server_now(IN(b), out);
}

static int c_cis(mcdc_source *b, const char *table, mcdc_capture_instance **out, size_t *n)
{
    count(b, C_CIS);
    return IN(b)->ops->capture_instances(IN(b), table, out, n);
}

static int c_cols(mcdc_source *b, const char *ci, mcdc_schema **out)
{
    count(b, C_COLS);
    return IN(b)->ops->captured_columns(IN(b), ci, out);
}

static int c_keys(mcdc_source *b, const char *ci, char ***out, size_t *n)
{
    count(b, C_KEYS);
    return IN(b)->ops->key_columns(IN(b), ci, out, n);
}

static int c_ddl(mcdc_source *b, const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                 mcdc_ddl_entry **out, size_t *n)
{
    count(b, C_DDL);
    return IN(b)->ops->ddl_history(IN(b), ci, after, upto, out, n);
}

static int c_read(mcdc_source *b, const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                  mcdc_change_cb cb, void *payload)
{
    count(b, C_READ);
    return IN(b)->ops->read_changes(IN(b), ci, after, upto, cb, payload);
}

static int c_snapshot(mcdc_source *b, const char *ci, const mcdc_value *lo, const mcdc_value *hi,
                      mcdc_row_cb cb, void *payload)
{
    count(b, C_SNAP);
    return IN(b)->ops->snapshot(IN(b), ci, lo, hi, cb, payload);
}

static const char *c_tz(mcdc_source *b)
{
    return IN(b)->ops->server_time_zone(IN(b)); /* known at open: no round trip */
}

static void c_close(mcdc_source *b)
{
    mcdc_source_close(IN(b));
    free(b);
}

static int c_consistent(mcdc_source *b, mcdc_lsn *out)
{
    count(b, C_OTHER);
    return IN(b)->ops->consistent_lsn(IN(b), out);
}

/* One call, one round trip, however many questions it carries; the commit times it looks
 * up are noted (a known one is not looked up). */
static int c_positions(mcdc_source *b, mcdc_positions *q)
{
    count(b, C_POS);
    int rc = mcdc_source_positions(IN(b), q);
    if (rc < 0)
        return rc;
    if (q->ask & MCDC_POS_AT)
        for (int i = 0; i < q->n_at; i++)
            ts_asked(b, &q->at[i]);
    if ((q->ask & MCDC_POS_MIN_TS) && !mcdc_lsn_is_zero(&q->min_lsn) &&
        !(q->has_known_min && mcdc_lsn_cmp(&q->min_lsn, &q->known_min) == 0))
        ts_asked(b, &q->min_lsn);
    if ((q->ask & MCDC_POS_MAX_TS) && !mcdc_lsn_is_zero(&q->max_lsn) &&
        !(q->has_known_max && mcdc_lsn_cmp(&q->max_lsn, &q->known_max) == 0))
        ts_asked(b, &q->max_lsn);
    return 0;
}

static const mcdc_source_ops counting_ops = {
    c_max_lsn, c_min_lsn, c_ts, c_nth, c_now, c_cis, c_cols, c_keys, c_ddl, c_read, c_snapshot,
    c_tz, c_close, NULL, NULL, NULL, c_consistent, NULL, NULL, NULL, c_positions,
};

static counting *counting_open(void)
{
    counting *c = calloc(1, sizeof *c);
    assert_non_null(c);
    assert_int_equal(0, mcdc_sim_source_open(&c->inner, db));
    c->base.ops = &counting_ops;
    c->base.description = NULL;
    return c;
}

static void print_counts(const char *what, const int *before, const int *after)
{
    int total = 0;
    fprintf(stderr, "# %s:", what);
    for (int i = 0; i < C_N; i++)
        if (after[i] - before[i]) {
            fprintf(stderr, " %s %d", op_names[i], after[i] - before[i]);
            total += after[i] - before[i];
        }
    fprintf(stderr, " (%d round trips)\n", total);
}

/* ---- the counts, batch by batch -------------------------------------------------------- */

#define MAX_MARKS 64

typedef struct marks {
    counting *c;
    int       n;
    int       total[MAX_MARKS];      /* round trips seen at each event */
    int       per_op[MAX_MARKS][C_N];
    int       ts_seen[MAX_MARKS];    /* commit-time asks seen at each event */
    mcdc_progress_kind kind[MAX_MARKS];
    int64_t   rows[MAX_MARKS];
    int       stop_after_idle;       /* > 0: stop the stream at this many idle events */
    int       n_idle;
    mcdc_stream *s;
} marks;

static void on_progress(const mcdc_stream_progress *p, void *payload)
{
    marks *m = payload;
    if (m->n >= MAX_MARKS)
        return;
    m->total[m->n] = m->c->total;
    memcpy(m->per_op[m->n], m->c->n, sizeof m->c->n);
    m->ts_seen[m->n] = m->c->n_ts_asked;
    m->kind[m->n] = p->kind;
    if (g_slots && p->kind == MCDC_PROGRESS_BATCH && g_slots->held)
        g_slots->batches_with_slot++;
    m->rows[m->n] = p->num_input_rows;
    m->n++;
    if (p->kind == MCDC_PROGRESS_IDLE && m->stop_after_idle > 0 &&
        ++m->n_idle >= m->stop_after_idle)
        mcdc_stream_stop(m->s);
}

static int run(mcdc_stream_options *o, counting *c, marks *m, mcdc_stream_result *res)
{
    o->source = &c->base;
    o->capture_instance = "dbo_t";
    o->target = "bronze.t";
    o->target_path = bronze;
    o->facts = "facts";
    o->facts_path = facts;
    o->app_id = "t";
    o->checkpoint = ck;
    memset(m, 0, sizeof *m);
    m->c = c;
    mcdc_stream *s = NULL;
    int rc = mcdc_stream_new(&s, o);
    m->s = s;
    if (rc == 0)
        rc = mcdc_stream_add_listener(s, on_progress, m);
    if (rc == 0)
        rc = mcdc_stream_run(s, res);
    mcdc_stream_free(s);
    if (rc < 0)
        fprintf(stderr, "# stream: %d %s\n", rc, mcdc_error_last()->message);
    return rc;
}

/* No LSN's commit time asked twice between marks a and b. */
static void assert_ts_once(const marks *m, int a, int b)
{
    for (int i = m->ts_seen[a]; i < m->ts_seen[b]; i++)
        for (int j = i + 1; j < m->ts_seen[b]; j++)
            assert_int_not_equal(0, mcdc_lsn_cmp(&m->c->ts_asked[i], &m->c->ts_asked[j]));
}

static void assert_batch_trips(const marks *m, int a, int b)
{
    int ddl = m->per_op[b][C_DDL] - m->per_op[a][C_DDL];
    int trips = m->total[b] - m->total[a];
    char what[64];
    snprintf(what, sizeof what, "batch (%" PRId64 " rows)", m->rows[b]);
    print_counts(what, m->per_op[a], m->per_op[b]);
    assert_int_equal(1, ddl);                         /* one capture instance read */
    assert_int_equal(0, m->per_op[b][C_COLS] - m->per_op[a][C_COLS]); /* no DDL found */
    assert_true(trips - ddl <= 5);
    assert_int_equal(5, trips - ddl); /* max_lsn, capture_instances, the plan's positions, the read, the positions after it */
    assert_ts_once(m, a, b);
}

static void test_pipeline_stream_trips__batches_with_a_commit_limit(void **state)
{
    (void)state;
    five_transactions();
    counting *c = counting_open();
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.trigger = MCDC_TRIGGER_AVAILABLE_NOW;
    o.max_commits_per_batch = 1;
    marks m;
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, c, &m, &res));
    assert_int_equal(50, res.n_rows);
    /* START, then the batches, then TERMINATED; batch 0 also pays for the starting offset */
    assert_true(m.n >= 4);
    assert_int_equal(MCDC_PROGRESS_START, m.kind[0]);
    assert_int_equal(MCDC_PROGRESS_TERMINATED, m.kind[m.n - 1]);
    int with_rows = 0;
    for (int i = 2; i < m.n - 1; i++) {
        assert_int_equal(MCDC_PROGRESS_BATCH, m.kind[i]);
        if (m.rows[i] == 0)
            continue; /* a commit of no change of dbo_t (capture's own) */
        with_rows++;
        /* the previous batch's event to this one's: its plan, read and what follows */
        assert_batch_trips(&m, i - 1, i);
    }
    assert_true(with_rows >= 3);
    /* available-now ends when its last batch has read up to its target: no plan more, no
     * question after it */
    print_counts("after the last batch", m.per_op[m.n - 2], m.per_op[m.n - 1]);
    assert_int_equal(0, m.total[m.n - 1] - m.total[m.n - 2]);
    mcdc_source_close(&c->base);
}

static void test_pipeline_stream_trips__one_batch_then_idle_polls(void **state)
{
    (void)state;
    five_transactions();
    counting *c = counting_open();
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.trigger = MCDC_TRIGGER_INTERVAL;
    o.interval_us = 2000;
    o.poll_interval_us = 1000;
    o.idle_event_interval_us = 1; /* an idle event at every poll: the counts between them */
    marks m;
    mcdc_stream_result res;
    memset(&m, 0, sizeof m);
    /* the run stops itself at the fourth idle poll */
    o.source = &c->base;
    o.capture_instance = "dbo_t";
    o.target = "bronze.t";
    o.target_path = bronze;
    o.facts = "facts";
    o.facts_path = facts;
    o.app_id = "t";
    o.checkpoint = ck;
    m.c = c;
    m.stop_after_idle = 4;
    mcdc_stream *s = NULL;
    assert_int_equal(0, mcdc_stream_new(&s, &o));
    m.s = s;
    assert_int_equal(0, mcdc_stream_add_listener(s, on_progress, &m));
    assert_int_equal(0, mcdc_stream_run(s, &res));
    mcdc_stream_free(s);
    assert_int_equal(1, res.n_batches);
    assert_int_equal(50, res.n_rows);
    /* START, the batch, four idle polls, TERMINATED */
    assert_int_equal(7, m.n);
    assert_int_equal(MCDC_PROGRESS_BATCH, m.kind[1]);
    /* the batch without a commit limit: its end is max_lsn, whose commit time is read once */
    print_counts("first batch (from the start)", m.per_op[0], m.per_op[1]);
    assert_ts_once(&m, 0, 1);
    for (int i = 2; i < 6; i++) {
        assert_int_equal(MCDC_PROGRESS_IDLE, m.kind[i]);
        print_counts("idle poll", m.per_op[i - 1], m.per_op[i]);
        assert_int_equal(1, m.total[i] - m.total[i - 1]);
        assert_int_equal(1, m.per_op[i][C_MAX] - m.per_op[i - 1][C_MAX]);
    }
    mcdc_source_close(&c->base);
}

static void test_pipeline_stream_trips__a_new_commit_after_a_batch(void **state)
{
    (void)state;
    five_transactions();
    counting *c = counting_open();
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.trigger = MCDC_TRIGGER_ONCE;
    marks m;
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, c, &m, &res));
    assert_int_equal(50, res.n_rows);
    /* one more transaction, captured; the next run's batch reads it */
    mcdc_sim *sim = NULL;
    mcdc_sim_exec_result er;
    mcdc_sim_capture_result cr;
    assert_int_equal(0, mcdc_sim_open(&sim, db, false, NULL));
    assert_int_equal(0, mcdc_sim_exec(sim, "INSERT INTO dbo.t (id, name) VALUES (100, 'x'), (101, 'y')",
                                      MCDC_SIM_NOW, at("2026-10-03T11:00:00"), &er));
    assert_int_equal(0, mcdc_sim_capture(sim, at("2026-10-03T11:00:05"), NULL, &cr));
    mcdc_sim_close(sim);
    assert_int_equal(0, run(&o, c, &m, &res));
    assert_int_equal(1, res.n_batches);
    assert_int_equal(2, res.n_rows);
    assert_int_equal(3, m.n); /* START, BATCH, TERMINATED */
    assert_batch_trips(&m, 0, 1);
    mcdc_source_close(&c->base);
}

/* Kept open (the run layer's rounds): a second run of the same stream asks nothing of the
 * checks (capture_instances, captured_columns of the start) and holds the checkpoint lock in
 * between; a run after a failure and after mcdc_stream_close checks again. */
static void test_pipeline_stream_trips__kept_open_runs_begin_at_planning(void **state)
{
    (void)state;
    five_transactions();
    counting *c = counting_open();
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.trigger = MCDC_TRIGGER_AVAILABLE_NOW;
    o.source = &c->base;
    o.capture_instance = "dbo_t";
    o.target = "bronze.t";
    o.target_path = bronze;
    o.facts = "facts";
    o.facts_path = facts;
    o.app_id = "t";
    o.checkpoint = ck;
    marks m;
    memset(&m, 0, sizeof m);
    m.c = c;
    mcdc_stream *s = NULL;
    assert_int_equal(0, mcdc_stream_new(&s, &o));
    assert_int_equal(0, mcdc_stream_add_listener(s, on_progress, &m));
    mcdc_stream_keep_open(s, true);
    mcdc_stream_result res;
    int first[C_N];
    memcpy(first, c->n, sizeof first);
    assert_int_equal(0, mcdc_stream_run(s, &res));
    assert_int_equal(50, res.n_rows);
    assert_true(mcdc_stream_is_open(s));
    print_counts("first run (checks and batch)", first, c->n);
    assert_int_equal(1, c->n[C_COLS] - first[C_COLS]); /* the check's */

    /* between runs the checkpoint stays locked: a second stream on it is refused */
    mcdc_stream *other = NULL;
    mcdc_stream_options o2 = o;
    o2.source = c->inner;
    assert_int_equal(0, mcdc_stream_new(&other, &o2));
    mcdc_stream_result res2;
    assert_int_equal(MCDC_ELOCKED, mcdc_stream_run(other, &res2));

    /* nothing new: the run is one max_lsn (its target), no check */
    int before[C_N];
    memcpy(before, c->n, sizeof before);
    int total = c->total;
    assert_int_equal(0, mcdc_stream_run(s, &res));
    print_counts("kept run, nothing new", before, c->n);
    assert_int_equal(0, res.n_batches);
    assert_int_equal(1, c->total - total);
    assert_int_equal(1, c->n[C_MAX] - before[C_MAX]);

    /* one more transaction: the kept run's batch asks what any batch asks, no check */
    mcdc_sim *sim = NULL;
    mcdc_sim_exec_result er;
    mcdc_sim_capture_result cr;
    assert_int_equal(0, mcdc_sim_open(&sim, db, false, NULL));
    assert_int_equal(0, mcdc_sim_exec(sim, "INSERT INTO dbo.t (id, name) VALUES (100, 'x'), (101, 'y')",
                                      MCDC_SIM_NOW, at("2026-10-03T11:00:00"), &er));
    assert_int_equal(0, mcdc_sim_capture(sim, at("2026-10-03T11:00:05"), NULL, &cr));
    mcdc_sim_close(sim);
    memcpy(before, c->n, sizeof before);
    total = c->total;
    m.n = 0;
    assert_int_equal(0, mcdc_stream_run(s, &res));
    assert_int_equal(1, res.n_batches);
    assert_int_equal(2, res.n_rows);
    print_counts("kept run, one batch", before, c->n);
    assert_int_equal(0, c->n[C_COLS] - before[C_COLS]);
    assert_int_equal(1, c->n[C_CIS] - before[C_CIS]); /* the plan's (a switch, or gone) */
    /* max_lsn (available-now's target, which the first plan takes), capture_instances, the
     * plan's positions, ddl_history, the read, the positions after it (the batch read up to
     * the target: no last plan): what a stream that was never closed asks */
    assert_int_equal(6, c->total - total);

    /* closed: the lock is free, and the next run checks again */
    mcdc_stream_close(s);
    assert_false(mcdc_stream_is_open(s));
    assert_int_equal(0, mcdc_stream_run(other, &res2));
    mcdc_stream_free(other);
    memcpy(before, c->n, sizeof before);
    assert_int_equal(0, mcdc_stream_run(s, &res));
    assert_int_equal(1, c->n[C_COLS] - before[C_COLS]);
    mcdc_stream_free(s);
    mcdc_source_close(&c->base);
}

/* With run's read slots, every question that plans or reads a batch is asked holding the
 * slot, and the slot is given back once the batch is read: its file, commits and progress
 * come without it (another table reads meanwhile). A batch limit makes the stream ask for
 * the slot again before each plan; a caller that is stopping ends the run there, as a stop
 * does, with the batches read so far committed. */
static void test_pipeline_stream_trips__read_slots_cover_plans_and_reads(void **state)
{
    (void)state;
    five_transactions();
    counting *c = counting_open();
    slot_track t = { .held = true }; /* the caller holds it when the run starts */
    g_slots = &t;
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.trigger = MCDC_TRIGGER_AVAILABLE_NOW;
    o.max_commits_per_batch = 1;
    o.slot_acquire = slot_acquire;
    o.slot_release = slot_release;
    o.slot_payload = &t;
    marks m;
    mcdc_stream_result res;
    assert_int_equal(0, run(&o, c, &m, &res));
    assert_int_equal(50, res.n_rows);
    assert_true(res.n_batches >= 5);
    assert_int_equal(0, t.outside[C_MAX]);
    assert_int_equal(0, t.outside[C_READ]);
    assert_int_equal(0, t.outside[C_POS]);
    assert_int_equal(0, t.outside[C_MIN]);
    assert_int_equal(0, t.outside[C_DDL]);
    assert_int_equal(0, t.outside[C_CIS]);
    assert_int_equal(0, t.batches_with_slot);         /* every batch committed without it */
    assert_true(t.releases >= res.n_batches);          /* given back after each read */
    assert_int_equal(res.n_batches - 1, t.acquires);   /* asked for again before each plan */
    assert_false(t.held);

    /* a caller that is stopping: the second plan never comes, the first batch stands */
    mcdc_source_close(&c->base);
    scratch_teardown(NULL);
    assert_int_equal(0, scratch_setup("stream-trips"));
    five_transactions();
    c = counting_open();
    t = (slot_track){ .held = true, .stop_at_acquire = 1 };
    assert_int_equal(0, run(&o, c, &m, &res));
    assert_int_equal(1, res.n_batches);
    assert_int_equal(1, t.acquires);
    assert_int_equal(1, c->n[C_READ]);
    g_slots = NULL;
    mcdc_source_close(&c->base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pipeline_stream_trips__batches_with_a_commit_limit, setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream_trips__one_batch_then_idle_polls, setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream_trips__a_new_commit_after_a_batch, setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream_trips__kept_open_runs_begin_at_planning, setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream_trips__read_slots_cover_plans_and_reads, setup, scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
