/* Unit tests for delta/table_write.c, checkpoint.c and optimize.c: rows written through
 * the table writer read back identically, with exact stats and partition values; stats
 * skip files; checkpoints every 10 commits are read back, expire old tombstones and let
 * the log be cleaned; optimize compacts small files without changing the rows. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    *state = testenv_tmpdir("write");
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

static mcdc_schema *test_schema(void)
{
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(s, "name", MCDC_TYPE_STRING, 0, 0, true);
    mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 38, 6, true);
    mcdc_schema_add(s, "ts", MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, true);
    mcdc_schema_add(s, "part", MCDC_TYPE_STRING, 0, 0, true);
    return s;
}

static void make_row(mcdc_value *row, int64_t id, char *name_buf, const char *part)
{
    memset(row, 0, 5 * sizeof *row);
    row[0].v.i = id;
    snprintf(name_buf, 32, "name-%03lld", (long long)id);
    row[1].v.s.ptr = name_buf;
    row[1].v.s.len = strlen(name_buf);
    row[2].v.dec = (mcdc_int128)id * 1000000 + 123456;
    if (id == 7) /* a value past 64 bits, written exactly */
        row[2].v.dec = (mcdc_int128)1234567890123456789LL * 100000000 + 12345678;
    row[3].v.i = INT64_C(1700000000000000) + id * 1001;
    row[3].is_null = id % 10 == 3;
    row[4].v.s.ptr = part;
    row[4].v.s.len = strlen(part);
    row[4].is_null = part == NULL;
}

/* Append @p n rows with ids from @p first, alternating partitions a and b. */
static void append_rows(const char *t, int64_t first, int n, bool two_parts)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_delta_writer *w;
    assert_int_equal(0, mcdc_delta_writer_open(&w, snap, NULL));
    for (int i = 0; i < n; i++) {
        mcdc_value row[5];
        char name[32];
        make_row(row, first + i, name, two_parts && (i % 2) ? "b" : "a");
        assert_int_equal(0, mcdc_delta_writer_write(w, row));
    }
    mcdc_delta_file *files;
    size_t n_files;
    assert_int_equal(0, mcdc_delta_writer_finish(w, &files, &n_files));
    mcdc_delta_writer_free(w);
    mcdc_delta_commit_result r;
    assert_int_equal(0, mcdc_delta_append(t, files, n_files, NULL, &r));
    mcdc_delta_files_free(files, n_files);
    mcdc_delta_snapshot_free(snap);
}

static void create(const char *t, const char *const *conf_kv, size_t n_conf)
{
    mcdc_schema *s = test_schema();
    const char *parts[] = { "part" };
    mcdc_delta_map conf = { 0 };
    for (size_t i = 0; i < n_conf; i++)
        mcdc_delta_map_set(&conf, conf_kv[2 * i], conf_kv[2 * i + 1]);
    assert_int_equal(0, mcdc_delta_create(t, s, parts, 1, &conf, NULL));
    mcdc_delta_map_clear(&conf);
    mcdc_schema_free(s);
}

/* All rows as sorted JSON lines. */
static char *rows_text(const char *t, int64_t version, mcdc_delta_pred *pred, int64_t *skipped)
{
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, version));
    mcdc_delta_scan_options o = MCDC_DELTA_SCAN_OPTIONS_INIT;
    if (pred)
        o.pred = *pred;
    mcdc_delta_scan *scan;
    assert_int_equal(0, mcdc_delta_scan_open(&scan, snap, &o));
    const mcdc_schema *s = mcdc_delta_scan_schema(scan);
    char **lines = NULL;
    size_t n = 0;
    const mcdc_value *row;
    int rc;
    while ((rc = mcdc_delta_scan_next(scan, &row)) == 1) {
        mcdc_buf b = MCDC_BUF_INIT(1 << 20);
        for (size_t i = 0; i < s->n_cols; i++) {
            mcdc_value_to_json(&b, &s->cols[i], &row[i]);
            mcdc_buf_putc(&b, '|');
        }
        lines = realloc(lines, (n + 1) * sizeof *lines);
        lines[n++] = mcdc_buf_detach(&b);
    }
    assert_int_equal(0, rc);
    if (skipped)
        *skipped = mcdc_delta_scan_files_skipped(scan);
    mcdc_delta_scan_free(scan);
    mcdc_delta_snapshot_free(snap);
    for (size_t i = 1; i < n; i++) /* insertion sort: small */
        for (size_t k = i; k > 0 && strcmp(lines[k - 1], lines[k]) > 0; k--) {
            char *x = lines[k];
            lines[k] = lines[k - 1];
            lines[k - 1] = x;
        }
    mcdc_buf all = MCDC_BUF_INIT(1 << 26);
    for (size_t i = 0; i < n; i++) {
        mcdc_buf_puts(&all, lines[i]);
        mcdc_buf_putc(&all, '\n');
        free(lines[i]);
    }
    free(lines);
    return mcdc_buf_detach(&all);
}

static void test_delta_table_write__rows_and_stats_round_trip(void **state)
{
    const char *t = *state;
    create(t, NULL, 0);
    append_rows(t, 0, 20, true);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(2, snap->n_files);
    const mcdc_delta_file *fa = NULL;
    for (size_t i = 0; i < snap->n_files; i++)
        if (!strcmp(mcdc_delta_map_get(&snap->files[i].partition_values, "part", NULL), "a"))
            fa = &snap->files[i];
    assert_non_null(fa);
    /* partition a holds even ids 0..18; id 7 (odd) is in b */
    assert_non_null(strstr(fa->stats, "\"numRecords\":10"));
    assert_non_null(strstr(fa->stats, "\"minValues\":{\"id\":0,\"name\":\"name-000\",\"amount\":0.123456,"
                                      "\"ts\":\"2023-11-14T22:13:20.000\""));
    assert_non_null(strstr(fa->stats, "\"nullCount\":{\"id\":0,\"name\":0,\"amount\":0,\"ts\":0}"));
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    for (size_t i = 0; i < snap->n_files; i++)
        if (!strcmp(mcdc_delta_map_get(&snap->files[i].partition_values, "part", NULL), "b"))
            assert_non_null(strstr(snap->files[i].stats, "\"maxValues\":{\"id\":19,\"name\":\"name-019\","
                                                         "\"amount\":123456789012345678912.345678"));
    for (size_t i = 0; i < snap->n_files; i++)
        if (!strcmp(mcdc_delta_map_get(&snap->files[i].partition_values, "part", NULL), "b"))
            assert_non_null(strstr(snap->files[i].stats, "\"ts\":2}")); /* ids 3 and 13 */
    mcdc_delta_snapshot_free(snap);

    char *all = rows_text(t, -1, NULL, NULL);
    assert_non_null(strstr(all, "7|\"name-007\"|\"123456789012345678912.345678\"|\"2023-11-14T22:13:20.007007\"|\"b\"|"));
    assert_non_null(strstr(all, "3|\"name-003\"|\"3.123456\"|null|\"b\"|"));
    /* skipping by partition and by stats */
    int64_t skipped;
    mcdc_delta_pred pa = { MCDC_DELTA_PRED_EQ, "part", { false, { .s = { "a", 1 } } } };
    char *only_a = rows_text(t, -1, &pa, &skipped);
    assert_int_equal(1, skipped);
    assert_null(strstr(only_a, "\"b\"|"));
    free(only_a);
    mcdc_delta_pred ge = { MCDC_DELTA_PRED_GE, "id", { false, { .i = 19 } } };
    char *hi = rows_text(t, -1, &ge, &skipped);
    assert_int_equal(1, skipped); /* a's max id is 18 */
    free(hi);
    mcdc_delta_pred amt = { MCDC_DELTA_PRED_GE, "amount", { false, { .dec = (mcdc_int128)19 * 1000000 + 123457 } } };
    free(rows_text(t, -1, &amt, &skipped));
    assert_int_equal(1, skipped); /* decimal compared exactly: a's max is 18.123456 */
    free(all);
}

static void test_delta_table_write__checkpoints_every_ten_commits(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.deletedFileRetentionDuration", "interval 0 seconds" };
    create(t, conf, 1);
    for (int v = 1; v <= 9; v++)
        append_rows(t, v * 100, 3, false);
    char *before = rows_text(t, -1, NULL, NULL);
    append_rows(t, 1000, 3, false); /* version 10 */
    /* written by the background writer after the commit returned */
    assert_int_equal(0, mcdc_delta_checkpoints_wait());
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/_delta_log/00000000000000000010.checkpoint.parquet", t);
    assert_int_equal(0, stat(p, &st));
    snprintf(p, sizeof p, "%s/_delta_log/_last_checkpoint", t);
    mcdc_buf lc = MCDC_BUF_INIT(1 << 16);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    char line[512] = "";
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);

    assert_non_null(strstr(line, "{\"version\":10,\"size\":12,"));
    assert_non_null(strstr(line, "\"numOfAddFiles\":10}"));
    /* a second writer of the same checkpoint (another process, or the background writer
     * beside a command) finds the file taken: _last_checkpoint still counts its rows */
    assert_int_equal(0, mcdc_delta_checkpoint(t, 10, NULL));
    f = fopen(p, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    fclose(f);
    assert_non_null(strstr(line, "{\"version\":10,\"size\":12,"));
    assert_null(strstr(line, "\"sizeInBytes\":0,"));
    mcdc_buf_dispose(&lc);
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(10, snap->checkpoint_version);
    assert_int_equal(10, snap->n_files);
    assert_string_equal("1", mcdc_delta_snapshot_config(snap, "mcdc.schema_version", ""));
    mcdc_delta_snapshot_free(snap);
    char *after = rows_text(t, -1, NULL, NULL);
    char *v9 = rows_text(t, 9, NULL, NULL);
    assert_string_equal(before, v9);
    assert_true(strlen(after) > strlen(before));
    free(before);
    free(after);
    free(v9);
}

static void test_delta_table_write__tombstones_expire_and_log_is_cleaned(void **state)
{
    const char *t = *state;
    const char *conf[] = { "delta.deletedFileRetentionDuration", "interval 0 seconds",
                           "delta.logRetentionDuration", "interval 0 seconds",
                           "delta.checkpointInterval", "5" };
    create(t, conf, 3);
    for (int v = 1; v <= 4; v++)
        append_rows(t, v * 100, 2, false);
    /* version 5: compact (removes 4 files) and checkpoint */
    mcdc_delta_optimize_result r;
    assert_int_equal(0, mcdc_delta_optimize(t, 1 << 20, &r));
    assert_int_equal(0, mcdc_delta_checkpoints_wait());
    assert_int_equal(5, r.version);
    assert_int_equal(4, r.n_removed);
    assert_int_equal(1, r.n_added);
    assert_int_equal(8, r.n_rows);
    for (int v = 6; v <= 10; v++)
        append_rows(t, v * 100, 2, false);
    assert_int_equal(0, mcdc_delta_checkpoints_wait());
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_int_equal(10, snap->checkpoint_version);
    assert_int_equal(0, snap->n_tombstones); /* expired out of the checkpoint */
    assert_int_equal(6, snap->n_files);
    mcdc_delta_snapshot_free(snap);
    /* commits before the newest checkpoint old enough were removed */
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/_delta_log/00000000000000000000.json", t);
    assert_int_not_equal(0, stat(p, &st));
    mcdc_delta_history_entry *h;
    size_t n;
    assert_int_equal(0, mcdc_delta_history(&h, &n, t));
    assert_true(n <= 6);
    bool saw_optimize = false;
    for (size_t i = 0; i < n; i++)
        saw_optimize |= h[i].operation && !strcmp(h[i].operation, "OPTIMIZE");
    mcdc_delta_history_free(h, n);
    (void)saw_optimize;
    char *all = rows_text(t, -1, NULL, NULL);
    assert_non_null(strstr(all, "\n100|"));
    assert_non_null(strstr(all, "\n1001|"));
    free(all);
}

static void test_delta_table_write__optimize_keeps_rows(void **state)
{
    const char *t = *state;
    create(t, NULL, 0);
    for (int v = 1; v <= 6; v++)
        append_rows(t, v * 10, 4, true);
    char *before = rows_text(t, -1, NULL, NULL);
    mcdc_delta_optimize_result r;
    assert_int_equal(0, mcdc_delta_optimize(t, 64 << 20, &r));
    assert_int_equal(12, r.n_removed);
    assert_int_equal(2, r.n_added); /* one per partition */
    char *after = rows_text(t, -1, NULL, NULL);
    assert_string_equal(before, after);
    mcdc_delta_history_entry *h;
    size_t n;
    assert_int_equal(0, mcdc_delta_history(&h, &n, t));
    assert_string_equal("OPTIMIZE", h[n - 1].operation);
    assert_non_null(strstr(h[n - 1].commit_info, "\"isBlindAppend\":false"));
    mcdc_delta_history_free(h, n);
    /* nothing more to do */
    assert_int_equal(0, mcdc_delta_optimize(t, 64 << 20, &r));
    assert_int_equal(0, r.n_removed);
    free(before);
    free(after);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_delta_table_write__rows_and_stats_round_trip),
        T(test_delta_table_write__checkpoints_every_ten_commits),
        T(test_delta_table_write__tombstones_expire_and_log_is_cleaned),
        T(test_delta_table_write__optimize_keeps_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
