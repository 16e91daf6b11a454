/* Unit tests for the simulator's source interface (source/sim/reader.c) and source
 * dispatch (source/source.c): ranges, order, commit times across fall-back nights, paged
 * reads across a cleanup, capture instances, DDL history, snapshots. */
#include "sim_test.h"

#include <pthread.h>
#include <sqlite3.h>

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

/* consistent_lsn compares tran_end_time (server local) with the clock's local time: on a
 * server east of UTC a UTC comparison would find no commit at all. Before capture nothing
 * is mapped (zero); after it, the newest commit at or before the clock. */
static void test_source_sim_reader__consistent_lsn_is_the_newest_commit_by_the_clock(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, "Tokyo Standard Time");
    simt_orders(&t, "2026-03-02T05:00:00");
    mcdc_lsn ins = simt_exec(&t, NULL, "2026-03-02T06:10:00", "INSERT INTO dbo.orders (order_id) VALUES (1)");
    mcdc_source *src = open_src(&t);
    mcdc_lsn got, max, zero = mcdc_lsn_zero();
    assert_non_null(src->ops->consistent_lsn);
    assert_int_equal(0, src->ops->consistent_lsn(src, &got));
    assert_int_equal(0, mcdc_lsn_cmp(&got, &zero));
    simt_capture(&t, "2026-03-02T06:11:00", 0);
    assert_int_equal(0, src->ops->consistent_lsn(src, &got));
    assert_int_equal(0, src->ops->max_lsn(src, &max));
    char a[MCDC_LSN_STRLEN], b[MCDC_LSN_STRLEN];
    if (mcdc_lsn_cmp(&got, &max) != 0 || mcdc_lsn_cmp(&got, &ins) < 0)
        fail_msg("consistent_lsn %s, max_lsn %s", mcdc_lsn_format(a, &got), mcdc_lsn_format(b, &max));
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

static uint32_t rnd(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 8;
}

/* Commit i+1 inserts order i+1 at @p at_us; returns its LSN. */
static mcdc_lsn commit_at(simt *t, int i, int64_t at_us)
{
    char sql[80];
    mcdc_sim_exec_result r;
    snprintf(sql, sizeof sql, "INSERT INTO dbo.orders (order_id) VALUES (%d)", i + 1);
    if (mcdc_sim_exec(t->sim, sql, at_us, at_us, &r) != 0) fail_msg("exec: %s", mcdc_error_last()->message);
    return r.commit_lsn;
}

static void same_ts(mcdc_source *ref, mcdc_source *ix, const mcdc_lsn *l)
{
    int64_t a = 0, b = 0;
    int ra = ref->ops->lsn_to_commit_ts(ref, l, &a), rb = ix->ops->lsn_to_commit_ts(ix, l, &b);
    char s[MCDC_LSN_STRLEN], x[MCDC_TIME_STRLEN], y[MCDC_TIME_STRLEN];
    if (ra != rb || a != b)
        fail_msg("lsn_to_commit_ts %s: walk %d %s, index %d %s", mcdc_lsn_format(s, l), ra, mcdc_time_format(x, a, 3, true),
                 rb, mcdc_time_format(y, b, 3, true));
}

/* 700 commits over five days across New York's fall-back night, dense in the repeated hour:
 * every question answered from the index (asked in LSN order, in random order, read in
 * pages) gets the seeded walk's answer. */
static void test_source_sim_reader__index_answers_as_the_seeded_walk(void **state)
{
    (void)state;
    enum { N = 700 };
    simt t;
    simt_open(&t, "America/New_York");
    simt_orders(&t, "2025-10-31T12:00:00");
    static mcdc_lsn c[N];
    uint32_t seed = 22;
    int64_t at = T("2025-10-31T12:00:01"), night0 = T("2025-11-02T04:30:00"), night1 = T("2025-11-02T07:30:00");
    int in_night = 0;
    for (int i = 0; i < N; i++) {
        uint32_t r = rnd(&seed) % 100;
        int64_t gap_s = at >= night0 && at < night1 ? 1 + rnd(&seed) % 240
                        : r < 70                     ? 1 + rnd(&seed) % 300
                        : r < 95                     ? 300 + rnd(&seed) % 1500
                                                     : 1800 + rnd(&seed) % 9000;
        at += gap_s * MCDC_US_PER_SEC + rnd(&seed) % 1000000;
        if (at >= T("2025-11-02T05:00:00") && at < T("2025-11-02T07:00:00")) in_night++;
        c[i] = commit_at(&t, i, at);
    }
    assert_true(in_night > 40 && at > T("2025-11-04T00:00:00"));
    simt_capture(&t, "2025-11-06T00:00:00", 5000);
    mcdc_source *ref = open_src(&t), *ix = open_src(&t);
    assert_int_equal(0, mcdc_sim_source_set_commit_index(ref, false));
    /* in LSN order from the start, then in random order on a fresh index (the sources of
     * a file share one, which goes with the last of them: the walk's source holds none) */
    for (int i = 0; i < N; i++) same_ts(ref, ix, &c[i]);
    mcdc_source_close(ix);
    mcdc_source *ix2 = open_src(&t);
    assert_int_equal(0, mcdc_sim_source_commit_entries_fed(ix2));
    for (int k = 0; k < N; k++) same_ts(ref, ix2, &c[rnd(&seed) % N]);
    mcdc_lsn zero = mcdc_lsn_zero(), missing = c[0];
    missing.b[9] ^= 0x40;
    same_ts(ref, ix2, &zero);
    same_ts(ref, ix2, &missing);
    mcdc_source_close(ix2);
    /* nth_commit_after from random places, on a fresh index asked by two sources */
    mcdc_source *ix3 = open_src(&t);
    ix2 = open_src(&t);
    for (int k = 0; k < 300; k++) {
        mcdc_lsn after = k % 10 == 0 ? zero : c[rnd(&seed) % N], o1, o2;
        int64_t n = 1 + rnd(&seed) % (k % 3 ? 40 : 400), ts1, ts2, f1, f2;
        mcdc_source *ixk = k % 2 ? ix2 : ix3;
        assert_int_equal(0, ref->ops->nth_commit_after(ref, &after, n, &o1, &ts1, &f1));
        assert_int_equal(0, ixk->ops->nth_commit_after(ixk, &after, n, &o2, &ts2, &f2));
        if (f1 != f2 || mcdc_lsn_cmp(&o1, &o2)) {
            char a1[MCDC_LSN_STRLEN], a2[MCDC_LSN_STRLEN], a3[MCDC_LSN_STRLEN];
            fail_msg("k %d after %s n %lld: walk %lld %s, index %lld %s", k, mcdc_lsn_format(a1, &after), (long long)n,
                     (long long)f1, mcdc_lsn_format(a2, &o1), (long long)f2, mcdc_lsn_format(a3, &o2));
        }
        assert_int_equal(ts1, ts2);
    }
    /* reads of random ranges, in pages of 7 rows */
    assert_int_equal(0, mcdc_sim_source_set_paging(ix3, 7, NULL, NULL));
    for (int k = 0; k < 120; k++) {
        int a = (int)(rnd(&seed) % N), b = a + 1 + (int)(rnd(&seed) % 60);
        if (b >= N) b = N - 1;
        mcdc_lsn after = k % 15 == 0 ? zero : c[a];
        collected k1 = {0}, k2 = {0};
        if (k % 15 == 0) b = 60;
        assert_int_equal(0, ref->ops->read_changes(ref, "dbo_orders", &after, &c[b], collect, &k1));
        assert_int_equal(0, ix3->ops->read_changes(ix3, "dbo_orders", &after, &c[b], collect, &k2));
        assert_int_equal(k1.n, k2.n);
        for (int i = 0; i < k1.n; i++) assert_int_equal(k1.ts[i], k2.ts[i]);
    }
    mcdc_source_close(ix3);
    mcdc_source_close(ix2);
    mcdc_source_close(ref);
    simt_close(&t);
}

typedef struct asker {
    mcdc_source    *src;
    const mcdc_lsn *c;
    const int64_t  *want;
    int             n;
    uint32_t        seed;
    int             wrong;
} asker;

/* One thread's questions on its own source: every commit's time, in random order, and
 * reads of random ranges, each answer checked against the walk's. */
static void *ask(void *p)
{
    asker *a = p;
    for (int k = 0; k < 4 * a->n; k++) {
        int i = (int)(rnd(&a->seed) % (uint32_t)a->n);
        int64_t ts = 0;
        if (a->src->ops->lsn_to_commit_ts(a->src, &a->c[i], &ts) != 0 || ts != a->want[i]) a->wrong++;
        if (k % 16 == 0 && i + 20 < a->n) {
            collected got = {0};
            if (a->src->ops->read_changes(a->src, "dbo_orders", &a->c[i], &a->c[i + 20], collect, &got) != 0 ||
                got.n != 20)
                a->wrong++;
            for (int r = 0; r < got.n; r++)
                if (got.ts[r] != a->want[i + 1 + r]) a->wrong++;
        }
    }
    return NULL;
}

/* The sources of one database file in a process share one commit-time index (the pooled
 * connections of a run): a second source converts none of the history the first did, its
 * answers are the same, two threads asking on two sources at once get the walk's answers,
 * and once the last source closes, the next one starts a fresh index. Before, each source
 * (each pooled connection) built its own over the whole history. */
static void test_source_sim_reader__sources_of_one_database_share_the_index(void **state)
{
    (void)state;
    enum { N = 400 };
    simt t;
    simt_open(&t, "America/New_York");
    simt_orders(&t, "2025-11-02T03:59:00"); /* the history within 3 hours: one run from its start */
    static mcdc_lsn c[N];
    static int64_t want[N];
    for (int i = 0; i < N; i++) c[i] = commit_at(&t, i, T("2025-11-02T04:00:00") + (int64_t)i * 20 * MCDC_US_PER_SEC);
    simt_capture(&t, "2025-11-02T12:00:00", 5000);
    mcdc_source *ref = open_src(&t), *a = open_src(&t), *b = open_src(&t);
    assert_int_equal(0, mcdc_sim_source_set_commit_index(ref, false));
    for (int i = 0; i < N; i++) assert_int_equal(0, ref->ops->lsn_to_commit_ts(ref, &c[i], &want[i]));
    int64_t ts;
    assert_int_equal(0, a->ops->lsn_to_commit_ts(a, &c[N - 1], &ts));
    assert_int_equal(want[N - 1], ts);
    if (mcdc_sim_source_commit_entries_fed(a) < N)
        fail_msg("the first source fed %lld entries", (long long)mcdc_sim_source_commit_entries_fed(a));
    mcdc_lsn zero = mcdc_lsn_zero();
    collected got = {0};
    assert_int_equal(0, b->ops->lsn_to_commit_ts(b, &c[N - 1], &ts));
    assert_int_equal(want[N - 1], ts);
    assert_int_equal(0, b->ops->read_changes(b, "dbo_orders", &zero, &c[40], collect, &got));
    assert_int_equal(41, got.n);
    for (int i = 0; i < got.n; i++) assert_int_equal(want[i], got.ts[i]);
    assert_int_equal(0, mcdc_sim_source_commit_entries_fed(b)); /* was N: an index of its own */
    /* at once, on two sources of a fresh index, with a rewind-free history */
    mcdc_source_close(a);
    mcdc_source_close(b);
    a = open_src(&t);
    b = open_src(&t);
    asker qa = {.src = a, .c = c, .want = want, .n = N, .seed = 5}, qb = {.src = b, .c = c, .want = want, .n = N, .seed = 9};
    pthread_t th;
    assert_int_equal(0, pthread_create(&th, NULL, ask, &qa));
    ask(&qb);
    pthread_join(th, NULL);
    assert_int_equal(0, qa.wrong);
    assert_int_equal(0, qb.wrong);
    int64_t fed = mcdc_sim_source_commit_entries_fed(a) + mcdc_sim_source_commit_entries_fed(b);
    if (fed < N || fed > N + 10) fail_msg("two sources of one index fed %lld entries (want about %d)", (long long)fed, N);
    /* no commit since a source's last check of the index's ends: its questions skip the
     * check (they made two queries each before); a commit makes the next one check */
    int64_t syncs = mcdc_sim_source_commit_syncs(a);
    for (int i = 0; i < 50; i++) {
        assert_int_equal(0, a->ops->lsn_to_commit_ts(a, &c[i * 7], &ts));
        assert_int_equal(want[i * 7], ts);
    }
    if (mcdc_sim_source_commit_syncs(a) > syncs + 1)
        fail_msg("50 questions on a quiet database checked the index %lld times",
                 (long long)(mcdc_sim_source_commit_syncs(a) - syncs));
    syncs = mcdc_sim_source_commit_syncs(a);
    mcdc_lsn more = commit_at(&t, N, T("2025-11-02T12:10:00"));
    simt_capture(&t, "2025-11-02T12:30:00", 5000);
    assert_int_equal(0, a->ops->lsn_to_commit_ts(a, &more, &ts));
    assert_int_equal(T("2025-11-02T12:10:00"), ts);
    assert_int_equal(syncs + 1, mcdc_sim_source_commit_syncs(a));
    assert_int_equal(-1, mcdc_sim_source_commit_syncs(NULL));
    mcdc_source_close(a);
    mcdc_source_close(b);
    /* the last source gone, the next converts afresh */
    a = open_src(&t);
    assert_int_equal(0, a->ops->lsn_to_commit_ts(a, &c[N - 1], &ts));
    assert_int_equal(want[N - 1], ts);
    if (mcdc_sim_source_commit_entries_fed(a) < N)
        fail_msg("a source after the last closed fed %lld entries", (long long)mcdc_sim_source_commit_entries_fed(a));
    mcdc_source_close(a);
    mcdc_source_close(ref);
    simt_close(&t);
}

/* 600 commits in 100 minutes, one question of each kind per commit: the index feeds each
 * mapping entry to the sequencer about once; the walk re-fed every entry before each one. */
static void test_source_sim_reader__questions_feed_each_entry_once(void **state)
{
    (void)state;
    enum { N = 600 };
    simt t;
    simt_open(&t, "Europe/Berlin");
    simt_orders(&t, "2025-03-01T08:00:00");
    static mcdc_lsn c[N];
    for (int i = 0; i < N; i++) c[i] = commit_at(&t, i, T("2025-03-01T08:00:00") + (int64_t)(i + 1) * 10 * MCDC_US_PER_SEC);
    simt_capture(&t, "2025-03-01T10:00:00", 5000);
    mcdc_source *src[2] = {open_src(&t), open_src(&t)};
    assert_int_equal(0, mcdc_sim_source_set_commit_index(src[1], false));
    for (int w = 0; w < 2; w++) {
        mcdc_lsn prev;
        assert_int_equal(0, mcdc_lsn_decrement(&prev, &c[0]));
        for (int i = 0; i < N; i++) {
            int64_t ts, found;
            mcdc_lsn out;
            collected k = {0};
            assert_int_equal(0, src[w]->ops->nth_commit_after(src[w], &prev, 1, &out, &ts, &found));
            assert_int_equal(1, found);
            assert_int_equal(0, mcdc_lsn_cmp(&out, &c[i]));
            assert_int_equal(T("2025-03-01T08:00:00") + (int64_t)(i + 1) * 10 * MCDC_US_PER_SEC, ts);
            assert_int_equal(0, src[w]->ops->lsn_to_commit_ts(src[w], &c[i], &ts));
            assert_int_equal(0, src[w]->ops->read_changes(src[w], "dbo_orders", &prev, &c[i], collect, &k));
            assert_int_equal(1, k.n);
            assert_int_equal(ts, k.ts[0]);
            prev = c[i];
        }
    }
    int64_t fed_ix = mcdc_sim_source_commit_entries_fed(src[0]), fed_walk = mcdc_sim_source_commit_entries_fed(src[1]);
    if (fed_ix > N + 10 || fed_walk < 100 * (int64_t)N)
        fail_msg("entries fed: index %lld, walk %lld", (long long)fed_ix, (long long)fed_walk);
    assert_int_equal(-1, mcdc_sim_source_commit_entries_fed(NULL));
    mcdc_source_close(src[0]);
    mcdc_source_close(src[1]);
    simt_close(&t);
}

/* The index follows a rewind (entries past the LSN gone, new ones after them) and a cleanup
 * (the oldest gone) made while its source stays open: answers stay the walk's. */
static void test_source_sim_reader__index_follows_rewind_and_cleanup(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, "America/New_York");
    simt_orders(&t, "2025-11-01T00:00:00");
    mcdc_lsn c[10], d[5];
    for (int i = 0; i < 10; i++) c[i] = commit_at(&t, i, T("2025-11-02T05:00:00") + (int64_t)i * 10 * MCDC_US_PER_MIN);
    simt_capture(&t, "2025-11-02T07:00:00", 0);
    mcdc_source *ref = open_src(&t), *ix = open_src(&t);
    assert_int_equal(0, mcdc_sim_source_set_commit_index(ref, false));
    same_ts(ref, ix, &c[9]);
    mcdc_sim_rewind_result rr;
    assert_int_equal(0, mcdc_sim_rewind(t.sim, &c[4], &rr));
    for (int i = 0; i < 5; i++) d[i] = commit_at(&t, 20 + i, T("2025-11-02T07:10:00") + (int64_t)i * 7 * MCDC_US_PER_MIN);
    simt_capture(&t, "2025-11-02T08:00:00", 0);
    for (int i = 0; i < 5; i++) same_ts(ref, ix, &d[i]);
    same_ts(ref, ix, &c[7]);
    int64_t ts1, ts2, f1, f2;
    mcdc_lsn o1, o2;
    assert_int_equal(0, ref->ops->nth_commit_after(ref, &c[3], 4, &o1, &ts1, &f1));
    assert_int_equal(0, ix->ops->nth_commit_after(ix, &c[3], 4, &o2, &ts2, &f2));
    assert_int_equal(4, f2);
    assert_int_equal(0, mcdc_lsn_cmp(&o2, &d[2]));
    assert_int_equal(0, mcdc_lsn_cmp(&o1, &o2));
    assert_int_equal(ts1, ts2);
    /* a cleanup keeping one day: everything before the new commits' day is gone */
    mcdc_sim_cleanup_result cr;
    assert_int_equal(0, mcdc_sim_cleanup(t.sim, 30 * MCDC_US_PER_MIN, T("2025-11-02T08:00:00"), 1000, -1, &cr));
    mcdc_lsn zero = mcdc_lsn_zero();
    same_ts(ref, ix, &c[0]);
    same_ts(ref, ix, &d[4]);
    expect_error(ix->ops->lsn_to_commit_ts(ix, &c[0], &ts1), MCDC_ENOTFOUND, "no cdc.lsn_time_mapping entry");
    expect_error(ix->ops->lsn_to_commit_ts(ix, &c[7], &ts1), MCDC_ENOTFOUND, "no cdc.lsn_time_mapping entry");
    assert_int_equal(0, ref->ops->nth_commit_after(ref, &zero, 2, &o1, &ts1, &f1));
    assert_int_equal(0, ix->ops->nth_commit_after(ix, &zero, 2, &o2, &ts2, &f2));
    assert_int_equal(f1, f2);
    assert_int_equal(0, mcdc_lsn_cmp(&o1, &o2));
    assert_int_equal(ts1, ts2);
    mcdc_source_close(ix);
    mcdc_source_close(ref);
    simt_close(&t);
}

static int count_rows(const mcdc_change *c, void *payload)
{
    (void)c;
    (*(int64_t *)payload)++;
    return 0;
}

/* A read of the newest commit of a large change table finds its first row by a binary
 * search, never by a scan: it fetches a small part of the pages a read of everything does
 * (the bounds of that search were one min/max statement, which SQLite answered by scanning
 * the whole change table, so every small batch paid a scan). */
static void test_source_sim_reader__small_read_does_not_scan_the_change_table(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    mcdc_buf sql = MCDC_BUF_INIT(1 << 20);
    int key = 0;
    for (int c = 0; c < 40; c++) {
        mcdc_buf_clear(&sql);
        mcdc_buf_puts(&sql, "INSERT INTO dbo.orders (order_id, customer) VALUES ");
        for (int r = 0; r < 1000; r++, key++)
            mcdc_buf_printf(&sql, "%s(%d, 'customer number %d')", r ? ", " : "", key + 1, key);
        mcdc_sim_exec_result r;
        if (mcdc_sim_exec(t.sim, sql.ptr, MCDC_SIM_NOW, T("2025-01-01T10:00:01") + c * MCDC_US_PER_SEC + 1000, &r) != 0)
            fail_msg("exec: %s", mcdc_error_last()->message);
    }
    mcdc_buf_dispose(&sql);
    mcdc_lsn before = commit_at(&t, 100000, T("2025-01-01T10:01:00"));
    mcdc_lsn last = commit_at(&t, 100001, T("2025-01-01T10:01:01"));
    simt_capture(&t, "2025-01-01T10:02:00", 0);
    mcdc_source *src = open_src(&t);
    mcdc_lsn zero = mcdc_lsn_zero();
    int64_t n_all = 0, n_one = 0;
    int64_t p0 = mcdc_sim_source_pages_fetched(src);
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &zero, &last, count_rows, &n_all));
    int64_t p1 = mcdc_sim_source_pages_fetched(src);
    assert_int_equal(0, src->ops->read_changes(src, "dbo_orders", &before, &last, count_rows, &n_one));
    int64_t p2 = mcdc_sim_source_pages_fetched(src);
    assert_int_equal(40 * 1000 + 2, n_all);
    assert_int_equal(1, n_one);
    if ((p2 - p1) * 5 > p1 - p0)
        fail_msg("pages fetched: %lld for one commit, %lld for all (want under a fifth)", (long long)(p2 - p1), (long long)(p1 - p0));
    assert_int_equal(-1, mcdc_sim_source_pages_fetched(NULL));
    mcdc_source_close(src);
    simt_close(&t);
}

static mcdc_source_identity identity_of(simt *t)
{
    mcdc_source *src = open_src(t);
    mcdc_source_identity id;
    assert_non_null(src->ops->identity);
    assert_int_equal(0, src->ops->identity(src, &id));
    mcdc_source_close(src);
    return id;
}

static void sql_on_file(const char *path, const char *sql, char *out, size_t cap)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(SQLITE_OK, sqlite3_open(path, &db));
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(db, sql, -1, &st, NULL));
    int rc = sqlite3_step(st);
    if (out) {
        assert_int_equal(SQLITE_ROW, rc);
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* The identity: the names sim serve answers, a GUID made at init; a file older than
 * sim_identity reports a derived GUID, the same on every open and kept by the first write. */
static void test_source_sim_reader__identity_names_the_database_and_keeps_its_guid(void **state)
{
    (void)state;
    simt t, u;
    simt_open(&t, "UTC");
    simt_orders(&t, "2026-03-01T10:00:00");
    simt_open(&u, "UTC");
    mcdc_source_identity a = identity_of(&t), b = identity_of(&u);
    assert_string_equal("mssql-cdc-sim", a.server);
    assert_string_equal("t", a.database); /* the file's stem */
    assert_int_equal(36, strlen(a.database_guid));
    assert_int_equal('-', a.database_guid[8]);
    assert_int_equal('4', a.database_guid[14]); /* random */
    assert_string_not_equal(a.database_guid, b.database_guid);
    assert_string_equal(a.database_guid, identity_of(&t).database_guid);

    mcdc_sim_close(t.sim);
    t.sim = NULL;
    sql_on_file(t.path, "DROP TABLE sim_identity", NULL, 0);
    mcdc_source_identity d1 = identity_of(&t), d2 = identity_of(&t);
    assert_string_equal(d1.database_guid, d2.database_guid);
    assert_string_not_equal(a.database_guid, d1.database_guid);
    assert_int_equal('8', d1.database_guid[14]); /* derived */
    assert_int_equal(0, mcdc_sim_open(&t.sim, t.path, false, NULL)); /* for writing: stored */
    char stored[64];
    sql_on_file(t.path, "SELECT database_guid FROM sim_identity", stored, sizeof stored);
    assert_string_equal(d1.database_guid, stored);
    assert_string_equal(d1.database_guid, identity_of(&t).database_guid);
    simt_close(&u);
    simt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_sim_reader__commit_times_on_fall_back_nights),
        cmocka_unit_test(test_source_sim_reader__mapping_holds_server_local_time),
        cmocka_unit_test(test_source_sim_reader__consistent_lsn_is_the_newest_commit_by_the_clock),
        cmocka_unit_test(test_source_sim_reader__ranges_order_and_nth_commit),
        cmocka_unit_test(test_source_sim_reader__transaction_spanning_pages_keeps_its_commit_time),
        cmocka_unit_test(test_source_sim_reader__cleanup_between_pages_of_one_read),
        cmocka_unit_test(test_source_sim_reader__instances_ddl_and_snapshots),
        cmocka_unit_test(test_source_sim_reader__source_strings),
        cmocka_unit_test(test_source_sim_reader__index_answers_as_the_seeded_walk),
        cmocka_unit_test(test_source_sim_reader__questions_feed_each_entry_once),
        cmocka_unit_test(test_source_sim_reader__index_follows_rewind_and_cleanup),
        cmocka_unit_test(test_source_sim_reader__sources_of_one_database_share_the_index),
        cmocka_unit_test(test_source_sim_reader__identity_names_the_database_and_keeps_its_guid),
        cmocka_unit_test(test_source_sim_reader__small_read_does_not_scan_the_change_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
