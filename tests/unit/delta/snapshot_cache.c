/* Unit tests for delta/snapshot_cache.c: a cached open always gives the latest version
 * (commits by another process, commits written straight into the log), the same state as
 * a full load after adds, removes, re-adds, txns and domains, errors of a corrupt newer
 * commit, a table deleted and recreated at the same path, as-of versions, a snapshot held
 * by a caller never changing under it, a copy carrying protocol, metadata and schema,
 * threads committing and opening at once, the cache turned off, and concurrent first opens
 * loading the table once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "delta/internal.h"
#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    mcdc_delta_snapshot_cache_limit(8);
    char *dir = testenv_tmpdir("scache");
    char *t = malloc(strlen(dir) + 8);
    sprintf(t, "%s/t", dir);
    free(dir);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    char *t = *state;
    mcdc_delta_snapshot_cache_limit(0); /* forget the table before its files go */
    char *slash = strrchr(t, '/');
    *slash = '\0';
    testenv_rmrf(t);
    free(t);
    return 0;
}

static void create_table(const char *t)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    assert_int_equal(0, mcdc_delta_create(t, s, NULL, 0, NULL, NULL));
    mcdc_schema_free(s);
}

static void append_with(const char *t, const char *name, const mcdc_delta_commit_options *co)
{
    mcdc_delta_file f;
    memset(&f, 0, sizeof f);
    f.path = strdup(name);
    f.size = 10;
    f.modification_time = 1;
    f.data_change = true;
    f.deletion_timestamp = f.base_row_id = f.default_row_commit_version = -1;
    f.dv.offset = -1;
    assert_int_equal(0, mcdc_delta_append(t, &f, 1, co, NULL));
    mcdc_delta_file_clear(&f);
}

static void append_named(const char *t, const char *name)
{
    append_with(t, name, NULL);
}

static void put_version(const char *t, int64_t v, const char *lines)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/_delta_log/%020lld.json", t, (long long)v);
    testenv_write(p, lines);
}

static int cmp_path_ptr(const void *a, const void *b)
{
    return strcmp((*(const mcdc_delta_file *const *)a)->path,
                  (*(const mcdc_delta_file *const *)b)->path);
}

/* The same files (path, size, tags, stats) as sets. */
static void same_files(const mcdc_delta_file *a, size_t na, const mcdc_delta_file *b, size_t nb)
{
    assert_int_equal(na, nb);
    const mcdc_delta_file **x = calloc(na + 1, sizeof *x), **y = calloc(nb + 1, sizeof *y);
    for (size_t i = 0; i < na; i++) {
        x[i] = &a[i];
        y[i] = &b[i];
    }
    qsort(x, na, sizeof *x, cmp_path_ptr);
    qsort(y, nb, sizeof *y, cmp_path_ptr);
    for (size_t i = 0; i < na; i++) {
        assert_string_equal(x[i]->path, y[i]->path);
        assert_int_equal(x[i]->size, y[i]->size);
        assert_int_equal(x[i]->deletion_timestamp, y[i]->deletion_timestamp);
        assert_int_equal(x[i]->tags.n, y[i]->tags.n);
        assert_true((x[i]->stats == NULL) == (y[i]->stats == NULL));
        if (x[i]->stats)
            assert_string_equal(x[i]->stats, y[i]->stats);
    }
    free(x);
    free(y);
}

/* The cached open of @p t equals a full load of the log. */
static void check_against_full_load(const char *t)
{
    mcdc_delta_snapshot *c, *f;
    assert_int_equal(0, mcdc_delta_snapshot_open(&c, t, -1));
    assert_int_equal(0, mcdc_delta__snapshot_load(&f, t, -1, NULL));
    assert_int_equal(f->version, c->version);
    assert_string_equal(f->metadata.id, c->metadata.id);
    assert_string_equal(f->metadata.schema_string, c->metadata.schema_string);
    assert_int_equal(f->metadata.configuration.n, c->metadata.configuration.n);
    assert_int_equal(f->protocol.min_writer_version, c->protocol.min_writer_version);
    same_files(f->files, f->n_files, c->files, c->n_files);
    for (size_t i = 1; i < c->n_files; i++) /* still in path order */
        assert_true(strcmp(c->files[i - 1].path, c->files[i].path) <= 0);
    same_files(f->tombstones, f->n_tombstones, c->tombstones, c->n_tombstones);
    assert_int_equal(f->n_txns, c->n_txns);
    for (size_t i = 0; i < f->n_txns; i++) {
        assert_string_equal(f->txns[i].app_id, c->txns[i].app_id);
        assert_int_equal(f->txns[i].version, c->txns[i].version);
    }
    assert_int_equal(f->n_domains, c->n_domains);
    for (size_t i = 0; i < f->n_domains; i++) {
        size_t k = 0;
        while (k < c->n_domains && strcmp(c->domains[k].domain, f->domains[i].domain) != 0)
            k++;
        assert_true(k < c->n_domains);
        assert_string_equal(f->domains[i].configuration, c->domains[k].configuration);
    }
    assert_int_equal(f->timestamp_ms, c->timestamp_ms);
    mcdc_delta_snapshot_free(c);
    mcdc_delta_snapshot_free(f);
}

static void test_delta_snapshot_cache__another_process_commit_is_seen(void **state)
{
    const char *t = *state;
    create_table(t);
    append_named(t, "a.parquet");
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(1, s->version);
    mcdc_delta_snapshot_free(s);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        mcdc_delta_snapshot_cache_limit(0); /* a writer that never read the table */
        append_named(t, "b.parquet");
        _exit(0);
    }
    int st;
    assert_int_equal(pid, waitpid(pid, &st, 0));
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    mcdc_delta_cache_stats before, after;
    mcdc_delta_snapshot_cache_stats(&before);
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    mcdc_delta_snapshot_cache_stats(&after);
    assert_int_equal(2, s->version);
    assert_int_equal(2, s->n_files);
    assert_string_equal("b.parquet", s->files[1].path);
    assert_int_equal(before.incremental + 1, after.incremental);
    assert_int_equal(before.full, after.full);
    mcdc_delta_snapshot_free(s);
    /* nothing new: served as it is */
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    mcdc_delta_snapshot_cache_stats(&before);
    assert_int_equal(after.hits + 1, before.hits);
    mcdc_delta_snapshot_free(s);
    check_against_full_load(t);
}

static void test_delta_snapshot_cache__state_equals_a_full_load(void **state)
{
    const char *t = *state;
    create_table(t);
    check_against_full_load(t);
    int64_t now = mcdc_delta__now_ms();
    char line[4096];
    int64_t v = 1;
    for (int i = 0; i < 40; i++, v++) {
        /* adds, removes, a remove of a file never added, re-adds of removed paths, txns,
         * domains set and removed, a protocol and a metaData change */
        switch (i % 8) {
        case 0:
        case 1:
            snprintf(line, sizeof line,
                     "{\"add\":{\"path\":\"f%d.parquet\",\"partitionValues\":{},\"size\":%d,"
                     "\"modificationTime\":1,\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":%d}\","
                     "\"tags\":{\"k\":\"v\"}}}\n"
                     "{\"txn\":{\"appId\":\"app%d\",\"version\":%d}}\n",
                     i, i, i, i % 3, i);
            break;
        case 2:
            snprintf(line, sizeof line,
                     "{\"remove\":{\"path\":\"f%d.parquet\",\"deletionTimestamp\":%lld,"
                     "\"dataChange\":true}}\n"
                     "{\"remove\":{\"path\":\"never-%d.parquet\",\"deletionTimestamp\":%lld,"
                     "\"dataChange\":true}}\n",
                     i - 2, (long long)now, i, (long long)now);
            break;
        case 3: /* the path removed just before comes back */
            snprintf(line, sizeof line,
                     "{\"add\":{\"path\":\"f%d.parquet\",\"partitionValues\":{},\"size\":77,"
                     "\"modificationTime\":2,\"dataChange\":true}}\n"
                     "{\"domainMetadata\":{\"domain\":\"d%d\",\"configuration\":\"{}\","
                     "\"removed\":false}}\n",
                     i - 3, i % 2);
            break;
        case 4:
            snprintf(line, sizeof line,
                     "{\"domainMetadata\":{\"domain\":\"d1\",\"configuration\":\"{\\\"x\\\":%d}\","
                     "\"removed\":%s}}\n"
                     "{\"remove\":{\"path\":\"f%d.parquet\",\"deletionTimestamp\":%lld,"
                     "\"dataChange\":true,\"size\":5}}\n",
                     i, i % 16 == 4 ? "true" : "false", i - 3, (long long)now);
            break;
        case 5:
            snprintf(line, sizeof line,
                     "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":%d}}\n",
                     2 + (i / 8) % 2);
            break;
        case 6: {
            mcdc_delta_snapshot *s;
            assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
            snprintf(line, sizeof line,
                     "{\"metaData\":{\"id\":\"%s\",\"format\":{\"provider\":\"parquet\","
                     "\"options\":{}},\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":"
                     "[{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,"
                     "\\\"metadata\\\":{}},{\\\"name\\\":\\\"c%d\\\",\\\"type\\\":\\\"string\\\","
                     "\\\"nullable\\\":true,\\\"metadata\\\":{}}]}\",\"partitionColumns\":[],"
                     "\"configuration\":{\"n\":\"%d\"},\"createdTime\":1}}\n",
                     s->metadata.id, i, i);
            mcdc_delta_snapshot_free(s);
            break;
        }
        default:
            snprintf(line, sizeof line, "{\"commitInfo\":{\"operation\":\"X\"}}\n");
            break;
        }
        put_version(t, v, line);
        if (i % 3 != 0) /* sometimes several commits between two opens */
            check_against_full_load(t);
    }
    check_against_full_load(t);
}

static void test_delta_snapshot_cache__corrupt_newer_commit_gives_the_error(void **state)
{
    const char *t = *state;
    create_table(t);
    append_named(t, "a.parquet");
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    mcdc_delta_snapshot_free(s);
    put_version(t, 2, "{\"add\":{\"path\":\"b.parquet\",\"size\":1,\"modificationTime\":1,"
                      "\"dataChange\":true}}\n{\"add\":{\"path\":");
    s = (mcdc_delta_snapshot *)1;
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_snapshot_open(&s, t, -1));
    assert_null(s);
    assert_non_null(strstr(mcdc_error_last()->message, "00000000000000000002.json"));
    assert_non_null(strstr(mcdc_error_last()->message, "line 2"));
    /* a checkpoint-only action in a commit: the full load's error too */
    put_version(t, 2, "{\"sidecar\":{\"path\":\"x.parquet\",\"sizeInBytes\":1,"
                      "\"modificationTime\":1}}\n");
    assert_int_equal(MCDC_ECORRUPT, mcdc_delta_snapshot_open(&s, t, -1));
    assert_non_null(strstr(mcdc_error_last()->message, "sidecar"));
    /* repaired: the cache serves the latest again */
    put_version(t, 2, "{\"add\":{\"path\":\"b.parquet\",\"partitionValues\":{},\"size\":1,"
                      "\"modificationTime\":1,\"dataChange\":true}}\n");
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(2, s->version);
    assert_int_equal(2, s->n_files);
    mcdc_delta_snapshot_free(s);
}

static void test_delta_snapshot_cache__recreated_table_is_loaded_afresh(void **state)
{
    const char *t = *state;
    create_table(t);
    append_named(t, "a.parquet");
    append_named(t, "b.parquet");
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    char *old_id = strdup(s->metadata.id);
    mcdc_delta_snapshot_free(s);

    /* recreated with more versions than before */
    testenv_rmrf(t);
    create_table(t);
    append_named(t, "x.parquet");
    append_named(t, "y.parquet");
    append_named(t, "z.parquet");
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(3, s->version);
    assert_string_not_equal(old_id, s->metadata.id);
    assert_int_equal(3, s->n_files);
    assert_string_equal("x.parquet", s->files[0].path);
    mcdc_delta_snapshot_free(s);

    /* recreated with fewer versions (the version goes backwards) */
    testenv_rmrf(t);
    create_table(t);
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(0, s->version);
    assert_int_equal(0, s->n_files);
    mcdc_delta_snapshot_free(s);

    /* deleted */
    testenv_rmrf(t);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_delta_snapshot_open(&s, t, -1));

    /* a new commit carrying another table's metaData id */
    create_table(t);
    append_named(t, "a.parquet");
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    mcdc_delta_snapshot_free(s);
    put_version(t, 2, "{\"metaData\":{\"id\":\"another\",\"format\":{\"provider\":\"parquet\","
                      "\"options\":{}},\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\","
                      "\"partitionColumns\":[],\"configuration\":{},\"createdTime\":1}}\n");
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_string_equal("another", s->metadata.id);
    assert_int_equal(1, s->n_files);
    mcdc_delta_snapshot_free(s);
    check_against_full_load(t);
    free(old_id);
}

static void test_delta_snapshot_cache__as_of_versions_are_exact(void **state)
{
    const char *t = *state;
    create_table(t);
    for (int i = 0; i < 5; i++) {
        char n[32];
        snprintf(n, sizeof n, "f%d.parquet", i);
        append_named(t, n);
    }
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, 3)); /* cache: version 3 */
    assert_int_equal(3, s->version);
    assert_int_equal(3, s->n_files);
    mcdc_delta_snapshot_free(s);
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, 2)); /* below: not from the cache */
    assert_int_equal(2, s->version);
    assert_int_equal(2, s->n_files);
    mcdc_delta_snapshot_free(s);
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, 4)); /* forward exactly to 4 */
    assert_int_equal(4, s->version);
    assert_int_equal(4, s->n_files);
    mcdc_delta_snapshot_free(s);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_delta_snapshot_open(&s, t, 9));
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(5, s->version);
    mcdc_delta_snapshot_free(s);
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, 4));
    assert_int_equal(4, s->n_files);
    mcdc_delta_snapshot_free(s);
}

static void test_delta_snapshot_cache__held_snapshot_never_changes(void **state)
{
    const char *t = *state;
    create_table(t);
    append_named(t, "a.parquet");
    mcdc_delta_snapshot *held, *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&held, t, -1));
    mcdc_delta_cache_stats before, after;
    mcdc_delta_snapshot_cache_stats(&before);
    append_named(t, "b.parquet"); /* the commit itself opens the table: a copy is made */
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    mcdc_delta_snapshot_cache_stats(&after);
    assert_true(after.copies > before.copies);
    assert_ptr_not_equal(held, s);
    assert_int_equal(1, held->version);
    assert_int_equal(1, held->n_files);
    assert_int_equal(2, s->version);
    assert_int_equal(2, s->n_files);
    mcdc_delta_snapshot_free(held);
    mcdc_delta_snapshot_free(s);
    check_against_full_load(t);
}

static void same_type(const mcdc_delta_type *a, const mcdc_delta_type *b);

static void same_fields(const mcdc_delta_field *a, const mcdc_delta_field *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(a[i].name, b[i].name);
        assert_string_equal(a[i].physical_name, b[i].physical_name);
        assert_int_equal(a[i].field_id, b[i].field_id);
        assert_int_equal(a[i].nullable, b[i].nullable);
        assert_string_equal(a[i].metadata, b[i].metadata);
        same_type(&a[i].type, &b[i].type);
    }
}

static void same_type(const mcdc_delta_type *a, const mcdc_delta_type *b)
{
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->prim.type, b->prim.type);
    assert_int_equal(a->prim.precision, b->prim.precision);
    assert_int_equal(a->prim.scale, b->prim.scale);
    assert_int_equal(a->contains_null, b->contains_null);
    assert_int_equal(a->n_fields, b->n_fields);
    same_fields(a->fields, b->fields, a->n_fields);
    assert_int_equal(a->element != NULL, b->element != NULL);
    if (a->element)
        same_type(a->element, b->element);
    assert_int_equal(a->key != NULL, b->key != NULL);
    if (a->key)
        same_type(a->key, b->key);
}

/* A copy made while another holder has the state (C3) carries the protocol, the metaData
 * and the parsed schema field by field: features, name, description, partition columns,
 * configuration, and a schema with column mapping, a struct, an array and a map. */
static void test_delta_snapshot_cache__copy_keeps_protocol_metadata_and_schema(void **state)
{
    const char *t = *state;
    create_table(t);
    put_version(t, 1,
        "{\"commitInfo\":{\"operation\":\"SET TBLPROPERTIES\"}}\n"
        "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,"
        "\"readerFeatures\":[\"columnMapping\",\"timestampNtz\"],"
        "\"writerFeatures\":[\"columnMapping\",\"timestampNtz\",\"appendOnly\"]}}\n"
        "{\"metaData\":{\"id\":\"5b0c2ba1-0000-4000-8000-000000000001\",\"name\":\"t\","
        "\"description\":\"a copy test\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
        "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":["
        "{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":false,\\\"metadata\\\":"
        "{\\\"delta.columnMapping.id\\\":1,\\\"delta.columnMapping.physicalName\\\":\\\"col-a\\\"}},"
        "{\\\"name\\\":\\\"amount\\\",\\\"type\\\":\\\"decimal(12,2)\\\",\\\"nullable\\\":true,\\\"metadata\\\":"
        "{\\\"delta.columnMapping.id\\\":2,\\\"delta.columnMapping.physicalName\\\":\\\"col-b\\\"}},"
        "{\\\"name\\\":\\\"addr\\\",\\\"type\\\":{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":["
        "{\\\"name\\\":\\\"city\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":"
        "{\\\"delta.columnMapping.id\\\":4,\\\"delta.columnMapping.physicalName\\\":\\\"col-d\\\"}}]},"
        "\\\"nullable\\\":true,\\\"metadata\\\":"
        "{\\\"delta.columnMapping.id\\\":3,\\\"delta.columnMapping.physicalName\\\":\\\"col-c\\\"}},"
        "{\\\"name\\\":\\\"tags\\\",\\\"type\\\":{\\\"type\\\":\\\"array\\\",\\\"elementType\\\":\\\"string\\\","
        "\\\"containsNull\\\":false},\\\"nullable\\\":true,\\\"metadata\\\":"
        "{\\\"delta.columnMapping.id\\\":5,\\\"delta.columnMapping.physicalName\\\":\\\"col-e\\\"}},"
        "{\\\"name\\\":\\\"attrs\\\",\\\"type\\\":{\\\"type\\\":\\\"map\\\",\\\"keyType\\\":\\\"string\\\","
        "\\\"valueType\\\":\\\"timestamp_ntz\\\",\\\"valueContainsNull\\\":true},\\\"nullable\\\":true,"
        "\\\"metadata\\\":{\\\"delta.columnMapping.id\\\":6,\\\"delta.columnMapping.physicalName\\\":\\\"col-f\\\"}}"
        "]}\",\"partitionColumns\":[\"amount\"],"
        "\"configuration\":{\"delta.columnMapping.mode\":\"name\",\"delta.columnMapping.maxColumnId\":\"6\","
        "\"delta.appendOnly\":\"false\"},\"createdTime\":1700000000000}}\n");
    mcdc_delta_snapshot *held, *s, *full;
    assert_int_equal(0, mcdc_delta_snapshot_open(&held, t, -1));
    assert_int_equal(1, held->version);
    mcdc_delta_cache_stats before, after;
    mcdc_delta_snapshot_cache_stats(&before);
    put_version(t, 2, "{\"commitInfo\":{\"operation\":\"WRITE\"}}\n"
                      "{\"add\":{\"path\":\"amount=1.00/a.parquet\",\"partitionValues\":{\"col-b\":\"1.00\"},"
                      "\"size\":10,\"modificationTime\":1,\"dataChange\":true}}\n");
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    mcdc_delta_snapshot_cache_stats(&after);
    assert_int_equal(before.copies + 1, after.copies);
    assert_int_equal(0, mcdc_delta__snapshot_load(&full, t, -1, NULL));
    assert_int_equal(2, s->version);
    assert_int_equal(full->column_mapping, s->column_mapping);
    const mcdc_delta_protocol *p = &s->protocol, *q = &full->protocol;
    assert_int_equal(q->min_reader_version, p->min_reader_version);
    assert_int_equal(q->min_writer_version, p->min_writer_version);
    assert_int_equal(q->has_reader_features, p->has_reader_features);
    assert_int_equal(q->has_writer_features, p->has_writer_features);
    assert_int_equal(q->n_reader_features, p->n_reader_features);
    assert_int_equal(3, p->n_writer_features);
    for (size_t i = 0; i < q->n_reader_features; i++)
        assert_string_equal(q->reader_features[i], p->reader_features[i]);
    for (size_t i = 0; i < q->n_writer_features; i++)
        assert_string_equal(q->writer_features[i], p->writer_features[i]);
    const mcdc_delta_metadata *m = &s->metadata, *n = &full->metadata;
    assert_string_equal(n->id, m->id);
    assert_string_equal("t", m->name);
    assert_string_equal("a copy test", m->description);
    assert_string_equal(n->format_provider, m->format_provider);
    assert_string_equal(n->schema_string, m->schema_string);
    assert_int_equal(1, m->n_partition_columns);
    assert_string_equal("amount", m->partition_columns[0]);
    assert_int_equal(n->configuration.n, m->configuration.n);
    for (size_t i = 0; i < n->configuration.n; i++) {
        assert_string_equal(n->configuration.kv[i].key, m->configuration.kv[i].key);
        assert_string_equal(n->configuration.kv[i].value, m->configuration.kv[i].value);
    }
    assert_int_equal(n->created_time, m->created_time);
    assert_int_equal(5, s->schema->n_fields);
    same_fields(full->schema->fields, s->schema->fields, full->schema->n_fields);
    assert_string_equal("col-d", s->schema->fields[2].type.fields[0].physical_name);
    /* the held state is untouched, and freeing both leaves nothing shared behind */
    assert_int_equal(1, held->version);
    assert_int_equal(0, held->n_files);
    mcdc_delta_snapshot_free(held);
    mcdc_delta_snapshot_free(s);
    mcdc_delta_snapshot_free(full);
}

typedef struct worker {
    const char *t;
    int         id;
    int         bad; /* snapshots seen with a wrong file count */
} worker;

static void *appender(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < 25; i++) {
        char n[64];
        snprintf(n, sizeof n, "w%d-%d.parquet", w->id, i);
        mcdc_delta_file f;
        memset(&f, 0, sizeof f);
        f.path = strdup(n);
        f.size = 10;
        f.modification_time = 1;
        f.data_change = true;
        f.deletion_timestamp = f.base_row_id = f.default_row_commit_version = -1;
        f.dv.offset = -1;
        mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
        o.no_checkpoint = i % 5 != 0;
        if (mcdc_delta_append(w->t, &f, 1, &o, NULL) < 0)
            w->bad++;
        mcdc_delta_file_clear(&f);
        mcdc_delta_snapshot *s;
        if (mcdc_delta_snapshot_open(&s, w->t, -1) < 0) {
            w->bad++;
            continue;
        }
        if ((int64_t)s->n_files != s->version) /* every version added one file */
            w->bad++;
        mcdc_delta_snapshot_free(s);
    }
    return NULL;
}

static void test_delta_snapshot_cache__threads_commit_and_open_at_once(void **state)
{
    const char *t = *state;
    create_table(t);
    pthread_t th[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){ t, i, 0 };
        assert_int_equal(0, pthread_create(&th[i], NULL, appender, &w[i]));
    }
    for (int i = 0; i < 4; i++) {
        assert_int_equal(0, pthread_join(th[i], NULL));
        assert_int_equal(0, w[i].bad);
    }
    mcdc_delta_snapshot *s;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    assert_int_equal(100, s->version);
    assert_int_equal(100, s->n_files);
    mcdc_delta_snapshot_free(s);
    check_against_full_load(t);
}

typedef struct opener {
    const char       *t;
    pthread_barrier_t *go;
    int64_t           version; /* what the open saw, or -1 */
} opener;

static void *open_once(void *arg)
{
    opener *o = arg;
    pthread_barrier_wait(o->go);
    mcdc_delta_snapshot *s;
    o->version = -1;
    if (mcdc_delta_snapshot_open(&s, o->t, -1) == 0) {
        o->version = s->version;
        mcdc_delta_snapshot_free(s);
    }
    return NULL;
}

/* (C6) Eight threads opening a table the cache does not hold, at once: one loads it in
 * full, the others wait for that load and take it from the cache. */
static void test_delta_snapshot_cache__concurrent_first_opens_load_once(void **state)
{
    const char *t = *state;
    create_table(t);
    mcdc_delta_commit_options co = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    co.no_checkpoint = true; /* a log of JSON commits only: a full load takes a while */
    for (int i = 0; i < 150; i++) {
        char n[32];
        snprintf(n, sizeof n, "f%03d.parquet", i);
        append_with(t, n, &co);
    }
    for (int round = 0; round < 3; round++) {
        mcdc_delta_snapshot_cache_limit(0); /* forget the table */
        mcdc_delta_snapshot_cache_limit(8);
        mcdc_delta_cache_stats before, after;
        mcdc_delta_snapshot_cache_stats(&before);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 8);
        pthread_t th[8];
        opener o[8];
        for (int i = 0; i < 8; i++) {
            o[i] = (opener){ t, &go, -2 };
            assert_int_equal(0, pthread_create(&th[i], NULL, open_once, &o[i]));
        }
        for (int i = 0; i < 8; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&go);
        mcdc_delta_snapshot_cache_stats(&after);
        for (int i = 0; i < 8; i++)
            assert_int_equal(150, o[i].version);
        assert_int_equal(before.full + 1, after.full);
        assert_int_equal(before.hits + 7, after.hits);
    }
}

static void test_delta_snapshot_cache__limit_zero_turns_it_off(void **state)
{
    const char *t = *state;
    create_table(t);
    mcdc_delta_snapshot_cache_limit(0);
    mcdc_delta_cache_stats before, after;
    mcdc_delta_snapshot_cache_stats(&before);
    mcdc_delta_snapshot *s;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
        mcdc_delta_snapshot_free(s);
    }
    mcdc_delta_snapshot_cache_stats(&after);
    assert_int_equal(before.full + 3, after.full);
    assert_int_equal(before.hits, after.hits);
    mcdc_delta_snapshot_cache_limit(8);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
        mcdc_delta_snapshot_free(s);
    }
    mcdc_delta_snapshot_cache_stats(&before);
    assert_int_equal(after.full + 1, before.full);
    assert_int_equal(after.hits + 2, before.hits);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_delta_snapshot_cache__another_process_commit_is_seen),
        T(test_delta_snapshot_cache__state_equals_a_full_load),
        T(test_delta_snapshot_cache__corrupt_newer_commit_gives_the_error),
        T(test_delta_snapshot_cache__recreated_table_is_loaded_afresh),
        T(test_delta_snapshot_cache__as_of_versions_are_exact),
        T(test_delta_snapshot_cache__held_snapshot_never_changes),
        T(test_delta_snapshot_cache__copy_keeps_protocol_metadata_and_schema),
        T(test_delta_snapshot_cache__threads_commit_and_open_at_once),
        T(test_delta_snapshot_cache__limit_zero_turns_it_off),
        T(test_delta_snapshot_cache__concurrent_first_opens_load_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
