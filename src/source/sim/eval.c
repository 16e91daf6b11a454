/*
 * source/sim/eval.c: evaluating the simulator's expressions and predicates over one row.
 *
 * Arithmetic follows SQL Server where it matters for exactness: int and bigint overflow is an
 * error (never wraps), decimals are exact 128-bit (division at scale max(6, s1 + p2 + 1), capped
 * at 38 digits, rounded half away from zero), any float operand makes the result float, integer
 * division truncates, division by zero is Msg 8134. A string literal meeting a column takes the
 * column's type before comparing. Predicates use three-valued logic (NULL compares unknown).
 */
#include <math.h>
#include <string.h>

#include "source/sim/sim_int.h"

static int eval_typed(sim_arena *a, const sim_expr *e, const sim_row_view *row, sim_val *out, const sim_type **ty);

static int overflow_int(bool big)
{
    return mcdc_error_set(MCDC_EINVAL, "Msg 8115: Arithmetic overflow error converting expression to data type %s.",
                          big ? "bigint" : "int");
}

static mcdc_int128 p10(int n)
{
    mcdc_int128 p = 1;
    while (n-- > 0) p *= 10;
    return p;
}

/* A string meeting a number in arithmetic becomes that number's kind. */
static int numeric_of_string(sim_arena *a, const sim_val *s, const sim_val *other, sim_val *out)
{
    sim_type t = {0};
    if (other->k == V_FLT) t.k = ST_FLOAT;
    else if (other->k == V_DEC) {
        t.k = ST_DECIMAL;
        t.prec = 38;
        const char *dot = memchr(s->u.s.p, '.', s->u.s.n);
        t.scale = dot ? (int)(s->u.s.n - (size_t)(dot - s->u.s.p) - 1) : 0;
        if (t.scale > 38) t.scale = 38;
    } else t.k = ST_BIGINT;
    int rc = sim_convert(a, &t, s, out, NULL);
    if (rc == 0 && t.k == ST_BIGINT) out->big = other->big;
    return rc;
}

static int arith(sim_arena *a, sim_op op, sim_val x, sim_val y, sim_val *out)
{
    memset(out, 0, sizeof *out);
    out->lit = x.lit && y.lit;
    if (x.k == V_NULL || y.k == V_NULL)
        return 0;
    static const char *const opname[] = {[E_ADD] = "add", [E_SUB] = "subtract", [E_MUL] = "multiply",
                                         [E_DIV] = "divide", [E_MOD] = "modulo"};
    if (x.k == V_STR && y.k == V_STR) {
        if (op != E_ADD)
            return mcdc_error_set(MCDC_EINVAL, "Msg 8117: Operand data type varchar is invalid for %s operator.", opname[op]);
        char *p = sim_arena_alloc(a, x.u.s.n + y.u.s.n + 1);
        if (!p) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        memcpy(p, x.u.s.p, x.u.s.n);
        memcpy(p + x.u.s.n, y.u.s.p, y.u.s.n);
        out->k = V_STR;
        out->big = x.big || y.big;
        out->u.s.p = p;
        out->u.s.n = x.u.s.n + y.u.s.n;
        return 0;
    }
    bool xn = x.k == V_INT || x.k == V_DEC || x.k == V_FLT, yn = y.k == V_INT || y.k == V_DEC || y.k == V_FLT;
    if (x.k == V_STR && yn) { int rc = numeric_of_string(a, &x, &y, &x); if (rc < 0) return rc; xn = true; }
    if (y.k == V_STR && xn) { int rc = numeric_of_string(a, &y, &x, &y); if (rc < 0) return rc; yn = true; }
    if (!xn || !yn) {
        const char *n = !xn ? (x.k == V_BIN ? "varbinary" : x.k == V_STR ? "varchar" : "datetime2")
                            : (y.k == V_BIN ? "varbinary" : y.k == V_STR ? "varchar" : "datetime2");
        return mcdc_error_set(MCDC_EINVAL, "Msg 8117: Operand data type %s is invalid for %s operator.", n, opname[op]);
    }
    if (x.k == V_FLT || y.k == V_FLT) {
        double dx, dy;
        sim_type ft = {ST_FLOAT, 0, 0, 0};
        sim_val t;
        if (sim_convert(a, &ft, &x, &t, NULL) < 0) return mcdc_error_last()->code;
        dx = t.u.d;
        if (sim_convert(a, &ft, &y, &t, NULL) < 0) return mcdc_error_last()->code;
        dy = t.u.d;
        double r;
        switch (op) {
        case E_ADD: r = dx + dy; break;
        case E_SUB: r = dx - dy; break;
        case E_MUL: r = dx * dy; break;
        case E_DIV:
            if (dy == 0) return mcdc_error_set(MCDC_EINVAL, "Msg 8134: Divide by zero error encountered.");
            r = dx / dy;
            break;
        default:
            return mcdc_error_set(MCDC_EINVAL, "Msg 8117: Operand data type float is invalid for modulo operator.");
        }
        if (!isfinite(r)) return mcdc_error_set(MCDC_EINVAL, "Msg 8115: Arithmetic overflow error converting expression to data type float.");
        out->k = V_FLT;
        out->u.d = r;
        return 0;
    }
    if (x.k == V_INT && y.k == V_INT) {
        bool big = x.big || y.big;
        int64_t r;
        bool ovf = false;
        switch (op) {
        case E_ADD: ovf = __builtin_add_overflow(x.u.i, y.u.i, &r); break;
        case E_SUB: ovf = __builtin_sub_overflow(x.u.i, y.u.i, &r); break;
        case E_MUL: ovf = __builtin_mul_overflow(x.u.i, y.u.i, &r); break;
        default:
            if (y.u.i == 0) return mcdc_error_set(MCDC_EINVAL, "Msg 8134: Divide by zero error encountered.");
            if (x.u.i == INT64_MIN && y.u.i == -1) { ovf = true; r = 0; break; }
            r = op == E_DIV ? x.u.i / y.u.i : x.u.i % y.u.i;
        }
        if (ovf || (!big && (r > INT32_MAX || r < INT32_MIN))) return overflow_int(big);
        out->k = V_INT;
        out->big = big;
        out->u.i = r;
        return 0;
    }
    /* exact decimal */
    mcdc_int128 vx = x.k == V_INT ? x.u.i : x.u.dec, vy = y.k == V_INT ? y.u.i : y.u.dec;
    int sx = x.k == V_INT ? 0 : x.scale, sy = y.k == V_INT ? 0 : y.scale;
    int py = y.k == V_INT ? 19 : y.prec;
    mcdc_int128 r;
    int rs;
    bool ovf = false;
    switch (op) {
    case E_ADD: case E_SUB: {
        rs = sx > sy ? sx : sy;
        ovf = __builtin_mul_overflow(vx, p10(rs - sx), &vx) || __builtin_mul_overflow(vy, p10(rs - sy), &vy);
        if (!ovf) ovf = op == E_ADD ? __builtin_add_overflow(vx, vy, &r) : __builtin_sub_overflow(vx, vy, &r);
        break;
    }
    case E_MUL:
        rs = sx + sy;
        ovf = __builtin_mul_overflow(vx, vy, &r);
        while (!ovf && rs > 38) { r /= 10; rs--; }
        break;
    default: {
        if (vy == 0) return mcdc_error_set(MCDC_EINVAL, "Msg 8134: Divide by zero error encountered.");
        if (op == E_MOD) {
            rs = sx > sy ? sx : sy;
            ovf = __builtin_mul_overflow(vx, p10(rs - sx), &vx) || __builtin_mul_overflow(vy, p10(rs - sy), &vy);
            if (!ovf) r = vx % vy;
            break;
        }
        rs = sx + py + 1;
        if (rs < 6) rs = 6;
        if (rs > 20) rs = 20;
        /* x / y at scale rs: x * 10^(rs - sx + sy) / y, one extra digit for rounding */
        int shift = rs - sx + sy + 1;
        mcdc_int128 num = vx;
        while (shift > 0 && !ovf) { ovf = __builtin_mul_overflow(num, 10, &num); shift--; }
        if (ovf) {
            /* too wide: fall back to fewer fraction digits */
            double d = ((double)vx / (double)p10(sx)) / ((double)vy / (double)p10(sy));
            sim_type dt = {ST_DECIMAL, 0, 38, 10};
            sim_val fv = {0};
            fv.k = V_FLT;
            fv.u.d = d;
            return sim_convert(a, &dt, &fv, out, NULL);
        }
        while (shift < 0) { num /= 10; shift++; }
        mcdc_int128 q = num / vy;
        q = q >= 0 ? (q + 5) / 10 : (q - 5) / 10;
        r = q;
        break;
    }
    }
    if (ovf) return mcdc_error_set(MCDC_EINVAL, "Msg 8115: Arithmetic overflow error converting expression to data type numeric.");
    out->k = V_DEC;
    out->prec = 38;
    out->scale = rs;
    out->u.dec = r;
    return 0;
}

static int eval_typed(sim_arena *a, const sim_expr *e, const sim_row_view *row, sim_val *out, const sim_type **ty)
{
    if (ty) *ty = NULL;
    switch (e->op) {
    case E_LIT:
        *out = e->lit;
        return 0;
    case E_COL:
        if (!row || e->col < 0 || e->col >= row->n)
            return mcdc_error_set(MCDC_EINVAL, "Msg 128: The name \"%s\" is not permitted in this context. Valid "
                                  "expressions are constants, constant expressions, and (in some contexts) variables. "
                                  "Column names are not permitted.", e->name);
        *out = row->vals[e->col];
        out->lit = false;
        if (ty) *ty = &row->types[e->col];
        return 0;
    case E_NEG: {
        sim_val v;
        int rc = eval_typed(a, e->a, row, &v, NULL);
        if (rc < 0) return rc;
        sim_val zero = {0};
        zero.k = V_INT;
        zero.lit = true;
        zero.big = v.big;
        if (v.k == V_DEC) {
            v.u.dec = -v.u.dec;
            *out = v;
            return 0;
        }
        if (v.k == V_FLT) {
            v.u.d = -v.u.d;
            *out = v;
            return 0;
        }
        if (v.k == V_NULL) { *out = v; return 0; }
        return arith(a, E_SUB, zero, v, out);
    }
    case E_ADD: case E_SUB: case E_MUL: case E_DIV: case E_MOD: {
        sim_val x, y;
        int rc = eval_typed(a, e->a, row, &x, NULL);
        if (rc == 0) rc = eval_typed(a, e->b, row, &y, NULL);
        if (rc < 0) return rc;
        return arith(a, e->op, x, y, out);
    }
    default:
        return mcdc_error_set(MCDC_EINVAL, "a predicate where a value was expected");
    }
}

int sim_eval(sim_arena *a, const sim_expr *e, const sim_row_view *row, sim_val *out)
{
    return eval_typed(a, e, row, out, NULL);
}

/* Bring a literal to the other side's type before comparing. */
static int coerce(sim_arena *a, sim_val *v, const sim_val *other, const sim_type *other_ty)
{
    if (!v->lit || (v->k != V_STR && v->k != V_BIN) || other->k == V_STR || other->k == V_NULL)
        return 0;
    if (other_ty)
        return sim_convert(a, other_ty, v, v, NULL);
    sim_type t = {0};
    switch (other->k) {
    case V_INT: t.k = ST_BIGINT; break;
    case V_FLT: t.k = ST_FLOAT; break;
    case V_DEC: return numeric_of_string(a, v, other, v);
    case V_DATE: t.k = ST_DATE; break;
    case V_TIME: t.k = ST_TIME; t.scale = 7; break;
    case V_DT: t.k = ST_DATETIME2; t.scale = 7; break;
    case V_DTO: t.k = ST_DATETIMEOFFSET; t.scale = 7; break;
    default: return 0;
    }
    return sim_convert(a, &t, v, v, NULL);
}

static int compare_exprs(sim_arena *a, const sim_expr *l, const sim_expr *r, const sim_row_view *row, int *cmp,
                         bool *unknown)
{
    sim_val x, y;
    const sim_type *tx, *ty;
    int rc = eval_typed(a, l, row, &x, &tx);
    if (rc == 0) rc = eval_typed(a, r, row, &y, &ty);
    if (rc < 0) return rc;
    *unknown = x.k == V_NULL || y.k == V_NULL;
    if (*unknown) return 0;
    if ((rc = coerce(a, &x, &y, ty)) < 0 || (rc = coerce(a, &y, &x, tx)) < 0) return rc;
    if (x.k == V_NULL || y.k == V_NULL) { *unknown = true; return 0; }
    return sim_compare(a, &x, &y, cmp);
}

int sim_eval_pred(sim_arena *a, const sim_expr *e, const sim_row_view *row, int *out)
{
    int rc, c, x, y;
    bool unk;
    switch (e->op) {
    case P_EQ: case P_NE: case P_LT: case P_LE: case P_GT: case P_GE:
        if ((rc = compare_exprs(a, e->a, e->b, row, &c, &unk)) < 0) return rc;
        if (unk) { *out = -1; return 0; }
        switch (e->op) {
        case P_EQ: *out = c == 0; break;
        case P_NE: *out = c != 0; break;
        case P_LT: *out = c < 0; break;
        case P_LE: *out = c <= 0; break;
        case P_GT: *out = c > 0; break;
        default: *out = c >= 0; break;
        }
        return 0;
    case P_AND:
        if ((rc = sim_eval_pred(a, e->a, row, &x)) < 0) return rc;
        if (x == 0) { *out = 0; return 0; }
        if ((rc = sim_eval_pred(a, e->b, row, &y)) < 0) return rc;
        *out = y == 0 ? 0 : (x == 1 && y == 1) ? 1 : -1;
        return 0;
    case P_OR:
        if ((rc = sim_eval_pred(a, e->a, row, &x)) < 0) return rc;
        if (x == 1) { *out = 1; return 0; }
        if ((rc = sim_eval_pred(a, e->b, row, &y)) < 0) return rc;
        *out = y == 1 ? 1 : (x == 0 && y == 0) ? 0 : -1;
        return 0;
    case P_NOT:
        if ((rc = sim_eval_pred(a, e->a, row, &x)) < 0) return rc;
        *out = x < 0 ? -1 : !x;
        return 0;
    case P_ISNULL: case P_NOTNULL: {
        sim_val v;
        if ((rc = sim_eval(a, e->a, row, &v)) < 0) return rc;
        *out = (v.k == V_NULL) == (e->op == P_ISNULL);
        return 0;
    }
    case P_IN: {
        bool any_unknown = false;
        for (int i = 0; i < e->n_list; i++) {
            if ((rc = compare_exprs(a, e->a, e->list[i], row, &c, &unk)) < 0) return rc;
            if (unk) any_unknown = true;
            else if (c == 0) { *out = 1; return 0; }
        }
        *out = any_unknown ? -1 : 0;
        return 0;
    }
    case P_BETWEEN: {
        int lo, hi;
        bool u1, u2;
        if ((rc = compare_exprs(a, e->a, e->b, row, &lo, &u1)) < 0) return rc;
        if ((rc = compare_exprs(a, e->a, e->c, row, &hi, &u2)) < 0) return rc;
        x = u1 ? -1 : lo >= 0;
        y = u2 ? -1 : hi <= 0;
        *out = (x == 0 || y == 0) ? 0 : (x == 1 && y == 1) ? 1 : -1;
        return 0;
    }
    default:
        return mcdc_error_set(MCDC_EINVAL, "Msg 4145: An expression of non-boolean type specified in a context where a "
                              "condition is expected.");
    }
}
