/*
 * source/sim/tsql_parse.c: SELECT statements and expressions, by recursive descent over the
 * lexer's tokens (tsql_ast.h). Grammar (the subset docs/guides/simulator.md lists):
 *
 *   select  := SELECT [DISTINCT] [TOP (e) [PERCENT] | TOP n] item, ... [FROM tref [join ...]]
 *              [WHERE e] [GROUP BY e, ...] [HAVING e] [UNION ALL select]
 *              [ORDER BY e [ASC|DESC], ... [OFFSET e ROWS|ROW [FETCH FIRST|NEXT e ROWS|ROW ONLY]]]
 *   item    := * | t.* | e [[AS] alias] | alias = e | @v = e
 *   tref    := name [[AS] alias] | fn(args) [AS] alias | (select) [AS] alias [(cols)]
 *            | (VALUES (e, ...), ...) [AS] alias (cols)
 *   join    := [INNER|LEFT [OUTER]|RIGHT [OUTER]|FULL [OUTER]] JOIN tref ON e | CROSS JOIN tref
 *            | CROSS APPLY tref | OUTER APPLY tref | , tref
 *   e       := OR / AND / NOT / comparison, [NOT] BETWEEN, [NOT] IN, [NOT] LIKE, IS [NOT] NULL,
 *              EXISTS (select) / + - & | ^ / * / % / unary - ~ / COLLATE / primary
 *   primary := literal | NULL | @v | @@name | name[.name...] | fn([DISTINCT] args | *) [OVER (...)]
 *            | CAST(e AS type) | CONVERT(type, e[, style]) | CASE ... END | (e) | (select)
 *
 * Strictness kept here: TOP takes a variable or an expression only in parentheses (102 near
 * the variable otherwise); a reserved word where a name belongs is 102 naming it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql_ast.h"

typedef struct P {
    sim_arena      *a;
    const tsql_tok *t;
    int             n, k;
    tsql_error     *err;
    int             rc;
} P;

static const char *const reserved[] = {
    "SELECT", "FROM", "WHERE", "GROUP", "ORDER", "BY", "HAVING", "UNION", "ALL", "AS", "ON", "JOIN", "INNER", "LEFT",
    "RIGHT", "FULL", "OUTER", "CROSS", "AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "LIKE", "EXISTS", "CASE",
    "WHEN", "THEN", "ELSE", "END", "TOP", "DISTINCT", "OFFSET", "FETCH", "SET", "INSERT", "UPDATE", "DELETE",
    "VALUES", "INTO", "EXEC", "EXECUTE", "DECLARE", "COLLATE", "APPLY", "OVER", "PERCENT", "WITH", "EXCEPT",
    "INTERSECT", "ASC", "DESC", "CONVERT", "CAST", "BEGIN", "COMMIT", "ROLLBACK", "IF", "WHILE", "RETURN", NULL};

static bool is_reserved(const tsql_tok *t)
{
    if (t->k != TK_ID) return false;
    for (int i = 0; reserved[i]; i++)
        if (tsql_tok_is(t, reserved[i])) return true;
    return false;
}

static const tsql_tok *cur(P *p) { return &p->t[p->k < p->n ? p->k : p->n]; }
static bool is(P *p, const char *w) { return p->k < p->n && tsql_tok_is(&p->t[p->k], w); }
static bool accept(P *p, const char *w)
{
    if (!is(p, w)) return false;
    p->k++;
    return true;
}

static int syntax(P *p)
{
    if (p->rc == 0) p->rc = tsql_syntax(p->err, cur(p));
    return p->rc;
}

static bool expect(P *p, const char *w)
{
    if (accept(p, w)) return true;
    syntax(p);
    return false;
}

static void *alloc(P *p, size_t n)
{
    void *x = sim_arena_alloc(p->a, n);
    if (!x && p->rc == 0) p->rc = MCDC_ENOMEM;
    return x;
}

static tsql_expr *node(P *p, tsql_xkind k)
{
    tsql_expr *e = alloc(p, sizeof *e);
    if (e) {
        e->k = k;
        e->tok = cur(p);
    }
    return e;
}

static const char *name_tok(P *p)
{
    const tsql_tok *t = cur(p);
    if ((t->k != TK_ID && t->k != TK_QID) || (t->k == TK_ID && is_reserved(t)) || t->vn == 0) {
        syntax(p);
        return NULL;
    }
    p->k++;
    return sim_arena_strndup(p->a, t->v, t->vn);
}

/* Grow an array of pointers-sized elements. */
static void *push(P *p, void *arr, int n, size_t elem)
{
    if ((n & (n - 1)) == 0) { /* n is 0 or a power of two: double */
        void *na = alloc(p, (size_t)(n ? n * 2 : 1) * elem);
        if (!na) return NULL;
        if (n) memcpy(na, arr, (size_t)n * elem);
        return na;
    }
    return arr;
}

static tsql_expr *expr(P *p);
static tsql_select *select_stmt(P *p);

static int expr_list(P *p, tsql_expr ***out, int *n)
{
    do {
        tsql_expr *e = expr(p);
        if (!e) return p->rc ? p->rc : syntax(p);
        tsql_expr **na = push(p, *out, *n, sizeof *na);
        if (!na) return p->rc;
        *out = na;
        na[(*n)++] = e;
    } while (accept(p, ","));
    return 0;
}

static int order_list(P *p, tsql_order **out, int *n)
{
    do {
        tsql_expr *e = expr(p);
        if (!e) return p->rc ? p->rc : syntax(p);
        tsql_order *na = push(p, *out, *n, sizeof *na);
        if (!na) return p->rc;
        *out = na;
        na[*n].e = e;
        na[*n].desc = accept(p, "DESC");
        if (!na[*n].desc) accept(p, "ASC");
        (*n)++;
    } while (accept(p, ","));
    return 0;
}

static bool is_select_start(P *p)
{
    if (is(p, "SELECT")) return true;
    int k = p->k;
    while (k < p->n && tsql_tok_is(&p->t[k], "(")) k++;
    return k < p->n && tsql_tok_is(&p->t[k], "SELECT");
}

static int type_spec(P *p, sim_type *out)
{
    int k = p->k;
    int rc = tsql_parse_type(p->t, p->n, &k, out, p->err);
    if (rc) { p->rc = rc; return rc; }
    p->k = k;
    return 0;
}

static tsql_expr *primary(P *p)
{
    const tsql_tok *t = cur(p);
    tsql_expr *e;
    switch (t->k) {
    case TK_STR: case TK_INT: case TK_DEC: case TK_FLOAT: case TK_HEX:
        if (!(e = node(p, X_LIT))) return NULL;
        if (tsql_literal(p->a, t, false, &e->lit, &e->type) < 0) { p->rc = MCDC_ENOMEM; return NULL; }
        p->k++;
        return e;
    case TK_VAR:
        if (!(e = node(p, X_VAR))) return NULL;
        e->name = sim_arena_strndup(p->a, t->v, t->vn);
        p->k++;
        return e;
    case TK_GLOBAL:
        if (!(e = node(p, X_GLOBAL))) return NULL;
        e->name = sim_arena_strndup(p->a, t->v, t->vn);
        p->k++;
        return e;
    case TK_OP:
        if (tsql_tok_is(t, "(")) {
            p->k++;
            if (is_select_start(p)) {
                if (!(e = node(p, X_SUBQ))) return NULL;
                if (!(e->sub = select_stmt(p))) return NULL;
            } else if (!(e = expr(p))) {
                return NULL;
            }
            return expect(p, ")") ? e : NULL;
        }
        if (tsql_tok_is(t, "*")) {
            p->k++;
            return node(p, X_STAR);
        }
        syntax(p);
        return NULL;
    case TK_ID: case TK_QID:
        break;
    default:
        syntax(p);
        return NULL;
    }
    if (t->k == TK_ID && tsql_tok_is(t, "NULL")) {
        p->k++;
        return node(p, X_NULL);
    }
    if (t->k == TK_ID && tsql_tok_is(t, "CASE")) {
        if (!(e = node(p, X_CASE))) return NULL;
        p->k++;
        if (!is(p, "WHEN") && !(e->a = expr(p))) return NULL;
        while (accept(p, "WHEN")) {
            tsql_expr *w = expr(p), *th;
            if (!w || !expect(p, "THEN") || !(th = expr(p))) return NULL;
            tsql_expr **na = push(p, e->args, e->nargs, sizeof *na);
            if (!na) return NULL;
            e->args = na;
            na[e->nargs++] = w;
            if (!(na = push(p, e->args, e->nargs, sizeof *na))) return NULL;
            e->args = na;
            na[e->nargs++] = th;
        }
        if (e->nargs == 0) { syntax(p); return NULL; }
        if (accept(p, "ELSE") && !(e->c = expr(p))) return NULL;
        return expect(p, "END") ? e : NULL;
    }
    if (t->k == TK_ID && (tsql_tok_is(t, "CAST") || tsql_tok_is(t, "TRY_CAST")) && tsql_tok_is(&t[1], "(")) {
        if (!(e = node(p, X_CAST))) return NULL;
        p->k += 2;
        if (!(e->a = expr(p)) || !expect(p, "AS") || type_spec(p, &e->type)) return NULL;
        return expect(p, ")") ? e : NULL;
    }
    if (t->k == TK_ID && (tsql_tok_is(t, "CONVERT") || tsql_tok_is(t, "TRY_CONVERT")) && tsql_tok_is(&t[1], "(")) {
        if (!(e = node(p, X_CAST))) return NULL;
        e->is_convert = true;
        p->k += 2;
        if (type_spec(p, &e->type) || !expect(p, ",") || !(e->a = expr(p))) return NULL;
        if (accept(p, ",") && !(e->b = expr(p))) return NULL;
        return expect(p, ")") ? e : NULL;
    }
    if (t->k == TK_ID && tsql_tok_is(t, "EXISTS")) {
        if (!(e = node(p, X_EXISTS))) return NULL;
        p->k++;
        if (!expect(p, "(") || !(e->sub = select_stmt(p))) return NULL;
        return expect(p, ")") ? e : NULL;
    }
    /* a name: column, t.column, or a function */
    if (t->k == TK_ID && is_reserved(t)) { syntax(p); return NULL; }
    e = node(p, X_COL);
    if (!e) return NULL;
    for (;;) {
        if (e->nparts == 4) { syntax(p); return NULL; }
        if (tsql_tok_is(cur(p), "*") && e->nparts > 0) { /* t.* */
            p->k++;
            e->k = X_STAR;
            return e;
        }
        const tsql_tok *nt = cur(p);
        if (nt->k != TK_ID && nt->k != TK_QID) { syntax(p); return NULL; }
        e->parts[e->nparts++] = sim_arena_strndup(p->a, nt->v, nt->vn);
        p->k++;
        if (!accept(p, ".")) break;
    }
    if (!is(p, "(")) return e;
    /* a function call */
    char fname[300] = "";
    for (int i = 0; i < e->nparts; i++) {
        size_t l = strlen(fname);
        snprintf(fname + l, sizeof fname - l, "%s%s", i ? "." : "", e->parts[i]);
    }
    e->k = X_FUNC;
    e->name = sim_arena_strndup(p->a, fname, strlen(fname));
    p->k++;
    if (accept(p, "*")) {
        e->star = true;
    } else if (!is(p, ")")) {
        e->distinct = accept(p, "DISTINCT");
        if (!e->distinct) accept(p, "ALL");
        /* DATEADD(day, ...), DATEDIFF(minute, ...), DATEPART(tzoffset, ...): the part is a word */
        if (expr_list(p, &e->args, &e->nargs)) return NULL;
    }
    if (!expect(p, ")")) return NULL;
    if (accept(p, "OVER")) {
        e->over = true;
        if (!expect(p, "(")) return NULL;
        if (accept(p, "PARTITION")) {
            if (!expect(p, "BY") || expr_list(p, &e->part, &e->npart)) return NULL;
        }
        if (accept(p, "ORDER")) {
            if (!expect(p, "BY") || order_list(p, &e->ord, &e->nord)) return NULL;
        }
        if (!expect(p, ")")) return NULL;
    }
    return e;
}

static tsql_expr *unary(P *p)
{
    if (accept(p, "-")) {
        const tsql_tok *t = cur(p);
        if (t->k == TK_INT || t->k == TK_DEC || t->k == TK_FLOAT) { /* -2147483648 is an int */
            tsql_expr *e = node(p, X_LIT);
            if (!e) return NULL;
            if (tsql_literal(p->a, t, true, &e->lit, &e->type) < 0) { p->rc = MCDC_ENOMEM; return NULL; }
            p->k++;
            return e;
        }
        tsql_expr *e = node(p, X_NEG);
        if (!e || !(e->a = unary(p))) return NULL;
        return e;
    }
    if (accept(p, "+")) return unary(p);
    if (accept(p, "~")) {
        tsql_expr *e = node(p, X_BITNOT);
        if (!e || !(e->a = unary(p))) return NULL;
        return e;
    }
    tsql_expr *e = primary(p);
    while (e && accept(p, "COLLATE")) {
        tsql_expr *c = node(p, X_COLLATE);
        if (!c) return NULL;
        c->a = e;
        if (!(c->name = name_tok(p))) return NULL;
        e = c;
    }
    return e;
}

static tsql_expr *binop(P *p, tsql_xkind k, const char *op, tsql_expr *l, tsql_expr *(*rhs)(P *))
{
    tsql_expr *e = node(p, k);
    if (!e) return NULL;
    snprintf(e->op, sizeof e->op, "%s", op);
    e->a = l;
    if (!(e->b = rhs(p))) return NULL;
    return e;
}

static tsql_expr *mul(P *p)
{
    tsql_expr *l = unary(p);
    while (l && (is(p, "*") || is(p, "/") || is(p, "%"))) {
        char op[2] = {cur(p)->v[0], 0};
        p->k++;
        l = binop(p, X_ARITH, op, l, unary);
    }
    return l;
}

static tsql_expr *add(P *p)
{
    tsql_expr *l = mul(p);
    while (l && (is(p, "+") || is(p, "-") || is(p, "&") || is(p, "|") || is(p, "^"))) {
        char op[2] = {cur(p)->v[0], 0};
        p->k++;
        l = binop(p, X_ARITH, op, l, mul);
    }
    return l;
}

static tsql_expr *pred(P *p)
{
    tsql_expr *l = add(p);
    if (!l) return NULL;
    static const char *const cmps[] = {"=", "<>", "!=", "<=", ">=", "<", ">", "!<", "!>", NULL};
    for (int i = 0; cmps[i]; i++)
        if (is(p, cmps[i])) {
            p->k++;
            const char *op = !strcmp(cmps[i], "!=") ? "<>" : !strcmp(cmps[i], "!<") ? ">=" : !strcmp(cmps[i], "!>") ? "<=" : cmps[i];
            return binop(p, X_CMP, op, l, add);
        }
    if (accept(p, "IS")) {
        tsql_expr *e = node(p, X_ISNULL);
        if (!e) return NULL;
        e->a = l;
        e->neg = accept(p, "NOT");
        return expect(p, "NULL") ? e : NULL;
    }
    bool neg = false;
    if (is(p, "NOT") && (tsql_tok_is(&p->t[p->k + 1], "BETWEEN") || tsql_tok_is(&p->t[p->k + 1], "IN") ||
                         tsql_tok_is(&p->t[p->k + 1], "LIKE"))) {
        neg = true;
        p->k++;
    }
    if (accept(p, "BETWEEN")) {
        tsql_expr *e = node(p, X_BETWEEN);
        if (!e) return NULL;
        e->a = l;
        e->neg = neg;
        if (!(e->b = add(p)) || !expect(p, "AND") || !(e->c = add(p))) return NULL;
        return e;
    }
    if (accept(p, "IN")) {
        tsql_expr *e = node(p, X_IN);
        if (!e) return NULL;
        e->a = l;
        e->neg = neg;
        if (!expect(p, "(")) return NULL;
        if (is_select_start(p)) {
            if (!(e->sub = select_stmt(p))) return NULL;
        } else if (expr_list(p, &e->args, &e->nargs)) {
            return NULL;
        }
        return expect(p, ")") ? e : NULL;
    }
    if (accept(p, "LIKE")) {
        tsql_expr *e = node(p, X_LIKE);
        if (!e) return NULL;
        e->a = l;
        e->neg = neg;
        return (e->b = add(p)) ? e : NULL;
    }
    if (neg) { syntax(p); return NULL; }
    return l;
}

static tsql_expr *notp(P *p)
{
    if (accept(p, "NOT")) {
        tsql_expr *e = node(p, X_NOT);
        if (!e || !(e->a = notp(p))) return NULL;
        return e;
    }
    return pred(p);
}

static tsql_expr *andp(P *p)
{
    tsql_expr *l = notp(p);
    while (l && accept(p, "AND")) l = binop(p, X_AND, "", l, notp);
    return l;
}

static tsql_expr *expr(P *p)
{
    tsql_expr *l = andp(p);
    while (l && accept(p, "OR")) l = binop(p, X_OR, "", l, andp);
    return l;
}

/* ---- FROM ------------------------------------------------------------------------------- */

static int alias_of(P *p, tsql_tref *r, bool required)
{
    bool as = accept(p, "AS");
    const tsql_tok *t = cur(p);
    if ((t->k == TK_ID && !is_reserved(t)) || t->k == TK_QID || (as && t->k == TK_STR)) {
        r->alias = sim_arena_strndup(p->a, t->v, t->vn);
        p->k++;
    } else if (as || required) {
        return syntax(p);
    }
    if (r->alias && is(p, "(") && (r->sub || r->rows)) { /* column aliases */
        p->k++;
        do {
            const char *c = name_tok(p);
            if (!c) return p->rc;
            const char **na = push(p, r->colnames, r->ncolnames, sizeof *na);
            if (!na) return p->rc;
            r->colnames = na;
            na[r->ncolnames++] = c;
        } while (accept(p, ","));
        if (!expect(p, ")")) return p->rc;
    }
    return 0;
}

static int table_ref(P *p, tsql_tref *r)
{
    r->tok = cur(p);
    if (accept(p, "(")) {
        if (accept(p, "VALUES")) {
            do {
                if (!expect(p, "(")) return p->rc;
                tsql_expr **row = NULL;
                int nv = 0;
                if (expr_list(p, &row, &nv)) return p->rc;
                if (!expect(p, ")")) return p->rc;
                if (r->nrows && nv != r->nvals)
                    return p->rc = tsql_fail(p->err, 10709, 16, 1, cur(p)->line,
                                             "The number of columns for each row in a table value constructor must be the same.");
                r->nvals = nv;
                tsql_expr ***na = push(p, r->rows, r->nrows, sizeof *na);
                if (!na) return p->rc;
                r->rows = na;
                na[r->nrows++] = row;
            } while (accept(p, ","));
        } else {
            if (!(r->sub = select_stmt(p))) return p->rc ? p->rc : syntax(p);
        }
        if (!expect(p, ")")) return p->rc;
        return alias_of(p, r, true);
    }
    for (;;) {
        const tsql_tok *t = cur(p);
        if (r->nparts == 4 || (t->k != TK_ID && t->k != TK_QID) || (t->k == TK_ID && is_reserved(t))) return syntax(p);
        r->parts[r->nparts++] = sim_arena_strndup(p->a, t->v, t->vn);
        p->k++;
        if (accept(p, ".")) {
            while (is(p, ".")) { /* db..name: the schema left out */
                if (r->nparts == 4) return syntax(p);
                p->k++;
                r->parts[r->nparts++] = "";
            }
            continue;
        }
        break;
    }
    if (accept(p, "(")) {
        r->is_func = true;
        if (!is(p, ")") && expr_list(p, &r->fargs, &r->nfargs)) return p->rc;
        if (!expect(p, ")")) return p->rc;
    }
    if (accept(p, "WITH")) { /* table hints: WITH (NOLOCK) */
        if (!expect(p, "(")) return p->rc;
        while (!is(p, ")") && cur(p)->k != TK_EOF) p->k++;
        if (!expect(p, ")")) return p->rc;
    }
    return alias_of(p, r, false);
}

static int from_clause(P *p, tsql_select *s)
{
    for (;;) {
        tsql_tref *na = push(p, s->from, s->nfrom, sizeof *na);
        if (!na) return p->rc;
        s->from = na;
        tsql_tref *r = &s->from[s->nfrom];
        memset(r, 0, sizeof *r);
        if (s->nfrom > 0) {
            if (accept(p, ",")) r->join = J_CROSS;
            else if (accept(p, "CROSS")) {
                if (accept(p, "JOIN")) r->join = J_CROSS;
                else if (accept(p, "APPLY")) r->join = J_CROSS_APPLY;
                else return syntax(p);
            } else if (is(p, "OUTER") && tsql_tok_is(&p->t[p->k + 1], "APPLY")) {
                p->k += 2;
                r->join = J_OUTER_APPLY;
            } else {
                if (accept(p, "INNER")) r->join = J_INNER;
                else if (accept(p, "LEFT")) { accept(p, "OUTER"); r->join = J_LEFT; }
                else if (accept(p, "RIGHT")) { accept(p, "OUTER"); r->join = J_RIGHT; }
                else if (accept(p, "FULL")) { accept(p, "OUTER"); r->join = J_FULL; }
                else if (is(p, "JOIN")) r->join = J_INNER;
                else return 0;
                if (!expect(p, "JOIN")) return p->rc;
            }
        }
        if (table_ref(p, r)) return p->rc;
        if (r->join == J_INNER || r->join == J_LEFT || r->join == J_RIGHT || r->join == J_FULL) {
            if (!expect(p, "ON") || !(r->on = expr(p))) return p->rc ? p->rc : syntax(p);
        }
        s->nfrom++;
    }
}

/* ---- SELECT ------------------------------------------------------------------------------ */

static tsql_select *select_core(P *p)
{
    if (accept(p, "(")) { /* (SELECT ...) UNION ALL ... */
        tsql_select *s = select_stmt(p);
        if (!s || !expect(p, ")")) return NULL;
        return s;
    }
    tsql_select *s = alloc(p, sizeof *s);
    if (!s) return NULL;
    s->tok = cur(p);
    if (!expect(p, "SELECT")) return NULL;
    if (accept(p, "DISTINCT")) s->distinct = true;
    else accept(p, "ALL");
    if (accept(p, "TOP")) {
        if (accept(p, "(")) {
            if (!(s->top = expr(p)) || !expect(p, ")")) return NULL;
        } else if (cur(p)->k == TK_INT) {
            s->top = primary(p);
        } else {
            syntax(p); /* TOP @n: a variable only in parentheses */
            return NULL;
        }
        s->top_percent = accept(p, "PERCENT");
        if (accept(p, "WITH")) { if (!expect(p, "TIES")) return NULL; }
    }
    do {
        tsql_item *na = push(p, s->items, s->nitems, sizeof *na);
        if (!na) return NULL;
        s->items = na;
        tsql_item *it = &s->items[s->nitems];
        memset(it, 0, sizeof *it);
        const tsql_tok *t = cur(p);
        if ((t->k == TK_ID || t->k == TK_QID || t->k == TK_STR || t->k == TK_VAR) && tsql_tok_is(&t[1], "=") &&
            !(t->k == TK_ID && is_reserved(t))) { /* alias = expr, @v = expr */
            it->alias = sim_arena_strndup(p->a, t->v, t->vn);
            if (t->k == TK_VAR) s->assigns = true;
            p->k += 2;
            if (!(it->e = expr(p))) return NULL;
        } else {
            if (!(it->e = expr(p))) return NULL;
            bool as = accept(p, "AS");
            const tsql_tok *a = cur(p);
            if ((a->k == TK_ID && !is_reserved(a)) || a->k == TK_QID || a->k == TK_STR) {
                it->alias = sim_arena_strndup(p->a, a->v, a->vn);
                p->k++;
            } else if (as) {
                syntax(p);
                return NULL;
            }
        }
        s->nitems++;
    } while (accept(p, ","));
    if (accept(p, "INTO")) { syntax(p); return NULL; }
    if (accept(p, "FROM") && from_clause(p, s)) return NULL;
    if (accept(p, "WHERE") && !(s->where = expr(p))) return NULL;
    if (accept(p, "GROUP")) {
        if (!expect(p, "BY") || expr_list(p, &s->group, &s->ngroup)) return NULL;
    }
    if (accept(p, "HAVING") && !(s->having = expr(p))) return NULL;
    return p->rc ? NULL : s;
}

static tsql_select *select_stmt(P *p)
{
    tsql_select *first = select_core(p);
    if (!first) return NULL;
    tsql_select *last = first;
    while (is(p, "UNION")) {
        p->k++;
        if (!expect(p, "ALL")) return NULL; /* UNION without ALL is outside the subset */
        if (!(last->union_all = select_core(p))) return NULL;
        last = last->union_all;
    }
    if (accept(p, "ORDER")) {
        if (!expect(p, "BY") || order_list(p, &first->order, &first->norder)) return NULL;
        if (accept(p, "OFFSET")) {
            if (!(first->offset = expr(p))) return NULL;
            if (!accept(p, "ROWS") && !expect(p, "ROW")) return NULL;
            if (accept(p, "FETCH")) {
                if (!accept(p, "NEXT") && !expect(p, "FIRST")) return NULL;
                if (!(first->fetch = expr(p))) return NULL;
                if (!accept(p, "ROWS") && !expect(p, "ROW")) return NULL;
                if (!expect(p, "ONLY")) return NULL;
            }
        }
    } else if (is(p, "OFFSET")) {
        syntax(p); /* OFFSET needs ORDER BY */
        return NULL;
    }
    return first;
}

int tsql_parse_select(sim_arena *a, const tsql_tok *t, int n, int *k, tsql_select **out, tsql_error *err)
{
    P p = {a, t, n, *k, err, 0};
    *out = select_stmt(&p);
    if (!*out && p.rc == 0) syntax(&p);
    *k = p.k;
    return *out ? 0 : p.rc;
}

int tsql_parse_expr(sim_arena *a, const tsql_tok *t, int n, int *k, tsql_expr **out, tsql_error *err)
{
    P p = {a, t, n, *k, err, 0};
    *out = expr(&p);
    if (!*out && p.rc == 0) syntax(&p);
    *k = p.k;
    return *out ? 0 : p.rc;
}
