/*
 * cli/cmd_demo.c: `mssql-cdc demo`: a business day on the embedded simulator, streamed
 * into bronze, facts, control and silver tables, with a report.
 *
 * The demo is a script of the tool's own commands, run as a user would type them (each
 * one is appended to DIR/commands.sh, so every step can be replayed by hand): it makes
 * the source's activity in-process through the simulator's API, then after each hour
 * runs `stream` for both tables (with --bootstrap, --facts and --control) and
 * `silver apply`, so the verdict moves hour by hour. Safe to rerun: an hour whose
 * activity is already in the simulator is not made again, and the streams and silver
 * resume from their checkpoints and positions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/fs.h"
#include "mcdc/proc.h"
#include "mcdc/sim.h"
#include "mcdc/time.h"

static const mcdc_opt opts[] = {
    { "dir", 0, MCDC_OPT_VALUE, "DIR", "where the demo keeps its files (default ./demo)" },
    { 0 }
};

#define DAY "2026-10-01"
#define FIRST_HOUR 8
#define LAST_HOUR 17 /* the last hour with activity: 17:00-18:00 */
#define LUNCH 12     /* a quiet hour: only idle entries move max_lsn */

typedef struct demo {
    char dir[MCDC_PATH_MAX];
    char db[MCDC_PATH_MAX + 16];
    char lake[MCDC_PATH_MAX + 16];
    char log[MCDC_PATH_MAX + 16];
    char script[MCDC_PATH_MAX + 16];
    char self[MCDC_PATH_MAX];
    uint64_t rng;
} demo;

/* ---- running our own commands ------------------------------------------------------ */

static void shell_quote(mcdc_buf *b, const char *s)
{
    if (s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,@")] == '\0') {
        mcdc_buf_puts(b, s);
        return;
    }
    mcdc_buf_putc(b, '\'');
    for (; *s; s++)
        *s == '\'' ? mcdc_buf_puts(b, "'\\''") : mcdc_buf_putc(b, *s);
    mcdc_buf_putc(b, '\'');
}

/* Run `mssql-cdc --warehouse LAKE ARGS...`; its stdout is captured into @p out (may be
 * NULL) and its stderr appended to DIR/demo.log. Returns the exit code, or -1. The command
 * is first appended to DIR/commands.sh, a local log of what the demo ran (core's append
 * helpers: the demo directory is a local scratch directory by nature, with the simulator's
 * SQLite file in it, so it does not go through the storage seam). */
static int sh(demo *d, mcdc_buf *out, const char *const *args)
{
    const char *argv[40];
    int n = 0, ec = -1;
    argv[n++] = "mssql-cdc";
    argv[n++] = "--warehouse";
    argv[n++] = d->lake;
    for (int i = 0; args[i] && n < 39; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    mcdc_buf line = MCDC_BUF_INIT(1 << 20);
    mcdc_buf_puts(&line, "mssql-cdc --warehouse lake");
    for (int i = 3; i < n; i++) {
        const char *arg = argv[i], *pre = !strncmp(arg, "sim:", 4) ? "sim:" : "";
        size_t n_dir = strlen(d->dir);
        mcdc_buf_putc(&line, ' ');
        if (!strncmp(arg + strlen(pre), d->dir, n_dir) && arg[strlen(pre) + n_dir] == '/') {
            mcdc_buf_puts(&line, pre); /* paths inside the demo directory are written relative to it */
            shell_quote(&line, arg + strlen(pre) + n_dir + 1);
        } else {
            shell_quote(&line, arg);
        }
    }
    mcdc_buf_putc(&line, '\n');
    int fd = -1;
    if (mcdc_fs_append_open(&fd, d->script) < 0 || mcdc_fs_append(fd, line.ptr, line.len, d->script) < 0)
        mcdc_error_clear(); /* the script is a courtesy: the demo goes on without it */
    mcdc_fs_close(fd);
    mcdc_buf_dispose(&line);
    if (mcdc_proc_run(&ec, d->self, argv, out, d->log) < 0) {
        mcdc_error_clear();
        return -1;
    }
    return ec;
}

/* ---- the business day -------------------------------------------------------------- */

static uint32_t rnd(demo *d, uint32_t n)
{
    d->rng ^= d->rng << 13;
    d->rng ^= d->rng >> 7;
    d->rng ^= d->rng << 17;
    return (uint32_t)(d->rng % n);
}

static int64_t at(int hour, int minute, int second)
{
    char t[40];
    int64_t us = 0;
    snprintf(t, sizeof t, DAY "T%02d:%02d:%02d", hour, minute, second);
    mcdc_time_parse(&us, t);
    return us;
}

static const char *const first_names[] = {"Ana", "Bruno", "Chloé", "Dmitri", "Eva", "Farid", "Grace", "Hiro",
                                          "Ines", "Jonas", "Kemal", "Lena", "Mateo", "Nora", "Omar", "Priya"};
static const char *const cities[] = {"Lisbon", "Berlin", "Seattle", "São Paulo", "Osaka", "Nairobi", NULL};
static const char *const statuses[] = {"packed", "shipped", "delivered"};

static int exec_at(mcdc_sim *sim, const char *sql, int64_t t)
{
    mcdc_sim_exec_result r;
    return mcdc_sim_exec(sim, sql, MCDC_SIM_NOW, t, &r);
}

/* The activity of one hour; captures every 5 minutes (idle entries in quiet spells). */
static int make_hour(demo *d, mcdc_sim *sim, int hour)
{
    char sql[1024];
    int rc = 0;
    d->rng = 0x9E3779B97F4A7C15ULL ^ (uint64_t)hour * 0x100000001B3ULL;
    int64_t events[64];
    int n = hour == LUNCH ? 0 : 18 + (int)rnd(d, 20);
    for (int i = 0; i < n; i++)
        events[i] = at(hour, 0, 0) + (int64_t)rnd(d, 3600 - 60) * MCDC_US_PER_SEC + MCDC_US_PER_SEC;
    for (int i = 1; i < n; i++) /* insertion sort: commit order is time order */
        for (int k = i; k > 0 && events[k] < events[k - 1]; k--) {
            int64_t t = events[k]; events[k] = events[k - 1]; events[k - 1] = t;
        }
    int capture_min = 5;
    for (int i = 0; i <= n && rc == 0; i++) {
        int64_t t = i < n ? events[i] : at(hour + 1, 0, 0);
        while (rc == 0 && capture_min <= 60 && at(hour, 0, 0) + capture_min * MCDC_US_PER_MIN <= t) {
            mcdc_sim_capture_result cr;
            rc = mcdc_sim_capture(sim, at(hour, 0, 0) + capture_min * MCDC_US_PER_MIN, NULL, &cr);
            capture_min += 5;
        }
        if (i == n || rc < 0)
            break;
        int id = hour * 100 + i, cust = 1 + (int)rnd(d, 40);
        uint32_t kind = rnd(d, 10);
        if (hour == FIRST_HOUR && i < 12) {
            /* the morning's new customers */
            const char *city = cities[rnd(d, 7)];
            snprintf(sql, sizeof sql,
                     "INSERT INTO dbo.customers VALUES (%d, N'%s %c.', 'c%d@example.com', %s%s%s, %d.%02d, '" DAY " %02d:%02d:00')",
                     i + 1, first_names[i % 16], 'A' + (int)rnd(d, 26), i + 1, city ? "N'" : "", city ? city : "NULL",
                     city ? "'" : "", 500 + (int)rnd(d, 5000), (int)rnd(d, 100), hour, (int)(events[i] / MCDC_US_PER_MIN % 60));
        } else if (kind < 6) {
            snprintf(sql, sizeof sql,
                     "INSERT INTO dbo.orders VALUES (%d, %d, %d.%02d, 'placed', '" DAY " %02d:%02d:%02d.%03d', NULL, %s)",
                     id, 1 + (cust % 12), 5 + (int)rnd(d, 400), (int)rnd(d, 100), hour,
                     (int)(events[i] / MCDC_US_PER_MIN % 60), (int)(events[i] / MCDC_US_PER_SEC % 60), (int)rnd(d, 1000),
                     rnd(d, 4) ? "NULL" : "N'gift wrap, please'");
        } else if (kind < 9 && hour > FIRST_HOUR) {
            int prev = (hour - 1 == LUNCH ? hour - 2 : hour - 1) * 100 + (int)rnd(d, 18);
            snprintf(sql, sizeof sql, "UPDATE dbo.orders SET status = '%s', shipped_on = '" DAY "' WHERE order_id = %d",
                     statuses[rnd(d, 3)], prev);
        } else if (hour > FIRST_HOUR) {
            if (rnd(d, 2))
                snprintf(sql, sizeof sql, "DELETE FROM dbo.orders WHERE order_id = %d AND status = 'placed'",
                         (hour - 1 == LUNCH ? hour - 2 : hour - 1) * 100 + (int)rnd(d, 18));
            else
                snprintf(sql, sizeof sql, "UPDATE dbo.customers SET credit_limit = credit_limit + 250, city = %s WHERE customer_id = %d",
                         rnd(d, 3) ? "city" : "NULL", 1 + (int)rnd(d, 12));
        } else {
            snprintf(sql, sizeof sql, "INSERT INTO dbo.orders VALUES (%d, %d, 19.99, 'placed', '" DAY " %02d:30:00', NULL, NULL)",
                     id, 1 + (int)rnd(d, 12), hour);
        }
        rc = exec_at(sim, sql, events[i]);
    }
    return rc;
}

/* ---- the pipeline after each hour --------------------------------------------------- */

static int stream_table(demo *d, const char *ci, const char *bronze, const char *app, const char *ck)
{
    char src[MCDC_PATH_MAX + 32], ckdir[MCDC_PATH_MAX + 32];
    snprintf(src, sizeof src, "sim:%s", d->db);
    snprintf(ckdir, sizeof ckdir, "%s/checkpoints/%s", d->dir, ck);
    const char *args[] = {"stream", "--source", src, "--capture-instance", ci, "--target", bronze, "--app-id", app,
                          "--checkpoint", ckdir, "--facts", "ops.ingestion_facts", "--control", "ops.table_finalization",
                          "--bootstrap", "--trigger", "available-now", NULL};
    return sh(d, NULL, args);
}

static int apply_silver(demo *d, const char *bronze, const char *silver, const char *ci, const char *keys)
{
    const char *args[] = {"silver", "apply", "--bronze", bronze, "--silver", silver, "--capture-instance", ci,
                          "--keys", keys, "--control", "ops.table_finalization", "--facts", "ops.ingestion_facts", NULL};
    return sh(d, NULL, args);
}

static int verdict_of(demo *d, const char *table, char out[64])
{
    mcdc_buf o = MCDC_BUF_INIT(1 << 20);
    const char *args[] = {"finalization", "show", "--control", "ops.table_finalization", "--table", table,
                          "--format", "jsonl", NULL};
    int ec = sh(d, &o, args);
    const char *p = o.ptr ? strstr(o.ptr, "\"finalized_until\":\"") : NULL;
    snprintf(out, 64, "%s", "none yet");
    if (ec == 0 && p) {
        p += strlen("\"finalized_until\":\"");
        snprintf(out, 64, "%.16s", p);
        out[10] = ' ';
    }
    mcdc_buf_dispose(&o);
    return ec;
}

static long count_rows(demo *d, const char *table)
{
    mcdc_buf o = MCDC_BUF_INIT(1 << 26);
    const char *args[] = {"table", "cat", table, "--format", "csv", NULL};
    long n = -1;
    if (sh(d, &o, args) == 0) {
        n = 0;
        for (size_t i = 0; i < o.len; i++)
            n += o.ptr[i] == '\n';
        n -= 1; /* header */
    }
    mcdc_buf_dispose(&o);
    return n;
}

static int fail(const char *step, int ec)
{
    return mcdc_cli_error(ec > 0 ? ec : MCDC_EXIT_RUNTIME, "see demo.log in the demo directory",
                          "demo: %s failed (exit %d)", step, ec);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    demo d;
    memset(&d, 0, sizeof d);
    const char *dir = mcdc_cli_get(a, "dir") ? mcdc_cli_get(a, "dir") : "demo";
    if (mcdc_cli_local_path_check(a, "dir"))
        return MCDC_EXIT_USAGE;
    if (mcdc_fs_mkdirs(dir) < 0)
        return mcdc_cli_fail();
    if (mcdc_fs_realpath(d.dir, dir) < 0)
        return mcdc_cli_usage_error(a->cmd, "--dir %s: %s", dir, mcdc_error_last()->message);
    if (mcdc_proc_self_exe(d.self) < 0)
        return mcdc_cli_usage_error(a->cmd, "cannot find the mssql-cdc executable: %s", mcdc_error_last()->message);
    snprintf(d.db, sizeof d.db, "%s/source.sqlite", d.dir);
    snprintf(d.lake, sizeof d.lake, "%s/lake", d.dir);
    snprintf(d.log, sizeof d.log, "%s/demo.log", d.dir);
    snprintf(d.script, sizeof d.script, "%s/commands.sh", d.dir);
    int64_t t0 = mcdc_time_mono_us();

    printf("mssql-cdc demo in %s\n", d.dir);
    printf("source: the embedded SQL Server CDC simulator (%s), tables dbo.customers and dbo.orders\n\n", "source.sqlite");
    mcdc_sim *sim = NULL;
    bool fresh = !mcdc_fs_exists(d.db);
    if (mcdc_sim_open(&sim, d.db, true, NULL) < 0)
        return mcdc_cli_fail();
    if (fresh) {
        static const char head[] = "#!/bin/sh\n# The commands the demo ran, in order (activity was made "
                                   "through the simulator's API).\ncd \"$(dirname \"$0\")\"\n";
        if (mcdc_fs_write_atomic(d.script, head, sizeof head - 1) < 0)
            mcdc_error_clear(); /* the script is a courtesy */
        if (mcdc_sim_create_table(sim, "dbo.customers",
                                  "customer_id INT NOT NULL, name NVARCHAR(60) NOT NULL, email VARCHAR(80) NULL, "
                                  "city NVARCHAR(40) NULL, credit_limit MONEY NULL, created_at DATETIME2(3) NULL",
                                  "customer_id", NULL, at(7, 50, 0)) < 0 ||
            mcdc_sim_create_table(sim, "dbo.orders",
                                  "order_id INT NOT NULL, customer_id INT NOT NULL, amount DECIMAL(12,2) NOT NULL, "
                                  "status VARCHAR(12) NOT NULL, placed_at DATETIME2(3) NOT NULL, shipped_on DATE NULL, "
                                  "note NVARCHAR(100) NULL",
                                  "order_id", NULL, at(7, 50, 0)) < 0 ||
            mcdc_sim_exec(sim, "INSERT INTO dbo.customers VALUES (100, N'Walk-in', NULL, NULL, NULL, NULL)",
                          MCDC_SIM_NOW, at(7, 55, 0), &(mcdc_sim_exec_result){0}) < 0 ||
            mcdc_sim_capture(sim, at(7, 58, 0), NULL, &(mcdc_sim_capture_result){0}) < 0) {
            int ec = mcdc_cli_fail();
            mcdc_sim_close(sim);
            return ec;
        }
    }
    mcdc_sim_close(sim);

    printf("%-13s %8s   %-18s %-18s\n", "hour (UTC)", "changes", "verdict customers", "verdict orders");
    int n_resumed = 0;
    for (int hour = FIRST_HOUR; hour <= LAST_HOUR; hour++) {
        mcdc_sim_status st;
        int64_t changes = 0;
        if (mcdc_sim_open(&sim, d.db, false, NULL) < 0 || mcdc_sim_get_status(sim, &st) < 0) {
            mcdc_sim_close(sim);
            return mcdc_cli_fail();
        }
        bool made = st.clock_us >= at(hour + 1, 0, 0);
        int64_t before = 0, after = 0;
        for (size_t i = 0; i < st.n_inst; i++)
            before += st.inst[i].change_rows;
        mcdc_sim_status_dispose(&st);
        if (!made && make_hour(&d, sim, hour) < 0) {
            int ec = mcdc_cli_fail();
            mcdc_sim_close(sim);
            return ec;
        }
        if (mcdc_sim_get_status(sim, &st) == 0) {
            for (size_t i = 0; i < st.n_inst; i++)
                after += st.inst[i].change_rows;
            mcdc_sim_status_dispose(&st);
        }
        mcdc_sim_close(sim);
        changes = after - before;
        if (made && hour < LAST_HOUR) { /* an earlier run made it: stream once, at the end */
            n_resumed++;
            continue;
        }
        int ec;
        if ((ec = stream_table(&d, "dbo_customers", "bronze.customers", "demo-customers", "customers")) != 0)
            return fail("stream of dbo_customers", ec);
        if ((ec = stream_table(&d, "dbo_orders", "bronze.orders", "demo-orders", "orders")) != 0)
            return fail("stream of dbo_orders", ec);
        if ((ec = apply_silver(&d, "bronze.customers", "silver.customers", "dbo_customers", "customer_id")) != 0)
            return fail("silver apply of customers", ec);
        if ((ec = apply_silver(&d, "bronze.orders", "silver.orders", "dbo_orders", "order_id")) != 0)
            return fail("silver apply of orders", ec);
        char vc[64], vo[64];
        verdict_of(&d, "bronze.customers", vc);
        verdict_of(&d, "bronze.orders", vo);
        char span[32];
        snprintf(span, sizeof span, "%02d:00-%02d:00%s", hour, hour + 1, hour == LUNCH ? " *" : "");
        if (made)
            printf("%02d:00-%02d:00   made by an earlier run; streams resumed: %-18s %-18s\n", FIRST_HOUR, hour + 1, vc, vo);
        else
            printf("%-13s %8lld   %-18s %-18s\n", span, (long long)changes, vc, vo);
        fflush(stdout);
    }
    if (n_resumed < LAST_HOUR - FIRST_HOUR)
        printf("  * a quiet hour: no changes, but idle entries still move max_lsn and the verdict\n");
    printf("\n");

    /* Summary. */
    printf("%-18s %10s %10s\n", "table", "bronze", "silver");
    printf("%-18s %10ld %10ld\n", "dbo.customers", count_rows(&d, "bronze.customers"), count_rows(&d, "silver.customers"));
    printf("%-18s %10ld %10ld\n", "dbo.orders", count_rows(&d, "bronze.orders"), count_rows(&d, "silver.orders"));
    printf("facts rows: %ld (one per batch, plus bootstrap events)\n\n", count_rows(&d, "ops.ingestion_facts"));

    const char *q1[] = {"finalization", "is-final", "--control", "ops.table_finalization", "--table", "bronze.orders",
                        "--period-end", DAY "T10:00:00", NULL};
    const char *q2[] = {"finalization", "is-final", "--control", "ops.table_finalization", "--table", "bronze.orders",
                        "--period-end", DAY "T18:00:00", NULL};
    int e1 = sh(&d, NULL, q1), e2 = sh(&d, NULL, q2);
    printf("is-final bronze.orders for [09:00, 10:00): %s (exit %d)\n", e1 == 0 ? "yes" : e1 == 1 ? "not yet" : "error", e1);
    printf("is-final bronze.orders for [17:00, 18:00): %s (exit %d): the hour of the last commit stays open\n",
           e2 == 0 ? "yes" : e2 == 1 ? "not yet" : "error", e2);

    char report[MCDC_PATH_MAX + 16];
    snprintf(report, sizeof report, "%s/report.html", d.dir);
    const char *rep[] = {"report", "--facts", "ops.ingestion_facts", "--control", "ops.table_finalization",
                         "--title", "mssql-cdc demo: " DAY, "--out", report, NULL};
    int er = sh(&d, NULL, rep);
    if (er != 0)
        return fail("report", er);
    printf("\ntables:   %s/lake/{bronze,silver,ops}/...  (mssql-cdc --warehouse %s/lake table cat bronze.orders)\n",
           d.dir, d.dir);
    printf("report:   %s\n", report);
    printf("commands: %s (every step, to replay by hand)\n", d.script);
    printf("done in %.1f s; rerun to resume, or delete %s to start over\n",
           (double)(mcdc_time_mono_us() - t0) / 1e6, d.dir);
    return (e1 == 0 && e2 == 1) ? 0 : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_demo = {
    "demo", "simulate a business day on the embedded simulator and stream it end to end",
    "", 0, 0, opts,
    "  mssql-cdc demo --dir /tmp/mcdc-demo",
    run,
};
