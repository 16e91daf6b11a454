/*
 * source/sim/tsql_func.c: SQL Server's conversions and functions as SQLite functions on a
 * session's connection, over values in the simulator's storage form of their types.
 *
 *   mc_cast(x, 'from type', 'to type', style)   CAST/CONVERT and implicit conversions; styles
 *                                                1 (binary <-> '0x..' text), 23 (yyyy-mm-dd)
 *                                                and 126 (ISO 8601)
 *   mc_lsn_inc(x), mc_lsn_dec(x)                 sys.fn_cdc_increment_lsn/decrement_lsn
 *   mc_dateadd(part, n, x, 'type'), mc_datediff(part, a, b, 'type'), mc_datepart(part, x, 'type')
 *   mc_arith(op, a, 'type', b, 'type', 'result type')  exact decimal + - * / % (8115, 8134)
 *   mc_dsum_<s>(x), mc_davg_<s>(x)               exact SUM/AVG of decimal(p,s) (tsql_sum.c)
 *   mc_cdc_range(from, to, min, max, 'fn')      Msg 313 of cdc.fn_cdc_get_all_changes_<ci>
 *   mc_ct_first(ct_id, lsn, inclusive)          the first change-table rowid at or past an LSN
 *   mc_ct_end(ct_id)                             the first change-table rowid past the processed LSN
 *   mc_datediff_big(...)                         DATEDIFF_BIG: mc_datediff's arguments, a bigint
 *   mc_hashbytes(alg, x, form), mc_datalength(x, form), mc_substring(x, start, len, form)
 *                                                over the bytes SQL Server stores: form 'w'
 *                                                nvarchar (UTF-16LE), 'c' varchar (CP1252),
 *                                                'b' binary
 *   mc_quotename(s, q)
 *   collation mssql                              case-insensitive, trailing spaces ignored
 * A failure is SQL Server's error recorded in the session's run_err (tsql_run_begin), and the
 * statement stops with it. Type texts are parsed once per statement (SQLite auxdata).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nettle/md5.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>

#include "mcdc/text.h"
#include "source/sim/tsql_engine.h"
#include "source/sim/tsql_sys.h"

static void fail(sqlite3_context *cx, int number, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(sqlite3_context *cx, int number, const char *fmt, ...)
{
    mcdc_sim_session *s = sqlite3_user_data(cx);
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (s->run_err && s->run_err->number == 0) tsql_fail(s->run_err, number, 16, 1, 1, "%s", text);
    sqlite3_result_error(cx, text, -1);
}

static void fail_mcdc(sqlite3_context *cx)
{
    mcdc_sim_session *s = sqlite3_user_data(cx);
    if (s->run_err && s->run_err->number == 0) tsql_from_mcdc_error(s->run_err, 1);
    sqlite3_result_error(cx, mcdc_error_last()->message, -1);
}

/* The type named by argument @p i (constant), parsed once. */
static const sim_type *type_arg(sqlite3_context *cx, sqlite3_value **argv, int i)
{
    sim_type *t = sqlite3_get_auxdata(cx, i);
    if (t) return t;
    const char *txt = (const char *)sqlite3_value_text(argv[i]);
    t = malloc(sizeof *t);
    if (!t || !txt || sim_type_parse(t, txt, strlen(txt)) < 0) {
        free(t);
        return NULL;
    }
    sqlite3_set_auxdata(cx, i, t, free);
    return sqlite3_get_auxdata(cx, i);
}

static int hexdig(int c) { return isdigit(c) ? c - '0' : isxdigit(c) ? toupper(c) - 'A' + 10 : -1; }

/* A Unicode string converted to varchar (the default collation's code page, CP1252):
 * characters it cannot hold become '?', as SQL Server converts them. Kept in UTF-8, the
 * engine's storage form. In place: never longer. */
static size_t to_code_page(char *p, size_t n)
{
    size_t i = 0, k = 0;
    while (i < n) {
        size_t len;
        int32_t cp = mcdc_text_utf8_next(p + i, n - i, &len);
        if (cp >= 0 && mcdc_text_cp1252_has((uint32_t)cp)) {
            memmove(p + k, p + i, len);
            k += len;
        } else {
            p[k++] = '?';
        }
        i += len;
    }
    return k;
}

static void civil(int64_t days, int *y, int *m, int *d);
static int64_t fdiv(int64_t a, int64_t b);
static int64_t wall(const sim_val *v);

static void f_cast(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    const sim_type *from = type_arg(cx, argv, 1), *to = type_arg(cx, argv, 2);
    int style = argc > 3 ? sqlite3_value_int(argv[3]) : 0;
    sim_arena a = {0};
    sim_val in, out;
    if (!from || !to) { sqlite3_result_error(cx, "bad type", -1); return; }
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) { sqlite3_result_null(cx); return; }
    if (sim_read_value(argv[0], from, &a, &in) < 0) { fail_mcdc(cx); goto done; }
    bool from_bin = from->k == ST_BINARY || from->k == ST_VARBINARY || from->k == ST_IMAGE || from->k == ST_ROWVERSION,
         to_bin = to->k == ST_BINARY || to->k == ST_VARBINARY || to->k == ST_IMAGE;
    if (from_bin && sim_type_is_string(to) && (style == 1 || style == 2)) {
        size_t n = in.u.s.n;
        char *txt = sim_arena_alloc(&a, n * 2 + 3);
        size_t k = 0;
        if (style == 1) { txt[k++] = '0'; txt[k++] = 'x'; }
        for (size_t i = 0; i < n; i++) k += (size_t)snprintf(txt + k, 3, "%02X", (unsigned char)in.u.s.p[i]);
        in.k = V_STR;
        in.u.s.p = txt;
        in.u.s.n = k;
        from = &(sim_type){ST_VARCHAR, -1, 0, 0};
    } else if (sim_type_is_string(from) && to_bin && (style == 1 || style == 2)) {
        const char *p = in.u.s.p;
        size_t n = in.u.s.n;
        if (style == 1) {
            if (n < 2 || p[0] != '0' || (p[1] != 'x' && p[1] != 'X')) {
                fail(cx, 8114, "Error converting data type varchar to %s.", to->k == ST_BINARY ? "binary" : "varbinary");
                goto done;
            }
            p += 2;
            n -= 2;
        }
        if (n % 2) { fail(cx, 8114, "Error converting data type varchar to varbinary."); goto done; }
        char *b = sim_arena_alloc(&a, n / 2 + 1);
        for (size_t i = 0; i < n; i += 2) {
            int hi = hexdig((unsigned char)p[i]), lo = hexdig((unsigned char)p[i + 1]);
            if (hi < 0 || lo < 0) { fail(cx, 8114, "Error converting data type varchar to varbinary."); goto done; }
            b[i / 2] = (char)(hi << 4 | lo);
        }
        in.k = V_BIN;
        in.u.s.p = b;
        in.u.s.n = n / 2;
    } else if (sim_type_is_string(to) && (style == 23 || (style == 0 && in.k == V_DATE)) &&
               (in.k == V_DT || in.k == V_DTO || in.k == V_DATE)) {
        /* style 23 (and a date's default): yyyy-mm-dd of the value's own date */
        int y, m, d;
        civil(fdiv(wall(&in), TICKS_PER_DAY), &y, &m, &d);
        char *txt = sim_arena_alloc(&a, 16);
        if (!txt) { sqlite3_result_error_nomem(cx); goto done; }
        snprintf(txt, 16, "%04d-%02d-%02d", y, m, d);
        in.k = V_STR;
        in.u.s.p = txt;
        in.u.s.n = strlen(txt);
    } else if (sim_type_is_string(to) && style == 0 &&
               (in.k == V_TIME || ((in.k == V_DT || in.k == V_DTO) && from->k != ST_DATETIME && from->k != ST_SMALLDATETIME))) {
        /* time, datetime2 and datetimeoffset print as they are shown (hh:mm:ss[.f...], ISO) */
        mcdc_buf b = MCDC_BUF_INIT(256);
        sim_val_text(&b, from, &in);
        char *txt = sim_arena_strndup(&a, b.ptr ? b.ptr : "", b.len);
        mcdc_buf_dispose(&b);
        if (!txt) { sqlite3_result_error_nomem(cx); goto done; }
        in.k = V_STR;
        in.u.s.p = txt;
        in.u.s.n = strlen(txt);
    } else if (sim_type_is_string(to) && style == 126 &&
               (in.k == V_DT || in.k == V_DTO || in.k == V_DATE)) {
        mcdc_buf b = MCDC_BUF_INIT(256);
        sim_val_text(&b, from, &in);
        char *txt = sim_arena_strndup(&a, b.ptr ? b.ptr : "", b.len);
        mcdc_buf_dispose(&b);
        char *sp = strchr(txt, ' ');
        if (sp && in.k != V_DATE) *sp = 'T';
        in.k = V_STR;
        in.u.s.p = txt;
        in.u.s.n = strlen(txt);
    }
    if ((to->k == ST_CHAR || to->k == ST_VARCHAR || to->k == ST_TEXT) && in.k == V_STR) {
        char *copy = sim_arena_strndup(&a, in.u.s.p, in.u.s.n);
        if (!copy) { sqlite3_result_error_nomem(cx); goto done; }
        in.u.s.n = to_code_page(copy, in.u.s.n);
        in.u.s.p = copy;
        in.big = false;
    }
    if (sim_convert(&a, to, &in, &out, NULL) < 0) { fail_mcdc(cx); goto done; }
    if (to->k == ST_CHAR || to->k == ST_NCHAR) { /* padded to the length */
        if (to->len > 0 && out.u.s.n < (size_t)to->len) {
            char *pad = sim_arena_alloc(&a, (size_t)to->len + 1);
            memcpy(pad, out.u.s.p, out.u.s.n);
            memset(pad + out.u.s.n, ' ', (size_t)to->len - out.u.s.n);
            out.u.s.p = pad;
            out.u.s.n = (size_t)to->len;
        }
    }
    sim_result(cx, to, &out);
done:
    sim_arena_free(&a);
}

static void f_lsn(sqlite3_context *cx, int argc, sqlite3_value **argv, bool inc)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) { sqlite3_result_null(cx); return; }
    mcdc_lsn l, r;
    int n = sqlite3_value_bytes(argv[0]);
    const unsigned char *p = sqlite3_value_blob(argv[0]);
    memset(l.b, 0, 10);
    if (p && n > 0) memcpy(l.b + (n < 10 ? 10 - n : 0), p, n < 10 ? (size_t)n : 10);
    if ((inc ? mcdc_lsn_increment(&r, &l) : mcdc_lsn_decrement(&r, &l)) < 0) {
        fail(cx, 313, "An insufficient number of arguments were supplied for the procedure or function %s.",
             inc ? "sys.fn_cdc_increment_lsn" : "sys.fn_cdc_decrement_lsn");
        return;
    }
    sqlite3_result_blob(cx, r.b, 10, SQLITE_TRANSIENT);
}
static void f_lsn_inc(sqlite3_context *cx, int argc, sqlite3_value **argv) { f_lsn(cx, argc, argv, true); }
static void f_lsn_dec(sqlite3_context *cx, int argc, sqlite3_value **argv) { f_lsn(cx, argc, argv, false); }

/* Date parts: the unit in ticks for the fixed ones. */
typedef enum { DP_YEAR, DP_QUARTER, DP_MONTH, DP_DAYOFYEAR, DP_DAY, DP_WEEK, DP_WEEKDAY, DP_HOUR, DP_MINUTE,
               DP_SECOND, DP_MS, DP_MCS, DP_NS, DP_TZOFFSET, DP_BAD } dpart;

static dpart part_of(const char *p)
{
    static const struct { const char *n; dpart d; } t[] = {
        {"year", DP_YEAR}, {"yy", DP_YEAR}, {"yyyy", DP_YEAR}, {"quarter", DP_QUARTER}, {"qq", DP_QUARTER},
        {"q", DP_QUARTER}, {"month", DP_MONTH}, {"mm", DP_MONTH}, {"m", DP_MONTH}, {"dayofyear", DP_DAYOFYEAR},
        {"dy", DP_DAYOFYEAR}, {"y", DP_DAYOFYEAR}, {"day", DP_DAY}, {"dd", DP_DAY}, {"d", DP_DAY},
        {"week", DP_WEEK}, {"wk", DP_WEEK}, {"ww", DP_WEEK}, {"weekday", DP_WEEKDAY}, {"dw", DP_WEEKDAY},
        {"hour", DP_HOUR}, {"hh", DP_HOUR}, {"minute", DP_MINUTE}, {"mi", DP_MINUTE}, {"n", DP_MINUTE},
        {"second", DP_SECOND}, {"ss", DP_SECOND}, {"s", DP_SECOND}, {"millisecond", DP_MS}, {"ms", DP_MS},
        {"microsecond", DP_MCS}, {"mcs", DP_MCS}, {"nanosecond", DP_NS}, {"ns", DP_NS}, {"tzoffset", DP_TZOFFSET},
        {"tz", DP_TZOFFSET}, {NULL, DP_BAD}};
    for (int i = 0; p && t[i].n; i++)
        if (!strcasecmp(p, t[i].n)) return t[i].d;
    return DP_BAD;
}

bool tsql_datepart_known(const char *p) { return part_of(p) != DP_BAD; }

static int64_t fdiv(int64_t a, int64_t b) { int64_t q = a / b; return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q; }

static void civil(int64_t days, int *y, int *m, int *d)
{
    days += 719468;
    int64_t era = fdiv(days, 146097);
    int64_t doe = days - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yy + (*m <= 2));
}

static int64_t days_of(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = fdiv(y, 400);
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Wall-clock ticks of a temporal value (date: midnight; dto: local time). */
static int64_t wall(const sim_val *v)
{
    if (v->k == V_DATE) return v->u.i * TICKS_PER_DAY;
    if (v->k == V_DTO) return v->u.i + (int64_t)v->off * 60 * TICKS_PER_SEC;
    return v->u.i;
}

static void f_dateadd(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const sim_type *t = type_arg(cx, argv, 3);
    dpart dp = part_of((const char *)sqlite3_value_text(argv[0]));
    if (!t) { sqlite3_result_error(cx, "bad type", -1); return; }
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL || sqlite3_value_type(argv[2]) == SQLITE_NULL) { sqlite3_result_null(cx); return; }
    int64_t n = sqlite3_value_int64(argv[1]);
    sim_arena a = {0};
    sim_val v;
    if (sim_read_value(argv[2], t, &a, &v) < 0) { fail_mcdc(cx); goto done; }
    int64_t w = wall(&v), unit = 0;
    switch (dp) {
    case DP_YEAR: case DP_QUARTER: case DP_MONTH: {
        int64_t days = fdiv(w, TICKS_PER_DAY), rest = w - days * TICKS_PER_DAY;
        int y, m, d;
        civil(days, &y, &m, &d);
        int64_t months = (int64_t)y * 12 + (m - 1) + n * (dp == DP_YEAR ? 12 : dp == DP_QUARTER ? 3 : 1);
        y = (int)fdiv(months, 12);
        m = (int)(months - (int64_t)y * 12) + 1;
        static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
        int md = mdays[m - 1] + (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
        if (d > md) d = md;
        w = days_of(y, m, d) * TICKS_PER_DAY + rest;
        break;
    }
    case DP_DAYOFYEAR: case DP_DAY: case DP_WEEKDAY: unit = TICKS_PER_DAY; break;
    case DP_WEEK: unit = 7 * TICKS_PER_DAY; break;
    case DP_HOUR: unit = 3600 * TICKS_PER_SEC; break;
    case DP_MINUTE: unit = 60 * TICKS_PER_SEC; break;
    case DP_SECOND: unit = TICKS_PER_SEC; break;
    case DP_MS: unit = 10000; break;
    case DP_MCS: unit = 10; break;
    case DP_NS: unit = 1; n /= 100; break;
    default: fail(cx, 9810, "The datepart %s is not supported by date function dateadd for data type %s.",
                  (const char *)sqlite3_value_text(argv[0]), "this type"); goto done;
    }
    if (unit) w += n * unit;
    if (v.k == V_DATE) v.u.i = fdiv(w, TICKS_PER_DAY);
    else if (v.k == V_DTO) v.u.i = w - (int64_t)v.off * 60 * TICKS_PER_SEC;
    else if (v.k == V_TIME) v.u.i = ((w % TICKS_PER_DAY) + TICKS_PER_DAY) % TICKS_PER_DAY;
    else v.u.i = t->k == ST_DATETIME ? sim_round_datetime(w) : w;
    sim_result(cx, t, &v);
done:
    sim_arena_free(&a);
}

static void datediff(sqlite3_context *cx, sqlite3_value **argv, bool big)
{
    const sim_type *ta = type_arg(cx, argv, 3), *tb = type_arg(cx, argv, 4);
    dpart dp = part_of((const char *)sqlite3_value_text(argv[0]));
    if (!ta || !tb) { sqlite3_result_error(cx, "bad type", -1); return; }
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL || sqlite3_value_type(argv[2]) == SQLITE_NULL) { sqlite3_result_null(cx); return; }
    sim_arena a = {0};
    sim_val x, y;
    if (sim_read_value(argv[1], ta, &a, &x) < 0 || sim_read_value(argv[2], tb, &a, &y) < 0) { fail_mcdc(cx); goto done; }
    /* boundaries crossed, as SQL Server counts them (datetimeoffset: in UTC) */
    int64_t wx = x.k == V_DTO ? x.u.i : wall(&x), wy = y.k == V_DTO ? y.u.i : wall(&y), r;
    int y1, m1, d1, y2, m2, d2;
    civil(fdiv(wx, TICKS_PER_DAY), &y1, &m1, &d1);
    civil(fdiv(wy, TICKS_PER_DAY), &y2, &m2, &d2);
    switch (dp) {
    case DP_YEAR: r = y2 - y1; break;
    case DP_QUARTER: r = (int64_t)y2 * 4 + (m2 - 1) / 3 - ((int64_t)y1 * 4 + (m1 - 1) / 3); break;
    case DP_MONTH: r = (int64_t)y2 * 12 + m2 - ((int64_t)y1 * 12 + m1); break;
    case DP_DAYOFYEAR: case DP_DAY: case DP_WEEKDAY: r = fdiv(wy, TICKS_PER_DAY) - fdiv(wx, TICKS_PER_DAY); break;
    case DP_WEEK: r = fdiv(fdiv(wy, TICKS_PER_DAY) + 4, 7) - fdiv(fdiv(wx, TICKS_PER_DAY) + 4, 7); break;
    case DP_HOUR: r = fdiv(wy, 3600 * TICKS_PER_SEC) - fdiv(wx, 3600 * TICKS_PER_SEC); break;
    case DP_MINUTE: r = fdiv(wy, 60 * TICKS_PER_SEC) - fdiv(wx, 60 * TICKS_PER_SEC); break;
    case DP_SECOND: r = fdiv(wy, TICKS_PER_SEC) - fdiv(wx, TICKS_PER_SEC); break;
    case DP_MS: r = fdiv(wy, 10000) - fdiv(wx, 10000); break;
    case DP_MCS: r = fdiv(wy, 10) - fdiv(wx, 10); break;
    case DP_NS: r = (wy - wx) * 100; break;
    default: fail(cx, 9810, "The datepart %s is not supported by date function datediff.", (const char *)sqlite3_value_text(argv[0])); goto done;
    }
    if (!big && (r < INT32_MIN || r > INT32_MAX)) {
        fail(cx, 535, "The datediff function resulted in an overflow. The number of dateparts separating two date/time "
                      "instances is too large. Try to use datediff with a less precise datepart.");
        goto done;
    }
    sqlite3_result_int64(cx, r);
done:
    sim_arena_free(&a);
}

static void f_datediff(sqlite3_context *cx, int argc, sqlite3_value **argv) { (void)argc; datediff(cx, argv, false); }
static void f_datediff_big(sqlite3_context *cx, int argc, sqlite3_value **argv) { (void)argc; datediff(cx, argv, true); }

static void f_datepart(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const sim_type *t = type_arg(cx, argv, 2);
    dpart dp = part_of((const char *)sqlite3_value_text(argv[0]));
    if (!t) { sqlite3_result_error(cx, "bad type", -1); return; }
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL) { sqlite3_result_null(cx); return; }
    sim_arena a = {0};
    sim_val v;
    if (sim_read_value(argv[1], t, &a, &v) < 0) { fail_mcdc(cx); goto done; }
    int64_t w = wall(&v), day = fdiv(w, TICKS_PER_DAY), tod = w - day * TICKS_PER_DAY, r;
    int y, m, d;
    civil(day, &y, &m, &d);
    switch (dp) {
    case DP_YEAR: r = y; break;
    case DP_QUARTER: r = (m - 1) / 3 + 1; break;
    case DP_MONTH: r = m; break;
    case DP_DAYOFYEAR: r = day - days_of(y, 1, 1) + 1; break;
    case DP_DAY: r = d; break;
    case DP_WEEKDAY: r = ((day + 4) % 7 + 7) % 7 + 1; break;
    case DP_HOUR: r = tod / (3600 * TICKS_PER_SEC); break;
    case DP_MINUTE: r = tod / (60 * TICKS_PER_SEC) % 60; break;
    case DP_SECOND: r = tod / TICKS_PER_SEC % 60; break;
    case DP_MS: r = tod / 10000 % 1000; break;
    case DP_MCS: r = tod / 10 % 1000000; break;
    case DP_NS: r = tod % TICKS_PER_SEC * 100; break;
    case DP_TZOFFSET:
        if (t->k != ST_DATETIMEOFFSET && !sim_type_is_string(t)) { r = 0; break; }
        r = v.k == V_DTO ? v.off : 0;
        break;
    default: fail(cx, 155, "'%s' is not a recognized datepart option.", (const char *)sqlite3_value_text(argv[0])); goto done;
    }
    sqlite3_result_int64(cx, r);
done:
    sim_arena_free(&a);
}

/* The bytes SQL Server stores for a value of byte form @p k ('w' nvarchar: UTF-16LE, 'c'
 * varchar: CP1252, else as they are), in @p a. */
static const uint8_t *stored_bytes(sqlite3_value *v, char k, sim_arena *a, size_t *n)
{
    if (sqlite3_value_type(v) == SQLITE_BLOB || (k != 'w' && k != 'c')) {
        *n = (size_t)sqlite3_value_bytes(v);
        const uint8_t *p = sqlite3_value_type(v) == SQLITE_BLOB ? sqlite3_value_blob(v) : sqlite3_value_text(v);
        return p ? p : (const uint8_t *)"";
    }
    const char *t = (const char *)sqlite3_value_text(v);
    size_t tn = (size_t)sqlite3_value_bytes(v);
    uint8_t *out = sim_arena_alloc(a, tn * 2 + 1);
    if (!t || !out) return NULL;
    *n = k == 'w' ? mcdc_text_utf16le(out, t, tn) : mcdc_text_cp1252(out, t, tn);
    return out;
}

static void f_hashbytes(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    const char *alg = (const char *)sqlite3_value_text(argv[0]);
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL || !alg) { sqlite3_result_null(cx); return; }
    sim_arena a = {0};
    size_t n;
    const uint8_t *p = stored_bytes(argv[1], argc > 2 ? *(const char *)sqlite3_value_text(argv[2]) : 'b', &a, &n);
    if (!p) { sim_arena_free(&a); sqlite3_result_error_nomem(cx); return; }
    uint8_t out[64];
    size_t on = 0;
    if (!strcasecmp(alg, "MD5")) { struct md5_ctx c; md5_init(&c); md5_update(&c, n, p); md5_digest(&c, MD5_DIGEST_SIZE, out); on = MD5_DIGEST_SIZE; }
    else if (!strcasecmp(alg, "SHA1")) { struct sha1_ctx c; sha1_init(&c); sha1_update(&c, n, p); sha1_digest(&c, SHA1_DIGEST_SIZE, out); on = SHA1_DIGEST_SIZE; }
    else if (!strcasecmp(alg, "SHA2_256")) { struct sha256_ctx c; sha256_init(&c); sha256_update(&c, n, p); sha256_digest(&c, SHA256_DIGEST_SIZE, out); on = SHA256_DIGEST_SIZE; }
    else if (!strcasecmp(alg, "SHA2_512")) { struct sha512_ctx c; sha512_init(&c); sha512_update(&c, n, p); sha512_digest(&c, SHA512_DIGEST_SIZE, out); on = SHA512_DIGEST_SIZE; }
    sim_arena_free(&a);
    if (!on) { sqlite3_result_null(cx); return; } /* SQL Server: NULL for an unknown algorithm */
    sqlite3_result_blob(cx, out, (int)on, SQLITE_TRANSIENT);
}

/* mc_datalength(x, form): the bytes SQL Server stores for a string or binary value. */
static void f_datalength(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) { sqlite3_result_null(cx); return; }
    char k = *(const char *)sqlite3_value_text(argv[1]);
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    size_t n = (size_t)sqlite3_value_bytes(argv[0]);
    if (sqlite3_value_type(argv[0]) == SQLITE_BLOB || !t) k = 'b';
    sqlite3_result_int64(cx, (sqlite3_int64)(k == 'w' ? 2 * mcdc_text_utf16_units(t, n) : k == 'c' ? mcdc_text_cp1252_len(t, n) : n));
}

/* mc_substring(x, start, length, form): SQL Server's SUBSTRING, counting UTF-16 code units
 * of an nvarchar ('w'), characters of a varchar ('c', one CP1252 byte each) or bytes ('b').
 * Positions before 1 shorten the result; a negative length is 537. */
static void f_substring(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL ||
        sqlite3_value_type(argv[2]) == SQLITE_NULL) { sqlite3_result_null(cx); return; }
    int64_t start = sqlite3_value_int64(argv[1]), len = sqlite3_value_int64(argv[2]);
    if (len < 0) { fail(cx, 537, "Invalid length parameter passed to the substring function."); return; }
    int64_t from = start < 1 ? 1 : start, to = start > INT64_MAX - len ? INT64_MAX : start + len; /* [from, to) */
    char k = *(const char *)sqlite3_value_text(argv[3]);
    if (k == 'b' || sqlite3_value_type(argv[0]) == SQLITE_BLOB) {
        const uint8_t *p = sqlite3_value_blob(argv[0]);
        int64_t n = sqlite3_value_bytes(argv[0]);
        int64_t lo = from - 1 < n ? from - 1 : n, hi = to - 1 < n ? to - 1 : n;
        if (hi < lo) hi = lo;
        sqlite3_result_blob(cx, p ? p + lo : (const uint8_t *)"", (int)(hi - lo), SQLITE_TRANSIENT);
        return;
    }
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    size_t n = (size_t)sqlite3_value_bytes(argv[0]), i = 0, b0 = n, b1 = n;
    int64_t pos = 1; /* the position (in code units) of the character at byte i */
    while (i < n) {
        size_t used;
        int32_t cp = mcdc_text_utf8_next(t + i, n - i, &used);
        int w = k == 'w' && cp >= 0x10000 ? 2 : 1;
        if (b0 == n && pos >= from) b0 = i; /* a pair that straddles the start is left out */
        if (pos + w > to) { b1 = i; break; }
        pos += w;
        i += used;
    }
    if (b1 < b0) b1 = b0;
    sqlite3_result_text(cx, t + b0, (int)(b1 - b0), SQLITE_TRANSIENT);
}

static void f_quotename(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    const char *q = argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : "[";
    if (!s || !q) { sqlite3_result_null(cx); return; }
    size_t n = strlen(s);
    if (sim_utf16_len(s, n) > 128) { sqlite3_result_null(cx); return; }
    char open = q[0], close = open == '[' || open == ']' ? ']' : open == '(' || open == ')' ? ')' :
                                 open == '<' || open == '>' ? '>' : open == '{' || open == '}' ? '}' : open;
    if (open == ']') open = '[';
    if (open == ')') open = '(';
    if (open == '>') open = '<';
    if (open == '}') open = '{';
    if (!strchr("[(<{'\"`", open)) { sqlite3_result_null(cx); return; }
    char *out = malloc(n * 2 + 3);
    if (!out) { sqlite3_result_error_nomem(cx); return; }
    size_t k = 0;
    out[k++] = open;
    for (size_t i = 0; i < n; i++) {
        out[k++] = s[i];
        if (s[i] == close) out[k++] = close;
    }
    out[k++] = close;
    sqlite3_result_text(cx, out, (int)k, free);
}

/* The first rowid of sim_ct_<id> whose start_lsn is >= x (inclusive) or > x, or one past the
 * last rowid (x NULL: one past the last); a binary search over rowids, which are in start_lsn
 * order (S1). O(log^2 n) page reads. */
static int ct_first(mcdc_sim_session *s, long long id, const void *x, int xn, bool incl, int64_t *out)
{
    char sql[160];
    sqlite3_stmt *st;
    int slot;
    /* two queries: SQLite answers min(rowid) or max(rowid) from the b-tree's ends, not both at
     * once; all three are kept prepared by the session (they run for every page read) */
    int64_t lo = 0, hi = -1;
    for (int end = 0; end < 2; end++) {
        snprintf(sql, sizeof sql, "SELECT %s(rowid) FROM sim_ct_%lld", end ? "max" : "min", id);
        if (sess_stmt_get(s, sql, &st, &slot) != SQLITE_OK) return SQLITE_ERROR;
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) *(end ? &hi : &lo) = sqlite3_column_int64(st, 0);
        sess_stmt_put(s, st, slot);
    }
    if (hi < lo) lo = 0, hi = -1;
    int64_t found = hi + 1;
    if (!x) {
        *out = found;
        return SQLITE_OK;
    }
    snprintf(sql, sizeof sql, "SELECT rowid, \"__$start_lsn\" FROM sim_ct_%lld WHERE rowid >= ? ORDER BY rowid LIMIT 1", id);
    if (sess_stmt_get(s, sql, &st, &slot) != SQLITE_OK) return SQLITE_ERROR;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, mid);
        if (sqlite3_step(st) != SQLITE_ROW) { hi = mid - 1; continue; }
        int64_t rid = sqlite3_column_int64(st, 0);
        const void *l = sqlite3_column_blob(st, 1);
        int ln = sqlite3_column_bytes(st, 1), n = ln < xn ? ln : xn;
        int cmp = n ? memcmp(l, x, (size_t)n) : 0;
        if (cmp == 0) cmp = (ln > xn) - (ln < xn);
        if (incl ? cmp >= 0 : cmp > 0) {
            found = rid;
            hi = mid - 1;
        } else {
            lo = rid + 1;
        }
    }
    sess_stmt_put(s, st, slot);
    *out = found;
    return SQLITE_OK;
}

/* mc_ct_first(ct_id, lsn, inclusive): ct_first of a value; anything but a binary is NULL. */
static void f_ct_first(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    sqlite3 *db = sqlite3_context_db_handle(cx);
    bool blob = sqlite3_value_type(argv[1]) == SQLITE_BLOB;
    const void *x = blob ? sqlite3_value_blob(argv[1]) : NULL;
    int xn = blob ? sqlite3_value_bytes(argv[1]) : 0;
    int64_t found;
    if (ct_first(sqlite3_user_data(cx), sqlite3_value_int64(argv[0]), x ? x : (blob ? "" : NULL), xn,
                 sqlite3_value_int(argv[2]) != 0, &found))
        { sqlite3_result_error(cx, sqlite3_errmsg(db), -1); return; }
    sqlite3_result_int64(cx, found);
}

/* mc_ct_end(ct_id): the first rowid of sim_ct_<id> past the processed LSN (what the change
 * table shows ends before it), ct_first of sim_state's processed_lsn, exclusive. */
static void f_ct_end(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    sqlite3 *db = sqlite3_context_db_handle(cx);
    mcdc_sim_session *s = sqlite3_user_data(cx);
    sqlite3_stmt *st;
    int slot;
    if (sess_stmt_get(s, "SELECT processed_lsn FROM sim_state WHERE id = 1", &st, &slot) != SQLITE_OK)
        { sqlite3_result_error(cx, sqlite3_errmsg(db), -1); return; }
    int64_t found = INT64_MIN; /* no processed LSN: the change table shows nothing */
    int rc = SQLITE_OK;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_BLOB) {
        const void *x = sqlite3_column_blob(st, 0);
        rc = ct_first(s, sqlite3_value_int64(argv[0]), x ? x : "", sqlite3_column_bytes(st, 0), false, &found);
    }
    sess_stmt_put(s, st, slot);
    if (rc) { sqlite3_result_error(cx, sqlite3_errmsg(db), -1); return; }
    sqlite3_result_int64(cx, found);
}

static void f_div0(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    fail(cx, 8134, "Divide by zero error encountered.");
}

/* mc_cdc_range(from, to, min, max, 'function'): 1, or Msg 313 when [from, to] leaves
 * [min, max] (what cdc.fn_cdc_get_all_changes_<ci> raises). */
static void f_cdc_range(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    for (int i = 0; i < 4; i++)
        if (sqlite3_value_type(argv[i]) != SQLITE_BLOB || sqlite3_value_bytes(argv[i]) != 10) {
            fail(cx, 313, "An insufficient number of arguments were supplied for the procedure or function %s.",
                 (const char *)sqlite3_value_text(argv[4]));
            return;
        }
    const void *lo = sqlite3_value_blob(argv[0]), *hi = sqlite3_value_blob(argv[1]);
    const void *mn = sqlite3_value_blob(argv[2]), *mx = sqlite3_value_blob(argv[3]);
    if (memcmp(lo, mn, 10) < 0 || memcmp(hi, mx, 10) > 0 || memcmp(lo, hi, 10) > 0) {
        fail(cx, 313, "An insufficient number of arguments were supplied for the procedure or function %s.",
             (const char *)sqlite3_value_text(argv[4]));
        return;
    }
    sqlite3_result_int(cx, 1);
}

/* ---- exact decimal arithmetic ------------------------------------------------------------ */

static mcdc_int128 p10(int n)
{
    mcdc_int128 r = 1;
    while (n-- > 0) r *= 10;
    return r;
}

static bool to_scale(mcdc_int128 v, int s, int t, mcdc_int128 *out)
{
    if (t >= s) return !__builtin_mul_overflow(v, p10(t - s), out);
    mcdc_int128 p = p10(s - t), q = v / p, rem = v % p;
    if (rem < 0) rem = -rem;
    if (rem * 2 >= p) q += v < 0 ? -1 : 1;
    *out = q;
    return true;
}

/* A numeric value as (unscaled, scale). */
static bool as_dec(const sim_val *v, mcdc_int128 *u, int *scale)
{
    if (v->k == V_INT) { *u = v->u.i; *scale = 0; return true; }
    if (v->k == V_DEC) { *u = v->u.dec; *scale = v->scale; return true; }
    return false;
}

static void f_arith(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    const char *op = (const char *)sqlite3_value_text(argv[0]);
    const sim_type *ta = type_arg(cx, argv, 2), *tb = type_arg(cx, argv, 4), *tr = type_arg(cx, argv, 5);
    if (!op || !ta || !tb || !tr) { sqlite3_result_error(cx, "bad type", -1); return; }
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL || sqlite3_value_type(argv[3]) == SQLITE_NULL) { sqlite3_result_null(cx); return; }
    sim_arena a = {0};
    sim_val x, y;
    mcdc_int128 ux, uy, r = 0;
    int sx, sy, sr = tr->k == ST_MONEY || tr->k == ST_SMALLMONEY ? 4 : tr->scale;
    if (sim_read_value(argv[1], ta, &a, &x) < 0 || sim_read_value(argv[3], tb, &a, &y) < 0) { fail_mcdc(cx); goto done; }
    if (!as_dec(&x, &ux, &sx) || !as_dec(&y, &uy, &sy)) { sqlite3_result_error(cx, "not a number", -1); goto done; }
    bool ok = true;
    switch (op[0]) {
    case '+': case '-': {
        int s = sx > sy ? sx : sy;
        mcdc_int128 ax, ay;
        ok = to_scale(ux, sx, s, &ax) && to_scale(uy, sy, s, &ay);
        if (ok) ok = op[0] == '+' ? !__builtin_add_overflow(ax, ay, &r) : !__builtin_sub_overflow(ax, ay, &r);
        if (ok) ok = to_scale(r, s, sr, &r);
        break;
    }
    case '*':
        ok = !__builtin_mul_overflow(ux, uy, &r) && to_scale(r, sx + sy, sr, &r);
        break;
    case '/': case '%':
        if (uy == 0) { fail(cx, 8134, "Divide by zero error encountered."); goto done; }
        if (op[0] == '/') {
            /* (ux / 10^sx) / (uy / 10^sy) at scale sr: ux * 10^(sr + sy - sx + 1) / uy, then round */
            int k = sr + sy - sx + 1;
            mcdc_int128 num;
            ok = k >= 0 ? !__builtin_mul_overflow(ux, p10(k), &num) : (num = ux / p10(-k), true);
            if (ok) {
                mcdc_int128 q = num / uy;
                ok = to_scale(q, sr + 1, sr, &r);
            }
        } else {
            int s = sx > sy ? sx : sy;
            mcdc_int128 ax, ay;
            ok = to_scale(ux, sx, s, &ax) && to_scale(uy, sy, s, &ay);
            if (ok) { r = ax % ay; ok = to_scale(r, s, sr, &r); }
        }
        break;
    default:
        sqlite3_result_error(cx, "bad operator", -1);
        goto done;
    }
    int prec = tr->k == ST_MONEY ? 19 : tr->k == ST_SMALLMONEY ? 10 : tr->prec;
    if (ok && (r >= p10(prec) || r <= -p10(prec))) ok = false;
    if (!ok) {
        fail(cx, 8115, "Arithmetic overflow error converting expression to data type numeric.");
        goto done;
    }
    sim_val out = {0};
    out.k = V_DEC;
    out.u.dec = r;
    out.prec = prec;
    out.scale = sr;
    sim_result(cx, tr, &out);
done:
    sim_arena_free(&a);
}

static int coll_mssql(void *u, int na, const void *a, int nb, const void *b)
{
    (void)u;
    return sim_collate(a, (size_t)na, b, (size_t)nb);
}

int tsql_register_functions(mcdc_sim_session *s)
{
    sqlite3 *db = s->sim->db;
    int f = SQLITE_UTF8 | SQLITE_DETERMINISTIC;
    int rc = sqlite3_create_function(db, "mc_cast", 3, f, s, f_cast, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_cast", 4, f, s, f_cast, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_lsn_inc", 1, f, s, f_lsn_inc, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_lsn_dec", 1, f, s, f_lsn_dec, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_dateadd", 4, f, s, f_dateadd, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_datediff", 5, f, s, f_datediff, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_datepart", 3, f, s, f_datepart, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_hashbytes", 2, f, s, f_hashbytes, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_hashbytes", 3, f, s, f_hashbytes, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_datalength", 2, f, s, f_datalength, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_substring", 4, f, s, f_substring, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_datediff_big", 5, f, s, f_datediff_big, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_quotename", 1, f, s, f_quotename, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_quotename", 2, f, s, f_quotename, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_arith", 6, f, s, f_arith, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_cdc_range", 5, f, s, f_cdc_range, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_ct_first", 3, f, s, f_ct_first, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_ct_end", 1, f, s, f_ct_end, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "mc_div0", 0, SQLITE_UTF8, s, f_div0, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_collation(db, "mssql", SQLITE_UTF8, NULL, coll_mssql);
    return rc == SQLITE_OK ? tsql_register_sum(s) : sim__sqlite_error(s->sim, rc, "registering functions");
}
