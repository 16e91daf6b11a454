/*
 * source/sim/session_rpc.c: RPC requests: sp_executesql, sp_prepare, sp_execute,
 * sp_prepexec, sp_unprepare (by name or by MS-TDS 2.2.6.6 id), and procedures by name.
 *
 * As SQL Server answers them: the statements inside end with DONEINPROC, then RETURNSTATUS,
 * the RETURNVALUEs of output parameters (sp_prepare's handle), and DONEPROC. Parameters of
 * sp_executesql are declared by its @params text ("@p1 int, @p2 nvarchar(10) OUTPUT"); the
 * values come named or in that order, and are converted to the declared types. Prepared
 * statements are kept per session by handle (from 1) until sp_unprepare or the close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql_engine.h"

void sess_prepared_clear(mcdc_sim_session *s)
{
    for (int i = 0; i < s->n_prep; i++) {
        free(s->prep[i].sql);
        free(s->prep[i].params);
    }
    free(s->prep);
    s->prep = NULL;
    s->n_prep = 0;
}

/* A parameter's value as text (the statement, the declaration). NULL when not a string. */
static char *param_text(mcdc_sim_session *s, const mcdc_sim_param *p)
{
    if (p->value.k != V_STR) return NULL;
    return sim_arena_strndup(&s->arena, p->value.u.s.p, p->value.u.s.n);
}

/* Declare the parameters of @p decl and give them @p vals (named or positional). */
static int bind_params(mcdc_sim_session *s, const char *decl, const mcdc_sim_param *vals, int nvals, tsql_error *err)
{
    tsql_tok *t;
    int n, rc;
    if (!decl) decl = "";
    if ((rc = tsql_lex(&s->arena, decl, strlen(decl), &t, &n, err)) != 0) return rc;
    n--; /* EOF */
    int k = 0, ord = 0;
    while (k < n) {
        sess_var v;
        memset(&v, 0, sizeof v);
        if (t[k].k != TK_VAR) return tsql_syntax(err, &t[k]);
        snprintf(v.name, sizeof v.name, "%.*s", (int)t[k].vn, t[k].v);
        k++;
        if (k < n && tsql_tok_is(&t[k], "AS")) k++;
        if ((rc = tsql_parse_type(t, n + 1, &k, &v.type, err)) != 0) return rc;
        if (k < n && (tsql_tok_is(&t[k], "OUTPUT") || tsql_tok_is(&t[k], "OUT"))) { v.output = true; k++; }
        v.ordinal = -1;
        const mcdc_sim_param *given = NULL;
        for (int i = 0; i < nvals; i++)
            if (vals[i].name && !strcasecmp(vals[i].name, v.name)) { given = &vals[i]; v.ordinal = i; }
        if (!given && ord < nvals && !vals[ord].name) { given = &vals[ord]; v.ordinal = ord; }
        ord++;
        if (!given)
            return tsql_fail(err, 8178, 16, 1, 1, "The parameterized query '(%s)' expects the parameter '%s', which was not supplied.",
                             decl, v.name);
        if (given->value.k != V_NULL && sim_convert(&s->arena, &v.type, &given->value, &v.value, NULL) < 0)
            return tsql_from_mcdc_error(err, 1);
        if ((rc = sess_var_define(s, &v, err)) != 0) return rc;
        if (k < n && tsql_tok_is(&t[k], ",")) { k++; continue; }
        if (k != n) return tsql_syntax(err, &t[k]);
    }
    return 0;
}

static int return_outputs(mcdc_sim_session *s)
{
    for (int i = 0; i < s->n_vars; i++) {
        sess_var *v = &s->vars[i];
        if (!v->output || v->ordinal < 0) continue;
        mcdc_sim_rcol c = {v->name, v->type, true, false};
        if (s->sink->return_value(s->sink->payload, v->ordinal, v->name, &c, &v->value)) return MCDC_ERROR;
    }
    return 0;
}

static int end_proc(mcdc_sim_session *s, int status)
{
    int rc = sess_flush_done(s, true);
    if (rc < 0) return rc;
    if (s->sink->return_status(s->sink->payload, status)) return MCDC_ERROR;
    if ((rc = return_outputs(s)) < 0) return rc;
    s->in_proc = false;
    return sess_done(s, MCDC_SIM_DONE_PROC, s->had_error ? MCDC_SIM_DONE_ERROR : 0, CURCMD_EXECUTE, 0);
}

static int fail_proc(mcdc_sim_session *s, tsql_error *err)
{
    int rc = sess_emit_error(s, err);
    return rc < 0 ? rc : end_proc(s, s->proc_status);
}

static sess_prepared *find_prep(mcdc_sim_session *s, int h)
{
    for (int i = 0; i < s->n_prep; i++)
        if (s->prep[i].handle == h) return &s->prep[i];
    return NULL;
}

static int add_prep(mcdc_sim_session *s, const char *params, const char *sql, int *handle)
{
    sess_prepared *np = realloc(s->prep, (size_t)(s->n_prep + 1) * sizeof *np);
    if (!np) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    s->prep = np;
    sess_prepared *p = &s->prep[s->n_prep];
    p->handle = ++s->next_handle;
    p->params = strdup(params ? params : "");
    p->sql = strdup(sql);
    if (!p->params || !p->sql) {
        free(p->params);
        free(p->sql);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    s->n_prep++;
    *handle = p->handle;
    return 0;
}

/* The handle output parameter of sp_prepare/sp_prepexec: a variable returned at the end. */
static int handle_output(mcdc_sim_session *s, const mcdc_sim_param *p, int ordinal, int handle, tsql_error *err)
{
    sess_var v;
    memset(&v, 0, sizeof v);
    snprintf(v.name, sizeof v.name, "%s", p->name ? p->name : "@handle");
    v.type.k = ST_INT;
    v.value.k = V_INT;
    v.value.u.i = handle;
    v.output = true;
    v.ordinal = ordinal;
    return sess_var_define(s, &v, err);
}

static int param_int(const mcdc_sim_param *p, int *out)
{
    if (p->value.k != V_INT) return -1;
    *out = (int)p->value.u.i;
    return 0;
}

int sess_rpc(mcdc_sim_session *s, const char *proc, int proc_id, const mcdc_sim_param *params, int nparams)
{
    tsql_error err = {0};
    int rc;
    if (proc) {
        const char *b = !strncasecmp(proc, "sys.", 4) ? proc + 4 : !strncasecmp(proc, "master..", 8) ? proc + 8 : proc;
        if (!strcasecmp(b, "sp_executesql")) proc_id = 10;
        else if (!strcasecmp(b, "sp_prepare")) proc_id = 11;
        else if (!strcasecmp(b, "sp_execute")) proc_id = 12;
        else if (!strcasecmp(b, "sp_prepexec")) proc_id = 13;
        else if (!strcasecmp(b, "sp_unprepare")) proc_id = 15;
        else proc_id = 0;
    }
    s->in_proc = true;
    s->proc_status = 0;
    switch (proc_id) {
    case 10: { /* sp_executesql @stmt, @params, values... */
        char *sql = nparams > 0 ? param_text(s, &params[0]) : NULL;
        if (!sql) {
            tsql_fail(&err, 214, 16, 2, 1, "Procedure expects parameter '@statement' of type 'ntext/nchar/nvarchar'.");
            return fail_proc(s, &err);
        }
        char *decl = nparams > 1 ? param_text(s, &params[1]) : NULL;
        if (nparams > 1 && !decl && params[1].value.k != V_NULL) {
            tsql_fail(&err, 214, 16, 3, 1, "Procedure expects parameter '@params' of type 'ntext/nchar/nvarchar'.");
            return fail_proc(s, &err);
        }
        if ((rc = bind_params(s, decl, params + 2, nparams > 2 ? nparams - 2 : 0, &err)) != 0) {
            if (rc < 0) return rc;
            return fail_proc(s, &err);
        }
        for (int i = 0; i < s->n_vars; i++)
            if (s->vars[i].ordinal >= 0) s->vars[i].ordinal += 2;
        if ((rc = sess_run_text(s, sql, strlen(sql), NULL, 0)) < 0) return rc;
        return end_proc(s, 0);
    }
    case 11: case 13: { /* sp_prepare|sp_prepexec @handle OUTPUT, @params, @stmt [, @options | values...] */
        char *decl = nparams > 1 ? param_text(s, &params[1]) : NULL;
        char *sql = nparams > 2 ? param_text(s, &params[2]) : NULL;
        if (nparams < 3 || !sql) {
            tsql_fail(&err, 8144, 16, 2, 1, "Procedure or function %s has too many arguments specified.",
                      proc_id == 11 ? "sp_prepare" : "sp_prepexec");
            return fail_proc(s, &err);
        }
        /* check the statement compiles before handing out a handle */
        tsql_tok *t;
        int n;
        if ((rc = tsql_lex(&s->arena, sql, strlen(sql), &t, &n, &err)) != 0) {
            if (rc < 0) return rc;
            return fail_proc(s, &err);
        }
        int h = 0;
        if ((rc = add_prep(s, decl, sql, &h)) < 0) return rc;
        if ((rc = handle_output(s, &params[0], 0, h, &err)) != 0) return rc < 0 ? rc : fail_proc(s, &err);
        if (proc_id == 13) {
            if ((rc = bind_params(s, decl, params + 3, nparams - 3, &err)) != 0) {
                if (rc < 0) return rc;
                return fail_proc(s, &err);
            }
            for (int i = 0; i < s->n_vars; i++)
                if (s->vars[i].ordinal >= 0 && strcasecmp(s->vars[i].name, params[0].name ? params[0].name : "@handle"))
                    s->vars[i].ordinal += 3;
            if ((rc = sess_run_text(s, sql, strlen(sql), NULL, 0)) < 0) return rc;
        }
        return end_proc(s, 0);
    }
    case 12: { /* sp_execute @handle, values... */
        int h = 0;
        sess_prepared *p;
        if (nparams < 1 || param_int(&params[0], &h) < 0 || !(p = find_prep(s, h))) {
            tsql_fail(&err, 8179, 16, 2, 1, "Could not find prepared statement with handle %d.",
                      nparams >= 1 && params[0].value.k == V_INT ? (int)params[0].value.u.i : 0);
            return fail_proc(s, &err);
        }
        char *sql = sim_arena_strndup(&s->arena, p->sql, strlen(p->sql));
        char *decl = sim_arena_strndup(&s->arena, p->params, strlen(p->params));
        if (!sql || !decl) return MCDC_ENOMEM;
        if ((rc = bind_params(s, decl, params + 1, nparams - 1, &err)) != 0) {
            if (rc < 0) return rc;
            return fail_proc(s, &err);
        }
        for (int i = 0; i < s->n_vars; i++)
            if (s->vars[i].ordinal >= 0) s->vars[i].ordinal += 1;
        if ((rc = sess_run_text(s, sql, strlen(sql), NULL, 0)) < 0) return rc;
        return end_proc(s, 0);
    }
    case 15: { /* sp_unprepare @handle */
        int h = 0;
        if (nparams < 1 || param_int(&params[0], &h) < 0 || !find_prep(s, h)) {
            tsql_fail(&err, 8179, 16, 4, 1, "Could not find prepared statement with handle %d.",
                      nparams >= 1 && params[0].value.k == V_INT ? (int)params[0].value.u.i : 0);
            return fail_proc(s, &err);
        }
        for (int i = 0; i < s->n_prep; i++)
            if (s->prep[i].handle == h) {
                free(s->prep[i].sql);
                free(s->prep[i].params);
                s->prep[i] = s->prep[--s->n_prep];
                break;
            }
        return end_proc(s, 0);
    }
    default:
        break;
    }
    if (!proc) {
        tsql_fail(&err, 2812, 16, 62, 1, "Could not find stored procedure 'id %d'.", proc_id);
        return fail_proc(s, &err);
    }
    if ((rc = tsql_call_proc(s, proc, params, nparams, &err)) != 0) {
        if (rc < 0) return rc;
        return fail_proc(s, &err);
    }
    return end_proc(s, s->proc_status);
}
