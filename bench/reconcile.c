/*
 * bench/reconcile.c: silver's side of reconcile's tier 1 on a large silver table: the
 * ordinal of every row's key (one pass over silver's key column, files read at once) and
 * the rows and key sums per fine bucket, as mcdc_reconcile_run computes them
 * (reconcile/silver_keys.c, the same functions).
 *
 *   bench_reconcile DIR ROWS [FILE_ROWS [THREADS [REPEAT]]]
 *
 * DIR is created (it must not exist) and gets DIR/silver: a Delta table of ROWS rows
 * (order_id BIGINT key 7, 10, 13, ... in key order, customer STRING, amount
 * DECIMAL(12,2)) in files of FILE_ROWS rows (default 262144, silver apply's default).
 * Then REPEAT (default 3) timed passes of: open the snapshot, read the keys, their range,
 * fine buckets of width ceil(span / 100,000), rows and sums per bucket. Each pass prints
 * its wall and CPU seconds and the check line "buckets B rows N bucket_x_rows X key_sum S" (B the
 * non-empty buckets, X the sum of bucket index x rows), which bench/reconcile.sh compares
 * with DuckDB's answer for the same buckets. THREADS as reconcile's (0: one per CPU).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "mcdc/delta.h"
#include "reconcile/silver_keys.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec / 1e6 + (double)u.ru_stime.tv_sec +
           (double)u.ru_stime.tv_usec / 1e6;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_reconcile: %s: %s\n", what, mcdc_error_last()->message);
    exit(1);
}

static void build(const char *path, int64_t rows, int64_t file_rows)
{
    mcdc_schema *s = mcdc_schema_new();
    if (!s || mcdc_schema_add(s, "order_id", MCDC_TYPE_LONG, 0, 0, false) < 0 ||
        mcdc_schema_add(s, "customer", MCDC_TYPE_STRING, 0, 0, true) < 0 ||
        mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 12, 2, true) < 0)
        die("schema");
    if (mcdc_delta_create(path, s, NULL, 0, NULL, NULL) < 0)
        die("create");
    mcdc_delta_snapshot *snap = NULL;
    if (mcdc_delta_snapshot_open(&snap, path, -1) < 0)
        die("snapshot");
    char cust[32];
    for (int64_t at = 0; at < rows; at += file_rows) {
        mcdc_delta_writer *w = NULL;
        mcdc_delta_writer_options wo = MCDC_DELTA_WRITER_OPTIONS_INIT;
        wo.target_file_bytes = (int64_t)1 << 40;
        if (mcdc_delta_writer_open(&w, snap, &wo) < 0)
            die("writer");
        for (int64_t i = at; i < rows && i < at + file_rows; i++) {
            mcdc_value v[3] = { { 0 } };
            v[0].v.i = 7 + 3 * i;
            snprintf(cust, sizeof cust, "customer-%" PRId64, i % 100003);
            v[1].v.s.ptr = cust;
            v[1].v.s.len = strlen(cust);
            v[2].v.dec = (mcdc_int128)(i % 99991) * 7;
            if (mcdc_delta_writer_write(w, v) < 0)
                die("write");
        }
        mcdc_delta_file *files = NULL;
        size_t n = 0;
        if (mcdc_delta_writer_finish(w, &files, &n) < 0)
            die("finish");
        mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        co.operation = "WRITE";
        if (mcdc_delta_append(path, files, n, &co, NULL) < 0)
            die("append");
        mcdc_delta_files_free(files, n);
        mcdc_delta_writer_free(w);
    }
    mcdc_delta_snapshot_free(snap);
    mcdc_schema_free(s);
}

static void pass(const char *path, int threads)
{
    double t0 = now(), c0 = cpu();
    mcdc_delta_snapshot *snap = NULL;
    if (mcdc_delta_snapshot_open(&snap, path, -1) < 0)
        die("snapshot");
    const char *names[] = { "order_id" };
    mcdc_column col = { "order_id", MCDC_TYPE_LONG, 0, 0, false };
    const mcdc_column *cols[] = { &col };
    mcdc_reconcile__keys k;
    if (mcdc_reconcile__silver_keys(&k, snap, names, cols, 1, false, threads) < 0)
        die("keys");
    double t_keys = now() - t0;
    int64_t lo, hi;
    if (!mcdc_reconcile__key_range(&k, &lo, &hi))
        die("no keys");
    mcdc_int128 span = (mcdc_int128)hi - lo + 1;
    int64_t width = (int64_t)((span + 100000 - 1) / 100000), n_fine = (int64_t)((span + width - 1) / width);
    int64_t *rows = calloc((size_t)n_fine, sizeof *rows);
    mcdc_int128 *sums = calloc((size_t)n_fine, sizeof *sums);
    if (!rows || !sums)
        die("out of memory");
    if (mcdc_reconcile__fine_sums(&k, lo, width, n_fine, rows, sums) < 0)
        die("fine sums");
    double t = now() - t0, c = cpu() - c0;
    int64_t buckets = 0, total = 0;
    mcdc_int128 bx = 0, sum = 0;
    for (int64_t b = 0; b < n_fine; b++) {
        if (!rows[b])
            continue;
        buckets++;
        total += rows[b];
        bx += (mcdc_int128)b * rows[b];
        sum += sums[b];
    }
    char sbuf[64], bxbuf[64];
    printf("mssql-cdc      %.3f s, CPU %.3f s (keys %.3f s, %d thread%s): %zu files\n", t, c, t_keys, k.threads_used,
           k.threads_used == 1 ? "" : "s", snap->n_files);
    printf("check buckets %" PRId64 " rows %" PRId64 " bucket_x_rows %s key_sum %s\n", buckets, total,
           mcdc_decimal_format(bxbuf, bx, 0), mcdc_decimal_format(sbuf, sum, 0));
    free(rows);
    free(sums);
    mcdc_reconcile__keys_clear(&k);
    mcdc_delta_snapshot_free(snap);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_reconcile DIR ROWS [FILE_ROWS [THREADS [REPEAT]]]\n");
        return 2;
    }
    int64_t rows = strtoll(argv[2], NULL, 10), file_rows = argc > 3 ? strtoll(argv[3], NULL, 10) : 262144;
    int threads = argc > 4 ? atoi(argv[4]) : 0, repeat = argc > 5 ? atoi(argv[5]) : 3;
    if (rows < 1 || file_rows < 1 || repeat < 1) {
        fprintf(stderr, "bench_reconcile: ROWS, FILE_ROWS and REPEAT must be positive\n");
        return 2;
    }
    if (mkdir(argv[1], 0755) < 0) {
        perror(argv[1]);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/silver", argv[1]);
    double t0 = now();
    build(path, rows, file_rows);
    printf("built %" PRId64 " rows in files of %" PRId64 " in %.1f s\n", rows, file_rows, now() - t0);
    for (int i = 0; i < repeat; i++)
        pass(path, threads);
    return 0;
}
