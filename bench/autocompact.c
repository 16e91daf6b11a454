/*
 * bench/autocompact.c: what automatic compaction costs a writer that commits one small
 * file per batch, and what it saves its readers (docs/decisions/0005).
 *
 * Two tables with the same bronze-like schema (7 columns) in one directory; N batches of
 * R rows each are appended to both, alternately, one data file per batch: table "on" has
 * delta.autoOptimize.autoCompact=true (defaults otherwise: 50 files of one size tier in a
 * row), table "off" has it false (the peer). Prints per-append latency (p50, p99, max,
 * mean; wall clock, includes writing the file) for both, the live files at the end, and
 * the time to read every row back once (a fresh snapshot and a full scan).
 *
 *   bench_autocompact DIR [N_BATCHES (default 1000)] [ROWS_PER_BATCH (default 3)]
 * DIR must not exist (it is created and left for inspection).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcdc/delta.h"
#include "mcdc/log.h"

#include "timing.h"

static int create(const char *path, const char *auto_compact)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "_start_lsn", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_schema_add(s, "_seqval", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_schema_add(s, "_operation", MCDC_TYPE_INT, 0, 0, true);
    mcdc_schema_add(s, "_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true);
    mcdc_schema_add(s, "order_id", MCDC_TYPE_INT, 0, 0, true);
    mcdc_schema_add(s, "customer", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 12, 2, true);
    mcdc_delta_map conf = { 0 };
    mcdc_delta_map_set(&conf, "delta.autoOptimize.autoCompact", auto_compact);
    int rc = mcdc_delta_create(path, s, NULL, 0, &conf, NULL);
    mcdc_delta_map_clear(&conf);
    mcdc_schema_free(s);
    return rc;
}

/* Write batch @p b (rows lsn-ascending) as one file and append it. */
static int append_batch(const char *path, int64_t b, int rows, double *ms)
{
    double t0 = bench_now_ms();
    mcdc_delta_snapshot *snap = NULL;
    mcdc_delta_writer *w = NULL;
    mcdc_delta_file *files = NULL;
    size_t n_files = 0;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc == 0)
        rc = mcdc_delta_writer_open(&w, snap, NULL);
    for (int i = 0; rc == 0 && i < rows; i++) {
        char lsn[32], seq[32], cust[32];
        int64_t k = b * rows + i;
        snprintf(lsn, sizeof lsn, "0x%020llX", (long long)b * 16);
        snprintf(seq, sizeof seq, "0x%020llX", (long long)k);
        snprintf(cust, sizeof cust, "customer-%lld", (long long)(k % 977));
        mcdc_value row[7];
        memset(row, 0, sizeof row);
        row[0].v.s.ptr = lsn;
        row[0].v.s.len = strlen(lsn);
        row[1].v.s.ptr = seq;
        row[1].v.s.len = strlen(seq);
        row[2].v.i = 2 + (int)(k % 3);
        row[3].v.i = INT64_C(1790000000000000) + b * 1000000;
        row[4].v.i = (int32_t)(k % 100000);
        row[5].v.s.ptr = cust;
        row[5].v.s.len = strlen(cust);
        row[6].v.dec = (mcdc_int128)(k * 37 % 100000);
        rc = mcdc_delta_writer_write(w, row);
    }
    if (rc == 0)
        rc = mcdc_delta_writer_finish(w, &files, &n_files);
    mcdc_delta_writer_free(w);
    mcdc_delta_snapshot_free(snap);
    if (rc == 0)
        rc = mcdc_delta_append(path, files, n_files, NULL, NULL);
    mcdc_delta_files_free(files, n_files);
    *ms = bench_now_ms() - t0;
    return rc;
}

static int read_all(const char *path, double *ms, size_t *n_files, int64_t *rows)
{
    double t0 = bench_now_ms();
    mcdc_delta_snapshot_cache_limit(0); /* a cold read, as another process would do it */
    mcdc_delta_snapshot *snap = NULL;
    mcdc_delta_scan *sc = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc == 0)
        rc = mcdc_delta_scan_open(&sc, snap, NULL);
    const mcdc_value *r;
    *rows = 0;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        (*rows)++;
    }
    *n_files = snap ? snap->n_files : 0;
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    mcdc_delta_snapshot_cache_limit(8);
    *ms = bench_now_ms() - t0;
    return rc;
}

static void report(const char *name, double *lat, int n, const char *path)
{
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += lat[i];
    qsort(lat, (size_t)n, sizeof *lat, bench_cmp_double);
    double read_ms = 0;
    size_t files = 0;
    int64_t rows = 0;
    if (read_all(path, &read_ms, &files, &rows) < 0)
        fprintf(stderr, "%s: read: %s\n", name, mcdc_error_last()->message);
    printf("%-4s append p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  mean %7.2f ms | "
           "%5zu files, %lld rows, read all %8.1f ms\n", name, lat[n / 2],
           lat[(size_t)((double)n * 0.99)], lat[n - 1], sum / n, files, (long long)rows, read_ms);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_autocompact DIR [N_BATCHES] [ROWS_PER_BATCH]\n");
        return 2;
    }
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    int rows = argc > 3 ? atoi(argv[3]) : 3;
    if (n < 10 || rows < 1) {
        fprintf(stderr, "bench_autocompact: N_BATCHES >= 10 and ROWS_PER_BATCH >= 1\n");
        return 2;
    }
    char on[4096], off[4096];
    snprintf(on, sizeof on, "%s/on", argv[1]);
    snprintf(off, sizeof off, "%s/off", argv[1]);
    if (create(on, "true") < 0 || create(off, "false") < 0) {
        fprintf(stderr, "bench_autocompact: %s\n", mcdc_error_last()->message);
        return 1;
    }
    double *lat_on = calloc((size_t)n, sizeof *lat_on), *lat_off = calloc((size_t)n, sizeof *lat_off);
    if (!lat_on || !lat_off)
        return 1;
    printf("bench_autocompact %s %d %d: %d batches of %d rows, one file each, into two tables\n",
           argv[1], n, rows, n, rows);
    for (int b = 0; b < n; b++) {
        if (append_batch(on, b, rows, &lat_on[b]) < 0 || append_batch(off, b, rows, &lat_off[b]) < 0) {
            fprintf(stderr, "bench_autocompact: batch %d: %s\n", b, mcdc_error_last()->message);
            return 1;
        }
    }
    report("on", lat_on, n, on);
    report("off", lat_off, n, off);
    double s_on = 0, s_off = 0;
    for (int i = 0; i < n; i++) {
        s_on += lat_on[i];
        s_off += lat_off[i];
    }
    printf("mean append on / off: %.2f\n", s_on / s_off);
    free(lat_on);
    free(lat_off);
    return 0;
}
