/*
 * source/sim/tsql_select.c: SELECT statements and scalar expressions of a session.
 *
 * A SELECT is parsed (tsql_parse.c), typed and written as SQLite SQL over the views
 * (tsql_compile.c), prepared on the session's connection under an authorizer that refuses
 * writes, its literals and @variables bound in their types (sim_bind), and streamed
 * (tsql_stream). DECLARE/SET of a variable evaluate their expression the same way.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql_ast.h"
#include "source/sim/tsql_sys.h"

/* SELECT @v = expr, ... [FROM ...]: every row assigns the variables (the last one stays). */
static int assign_rows(mcdc_sim_session *s, tsql_select *sel, sqlite3_stmt *st, tsql_compiled *cc, int line, tsql_error *err)
{
    sess_var **vars = sim_arena_alloc(&s->arena, (size_t)(sel->nitems + 1) * sizeof *vars);
    if (!vars) return MCDC_ENOMEM;
    for (int i = 0; i < sel->nitems; i++) {
        const char *a = sel->items[i].alias;
        if (!a || a[0] != '@')
            return tsql_fail(err, 141, 15, 1, line, "A SELECT statement that assigns a value to a variable must not be "
                             "combined with data-retrieval operations.");
        if (!(vars[i] = sess_var_find(s, a, strlen(a))))
            return tsql_fail(err, 137, 15, 1, line, "Must declare the scalar variable \"%s\".", a);
    }
    int64_t n = 0;
    int r, rc = 0;
    tsql_run_begin(s, err);
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        for (int i = 0; i < sel->nitems && rc == 0; i++) {
            sim_val raw;
            if (sim_read_col(st, i, &cc->cols[i].rc.type, &s->arena, &raw) < 0 ||
                sim_convert(&s->arena, &vars[i]->type, &raw, &vars[i]->value, NULL) < 0)
                rc = tsql_from_mcdc_error(err, line);
        }
        if (rc) break;
        n++;
    }
    if (rc == 0 && r != SQLITE_DONE) rc = tsql_run_error(s, r, err);
    tsql_run_end(s);
    if (rc) return rc;
    return sess_done(s, MCDC_SIM_DONE_STMT, s->nocount ? 0 : MCDC_SIM_DONE_COUNT, CURCMD_SELECT, n);
}

int tsql_run_select(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err)
{
    tsql_select *sel;
    tsql_compiled cc;
    int k = 0, rc;
    tsql_tok *span = sim_arena_alloc(&s->arena, (size_t)(n + 1) * sizeof *span);
    if (!span) return MCDC_ENOMEM;
    memcpy(span, t, (size_t)n * sizeof *span);
    span[n] = t[n];
    span[n].k = TK_EOF; /* the statement ends here */
    span[n].vn = span[n].n = 0;
    if ((rc = tsql_parse_select(&s->arena, span, n, &k, &sel, err)) != 0) return rc;
    if (k < n) return tsql_syntax(err, &span[k]);
    if ((rc = tsql_compile(s, sel, &cc, err)) != 0) {
        tsql_compiled_dispose(&cc);
        return rc;
    }
    sqlite3_stmt *st = NULL;
    int slot, r = sess_stmt_get(s, cc.sql.ptr, &st, &slot); /* prepared before when the text is the same */
    if (r != SQLITE_OK) {
        rc = tsql_fail(err, 50000, 16, 1, t->line, "internal: %s", sqlite3_errmsg(s->sim->db));
        tsql_compiled_dispose(&cc);
        return rc;
    }
    for (int i = 0; i < cc.nbinds; i++) sim_bind(st, i + 1, &cc.btypes[i], &cc.binds[i]);
    rc = sel->assigns ? assign_rows(s, sel, st, &cc, t->line, err) : tsql_stream(s, st, cc.cols, cc.ncols, err);
    sess_stmt_put(s, st, slot);
    tsql_compiled_dispose(&cc);
    return rc;
}

int tsql_assign(mcdc_sim_session *s, const char *name, const tsql_tok *t, int from, int to, tsql_error *err)
{
    sess_var *v = sess_var_find(s, name, strlen(name));
    if (!v) return tsql_fail(err, 137, 15, 1, t[from].line, "Must declare the scalar variable \"%s\".", name);
    if (from >= to) return tsql_syntax(err, &t[to]);
    int n = to - from, k = 0, rc;
    tsql_tok *span = sim_arena_alloc(&s->arena, (size_t)(n + 1) * sizeof *span);
    if (!span) return MCDC_ENOMEM;
    memcpy(span, &t[from], (size_t)n * sizeof *span);
    span[n] = t[to];
    span[n].k = TK_EOF;
    tsql_select *sel = sim_arena_alloc(&s->arena, sizeof *sel);
    tsql_item *it = sim_arena_alloc(&s->arena, sizeof *it);
    if (!sel || !it) return MCDC_ENOMEM;
    if ((rc = tsql_parse_expr(&s->arena, span, n, &k, &it->e, err)) != 0) return rc;
    if (k < n) return tsql_syntax(err, &span[k]);
    sel->items = it;
    sel->nitems = 1;
    sel->tok = span;
    tsql_compiled cc;
    if ((rc = tsql_compile(s, sel, &cc, err)) != 0) { tsql_compiled_dispose(&cc); return rc; }
    const sim_type *ft = &cc.cols[0].rc.type;
    bool fs = sim_type_is_string(ft), tb = v->type.k == ST_BINARY || v->type.k == ST_VARBINARY ||
                                          v->type.k == ST_IMAGE || v->type.k == ST_ROWVERSION;
    if (fs && tb) {
        char a[64], b[64];
        sim_type_format(a, sizeof a, ft);
        sim_type_format(b, sizeof b, &v->type);
        *strchr(a, '(') = 0;
        if (strchr(b, '(')) *strchr(b, '(') = 0;
        tsql_compiled_dispose(&cc);
        return tsql_fail(err, 257, 16, 3, t[from].line, "Implicit conversion from data type %s to %s is not allowed. "
                         "Use the CONVERT function to run this query.", a, b);
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->sim->db, cc.sql.ptr, -1, &st, NULL) != SQLITE_OK) {
        rc = tsql_fail(err, 50000, 16, 1, t[from].line, "internal: %s", sqlite3_errmsg(s->sim->db));
        tsql_compiled_dispose(&cc);
        return rc;
    }
    for (int i = 0; i < cc.nbinds; i++) sim_bind(st, i + 1, &cc.btypes[i], &cc.binds[i]);
    tsql_run_begin(s, err);
    int r = sqlite3_step(st);
    sim_val raw = {0};
    if (r == SQLITE_ROW && sim_read_col(st, 0, ft, &s->arena, &raw) < 0) rc = tsql_from_mcdc_error(err, t[from].line);
    else if (r != SQLITE_ROW && r != SQLITE_DONE) rc = tsql_run_error(s, r, err);
    tsql_run_end(s);
    sqlite3_finalize(st);
    sim_type vt = v->type;
    tsql_compiled_dispose(&cc);
    if (rc) return rc;
    if (sim_convert(&s->arena, &vt, &raw, &v->value, NULL) < 0) return tsql_from_mcdc_error(err, t[from].line);
    return 0;
}
