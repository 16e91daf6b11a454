/* Unit tests for delta/snapshot.c on Spark-written tables ($MCDC_SRC/tests/data/delta):
 * the replayed version, protocol, file count, partition columns and txns match the first
 * line of each case's expected.jsonl. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

static void check_case(const char *name)
{
    char table[1024], exp[1024];
    snprintf(table, sizeof table, "%s/delta/golden/%s/table", testenv_data(), name);
    snprintf(exp, sizeof exp, "%s/delta/golden/%s/expected.jsonl", testenv_data(), name);
    FILE *f = fopen(exp, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    assert_true(getline(&line, &cap, f) > 0);
    fclose(f);
    json_t *e = json_loads(line, 0, NULL);
    free(line);
    assert_non_null(e);

    mcdc_delta_snapshot *s = NULL;
    int rc = mcdc_delta_snapshot_open(&s, table, -1);
    if (rc != 0)
        fprintf(stderr, "%s: %s\n", name, mcdc_error_last()->message);
    assert_int_equal(0, rc);
    assert_int_equal(json_integer_value(json_object_get(e, "version")), s->version);
    json_t *p = json_object_get(e, "protocol");
    assert_int_equal(json_integer_value(json_object_get(p, "minReaderVersion")),
                     s->protocol.min_reader_version);
    assert_int_equal(json_integer_value(json_object_get(p, "minWriterVersion")),
                     s->protocol.min_writer_version);
    json_t *rf = json_object_get(p, "readerFeatures");
    if (json_is_array(rf)) {
        assert_int_equal(json_array_size(rf), s->protocol.n_reader_features);
        for (size_t i = 0; i < json_array_size(rf); i++)
            assert_string_equal(json_string_value(json_array_get(rf, i)),
                                s->protocol.reader_features[i]);
    }
    /* dv-partitioned-with-checkpoint: versions 14 and 15 add a file with a new DV and remove
     * the same path without one; keyed by (path, DV id) as PROTOCOL "Action Reconciliation"
     * says, both stay live (15 files, as expected.jsonl says). */
    assert_int_equal(json_integer_value(json_object_get(e, "files")), s->n_files);
    json_t *pc = json_object_get(e, "partitionColumns");
    assert_int_equal(json_array_size(pc), s->metadata.n_partition_columns);
    for (size_t i = 0; i < json_array_size(pc); i++)
        assert_string_equal(json_string_value(json_array_get(pc, i)),
                            s->metadata.partition_columns[i]);
    json_t *txn = json_object_get(e, "txn");
    assert_int_equal(json_object_size(txn), s->n_txns);
    const char *k;
    json_t *v;
    json_object_foreach(txn, k, v) {
        assert_int_equal(json_integer_value(v), mcdc_delta_snapshot_txn(s, k));
    }
    json_t *schema = json_object_get(e, "schema");
    assert_int_equal(json_array_size(schema), s->schema->n_fields);
    for (size_t i = 0; i < json_array_size(schema); i++)
        assert_string_equal(json_string_value(json_object_get(json_array_get(schema, i), "name")),
                            s->schema->fields[i].name);
    mcdc_delta_snapshot_free(s);
    json_decref(e);
}

#define CASE(fn, name) \
    static void test_delta_golden_log__##fn(void **state) { (void)state; check_case(name); }

CASE(basic_with_inserts_deletes_checkpoint, "basic-with-inserts-deletes-checkpoint")
CASE(basic_with_inserts_merge, "basic-with-inserts-merge")
CASE(corrupted_last_checkpoint, "corrupted-last-checkpoint-kernel")
CASE(array_primitives, "data-reader-array-primitives")
CASE(map, "data-reader-map")
CASE(nested_struct, "data-reader-nested-struct")
CASE(partition_values, "data-reader-partition-values")
CASE(primitives, "data-reader-primitives")
CASE(timestamp_ntz, "data-reader-timestamp_ntz")
CASE(decimal_various, "decimal-various-scale-precision")
CASE(dv_partitioned_with_checkpoint, "dv-partitioned-with-checkpoint")
CASE(timestamp_int96, "kernel-timestamp-INT96")
CASE(latest_metadata_protocol, "log-replay-latest-metadata-protocol")
CASE(multi_part_checkpoint, "multi-part-checkpoint")
CASE(only_checkpoint_files, "only-checkpoint-files")
CASE(parquet_all_types, "parquet-all-types")
CASE(snapshot_data0, "snapshot-data0")
CASE(snapshot_data1, "snapshot-data1")
CASE(snapshot_data2, "snapshot-data2")
CASE(snapshot_data3, "snapshot-data3")
CASE(column_mapping_name, "table-with-columnmapping-mode-name")
CASE(time_travel_start, "time-travel-start")
CASE(time_travel_start20, "time-travel-start-start20")
CASE(v2_checkpoint_parquet, "v2-checkpoint-parquet")

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_golden_log__basic_with_inserts_deletes_checkpoint),
        cmocka_unit_test(test_delta_golden_log__basic_with_inserts_merge),
        cmocka_unit_test(test_delta_golden_log__corrupted_last_checkpoint),
        cmocka_unit_test(test_delta_golden_log__array_primitives),
        cmocka_unit_test(test_delta_golden_log__map),
        cmocka_unit_test(test_delta_golden_log__nested_struct),
        cmocka_unit_test(test_delta_golden_log__partition_values),
        cmocka_unit_test(test_delta_golden_log__primitives),
        cmocka_unit_test(test_delta_golden_log__timestamp_ntz),
        cmocka_unit_test(test_delta_golden_log__decimal_various),
        cmocka_unit_test(test_delta_golden_log__dv_partitioned_with_checkpoint),
        cmocka_unit_test(test_delta_golden_log__timestamp_int96),
        cmocka_unit_test(test_delta_golden_log__latest_metadata_protocol),
        cmocka_unit_test(test_delta_golden_log__multi_part_checkpoint),
        cmocka_unit_test(test_delta_golden_log__only_checkpoint_files),
        cmocka_unit_test(test_delta_golden_log__parquet_all_types),
        cmocka_unit_test(test_delta_golden_log__snapshot_data0),
        cmocka_unit_test(test_delta_golden_log__snapshot_data1),
        cmocka_unit_test(test_delta_golden_log__snapshot_data2),
        cmocka_unit_test(test_delta_golden_log__snapshot_data3),
        cmocka_unit_test(test_delta_golden_log__column_mapping_name),
        cmocka_unit_test(test_delta_golden_log__time_travel_start),
        cmocka_unit_test(test_delta_golden_log__time_travel_start20),
        cmocka_unit_test(test_delta_golden_log__v2_checkpoint_parquet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
