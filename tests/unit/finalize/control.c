/* Unit tests for finalize/control.c: the control table on Delta: semantics of advance,
 * is_final and show, creation, refusal, concurrency between threads, foreign files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/parquet.h"

static char root[256], ctl[300];

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/mcdc-fin-ctl-XXXXXX");
    assert_non_null(mkdtemp(root));
    snprintf(ctl, sizeof ctl, "%s/ops/table_finalization", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    /* the background writer may still be checkpointing the control table (every tenth
     * commit): removing the directory under it fails with "Directory not empty" */
    mcdc_delta_checkpoints_wait();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", root);
    return system(cmd) == 0 ? 0 : -1;
}

static mcdc_offset off(uint64_t lsn, const char *ts)
{
    mcdc_offset o;
    memset(&o, 0, sizeof o);
    o.lsn = mcdc_lsn_from_u64(0, lsn);
    assert_int_equal(0, mcdc_time_parse(&o.commit_ts_us, ts));
    o.has_commit_ts = true;
    return o;
}

static int64_t at(const char *ts)
{
    int64_t us;
    assert_int_equal(0, mcdc_time_parse(&us, ts));
    return us;
}

static int64_t version_of(const char *path)
{
    int64_t v = -1;
    assert_int_equal(0, mcdc_delta_latest_version(&v, path));
    return v;
}

/* Parquet files in the table directory (live or not). */
static int count_parquet(const char *path)
{
    DIR *d = opendir(path);
    int n = 0;
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".parquet"))
            n++;
    closedir(d);
    return n;
}

static void test_finalize_control__advance_semantics(void **state)
{
    (void)state;
    mcdc_advance_result r;
    mcdc_offset o = off(100, "2026-10-01T15:10:00.250");
    assert_int_equal(0, mcdc_control_advance(ctl, "bronze.orders", &o, MCDC_GRAN_HOUR, &r));
    assert_true(r.created);
    assert_true(r.wrote);
    assert_true(r.verdict.has);
    assert_int_equal(at("2026-10-01T15:00:00"), r.verdict.until_us);
    int64_t v1 = version_of(ctl);

    /* older offset, and one in the same period: nothing written */
    o = off(90, "2026-10-01T14:30:00");
    assert_int_equal(0, mcdc_control_advance(ctl, "bronze.orders", &o, MCDC_GRAN_HOUR, &r));
    assert_false(r.wrote);
    assert_false(r.created);
    assert_int_equal(at("2026-10-01T15:00:00"), r.verdict.until_us);
    o = off(110, "2026-10-01T15:59:59.999");
    assert_int_equal(0, mcdc_control_advance(ctl, "bronze.orders", &o, MCDC_GRAN_HOUR, &r));
    assert_false(r.wrote);
    assert_int_equal(v1, version_of(ctl));

    bool fin = false;
    assert_int_equal(0, mcdc_control_is_final(&fin, ctl, "bronze.orders", at("2026-10-01T15:00:00")));
    assert_true(fin);
    assert_int_equal(0, mcdc_control_is_final(&fin, ctl, "bronze.orders", at("2026-10-01T16:00:00")));
    assert_false(fin);

    /* an idle mapping entry (no rows) past the hour moves it */
    o = off(120, "2026-10-01T16:04:59.997");
    assert_int_equal(0, mcdc_control_advance(ctl, "bronze.orders", &o, MCDC_GRAN_HOUR, &r));
    assert_true(r.wrote);
    assert_int_equal(at("2026-10-01T16:00:00"), r.verdict.until_us);
    assert_int_equal(v1 + 1, version_of(ctl));

    mcdc_control_row row;
    assert_int_equal(0, mcdc_control_get(&row, ctl, "bronze.orders"));
    assert_string_equal("bronze.orders", row.table_name);
    assert_true(row.has_end_lsn);
    assert_int_equal(0, mcdc_lsn_cmp(&o.lsn, &row.end_lsn));
    assert_int_equal(o.commit_ts_us, row.end_commit_ts_us);
    assert_true(row.has_updated_at);
    assert_null(row.applied_lsn);
    assert_false(row.has_snapshot_wave);
    mcdc_control_row_clear(&row);
    assert_int_equal(2, count_parquet(ctl)); /* the first file is removed from the log, kept on disk */
}

static void test_finalize_control__minute_day_and_boundary(void **state)
{
    (void)state;
    mcdc_advance_result r;
    mcdc_offset o = off(1, "2026-10-01T15:10:42");
    assert_int_equal(0, mcdc_control_advance(ctl, "m", &o, MCDC_GRAN_MINUTE, &r));
    assert_int_equal(at("2026-10-01T15:10:00"), r.verdict.until_us);
    assert_int_equal(0, mcdc_control_advance(ctl, "d", &o, MCDC_GRAN_DAY, &r));
    assert_int_equal(at("2026-10-01T00:00:00"), r.verdict.until_us);
    o = off(2, "2026-10-01T14:00:00.000");
    assert_int_equal(0, mcdc_control_advance(ctl, "b", &o, MCDC_GRAN_HOUR, &r));
    assert_int_equal(at("2026-10-01T14:00:00"), r.verdict.until_us);
    bool fin;
    assert_int_equal(0, mcdc_control_is_final(&fin, ctl, "b", at("2026-10-01T15:00:00")));
    assert_false(fin); /* a later commit at 14:00:00.000 falls in the open period */
    mcdc_control_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(0, mcdc_control_read_all(&rows, &n, ctl));
    assert_int_equal(3, n);
    assert_string_equal("b", rows[0].table_name); /* sorted */
    assert_string_equal("d", rows[1].table_name);
    assert_string_equal("m", rows[2].table_name);
    mcdc_control_rows_free(rows, n);
}

static void test_finalize_control__missing_table_or_row(void **state)
{
    (void)state;
    bool fin;
    mcdc_control_row row;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_control_is_final(&fin, ctl, "x", 0));
    assert_non_null(strstr(mcdc_error_last()->message, "does not exist"));
    mcdc_offset o = off(1, "2026-10-01T15:10:00");
    assert_int_equal(0, mcdc_control_advance(ctl, "bronze.orders", &o, MCDC_GRAN_HOUR, NULL));
    assert_int_equal(MCDC_ENOTFOUND, mcdc_control_get(&row, ctl, "bronze.order"));
    assert_non_null(strstr(mcdc_error_last()->message, "no row for 'bronze.order'"));
    assert_non_null(strstr(mcdc_error_last()->hint, "exact name"));
}

static void test_finalize_control__refusals_write_nothing(void **state)
{
    (void)state;
    mcdc_offset o = off(1, "2026-10-01T15:10:00");
    assert_int_equal(MCDC_EINVAL, mcdc_control_advance(ctl, "t", &o, (mcdc_granularity)42, NULL));
    o.has_commit_ts = false;
    assert_int_equal(MCDC_EINVAL, mcdc_control_advance(ctl, "t", &o, MCDC_GRAN_HOUR, NULL));
    o.has_commit_ts = true;
    assert_int_equal(MCDC_EINVAL, mcdc_control_advance(ctl, "", &o, MCDC_GRAN_HOUR, NULL));
    struct stat st;
    assert_int_not_equal(0, stat(ctl, &st)); /* not even created */

    /* a table of another kind is refused, and left as it was */
    char other[400];
    snprintf(other, sizeof other, "%s/bronze/orders", root);
    mcdc_schema *s = mcdc_schema_new();
    assert_int_equal(0, mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true));
    assert_int_equal(0, mcdc_delta_create(other, s, NULL, 0, NULL, NULL));
    mcdc_schema_free(s);
    assert_int_equal(MCDC_EINVAL, mcdc_control_advance(other, "t", &o, MCDC_GRAN_HOUR, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "not a control table"));
    assert_int_equal(0, version_of(other));
}

/* Silver's position columns survive advances, and advance's survive updates. */
static int set_applied(mcdc_control_row *row, bool exists, void *payload)
{
    (void)exists;
    free(row->applied_lsn);
    row->applied_lsn = strdup((const char *)payload);
    row->has_snapshot_wave = true;
    row->snapshot_wave = 3;
    return 0;
}

static void test_finalize_control__update_keeps_other_columns(void **state)
{
    (void)state;
    mcdc_advance_result r;
    assert_int_equal(0, mcdc_control_update(ctl, "silver.orders", set_applied,
                                            "0x00000000000000000042", &r));
    assert_true(r.wrote);
    assert_false(r.verdict.has);
    mcdc_offset o = off(1, "2026-10-01T15:10:00");
    assert_int_equal(0, mcdc_control_advance(ctl, "silver.orders", &o, MCDC_GRAN_HOUR, &r));
    assert_true(r.wrote);
    mcdc_control_row row;
    assert_int_equal(0, mcdc_control_get(&row, ctl, "silver.orders"));
    assert_string_equal("0x00000000000000000042", row.applied_lsn);
    assert_int_equal(3, row.snapshot_wave);
    assert_int_equal(at("2026-10-01T15:00:00"), row.finalized_until.until_us);
    mcdc_control_row_clear(&row);
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    assert_int_equal(0, mcdc_control_row_to_json(&b, &(mcdc_control_row){ .table_name = "t" }));
    assert_string_equal("{\"table_name\":\"t\",\"finalized_until\":null,\"end_lsn\":null,"
                        "\"end_commit_ts\":null,\"updated_at\":null,\"applied_lsn\":null,"
                        "\"snapshot_lsn\":null,\"open_snapshot_lsn\":null,\"snapshot_wave\":null}",
                        b.ptr);
    mcdc_buf_dispose(&b);
}

/* Threads: 4 tables advanced concurrently never conflict; 4 first advances of one new
 * table end with one row. */
typedef struct worker_arg {
    const char *table;
    int         n;
    int         conflicts, rebases, fails;
} worker_arg;

static void *advancer(void *p)
{
    worker_arg *a = p;
    for (int i = 1; i <= a->n; i++) {
        mcdc_offset o;
        memset(&o, 0, sizeof o);
        o.lsn = mcdc_lsn_from_u64(0, (uint64_t)i);
        o.commit_ts_us = at("2026-10-01T00:00:00") + (int64_t)i * MCDC_US_PER_HOUR + 600000000;
        o.has_commit_ts = true;
        mcdc_advance_result r;
        if (mcdc_control_advance(ctl, a->table, &o, MCDC_GRAN_HOUR, &r) < 0) {
            a->fails++;
            continue;
        }
        a->conflicts += r.n_conflicts;
        a->rebases += r.n_rebases;
    }
    return NULL;
}

static void test_finalize_control__threads_on_different_tables_do_not_conflict(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_control_ensure(ctl, NULL));
    pthread_t th[4];
    /* names that are prefixes of each other must not conflict either */
    worker_arg a[4] = { { "bronze.orders", 15, 0, 0, 0 }, { "bronze.orders_archive", 15, 0, 0, 0 },
                        { "t2", 15, 0, 0, 0 }, { "t", 15, 0, 0, 0 } };
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, advancer, &a[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    int conflicts = 0;
    for (int i = 0; i < 4; i++) {
        assert_int_equal(0, a[i].fails);
        conflicts += a[i].conflicts;
    }
    assert_int_equal(0, conflicts);
    mcdc_control_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(0, mcdc_control_read_all(&rows, &n, ctl));
    assert_int_equal(4, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(at("2026-10-01T15:00:00"), rows[i].finalized_until.until_us);
    mcdc_control_rows_free(rows, n);
    assert_int_equal(4 * 15, version_of(ctl)); /* version 0 created it */
    /* no orphan data files: one live file per row plus the removed ones */
    assert_int_equal(4 * 15, count_parquet(ctl));
}

static void test_finalize_control__first_advances_of_one_table_give_one_row(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_control_ensure(ctl, NULL));
    pthread_t th[4];
    worker_arg a[4] = { { "new", 1, 0, 0, 0 }, { "new", 1, 0, 0, 0 }, { "new", 1, 0, 0, 0 },
                        { "new", 1, 0, 0, 0 } };
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, advancer, &a[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    mcdc_control_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(0, mcdc_control_read_all(&rows, &n, ctl));
    assert_int_equal(1, n);
    assert_int_equal(at("2026-10-01T01:00:00"), rows[0].finalized_until.until_us);
    mcdc_control_rows_free(rows, n);
    assert_int_equal(1, version_of(ctl)); /* one write; the others found the row */
    assert_int_equal(1, count_parquet(ctl));
}

static void test_finalize_control__tracker_on_the_control_table(void **state)
{
    (void)state;
    /* A run that finds nothing new: the seed (last committed offset) still lands. */
    mcdc_control_target tgt = { ctl, "bronze.orders", { { false, 0 }, false, false, 0, 0, 0 } };
    mcdc_tracker *t = NULL;
    mcdc_offset seed = off(10, "2026-10-01T15:10:00");
    assert_int_equal(0, mcdc_control_track(&t, &tgt, "run-1", NULL, &seed));
    mcdc_tracker_on_terminated(t, "run-1");
    assert_true(mcdc_tracker_join(t, 30000000));
    mcdc_tracker_stats st;
    mcdc_tracker_get_stats(t, &st);
    assert_int_equal(1, st.n_advances);
    assert_false(st.pending_failed);
    assert_true(tgt.last.wrote);
    mcdc_tracker_free(t);
    bool fin;
    assert_int_equal(0, mcdc_control_is_final(&fin, ctl, "bronze.orders", at("2026-10-01T15:00:00")));
    assert_true(fin);

    /* progress within a period writes once per period crossed */
    int64_t v0 = version_of(ctl);
    assert_int_equal(0, mcdc_control_track(&t, &tgt, "run-2", NULL, &seed));
    const char *ts[] = { "2026-10-01T15:20:00", "2026-10-01T15:40:00", "2026-10-01T16:01:00",
                         "2026-10-01T16:30:00", "2026-10-01T17:00:00" };
    for (int i = 0; i < 5; i++) {
        mcdc_offset p = off(20 + (uint64_t)i, ts[i]);
        mcdc_tracker_on_progress(t, "run-2", &p);
    }
    mcdc_tracker_on_terminated(t, "run-2");
    assert_true(mcdc_tracker_join(t, 30000000));
    mcdc_tracker_free(t);
    assert_true(version_of(ctl) - v0 <= 2);
    assert_int_equal(0, mcdc_control_is_final(&fin, ctl, "bronze.orders", at("2026-10-01T17:00:00")));
    assert_true(fin);

    /* a wrong control name fails at start, before anything runs */
    char bad[400];
    snprintf(bad, sizeof bad, "%s/bronze/plain", root);
    mcdc_schema *s = mcdc_schema_new();
    assert_int_equal(0, mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true));
    assert_int_equal(0, mcdc_delta_create(bad, s, NULL, 0, NULL, NULL));
    mcdc_schema_free(s);
    mcdc_control_target wrong = { bad, "bronze.orders", { { false, 0 }, false, false, 0, 0, 0 } };
    assert_int_equal(MCDC_EINVAL, mcdc_control_track(&t, &wrong, "run-3", NULL, NULL));
    assert_null(t);
}

/* A file written by another engine: two rows, no tag, no stats. Reads see both rows; an
 * advance of one moves the other to a file of its own and keeps its values. */
static void test_finalize_control__foreign_multi_row_file(void **state)
{
    (void)state;
    assert_int_equal(0, mcdc_control_ensure(ctl, NULL));
    char abs[600];
    snprintf(abs, sizeof abs, "%s/part-foreign.parquet", ctl);
    mcdc_parquet_writer *w = NULL;
    assert_int_equal(0, mcdc_parquet_writer_open(&w, abs, mcdc_control_schema(), NULL));
    mcdc_control_row a = { .table_name = "a", .finalized_until = { true, at("2026-10-01T10:00:00") } };
    mcdc_control_row b = { .table_name = "b", .finalized_until = { true, at("2026-10-01T11:00:00") },
                           .applied_lsn = "0x00000000000000000007" };
    mcdc_value v[MCDC_CONTROL_NCOLS];
    char lsn[MCDC_LSN_STRLEN];
    mcdc_control_row_values(&a, v, lsn);
    assert_int_equal(0, mcdc_parquet_writer_write_row(w, v));
    mcdc_control_row_values(&b, v, lsn);
    assert_int_equal(0, mcdc_parquet_writer_write_row(w, v));
    mcdc_parquet_write_result res;
    assert_int_equal(0, mcdc_parquet_writer_close(w, &res));
    mcdc_parquet_writer_free(w);
    mcdc_delta_file f;
    memset(&f, 0, sizeof f);
    f.path = "part-foreign.parquet";
    f.size = (int64_t)res.file_size;
    f.modification_time = 1;
    f.deletion_timestamp = -1;
    f.data_change = true;
    f.base_row_id = -1;
    f.default_row_commit_version = -1;
    mcdc_parquet_write_result_dispose(&res);
    assert_int_equal(0, mcdc_delta_append(ctl, &f, 1, NULL, NULL));

    mcdc_control_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(0, mcdc_control_read_all(&rows, &n, ctl));
    assert_int_equal(2, n);
    mcdc_control_rows_free(rows, n);

    mcdc_offset o = off(9, "2026-10-01T12:30:00");
    mcdc_advance_result r;
    assert_int_equal(0, mcdc_control_advance(ctl, "a", &o, MCDC_GRAN_HOUR, &r));
    assert_true(r.wrote);
    assert_int_equal(at("2026-10-01T12:00:00"), r.verdict.until_us);
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, ctl, -1));
    assert_int_equal(2, snap->n_files); /* one row per file again */
    for (size_t i = 0; i < snap->n_files; i++)
        assert_non_null(mcdc_delta_map_get(&snap->files[i].tags, "mcdc.control_row", NULL));
    mcdc_delta_snapshot_free(snap);
    mcdc_control_row got;
    assert_int_equal(0, mcdc_control_get(&got, ctl, "b"));
    assert_string_equal("0x00000000000000000007", got.applied_lsn);
    assert_int_equal(at("2026-10-01T11:00:00"), got.finalized_until.until_us);
    mcdc_control_row_clear(&got);
    /* an advance that does not move "b" still writes nothing now that it is alone */
    int64_t v0 = version_of(ctl);
    o = off(10, "2026-10-01T11:30:00");
    assert_int_equal(0, mcdc_control_advance(ctl, "b", &o, MCDC_GRAN_HOUR, &r));
    assert_false(r.wrote);
    assert_int_equal(v0, version_of(ctl));
}

/* An advance reads only the rows of its key: another table's file (its tag naming that
 * table, the rest of the tag not even JSON) is neither parsed nor moved, so an advance of
 * one of many tables does not parse every other table's row (it did, every commit, and
 * failed here on the other row's tag); reading every row still finds the bad tag. */
static void test_finalize_control__advance_reads_only_its_rows(void **state)
{
    (void)state;
    mcdc_offset o = off(9, "2026-10-01T12:30:00");
    mcdc_advance_result r;
    assert_int_equal(0, mcdc_control_advance(ctl, "a", &o, MCDC_GRAN_HOUR, &r));
    mcdc_delta_file f;
    memset(&f, 0, sizeof f);
    f.path = "part-other.parquet";
    f.size = 1;
    f.modification_time = 1;
    f.deletion_timestamp = -1;
    f.data_change = true;
    f.base_row_id = -1;
    f.default_row_commit_version = -1;
    assert_int_equal(0, mcdc_delta_map_set(&f.tags, "mcdc.control_row", "{\"table_name\":\"other\",not json"));
    assert_int_equal(0, mcdc_delta_append(ctl, &f, 1, NULL, NULL));
    mcdc_delta_map_clear(&f.tags);
    o = off(12, "2026-10-01T13:30:00");
    assert_int_equal(0, mcdc_control_advance(ctl, "a", &o, MCDC_GRAN_HOUR, &r));
    assert_true(r.wrote);
    assert_int_equal(at("2026-10-01T13:00:00"), r.verdict.until_us);
    /* a key whose name the other's begins with, and one that begins the other's */
    assert_int_equal(0, mcdc_control_advance(ctl, "othe", &o, MCDC_GRAN_HOUR, &r));
    assert_true(r.wrote);
    assert_int_equal(0, mcdc_control_advance(ctl, "others", &o, MCDC_GRAN_HOUR, &r));
    assert_true(r.wrote);
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, ctl, -1));
    assert_int_equal(4, snap->n_files); /* a, othe, others, and the other's file as it was */
    mcdc_delta_snapshot_free(snap);
    /* the other's own advance reads its file, and finds the tag corrupt */
    assert_int_equal(MCDC_ECORRUPT, mcdc_control_advance(ctl, "other", &o, MCDC_GRAN_HOUR, &r));
    mcdc_control_row *rows = NULL;
    size_t n = 0;
    assert_int_equal(MCDC_ECORRUPT, mcdc_control_read_all(&rows, &n, ctl));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_finalize_control__advance_semantics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__minute_day_and_boundary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__missing_table_or_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__refusals_write_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__update_keeps_other_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__threads_on_different_tables_do_not_conflict, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__first_advances_of_one_table_give_one_row, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__tracker_on_the_control_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__foreign_multi_row_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finalize_control__advance_reads_only_its_rows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
