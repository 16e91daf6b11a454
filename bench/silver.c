/*
 * bench/silver.c: silver apply on a large table: a whole-snapshot rebuild of N rows, then
 * a batch of BIG changes (updates and deletes spread uniformly over the keys), then SMALL
 * changes on the newest 1% of keys (recent orders), then three rounds of SMALL changes
 * spread uniformly, each applied in rewrite mode and, to a copy of the table made before the
 * first round, in write mode deletion-vectors (phase small-uniform-dv), interleaved; then
 * both tables are read back by our Delta reader and compared (row count and an order-free
 * checksum of every cell).
 *
 *   bench_silver DIR ROWS BIG SMALL [FILE_ROWS [THREADS]]
 *
 * DIR is created (it must not exist). Bronze holds the snapshot as operation-0 rows and
 * each batch as one commit of operation 4 (updates, 80%) and 1 (deletes, 20%) rows; the
 * table is order_id BIGINT key, customer STRING, amount DECIMAL(12,2), placed_at
 * TIMESTAMP_NTZ, status INT. Each apply runs in its own child process, so its peak RSS is
 * its own. For the peer run, DIR/duck_big.sql gets a DuckDB script that computes the same
 * latest image per key from the BIG batch's bronze files and writes the full new table
 * from silver's files as they were before it (bench/silver.sh runs it).
 * The same snapshot and BIG batch also go into an scd2 table (silver apply --mode scd2:
 * phases scd2-build and scd2-big), and DIR/duck_scd2.sql gets DuckDB's same close-and-insert
 * in SQL: the BIG batch's latest image per key closes each changed key's current version
 * and opens a new one, over the scd2 table's files as they were before it.
 * THREADS is the apply's threads option (0, the default: one per CPU, at most 8).
 * Prints two lines per phase: rows, seconds (wall), CPU seconds (user + system of the
 * child), rows/s, files rewritten of total, peak RSS; then the apply's own phase times
 * (mcdc_silver_apply_result: reading bronze into the change set, sorting it, the rest of
 * the merge, the commit with the position and the verdict).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcdc/delta.h"
#include "mcdc/finalize.h"
#include "mcdc/pipeline.h"
#include "mcdc/silver.h"
#include "mcdc/time.h"
#include "silver/datafile.h"

static char bronze[512], silver[512], silver2[512], control[512];
static char silver_dv[512], control_dv[512];
static mcdc_silver_mode mode = MCDC_SILVER_SCD1;
static bool use_dv; /* the next phase applies into silver_dv (control_dv) with deletion vectors */
static mcdc_schema *bschema;
static int64_t lsn_counter = 1000;
static int64_t file_rows = 262144;
static int threads = 0;

static void die(const char *what)
{
    const mcdc_error *e = mcdc_error_last();
    fprintf(stderr, "bench_silver: %s: %s\n", what, e->message);
    exit(1);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Append one bronze commit: snapshot rows (op 0) of keys [0, n) when @p snapshot, else
 * @p n changes with keys drawn by @p pick. */
static void append_batch(int64_t n, bool snapshot, int64_t (*pick)(int64_t), int64_t arg)
{
    mcdc_silver_datafile *w = NULL;
    if (mcdc_silver_datafile_open(&w, bronze, bschema) < 0)
        die("writer");
    size_t nc = bschema->n_cols;
    mcdc_value *v = calloc(nc, sizeof *v);
    char lsn[MCDC_LSN_STRLEN], seq[MCDC_LSN_STRLEN], cust[32];
    int64_t commit = ++lsn_counter;
    mcdc_lsn l = mcdc_lsn_from_u64(0, (uint64_t)commit << 20);
    mcdc_lsn_format(lsn, &l);
    for (int64_t i = 0; i < n; i++) {
        memset(v, 0, nc * sizeof *v);
        int64_t key = snapshot ? i : pick(arg);
        int op = snapshot ? 0 : (next_rand() % 5 == 0 ? 1 : 4);
        mcdc_lsn s = mcdc_lsn_from_u64(0, ((uint64_t)commit << 20) + (uint64_t)i);
        mcdc_lsn_format(seq, &s);
        v[0].v.s.ptr = "dbo_orders";
        v[0].v.s.len = 10;
        v[1].v.s.ptr = lsn;
        v[1].v.s.len = 22;
        v[2].is_null = snapshot;
        v[2].v.s.ptr = seq;
        v[2].v.s.len = 22;
        v[3].v.i = op;
        v[4].is_null = snapshot;
        v[4].v.i = 1;
        v[5].v.i = 1790000000000000LL + commit * 1000000LL;
        v[6].v.i = key;
        int len = snprintf(cust, sizeof cust, "customer-%06" PRId64, (key * 7919) % 1000000);
        v[7].v.s.ptr = cust;
        v[7].v.s.len = (size_t)len;
        v[8].v.dec = (mcdc_int128)(key % 100000) * 100 + (int64_t)(next_rand() % 100);
        v[9].v.i = 1780000000000000LL + key * 1000;
        v[10].v.i = (int64_t)(next_rand() % 5);
        v[11].is_null = snapshot;
        v[11].v.i = commit;
        v[12].is_null = !snapshot;
        v[12].v.s.ptr = lsn;
        v[12].v.s.len = 22;
        v[13].is_null = true;
        if (mcdc_silver_datafile_write(w, v) < 0)
            die("write");
    }
    free(v);
    mcdc_delta_file file;
    if (mcdc_silver_datafile_close(w, &file) < 0)
        die("close");
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    if (mcdc_delta_append(bronze, &file, 1, &co, NULL) < 0)
        die("append");
    mcdc_delta_file_clear(&file);
    mcdc_silver_datafile_free(w);
}

static int64_t pick_uniform(int64_t n) { return (int64_t)(next_rand() % (uint64_t)n); }
static int64_t pick_recent(int64_t n) { return n - 1 - (int64_t)(next_rand() % (uint64_t)(n / 100)); }

/* The live data files of a table as a DuckDB list literal. */
static void file_list(FILE *f, const char *table, const char *only_after_version_file)
{
    (void)only_after_version_file;
    mcdc_delta_snapshot *s = NULL;
    if (mcdc_delta_snapshot_open(&s, table, -1) < 0)
        die("list");
    fputc('[', f);
    for (size_t i = 0; i < s->n_files; i++) {
        char *p = mcdc_delta_file_abspath(s, s->files[i].path);
        fprintf(f, "%s'%s'", i ? ", " : "", p);
        free(p);
    }
    fputc(']', f);
    mcdc_delta_snapshot_free(s);
}

/* Run one apply in a child; print its figures. */
static double phase(const char *name, int64_t rows)
{
    int fd[2];
    if (pipe(fd) < 0)
        die("pipe");
    int64_t t0 = mcdc_time_mono_us();
    /* BENCH_SILVER_NOFORK=1: every apply in this process (for profilers that lose the
     * symbols of forked children); peak RSS and CPU are then the whole process's */
    bool nofork = getenv("BENCH_SILVER_NOFORK") != NULL;
    pid_t pid = nofork ? 0 : fork();
    if (pid == 0) {
        if (!nofork)
            close(fd[0]);
        static const char *const keys[] = { "order_id" };
        static const char *const cis[] = { "dbo_orders" };
        mcdc_silver_apply_options o = MCDC_SILVER_APPLY_OPTIONS_INIT;
        o.bronze_name = "bronze.orders";
        o.bronze_path = bronze;
        o.silver_name = mode == MCDC_SILVER_SCD2 ? "silver.orders_history" : "silver.orders";
        o.silver_path = mode == MCDC_SILVER_SCD2 ? silver2 : use_dv ? silver_dv : silver;
        o.mode = mode;
        o.control_path = use_dv ? control_dv : control;
        o.write_mode = use_dv ? MCDC_SILVER_WRITE_DELETION_VECTORS : MCDC_SILVER_WRITE_DEFAULT;
        o.capture_instances = cis;
        o.n_capture_instances = 1;
        o.keys = keys;
        o.n_keys = 1;
        o.target_file_rows = file_rows;
        o.threads = threads;
        mcdc_silver_apply_result r;
        if (mcdc_silver_apply(&o, &r) < 0)
            die(name);
        if (write(fd[1], &r, sizeof r) != (ssize_t)sizeof r)
            _exit(1);
        if (!nofork)
            _exit(0);
        close(fd[1]);
    }
    if (!nofork)
        close(fd[1]);
    mcdc_silver_apply_result r;
    ssize_t got = read(fd[0], &r, sizeof r);
    close(fd[0]);
    int st = 0;
    struct rusage ru;
    if (nofork && getrusage(RUSAGE_SELF, &ru) < 0)
        die("getrusage");
    if ((!nofork && wait4(pid, &st, 0, &ru) < 0) || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
        got != (ssize_t)sizeof r) {
        fprintf(stderr, "bench_silver: %s failed\n", name);
        exit(1);
    }
    double secs = (double)(mcdc_time_mono_us() - t0) / 1e6;
    double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    printf("%-14s %10" PRId64 " rows %8.2f s (CPU %7.2f s) %10.0f rows/s  files rewritten "
           "%4llu of %4llu, written %4llu  peak RSS %6.0f MB  (changed keys %llu)\n",
           name, rows, secs, cpu, rows / secs, (unsigned long long)r.silver_files_rewritten,
           (unsigned long long)r.silver_files_before, (unsigned long long)r.silver_files_added,
           ru.ru_maxrss / 1024.0, (unsigned long long)r.changed_keys);
    printf("%-14s   phases (wall s): read bronze %.2f, sort %.2f, merge %.2f, commit %.2f%s",
           "", r.seconds_read, r.seconds_sort, r.seconds_merge, r.seconds_commit,
           r.silver_files_marked ? "" : "\n");
    if (r.silver_files_marked)
        printf("; %llu files kept with a deletion vector\n",
               (unsigned long long)r.silver_files_marked);
    fflush(stdout);
    return secs;
}

/* Rows and an order-free checksum of a table's rows, read by our Delta reader (deletion
 * vectors applied): a sum of per-row FNV-1a hashes of every cell's bytes. */
static void table_sum(const char *table, uint64_t *rows, uint64_t *sum)
{
    mcdc_delta_snapshot *s = NULL;
    mcdc_delta_scan *sc = NULL;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    if (mcdc_delta_snapshot_open(&s, table, -1) < 0 || mcdc_delta_scan_open(&sc, s, &so) < 0)
        die("table_sum");
    const mcdc_schema *sch = mcdc_delta_scan_schema(sc);
    const mcdc_value *r;
    *rows = *sum = 0;
    int rc;
    while ((rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        uint64_t h = 1469598103934665603ULL;
        for (size_t i = 0; i < sch->n_cols; i++) {
            const unsigned char *p;
            size_t n;
            unsigned char nul = 0xFF;
            if (r[i].is_null) {
                p = &nul;
                n = 1;
            } else if (sch->cols[i].type == MCDC_TYPE_STRING || sch->cols[i].type == MCDC_TYPE_BINARY) {
                p = (const unsigned char *)r[i].v.s.ptr;
                n = r[i].v.s.len;
            } else {
                p = (const unsigned char *)&r[i].v;
                n = sch->cols[i].type == MCDC_TYPE_DECIMAL ? sizeof r[i].v.dec : sizeof r[i].v.i;
            }
            for (size_t k = 0; k < n; k++)
                h = (h ^ p[k]) * 1099511628211ULL;
            h = (h ^ 0x1F) * 1099511628211ULL;
        }
        (*rows)++;
        *sum += h;
    }
    if (rc < 0)
        die("table_sum scan");
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(s);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_silver DIR ROWS BIG SMALL [FILE_ROWS [THREADS]]\n");
        return 2;
    }
    const char *dir = argv[1];
    int64_t rows = atoll(argv[2]), big = atoll(argv[3]), small = atoll(argv[4]);
    if (argc > 5)
        file_rows = atoll(argv[5]);
    if (argc > 6)
        threads = atoi(argv[6]);
    if (rows < 100 || big < 1 || small < 1 || file_rows < 1 || threads < 0) {
        fprintf(stderr, "bench_silver: ROWS >= 100, BIG, SMALL and FILE_ROWS >= 1, THREADS >= 0\n");
        return 2;
    }
    if (mkdir(dir, 0777) < 0) {
        perror(dir);
        return 2;
    }
    snprintf(bronze, sizeof bronze, "%s/bronze", dir);
    snprintf(silver, sizeof silver, "%s/silver", dir);
    snprintf(silver2, sizeof silver2, "%s/silver_scd2", dir);
    snprintf(control, sizeof control, "%s/control", dir);
    mcdc_schema *cap = mcdc_schema_new();
    mcdc_schema_add(cap, "order_id", MCDC_TYPE_LONG, 0, 0, false);
    mcdc_schema_add(cap, "customer", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_schema_add(cap, "amount", MCDC_TYPE_DECIMAL, 12, 2, true);
    mcdc_schema_add(cap, "placed_at", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true);
    mcdc_schema_add(cap, "status", MCDC_TYPE_INT, 0, 0, true);
    if (mcdc_bronze_schema(&bschema, cap, true) < 0 ||
        mcdc_delta_create(bronze, bschema, NULL, 0, NULL, NULL) < 0)
        die("create bronze");
    int64_t t0 = mcdc_time_mono_us();
    append_batch(rows, true, NULL, 0);
    printf("setup: %" PRId64 " snapshot rows written to bronze in %.2f s\n", rows,
           (double)(mcdc_time_mono_us() - t0) / 1e6);
    phase("rebuild", rows);
    mode = MCDC_SILVER_SCD2;
    phase("scd2-build", rows);
    mode = MCDC_SILVER_SCD1;

    append_batch(big, false, pick_uniform, rows);
    char path[600];
    snprintf(path, sizeof path, "%s/duck_big.sql", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "COPY (WITH s AS (SELECT * FROM read_parquet(");
    file_list(f, silver, NULL);
    fprintf(f, ")), b AS (SELECT * FROM read_parquet(");
    /* the BIG batch: bronze's newest commit's files are the ones with _operation > 0;
     * listing them all and filtering keeps the script simple */
    file_list(f, bronze, NULL);
    fprintf(f, ") WHERE _operation > 0), ch AS (SELECT * FROM (SELECT *, row_number() OVER "
               "(PARTITION BY order_id ORDER BY _start_lsn DESC, _command_id DESC NULLS LAST, "
               "_seqval DESC NULLS LAST, _operation DESC) AS rn FROM b) WHERE rn = 1) "
               "SELECT s.* FROM s ANTI JOIN ch USING (order_id) UNION ALL "
               "SELECT order_id, customer, amount, placed_at, status, _start_lsn, _commit_ts "
               "FROM ch WHERE _operation NOT IN (1, 3)) TO '%s/duck_out.parquet' (FORMAT parquet);\n"
               "SELECT count(*) AS n FROM read_parquet('%s/duck_out.parquet')\n", dir, dir);
    fclose(f);
    snprintf(path, sizeof path, "%s/duck_scd2.sql", dir);
    if (!(f = fopen(path, "w")))
        die("duck_scd2.sql");
    fprintf(f, "COPY (WITH s AS (SELECT * FROM read_parquet(");
    file_list(f, silver2, NULL);
    fprintf(f, ")), b AS (SELECT * FROM read_parquet(");
    file_list(f, bronze, NULL);
    fprintf(f, ") WHERE _operation > 0), ch AS (SELECT * FROM (SELECT *, row_number() OVER "
               "(PARTITION BY order_id ORDER BY _start_lsn DESC, _command_id DESC NULLS LAST, "
               "_seqval DESC NULLS LAST, _operation DESC) AS rn FROM b) WHERE rn = 1) "
               "SELECT s.order_id, s.customer, s.amount, s.placed_at, s.status, s._valid_from_lsn, "
               "CASE WHEN s._is_current AND c.k IS NOT NULL THEN c.cl ELSE s._valid_to_lsn END, "
               "s._valid_from_ts, "
               "CASE WHEN s._is_current AND c.k IS NOT NULL THEN c.ct ELSE s._valid_to_ts END, "
               "s._is_current AND c.k IS NULL "
               /* an equi-join only: with s._is_current in the ON clause DuckDB 1.x falls
                * back to a nested loop (27 s instead of 0.7 s on 200,000 rows) */
               "FROM s LEFT JOIN (SELECT order_id AS k, _start_lsn AS cl, _commit_ts AS ct FROM ch) c "
               "ON s.order_id = c.k "
               "UNION ALL SELECT order_id, customer, amount, placed_at, status, _start_lsn, NULL, "
               "_commit_ts, NULL, true FROM ch WHERE _operation NOT IN (1, 3)) "
               "TO '%s/duck_scd2.parquet' (FORMAT parquet);\n"
               "SELECT count(*) AS n FROM read_parquet('%s/duck_scd2.parquet')\n", dir, dir);
    fclose(f);
    phase("big", big);
    mode = MCDC_SILVER_SCD2;
    phase("scd2-big", big);
    mode = MCDC_SILVER_SCD1;
    append_batch(small, false, pick_recent, rows);
    phase("small-recent", small);
    /* small-uniform: the same batch applied to the table as it is (rewrite mode) and to a
     * copy of it (with its control table) in write mode deletion-vectors; three rounds,
     * interleaved, the first of which turns the feature on */
    snprintf(silver_dv, sizeof silver_dv, "%s/silver_dv", dir);
    snprintf(control_dv, sizeof control_dv, "%s/control_dv", dir);
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "cp -a '%s' '%s' && cp -a '%s' '%s'", silver, silver_dv, control,
             control_dv);
    if (system(cmd) != 0)
        die("copy silver");
    double t_rw = 0, t_dv = 0;
    for (int round = 1; round <= 3; round++) {
        append_batch(small, false, pick_uniform, rows);
        use_dv = false;
        t_rw += phase("small-uniform", small);
        use_dv = true;
        t_dv += phase("small-uniform-dv", small);
        use_dv = false;
    }
    printf("small-uniform over 3 rounds: rewrite %.3f s, deletion-vectors %.3f s: %.1fx faster\n",
           t_rw, t_dv, t_rw / t_dv);
    uint64_t n_a, s_a, n_b, s_b;
    table_sum(silver, &n_a, &s_a);
    table_sum(silver_dv, &n_b, &s_b);
    printf("read back by our Delta reader: rewrite %llu rows (sum %016llx), deletion-vectors "
           "%llu rows (sum %016llx): %s\n", (unsigned long long)n_a, (unsigned long long)s_a,
           (unsigned long long)n_b, (unsigned long long)s_b,
           n_a == n_b && s_a == s_b ? "identical" : "DIFFERENT");
    if (n_a != n_b || s_a != s_b)
        return 1;
    mcdc_schema_free(cap);
    mcdc_schema_free(bschema);
    return 0;
}
