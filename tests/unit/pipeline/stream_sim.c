/* Unit tests for pipeline/stream.c against the simulator: a cleanup between two pages of
 * a read is caught (the data-loss guard re-checks min_lsn after every read), and without it
 * the same history streams whole, with pages of 15 rows splitting transactions of 10. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/pipeline.h"
#include "mcdc/sim.h"
#include "mcdc/time.h"
#include "unit/pipeline/scratch.h"

static int setup(void **state)
{
    (void)state;
    return scratch_setup("stream-sim");
}


typedef struct purge_ctx {
    int  pages;
    bool purge;
} purge_ctx;

static void between_pages(int page, void *payload)
{
    purge_ctx *p = payload;
    p->pages++;
    if (!p->purge || page != 1)
        return;
    mcdc_sim *sim = NULL;
    assert_int_equal(0, mcdc_sim_open(&sim, db, false, NULL));
    mcdc_sim_cleanup_result r;
    assert_int_equal(0, mcdc_sim_cleanup(sim, 24 * MCDC_US_PER_HOUR, at("2026-10-03T10:00:20"), 0,
                                         -1, &r));
    mcdc_sim_close(sim);
}

static int run(bool purge, mcdc_stream_result *res, purge_ctx *pc)
{
    mcdc_source *src = NULL;
    assert_int_equal(0, mcdc_sim_source_open(&src, db));
    pc->purge = purge;
    assert_int_equal(0, mcdc_sim_source_set_paging(src, 15, between_pages, pc));
    mcdc_stream_options o = MCDC_STREAM_OPTIONS_INIT;
    o.source = src;
    o.capture_instance = "dbo_t";
    o.target = "bronze.t";
    o.target_path = bronze;
    o.facts = "facts";
    o.facts_path = facts;
    o.app_id = "t";
    o.checkpoint = ck;
    mcdc_stream *s = NULL;
    int rc = mcdc_stream_new(&s, &o);
    if (rc == 0)
        rc = mcdc_stream_run(s, res);
    mcdc_stream_free(s);
    mcdc_source_close(src);
    if (rc < 0) /* shown when a check fails */
        fprintf(stderr, "# stream: %d %s\n", rc, mcdc_error_last()->message);
    return rc;
}

static void test_pipeline_stream_sim__cleanup_between_pages_is_a_data_loss(void **state)
{
    (void)state;
    five_transactions();
    mcdc_stream_result res;
    purge_ctx pc = { 0 };
    assert_int_equal(MCDC_EDATALOSS, run(true, &res, &pc));
    assert_true(pc.pages >= 1);
    assert_non_null(strstr(mcdc_error_last()->message, "dbo_t: change data from"));
    assert_non_null(strstr(mcdc_error_last()->message, "while the batch was read"));
    assert_int_equal(0, res.n_batches);
}

static void test_pipeline_stream_sim__paged_read_without_cleanup_is_whole(void **state)
{
    (void)state;
    five_transactions();
    mcdc_stream_result res;
    purge_ctx pc = { 0 };
    assert_int_equal(0, run(false, &res, &pc));
    assert_true(pc.pages >= 3);
    assert_int_equal(1, res.n_batches);
    assert_int_equal(50, res.n_rows);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pipeline_stream_sim__cleanup_between_pages_is_a_data_loss, setup, scratch_teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_stream_sim__paged_read_without_cleanup_is_whole, setup, scratch_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
