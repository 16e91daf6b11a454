/*
 * source/sim/session_result.c: a result set to the sink: COLMETADATA, rows, DONE.
 *
 * Values are read from SQLite in the simulator's storage form of each declared column type
 * (sim_read_value_ref), so they reach the wire as sim_val of that type; a string or binary
 * points into SQLite's copy of the row (no copy per value), which the sink encodes before
 * the next step. The sink's cancelled() is polled between rows; an int column whose value
 * left int's range (SUM of int) is SQL Server's 8115 and ends the statement after the rows
 * already sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source/sim/tsql_engine.h"

int tsql_stream(mcdc_sim_session *s, sqlite3_stmt *st, const tsql_rcol *cols, int ncols, tsql_error *err)
{
    const mcdc_sim_session_sink *k = s->sink;
    int rc = sess_flush_done(s, true);
    if (rc < 0) return rc;
    mcdc_sim_rcol *rc_cols = calloc((size_t)ncols + 1, sizeof *rc_cols);
    sim_val *vals = calloc((size_t)ncols + 1, sizeof *vals);
    int64_t n = 0;
    if (!rc_cols || !vals) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); goto done; }
    for (int i = 0; i < ncols; i++) rc_cols[i] = cols[i].rc;
    if (k->columns(k->payload, rc_cols, ncols)) { rc = MCDC_ERROR; goto done; }
    tsql_run_begin(s, err);
    int r = SQLITE_DONE;
    /* SET FMTONLY ON (bcp's queryout asks a query's columns so): the columns, no rows */
    while (!s->fmtonly && (r = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < ncols; i++) {
            const sim_type *t = &cols[i].rc.type;
            sqlite3_value *sv = sqlite3_column_value(st, i);
            if (cols[i].check_int && sqlite3_value_type(sv) == SQLITE_INTEGER) {
                int64_t v = sqlite3_value_int64(sv);
                if ((t->k == ST_INT && (v < INT32_MIN || v > INT32_MAX)) ||
                    (t->k == ST_SMALLINT && (v < INT16_MIN || v > INT16_MAX)) ||
                    (t->k == ST_TINYINT && (v < 0 || v > 255))) {
                    rc = tsql_fail(err, 8115, 16, 2, 1, "Arithmetic overflow error converting expression to data type %s.",
                                   t->k == ST_INT ? "int" : t->k == ST_SMALLINT ? "smallint" : "tinyint");
                    goto stmt_error;
                }
            }
            if ((rc = sim_read_value_ref(sv, t, &vals[i])) < 0) {
                rc = tsql_fail(err, 8114, 16, 5, 1, "Error converting data type to %s: %s.", "the column's type",
                               mcdc_error_last()->message);
                goto stmt_error;
            }
        }
        if (k->row(k->payload, vals, ncols)) { rc = MCDC_ERROR; goto done; }
        n++;
        if (k->cancelled && (n & 63) == 0 && k->cancelled(k->payload)) {
            s->cancelled = true;
            rc = 0;
            goto done;
        }
    }
    if (r != SQLITE_DONE) {
        rc = tsql_run_error(s, r, err);
        if (rc != TSQL_ESQL) goto done;
        goto stmt_error;
    }
    if (k->cancelled && k->cancelled(k->payload)) {
        s->cancelled = true;
        goto done;
    }
    rc = sess_done(s, MCDC_SIM_DONE_STMT, s->nocount ? 0 : MCDC_SIM_DONE_COUNT, CURCMD_SELECT, n);
    goto done;
stmt_error:
    err->abort_batch = false;
done:
    tsql_run_end(s);
    free(rc_cols);
    free(vals);
    return rc;
}

void tsql_run_begin(mcdc_sim_session *s, tsql_error *err)
{
    s->run_err = err;
}

void tsql_run_end(mcdc_sim_session *s)
{
    s->run_err = NULL;
}

int tsql_run_error(mcdc_sim_session *s, int sqlite_rc, tsql_error *err)
{
    if (err->number) { /* raised by one of our functions */
        err->abort_batch = false;
        return TSQL_ESQL;
    }
    if (sqlite_rc == SQLITE_NOMEM) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    const char *m = sqlite3_errmsg(s->sim->db);
    if (strstr(m, "integer overflow"))
        return tsql_fail(err, 8115, 16, 2, 1, "Arithmetic overflow error converting expression to data type bigint.");
    if (sqlite_rc == SQLITE_BUSY || sqlite_rc == SQLITE_LOCKED)
        return tsql_fail(err, 1222, 16, 56, 1, "Lock request time out period exceeded.");
    if (sqlite_rc == SQLITE_IOERR || sqlite_rc == SQLITE_CORRUPT)
        return sim__sqlite_error(s->sim, sqlite_rc, "reading");
    return tsql_fail(err, 50000, 16, 1, 1, "%s", m);
}
