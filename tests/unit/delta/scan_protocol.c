/* Unit tests for delta/scan.c against what PROTOCOL.md asks of readers, on small tables
 * written by hand: column mapping 'id' mode finds columns by Parquet field id (a file
 * without the id reads NULL, whatever its names); delta.columnMapping.mode counts only
 * when the protocol supports column mapping; a struct field that an older file lacks
 * reads as null; the preview feature names typeWidening-preview and variantType-preview
 * read as the final features (widened values, variants as JSON text). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include <jansson.h>

#include "mcdc/delta.h"
#include "mcdc/parquet.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    *state = testenv_tmpdir("scanproto");
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

/* Write a flat file @p name in table @p t: columns (@p names, int), one Parquet field id
 * each (-1: none), rows 1..3 with value row * (column + 1). Returns its size. */
static long write_flat(const char *t, const char *name, const char *const *names,
                       const int32_t *ids, size_t n)
{
    mcdc_schema *s = mcdc_schema_new();
    for (size_t i = 0; i < n; i++)
        mcdc_schema_add(s, names[i], MCDC_TYPE_INT, 0, 0, true);
    char path[700];
    snprintf(path, sizeof path, "%s/%s", t, name);
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    o.field_ids = ids;
    mcdc_parquet_writer *w = NULL;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, path, s, &o));
    for (int r = 1; r <= 3; r++) {
        mcdc_value row[8];
        memset(row, 0, sizeof row);
        for (size_t i = 0; i < n; i++)
            row[i].v.i = r * (int)(i + 1);
        assert_int_equal(0, mcdc_parquet_writer_write_row(w, row));
    }
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_schema_free(s);
    struct stat st;
    assert_int_equal(0, stat(path, &st));
    return (long)st.st_size;
}

/* Write version 0 of @p t: @p protocol, a metaData with @p schema (JSON text, escaped by
 * this helper) and @p config (JSON object text), and an add of @p file. */
static void write_log(const char *t, const char *protocol, const char *schema, const char *config,
                      const char *file, long size)
{
    char dir[700], path[800];
    snprintf(dir, sizeof dir, "%s/_delta_log", t);
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/00000000000000000000.json", dir);
    json_t *md = json_pack("{s:{s:s,s:{s:s,s:{}},s:s,s:[],s:o,s:i}}", "metaData", "id", "x",
                           "format", "provider", "parquet", "options", "schemaString", schema,
                           "partitionColumns", "configuration", json_loads(config, 0, NULL),
                           "createdTime", 1);
    json_t *add = json_pack("{s:{s:s,s:{},s:I,s:i,s:b}}", "add", "path", file, "partitionValues",
                            "size", (json_int_t)size, "modificationTime", 1, "dataChange", 1);
    char *a = json_dumps(md, JSON_COMPACT), *b = json_dumps(add, JSON_COMPACT);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"protocol\":%s}\n%s\n%s\n", protocol, a, b);
    fclose(f);
    free(a);
    free(b);
    json_decref(md);
    json_decref(add);
}

/* The rows of @p t as text lines "c1|c2|..." in file order (caller frees). */
static char *rows_text(const char *t)
{
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, t, -1);
    if (rc)
        fail_msg("%s", mcdc_error_last()->message);
    mcdc_delta_scan *sc = NULL;
    assert_int_equal(0, mcdc_delta_scan_open(&sc, snap, NULL));
    const mcdc_schema *s = mcdc_delta_scan_schema(sc);
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    const mcdc_value *row;
    while ((rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        for (size_t c = 0; c < s->n_cols; c++) {
            if (c)
                mcdc_buf_putc(&b, '|');
            mcdc_value_to_text(&b, &s->cols[c], &row[c]);
        }
        mcdc_buf_putc(&b, '\n');
    }
    assert_int_equal(0, rc);
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    char *r = mcdc_buf_detach(&b);
    mcdc_buf_dispose(&b);
    return r;
}

#define FIELD(name, id, phys)                                                               \
    "{\"name\":\"" name "\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{"           \
    "\"delta.columnMapping.id\":" #id ",\"delta.columnMapping.physicalName\":\"" phys "\"}}"

static void test_delta_scan_protocol__id_mode_resolves_by_field_id(void **state)
{
    const char *t = *state;
    /* the file's first column carries a's id under another name; its second has b's
     * physical name but no id: in id mode a reads the first, b reads NULL */
    const char *names[] = { "renamed", "col-b" };
    const int32_t ids[] = { 1, -1 };
    long size = write_flat(t, "f.parquet", names, ids, 2);
    write_log(t, "{\"minReaderVersion\":2,\"minWriterVersion\":5}",
              "{\"type\":\"struct\",\"fields\":[" FIELD("a", 1, "col-a") "," FIELD("b", 2, "col-b") "]}",
              "{\"delta.columnMapping.mode\":\"id\",\"delta.columnMapping.maxColumnId\":\"2\"}",
              "f.parquet", size);
    char *rows = rows_text(t);
    assert_string_equal("1|NULL\n2|NULL\n3|NULL\n", rows);
    free(rows);
}

static void test_delta_scan_protocol__mapping_mode_needs_protocol_support(void **state)
{
    const char *t = *state;
    const char *names[] = { "a", "b" };
    long size = write_flat(t, "f.parquet", names, NULL, 2);
    /* (1,2) does not support column mapping: the mode and the physical names mean
     * nothing, columns are found by their names */
    write_log(t, "{\"minReaderVersion\":1,\"minWriterVersion\":2}",
              "{\"type\":\"struct\",\"fields\":[" FIELD("a", 1, "col-a") "," FIELD("b", 2, "col-b") "]}",
              "{\"delta.columnMapping.mode\":\"name\"}", "f.parquet", size);
    char *rows = rows_text(t);
    assert_string_equal("1|2\n2|4\n3|6\n", rows);
    free(rows);
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(MCDC_DELTA_CM_NONE, snap->column_mapping);
    mcdc_delta_snapshot_free(snap);
    /* reader 3 without the feature: the same; with it: physical names */
    write_log(t, "{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[],"
                 "\"writerFeatures\":[]}",
              "{\"type\":\"struct\",\"fields\":[" FIELD("a", 1, "col-a") "," FIELD("b", 2, "col-b") "]}",
              "{\"delta.columnMapping.mode\":\"bogus\"}", "f.parquet", size);
    rows = rows_text(t);
    assert_string_equal("1|2\n2|4\n3|6\n", rows);
    free(rows);
    write_log(t, "{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":"
                 "[\"columnMapping\"],\"writerFeatures\":[\"columnMapping\"]}",
              "{\"type\":\"struct\",\"fields\":[" FIELD("a", 1, "col-a") "," FIELD("b", 2, "b") "]}",
              "{\"delta.columnMapping.mode\":\"name\"}", "f.parquet", size);
    rows = rows_text(t);
    assert_string_equal("NULL|2\nNULL|4\nNULL|6\n", rows);
    free(rows);
}

static void test_delta_scan_protocol__missing_nested_field_reads_null(void **state)
{
    const char *t = *state;
    /* a file written when struct s had only x; the table's s has x and y since */
    mcdc_column it = { NULL, MCDC_TYPE_INT, 0, 0, true };
    mcdc_parquet_node *root = mcdc_parquet_node_struct("schema", false);
    mcdc_parquet_node *st = mcdc_parquet_node_struct("s", true);
    mcdc_parquet_node_add(st, mcdc_parquet_node_leaf("x", &it));
    mcdc_parquet_node_add(root, mcdc_parquet_node_leaf("id", &it));
    mcdc_parquet_node_add(root, st);
    char path[700];
    snprintf(path, sizeof path, "%s/old.parquet", t);
    mcdc_parquet_writer *w = NULL;
    assert_int_equal(0, mcdc_parquet_writer_open_nested(&w, path, root, NULL));
    json_t *row = json_pack("{s:i,s:{s:i}}", "id", 1, "s", "x", 7);
    assert_int_equal(0, mcdc_parquet_writer_write_json(w, row));
    json_decref(row);
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_parquet_node_free(root);
    struct stat sb;
    assert_int_equal(0, stat(path, &sb));
    write_log(t, "{\"minReaderVersion\":1,\"minWriterVersion\":2}",
              "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"integer\",\"nullable\":"
              "true,\"metadata\":{}},{\"name\":\"s\",\"type\":{\"type\":\"struct\",\"fields\":["
              "{\"name\":\"x\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}},"
              "{\"name\":\"y\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]},"
              "\"nullable\":true,\"metadata\":{}}]}",
              "{}", "old.parquet", (long)sb.st_size);
    char *rows = rows_text(t);
    assert_string_equal("1|{\"x\":7,\"y\":null}\n", rows);
    free(rows);
}

/* typeWidening-preview: the name Delta 3.2 wrote, with the final feature's meaning: a
 * file written before the widening reads in the wider type */
static void test_delta_scan_protocol__type_widening_preview_reads_widened(void **state)
{
    const char *t = *state;
    const char *names[] = { "a", "b" };
    long size = write_flat(t, "f.parquet", names, NULL, 2);
    write_log(t, "{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":"
                 "[\"typeWidening-preview\"],\"writerFeatures\":[\"typeWidening-preview\"]}",
              "{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,"
              "\"metadata\":{\"delta.typeChanges\":[{\"tableVersion\":1,\"fromType\":\"integer\","
              "\"toType\":\"long\"}]}},{\"name\":\"b\",\"type\":\"double\",\"nullable\":true,"
              "\"metadata\":{\"delta.typeChanges\":[{\"tableVersion\":1,\"fromType\":\"integer\","
              "\"toType\":\"double\"}]}}]}",
              "{\"delta.enableTypeWidening\":\"true\"}", "f.parquet", size);
    char *rows = rows_text(t);
    assert_string_equal("1|2\n2|4\n3|6\n", rows);
    free(rows);
}

/* variantType-preview: a variant column (a struct of value and metadata binaries in the
 * file) reads as each value's JSON text */
static void test_delta_scan_protocol__variant_preview_reads_json_text(void **state)
{
    const char *t = *state;
    mcdc_column it = { NULL, MCDC_TYPE_INT, 0, 0, true };
    mcdc_column bin = { NULL, MCDC_TYPE_BINARY, 0, 0, false };
    mcdc_parquet_node *root = mcdc_parquet_node_struct("schema", false);
    mcdc_parquet_node *v = mcdc_parquet_node_struct("v", true);
    mcdc_parquet_node_add(v, mcdc_parquet_node_leaf("value", &bin));
    mcdc_parquet_node_add(v, mcdc_parquet_node_leaf("metadata", &bin));
    mcdc_parquet_node_add(root, mcdc_parquet_node_leaf("id", &it));
    mcdc_parquet_node_add(root, v);
    char path[700];
    snprintf(path, sizeof path, "%s/var.parquet", t);
    mcdc_parquet_writer *w = NULL;
    assert_int_equal(0, mcdc_parquet_writer_open_nested(&w, path, root, NULL));
    static const char meta[] = { 0x01, 0x01, 0x00, 0x01, 'a' };
    static const char obj[] = { 0x02, 0x01, 0x00, 0x00, 0x02, 0x0C, 0x01 }; /* {"a":1} */
    static const char dec[] = { 0x20, 0x02, (char)0xCE, 0x04, 0x00, 0x00 };  /* 12.30 */
    /* binaries as JSON strings of their bytes (not UTF-8: built unchecked) */
    json_t *r1 = json_pack("{s:i,s:{s:o,s:o}}", "id", 1, "v", "value",
                           json_stringn_nocheck(obj, sizeof obj), "metadata",
                           json_stringn_nocheck(meta, sizeof meta));
    json_t *r2 = json_pack("{s:i,s:{s:o,s:o}}", "id", 2, "v", "value",
                           json_stringn_nocheck(dec, sizeof dec), "metadata",
                           json_stringn_nocheck(meta, sizeof meta));
    json_t *r3 = json_pack("{s:i,s:n}", "id", 3, "v");
    assert_int_equal(0, mcdc_parquet_writer_write_json(w, r1));
    assert_int_equal(0, mcdc_parquet_writer_write_json(w, r2));
    assert_int_equal(0, mcdc_parquet_writer_write_json(w, r3));
    json_decref(r1);
    json_decref(r2);
    json_decref(r3);
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_parquet_node_free(root);
    struct stat sb;
    assert_int_equal(0, stat(path, &sb));
    write_log(t, "{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":"
                 "[\"variantType-preview\"],\"writerFeatures\":[\"variantType-preview\"]}",
              "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"integer\",\"nullable\":"
              "true,\"metadata\":{}},{\"name\":\"v\",\"type\":\"variant\",\"nullable\":true,"
              "\"metadata\":{}}]}",
              "{}", "var.parquet", (long)sb.st_size);
    char *rows = rows_text(t);
    assert_string_equal("1|{\"a\":1}\n2|12.30\n3|NULL\n", rows);
    free(rows);
    /* tests/interop/delta_preview_tables.sh reads it with `table cat` */
    const char *keep = getenv("MCDC_DELTA_INTEROP_DIR");
    if (keep) {
        char cmd[1400];
        snprintf(cmd, sizeof cmd, "cp -r '%s' '%s/variant'", t, keep);
        assert_int_equal(0, system(cmd));
    }
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_delta_scan_protocol__id_mode_resolves_by_field_id),
        T(test_delta_scan_protocol__mapping_mode_needs_protocol_support),
        T(test_delta_scan_protocol__missing_nested_field_reads_null),
        T(test_delta_scan_protocol__type_widening_preview_reads_widened),
        T(test_delta_scan_protocol__variant_preview_reads_json_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
