/*
 * source/sim/tsql_vars.c: variables of a batch (DECLARE, SET @v, parameters of
 * sp_executesql), literals with SQL Server's types, and the errors of conversions.
 *
 * A literal's type is SQL Server's: 42 int (bigint past int's range, numeric past bigint's),
 * 4.50 numeric(3,2), 1e3 float, 'x' varchar(1), N'x' nvarchar(1), 0x0A varbinary(1). A
 * variable holds a value converted to its declared type (sim_convert), in the session's
 * arena for the running call.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql_engine.h"

int tsql_from_mcdc_error(tsql_error *err, int line)
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
    if (mcdc_error_last()->code == MCDC_ENOMEM) return MCDC_ENOMEM;
    tsql_fail(err, 50000, 16, 1, line, "%s", m);
    err->abort_batch = false;
    return TSQL_ESQL;
}

static int hexval(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : toupper((unsigned char)c) - 'A' + 10;
}

int tsql_literal(sim_arena *a, const tsql_tok *t, bool neg, sim_val *v, sim_type *ty)
{
    memset(v, 0, sizeof *v);
    memset(ty, 0, sizeof *ty);
    switch (t->k) {
    case TK_STR:
        v->k = V_STR;
        v->big = t->wide;
        v->u.s.p = t->v;
        v->u.s.n = t->vn;
        ty->k = t->wide ? ST_NVARCHAR : ST_VARCHAR;
        ty->len = t->wide ? (int)(sim_utf16_len(t->v, t->vn) > 0 ? sim_utf16_len(t->v, t->vn) : 1) : (int)(t->vn ? t->vn : 1);
        if (ty->len > (t->wide ? 4000 : 8000)) ty->len = -1;
        return 0;
    case TK_HEX: {
        size_t nd = t->vn, nb = 0, i = 0;
        char *b = sim_arena_alloc(a, nd / 2 + 2);
        if (!b) return MCDC_ENOMEM;
        if (nd % 2) { b[nb++] = (char)hexval(t->v[0]); i = 1; }
        for (; i + 1 < nd + 1 && i < nd; i += 2) b[nb++] = (char)(hexval(t->v[i]) << 4 | hexval(t->v[i + 1]));
        v->k = V_BIN;
        v->u.s.p = b;
        v->u.s.n = nb;
        ty->k = ST_VARBINARY;
        ty->len = nb ? (int)nb : 1;
        if (ty->len > 8000) ty->len = -1;
        return 0;
    }
    case TK_INT: {
        mcdc_int128 x = 0;
        int digits = 0;
        for (size_t i = 0; i < t->vn; i++) {
            if (x > (mcdc_int128)1e37) { v->k = V_FLT; break; }
            x = x * 10 + (t->v[i] - '0');
            if (x || digits) digits++;
        }
        if (neg) x = -x;
        if (x >= INT32_MIN && x <= INT32_MAX) {
            v->k = V_INT;
            v->u.i = (int64_t)x;
            ty->k = ST_INT;
        } else {
            v->k = V_DEC;
            v->u.dec = x;
            v->prec = digits > 38 ? 38 : digits;
            v->scale = 0;
            ty->k = ST_NUMERIC;
            ty->prec = v->prec;
        }
        return 0;
    }
    case TK_DEC: {
        mcdc_int128 x = 0;
        int digits = 0, scale = 0;
        bool frac = false;
        for (size_t i = 0; i < t->vn; i++) {
            if (t->v[i] == '.') { frac = true; continue; }
            if (digits >= 38) break;
            x = x * 10 + (t->v[i] - '0');
            if (x || frac) digits++;
            if (frac) scale++;
        }
        if (neg) x = -x;
        v->k = V_DEC;
        v->u.dec = x;
        v->scale = scale;
        v->prec = digits < scale ? scale : digits ? digits : 1;
        ty->k = ST_NUMERIC;
        ty->prec = v->prec;
        ty->scale = scale;
        return 0;
    }
    case TK_FLOAT: {
        char buf[64];
        snprintf(buf, sizeof buf, "%s%.*s", neg ? "-" : "", (int)(t->vn < 60 ? t->vn : 60), t->v);
        v->k = V_FLT;
        v->u.d = strtod(buf, NULL);
        ty->k = ST_FLOAT;
        return 0;
    }
    default:
        return -1;
    }
}

/* ---- variables ---------------------------------------------------------------------------- */

sess_var *sess_var_find(mcdc_sim_session *s, const char *name, size_t n)
{
    for (int i = 0; i < s->n_vars; i++)
        if (strlen(s->vars[i].name) == n && !strncasecmp(s->vars[i].name, name, n)) return &s->vars[i];
    return NULL;
}

int sess_var_define(mcdc_sim_session *s, const sess_var *v, tsql_error *err)
{
    if (sess_var_find(s, v->name, strlen(v->name)))
        return tsql_fail(err, 134, 15, 1, 1, "The variable name '%s' has already been declared. "
                         "Variable names must be unique within a query batch or stored procedure.", v->name);
    if (s->n_vars == s->cap_vars) {
        int cap = s->cap_vars ? s->cap_vars * 2 : 16;
        sess_var *nv = sim_arena_alloc(&s->arena, (size_t)cap * sizeof *nv);
        if (!nv) return MCDC_ENOMEM;
        if (s->n_vars) memcpy(nv, s->vars, (size_t)s->n_vars * sizeof *nv);
        s->vars = nv;
        s->cap_vars = cap;
    }
    s->vars[s->n_vars++] = *v;
    return 0;
}

/* Parse a type written in tokens t[*k..]: name [(n[, m]) | (max)]. */
int tsql_parse_type(const tsql_tok *t, int n, int *k, sim_type *out, tsql_error *err)
{
    int i = *k;
    if (i >= n || (t[i].k != TK_ID && t[i].k != TK_QID)) return tsql_syntax(err, &t[i]);
    const char *start = t[i].k == TK_QID ? t[i].v : t[i].p;
    char buf[96];
    int len = snprintf(buf, sizeof buf, "%.*s", (int)t[i].vn, t[i].v);
    (void)start;
    i++;
    if (i < n && tsql_tok_is(&t[i], "(")) {
        int close = i + 1;
        while (close < n && !tsql_tok_is(&t[close], ")")) close++;
        if (close >= n) return tsql_syntax(err, &t[n]);
        for (int q = i; q <= close && len < (int)sizeof buf - 8; q++)
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%.*s", (int)t[q].vn, t[q].v);
        i = close + 1;
    }
    if (!strcasecmp(buf, "sysname")) snprintf(buf, sizeof buf, "nvarchar(128)");
    if (sim_type_parse(out, buf, strlen(buf)) < 0) {
        if (!strncasecmp(buf, "sql_variant", 11)) { memset(out, 0, sizeof *out); out->k = ST_NVARCHAR; out->len = 4000; }
        else return tsql_fail(err, 2715, 16, 3, t[*k].line, "Column, parameter, or variable #1: Cannot find data type %.*s.",
                              (int)t[*k].vn, t[*k].v);
    }
    *k = i;
    return 0;
}

/* DECLARE @a type [= expr] [, @b type [= expr]] */
int tsql_run_declare(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err)
{
    int k = 1, rc;
    for (;;) {
        if (k >= n || t[k].k != TK_VAR) return tsql_syntax(err, &t[k]);
        sess_var v;
        memset(&v, 0, sizeof v);
        snprintf(v.name, sizeof v.name, "%.*s", (int)t[k].vn, t[k].v);
        v.ordinal = -1;
        k++;
        if (k < n && tsql_tok_is(&t[k], "AS")) k++;
        if ((rc = tsql_parse_type(t, n, &k, &v.type, err)) != 0) return rc;
        if ((rc = sess_var_define(s, &v, err)) != 0) return rc;
        if (k < n && tsql_tok_is(&t[k], "=")) {
            int e = k + 1, depth = 0;
            while (e < n && !(depth == 0 && tsql_tok_is(&t[e], ","))) {
                if (tsql_tok_is(&t[e], "(")) depth++;
                if (tsql_tok_is(&t[e], ")")) depth--;
                e++;
            }
            if ((rc = tsql_assign(s, v.name, t, k + 1, e, err)) != 0) return rc;
            k = e;
        }
        if (k < n && tsql_tok_is(&t[k], ",")) { k++; continue; }
        if (k != n) return tsql_syntax(err, &t[k]);
        return 0;
    }
}

/* SET @v = expr */
int tsql_run_set_var(mcdc_sim_session *s, const tsql_tok *t, int n, tsql_error *err)
{
    if (n < 4 || !tsql_tok_is(&t[2], "=")) return tsql_syntax(err, &t[n < 3 ? n : 2]);
    char name[130];
    snprintf(name, sizeof name, "%.*s", (int)t[1].vn, t[1].v);
    if (!sess_var_find(s, t[1].v, t[1].vn))
        return tsql_fail(err, 137, 15, 1, t[1].line, "Must declare the scalar variable \"%s\".", name);
    return tsql_assign(s, name, t, 3, n, err);
}

static int put_literal(mcdc_buf *b, const sess_var *v)
{
    if (v->value.k == V_NULL) return mcdc_buf_puts(b, "NULL");
    if (v->value.k == V_BIN) {
        int rc = mcdc_buf_puts(b, "0x");
        for (size_t i = 0; rc == 0 && i < v->value.u.s.n; i++)
            rc = mcdc_buf_printf(b, "%02X", (unsigned char)v->value.u.s.p[i]);
        return rc;
    }
    mcdc_buf txt = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int rc = sim_val_text(&txt, &v->type, &v->value);
    bool quote = !sim_type_is_numeric(&v->type) && v->type.k != ST_BIT;
    if (rc == 0 && quote) rc = mcdc_buf_puts(b, sim_type_is_string(&v->type) && (v->type.k == ST_NCHAR ||
                                                  v->type.k == ST_NVARCHAR || v->type.k == ST_NTEXT) ? "N'" : "'");
    for (size_t i = 0; rc == 0 && i < txt.len; i++)
        rc = txt.ptr[i] == '\'' && quote ? mcdc_buf_puts(b, "''") : mcdc_buf_putc(b, txt.ptr[i]);
    if (rc == 0 && quote) rc = mcdc_buf_putc(b, '\'');
    mcdc_buf_dispose(&txt);
    return rc;
}

int tsql_substitute_vars(mcdc_sim_session *s, char **sql, tsql_error *err)
{
    tsql_tok *toks;
    int n;
    int rc = tsql_lex(&s->arena, *sql, strlen(*sql), &toks, &n, err);
    if (rc != 0) return rc;
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    const char *p = *sql;
    for (int i = 0; rc == 0 && i < n; i++) {
        if (toks[i].k != TK_VAR) continue;
        sess_var *v = sess_var_find(s, toks[i].v, toks[i].vn);
        if (!v) {
            rc = tsql_fail(err, 137, 15, 1, toks[i].line, "Must declare the scalar variable \"%.*s\".", (int)toks[i].vn, toks[i].v);
            break;
        }
        if ((rc = mcdc_buf_put(&b, p, (size_t)(toks[i].p - p))) == 0) rc = put_literal(&b, v);
        p = toks[i].p + toks[i].n;
    }
    if (rc == 0) rc = mcdc_buf_puts(&b, p);
    if (rc == 0) {
        char *out = sim_arena_strndup(&s->arena, b.ptr ? b.ptr : "", b.len);
        if (!out) rc = MCDC_ENOMEM;
        else *sql = out;
    }
    mcdc_buf_dispose(&b);
    return rc;
}
