/*
 * source/sim/tsql_sum.c: SUM of decimal(p,s) as SQL Server computes it, an SQLite aggregate
 * (and window function) on a session's connection.
 *
 *   mc_dsum_<s>(x)   x in the storage form of decimal(p,s); the result is decimal(38,s)
 *
 * Guarantees: the total is exact (128-bit scaled integers, never binary floating point); NULLs
 * are ignored and a set with no non-NULL value gives NULL; a running total past 38 digits is
 * error 8115, recorded in the session's run_err like the other mc_ functions. One function per
 * scale, so the argument list stays a single column and SUM(DISTINCT x) compiles as is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "source/sim/tsql_engine.h"
#include "source/sim/tsql_sys.h"

typedef struct dsum_fn {
    mcdc_sim_session *s;
    int               scale;
} dsum_fn;

typedef struct dsum_acc {
    mcdc_int128 sum;
    int64_t     n;
} dsum_acc;

/* SQLite's aggregate context is 8-byte aligned; a 128-bit integer wants 16. */
static dsum_acc *acc_of(sqlite3_context *cx, int n)
{
    uintptr_t p = (uintptr_t)sqlite3_aggregate_context(cx, n ? (int)sizeof(dsum_acc) + 15 : 0);
    return p ? (dsum_acc *)((p + 15) & ~(uintptr_t)15) : NULL;
}

static void dsum_fail(sqlite3_context *cx, bool corrupt)
{
    dsum_fn *fn = sqlite3_user_data(cx);
    const char *text = "Arithmetic overflow error converting expression to data type numeric.";
    if (corrupt) {
        if (fn->s->run_err && fn->s->run_err->number == 0) tsql_from_mcdc_error(fn->s->run_err, 1);
        sqlite3_result_error(cx, mcdc_error_last()->message, -1);
        return;
    }
    if (fn->s->run_err && fn->s->run_err->number == 0) tsql_fail(fn->s->run_err, 8115, 16, 1, 1, "%s", text);
    sqlite3_result_error(cx, text, -1);
}

static mcdc_int128 limit38(void)
{
    mcdc_int128 p = 1;
    for (int i = 0; i < 38; i++) p *= 10;
    return p;
}

static void dsum_add(sqlite3_context *cx, sqlite3_value *v, int sign)
{
    dsum_fn *fn = sqlite3_user_data(cx);
    dsum_acc *acc = acc_of(cx, 1);
    if (!acc) { sqlite3_result_error_nomem(cx); return; }
    if (sqlite3_value_type(v) == SQLITE_NULL) return;
    sim_type t = {ST_DECIMAL, 0, 38, fn->scale};
    sim_arena a = {0};
    sim_val x;
    int rc = sim_read_value(v, &t, &a, &x);
    sim_arena_free(&a);
    if (rc < 0) { dsum_fail(cx, true); return; }
    mcdc_int128 r, lim = limit38();
    bool over = sign > 0 ? __builtin_add_overflow(acc->sum, x.u.dec, &r) : __builtin_sub_overflow(acc->sum, x.u.dec, &r);
    if (over || r >= lim || r <= -lim) { dsum_fail(cx, false); return; }
    acc->sum = r;
    acc->n += sign;
}

static void dsum_step(sqlite3_context *cx, int argc, sqlite3_value **argv) { (void)argc; dsum_add(cx, argv[0], 1); }
static void dsum_inverse(sqlite3_context *cx, int argc, sqlite3_value **argv) { (void)argc; dsum_add(cx, argv[0], -1); }

static void dsum_value(sqlite3_context *cx)
{
    dsum_fn *fn = sqlite3_user_data(cx);
    dsum_acc *acc = acc_of(cx, 0);
    if (!acc || acc->n == 0) { sqlite3_result_null(cx); return; }
    sim_type t = {ST_DECIMAL, 0, 38, fn->scale};
    sim_val out = {0};
    out.k = V_DEC;
    out.u.dec = acc->sum;
    out.prec = 38;
    out.scale = fn->scale;
    sim_result(cx, &t, &out);
}

int tsql_register_sum(mcdc_sim_session *s)
{
    for (int scale = 0; scale <= 38; scale++) {
        dsum_fn *fn = malloc(sizeof *fn);
        if (!fn) return mcdc_error_set(MCDC_ENOMEM, "registering functions: out of memory");
        fn->s = s;
        fn->scale = scale;
        char name[16];
        snprintf(name, sizeof name, "mc_dsum_%d", scale);
        /* SQLite calls free on fn also when registration fails */
        int rc = sqlite3_create_window_function(s->sim->db, name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, fn, dsum_step,
                                                dsum_value, dsum_value, dsum_inverse, free);
        if (rc != SQLITE_OK) return sim__sqlite_error(s->sim, rc, "registering functions");
    }
    return 0;
}
