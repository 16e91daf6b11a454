/* Round-trip property tests of the reader: random flat schemas and data (nulls, empty and long strings,
 * extreme values, NaN, many row groups and pages, every codec, dictionary on and off)
 * written by the Parquet writer and read back by the reader cell for cell; and random
 * nested rows (structs, lists, maps, nulls at every level) written as JSON and read back
 * as the same JSON. A failure prints the seed that reproduces it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "mcdc/error.h"
#include "mcdc/parquet.h"
#include "mcdc/value.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static uint64_t below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

static void tmp_path(char *out, size_t cap, const char *tag)
{
    snprintf(out, cap, "/tmp/mcdc_roundtrip_%ld_%s_%llu.parquet", (long)getpid(), tag,
             (unsigned long long)rng_state);
    unlink(out);
}

static mcdc_int128 pow10_128(int p)
{
    mcdc_int128 v = 1;
    while (p-- > 0)
        v *= 10;
    return v;
}

/* A random cell of column @p c; strings are written into @p pool (at least 3000 bytes). */
static void random_cell(const mcdc_column *c, mcdc_value *v, char *pool)
{
    memset(v, 0, sizeof *v);
    if (c->nullable && below(5) == 0) {
        v->is_null = true;
        return;
    }
    int pick = (int)below(6); /* 0, 1: an extreme; otherwise random */
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN: v->v.b = below(2); break;
    case MCDC_TYPE_BYTE: v->v.i = pick == 0 ? -128 : pick == 1 ? 127 : (int64_t)below(256) - 128; break;
    case MCDC_TYPE_SHORT: v->v.i = pick == 0 ? INT16_MIN : pick == 1 ? INT16_MAX : (int16_t)rnd(); break;
    case MCDC_TYPE_INT: v->v.i = pick == 0 ? INT32_MIN : pick == 1 ? INT32_MAX : (int32_t)rnd(); break;
    case MCDC_TYPE_LONG: v->v.i = pick == 0 ? INT64_MIN : pick == 1 ? INT64_MAX : (int64_t)rnd(); break;
    case MCDC_TYPE_FLOAT:
        v->v.f = pick == 0 ? NAN : pick == 1 ? -INFINITY : (float)((double)(int32_t)rnd() / 1000.0);
        break;
    case MCDC_TYPE_DOUBLE:
        v->v.d = pick == 0 ? NAN : pick == 1 ? 1e308 : (double)(int64_t)rnd() / 1e6;
        break;
    case MCDC_TYPE_DECIMAL: {
        mcdc_int128 lim = pow10_128(c->precision);
        mcdc_int128 r = (mcdc_int128)(((unsigned __int128)(rnd() >> 1) << 64 | rnd()) % (unsigned __int128)lim);
        v->v.dec = pick == 0 ? lim - 1 : pick == 1 ? -(lim - 1) : (below(2) ? r : -r);
        break;
    }
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY: {
        size_t len = pick == 0 ? 0 : pick == 1 ? 1000 + below(2000) : below(12);
        for (size_t i = 0; i < len; i++)
            pool[i] = c->type == MCDC_TYPE_BINARY ? (char)rnd() : (char)('a' + below(4));
        v->v.s.ptr = pool;
        v->v.s.len = len;
        break;
    }
    case MCDC_TYPE_DATE: v->v.i = pick == 0 ? -719162 : pick == 1 ? 2932896 : (int64_t)below(40000) - 10000; break;
    case MCDC_TYPE_TIMESTAMP:
    case MCDC_TYPE_TIMESTAMP_NTZ:
        v->v.i = pick == 0 ? -62135596800000000LL : pick == 1 ? 253402300799999999LL
                                                 : (int64_t)(rnd() % 4000000000000000000ULL) - 2000000000000000000LL;
        break;
    }
}

static bool same_cell(const mcdc_column *c, const mcdc_value *a, const mcdc_value *b)
{
    if (a->is_null || b->is_null)
        return a->is_null == b->is_null;
    switch (c->type) {
    case MCDC_TYPE_BOOLEAN: return a->v.b == b->v.b;
    case MCDC_TYPE_FLOAT: return (isnan(a->v.f) && isnan(b->v.f)) || a->v.f == b->v.f;
    case MCDC_TYPE_DOUBLE: return (isnan(a->v.d) && isnan(b->v.d)) || a->v.d == b->v.d;
    case MCDC_TYPE_DECIMAL: return a->v.dec == b->v.dec;
    case MCDC_TYPE_STRING:
    case MCDC_TYPE_BINARY:
        return a->v.s.len == b->v.s.len && (a->v.s.len == 0 || !memcmp(a->v.s.ptr, b->v.s.ptr, a->v.s.len));
    default: return a->v.i == b->v.i;
    }
}

static void one_flat_round(uint64_t seed)
{
    rng_state = seed;
    static const mcdc_type_id types[] = { MCDC_TYPE_BOOLEAN, MCDC_TYPE_BYTE, MCDC_TYPE_SHORT,
                                          MCDC_TYPE_INT, MCDC_TYPE_LONG, MCDC_TYPE_FLOAT,
                                          MCDC_TYPE_DOUBLE, MCDC_TYPE_DECIMAL, MCDC_TYPE_STRING,
                                          MCDC_TYPE_BINARY, MCDC_TYPE_DATE, MCDC_TYPE_TIMESTAMP,
                                          MCDC_TYPE_TIMESTAMP_NTZ };
    mcdc_schema *s = mcdc_schema_new();
    size_t n_cols = 1 + below(8);
    for (size_t i = 0; i < n_cols; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%zu", i);
        mcdc_type_id t = types[below(sizeof types / sizeof *types)];
        int p = 1 + (int)below(38), sc = (int)below((uint64_t)p + 1);
        assert_int_equal(0, mcdc_schema_add(s, name, t, p, sc, below(3) != 0));
    }
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    static const mcdc_parquet_codec codecs[] = { MCDC_PARQUET_UNCOMPRESSED, MCDC_PARQUET_SNAPPY,
                                                 MCDC_PARQUET_GZIP, MCDC_PARQUET_ZSTD };
    o.codec = codecs[below(4)];
    o.dictionary = below(2);
    o.page_bytes = 1024 + below(8192);
    o.row_group_bytes = below(2) ? o.page_bytes + below(60000) : (size_t)128 << 20;
    o.page_crc = below(2);
    char path[128];
    tmp_path(path, sizeof path, "flat");
    mcdc_parquet_writer *w;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, &o));
    size_t n_rows = below(4) == 0 ? below(3) : below(2500);
    mcdc_value *cells = calloc(n_rows * n_cols + 1, sizeof *cells);
    char *pool = malloc(n_rows * n_cols * 3000 + 1);
    for (size_t r = 0; r < n_rows; r++) {
        for (size_t c = 0; c < n_cols; c++)
            random_cell(&s->cols[c], &cells[r * n_cols + c], pool + (r * n_cols + c) * 3000);
        int rc = mcdc_parquet_writer_write_row(w, &cells[r * n_cols]);
        if (rc < 0)
            fail_msg("seed %llu: write row %zu: %s", (unsigned long long)seed, r, mcdc_error_last()->message);
    }
    mcdc_parquet_write_result res;
    assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
    mcdc_parquet_writer_free(w);

    mcdc_parquet_reader *rd;
    if (mcdc_parquet_reader_open(&rd, path, NULL) < 0)
        fail_msg("seed %llu: open: %s", (unsigned long long)seed, mcdc_error_last()->message);
    assert_int_equal((int64_t)n_rows, mcdc_parquet_reader_num_rows(rd));
    assert_int_equal(res.n_row_groups, mcdc_parquet_reader_num_row_groups(rd));
    const mcdc_schema *rs = mcdc_parquet_reader_schema(rd);
    assert_int_equal(n_cols, rs->n_cols);
    for (size_t c = 0; c < n_cols; c++) {
        assert_string_equal(s->cols[c].name, rs->cols[c].name);
        if (rs->cols[c].type != s->cols[c].type || rs->cols[c].nullable != s->cols[c].nullable ||
            (s->cols[c].type == MCDC_TYPE_DECIMAL && (rs->cols[c].precision != s->cols[c].precision ||
                                                      rs->cols[c].scale != s->cols[c].scale)))
            fail_msg("seed %llu: column %zu read as type %d (wrote %d)", (unsigned long long)seed, c,
                     rs->cols[c].type, s->cols[c].type);
    }
    const mcdc_value *row;
    for (size_t r = 0; r < n_rows; r++) {
        int rc = mcdc_parquet_reader_next(rd, &row);
        if (rc != 1)
            fail_msg("seed %llu: row %zu: %d %s", (unsigned long long)seed, r, rc, mcdc_error_last()->message);
        for (size_t c = 0; c < n_cols; c++)
            if (!same_cell(&s->cols[c], &cells[r * n_cols + c], &row[c]))
                fail_msg("seed %llu: row %zu column %zu (type %d) differs", (unsigned long long)seed, r,
                         c, s->cols[c].type);
    }
    assert_int_equal(0, mcdc_parquet_reader_next(rd, &row));
    mcdc_parquet_reader_free(rd);
    mcdc_parquet_write_result_dispose(&res);
    unlink(path);
    free(cells);
    free(pool);
    mcdc_schema_free(s);
}

static void test_parquet_reader_roundtrip__random_flat_files(void **state)
{
    (void)state;
    const char *env = getenv("MCDC_ROUNDTRIP_SEED");
    if (env) {
        one_flat_round(strtoull(env, NULL, 10));
        return;
    }
    for (uint64_t seed = 1; seed <= 40; seed++)
        one_flat_round(seed * 0x9E3779B97F4A7C15ULL);
}

/* ---- nested ------------------------------------------------------------------------- */

static json_t *random_leaf(mcdc_type_id t)
{
    switch (t) {
    case MCDC_TYPE_LONG: return json_integer((json_int_t)rnd());
    case MCDC_TYPE_BOOLEAN: return json_boolean(below(2));
    case MCDC_TYPE_DOUBLE: return json_real((double)(int32_t)rnd() / 64.0);
    case MCDC_TYPE_DECIMAL: {
        char t2[32];
        snprintf(t2, sizeof t2, "%s%llu.%02llu", below(2) ? "-" : "", (unsigned long long)below(1000000),
                 (unsigned long long)below(100));
        return json_string(t2);
    }
    default: {
        char t2[32];
        size_t n = below(8);
        for (size_t i = 0; i < n; i++)
            t2[i] = (char)('k' + below(5));
        return json_stringn(t2, n);
    }
    }
}

static json_t *maybe_null(json_t *v, bool nullable)
{
    if (nullable && below(5) == 0) {
        json_decref(v);
        return json_null();
    }
    return v;
}

/* Schema: id long, tags list<string>, attrs map<string, long>, s struct<a double, b
 * decimal(12,2), inner list<struct<x boolean, y string>>>, ll list<list<long>> */
static mcdc_parquet_node *nested_schema(void)
{
    mcdc_column lng = { NULL, MCDC_TYPE_LONG, 0, 0, false }, lngn = { NULL, MCDC_TYPE_LONG, 0, 0, true };
    mcdc_column str = { NULL, MCDC_TYPE_STRING, 0, 0, true }, key = { NULL, MCDC_TYPE_STRING, 0, 0, false };
    mcdc_column dbl = { NULL, MCDC_TYPE_DOUBLE, 0, 0, true }, dec = { NULL, MCDC_TYPE_DECIMAL, 12, 2, true };
    mcdc_column bln = { NULL, MCDC_TYPE_BOOLEAN, 0, 0, true };
    mcdc_parquet_node *root = mcdc_parquet_node_struct("root", false);
    mcdc_parquet_node_add(root, mcdc_parquet_node_leaf("id", &lng));
    mcdc_parquet_node_add(root, mcdc_parquet_node_list("tags", true, mcdc_parquet_node_leaf("e", &str)));
    mcdc_parquet_node_add(root, mcdc_parquet_node_map("attrs", true, mcdc_parquet_node_leaf("k", &key),
                                                      mcdc_parquet_node_leaf("v", &lngn)));
    mcdc_parquet_node *s = mcdc_parquet_node_struct("s", true);
    mcdc_parquet_node_add(s, mcdc_parquet_node_leaf("a", &dbl));
    mcdc_parquet_node_add(s, mcdc_parquet_node_leaf("b", &dec));
    mcdc_parquet_node *in = mcdc_parquet_node_struct("e", true);
    mcdc_parquet_node_add(in, mcdc_parquet_node_leaf("x", &bln));
    mcdc_parquet_node_add(in, mcdc_parquet_node_leaf("y", &str));
    mcdc_parquet_node_add(s, mcdc_parquet_node_list("inner", true, in));
    mcdc_parquet_node_add(root, s);
    mcdc_parquet_node_add(root, mcdc_parquet_node_list("ll", true,
                                                       mcdc_parquet_node_list("e", true, mcdc_parquet_node_leaf("e", &lngn))));
    return root;
}

static json_t *random_nested_row(int64_t id)
{
    json_t *row = json_object();
    json_object_set_new(row, "id", json_integer(id));
    json_t *tags = json_array();
    for (size_t i = below(4); i > 0; i--)
        json_array_append_new(tags, maybe_null(random_leaf(MCDC_TYPE_STRING), true));
    json_object_set_new(row, "tags", maybe_null(tags, true));
    json_t *attrs = json_array();
    for (size_t i = below(3); i > 0; i--) {
        json_t *kv = json_object();
        char k[16];
        snprintf(k, sizeof k, "k%zu", i);
        json_object_set_new(kv, "key", json_string(k));
        json_object_set_new(kv, "value", maybe_null(random_leaf(MCDC_TYPE_LONG), true));
        json_array_append_new(attrs, kv);
    }
    json_object_set_new(row, "attrs", maybe_null(attrs, true));
    json_t *s = json_object();
    json_object_set_new(s, "a", maybe_null(random_leaf(MCDC_TYPE_DOUBLE), true));
    json_object_set_new(s, "b", maybe_null(random_leaf(MCDC_TYPE_DECIMAL), true));
    json_t *inner = json_array();
    for (size_t i = below(3); i > 0; i--) {
        json_t *e = json_object();
        json_object_set_new(e, "x", maybe_null(random_leaf(MCDC_TYPE_BOOLEAN), true));
        json_object_set_new(e, "y", maybe_null(random_leaf(MCDC_TYPE_STRING), true));
        json_array_append_new(inner, maybe_null(e, true));
    }
    json_object_set_new(s, "inner", maybe_null(inner, true));
    json_object_set_new(row, "s", maybe_null(s, true));
    json_t *ll = json_array();
    for (size_t i = below(3); i > 0; i--) {
        json_t *l = json_array();
        for (size_t j = below(3); j > 0; j--)
            json_array_append_new(l, maybe_null(random_leaf(MCDC_TYPE_LONG), true));
        json_array_append_new(ll, maybe_null(l, true));
    }
    json_object_set_new(row, "ll", maybe_null(ll, true));
    return row;
}

static void test_parquet_reader_roundtrip__random_nested_rows(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 12; seed++) {
        rng_state = seed * 0x2545F4914F6CDD1DULL;
        mcdc_parquet_node *root = nested_schema();
        mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
        o.page_bytes = 1024 + below(4096);
        o.row_group_bytes = below(2) ? 8192 : (size_t)128 << 20;
        o.dictionary = below(2);
        char path[128];
        tmp_path(path, sizeof path, "nested");
        mcdc_parquet_writer *w;
        assert_int_equal(0, mcdc_parquet_writer_open_nested(&w, path, root, &o));
        size_t n = below(600);
        json_t **rows = calloc(n + 1, sizeof *rows);
        for (size_t i = 0; i < n; i++) {
            rows[i] = random_nested_row((int64_t)i);
            if (mcdc_parquet_writer_write_json(w, rows[i]) < 0)
                fail_msg("seed %llu: write row %zu: %s", (unsigned long long)seed, i, mcdc_error_last()->message);
        }
        assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
        mcdc_parquet_writer_free(w);
        mcdc_parquet_node_free(root);
        mcdc_parquet_reader *rd;
        assert_int_equal(0, mcdc_parquet_reader_open(&rd, path, NULL));
        for (size_t i = 0; i < n; i++) {
            json_t *got;
            int rc = mcdc_parquet_reader_next_json(rd, &got);
            if (rc != 1)
                fail_msg("seed %llu: row %zu: %d %s", (unsigned long long)seed, i, rc, mcdc_error_last()->message);
            if (!json_equal(got, rows[i])) {
                char *a = json_dumps(rows[i], JSON_COMPACT), *b = json_dumps(got, JSON_COMPACT);
                fail_msg("seed %llu: row %zu:\nwrote %s\nread  %s", (unsigned long long)seed, i, a, b);
            }
            json_decref(got);
            json_decref(rows[i]);
        }
        json_t *end;
        assert_int_equal(0, mcdc_parquet_reader_next_json(rd, &end));
        mcdc_parquet_reader_free(rd);
        free(rows);
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parquet_reader_roundtrip__random_flat_files),
        cmocka_unit_test(test_parquet_reader_roundtrip__random_nested_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
