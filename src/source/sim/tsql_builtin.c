/*
 * source/sim/tsql_builtin.c: the built-in functions of the T-SQL compiler: aggregates
 * (COUNT, COUNT_BIG, MIN, MAX, SUM, AVG with SQL Server's result types), window functions
 * (ROW_NUMBER, RANK, DENSE_RANK, NTILE, LAG, LEAD, and aggregates OVER (...)), ISNULL and
 * COALESCE, DATEADD/DATEDIFF/DATEDIFF_BIG/DATEPART, QUOTENAME, HASHBYTES, LEN, DATALENGTH,
 * SUBSTRING, UPPER, LOWER, LTRIM, RTRIM; the rest goes to tsql_sys.c (CDC and server
 * functions). An unknown name is 195 naming it. HASHBYTES, DATALENGTH and SUBSTRING see a
 * string's bytes as SQL Server stores them (nvarchar UTF-16LE, varchar CP1252), not the
 * engine's UTF-8.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "source/sim/tsql_compile.h"

static bool fname_is(const tsql_expr *e, const char *n)
{
    if (!strcasecmp(e->name, n)) return true;
    size_t l = strlen(e->name);
    return l > 4 && !strncasecmp(e->name, "sys.", 4) && !strcasecmp(e->name + 4, n) && strncasecmp(n, "sys.", 4);
}

/* How SQL Server sees a value's bytes (HASHBYTES, DATALENGTH, SUBSTRING): 'w' UTF-16LE
 * (nchar, nvarchar, ntext), 'c' one byte a character in CP1252 (char, varchar, text), 'b'
 * bytes (binary types), 'f' a fixed-size type (fixed_size), 0 none of these. */
static char byte_form(sim_tkind k)
{
    switch (k) {
    case ST_NCHAR: case ST_NVARCHAR: case ST_NTEXT: return 'w';
    case ST_CHAR: case ST_VARCHAR: case ST_TEXT: return 'c';
    case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: case ST_ROWVERSION: return 'b';
    case ST_XML: return 0;
    default: return 'f';
    }
}

/* The storage bytes of a fixed-size type, as DATALENGTH gives them. */
static int fixed_size(const sim_type *t)
{
    int s = t->scale;
    switch (t->k) {
    case ST_BIT: case ST_TINYINT: return 1;
    case ST_SMALLINT: return 2;
    case ST_INT: case ST_REAL: case ST_SMALLMONEY: case ST_SMALLDATETIME: return 4;
    case ST_BIGINT: case ST_FLOAT: case ST_MONEY: case ST_DATETIME: return 8;
    case ST_DATE: return 3;
    case ST_TIME: return s <= 2 ? 3 : s <= 4 ? 4 : 5;
    case ST_DATETIME2: return s <= 2 ? 6 : s <= 4 ? 7 : 8;
    case ST_DATETIMEOFFSET: return s <= 2 ? 8 : s <= 4 ? 9 : 10;
    case ST_UNIQUEIDENTIFIER: return 16;
    case ST_DECIMAL: case ST_NUMERIC: return t->prec <= 9 ? 5 : t->prec <= 19 ? 9 : t->prec <= 28 ? 13 : 17;
    default: return 8;
    }
}

static int nargs_fail(C *c, tsql_expr *e, int want)
{
    (void)want;
    return tsql_fail(c->err, 174, 15, 1, tc_line_of(e), "The %s function requires %d argument(s).", e->name, want);
}

int tc_func(C *c, scope *sc, tsql_expr *e, cx *out)
{
    int rc, line = tc_line_of(e);
    cx a, b;
    sim_type bigint = {ST_BIGINT, 0, 0, 0}, i4 = {ST_INT, 0, 0, 0};
    if (e->over) {
        mcdc_buf w = MCDC_BUF_INIT(1 << 20);
        mcdc_buf_puts(&w, " OVER (");
        for (int i = 0; i < e->npart; i++) {
            if ((rc = tc_expr(c, sc, e->part[i], &a))) { mcdc_buf_dispose(&w); return rc; }
            mcdc_buf_printf(&w, "%s%s", i ? ", " : "PARTITION BY ", tc_cmp_sql(c, &a));
        }
        for (int i = 0; i < e->nord; i++) {
            if ((rc = tc_expr(c, sc, e->ord[i].e, &a))) { mcdc_buf_dispose(&w); return rc; }
            mcdc_buf_printf(&w, "%s%s%s", i ? ", " : e->npart ? " ORDER BY " : "ORDER BY ", tc_cmp_sql(c, &a),
                            e->ord[i].desc ? " DESC" : "");
        }
        mcdc_buf_putc(&w, ')');
        const char *over = tc_fmt(c, "%.*s", (int)w.len, w.ptr);
        mcdc_buf_dispose(&w);
        if ((fname_is(e, "ntile") || fname_is(e, "lag") || fname_is(e, "lead") || fname_is(e, "row_number") ||
             fname_is(e, "rank") || fname_is(e, "dense_rank")) && e->nord == 0)
            return tsql_fail(c->err, 4112, 16, 1, line, "The function '%s' must have an OVER clause with ORDER BY.", e->name);
        if (fname_is(e, "row_number") || fname_is(e, "rank") || fname_is(e, "dense_rank")) {
            out->t = bigint;
            out->sql = tc_fmt(c, "%s()%s", e->name, over);
            return 0;
        }
        if (fname_is(e, "ntile")) {
            if (e->nargs != 1) return nargs_fail(c, e, 1);
            if ((rc = tc_expr(c, sc, e->args[0], &a))) return rc;
            out->t = bigint;
            out->sql = tc_fmt(c, "ntile(%s)%s", a.sql, over);
            return 0;
        }
        if (fname_is(e, "lag") || fname_is(e, "lead")) {
            if (e->nargs < 1 || e->nargs > 3) return nargs_fail(c, e, 1);
            if ((rc = tc_expr(c, sc, e->args[0], &a))) return rc;
            const char *off = "1", *def = NULL;
            if (e->nargs > 1) { if ((rc = tc_expr(c, sc, e->args[1], &b))) return rc; off = b.sql; }
            if (e->nargs > 2) {
                cx dflt;
                if ((rc = tc_expr(c, sc, e->args[2], &dflt)) || (rc = tc_conv(c, &dflt, &a.t, false, line))) return rc;
                def = dflt.sql;
            }
            out->t = a.t;
            out->nullable = true;
            out->sql = def ? tc_fmt(c, "%s(%s, %s, %s)%s", e->name, a.sql, off, def, over) : tc_fmt(c, "%s(%s, %s)%s", e->name, a.sql, off, over);
            return 0;
        }
        if (!(fname_is(e, "count") || fname_is(e, "count_big") || fname_is(e, "sum") || fname_is(e, "min") ||
              fname_is(e, "max")))
            return tsql_fail(c->err, 195, 15, 10, line, "'%s' is not a recognized windowing function.", e->name);
        tsql_expr plain = *e;
        plain.over = false;
        if ((rc = tc_func(c, sc, &plain, out))) return rc;
        out->sql = tc_fmt(c, "%s%s", out->sql, over);
        out->is_agg = false;
        return 0;
    }
    if (fname_is(e, "count") || fname_is(e, "count_big")) {
        out->t = fname_is(e, "count") ? i4 : bigint;
        out->is_agg = true;
        if (e->star) { out->sql = "count(*)"; return 0; }
        if (e->nargs != 1) return nargs_fail(c, e, 1);
        if ((rc = tc_expr(c, sc, e->args[0], &a))) return rc;
        out->sql = tc_fmt(c, "count(%s%s)", e->distinct ? "DISTINCT " : "", tc_cmp_sql(c, &a));
        return 0;
    }
    if (fname_is(e, "min") || fname_is(e, "max") || fname_is(e, "sum") || fname_is(e, "avg")) {
        if (e->nargs != 1) return nargs_fail(c, e, 1);
        if ((rc = tc_expr(c, sc, e->args[0], &a))) return rc;
        out->is_agg = true;
        out->nullable = true;
        out->t = a.t;
        if (fname_is(e, "sum") || fname_is(e, "avg")) {
            if (!sim_type_is_numeric(&a.t))
                return tsql_fail(c->err, 8117, 16, 1, line, "Operand data type %s is invalid for %s operator.", tc_kname(a.t.k),
                                 fname_is(e, "sum") ? "sum" : "avg");
            if (a.t.k == ST_TINYINT || a.t.k == ST_SMALLINT) out->t = i4;
            if (a.t.k == ST_DECIMAL || a.t.k == ST_NUMERIC) {
                /* exact decimal(38,s) (AVG: scale at least 6), 8115 past 38 digits: tsql_sum.c */
                bool avg = fname_is(e, "avg");
                sim_type d38 = {ST_DECIMAL, 0, 38, avg && a.t.scale < 6 ? 6 : a.t.scale};
                out->t = d38;
                out->sql = tc_fmt(c, "mc_d%s_%d(%s%s)", avg ? "avg" : "sum", a.t.scale, e->distinct ? "DISTINCT " : "", a.sql);
                return 0;
            }
            if (fname_is(e, "avg") && tc_is_int(a.t.k)) {
                out->sql = tc_fmt(c, "CAST(avg(%s%s) AS INTEGER)", e->distinct ? "DISTINCT " : "", a.sql);
                return 0;
            }
        }
        out->sql = tc_fmt(c, "%s(%s%s)", fname_is(e, "avg") ? "avg" : fname_is(e, "sum") ? "sum" : fname_is(e, "min") ? "min" : "max",
                       e->distinct ? "DISTINCT " : "", tc_cmp_sql(c, &a));
        return 0;
    }
    if (fname_is(e, "isnull") || fname_is(e, "coalesce")) {
        if (e->nargs < 2 || (fname_is(e, "isnull") && e->nargs != 2)) return nargs_fail(c, e, 2);
        cx *xs = sim_arena_alloc(&c->s->arena, (size_t)e->nargs * sizeof *xs);
        if (!xs) return MCDC_ENOMEM;
        sim_type t = {0};
        for (int i = 0; i < e->nargs; i++) {
            if ((rc = tc_expr(c, sc, e->args[i], &xs[i]))) return rc;
            if (strcmp(xs[i].sql, "NULL")) t = !t.k ? xs[i].t : fname_is(e, "isnull") ? t : tc_common(&t, &xs[i].t);
        }
        if (!t.k) t = i4;
        mcdc_buf buf = MCDC_BUF_INIT(1 << 20);
        bool nl = true;
        for (int i = 0; i < e->nargs; i++) {
            if ((rc = tc_conv(c, &xs[i], &t, false, line))) { mcdc_buf_dispose(&buf); return rc; }
            mcdc_buf_printf(&buf, "%s%s", i ? ", " : "", xs[i].sql);
            if (!xs[i].nullable && strcmp(xs[i].sql, "NULL")) nl = false;
        }
        out->t = t;
        out->nullable = nl;
        out->sql = tc_fmt(c, "coalesce(%.*s)", (int)buf.len, buf.ptr);
        mcdc_buf_dispose(&buf);
        return 0;
    }
    if (fname_is(e, "dateadd") || fname_is(e, "datediff") || fname_is(e, "datepart") || fname_is(e, "datediff_big")) {
        int want = fname_is(e, "datepart") ? 2 : 3;
        if (e->nargs != want) return nargs_fail(c, e, want);
        tsql_expr *p = e->args[0];
        if (p->k != X_COL || p->nparts != 1 || !tsql_datepart_known(p->parts[0]))
            return tsql_fail(c->err, 155, 15, 1, line, "'%s' is not a recognized %s option.",
                             p->k == X_COL ? p->parts[p->nparts - 1] : "", e->name);
        const char *part = tc_fmt(c, "'%s'", p->parts[0]);
        if (fname_is(e, "datepart")) {
            if ((rc = tc_expr(c, sc, e->args[1], &a))) return rc;
            if (tc_is_str(a.t.k)) { sim_type dto = {ST_DATETIMEOFFSET, 0, 0, 7}; if ((rc = tc_conv(c, &a, &dto, false, line))) return rc; }
            out->t = i4;
            out->nullable = a.nullable;
            out->sql = tc_fmt(c, "mc_datepart(%s, %s, '%s')", part, a.sql, tc_tname(c, &a.t));
            return 0;
        }
        if (fname_is(e, "dateadd")) {
            if ((rc = tc_expr(c, sc, e->args[1], &a)) || (rc = tc_expr(c, sc, e->args[2], &b))) return rc;
            if (tc_is_str(b.t.k)) { sim_type dt = {ST_DATETIME, 0, 0, 0}; if ((rc = tc_conv(c, &b, &dt, false, line))) return rc; }
            out->t = b.t;
            out->nullable = b.nullable;
            out->sql = tc_fmt(c, "mc_dateadd(%s, %s, %s, '%s')", part, a.sql, b.sql, tc_tname(c, &b.t));
            return 0;
        }
        if ((rc = tc_expr(c, sc, e->args[1], &a)) || (rc = tc_expr(c, sc, e->args[2], &b))) return rc;
        sim_type d2 = {ST_DATETIME2, 0, 0, 7};
        if (tc_is_str(a.t.k) && (rc = tc_conv(c, &a, &d2, false, line))) return rc;
        if (tc_is_str(b.t.k) && (rc = tc_conv(c, &b, &d2, false, line))) return rc;
        bool big = !fname_is(e, "datediff");
        out->t = big ? bigint : i4;
        out->nullable = true;
        out->sql = tc_fmt(c, "mc_datediff%s(%s, %s, %s, '%s', '%s')", big ? "_big" : "", part, a.sql, b.sql, tc_tname(c, &a.t),
                          tc_tname(c, &b.t));
        return 0;
    }
    if (fname_is(e, "quotename")) {
        if (e->nargs < 1 || e->nargs > 2) return nargs_fail(c, e, 1);
        if ((rc = tc_expr(c, sc, e->args[0], &a))) return rc;
        const char *q = "'['";
        if (e->nargs == 2) { if ((rc = tc_expr(c, sc, e->args[1], &b))) return rc; q = b.sql; }
        out->t = (sim_type){ST_NVARCHAR, 258, 0, 0};
        out->nullable = true;
        out->sql = tc_fmt(c, "mc_quotename(%s, %s)", a.sql, q);
        return 0;
    }
    if (fname_is(e, "hashbytes")) {
        if (e->nargs != 2) return nargs_fail(c, e, 2);
        if ((rc = tc_expr(c, sc, e->args[0], &a)) || (rc = tc_expr(c, sc, e->args[1], &b))) return rc;
        out->t = (sim_type){ST_VARBINARY, 8000, 0, 0};
        out->nullable = true;
        if (!strcmp(b.sql, "NULL")) { out->sql = "NULL"; return 0; }
        /* the bytes SQL Server hashes: an nvarchar's UTF-16LE, a varchar's CP1252, binary as is */
        char k = byte_form(b.t.k);
        if (!k || k == 'f')
            return tsql_fail(c->err, 8116, 16, 1, line, "Argument data type %s is invalid for argument 2 of hashbytes function.",
                             tc_kname(b.t.k));
        out->sql = tc_fmt(c, "mc_hashbytes(%s, %s, '%c')", a.sql, b.sql, k);
        return 0;
    }
    if (fname_is(e, "datalength")) {
        if (e->nargs != 1) return nargs_fail(c, e, 1);
        if ((rc = tc_expr(c, sc, e->args[0], &a))) return rc;
        out->nullable = a.nullable;
        out->t = a.t.len < 0 ? bigint : i4;
        char k = byte_form(a.t.k);
        if (k == 'f') {
            out->sql = tc_fmt(c, "(CASE WHEN %s IS NULL THEN NULL ELSE %d END)", a.sql, fixed_size(&a.t));
            return 0;
        }
        if (!k) k = 'b';
        out->sql = tc_fmt(c, "mc_datalength(%s, '%c')", a.sql, k);
        return 0;
    }
    if (fname_is(e, "substring")) {
        if (e->nargs != 3) return nargs_fail(c, e, 3);
        cx st, ln;
        if ((rc = tc_expr(c, sc, e->args[0], &a)) || (rc = tc_expr(c, sc, e->args[1], &st)) ||
            (rc = tc_expr(c, sc, e->args[2], &ln)))
            return rc;
        char k = byte_form(a.t.k);
        if (!k || k == 'f')
            return tsql_fail(c->err, 8116, 16, 1, line, "Argument data type %s is invalid for argument 1 of substring function.",
                             tc_kname(a.t.k));
        if (!tc_is_int(st.t.k) || !tc_is_int(ln.t.k))
            return tsql_fail(c->err, 8116, 16, 1, line, "Argument data type %s is invalid for argument %d of substring function.",
                             tc_kname(tc_is_int(st.t.k) ? ln.t.k : st.t.k), tc_is_int(st.t.k) ? 3 : 2);
        out->t = a.t;
        if (a.t.k == ST_CHAR || a.t.k == ST_TEXT) out->t.k = ST_VARCHAR;
        if (a.t.k == ST_NCHAR || a.t.k == ST_NTEXT) out->t.k = ST_NVARCHAR;
        if (a.t.k == ST_BINARY || a.t.k == ST_IMAGE || a.t.k == ST_ROWVERSION) out->t.k = ST_VARBINARY;
        if (a.t.k == ST_TEXT || a.t.k == ST_NTEXT || a.t.k == ST_IMAGE) out->t.len = -1;
        out->nullable = true;
        out->sql = tc_fmt(c, "mc_substring(%s, %s, %s, '%c')", a.sql, st.sql, ln.sql, k);
        return 0;
    }
    if (fname_is(e, "len") || fname_is(e, "upper") || fname_is(e, "lower") || fname_is(e, "ltrim") ||
        fname_is(e, "rtrim")) {
        if (e->nargs != 1) return nargs_fail(c, e, 1);
        if ((rc = tc_expr(c, sc, e->args[0], &a))) return rc;
        out->nullable = a.nullable;
        if (fname_is(e, "len")) { out->t = i4; out->sql = tc_fmt(c, "length(rtrim(%s, ' '))", a.sql); return 0; }
        out->t = a.t;
        out->sql = tc_fmt(c, "%s(%s)", e->name, a.sql);
        return 0;
    }
    /* the CDC functions and server functions */
    int r2 = tsql_sys_function(c->s, c, e, out, c->err);
    if (r2 != -1) return r2;
    return tsql_fail(c->err, 195, 15, 10, line, "'%s' is not a recognized built-in function name.", e->name);
}

