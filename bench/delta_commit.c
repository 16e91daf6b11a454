/*
 * bench/delta_commit.c: latency of Delta commits and snapshot loads.
 *
 *   bench_delta_commit [DIR] [N]
 *
 * 1. fresh: N one-row copy-on-write commits on a new table (snapshot, write a 1-row
 *    Parquet file, commit remove + add; a checkpoint is due every 10 versions).
 * 2. loaded: the same on a table whose state carries a week of tombstones (100,000
 *    removes within the retention) and a day of per-second facts files (86,400 adds),
 *    loaded from a checkpoint; then its peer, the same commits with no checkpoint at all
 *    (what the machine's noise alone does to the tail).
 * 3. snapshot load of a table with 10,000 commits of 10 files each (100,000 files), with a
 *    checkpoint at 10,000 and without one (JSON replay): cold (the snapshot cache off, as
 *    a new process loads it) and warm (the cache on, one commit by another writer since
 *    the last load). The cold load from the checkpoint has a peer: our Parquet reader
 *    reading that checkpoint file's action columns alone (each row as its leaf columns'
 *    entries; and, for comparison, each row as a JSON object).
 * Every latency is printed as wall and CPU time of the calling thread (the machine may be
 * shared: CPU time is the figure that does not depend on the load average, printed at the
 * start). Checkpoints are written by the background writer (delta/checkpoint_bg.c) while
 * the commits go on; each commit phase ends by waiting for them, and prints that wait.
 * The peer is the floor every commit pays: a durable create-without-replace of the same
 * commit bytes (temp, fsync, link, fsync dir); the ratio is printed next to each p50.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "delta/internal.h"
#include "mcdc/delta.h"
#include "mcdc/fs.h"
#include "mcdc/parquet.h"

#include "disk.h"
#include "timing.h"

/* CPU time of the calling thread: the commit's own work, not the background checkpoint
 * writer's, which runs in another thread of the process */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int64_t g_counter;

/* build: replace the single row file with a new one holding counter+1 */
static int build_cow(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n,
                     void *payload)
{
    (void)payload;
    *out = calloc(4, sizeof **out);
    *n = 0;
    for (size_t i = 0; i < snap->n_files; i++) {
        bool found;
        mcdc_delta_map_get(&snap->files[i].tags, "single", &found);
        if (found)
            mcdc_delta_remove_of(&(*out)[(*n)++], &snap->files[i], mcdc_delta__now_ms());
    }
    mcdc_delta_writer *w;
    int rc = mcdc_delta_writer_open(&w, snap, NULL);
    if (rc < 0)
        return rc;
    mcdc_value row[2] = { { .is_null = false }, { .is_null = false } };
    row[0].v.i = ++g_counter;
    row[1].v.s.ptr = "x";
    row[1].v.s.len = 1;
    mcdc_delta_file *files;
    size_t nf;
    if ((rc = mcdc_delta_writer_write(w, row)) == 0)
        rc = mcdc_delta_writer_finish(w, &files, &nf);
    mcdc_delta_writer_free(w);
    if (rc < 0)
        return rc;
    (*out)[*n].kind = MCDC_DELTA_ACTION_ADD;
    mcdc_delta_file_copy(&(*out)[*n].u.file, &files[0]);
    mcdc_delta_map_set(&(*out)[*n].u.file.tags, "single", "1");
    (*n)++;
    mcdc_delta_files_free(files, nf);
    return 0;
}

static void create_table(const char *t)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(s, "v", MCDC_TYPE_STRING, 0, 0, true);
    if (mcdc_delta_create(t, s, NULL, 0, NULL, NULL) < 0) {
        fprintf(stderr, "create: %s\n", mcdc_error_last()->message);
        exit(1);
    }
    mcdc_schema_free(s);
}

static void run_cow(const char *label, const char *t, int n, double peer_p50, bool no_checkpoint)
{
    double *lat = malloc((size_t)n * sizeof *lat);
    double *cpu = malloc((size_t)n * sizeof *cpu);
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.no_checkpoint = no_checkpoint;
    o.operation = "MERGE";
    o.read_pred.op = MCDC_DELTA_PRED_ALL;
    for (int i = 0; i < n; i++) {
        double t0 = bench_now_ms(), c0 = cpu_ms();
        if (mcdc_delta_commit(t, build_cow, NULL, &o, NULL) < 0) {
            fprintf(stderr, "commit: %s\n", mcdc_error_last()->message);
            exit(1);
        }
        lat[i] = bench_now_ms() - t0;
        cpu[i] = cpu_ms() - c0;
    }
    /* the checkpoints the commits asked for, written in the background, end here so the
     * next phase runs alone */
    double w0 = bench_now_ms();
    mcdc_delta_checkpoints_wait();
    double waited = bench_now_ms() - w0;
    double p50 = bench_pct(lat, (size_t)n, 0.50), p99 = bench_pct(lat, (size_t)n, 0.99);
    printf("%-44s n=%d  p50 %8.3f ms  p99 %8.3f ms  (p99 / p50: %.1fx; p50 / durable-create peer: "
           "%.1fx)\n", label, n, p50, p99, p99 / p50, p50 / peer_p50);
    double cp50 = bench_pct(cpu, (size_t)n, 0.50), cp99 = bench_pct(cpu, (size_t)n, 0.99);
    printf("%-44s       cpu p50 %8.3f ms  p99 %8.3f ms  (p99 / p50: %.1fx; then %.0f ms waiting "
           "for background checkpoints)\n", "", cp50, cp99, cp99 / cp50, waited);
    free(lat);
    free(cpu);
}

/* Write a JSON commit directly (no fsync: setup only). */
static void put_commit(const char *t, int64_t v, const char *body, size_t len)
{
    char p[8300];
    if (snprintf(p, sizeof p, "%s/_delta_log/%020lld.json", t, (long long)v) >= (int)sizeof p)
        exit(1);
    FILE *f = fopen(p, "w");
    fwrite(body, 1, len, f);
    fclose(f);
}

static void add_line(mcdc_buf *b, const char *prefix, int64_t i, int64_t ts, bool remove)
{
    if (remove)
        mcdc_buf_printf(b, "{\"remove\":{\"path\":\"%s-%lld.parquet\",\"deletionTimestamp\":%lld,"
                        "\"dataChange\":true,\"extendedFileMetadata\":true,\"partitionValues\":{},"
                        "\"size\":600}}\n", prefix, (long long)i, (long long)ts);
    else
        mcdc_buf_printf(b, "{\"add\":{\"path\":\"%s-%lld.parquet\",\"partitionValues\":{},\"size\":600,"
                        "\"modificationTime\":%lld,\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":1,"
                        "\\\"minValues\\\":{\\\"id\\\":%lld},\\\"maxValues\\\":{\\\"id\\\":%lld},"
                        "\\\"nullCount\\\":{\\\"id\\\":0}}\"}}\n", prefix, (long long)i, (long long)ts,
                        (long long)i, (long long)i);
}

static double peer_create(const char *dir, int n)
{
    double *lat = malloc((size_t)n * sizeof *lat);
    char body[1024];
    memset(body, 'x', sizeof body);
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "peer-%d.json", i);
        double t0 = bench_now_ms();
        mcdc_delta__create_noreplace(dir, name, body, sizeof body);
        lat[i] = bench_now_ms() - t0;
    }
    double p50 = bench_pct(lat, (size_t)n, 0.5);
    free(lat);
    return p50;
}

/* Snapshot loads of @p t: cold (cache off) and warm (cache on, after one more commit
 * written as another process would, versions @p next ...). */
static double load_figures(const char *label, const char *t, int64_t now, int64_t next, double *cold_cpu)
{
    double lat[7], cpu[7];
    mcdc_delta_snapshot_cache_limit(0);
    for (int i = 0; i < 5; i++) {
        mcdc_delta_snapshot *s;
        double a = bench_now_ms(), c = cpu_ms();
        if (mcdc_delta_snapshot_open(&s, t, -1) < 0) {
            fprintf(stderr, "snapshot: %s\n", mcdc_error_last()->message);
            exit(1);
        }
        lat[i] = bench_now_ms() - a;
        cpu[i] = cpu_ms() - c;
        mcdc_delta_snapshot_free(s);
    }
    char l[128];
    snprintf(l, sizeof l, "snapshot load, cold, %s", label);
    double cold = bench_pct(lat, 5, 0.5);
    *cold_cpu = bench_pct(cpu, 5, 0.5);
    printf("%-44s %8.1f ms  cpu %8.1f ms  (100,000 files)\n", l, cold, *cold_cpu);
    mcdc_delta_snapshot_cache_limit(8);
    mcdc_delta_snapshot *s;
    if (mcdc_delta_snapshot_open(&s, t, -1) < 0)
        exit(1);
    mcdc_delta_snapshot_free(s);
    for (int i = 0; i < 7; i++) {
        mcdc_buf c = MCDC_BUF_INIT((size_t)1 << 20);
        add_line(&c, "w", next * 100 + i, now, false);
        put_commit(t, next + i, c.ptr, c.len);
        mcdc_buf_dispose(&c);
        double a = bench_now_ms(), cc = cpu_ms();
        if (mcdc_delta_snapshot_open(&s, t, -1) < 0 || s->version != next + i) {
            fprintf(stderr, "snapshot: wrong version\n");
            exit(1);
        }
        lat[i] = bench_now_ms() - a;
        cpu[i] = cpu_ms() - cc;
        mcdc_delta_snapshot_free(s);
    }
    printf("%-44s %8.3f ms  cpu %8.3f ms\n", "snapshot load, warm, 1 new commit", bench_pct(lat, 7, 0.5),
           bench_pct(cpu, 7, 0.5));
    return cold;
}

/* The peer of a cold load from a checkpoint: our Parquet reader reading the checkpoint
 * file's action columns alone, nothing parsed into actions: every row as the entries of
 * its leaf columns (@p json false: the reader's cheapest way to read nested columns, what
 * the cold load itself reads through), or as a JSON object (@p json true: what the cold
 * load read through before it decoded columns itself). Median of 5; the CPU median in
 * *cpu_out. */
static double reader_peer(const char *cp_path, bool json, double *cpu_out)
{
    static const char *const cols[] = { "txn", "add", "remove", "metaData", "protocol",
                                        "domainMetadata" };
    double lat[5], cpu[5];
    for (int i = 0; i < 5; i++) {
        double a = bench_now_ms(), c = cpu_ms();
        mcdc_parquet_reader *r;
        if (mcdc_parquet_reader_open(&r, cp_path, NULL) < 0 ||
            mcdc_parquet_reader_select(r, cols, sizeof cols / sizeof cols[0]) < 0) {
            fprintf(stderr, "reader: %s\n", mcdc_error_last()->message);
            exit(1);
        }
        json_t *j;
        const mcdc_parquet_leaf_run *runs;
        int64_t rows = 0;
        int rc;
        if (json) {
            while ((rc = mcdc_parquet_reader_next_json(r, &j)) > 0) {
                json_decref(j);
                rows++;
            }
        } else {
            while ((rc = mcdc_parquet_reader_next_leaves(r, &runs)) > 0)
                rows++;
        }
        mcdc_parquet_reader_free(r);
        if (rc < 0 || rows < 100000) {
            fprintf(stderr, "reader: %s\n", rc < 0 ? mcdc_error_last()->message : "too few rows");
            exit(1);
        }
        lat[i] = bench_now_ms() - a;
        cpu[i] = cpu_ms() - c;
    }
    *cpu_out = bench_pct(cpu, 5, 0.5);
    return bench_pct(lat, 5, 0.5);
}

int main(int argc, char **argv)
{
    const char *base = argc > 1 ? argv[1] : "/tmp/mcdc-bench-delta";
    int n = argc > 2 ? atoi(argv[2]) : 200;
    char cmd[8400];
    if (snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", base, base) >= (int)sizeof cmd)
        return 1;
    if (system(cmd) != 0)
        return 1;
    bench_refuse_memory_fs("bench_delta_commit", base);
    char fresh[8300], loaded[8300], big[8300], peer[8300];
    if (snprintf(fresh, sizeof fresh, "%s/fresh", base) >= (int)sizeof fresh)
        return 1;
    if (snprintf(loaded, sizeof loaded, "%s/loaded", base) >= (int)sizeof loaded)
        return 1;
    if (snprintf(big, sizeof big, "%s/big", base) >= (int)sizeof big)
        return 1;
    if (snprintf(peer, sizeof peer, "%s/peer", base) >= (int)sizeof peer)
        return 1;
    double la[3] = { 0, 0, 0 };
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        if (fscanf(lf, "%lf %lf %lf", &la[0], &la[1], &la[2]) != 3)
            la[0] = -1;
        fclose(lf);
    }
    printf("load average at start: %.2f %.2f %.2f; snapshot cache: MCDC_SNAPSHOT_CACHE=%s\n",
           la[0], la[1], la[2], getenv("MCDC_SNAPSHOT_CACHE") ? getenv("MCDC_SNAPSHOT_CACHE")
                                                              : "(default)");
    mcdc_fs_mkdirs(peer);
    double peer_p50 = peer_create(peer, n);
    printf("%-44s n=%d  p50 %8.3f ms\n", "peer: durable create-without-replace (1 KiB)", n, peer_p50);

    create_table(fresh);
    run_cow("one-row copy-on-write commit, fresh table", fresh, n, peer_p50, false);

    /* loaded: 86,400 live files + 100,000 tombstones in a checkpoint at version 1 */
    create_table(loaded);
    mcdc_buf b = MCDC_BUF_INIT((size_t)1 << 30);
    int64_t now = mcdc_delta__now_ms();
    for (int64_t i = 0; i < 86400; i++)
        add_line(&b, "facts", i, now - (86400 - i) * 1000, false);
    for (int64_t i = 0; i < 100000; i++)
        add_line(&b, "old", i, now - (int64_t)(7 * 86400000.0 * (double)i / 100000.0), true);
    put_commit(loaded, 1, b.ptr, b.len);
    mcdc_buf_dispose(&b);
    double t0 = bench_now_ms(), tc = cpu_ms();
    if (mcdc_delta_checkpoint(loaded, 1, NULL) < 0) {
        fprintf(stderr, "checkpoint: %s\n", mcdc_error_last()->message);
        return 1;
    }
    printf("%-44s %8.1f ms  cpu %8.1f ms\n", "setup: checkpoint of 186,400 actions",
           bench_now_ms() - t0, cpu_ms() - tc);
    run_cow("one-row copy-on-write commit, loaded table", loaded, n / 4 > 10 ? n / 4 : 10, peer_p50, false);
    /* the peer of its tail: the same commits with no checkpoint at all */
    run_cow("peer: the same, no checkpoints", loaded, n / 4 > 10 ? n / 4 : 10, peer_p50, true);

    /* 10,000 commits of 10 files each */
    create_table(big);
    for (int64_t v = 1; v <= 10000; v++) {
        mcdc_buf c = MCDC_BUF_INIT((size_t)1 << 20);
        for (int k = 0; k < 10; k++)
            add_line(&c, "f", v * 10 + k, now, false);
        put_commit(big, v, c.ptr, c.len);
        mcdc_buf_dispose(&c);
    }
    double cold_cpu;
    load_figures("10,000 JSON commits", big, now, 10001, &cold_cpu);
    t0 = bench_now_ms();
    double c0 = cpu_ms();
    if (mcdc_delta_checkpoint(big, 10007, NULL) < 0) {
        fprintf(stderr, "checkpoint: %s\n", mcdc_error_last()->message);
        return 1;
    }
    printf("%-44s %8.1f ms  cpu %8.1f ms\n", "setup: checkpoint of 100,000 files", bench_now_ms() - t0,
           cpu_ms() - c0);
    double cold = load_figures("checkpoint + commits", big, now, 10008, &cold_cpu);
    char cp_path[8400];
    snprintf(cp_path, sizeof cp_path, "%s/_delta_log/%020d.checkpoint.parquet", big, 10007);
    double rd_cpu, rd = reader_peer(cp_path, false, &rd_cpu);
    printf("%-44s %8.1f ms  cpu %8.1f ms  (cold load / reader: %.1fx, cpu %.1fx)\n",
           "peer: Parquet reader, leaf columns", rd, rd_cpu, cold / rd, cold_cpu / rd_cpu);
    rd = reader_peer(cp_path, true, &rd_cpu);
    printf("%-44s %8.1f ms  cpu %8.1f ms  (cold load / reader: %.1fx, cpu %.1fx)\n",
           "peer: Parquet reader, rows as JSON", rd, rd_cpu, cold / rd, cold_cpu / rd_cpu);
    mcdc_delta_cache_stats cs;
    mcdc_delta_snapshot_cache_stats(&cs);
    printf("snapshot cache: %llu hits, %llu incremental (%llu commits read), %llu full loads, "
           "%llu copies\n", (unsigned long long)cs.hits, (unsigned long long)cs.incremental,
           (unsigned long long)cs.commits_read, (unsigned long long)cs.full,
           (unsigned long long)cs.copies);
    if (snprintf(cmd, sizeof cmd, "rm -rf '%s'", base) >= (int)sizeof cmd)
        return 1;
    return system(cmd) == 0 ? 0 : 1;
}
