/*
 * source/sim/tsql_ast.h: the tree of a parsed SELECT (tsql_parse.c builds it, tsql_compile.c
 * types it and writes SQLite SQL from it). Everything lives in the session's arena.
 */
#ifndef MCDC_SIM_TSQL_AST_H
#define MCDC_SIM_TSQL_AST_H

#include "source/sim/tsql_engine.h"

typedef struct tsql_select tsql_select;
typedef struct tsql_expr tsql_expr;

typedef enum {
    X_LIT = 1,  /* lit, lit_type */
    X_NULL,
    X_COL,      /* parts[0..nparts): [schema.]table.column or column */
    X_VAR,      /* name: @v */
    X_GLOBAL,   /* name: @@SPID */
    X_NEG, X_BITNOT,
    X_ARITH,    /* op: + - * / % & | ^ */
    X_CMP,      /* op: = <> < <= > >= */
    X_AND, X_OR, X_NOT,
    X_ISNULL,   /* a IS [NOT] NULL */
    X_BETWEEN,  /* a [NOT] BETWEEN b AND c */
    X_IN,       /* a [NOT] IN (args) or IN (sub) */
    X_LIKE,     /* a [NOT] LIKE b */
    X_EXISTS,   /* sub */
    X_SUBQ,     /* (sub): a scalar subquery */
    X_CASE,     /* a: operand or NULL; args: when, then, when, then...; c: ELSE or NULL */
    X_CAST,     /* a AS type; CONVERT(type, a[, b style]): is_convert */
    X_FUNC,     /* name (as written, schema included: "sys.fn_cdc_get_max_lsn"), args; star: COUNT(*) */
    X_COLLATE,  /* a COLLATE name */
    X_STAR      /* * or t.* in a select list (parts) */
} tsql_xkind;

typedef struct tsql_order {
    tsql_expr *e;
    bool       desc;
} tsql_order;

struct tsql_expr {
    tsql_xkind   k;
    const tsql_tok *tok;    /* where it starts, for messages */
    char         op[3];
    tsql_expr   *a, *b, *c;
    tsql_expr  **args;
    int          nargs;
    const char  *parts[4];
    int          nparts;
    const char  *name;
    bool         neg;       /* NOT BETWEEN / NOT IN / IS NOT NULL / NOT LIKE */
    bool         star;      /* COUNT(*) */
    bool         distinct;  /* COUNT(DISTINCT x) */
    bool         is_convert;
    sim_val      lit;
    sim_type     type;      /* X_LIT: its type; X_CAST: the target */
    tsql_select *sub;
    /* OVER (PARTITION BY ... ORDER BY ...) */
    bool         over;
    tsql_expr  **part;
    int          npart;
    tsql_order  *ord;
    int          nord;
};

typedef struct tsql_item {
    tsql_expr  *e;
    const char *alias;  /* NULL when not given */
} tsql_item;

typedef enum { J_FIRST = 0, J_INNER, J_LEFT, J_RIGHT, J_FULL, J_CROSS, J_CROSS_APPLY, J_OUTER_APPLY } tsql_join;

typedef struct tsql_tref {
    tsql_join    join;
    const char  *parts[4];  /* a named object: [db.][schema.]name */
    int          nparts;
    tsql_expr  **fargs;     /* a table-valued function's arguments (cdc.fn_cdc_get_all_changes_<ci>) */
    int          nfargs;
    bool         is_func;
    tsql_select *sub;       /* a derived table */
    tsql_expr ***rows;      /* (VALUES (...), (...)) AS v(a, b) */
    int          nrows, nvals;
    const char  *alias;
    const char **colnames;  /* AS v(a, b) */
    int          ncolnames;
    tsql_expr   *on;
    const tsql_tok *tok;
} tsql_tref;

struct tsql_select {
    bool         distinct;
    tsql_expr   *top;       /* TOP (n) or TOP n */
    bool         top_percent;
    tsql_item   *items;
    int          nitems;
    tsql_tref   *from;
    int          nfrom;
    tsql_expr   *where;
    tsql_expr  **group;
    int          ngroup;
    tsql_expr   *having;
    tsql_order  *order;
    int          norder;
    tsql_expr   *offset, *fetch;
    tsql_select *union_all; /* the next SELECT of a UNION ALL chain (ORDER BY on the last applies to all) */
    const tsql_tok *tok;
    const char  *into_var;  /* SELECT @v = expr: the items assign variables (alias holds @v) */
    bool         assigns;
};

/** Parse a SELECT (or a parenthesised one, UNION ALL chains) from t[*k..n). */
int tsql_parse_select(sim_arena *a, const tsql_tok *t, int n, int *k, tsql_select **out, tsql_error *err);
/** Parse one expression from t[*k..n). */
int tsql_parse_expr(sim_arena *a, const tsql_tok *t, int n, int *k, tsql_expr **out, tsql_error *err);

/** A compiled SELECT: SQLite text, the values to bind, the result columns. */
typedef struct tsql_compiled {
    mcdc_buf     sql;
    sim_val     *binds;   /* ?1..?n */
    sim_type    *btypes;
    int          nbinds, cap_binds;
    tsql_rcol   *cols;
    int          ncols;
} tsql_compiled;

/** Type @p sel with SQL Server's rules and write it as SQLite SQL over the views.
 *  @return 0; TSQL_ESQL (207, 208, 229, 257, 1033, ...); negative. */
int  tsql_compile(mcdc_sim_session *s, tsql_select *sel, tsql_compiled *out, tsql_error *err);
void tsql_compiled_dispose(tsql_compiled *c);

#endif
