/* Unit tests for pipeline/generation.c: the generation file of a stream's checkpoint (a
 * re-snapshot's generation, its checkpoint and app id, and the gap that started it). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/pipeline.h"
#include "mcdc/time.h"

static char root[256];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-gen-XXXXXX");
    assert_non_null(mkdtemp(root));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_pipeline_generation__no_file_is_generation_0(void **state)
{
    (void)state;
    mcdc_generation g;
    assert_int_equal(0, mcdc_generation_read(&g, root));
    assert_int_equal(0, g.n);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/none", root);
    assert_int_equal(0, mcdc_generation_read(&g, missing));
    assert_int_equal(0, g.n);
}

static void test_pipeline_generation__round_trip_with_the_gap(void **state)
{
    (void)state;
    mcdc_generation w;
    memset(&w, 0, sizeof w);
    w.n = 2;
    w.has_started_at = true;
    assert_int_equal(0, mcdc_time_parse(&w.started_at_us, "2026-10-03T14:00:02.000"));
    w.has_lost_from = true;
    assert_int_equal(0, mcdc_time_parse(&w.lost_from_us, "2026-10-01T14:00:00.000"));
    assert_int_equal(0, mcdc_lsn_parse(&w.lost_after, "0x00E31CC6D40C58000005"));
    assert_int_equal(0, mcdc_lsn_parse(&w.lost_min, "0x00E31CDAF1E3B8000004"));
    assert_int_equal(0, mcdc_generation_write(root, &w));
    mcdc_generation r;
    assert_int_equal(0, mcdc_generation_read(&r, root));
    assert_int_equal(2, r.n);
    assert_true(r.has_started_at);
    assert_true(r.started_at_us == w.started_at_us);
    assert_true(r.has_lost_from);
    assert_true(r.lost_from_us == w.lost_from_us);
    assert_false(r.has_lost_to); /* written as null */
    assert_int_equal(0, mcdc_lsn_cmp(&r.lost_after, &w.lost_after));
    assert_int_equal(0, mcdc_lsn_cmp(&r.lost_min, &w.lost_min));
}

static void test_pipeline_generation__paths_and_app_ids(void **state)
{
    (void)state;
    char out[64];
    assert_int_equal(0, mcdc_generation_checkpoint(out, sizeof out, "ck/orders", 0));
    assert_string_equal("ck/orders", out);
    assert_int_equal(0, mcdc_generation_checkpoint(out, sizeof out, "ck/orders", 3));
    assert_string_equal("ck/orders/_generations/3", out);
    assert_int_equal(0, mcdc_generation_app_id(out, sizeof out, "orders-v1", 0));
    assert_string_equal("orders-v1", out);
    assert_int_equal(0, mcdc_generation_app_id(out, sizeof out, "orders-v1", 3));
    assert_string_equal("orders-v1.g3", out);
    char fam[64];
    assert_int_equal(0, mcdc_stream_family(fam, sizeof fam, out));
    assert_string_equal("orders-v1", fam);
    assert_int_equal(MCDC_EINVAL, mcdc_generation_app_id(out, 8, "orders-v1", 3));
    /* an app id that is a generation started by hand counts on from it: same family */
    assert_int_equal(0, mcdc_generation_app_id(out, sizeof out, "orders.g2", 1));
    assert_string_equal("orders.g3", out);
    assert_int_equal(0, mcdc_stream_family(fam, sizeof fam, out));
    assert_string_equal("orders", fam);
    assert_int_equal(0, mcdc_generation_app_id(out, sizeof out, "orders.g2", 0));
    assert_string_equal("orders.g2", out);
    assert_int_equal(0, mcdc_generation_app_id(out, sizeof out, "big.g", 1));
    assert_string_equal("big.g.g1", out);
}

static void test_pipeline_generation__a_corrupt_file_is_refused(void **state)
{
    (void)state;
    char p[300];
    snprintf(p, sizeof p, "%s/generation", root);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs("{\"generation\":\"one\"}", f);
    fclose(f);
    mcdc_generation g;
    assert_int_equal(MCDC_ECORRUPT, mcdc_generation_read(&g, root));
    assert_non_null(strstr(mcdc_error_last()->message, "not a generation record"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pipeline_generation__no_file_is_generation_0, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_generation__round_trip_with_the_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_generation__paths_and_app_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pipeline_generation__a_corrupt_file_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
