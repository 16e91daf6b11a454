/* Unit tests for pipeline/snapshot_keys.c: key values as JSON and back, and chunk plans
 * (grid counts for an integer key, keyset bounds for others) over an in-memory source. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pipeline/snapshot_int.h"

/* ---- a source of sorted integer keys ---------------------------------------------------- */

typedef struct int_source {
    mcdc_source base;
    const int64_t *keys; /* ascending */
    size_t n;
    int n_count_calls;
} int_source;

static int is_key_at(mcdc_source *b, const char *ci, const mcdc_value *from, int64_t n, bool desc,
                     mcdc_row_cb cb, void *payload)
{
    (void)ci;
    int_source *s = (int_source *)b;
    int64_t pos;
    if (!desc) {
        size_t i = 0;
        while (from && i < s->n && s->keys[i] < from[0].v.i) i++;
        pos = (int64_t)i + n;
        if (pos >= (int64_t)s->n) return 0;
    } else {
        int64_t i = (int64_t)s->n - 1;
        while (from && i >= 0 && s->keys[i] > from[0].v.i) i--;
        pos = i - n;
        if (pos < 0) return 0;
    }
    mcdc_value v = { .is_null = false };
    v.v.i = s->keys[pos];
    return cb(&v, payload);
}

static int is_key_count(mcdc_source *b, const char *ci, const mcdc_value *lo, const mcdc_value *hi,
                        int64_t *out)
{
    (void)ci;
    int_source *s = (int_source *)b;
    s->n_count_calls++;
    *out = 0;
    for (size_t i = 0; i < s->n; i++)
        if ((!lo || s->keys[i] >= lo[0].v.i) && (!hi || s->keys[i] < hi[0].v.i)) (*out)++;
    return 0;
}

static const mcdc_source_ops int_ops = {
    .key_at = is_key_at, .key_count = is_key_count,
};

static snap_keydef one_key(mcdc_type_id t)
{
    static char *names[1] = { "k" };
    static mcdc_column cols[1];
    memset(cols, 0, sizeof cols);
    cols[0].name = "k";
    cols[0].type = t;
    snap_keydef k = { 1, names, cols, t == MCDC_TYPE_INT || t == MCDC_TYPE_LONG };
    return k;
}

static char *plan_text(int_source *src, int64_t chunk_rows, const char *extent, int64_t *total)
{
    snap_keydef k = one_key(MCDC_TYPE_INT);
    json_t *ext = extent ? json_loads(extent, 0, NULL) : NULL, *chunks = NULL;
    assert_int_equal(0, mcdc_snap__plan(&src->base, "ci", &k, chunk_rows, ext, &chunks, total));
    char *t = json_dumps(chunks, JSON_COMPACT);
    json_decref(chunks);
    json_decref(ext);
    return t;
}

static void test_pipeline_snapshot_keys__grid_packs_chunks_of_at_most_chunk_rows(void **state)
{
    (void)state;
    /* 30 keys 1..30 and a skewed tail: 100, 1000, 1001, 1002 */
    int64_t keys[34];
    for (int i = 0; i < 30; i++) keys[i] = i + 1;
    keys[30] = 100; keys[31] = 1000; keys[32] = 1001; keys[33] = 1002;
    int_source src = { { &int_ops, "mem" }, keys, 34, 0 };
    int64_t total = 0;
    char *t = plan_text(&src, 10, NULL, &total);
    assert_int_equal(34, total);
    /* every chunk holds at most 10 rows, the first is open below, the last ends at MAX+1 */
    json_t *a = json_loads(t, 0, NULL);
    size_t n = json_array_size(a);
    assert_true(n >= 4);
    assert_true(json_is_null(json_array_get(json_array_get(a, 0), 0)));
    assert_int_equal(1003, json_integer_value(json_array_get(json_array_get(a, n - 1), 1)));
    int64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *c = json_array_get(a, i);
        mcdc_value lo = { .is_null = false }, hi = { .is_null = false };
        lo.v.i = json_integer_value(json_array_get(c, 0));
        hi.v.i = json_integer_value(json_array_get(c, 1));
        int64_t cnt;
        is_key_count(&src.base, "ci", json_is_null(json_array_get(c, 0)) ? NULL : &lo, &hi, &cnt);
        assert_true(cnt <= 10);
        sum += cnt;
        if (i > 0) /* each starts where the previous ends */
            assert_true(json_equal(json_array_get(c, 0), json_array_get(json_array_get(a, i - 1), 1)));
    }
    assert_int_equal(34, sum);
    json_decref(a);
    free(t);
}

static void test_pipeline_snapshot_keys__grid_uses_the_open_extent(void **state)
{
    (void)state;
    int64_t keys[] = { 1, 2, 3, 4, 5, 6, 7, 8, 500 }; /* 500 was inserted after the open */
    int_source src = { { &int_ops, "mem" }, keys, 9, 0 };
    int64_t total = 0;
    char *t = plan_text(&src, 4, "{\"kind\":\"int\",\"lo\":1,\"hi\":8,\"rows\":8}", &total);
    assert_string_equal("[[null,5],[5,9]]", t);
    free(t);
    /* an empty table at the open: one open chunk */
    t = plan_text(&src, 4, "{\"kind\":\"int\",\"lo\":null,\"hi\":null,\"rows\":0}", &total);
    assert_string_equal("[[null,null]]", t);
    free(t);
}

static void test_pipeline_snapshot_keys__keyset_bounds_are_chunk_rows_apart(void **state)
{
    (void)state;
    int64_t keys[] = { 10, 20, 30, 40, 50, 60, 70 };
    int_source src = { { &int_ops, "mem" }, keys, 7, 0 };
    snap_keydef k = one_key(MCDC_TYPE_INT);
    k.is_int = false; /* plan it as any other key */
    json_t *chunks = NULL;
    int64_t total = 0;
    assert_int_equal(0, mcdc_snap__plan(&src.base, "ci", &k, 3, NULL, &chunks, &total));
    char *t = json_dumps(chunks, JSON_COMPACT);
    assert_string_equal("[[null,40],[40,70],[70,null]]", t);
    assert_int_equal(7, total);
    free(t);
    json_decref(chunks);
}

static void test_pipeline_snapshot_keys__a_source_without_key_reads_is_refused(void **state)
{
    (void)state;
    static const mcdc_source_ops none = { 0 };
    mcdc_source src = { &none, "odbc:Server=x" };
    snap_keydef k = one_key(MCDC_TYPE_INT);
    json_t *chunks = NULL;
    int64_t total = 0;
    assert_int_equal(MCDC_EUNSUPPORTED, mcdc_snap__plan(&src, "ci", &k, 3, NULL, &chunks, &total));
    assert_null(chunks);
    assert_non_null(strstr(mcdc_error_last()->hint, "--bootstrap-mode full"));
}

/* ---- key values as JSON ------------------------------------------------------------------- */

static void roundtrip(const snap_keydef *k, const char *json)
{
    json_t *j = json_loads(json, JSON_DECODE_ANY, NULL);
    assert_non_null(j);
    snap_keyvals kv;
    assert_int_equal(0, mcdc_snap__key_from_json(k, j, &kv));
    json_t *back = NULL;
    assert_int_equal(0, mcdc_snap__key_to_json(k, kv.v, &back));
    char *t = json_dumps(back, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_string_equal(json, t);
    free(t);
    json_decref(back);
    json_decref(j);
    mcdc_snap__keyvals_clear(&kv);
}

static void test_pipeline_snapshot_keys__values_read_back_as_written(void **state)
{
    (void)state;
    static char *names[5] = { "s", "d", "t", "m", "b" };
    mcdc_column cols[5] = {
        { "s", MCDC_TYPE_STRING, 0, 0, false }, { "d", MCDC_TYPE_DATE, 0, 0, false },
        { "t", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, false }, { "m", MCDC_TYPE_DECIMAL, 12, 2, false },
        { "b", MCDC_TYPE_BINARY, 0, 0, false },
    };
    snap_keydef k = { 5, names, cols, false };
    roundtrip(&k, "[\"café \\\"x\\\"\",\"1969-12-31\",\"2026-10-01T14:00:00.123456\",\"-12.50\",\"0x00FF10\"]");
    snap_keydef one = one_key(MCDC_TYPE_LONG);
    roundtrip(&one, "-9223372036854775808");
    /* a value of the wrong type, or a list of the wrong length, is refused */
    snap_keyvals kv;
    json_t *bad = json_loads("[\"a\",\"2026-13-01\",\"2026-10-01T00:00:00\",\"1\",\"0x00\"]", 0, NULL);
    assert_int_equal(MCDC_ECORRUPT, mcdc_snap__key_from_json(&k, bad, &kv));
    json_decref(bad);
    bad = json_loads("[\"a\"]", 0, NULL);
    assert_int_equal(MCDC_ECORRUPT, mcdc_snap__key_from_json(&k, bad, &kv));
    json_decref(bad);
    bad = json_string("12");
    assert_int_equal(MCDC_ECORRUPT, mcdc_snap__key_from_json(&one, bad, &kv));
    json_decref(bad);
    /* null is an open bound */
    assert_int_equal(0, mcdc_snap__key_from_json(&k, json_null(), &kv));
    assert_null(kv.v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_snapshot_keys__grid_packs_chunks_of_at_most_chunk_rows),
        cmocka_unit_test(test_pipeline_snapshot_keys__grid_uses_the_open_extent),
        cmocka_unit_test(test_pipeline_snapshot_keys__keyset_bounds_are_chunk_rows_apart),
        cmocka_unit_test(test_pipeline_snapshot_keys__a_source_without_key_reads_is_refused),
        cmocka_unit_test(test_pipeline_snapshot_keys__values_read_back_as_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
