/* Unit tests for the simulator's source interface (source/sim/reader.c) and source
 * dispatch (source/source.c): ranges, order, commit times across fall-back nights, paged
 * reads across a cleanup, capture instances, DDL history, snapshots. */
#include "sim_test.h"

#include "mcdc/error.h"
#include "mcdc/source.h"

typedef struct collected {
    int     n;
    int64_t key[64];
    int64_t ts[64];
    int     op[64];
    char    lsn[64][MCDC_LSN_STRLEN];
} collected;

static int collect(const mcdc_change *c, void *payload)
{
    collected *k = payload;
    if (k->n >= 64) return -1;
    k->key[k->n] = c->values[0].v.i;
    k->ts[k->n] = c->commit_ts_us;
    k->op[k->n] = c->operation;
    mcdc_lsn_format(k->lsn[k->n], &c->start_lsn);
    k->n++;
    return 0;
}

static int stop_after_one(const mcdc_change *c, void *payload)
{
    (void)c;
    (*(int *)payload)++;
    return -77;
}

static mcdc_source *open_src(simt *t)
{
    mcdc_source *src;
    char spec[160];
    snprintf(spec, sizeof spec, "sim:%s", t->path);
    if (mcdc_source_open(&src, spec) != 0) fail_msg("open: %s", mcdc_error_last()->message);
    return src;
}

/* Commits at the given UTC times on a server in @p zone; their commit times must come back
 * exactly, in LSN order, through read_changes and lsn_to_commit_ts. */
static void check_fall_back(const char *zone, const char *init, const char *const *times, int n)
{
    simt t;
    simt_open(&t, zone);
    simt_orders(&t, init);
    mcdc_lsn commits[16];
    for (int i = 0; i < n; i++) {
        char sql[80];
        snprintf(sql, sizeof sql, "INSERT INTO dbo.orders (order_id) VALUES (%d)", i + 1);
        commits[i] = simt_exec(&t, NULL, times[i], sql);
    }
    simt_capture(&t, times[n - 1], 0);
    mcdc_source *src = open_src(&t);
    assert_string_equal(zone, src->ops->server_time_zone(src));
    collected k = {0};
    mcdc_lsn zero = mcdc_lsn_zero(), max;
    assert_int_equal(0, src->ops->max_lsn(src, &max));
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &zero, &max, collect, &k));
    assert_int_equal(n, k.n);
    for (int i = 0; i < n; i++) {
        char a[MCDC_TIME_STRLEN], b[MCDC_TIME_STRLEN];
        if (k.ts[i] != T(times[i]))
            fail_msg("%s commit %d: got %s, expected %s", zone, i, mcdc_time_format(a, k.ts[i], 3, true),
                     mcdc_time_format(b, T(times[i]), 3, true));
        int64_t one;
        assert_int_equal(0, src->ops->lsn_to_commit_ts(src, &commits[i], &one));
        if (one != T(times[i]))
            fail_msg("%s lsn_to_commit_ts %d: got %s, expected %s", zone, i, mcdc_time_format(a, one, 3, true),
                     mcdc_time_format(b, T(times[i]), 3, true));
    }
    /* a read starting inside the repeated hour is seeded from 3 hours before */
    collected k2 = {0};
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &commits[n - 3], &max, collect, &k2));
    assert_int_equal(2, k2.n);
    assert_true(k2.ts[0] == T(times[n - 2]) && k2.ts[1] == T(times[n - 1]));
    mcdc_source_close(src);
    simt_close(&t);
}

static void test_source_sim_reader__commit_times_on_fall_back_nights(void **state)
{
    (void)state;
    /* 01:30, 01:50 EDT, then 01:10 and 01:40 EST, then 02:30 EST */
    static const char *const ny[] = {"2025-11-02T05:30:00", "2025-11-02T05:50:00", "2025-11-02T06:10:00",
                                     "2025-11-02T06:40:00", "2025-11-02T07:30:00"};
    check_fall_back("America/New_York", "2025-11-02T05:00:00", ny, 5);
    /* 02:30, 02:50 CEST, then 02:10 and 02:40 CET, then 03:30 CET */
    static const char *const berlin[] = {"2025-10-26T00:30:00", "2025-10-26T00:50:00", "2025-10-26T01:10:00",
                                         "2025-10-26T01:40:00", "2025-10-26T02:30:00"};
    check_fall_back("Europe/Berlin", "2025-10-26T00:00:00", berlin, 5);
    /* 23:30, 23:50 (-02) on the 17th, then 23:10 and 23:40 (-03), then 00:30 (-03) on the 18th */
    static const char *const sp[] = {"2018-02-18T01:30:00", "2018-02-18T01:50:00", "2018-02-18T02:10:00",
                                     "2018-02-18T02:40:00", "2018-02-18T03:30:00"};
    check_fall_back("America/Sao_Paulo", "2018-02-18T01:00:00", sp, 5);
}

static void test_source_sim_reader__mapping_holds_server_local_time(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, "Eastern Standard Time");
    simt_orders(&t, "2025-11-02T05:00:00");
    simt_exec(&t, NULL, "2025-11-02T06:10:00.005", "INSERT INTO dbo.orders (order_id) VALUES (1)");
    simt_capture(&t, "2025-11-02T06:11:00", 0);
    ASSERT_Q(&t, "SELECT tran_end_time FROM cdc.lsn_time_mapping ORDER BY start_lsn",
             "{\"tran_end_time\":\"2025-11-02T01:00:00.000000\"}\n{\"tran_end_time\":\"2025-11-02T01:10:00.006666\"}\n");
    mcdc_source *src = open_src(&t);
    assert_string_equal("America/New_York", src->ops->server_time_zone(src));
    int64_t now;
    assert_int_equal(0, src->ops->server_now(src, &now));
    assert_int_equal(T("2025-11-02T06:11:00"), now);
    mcdc_source_close(src);
    simt_close(&t);
}

static void test_source_sim_reader__ranges_order_and_nth_commit(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    mcdc_lsn c1 = simt_exec(&t, NULL, "2025-01-01T10:00:01", "INSERT INTO dbo.orders (order_id) VALUES (1), (2)");
    mcdc_lsn c2 = simt_exec(&t, NULL, "2025-01-01T10:00:02", "UPDATE dbo.orders SET amount = 1 WHERE order_id = 2");
    mcdc_lsn c3 = simt_exec(&t, NULL, "2025-01-01T10:00:03", "DELETE FROM dbo.orders WHERE order_id = 1");
    mcdc_source *src = open_src(&t);
    mcdc_lsn max, min, zero = mcdc_lsn_zero();
    /* before capture: no max_lsn, min_lsn 0x00 until the enable is processed */
    assert_int_equal(0, src->ops->max_lsn(src, &max));
    assert_true(mcdc_lsn_is_zero(&max));
    assert_int_equal(0, src->ops->min_lsn(src, "dbo_orders", &min));
    assert_true(mcdc_lsn_is_zero(&min));
    expect_error(src->ops->min_lsn(src, "nope", &min), MCDC_ENOTFOUND, "capture instance 'nope' does not exist");
    simt_capture(&t, "2025-01-01T10:00:04", 2);
    assert_int_equal(0, src->ops->max_lsn(src, &max));
    assert_int_equal(0, mcdc_lsn_cmp(&max, &c1));
    assert_int_equal(0, src->ops->min_lsn(src, "dbo_orders", &min));
    char l[MCDC_LSN_STRLEN];
    assert_string_equal(L("2025-01-01T10:00:00", 2), mcdc_lsn_format(l, &min));
    /* upto past max_lsn reads only what capture processed */
    collected k = {0};
    mcdc_lsn hi = c3;
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &zero, &hi, collect, &k));
    assert_int_equal(2, k.n);
    simt_capture(&t, "2025-01-01T10:00:05", 0);
    memset(&k, 0, sizeof k);
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &c1, &c3, collect, &k));
    assert_int_equal(3, k.n);
    assert_int_equal(3, k.op[0]);
    assert_int_equal(4, k.op[1]);
    assert_int_equal(1, k.op[2]);
    assert_int_equal(T("2025-01-01T10:00:03"), k.ts[2]);
    memset(&k, 0, sizeof k);
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &c2, &c2, collect, &k));
    assert_int_equal(0, k.n);
    int64_t found, ts;
    mcdc_lsn out;
    assert_int_equal(0, src->ops->nth_commit_after(src, &zero, 2, &out, &ts, &found));
    assert_int_equal(2, found);
    assert_int_equal(0, mcdc_lsn_cmp(&out, &c1));
    assert_int_equal(T("2025-01-01T10:00:01"), ts);
    assert_int_equal(0, src->ops->nth_commit_after(src, &c1, 10, &out, &ts, &found));
    assert_int_equal(2, found);
    assert_int_equal(0, mcdc_lsn_cmp(&out, &c3));
    assert_int_equal(0, src->ops->nth_commit_after(src, &c3, 1, &out, &ts, &found));
    assert_int_equal(0, found);
    expect_error(src->ops->lsn_to_commit_ts(src, &zero, &ts), MCDC_ENOTFOUND, "no cdc.lsn_time_mapping entry");
    /* a callback's non-zero return stops the read and comes back unchanged */
    int calls = 0;
    assert_int_equal(-77, src->ops->read_changes(src, "dbo_orders", &zero, &c3, stop_after_one, &calls));
    assert_int_equal(1, calls);
    mcdc_source_close(src);
    simt_close(&t);
}

static void test_source_sim_reader__transaction_spanning_pages_keeps_its_commit_time(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, "Europe/Berlin");
    simt_orders(&t, "2025-10-26T00:00:00");
    simt_exec(&t, NULL, "2025-10-26T00:50:00", "INSERT INTO dbo.orders (order_id) VALUES (1), (2), (3)");
    simt_exec(&t, NULL, "2025-10-26T01:10:00", "INSERT INTO dbo.orders (order_id) VALUES (4), (5), (6)");
    simt_capture(&t, "2025-10-26T01:11:00", 0);
    mcdc_source *src = open_src(&t);
    assert_int_equal(0, mcdc_sim_source_set_paging(src, 2, NULL, NULL));
    mcdc_lsn zero = mcdc_lsn_zero(), max;
    assert_int_equal(0, src->ops->max_lsn(src, &max));
    collected k = {0};
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &zero, &max, collect, &k));
    assert_int_equal(6, k.n);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(i + 1, k.key[i]);
        assert_int_equal(T(i < 3 ? "2025-10-26T00:50:00" : "2025-10-26T01:10:00"), k.ts[i]);
    }
    mcdc_source_close(src);
    simt_close(&t);
}

typedef struct cleanup_hook {
    simt   *t;
    int     at_page;
    int64_t max_batches;
    int     ran;
} cleanup_hook;

static void run_cleanup(int page, void *payload)
{
    cleanup_hook *h = payload;
    if (page != h->at_page) return;
    mcdc_sim_cleanup_result r;
    if (mcdc_sim_cleanup(h->t->sim, 3 * MCDC_US_PER_DAY, T("2025-01-06T00:00:00") + h->ran, 3, h->max_batches, &r) != 0)
        fail_msg("cleanup: %s", mcdc_error_last()->message);
    h->ran++;
}

static void test_source_sim_reader__cleanup_between_pages_of_one_read(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T00:00:00");
    mcdc_lsn commits[20];
    for (int i = 0; i < 20; i++) {
        char sql[80], at[32];
        snprintf(sql, sizeof sql, "INSERT INTO dbo.orders (order_id) VALUES (%d)", i + 1);
        snprintf(at, sizeof at, "2025-01-0%dT%02d:00:00", i < 10 ? 1 : 5, 1 + i % 10);
        commits[i] = simt_exec(&t, NULL, at, sql);
    }
    simt_capture(&t, "2025-01-05T12:00:00", 0);
    mcdc_source *src = open_src(&t);
    mcdc_lsn zero = mcdc_lsn_zero(), max, min;
    assert_int_equal(0, src->ops->max_lsn(src, &max));
    /* 1: a cleanup that only moved min_lsn: the rows not yet deleted are still read */
    cleanup_hook h = {&t, 1, 0, 0};
    assert_int_equal(0, mcdc_sim_source_set_paging(src, 5, run_cleanup, &h));
    collected k = {0};
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &zero, &max, collect, &k));
    assert_int_equal(1, h.ran);
    assert_int_equal(20, k.n);
    /* the low water mark: the last commit at or before max(tran_end_time) - 3 days = 01-02 10:00 */
    assert_int_equal(0, src->ops->min_lsn(src, "dbo_orders", &min));
    assert_int_equal(0, mcdc_lsn_cmp(&min, &commits[9]));
    /* 2: a full cleanup after the first page: rows 6-9 are gone when the read gets there */
    h.at_page = 1;
    h.max_batches = -1;
    memset(&k, 0, sizeof k);
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &zero, &max, collect, &k));
    assert_int_equal(2, h.ran);
    assert_int_equal(16, k.n);
    for (int i = 0; i < 5; i++) assert_int_equal(i + 1, k.key[i]);
    for (int i = 5; i < 16; i++) assert_int_equal(i + 5, k.key[i]);
    /* reading a purged range returns nothing; mapping entries below it are gone too */
    memset(&k, 0, sizeof k);
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &zero, &commits[8], collect, &k));
    assert_int_equal(0, k.n);
    ASSERT_Q(&t, "SELECT count(*) AS n FROM cdc.lsn_time_mapping", "{\"n\":11}\n");
    ASSERT_Q(&t, "SELECT count(*) AS n FROM cdc.dbo_orders_CT", "{\"n\":11}\n");
    assert_int_equal(0, mcdc_lsn_cmp(&min, &commits[9]));
    mcdc_source_close(src);
    simt_close(&t);
}

static int snap_collect(const mcdc_value *v, void *payload)
{
    mcdc_buf *b = payload;
    return mcdc_buf_printf(b, "%lld:%.*s:%s;", (long long)v[0].v.i, v[1].is_null ? 4 : (int)v[1].v.s.len,
                           v[1].is_null ? "NULL" : v[1].v.s.ptr, v[2].is_null ? "NULL" : "v");
}

static void test_source_sim_reader__instances_ddl_and_snapshots(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    simt_exec(&t, NULL, "2025-01-01T10:00:01", "INSERT INTO dbo.orders (order_id, customer, amount) VALUES (3, 'c', 1), (1, 'a', 2), (2, 'b', 3)");
    assert_int_equal(0, mcdc_sim_ddl(t.sim, "ALTER TABLE dbo.orders ADD note NVARCHAR(10) NULL", T("2025-01-01T10:01:00")));
    assert_int_equal(0, mcdc_sim_enable(t.sim, "dbo.orders", "dbo_orders_v2", T("2025-01-01T10:02:00")));
    expect_error(mcdc_sim_enable(t.sim, "dbo.orders", "dbo_orders_v3", T("2025-01-01T10:02:00")), MCDC_EINVAL, "Msg 22962");
    assert_int_equal(0, mcdc_sim_ddl(t.sim, "ALTER TABLE dbo.orders ALTER COLUMN amount DECIMAL(14,3) NULL", T("2025-01-01T10:03:00")));
    assert_int_equal(0, mcdc_sim_ddl(t.sim, "ALTER TABLE dbo.orders DROP COLUMN customer", T("2025-01-01T10:04:00")));
    simt_exec(&t, NULL, "2025-01-01T10:05:00", "UPDATE dbo.orders SET amount = 9.125, note = 'n' WHERE order_id = 2");
    mcdc_source *src = open_src(&t);
    mcdc_capture_instance *ci;
    size_t n;
    assert_int_equal(0, src->ops->capture_instances(src, "dbo.orders", &ci, &n));
    assert_int_equal(2, n);
    assert_string_equal("dbo_orders", ci[0].name);
    assert_string_equal("dbo_orders_v2", ci[1].name);
    assert_true(mcdc_lsn_is_zero(&ci[1].start_lsn)); /* enable not processed yet */
    assert_int_equal(T("2025-01-01T10:02:00"), ci[1].create_ts_us);
    mcdc_capture_instances_free(ci, n);
    expect_error(src->ops->capture_instances(src, "dbo.nope", &ci, &n), MCDC_ENOTFOUND, "dbo.nope");
    simt_capture(&t, "2025-01-01T10:06:00", 0);
    assert_int_equal(0, src->ops->capture_instances(src, "dbo.orders", &ci, &n));
    char l[MCDC_LSN_STRLEN];
    assert_string_equal(L("2025-01-01T10:02:00", 2), mcdc_lsn_format(l, &ci[1].start_lsn));
    mcdc_capture_instances_free(ci, n);
    /* v1 kept its columns (customer now NULL, amount retyped); v2 captured note too */
    mcdc_schema *sc;
    assert_int_equal(0, src->ops->captured_columns(src, "dbo_orders", &sc));
    assert_int_equal(4, sc->n_cols);
    assert_int_equal(MCDC_TYPE_DECIMAL, sc->cols[2].type);
    assert_int_equal(14, sc->cols[2].precision);
    assert_int_equal(3, sc->cols[2].scale);
    assert_false(sc->cols[0].nullable);
    mcdc_schema_free(sc);
    assert_int_equal(0, src->ops->captured_columns(src, "dbo_orders_v2", &sc));
    assert_int_equal(5, sc->n_cols);
    assert_string_equal("note", sc->cols[4].name);
    mcdc_schema_free(sc);
    char **keys;
    assert_int_equal(0, src->ops->key_columns(src, "dbo_orders_v2", &keys, &n));
    assert_int_equal(1, n);
    assert_string_equal("order_id", keys[0]);
    free(keys[0]);
    free(keys);
    mcdc_ddl_entry *d;
    mcdc_lsn zero = mcdc_lsn_zero(), max;
    assert_int_equal(0, src->ops->max_lsn(src, &max));
    assert_int_equal(0, src->ops->ddl_history(src, "dbo_orders", &zero, &max, &d, &n));
    assert_int_equal(3, n);
    assert_string_equal("ALTER TABLE dbo.orders ADD note NVARCHAR(10) NULL", d[0].ddl_command);
    assert_string_equal("customer", d[2].column_name);
    assert_int_equal(T("2025-01-01T10:03:00"), d[1].ddl_time_us);
    mcdc_ddl_entries_free(d, n);
    assert_int_equal(0, src->ops->ddl_history(src, "dbo_orders_v2", &zero, &max, &d, &n));
    assert_int_equal(2, n); /* DDL before v2 existed is not in its history */
    mcdc_ddl_entries_free(d, n);
    ASSERT_Q(&t, "SELECT required_column_update AS r, ddl_command FROM cdc.ddl_history h JOIN cdc.change_tables c ON"
                 " c.object_id = h.object_id WHERE c.capture_instance = 'dbo_orders' ORDER BY ddl_lsn",
             "{\"r\":0,\"ddl_command\":\"ALTER TABLE dbo.orders ADD note NVARCHAR(10) NULL\"}\n"
             "{\"r\":1,\"ddl_command\":\"ALTER TABLE dbo.orders ALTER COLUMN amount DECIMAL(14,3) NULL\"}\n"
             "{\"r\":0,\"ddl_command\":\"ALTER TABLE dbo.orders DROP COLUMN customer\"}\n");
    /* the update after the DDL: v1 sees amount only (note is not captured), customer NULL */
    ASSERT_Q(&t, "SELECT __$operation AS op, __$update_mask AS m, customer, amount FROM cdc.dbo_orders_CT WHERE order_id = 2"
                 " ORDER BY __$start_lsn, __$operation",
             "{\"op\":2,\"m\":\"0x0F\",\"customer\":\"b\",\"amount\":\"3.000\"}\n"
             "{\"op\":3,\"m\":\"0x04\",\"customer\":null,\"amount\":\"3.000\"}\n"
             "{\"op\":4,\"m\":\"0x04\",\"customer\":null,\"amount\":\"9.125\"}\n");
    ASSERT_Q(&t, "SELECT __$operation AS op, __$update_mask AS m, note FROM cdc.dbo_orders_v2_CT ORDER BY __$operation",
             "{\"op\":3,\"m\":\"0x14\",\"note\":null}\n{\"op\":4,\"m\":\"0x14\",\"note\":\"n\"}\n");
    /* snapshots: current rows in key order, captured columns, dropped ones NULL; [lo, hi) */
    mcdc_buf b = MCDC_BUF_INIT(4096);
    assert_int_equal(0, src->ops->snapshot(src, "dbo_orders", NULL, NULL, snap_collect, &b));
    assert_string_equal("1:NULL:v;2:NULL:v;3:NULL:v;", b.ptr);
    mcdc_buf_clear(&b);
    mcdc_value lo = {0}, hi = {0};
    lo.v.i = 2;
    hi.v.i = 3;
    assert_int_equal(0, src->ops->snapshot(src, "dbo_orders", &lo, &hi, snap_collect, &b));
    assert_string_equal("2:NULL:v;", b.ptr);
    mcdc_buf_dispose(&b);
    /* disable: gone at once */
    assert_int_equal(0, mcdc_sim_disable(t.sim, "dbo_orders", T("2025-01-01T10:07:00")));
    mcdc_lsn min;
    expect_error(src->ops->min_lsn(src, "dbo_orders", &min), MCDC_ENOTFOUND, "does not exist");
    mcdc_source_close(src);
    simt_close(&t);
}

static void test_source_sim_reader__source_strings(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    mcdc_source *src;
    char spec[300], file[200];
    snprintf(file, sizeof file, "%s/src.txt", t.dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fprintf(f, "sim:%s\nignored\n", t.path);
    fclose(f);
    snprintf(spec, sizeof spec, "@%s", file);
    assert_int_equal(0, mcdc_source_open(&src, spec));
    snprintf(spec, sizeof spec, "sim:%s", t.path);
    assert_string_equal(spec, src->description);
    mcdc_source_close(src);
    /* odbc: goes to the SQL Server source, which checks the string before connecting */
    expect_error(mcdc_source_open(&src, "odbc:Server=db;UID=u;PWD=hunter2;Colour=blue"), MCDC_EINVAL,
                 "connection string 'Server=db;UID=u;PWD=***;Colour=blue': unknown keyword for FreeTDS's driver: Colour");
    assert_null(strstr(mcdc_error_last()->message, "hunter2"));
    expect_error(mcdc_source_open(&src, "mssql://u:x;pwd=secret"), MCDC_EINVAL, "unknown source");
    assert_null(strstr(mcdc_error_last()->message, "secret"));
    snprintf(spec, sizeof spec, "sim:%s/missing.db", t.dir);
    expect_error(mcdc_source_open(&src, spec), MCDC_ENOTFOUND, "does not exist");
    expect_error(mcdc_source_open(&src, "@/nonexistent/file"), MCDC_ENOTFOUND, "cannot be read");
    simt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_sim_reader__commit_times_on_fall_back_nights),
        cmocka_unit_test(test_source_sim_reader__mapping_holds_server_local_time),
        cmocka_unit_test(test_source_sim_reader__ranges_order_and_nth_commit),
        cmocka_unit_test(test_source_sim_reader__transaction_spanning_pages_keeps_its_commit_time),
        cmocka_unit_test(test_source_sim_reader__cleanup_between_pages_of_one_read),
        cmocka_unit_test(test_source_sim_reader__instances_ddl_and_snapshots),
        cmocka_unit_test(test_source_sim_reader__source_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
