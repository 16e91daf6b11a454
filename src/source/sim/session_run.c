/*
 * source/sim/session_run.c: the statements of a batch, one after another.
 *
 * The batch is lexed and parsed whole (a lexical or syntax error ends it before anything
 * runs) and split into statements: a ';' or, as SQL Server allows, the keyword that begins
 * the next statement.
 * A compile error (syntax, an unknown name) ends the batch; a run-time error ends only its
 * statement, and the next one runs (SQL Server's default, XACT_ABORT OFF).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/session_int.h"
#include "source/sim/tsql_engine.h"

static const char *const stmt_starts[] = {"SELECT", "INSERT", "UPDATE", "DELETE", "SET", "DECLARE", "EXEC", "EXECUTE",
                                          "IF", "BEGIN", "COMMIT", "ROLLBACK", "PRINT", "USE", "WITH", "WHILE",
                                          "RETURN", "MERGE", "TRUNCATE", "CREATE", "DROP", "ALTER", "GRANT", NULL};

static bool starts_stmt(const tsql_tok *t)
{
    if (t->k != TK_ID) return false;
    for (int i = 0; stmt_starts[i]; i++)
        if (tsql_tok_is(t, stmt_starts[i])) return true;
    return false;
}

/* The end (exclusive) of the statement beginning at toks[i]. */
static int stmt_end(const tsql_tok *toks, int n, int i)
{
    int depth = 0, first = i;
    bool is_update = tsql_tok_is(&toks[i], "UPDATE"), seen_set = false;
    bool is_insert = tsql_tok_is(&toks[i], "INSERT");
    bool is_with = tsql_tok_is(&toks[i], "WITH");
    bool is_begin = tsql_tok_is(&toks[i], "BEGIN") && (tsql_tok_is(&toks[i + 1], "TRAN") ||
                                                       tsql_tok_is(&toks[i + 1], "TRANSACTION"));
    bool is_if = tsql_tok_is(&toks[i], "IF");
    int body = 0; /* IF: statements still to take as its branches */
    for (i++; i < n && toks[i].k != TK_EOF; i++) {
        const tsql_tok *t = &toks[i];
        if (t->k == TK_OP && t->vn == 1 && t->v[0] == '(') { depth++; continue; }
        if (t->k == TK_OP && t->vn == 1 && t->v[0] == ')') { if (depth > 0) depth--; continue; }
        if (depth > 0) continue;
        if (t->k == TK_OP && t->vn == 1 && t->v[0] == ';') return i;
        if (is_if) {
            /* IF cond stmt [ELSE stmt]: the condition ends where a statement begins */
            if (starts_stmt(t) && body == 0) {
                int e = stmt_end(toks, n, i);
                i = e - 1;
                if (toks[e].k == TK_OP && toks[e].v[0] == ';' && tsql_tok_is(&toks[e + 1], "ELSE")) i = e;
                if (tsql_tok_is(&toks[i + 1], "ELSE")) {
                    int f = stmt_end(toks, n, i + 2);
                    return f;
                }
                return e;
            }
            continue;
        }
        if (tsql_tok_is(t, "VALUES")) is_insert = false; /* INSERT ... VALUES (...) SELECT: a new statement */
        if (!starts_stmt(t)) continue;
        const tsql_tok *prev = &toks[i - 1];
        if (tsql_tok_is(t, "SELECT") && (tsql_tok_is(prev, "UNION") || tsql_tok_is(prev, "ALL") ||
                                         tsql_tok_is(prev, "EXCEPT") || tsql_tok_is(prev, "INTERSECT") ||
                                         is_insert || is_with))
            continue;
        if (tsql_tok_is(t, "SET") && is_update && !seen_set) { seen_set = true; continue; }
        if ((tsql_tok_is(t, "EXEC") || tsql_tok_is(t, "EXECUTE") || tsql_tok_is(t, "UPDATE") ||
             tsql_tok_is(t, "DELETE") || tsql_tok_is(t, "INSERT") || tsql_tok_is(t, "SELECT")) &&
            is_with && i > first)
        {
            is_with = false; /* WITH ... AS (...) SELECT: the CTE's statement */
            continue;
        }
        if (is_begin && i == first + 1) continue;
        return i;
    }
    return i;
}

static int run_stmt(mcdc_sim_session *s, const tsql_tok *toks, int i, int j, const char *sql, tsql_error *err)
{
    (void)sql;
    return tsql_run_statement(s, toks, i, j, err);
}

int sess_run_text(mcdc_sim_session *s, const char *sql, size_t len, const sess_var *vars, int n_vars)
{
    tsql_tok *toks;
    int n, rc;
    tsql_error err = {0};
    for (int k = 0; k < n_vars; k++)
        if ((rc = sess_var_define(s, &vars[k], &err)) != 0) goto sqlerr;
    rc = tsql_lex(&s->arena, sql, len, &toks, &n, &err);
    if (rc < 0) return rc;
    if (rc == TSQL_ESQL) goto sqlerr;
    /* the whole batch is parsed before anything runs */
    for (int i = 0; i < n && toks[i].k != TK_EOF;) {
        if (toks[i].k == TK_OP && toks[i].v[0] == ';') { i++; continue; }
        int j = stmt_end(toks, n, i);
        if ((rc = tsql_check_syntax(s, toks, i, j, &err)) < 0) return rc;
        if (rc == TSQL_ESQL) goto sqlerr;
        i = j;
    }
    for (int i = 0; i < n && toks[i].k != TK_EOF;) {
        if (toks[i].k == TK_OP && toks[i].v[0] == ';') { i++; continue; }
        int j = stmt_end(toks, n, i);
        memset(&err, 0, sizeof err);
        rc = run_stmt(s, toks, i, j, sql, &err);
        if (rc < 0) return rc;
        if (rc == TSQL_ESQL) {
            if ((rc = sess_emit_error(s, &err)) < 0) return rc;
            if ((rc = sess_done(s, MCDC_SIM_DONE_STMT, MCDC_SIM_DONE_ERROR, 0, 0)) < 0) return rc;
            if (err.abort_batch) return 0;
        }
        if (s->cancelled) return 0;
        i = j;
    }
    return 0;
sqlerr:
    if ((rc = sess_emit_error(s, &err)) < 0) return rc;
    return sess_done(s, MCDC_SIM_DONE_STMT, MCDC_SIM_DONE_ERROR, 0, 0);
}
