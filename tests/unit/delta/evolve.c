/* Unit tests for delta/evolve.c and the widened reads of delta/scan.c: a schema change
 * made in the same commit as an append (new nullable columns, widened types recorded in
 * delta.typeChanges with the typeWidening feature), only once across retries and
 * replays, refused (nothing written) where Delta forbids it; files written before a
 * widening read in the wider type. With MCDC_DELTA_INTEROP_DIR set, the widened table is
 * left there for tests/interop/delta_widening_duckdb.sh. */
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

static int setup(void **state)
{
    *state = testenv_tmpdir("evolve");
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

static mcdc_column col(mcdc_type_id t, int p, int s)
{
    mcdc_column c = { NULL, t, p, s, true };
    return c;
}

/* Create table @p t: (id int, d date, f float, amount decimal(10,2)), widening on or off. */
static void create_table(const char *t, bool widening)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_INT, 0, 0, true);
    mcdc_schema_add(s, "d", MCDC_TYPE_DATE, 0, 0, true);
    mcdc_schema_add(s, "f", MCDC_TYPE_FLOAT, 0, 0, true);
    mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 10, 2, true);
    mcdc_delta_map conf = { 0 };
    if (widening)
        mcdc_delta_map_set(&conf, "delta.enableTypeWidening", "true");
    assert_int_equal(0, mcdc_delta_create(t, s, NULL, 0, &conf, NULL));
    mcdc_delta_map_clear(&conf);
    mcdc_schema_free(s);
}

/* Write one data file of @p n rows (id = first.., d = id days, f = id + 0.5, amount =
 * id.25, a fifth column "note" when the schema has it) with @p schema; its add action in
 * @p out. */
static void write_file_named(mcdc_delta_file *out, const char *t, const mcdc_schema *schema,
                             const mcdc_schema *names, int first, int n, const char *name);

static void write_file(mcdc_delta_file *out, const char *t, const mcdc_schema *schema,
                       int first, int n, const char *name)
{
    write_file_named(out, t, schema, schema, first, n, name);
}

/* As write_file, with the columns of @p schema known by the names of @p names (the
 * logical names of a column-mapped file's physical columns). */
static void write_file_named(mcdc_delta_file *out, const char *t, const mcdc_schema *schema,
                             const mcdc_schema *names, int first, int n, const char *name)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", t, name);
    mcdc_parquet_writer *w = NULL;
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, schema, &o));
    for (int i = first; i < first + n; i++) {
        mcdc_value row[8];
        memset(row, 0, sizeof row);
        for (size_t c = 0; c < schema->n_cols; c++) {
            const mcdc_column *sc = &schema->cols[c];
            const char *cn = names->cols[c].name;
            if (strcmp(cn, "id") == 0)
                row[c].v.i = i;
            else if (strcmp(cn, "d") == 0 || strcmp(cn, "Order Date") == 0)
                row[c].v.i = sc->type == MCDC_TYPE_DATE ? i : (int64_t)i * INT64_C(86400000000);
            else if (strcmp(cn, "f") == 0) {
                if (sc->type == MCDC_TYPE_FLOAT)
                    row[c].v.f = (float)i + 0.5f;
                else
                    row[c].v.d = (double)i + 0.5;
            } else if (strcmp(cn, "amount") == 0) {
                row[c].v.dec = (mcdc_int128)i * 100 + 25;
                for (int k = 2; k < sc->scale; k++)
                    row[c].v.dec *= 10;
            } else {
                row[c].v.s.ptr = "new";
                row[c].v.s.len = 3;
            }
        }
        assert_int_equal(0, mcdc_parquet_writer_write_row(w, row));
    }
    mcdc_parquet_write_result r = { 0 };
    assert_int_equal(0, mcdc_parquet_writer_close(w, &r));
    mcdc_parquet_writer_free(w);
    mcdc_buf st = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    assert_int_equal(0, mcdc_delta_stats_json(&st, schema, &r));
    memset(out, 0, sizeof *out);
    out->path = strdup(name);
    out->size = (int64_t)r.file_size;
    out->modification_time = 1;
    out->deletion_timestamp = -1;
    out->data_change = true;
    out->stats = mcdc_buf_detach(&st);
    out->base_row_id = -1;
    out->default_row_commit_version = -1;
    mcdc_buf_dispose(&st);
    mcdc_parquet_write_result_dispose(&r);
}

static mcdc_schema *table_flat(const char *t)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_schema *flat = NULL;
    assert_int_equal(0, mcdc_delta_schema_to_flat(&flat, snap->schema));
    mcdc_delta_snapshot_free(snap);
    return flat;
}

/* The commit file of version @p v as text (caller frees). */
static char *commit_text(const char *t, int64_t v)
{
    char path[600];
    snprintf(path, sizeof path, "%s/_delta_log/%020lld.json", t, (long long)v);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* All rows of the table as "id|d|f|amount|note" lines in id order, the text encoding. */
static char *rows_text(const char *t)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_delta_scan *sc = NULL;
    assert_int_equal(0, mcdc_delta_scan_open(&sc, snap, NULL));
    const mcdc_schema *s = mcdc_delta_scan_schema(sc);
    char *lines[64] = { 0 };
    int64_t ids[64];
    size_t n = 0;
    const mcdc_value *row;
    int rc;
    while ((rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
        for (size_t c = 0; c < s->n_cols; c++) {
            if (c)
                mcdc_buf_putc(&b, '|');
            mcdc_value_to_text(&b, &s->cols[c], &row[c]);
        }
        ids[n] = row[0].v.i;
        lines[n++] = mcdc_buf_detach(&b);
        mcdc_buf_dispose(&b);
    }
    assert_int_equal(0, rc);
    mcdc_buf out = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    for (int64_t want = 0; want < 64; want++)
        for (size_t i = 0; i < n; i++)
            if (ids[i] == want) {
                mcdc_buf_puts(&out, lines[i]);
                mcdc_buf_putc(&out, '\n');
            }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    char *r = mcdc_buf_detach(&out);
    mcdc_buf_dispose(&out);
    return r;
}

static void test_delta_evolve__widenings_delta_allows(void **state)
{
    (void)state;
    struct { mcdc_column from, to; bool ok; } cases[] = {
        { col(MCDC_TYPE_BYTE, 0, 0), col(MCDC_TYPE_SHORT, 0, 0), true },
        { col(MCDC_TYPE_SHORT, 0, 0), col(MCDC_TYPE_INT, 0, 0), true },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_LONG, 0, 0), true },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_INT, 0, 0), false },   /* narrowing */
        { col(MCDC_TYPE_FLOAT, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), true },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), true },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), false }, /* loses digits */
        { col(MCDC_TYPE_DATE, 0, 0), col(MCDC_TYPE_TIMESTAMP_NTZ, 0, 0), true },
        { col(MCDC_TYPE_DATE, 0, 0), col(MCDC_TYPE_TIMESTAMP, 0, 0), false },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 18, 2), true },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 12, 4), true },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 11, 4), false }, /* k1 < k2 */
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 10, 2), false },
        { col(MCDC_TYPE_DECIMAL, 18, 2), col(MCDC_TYPE_DECIMAL, 10, 2), false },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DECIMAL, 10, 0), true },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DECIMAL, 9, 0), false },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_DECIMAL, 20, 0), true },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_DECIMAL, 21, 2), false },
        { col(MCDC_TYPE_STRING, 0, 0), col(MCDC_TYPE_INT, 0, 0), false },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_STRING, 0, 0), false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (mcdc_delta_type_widens(&cases[i].from, &cases[i].to) != cases[i].ok)
            fail_msg("case %zu: expected %s", i, cases[i].ok ? "a widening" : "no widening");
    }
}

static void test_delta_evolve__append_widens_and_adds_in_one_commit(void **state)
{
    const char *t = *state;
    create_table(t, true);
    mcdc_schema *v0 = table_flat(t);
    mcdc_delta_file f1;
    write_file(&f1, t, v0, 1, 3, "part-1.parquet");
    mcdc_delta_commit_result r;
    assert_int_equal(0, mcdc_delta_append(t, &f1, 1, NULL, &r));
    assert_int_equal(1, r.version);

    mcdc_schema *widen = mcdc_schema_new();
    mcdc_schema_add(widen, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(widen, "d", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true);
    mcdc_schema_add(widen, "f", MCDC_TYPE_DOUBLE, 0, 0, true);
    mcdc_schema_add(widen, "amount", MCDC_TYPE_DECIMAL, 18, 4, true);
    mcdc_schema *add = mcdc_schema_new();
    mcdc_schema_add(add, "note", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_delta_evolution ev = MCDC_DELTA_EVOLUTION_INIT;
    ev.widen = widen;
    ev.add = add;
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_schema *planned = NULL;
    assert_int_equal(0, mcdc_delta_evolve_plan(&planned, snap, &ev));
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(5, planned->n_cols);
    assert_int_equal(MCDC_TYPE_LONG, planned->cols[0].type);
    assert_int_equal(4, planned->cols[3].scale);
    assert_string_equal("note", planned->cols[4].name);

    mcdc_delta_file f2;
    write_file(&f2, t, planned, 10, 2, "part-2.parquet");
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    co.evolve = &ev;
    co.app_id = "app";
    co.txn_version = 0;
    assert_int_equal(0, mcdc_delta_append(t, &f2, 1, &co, &r));
    assert_int_equal(2, r.version);
    char *c2 = commit_text(t, 2);
    assert_non_null(strstr(c2, "\"add\""));
    assert_non_null(strstr(c2, "\"txn\""));
    /* date -> timestamp_ntz needs timestampNtz too; (1,2) implied appendOnly, invariants */
    assert_non_null(strstr(c2, "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
                               "\"readerFeatures\":[\"timestampNtz\",\"typeWidening\"],"
                               "\"writerFeatures\":[\"appendOnly\",\"invariants\","
                               "\"timestampNtz\",\"typeWidening\"]}}"));
    free(c2);

    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(3, snap->protocol.min_reader_version);
    assert_int_equal(5, snap->schema->n_fields);
    json_t *sj = json_loads(snap->metadata.schema_string, 0, NULL);
    json_t *id = json_array_get(json_object_get(sj, "fields"), 0);
    assert_string_equal("long", json_string_value(json_object_get(id, "type")));
    json_t *tc = json_object_get(json_object_get(id, "metadata"), "delta.typeChanges");
    assert_int_equal(1, json_array_size(tc));
    assert_string_equal("integer", json_string_value(json_object_get(json_array_get(tc, 0), "fromType")));
    assert_string_equal("long", json_string_value(json_object_get(json_array_get(tc, 0), "toType")));
    json_t *am = json_array_get(json_object_get(sj, "fields"), 3);
    assert_string_equal("decimal(18,4)", json_string_value(json_object_get(am, "type")));
    json_decref(sj);
    mcdc_delta_snapshot_free(snap);

    /* rows of the file written before the widening read in the wider types */
    char *rows = rows_text(t);
    assert_string_equal("1|1970-01-02T00:00:00.000000|1.5|1.2500|NULL\n"
                        "2|1970-01-03T00:00:00.000000|2.5|2.2500|NULL\n"
                        "3|1970-01-04T00:00:00.000000|3.5|3.2500|NULL\n"
                        "10|1970-01-11T00:00:00.000000|10.5|10.2500|new\n"
                        "11|1970-01-12T00:00:00.000000|11.5|11.2500|new\n", rows);
    free(rows);

    /* the same evolution with the next batch: the table holds it, no second metaData */
    mcdc_delta_file f3;
    write_file(&f3, t, planned, 20, 1, "part-3.parquet");
    co.txn_version = 1;
    assert_int_equal(0, mcdc_delta_append(t, &f3, 1, &co, &r));
    char *c3 = commit_text(t, 3);
    assert_null(strstr(c3, "metaData"));
    assert_null(strstr(c3, "protocol"));
    free(c3);
    /* a replay of batch 1 writes nothing */
    assert_int_equal(MCDC_EALREADY, mcdc_delta_append(t, &f3, 1, &co, &r));
    /* tests/interop/delta_widening_duckdb.sh reads this table with DuckDB */
    const char *keep = getenv("MCDC_DELTA_INTEROP_DIR");
    if (keep) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s/widened'", t, keep);
        assert_int_equal(0, system(cmd));
    }
    mcdc_delta_file_clear(&f1);
    mcdc_delta_file_clear(&f2);
    mcdc_delta_file_clear(&f3);
    mcdc_schema_free(planned);
    mcdc_schema_free(widen);
    mcdc_schema_free(add);
    mcdc_schema_free(v0);
}

static void test_delta_evolve__legacy_protocol_lists_implied_features(void **state)
{
    const char *t = *state;
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_INT, 0, 0, true);
    mcdc_delta_map conf = { 0 };
    mcdc_delta_map_set(&conf, "delta.enableTypeWidening", "true");
    assert_int_equal(0, mcdc_delta_create(t, s, NULL, 0, &conf, NULL));
    mcdc_delta_map_clear(&conf);
    mcdc_schema *widen = mcdc_schema_new();
    mcdc_schema_add(widen, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_delta_evolution ev = MCDC_DELTA_EVOLUTION_INIT;
    ev.widen = widen;
    mcdc_delta_file f;
    write_file(&f, t, widen, 1, 1, "p.parquet");
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    co.evolve = &ev;
    mcdc_delta_commit_result r;
    assert_int_equal(0, mcdc_delta_append(t, &f, 1, &co, &r));
    char *c = commit_text(t, 1);
    assert_non_null(strstr(c, "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
                              "\"readerFeatures\":[\"typeWidening\"],\"writerFeatures\":"
                              "[\"appendOnly\",\"invariants\",\"typeWidening\"]}}"));
    free(c);
    mcdc_delta_file_clear(&f);
    mcdc_schema_free(widen);
    mcdc_schema_free(s);
}

/* A refused evolution writes nothing: no version, the table as it was. */
static void expect_refused(const char *t, const mcdc_delta_evolution *ev, const char *msg)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    int64_t v = snap->version;
    mcdc_schema *planned = NULL;
    assert_int_equal(MCDC_ESCHEMA, mcdc_delta_evolve_plan(&planned, snap, ev));
    assert_null(planned);
    assert_non_null(strstr(mcdc_error_last()->message, msg));
    mcdc_delta_snapshot_free(snap);
    mcdc_schema *flat = table_flat(t);
    mcdc_delta_file f;
    static int n_refused;
    char name[64];
    snprintf(name, sizeof name, "refused-%d.parquet", n_refused++);
    write_file(&f, t, flat, 1, 1, name);
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    co.evolve = ev;
    mcdc_delta_commit_result r;
    assert_int_equal(MCDC_ESCHEMA, mcdc_delta_append(t, &f, 1, &co, &r));
    int64_t now = -1;
    assert_int_equal(0, mcdc_delta_latest_version(&now, t));
    assert_int_equal(v, now);
    mcdc_delta_file_clear(&f);
    mcdc_schema_free(flat);
}

static void test_delta_evolve__refusals_write_nothing(void **state)
{
    const char *t = *state;
    create_table(t, false);
    mcdc_schema *widen = mcdc_schema_new();
    mcdc_schema_add(widen, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_delta_evolution ev = MCDC_DELTA_EVOLUTION_INIT;
    ev.widen = widen;
    expect_refused(t, &ev, "does not have delta.enableTypeWidening=true");
    assert_non_null(strstr(mcdc_error_last()->hint, "delta.enableTypeWidening=true"));
    mcdc_schema_free(widen);

    mcdc_delta_map set = { 0 };
    mcdc_delta_map_set(&set, "delta.enableTypeWidening", "true");
    assert_int_equal(0, mcdc_delta_set_config(t, &set, NULL, NULL));
    mcdc_delta_map_clear(&set);
    widen = mcdc_schema_new();
    mcdc_schema_add(widen, "amount", MCDC_TYPE_DECIMAL, 9, 2, true); /* narrowing */
    ev.widen = widen;
    expect_refused(t, &ev, "column amount is decimal(10,2); a change to decimal(9,2) is not a widening");
    mcdc_schema_free(widen);
    widen = mcdc_schema_new();
    mcdc_schema_add(widen, "id", MCDC_TYPE_STRING, 0, 0, true);
    ev.widen = widen;
    expect_refused(t, &ev, "a change to string is not a widening");
    mcdc_schema_free(widen);
    widen = mcdc_schema_new();
    mcdc_schema_add(widen, "gone", MCDC_TYPE_LONG, 0, 0, true);
    ev.widen = widen;
    expect_refused(t, &ev, "no column gone to widen");
    mcdc_schema_free(widen);
    ev.widen = NULL;
    mcdc_schema *add = mcdc_schema_new();
    mcdc_schema_add(add, "id", MCDC_TYPE_STRING, 0, 0, true);
    ev.add = add;
    expect_refused(t, &ev, "column id to add exists with another type");
    mcdc_schema_free(add);
    add = mcdc_schema_new();
    mcdc_schema_add(add, "must", MCDC_TYPE_STRING, 0, 0, false);
    ev.add = add;
    expect_refused(t, &ev, "new column must must be nullable");
    mcdc_schema_free(add);
}

static void test_delta_evolve__reader_refuses_unknown_type_change(void **state)
{
    const char *t = *state;
    char dir[600], path[700];
    snprintf(dir, sizeof dir, "%s/_delta_log", t);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/00000000000000000000.json", dir);
    testenv_write(path,
        "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":"
        "[\"typeWidening\"],\"writerFeatures\":[\"typeWidening\"]}}\n"
        "{\"metaData\":{\"id\":\"x\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
        "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":\\\"a\\\","
        "\\\"type\\\":\\\"integer\\\",\\\"nullable\\\":true,\\\"metadata\\\":{\\\"delta.typeChanges"
        "\\\":[{\\\"fromType\\\":\\\"string\\\",\\\"toType\\\":\\\"integer\\\"}]}}]}\","
        "\"partitionColumns\":[],\"configuration\":{},\"createdTime\":1}}\n");
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(MCDC_EUNSUPPORTED, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_non_null(strstr(mcdc_error_last()->message,
                           "column a: type change from string to integer is not one this build reads"));
}

/* A column name Delta engines refuse makes a column-mapped table (name mode); the data
 * files name columns by the physical names, and a column added later gets the next id. */
static void test_delta_evolve__refused_name_makes_column_mapping(void **state)
{
    const char *t = *state;
    assert_true(mcdc_delta_name_needs_mapping("Order Date"));
    assert_true(mcdc_delta_name_needs_mapping("a=b"));
    assert_false(mcdc_delta_name_needs_mapping("order_date"));
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_INT, 0, 0, true);
    mcdc_schema_add(s, "Order Date", MCDC_TYPE_DATE, 0, 0, true);
    /* a first data file may come before the table: the same names as the table will have */
    mcdc_schema *before = NULL;
    int32_t *ids_before = NULL;
    assert_int_equal(0, mcdc_delta_physical_schema(&before, &ids_before, t, s));
    assert_non_null(ids_before);
    assert_int_equal(0, mcdc_delta_create(t, s, NULL, 0, NULL, NULL));
    char *c0 = commit_text(t, 0);
    assert_non_null(strstr(c0, "{\"protocol\":{\"minReaderVersion\":2,\"minWriterVersion\":5}}"));
    assert_non_null(strstr(c0, "\"delta.columnMapping.mode\":\"name\""));
    assert_non_null(strstr(c0, "\"delta.columnMapping.maxColumnId\":\"2\""));
    free(c0);
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(MCDC_DELTA_CM_NAME, snap->column_mapping);
    assert_int_equal(2, snap->schema->fields[1].field_id);
    assert_string_equal(before->cols[1].name, snap->schema->fields[1].physical_name);
    assert_int_equal(ids_before[1], 2);
    assert_int_equal(0, strncmp(before->cols[1].name, "col-", 4));
    mcdc_delta_snapshot_free(snap);
    /* a column added later: the next id, the physical name the writer gives it */
    mcdc_schema *more = mcdc_schema_copy(s);
    mcdc_schema_add(more, "Ship To", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_schema *phys = NULL;
    int32_t *ids = NULL;
    assert_int_equal(0, mcdc_delta_physical_schema(&phys, &ids, t, more));
    assert_int_equal(3, ids[2]);
    mcdc_schema *add = mcdc_schema_new();
    mcdc_schema_add(add, "Ship To", MCDC_TYPE_STRING, 0, 0, true);
    assert_int_equal(0, mcdc_delta_add_columns(t, add, NULL));
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(3, snap->schema->fields[2].field_id);
    assert_string_equal(phys->cols[2].name, snap->schema->fields[2].physical_name);
    assert_string_equal("3", mcdc_delta_snapshot_config(snap, "delta.columnMapping.maxColumnId", ""));
    mcdc_delta_snapshot_free(snap);
    /* rows written with the physical schema read back by their logical names */
    mcdc_delta_file f;
    write_file_named(&f, t, phys, more, 1, 2, "cm.parquet");
    assert_int_equal(0, mcdc_delta_append(t, &f, 1, NULL, NULL));
    char *rows = rows_text(t);
    assert_string_equal("1|1970-01-02|new\n2|1970-01-03|new\n", rows);
    free(rows);
    mcdc_delta_file_clear(&f);
    free(ids);
    free(ids_before);
    mcdc_schema_free(phys);
    mcdc_schema_free(before);
    mcdc_schema_free(add);
    mcdc_schema_free(more);
    mcdc_schema_free(s);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_evolve__widenings_delta_allows),
        T(test_delta_evolve__append_widens_and_adds_in_one_commit),
        T(test_delta_evolve__legacy_protocol_lists_implied_features),
        T(test_delta_evolve__refusals_write_nothing),
        T(test_delta_evolve__reader_refuses_unknown_type_change),
        T(test_delta_evolve__refused_name_makes_column_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
