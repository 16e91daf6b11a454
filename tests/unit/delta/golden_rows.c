/* Unit tests for delta/scan.c on Spark-written tables: the rows of each golden case equal
 * its expected.jsonl (after the normalisation of tests/data/README.md: scalars
 * as strings, floats as DuckDB prints them, nested values compared as JSON after mapping
 * maps to objects), and each DAT case equals its expected table_content.parquet. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "mcdc/delta.h"
#include "mcdc/parquet.h"
#include "unit/delta/testenv.h"

/* Shortest text that reads back as the same float/double, with ".0" when integral. */
static void shortest(char *out, size_t cap, double x, bool is_float)
{
    if (isnan(x)) {
        snprintf(out, cap, "NaN");
        return;
    }
    if (isinf(x)) {
        snprintf(out, cap, x > 0 ? "Infinity" : "-Infinity");
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(out, cap, "%.*g", p, x);
        if (is_float ? strtof(out, NULL) == (float)x : strtod(out, NULL) == x)
            break;
    }
    if (!strpbrk(out, ".eEn"))
        strncat(out, ".0", cap - strlen(out) - 1);
}

/* Canonical form of a nested value: scalars as strings, maps as sorted [key, value]. */
static json_t *canon(json_t *v, const mcdc_delta_type *t)
{
    if (!v || json_is_null(v))
        return json_null();
    char buf[64];
    switch (t->kind) {
    case MCDC_DELTA_TYPE_VARIANT: /* a variant's JSON text, compared as it is */
        return json_incref(v);
    case MCDC_DELTA_TYPE_STRUCT: {
        json_t *o = json_object();
        for (size_t i = 0; i < t->n_fields; i++) {
            json_t *x = json_object_get(v, t->fields[i].name);
            json_object_set_new(o, t->fields[i].name, canon(x, &t->fields[i].type));
        }
        return o;
    }
    case MCDC_DELTA_TYPE_ARRAY: {
        json_t *a = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) json_array_append_new(a, canon(x, t->element));
        return a;
    }
    case MCDC_DELTA_TYPE_MAP: {
        json_t *a = json_array();
        if (json_is_array(v)) { /* ours: [{"key","value"}] */
            size_t i;
            json_t *x;
            json_array_foreach(v, i, x) {
                json_t *k = canon(json_object_get(x, "key"), t->key);
                char *ks = json_dumps(k, JSON_ENCODE_ANY | JSON_COMPACT);
                json_t *pair = json_pack("[s,o]", json_is_string(k) ? json_string_value(k) : ks,
                                         canon(json_object_get(x, "value"), t->element));
                free(ks);
                json_decref(k);
                json_array_append_new(a, pair);
            }
        } else { /* theirs: {"k": v} */
            const char *k;
            json_t *x;
            json_object_foreach(v, k, x) {
                json_t *kj = json_string(k);
                json_t *kc = canon(kj, t->key);
                json_array_append_new(a, json_pack("[s,o]", json_is_string(kc) ? json_string_value(kc) : k,
                                                   canon(x, t->element)));
                json_decref(kc);
                json_decref(kj);
            }
        }
        /* sort by key text */
        size_t n = json_array_size(a);
        for (size_t i = 1; i < n; i++)
            for (size_t k = i; k > 0; k--) {
                const char *x = json_string_value(json_array_get(json_array_get(a, k - 1), 0));
                const char *y = json_string_value(json_array_get(json_array_get(a, k), 0));
                if (strcmp(x, y) <= 0)
                    break;
                json_t *tmp = json_incref(json_array_get(a, k - 1));
                json_array_set(a, k - 1, json_array_get(a, k));
                json_array_set_new(a, k, tmp);
            }
        return a;
    }
    case MCDC_DELTA_TYPE_PRIMITIVE:
        break;
    }
    mcdc_type_id ty = t->prim.type;
    if (json_is_boolean(v))
        return json_string(json_is_true(v) ? "true" : "false");
    if (ty == MCDC_TYPE_FLOAT || ty == MCDC_TYPE_DOUBLE || ty == MCDC_TYPE_DECIMAL) {
        double d = json_is_number(v) ? json_number_value(v) : strtod(json_string_value(v), NULL);
        shortest(buf, sizeof buf, d, ty == MCDC_TYPE_FLOAT);
        return json_string(buf);
    }
    if (json_is_integer(v)) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        return json_string(buf);
    }
    if (json_is_real(v)) {
        shortest(buf, sizeof buf, json_real_value(v), false);
        return json_string(buf);
    }
    return json_incref(v);
}

/* A row of ours as the expected line's object. */
static json_t *our_row(const mcdc_delta_scan *scan, const mcdc_delta_snapshot *snap,
                       const mcdc_value *row)
{
    const mcdc_schema *s = mcdc_delta_scan_schema(scan);
    json_t *o = json_object();
    for (size_t i = 0; i < s->n_cols; i++) {
        const mcdc_column *c = &s->cols[i];
        const mcdc_value *v = &row[i];
        json_t *cell;
        char buf[64];
        if (v->is_null) {
            cell = json_null();
        } else if (mcdc_delta_scan_is_nested(scan, i)) {
            json_t *j = json_loadb(v->v.s.ptr, v->v.s.len, JSON_DECODE_ANY, NULL);
            cell = canon(j, &snap->schema->fields[i].type);
            json_decref(j);
        } else if (c->type == MCDC_TYPE_FLOAT || c->type == MCDC_TYPE_DOUBLE) {
            shortest(buf, sizeof buf, c->type == MCDC_TYPE_FLOAT ? v->v.f : v->v.d,
                     c->type == MCDC_TYPE_FLOAT);
            cell = json_string(buf);
        } else {
            mcdc_buf b = MCDC_BUF_INIT(1 << 24);
            mcdc_value_to_json(&b, c, v);
            json_t *j = json_loadb(b.ptr, b.len, JSON_DECODE_ANY, NULL);
            mcdc_buf_dispose(&b);
            if (json_is_string(j))
                cell = json_incref(j);
            else if (json_is_boolean(j))
                cell = json_string(json_is_true(j) ? "true" : "false");
            else {
                char *t = json_dumps(j, JSON_ENCODE_ANY);
                cell = json_string(t);
                free(t);
            }
            json_decref(j);
        }
        json_object_set_new(o, c->name, cell);
    }
    return o;
}

/* Their line: nested values are JSON text; canonicalise them the same way. */
static json_t *their_row(json_t *line, const mcdc_delta_snapshot *snap)
{
    json_t *o = json_object();
    for (size_t i = 0; i < snap->schema->n_fields; i++) {
        const mcdc_delta_field *f = &snap->schema->fields[i];
        json_t *v = json_object_get(line, f->name);
        if (f->type.kind != MCDC_DELTA_TYPE_PRIMITIVE && json_is_string(v)) {
            json_t *j = json_loads(json_string_value(v), JSON_DECODE_ANY, NULL);
            json_object_set_new(o, f->name, canon(j, &f->type));
            json_decref(j);
        } else {
            json_object_set(o, f->name, v ? v : json_null());
        }
    }
    return o;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct lines {
    char **v;
    size_t n, cap;
} lines;

static void lines_add(lines *l, json_t *o)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static void compare(lines *ours, lines *theirs, const char *name)
{
    qsort(ours->v, ours->n, sizeof *ours->v, cmp_str);
    qsort(theirs->v, theirs->n, sizeof *theirs->v, cmp_str);
    size_t shown = 0;
    for (size_t i = 0; i < ours->n && i < theirs->n && shown < 3; i++)
        if (strcmp(ours->v[i], theirs->v[i]) != 0) {
            fprintf(stderr, "%s: row %zu\n ours:   %s\n theirs: %s\n", name, i, ours->v[i], theirs->v[i]);
            shown++;
        }
    assert_int_equal(theirs->n, ours->n);
    for (size_t i = 0; i < ours->n; i++)
        assert_string_equal(theirs->v[i], ours->v[i]);
}

static void scan_all(lines *ours, const mcdc_delta_snapshot *snap)
{
    mcdc_delta_scan *scan;
    assert_int_equal(0, mcdc_delta_scan_open(&scan, snap, NULL));
    const mcdc_value *row;
    int rc;
    while ((rc = mcdc_delta_scan_next(scan, &row)) == 1)
        lines_add(ours, our_row(scan, snap, row));
    if (rc < 0)
        fprintf(stderr, "%s\n", mcdc_error_last()->message);
    assert_int_equal(0, rc);
    mcdc_delta_scan_free(scan);
}

static void check_golden(const char *name)
{
    char table[1024], exp[1024];
    snprintf(table, sizeof table, "%s/delta/golden/%s/table", testenv_data(), name);
    snprintf(exp, sizeof exp, "%s/delta/golden/%s/expected.jsonl", testenv_data(), name);
    mcdc_delta_snapshot *snap;
    int rc = mcdc_delta_snapshot_open(&snap, table, -1);
    if (rc)
        fprintf(stderr, "%s: %s\n", name, mcdc_error_last()->message);
    assert_int_equal(0, rc);
    lines ours = { 0 }, theirs = { 0 };
    scan_all(&ours, snap);
    FILE *f = fopen(exp, "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    bool first = true;
    while (getline(&line, &cap, f) > 0) {
        if (first) {
            first = false;
            continue;
        }
        json_t *j = json_loads(line, 0, NULL);
        assert_non_null(j);
        lines_add(&theirs, their_row(j, snap));
        json_decref(j);
    }
    free(line);
    fclose(f);
    compare(&ours, &theirs, name);
    lines_free(&ours);
    lines_free(&theirs);
    mcdc_delta_snapshot_free(snap);
}

static void check_dat(const char *name)
{
    char table[1024], exp[1024];
    snprintf(table, sizeof table, "%s/delta/dat/%s/delta", testenv_data(), name);
    snprintf(exp, sizeof exp, "%s/delta/dat/%s/expected/latest/table_content.parquet",
             testenv_data(), name);
    mcdc_delta_snapshot *snap;
    int rc = mcdc_delta_snapshot_open(&snap, table, -1);
    if (rc)
        fprintf(stderr, "%s: %s\n", name, mcdc_error_last()->message);
    assert_int_equal(0, rc);
    lines ours = { 0 }, theirs = { 0 };
    scan_all(&ours, snap);
    mcdc_parquet_reader *r;
    assert_int_equal(0, mcdc_parquet_reader_open(&r, exp, NULL));
    const mcdc_schema *es = mcdc_parquet_reader_schema(r);
    const mcdc_value *row;
    while ((rc = mcdc_parquet_reader_next(r, &row)) == 1) {
        json_t *o = json_object();
        for (size_t i = 0; i < snap->schema->n_fields; i++) {
            const mcdc_delta_field *f = &snap->schema->fields[i];
            int at = mcdc_schema_find(es, f->name);
            json_t *cell = json_null();
            if (at >= 0 && !row[at].is_null) {
                const mcdc_column *c = &es->cols[at];
                char buf[64];
                if (c->type == MCDC_TYPE_FLOAT || c->type == MCDC_TYPE_DOUBLE) {
                    shortest(buf, sizeof buf, c->type == MCDC_TYPE_FLOAT ? row[at].v.f : row[at].v.d,
                             c->type == MCDC_TYPE_FLOAT);
                    cell = json_string(buf);
                } else {
                    mcdc_buf b = MCDC_BUF_INIT(1 << 24);
                    mcdc_value_to_json(&b, c, &row[at]);
                    json_t *j = json_loadb(b.ptr, b.len, JSON_DECODE_ANY, NULL);
                    mcdc_buf_dispose(&b);
                    if (json_is_string(j))
                        cell = json_incref(j);
                    else if (json_is_boolean(j))
                        cell = json_string(json_is_true(j) ? "true" : "false");
                    else {
                        char *t = json_dumps(j, JSON_ENCODE_ANY);
                        cell = json_string(t);
                        free(t);
                    }
                    json_decref(j);
                }
            }
            json_object_set_new(o, f->name, cell);
        }
        lines_add(&theirs, o);
    }
    assert_int_equal(0, rc);
    mcdc_parquet_reader_free(r);
    compare(&ours, &theirs, name);
    lines_free(&ours);
    lines_free(&theirs);
    mcdc_delta_snapshot_free(snap);
}

#define GOLDEN(fn, name) \
    static void test_delta_golden_rows__##fn(void **state) { (void)state; check_golden(name); }
#define DAT(fn, name) \
    static void test_delta_golden_rows__dat_##fn(void **state) { (void)state; check_dat(name); }

GOLDEN(basic_with_inserts_deletes_checkpoint, "basic-with-inserts-deletes-checkpoint")
GOLDEN(basic_with_inserts_merge, "basic-with-inserts-merge")
GOLDEN(corrupted_last_checkpoint, "corrupted-last-checkpoint-kernel")
GOLDEN(array_primitives, "data-reader-array-primitives")
GOLDEN(map, "data-reader-map")
GOLDEN(nested_struct, "data-reader-nested-struct")
GOLDEN(partition_values, "data-reader-partition-values")
GOLDEN(primitives, "data-reader-primitives")
GOLDEN(timestamp_ntz, "data-reader-timestamp_ntz")
GOLDEN(decimal_various, "decimal-various-scale-precision")
GOLDEN(dv_partitioned_with_checkpoint, "dv-partitioned-with-checkpoint")
GOLDEN(timestamp_int96, "kernel-timestamp-INT96")
GOLDEN(latest_metadata_protocol, "log-replay-latest-metadata-protocol")
GOLDEN(multi_part_checkpoint, "multi-part-checkpoint")
GOLDEN(only_checkpoint_files, "only-checkpoint-files")
GOLDEN(parquet_all_types, "parquet-all-types")
GOLDEN(snapshot_data0, "snapshot-data0")
GOLDEN(snapshot_data1, "snapshot-data1")
GOLDEN(snapshot_data2, "snapshot-data2")
GOLDEN(snapshot_data3, "snapshot-data3")
GOLDEN(column_mapping_name, "table-with-columnmapping-mode-name")
GOLDEN(time_travel_start, "time-travel-start")
GOLDEN(time_travel_start20, "time-travel-start-start20")
GOLDEN(v2_checkpoint_parquet, "v2-checkpoint-parquet")
DAT(basic_append, "basic_append")
DAT(basic_partitioned, "basic_partitioned")
DAT(multi_partitioned, "multi_partitioned")
DAT(with_schema_change, "with_schema_change")

#define T(fn) cmocka_unit_test(test_delta_golden_rows__##fn)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(basic_with_inserts_deletes_checkpoint), T(basic_with_inserts_merge),
        T(corrupted_last_checkpoint), T(array_primitives), T(map), T(nested_struct),
        T(partition_values), T(primitives), T(timestamp_ntz), T(decimal_various),
        T(dv_partitioned_with_checkpoint), T(timestamp_int96), T(latest_metadata_protocol),
        T(multi_part_checkpoint), T(only_checkpoint_files), T(parquet_all_types),
        T(snapshot_data0), T(snapshot_data1), T(snapshot_data2), T(snapshot_data3),
        T(column_mapping_name), T(time_travel_start), T(time_travel_start20),
        T(v2_checkpoint_parquet), T(dat_basic_append), T(dat_basic_partitioned),
        T(dat_multi_partitioned), T(dat_with_schema_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
