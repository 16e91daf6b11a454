/* Unit tests for reconcile/chunks.c, reconcile's chunk checks (--facts): after a chunked
 * snapshot read by backfill in chunks of 10 rows, every chunk's rows in bronze equal its
 * snapshot_chunk facts row (exit 0); a row planted out of one chunk of bronze (a Delta
 * commit that rewrites the file holding it) is reported for that chunk alone (exit 1), in
 * the JSON, the text and the report table (a CHUNK_ROWS row), and the HTML report shows
 * that last run; a facts table that does not exist is a usage error. The CLI (MCDC_BIN) builds the tables and gives the exit codes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/parquet.h"
#include "unit/reconcile/plant.h"

static char dir[256];

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
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static int rec(const char *extra)
{
    return sh("%s --warehouse %s/lake reconcile --source sim:%s/db.sqlite --capture-instance dbo_orders "
              "--silver silver.t --bronze bronze.t --control ops.control --sample 1 --seed 1 %s >%s/out.txt 2>&1",
              bin(), dir, dir, extra, dir);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mcdc-recchunks-XXXXXX");
    assert_non_null(mkdtemp(dir));
    const char *M = bin();
    assert_int_equal(0, sh("%s sim init %s/db.sqlite --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 "
                           "--schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null", M, dir));
    char vals[4096];
    size_t k = 0;
    for (int i = 1; i <= 25; i++)
        k += (size_t)snprintf(vals + k, sizeof vals - k, "%s(%d, N'c%d')", i > 1 ? ", " : "", i * 3, i);
    assert_int_equal(0, sh("%s sim exec %s/db.sqlite --at 2026-10-01T14:00:00 \"INSERT INTO dbo.orders VALUES %s\" >/dev/null",
                           M, dir, vals));
    assert_int_equal(0, sh("%s sim capture %s/db.sqlite --at 2026-10-01T14:00:30 >/dev/null", M, dir));
    assert_int_equal(0, sh("%s --warehouse %s/lake stream --source sim:%s/db.sqlite --capture-instance dbo_orders "
                           "--target bronze.t --app-id t --checkpoint %s/ck --facts ops.facts --bootstrap "
                           "--bootstrap-mode chunked >/dev/null 2>&1", M, dir, dir, dir));
    assert_int_equal(0, sh("%s --warehouse %s/lake backfill --source sim:%s/db.sqlite --capture-instance dbo_orders "
                           "--target bronze.t --app-id t --facts ops.facts --chunk-rows 10 --target-wave-seconds 0 "
                           ">/dev/null 2>&1", M, dir, dir));
    assert_int_equal(0, sh("%s --warehouse %s/lake silver apply --bronze bronze.t --silver silver.t "
                           "--capture-instance dbo_orders --keys order_id --control ops.control --facts ops.facts "
                           ">/dev/null 2>&1", M, dir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sh("rm -rf %s", dir);
    return 0;
}

/* Rewrite the bronze file holding the first row of chunk @p chunk without that row. */
static void drop_one_row_of_chunk(int64_t chunk)
{
    char bronze[400];
    snprintf(bronze, sizeof bronze, "%s/lake/bronze/t", dir);
    plant_drop_row(bronze, "_chunk", chunk);
}

static void test_reconcile_chunks__each_chunk_matches_then_a_planted_row_is_named(void **state)
{
    (void)state;
    assert_int_equal(0, rec("--facts ops.facts --format json --report ops.rec"));
    assert_non_null(strstr(slurp("out.txt"), "\"chunks\":{\"snapshot\":\"0x00E31CC6D40C5800001B\",\"state\":\"complete\","
                                             "\"checked\":3,\"mismatched\":0,\"differ\":[]}"));
    /* without --facts nothing is said of chunks */
    assert_int_equal(0, rec("--format json"));
    assert_null(strstr(slurp("out.txt"), "\"chunks\""));

    drop_one_row_of_chunk(1);
    assert_int_equal(1, rec("--facts ops.facts --format json --report ops.rec"));
    const char *out = slurp("out.txt");
    assert_non_null(strstr(out, "\"mismatched\":0,")); /* silver still equals the source */
    assert_non_null(strstr(out, "\"checked\":3,\"mismatched\":1,\"differ\":[{\"chunk\":1,\"facts_rows\":10,"
                                "\"bronze_rows\":9}]}"));
    assert_int_equal(1, rec("--facts ops.facts"));
    assert_non_null(strstr(slurp("out.txt"), "CHUNK     1: 10 rows in its snapshot_chunk row, 9 in bronze\n"));
    /* the report row */
    assert_int_equal(0, sh("%s --warehouse %s/lake table cat ops.rec --format csv --columns failure_type,status,detail "
                           "| grep CHUNK_ROWS >%s/rep.txt", bin(), dir, dir));
    assert_string_equal("CHUNK_ROWS,MISMATCH,\"{\"\"snapshot\"\":\"\"0x00E31CC6D40C5800001B\"\",\"\"chunk\"\":1,"
                        "\"\"facts_rows\"\":10,\"\"bronze_rows\"\":9}\"\n",
                        slurp("rep.txt"));
    /* the HTML report shows the last run (the mismatch), not the clean one before it */
    assert_int_equal(0, sh("%s --warehouse %s/lake report --facts ops.facts --control ops.control --reconcile ops.rec "
                           "--out %s/r.html 2>/dev/null", bin(), dir, dir));
    const char *html = slurp("r.html");
    assert_non_null(strstr(html, "<tr><td>silver.t</td><td class='bad'>MISMATCH</td>"));
    assert_non_null(strstr(html, "</td><td>1</td><td>1</td><td>1</td><td>0</td><td>0</td><td>1 chunks</td></tr>"));
    assert_non_null(strstr(html, "<pre>CHUNK_ROWS {&quot;snapshot&quot;:&quot;0x00E31CC6D40C5800001B&quot;,&quot;chunk&quot;:1,"));
    assert_null(strstr(html, "class='ok'"));
    /* a table that is not a reconcile report, or none at all: exit 2 */
    assert_int_equal(2, sh("%s --warehouse %s/lake report --facts ops.facts --control ops.control --reconcile ops.facts "
                           ">/dev/null 2>&1", bin(), dir));
    assert_int_equal(2, sh("%s --warehouse %s/lake report --facts ops.facts --control ops.control --reconcile ops.none "
                           ">/dev/null 2>&1", bin(), dir));
}

static void test_reconcile_chunks__a_facts_table_that_does_not_exist_is_a_usage_error(void **state)
{
    (void)state;
    assert_int_equal(2, rec("--facts ops.nothing"));
    assert_non_null(strstr(slurp("out.txt"), "mssql-cdc: error: facts table ops.nothing does not exist\nhint: check --facts"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reconcile_chunks__a_facts_table_that_does_not_exist_is_a_usage_error),
        cmocka_unit_test(test_reconcile_chunks__each_chunk_matches_then_a_planted_row_is_named),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
