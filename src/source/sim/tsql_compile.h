/*
 * source/sim/tsql_compile.h: what the compiler's files share (tsql_compile.c: names, types,
 * FROM and SELECT; tsql_builtin.c: the built-in functions): the compile context, scopes of
 * names and the typed-expression helpers. Internal to those two files.
 */
#ifndef MCDC_SIM_TSQL_COMPILE_H
#define MCDC_SIM_TSQL_COMPILE_H

#include "source/sim/tsql_sys.h"

typedef struct ccol {
    const char *name;
    sim_type    t;
    bool        nullable;
    const char *sql;     /* how the column is referenced */
} ccol;

typedef struct crel {
    const char *alias;   /* the name that qualifies its columns */
    const char *schema, *object;
    ccol       *cols;
    int         ncols;
    int64_t     ct_id;     /* a change table (sim_ct_<id>): rowid order is read order (S1); else 0 */
    const char *rowid_sql; /* its rowid, "t1.\"__rowid\"" */
    const char *view_sql;  /* a change table's FROM SQL, with the view's bound still to place at view_at */
    size_t      view_at;
    bool        outer_null;   /* on the side of an outer join that may be all NULL */
    bool        view_bounded; /* the WHERE's rowid upper bound holds the view's (range_seek) */
} crel;

typedef struct scope {
    crel         *rels;
    int           nrels;
    struct scope *outer;
} scope;

typedef struct C {
    mcdc_sim_session *s;
    tsql_compiled    *out;
    tsql_error       *err;
    int               nalias;
} C;

typedef tsql_vcx cx;

/* Text in the session's arena (NULL when out of memory). */
char       *tc_fmt(C *c, const char *f, ...) __attribute__((format(printf, 2, 3)));
/* Convert @p x to type @p to, implicitly (257 for string to binary) unless @p explicit_. */
int         tc_conv(C *c, cx *x, const sim_type *to, bool explicit_, int line);
/* The common type of two (SQL Server's precedence; decimals and lengths widened). */
sim_type    tc_common(const sim_type *a, const sim_type *b);
/* An operand of a comparison or ordering: strings under the default collation. */
const char *tc_cmp_sql(C *c, const cx *x);
/* Type and compile an expression in scope @p sc. */
int         tc_expr(C *c, scope *sc, tsql_expr *e, cx *out);
/* A built-in function call (tsql_builtin.c). */
int         tc_func(C *c, scope *sc, tsql_expr *e, cx *out);
const char *tc_tname(C *c, const sim_type *t); /* "decimal(12,2)" */
const char *tc_kname(sim_tkind k);             /* "decimal" (thread-local, two at a time) */
bool        tc_is_int(sim_tkind k);
bool        tc_is_str(sim_tkind k);
int         tc_line_of(const tsql_expr *e);

#endif
