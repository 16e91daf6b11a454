/*
 * source/sim/tsql_select.c: SELECT statements and scalar expressions of a session.
 *
 * A SELECT is rewritten to the simulator's views (sim__query_translate), prepared on the
 * session's connection under an authorizer that refuses writes, its @variables bound in
 * their declared types (sim_bind), and streamed (tsql_stream). Columns read from a table
 * column keep that column's SQL Server type; computed ones take the type of their first
 * value (int, bigint, float, nvarchar, varbinary).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql_engine.h"

static int sqlite_compile_error(mcdc_sim_session *s, const tsql_tok *t, tsql_error *err)
{
    const char *m = sqlite3_errmsg(s->sim->db);
    char name[300];
    if (sscanf(m, "no such table: %299s", name) == 1)
        return tsql_fail(err, 208, 16, 1, t->line, "Invalid object name '%s'.", name);
    if (sscanf(m, "no such column: %299s", name) == 1)
        return tsql_fail(err, 207, 16, 1, t->line, "Invalid column name '%s'.", name);
    if (sscanf(m, "near \"%299[^\"]\": syntax error", name) == 1)
        return tsql_fail(err, 102, 15, 1, t->line, "Incorrect syntax near '%s'.", name);
    if (sscanf(m, "no such function: %299s", name) == 1)
        return tsql_fail(err, 195, 15, 10, t->line, "'%s' is not a recognized built-in function name.", name);
    return tsql_fail(err, 102, 15, 1, t->line, "Incorrect syntax near '%.*s'.", (int)t->n, t->p);
}

/* Prepare the text of t[0..n) with its variables bound. */
static int prepare(mcdc_sim_session *s, const char *prefix, const tsql_tok *t, int n, sqlite3_stmt **out, tsql_error *err)
{
    mcdc_buf q = MCDC_BUF_INIT(1 << 24), src = MCDC_BUF_INIT(1 << 24);
    *out = NULL;
    int rc = mcdc_buf_puts(&src, prefix);
    for (int i = 0; rc == 0 && i < n; i++) { /* N'..' is SQLite's '..' */
        const char *p = t[i].p + (t[i].k == TK_STR && t[i].wide ? 1 : 0);
        rc = mcdc_buf_put(&src, p, (size_t)(t[i + 1].p - p));
    }
    if (rc == 0) rc = mcdc_buf_putc(&src, '\0');
    if (rc == 0) rc = sim__query_translate(s->sim, src.ptr, &q);
    if (rc == 0) rc = mcdc_buf_putc(&q, '\0');
    if (rc < 0) goto done;
    sqlite3_set_authorizer(s->sim->db, sim__deny_writes, NULL);
    int r = sqlite3_prepare_v2(s->sim->db, q.ptr, -1, out, NULL);
    sqlite3_set_authorizer(s->sim->db, NULL, NULL);
    if (r != SQLITE_OK || !*out) {
        rc = r == SQLITE_AUTH ? tsql_fail(err, 229, 14, 5, t->line, "The statement writes; only SELECT reads here.")
                              : sqlite_compile_error(s, t, err);
        sqlite3_finalize(*out);
        *out = NULL;
        goto done;
    }
    for (int i = 1; i <= sqlite3_bind_parameter_count(*out); i++) {
        const char *name = sqlite3_bind_parameter_name(*out, i);
        sess_var *v = name ? sess_var_find(s, name, strlen(name)) : NULL;
        if (!v) {
            rc = tsql_fail(err, 137, 15, 2, t->line, "Must declare the scalar variable \"%s\".", name ? name : "?");
            sqlite3_finalize(*out);
            *out = NULL;
            goto done;
        }
        sim_bind(*out, i, &v->type, &v->value);
    }
done:
    mcdc_buf_dispose(&q);
    mcdc_buf_dispose(&src);
    return rc;
}

/* Column types: from the table column read, else from the first row's value. */
static int column_types(mcdc_sim_session *s, sqlite3_stmt *st, tsql_rcol *cols, int n)
{
    bool need_row = false;
    for (int i = 0; i < n; i++) {
        bool bin;
        memset(&cols[i], 0, sizeof cols[i]);
        const char *name = sqlite3_column_name(st, i);
        cols[i].rc.name = sim_arena_strndup(&s->arena, name, strlen(name));
        cols[i].rc.nullable = true;
        if (sim__origin_type(s->sim, st, i, &cols[i].rc.type, &bin)) {
            if (bin) {
                cols[i].rc.type.k = ST_BINARY;
                cols[i].rc.type.len = 10;
                if (!strcmp(sqlite3_column_origin_name(st, i), "__$update_mask")) {
                    cols[i].rc.type.k = ST_VARBINARY;
                    cols[i].rc.type.len = 128;
                }
            }
        } else {
            cols[i].rc.type.k = 0;
            need_row = true;
        }
    }
    if (!need_row) return 0;
    int r = sqlite3_step(st);
    for (int i = 0; i < n; i++) {
        if (cols[i].rc.type.k) continue;
        int ct = r == SQLITE_ROW ? sqlite3_column_type(st, i) : SQLITE_NULL;
        sim_type *ty = &cols[i].rc.type;
        if (ct == SQLITE_INTEGER) {
            int64_t v = sqlite3_column_int64(st, i);
            ty->k = v >= INT32_MIN && v <= INT32_MAX ? ST_INT : ST_BIGINT;
        } else if (ct == SQLITE_FLOAT) {
            ty->k = ST_FLOAT;
        } else if (ct == SQLITE_BLOB) {
            ty->k = ST_VARBINARY;
            ty->len = 8000;
        } else if (ct == SQLITE_TEXT) {
            ty->k = ST_NVARCHAR;
            ty->len = 4000;
        } else {
            ty->k = ST_INT;
        }
    }
    sqlite3_reset(st);
    return 0;
}

int tsql_run_select(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err)
{
    sqlite3_stmt *st;
    int rc = prepare(s, "", t, n, &st, err);
    if (rc != 0) return rc;
    int nc = sqlite3_column_count(st);
    tsql_rcol *cols = sim_arena_alloc(&s->arena, ((size_t)nc + 1) * sizeof *cols);
    if (!cols) { sqlite3_finalize(st); return MCDC_ENOMEM; }
    if ((rc = column_types(s, st, cols, nc)) == 0) rc = tsql_stream(s, st, cols, nc, err);
    sqlite3_finalize(st);
    return rc;
}

int tsql_assign(mcdc_sim_session *s, const char *name, const tsql_tok *t, int from, int to, tsql_error *err)
{
    sess_var *v = sess_var_find(s, name, strlen(name));
    if (!v) return tsql_fail(err, 137, 15, 1, t[from].line, "Must declare the scalar variable \"%s\".", name);
    if (from >= to) return tsql_syntax(err, &t[to]);
    sqlite3_stmt *st;
    tsql_tok *span = sim_arena_alloc(&s->arena, (size_t)(to - from + 1) * sizeof *span);
    if (!span) return MCDC_ENOMEM;
    memcpy(span, &t[from], (size_t)(to - from + 1) * sizeof *span);
    int rc = prepare(s, "SELECT ", span, to - from, &st, err);
    if (rc != 0) return rc;
    tsql_rcol col;
    if ((rc = column_types(s, st, &col, 1)) < 0) { sqlite3_finalize(st); return rc; }
    int r = sqlite3_step(st);
    sim_val raw = {0};
    if (r == SQLITE_ROW && (rc = sim_read_col(st, 0, &col.rc.type, &s->arena, &raw)) < 0) {
        sqlite3_finalize(st);
        return tsql_from_mcdc_error(err, t[from].line);
    }
    sqlite3_finalize(st);
    if (r != SQLITE_ROW && r != SQLITE_DONE) return tsql_fail(err, 50000, 16, 1, t[from].line, "%s", sqlite3_errmsg(s->sim->db));
    if (sim_convert(&s->arena, &v->type, &raw, &v->value, NULL) < 0) return tsql_from_mcdc_error(err, t[from].line);
    return 0;
}

int tsql_run_exec(mcdc_sim_session *s, const tsql_tok *t, int n, bool implicit, tsql_error *err)
{
    (void)s;
    int k = implicit ? 0 : 1;
    if (k < n && t[k].k == TK_VAR && k + 1 < n && tsql_tok_is(&t[k + 1], "=")) k += 2; /* EXEC @rc = proc */
    if (k >= n || (t[k].k != TK_ID && t[k].k != TK_QID)) return tsql_syntax(err, &t[k]);
    const char *start = t[k].p;
    int e = k;
    while (e + 2 <= n && tsql_tok_is(&t[e + 1], ".") && (t[e + 2].k == TK_ID || t[e + 2].k == TK_QID)) e += 2;
    return tsql_fail(err, 2812, 16, 62, t[k].line, "Could not find stored procedure '%.*s'.",
                     (int)(t[e].p + t[e].n - start), start);
}

int tsql_call_proc(mcdc_sim_session *s, const char *proc, const mcdc_sim_param *params, int nparams, tsql_error *err)
{
    (void)params;
    (void)nparams;
    s->proc_status = 0;
    return tsql_fail(err, 2812, 16, 62, 1, "Could not find stored procedure '%s'.", proc);
}
