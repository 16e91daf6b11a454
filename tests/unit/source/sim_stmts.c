/*
 * tests/unit/source/sim_stmts.c: the simulator's statements of constant text kept prepared
 * on a connection (sim__stmt in source/sim/store.c): a run asks max_lsn, data_version and
 * the commit-time questions for each of its tables, and a session's every statement reloads
 * the state and the catalog; each was prepared and finalized every time. A kept statement is prepared once, is reset when given back (no read
 * transaction stays open), and a statement beyond the slots is finalized when given back.
 */
#include <stdarg.h>

#include "sim_test.h"
#include "source/sim/sim_int.h"

/* "SELECT 1" .. "SELECT <SIM_STMTS + 1>", at addresses that stay (sim__stmt knows a text by
 * its address) */
static char more_sql[SIM_STMTS + 1][16];

/* the connection's prepared statement whose text starts with @p prefix, or NULL */
static sqlite3_stmt *find_stmt(sqlite3 *db, const char *prefix)
{
    for (sqlite3_stmt *st = sqlite3_next_stmt(db, NULL); st; st = sqlite3_next_stmt(db, st))
        if (!strncmp(sqlite3_sql(st), prefix, strlen(prefix)))
            return st;
    return NULL;
}

static void test_source_sim_stmts__max_lsn_is_prepared_once(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2026-01-01T00:00:00");
    mcdc_lsn l = simt_exec(&t, NULL, "2026-01-01T00:00:01", "INSERT INTO dbo.orders (order_id) VALUES (1)");
    simt_capture(&t, "2026-01-01T00:00:02", 0);
    mcdc_sim *s;
    assert_int_equal(0, mcdc_sim_open_readonly(&s, t.path));
    for (int i = 0; i < 3; i++) {
        mcdc_lsn got;
        assert_int_equal(0, sim__max_lsn(s, &got, NULL));
        assert_int_equal(0, mcdc_lsn_cmp(&got, &l));
    }
    sqlite3_stmt *st = find_stmt(s->db, "SELECT lsn, end_utc_us FROM sim_tx");
    assert_non_null(st); /* was finalized after each question */
    assert_int_equal(3, sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0));
    assert_false(sqlite3_stmt_busy(st));
    assert_true(sqlite3_get_autocommit(s->db));
    mcdc_sim_close(s);
    simt_close(&t);
}

/* Each T-SQL statement of a session reloads the state and the catalog (sim__load): their
 * questions are prepared once too, not five prepares a statement. */
static void test_source_sim_stmts__the_catalog_reload_is_prepared_once(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2026-01-01T00:00:00");
    mcdc_sim *s;
    assert_int_equal(0, mcdc_sim_open_readonly(&s, t.path));
    for (int i = 0; i < 3; i++) assert_int_equal(0, sim__load(s));
    assert_int_equal(1, s->n_tables);
    const char *qs[] = {"SELECT db_name, time_zone", "SELECT id, schema_name", "SELECT column_id, name",
                        "SELECT id, name, table_id", "SELECT ordinal, column_id"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        sqlite3_stmt *st = find_stmt(s->db, qs[i]);
        if (!st) fail_msg("'%s...' was not kept", qs[i]);
        assert_true(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0) >= 3);
        assert_false(sqlite3_stmt_busy(st));
    }
    assert_true(sqlite3_get_autocommit(s->db));
    mcdc_sim_close(s);
    simt_close(&t);
}

static void test_source_sim_stmts__a_statement_past_the_slots_is_finalized(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    mcdc_sim *s;
    assert_int_equal(0, mcdc_sim_open_readonly(&s, t.path));
    for (int i = 0; i < SIM_STMTS + 1; i++) snprintf(more_sql[i], sizeof more_sql[i], "SELECT %d", i + 1);
    for (int i = 0; i < SIM_STMTS + 1; i++) { /* the catalog's questions hold slots of their own already */
        sqlite3_stmt *st;
        assert_int_equal(0, sim__stmt(s, more_sql[i], "testing", &st));
        assert_int_equal(SQLITE_ROW, sqlite3_step(st));
        assert_int_equal(i + 1, sqlite3_column_int(st, 0));
        sim__stmt_done(s, st);
    }
    int kept = 0;
    for (sqlite3_stmt *st = sqlite3_next_stmt(s->db, NULL); st; st = sqlite3_next_stmt(s->db, st)) {
        kept++;
        assert_false(sqlite3_stmt_busy(st));
    }
    assert_int_equal(SIM_STMTS, kept);
    assert_null(find_stmt(s->db, more_sql[SIM_STMTS]));
    /* the same text again is the kept statement */
    sqlite3_stmt *a, *b;
    assert_int_equal(0, sim__stmt(s, more_sql[0], "testing", &a));
    sim__stmt_done(s, a);
    assert_int_equal(0, sim__stmt(s, more_sql[0], "testing", &b));
    assert_ptr_equal(a, b);
    sim__stmt_done(s, b);
    mcdc_sim_close(s);
    simt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_sim_stmts__max_lsn_is_prepared_once),
        cmocka_unit_test(test_source_sim_stmts__the_catalog_reload_is_prepared_once),
        cmocka_unit_test(test_source_sim_stmts__a_statement_past_the_slots_is_finalized),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
