/*
 * source/sim/tsql_stmt.c: one statement of a batch, by its first keyword: SET options
 * (those clients send at login are accepted; an unknown option is 195), transactions,
 * DML (through the simulator's own transaction path, mcdc_sim_exec), EXEC, DECLARE, and
 * SELECT (tsql_select.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql_ast.h"

static int syntax_near(tsql_error *err, const tsql_tok *t)
{
    if (t->k == TK_EOF) return tsql_fail(err, 102, 15, 1, t->line, "Incorrect syntax near '%s'.", t[-1].n ? "" : "");
    return tsql_fail(err, 102, 15, 1, t->line, "Incorrect syntax near '%.*s'.", (int)t->n, t->p);
}

int tsql_syntax(tsql_error *err, const tsql_tok *t)
{
    return syntax_near(err, t);
}

/* ---- SET ---------------------------------------------------------------------------------- */

static const char *const on_off_options[] = {
    "ANSI_NULLS", "ANSI_PADDING", "ANSI_WARNINGS", "ARITHABORT", "ARITHIGNORE", "CONCAT_NULL_YIELDS_NULL",
    "QUOTED_IDENTIFIER", "NUMERIC_ROUNDABORT", "CURSOR_CLOSE_ON_COMMIT", "IMPLICIT_TRANSACTIONS", "XACT_ABORT",
    "ANSI_NULL_DFLT_ON", "ANSI_NULL_DFLT_OFF", "ANSI_DEFAULTS", "FMTONLY", "NOEXEC", "PARSEONLY", "NOCOUNT",
    "FORCEPLAN", "SHOWPLAN_ALL", "SHOWPLAN_TEXT", "SHOWPLAN_XML", "STATISTICS", "REMOTE_PROC_TRANSACTIONS", NULL};

static bool is_on_off(const tsql_tok *t)
{
    for (int i = 0; on_off_options[i]; i++)
        if (tsql_tok_is(t, on_off_options[i])) return true;
    return false;
}

static int run_set(mcdc_sim_session *s, const tsql_tok *t, int n, bool apply, tsql_error *err)
{
    /* t[0] is SET */
    if (n < 2) return syntax_near(err, &t[n]);
    const tsql_tok *o = &t[1];
    if (o->k == TK_VAR) return apply ? tsql_run_set_var(s, t, n, err) : 0;
    if (tsql_tok_is(o, "TRANSACTION")) {
        static const char *const levels[] = {"READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SNAPSHOT",
                                             "SERIALIZABLE"};
        if (n < 4 || !tsql_tok_is(&t[2], "ISOLATION") || !tsql_tok_is(&t[3], "LEVEL")) return syntax_near(err, &t[n < 3 ? n : 2]);
        char lvl[64] = "";
        for (int k = 4; k < n && strlen(lvl) < 40; k++) {
            if (t[k].k != TK_ID) return syntax_near(err, &t[k]);
            snprintf(lvl + strlen(lvl), sizeof lvl - strlen(lvl), "%s%.*s", k > 4 ? " " : "", (int)t[k].vn, t[k].v);
        }
        for (int k = 0; k < 5; k++)
            if (!strcasecmp(lvl, levels[k])) { if (apply) s->isolation = k + 1; return 0; }
        return syntax_near(err, &t[n > 4 ? 4 : n]);
    }
    if (tsql_tok_is(o, "LOCK_TIMEOUT")) {
        int k = 2;
        bool neg = k < n && tsql_tok_is(&t[k], "-");
        if (neg) k++;
        if (k + 1 != n || t[k].k != TK_INT) return syntax_near(err, &t[k < n ? k : n]);
        if (apply) s->lock_timeout = (neg ? -1 : 1) * atoi(t[k].v);
        return 0;
    }
    if (tsql_tok_is(o, "TEXTSIZE") || tsql_tok_is(o, "ROWCOUNT") || tsql_tok_is(o, "DATEFIRST") ||
        tsql_tok_is(o, "DEADLOCK_PRIORITY") || tsql_tok_is(o, "QUERY_GOVERNOR_COST_LIMIT")) {
        int k = 2;
        if (k < n && tsql_tok_is(&t[k], "-")) k++;
        if (k + 1 != n || (t[k].k != TK_INT && t[k].k != TK_ID && t[k].k != TK_VAR)) return syntax_near(err, &t[k < n ? k : n]);
        return 0;
    }
    if (tsql_tok_is(o, "LANGUAGE")) {
        if (n != 3 || (t[2].k != TK_ID && t[2].k != TK_QID && t[2].k != TK_STR)) return syntax_near(err, &t[n > 2 ? 2 : n]);
        char lang[64];
        snprintf(lang, sizeof lang, "%.*s", (int)t[2].vn, t[2].v);
        if (strcasecmp(lang, "us_english") && strcasecmp(lang, "english"))
            return tsql_fail(err, 2732, 16, 1, t[2].line, "Error number %d is invalid. The language '%s' is not supported.", 2732, lang);
        if (!apply) return 0;
        char old[64];
        snprintf(old, sizeof old, "%s", s->language);
        snprintf(s->language, sizeof s->language, "us_english");
        if (s->sink->envchange(s->sink->payload, 2, "us_english", old)) return MCDC_ERROR;
        return sess_emit_info(s, 5703, "Changed language setting to us_english.");
    }
    if (tsql_tok_is(o, "DATEFORMAT")) {
        if (n != 3 || (t[2].k != TK_ID && t[2].k != TK_STR)) return syntax_near(err, &t[n > 2 ? 2 : n]);
        return 0;
    }
    /* SET opt[, opt ...] ON|OFF */
    int k = 1;
    for (;;) {
        if (k >= n) return syntax_near(err, &t[n]);
        if (!is_on_off(&t[k])) {
            if (t[k].k == TK_ID || t[k].k == TK_QID)
                return tsql_fail(err, 195, 15, 10, t[k].line, "'%.*s' is not a recognized SET option.", (int)t[k].vn, t[k].v);
            return syntax_near(err, &t[k]);
        }
        if (tsql_tok_is(&t[k], "STATISTICS")) { k++; if (k < n && t[k].k == TK_ID) k++; }
        else k++;
        if (k < n && tsql_tok_is(&t[k], ",")) { k++; continue; }
        break;
    }
    if (k + 1 != n || !(tsql_tok_is(&t[k], "ON") || tsql_tok_is(&t[k], "OFF"))) return syntax_near(err, &t[k < n ? k : n]);
    bool on = tsql_tok_is(&t[k], "ON");
    for (int q = 1; apply && q < k; q++)
        if (tsql_tok_is(&t[q], "NOCOUNT")) s->nocount = on;
        else if (tsql_tok_is(&t[q], "FMTONLY")) s->fmtonly = on;
    return 0;
}

/* ---- transactions ----------------------------------------------------------------------- */

static int run_tran(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err)
{
    char id[32];
    bool begin = tsql_tok_is(&t[0], "BEGIN"), commit = tsql_tok_is(&t[0], "COMMIT");
    int k = 1;
    if (k < n && (tsql_tok_is(&t[k], "TRAN") || tsql_tok_is(&t[k], "TRANSACTION") || tsql_tok_is(&t[k], "WORK"))) k++;
    else if (begin) return syntax_near(err, &t[k]);
    if (k < n && (t[k].k == TK_ID || t[k].k == TK_QID || t[k].k == TK_VAR)) k++;
    if (k != n) return syntax_near(err, &t[k]);
    if (begin) {
        if (!s->in_tran) {
            s->in_tran = true;
            s->tran_id++;
            snprintf(id, sizeof id, "%lld", (long long)s->tran_id);
            if (s->sink->envchange(s->sink->payload, 8, id, NULL)) return MCDC_ERROR;
        }
        return 0;
    }
    if (!s->in_tran)
        return tsql_fail(err, commit ? 3902 : 3903, 16, 1, t[0].line, commit
                         ? "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION."
                         : "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.");
    s->in_tran = false;
    snprintf(id, sizeof id, "%lld", (long long)s->tran_id);
    return s->sink->envchange(s->sink->payload, commit ? 9 : 10, NULL, id) ? MCDC_ERROR : 0;
}

/* ---- DML through the simulator's transactions -------------------------------------------- */

/* An error of mcdc_sim_exec ("Msg 2627: Violation of ...") as SQL Server's. */
static int exec_error(tsql_error *err, int line)
{
    const char *m = mcdc_error_last()->message;
    const char *p = strstr(m, "Msg ");
    int num = 0;
    if (p && sscanf(p, "Msg %d:", &num) == 1) {
        const char *q = strchr(p, ':');
        q = q ? q + 1 : p;
        while (*q == ' ') q++;
        int cls = num == 102 || num == 105 ? 15 : num == 2627 || num == 2601 ? 14 : 16;
        tsql_fail(err, num, cls, 1, line, "%s", q);
        err->abort_batch = cls == 15 || num == 208 || num == 207;
        return TSQL_ESQL;
    }
    if (strstr(m, "does not exist") || mcdc_error_last()->code == MCDC_ENOTFOUND)
        return tsql_fail(err, 208, 16, 1, line, "Invalid object name '%s'.", m);
    return tsql_fail(err, 50000, 16, 1, line, "%s", m);
}

static int run_dml(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err)
{
    const char *start = t[0].p, *end = t[n].p;
    while (end > start && (isspace((unsigned char)end[-1]) || end[-1] == ';')) end--;
    char *sql = sim_arena_strndup(&s->arena, start, (size_t)(end - start));
    if (!sql) return MCDC_ENOMEM;
    /* the target must be readable and writable by the login: db_owner only */
    if (s->grants.restricted)
        return tsql_fail(err, 229, 14, 5, t[0].line, "The %s permission was denied on the object '%s', database '%s', schema 'dbo'.",
                         tsql_tok_is(&t[0], "INSERT") ? "INSERT" : tsql_tok_is(&t[0], "UPDATE") ? "UPDATE" : "DELETE",
                         "object", s->db_name);
    int rc = tsql_substitute_vars(s, &sql, err);
    if (rc != 0) return rc;
    mcdc_sim_exec_result r;
    if (mcdc_sim_exec(s->sim, sql, MCDC_SIM_NOW, MCDC_SIM_NOW, &r) < 0) return exec_error(err, t[0].line);
    uint16_t cmd = tsql_tok_is(&t[0], "INSERT") ? CURCMD_INSERT : tsql_tok_is(&t[0], "UPDATE") ? CURCMD_UPDATE : CURCMD_DELETE;
    return sess_done(s, MCDC_SIM_DONE_STMT, s->nocount ? 0 : MCDC_SIM_DONE_COUNT, cmd, r.n_rows);
}

/* ---- dispatch ----------------------------------------------------------------------------- */

int tsql_run_statement(mcdc_sim_session *s, const tsql_tok *toks, int i, int j, tsql_error *err)
{
    const tsql_tok *t = &toks[i];
    int n = j - i, rc;
    if ((rc = sim__load(s->sim)) < 0) return rc;
    if (tsql_tok_is(t, "SET")) return run_set(s, t, n, true, err);
    if (tsql_tok_is(t, "BEGIN") || tsql_tok_is(t, "COMMIT") || tsql_tok_is(t, "ROLLBACK")) return run_tran(s, t, n, err);
    if (tsql_tok_is(t, "INSERT") || tsql_tok_is(t, "UPDATE") || tsql_tok_is(t, "DELETE")) return run_dml(s, t, n, err);
    if (tsql_tok_is(t, "DECLARE")) return tsql_run_declare(s, t, n, err);
    if (tsql_tok_is(t, "SELECT") || tsql_tok_is(t, "WITH") || tsql_tok_is(t, "(")) return tsql_run_select(s, t, n, err);
    if (tsql_tok_is(t, "EXEC") || tsql_tok_is(t, "EXECUTE")) return tsql_run_exec(s, t, n, false, err);
    if (tsql_tok_is(t, "USE")) {
        if (n != 2 || (t[1].k != TK_ID && t[1].k != TK_QID)) return syntax_near(err, &t[n > 1 ? 1 : n]);
        if (t[1].vn != strlen(s->db_name) || strncasecmp(t[1].v, s->db_name, t[1].vn))
            return tsql_fail(err, 911, 16, 1, t->line,
                             "Database '%.*s' does not exist. Make sure that the name is entered correctly.",
                             (int)t[1].vn, t[1].v);
        return 0;
    }
    if (tsql_tok_is(t, "PRINT")) {
        if (n == 2 && t[1].k == TK_STR) {
            char *txt = sim_arena_strndup(&s->arena, t[1].v, t[1].vn);
            return txt ? sess_emit_info(s, 0, txt) : MCDC_ENOMEM;
        }
        return syntax_near(err, &t[n > 1 ? 2 : 1]);
    }
    /* a procedure name alone at the start of a batch is an EXEC */
    if (i == 0 && (t->k == TK_ID || t->k == TK_QID) && !(tsql_tok_is(t, "IF") || tsql_tok_is(t, "WHILE") ||
                                                      tsql_tok_is(t, "CREATE") || tsql_tok_is(t, "DROP") ||
                                                      tsql_tok_is(t, "ALTER") || tsql_tok_is(t, "RETURN")))
        return tsql_run_exec(s, t, n, true, err);
    return syntax_near(err, t);
}

/* The span t[0..n) as its own token array ending with EOF (the parser reads up to EOF). */
static tsql_tok *span_of(mcdc_sim_session *s, const tsql_tok *t, int n)
{
    tsql_tok *span = sim_arena_alloc(&s->arena, (size_t)(n + 1) * sizeof *span);
    if (!span) return NULL;
    memcpy(span, t, (size_t)n * sizeof *span);
    span[n] = t[n];
    span[n].k = TK_EOF;
    span[n].vn = span[n].n = 0;
    return span;
}

int tsql_check_syntax(mcdc_sim_session *s, const tsql_tok *toks, int i, int j, tsql_error *err)
{
    const tsql_tok *t = &toks[i];
    int n = j - i, k = 0, rc;
    if (tsql_tok_is(t, "SET") && !(n > 1 && t[1].k == TK_VAR)) return run_set(s, t, n, false, err);
    if (!(tsql_tok_is(t, "SELECT") || tsql_tok_is(t, "(") ||
          (tsql_tok_is(t, "SET") && n > 2 && t[1].k == TK_VAR && tsql_tok_is(&t[2], "="))))
        return 0;
    tsql_tok *span = span_of(s, t, n);
    if (!span) return MCDC_ENOMEM;
    if (tsql_tok_is(t, "SET")) {
        tsql_expr *e;
        k = 3;
        if ((rc = tsql_parse_expr(&s->arena, span, n, &k, &e, err)) != 0) return rc;
    } else {
        tsql_select *sel;
        if ((rc = tsql_parse_select(&s->arena, span, n, &k, &sel, err)) != 0) return rc;
    }
    return k < n ? tsql_syntax(err, &span[k]) : 0;
}
