/*
 * source/sim/tsql_engine.h: the statement engine's entry points for the session
 * (session_run.c, session_rpc.c): run one statement, stream a result set, variables.
 */
#ifndef MCDC_SIM_TSQL_ENGINE_H
#define MCDC_SIM_TSQL_ENGINE_H

#include "source/sim/session_int.h"

/** Run the statement toks[i..j) of the running batch. @return 0; TSQL_ESQL with @p err;
 *  negative for a failure of the session. */
int tsql_run_statement(mcdc_sim_session *s, const tsql_tok *toks, int i, int j, tsql_error *err);

/** Parse the statement toks[i..j) without running it (a batch is parsed whole first, so a
 *  syntax error anywhere runs nothing). @return 0; TSQL_ESQL; negative. */
int tsql_check_syntax(mcdc_sim_session *s, const tsql_tok *toks, int i, int j, tsql_error *err);

/** A result column as the engine declares it. */
typedef struct tsql_rcol {
    mcdc_sim_rcol rc;      /* name, SQL Server type, nullability */
    bool          check_int; /* int result: values outside int's range are error 8115 */
} tsql_rcol;

/** Stream the rows of @p st (already bound) as a result set of @p cols, values in the
 *  simulator's storage form of each column's type, then a DONE with the row count.
 *  @return 0; TSQL_ESQL (8115, a conversion error raised by a function); negative. */
int tsql_stream(mcdc_sim_session *s, sqlite3_stmt *st, const tsql_rcol *cols, int ncols, tsql_error *err);

/** Around a statement's steps: SQL Server errors raised inside SQLite functions land in
 *  @p err; tsql_run_error turns a failed step into TSQL_ESQL (that error, or a generic one). */
void tsql_run_begin(mcdc_sim_session *s, tsql_error *err);
void tsql_run_end(mcdc_sim_session *s);
int  tsql_run_error(mcdc_sim_session *s, int sqlite_rc, tsql_error *err);

/* Statements by kind: toks t[0..n) of one statement. */
int tsql_run_select(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err);
int tsql_run_exec(mcdc_sim_session *s, const tsql_tok *t, int n, bool implicit, tsql_error *err);
int tsql_run_declare(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err);
int tsql_run_set_var(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err);
/** Replace @variables in DML text by their values as literals (the DML path parses text). */
int tsql_substitute_vars(mcdc_sim_session *s, char **sql, tsql_error *err);
/** 102 "Incorrect syntax near '<token>'." */
int tsql_syntax(tsql_error *err, const tsql_tok *t);

/** Evaluate the expression t[from..to) and store it, converted, in variable @p name. */
int tsql_assign(mcdc_sim_session *s, const char *name, const tsql_tok *t, int from, int to, tsql_error *err);
/** A literal token's value and SQL Server type (@p neg: a '-' before it). @return 0; -1 when
 *  the token is not a literal; MCDC_ENOMEM. */
int tsql_literal(sim_arena *a, const tsql_tok *t, bool neg, sim_val *v, sim_type *ty);
/** A type written at t[*k..] ("nvarchar(40)", "decimal(12, 2)", "sysname"); *k moves past it. */
int tsql_parse_type(const tsql_tok *t, int n, int *k, sim_type *out, tsql_error *err);
/** The simulator's "Msg NNN: text" error (mcdc_error_last) as SQL Server's. */
int tsql_from_mcdc_error(tsql_error *err, int line);

/** Call procedure @p proc ("sys.sp_cdc_help_change_data_capture") with RPC parameters;
 *  sets s->proc_status. @return 0; TSQL_ESQL (2812 for an unknown procedure); negative. */
int tsql_call_proc(mcdc_sim_session *s, const char *proc, const mcdc_sim_param *params, int nparams, tsql_error *err);

/** Define (or replace) a variable of the batch. @return 0; TSQL_ESQL (134: declared twice). */
int sess_var_define(mcdc_sim_session *s, const sess_var *v, tsql_error *err);
/** The variable named @p name (with '@', case-insensitive), or NULL. */
sess_var *sess_var_find(mcdc_sim_session *s, const char *name, size_t n);

#endif
