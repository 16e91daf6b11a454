/* Unit tests for run/job.c against the simulator: a job streams a table, its tracker
 * writes the verdict and its follower applies silver (the subscribers see the stream's
 * progress); wrong keys and silver without a control table are refused before anything is
 * written (no checkpoint, no control table). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/run.h"
#include "mcdc/sim.h"
#include "unit/pipeline/scratch.h"

static char control[300], silver[300];

static int setup(void **state)
{
    (void)state;
    if (scratch_setup("run-job") < 0)
        return -1;
    snprintf(control, sizeof control, "%s/control", root);
    snprintf(silver, sizeof silver, "%s/silver", root);
    return 0;
}

static bool exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* 20 inserts and 5 updates on 2026-10-01, captured; an idle entry the next day */
static void history(void)
{
    mcdc_sim *sim = NULL;
    assert_int_equal(0, mcdc_sim_open(&sim, db, true, NULL));
    assert_int_equal(0, mcdc_sim_create_table(sim, "dbo.t", "id INT NOT NULL, name NVARCHAR(20) NULL",
                                              "id", NULL, at("2026-10-01T00:00:00")));
    mcdc_sim_capture_result cr;
    mcdc_sim_exec_result er;
    assert_int_equal(0, mcdc_sim_capture(sim, at("2026-10-01T00:00:01"), NULL, &cr));
    char sql[4096];
    for (int t = 0; t < 2; t++) {
        size_t n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO dbo.t (id, name) VALUES ");
        for (int i = 0; i < 10; i++)
            n += (size_t)snprintf(sql + n, sizeof sql - n, "%s(%d, 'n%d')", i ? ", " : "",
                                  t * 10 + i, i);
        assert_int_equal(0, mcdc_sim_exec(sim, sql, MCDC_SIM_NOW,
                                          at(t ? "2026-10-01T10:00:01" : "2026-10-01T10:00:00"),
                                          &er));
    }
    assert_int_equal(0, mcdc_sim_exec(sim, "UPDATE dbo.t SET name = 'u' WHERE id < 5",
                                      MCDC_SIM_NOW, at("2026-10-01T11:00:00"), &er));
    assert_int_equal(0, mcdc_sim_capture(sim, at("2026-10-01T11:00:10"), NULL, &cr));
    mcdc_lsn idle;
    assert_int_equal(0, mcdc_sim_idle(sim, at("2026-10-02T12:00:00"), &idle));
    mcdc_sim_close(sim);
}

static int batches_seen;

static void count_batches(const mcdc_stream_progress *p, void *payload)
{
    (void)payload;
    if (p->kind == MCDC_PROGRESS_BATCH)
        batches_seen++;
}

static void options(mcdc_job_options *jo, mcdc_source *src)
{
    mcdc_job_options init = MCDC_JOB_OPTIONS_INIT;
    *jo = init;
    jo->stream.source = src;
    jo->stream.capture_instance = "dbo_t";
    jo->stream.target = "bronze.t";
    jo->stream.target_path = bronze;
    jo->stream.facts = "facts";
    jo->stream.facts_path = facts;
    jo->stream.app_id = "t";
    jo->stream.checkpoint = ck;
}

static void test_run_job__stream_tracker_and_silver_follow_the_progress(void **state)
{
    (void)state;
    history();
    mcdc_source *src = NULL;
    assert_int_equal(0, mcdc_sim_source_open(&src, db));
    mcdc_job_options jo;
    options(&jo, src);
    jo.control = "control";
    jo.control_path = control;
    jo.silver = "silver.t";
    jo.silver_path = silver;
    jo.granularity = MCDC_GRAN_DAY;
    mcdc_job *j = NULL;
    assert_int_equal(0, mcdc_job_new(&j, &jo));
    batches_seen = 0;
    assert_int_equal(0, mcdc_job_add_listener(j, count_batches, NULL));
    assert_int_equal(0, mcdc_job_check(j));
    assert_false(exists(ck)); /* checks write nothing */
    assert_int_equal(0, mcdc_job_open(j));
    mcdc_stream_result res;
    assert_int_equal(0, mcdc_job_run(j, &res));
    assert_int_equal(30, res.n_rows);
    assert_true(batches_seen >= 1);
    bool has_tracker = false, has_silver = false;
    mcdc_verdict v;
    assert_int_equal(0, mcdc_job_verdict(j, &has_tracker, &v));
    assert_true(has_tracker);
    assert_true(v.has); /* the idle entry of 10-02 finalizes the day of 10-01 */
    assert_int_equal(at("2026-10-02T00:00:00"), v.until_us);
    mcdc_job_silver_result sr;
    assert_int_equal(0, mcdc_job_finish_silver(j, &has_silver, &sr));
    assert_true(has_silver);
    assert_true(sr.n_applies >= 1);
    assert_true(sr.last.has_applied_lsn);
    mcdc_job_free(j);
    mcdc_source_close(src);
}

static void test_run_job__wrong_keys_are_refused_before_any_write(void **state)
{
    (void)state;
    history();
    mcdc_source *src = NULL;
    assert_int_equal(0, mcdc_sim_source_open(&src, db));
    mcdc_job_options jo;
    options(&jo, src);
    jo.control = "control";
    jo.control_path = control;
    jo.silver = "silver.t";
    jo.silver_path = silver;
    jo.keys = "name";
    mcdc_job *j = NULL;
    assert_int_equal(0, mcdc_job_new(&j, &jo));
    assert_int_equal(MCDC_EINVAL, mcdc_job_open(j));
    assert_non_null(strstr(mcdc_error_last()->message, "keyed by its unique index (id)"));
    assert_false(exists(ck));
    assert_false(exists(control));
    assert_false(exists(silver));
    mcdc_job_free(j);
    mcdc_source_close(src);
}

static void test_run_job__silver_needs_a_control_table(void **state)
{
    (void)state;
    mcdc_job_options jo;
    options(&jo, NULL);
    jo.silver = "silver.t";
    jo.silver_path = silver;
    mcdc_job *j = NULL;
    assert_int_equal(MCDC_EINVAL, mcdc_job_new(&j, &jo));
    assert_null(j);
    assert_non_null(strstr(mcdc_error_last()->message, "needs --control"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_run_job__stream_tracker_and_silver_follow_the_progress, setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_run_job__wrong_keys_are_refused_before_any_write, setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_run_job__silver_needs_a_control_table, setup, scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
