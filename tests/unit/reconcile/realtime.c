/* Reconcile under a realtime workload (issue 19's acceptance, small size): a table of 5,000
 * rows, `sim workload --realtime` changing it (about 1,000 changes over some 12 s, captured
 * every second) while a stream follows it into bronze and applies silver every 300 ms.
 * Before they start, one row of a key the workload never touches is dropped from silver.
 * Every reconcile run during the load (--sample 1.0 --settle 5) names that key MISSING, one
 * bucket mismatched, and no other key but IN_FLIGHT ones; once the load has stopped and
 * silver has caught up, the keys in flight clear and only the planted key is left. The keys
 * the workload touches are found beforehand by running the same workload (same seed, same
 * table) at once on a copy of the database; the change table checks it afterwards. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/parquet.h"
#include "unit/reconcile/plant.h"

static char dir[256];
#define WORKLOAD "--table dbo.orders --transactions 500 --rows-per-transaction 2 --seed 11 --interval 25ms " \
                 "--capture-every 1s"

static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static pid_t spawn(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    pid_t p = fork();
    if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* a failed test (its longjmp out) leaves no process running */
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    assert_true(p > 0);
    return p;
}

static const char *bin(void)
{
    const char *b = getenv("MCDC_BIN");
    return b ? b : "mssql-cdc";
}

static char *slurp(const char *name)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Drop silver's row of order_id @p key (a Delta commit that rewrites the file holding it). */
static void drop_silver_row(int64_t key)
{
    char silver[400];
    snprintf(silver, sizeof silver, "%s/lake/silver/o", dir);
    plant_drop_row(silver, "order_id", key);
}

/* The change rows per key of the database @p db: counts[k] for keys 1..n. */
static void ct_counts(const char *db, int *counts, int n)
{
    assert_int_equal(0, sh("%s sim query %s 'SELECT order_id FROM cdc.dbo_orders_CT' --format csv >%s/ct.csv", bin(), db,
                           dir));
    char path[400];
    snprintf(path, sizeof path, "%s/ct.csv", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[64];
    while (fgets(line, sizeof line, f)) {
        int k = atoi(line);
        if (k >= 1 && k <= n)
            counts[k]++;
    }
    fclose(f);
}

/* One reconcile run; its JSON in out.json. */
static int rec(void)
{
    return sh("%s --warehouse %s/lake reconcile --source sim:%s/db.sqlite --capture-instance dbo_orders --silver silver.o "
              "--bronze bronze.o --control ops.control --sample 1.0 --bucket-rows 500 --settle 5 --format json "
              ">%s/out.json 2>%s/err.txt",
              bin(), dir, dir, dir, dir);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static int64_t field(const char *json, const char *name)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", name);
    const char *p = strstr(json, pat);
    assert_non_null(p);
    return strtoll(p + strlen(pat), NULL, 10);
}

static void test_reconcile_realtime__only_in_flight_under_load_and_the_planted_key_always_mismatches(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mcdc-recrt-XXXXXX");
    assert_non_null(mkdtemp(dir));
    const char *M = bin();
    char at[32], at2[32];
    time_t t = time(NULL) - 3600;
    strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%S", gmtime(&t));
    t += 60;
    strftime(at2, sizeof at2, "%Y-%m-%dT%H:%M:%S", gmtime(&t));
    assert_int_equal(0, sh("%s sim init %s/db.sqlite --table dbo.orders --keys order_id --at %s --schema "
                           "'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL' >/dev/null",
                           M, dir, at));
    /* 5,000 rows, keys 1..5000 */
    assert_int_equal(0, sh("cd %s && for b in 0 1 2 3 4; do v=''; for i in $(seq $((b * 1000 + 1)) $((b * 1000 + 1000))); do "
                           "v=\"$v,($i, N'c$i', $i.25)\"; done; %s sim exec db.sqlite --at %s \"INSERT INTO dbo.orders "
                           "VALUES ${v#,}\" >/dev/null || exit 1; done", dir, M, at2));
    assert_int_equal(0, sh("%s sim capture %s/db.sqlite --at %s >/dev/null", M, dir, at2));
    /* the keys the workload touches: the same workload at once on a copy */
    assert_int_equal(0, sh("cp %s/db.sqlite %s/copy.sqlite && %s sim workload %s/copy.sqlite " WORKLOAD " >/dev/null", dir,
                           dir, M, dir));
    static int before[5001], after[5001];
    char copy[400];
    snprintf(copy, sizeof copy, "%s/copy.sqlite", dir);
    ct_counts(copy, before, 5000);
    int64_t planted = 0;
    int touched = 0;
    for (int k = 1; k <= 5000; k++) {
        if (before[k] > 1) touched++;
        if (!planted && k > 100 && before[k] == 1) planted = k;
    }
    assert_true(touched > 100); /* the workload does touch the table's rows */
    assert_true(planted > 0);
    /* bronze and silver as of now, then the defect on silver */
    assert_int_equal(0, sh("%s --warehouse %s/lake stream --source sim:%s/db.sqlite --capture-instance dbo_orders "
                           "--target bronze.o --app-id o --checkpoint %s/ck --facts ops.facts --control ops.control "
                           "--silver silver.o --bootstrap >/dev/null 2>&1", M, dir, dir, dir));
    drop_silver_row(planted);
    char want[64];
    snprintf(want, sizeof want, "{\"key\":{\"order_id\":%lld},\"status\":\"MISSING\"}", (long long)planted);
    assert_int_equal(1, rec());
    assert_non_null(strstr(slurp("out.json"), want));

    pid_t wl = spawn("exec %s sim workload %s/db.sqlite " WORKLOAD " --realtime >/dev/null 2>%s/wl.err", M, dir, dir);
    pid_t st = spawn("exec %s --warehouse %s/lake stream --source sim:%s/db.sqlite --capture-instance dbo_orders "
                     "--target bronze.o --app-id o --checkpoint %s/ck --facts ops.facts --control ops.control "
                     "--silver silver.o --trigger interval:300ms >/dev/null 2>%s/st.err", M, dir, dir, dir, dir);
    /* the first runs wait for the workload's first capture scan: until then the simulator's
     * clock is still the set-up's, an hour back, which capture has passed, so a commit the
     * read sees before that scan has no later scan to wait for */
    for (int i = 0; i < 300 && sh("test \"$(%s sim query %s/db.sqlite 'SELECT count(*) AS n FROM cdc.dbo_orders_CT' "
                                  "--format csv | tail -1)\" -gt 5000", M, dir) != 0; i++) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    int runs = 0, runs_in_flight = 0;
    int64_t in_flight_keys = 0;
    int status;
    while (waitpid(wl, &status, WNOHANG) == 0) {
        int rc = rec();
        const char *out = slurp("out.json");
        if (rc != 1 || !strstr(out, want))
            fail_msg("run %d under load: exit %d, the planted key not named MISSING: %s %s", runs, rc, out, slurp("err.txt"));
        size_t named = count(out, "\"status\":"), flight = count(out, "\"status\":\"IN_FLIGHT\"");
        if (named != flight + 1 || field(out, "mismatched") != 1)
            fail_msg("run %d under load: a key the workload touched mismatches: %s", runs, out);
        runs++;
        if (flight) runs_in_flight++;
        in_flight_keys += (int64_t)flight;
    }
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* the load has stopped: silver catches up and the keys in flight clear */
    bool cleared = false;
    for (int i = 0; i < 30 && !cleared; i++) {
        sleep(1);
        int rc = rec();
        const char *out = slurp("out.json");
        if (rc != 1 || !strstr(out, want) || field(out, "mismatched") != 1)
            fail_msg("after the load: %s %s", out, slurp("err.txt"));
        cleared = count(out, "\"status\":") == 1 && field(out, "in_flight") == 0;
    }
    kill(st, SIGTERM);
    assert_int_equal(st, waitpid(st, &status, 0));
    printf("# %d runs under load, %d with keys in flight (%lld keys in all); cleared after the load: %s\n", runs,
           runs_in_flight, (long long)in_flight_keys, cleared ? "yes" : "no");
    assert_true(cleared);
    assert_true(runs >= 3);
    assert_true(runs_in_flight >= 1); /* the load was seen in flight */
    /* the workload touched what its copy touched: the planted key never */
    char db[400];
    snprintf(db, sizeof db, "%s/db.sqlite", dir);
    ct_counts(db, after, 5000);
    assert_int_equal(1, after[planted]);
    assert_memory_equal(before, after, sizeof before);
    sh("rm -rf %s", dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconcile_realtime__only_in_flight_under_load_and_the_planted_key_always_mismatches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
