/*
 * bench/stream.c: how fast the stream ingests a capture instance, against reading the
 * source alone and writing bronze alone, and how much memory it takes.
 *
 *   bench_stream DB CI [N_LIMIT [SMALL_BATCHES]]
 *   bench_stream DB CI 0 SMALL_BATCHES      stream-small alone (to profile it)
 *
 * DB is a simulator database (bench/stream.sh makes one with 2 million changes on an
 * 8-column table); CI its capture instance. Each phase runs in its own child process, so
 * its peak RSS is its own:
 *   read    read_changes over everything CDC holds, rows counted and dropped
 *   write   the same number of synthetic rows of bronze's schema into bronze data files
 *           and Delta commits (one per 500,000 rows), no source
 *   stream  mcdc_stream_run, available-now, unlimited batch
 *   stream-limit  the same with --max-commits-per-batch N_LIMIT (default 1000): memory
 *           must not depend on the batch size; its per-batch overhead (its time less the
 *           unlimited stream's, over its batches) is printed beside the floor below
 *   stream-small  one commit per batch, SMALL_BATCHES batches (default 2000): each batch's
 *           time (between two batch events) as p50 and p99, beside the floor: the time of
 *           the batch's durable creates on the same disk in the same run (6: offsets/N,
 *           the bronze data file, the bronze commit, the facts data file, the facts
 *           commit, commits/N; each a 1 KiB create-without-replace with its fsyncs),
 *           sampled every 10th batch between two batches and left out of their times
 * The floor of stream-limit is sampled after each of its batches, and the samples' time
 * taken out of the phase's.
 * Prints changes/s and peak RSS per phase and the ratio stream / read (target <= 1.5).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcdc/delta.h"
#include "mcdc/fs.h"
#include "mcdc/pipeline.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "pipeline/datafile.h"

#include "disk.h"
#include "timing.h"

static const char *db, *ci;
static char dir[256];

static int count_change(const mcdc_change *c, void *payload)
{
    (void)c;
    (*(int64_t *)payload)++;
    return 0;
}

static int phase_read(int64_t *n)
{
    mcdc_source *src = NULL;
    char spec[512];
    snprintf(spec, sizeof spec, "sim:%s", db);
    int rc = mcdc_source_open(&src, spec);
    mcdc_lsn min, max, after;
    if (rc == 0)
        rc = src->ops->min_lsn(src, ci, &min);
    if (rc == 0)
        rc = src->ops->max_lsn(src, &max);
    if (rc == 0)
        rc = mcdc_lsn_decrement(&after, &min);
    if (rc == 0)
        rc = src->ops->read_changes(src, ci, &after, &max, count_change, n);
    mcdc_source_close(src);
    return rc;
}

/* Bronze-shaped rows without a source: the metadata columns and 8 captured columns. */
static int phase_write(int64_t n_rows)
{
    mcdc_source *src = NULL;
    char spec[512], table[400];
    snprintf(spec, sizeof spec, "sim:%s", db);
    snprintf(table, sizeof table, "%s/write-alone", dir);
    mcdc_schema *cap = NULL, *bs = NULL;
    int rc = mcdc_source_open(&src, spec);
    if (rc == 0)
        rc = src->ops->captured_columns(src, ci, &cap);
    mcdc_source_close(src);
    if (rc == 0)
        rc = mcdc_bronze_schema(&bs, cap, true);
    if (rc == 0)
        rc = mcdc_fs_mkdirs(table);
    if (rc < 0)
        return rc;
    rc = mcdc_delta_create(table, bs, NULL, 0, NULL, NULL);
    mcdc_value *row = calloc(bs->n_cols, sizeof *row);
    char lsn[MCDC_LSN_STRLEN], text[64];
    int64_t done = 0, version = 0;
    while (rc == 0 && done < n_rows) {
        mcdc_datafile *f = NULL;
        if ((rc = mcdc_datafile__open(&f, table, bs)) < 0)
            break;
        for (int64_t i = 0; i < 500000 && done < n_rows && rc == 0; i++, done++) {
            mcdc_lsn l = mcdc_lsn_from_u64(0, (uint64_t)done / 4 + 1000);
            mcdc_lsn_format(lsn, &l);
            snprintf(text, sizeof text, "customer %" PRId64, done % 5000);
            for (size_t c = 0; c < bs->n_cols; c++) {
                mcdc_value *v = &row[c];
                v->is_null = false;
                switch (bs->cols[c].type) {
                case MCDC_TYPE_STRING:
                    v->v.s.ptr = c < 3 ? lsn : text;
                    v->v.s.len = strlen(v->v.s.ptr);
                    break;
                case MCDC_TYPE_DECIMAL:
                    v->v.dec = done * 7 % 100000;
                    break;
                case MCDC_TYPE_DOUBLE:
                    v->v.d = (double)done / 3;
                    break;
                case MCDC_TYPE_FLOAT:
                    v->v.f = (float)done;
                    break;
                case MCDC_TYPE_BOOLEAN:
                    v->v.b = done & 1;
                    break;
                case MCDC_TYPE_BINARY:
                    v->v.s.ptr = lsn;
                    v->v.s.len = 10;
                    break;
                case MCDC_TYPE_INT:
                    v->v.i = (int32_t)(done % 1000000);
                    break;
                default:
                    v->v.i = done;
                }
            }
            rc = mcdc_datafile__add(f, row);
        }
        mcdc_delta_file add;
        if (rc < 0) {
            mcdc_datafile__discard(f);
            break;
        }
        if ((rc = mcdc_datafile__finish(f, &add)) < 0)
            break;
        mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        co.app_id = "bench";
        co.txn_version = version++;
        rc = mcdc_delta_append(table, &add, 1, &co, NULL);
        mcdc_delta_file_clear(&add);
    }
    free(row);
    mcdc_schema_free(cap);
    mcdc_schema_free(bs);
    return rc;
}

/* The floor: the time of a batch's 6 durable 1 KiB creates-without-replace (temp file,
 * fsync, link, directory fsync), sampled between the batches of the run it is compared
 * with, so both see the same disk at the same time (the machine is shared: its fsync
 * latency moves from one minute to the next). */
typedef struct floor_samples {
    char     dir[400];
    int64_t  n, cap;
    double  *ms;
    int64_t  spent_us; /* time the samples took, to take out of a phase's time */
    int      failed;
} floor_samples;

static void floor_init(floor_samples *f, const char *name, int64_t cap)
{
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "%s/floor-%s-%d", dir, name, (int)getpid());
    f->cap = cap;
    f->ms = calloc((size_t)cap, sizeof *f->ms);
    f->failed = !f->ms || mcdc_fs_mkdirs(f->dir) < 0;
}

static void floor_sample(floor_samples *f)
{
    if (f->failed || f->n >= f->cap)
        return;
    char path[500], body[1024];
    memset(body, 'x', sizeof body);
    int64_t t0 = mcdc_time_mono_us();
    for (int k = 0; k < 6 && !f->failed; k++) {
        snprintf(path, sizeof path, "%s/%" PRId64 "-%d", f->dir, f->n, k);
        f->failed = mcdc_fs_create_noreplace(path, body, sizeof body) < 0;
    }
    int64_t us = mcdc_time_mono_us() - t0;
    f->ms[f->n++] = (double)us / 1000.0;
    f->spent_us += us;
}

/* p50 of the samples, -1 when none or one failed */
static double floor_p50(floor_samples *f)
{
    return f->failed || f->n == 0 ? -1 : bench_pct(f->ms, (size_t)f->n, 0.5);
}

static void floor_free(floor_samples *f)
{
    free(f->ms);
    f->ms = NULL;
}

/* stream-limit: one floor sample after each batch */
static void limit_listener(const mcdc_stream_progress *p, void *payload)
{
    if (p->kind == MCDC_PROGRESS_BATCH)
        floor_sample(payload);
}

/* The stream phases; with a limit, @p fl gets a floor sample after each batch. */
static int phase_stream(int64_t *n, int64_t *batches, int64_t limit, floor_samples *fl)
{
    mcdc_source *src = NULL;
    char spec[512], target[400], ck[400], facts[400];
    snprintf(spec, sizeof spec, "sim:%s", db);
    snprintf(target, sizeof target, "%s/bronze-%" PRId64, dir, limit);
    snprintf(ck, sizeof ck, "%s/ck-%" PRId64, dir, limit);
    snprintf(facts, sizeof facts, "%s/facts-%" PRId64, dir, limit);
    int rc = mcdc_source_open(&src, spec);
    if (rc < 0)
        return rc;
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.source = src;
    o.capture_instance = ci;
    o.target = o.target_path = target;
    o.facts = o.facts_path = facts;
    o.app_id = "bench";
    o.checkpoint = ck;
    o.max_commits_per_batch = limit;
    mcdc_stream *s = NULL;
    mcdc_stream_result res;
    if ((rc = mcdc_stream_new(&s, &o)) == 0 &&
        (!fl || (rc = mcdc_stream_add_listener(s, limit_listener, fl)) == 0))
        rc = mcdc_stream_run(s, &res);
    if (rc == 0) {
        *n = res.n_rows;
        *batches = res.n_batches;
    }
    mcdc_stream_free(s);
    mcdc_source_close(src);
    return rc;
}

/* stream-small: each batch event's time, and a floor sample every FLOOR_EVERY batches
 * (taken after the batch's event and left out of the next batch's time); the stream stops
 * after want batches. */
#define FLOOR_EVERY 10
typedef struct small_run {
    mcdc_stream  *s;
    int64_t       want, n;
    int64_t       last_us;
    double       *ms;
    floor_samples fl;
} small_run;

static void small_listener(const mcdc_stream_progress *p, void *payload)
{
    small_run *r = payload;
    int64_t now = mcdc_time_mono_us();
    if (p->kind == MCDC_PROGRESS_START)
        r->last_us = now;
    if (p->kind != MCDC_PROGRESS_BATCH)
        return;
    if (r->n < r->want)
        r->ms[r->n++] = (double)(now - r->last_us) / 1000.0;
    if (r->n % FLOOR_EVERY == 0)
        floor_sample(&r->fl);
    r->last_us = mcdc_time_mono_us();
    if (r->n >= r->want)
        mcdc_stream_stop(r->s); /* async-signal-safe: only sets a flag */
}

static int phase_small(int64_t want)
{
    mcdc_source *src = NULL;
    char spec[512], target[400], ck[400], facts[400];
    snprintf(spec, sizeof spec, "sim:%s", db);
    snprintf(target, sizeof target, "%s/bronze-small", dir);
    snprintf(ck, sizeof ck, "%s/ck-small", dir);
    snprintf(facts, sizeof facts, "%s/facts-small", dir);
    int rc = mcdc_source_open(&src, spec);
    if (rc < 0)
        return rc;
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.source = src;
    o.capture_instance = ci;
    o.target = o.target_path = target;
    o.facts = o.facts_path = facts;
    o.app_id = "bench-small";
    o.checkpoint = ck;
    o.max_commits_per_batch = 1;
    small_run r = { NULL, want, 0, 0, calloc((size_t)want, sizeof(double)), { { 0 } } };
    floor_init(&r.fl, "small", want / FLOOR_EVERY + 1);
    mcdc_stream_result res;
    if (!r.ms)
        rc = MCDC_ENOMEM;
    if (rc == 0 && (rc = mcdc_stream_new(&r.s, &o)) == 0 &&
        (rc = mcdc_stream_add_listener(r.s, small_listener, &r)) == 0)
        rc = mcdc_stream_run(r.s, &res);
    double fl = rc == 0 ? floor_p50(&r.fl) : -1;
    if (rc == 0 && r.n > 1 && fl > 0) {
        /* the first batch pays the table's creation: left out */
        size_t k = (size_t)(r.n - 1);
        double p50 = bench_pct(r.ms + 1, k, 0.5), p99 = bench_pct(r.ms + 1, k, 0.99);
        printf("stream-small p50 %.2f ms p99 %.2f ms floor %.2f ms  (%" PRId64 " batches of one "
               "commit, %" PRId64 " floor samples between them; p50 %.1fx, p99 %.1fx the floor)\n",
               p50, p99, fl, r.n, r.fl.n, p50 / fl, p99 / fl);
        fflush(stdout);
    } else if (rc == 0) {
        fprintf(stderr, "stream-small: only %" PRId64 " batches, or the floor failed\n", r.n);
        rc = MCDC_ERROR;
    }
    free(r.ms);
    floor_free(&r.fl);
    mcdc_stream_free(r.s);
    mcdc_source_close(src);
    return rc;
}

/* Run one phase in a child; report its rate and peak RSS. Returns seconds (less the floor
 * samples taken between its batches), < 0 on error; @p n_out the changes, @p batches_out
 * the batches and @p floor_out the floor sampled between them (stream phases). */
static double run_phase(const char *name, int which, int64_t arg, int64_t *n_out, int64_t *batches_out,
                        double *floor_out)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    int64_t t0 = mcdc_time_mono_us();
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        /* changes, batches, floor p50 (us) and the time its samples took (us) */
        int64_t n[4] = { arg, 0, -1, 0 };
        floor_samples fl = { .failed = 1 };
        if (which == 2 && arg > 0)
            floor_init(&fl, "limit", 100000);
        int rc = which == 0 ? phase_read(&n[0]) : which == 1 ? phase_write(arg)
                 : which == 3 ? phase_small(arg)
                 : phase_stream(&n[0], &n[1], arg, arg > 0 ? &fl : NULL);
        if (rc == 0 && which == 2 && arg > 0 && floor_p50(&fl) > 0) {
            n[2] = (int64_t)(floor_p50(&fl) * 1000.0);
            n[3] = fl.spent_us;
        }
        floor_free(&fl);
        if (rc < 0)
            fprintf(stderr, "%s: %s\n", name, mcdc_error_last()->message);
        if (write(fds[1], n, sizeof n) != (ssize_t)sizeof n)
            _exit(3);
        _exit(rc < 0 ? 1 : 0);
    }
    close(fds[1]);
    int64_t nb[4] = { 0, 0, -1, 0 };
    if (read(fds[0], nb, sizeof nb) != (ssize_t)sizeof nb)
        nb[0] = nb[1] = 0, nb[2] = -1;
    close(fds[0]);
    int64_t n = nb[0];
    int status = 0;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    /* the floor samples taken between the batches are not the phase's */
    double secs = (double)(mcdc_time_mono_us() - t0 - nb[3]) / 1e6;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return -1;
    printf("%-13s %10" PRId64 " changes %8.2f s %12.0f changes/s  peak RSS %7.1f MiB\n", name, n,
           secs, (double)n / secs, (double)ru.ru_maxrss / 1024.0);
    fflush(stdout);
    *n_out = n;
    if (batches_out)
        *batches_out = nb[1];
    if (floor_out)
        *floor_out = nb[2] > 0 ? (double)nb[2] / 1000.0 : -1;
    return secs;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_stream DB CAPTURE_INSTANCE [N_LIMIT]\n");
        return 2;
    }
    db = argv[1];
    ci = argv[2];
    int64_t limit = argc > 3 ? atoll(argv[3]) : 1000;
    int64_t small = argc > 4 ? atoll(argv[4]) : 2000;
    snprintf(dir, sizeof dir, "%s/mcdc-bench-stream-XXXXXX", bench_tmpdir());
    if (!mkdtemp(dir))
        return 3;
    bench_refuse_memory_fs("bench_stream", dir);
    int64_t n_read = 0, n_write = 0, n_stream = 0, n_limit = 0;
    if (limit == 0) {
        /* stream-small alone (to profile it): N_LIMIT 0 */
        int64_t n_small = 0;
        double t = run_phase("stream-small", 3, small, &n_small, NULL, NULL);
        char rm[300];
        snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
        if (system(rm) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
        return t < 0;
    }
    double t_read = run_phase("read", 0, 0, &n_read, NULL, NULL);
    double t_write = t_read > 0 ? run_phase("write", 1, n_read, &n_write, NULL, NULL) : -1;
    double t_stream = t_write > 0 ? run_phase("stream", 2, 0, &n_stream, NULL, NULL) : -1;
    int64_t b_limit = 0;
    double fl_limit = -1;
    double t_limit = t_stream > 0 ? run_phase("stream-limit", 2, limit, &n_limit, &b_limit, &fl_limit) : -1;
    if (t_limit > 0 && b_limit > 0 && fl_limit > 0) {
        /* the per-batch overhead of a limited stream over the unlimited one, beside the
         * floor sampled between its batches */
        double over = (t_limit - t_stream) * 1000.0 / (double)b_limit;
        printf("stream-limit overhead %.2f ms a batch floor %.2f ms  (%" PRId64 " batches of %" PRId64
               " commits, a floor sample after each; %.1fx the floor)\n", over, fl_limit, b_limit,
               limit, over / fl_limit);
        fflush(stdout);
    }
    int64_t n_small = 0;
    double t_small = t_limit > 0 && small > 1 ? run_phase("stream-small", 3, small, &n_small, NULL, NULL) : 0;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (t_limit < 0 || t_small < 0 || n_stream != n_read || n_limit != n_read) {
        fprintf(stderr, "bench_stream: a phase failed or counts differ (read %" PRId64
                ", stream %" PRId64 ", limited %" PRId64 ")\n", n_read, n_stream, n_limit);
        return 1;
    }
    printf("stream / read time: %.2f (target <= 1.5); write alone %.2f of the stream's time\n",
           t_stream / t_read, t_write / t_stream);
    return 0;
}
