/*
 * bench/advance.c: the cost of finalization advances on a local control table.
 *
 *   bench_advance [--runs N] [--procs P] [--per-proc M] [--dir DIR]
 *
 * 1. Latency: N (default 1000) advances of one table, each moving the verdict by an hour,
 *    in this process: p50, p99, max; and N advances that do not move it (no commit).
 * 2. Throughput: P (default 8) processes, each advancing its own table M (default 100)
 *    times on one control table: advances per second, conflicts and rebases.
 * 3. Peer: the same P x M with the original design's write shape, a MERGE-like rewrite
 *    of the whole table into one file that declares it read everything (every writer
 *    conflicts with every other), to show the ratio one-file-per-row buys.
 * Prints one "name value unit" line per figure and a ratio line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/parquet.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int64_t cpu_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static mcdc_offset hour_offset(int i)
{
    mcdc_offset o;
    memset(&o, 0, sizeof o);
    o.lsn = mcdc_lsn_from_u64(0, (uint64_t)i + 1);
    o.commit_ts_us = INT64_C(1790812800000000) + (int64_t)i * MCDC_US_PER_HOUR + 600000000;
    o.has_commit_ts = true;
    return o;
}

static int die(const char *what)
{
    fprintf(stderr, "bench_advance: %s: %s\n", what, mcdc_error_last()->message);
    return 1;
}

/* ---- the peer: whole-table rewrite, read predicate ALL -------------------------------- */

typedef struct merge_ctx {
    const char       *path;
    const char       *key;
    const mcdc_offset *end;
} merge_ctx;

static int build_merge(const mcdc_delta_snapshot *snap, mcdc_delta_action **acts, size_t *n,
                       void *payload)
{
    merge_ctx *c = payload;
    const mcdc_schema *s = mcdc_control_schema();
    mcdc_control_row *rows = NULL;
    size_t nr = 0;
    int rc = mcdc_control_read_all(&rows, &nr, c->path);
    if (rc < 0)
        return rc;
    int64_t cand = mcdc_time_truncate(c->end->commit_ts_us, MCDC_GRAN_HOUR);
    bool found = false;
    for (size_t i = 0; i < nr; i++) {
        if (strcmp(rows[i].table_name, c->key) == 0) {
            found = true;
            rows[i].finalized_until = (mcdc_verdict){ true, cand };
        }
    }
    char uuid[37], rel[96], abs[4096];
    snprintf(rel, sizeof rel, "part-00000-%s-c000.snappy.parquet", mcdc_delta_uuid(uuid));
    snprintf(abs, sizeof abs, "%s/%s", c->path, rel);
    mcdc_parquet_writer *w = NULL;
    mcdc_parquet_write_result res;
    memset(&res, 0, sizeof res);
    rc = mcdc_parquet_writer_open(&w, abs, s, NULL);
    mcdc_value v[MCDC_CONTROL_NCOLS];
    char lsn[MCDC_LSN_STRLEN];
    for (size_t i = 0; rc == 0 && i < nr; i++) {
        mcdc_control_row_values(&rows[i], v, lsn);
        rc = mcdc_parquet_writer_write_row(w, v);
    }
    if (rc == 0 && !found) {
        mcdc_control_row r = { .table_name = (char *)c->key, .finalized_until = { true, cand } };
        mcdc_control_row_values(&r, v, lsn);
        rc = mcdc_parquet_writer_write_row(w, v);
    }
    if (rc == 0)
        rc = mcdc_parquet_writer_close(w, &res);
    mcdc_parquet_writer_free(w);
    mcdc_control_rows_free(rows, nr);
    if (rc < 0)
        return rc;
    *acts = calloc(snap->n_files + 1, sizeof **acts);
    if (!*acts)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < snap->n_files; i++) {
        (*acts)[*n].kind = MCDC_DELTA_ACTION_REMOVE;
        mcdc_delta_file_copy(&(*acts)[*n].u.file, &snap->files[i]);
        (*acts)[*n].u.file.deletion_timestamp = mcdc_time_now_us() / 1000;
        (*acts)[(*n)++].u.file.data_change = true;
    }
    mcdc_delta_action *a = &(*acts)[(*n)++];
    a->kind = MCDC_DELTA_ACTION_ADD;
    a->u.file.path = strdup(rel);
    a->u.file.size = (int64_t)res.file_size;
    a->u.file.modification_time = mcdc_time_now_us() / 1000;
    a->u.file.deletion_timestamp = -1;
    a->u.file.data_change = true;
    a->u.file.base_row_id = -1;
    a->u.file.default_row_commit_version = -1;
    mcdc_parquet_write_result_dispose(&res);
    return 0;
}

static int merge_advance(const char *path, const char *key, const mcdc_offset *end,
                         mcdc_advance_result *out)
{
    merge_ctx c = { path, key, end };
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.operation = "MERGE";
    o.read_pred.op = MCDC_DELTA_PRED_ALL;
    mcdc_delta_commit_result r;
    memset(&r, 0, sizeof r);
    int rc = mcdc_delta_commit(path, build_merge, &c, &o, &r);
    out->n_conflicts = r.n_conflicts;
    out->n_rebases = r.n_rebases;
    return rc;
}

/* ---- throughput with P processes ---------------------------------------------------- */

static int run_procs(const char *path, int procs, int per_proc, bool merge, double *secs,
                     long *conflicts, long *rebases, long *fails)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    int64_t t0 = mcdc_time_mono_us();
    for (int p = 0; p < procs; p++) {
        pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            close(fds[0]);
            char key[64];
            snprintf(key, sizeof key, "bronze.p%d", p);
            long c = 0, r = 0, f = 0;
            for (int i = 0; i < per_proc; i++) {
                mcdc_offset o = hour_offset(i);
                mcdc_advance_result res;
                memset(&res, 0, sizeof res);
                int rc = merge ? merge_advance(path, key, &o, &res)
                               : mcdc_control_advance(path, key, &o, MCDC_GRAN_HOUR, &res);
                if (rc < 0)
                    f++;
                c += res.n_conflicts;
                r += res.n_rebases;
            }
            long out[3] = { c, r, f };
            ssize_t w = write(fds[1], out, sizeof out);
            _exit(w == (ssize_t)sizeof out ? 0 : 1);
        }
    }
    close(fds[1]);
    *conflicts = *rebases = *fails = 0;
    for (int p = 0; p < procs; p++) {
        long in[3];
        if (read(fds[0], in, sizeof in) == (ssize_t)sizeof in) {
            *conflicts += in[0];
            *rebases += in[1];
            *fails += in[2];
        }
    }
    close(fds[0]);
    while (wait(NULL) > 0 || errno == EINTR) {
    }
    *secs = (double)(mcdc_time_mono_us() - t0) / 1e6;
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 1000, procs = 8, per_proc = 100;
    const char *dir = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--procs")) procs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--per-proc")) per_proc = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
    }
    if (runs < 1 || procs < 1 || per_proc < 1) {
        fprintf(stderr, "usage: bench_advance [--runs N] [--procs P] [--per-proc M] [--dir DIR]\n");
        return 2;
    }
    char root[256], path[300];
    snprintf(root, sizeof root, "%s/mcdc-bench-advance-XXXXXX", dir ? dir : "/tmp");
    if (!mkdtemp(root)) {
        perror("mkdtemp");
        return 1;
    }

    /* 1. latency of advances that move the verdict, and of no-op ones */
    snprintf(path, sizeof path, "%s/latency", root);
    if (mcdc_control_ensure(path, NULL) < 0)
        return die("create");
    int64_t *lat = calloc((size_t)runs, sizeof *lat), *noop = calloc((size_t)runs, sizeof *noop);
    int64_t *cpu = calloc((size_t)runs, sizeof *cpu);
    if (!lat || !noop || !cpu)
        return 1;
    for (int i = 0; i < runs; i++) {
        mcdc_offset o = hour_offset(i);
        mcdc_advance_result r;
        int64_t t = mcdc_time_mono_us(), c = cpu_us();
        if (mcdc_control_advance(path, "bronze.orders", &o, MCDC_GRAN_HOUR, &r) < 0)
            return die("advance");
        lat[i] = mcdc_time_mono_us() - t;
        cpu[i] = cpu_us() - c;
        if (!r.wrote) {
            fprintf(stderr, "bench_advance: advance %d did not move the verdict\n", i);
            return 1;
        }
    }
    for (int i = 0; i < runs; i++) {
        mcdc_offset o = hour_offset(i / 2);
        mcdc_advance_result r;
        int64_t t = mcdc_time_mono_us();
        if (mcdc_control_advance(path, "bronze.orders", &o, MCDC_GRAN_HOUR, &r) < 0)
            return die("advance");
        noop[i] = mcdc_time_mono_us() - t;
    }
    qsort(lat, (size_t)runs, sizeof *lat, cmp_i64);
    qsort(noop, (size_t)runs, sizeof *noop, cmp_i64);
    qsort(cpu, (size_t)runs, sizeof *cpu, cmp_i64);
    double p50 = (double)lat[runs / 2] / 1000, p99 = (double)lat[(runs * 99) / 100] / 1000;
    printf("advance_moving_p50 %.3f ms\n", p50);
    printf("advance_moving_p99 %.3f ms\n", p99);
    printf("advance_moving_max %.3f ms\n", (double)lat[runs - 1] / 1000);
    printf("advance_moving_cpu_p50 %.3f ms\n", (double)cpu[runs / 2] / 1000);
    printf("advance_moving_cpu_p99 %.3f ms\n", (double)cpu[(runs * 99) / 100] / 1000);
    printf("advance_noop_p50 %.3f ms\n", (double)noop[runs / 2] / 1000);
    printf("advance_noop_p99 %.3f ms\n", (double)noop[(runs * 99) / 100] / 1000);
    free(lat);
    free(noop);
    free(cpu);

    /* 2. P concurrent processes, one table each */
    double secs;
    long conflicts, rebases, fails;
    snprintf(path, sizeof path, "%s/concurrent", root);
    if (mcdc_control_ensure(path, NULL) < 0)
        return die("create");
    if (run_procs(path, procs, per_proc, false, &secs, &conflicts, &rebases, &fails) < 0)
        return die("fork");
    double ours = (double)procs * per_proc / secs;
    printf("concurrent_%dx%d_one_file_per_row %.1f advances/s (%.2f s, conflicts %ld, rebases %ld, failed %ld)\n",
           procs, per_proc, ours, secs, conflicts, rebases, fails);

    /* 3. the peer: whole-table MERGE-like rewrites */
    snprintf(path, sizeof path, "%s/merge", root);
    if (mcdc_control_ensure(path, NULL) < 0)
        return die("create");
    if (run_procs(path, procs, per_proc, true, &secs, &conflicts, &rebases, &fails) < 0)
        return die("fork");
    double peer = (double)procs * per_proc / secs;
    printf("concurrent_%dx%d_whole_table_merge %.1f advances/s (%.2f s, conflicts %ld, rebases %ld, failed %ld)\n",
           procs, per_proc, peer, secs, conflicts, rebases, fails);
    printf("ratio_one_file_per_row_vs_merge %.2f x\n", ours / peer);

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : 1;
}
