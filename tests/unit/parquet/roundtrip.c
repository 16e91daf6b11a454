/* Round-trip property tests of the Parquet writer against the reader: random flat schemas
 * and data (nulls, empty and long strings, extremes, NaN and signed zeros, repeats for
 * dictionaries) under random options (codec, dictionary on/off and tiny limits, tiny
 * pages and row groups) are written, read back value for value, and the writer's
 * statistics are checked against the data; random nested rows of a checkpoint-shaped
 * tree are written and read back as JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <jansson.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/parquet.h"

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

static mcdc_int128 pow10i(int n)
{
    mcdc_int128 x = 1;
    while (n--)
        x *= 10;
    return x;
}

static char pool[20000];

static void random_value(mcdc_value *v, const mcdc_column *c, const mcdc_value *repeats)
{
    memset(v, 0, sizeof *v);
    if (c->nullable && below(5) == 0) {
        v->is_null = true;
        return;
    }
    if (repeats && below(3) == 0) { /* a repeat: dictionaries get hits */
        *v = repeats[below(4)];
        return;
    }
    int ext = below(10) == 0 ? (below(2) ? 1 : -1) : 0;
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN: v->v.b = below(2); break;
    case MCDC_TYPE_BYTE: v->v.i = ext ? (ext < 0 ? INT8_MIN : INT8_MAX) : (int8_t)rnd(); break;
    case MCDC_TYPE_SHORT: v->v.i = ext ? (ext < 0 ? INT16_MIN : INT16_MAX) : (int16_t)rnd(); break;
    case MCDC_TYPE_INT: v->v.i = ext ? (ext < 0 ? INT32_MIN : INT32_MAX) : (int32_t)rnd(); break;
    case MCDC_TYPE_DATE: v->v.i = ext ? (ext < 0 ? INT32_MIN : INT32_MAX) : (int32_t)(rnd() % 200000) - 100000; break;
    case MCDC_TYPE_LONG:
    case MCDC_TYPE_TIMESTAMP:
    case MCDC_TYPE_TIMESTAMP_NTZ: v->v.i = ext ? (ext < 0 ? INT64_MIN : INT64_MAX) : (int64_t)rnd(); break;
    case MCDC_TYPE_FLOAT: {
        uint32_t bits = (uint32_t)rnd();
        switch (below(8)) {
        case 0: v->v.f = NAN; break;
        case 1: v->v.f = below(2) ? -0.0f : 0.0f; break;
        case 2: v->v.f = below(2) ? INFINITY : -INFINITY; break;
        default: memcpy(&v->v.f, &bits, 4); if (isnan(v->v.f)) v->v.f = 1.5f; break;
        }
        break;
    }
    case MCDC_TYPE_DOUBLE: {
        uint64_t bits = rnd();
        switch (below(8)) {
        case 0: v->v.d = NAN; break;
        case 1: v->v.d = below(2) ? -0.0 : 0.0; break;
        case 2: v->v.d = below(2) ? INFINITY : -INFINITY; break;
        default: memcpy(&v->v.d, &bits, 8); if (isnan(v->v.d)) v->v.d = -2.5; break;
        }
        break;
    }
    case MCDC_TYPE_DECIMAL: {
        mcdc_int128 lim = pow10i(c->precision) - 1;
        mcdc_int128 x = (mcdc_int128)(((unsigned __int128)rnd() << 64 | rnd()) % (unsigned __int128)(lim + 1));
        v->v.dec = ext ? (ext < 0 ? -lim : lim) : below(2) ? -x : x;
        break;
    }
    default: { /* strings and binaries */
        size_t len = below(10) == 0 ? 0 : below(20) == 0 ? 1000 + below(15000) : below(30);
        size_t off = below(sizeof pool - len);
        v->v.s.ptr = pool + off;
        v->v.s.len = len;
        break;
    }
    }
}

static bool same_value(const mcdc_column *c, const mcdc_value *a, const mcdc_value *b)
{
    if (a->is_null || b->is_null)
        return a->is_null == b->is_null;
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN: return a->v.b == b->v.b;
    case MCDC_TYPE_FLOAT: return isnan(a->v.f) ? isnan(b->v.f) : memcmp(&a->v.f, &b->v.f, 4) == 0;
    case MCDC_TYPE_DOUBLE: return isnan(a->v.d) ? isnan(b->v.d) : memcmp(&a->v.d, &b->v.d, 8) == 0;
    case MCDC_TYPE_DECIMAL: return a->v.dec == b->v.dec;
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        return a->v.s.len == b->v.s.len && (a->v.s.len == 0 || !memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len));
    default: return a->v.i == b->v.i;
    }
}

/* -1/0/1 by the column's statistics order (NaN excluded by the caller). */
static int order(const mcdc_column *c, const mcdc_value *a, const mcdc_value *b)
{
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN: return (int)a->v.b - (int)b->v.b;
    case MCDC_TYPE_FLOAT: return (a->v.f > b->v.f) - (a->v.f < b->v.f);
    case MCDC_TYPE_DOUBLE: return (a->v.d > b->v.d) - (a->v.d < b->v.d);
    case MCDC_TYPE_DECIMAL: return (a->v.dec > b->v.dec) - (a->v.dec < b->v.dec);
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY: {
        size_t n = a->v.s.len < b->v.s.len ? a->v.s.len : b->v.s.len;
        int r = n ? memcmp(a->v.s.ptr, b->v.s.ptr, n) : 0;
        return r ? (r > 0) - (r < 0) : (a->v.s.len > b->v.s.len) - (a->v.s.len < b->v.s.len);
    }
    default: return (a->v.i > b->v.i) - (a->v.i < b->v.i);
    }
}

static void test_parquet_roundtrip__random_flat_files_read_back_identically(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pool; i++)
        pool[i] = (char)rnd();
    char dir[] = "/tmp/mcdc-pqrt-XXXXXX";
    assert_non_null(mkdtemp(dir));
    static const mcdc_parquet_codec codecs[] = { MCDC_PARQUET_SNAPPY, MCDC_PARQUET_ZSTD,
                                                 MCDC_PARQUET_GZIP, MCDC_PARQUET_UNCOMPRESSED };
    for (int iter = 0; iter < 40; iter++) {
        mcdc_schema *s = mcdc_schema_new();
        size_t ncols = 1 + below(8);
        for (size_t k = 0; k < ncols; k++) {
            char name[16];
            snprintf(name, sizeof name, "c%zu", k);
            mcdc_type_id t = (mcdc_type_id)(MCDC_TYPE_BOOLEAN + below(13));
            int p = 1 + (int)below(38);
            assert_int_equal(0, mcdc_schema_add(s, name, t, t == MCDC_TYPE_DECIMAL ? p : 0,
                                                t == MCDC_TYPE_DECIMAL ? (int)below((uint64_t)p + 1) : 0,
                                                below(4) != 0));
        }
        mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
        o.codec = codecs[below(4)];
        o.dictionary = below(4) != 0;
        o.dictionary_max_bytes = below(2) ? 64 + below(2000) : (size_t)1 << 20;
        o.page_bytes = 1024 + below(8192);
        o.page_max_values = 1 + below(3000);
        o.row_group_bytes = o.page_bytes + below(200000);
        o.page_crc = below(2);
        size_t nrows = below(6) == 0 ? below(3) : below(4000);
        mcdc_value *rows = calloc(nrows * ncols + 1, sizeof *rows);
        mcdc_value repeats[4 * 8];
        for (size_t k = 0; k < ncols; k++)
            for (int r = 0; r < 4; r++) {
                mcdc_column c = s->cols[k];
                c.nullable = false;
                random_value(&repeats[k * 4 + r], &c, NULL);
            }
        for (size_t r = 0; r < nrows; r++)
            for (size_t k = 0; k < ncols; k++)
                random_value(&rows[r * ncols + k], &s->cols[k], &repeats[k * 4]);
        char path[64];
        snprintf(path, sizeof path, "%s/f%d.parquet", dir, iter);
        mcdc_parquet_writer *w;
        assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, &o));
        if (mcdc_parquet_writer_write_rows(w, rows, nrows) < 0)
            fail_msg("file %d: %s", iter, mcdc_error_last()->message);
        mcdc_parquet_write_result res;
        assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
        mcdc_parquet_writer_free(w);
        assert_int_equal(nrows, res.num_rows);

        /* Statistics: true bounds, exact null counts. */
        for (size_t k = 0; k < ncols; k++) {
            const mcdc_column *c = &s->cols[k];
            int64_t nulls = 0;
            const mcdc_value *lo = NULL, *hi = NULL;
            for (size_t r = 0; r < nrows; r++) {
                const mcdc_value *v = &rows[r * ncols + k];
                if (v->is_null) {
                    nulls++;
                    continue;
                }
                if ((c->type == MCDC_TYPE_FLOAT && isnan(v->v.f)) ||
                    (c->type == MCDC_TYPE_DOUBLE && isnan(v->v.d)))
                    continue;
                if (!lo || order(c, v, lo) < 0)
                    lo = v;
                if (!hi || order(c, v, hi) > 0)
                    hi = v;
            }
            assert_int_equal(nulls, res.cols[k].null_count);
            assert_int_equal(lo != NULL, res.cols[k].has_min_max);
            if (lo) {
                assert_int_equal(0, order(c, lo, &res.cols[k].min));
                assert_int_equal(0, order(c, hi, &res.cols[k].max));
            }
        }
        mcdc_parquet_write_result_dispose(&res);

        /* Every value back, in order, with its type. */
        mcdc_parquet_reader *rd;
        assert_int_equal(0, mcdc_parquet_reader_open(&rd, path, NULL));
        const mcdc_schema *rs = mcdc_parquet_reader_schema(rd);
        assert_int_equal(ncols, rs->n_cols);
        for (size_t k = 0; k < ncols; k++) {
            assert_string_equal(s->cols[k].name, rs->cols[k].name);
            assert_int_equal(s->cols[k].type, rs->cols[k].type);
            assert_int_equal(s->cols[k].nullable, rs->cols[k].nullable);
            if (s->cols[k].type == MCDC_TYPE_DECIMAL) {
                assert_int_equal(s->cols[k].precision, rs->cols[k].precision);
                assert_int_equal(s->cols[k].scale, rs->cols[k].scale);
            }
        }
        const mcdc_value *row;
        for (size_t r = 0; r < nrows; r++) {
            int rc = mcdc_parquet_reader_next(rd, &row);
            if (rc != 1)
                fail_msg("file %d row %zu: %d %s", iter, r, rc, mcdc_error_last()->message);
            for (size_t k = 0; k < ncols; k++)
                if (!same_value(&s->cols[k], &rows[r * ncols + k], &row[k]))
                    fail_msg("file %d row %zu column %zu (type %d) differs", iter, r, k,
                             (int)s->cols[k].type);
        }
        assert_int_equal(0, mcdc_parquet_reader_next(rd, &row));
        mcdc_parquet_reader_free(rd);
        unlink(path);
        free(rows);
        mcdc_schema_free(s);
    }
    rmdir(dir);
}

/* Nested: random checkpoint-like rows; the reader gives maps as [{"key","value"}]. */
static mcdc_parquet_node *leaf(const char *name, mcdc_type_id t, bool nullable)
{
    mcdc_column c = { .type = t, .nullable = nullable };
    return mcdc_parquet_node_leaf(name, &c);
}

static json_t *random_string(void)
{
    static const char *const words[] = { "", "a", "b", "long-ish value", "ñ", "x=1" };
    return json_string(words[below(6)]);
}

static void random_nested_row(json_t **row, json_t **want)
{
    *row = json_object();
    *want = json_object();
    json_t *add = NULL, *want_add = NULL;
    if (below(4)) {
        add = json_object();
        want_add = json_object();
        json_t *path = below(5) ? random_string() : json_null();
        json_object_set(add, "path", path);
        json_object_set_new(want_add, "path", path);
        switch (below(4)) {
        case 0: json_object_set_new(want_add, "pv", json_null()); break;
        case 1: json_object_set_new(add, "pv", json_null()); json_object_set_new(want_add, "pv", json_null()); break;
        default: {
            json_t *m = json_object(), *wm = json_array();
            size_t n = below(4);
            for (size_t i = 0; i < n; i++) {
                char k[8];
                snprintf(k, sizeof k, "k%zu", i);
                json_t *v = below(4) ? random_string() : json_null();
                json_object_set(m, k, v);
                json_array_append_new(wm, json_pack("{s:s,s:O}", "key", k, "value", v));
                json_decref(v);
            }
            json_object_set_new(add, "pv", m);
            json_object_set_new(want_add, "pv", wm);
        }
        }
        json_t *size = below(5) ? json_integer((json_int_t)rnd()) : json_null();
        json_object_set(add, "size", size);
        json_object_set_new(want_add, "size", size);
        json_t *list, *wlist;
        if (below(4) == 0) {
            list = json_null();
            wlist = json_null();
        } else {
            list = json_array();
            size_t n = below(5);
            for (size_t i = 0; i < n; i++) {
                json_t *inner = below(5) ? json_array() : json_null();
                for (size_t k = 0; inner && json_is_array(inner) && k < below(3); k++)
                    json_array_append_new(inner, below(4) ? json_integer((json_int_t)below(100)) : json_null());
                json_array_append_new(list, inner);
            }
            wlist = json_deep_copy(list);
        }
        json_object_set_new(add, "tags", list);
        json_object_set_new(want_add, "tags", wlist);
        json_object_set_new(*row, "add", add);
    }
    json_object_set_new(*want, "add", want_add ? want_add : json_null());
    json_t *flag = below(3) ? json_boolean(below(2)) : json_null();
    json_object_set(*row, "flag", flag);
    json_object_set_new(*want, "flag", flag);
}

static void test_parquet_roundtrip__random_nested_rows_read_back_identically(void **state)
{
    (void)state;
    char dir[] = "/tmp/mcdc-pqrn-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (int iter = 0; iter < 10; iter++) {
        mcdc_parquet_node *root = mcdc_parquet_node_struct("root", false);
        mcdc_parquet_node *add = mcdc_parquet_node_struct("add", true);
        mcdc_parquet_node_add(add, leaf("path", MCDC_TYPE_STRING, true));
        mcdc_parquet_node_add(add, mcdc_parquet_node_map("pv", true, leaf("k", MCDC_TYPE_STRING, false),
                                                         leaf("v", MCDC_TYPE_STRING, true)));
        mcdc_parquet_node_add(add, leaf("size", MCDC_TYPE_LONG, true));
        mcdc_parquet_node_add(add, mcdc_parquet_node_list("tags", true,
                                   mcdc_parquet_node_list("inner", true, leaf("x", MCDC_TYPE_INT, true))));
        mcdc_parquet_node_add(root, add);
        mcdc_parquet_node_add(root, leaf("flag", MCDC_TYPE_BOOLEAN, true));
        mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
        o.page_bytes = 1024;
        o.page_max_values = 1 + below(50);
        o.row_group_bytes = 2048 + below(20000);
        char path[64];
        snprintf(path, sizeof path, "%s/n%d.parquet", dir, iter);
        mcdc_parquet_writer *w;
        assert_int_equal(0, mcdc_parquet_writer_open_nested(&w, path, root, &o));
        mcdc_parquet_node_free(root);
        size_t nrows = below(500);
        json_t *want = json_array();
        for (size_t r = 0; r < nrows; r++) {
            json_t *row, *exp;
            random_nested_row(&row, &exp);
            assert_int_equal(0, mcdc_parquet_writer_write_json(w, row));
            json_array_append_new(want, exp);
            json_decref(row);
        }
        assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
        mcdc_parquet_writer_free(w);
        mcdc_parquet_reader *rd;
        assert_int_equal(0, mcdc_parquet_reader_open(&rd, path, NULL));
        for (size_t r = 0; r < nrows; r++) {
            json_t *got = NULL;
            int rc = mcdc_parquet_reader_next_json(rd, (struct json_t **)&got);
            if (rc != 1)
                fail_msg("file %d row %zu: %d %s", iter, r, rc, mcdc_error_last()->message);
            if (!json_equal(got, json_array_get(want, r))) {
                char *a = json_dumps(got, JSON_COMPACT), *b = json_dumps(json_array_get(want, r), JSON_COMPACT);
                fail_msg("file %d row %zu:\n got  %s\n want %s", iter, r, a, b);
            }
            json_decref(got);
        }
        json_t *end = NULL;
        assert_int_equal(0, mcdc_parquet_reader_next_json(rd, (struct json_t **)&end));
        mcdc_parquet_reader_free(rd);
        json_decref(want);
        unlink(path);
    }
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_roundtrip__random_flat_files_read_back_identically),
        cmocka_unit_test(test_parquet_roundtrip__random_nested_rows_read_back_identically),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
