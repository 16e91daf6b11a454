/*
 * source/sim/tsql.c: the T-SQL subset the simulator runs, parsed by hand.
 *
 *   INSERT [INTO] s.t [(c, ...)] VALUES (e, ...) [, (e, ...)]
 *   UPDATE s.t SET c = e [, c = e] [WHERE p]
 *   DELETE [FROM] s.t [WHERE p]
 *   ALTER TABLE s.t ADD c TYPE [NULL|NOT NULL] | DROP COLUMN c | ALTER COLUMN c TYPE [NULL|NOT NULL]
 *   e: literals (numbers, 'text', N'text', 0xHEX, NULL), columns, unary -, + - * / %, ( )
 *   p: e (= <> != < <= > >=) e, e [NOT] IN (e, ...), e IS [NOT] NULL, e [NOT] BETWEEN e AND e,
 *      AND, OR, NOT, ( )
 * Anything else is refused with SQL Server's "Incorrect syntax" or a sentence naming what is
 * not supported. Literals stay untyped until they meet a column (sim_convert). Everything
 * parsed lives in the caller's arena; nothing is kept.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/sim_int.h"

typedef enum { K_EOF, K_IDENT, K_QIDENT, K_NUM, K_STR, K_HEX, K_OP } tok_kind;

typedef struct tok {
    tok_kind    k;
    const char *p;   /* start in the text */
    size_t      n;   /* length in the text */
    const char *v;   /* K_IDENT/K_QIDENT/K_STR: the value (unquoted) */
    size_t      vn;
    bool        wide; /* N'...' */
} tok;

typedef struct parser {
    sim_arena  *a;
    const char *src, *pos, *end;
    tok         t;   /* current token */
    int         stmt_no;
    int         rc;  /* first error */
} parser;

static int perr(parser *ps, const char *fmt, const char *near, size_t n)
{
    if (ps->rc == 0) {
        char buf[128];
        snprintf(buf, sizeof buf, "%.*s", (int)(n > 60 ? 60 : n), near);
        ps->rc = mcdc_error_set(MCDC_EINVAL, fmt, buf);
        if (ps->stmt_no > 0)
            mcdc_error_prefix("statement %d", ps->stmt_no);
    }
    return ps->rc;
}

static int syntax(parser *ps)
{
    if (ps->t.k == K_EOF)
        return perr(ps, "Msg 102: Incorrect syntax near '%s' (the statement ends too early).",
                    ps->src, (size_t)(ps->end - ps->src) > 30 ? 30 : (size_t)(ps->end - ps->src));
    return perr(ps, "Msg 102: Incorrect syntax near '%s'.", ps->t.p, ps->t.n);
}

static void next(parser *ps)
{
    const char *p = ps->pos, *e = ps->end;
    for (;;) {
        while (p < e && isspace((unsigned char)*p)) p++;
        if (p + 1 < e && p[0] == '-' && p[1] == '-') {
            while (p < e && *p != '\n') p++;
            continue;
        }
        if (p + 1 < e && p[0] == '/' && p[1] == '*') {
            const char *q = p + 2;
            while (q + 1 < e && !(q[0] == '*' && q[1] == '/')) q++;
            p = q + 1 < e ? q + 2 : e;
            continue;
        }
        break;
    }
    tok t = {K_EOF, p, 0, NULL, 0, false};
    if (p >= e) {
        ps->t = t;
        ps->pos = p;
        return;
    }
    char c = *p;
    if ((c == 'N' || c == 'n') && p + 1 < e && p[1] == '\'') {
        t.wide = true;
        p++;
        c = '\'';
    }
    if (c == '\'') {
        const char *q = p + 1;
        size_t cap = 0;
        while (q < e) {
            if (*q == '\'') {
                if (q + 1 < e && q[1] == '\'') { q += 2; cap++; continue; }
                break;
            }
            q++;
            cap++;
        }
        if (q >= e) {
            t.k = K_OP;
            t.n = (size_t)(e - t.p);
            ps->t = t;
            ps->pos = e;
            perr(ps, "Msg 105: Unclosed quotation mark after the character string '%s'.", p + 1, (size_t)(e - p - 1));
            return;
        }
        char *v = sim_arena_alloc(ps->a, cap + 1);
        size_t n = 0;
        for (const char *r = p + 1; r < q; r++) {
            v[n++] = *r;
            if (*r == '\'') r++;
        }
        t.k = K_STR;
        t.v = v;
        t.vn = n;
        t.n = (size_t)(q + 1 - t.p);
        ps->pos = q + 1;
    } else if (c == '0' && p + 1 < e && (p[1] == 'x' || p[1] == 'X')) {
        const char *q = p + 2;
        while (q < e && isxdigit((unsigned char)*q)) q++;
        t.k = K_HEX;
        t.n = (size_t)(q - p);
        ps->pos = q;
    } else if (isdigit((unsigned char)c) || (c == '.' && p + 1 < e && isdigit((unsigned char)p[1]))) {
        const char *q = p;
        while (q < e && isdigit((unsigned char)*q)) q++;
        if (q < e && *q == '.') { q++; while (q < e && isdigit((unsigned char)*q)) q++; }
        if (q < e && (*q == 'e' || *q == 'E')) {
            const char *r = q + 1;
            if (r < e && (*r == '+' || *r == '-')) r++;
            if (r < e && isdigit((unsigned char)*r)) {
                q = r;
                while (q < e && isdigit((unsigned char)*q)) q++;
            }
        }
        t.k = K_NUM;
        t.n = (size_t)(q - p);
        ps->pos = q;
    } else if (isalpha((unsigned char)c) || c == '_' || c == '@' || c == '#' || (unsigned char)c >= 0x80) {
        const char *q = p;
        while (q < e && (isalnum((unsigned char)*q) || *q == '_' || *q == '@' || *q == '#' || *q == '$' ||
                         (unsigned char)*q >= 0x80))
            q++;
        t.k = K_IDENT;
        t.n = (size_t)(q - p);
        t.v = p;
        t.vn = t.n;
        ps->pos = q;
    } else if (c == '[' || c == '"') {
        char close = c == '[' ? ']' : '"';
        const char *q = p + 1;
        size_t cap = 0;
        while (q < e) {
            if (*q == close) {
                if (q + 1 < e && q[1] == close) { q += 2; cap++; continue; }
                break;
            }
            q++;
            cap++;
        }
        if (q >= e) {
            t.k = K_OP;
            t.n = (size_t)(e - p);
            ps->t = t;
            ps->pos = e;
            perr(ps, "Msg 105: Unclosed quotation mark near '%s'.", p, (size_t)(e - p));
            return;
        }
        char *v = sim_arena_alloc(ps->a, cap + 1);
        size_t n = 0;
        for (const char *r = p + 1; r < q; r++) {
            v[n++] = *r;
            if (*r == close) r++;
        }
        t.k = K_QIDENT;
        t.v = v;
        t.vn = n;
        t.n = (size_t)(q + 1 - p);
        ps->pos = q + 1;
    } else {
        static const char *const two[] = {"<>", "!=", "<=", ">=", "!<", "!>"};
        t.k = K_OP;
        t.n = 1;
        for (size_t i = 0; i < 6; i++)
            if (p + 1 < e && p[0] == two[i][0] && p[1] == two[i][1])
                t.n = 2;
        ps->pos = p + t.n;
    }
    ps->t = t;
}

static bool is_kw(const parser *ps, const char *kw)
{
    return ps->t.k == K_IDENT && ps->t.n == strlen(kw) && !strncasecmp(ps->t.p, kw, ps->t.n);
}

static bool is_op(const parser *ps, const char *op)
{
    return ps->t.k == K_OP && ps->t.n == strlen(op) && !strncmp(ps->t.p, op, ps->t.n);
}

static bool accept_kw(parser *ps, const char *kw)
{
    if (!is_kw(ps, kw)) return false;
    next(ps);
    return true;
}

static bool accept_op(parser *ps, const char *op)
{
    if (!is_op(ps, op)) return false;
    next(ps);
    return true;
}

static int expect_op(parser *ps, const char *op)
{
    return accept_op(ps, op) ? 0 : syntax(ps);
}

static const char *const reserved[] = {"SELECT", "FROM", "WHERE", "SET", "VALUES", "AND", "OR", "NOT", "IN", "IS",
                                       "NULL", "BETWEEN", "INSERT", "UPDATE", "DELETE", "INTO", "TOP", "OUTPUT",
                                       "ALTER", "TABLE", "ADD", "DROP", "COLUMN", "LIKE", "EXISTS", NULL};

static bool is_reserved(const tok *t)
{
    if (t->k != K_IDENT) return false;
    for (int i = 0; reserved[i]; i++)
        if (t->n == strlen(reserved[i]) && !strncasecmp(t->p, reserved[i], t->n))
            return true;
    return false;
}

/* An identifier (plain or quoted); NULL after recording an error. */
static const char *ident(parser *ps)
{
    if ((ps->t.k != K_IDENT && ps->t.k != K_QIDENT) || is_reserved(&ps->t) || ps->t.vn == 0 || ps->t.vn > 128) {
        syntax(ps);
        return NULL;
    }
    const char *v = sim_arena_strndup(ps->a, ps->t.v, ps->t.vn);
    next(ps);
    return v;
}

static int table_name(parser *ps, char schema[129], char table[129])
{
    const char *a = ident(ps);
    if (!a) return ps->rc;
    if (accept_op(ps, ".")) {
        const char *b = ident(ps);
        if (!b) return ps->rc;
        if (is_op(ps, "."))
            return perr(ps, "three-part names are not supported: '%s...'", a, strlen(a));
        snprintf(schema, 129, "%s", a);
        snprintf(table, 129, "%s", b);
    } else {
        snprintf(schema, 129, "dbo");
        snprintf(table, 129, "%s", a);
    }
    return 0;
}

static sim_expr *node(parser *ps, sim_op op)
{
    sim_expr *e = sim_arena_alloc(ps->a, sizeof *e);
    if (!e) {
        if (!ps->rc) ps->rc = mcdc_error_set(MCDC_ENOMEM, "out of memory parsing a statement");
        return NULL;
    }
    e->op = op;
    e->col = -1;
    return e;
}

static sim_expr *expr(parser *ps);
static sim_expr *pred(parser *ps);

static int number_literal(parser *ps, const char *p, size_t n, bool neg, sim_val *v)
{
    char buf[80];
    if (n >= sizeof buf - 2)
        return perr(ps, "Msg 1007: The number '%s' is out of the range for numeric representation (maximum precision 38).", p, n);
    snprintf(buf, sizeof buf, "%s%.*s", neg ? "-" : "", (int)n, p);
    memset(v, 0, sizeof *v);
    v->lit = true;
    if (memchr(p, 'e', n) || memchr(p, 'E', n)) {
        v->k = V_FLT;
        v->u.d = strtod(buf, NULL);
        return 0;
    }
    const char *dot = memchr(p, '.', n);
    if (!dot) {
        char *end;
        errno = 0;
        long long x = strtoll(buf, &end, 10);
        if (errno == 0 && *end == '\0') {
            v->k = V_INT;
            v->big = x > INT32_MAX || x < INT32_MIN;
            v->u.i = x;
            return 0;
        }
    }
    int scale = dot ? (int)(n - (size_t)(dot - p) - 1) : 0;
    int digits = 0;
    for (size_t i = 0; i < n; i++)
        if (isdigit((unsigned char)p[i])) digits++;
    if (digits > 38)
        return perr(ps, "Msg 1007: The number '%s' is out of the range for numeric representation (maximum precision 38).", p, n);
    v->k = V_DEC;
    v->scale = scale;
    v->prec = digits > scale ? digits : scale + 1;
    if (mcdc_decimal_parse(&v->u.dec, buf, strlen(buf), 38, scale) < 0)
        return perr(ps, "bad number '%s'", p, n);
    return 0;
}

static sim_expr *factor(parser *ps)
{
    if (ps->rc) return NULL;
    if (accept_op(ps, "-")) {
        if (ps->t.k == K_NUM) {
            sim_expr *e = node(ps, E_LIT);
            if (!e || number_literal(ps, ps->t.p, ps->t.n, true, &e->lit) < 0) return NULL;
            next(ps);
            return e;
        }
        sim_expr *e = node(ps, E_NEG);
        if (!e || !(e->a = factor(ps))) return NULL;
        return e;
    }
    if (accept_op(ps, "+"))
        return factor(ps);
    if (accept_op(ps, "(")) {
        sim_expr *e = expr(ps);
        if (!e || expect_op(ps, ")") < 0) return NULL;
        return e;
    }
    sim_expr *e;
    switch (ps->t.k) {
    case K_NUM:
        e = node(ps, E_LIT);
        if (!e || number_literal(ps, ps->t.p, ps->t.n, false, &e->lit) < 0) return NULL;
        next(ps);
        return e;
    case K_STR:
        e = node(ps, E_LIT);
        if (!e) return NULL;
        e->lit.k = V_STR;
        e->lit.lit = true;
        e->lit.big = ps->t.wide;
        e->lit.u.s.p = ps->t.v;
        e->lit.u.s.n = ps->t.vn;
        next(ps);
        return e;
    case K_HEX: {
        e = node(ps, E_LIT);
        if (!e) return NULL;
        size_t nd = ps->t.n - 2;
        char *b = sim_arena_alloc(ps->a, nd / 2 + 2);
        size_t nb = 0, i = 0;
        const char *h = ps->t.p + 2;
        if (nd % 2) { b[nb++] = (char)(isdigit((unsigned char)h[0]) ? h[0] - '0' : toupper((unsigned char)h[0]) - 'A' + 10); i = 1; }
        for (; i + 1 < nd + 1 && i < nd; i += 2) {
            int hi = isdigit((unsigned char)h[i]) ? h[i] - '0' : toupper((unsigned char)h[i]) - 'A' + 10;
            int lo = isdigit((unsigned char)h[i + 1]) ? h[i + 1] - '0' : toupper((unsigned char)h[i + 1]) - 'A' + 10;
            b[nb++] = (char)(hi << 4 | lo);
        }
        e->lit.k = V_BIN;
        e->lit.lit = true;
        e->lit.u.s.p = b;
        e->lit.u.s.n = nb;
        next(ps);
        return e;
    }
    case K_IDENT: case K_QIDENT:
        if (is_kw(ps, "NULL")) {
            next(ps);
            e = node(ps, E_LIT);
            if (e) e->lit.lit = true;
            return e;
        }
        if (ps->t.k == K_IDENT && is_reserved(&ps->t)) {
            syntax(ps);
            return NULL;
        }
        {
            tok first = ps->t;
            const char *name = ident(ps);
            if (!name) return NULL;
            if (is_op(ps, "("))
                return perr(ps, "function calls are not supported by the simulator: '%s(...)'", first.p, first.n), NULL;
            while (accept_op(ps, ".")) { /* t.c or s.t.c: the column is the last part */
                name = ident(ps);
                if (!name) return NULL;
            }
            e = node(ps, E_COL);
            if (e) e->name = name;
            return e;
        }
    default:
        syntax(ps);
        return NULL;
    }
}

static sim_expr *term(parser *ps)
{
    sim_expr *l = factor(ps);
    while (l && !ps->rc && (is_op(ps, "*") || is_op(ps, "/") || is_op(ps, "%"))) {
        sim_op op = is_op(ps, "*") ? E_MUL : is_op(ps, "/") ? E_DIV : E_MOD;
        next(ps);
        sim_expr *e = node(ps, op);
        if (!e) return NULL;
        e->a = l;
        if (!(e->b = factor(ps))) return NULL;
        l = e;
    }
    return ps->rc ? NULL : l;
}

static sim_expr *expr(parser *ps)
{
    sim_expr *l = term(ps);
    while (l && !ps->rc && (is_op(ps, "+") || is_op(ps, "-"))) {
        sim_op op = is_op(ps, "+") ? E_ADD : E_SUB;
        next(ps);
        sim_expr *e = node(ps, op);
        if (!e) return NULL;
        e->a = l;
        if (!(e->b = term(ps))) return NULL;
        l = e;
    }
    return ps->rc ? NULL : l;
}

static sim_expr *negate(parser *ps, sim_expr *e)
{
    sim_expr *n = node(ps, P_NOT);
    if (n) n->a = e;
    return n;
}

static sim_expr *comparison(parser *ps)
{
    sim_expr *l = expr(ps);
    if (!l) return NULL;
    static const struct { const char *op; sim_op code; } cmp[] = {
        {"=", P_EQ}, {"<>", P_NE}, {"!=", P_NE}, {"<=", P_LE}, {">=", P_GE}, {"<", P_LT}, {">", P_GT},
        {"!<", P_GE}, {"!>", P_LE}};
    for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++)
        if (is_op(ps, cmp[i].op)) {
            next(ps);
            sim_expr *e = node(ps, cmp[i].code);
            if (!e) return NULL;
            e->a = l;
            if (!(e->b = expr(ps))) return NULL;
            return e;
        }
    if (accept_kw(ps, "IS")) {
        bool neg = accept_kw(ps, "NOT");
        if (!accept_kw(ps, "NULL")) return syntax(ps), NULL;
        sim_expr *e = node(ps, neg ? P_NOTNULL : P_ISNULL);
        if (e) e->a = l;
        return e;
    }
    bool neg = accept_kw(ps, "NOT");
    if (accept_kw(ps, "IN")) {
        if (expect_op(ps, "(") < 0) return NULL;
        if (is_kw(ps, "SELECT"))
            return perr(ps, "subqueries are not supported by the simulator: '%s'", ps->t.p, ps->t.n), NULL;
        sim_expr *e = node(ps, P_IN);
        if (!e) return NULL;
        e->a = l;
        int cap = 8;
        e->list = sim_arena_alloc(ps->a, (size_t)cap * sizeof *e->list);
        do {
            if (e->n_list == cap) {
                sim_expr **nl = sim_arena_alloc(ps->a, (size_t)cap * 2 * sizeof *nl);
                if (!nl) return NULL;
                memcpy(nl, e->list, (size_t)cap * sizeof *nl);
                e->list = nl;
                cap *= 2;
            }
            if (!(e->list[e->n_list++] = expr(ps))) return NULL;
        } while (accept_op(ps, ","));
        if (expect_op(ps, ")") < 0) return NULL;
        return neg ? negate(ps, e) : e;
    }
    if (accept_kw(ps, "BETWEEN")) {
        sim_expr *e = node(ps, P_BETWEEN);
        if (!e) return NULL;
        e->a = l;
        if (!(e->b = expr(ps))) return NULL;
        if (!accept_kw(ps, "AND")) return syntax(ps), NULL;
        if (!(e->c = expr(ps))) return NULL;
        return neg ? negate(ps, e) : e;
    }
    if (is_kw(ps, "LIKE"))
        return perr(ps, "LIKE is not supported by the simulator: '%s'", ps->t.p, ps->t.n), NULL;
    return syntax(ps), NULL;
}

static sim_expr *pred_primary(parser *ps)
{
    if (accept_kw(ps, "NOT")) {
        sim_expr *e = pred_primary(ps);
        return e ? negate(ps, e) : NULL;
    }
    if (is_kw(ps, "EXISTS"))
        return perr(ps, "EXISTS is not supported by the simulator: '%s'", ps->t.p, ps->t.n), NULL;
    if (is_op(ps, "(")) {
        /* a parenthesised predicate, or an expression starting with '(' */
        const char *save_pos = ps->pos;
        tok save_tok = ps->t;
        next(ps);
        mcdc_error e0 = *mcdc_error_last();
        sim_expr *p = pred(ps);
        if (p && !ps->rc && accept_op(ps, ")"))
            return p;
        ps->rc = 0;
        mcdc_error_clear();
        (void)e0;
        ps->pos = save_pos;
        ps->t = save_tok;
    }
    return comparison(ps);
}

static sim_expr *pred_and(parser *ps)
{
    sim_expr *l = pred_primary(ps);
    while (l && accept_kw(ps, "AND")) {
        sim_expr *e = node(ps, P_AND);
        if (!e) return NULL;
        e->a = l;
        if (!(e->b = pred_primary(ps))) return NULL;
        l = e;
    }
    return ps->rc ? NULL : l;
}

static sim_expr *pred(parser *ps)
{
    sim_expr *l = pred_and(ps);
    while (l && accept_kw(ps, "OR")) {
        sim_expr *e = node(ps, P_OR);
        if (!e) return NULL;
        e->a = l;
        if (!(e->b = pred_and(ps))) return NULL;
        l = e;
    }
    return ps->rc ? NULL : l;
}

/* Grow-by-doubling arrays in the arena. */
static void *grow(sim_arena *a, void *old, int n, int *cap, size_t elem)
{
    if (n < *cap) return old;
    int nc = *cap ? *cap * 2 : 8;
    void *p = sim_arena_alloc(a, (size_t)nc * elem);
    if (p && old) memcpy(p, old, (size_t)n * elem);
    *cap = nc;
    return p;
}

static int parse_insert(parser *ps, sim_stmt *s)
{
    accept_kw(ps, "INTO");
    if (table_name(ps, s->schema, s->table) < 0) return ps->rc;
    int cap = 0;
    if (accept_op(ps, "(")) {
        do {
            s->cols = grow(ps->a, (void *)s->cols, s->n_cols, &cap, sizeof *s->cols);
            if (!s->cols) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            if (!(s->cols[s->n_cols++] = ident(ps))) return ps->rc;
        } while (accept_op(ps, ","));
        if (expect_op(ps, ")") < 0) return ps->rc;
    }
    if (is_kw(ps, "SELECT") || is_kw(ps, "DEFAULT") || is_kw(ps, "OUTPUT"))
        return perr(ps, "INSERT ... %s is not supported by the simulator: use INSERT ... VALUES (...)", ps->t.p, ps->t.n);
    if (!accept_kw(ps, "VALUES")) return syntax(ps);
    int rcap = 0;
    do {
        if (expect_op(ps, "(") < 0) return ps->rc;
        int vcap = 0, nv = 0;
        sim_expr **vals = NULL;
        do {
            vals = grow(ps->a, vals, nv, &vcap, sizeof *vals);
            if (!vals) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            if (!(vals[nv++] = expr(ps))) return ps->rc;
        } while (accept_op(ps, ","));
        if (expect_op(ps, ")") < 0) return ps->rc;
        int old = rcap;
        s->rows = grow(ps->a, s->rows, s->n_rows, &rcap, sizeof *s->rows);
        rcap = old;
        s->n_vals = grow(ps->a, s->n_vals, s->n_rows, &rcap, sizeof *s->n_vals);
        if (!s->rows || !s->n_vals) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        s->rows[s->n_rows] = vals;
        s->n_vals[s->n_rows++] = nv;
    } while (accept_op(ps, ","));
    return ps->rc;
}

static int parse_where(parser *ps, sim_stmt *s)
{
    if (accept_kw(ps, "WHERE")) {
        if (is_kw(ps, "CURRENT"))
            return perr(ps, "cursors are not supported by the simulator: '%s'", ps->t.p, ps->t.n);
        if (!(s->where = pred(ps))) return ps->rc ? ps->rc : syntax(ps);
    } else if (is_kw(ps, "FROM") || is_kw(ps, "OUTPUT") || is_kw(ps, "OPTION")) {
        return perr(ps, "'%s' clauses are not supported by the simulator", ps->t.p, ps->t.n);
    }
    return 0;
}

static int parse_update(parser *ps, sim_stmt *s)
{
    if (is_kw(ps, "TOP"))
        return perr(ps, "UPDATE TOP is not supported by the simulator: '%s'", ps->t.p, ps->t.n);
    if (table_name(ps, s->schema, s->table) < 0) return ps->rc;
    if (!accept_kw(ps, "SET")) return syntax(ps);
    int cap = 0, cap2 = 0;
    do {
        s->cols = grow(ps->a, (void *)s->cols, s->n_cols, &cap, sizeof *s->cols);
        s->set = grow(ps->a, s->set, s->n_cols, &cap2, sizeof *s->set);
        if (!s->cols || !s->set) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        const char *c = ident(ps);
        if (!c) return ps->rc;
        while (accept_op(ps, "."))
            if (!(c = ident(ps))) return ps->rc;
        if (expect_op(ps, "=") < 0) return ps->rc;
        s->cols[s->n_cols] = c;
        if (!(s->set[s->n_cols] = expr(ps))) return ps->rc;
        s->n_cols++;
    } while (accept_op(ps, ","));
    return parse_where(ps, s);
}

static int parse_delete(parser *ps, sim_stmt *s)
{
    if (is_kw(ps, "TOP"))
        return perr(ps, "DELETE TOP is not supported by the simulator: '%s'", ps->t.p, ps->t.n);
    accept_kw(ps, "FROM");
    if (table_name(ps, s->schema, s->table) < 0) return ps->rc;
    return parse_where(ps, s);
}

int sim_parse_statements(sim_arena *a, const char *sql, sim_stmt ***out, int *n_out)
{
    parser ps = {a, sql, sql, sql + strlen(sql), {0}, 0, 0};
    sim_stmt **list = NULL;
    int n = 0, cap = 0;
    next(&ps);
    while (!ps.rc) {
        while (accept_op(&ps, ";")) {}
        if (ps.t.k == K_EOF) break;
        ps.stmt_no = n + 1;
        sim_stmt *s = sim_arena_alloc(a, sizeof *s);
        list = grow(a, list, n, &cap, sizeof *list);
        if (!s || !list) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        s->text = ps.t.p;
        if (accept_kw(&ps, "INSERT")) { s->kind = S_INSERT; parse_insert(&ps, s); }
        else if (accept_kw(&ps, "UPDATE")) { s->kind = S_UPDATE; parse_update(&ps, s); }
        else if (accept_kw(&ps, "DELETE")) { s->kind = S_DELETE; parse_delete(&ps, s); }
        else if (ps.t.k == K_IDENT || ps.t.k == K_QIDENT) {
            perr(&ps, "'%s' statements are not supported by the simulator: it runs INSERT, UPDATE and DELETE "
                      "(ALTER TABLE through 'sim ddl')", ps.t.p, ps.t.n);
            break;
        } else {
            syntax(&ps);
            break;
        }
        if (ps.rc) break;
        if (ps.t.k != K_EOF && !is_op(&ps, ";")) {
            syntax(&ps);
            break;
        }
        s->text_len = (size_t)(ps.t.p - s->text);
        while (s->text_len && isspace((unsigned char)s->text[s->text_len - 1])) s->text_len--;
        list[n++] = s;
    }
    if (ps.rc) return ps.rc;
    if (n == 0) return mcdc_error_set(MCDC_EINVAL, "no statement to run");
    *out = list;
    *n_out = n;
    return 0;
}

static int coldef(parser *ps, sim_coldef *c)
{
    if (!(c->name = ident(ps))) return ps->rc;
    const char *tstart = ps->t.p;
    if (ps->t.k != K_IDENT && ps->t.k != K_QIDENT) return syntax(ps);
    next(ps);
    if (accept_op(ps, "(")) {
        while (ps->t.k != K_EOF && !is_op(ps, ")")) next(ps);
        if (expect_op(ps, ")") < 0) return ps->rc;
    }
    const char *tend = ps->t.k == K_EOF ? ps->end : ps->t.p;
    while (tend > tstart && isspace((unsigned char)tend[-1])) tend--;
    if (sim_type_parse(&c->type, tstart, (size_t)(tend - tstart)) < 0) {
        ps->rc = mcdc_error_last()->code;
        return mcdc_error_prefix("column %s", c->name);
    }
    c->nullable = true;
    if (accept_kw(ps, "NOT")) {
        if (!accept_kw(ps, "NULL")) return syntax(ps);
        c->nullable = false;
        c->null_given = true;
    } else if (accept_kw(ps, "NULL")) {
        c->null_given = true;
    }
    if (ps->t.k == K_IDENT && !is_kw(ps, "NOT") && !is_op(ps, ","))
        return perr(ps, "column options other than NULL and NOT NULL are not supported by the simulator: '%s'",
                    ps->t.p, ps->t.n);
    return 0;
}

int sim_parse_coldefs(sim_arena *a, const char *text, sim_coldef **out, int *n_out)
{
    parser ps = {a, text, text, text + strlen(text), {0}, 0, 0};
    sim_coldef *list = NULL;
    int n = 0, cap = 0;
    next(&ps);
    do {
        list = grow(a, list, n, &cap, sizeof *list);
        if (!list) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        memset(&list[n], 0, sizeof list[n]);
        if (coldef(&ps, &list[n]) < 0) return ps.rc ? ps.rc : mcdc_error_last()->code;
        n++;
    } while (accept_op(&ps, ","));
    if (ps.t.k != K_EOF) return syntax(&ps);
    *out = list;
    *n_out = n;
    return 0;
}

int sim_parse_ddl(sim_arena *a, const char *sql, sim_ddl_stmt *out)
{
    parser ps = {a, sql, sql, sql + strlen(sql), {0}, 0, 0};
    memset(out, 0, sizeof *out);
    next(&ps);
    if (!accept_kw(&ps, "ALTER") || !accept_kw(&ps, "TABLE"))
        return perr(&ps, "'%s' is not supported by sim ddl: it runs ALTER TABLE t ADD c TYPE, ALTER TABLE t DROP "
                         "COLUMN c and ALTER TABLE t ALTER COLUMN c TYPE", sql, strlen(sql));
    if (table_name(&ps, out->schema, out->table) < 0) return ps.rc;
    if (accept_kw(&ps, "ADD")) {
        accept_kw(&ps, "COLUMN");
        out->kind = D_ADD;
        if (coldef(&ps, &out->col) < 0) return ps.rc ? ps.rc : mcdc_error_last()->code;
    } else if (accept_kw(&ps, "DROP")) {
        if (!accept_kw(&ps, "COLUMN"))
            return perr(&ps, "only DROP COLUMN is supported by sim ddl: '%s'", ps.t.p, ps.t.n);
        out->kind = D_DROP;
        if (!(out->col.name = ident(&ps))) return ps.rc;
    } else if (accept_kw(&ps, "ALTER")) {
        if (!accept_kw(&ps, "COLUMN")) return syntax(&ps);
        out->kind = D_ALTER;
        if (coldef(&ps, &out->col) < 0) return ps.rc ? ps.rc : mcdc_error_last()->code;
    } else {
        return perr(&ps, "ALTER TABLE ... %s is not supported by sim ddl (ADD, DROP COLUMN and ALTER COLUMN are)",
                    ps.t.p, ps.t.n);
    }
    accept_op(&ps, ";");
    if (ps.t.k != K_EOF) return syntax(&ps);
    return 0;
}

int sim_parse_table_name(const char *text, char schema[129], char table[129])
{
    sim_arena a = {0};
    parser ps = {&a, text, text, text + strlen(text), {0}, 0, 0};
    next(&ps);
    int rc = table_name(&ps, schema, table);
    if (rc == 0 && ps.t.k != K_EOF)
        rc = perr(&ps, "bad table name '%s': expected schema.table", text, strlen(text));
    if (rc < 0 && !strstr(mcdc_error_last()->message, "table name"))
        mcdc_error_set(MCDC_EINVAL, "bad table name '%s': expected schema.table (e.g. dbo.orders)", text);
    sim_arena_free(&a);
    return rc;
}
