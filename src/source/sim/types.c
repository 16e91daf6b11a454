/*
 * source/sim/types.c: SQL Server's column types and values in the simulator: parsing type
 * names, conversion with SQL Server's rules and messages, storage in SQLite, comparison under
 * the default case-insensitive collation, order-preserving key encoding, and the value model.
 *
 * Guarantees: exact types stay exact (decimals and money are 128-bit scaled integers, never
 * binary floating point); rounding follows SQL Server (decimal half away from zero, datetime to
 * 1/300 s, datetime2(n)/time(n)/datetimeoffset(n) to n digits, smalldatetime to the minute);
 * a value a column cannot hold is refused with SQL Server's message, never clipped.
 * Storage (sqlite): integers and bit INTEGER; decimal(p<=18), money, smallmoney INTEGER
 * scaled by 10^scale; wider decimals TEXT; real/float REAL; date and time types TEXT as SQL
 * Server prints them; strings, uniqueidentifier, xml TEXT (UTF-8); binary BLOB.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcdc/key_order.h"
#include "mcdc/time.h"
#include "source/sim/sim_int.h"

/* ---- arena ----------------------------------------------------------------------------- */

struct sim_arena_block {
    sim_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *sim_arena_alloc(sim_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        sim_arena_block *b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = a->head->data + a->head->used;
    a->head->used += n;
    memset(p, 0, n);
    return p;
}

char *sim_arena_strndup(sim_arena *a, const char *s, size_t n)
{
    char *p = sim_arena_alloc(a, n + 1);
    if (p) {
        if (n)
            memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

void sim_arena_reset(sim_arena *a)
{
    while (a->head && a->head->next) {
        sim_arena_block *n = a->head->next;
        free(a->head);
        a->head = n;
    }
    if (a->head) a->head->used = 0;
}

void sim_arena_free(sim_arena *a)
{
    while (a->head) {
        sim_arena_block *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

/* ---- type names ------------------------------------------------------------------------ */

static const struct {
    const char *name;
    sim_tkind   k;
} type_names[] = {
    {"bit", ST_BIT}, {"tinyint", ST_TINYINT}, {"smallint", ST_SMALLINT}, {"int", ST_INT},
    {"integer", ST_INT}, {"bigint", ST_BIGINT}, {"decimal", ST_DECIMAL}, {"dec", ST_DECIMAL},
    {"numeric", ST_NUMERIC}, {"money", ST_MONEY}, {"smallmoney", ST_SMALLMONEY}, {"real", ST_REAL},
    {"float", ST_FLOAT}, {"date", ST_DATE}, {"time", ST_TIME}, {"datetime", ST_DATETIME},
    {"datetime2", ST_DATETIME2}, {"smalldatetime", ST_SMALLDATETIME},
    {"datetimeoffset", ST_DATETIMEOFFSET}, {"char", ST_CHAR}, {"varchar", ST_VARCHAR},
    {"nchar", ST_NCHAR}, {"nvarchar", ST_NVARCHAR}, {"text", ST_TEXT}, {"ntext", ST_NTEXT},
    {"binary", ST_BINARY}, {"varbinary", ST_VARBINARY}, {"uniqueidentifier", ST_UNIQUEIDENTIFIER},
    {"xml", ST_XML}, {"image", ST_IMAGE}, {"rowversion", ST_ROWVERSION}, {"timestamp", ST_ROWVERSION},
};

static const char *kind_name(sim_tkind k)
{
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (type_names[i].k == k && strcmp(type_names[i].name, "integer") && strcmp(type_names[i].name, "dec") &&
            strcmp(type_names[i].name, "rowversion")) /* SQL Server names it timestamp (sys.types) */
            return type_names[i].name;
    return "?";
}

int sim_type_parse(sim_type *out, const char *text, size_t len)
{
    char buf[96];
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < sizeof buf; i++)
        if (!isspace((unsigned char)text[i]))
            buf[n++] = (char)tolower((unsigned char)text[i]);
    buf[n] = '\0';
    if (len >= sizeof buf)
        return mcdc_error_set(MCDC_EINVAL, "type '%.40s...' is too long", text);
    char *paren = strchr(buf, '(');
    size_t nlen = paren ? (size_t)(paren - buf) : n;
    if (nlen > 2 && buf[0] == '[' && buf[nlen - 1] == ']') { /* [int] */
        memmove(buf, buf + 1, n);
        nlen -= 2;
        n--;
        buf[nlen] = paren ? '(' : '\0';
        if (paren)
            memmove(buf + nlen, buf + nlen + 1, n - nlen);
        paren = paren ? buf + nlen : NULL;
    }
    memset(out, 0, sizeof *out);
    bool found = false;
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (strlen(type_names[i].name) == nlen && !strncmp(type_names[i].name, buf, nlen)) {
            out->k = type_names[i].k;
            found = true;
        }
    if (!found)
        return mcdc_error_set(MCDC_EINVAL, "unknown type '%.*s'", (int)len, text),
               mcdc_error_hint("types: bit, tinyint, smallint, int, bigint, decimal(p,s), numeric(p,s), money, "
                               "smallmoney, real, float, date, time(n), datetime, datetime2(n), smalldatetime, "
                               "datetimeoffset(n), char/varchar/nchar/nvarchar(n|max), text, ntext, "
                               "binary/varbinary(n|max), image, rowversion (timestamp), uniqueidentifier, xml");
    long a1 = -2, a2 = -2;
    bool is_max = false;
    if (paren) {
        char *p = paren + 1, *end;
        if (!strncmp(p, "max)", 4) && p[4] == '\0') {
            is_max = true;
        } else {
            a1 = strtol(p, &end, 10);
            if (end == p)
                goto bad;
            if (*end == ',') {
                p = end + 1;
                a2 = strtol(p, &end, 10);
                if (end == p)
                    goto bad;
            }
            if (strcmp(end, ")"))
                goto bad;
        }
    }
    switch (out->k) {
    case ST_DECIMAL: case ST_NUMERIC:
        if (is_max) goto bad;
        out->prec = a1 == -2 ? 18 : (int)a1;
        out->scale = a2 == -2 ? 0 : (int)a2;
        if (out->prec < 1 || out->prec > 38)
            return mcdc_error_set(MCDC_EINVAL, "type '%.*s': Column or parameter #1: Specified column precision %d is "
                                  "greater than the maximum precision of 38.", (int)len, text, out->prec);
        if (out->scale < 0 || out->scale > out->prec)
            return mcdc_error_set(MCDC_EINVAL, "type '%.*s': The scale (%d) for column must be within the range 0 to %d.",
                                  (int)len, text, out->scale, out->prec);
        return 0;
    case ST_FLOAT:
        if (is_max || a2 != -2) goto bad;
        if (a1 != -2) {
            if (a1 < 1 || a1 > 53)
                return mcdc_error_set(MCDC_EINVAL, "type '%.*s': float precision must be 1 to 53", (int)len, text);
            if (a1 <= 24)
                out->k = ST_REAL;
        }
        return 0;
    case ST_TIME: case ST_DATETIME2: case ST_DATETIMEOFFSET:
        if (is_max || a2 != -2) goto bad;
        out->scale = a1 == -2 ? 7 : (int)a1;
        if (out->scale < 0 || out->scale > 7)
            return mcdc_error_set(MCDC_EINVAL, "type '%.*s': Specified scale %d is invalid; it must be 0 to 7",
                                  (int)len, text, out->scale);
        return 0;
    case ST_CHAR: case ST_VARCHAR: case ST_BINARY: case ST_VARBINARY: case ST_NCHAR: case ST_NVARCHAR: {
        int lim = out->k == ST_NCHAR || out->k == ST_NVARCHAR ? 4000 : 8000;
        if (a2 != -2) goto bad;
        if (is_max) {
            if (out->k == ST_CHAR || out->k == ST_NCHAR || out->k == ST_BINARY) goto bad;
            out->len = -1;
            return 0;
        }
        out->len = a1 == -2 ? 1 : (int)a1;
        if (out->len < 1 || out->len > lim)
            return mcdc_error_set(MCDC_EINVAL, "type '%.*s': The size (%d) given to the type '%s' exceeds the maximum "
                                  "allowed (%d).", (int)len, text, out->len, kind_name(out->k), lim);
        return 0;
    }
    case ST_ROWVERSION:
        if (paren) goto bad;
        out->len = 8;
        return 0;
    default:
        if (paren) goto bad;
        return 0;
    }
bad:
    return mcdc_error_set(MCDC_EINVAL, "bad type '%.*s'", (int)len, text);
}

void sim_type_format(char *out, size_t cap, const sim_type *t)
{
    const char *n = kind_name(t->k);
    switch (t->k) {
    case ST_DECIMAL: case ST_NUMERIC:
        snprintf(out, cap, "%s(%d,%d)", n, t->prec, t->scale);
        break;
    case ST_TIME: case ST_DATETIME2: case ST_DATETIMEOFFSET:
        snprintf(out, cap, "%s(%d)", n, t->scale);
        break;
    case ST_CHAR: case ST_VARCHAR: case ST_NCHAR: case ST_NVARCHAR: case ST_BINARY: case ST_VARBINARY:
        if (t->len < 0)
            snprintf(out, cap, "%s(max)", n);
        else
            snprintf(out, cap, "%s(%d)", n, t->len);
        break;
    default:
        snprintf(out, cap, "%s", n);
    }
}

bool sim_type_is_string(const sim_type *t)
{
    return t->k == ST_CHAR || t->k == ST_VARCHAR || t->k == ST_NCHAR || t->k == ST_NVARCHAR || t->k == ST_TEXT ||
           t->k == ST_NTEXT || t->k == ST_XML || t->k == ST_UNIQUEIDENTIFIER;
}

bool sim_type_is_numeric(const sim_type *t)
{
    return t->k >= ST_BIT && t->k <= ST_FLOAT;
}

static bool dec_is_int64(const sim_type *t)
{
    return t->k == ST_MONEY || t->k == ST_SMALLMONEY ||
           ((t->k == ST_DECIMAL || t->k == ST_NUMERIC) && t->prec <= 18);
}

static void dec_ps(const sim_type *t, int *p, int *s)
{
    if (t->k == ST_MONEY) { *p = 19; *s = 4; }
    else if (t->k == ST_SMALLMONEY) { *p = 10; *s = 4; }
    else { *p = t->prec; *s = t->scale; }
}

void sim_type_to_column(mcdc_column *col, const sim_type *t)
{
    col->precision = col->scale = 0;
    switch (t->k) {
    case ST_BIT: col->type = MCDC_TYPE_BOOLEAN; break;
    case ST_TINYINT: case ST_SMALLINT: col->type = MCDC_TYPE_SHORT; break;
    case ST_INT: col->type = MCDC_TYPE_INT; break;
    case ST_BIGINT: col->type = MCDC_TYPE_LONG; break;
    case ST_DECIMAL: case ST_NUMERIC: case ST_MONEY: case ST_SMALLMONEY:
        col->type = MCDC_TYPE_DECIMAL;
        dec_ps(t, &col->precision, &col->scale);
        break;
    case ST_REAL: col->type = MCDC_TYPE_FLOAT; break;
    case ST_FLOAT: col->type = MCDC_TYPE_DOUBLE; break;
    case ST_DATE: col->type = MCDC_TYPE_DATE; break;
    case ST_DATETIME: case ST_DATETIME2: case ST_SMALLDATETIME: col->type = MCDC_TYPE_TIMESTAMP_NTZ; break;
    case ST_DATETIMEOFFSET: col->type = MCDC_TYPE_TIMESTAMP; break;
    case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: case ST_ROWVERSION: col->type = MCDC_TYPE_BINARY; break;
    default: col->type = MCDC_TYPE_STRING; break;
    }
}

/* ---- text and Unicode ------------------------------------------------------------------ */

/* Decode one UTF-8 code point; returns its length, 0 when invalid. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    if (n == 0) return 0;
    unsigned char c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    size_t len;
    uint32_t v;
    if ((c & 0xE0) == 0xC0) { len = 2; v = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; v = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; v = c & 0x07; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

long sim_utf16_len(const char *s, size_t n)
{
    long units = 0;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_next((const unsigned char *)s + i, n - i, &cp);
        if (!k) return -1;
        units += cp >= 0x10000 ? 2 : 1;
        i += k;
    }
    return units;
}

/* Simple upper-case folding for the default case-insensitive collation: ASCII, Latin-1,
 * Latin Extended-A, Greek and Cyrillic letters. Accents stay significant (_AS). */
static uint32_t fold(uint32_t c)
{
    if (c >= 'a' && c <= 'z') return c - 32;
    if (c < 0x80) return c;
    if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
    if (c == 0xFF) return 0x178;
    if (c >= 0x100 && c <= 0x137) return c & ~1u;
    if (c >= 0x139 && c <= 0x148) return (c & 1) ? c : c - 1;
    if (c >= 0x14A && c <= 0x177) return c & ~1u;
    if (c >= 0x179 && c <= 0x17E) return (c & 1) ? c : c - 1;
    if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
    if (c == 0x3C2) return 0x3A3;
    if (c >= 0x430 && c <= 0x44F) return c - 32;
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    return c;
}

static size_t trim_spaces(const char *s, size_t n)
{
    while (n > 0 && s[n - 1] == ' ')
        n--;
    return n;
}

static int collate_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    na = trim_spaces(a, na);
    nb = trim_spaces(b, nb);
    size_t i = 0, j = 0;
    while (i < na && j < nb) {
        uint32_t ca, cb;
        size_t ka = utf8_next((const unsigned char *)a + i, na - i, &ca);
        size_t kb = utf8_next((const unsigned char *)b + j, nb - j, &cb);
        if (!ka) { ca = (unsigned char)a[i]; ka = 1; }
        if (!kb) { cb = (unsigned char)b[j]; kb = 1; }
        ca = fold(ca);
        cb = fold(cb);
        if (ca != cb)
            return ca < cb ? -1 : 1;
        i += ka;
        j += kb;
    }
    return (i < na) - (j < nb);
}

int sim_collate(const char *a, size_t na, const char *b, size_t nb)
{
    return collate_cmp(a, na, b, nb);
}

/* ---- dates and times ------------------------------------------------------------------- */

/* '0'..'9', what isdigit() is in every locale, without its table lookup (this runs for every
 * character of every stored date and time read) */
static inline bool is_digit(int c)
{
    return (unsigned)(c - '0') <= 9u;
}

static bool rd(const char **p, const char *end, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (*p + i >= end || !is_digit((*p)[i]))
            return false;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return true;
}

static bool valid_ymd(int y, int m, int d)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1)
        return false;
    int lim = dm[m - 1] + (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0));
    return d <= lim;
}

/* Parse HH:MM[:SS[.f{1,7}]] at *p; ticks since midnight. */
static bool parse_hms(const char **pp, const char *end, int64_t *ticks, int *n_frac)
{
    const char *p = *pp;
    int h, mi, se = 0;
    int64_t frac = 0;
    int nf = 0;
    if (!rd(&p, end, 2, &h) || p >= end || *p++ != ':' || !rd(&p, end, 2, &mi))
        return false;
    if (p < end && *p == ':') {
        p++;
        if (!rd(&p, end, 2, &se))
            return false;
        if (p < end && *p == '.') {
            p++;
            while (p < end && is_digit(*p)) {
                if (nf < 7) {
                    frac = frac * 10 + (*p - '0');
                    nf++;
                } else if (nf == 7) {
                    /* digits past 100 ns: round at the 8th */
                    if (*p >= '5') frac++;
                    nf = 8;
                }
                p++;
            }
            if (nf == 0)
                return false;
        }
    }
    if (h > 23 || mi > 59 || se > 59)
        return false;
    for (int k = nf > 7 ? 7 : nf; k < 7; k++)
        frac *= 10;
    *ticks = ((int64_t)h * 3600 + mi * 60 + se) * TICKS_PER_SEC + frac;
    *n_frac = nf > 7 ? 7 : nf;
    *pp = p;
    return true;
}

/* Two digits at s as a number, or -1. */
static inline int dd(const char *s)
{
    return is_digit(s[0]) && is_digit(s[1]) ? (s[0] - '0') * 10 + (s[1] - '0') : -1;
}

/* 'YYYY-MM-DD HH:MM:SS[.f{1,7}]' exactly, the form the simulator stores every date and time
 * in: parsed at fixed places (read for every stored value). @return false for anything else,
 * which the general parser below reads (and refuses) as before. */
static bool parse_stored_dt(const char *s, size_t n, int64_t *ticks, int *n_frac)
{
    if (n != 19 && (n < 21 || n > 27)) return false;
    int y1 = dd(s), y2 = dd(s + 2), m = dd(s + 5), d = dd(s + 8), h = dd(s + 11), mi = dd(s + 14), se = dd(s + 17);
    if (y1 < 0 || y2 < 0 || m < 0 || d < 0 || h < 0 || mi < 0 || se < 0 || s[4] != '-' || s[7] != '-' ||
        (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' || (n > 19 && s[19] != '.'))
        return false;
    int y = y1 * 100 + y2, nf = n > 19 ? (int)n - 20 : 0;
    if (!valid_ymd(y, m, d) || h > 23 || mi > 59 || se > 59) return false;
    int64_t frac = 0;
    for (int i = 0; i < nf; i++) {
        if (!is_digit(s[20 + i])) return false;
        frac = frac * 10 + (s[20 + i] - '0');
    }
    for (int k = nf; k < 7; k++) frac *= 10;
    *ticks = mcdc_days_from_civil(y, (unsigned)m, (unsigned)d) * TICKS_PER_DAY +
             ((int64_t)h * 3600 + mi * 60 + se) * TICKS_PER_SEC + frac;
    *n_frac = nf;
    return true;
}

int sim_parse_dt(const char *s, size_t n, int64_t *ticks, bool *has_off, int *off_min, int *n_frac)
{
    *has_off = false;
    *off_min = 0;
    if (parse_stored_dt(s, n, ticks, n_frac)) return 0;
    const char *p = s, *end = s + n;
    int y, m, d;
    while (p < end && *p == ' ') p++;
    while (end > p && end[-1] == ' ') end--;
    *has_off = false;
    *off_min = 0;
    *n_frac = 0;
    if (!rd(&p, end, 4, &y) || p >= end)
        return -1;
    if (is_digit(*p)) { /* 'YYYYMMDD', the form every DATEFORMAT reads alike */
        if (!rd(&p, end, 2, &m) || !rd(&p, end, 2, &d) || (p < end && is_digit(*p)) || !valid_ymd(y, m, d))
            return -1;
    } else if (*p++ != '-' || !rd(&p, end, 2, &m) || p >= end || *p++ != '-' || !rd(&p, end, 2, &d) ||
               !valid_ymd(y, m, d)) {
        return -1;
    }
    int64_t t = 0;
    if (p < end && (*p == ' ' || *p == 'T') && p + 1 < end && is_digit(p[1])) {
        p++;
        if (!parse_hms(&p, end, &t, n_frac))
            return -1;
    }
    while (p < end && *p == ' ') p++;
    if (p < end) {
        if (*p == 'Z' && p + 1 == end) {
            *has_off = true;
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1, oh, om;
            if (!rd(&p, end, 2, &oh) || p >= end || *p++ != ':' || !rd(&p, end, 2, &om) || oh > 14 || om > 59 ||
                oh * 60 + om > 14 * 60)
                return -1;
            *has_off = true;
            *off_min = sign * (oh * 60 + om);
        }
        if (p != end)
            return -1;
    }
    *ticks = mcdc_days_from_civil(y, (unsigned)m, (unsigned)d) * TICKS_PER_DAY + t;
    return 0;
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

void sim_format_datetime(char *out, size_t cap, int64_t ticks)
{
    /* datetime shows milliseconds rounded from its 1/300 s ticks: .000, .003, .007 */
    int64_t days = floordiv(ticks, TICKS_PER_DAY), rem = ticks - days * TICKS_PER_DAY;
    int64_t t300 = (rem * 3 + 50000) / 100000;
    int64_t ms = (t300 * 10 + 1) / 3;
    sim_format_dt(out, cap, days * TICKS_PER_DAY + ms * 10000, 3);
}

static char *put_digits(char *p, int64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + n;
}

void sim_format_dt(char *out, size_t cap, int64_t ticks, int digits)
{
    char buf[40], *p = buf;
    int64_t days = floordiv(ticks, TICKS_PER_DAY), rem = ticks - days * TICKS_PER_DAY;
    int64_t y;
    unsigned m, d;
    mcdc_civil_from_days(days, &y, &m, &d);
    int64_t secs = rem / TICKS_PER_SEC, frac = rem % TICKS_PER_SEC;
    p = put_digits(p, y, 4);
    *p++ = '-';
    p = put_digits(p, m, 2);
    *p++ = '-';
    p = put_digits(p, d, 2);
    *p++ = ' ';
    p = put_digits(p, secs / 3600, 2);
    *p++ = ':';
    p = put_digits(p, secs / 60 % 60, 2);
    *p++ = ':';
    p = put_digits(p, secs % 60, 2);
    if (digits > 0) {
        char fr[8];
        put_digits(fr, frac, 7);
        *p++ = '.';
        for (int i = 0; i < digits && i < 7; i++) *p++ = fr[i];
    }
    *p = '\0';
    size_t n = (size_t)(p - buf);
    if (cap == 0) return;
    if (n >= cap) n = cap - 1;
    memcpy(out, buf, n);
    out[n] = '\0';
}

static void format_time(char *out, size_t cap, int64_t ticks, int digits)
{
    char tmp[48];
    sim_format_dt(tmp, sizeof tmp, ticks, digits);
    size_t n = strlen(tmp + 11);
    if (n >= cap) n = cap - 1;
    memcpy(out, tmp + 11, n);
    out[n] = '\0';
}

static void format_date(char *out, size_t cap, int64_t days)
{
    int64_t y;
    unsigned m, d;
    mcdc_civil_from_days(days, &y, &m, &d);
    snprintf(out, cap, "%04lld-%02u-%02u", (long long)y, m, d);
}

static void format_dto(char *out, size_t cap, int64_t utc_ticks, int off, int digits)
{
    char tmp[48];
    sim_format_dt(tmp, sizeof tmp, utc_ticks + (int64_t)off * 60 * TICKS_PER_SEC, digits);
    int a = off < 0 ? -off : off;
    snprintf(out, cap, "%s %c%02d:%02d", tmp, off < 0 ? '-' : '+', a / 60, a % 60);
}

int64_t sim_round_datetime(int64_t ticks)
{
    int64_t days = floordiv(ticks, TICKS_PER_DAY), rem = ticks - days * TICKS_PER_DAY;
    int64_t t300 = (rem * 3 + 50000) / 100000; /* half up to 1/300 s */
    return days * TICKS_PER_DAY + (t300 * 100000 + 1) / 3;
}

static int64_t round_ticks(int64_t ticks, int digits)
{
    int64_t unit = 1;
    for (int i = digits; i < 7; i++) unit *= 10;
    int64_t q = floordiv(ticks + unit / 2, unit);
    return q * unit;
}

/* ---- conversion ------------------------------------------------------------------------ */

static const char *val_type_name(const sim_val *v)
{
    switch (v->k) {
    case V_INT: return v->big ? "bigint" : "int";
    case V_DEC: return "numeric";
    case V_FLT: return "float";
    case V_STR: return v->big ? "nvarchar" : "varchar";
    case V_BIN: return "varbinary";
    case V_DATE: return "date";
    case V_TIME: return "time";
    case V_DT: return "datetime2";
    case V_DTO: return "datetimeoffset";
    default: return "NULL";
    }
}

static int overflow(const sim_type *t, const sim_val *in)
{
    char tn[48];
    sim_type_format(tn, sizeof tn, t);
    if (t->k == ST_DECIMAL || t->k == ST_NUMERIC)
        return mcdc_error_set(MCDC_EINVAL, "Msg 8115: Arithmetic overflow error converting %s to data type numeric.",
                              val_type_name(in));
    return mcdc_error_set(MCDC_EINVAL, "Msg 8115: Arithmetic overflow error converting expression to data type %s.",
                          kind_name(t->k));
}

static int clash(const sim_type *t, const sim_val *in)
{
    char tn[48];
    sim_type_format(tn, sizeof tn, t);
    return mcdc_error_set(MCDC_EINVAL, "Msg 206: Operand type clash: %s is incompatible with %s", val_type_name(in),
                          kind_name(t->k));
}

static mcdc_int128 pow10_128(int n)
{
    mcdc_int128 p = 1;
    while (n-- > 0) p *= 10;
    return p;
}

/* Rescale an unscaled decimal from scale s to scale t, rounding half away from zero. */
static bool rescale(mcdc_int128 v, int s, int t, mcdc_int128 *out)
{
    if (t >= s) {
        mcdc_int128 r;
        if (__builtin_mul_overflow(v, pow10_128(t - s), &r))
            return false;
        *out = r;
        return true;
    }
    mcdc_int128 p = pow10_128(s - t), q = v / p, rem = v % p;
    if (rem < 0) rem = -rem;
    if (rem * 2 >= p)
        q += v < 0 ? -1 : 1;
    *out = q;
    return true;
}

static int digits128(mcdc_int128 v)
{
    unsigned __int128 u = v < 0 ? (unsigned __int128)0 - (unsigned __int128)v : (unsigned __int128)v;
    int n = 0;
    while (u) { n++; u /= 10; }
    return n;
}

/* Parse decimal text with any number of fraction digits (rounded to @p scale). */
static int parse_dec_text(const char *s, size_t n, int scale, mcdc_int128 *out)
{
    size_t i = 0;
    while (i < n && isspace((unsigned char)s[i])) i++;
    while (n > i && isspace((unsigned char)s[n - 1])) n--;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    mcdc_int128 v = 0;
    int nd = 0, frac = 0;
    bool dot = false, any = false, round_up = false, past = false;
    for (; i < n; i++) {
        char c = s[i];
        if (c == '.' && !dot) { dot = true; continue; }
        if (!is_digit(c)) return -1;
        any = true;
        if (dot && frac >= scale) {
            if (!past) round_up = c >= '5';
            past = true;
            continue;
        }
        if (nd > 38) return -2;
        v = v * 10 + (c - '0');
        if (v) nd++;
        if (dot) frac++;
    }
    if (!any) return -1;
    for (; frac < scale; frac++) v *= 10;
    if (round_up) v++;
    *out = neg ? -v : v;
    return 0;
}

static int str_to_int(const sim_val *in, int64_t *out)
{
    const char *s = in->u.s.p;
    size_t n = in->u.s.n, i = 0;
    while (i < n && isspace((unsigned char)s[i])) i++;
    while (n > i && isspace((unsigned char)s[n - 1])) n--;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i >= n) return -1;
    int64_t v = 0;
    for (; i < n; i++) {
        if (!is_digit(s[i])) return -1;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v)) return -2;
    }
    *out = neg ? -v : v;
    return 0;
}

static int conv_fail_str(const sim_type *t, const sim_val *in)
{
    char tn[48];
    sim_type_format(tn, sizeof tn, t);
    return mcdc_error_set(MCDC_EINVAL, "Msg 245: Conversion failed when converting the %s value '%.*s' to data type %s.",
                          val_type_name(in), (int)(in->u.s.n > 200 ? 200 : in->u.s.n), in->u.s.p, kind_name(t->k));
}

static int to_int(const sim_type *t, const sim_val *in, sim_val *out)
{
    int64_t v;
    switch (in->k) {
    case V_INT: v = in->u.i; break;
    case V_DEC: {
        mcdc_int128 q = in->u.dec / pow10_128(in->scale);
        if (q > INT64_MAX || q < INT64_MIN) return overflow(t, in);
        v = (int64_t)q;
        break;
    }
    case V_FLT:
        if (!(in->u.d < 9.3e18 && in->u.d > -9.3e18)) return overflow(t, in);
        v = (int64_t)in->u.d;
        break;
    case V_BIN: {
        /* big-endian; past the type's size only the last bytes count, as SQL Server reads them */
        size_t size = t->k == ST_BIGINT ? 8 : t->k == ST_INT ? 4 : t->k == ST_SMALLINT ? 2 : 1;
        size_t n = in->u.s.n, skip = n > size ? n - size : 0;
        uint64_t u = 0;
        for (size_t i = skip; i < n; i++) u = u << 8 | (unsigned char)in->u.s.p[i];
        if (t->k == ST_BIT) { v = u != 0; break; }
        if (t->k == ST_TINYINT) { v = (int64_t)(u & 0xFF); break; }
        if (n - skip == size && size < 8 && (u >> (size * 8 - 1)) & 1) u |= ~(uint64_t)0 << (size * 8); /* sign */
        v = (int64_t)u;
        break;
    }
    case V_STR: {
        int rc = str_to_int(in, &v);
        if (rc == -1 && t->k == ST_BIT) {
            if (in->u.s.n == 4 && !strncasecmp(in->u.s.p, "true", 4)) { v = 1; break; }
            if (in->u.s.n == 5 && !strncasecmp(in->u.s.p, "false", 5)) { v = 0; break; }
        }
        if (rc == -2) return overflow(t, in);
        if (rc < 0) return conv_fail_str(t, in);
        break;
    }
    default:
        return clash(t, in);
    }
    int64_t lo, hi;
    switch (t->k) {
    case ST_BIT: v = v != 0; lo = 0; hi = 1; break;
    case ST_TINYINT: lo = 0; hi = 255; break;
    case ST_SMALLINT: lo = -32768; hi = 32767; break;
    case ST_INT: lo = INT32_MIN; hi = INT32_MAX; break;
    default: lo = INT64_MIN; hi = INT64_MAX; break;
    }
    if (v < lo || v > hi) return overflow(t, in);
    out->k = V_INT;
    out->big = t->k == ST_BIGINT;
    out->u.i = v;
    return 0;
}

static int to_dec(const sim_type *t, const sim_val *in, sim_val *out)
{
    int p, s;
    dec_ps(t, &p, &s);
    mcdc_int128 v;
    switch (in->k) {
    case V_INT:
        if (!rescale(in->u.i, 0, s, &v)) return overflow(t, in);
        break;
    case V_DEC:
        if (!rescale(in->u.dec, in->scale, s, &v)) return overflow(t, in);
        break;
    case V_FLT: {
        char buf[400];
        if (!isfinite(in->u.d) || fabs(in->u.d) >= 1e38) return overflow(t, in);
        snprintf(buf, sizeof buf, "%.*f", s, in->u.d);
        if (parse_dec_text(buf, strlen(buf), s, &v) < 0) return overflow(t, in);
        break;
    }
    case V_STR: {
        int rc = parse_dec_text(in->u.s.p, in->u.s.n, s, &v);
        if (rc == -2) return overflow(t, in);
        if (rc < 0)
            return mcdc_error_set(MCDC_EINVAL, "Msg 8114: Error converting data type %s to numeric.", val_type_name(in));
        break;
    }
    default:
        return clash(t, in);
    }
    if (digits128(v) > p) return overflow(t, in);
    if (t->k == ST_MONEY && (v > INT64_MAX || v < INT64_MIN)) return overflow(t, in);
    if (t->k == ST_SMALLMONEY && (v > INT32_MAX || v < INT32_MIN)) return overflow(t, in);
    out->k = V_DEC;
    out->prec = p;
    out->scale = s;
    out->u.dec = v;
    return 0;
}

static double dec_to_double(mcdc_int128 v, int scale)
{
    char buf[64];
    mcdc_decimal_format(buf, v, scale);
    return strtod(buf, NULL);
}

static int to_float(const sim_type *t, const sim_val *in, sim_val *out)
{
    double d;
    switch (in->k) {
    case V_INT: d = (double)in->u.i; break;
    case V_DEC: d = dec_to_double(in->u.dec, in->scale); break;
    case V_FLT: d = in->u.d; break;
    case V_STR: {
        char buf[128];
        size_t n = in->u.s.n < sizeof buf - 1 ? in->u.s.n : sizeof buf - 1;
        memcpy(buf, in->u.s.p, n);
        buf[n] = '\0';
        char *end;
        d = strtod(buf, &end);
        while (*end == ' ') end++;
        if (end == buf || *end || in->u.s.n >= sizeof buf - 1 || !isfinite(d))
            return mcdc_error_set(MCDC_EINVAL, "Msg 8114: Error converting data type %s to float.", val_type_name(in));
        break;
    }
    default:
        return clash(t, in);
    }
    if (!isfinite(d) || (t->k == ST_REAL && fabs(d) > 3.40282346638528859812e38))
        return overflow(t, in);
    if (t->k == ST_REAL) d = (double)(float)d;
    out->k = V_FLT;
    out->u.d = d;
    return 0;
}

static int dt_fail(const sim_type *t, const sim_val *in)
{
    (void)in;
    if (t->k == ST_DATETIME || t->k == ST_SMALLDATETIME)
        return mcdc_error_set(MCDC_EINVAL, "Msg 241: Conversion failed when converting date and/or time from character string.");
    return mcdc_error_set(MCDC_EINVAL, "Msg 241: Conversion failed when converting date and/or time from character string.");
}

static int to_temporal(const sim_type *t, const sim_val *in, sim_val *out)
{
    int64_t ticks = 0;
    int off = 0;
    bool has_off = false;
    bool time_only = false;
    switch (in->k) {
    case V_STR: {
        int nf;
        if (sim_parse_dt(in->u.s.p, in->u.s.n, &ticks, &has_off, &off, &nf) < 0) {
            /* time(n) takes a bare time of day */
            const char *p = in->u.s.p, *end = p + in->u.s.n;
            while (p < end && *p == ' ') p++;
            while (end > p && end[-1] == ' ') end--;
            if (t->k == ST_TIME && parse_hms(&p, end, &ticks, &nf) && p == end)
                time_only = true;
            else
                return dt_fail(t, in);
        }
        if (has_off)
            ticks -= (int64_t)off * 60 * TICKS_PER_SEC; /* to UTC */
        break;
    }
    case V_DATE: ticks = in->u.i * TICKS_PER_DAY; break;
    case V_DT: ticks = in->u.i; break;
    case V_DTO: ticks = in->u.i; has_off = true; off = in->off; break;
    case V_TIME:
        if (t->k != ST_TIME) return clash(t, in);
        ticks = in->u.i;
        time_only = true;
        break;
    default:
        return clash(t, in);
    }
    /* wall clock of the value (a datetimeoffset converted to a type without a zone keeps its
     * local time, as SQL Server does) */
    int64_t wall = has_off ? ticks + (int64_t)off * 60 * TICKS_PER_SEC : ticks;
    memset(out, 0, sizeof *out);
    switch (t->k) {
    case ST_DATE:
        out->k = V_DATE;
        out->u.i = floordiv(wall, TICKS_PER_DAY);
        return 0;
    case ST_TIME: {
        int64_t tod = time_only ? ticks : wall - floordiv(wall, TICKS_PER_DAY) * TICKS_PER_DAY;
        tod = round_ticks(tod, t->scale) % TICKS_PER_DAY;
        out->k = V_TIME;
        out->u.i = tod;
        return 0;
    }
    case ST_DATETIME: {
        int64_t r = sim_round_datetime(wall);
        if (r < mcdc_days_from_civil(1753, 1, 1) * TICKS_PER_DAY || r >= mcdc_days_from_civil(10000, 1, 1) * TICKS_PER_DAY)
            return mcdc_error_set(MCDC_EINVAL, "Msg 242: The conversion of a %s data type to a datetime data type "
                                  "resulted in an out-of-range value.", val_type_name(in));
        out->k = V_DT;
        out->u.i = r;
        return 0;
    }
    case ST_SMALLDATETIME: {
        int64_t minute = 60 * TICKS_PER_SEC;
        int64_t r = floordiv(wall + minute / 2, minute) * minute;
        if (r < mcdc_days_from_civil(1900, 1, 1) * TICKS_PER_DAY || r > mcdc_days_from_civil(2079, 6, 6) * TICKS_PER_DAY + 1439 * minute)
            return mcdc_error_set(MCDC_EINVAL, "Msg 242: The conversion of a %s data type to a smalldatetime data type "
                                  "resulted in an out-of-range value.", val_type_name(in));
        out->k = V_DT;
        out->u.i = r;
        return 0;
    }
    case ST_DATETIME2: {
        int64_t r = round_ticks(wall, t->scale);
        if (r >= mcdc_days_from_civil(10000, 1, 1) * TICKS_PER_DAY)
            return mcdc_error_set(MCDC_EINVAL, "Msg 242: The conversion of a %s data type to a datetime2 data type "
                                  "resulted in an out-of-range value.", val_type_name(in));
        out->k = V_DT;
        out->u.i = r;
        return 0;
    }
    case ST_DATETIMEOFFSET:
        out->k = V_DTO;
        out->off = (int16_t)(has_off ? off : 0);
        out->u.i = round_ticks(has_off ? ticks : wall, t->scale);
        return 0;
    default:
        return clash(t, in);
    }
}

static int truncated(const sim_type *t, const sim_val *in, const sim_conv_ctx *cx, size_t keep)
{
    (void)t;
    return mcdc_error_set(MCDC_EINVAL, "Msg 2628: String or binary data would be truncated in table '%s.%s', column "
                          "'%s'. Truncated value: '%.*s'.", cx && cx->db ? cx->db : "sim", cx && cx->table ? cx->table : "?",
                          cx && cx->column ? cx->column : "?", (int)keep, in->u.s.p);
}

/* Bytes of the first @p units UTF-16 units (or bytes when !wide) of s. */
static size_t prefix_bytes(const char *s, size_t n, long units, bool wide)
{
    if (!wide)
        return (size_t)units < n ? (size_t)units : n;
    size_t i = 0;
    long u = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = utf8_next((const unsigned char *)s + i, n - i, &cp);
        int w = cp >= 0x10000 ? 2 : 1;
        if (!k || u + w > units) break;
        u += w;
        i += k;
    }
    return i;
}

static int to_guid(const sim_val *in, sim_arena *a, sim_val *out)
{
    const char *s = in->u.s.p;
    size_t n = in->u.s.n;
    while (n && s[n - 1] == ' ') n--;
    while (n && *s == ' ') { s++; n--; }
    if (n == 38 && s[0] == '{' && s[37] == '}') { s++; n = 36; }
    char *g = sim_arena_alloc(a, 37);
    if (!g) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (n != 36) goto bad;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') goto bad;
            g[i] = '-';
        } else {
            if (!isxdigit((unsigned char)s[i])) goto bad;
            g[i] = (char)toupper((unsigned char)s[i]);
        }
    }
    out->k = V_STR;
    out->u.s.p = g;
    out->u.s.n = 36;
    return 0;
bad:
    return mcdc_error_set(MCDC_EINVAL, "Msg 8169: Conversion failed when converting from a character string to uniqueidentifier.");
}

static int num_to_text(sim_arena *a, const sim_val *in, sim_val *out)
{
    char buf[64];
    if (in->k == V_INT) snprintf(buf, sizeof buf, "%lld", (long long)in->u.i);
    else if (in->k == V_DEC) mcdc_decimal_format(buf, in->u.dec, in->scale);
    else snprintf(buf, sizeof buf, "%.17g", in->u.d);
    out->k = V_STR;
    out->u.s.n = strlen(buf);
    out->u.s.p = sim_arena_strndup(a, buf, out->u.s.n);
    return out->u.s.p ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
}

static int to_string(sim_arena *a, const sim_type *t, const sim_val *in, sim_val *out, const sim_conv_ctx *cx)
{
    sim_val tmp;
    if (in->k == V_INT || in->k == V_DEC || in->k == V_FLT) {
        if (t->k == ST_UNIQUEIDENTIFIER) return clash(t, in);
        int rc = num_to_text(a, in, &tmp);
        if (rc < 0) return rc;
        in = &tmp;
    } else if (in->k != V_STR) {
        return clash(t, in);
    }
    if (t->k == ST_UNIQUEIDENTIFIER)
        return to_guid(in, a, out);
    bool wide = t->k == ST_NCHAR || t->k == ST_NVARCHAR || t->k == ST_NTEXT || t->k == ST_XML;
    long units = wide ? sim_utf16_len(in->u.s.p, in->u.s.n) : (long)in->u.s.n;
    if (units < 0 || (!wide && sim_utf16_len(in->u.s.p, in->u.s.n) < 0))
        return mcdc_error_set(MCDC_EINVAL, "column %s: the value is not valid UTF-8", cx && cx->column ? cx->column : "?");
    const char *p = in->u.s.p;
    size_t n = in->u.s.n;
    if (t->len > 0 && units > t->len) {
        /* trailing spaces past the length are dropped silently, as SQL Server does */
        size_t keep = prefix_bytes(p, n, t->len, wide);
        for (size_t i = keep; i < n; i++)
            if (p[i] != ' ')
                return truncated(t, in, cx, keep);
        n = keep;
        units = t->len;
    }
    if ((t->k == ST_CHAR || t->k == ST_NCHAR) && units < t->len) {
        size_t pad = (size_t)(t->len - units);
        char *q = sim_arena_alloc(a, n + pad + 1);
        if (!q) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        memcpy(q, p, n);
        memset(q + n, ' ', pad);
        p = q;
        n += pad;
    }
    out->k = V_STR;
    out->big = wide;
    out->u.s.p = p;
    out->u.s.n = n;
    return 0;
}

static int to_binary(sim_arena *a, const sim_type *t, const sim_val *in, sim_val *out, const sim_conv_ctx *cx)
{
    if (in->k == V_STR)
        return mcdc_error_set(MCDC_EINVAL, "Msg 257: Implicit conversion from data type %s to %s is not allowed. Use the "
                              "CONVERT function to run this query.", val_type_name(in), kind_name(t->k));
    if (in->k != V_BIN) return clash(t, in);
    size_t n = in->u.s.n;
    if (t->len > 0 && n > (size_t)t->len) {
        (void)cx;
        return mcdc_error_set(MCDC_EINVAL, "Msg 2628: String or binary data would be truncated in table '%s.%s', column "
                              "'%s'.", cx && cx->db ? cx->db : "sim", cx && cx->table ? cx->table : "?",
                              cx && cx->column ? cx->column : "?");
    }
    const char *p = in->u.s.p;
    if ((t->k == ST_BINARY || t->k == ST_ROWVERSION) && n < (size_t)t->len) {
        char *q = sim_arena_alloc(a, (size_t)t->len);
        if (!q) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        if (n) memcpy(q, p, n);
        p = q;
        n = (size_t)t->len;
    }
    out->k = V_BIN;
    out->u.s.p = p;
    out->u.s.n = n;
    return 0;
}

int sim_convert(sim_arena *a, const sim_type *t, const sim_val *in, sim_val *out, const sim_conv_ctx *cx)
{
    sim_val r;
    memset(&r, 0, sizeof r);
    int rc;
    if (in->k == V_NULL) {
        *out = r;
        return 0;
    }
    switch (t->k) {
    case ST_BIT: case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT:
        rc = to_int(t, in, &r); break;
    case ST_DECIMAL: case ST_NUMERIC: case ST_MONEY: case ST_SMALLMONEY:
        rc = to_dec(t, in, &r); break;
    case ST_REAL: case ST_FLOAT:
        rc = to_float(t, in, &r); break;
    case ST_DATE: case ST_TIME: case ST_DATETIME: case ST_DATETIME2: case ST_SMALLDATETIME: case ST_DATETIMEOFFSET:
        rc = to_temporal(t, in, &r); break;
    case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: case ST_ROWVERSION:
        rc = to_binary(a, t, in, &r, cx); break;
    default:
        rc = to_string(a, t, in, &r, cx); break;
    }
    if (rc < 0) {
        if (cx && cx->column && !strstr(mcdc_error_last()->message, "column '"))
            mcdc_error_prefix("column %s", cx->column);
        return rc;
    }
    r.lit = false;
    *out = r;
    return 0;
}

/* ---- storage ----------------------------------------------------------------------------- */

static int text_of(const sim_type *t, const sim_val *v, char *buf, size_t cap)
{
    switch (t->k) {
    case ST_DATE: format_date(buf, cap, v->u.i); break;
    case ST_TIME: format_time(buf, cap, v->u.i, t->scale); break;
    case ST_DATETIME: sim_format_datetime(buf, cap, v->u.i); break;
    case ST_SMALLDATETIME: sim_format_dt(buf, cap, v->u.i, 0); break;
    case ST_DATETIME2: sim_format_dt(buf, cap, v->u.i, t->scale); break;
    case ST_DATETIMEOFFSET: format_dto(buf, cap, v->u.i, v->off, t->scale); break;
    case ST_DECIMAL: case ST_NUMERIC: mcdc_decimal_format(buf, v->u.dec, v->scale); break;
    default: return -1;
    }
    return 0;
}

int sim_bind(sqlite3_stmt *st, int idx, const sim_type *t, const sim_val *v)
{
    char buf[64];
    if (v->k == V_NULL)
        return sqlite3_bind_null(st, idx);
    switch (t->k) {
    case ST_BIT: case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT:
        return sqlite3_bind_int64(st, idx, v->u.i);
    case ST_DECIMAL: case ST_NUMERIC: case ST_MONEY: case ST_SMALLMONEY:
        if (dec_is_int64(t))
            return sqlite3_bind_int64(st, idx, (int64_t)v->u.dec);
        text_of(t, v, buf, sizeof buf);
        return sqlite3_bind_text(st, idx, buf, -1, SQLITE_TRANSIENT);
    case ST_REAL: case ST_FLOAT:
        return sqlite3_bind_double(st, idx, v->u.d);
    case ST_DATE: case ST_TIME: case ST_DATETIME: case ST_DATETIME2: case ST_SMALLDATETIME: case ST_DATETIMEOFFSET:
        text_of(t, v, buf, sizeof buf);
        return sqlite3_bind_text(st, idx, buf, -1, SQLITE_TRANSIENT);
    case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: case ST_ROWVERSION:
        return sqlite3_bind_blob(st, idx, v->u.s.n ? v->u.s.p : "", (int)v->u.s.n, SQLITE_STATIC);
    default:
        return sqlite3_bind_text(st, idx, v->u.s.n ? v->u.s.p : "", (int)v->u.s.n, SQLITE_STATIC);
    }
}

void sim_result(sqlite3_context *cx, const sim_type *t, const sim_val *v)
{
    char buf[64];
    if (v->k == V_NULL) {
        sqlite3_result_null(cx);
        return;
    }
    switch (t->k) {
    case ST_BIT: case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT:
        { sqlite3_result_int64(cx, v->u.i); return; }
    case ST_DECIMAL: case ST_NUMERIC: case ST_MONEY: case ST_SMALLMONEY:
        if (dec_is_int64(t))
            { sqlite3_result_int64(cx, (int64_t)v->u.dec); return; }
        text_of(t, v, buf, sizeof buf);
        { sqlite3_result_text(cx, buf, -1, SQLITE_TRANSIENT); return; }
    case ST_REAL: case ST_FLOAT:
        { sqlite3_result_double(cx, v->u.d); return; }
    case ST_DATE: case ST_TIME: case ST_DATETIME: case ST_DATETIME2: case ST_SMALLDATETIME: case ST_DATETIMEOFFSET:
        text_of(t, v, buf, sizeof buf);
        { sqlite3_result_text(cx, buf, -1, SQLITE_TRANSIENT); return; }
    case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: case ST_ROWVERSION:
        { sqlite3_result_blob(cx, v->u.s.n ? v->u.s.p : "", (int)v->u.s.n, SQLITE_TRANSIENT); return; }
    default:
        { sqlite3_result_text(cx, v->u.s.n ? v->u.s.p : "", (int)v->u.s.n, SQLITE_TRANSIENT); return; }
    }
}

/* The bytes of a value read as text, *n their count. A TEXT value's own bytes (a simulator
 * database is UTF-8, SQLite's default, which nothing changes) are read as a blob: sqlite3_value_text would copy a value that points into a page
 * to terminate it, once per value read. Anything else converts through sqlite3_value_text. */
static inline const char *text_bytes(sqlite3_value *sv, int ct, size_t *n)
{
    const char *p = ct == SQLITE_TEXT ? (const char *)sqlite3_value_blob(sv) : (const char *)sqlite3_value_text(sv);
    *n = (size_t)sqlite3_value_bytes(sv);
    return p ? p : "";
}

/* a == NULL: strings and binaries point into SQLite's copy of the value (sim_read_value_ref) */
static inline int read_value(sqlite3_value *sv, const sim_type *t, sim_arena *a, sim_val *out)
{
    memset(out, 0, sizeof *out);
    int ct = sqlite3_value_type(sv);
    if (ct == SQLITE_NULL)
        return 0;
    switch (t->k) {
    case ST_BIT: case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT:
        out->k = V_INT;
        out->big = t->k == ST_BIGINT;
        out->u.i = sqlite3_value_int64(sv);
        return 0;
    case ST_DECIMAL: case ST_NUMERIC: case ST_MONEY: case ST_SMALLMONEY: {
        int p, s;
        dec_ps(t, &p, &s);
        out->k = V_DEC;
        out->prec = p;
        out->scale = s;
        if (ct == SQLITE_INTEGER) {
            out->u.dec = sqlite3_value_int64(sv);
            return 0;
        }
        const char *txt = (const char *)sqlite3_value_text(sv);
        if (!txt || parse_dec_text(txt, strlen(txt), s, &out->u.dec) < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "stored decimal '%s' is malformed", txt ? txt : "");
        return 0;
    }
    case ST_REAL: case ST_FLOAT:
        out->k = V_FLT;
        out->u.d = sqlite3_value_double(sv);
        return 0;
    case ST_DATE: case ST_TIME: case ST_DATETIME: case ST_DATETIME2: case ST_SMALLDATETIME: case ST_DATETIMEOFFSET: {
        size_t n;
        const char *txt = text_bytes(sv, ct, &n), *nul = memchr(txt, 0, n);
        if (nul) n = (size_t)(nul - txt); /* as far as the text goes */
        int64_t ticks;
        bool has_off;
        int off, nf;
        if (t->k == ST_TIME) {
            const char *p = txt, *end = txt + n;
            if (!parse_hms(&p, end, &ticks, &nf) || p != end)
                return mcdc_error_set(MCDC_ECORRUPT, "stored time '%.*s' is malformed", (int)n, txt);
            out->k = V_TIME;
            out->u.i = ticks;
            return 0;
        }
        if (sim_parse_dt(txt, n, &ticks, &has_off, &off, &nf) < 0)
            return mcdc_error_set(MCDC_ECORRUPT, "stored time '%.*s' is malformed", (int)n, txt);
        if (t->k == ST_DATE) {
            out->k = V_DATE;
            out->u.i = floordiv(ticks, TICKS_PER_DAY);
        } else if (t->k == ST_DATETIMEOFFSET) {
            out->k = V_DTO;
            out->off = (int16_t)off;
            out->u.i = ticks - (int64_t)off * 60 * TICKS_PER_SEC;
        } else {
            out->k = V_DT;
            out->u.i = t->k == ST_DATETIME ? sim_round_datetime(ticks) : ticks;
        }
        return 0;
    }
    case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: case ST_ROWVERSION: {
        int n = sqlite3_value_bytes(sv);
        const void *p = sqlite3_value_blob(sv);
        out->k = V_BIN;
        out->u.s.p = !a ? (p ? p : "") : sim_arena_strndup(a, p ? p : "", (size_t)n);
        out->u.s.n = (size_t)n;
        return out->u.s.p ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    default: {
        size_t n;
        const char *p = text_bytes(sv, ct, &n);
        out->k = V_STR;
        out->big = t->k == ST_NCHAR || t->k == ST_NVARCHAR || t->k == ST_NTEXT;
        out->u.s.p = !a ? p : sim_arena_strndup(a, p, n);
        out->u.s.n = n;
        return out->u.s.p ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    }
}

int sim_read_value(sqlite3_value *sv, const sim_type *t, sim_arena *a, sim_val *out)
{
    return read_value(sv, t, a, out);
}

int sim_read_col(sqlite3_stmt *st, int idx, const sim_type *t, sim_arena *a, sim_val *out)
{
    return read_value(sqlite3_column_value(st, idx), t, a, out);
}

int sim_read_value_ref(sqlite3_value *sv, const sim_type *t, sim_val *out)
{
    return read_value(sv, t, NULL, out);
}

/* ---- comparison ---------------------------------------------------------------------------- */

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

int sim_compare(sim_arena *a, const sim_val *x, const sim_val *y, int *out)
{
    (void)a;
    bool xn = x->k == V_INT || x->k == V_DEC || x->k == V_FLT;
    bool yn = y->k == V_INT || y->k == V_DEC || y->k == V_FLT;
    if (xn && yn) {
        if (x->k == V_FLT || y->k == V_FLT) {
            double dx = x->k == V_FLT ? x->u.d : x->k == V_INT ? (double)x->u.i : dec_to_double(x->u.dec, x->scale);
            double dy = y->k == V_FLT ? y->u.d : y->k == V_INT ? (double)y->u.i : dec_to_double(y->u.dec, y->scale);
            *out = (dx > dy) - (dx < dy);
            return 0;
        }
        mcdc_int128 vx = x->k == V_INT ? x->u.i : x->u.dec, vy = y->k == V_INT ? y->u.i : y->u.dec;
        int sx = x->k == V_INT ? 0 : x->scale, sy = y->k == V_INT ? 0 : y->scale;
        int s = sx > sy ? sx : sy;
        if (!rescale(vx, sx, s, &vx) || !rescale(vy, sy, s, &vy)) {
            double dx = dec_to_double(x->k == V_INT ? x->u.i : x->u.dec, sx);
            double dy = dec_to_double(y->k == V_INT ? y->u.i : y->u.dec, sy);
            *out = (dx > dy) - (dx < dy);
            return 0;
        }
        *out = (vx > vy) - (vx < vy);
        return 0;
    }
    if (x->k == V_STR && y->k == V_STR) {
        *out = collate_cmp(x->u.s.p, x->u.s.n, y->u.s.p, y->u.s.n);
        return 0;
    }
    if (x->k == V_BIN && y->k == V_BIN) {
        size_t n = x->u.s.n < y->u.s.n ? x->u.s.n : y->u.s.n;
        int c = n ? memcmp(x->u.s.p, y->u.s.p, n) : 0;
        *out = c ? (c < 0 ? -1 : 1) : cmp_i64((int64_t)x->u.s.n, (int64_t)y->u.s.n);
        return 0;
    }
    if (x->k == V_TIME && y->k == V_TIME) {
        *out = cmp_i64(x->u.i, y->u.i);
        return 0;
    }
    bool xt = x->k == V_DATE || x->k == V_DT || x->k == V_DTO, yt = y->k == V_DATE || y->k == V_DT || y->k == V_DTO;
    if (xt && yt) {
        int64_t tx = x->k == V_DATE ? x->u.i * TICKS_PER_DAY : x->u.i;
        int64_t ty = y->k == V_DATE ? y->u.i * TICKS_PER_DAY : y->u.i;
        *out = cmp_i64(tx, ty);
        return 0;
    }
    return mcdc_error_set(MCDC_EINVAL, "Msg 402: The data types %s and %s are incompatible in the comparison.",
                          val_type_name(x), val_type_name(y));
}

bool sim_same(const sim_val *x, const sim_val *y)
{
    if (x->k != y->k)
        return false;
    switch (x->k) {
    case V_NULL: return true;
    case V_DEC: return x->u.dec == y->u.dec && x->scale == y->scale;
    case V_FLT: return memcmp(&x->u.d, &y->u.d, sizeof(double)) == 0;
    case V_STR: case V_BIN: return x->u.s.n == y->u.s.n && (!x->u.s.n || !memcmp(x->u.s.p, y->u.s.p, x->u.s.n));
    case V_DTO: return x->u.i == y->u.i && x->off == y->off;
    default: return x->u.i == y->u.i;
    }
}

/* ---- keys ------------------------------------------------------------------------------------ */

static int put_u64(mcdc_buf *out, uint64_t u)
{
    unsigned char b[8];
    for (int i = 7; i >= 0; i--) { b[i] = (unsigned char)(u & 0xFF); u >>= 8; }
    return mcdc_buf_put(out, b, 8);
}

static int put_escaped(mcdc_buf *out, const unsigned char *p, size_t n)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = p[i] ? mcdc_buf_putc(out, (char)p[i]) : mcdc_buf_put(out, "\0\xFF", 2);
    return rc ? rc : mcdc_buf_put(out, "\0\0", 2);
}

int sim_key_append(mcdc_buf *out, const sim_type *t, const sim_val *v)
{
    if (v->k == V_NULL)
        return mcdc_buf_putc(out, 0);
    int rc = mcdc_buf_putc(out, 1);
    if (rc < 0) return rc;
    switch (v->k) {
    case V_INT: case V_DATE: case V_TIME: case V_DT: case V_DTO:
        return put_u64(out, (uint64_t)v->u.i ^ UINT64_C(0x8000000000000000));
    case V_DEC: {
        unsigned __int128 u = (unsigned __int128)v->u.dec ^ ((unsigned __int128)1 << 127);
        rc = put_u64(out, (uint64_t)(u >> 64));
        return rc ? rc : put_u64(out, (uint64_t)u);
    }
    case V_FLT: {
        double d = v->u.d == 0 ? 0.0 : v->u.d;
        uint64_t u;
        memcpy(&u, &d, 8);
        u = (u >> 63) ? ~u : u ^ UINT64_C(0x8000000000000000);
        return put_u64(out, u);
    }
    case V_BIN:
        return put_escaped(out, (const unsigned char *)v->u.s.p, v->u.s.n);
    case V_STR: /* the orders of mcdc/key_order.h, which silver compares chunk bounds with */
        if (t->k == ST_UNIQUEIDENTIFIER)
            return mcdc_key_order_guid(out, v->u.s.p, v->u.s.n);
        return mcdc_key_order_text_ci(out, v->u.s.p, v->u.s.n);
    default:
        return 0;
    }
}

/* ---- text for messages and the value model ---------------------------------------------------- */

int sim_val_text(mcdc_buf *out, const sim_type *t, const sim_val *v)
{
    char buf[64];
    if (v->k == V_NULL)
        return mcdc_buf_puts(out, "<NULL>");
    switch (v->k) {
    case V_INT: return mcdc_buf_printf(out, "%lld", (long long)v->u.i);
    case V_DEC: return mcdc_buf_puts(out, mcdc_decimal_format(buf, v->u.dec, v->scale));
    case V_FLT: return mcdc_buf_printf(out, "%.17g", v->u.d);
    case V_STR: return mcdc_buf_put(out, v->u.s.p, v->u.s.n);
    case V_BIN: {
        int rc = mcdc_buf_puts(out, "0x");
        for (size_t i = 0; rc == 0 && i < v->u.s.n; i++)
            rc = mcdc_buf_printf(out, "%02X", (unsigned char)v->u.s.p[i]);
        return rc;
    }
    default:
        if (text_of(t, v, buf, sizeof buf) < 0) {
            if (v->k == V_DATE) format_date(buf, sizeof buf, v->u.i);
            else sim_format_dt(buf, sizeof buf, v->u.i, 7);
        }
        return mcdc_buf_puts(out, buf);
    }
}

int sim_to_value(sim_arena *a, const sim_type *t, const sim_val *v, mcdc_value *out)
{
    memset(out, 0, sizeof *out);
    if (v->k == V_NULL) {
        out->is_null = true;
        return 0;
    }
    switch (t->k) {
    case ST_BIT: out->v.b = v->u.i != 0; return 0;
    case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT: out->v.i = v->u.i; return 0;
    case ST_DECIMAL: case ST_NUMERIC: case ST_MONEY: case ST_SMALLMONEY: out->v.dec = v->u.dec; return 0;
    case ST_REAL: out->v.f = (float)v->u.d; return 0;
    case ST_FLOAT: out->v.d = v->u.d; return 0;
    case ST_DATE: out->v.i = v->u.i; return 0;
    case ST_DATETIME: case ST_DATETIME2: case ST_SMALLDATETIME: case ST_DATETIMEOFFSET:
        out->v.i = floordiv(v->u.i, TICKS_PER_US);
        return 0;
    case ST_TIME: {
        char buf[32];
        format_time(buf, sizeof buf, v->u.i, t->scale);
        out->v.s.len = strlen(buf);
        out->v.s.ptr = sim_arena_strndup(a, buf, out->v.s.len);
        return out->v.s.ptr ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    default:
        out->v.s.ptr = v->u.s.p;
        out->v.s.len = v->u.s.n;
        return 0;
    }
}

int sim_from_value(sim_arena *a, const sim_type *t, const mcdc_value *in, sim_val *out)
{
    sim_val v;
    memset(&v, 0, sizeof v);
    if (in->is_null) {
        *out = v;
        return 0;
    }
    switch (t->k) {
    case ST_BIT: v.k = V_INT; v.u.i = in->v.b; break;
    case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT: v.k = V_INT; v.big = true; v.u.i = in->v.i; break;
    case ST_DECIMAL: case ST_NUMERIC: case ST_MONEY: case ST_SMALLMONEY:
        v.k = V_DEC;
        dec_ps(t, &v.prec, &v.scale);
        v.u.dec = in->v.dec;
        break;
    case ST_REAL: v.k = V_FLT; v.u.d = in->v.f; break;
    case ST_FLOAT: v.k = V_FLT; v.u.d = in->v.d; break;
    case ST_DATE: v.k = V_DATE; v.u.i = in->v.i; break;
    case ST_DATETIME: case ST_DATETIME2: case ST_SMALLDATETIME: v.k = V_DT; v.u.i = in->v.i * TICKS_PER_US; break;
    case ST_DATETIMEOFFSET: v.k = V_DTO; v.u.i = in->v.i * TICKS_PER_US; break;
    case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: case ST_ROWVERSION: v.k = V_BIN; v.u.s.p = in->v.s.ptr; v.u.s.n = in->v.s.len; break;
    default: v.k = V_STR; v.u.s.p = in->v.s.ptr; v.u.s.n = in->v.s.len; break;
    }
    return sim_convert(a, t, &v, out, NULL);
}
