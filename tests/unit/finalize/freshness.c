/* Unit tests for finalize/freshness.c: the verdict's age next to the newest end offset of
 * the facts table and the source's position, against the source clock or the host's. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/parquet.h"
#include "mcdc/source.h"

static char root[256], ctl[300], facts[300];

static int64_t at(const char *ts)
{
    int64_t us;
    assert_int_equal(0, mcdc_time_parse(&us, ts));
    return us;
}

/* A facts-shaped table (the columns freshness reads, plus one it does not). */
static mcdc_schema *facts_schema(void)
{
    mcdc_schema *s = mcdc_schema_new();
    assert_int_equal(0, mcdc_schema_add(s, "app_id", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "source_max_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "end_commit_ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "event", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "target", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "written_at", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true));
    return s;
}

typedef struct frow {
    const char *target, *end, *event, *written, *src;
} frow;

static void cell_ts(mcdc_value *v, const char *ts)
{
    v->is_null = ts == NULL;
    if (ts)
        v->v.i = at(ts);
}

static void cell_str(mcdc_value *v, const char *s)
{
    v->is_null = s == NULL;
    if (s) {
        v->v.s.ptr = s;
        v->v.s.len = strlen(s);
    }
}

static void append_facts(const mcdc_schema *s, const char *name, const frow *rows, size_t n)
{
    char abs[600];
    snprintf(abs, sizeof abs, "%s/%s", facts, name);
    mcdc_parquet_writer *w = NULL;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, abs, s, NULL));
    for (size_t i = 0; i < n; i++) {
        mcdc_value v[6];
        memset(v, 0, sizeof v);
        cell_str(&v[0], "orders-v1");
        cell_ts(&v[1], rows[i].src);
        cell_ts(&v[2], rows[i].end);
        cell_str(&v[3], rows[i].event);
        cell_str(&v[4], rows[i].target);
        cell_ts(&v[5], rows[i].written);
        assert_int_equal(0, mcdc_parquet_writer_write_row(w, v));
    }
    mcdc_parquet_write_result res;
    assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
    mcdc_parquet_writer_free(w);
    mcdc_delta_file f;
    memset(&f, 0, sizeof f);
    f.path = (char *)name;
    f.size = (int64_t)res.file_size;
    f.modification_time = 1;
    f.deletion_timestamp = -1;
    f.data_change = true;
    f.base_row_id = -1;
    f.default_row_commit_version = -1;
    mcdc_parquet_write_result_dispose(&res);
    assert_int_equal(0, mcdc_delta_append(facts, &f, 1, NULL, NULL));
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-fin-fresh-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(ctl, sizeof ctl, "%s/ops/table_finalization", root);
    snprintf(facts, sizeof facts, "%s/ops/ingestion_facts", root);
    mcdc_offset o;
    memset(&o, 0, sizeof o);
    o.lsn = mcdc_lsn_from_u64(0, 5);
    o.commit_ts_us = at("2026-10-01T15:10:00");
    o.has_commit_ts = true;
    assert_int_equal(0, mcdc_control_advance(ctl, "bronze.orders", &o, MCDC_GRAN_HOUR, NULL));
    mcdc_schema *s = facts_schema();
    assert_int_equal(0, mcdc_delta_create(facts, s, NULL, 0, NULL, NULL));
    const frow a[] = {
        { "bronze.orders", "2026-10-01T15:10:00", NULL, "2026-10-01T15:11:00", "2026-10-01T15:10:30" },
        { "bronze.orders", "2026-10-01T15:40:00", NULL, "2026-10-01T15:41:00", "2026-10-01T15:45:00" },
    };
    const frow b[] = {
        { "bronze.orders", "2026-10-01T16:30:00", "bootstrap", "2026-10-01T16:31:00", NULL },
        { "bronze.items", "2026-10-01T17:00:00", NULL, "2026-10-01T17:01:00", "2026-10-01T17:02:00" },
    };
    append_facts(s, "part-a.parquet", a, 2);
    append_facts(s, "part-b.parquet", b, 2);
    mcdc_schema_free(s);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_finalize_freshness__host_clock_and_facts(void **state)
{
    (void)state;
    mcdc_freshness f;
    int64_t before = mcdc_time_now_us();
    assert_int_equal(0, mcdc_control_freshness(&f, ctl, "bronze.orders", facts, NULL));
    assert_false(f.now_is_source);
    assert_true(f.now_us >= before);
    assert_true(f.verdict.has);
    assert_int_equal(at("2026-10-01T15:00:00"), f.verdict.until_us);
    assert_int_equal(f.now_us - f.verdict.until_us, f.verdict_age_us);
    assert_true(f.has_updated_at);
    /* the bootstrap event row (16:30) and the other target (17:00) do not count */
    assert_true(f.has_facts_end);
    assert_int_equal(at("2026-10-01T15:40:00"), f.facts_end_commit_ts_us);
    assert_int_equal(f.now_us - at("2026-10-01T15:40:00"), f.facts_end_age_us);
    assert_true(f.has_facts_written);
    assert_int_equal(at("2026-10-01T15:41:00"), f.facts_written_at_us);
    assert_true(f.has_source); /* from the newest batch row's source_max_commit_ts */
    assert_int_equal(at("2026-10-01T15:45:00"), f.source_max_commit_ts_us);

    /* without facts: the verdict only */
    assert_int_equal(0, mcdc_control_freshness(&f, ctl, "bronze.orders", NULL, NULL));
    assert_false(f.has_facts_end);
    assert_false(f.has_source);
}

/* A source with a fixed clock and max LSN. */
typedef struct fake_src {
    mcdc_source base;
} fake_src;

static int f_server_now(mcdc_source *s, int64_t *out)
{
    (void)s;
    *out = at("2026-10-01T16:05:00");
    return 0;
}

static int f_max_lsn(mcdc_source *s, mcdc_lsn *out)
{
    (void)s;
    *out = mcdc_lsn_from_u64(0, 99);
    return 0;
}

static int f_commit_ts(mcdc_source *s, const mcdc_lsn *l, int64_t *out)
{
    (void)s;
    (void)l;
    *out = at("2026-10-01T16:04:00");
    return 0;
}

static void test_finalize_freshness__source_clock(void **state)
{
    (void)state;
    mcdc_source_ops ops;
    memset(&ops, 0, sizeof ops);
    ops.server_now = f_server_now;
    ops.max_lsn = f_max_lsn;
    ops.lsn_to_commit_ts = f_commit_ts;
    fake_src src = { { &ops, NULL } };
    mcdc_freshness f;
    assert_int_equal(0, mcdc_control_freshness(&f, ctl, "bronze.orders", facts, &src.base));
    assert_true(f.now_is_source);
    assert_int_equal(at("2026-10-01T16:05:00"), f.now_us);
    assert_int_equal(65 * MCDC_US_PER_MIN, f.verdict_age_us);
    assert_int_equal(25 * MCDC_US_PER_MIN, f.facts_end_age_us);
    assert_true(f.has_source);
    assert_int_equal(at("2026-10-01T16:04:00"), f.source_max_commit_ts_us);
    assert_int_equal(MCDC_US_PER_MIN, f.source_lag_us);
}

static void test_finalize_freshness__missing_things(void **state)
{
    (void)state;
    mcdc_freshness f;
    char nofacts[400];
    snprintf(nofacts, sizeof nofacts, "%s/ops/nothing", root);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_control_freshness(&f, ctl, "bronze.orders", nofacts, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "facts table"));
    assert_int_equal(MCDC_ENOTFOUND, mcdc_control_freshness(&f, ctl, "bronze.nope", facts, NULL));
    /* a table without target/end_commit_ts is not a facts table */
    assert_int_equal(MCDC_EINVAL, mcdc_control_freshness(&f, ctl, "bronze.orders", ctl, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "not a facts table"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_finalize_freshness__host_clock_and_facts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_freshness__source_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_freshness__missing_things, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
