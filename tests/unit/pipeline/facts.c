/* Unit tests for pipeline/facts.c: batch facts, their userMetadata JSON, the schemas. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/pipeline.h"
#include "mcdc/time.h"

static void test_pipeline_facts__counts_operations_and_ranges(void **state)
{
    (void)state;
    mcdc_batch_facts f = MCDC_BATCH_FACTS_INIT;
    mcdc_lsn a, b;
    mcdc_lsn_parse(&a, "0x0000002D000001A00003");
    mcdc_lsn_parse(&b, "0x0000002D000001B00001");
    int64_t t1, t2;
    mcdc_time_parse(&t1, "2026-10-01T14:00:01.250");
    mcdc_time_parse(&t2, "2026-10-01T14:00:02");
    mcdc_batch_facts_add(&f, &a, 2, t1);
    mcdc_batch_facts_add(&f, &b, 3, t2);
    mcdc_batch_facts_add(&f, &b, 4, t2);
    mcdc_batch_facts_add(&f, &b, 1, t2);
    assert_int_equal(4, f.rows);
    assert_int_equal(1, f.inserts);
    assert_int_equal(1, f.updates); /* before-images are not counted */
    assert_int_equal(1, f.deletes);
    mcdc_buf js = MCDC_BUF_INIT(4096);
    assert_int_equal(0, mcdc_batch_facts_to_json(&js, &f, 7, "orders-v1", NULL));
    assert_string_equal("{\"rows\":4,\"min_lsn\":\"0x0000002D000001A00003\",\"max_lsn\":"
                        "\"0x0000002D000001B00001\",\"min_commit_ts\":\"2026-10-01T14:00:01.250\","
                        "\"max_commit_ts\":\"2026-10-01T14:00:02.000\",\"deletes\":1,"
                        "\"inserts\":1,\"updates\":1,\"batch_id\":7,\"app_id\":\"orders-v1\"}",
                        js.ptr);
    mcdc_batch_facts back;
    int64_t bid;
    char *app = NULL;
    assert_int_equal(0, mcdc_batch_facts_parse_json(&back, &bid, &app, js.ptr));
    assert_int_equal(7, bid);
    assert_string_equal("orders-v1", app);
    assert_true(back.counts_known);
    assert_int_equal(4, back.rows);
    assert_int_equal(0, mcdc_lsn_cmp(&back.min_lsn, &a));
    assert_int_equal(0, mcdc_lsn_cmp(&back.max_lsn, &b));
    assert_true(back.min_commit_ts_us == t1 && back.max_commit_ts_us == t2);
    free(app);
    mcdc_buf_dispose(&js);
}

static void test_pipeline_facts__empty_and_unknown_counts(void **state)
{
    (void)state;
    mcdc_batch_facts f = MCDC_BATCH_FACTS_INIT;
    mcdc_buf js = MCDC_BUF_INIT(4096);
    assert_int_equal(0, mcdc_batch_facts_to_json(&js, &f, 0, "x\"y", NULL));
    assert_non_null(strstr(js.ptr, "\"rows\":0,\"min_lsn\":null"));
    assert_non_null(strstr(js.ptr, "\"app_id\":\"x\\\"y\"}"));
    mcdc_batch_facts back;
    int64_t bid;
    assert_int_equal(0, mcdc_batch_facts_parse_json(&back, &bid, NULL,
                                                    "{\"rows\":null,\"batch_id\":3}"));
    assert_false(back.counts_known);
    assert_int_equal(3, bid);
    assert_int_equal(MCDC_ECORRUPT, mcdc_batch_facts_parse_json(&back, &bid, NULL, "[1]"));
    assert_int_equal(MCDC_ECORRUPT, mcdc_batch_facts_parse_json(&back, &bid, NULL,
                                                                "{\"rows\":2,\"deletes\":0,\"inserts\":2,\"updates\":0,\"min_lsn\":\"zz\"}"));
    mcdc_buf_dispose(&js);
}

static void test_pipeline_facts__user_metadata_records_the_batch_range(void **state)
{
    (void)state;
    mcdc_batch_facts f = MCDC_BATCH_FACTS_INIT;
    mcdc_batch_range r = { .batch_id = 4 };
    mcdc_lsn_parse(&r.start.lsn, "0x0000002D000001A00003");
    mcdc_lsn_parse(&r.end.lsn, "0x0000002E000000100001");
    mcdc_buf js = MCDC_BUF_INIT(4096);
    assert_int_equal(0, mcdc_batch_facts_to_json(&js, &f, 4, "orders", &r));
    assert_non_null(strstr(js.ptr, ",\"app_id\":\"orders\",\"start_lsn\":\"0x0000002D000001A00003\","
                                   "\"end_lsn\":\"0x0000002E000000100001\"}"));
    mcdc_lsn a, b;
    assert_int_equal(0, mcdc_batch_meta_range(js.ptr, &a, &b));
    assert_int_equal(0, mcdc_lsn_cmp(&a, &r.start.lsn));
    assert_int_equal(0, mcdc_lsn_cmp(&b, &r.end.lsn));
    /* the facts still parse as before: the keys are only added */
    mcdc_batch_facts back;
    int64_t bid;
    assert_int_equal(0, mcdc_batch_facts_parse_json(&back, &bid, NULL, js.ptr));
    assert_int_equal(4, bid);
    /* a commit of an older version has neither key; half a range is corrupt */
    assert_int_equal(MCDC_ENOTFOUND, mcdc_batch_meta_range("{\"rows\":0}", &a, &b));
    assert_int_equal(MCDC_ECORRUPT, mcdc_batch_meta_range("{\"start_lsn\":\"0x00\"}", &a, &b));
    assert_int_equal(MCDC_ECORRUPT, mcdc_batch_meta_range("{\"start_lsn\":\"x\",\"end_lsn\":\"y\"}",
                                                          &a, &b));
    assert_int_equal(MCDC_ECORRUPT, mcdc_batch_meta_range("[]", &a, &b));
    mcdc_buf_dispose(&js);
}

static void test_pipeline_facts__schemas_have_the_anchor_columns(void **state)
{
    (void)state;
    mcdc_schema *f = NULL;
    assert_int_equal(0, mcdc_facts_schema(&f));
    assert_int_equal(29, f->n_cols);
    assert_string_equal("app_id", f->cols[0].name);
    assert_string_equal("written_at", f->cols[28].name);
    assert_int_equal(MCDC_TYPE_TIMESTAMP_NTZ, f->cols[MCDC_FACTS_END_COMMIT_TS].type);
    assert_int_equal(MCDC_TYPE_DOUBLE, f->cols[MCDC_FACTS_RETENTION_HEADROOM_HOURS].type);
    mcdc_schema_free(f);

    mcdc_schema *cap = mcdc_schema_new(), *b = NULL;
    mcdc_schema_add(cap, "order_id", MCDC_TYPE_INT, 0, 0, false);
    mcdc_schema_add(cap, "amount", MCDC_TYPE_DECIMAL, 12, 2, true);
    assert_int_equal(0, mcdc_bronze_schema(&b, cap, true));
    const char *want[] = { "_capture_instance", "_start_lsn", "_seqval", "_operation",
                           "_command_id", "_commit_ts", "order_id", "amount", "_batch_id",
                           "_snapshot", "_chunk" };
    assert_int_equal(11, b->n_cols);
    for (int i = 0; i < 11; i++)
        assert_string_equal(want[i], b->cols[i].name);
    assert_true(b->cols[6].nullable); /* captured columns are nullable in bronze */
    mcdc_schema_free(b);
    assert_int_equal(0, mcdc_bronze_schema(&b, cap, false));
    assert_int_equal(10, b->n_cols);
    mcdc_schema_free(b);
    mcdc_schema_add(cap, "_Batch_Id", MCDC_TYPE_INT, 0, 0, true);
    assert_int_equal(MCDC_EINVAL, mcdc_bronze_schema(&b, cap, true));
    mcdc_schema_free(cap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_facts__counts_operations_and_ranges),
        cmocka_unit_test(test_pipeline_facts__empty_and_unknown_counts),
        cmocka_unit_test(test_pipeline_facts__user_metadata_records_the_batch_range),
        cmocka_unit_test(test_pipeline_facts__schemas_have_the_anchor_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
