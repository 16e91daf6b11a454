/*
 * source/sim/tsql.h: the T-SQL engine behind sim serve's sessions (session.h): tokens, the
 * errors SQL Server reports, the statement tree, and the calls between its files:
 *
 *   tsql_lex.c       text -> tokens
 *   tsql_parse.c     tokens -> a SELECT's tree (tsql_ast.h); syntax errors 102 naming the token
 *   tsql_compile.c   the tree typed with SQL Server's rules (207, 208, 229, 257, 1033, 8120, ...)
 *                    and written as SQLite SQL over the simulator's store
 *   tsql_func.c      SQL Server's conversions and functions as SQLite functions
 *   tsql_sum.c       SUM of decimals: an exact SQLite aggregate, 8115 past 38 digits
 *   tsql_sys.c       system objects (sys.columns, sys.databases, ...), CDC and server functions
 *   tsql_proc.c      system procedures (sp_cdc_*, sp_spaceused) and EXEC
 *   tsql_stmt.c      one statement by its first keyword: SET, transactions, DML, USE, PRINT
 *   tsql_select.c    SELECT statements and variable assignment through the compiler
 *   tsql_vars.c      variables, literals with SQL Server's types, types written in T-SQL
 *   session*.c       batches and RPCs: statements in turn, results to the sink (session_int.h)
 *   login.c          logins and grants (login.h)
 * Design: docs/decisions/0011-tsql-engine-over-sqlite.md.
 */
#ifndef MCDC_SIM_TSQL_H
#define MCDC_SIM_TSQL_H

#include <stdarg.h>

#include "source/sim/session.h"
#include "source/sim/sim_int.h"

/* ---- tokens ------------------------------------------------------------------------------ */

typedef enum { TK_EOF, TK_ID, TK_QID, TK_VAR, TK_GLOBAL, TK_STR, TK_INT, TK_DEC, TK_FLOAT, TK_HEX, TK_OP } tsql_tok_kind;

typedef struct tsql_tok {
    tsql_tok_kind k;
    const char   *p;    /* start in the batch text */
    size_t        n;    /* length in the text */
    const char   *v;    /* the value: identifier unquoted, string unquoted (arena), digits, hex digits */
    size_t        vn;
    bool          wide; /* N'...' */
    int           line; /* 1-based line in the batch */
} tsql_tok;

/* ---- errors ------------------------------------------------------------------------------ */

/** A SQL Server error for the client (an ERROR token), not a C failure. */
typedef struct tsql_error {
    int32_t number;
    uint8_t state, cls;
    int     line;
    char    text[1024];
    bool    abort_batch; /* compile errors end the batch; run-time ones only the statement */
    char    proc[130];   /* the procedure that raised it ("sp_cdc_get_ddl_history"), or "" */
} tsql_error;

/** The return code of a call that recorded a tsql_error (positive: not a C failure). */
#define TSQL_ESQL 1

/** Record an error and return TSQL_ESQL. */
int tsql_fail(tsql_error *e, int number, int cls, int state, int line, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/** Tokens of @p sql (ending with one TK_EOF) in the arena. @return 0; TSQL_ESQL (105, 113). */
int  tsql_lex(sim_arena *a, const char *sql, size_t len, tsql_tok **out, int *n_out, tsql_error *err);
/** True when @p t is the keyword or operator @p word (keywords case-insensitive). */
bool tsql_tok_is(const tsql_tok *t, const char *word);

#endif
