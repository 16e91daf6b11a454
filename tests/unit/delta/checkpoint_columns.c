/* Unit tests for delta/checkpoint_columns.c: the column-by-column decode of Parquet
 * checkpoint rows gives exactly the actions (and errors) of the JSON path, on every
 * Parquet checkpoint and sidecar in tests/data and on generated checkpoints holding every
 * action kind, every field, empty and null maps and lists, all-null structs and broken
 * rows; a layout the decoder does not take falls back to the JSON path. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>

#include "delta/internal.h"
#include "mcdc/parquet.h"
#include "unit/delta/testenv.h"

/* Every field of an action as one line of text. */
static void put_map(mcdc_buf *b, const char *name, const mcdc_delta_map *m)
{
    mcdc_buf_printf(b, " %s{", name);
    for (size_t i = 0; i < m->n; i++)
        mcdc_buf_printf(b, "%s=%s;", m->kv[i].key, m->kv[i].value ? m->kv[i].value : "<null>");
    mcdc_buf_puts(b, "}");
}

static void put_list(mcdc_buf *b, const char *name, char **l, size_t n, bool present)
{
    mcdc_buf_printf(b, " %s%s[", name, present ? "" : "(absent)");
    for (size_t i = 0; i < n; i++)
        mcdc_buf_printf(b, "%s;", l[i]);
    mcdc_buf_puts(b, "]");
}

#define S(x) ((x) ? (x) : "<null>")

static void dump(mcdc_buf *b, const mcdc_delta_action *a)
{
    mcdc_buf_printf(b, "kind %d:", (int)a->kind);
    switch (a->kind) {
    case MCDC_DELTA_ACTION_ADD:
    case MCDC_DELTA_ACTION_REMOVE: {
        const mcdc_delta_file *f = &a->u.file;
        mcdc_buf_printf(b, " %s %lld %lld %lld %d %d %s %lld %lld", S(f->path),
                        (long long)f->size, (long long)f->modification_time,
                        (long long)f->deletion_timestamp, f->data_change,
                        f->extended_file_metadata, S(f->stats), (long long)f->base_row_id,
                        (long long)f->default_row_commit_version);
        put_map(b, "pv", &f->partition_values);
        put_map(b, "tags", &f->tags);
        if (f->has_dv)
            mcdc_buf_printf(b, " dv %c %s %d %d %lld", f->dv.storage_type,
                            S(f->dv.path_or_inline_dv), (int)f->dv.offset,
                            (int)f->dv.size_in_bytes, (long long)f->dv.cardinality);
        break;
    }
    case MCDC_DELTA_ACTION_METADATA: {
        const mcdc_delta_metadata *m = &a->u.metadata;
        mcdc_buf_printf(b, " %s %s %s %s %s %lld", S(m->id), S(m->name), S(m->description),
                        S(m->format_provider), S(m->schema_string), (long long)m->created_time);
        put_list(b, "pc", m->partition_columns, m->n_partition_columns, true);
        put_map(b, "conf", &m->configuration);
        break;
    }
    case MCDC_DELTA_ACTION_PROTOCOL: {
        const mcdc_delta_protocol *p = &a->u.protocol;
        mcdc_buf_printf(b, " %d %d", p->min_reader_version, p->min_writer_version);
        put_list(b, "rf", p->reader_features, p->n_reader_features, p->has_reader_features);
        put_list(b, "wf", p->writer_features, p->n_writer_features, p->has_writer_features);
        break;
    }
    case MCDC_DELTA_ACTION_TXN:
        mcdc_buf_printf(b, " %s %lld %lld", S(a->u.txn.app_id), (long long)a->u.txn.version,
                        (long long)a->u.txn.last_updated);
        break;
    case MCDC_DELTA_ACTION_DOMAIN_METADATA:
        mcdc_buf_printf(b, " %s %s %d", S(a->u.domain.domain), S(a->u.domain.configuration),
                        a->u.domain.removed);
        break;
    case MCDC_DELTA_ACTION_CHECKPOINT_METADATA:
        mcdc_buf_printf(b, " %lld", (long long)a->u.checkpoint_version);
        break;
    case MCDC_DELTA_ACTION_SIDECAR:
        mcdc_buf_printf(b, " %s %lld %lld", S(a->u.sidecar.path),
                        (long long)a->u.sidecar.size_in_bytes,
                        (long long)a->u.sidecar.modification_time);
        break;
    default: break;
    }
    mcdc_buf_puts(b, "\n");
}

static int collect(mcdc_delta_action *a, void *payload)
{
    dump(payload, a);
    return 0;
}

/* Both ways over one file: the same actions, the same outcome and message. Returns what
 * the columnar decoder said of the layout (0: decoded here, 1: left to the JSON path). */
static int compare(const char *path, int *rc_out)
{
    mcdc_buf a = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX), b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int ra = mcdc_delta__read_parquet_actions_json(path, collect, &a);
    char ma[1024] = "";
    if (ra < 0)
        snprintf(ma, sizeof ma, "%s", mcdc_error_last()->message);
    int rb = mcdc_delta__read_parquet_actions(path, collect, &b);
    char mb[1024] = "";
    if (rb < 0)
        snprintf(mb, sizeof mb, "%s", mcdc_error_last()->message);
    if (ra != rb || strcmp(ma, mb) != 0 || a.len != b.len || (a.len && strcmp(a.ptr, b.ptr)))
        fprintf(stderr, "%s:\njson (%d %s):\n%s\ncolumns (%d %s):\n%s\n", path, ra, ma,
                a.ptr ? a.ptr : "", rb, mb, b.ptr ? b.ptr : "");
    assert_int_equal(ra, rb);
    assert_string_equal(ma, mb);
    assert_string_equal(a.ptr ? a.ptr : "", b.ptr ? b.ptr : "");
    mcdc_buf_dispose(&a);
    mcdc_buf_dispose(&b);
    *rc_out = ra;

    /* which way the default took */
    mcdc_parquet_reader *r = NULL;
    assert_int_equal(0, mcdc_parquet_reader_open(&r, path, NULL));
    static const char *const cols[] = { "txn", "add", "remove", "metaData", "protocol",
                                        "domainMetadata", "checkpointMetadata", "sidecar" };
    const mcdc_schema *fs = mcdc_parquet_reader_schema(r);
    const char *sel[8];
    size_t n = 0;
    for (size_t i = 0; i < 8; i++)
        if (mcdc_schema_find(fs, cols[i]) >= 0)
            sel[n++] = cols[i];
    assert_int_equal(0, mcdc_parquet_reader_select(r, sel, n));
    mcdc_buf c = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int way = mcdc_delta__read_parquet_columns(r, path, collect, &c);
    mcdc_buf_dispose(&c);
    mcdc_parquet_reader_free(r);
    return way;
}

static size_t walk(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        size_t len = strlen(e->d_name);
        if (len > 8 && strcmp(e->d_name + len - 8, ".parquet") == 0 && strstr(p, "_delta_log")) {
            int rc = 0;
            int way = compare(p, &rc);
            assert_int_equal(0, rc);
            assert_int_equal(0, way); /* Spark's layouts all decode column by column */
            n++;
        } else if (e->d_type == DT_DIR || e->d_type == DT_UNKNOWN) {
            n += walk(p);
        }
    }
    closedir(d);
    return n;
}

static void test_checkpoint_columns__same_as_json_on_test_data(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/delta", testenv_data());
    size_t n = walk(dir);
    assert_true(n >= 10);
}

/* ---- generated checkpoints ----------------------------------------------------------- */

static mcdc_parquet_node *leaf(const char *name, mcdc_type_id t)
{
    mcdc_column c = { 0 };
    c.type = t;
    c.nullable = true;
    return mcdc_parquet_node_leaf(name, &c);
}

static mcdc_parquet_node *str_map(const char *name)
{
    return mcdc_parquet_node_map(name, true, leaf("key", MCDC_TYPE_STRING),
                                 leaf("value", MCDC_TYPE_STRING));
}

static mcdc_parquet_node *str_list(const char *name)
{
    return mcdc_parquet_node_list(name, true, leaf("element", MCDC_TYPE_STRING));
}

static mcdc_parquet_node *file_node(const char *name)
{
    mcdc_parquet_node *f = mcdc_parquet_node_struct(name, true);
    mcdc_parquet_node_add(f, leaf("path", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(f, str_map("partitionValues"));
    mcdc_parquet_node_add(f, leaf("size", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(f, leaf("modificationTime", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(f, leaf("deletionTimestamp", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(f, leaf("dataChange", MCDC_TYPE_BOOLEAN));
    mcdc_parquet_node_add(f, leaf("extendedFileMetadata", MCDC_TYPE_BOOLEAN));
    mcdc_parquet_node_add(f, str_map("tags"));
    mcdc_parquet_node *d = mcdc_parquet_node_struct("deletionVector", true);
    mcdc_parquet_node_add(d, leaf("storageType", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(d, leaf("pathOrInlineDv", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(d, leaf("offset", MCDC_TYPE_INT));
    mcdc_parquet_node_add(d, leaf("sizeInBytes", MCDC_TYPE_INT));
    mcdc_parquet_node_add(d, leaf("cardinality", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(d, leaf("maxRowIndex", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(f, d);
    mcdc_parquet_node_add(f, leaf("baseRowId", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(f, leaf("defaultRowCommitVersion", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(f, leaf("stats", MCDC_TYPE_STRING));
    mcdc_parquet_node *sp = mcdc_parquet_node_struct("stats_parsed", true);
    mcdc_parquet_node_add(sp, leaf("numRecords", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(f, sp);
    return f;
}

static mcdc_parquet_node *every_kind_schema(bool size_as_string)
{
    mcdc_parquet_node *root = mcdc_parquet_node_struct("spark_schema", false);
    mcdc_parquet_node *txn = mcdc_parquet_node_struct("txn", true);
    mcdc_parquet_node_add(txn, leaf("appId", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(txn, leaf("version", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(txn, leaf("lastUpdated", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(root, txn);
    mcdc_parquet_node *add = file_node("add");
    if (size_as_string) { /* a layout the columnar decoder leaves to the JSON path */
        mcdc_parquet_node_add(add, leaf("baseRowIdText", MCDC_TYPE_STRING));
    }
    mcdc_parquet_node_add(root, add);
    mcdc_parquet_node_add(root, file_node("remove"));
    mcdc_parquet_node *md = mcdc_parquet_node_struct("metaData", true);
    mcdc_parquet_node_add(md, leaf("id", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(md, leaf("name", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(md, leaf("description", MCDC_TYPE_STRING));
    mcdc_parquet_node *fmt = mcdc_parquet_node_struct("format", true);
    mcdc_parquet_node_add(fmt, leaf("provider", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(fmt, str_map("options"));
    mcdc_parquet_node_add(md, fmt);
    mcdc_parquet_node_add(md, leaf("schemaString", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(md, str_list("partitionColumns"));
    mcdc_parquet_node_add(md, str_map("configuration"));
    mcdc_parquet_node_add(md, leaf("createdTime", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(root, md);
    mcdc_parquet_node *pr = mcdc_parquet_node_struct("protocol", true);
    mcdc_parquet_node_add(pr, leaf("minReaderVersion", MCDC_TYPE_INT));
    mcdc_parquet_node_add(pr, leaf("minWriterVersion", MCDC_TYPE_INT));
    mcdc_parquet_node_add(pr, str_list("readerFeatures"));
    mcdc_parquet_node_add(pr, str_list("writerFeatures"));
    mcdc_parquet_node_add(root, pr);
    mcdc_parquet_node *dm = mcdc_parquet_node_struct("domainMetadata", true);
    mcdc_parquet_node_add(dm, leaf("domain", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(dm, leaf("configuration", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(dm, leaf("removed", MCDC_TYPE_BOOLEAN));
    mcdc_parquet_node_add(root, dm);
    mcdc_parquet_node *cm = mcdc_parquet_node_struct("checkpointMetadata", true);
    mcdc_parquet_node_add(cm, leaf("version", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(cm, str_map("tags"));
    mcdc_parquet_node_add(root, cm);
    mcdc_parquet_node *sc = mcdc_parquet_node_struct("sidecar", true);
    mcdc_parquet_node_add(sc, leaf("path", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(sc, leaf("sizeInBytes", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(sc, leaf("modificationTime", MCDC_TYPE_LONG));
    mcdc_parquet_node_add(sc, str_map("tags"));
    mcdc_parquet_node_add(root, sc);
    return root;
}

/* Rows of every kind and shape; page and row-group limits small so rows cross pages. */
static const char *const good_rows[] = {
    ("{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
    "\"readerFeatures\":[\"deletionVectors\"],\"writerFeatures\":[\"deletionVectors\",\"domainMetadata\"]}}"),
    "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}",
    "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[],\"writerFeatures\":[]}}",
    ("{\"metaData\":{\"id\":\"0b6d\",\"name\":\"t\",\"description\":\"d\",\"format\":{\"provider\":\"parquet\","
    "\"options\":[]},\"schemaString\":\"{}\",\"partitionColumns\":[\"p\",\"q\"],"
    "\"configuration\":[{\"key\":\"a\",\"value\":\"1\"},{\"key\":\"b\",\"value\":null},{\"key\":\"a\",\"value\":\"2\"}],"
    "\"createdTime\":1700000000000}}"),
    "{\"metaData\":{\"id\":\"x\",\"schemaString\":\"{}\",\"partitionColumns\":[]}}",
    "{\"metaData\":{\"id\":\"y\",\"schemaString\":\"{}\",\"format\":{\"options\":[]},\"configuration\":[]}}",
    "{\"txn\":{\"appId\":\"app\",\"version\":42,\"lastUpdated\":7}}",
    "{\"txn\":{\"appId\":\"app2\",\"version\":0}}",
    "{\"domainMetadata\":{\"domain\":\"delta.rowTracking\",\"configuration\":\"{\\\"x\\\":1}\",\"removed\":false}}",
    "{\"domainMetadata\":{\"domain\":\"d2\",\"removed\":true}}",
    "{\"checkpointMetadata\":{\"version\":12}}",
    "{\"sidecar\":{\"path\":\"s.parquet\",\"sizeInBytes\":10,\"modificationTime\":11}}",
    ("{\"add\":{\"path\":\"p=1/a.parquet\",\"partitionValues\":[{\"key\":\"p\",\"value\":\"1\"},{\"key\":\"q\",\"value\":null}],"
    "\"size\":100,\"modificationTime\":5,\"dataChange\":true,\"tags\":[{\"key\":\"t\",\"value\":\"v\"}],"
    "\"deletionVector\":{\"storageType\":\"u\",\"pathOrInlineDv\":\"ab^-aqEH.-t@S}K{vb[*k^\",\"offset\":1,"
    "\"sizeInBytes\":40,\"cardinality\":3,\"maxRowIndex\":9},\"baseRowId\":4,\"defaultRowCommitVersion\":2,"
    "\"stats\":\"{\\\"numRecords\\\":3}\",\"stats_parsed\":{\"numRecords\":3}}}"),
    ("{\"add\":{\"path\":\"b.parquet\",\"partitionValues\":[],\"size\":0,\"dataChange\":false,"
    "\"deletionVector\":{}}}"),
    "{\"add\":{\"path\":\"c.parquet\",\"size\":7,\"deletionVector\":{\"storageType\":\"i\",\"pathOrInlineDv\":\"wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L\",\"sizeInBytes\":44,\"cardinality\":2}}}",
    ("{\"remove\":{\"path\":\"old.parquet\",\"deletionTimestamp\":9,\"dataChange\":true,\"extendedFileMetadata\":true,"
    "\"partitionValues\":[{\"key\":\"p\",\"value\":\"2\"}],\"size\":50}}"),
    "{\"remove\":{\"path\":\"old2.parquet\"}}",
    "{\"add\":null,\"remove\":{\"path\":null,\"size\":null}}",  /* an all-null struct: no action */
    "{}",
};

static void write_checkpoint(const char *path, bool fallback_layout, const char *const *rows,
                             size_t n)
{
    mcdc_parquet_node *root = every_kind_schema(fallback_layout);
    assert_non_null(root);
    mcdc_parquet_writer_options o = MCDC_PARQUET_WRITER_OPTIONS_INIT;
    o.page_max_values = 3; /* rows cross pages in the repeated leaves */
    o.page_bytes = 1024;
    o.row_group_bytes = 2048;
    mcdc_parquet_writer *w = NULL;
    int orc = mcdc_parquet_writer_open_nested(&w, path, root, &o);
    if (orc != 0)
        fprintf(stderr, "%s\n", mcdc_error_last()->message);
    assert_int_equal(0, orc);
    for (size_t k = 0; k < 3; k++) /* three rounds: several row groups and pages */
        for (size_t i = 0; i < n; i++) {
            json_t *j = json_loads(rows[i], 0, NULL);
            assert_non_null(j);
            int rc = mcdc_parquet_writer_write_json(w, j);
            if (rc != 0)
                fprintf(stderr, "row %zu: %s\n", i, mcdc_error_last()->message);
            assert_int_equal(0, rc);
            json_decref(j);
        }
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_parquet_node_free(root);
}

static void test_checkpoint_columns__every_action_kind(void **state)
{
    (void)state;
    char *dir = testenv_tmpdir("cpcols");
    assert_non_null(dir);
    char p[1024];
    snprintf(p, sizeof p, "%s/00000000000000000003.checkpoint.parquet", dir);
    write_checkpoint(p, false, good_rows, sizeof good_rows / sizeof good_rows[0]);
    int rc = -1;
    assert_int_equal(0, compare(p, &rc));
    assert_int_equal(0, rc);
    /* and the kinds are all there */
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    assert_int_equal(0, mcdc_delta__read_parquet_actions(p, collect, &b));
    const int kinds[] = { MCDC_DELTA_ACTION_ADD, MCDC_DELTA_ACTION_REMOVE,
                          MCDC_DELTA_ACTION_METADATA, MCDC_DELTA_ACTION_PROTOCOL,
                          MCDC_DELTA_ACTION_TXN, MCDC_DELTA_ACTION_DOMAIN_METADATA,
                          MCDC_DELTA_ACTION_CHECKPOINT_METADATA, MCDC_DELTA_ACTION_SIDECAR };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        char k[32];
        snprintf(k, sizeof k, "kind %d:", kinds[i]);
        assert_non_null(strstr(b.ptr, k));
    }
    assert_non_null(strstr(b.ptr, "dv u ab^-aqEH.-t@S}K{vb[*k^ 1 40 3"));
    assert_non_null(strstr(b.ptr, "conf{a=2;b=<null>;}"));
    mcdc_buf_dispose(&b);
    testenv_rmrf(dir);
    free(dir);
}

static void test_checkpoint_columns__broken_rows_fail_alike(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "{\"add\":{\"size\":1}}",
        "{\"add\":{\"path\":\"a\"}}",
        "{\"add\":{\"path\":\"a\",\"size\":1},\"txn\":{\"appId\":\"x\",\"version\":1}}",
        ("{\"add\":{\"path\":\"a\",\"size\":1,\"partitionValues\":[{\"key\":\"k\"}],"
        "\"deletionVector\":{\"storageType\":\"uu\",\"pathOrInlineDv\":\"x\",\"sizeInBytes\":1}}}"),
        "{\"add\":{\"path\":\"a\",\"size\":1,\"deletionVector\":{\"storageType\":\"u\",\"sizeInBytes\":1}}}",
        "{\"metaData\":{\"id\":\"x\"}}",
        "{\"metaData\":{\"id\":\"x\",\"schemaString\":\"{}\",\"partitionColumns\":[null]}}",
        "{\"protocol\":{\"minReaderVersion\":1}}",
        "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[\"a\",null]}}",
        "{\"txn\":{\"appId\":\"x\"}}",
        "{\"domainMetadata\":{\"removed\":true}}",
        "{\"checkpointMetadata\":{\"tags\":[]}}",
        "{\"sidecar\":{\"sizeInBytes\":1}}",
        "{\"add\":{\"tags\":[]}}",
    };
    char *dir = testenv_tmpdir("cpcols");
    assert_non_null(dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/bad%zu.checkpoint.parquet", dir, i);
        const char *rows[] = { good_rows[0], bad[i] };
        write_checkpoint(p, false, rows, 2);
        int rc = 0;
        /* decoded column by column (a layout left to the JSON path would give 1) */
        assert_int_equal(MCDC_ECORRUPT, compare(p, &rc));
        assert_int_equal(MCDC_ECORRUPT, rc);
    }
    testenv_rmrf(dir);
    free(dir);
}

static void test_checkpoint_columns__other_layouts_take_the_json_path(void **state)
{
    (void)state;
    char *dir = testenv_tmpdir("cpcols");
    assert_non_null(dir);
    char p[1024];
    /* a top-level action column that is a plain string, not a struct */
    snprintf(p, sizeof p, "%s/flat.checkpoint.parquet", dir);
    mcdc_parquet_node *root = mcdc_parquet_node_struct("spark_schema", false);
    mcdc_parquet_node_add(root, leaf("txn", MCDC_TYPE_STRING));
    mcdc_parquet_node *add = mcdc_parquet_node_struct("add", true);
    mcdc_parquet_node_add(add, leaf("path", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(add, leaf("size", MCDC_TYPE_STRING)); /* a long as text */
    mcdc_parquet_node_add(root, add);
    mcdc_parquet_writer *w = NULL;
    assert_int_equal(0, mcdc_parquet_writer_open_nested(&w, p, root, NULL));
    json_t *j = json_loads("{\"add\":{\"path\":\"a\",\"size\":\"12\"}}", 0, NULL);
    assert_int_equal(0, mcdc_parquet_writer_write_json(w, j));
    json_decref(j);
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_parquet_node_free(root);
    int rc = -1;
    assert_int_equal(1, compare(p, &rc));
    assert_int_equal(0, rc);
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    assert_int_equal(0, mcdc_delta__read_parquet_actions(p, collect, &b));
    assert_non_null(strstr(b.ptr, " a 12 "));
    mcdc_buf_dispose(&b);

    /* partitionValues as a list of {key, value} structs: a map to the JSON path only */
    snprintf(p, sizeof p, "%s/listmap.checkpoint.parquet", dir);
    root = mcdc_parquet_node_struct("spark_schema", false);
    add = mcdc_parquet_node_struct("add", true);
    mcdc_parquet_node_add(add, leaf("path", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(add, leaf("size", MCDC_TYPE_LONG));
    mcdc_parquet_node *kv = mcdc_parquet_node_struct("element", true);
    mcdc_parquet_node_add(kv, leaf("key", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(kv, leaf("value", MCDC_TYPE_STRING));
    mcdc_parquet_node_add(add, mcdc_parquet_node_list("partitionValues", true, kv));
    mcdc_parquet_node_add(root, add);
    assert_int_equal(0, mcdc_parquet_writer_open_nested(&w, p, root, NULL));
    j = json_loads("{\"add\":{\"path\":\"a\",\"size\":1,"
                   "\"partitionValues\":[{\"key\":\"p\",\"value\":\"1\"}]}}", 0, NULL);
    assert_int_equal(0, mcdc_parquet_writer_write_json(w, j));
    json_decref(j);
    assert_int_equal(0, mcdc_parquet_writer_close(w, NULL));
    mcdc_parquet_writer_free(w);
    mcdc_parquet_node_free(root);
    assert_int_equal(1, compare(p, &rc));
    assert_int_equal(0, rc);
    b = (mcdc_buf)MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    assert_int_equal(0, mcdc_delta__read_parquet_actions(p, collect, &b));
    assert_non_null(strstr(b.ptr, "pv{p=1;}"));
    mcdc_buf_dispose(&b);
    testenv_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checkpoint_columns__same_as_json_on_test_data),
        cmocka_unit_test(test_checkpoint_columns__every_action_kind),
        cmocka_unit_test(test_checkpoint_columns__broken_rows_fail_alike),
        cmocka_unit_test(test_checkpoint_columns__other_layouts_take_the_json_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
