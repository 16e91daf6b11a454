/*
 * tests/unit/source/sim_test.h: helpers for the simulator's tests: a temporary database,
 * times, expected LSNs, and dumps of query results as jsonl text.
 */
#ifndef MCDC_SIM_TEST_H
#define MCDC_SIM_TEST_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "mcdc/buf.h"
#include "mcdc/sim.h"
#include "mcdc/time.h"

typedef struct simt {
    char      dir[64];
    char      path[128];
    mcdc_sim *sim;
} simt;

static int64_t T(const char *iso)
{
    int64_t us;
    if (mcdc_time_parse(&us, iso) != 0)
        fail_msg("bad time %s", iso);
    return us;
}

/* The LSN the simulator allocates at @p iso with @p slot, as 0x + 20 hex (invariant S2). */
static __attribute__((unused)) const char *L(const char *iso, int slot)
{
    static char bufs[32][24];
    static int k;
    char *b = bufs[k++ % 32];
    uint64_t us0 = (uint64_t)(T(iso) + INT64_C(62135596800) * 1000000);
    snprintf(b, 24, "0x%016llX%04X", (unsigned long long)us0, (unsigned)slot);
    return b;
}

static void simt_open(simt *t, const char *zone)
{
    snprintf(t->dir, sizeof t->dir, "/tmp/mcdc_simtest_XXXXXX");
    assert_non_null(mkdtemp(t->dir));
    snprintf(t->path, sizeof t->path, "%s/t.db", t->dir);
    assert_int_equal(0, mcdc_sim_open(&t->sim, t->path, true, zone));
}

static void simt_close(simt *t)
{
    char cmd[200];
    mcdc_sim_close(t->sim);
    t->sim = NULL;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", t->dir);
    if (system(cmd) != 0) fail_msg("cannot remove %s", t->dir);
}

static const char orders_schema[] = "order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, "
                                    "placed_at DATETIME2(3) NULL";

static __attribute__((unused)) void simt_orders(simt *t, const char *at)
{
    int rc = mcdc_sim_create_table(t->sim, "dbo.orders", orders_schema, "order_id", NULL, T(at));
    if (rc) fail_msg("create: %s", mcdc_error_last()->message);
}

static __attribute__((unused)) mcdc_lsn simt_exec(simt *t, const char *begin, const char *at, const char *sql)
{
    mcdc_sim_exec_result r;
    int rc = mcdc_sim_exec(t->sim, sql, begin ? T(begin) : MCDC_SIM_NOW, T(at), &r);
    if (rc) fail_msg("exec %s: %s", sql, mcdc_error_last()->message);
    return r.commit_lsn;
}

static __attribute__((unused)) void simt_capture(simt *t, const char *at, int max_trans)
{
    mcdc_sim_capture_options o = MCDC_SIM_CAPTURE_OPTIONS_INIT;
    mcdc_sim_capture_result r;
    if (max_trans) o.max_trans = max_trans;
    int rc = mcdc_sim_capture(t->sim, T(at), &o, &r);
    if (rc) fail_msg("capture: %s", mcdc_error_last()->message);
}

static int dump_row(const mcdc_schema *sc, const mcdc_value *v, void *payload)
{
    mcdc_buf *b = payload;
    if (!v) return 0;
    mcdc_buf_putc(b, '{');
    for (size_t i = 0; i < sc->n_cols; i++) {
        if (i) mcdc_buf_putc(b, ',');
        mcdc_json_quote(b, sc->cols[i].name, strlen(sc->cols[i].name));
        mcdc_buf_putc(b, ':');
        if (mcdc_value_to_json(b, &sc->cols[i], &v[i]) != 0) return -1;
    }
    return mcdc_buf_puts(b, "}\n");
}

/* Query results as jsonl; the caller frees. */
static char *Q(simt *t, const char *sql)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 26);
    int rc = mcdc_sim_query(t->sim, sql, dump_row, &b);
    if (rc) fail_msg("query %s: %s", sql, mcdc_error_last()->message);
    return mcdc_buf_detach(&b);
}

#define ASSERT_Q(t, sql, expected)                 \
    do {                                           \
        char *got_ = Q((t), (sql));                \
        assert_string_equal((expected), got_);     \
        free(got_);                                \
    } while (0)

/* Every table and view of the database, for before/after comparisons. */
static __attribute__((unused)) char *dump_all(simt *t)
{
    static const char *const qs[] = {
        "SELECT * FROM dbo.orders ORDER BY order_id",
        "SELECT * FROM sim_ct_1 ORDER BY rowid",
        "SELECT * FROM sim_tx ORDER BY lsn",
        "SELECT * FROM sim_state",
        "SELECT * FROM sim_retro ORDER BY us",
        "SELECT * FROM sim_instances ORDER BY id",
        "SELECT * FROM sim_columns ORDER BY table_id, column_id",
        NULL};
    mcdc_buf b = MCDC_BUF_INIT(1 << 26);
    for (int i = 0; qs[i]; i++) {
        char *s = Q(t, qs[i]);
        mcdc_buf_puts(&b, s);
        free(s);
    }
    return mcdc_buf_detach(&b);
}

static __attribute__((unused)) void expect_error(int rc, int code, const char *fragment)
{
    if (rc != code)
        fail_msg("expected code %d, got %d (%s)", code, rc, mcdc_error_last()->message);
    if (fragment && !strstr(mcdc_error_last()->message, fragment))
        fail_msg("message '%s' lacks '%s'", mcdc_error_last()->message, fragment);
}

#endif
