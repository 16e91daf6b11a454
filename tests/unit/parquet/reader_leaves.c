/* Unit tests for parquet/leaves.c: rows as the level/value entries of each projected leaf
 * (mcdc_parquet_reader_next_leaves): the leaves' paths and levels, a map and a list whose
 * rows cross pages, nulls at every depth, strings that outlive their page, and mixing
 * with the other row calls. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>
#include <unistd.h>

#include "mcdc/parquet.h"

static mcdc_parquet_node *leaf(const char *name, mcdc_type_id t)
{
    mcdc_column c = { 0 };
    c.type = t;
    c.nullable = true;
    return mcdc_parquet_node_leaf(name, &c);
}

/* a: struct { id long, m map<string,string>, l list<string> }, n: long */
static void write_file(const char *path, const char *const *rows, size_t n)
{
    mcdc_parquet_node *root = mcdc_parquet_node_struct("schema", false);
    mcdc_parquet_node *a = mcdc_parquet_node_struct("a", true);
    mcdc_parquet_node_add(a, leaf("id", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(a, mcdc_parquet_node_map("m", true, leaf("key", MCDC_TYPE_STRING),
                                                   leaf("value", MCDC_TYPE_STRING)));
    mcdc_parquet_node_add(a, mcdc_parquet_node_list("l", true, leaf("element", MCDC_TYPE_STRING)));
    mcdc_parquet_node_add(root, a);
    mcdc_parquet_node_add(root, leaf("n", MCDC_TYPE_LONG));
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    o.page_max_values = 2; /* rows of the map and the list cross pages */
    o.dictionary = false;  /* strings live in the pages */
    mcdc_parquet_writer *w = NULL;
    assert_int_equal(0, mcdc_parquet_writer_open_nested(&w, path, root, &o));
    for (size_t i = 0; i < n; i++) {
        json_t *j = json_loads(rows[i], 0, NULL);
        assert_non_null(j);
        assert_int_equal(0, mcdc_parquet_writer_write_json(w, j));
        json_decref(j);
    }
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_parquet_node_free(root);
}

static const char *const rows[] = {
    ("{\"a\":{\"id\":1,\"m\":[{\"key\":\"k1\",\"value\":\"v1\"},{\"key\":\"k2\",\"value\":null},"
     "{\"key\":\"k3\",\"value\":\"v3\"}],\"l\":[\"x\",\"y\",\"z\"]},\"n\":10}"),
    "{\"a\":null,\"n\":11}",
    "{\"a\":{\"id\":null,\"m\":[],\"l\":null},\"n\":null}",
    "{\"a\":{\"id\":4,\"m\":null,\"l\":[]},\"n\":13}",
};

/* One leaf's run as text: "rep/def=value ..." */
static void run_text(char *out, size_t cap, const mcdc_parquet_leaf_run *r, bool strings)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t k = 0; k < r->n && at < cap; k++) {
        const mcdc_value *v = &r->vals[k];
        if (v->is_null)
            at += (size_t)snprintf(out + at, cap - at, "%s%d/%d", k ? " " : "", r->rep[k], r->def[k]);
        else if (strings)
            at += (size_t)snprintf(out + at, cap - at, "%s%d/%d=%.*s", k ? " " : "", r->rep[k],
                                   r->def[k], (int)v->v.s.len, v->v.s.ptr);
        else
            at += (size_t)snprintf(out + at, cap - at, "%s%d/%d=%lld", k ? " " : "", r->rep[k],
                                   r->def[k], (long long)v->v.i);
    }
}

static void test_parquet_reader_leaves__levels_and_values(void **state)
{
    (void)state;
    char path[] = "/tmp/mcdc-leaves-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    write_file(path, rows, 4);

    mcdc_parquet_reader *r = NULL;
    assert_int_equal(0, mcdc_parquet_reader_open(&r, path, NULL));
    assert_int_equal(5, mcdc_parquet_reader_num_leaves(r));
    mcdc_parquet_leaf_info li;
    assert_int_equal(0, mcdc_parquet_reader_leaf_info(r, 1, &li));
    assert_string_equal("a.m.key_value.key", li.path);
    assert_int_equal(4, li.depth);
    assert_int_equal(3, li.max_def); /* a, m, key_value present; the key is required */
    assert_int_equal(1, li.max_rep);
    assert_int_equal(1, li.defs[0]);
    assert_int_equal(2, li.defs[1]);
    assert_int_equal(3, li.defs[2]);
    assert_true(li.repeated[2]);
    assert_false(li.repeated[1]);
    assert_int_equal(MCDC_TYPE_STRING, li.type.type);
    assert_int_equal(MCDC_PARQUET_PART_STRUCT, li.kinds[0]);
    assert_int_equal(MCDC_PARQUET_PART_MAP, li.kinds[1]);
    assert_int_equal(MCDC_PARQUET_PART_STRUCT, li.kinds[2]);
    assert_int_equal(MCDC_PARQUET_PART_LEAF, li.kinds[3]);
    assert_int_equal(0, mcdc_parquet_reader_leaf_info(r, 3, &li));
    assert_string_equal("a.l.list.element", li.path);
    assert_int_equal(MCDC_PARQUET_PART_LIST, li.kinds[1]);
    assert_int_equal(MCDC_PARQUET_PART_LEAF, li.kinds[3]);
    assert_int_equal(0, mcdc_parquet_reader_leaf_info(r, 4, &li));
    assert_string_equal("n", li.path);
    assert_int_equal(MCDC_EINVAL, mcdc_parquet_reader_leaf_info(r, 5, &li));

    static const char *const want[4][5] = {
        { "0/2=1", "0/3=k1 1/3=k2 1/3=k3", "0/4=v1 1/3 1/4=v3", "0/4=x 1/4=y 1/4=z", "0/1=10" },
        { "0/0", "0/0", "0/0", "0/0", "0/1=11" },
        { "0/1", "0/2", "0/2", "0/1", "0/0" },
        { "0/2=4", "0/1", "0/1", "0/2", "0/1=13" },
    };
    const mcdc_parquet_leaf_run *runs;
    char got[256];
    for (int row = 0; row < 4; row++) {
        assert_int_equal(1, mcdc_parquet_reader_next_leaves(r, &runs));
        for (int l = 0; l < 5; l++) {
            run_text(got, sizeof got, &runs[l], l >= 1 && l <= 3);
            assert_string_equal(want[row][l], got);
        }
    }
    assert_int_equal(0, mcdc_parquet_reader_next_leaves(r, &runs));
    mcdc_parquet_reader_free(r);
    unlink(path);
}

static void test_parquet_reader_leaves__mixes_with_other_row_calls(void **state)
{
    (void)state;
    char path[] = "/tmp/mcdc-leaves-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    write_file(path, rows, 4);
    mcdc_parquet_reader *r = NULL;
    assert_int_equal(0, mcdc_parquet_reader_open(&r, path, NULL));
    static const char *const sel[] = { "n", "a" };
    assert_int_equal(0, mcdc_parquet_reader_select(r, sel, 2));
    assert_int_equal(5, mcdc_parquet_reader_num_leaves(r)); /* file order, not selection order */
    json_t *j = NULL;
    assert_int_equal(1, mcdc_parquet_reader_next_json(r, &j));
    json_decref(j);
    const mcdc_parquet_leaf_run *runs;
    assert_int_equal(1, mcdc_parquet_reader_next_leaves(r, &runs)); /* row 2 */
    assert_true(runs[4].vals[0].v.i == 11);
    assert_int_equal(1, runs[1].n);
    assert_int_equal(1, mcdc_parquet_reader_next_json(r, &j)); /* row 3 */
    char *txt = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal("{\"n\":null,\"a\":{\"id\":null,\"m\":[],\"l\":null}}", txt);
    free(txt);
    json_decref(j);
    assert_int_equal(1, mcdc_parquet_reader_next_leaves(r, &runs)); /* row 4 */
    assert_true(runs[0].vals[0].v.i == 4);
    assert_int_equal(0, mcdc_parquet_reader_next_leaves(r, &runs));
    mcdc_parquet_reader_free(r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_reader_leaves__levels_and_values),
        cmocka_unit_test(test_parquet_reader_leaves__mixes_with_other_row_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
