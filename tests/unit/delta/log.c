/* Unit tests for delta/log.c, actions.c, schema.c and snapshot.c on hand-made logs:
 * corrupt inputs (truncated line, gap in versions, bad _last_checkpoint, missing protocol),
 * unknown actions and fields ignored, reader-feature gate, DV keys, action round trips. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/log.h"
#include "delta/internal.h"
#include "unit/delta/testenv.h"

#define PROTO "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n"
#define META                                                                                  \
    "{\"metaData\":{\"id\":\"x\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"          \
    "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":\\\"id\\\","   \
    "\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}]}\","                   \
    "\"partitionColumns\":[],\"configuration\":{}}}\n"
#define ADD(p) "{\"add\":{\"path\":\"" p "\",\"partitionValues\":{},\"size\":1,\"modificationTime\":1,\"dataChange\":true}}\n"
#define REMOVE(p) "{\"remove\":{\"path\":\"" p "\",\"deletionTimestamp\":1,\"dataChange\":true}}\n"

static int setup(void **state)
{
    char *d = testenv_tmpdir("log");
    char p[1024];
    snprintf(p, sizeof p, "%s/_delta_log", d);
    mkdir(p, 0777);
    *state = d;
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

static void put(const char *t, int v, const char *text)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/_delta_log/%020d.json", t, v);
    testenv_write(p, text);
}

static void test_delta_log__path_encode_keeps_unreserved_and_slash(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    assert_int_equal(0, mcdc_delta_path_encode(&b, "date=2026-10-01/part a%b~.parquet"));
    assert_string_equal("date%3D2026-10-01/part%20a%25b~.parquet", b.ptr);
    mcdc_buf_clear(&b);
    assert_int_equal(0, mcdc_delta_path_encode(&b, "caf\xc3\xa9"));
    assert_string_equal("caf%C3%A9", b.ptr);
    mcdc_buf_dispose(&b);
}

static void test_delta_log__truncated_line_names_file_and_line(void **state)
{
    const char *t = *state;
    put(t, 0, PROTO META ADD("a"));
    put(t, 1, ADD("b") "{\"add\":{\"path\":\"c\",\"partitionVal");
    mcdc_delta_snapshot *s;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_snapshot_open(&s, t, -1));
    assert_null(s);
    const char *m = mcdc_error_last()->message;
    assert_non_null(strstr(m, "00000000000000000001.json: line 2"));
    assert_non_null(strstr(m, "truncated"));
    /* the version before is still readable */
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, 0));
    assert_int_equal(1, s->n_files);
    mcdc_delta_snapshot_free(s);
}

static void test_delta_log__gap_in_versions_is_corrupt(void **state)
{
    const char *t = *state;
    put(t, 0, PROTO META);
    put(t, 1, ADD("a"));
    put(t, 3, ADD("b"));
    mcdc_delta_snapshot *s;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_snapshot_open(&s, t, -1));
    assert_non_null(strstr(mcdc_error_last()->message, "version 2 is missing"));
    /* the history refuses the hole too, rather than list 0, 1, 3 */
    mcdc_delta_history_entry *h;
    size_t n;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_history(&h, &n, t));
    assert_null(h);
    assert_non_null(strstr(mcdc_error_last()->message, "version 2 is missing"));
    /* a log that starts later without a checkpoint lost its beginning */
    char p[1024];
    snprintf(p, sizeof p, "%s/_delta_log/%020d.json", t, 0);
    remove(p);
    put(t, 2, ADD("c"));
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_history(&h, &n, t));
    assert_non_null(strstr(mcdc_error_last()->message, "no checkpoint and no commit 0"));
}

static void test_delta_log__unknown_actions_and_fields_are_ignored(void **state)
{
    const char *t = *state;
    put(t, 0, PROTO META "{\"futureAction\":{\"x\":1}}\n"
              "{\"add\":{\"path\":\"a\",\"partitionValues\":{},\"size\":1,\"modificationTime\":1,"
              "\"dataChange\":true,\"newField\":[1,2]}}\n\n");
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(1, s->n_files);
    mcdc_delta_snapshot_free(s);
}

/* Warnings logged while a test runs (the sink is process-wide). */
static char warned[4096];
static size_t n_warned;

static void warn_sink(mcdc_log_level level, const char *logger, const char *msg, void *payload)
{
    (void)logger;
    (void)payload;
    if (level < MCDC_LOG_WARN)
        return;
    n_warned++;
    size_t used = strlen(warned);
    snprintf(warned + used, sizeof warned - used, "%s\n", msg);
}

static void watch_warnings(void)
{
    warned[0] = '\0';
    n_warned = 0;
    mcdc_log_set_sink(warn_sink, NULL);
}

static void test_delta_log__bad_last_checkpoint_falls_back_to_listing(void **state)
{
    const char *t = *state;
    put(t, 0, PROTO META ADD("a"));
    put(t, 1, REMOVE("a") ADD("b"));
    char p[1024];
    snprintf(p, sizeof p, "%s/_delta_log/_last_checkpoint", t);
    testenv_write(p, "{\"version\":");
    mcdc_delta_snapshot *s;
    watch_warnings();
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    mcdc_log_set_sink(NULL, NULL);
    assert_int_equal(1, n_warned);
    assert_non_null(strstr(warned, "_last_checkpoint: ignored, not JSON"));
    assert_int_equal(1, s->version);
    assert_int_equal(1, s->n_files);
    assert_string_equal("b", s->files[0].path);
    assert_int_equal(1, s->n_tombstones);
    mcdc_delta_snapshot_free(s);
    testenv_write(p, "{\"version\":99,\"size\":3}");
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(1, s->version);
    mcdc_delta_snapshot_free(s);
}

static void test_delta_log__bad_last_checkpoint_is_said_once(void **state)
{
    const char *t = *state;
    put(t, 0, PROTO META ADD("a"));
    put(t, 1, REMOVE("a") ADD("b"));
    mcdc_delta_snapshot *s;
    watch_warnings();
    /* no _last_checkpoint at all: the usual case, nothing to say */
    assert_int_equal(0, mcdc_delta__snapshot_load(&s, t, -1, NULL));
    mcdc_delta_snapshot_free(s);
    assert_int_equal(0, n_warned);
    /* an empty one (0 bytes): the listing decides, and a warning says why */
    char p[1024];
    snprintf(p, sizeof p, "%s/_delta_log/_last_checkpoint", t);
    testenv_write(p, "");
    assert_int_equal(0, mcdc_delta__snapshot_load(&s, t, -1, NULL));
    assert_int_equal(1, s->version);
    assert_string_equal("b", s->files[0].path);
    mcdc_delta_snapshot_free(s);
    assert_int_equal(1, n_warned);
    assert_non_null(strstr(warned, "_delta_log/_last_checkpoint: ignored, the file is empty"));
    assert_non_null(strstr(warned, "listing _delta_log"));
    /* loading the table again (as a stream does, many times) does not repeat it */
    assert_int_equal(0, mcdc_delta__snapshot_load(&s, t, -1, NULL));
    mcdc_delta_snapshot_free(s);
    assert_int_equal(1, n_warned);
    mcdc_log_set_sink(NULL, NULL);
}

static void test_delta_log__empty_commit_is_corrupt_not_empty(void **state)
{
    const char *t = *state;
    put(t, 0, PROTO META ADD("a"));
    put(t, 1, ADD("b"));
    put(t, 2, "");
    mcdc_delta_snapshot *s;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_snapshot_open(&s, t, -1));
    assert_null(s);
    const char *m = mcdc_error_last()->message;
    assert_non_null(strstr(m, "00000000000000000002.json: the file is empty (0 bytes)"));
    assert_non_null(strstr(mcdc_error_last()->hint, "restore"));
    /* a version before it is still readable; the history stops at it */
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, 1));
    assert_int_equal(2, s->n_files);
    mcdc_delta_snapshot_free(s);
    mcdc_delta_history_entry *h;
    size_t n;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_history(&h, &n, t));
    assert_null(h);
    /* blank lines only are no commit either */
    put(t, 2, "\n \n");
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_snapshot_open(&s, t, -1));
    assert_non_null(strstr(mcdc_error_last()->message, "00000000000000000002.json: the file "
                                                       "holds no action (3 blank bytes)"));
    /* a version after it does not hide it */
    put(t, 3, ADD("c"));
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_snapshot_open(&s, t, -1));
    assert_non_null(strstr(mcdc_error_last()->message, "00000000000000000002.json"));
}

static void test_delta_log__missing_protocol_or_table(void **state)
{
    const char *t = *state;
    put(t, 0, META ADD("a"));
    mcdc_delta_snapshot *s;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_snapshot_open(&s, t, -1));
    assert_non_null(strstr(mcdc_error_last()->message, "no protocol action"));
    char p[1024];
    snprintf(p, sizeof p, "%s/nothing", t);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_delta_snapshot_open(&s, p, -1));
    assert_non_null(strstr(mcdc_error_last()->message, "no _delta_log"));
}

static void test_delta_log__unknown_reader_feature_is_refused_by_name(void **state)
{
    const char *t = *state;
    put(t, 0, "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
              "\"readerFeatures\":[\"timestampNtz\",\"catalogManaged\"],"
              "\"writerFeatures\":[\"timestampNtz\",\"catalogManaged\"]}}\n" META);
    mcdc_delta_snapshot *s;
    assert_int_equal(MCDC_EUNSUPPORTED, mcdc_delta_snapshot_open(&s, t, -1));
    assert_non_null(strstr(mcdc_error_last()->message, "'catalogManaged'"));
    put(t, 1, "{\"protocol\":{\"minReaderVersion\":99,\"minWriterVersion\":7}}\n");
    assert_int_equal(MCDC_EUNSUPPORTED, mcdc_delta_snapshot_open(&s, t, -1));
    assert_non_null(strstr(mcdc_error_last()->message, "reader version 99"));
}

static void test_delta_log__file_keys_include_the_deletion_vector(void **state)
{
    const char *t = *state;
    put(t, 0, PROTO META ADD("a") ADD("b"));
    /* a gets a DV: add (a, dv) + remove (a); then re-add of b after its removal */
    put(t, 1, "{\"add\":{\"path\":\"a\",\"partitionValues\":{},\"size\":1,\"modificationTime\":1,"
              "\"dataChange\":true,\"deletionVector\":{\"storageType\":\"i\",\"pathOrInlineDv\":"
              "\"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L\",\"sizeInBytes\":40,"
              "\"cardinality\":6}}}\n" REMOVE("a") REMOVE("b"));
    put(t, 2, ADD("b"));
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(2, s->n_files);
    assert_string_equal("a", s->files[0].path);
    assert_true(s->files[0].has_dv);
    assert_int_equal('i', s->files[0].dv.storage_type);
    assert_int_equal(-1, s->files[0].dv.offset);
    assert_string_equal("b", s->files[1].path);
    mcdc_delta_snapshot_free(s);
}

static void test_delta_log__action_round_trip(void **state)
{
    (void)state;
    const char *in = "{\"add\":{\"path\":\"x%20y.parquet\",\"partitionValues\":{\"p\":null,\"q\":\"1\"},"
                     "\"size\":9007199254740993,\"modificationTime\":2,\"dataChange\":false,"
                     "\"stats\":\"{\\\"numRecords\\\":1}\",\"tags\":{\"k\":\"v\"}}}";
    mcdc_delta_action a;
    assert_int_equal(0, mcdc_delta_action_parse(&a, in, strlen(in)));
    assert_int_equal(MCDC_DELTA_ACTION_ADD, a.kind);
    assert_int_equal(9007199254740993LL, a.u.file.size);
    bool found;
    assert_null(mcdc_delta_map_get(&a.u.file.partition_values, "p", &found));
    assert_true(found);
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    assert_int_equal(0, mcdc_delta_action_to_json(&b, &a));
    assert_string_equal(in, b.ptr);
    mcdc_buf_dispose(&b);
    mcdc_delta_action_clear(&a);
    /* a checkpoint row: maps as key/value arrays, other actions null */
    const char *row = "{\"txn\":null,\"add\":null,\"remove\":{\"path\":\"r\",\"deletionTimestamp\":5,"
                      "\"dataChange\":false,\"partitionValues\":[{\"key\":\"p\",\"value\":\"1\"}],"
                      "\"deletionVector\":{\"storageType\":null}},\"metaData\":null}";
    assert_int_equal(0, mcdc_delta_action_parse(&a, row, strlen(row)));
    assert_int_equal(MCDC_DELTA_ACTION_REMOVE, a.kind);
    assert_string_equal("1", mcdc_delta_map_get(&a.u.file.partition_values, "p", NULL));
    assert_false(a.u.file.has_dv);
    mcdc_delta_action_clear(&a);
    const char *nopath = "{\"add\":{\"size\":1}}";
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_action_parse(&a, nopath, strlen(nopath)));
    assert_non_null(strstr(mcdc_error_last()->message, "add: missing path"));
    mcdc_delta_action_clear(&a);
}

static void test_delta_log__schema_parse_nested_and_mapping(void **state)
{
    (void)state;
    const char *js = "{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"decimal(10, 4)\","
                     "\"nullable\":false,\"metadata\":{\"delta.columnMapping.id\":3,"
                     "\"delta.columnMapping.physicalName\":\"col-1\"}},{\"name\":\"m\",\"type\":"
                     "{\"type\":\"map\",\"keyType\":\"string\",\"valueType\":{\"type\":\"array\","
                     "\"elementType\":\"integer\",\"containsNull\":false},\"valueContainsNull\":true},"
                     "\"nullable\":true,\"metadata\":{}}]}";
    mcdc_delta_schema *s;
    assert_int_equal(0, mcdc_delta_schema_parse(&s, js));
    assert_int_equal(2, s->n_fields);
    assert_string_equal("col-1", s->fields[0].physical_name);
    assert_int_equal(3, s->fields[0].field_id);
    assert_false(s->fields[0].nullable);
    assert_int_equal(10, s->fields[0].type.prim.precision);
    assert_int_equal(4, s->fields[0].type.prim.scale);
    assert_int_equal(MCDC_DELTA_TYPE_MAP, s->fields[1].type.kind);
    assert_int_equal(MCDC_DELTA_TYPE_ARRAY, s->fields[1].type.element->kind);
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    assert_int_equal(0, mcdc_delta_type_to_json(&b, &s->fields[1].type));
    assert_string_equal("{\"type\":\"map\",\"keyType\":\"string\",\"valueType\":{\"type\":\"array\","
                        "\"elementType\":\"integer\",\"containsNull\":false},"
                        "\"valueContainsNull\":true}", b.ptr);
    mcdc_buf_dispose(&b);
    mcdc_delta_schema_free(s);
    /* variant (the variantType feature) is a kind of its own; void is refused by name */
    assert_int_equal(0, mcdc_delta_schema_parse(&s, "{\"type\":\"struct\",\"fields\":[{\"name\":"
                                                    "\"v\",\"type\":\"variant\",\"nullable\":true}]}"));
    assert_int_equal(MCDC_DELTA_TYPE_VARIANT, s->fields[0].type.kind);
    mcdc_delta_schema_free(s);
    assert_int_equal(MCDC_EUNSUPPORTED,
                     mcdc_delta_schema_parse(&s, "{\"type\":\"struct\",\"fields\":[{\"name\":\"v\","
                                                 "\"type\":\"void\",\"nullable\":true}]}"));
    assert_non_null(strstr(mcdc_error_last()->message, "'void'"));
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_delta_log__path_encode_keeps_unreserved_and_slash),
        T(test_delta_log__truncated_line_names_file_and_line),
        T(test_delta_log__gap_in_versions_is_corrupt),
        T(test_delta_log__unknown_actions_and_fields_are_ignored),
        T(test_delta_log__bad_last_checkpoint_falls_back_to_listing),
        T(test_delta_log__bad_last_checkpoint_is_said_once),
        T(test_delta_log__empty_commit_is_corrupt_not_empty),
        T(test_delta_log__missing_protocol_or_table),
        T(test_delta_log__unknown_reader_feature_is_refused_by_name),
        T(test_delta_log__file_keys_include_the_deletion_vector),
        cmocka_unit_test(test_delta_log__action_round_trip),
        cmocka_unit_test(test_delta_log__schema_parse_nested_and_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
