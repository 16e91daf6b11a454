/*
 * source/sim/tsql_sys.h: system objects, functions and @@globals of the T-SQL engine
 * (tsql_sys.c), compiled through tsql_compile.c's context.
 */
#ifndef MCDC_SIM_TSQL_SYS_H
#define MCDC_SIM_TSQL_SYS_H

#include "source/sim/tsql_ast.h"

typedef struct C tsql_compile_ctx;

/** A typed expression: SQL Server type and the SQLite text computing it. */
typedef struct tsql_vcx {
    sim_type    t;
    bool        nullable;
    bool        is_variant;
    const char *sql;
    const char *name;
    bool        is_agg;
    bool        binary_coll; /* COLLATE ..._CS_.. or _BIN: compared as written */
} tsql_vcx;

/** A column of a system object, as documented. */
typedef struct tsql_vcol {
    const char *name;
    sim_type    t;
    bool        nullable;
} tsql_vcol;

/** sys.<name>: its SQLite text (a subquery) and columns; -1 when not a system object. */
int tsql_sys_object(mcdc_sim_session *s, tsql_compile_ctx *cc, const char *schema, const char *name, const char **from_sql,
                    const tsql_vcol **cols, int *ncols, tsql_error *err);
/** A function outside the core set (CDC, SERVERPROPERTY, times, OBJECT_ID, ...); -1 when unknown. */
int tsql_sys_function(mcdc_sim_session *s, tsql_compile_ctx *cc, tsql_expr *e, tsql_vcx *out, tsql_error *err);
/** @@SPID, @@VERSION, ... */
int tsql_sys_global(mcdc_sim_session *s, tsql_compile_ctx *cc, const char *name, tsql_vcx *out, tsql_error *err, int line);

/** sys.columns' system_type_id, max_length, precision and scale of a type. */
void tsql_sys_type_info(const sim_type *t, int *sys_id, int *maxlen, int *prec, int *scale);

/* The documented columns each system object and procedure answers with (tests compare
 * them with Microsoft's documentation). */
extern const tsql_vcol tsql_sys_databases_cols[], tsql_sys_wait_stats_cols[], tsql_sys_columns_cols[];
extern const int tsql_sys_databases_ncols, tsql_sys_wait_stats_ncols, tsql_sys_columns_ncols;
extern const tsql_vcol tsql_proc_help_cols[], tsql_proc_captured_cols[], tsql_proc_ddl_cols[], tsql_proc_spaceused_cols[];
extern const int tsql_proc_help_ncols, tsql_proc_captured_ncols, tsql_proc_ddl_ncols, tsql_proc_spaceused_ncols;

/* from tsql_compile.c */
int   tsql_compile_vtab(tsql_compile_ctx *cc, const tsql_vcol *cols, int ncols, const sim_val *rows, int nrows, const char **sql);
int   tsql_compile_arg(tsql_compile_ctx *cc, tsql_expr *e, const sim_type *want, tsql_vcx *out);
int   tsql_compile_bind(tsql_compile_ctx *cc, const sim_type *t, const sim_val *v, const char **sql);
char *tsql_compile_fmt(tsql_compile_ctx *cc, const char *f, const char *a, const char *b);
/* from tsql_func.c */
bool  tsql_datepart_known(const char *part);
int   tsql_register_functions(mcdc_sim_session *s);
/* from tsql_sum.c */
int   tsql_register_sum(mcdc_sim_session *s);

#endif
