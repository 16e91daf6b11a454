/*
 * source/sim/tsql_compile.c: a parsed SELECT, typed with SQL Server's rules and written as
 * SQLite SQL over the simulator's views (docs/decisions/0011-tsql-engine-over-sqlite.md).
 *
 * One pass: every expression gets its SQL Server type and nullability and the SQLite text
 * that computes it, in the storage form of that type (sim_bind's: integers, REAL, text for
 * strings and times, BLOB for binaries, unscaled integers for decimals up to 18 digits).
 * Where two types meet (comparison, CASE, IN, UNION ALL) the one of lower precedence is
 * converted (mc_cast), as SQL Server does; string to binary is never implicit (257). Literals
 * and variables travel as bound parameters in their types. Names resolve only in FROM, so a
 * select-list alias is not visible in WHERE or GROUP BY (207); ORDER BY sees both.
 * Checks: 207, 208, 229 (grants), 257, 1033, 195 (unknown function), 4104 (unknown prefix),
 * 8155 (a derived table column without a name), 8120 (grouped select lists). Built-in
 * functions are in tsql_builtin.c, server and CDC functions in tsql_sys.c.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/time.h"
#include "source/sim/tsql_ast.h"
#include "source/sim/tsql_compile.h"

char *tc_fmt(C *c, const char *f, ...)
{
    va_list ap, aq;
    va_start(ap, f);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, f, ap);
    va_end(ap);
    char *p = sim_arena_alloc(&c->s->arena, (size_t)n + 1);
    if (p) vsnprintf(p, (size_t)n + 1, f, aq);
    va_end(aq);
    return p;
}

static char *qid(C *c, const char *name)
{
    size_t n = strlen(name), k = 0;
    char *p = sim_arena_alloc(&c->s->arena, n * 2 + 3);
    if (!p) return NULL;
    p[k++] = '"';
    for (size_t i = 0; i < n; i++) {
        p[k++] = name[i];
        if (name[i] == '"') p[k++] = '"';
    }
    p[k++] = '"';
    p[k] = 0;
    return p;
}

static const char *name_dup(C *c, const char *s)
{
    return sim_arena_strndup(&c->s->arena, s, strlen(s));
}

static int bind(C *c, const sim_type *t, const sim_val *v, const char **sql)
{
    tsql_compiled *o = c->out;
    if (o->nbinds == o->cap_binds) {
        int cap = o->cap_binds ? o->cap_binds * 2 : 16;
        sim_val *nb = realloc(o->binds, (size_t)cap * sizeof *nb);
        if (nb) o->binds = nb;
        sim_type *nt = realloc(o->btypes, (size_t)cap * sizeof *nt);
        if (nt) o->btypes = nt;
        if (!nb || !nt) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        o->cap_binds = cap;
    }
    o->binds[o->nbinds] = *v;
    o->btypes[o->nbinds] = *t;
    o->nbinds++;
    *sql = tc_fmt(c, "?%d", o->nbinds);
    return *sql ? 0 : MCDC_ENOMEM;
}

int tc_line_of(const tsql_expr *e) { return e && e->tok ? e->tok->line : 1; }

/* ---- types ------------------------------------------------------------------------------- */

static int precedence(sim_tkind k)
{
    static const sim_tkind order[] = {ST_DATETIMEOFFSET, ST_DATETIME2, ST_DATETIME, ST_SMALLDATETIME, ST_DATE, ST_TIME,
                                      ST_FLOAT, ST_REAL, ST_DECIMAL, ST_NUMERIC, ST_MONEY, ST_SMALLMONEY, ST_BIGINT,
                                      ST_INT, ST_SMALLINT, ST_TINYINT, ST_BIT, ST_XML, ST_NTEXT, ST_TEXT, ST_IMAGE, ST_ROWVERSION,
                                      ST_UNIQUEIDENTIFIER, ST_NVARCHAR, ST_NCHAR, ST_VARCHAR, ST_CHAR, ST_VARBINARY,
                                      ST_BINARY};
    for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++)
        if (order[i] == k) return 100 - i;
    return 0;
}

bool tc_is_int(sim_tkind k) { return k == ST_BIT || k == ST_TINYINT || k == ST_SMALLINT || k == ST_INT || k == ST_BIGINT; }
static bool is_bin(sim_tkind k) { return k == ST_BINARY || k == ST_VARBINARY || k == ST_ROWVERSION || k == ST_IMAGE; }
bool tc_is_str(sim_tkind k)
{
    return k == ST_CHAR || k == ST_VARCHAR || k == ST_NCHAR || k == ST_NVARCHAR || k == ST_TEXT || k == ST_NTEXT;
}
static bool is_wide(sim_tkind k) { return k == ST_NCHAR || k == ST_NVARCHAR || k == ST_NTEXT; }

const char *tc_tname(C *c, const sim_type *t)
{
    char buf[64];
    sim_type_format(buf, sizeof buf, t);
    return tc_fmt(c, "%s", buf);
}

const char *tc_kname(sim_tkind k)
{
    sim_type t = {k, 0, 0, 0};
    static _Thread_local char bufs[2][64];
    static _Thread_local int turn;
    char *buf = bufs[turn++ & 1];
    sim_type_format(buf, 64, &t);
    char *p = strchr(buf, '(');
    if (p) *p = 0;
    return buf;
}

static bool is_exact(sim_tkind k)
{
    return tc_is_int(k) || k == ST_DECIMAL || k == ST_NUMERIC || k == ST_MONEY || k == ST_SMALLMONEY;
}

/* An exact numeric type as decimal(p, s). */
static void dec_of(const sim_type *t, int *p, int *s)
{
    switch (t->k) {
    case ST_BIT: *p = 1; *s = 0; break;
    case ST_TINYINT: *p = 3; *s = 0; break;
    case ST_SMALLINT: *p = 5; *s = 0; break;
    case ST_INT: *p = 10; *s = 0; break;
    case ST_BIGINT: *p = 19; *s = 0; break;
    case ST_MONEY: *p = 19; *s = 4; break;
    case ST_SMALLMONEY: *p = 10; *s = 4; break;
    default: *p = t->prec; *s = t->scale; break;
    }
}

/* SQL Server's precision and scale of a decimal operation (capped at 38 digits, the scale
 * reduced so the integral part fits; for * and / not below 6). */
static sim_type decimal_result(char op, const sim_type *a, const sim_type *b)
{
    int p1, s1, p2, s2, p, s;
    dec_of(a, &p1, &s1);
    dec_of(b, &p2, &s2);
    switch (op) {
    case '+': case '-':
        s = s1 > s2 ? s1 : s2;
        p = s + ((p1 - s1) > (p2 - s2) ? p1 - s1 : p2 - s2) + 1;
        break;
    case '*': p = p1 + p2 + 1; s = s1 + s2; break;
    case '/': s = 6 > s1 + p2 + 1 ? 6 : s1 + p2 + 1; p = p1 - s1 + s2 + s; break;
    default: s = s1 > s2 ? s1 : s2; p = ((p1 - s1) < (p2 - s2) ? p1 - s1 : p2 - s2) + s; break;
    }
    if (p > 38) {
        int integral = p - s;
        if (op == '*' || op == '/') s = integral < 32 ? (s < 38 - integral ? s : 38 - integral) : (s < 6 ? s : 6);
        else s = s < 38 - integral ? s : (38 - integral > 0 ? 38 - integral : 0);
        p = 38;
    }
    sim_type r = {ST_DECIMAL, 0, p, s};
    return r;
}

/* Convert @p x to type @p to (implicitly unless @p explicit_). */
int tc_conv(C *c, cx *x, const sim_type *to, bool explicit_, int line)
{
    const sim_type *f = &x->t;
    if (!explicit_ && tc_is_str(f->k) && is_bin(to->k))
        return tsql_fail(c->err, 257, 16, 3, line,
                         "Implicit conversion from data type %s to %s is not allowed. Use the CONVERT function to run this query.",
                         tc_kname(f->k), tc_kname(to->k));
    bool same = f->k == to->k && f->prec == to->prec && f->scale == to->scale;
    if (same || (tc_is_int(f->k) && tc_is_int(to->k) && !explicit_) || (tc_is_str(f->k) && tc_is_str(to->k) && !explicit_) ||
        (is_bin(f->k) && is_bin(to->k) && !explicit_) || !strcmp(x->sql, "NULL")) {
        x->t = *to;
        return 0;
    }
    if ((to->k == ST_FLOAT || to->k == ST_REAL) && tc_is_int(f->k)) {
        x->sql = tc_fmt(c, "CAST(%s AS REAL)", x->sql);
    } else {
        x->sql = tc_fmt(c, "mc_cast(%s, '%s', '%s')", x->sql, tc_tname(c, f), tc_tname(c, to));
    }
    x->t = *to;
    return x->sql ? 0 : MCDC_ENOMEM;
}

/* The common type of two: higher precedence wins; decimals widen; strings take the longer. */
sim_type tc_common(const sim_type *a, const sim_type *b)
{
    sim_type r = precedence(a->k) >= precedence(b->k) ? *a : *b;
    if ((a->k == ST_DECIMAL || a->k == ST_NUMERIC) && (b->k == ST_DECIMAL || b->k == ST_NUMERIC)) {
        int s = a->scale > b->scale ? a->scale : b->scale;
        int ip = (a->prec - a->scale) > (b->prec - b->scale) ? a->prec - a->scale : b->prec - b->scale;
        r.k = ST_DECIMAL;
        r.prec = ip + s > 38 ? 38 : ip + s;
        r.scale = s;
    } else if ((r.k == ST_DECIMAL || r.k == ST_NUMERIC) && (tc_is_int(a->k) || tc_is_int(b->k))) {
        const sim_type *d = r.k == a->k ? a : b, *i = d == a ? b : a;
        int ip = i->k == ST_BIGINT ? 19 : i->k == ST_INT ? 10 : i->k == ST_SMALLINT ? 5 : 3;
        if (ip < d->prec - d->scale) ip = d->prec - d->scale;
        r.prec = ip + d->scale > 38 ? 38 : ip + d->scale;
    } else if (tc_is_str(a->k) && tc_is_str(b->k)) {
        r.len = a->len < 0 || b->len < 0 ? -1 : a->len > b->len ? a->len : b->len;
    } else if (is_bin(a->k) && is_bin(b->k) && r.k != ST_IMAGE) {
        r.len = a->len < 0 || b->len < 0 ? -1 : a->len > b->len ? a->len : b->len;
        r.k = a->k == ST_VARBINARY || b->k == ST_VARBINARY ? ST_VARBINARY : ST_BINARY;
    } else if (r.k == ST_DATETIME2 || r.k == ST_DATETIMEOFFSET || r.k == ST_TIME) {
        int sa = a->k == r.k ? a->scale : 0, sb = b->k == r.k ? b->scale : 0;
        r.scale = sa > sb ? sa : sb;
    }
    return r;
}

static int unify(C *c, cx *a, cx *b, int line)
{
    sim_type t = tc_common(&a->t, &b->t);
    int rc = tc_conv(c, a, &t, false, line);
    return rc ? rc : tc_conv(c, b, &t, false, line);
}

/* Strings compare under the default collation. */
const char *tc_cmp_sql(C *c, const cx *x)
{
    return tc_is_str(x->t.k) && !x->binary_coll ? tc_fmt(c, "%s COLLATE mssql", x->sql) : x->sql;
}

/* The left side of a comparison: an explicit collation on either side wins. */
static const char *cmp_left(C *c, const cx *l, const cx *r)
{
    if (tc_is_str(l->t.k) && (l->binary_coll || r->binary_coll)) return tc_fmt(c, "%s COLLATE BINARY", l->sql);
    return tc_cmp_sql(c, l);
}

/* SQL Server's name of a comparison operator in message 402. */
static const char *cmp_op_name(const char *op)
{
    if (!strcmp(op, "=")) return "equal to";
    if (!strcmp(op, "<>") || !strcmp(op, "!=")) return "not equal to";
    if (!strcmp(op, "<")) return "less than";
    if (!strcmp(op, ">")) return "greater than";
    if (!strcmp(op, "<=")) return "less than or equal to";
    if (!strcmp(op, ">=")) return "greater than or equal to";
    return op;
}

/* ---- names --------------------------------------------------------------------------------- */

static int resolve(C *c, scope *sc, tsql_expr *e, cx *out)
{
    const char *col = e->parts[e->nparts - 1];
    const char *qual = e->nparts >= 2 ? e->parts[e->nparts - 2] : NULL;
    const char *qschema = e->nparts >= 3 ? e->parts[e->nparts - 3] : NULL;
    for (scope *s = sc; s; s = s->outer) {
        ccol *found = NULL;
        crel *frel = NULL;
        bool qual_seen = false;
        for (int r = 0; r < s->nrels; r++) {
            crel *rel = &s->rels[r];
            if (qual) {
                bool m = rel->alias && !strcasecmp(rel->alias, qual);
                if (!m && rel->object && !strcasecmp(rel->object, qual) && (!rel->alias || !strcasecmp(rel->alias, rel->object)))
                    m = !qschema || (rel->schema && !strcasecmp(rel->schema, qschema));
                if (!m) continue;
                qual_seen = true;
            }
            for (int k = 0; k < rel->ncols; k++)
                if (!strcasecmp(rel->cols[k].name, col)) {
                    if (found && !qual)
                        return tsql_fail(c->err, 209, 16, 1, tc_line_of(e), "Ambiguous column name '%s'.", col);
                    found = &rel->cols[k];
                    frel = rel;
                    break;
                }
        }
        (void)frel;
        if (found) {
            out->t = found->t;
            out->nullable = found->nullable;
            out->sql = found->sql;
            out->name = found->name;
            return 0;
        }
        if (qual && !qual_seen && !s->outer) {
            char full[400] = "";
            for (int i = 0; i < e->nparts - 1; i++) {
                size_t l = strlen(full);
                snprintf(full + l, sizeof full - l, "%s%s", i ? "." : "", e->parts[i]);
            }
            return tsql_fail(c->err, 4104, 16, 1, tc_line_of(e), "The multi-part identifier \"%s.%s\" could not be bound.", full, col);
        }
    }
    return tsql_fail(c->err, 207, 16, 1, tc_line_of(e), "Invalid column name '%s'.", col);
}

static int compile_select(C *c, scope *outer, tsql_select *sel, bool derived, crel *as_rel, const char **sql);

/* Columns of a view or table the login reads. */
static int add_col(C *c, crel *r, const char *name, sim_type t, bool nullable, const char *ref)
{
    if ((r->ncols & (r->ncols - 1)) == 0) {
        ccol *nc = sim_arena_alloc(&c->s->arena, (size_t)(r->ncols ? r->ncols * 2 : 1) * sizeof *nc);
        if (!nc) return MCDC_ENOMEM;
        if (r->ncols) memcpy(nc, r->cols, (size_t)r->ncols * sizeof *nc);
        r->cols = nc;
    }
    r->cols[r->ncols].name = name;
    r->cols[r->ncols].t = t;
    r->cols[r->ncols].nullable = nullable;
    r->cols[r->ncols].sql = ref;
    r->ncols++;
    return 0;
}

int tsql_compile_vtab(tsql_compile_ctx *cc, const tsql_vcol *cols, int ncols, const sim_val *rows, int nrows, const char **sql)
{
    C *c = (C *)cc;
    mcdc_buf b = MCDC_BUF_INIT(1 << 24);
    int rc = 0;
    if (nrows == 0) {
        rc = mcdc_buf_puts(&b, "(SELECT ");
        for (int i = 0; rc == 0 && i < ncols; i++) rc = mcdc_buf_printf(&b, "%sNULL AS %s", i ? ", " : "", qid(c, cols[i].name));
        if (rc == 0) rc = mcdc_buf_puts(&b, " WHERE 0)");
    } else {
        rc = mcdc_buf_puts(&b, "(SELECT ");
        for (int i = 0; rc == 0 && i < ncols; i++)
            rc = mcdc_buf_printf(&b, "%scolumn%d AS %s", i ? ", " : "", i + 1, qid(c, cols[i].name));
        if (rc == 0) rc = mcdc_buf_puts(&b, " FROM (VALUES ");
        for (int r = 0; rc == 0 && r < nrows; r++) {
            rc = mcdc_buf_puts(&b, r ? ", (" : "(");
            for (int i = 0; rc == 0 && i < ncols; i++) {
                const char *p;
                if ((rc = bind(c, &cols[i].t, &rows[r * ncols + i], &p)) == 0) rc = mcdc_buf_printf(&b, "%s%s", i ? ", " : "", p);
            }
            if (rc == 0) rc = mcdc_buf_putc(&b, ')');
        }
        if (rc == 0) rc = mcdc_buf_puts(&b, "))");
    }
    if (rc == 0) *sql = tc_fmt(c, "%.*s", (int)b.len, b.ptr);
    mcdc_buf_dispose(&b);
    return rc < 0 ? rc : 0;
}

/* cdc.fn_cdc_get_all_changes_<ci>(@from_lsn, @to_lsn, N'all' | N'all update old'): the change
 * rows of [from, to]; a range outside [min_lsn, max_lsn] is Msg 313, as SQL Server raises it. */
static int all_changes(C *c, tsql_tref *tr, crel *rel, const char **from_sql, const char *ci_name, const char *full)
{
    mcdc_sim *sim = c->s->sim;
    sim_instance *ci = sim__find_instance(sim, ci_name);
    if (!ci) return tsql_fail(c->err, 208, 16, 1, tr->tok->line, "Invalid object name '%s'.", full);
    char fn[300];
    snprintf(fn, sizeof fn, "cdc.fn_cdc_get_all_changes_%s", ci->name);
    if (tr->nfargs != 3)
        return tsql_fail(c->err, tr->nfargs > 3 ? 8144 : 313, 16, 3, tr->tok->line, tr->nfargs > 3
                         ? "Procedure or function %s has too many arguments specified."
                         : "An insufficient number of arguments were supplied for the procedure or function %s.", fn);
    char ct[300];
    snprintf(ct, sizeof ct, "%s_CT", ci->name);
    if (!sim_login_can_see_instance(&c->s->grants, sim, ci))
        return tsql_fail(c->err, 229, 14, 5, tr->tok->line,
                         "The SELECT permission was denied on the object '%s', database '%s', schema 'cdc'.", ct, c->s->db_name);
    scope empty = {NULL, 0, NULL};
    sim_type bin10 = {ST_BINARY, 10, 0, 0}, i4 = {ST_INT, 0, 0, 0}, vb128 = {ST_VARBINARY, 128, 0, 0};
    cx lo, hi;
    int rc;
    if ((rc = tc_expr(c, &empty, tr->fargs[0], &lo)) || (rc = tc_conv(c, &lo, &bin10, false, tr->tok->line)) ||
        (rc = tc_expr(c, &empty, tr->fargs[1], &hi)) || (rc = tc_conv(c, &hi, &bin10, false, tr->tok->line)))
        return rc;
    tsql_expr *f = tr->fargs[2];
    bool old_too;
    if (f->k == X_LIT && f->lit.k == V_STR && f->lit.u.s.n == 3 && !strncasecmp(f->lit.u.s.p, "all", 3)) old_too = false;
    else if (f->k == X_LIT && f->lit.k == V_STR && f->lit.u.s.n == 14 && !strncasecmp(f->lit.u.s.p, "all update old", 14)) old_too = true;
    else return tsql_fail(c->err, 313, 16, 3, tr->tok->line,
                          "An insufficient number of arguments were supplied for the procedure or function %s.", fn);
    mcdc_lsn max, zero = mcdc_lsn_zero();
    int64_t max_us;
    if ((rc = sim__max_lsn(sim, &max, &max_us)) < 0) return rc;
    mcdc_lsn min = mcdc_lsn_cmp(&ci->start_lsn, &sim->st.processed) <= 0 ? ci->start_lsn : zero;
    char *pmin = sim_arena_alloc(&c->s->arena, 20);
    if (!pmin) return MCDC_ENOMEM;
    memcpy(pmin, min.b, 10);
    memcpy(pmin + 10, max.b, 10);
    sim_val vmin = {.k = V_BIN, .u.s = {pmin, 10}}, vmax = {.k = V_BIN, .u.s = {pmin + 10, 10}};
    const char *bmin, *bmax;
    if ((rc = bind(c, &bin10, &vmin, &bmin)) || (rc = bind(c, &bin10, &vmax, &bmax))) return rc;
    const char *alias = tc_fmt(c, "t%d", ++c->nalias);
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    mcdc_buf_puts(&b, "(SELECT \"__$start_lsn\", \"__$seqval\", \"__$operation\", \"__$update_mask\"");
#define ACOL(n, ty) if (rc == 0) rc = add_col(c, rel, n, ty, true, tc_fmt(c, "%s.%s", alias, qid(c, n)))
    rc = 0;
    ACOL("__$start_lsn", bin10);
    ACOL("__$seqval", bin10);
    ACOL("__$operation", i4);
    ACOL("__$update_mask", vb128);
    for (int k = 0; k < ci->n_cols; k++) {
        mcdc_buf_printf(&b, ", %s", qid(c, ci->cols[k].name));
        ACOL(ci->cols[k].name, ci->cols[k].type);
    }
#undef ACOL
    mcdc_buf_printf(&b, " FROM %s WHERE mc_cdc_range(%s, %s, %s, %s, '%s') AND \"__$start_lsn\" >= %s AND \"__$start_lsn\" <= %s%s)",
                    qid(c, tc_fmt(c, "cdc.%s_CT", ci->name)), lo.sql, hi.sql, bmin, bmax, fn, lo.sql, hi.sql,
                    old_too ? "" : " AND \"__$operation\" <> 3");
    *from_sql = rc ? NULL : tc_fmt(c, "%.*s AS %s", (int)b.len, b.ptr, alias);
    mcdc_buf_dispose(&b);
    rel->schema = "cdc";
    rel->object = name_dup(c, fn + 4);
    return rc < 0 ? rc : *from_sql ? 0 : MCDC_ENOMEM;
}

static int named_object(C *c, tsql_tref *tr, crel *rel, const char **from_sql)
{
    const char *name = tr->parts[tr->nparts - 1];
    const char *schema = tr->nparts >= 2 && tr->parts[tr->nparts - 2][0] ? tr->parts[tr->nparts - 2] : "dbo";
    const char *db = tr->nparts >= 3 ? tr->parts[tr->nparts - 3] : NULL;
    mcdc_sim *sim = c->s->sim;
    char full[300];
    snprintf(full, sizeof full, "%s%s%s", tr->nparts >= 2 ? schema : "", tr->nparts >= 2 ? "." : "", name);
    rel->schema = schema;
    rel->object = name;
    if (db && strcasecmp(db, c->s->db_name) && strcasecmp(db, "master"))
        return tsql_fail(c->err, 208, 16, 1, tr->tok->line, "Invalid object name '%s.%s'.", db, full);
    if (tr->is_func) {
        if (!strcasecmp(schema, "cdc") && !strncasecmp(name, "fn_cdc_get_all_changes_", 23))
            return all_changes(c, tr, rel, from_sql, name + 23, full);
        return tsql_fail(c->err, 208, 16, 1, tr->tok->line, "Invalid object name '%s'.", full);
    }
    if (!strcasecmp(schema, "sys") || !strcasecmp(schema, "INFORMATION_SCHEMA")) {
        const tsql_vcol *vc;
        int nvc;
        const char *inner;
        int rc = tsql_sys_object(c->s, c, schema, name, &inner, &vc, &nvc, c->err);
        if (rc == -1) return tsql_fail(c->err, 208, 16, 1, tr->tok->line, "Invalid object name '%s'.", full);
        if (rc) return rc;
        const char *alias = tc_fmt(c, "t%d", ++c->nalias);
        for (int i = 0; i < nvc; i++)
            if ((rc = add_col(c, rel, vc[i].name, vc[i].t, vc[i].nullable, tc_fmt(c, "%s.%s", alias, qid(c, vc[i].name)))) < 0)
                return rc;
        *from_sql = tc_fmt(c, "%s AS %s", inner, alias);
        return 0;
    }
    sim_table *t = sim__find_table(sim, schema, name);
    sim_instance *ci = NULL;
    static const char *const cdc_fixed[] = {"lsn_time_mapping", "change_tables", "captured_columns", "index_columns",
                                            "ddl_history", NULL};
    int fixed = -1;
    if (!t && !strcasecmp(schema, "cdc")) {
        for (int i = 0; cdc_fixed[i]; i++)
            if (!strcasecmp(name, cdc_fixed[i])) fixed = i;
        size_t n = strlen(name);
        if (fixed < 0 && n > 3 && !strcasecmp(name + n - 3, "_CT"))
            for (int i = 0; i < sim->n_inst; i++)
                if (strlen(sim->inst[i]->name) == n - 3 && !strncasecmp(sim->inst[i]->name, name, n - 3)) ci = sim->inst[i];
    }
    if (!t && !ci && fixed < 0) return tsql_fail(c->err, 208, 16, 1, tr->tok->line, "Invalid object name '%s'.", full);
    if (!sim_login_can_read(&c->s->grants, schema, name))
        return tsql_fail(c->err, 229, 14, 5, tr->tok->line,
                         "The SELECT permission was denied on the object '%s', database '%s', schema '%s'.", name,
                         c->s->db_name, schema);
    const char *alias = tc_fmt(c, "t%d", ++c->nalias);
    char view[300];
    int rc = 0;
    sim_type bin10 = {ST_BINARY, 10, 0, 0}, i4 = {ST_INT, 0, 0, 0}, dt = {ST_DATETIME, 0, 0, 0},
             sysname = {ST_NVARCHAR, 128, 0, 0}, bit = {ST_BIT, 0, 0, 0}, vb128 = {ST_VARBINARY, 128, 0, 0},
             vb10 = {ST_VARBINARY, 10, 0, 0}, nvmax = {ST_NVARCHAR, -1, 0, 0}, v1 = {ST_NVARCHAR, 1, 0, 0},
             ti1 = {ST_TINYINT, 0, 0, 0};
#define COL(n, ty, nl) if (rc == 0) rc = add_col(c, rel, n, ty, nl, tc_fmt(c, "%s.%s", alias, qid(c, n)))
    if (t) {
        snprintf(view, sizeof view, "%s", t->full);
        for (int k = 0; k < t->n_live; k++) {
            sim_column *col = &t->cols[t->live[k]];
            COL(col->name, col->type, col->nullable);
        }
    } else if (ci) {
        snprintf(view, sizeof view, "cdc.%s_CT", ci->name);
        COL("__$start_lsn", bin10, false);
        COL("__$end_lsn", bin10, true);
        COL("__$seqval", bin10, false);
        COL("__$operation", i4, false);
        COL("__$update_mask", vb128, true);
        for (int k = 0; k < ci->n_cols; k++) COL(ci->cols[k].name, ci->cols[k].type, true);
        COL("__$command_id", i4, true);
    } else {
        snprintf(view, sizeof view, "cdc.%s", cdc_fixed[fixed]);
        switch (fixed) {
        case 0:
            COL("start_lsn", bin10, false); COL("tran_begin_time", dt, true); COL("tran_end_time", dt, true);
            COL("tran_id", vb10, true); COL("tran_begin_lsn", bin10, true);
            break;
        case 1:
            COL("object_id", i4, false); COL("version", i4, true); COL("source_object_id", i4, true);
            COL("capture_instance", sysname, false); COL("start_lsn", bin10, true); COL("end_lsn", bin10, true);
            COL("supports_net_changes", bit, true); COL("has_drop_pending", bit, true); COL("role_name", sysname, true);
            COL("index_name", sysname, true); COL("filegroup_name", sysname, true); COL("create_date", dt, true);
            COL("partition_switch", bit, false);
            break;
        case 2:
            COL("object_id", i4, false); COL("column_name", sysname, false); COL("column_id", i4, true);
            COL("column_type", sysname, false); COL("column_ordinal", i4, false); COL("is_computed", bit, true);
            break;
        case 3:
            COL("object_id", i4, false); COL("column_name", sysname, false); COL("index_ordinal", ti1, false);
            COL("column_id", i4, false);
            break;
        default:
            COL("source_object_id", i4, true); COL("object_id", i4, false); COL("required_column_update", bit, false);
            COL("ddl_command", nvmax, true); COL("ddl_lsn", bin10, false); COL("ddl_time", dt, true);
            break;
        }
    }
#undef COL
    (void)v1;
    if (rc < 0) return rc;
    if (ci) {
        /* the change table itself (what its view shows), with its rowid for range seeks */
        mcdc_buf b = MCDC_BUF_INIT(1 << 20);
        mcdc_buf_puts(&b, "(SELECT rowid AS \"__rowid\", \"__$start_lsn\", \"__$end_lsn\", \"__$seqval\", \"__$operation\", "
                          "\"__$update_mask\"");
        for (int k = 0; k < ci->n_cols; k++) mcdc_buf_printf(&b, ", c%d AS %s", ci->cols[k].ordinal, qid(c, ci->cols[k].name));
        /* what the view shows (start_lsn <= processed_lsn) is a rowid bound found once per
         * statement (S1, mc_ct_end), not a comparison of LSNs per row; select_core places it
         * here at view_at or in the WHERE (view_bound) */
        mcdc_buf_printf(&b, ", \"__$command_id\" FROM sim_ct_%lld", (long long)ci->id);
        rel->view_at = b.len;
        mcdc_buf_puts(&b, ")");
        *from_sql = tc_fmt(c, "%.*s AS %s", (int)b.len, b.ptr, alias);
        mcdc_buf_dispose(&b);
        rel->ct_id = ci->id;
        rel->view_sql = *from_sql;
        rel->rowid_sql = tc_fmt(c, "%s.\"__rowid\"", alias);
        return *from_sql && rel->rowid_sql ? 0 : MCDC_ENOMEM;
    }
    if (fixed == 0) { /* the mapping itself, not the stored view a database made by an older build may hold */
        *from_sql = tc_fmt(c, "(" SIM_MAPPING_SELECT ") AS %s", alias);
        return *from_sql ? 0 : MCDC_ENOMEM;
    }
    *from_sql = tc_fmt(c, "%s AS %s", qid(c, view), alias);
    return 0;
}

/* ---- FROM -------------------------------------------------------------------------------- */

static int from_item(C *c, scope *outer, scope *sc, tsql_tref *tr, const char **sql)
{
    crel *rel = &sc->rels[sc->nrels];
    memset(rel, 0, sizeof *rel);
    int rc;
    if (tr->sub || tr->rows) {
        if (!tr->alias) return tsql_syntax(c->err, tr->tok);
        const char *alias = tc_fmt(c, "t%d", ++c->nalias);
        const char *inner;
        if (tr->sub) {
            crel tmp = {0};
            if ((rc = compile_select(c, outer, tr->sub, true, &tmp, &inner)) != 0) return rc;
            for (int k = 0; k < tmp.ncols; k++) {
                const char *nm = k < tr->ncolnames ? tr->colnames[k] : tmp.cols[k].name;
                if (!nm || !*nm)
                    return tsql_fail(c->err, 8155, 16, 2, tr->tok->line,
                                     "No column name was specified for column %d of '%s'.", k + 1, tr->alias);
                if ((rc = add_col(c, rel, nm, tmp.cols[k].t, tmp.cols[k].nullable, tc_fmt(c, "%s.c%d", alias, k + 1))) < 0) return rc;
            }
            *sql = tc_fmt(c, "(%s) AS %s", inner, alias);
        } else {
            /* VALUES: each column takes the common type of its rows */
            mcdc_buf b = MCDC_BUF_INIT(1 << 24);
            scope empty = {NULL, 0, outer};
            cx *cells = sim_arena_alloc(&c->s->arena, (size_t)(tr->nrows * tr->nvals + 1) * sizeof *cells);
            if (!cells) return MCDC_ENOMEM;
            for (int r = 0; r < tr->nrows; r++)
                for (int k = 0; k < tr->nvals; k++)
                    if ((rc = tc_expr(c, &empty, tr->rows[r][k], &cells[r * tr->nvals + k])) != 0) return rc;
            mcdc_buf_puts(&b, "SELECT * FROM (VALUES ");
            for (int k = 0; k < tr->nvals; k++) {
                sim_type t = cells[k].t;
                bool nl = false;
                for (int r = 1; r < tr->nrows; r++) t = tc_common(&t, &cells[r * tr->nvals + k].t);
                for (int r = 0; r < tr->nrows; r++) {
                    if ((rc = tc_conv(c, &cells[r * tr->nvals + k], &t, false, tr->tok->line)) != 0) { mcdc_buf_dispose(&b); return rc; }
                    nl |= cells[r * tr->nvals + k].nullable;
                }
                const char *nm = k < tr->ncolnames ? tr->colnames[k] : NULL;
                if (!nm) {
                    mcdc_buf_dispose(&b);
                    return tsql_fail(c->err, 8155, 16, 2, tr->tok->line, "No column name was specified for column %d of '%s'.",
                                     k + 1, tr->alias);
                }
                if ((rc = add_col(c, rel, nm, t, nl, tc_fmt(c, "%s.column%d", alias, k + 1))) < 0) return rc;
            }
            for (int r = 0; r < tr->nrows; r++) {
                mcdc_buf_puts(&b, r ? ", (" : "(");
                for (int k = 0; k < tr->nvals; k++) mcdc_buf_printf(&b, "%s%s", k ? ", " : "", cells[r * tr->nvals + k].sql);
                mcdc_buf_putc(&b, ')');
            }
            mcdc_buf_putc(&b, ')');
            *sql = tc_fmt(c, "(%.*s) AS %s", (int)b.len, b.ptr, alias);
            mcdc_buf_dispose(&b);
        }
        rel->alias = tr->alias;
        sc->nrels++;
        return 0;
    }
    rel->alias = tr->alias;
    if ((rc = named_object(c, tr, rel, sql)) != 0) return rc;
    if (!rel->alias) rel->alias = rel->object;
    sc->nrels++;
    return 0;
}

/* ---- expressions ------------------------------------------------------------------------- */


static int bool_sql(C *c, scope *sc, tsql_expr *e, const char **sql)
{
    cx x;
    int rc = tc_expr(c, sc, e, &x);
    if (rc) return rc;
    *sql = x.sql;
    return 0;
}


int tc_expr(C *c, scope *sc, tsql_expr *e, cx *out)
{
    memset(out, 0, sizeof *out);
    out->name = "";
    int rc = 0, line = tc_line_of(e);
    cx a, b, d;
    switch (e->k) {
    case X_LIT:
        out->t = e->type;
        return bind(c, &e->type, &e->lit, &out->sql);
    case X_NULL:
        out->t.k = ST_INT;
        out->nullable = true;
        out->sql = "NULL";
        return 0;
    case X_VAR: {
        sess_var *v = sess_var_find(c->s, e->name, strlen(e->name));
        if (!v) return tsql_fail(c->err, 137, 15, 2, line, "Must declare the scalar variable \"%s\".", e->name);
        out->t = v->type;
        out->nullable = true;
        return bind(c, &v->type, &v->value, &out->sql);
    }
    case X_GLOBAL:
        return tsql_sys_global(c->s, c, e->name, out, c->err, line);
    case X_COL:
        return resolve(c, sc, e, out);
    case X_STAR:
        return tsql_syntax(c->err, e->tok);
    case X_NEG: case X_BITNOT:
        if ((rc = tc_expr(c, sc, e->a, &a))) return rc;
        *out = a;
        out->name = "";
        out->sql = tc_fmt(c, e->k == X_NEG ? "(-%s)" : "(~%s)", a.sql);
        return 0;
    case X_ARITH:
        if ((rc = tc_expr(c, sc, e->a, &a)) || (rc = tc_expr(c, sc, e->b, &b))) return rc;
        out->nullable = a.nullable || b.nullable;
        if (e->op[0] == '+' && (tc_is_str(a.t.k) || tc_is_str(b.t.k))) {
            if ((rc = unify(c, &a, &b, line))) return rc;
            out->t = a.t;
            out->t.len = a.t.len < 0 || b.t.len < 0 || a.t.len + b.t.len > (is_wide(a.t.k) ? 4000 : 8000) ? -1 : a.t.len + b.t.len;
            out->sql = tc_fmt(c, "(%s || %s)", a.sql, b.sql);
            return 0;
        }
        if (!(sim_type_is_numeric(&a.t) || a.t.k == ST_BIT) || !(sim_type_is_numeric(&b.t) || b.t.k == ST_BIT))
            return tsql_fail(c->err, 402, 16, 1, line, "The data types %s and %s are incompatible in the %s operator.",
                             tc_kname(a.t.k), tc_kname(b.t.k), e->op[0] == '+' ? "add" : e->op[0] == '-' ? "subtract" :
                             e->op[0] == '*' ? "multiply" : e->op[0] == '/' ? "divide" : "modulo");
        if (tc_is_int(a.t.k) && tc_is_int(b.t.k)) {
            out->t = precedence(a.t.k) >= precedence(b.t.k) ? a.t : b.t;
            if (out->t.k == ST_BIT || out->t.k == ST_TINYINT || out->t.k == ST_SMALLINT) out->t.k = ST_INT;
        } else if (is_exact(a.t.k) && is_exact(b.t.k) && strchr("+-*/%", e->op[0])) {
            out->t = decimal_result(e->op[0], &a.t, &b.t);
            out->sql = tc_fmt(c, "mc_arith('%c', %s, '%s', %s, '%s', '%s')", e->op[0], a.sql, tc_tname(c, &a.t), b.sql,
                           tc_tname(c, &b.t), tc_tname(c, &out->t));
            return out->sql ? 0 : MCDC_ENOMEM;
        } else {
            sim_type f = {ST_FLOAT, 0, 0, 0};
            if ((rc = tc_conv(c, &a, &f, false, line)) || (rc = tc_conv(c, &b, &f, false, line))) return rc;
            out->t = f;
        }
        if (e->op[0] == '/' || e->op[0] == '%') /* 8134, as SQL Server raises it */
            out->sql = tc_fmt(c, "(CASE WHEN %s = 0 THEN mc_div0() ELSE %s %c %s END)", b.sql, a.sql, e->op[0], b.sql);
        else
            out->sql = tc_fmt(c, "(%s %s %s)", a.sql, e->op, b.sql);
        return 0;
    case X_CMP:
        if ((rc = tc_expr(c, sc, e->a, &a)) || (rc = tc_expr(c, sc, e->b, &b))) return rc;
        if (a.t.k == ST_IMAGE || b.t.k == ST_IMAGE) /* image is never compared, as in SQL Server */
            return tsql_fail(c->err, 402, 16, 1, line, "The data types %s and %s are incompatible in the %s operator.",
                             tc_kname(a.t.k), tc_kname(b.t.k), cmp_op_name(e->op));
        if ((rc = unify(c, &a, &b, line))) return rc;
        out->t.k = ST_BIT;
        out->sql = tc_fmt(c, "(%s %s %s)", cmp_left(c, &a, &b), e->op, b.sql);
        return 0;
    case X_AND: case X_OR: {
        const char *l, *r;
        if ((rc = bool_sql(c, sc, e->a, &l)) || (rc = bool_sql(c, sc, e->b, &r))) return rc;
        out->t.k = ST_BIT;
        out->sql = tc_fmt(c, "(%s %s %s)", l, e->k == X_AND ? "AND" : "OR", r);
        return 0;
    }
    case X_NOT: {
        const char *l;
        if ((rc = bool_sql(c, sc, e->a, &l))) return rc;
        out->t.k = ST_BIT;
        out->sql = tc_fmt(c, "(NOT %s)", l);
        return 0;
    }
    case X_ISNULL:
        if ((rc = tc_expr(c, sc, e->a, &a))) return rc;
        out->t.k = ST_BIT;
        out->sql = tc_fmt(c, "(%s IS %sNULL)", a.sql, e->neg ? "NOT " : "");
        return 0;
    case X_BETWEEN:
        if ((rc = tc_expr(c, sc, e->a, &a)) || (rc = tc_expr(c, sc, e->b, &b)) || (rc = tc_expr(c, sc, e->c, &d))) return rc;
        if ((rc = unify(c, &a, &b, line)) || (rc = unify(c, &a, &d, line)) || (rc = unify(c, &a, &b, line))) return rc;
        out->t.k = ST_BIT;
        out->sql = tc_fmt(c, "(%s %sBETWEEN %s AND %s)", tc_cmp_sql(c, &a), e->neg ? "NOT " : "", b.sql, d.sql);
        return 0;
    case X_LIKE:
        if ((rc = tc_expr(c, sc, e->a, &a)) || (rc = tc_expr(c, sc, e->b, &b))) return rc;
        out->t.k = ST_BIT;
        out->sql = tc_fmt(c, "(%s %sLIKE %s)", a.sql, e->neg ? "NOT " : "", b.sql);
        return 0;
    case X_IN: {
        if ((rc = tc_expr(c, sc, e->a, &a))) return rc;
        out->t.k = ST_BIT;
        if (e->sub) {
            crel tmp = {0};
            const char *sub;
            if ((rc = compile_select(c, sc, e->sub, false, &tmp, &sub))) return rc;
            out->sql = tc_fmt(c, "(%s %sIN (%s))", tc_cmp_sql(c, &a), e->neg ? "NOT " : "", sub);
            return 0;
        }
        cx *xs = sim_arena_alloc(&c->s->arena, (size_t)e->nargs * sizeof *xs);
        if (!xs) return MCDC_ENOMEM;
        sim_type t = a.t;
        for (int i = 0; i < e->nargs; i++) {
            if ((rc = tc_expr(c, sc, e->args[i], &xs[i]))) return rc;
            t = tc_common(&t, &xs[i].t);
        }
        if ((rc = tc_conv(c, &a, &t, false, line))) return rc;
        mcdc_buf buf = MCDC_BUF_INIT(1 << 20);
        for (int i = 0; i < e->nargs; i++) {
            if ((rc = tc_conv(c, &xs[i], &t, false, line))) { mcdc_buf_dispose(&buf); return rc; }
            mcdc_buf_printf(&buf, "%s%s", i ? ", " : "", xs[i].sql);
        }
        out->sql = tc_fmt(c, "(%s %sIN (%.*s))", tc_cmp_sql(c, &a), e->neg ? "NOT " : "", (int)buf.len, buf.ptr);
        mcdc_buf_dispose(&buf);
        return 0;
    }
    case X_EXISTS: {
        crel tmp = {0};
        const char *sub;
        if ((rc = compile_select(c, sc, e->sub, false, &tmp, &sub))) return rc;
        out->t.k = ST_BIT;
        out->sql = tc_fmt(c, "(EXISTS (%s))", sub);
        return 0;
    }
    case X_SUBQ: {
        crel tmp = {0};
        const char *sub;
        if ((rc = compile_select(c, sc, e->sub, false, &tmp, &sub))) return rc;
        if (tmp.ncols != 1)
            return tsql_fail(c->err, 116, 16, 1, line, "Only one expression can be specified in the select list when the "
                                                       "subquery is not introduced with EXISTS.");
        out->t = tmp.cols[0].t;
        out->nullable = true;
        out->sql = tc_fmt(c, "(%s)", sub);
        return 0;
    }
    case X_CASE: {
        int nw = e->nargs / 2;
        cx *th = sim_arena_alloc(&c->s->arena, (size_t)(nw + 1) * sizeof *th);
        const char **wh = sim_arena_alloc(&c->s->arena, (size_t)(nw + 1) * sizeof *wh);
        cx op = {0}, el = {0};
        if (!th || !wh) return MCDC_ENOMEM;
        if (e->a && (rc = tc_expr(c, sc, e->a, &op))) return rc;
        sim_type t = {0};
        for (int i = 0; i < nw; i++) {
            cx w;
            if ((rc = tc_expr(c, sc, e->args[2 * i], &w))) return rc;
            if (e->a) {
                cx o2 = op;
                if ((rc = unify(c, &o2, &w, line))) return rc;
                wh[i] = tc_fmt(c, "%s = %s", tc_cmp_sql(c, &o2), w.sql);
            } else {
                wh[i] = w.sql;
            }
            if ((rc = tc_expr(c, sc, e->args[2 * i + 1], &th[i]))) return rc;
            if (strcmp(th[i].sql, "NULL")) t = t.k ? tc_common(&t, &th[i].t) : th[i].t;
        }
        if (e->c) {
            if ((rc = tc_expr(c, sc, e->c, &el))) return rc;
            if (strcmp(el.sql, "NULL")) t = t.k ? tc_common(&t, &el.t) : el.t;
        }
        if (!t.k) t.k = ST_INT;
        mcdc_buf buf = MCDC_BUF_INIT(1 << 20);
        mcdc_buf_puts(&buf, "(CASE");
        for (int i = 0; i < nw; i++) {
            if ((rc = tc_conv(c, &th[i], &t, false, line))) { mcdc_buf_dispose(&buf); return rc; }
            mcdc_buf_printf(&buf, " WHEN %s THEN %s", wh[i], th[i].sql);
        }
        if (e->c) {
            if ((rc = tc_conv(c, &el, &t, false, line))) { mcdc_buf_dispose(&buf); return rc; }
            mcdc_buf_printf(&buf, " ELSE %s", el.sql);
        }
        mcdc_buf_puts(&buf, " END)");
        out->t = t;
        out->nullable = true;
        out->sql = tc_fmt(c, "%.*s", (int)buf.len, buf.ptr);
        mcdc_buf_dispose(&buf);
        return 0;
    }
    case X_CAST: {
        if ((rc = tc_expr(c, sc, e->a, &a))) return rc;
        sim_type to = e->type;
        if (tc_is_str(to.k) && to.len == 0) to.len = 30;
        if (is_bin(to.k) && to.len == 0) to.len = 30;
        int style = 0;
        if (e->b) {
            if (e->b->k != X_LIT || e->b->lit.k != V_INT)
                return tsql_fail(c->err, 8116, 16, 1, line, "Argument data type is invalid for argument 3 of convert function.");
            style = (int)e->b->lit.u.i;
        }
        out->nullable = a.nullable;
        out->is_variant = false;
        if (style) {
            out->t = to;
            out->sql = tc_fmt(c, "mc_cast(%s, '%s', '%s', %d)", a.sql, tc_tname(c, &a.t), tc_tname(c, &to), style);
            return out->sql ? 0 : MCDC_ENOMEM;
        }
        *out = a;
        out->name = "";
        out->is_variant = false; /* CAST of a sql_variant is its target type */
        return tc_conv(c, out, &to, true, line);
    }
    case X_COLLATE:
        if ((rc = tc_expr(c, sc, e->a, &a))) return rc;
        *out = a;
        out->name = "";
        if (strstr(e->name, "_CS_") || strstr(e->name, "_BIN")) {
            out->sql = tc_fmt(c, "(%s COLLATE BINARY)", a.sql);
            out->binary_coll = true;
        }
        return 0;
    case X_FUNC:
        return tc_func(c, sc, e, out);
    }
    return tsql_syntax(c->err, e->tok);
}

/* ---- functions ------------------------------------------------------------------------- */

int tsql_compile_arg(tsql_compile_ctx *cc, tsql_expr *e, const sim_type *want, tsql_vcx *out)
{
    C *c = (C *)cc;
    scope empty = {NULL, 0, NULL};
    int rc = tc_expr(c, &empty, e, out);
    if (rc || !want) return rc;
    return tc_conv(c, out, want, false, tc_line_of(e));
}

int tsql_compile_bind(tsql_compile_ctx *cc, const sim_type *t, const sim_val *v, const char **sql)
{
    return bind((C *)cc, t, v, sql);
}

char *tsql_compile_fmt(tsql_compile_ctx *cc, const char *f, const char *a, const char *b)
{
    return tc_fmt((C *)cc, f, a, b);
}

/* ---- SELECT ------------------------------------------------------------------------------- */


/* ORDER BY item: a select-list alias or column position maps to the output column. */
/* The select list's output names are in @p out (an alias, or the column's own name; a '*'
 * expands to one per column), so an index of items is an index of out, never of sel->items. */
static int order_item(C *c, scope *sc, const crel *out, cx *items, int nitems, tsql_order *o, bool union_, const char **sql)
{
    tsql_expr *e = o->e;
    if (e->k == X_COL && e->nparts == 1)
        for (int i = 0; i < nitems && i < out->ncols; i++) {
            const char *name = out->cols[i].name;
            if (name && *name && !strcasecmp(name, e->parts[0])) {
                *sql = tc_fmt(c, "c%d%s", i + 1, tc_is_str(items[i].t.k) ? " COLLATE mssql" : "");
                return 0;
            }
        }
    if (e->k == X_LIT && e->lit.k == V_INT) {
        if (e->lit.u.i < 1 || e->lit.u.i > nitems)
            return tsql_fail(c->err, 108, 16, 1, tc_line_of(e), "The ORDER BY position number %lld is out of range of the number of "
                             "items in the select list.", (long long)e->lit.u.i);
        *sql = tc_fmt(c, "c%lld", (long long)e->lit.u.i);
        return 0;
    }
    if (union_)
        return tsql_fail(c->err, 104, 16, 1, tc_line_of(e), "ORDER BY items must appear in the select list if the statement "
                                                         "contains a UNION, INTERSECT or EXCEPT operator.");
    cx x;
    int rc = tc_expr(c, sc, e, &x);
    if (rc) return rc;
    *sql = tc_cmp_sql(c, &x);
    return 0;
}

static bool is_aggregate(const tsql_expr *e)
{
    if (e->k != X_FUNC || e->over) return false;
    static const char *const aggs[] = {"count", "count_big", "min", "max", "sum", "avg", NULL};
    for (int i = 0; aggs[i]; i++)
        if (!strcasecmp(e->name, aggs[i])) return true;
    return false;
}

static bool same_expr(const tsql_expr *a, const tsql_expr *b)
{
    if (!a || !b) return a == b;
    if (a->k != b->k || strcmp(a->op, b->op) || a->neg != b->neg || a->nargs != b->nargs) return false;
    if (a->k == X_COL) {
        /* t.c and c name the same column when the last part matches and no qualifier differs */
        if (strcasecmp(a->parts[a->nparts - 1], b->parts[b->nparts - 1])) return false;
        if (a->nparts >= 2 && b->nparts >= 2 && strcasecmp(a->parts[a->nparts - 2], b->parts[b->nparts - 2])) return false;
        return true;
    }
    if (a->k == X_LIT) return a->lit.k == b->lit.k && sim_same(&a->lit, &b->lit);
    if ((a->name || b->name) && (!a->name || !b->name || strcasecmp(a->name, b->name))) return false;
    if (a->k == X_CAST && memcmp(&a->type, &b->type, sizeof a->type)) return false;
    if (!same_expr(a->a, b->a) || !same_expr(a->b, b->b) || !same_expr(a->c, b->c)) return false;
    for (int i = 0; i < a->nargs; i++)
        if (!same_expr(a->args[i], b->args[i])) return false;
    return a->sub == NULL && b->sub == NULL;
}

static bool contains_aggregate(const tsql_expr *e)
{
    if (!e || e->k == X_SUBQ || e->k == X_EXISTS) return false;
    if (is_aggregate(e)) return true;
    if (contains_aggregate(e->a) || contains_aggregate(e->b) || contains_aggregate(e->c)) return true;
    for (int i = 0; i < e->nargs; i++)
        if (contains_aggregate(e->args[i])) return true;
    return false;
}

/* A select item of a grouped query: every column outside an aggregate is a GROUP BY
 * expression (8120). */
static int check_grouped(C *c, scope *sc, tsql_select *sel, tsql_expr *e)
{
    if (!e || is_aggregate(e) || e->over || e->k == X_SUBQ || e->k == X_EXISTS) return 0;
    for (int g = 0; g < sel->ngroup; g++)
        if (same_expr(e, sel->group[g])) return 0;
    if (e->k == X_COL) {
        const char *col = e->parts[e->nparts - 1];
        char where[400] = "";
        for (int r = 0; r < sc->nrels; r++)
            for (int k = 0; k < sc->rels[r].ncols; k++)
                if (!strcasecmp(sc->rels[r].cols[k].name, col) && !where[0]) {
                    crel *rel = &sc->rels[r];
                    bool aliased = rel->alias && rel->object && strcasecmp(rel->alias, rel->object);
                    if (aliased || !rel->schema) snprintf(where, sizeof where, "%s.", rel->alias ? rel->alias : "");
                    else snprintf(where, sizeof where, "%s.%s.", rel->schema, rel->object);
                }
        if (!where[0]) return 0; /* an outer reference */
        return tsql_fail(c->err, 8120, 16, 1, tc_line_of(e), "Column '%s%s' is invalid in the select list because it is not "
                         "contained in either an aggregate function or the GROUP BY clause.", where, col);
    }
    int rc;
    if ((rc = check_grouped(c, sc, sel, e->a)) || (rc = check_grouped(c, sc, sel, e->b)) || (rc = check_grouped(c, sc, sel, e->c)))
        return rc;
    for (int i = 0; i < e->nargs; i++)
        if ((rc = check_grouped(c, sc, sel, e->args[i]))) return rc;
    return 0;
}

/* An expression without column references (literals, variables, functions of them). */
static bool column_free(const tsql_expr *e)
{
    if (!e) return true;
    if (e->k == X_COL || e->k == X_STAR || e->k == X_SUBQ || e->k == X_EXISTS || e->sub || e->over) return false;
    if (!column_free(e->a) || !column_free(e->b) || !column_free(e->c)) return false;
    for (int i = 0; i < e->nargs; i++)
        if (!column_free(e->args[i])) return false;
    return true;
}

/* The change-table rel whose column e names, with the column's index; NULL otherwise. */
static crel *ct_column(scope *sc, const tsql_expr *e, int *col)
{
    if (e->k != X_COL) return NULL;
    const char *name = e->parts[e->nparts - 1], *qual = e->nparts >= 2 ? e->parts[e->nparts - 2] : NULL;
    crel *found = NULL;
    for (int r = 0; r < sc->nrels; r++) {
        crel *rel = &sc->rels[r];
        if (qual && !(rel->alias && !strcasecmp(rel->alias, qual)) && !(rel->object && !strcasecmp(rel->object, qual))) continue;
        for (int k = 0; k < rel->ncols; k++)
            if (!strcasecmp(rel->cols[k].name, name)) {
                if (found) return NULL; /* ambiguous: left to resolve() */
                found = rel;
                *col = k;
            }
    }
    return found && found->ct_id ? found : NULL;
}

/* A value that compares with a binary(10) LSN as SQLite compares blobs, with no conversion
 * (a binary or varbinary, or the NULL literal). */
static bool binary_or_null(const cx *x)
{
    return x->t.k == ST_BINARY || x->t.k == ST_VARBINARY || !strcmp(x->sql, "NULL");
}

/* A rowid upper bound of a change table's range read; on a table the WHERE may bound, the
 * view's own bound too (the lower of the two), so SQLite has one upper bound to seek and
 * stop by and the view's costs nothing per row (view_bound). */
static const char *upper(C *c, crel *rel, const char *bound)
{
    if (rel->outer_null) return bound;
    rel->view_bounded = true;
    return tc_fmt(c, "min(%s, mc_ct_end(%lld))", bound, (long long)rel->ct_id);
}

/* Range predicates on a change table's __$start_lsn become rowid bounds found by binary
 * search (rowid order is (start_lsn, command_id, seqval, operation) order, S1), so a range
 * read seeks instead of scanning the table. A conjunct comparing start_lsn with a binary
 * value (or NULL) is exactly its bounds: it is replaced by them and by a test, evaluated once
 * per statement, that the value is a binary at all (NULL, or a value of another storage
 * class, matches no row, as the comparison does); *exact is then the test's SQL. Any other
 * such conjunct stays, and its bounds only narrow. */
static int range_seek(C *c, scope *sc, tsql_expr *e, mcdc_buf *b, const char **exact)
{
    *exact = NULL;
    if (e->k != X_CMP && e->k != X_BETWEEN) return 0;
    int col;
    crel *rel = ct_column(sc, e->a, &col);
    const tsql_expr *other = e->b;
    char op[3];
    snprintf(op, sizeof op, "%s", e->op);
    if (e->k == X_CMP && !rel && (rel = ct_column(sc, e->b, &col))) { /* X op lsn: flip */
        other = e->a;
        snprintf(op, sizeof op, "%s", !strcmp(e->op, "<") ? ">" : !strcmp(e->op, ">") ? "<" : !strcmp(e->op, "<=") ? ">=" :
                                      !strcmp(e->op, ">=") ? "<=" : e->op);
    }
    if (!rel || strcmp(rel->cols[col].name, "__$start_lsn")) return 0;
    sim_type bin10 = {ST_BINARY, 10, 0, 0};
    scope empty = {NULL, 0, NULL};
    long long id = (long long)rel->ct_id;
    const char *r = rel->rowid_sql;
    if (e->k == X_BETWEEN) {
        if (e->neg || !column_free(e->b) || !column_free(e->c)) return 0;
        cx lo, hi;
        int rc;
        if ((rc = tc_expr(c, &empty, e->b, &lo)) || (rc = tc_expr(c, &empty, e->c, &hi))) return rc;
        bool ex = binary_or_null(&lo) && binary_or_null(&hi);
        if ((rc = tc_conv(c, &lo, &bin10, false, tc_line_of(e))) || (rc = tc_conv(c, &hi, &bin10, false, tc_line_of(e))))
            return rc;
        if (ex && !(*exact = tc_fmt(c, "(typeof(%s) = 'blob' AND typeof(%s) = 'blob')", lo.sql, hi.sql))) return MCDC_ENOMEM;
        return mcdc_buf_printf(b, " AND %s >= mc_ct_first(%lld, %s, 1) AND %s < %s", r, id, lo.sql, r,
                               upper(c, rel, tc_fmt(c, "mc_ct_first(%lld, %s, 0)", id, hi.sql)));
    }
    if (!column_free(other)) return 0;
    bool known = !strcmp(op, ">") || !strcmp(op, ">=") || !strcmp(op, "<") || !strcmp(op, "<=") || !strcmp(op, "=");
    if (!known) return 0;
    cx v;
    int rc = tc_expr(c, &empty, (tsql_expr *)other, &v);
    if (rc) return rc;
    bool ex = binary_or_null(&v);
    if ((rc = tc_conv(c, &v, &bin10, false, tc_line_of(e)))) return rc;
    if (ex && !(*exact = tc_fmt(c, "(typeof(%s) = 'blob')", v.sql))) return MCDC_ENOMEM;
    /* mc_ct_first(id, x, 1): the first rowid with start_lsn >= x; (.., 0): with start_lsn > x */
    if (!strcmp(op, ">")) return mcdc_buf_printf(b, " AND %s >= mc_ct_first(%lld, %s, 0)", r, id, v.sql);
    if (!strcmp(op, ">=")) return mcdc_buf_printf(b, " AND %s >= mc_ct_first(%lld, %s, 1)", r, id, v.sql);
    if (!strcmp(op, "<")) return mcdc_buf_printf(b, " AND %s < %s", r, upper(c, rel, tc_fmt(c, "mc_ct_first(%lld, %s, 1)", id, v.sql)));
    if (!strcmp(op, "<=")) return mcdc_buf_printf(b, " AND %s < %s", r, upper(c, rel, tc_fmt(c, "mc_ct_first(%lld, %s, 0)", id, v.sql)));
    return mcdc_buf_printf(b, " AND %s >= mc_ct_first(%lld, %s, 1) AND %s < %s", r, id, v.sql, r,
                           upper(c, rel, tc_fmt(c, "mc_ct_first(%lld, %s, 0)", id, v.sql)));
}

/* The WHERE clause's conjuncts (top-level ANDs) into @p w, each compiled as it is or, when
 * range_seek makes it exact, as its test; the rowid bounds go to @p seeks. */
static int where_sql(C *c, scope *sc, tsql_expr *e, mcdc_buf *w, mcdc_buf *seeks)
{
    int rc;
    if (e->k == X_AND) {
        if ((rc = where_sql(c, sc, e->a, w, seeks)) < 0 || rc == TSQL_ESQL) return rc;
        if ((rc = mcdc_buf_puts(w, " AND ")) < 0) return rc;
        return where_sql(c, sc, e->b, w, seeks);
    }
    const char *exact, *sql;
    if ((rc = range_seek(c, sc, e, seeks, &exact)) < 0 || rc == TSQL_ESQL) return rc;
    if (!exact && (rc = bool_sql(c, sc, e, &sql))) return rc;
    return mcdc_buf_puts(w, exact ? exact : sql);
}

/* ORDER BY a prefix of (__$start_lsn, __$command_id, __$seqval, __$operation) of one change
 * table, all ascending or all descending: that table's rowid order (S1). */
static const char *rowid_order(scope *sc, tsql_select *sel)
{
    static const char *const key[] = {"__$start_lsn", "__$command_id", "__$seqval", "__$operation"};
    if (sel->norder == 0 || sel->norder > 4 || sel->union_all) return NULL;
    crel *rel = NULL;
    for (int i = 0; i < sel->norder; i++) {
        int col;
        crel *r = ct_column(sc, sel->order[i].e, &col);
        if (!r || (rel && r != rel) || strcasecmp(r->cols[col].name, key[i]) || sel->order[i].desc != sel->order[0].desc)
            return NULL;
        rel = r;
    }
    return rel->rowid_sql;
}

/* Each change table's view bound (start_lsn <= processed_lsn: rowid < mc_ct_end), placed
 * once its WHERE is known: on a table an outer join may make all NULL, inside its FROM SQL
 * as a filter (+rowid: a range's own bounds stay the ones SQLite seeks by); elsewhere in the
 * WHERE, as the upper rowid bound, unless range_seek's upper bound already holds it. */
static int view_bounds(C *c, scope *sc, const char **fsql, mcdc_buf *seeks)
{
    for (int i = 0; i < sc->nrels; i++) {
        crel *rel = &sc->rels[i];
        if (!rel->ct_id || !rel->view_sql || fsql[i] != rel->view_sql) continue;
        long long id = (long long)rel->ct_id;
        const char *in = rel->outer_null ? tc_fmt(c, " WHERE +rowid < mc_ct_end(%lld)", id) : "";
        if (!in || !(fsql[i] = tc_fmt(c, "%.*s%s%s", (int)rel->view_at, rel->view_sql, in, rel->view_sql + rel->view_at)))
            return MCDC_ENOMEM;
        int rc;
        if (!rel->outer_null && !rel->view_bounded &&
            (rc = mcdc_buf_printf(seeks, " AND %s < mc_ct_end(%lld)", rel->rowid_sql, id)) < 0)
            return rc;
    }
    return 0;
}

static int select_core(C *c, scope *outer, tsql_select *sel, crel *out_rel, mcdc_buf *b, cx **items_out, int *nitems_out,
                       scope **sc_out)
{
    int rc;
    scope *sc = sim_arena_alloc(&c->s->arena, sizeof *sc);
    if (!sc) return MCDC_ENOMEM;
    sc->outer = outer;
    sc->rels = sim_arena_alloc(&c->s->arena, (size_t)(sel->nfrom + 1) * sizeof *sc->rels);
    if (!sc->rels) return MCDC_ENOMEM;
    const char **fsql = sim_arena_alloc(&c->s->arena, (size_t)(sel->nfrom + 1) * sizeof *fsql);
    const char **onsql = sim_arena_alloc(&c->s->arena, (size_t)(sel->nfrom + 1) * sizeof *onsql);
    if (!fsql || !onsql) return MCDC_ENOMEM;
    for (int i = 0; i < sel->nfrom; i++) {
        tsql_tref *tr = &sel->from[i];
        bool lateral = tr->join == J_CROSS_APPLY || tr->join == J_OUTER_APPLY;
        if ((rc = from_item(c, lateral ? sc : outer, sc, tr, &fsql[i]))) return rc;
        /* the outer side of a join may be all NULL */
        if (tr->join == J_LEFT || tr->join == J_FULL || tr->join == J_OUTER_APPLY) {
            sc->rels[sc->nrels - 1].outer_null = true;
            for (int k = 0; k < sc->rels[sc->nrels - 1].ncols; k++) sc->rels[sc->nrels - 1].cols[k].nullable = true;
        }
        if (tr->join == J_RIGHT || tr->join == J_FULL)
            for (int r = 0; r < sc->nrels - 1; r++) {
                sc->rels[r].outer_null = true;
                for (int k = 0; k < sc->rels[r].ncols; k++) sc->rels[r].cols[k].nullable = true;
            }
        onsql[i] = NULL;
        if (tr->on && (rc = bool_sql(c, sc, tr->on, &onsql[i]))) return rc;
    }
    /* the select list */
    int cap = sel->nitems * 2 + 8, n = 0;
    cx *items = sim_arena_alloc(&c->s->arena, (size_t)cap * sizeof *items);
    const char **names = sim_arena_alloc(&c->s->arena, (size_t)cap * sizeof *names);
    if (!items || !names) return MCDC_ENOMEM;
    for (int i = 0; i < sel->nitems; i++) {
        tsql_item *it = &sel->items[i];
        if (it->e->k == X_STAR) {
            const char *q = it->e->nparts ? it->e->parts[it->e->nparts - 1] : NULL;
            bool any = false;
            for (int r = 0; r < sc->nrels; r++) {
                crel *rel = &sc->rels[r];
                if (q && !(rel->alias && !strcasecmp(rel->alias, q)) && !(rel->object && !strcasecmp(rel->object, q))) continue;
                any = true;
                for (int k = 0; k < rel->ncols; k++) {
                    if (n + 1 >= cap) {
                        int nc = cap * 2 + rel->ncols;
                        cx *ni = sim_arena_alloc(&c->s->arena, (size_t)nc * sizeof *ni);
                        const char **nn = sim_arena_alloc(&c->s->arena, (size_t)nc * sizeof *nn);
                        if (!ni || !nn) return MCDC_ENOMEM;
                        memcpy(ni, items, (size_t)n * sizeof *ni);
                        memcpy(nn, names, (size_t)n * sizeof *nn);
                        items = ni;
                        names = nn;
                        cap = nc;
                    }
                    memset(&items[n], 0, sizeof items[n]);
                    items[n].t = rel->cols[k].t;
                    items[n].nullable = rel->cols[k].nullable;
                    items[n].sql = rel->cols[k].sql;
                    names[n] = rel->cols[k].name;
                    n++;
                }
            }
            if (!any) {
                if (q) return tsql_fail(c->err, 4104, 16, 1, tc_line_of(it->e), "The multi-part identifier \"%s\" could not be bound.", q);
                return tsql_fail(c->err, 263, 16, 1, tc_line_of(it->e), "Must specify table to select from.");
            }
            continue;
        }
        if (n + 1 >= cap) return mcdc_error_set(MCDC_ENOMEM, "select list too long");
        if ((rc = tc_expr(c, sc, it->e, &items[n]))) return rc;
        names[n] = it->alias ? it->alias : items[n].name ? items[n].name : "";
        n++;
    }
    /* the WHERE first: its range bounds decide where each change table's view bound goes */
    mcdc_buf w = MCDC_BUF_INIT(1 << 24), seeks = MCDC_BUF_INIT(1 << 24);
    rc = sel->where ? where_sql(c, sc, sel->where, &w, &seeks) : 0;
    if (rc >= 0 && rc != TSQL_ESQL) rc = view_bounds(c, sc, fsql, &seeks);
    if (rc >= 0 && rc != TSQL_ESQL && (w.len || seeks.len))
        rc = mcdc_buf_printf(&w, "%s%.*s", w.len ? "" : "1", (int)seeks.len, seeks.ptr ? seeks.ptr : "");
    mcdc_buf_dispose(&seeks);
    if (rc < 0 || rc == TSQL_ESQL) {
        mcdc_buf_dispose(&w);
        return rc;
    }
    mcdc_buf_puts(b, "SELECT ");
    if (sel->distinct) mcdc_buf_puts(b, "DISTINCT ");
    for (int i = 0; i < n; i++) /* DISTINCT compares strings under the default collation */
        mcdc_buf_printf(b, "%s%s AS c%d", i ? ", " : "", sel->distinct ? tc_cmp_sql(c, &items[i]) : items[i].sql, i + 1);
    if (sel->nfrom) {
        mcdc_buf_puts(b, " FROM ");
        for (int i = 0; i < sel->nfrom; i++) {
            static const char *const kw[] = {"", " JOIN ", " LEFT JOIN ", " RIGHT JOIN ", " FULL JOIN ", " CROSS JOIN ",
                                             " JOIN ", " LEFT JOIN "};
            if (i) mcdc_buf_puts(b, kw[sel->from[i].join]);
            mcdc_buf_puts(b, fsql[i]);
            if (onsql[i]) mcdc_buf_printf(b, " ON %s", onsql[i]);
            else if (sel->from[i].join == J_OUTER_APPLY) mcdc_buf_puts(b, " ON 1");
        }
    }
    if (w.len) mcdc_buf_printf(b, " WHERE %.*s", (int)w.len, w.ptr);
    mcdc_buf_dispose(&w);
    if (sel->ngroup) {
        mcdc_buf_puts(b, " GROUP BY ");
        for (int i = 0; i < sel->ngroup; i++) {
            cx g;
            if ((rc = tc_expr(c, sc, sel->group[i], &g))) return rc;
            mcdc_buf_printf(b, "%s%s", i ? ", " : "", tc_cmp_sql(c, &g));
        }
    }
    if (sel->having) {
        const char *h;
        if ((rc = bool_sql(c, sc, sel->having, &h))) return rc;
        mcdc_buf_printf(b, " HAVING %s", h);
    }
    bool agg = sel->ngroup > 0;
    for (int i = 0; i < sel->nitems; i++) agg |= contains_aggregate(sel->items[i].e);
    for (int i = 0; agg && i < sel->nitems; i++)
        if (sel->items[i].e->k != X_STAR && (rc = check_grouped(c, sc, sel, sel->items[i].e))) return rc;
        else if (sel->items[i].e->k == X_STAR && sc->nrels)
            return tsql_fail(c->err, 8120, 16, 1, tc_line_of(sel->items[i].e), "Column '%s.%s' is invalid in the select list "
                             "because it is not contained in either an aggregate function or the GROUP BY clause.",
                             sc->rels[0].alias ? sc->rels[0].alias : "", sc->rels[0].ncols ? sc->rels[0].cols[0].name : "");
    out_rel->ncols = 0;
    for (int i = 0; i < n; i++)
        if ((rc = add_col(c, out_rel, names[i], items[i].t, items[i].nullable, NULL)) < 0) return rc;
    for (int i = 0; i < n; i++) out_rel->cols[i].sql = items[i].is_variant ? "variant" : NULL;
    *items_out = items;
    *nitems_out = n;
    *sc_out = sc;
    return 0;
}

static int compile_select(C *c, scope *outer, tsql_select *sel, bool derived, crel *as_rel, const char **sql)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 24);
    cx *items;
    int n, rc;
    scope *sc;
    if (derived && sel->norder && !sel->top && !sel->offset) {
        rc = tsql_fail(c->err, 1033, 15, 1, sel->tok->line,
                       "The ORDER BY clause is invalid in views, inline functions, derived tables, subqueries, and common "
                       "table expressions, unless TOP, OFFSET or FOR XML is also specified.");
        goto done;
    }
    if ((rc = select_core(c, outer, sel, as_rel, &b, &items, &n, &sc))) goto done;
    bool union_ = sel->union_all != NULL;
    if (union_) {
        /* every branch, then each converted to the common column types */
        int nb = 0;
        for (tsql_select *u = sel; u; u = u->union_all) nb++;
        const char **bsql = sim_arena_alloc(&c->s->arena, (size_t)nb * sizeof *bsql);
        crel *brel = sim_arena_alloc(&c->s->arena, (size_t)nb * sizeof *brel);
        if (!bsql || !brel) { rc = MCDC_ENOMEM; goto done; }
        bsql[0] = tc_fmt(c, "%.*s", (int)b.len, b.ptr);
        brel[0] = *as_rel;
        brel[0].cols = sim_arena_alloc(&c->s->arena, (size_t)(n + 1) * sizeof *brel[0].cols);
        if (!brel[0].cols) { rc = MCDC_ENOMEM; goto done; }
        memcpy(brel[0].cols, as_rel->cols, (size_t)n * sizeof *brel[0].cols);
        int k = 1;
        for (tsql_select *u = sel->union_all; u; u = u->union_all, k++) {
            cx *uitems;
            int un;
            scope *usc;
            mcdc_buf ub = MCDC_BUF_INIT(1 << 24);
            memset(&brel[k], 0, sizeof brel[k]);
            if ((rc = select_core(c, outer, u, &brel[k], &ub, &uitems, &un, &usc))) { mcdc_buf_dispose(&ub); goto done; }
            bsql[k] = tc_fmt(c, "%.*s", (int)ub.len, ub.ptr);
            mcdc_buf_dispose(&ub);
            if (un != n) {
                rc = tsql_fail(c->err, 205, 16, 1, u->tok->line, "All queries combined using a UNION, INTERSECT or EXCEPT operator "
                                                                "must have an equal number of expressions in their target lists.");
                goto done;
            }
            for (int i = 0; i < n; i++) {
                as_rel->cols[i].t = tc_common(&as_rel->cols[i].t, &brel[k].cols[i].t);
                as_rel->cols[i].nullable |= brel[k].cols[i].nullable;
            }
        }
        mcdc_buf_clear(&b);
        mcdc_buf_puts(&b, "SELECT * FROM (");
        for (k = 0; k < nb; k++) {
            if (k) mcdc_buf_puts(&b, " UNION ALL ");
            bool same = true;
            for (int i = 0; i < n; i++)
                if (memcmp(&brel[k].cols[i].t, &as_rel->cols[i].t, sizeof(sim_type))) same = false;
            if (same) {
                mcdc_buf_puts(&b, bsql[k]);
                continue;
            }
            mcdc_buf_puts(&b, "SELECT ");
            for (int i = 0; i < n; i++) {
                cx x = {0};
                x.t = brel[k].cols[i].t;
                x.sql = tc_fmt(c, "c%d", i + 1);
                if ((rc = tc_conv(c, &x, &as_rel->cols[i].t, false, sel->tok->line))) goto done;
                mcdc_buf_printf(&b, "%s%s AS c%d", i ? ", " : "", x.sql, i + 1);
            }
            mcdc_buf_printf(&b, " FROM (%s)", bsql[k]);
        }
        mcdc_buf_puts(&b, ")");
    }
    const char *by_rowid = rowid_order(sc, sel);
    if (by_rowid) {
        mcdc_buf_printf(&b, " ORDER BY %s%s", by_rowid, sel->order[0].desc ? " DESC" : "");
    } else if (sel->norder) {
        mcdc_buf_puts(&b, " ORDER BY ");
        for (int i = 0; i < sel->norder; i++) {
            const char *o = NULL;
            if ((rc = order_item(c, sc, as_rel, items, n, &sel->order[i], union_, &o))) goto done;
            mcdc_buf_printf(&b, "%s%s%s", i ? ", " : "", o, sel->order[i].desc ? " DESC" : "");
        }
    }
    if (sel->top || sel->offset) {
        cx lim = {0}, off = {0};
        sim_type bi = {ST_BIGINT, 0, 0, 0};
        scope empty = {NULL, 0, NULL};
        if (sel->top && sel->offset) {
            rc = tsql_fail(c->err, 10741, 15, 1, sel->tok->line, "A TOP can not be used in the same query or sub-query as a OFFSET.");
            goto done;
        }
        tsql_expr *le = sel->top ? sel->top : sel->fetch;
        if (le) {
            if ((rc = tc_expr(c, &empty, le, &lim))) goto done;
            if (!sim_type_is_numeric(&lim.t) && lim.t.k != ST_BIT) {
                rc = tsql_fail(c->err, 1060, 15, 1, sel->tok->line, "The number of rows in the TOP clause must be an integer.");
                goto done;
            }
            if ((rc = tc_conv(c, &lim, &bi, false, sel->tok->line))) goto done;
        }
        if (sel->offset) {
            if ((rc = tc_expr(c, &empty, sel->offset, &off)) || (rc = tc_conv(c, &off, &bi, false, sel->tok->line))) goto done;
        }
        if (sel->top_percent) {
            rc = tsql_fail(c->err, 102, 15, 1, sel->tok->line, "Incorrect syntax near 'PERCENT'.");
            goto done;
        }
        mcdc_buf_printf(&b, " LIMIT %s", le ? lim.sql : "-1");
        if (sel->offset) mcdc_buf_printf(&b, " OFFSET %s", off.sql);
    }
    *sql = tc_fmt(c, "%.*s", (int)b.len, b.ptr);
    rc = *sql ? 0 : MCDC_ENOMEM;
done:
    mcdc_buf_dispose(&b);
    return rc;
}

int tsql_compile(mcdc_sim_session *s, tsql_select *sel, tsql_compiled *out, tsql_error *err)
{
    C c = {s, out, err, 0};
    crel rel = {0};
    const char *sql;
    memset(out, 0, sizeof *out);
    out->sql = (mcdc_buf)MCDC_BUF_INIT(1 << 24);
    int rc = compile_select(&c, NULL, sel, false, &rel, &sql);
    if (rc) return rc;
    if ((rc = mcdc_buf_puts(&out->sql, sql)) < 0 || (rc = mcdc_buf_putc(&out->sql, '\0')) < 0) return rc;
    out->cols = sim_arena_alloc(&s->arena, (size_t)(rel.ncols + 1) * sizeof *out->cols);
    if (!out->cols) return MCDC_ENOMEM;
    out->ncols = rel.ncols;
    for (int i = 0; i < rel.ncols; i++) {
        out->cols[i].rc.name = rel.cols[i].name;
        out->cols[i].rc.type = rel.cols[i].t;
        out->cols[i].rc.nullable = rel.cols[i].nullable;
        out->cols[i].rc.is_variant = rel.cols[i].sql && !strcmp(rel.cols[i].sql, "variant");
        out->cols[i].check_int = tc_is_int(rel.cols[i].t.k) && rel.cols[i].t.k != ST_BIGINT;
    }
    return 0;
}

void tsql_compiled_dispose(tsql_compiled *c)
{
    mcdc_buf_dispose(&c->sql);
    free(c->binds);
    free(c->btypes);
    memset(c, 0, sizeof *c);
}
