/*
 * source/sim/tds/respdec.c: a server's reply (a TDS token stream) decoded for people, the
 * "decoded" part of a transcript entry (transcript.c):
 *   {"results":[{"columns":[{"name":"x","type":"int"}],"rows":[["1"]]}],
 *    "row_counts":[1],"errors":[{"number":208,"state":1,"class":16,"message":"..."}],
 *    "return_status":0}
 * Values are strings (NULL as null): integers and decimals exactly, floats with all their
 * digits, money with four decimals, temporal types as ISO text (times and dates as sent,
 * datetimeoffset in UTC with its offset), binary as 0x..., strings as UTF-8.
 * Guarantees: every length is checked against the reply; a token or type it does not know
 * (UDT, table-valued, a malformed reply) stops the decoding with "undecoded_from" giving the
 * byte offset, and what came before is kept. Replay never reads this part.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "source/sim/sim_int.h"
#include "source/sim/tds/tds_int.h"

typedef struct rcol {
    uint8_t id;
    int     lenkind; /* 0 fixed, 1 byte, 2 ushort, 3 PLP, 4 long (textptr), 5 variant */
    int     fixed;   /* bytes of a fixed-length type */
    int     prec, scale;
    bool    wide;    /* UTF-16 text */
    bool    text;    /* character data (else binary) */
} rcol;

static json_t *wstr(const uint8_t *p, size_t n, bool wide)
{
    tds_wbuf w = TDS_WBUF_INIT(TDS_MAX_MESSAGE * 2);
    if (wide) tds_utf16_to_utf8(&w, p, n);
    else tds_cp1252_to_utf8(&w, p, n);
    json_t *j = w.err ? json_null() : json_stringn(w.p ? (const char *)w.p : "", w.len);
    tds_w_dispose(&w);
    return j;
}

static json_t *hex(const uint8_t *p, size_t n)
{
    static const char d[] = "0123456789ABCDEF";
    char *s = malloc(2 * n + 3);
    if (!s) return json_null();
    s[0] = '0';
    s[1] = 'x';
    for (size_t i = 0; i < n; i++) {
        s[2 + 2 * i] = d[p[i] >> 4];
        s[3 + 2 * i] = d[p[i] & 15];
    }
    s[2 + 2 * n] = '\0';
    json_t *j = json_string(s);
    free(s);
    return j;
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

static json_t *s_of(const char *s)
{
    return json_string(s);
}

static void time_text(char *out, size_t cap, uint64_t units, int scale)
{
    uint64_t p = 1;
    for (int i = 0; i < scale; i++) p *= 10;
    uint64_t secs = units / p, frac = units % p;
    int n = snprintf(out, cap, "%02u:%02u:%02u", (unsigned)(secs / 3600), (unsigned)(secs / 60 % 60), (unsigned)(secs % 60));
    if (scale > 0 && scale <= 7 && n > 0 && (size_t)n < cap) {
        char f[16];
        snprintf(f, sizeof f, "%07llu", (unsigned long long)frac * (10000000ull / p)); /* 7 digits, then cut */
        f[scale] = '\0';
        snprintf(out + n, cap - (size_t)n, ".%s", f);
    }
}

static int time_len(int scale)
{
    return scale <= 2 ? 3 : scale <= 4 ? 4 : 5;
}

/* A value of column @p c's type from @p d (@p n bytes, not NULL). */
static json_t *value(const rcol *c, const uint8_t *d, size_t n)
{
    char buf[128];
    uint8_t id = c->id;
    if (c->text) return wstr(d, n, c->wide);
    switch (id) {
    case 0x30: case 0x32: case 0x34: case 0x38: case 0x7F: case 0x26: case 0x68: {
        if (n == 1) snprintf(buf, sizeof buf, "%u", d[0]);
        else if (n == 2) snprintf(buf, sizeof buf, "%d", (int16_t)le(d, 2));
        else if (n == 4) snprintf(buf, sizeof buf, "%d", (int32_t)le(d, 4));
        else if (n == 8) snprintf(buf, sizeof buf, "%lld", (long long)(int64_t)le(d, 8));
        else return hex(d, n);
        return s_of(buf);
    }
    case 0x3B: case 0x3E: case 0x6D: {
        if (n == 4) {
            float f;
            uint32_t u = (uint32_t)le(d, 4);
            memcpy(&f, &u, 4);
            snprintf(buf, sizeof buf, "%.9g", (double)f);
        } else if (n == 8) {
            double f;
            uint64_t u = le(d, 8);
            memcpy(&f, &u, 8);
            snprintf(buf, sizeof buf, "%.17g", f);
        } else {
            return hex(d, n);
        }
        return s_of(buf);
    }
    case 0x3C: case 0x7A: case 0x6E: {
        int64_t v = n == 8 ? (int64_t)((uint64_t)le(d, 4) << 32 | le(d + 4, 4)) : n == 4 ? (int32_t)le(d, 4) : 0;
        if (n != 8 && n != 4) return hex(d, n);
        uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        snprintf(buf, sizeof buf, "%s%llu.%04llu", v < 0 ? "-" : "", (unsigned long long)(m / 10000), (unsigned long long)(m % 10000));
        return s_of(buf);
    }
    case 0x6A: case 0x6C: case 0x37: case 0x3F: {
        if (n < 2 || n > 17) return hex(d, n);
        unsigned __int128 mag = 0;
        for (size_t i = n - 1; i >= 1; i--) mag = mag << 8 | d[i];
        char dig[64];
        int k = 0;
        do {
            dig[k++] = (char)('0' + (int)(mag % 10));
            mag /= 10;
        } while (mag);
        while (k <= c->scale) dig[k++] = '0';
        int o = 0;
        if (!d[0]) buf[o++] = '-';
        for (int i = k - 1; i >= 0; i--) {
            buf[o++] = dig[i];
            if (i == c->scale && c->scale > 0) buf[o++] = '.';
        }
        buf[o] = '\0';
        return s_of(buf);
    }
    case 0x3D: case 0x3A: case 0x6F: {
        int64_t ticks;
        if (n == 8) {
            int32_t days = (int32_t)le(d, 4);
            uint32_t t300 = (uint32_t)le(d + 4, 4);
            ticks = (days - TDS_DAYS_1900_TO_1970) * TICKS_PER_DAY + ((int64_t)t300 * 10000000 + 150) / 300;
            sim_format_datetime(buf, sizeof buf, ticks);
        } else if (n == 4) {
            ticks = ((int64_t)le(d, 2) - TDS_DAYS_1900_TO_1970) * TICKS_PER_DAY + (int64_t)le(d + 2, 2) * 60 * TICKS_PER_SEC;
            sim_format_dt(buf, sizeof buf, ticks, 0);
        } else {
            return hex(d, n);
        }
        return s_of(buf);
    }
    case 0x24: {
        if (n != 16) return hex(d, n);
        snprintf(buf, sizeof buf, "%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X", d[3], d[2], d[1],
                 d[0], d[5], d[4], d[7], d[6], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]);
        return s_of(buf);
    }
    case 0x28: case 0x29: case 0x2A: case 0x2B: {
        size_t tl = id == 0x28 ? 0 : (size_t)time_len(c->scale);
        size_t need = id == 0x28 ? 3 : id == 0x29 ? tl : id == 0x2A ? tl + 3 : tl + 5;
        if (n != need) return hex(d, n);
        uint64_t units = tl ? le(d, (int)tl) : 0;
        char t[40] = "";
        if (tl) time_text(t, sizeof t, units, c->scale);
        if (id == 0x29) return s_of(t);
        int64_t days = (int64_t)le(d + tl, 3) - TDS_DAYS_0001_TO_1970;
        sim_format_dt(buf, sizeof buf, days * TICKS_PER_DAY, 0);
        buf[10] = '\0'; /* the date part */
        char date[16];
        memcpy(date, buf, 11);
        char out[200];
        if (id == 0x28) return s_of(date);
        if (id == 0x2A) {
            snprintf(out, sizeof out, "%s %s", date, t);
            return s_of(out);
        }
        int off = (int16_t)le(d + tl + 3, 2);
        int a = off < 0 ? -off : off;
        snprintf(out, sizeof out, "%s %s UTC, offset %c%02d:%02d", date, t, off < 0 ? '-' : '+', a / 60, a % 60);
        return s_of(out);
    }
    default:
        return hex(d, n);
    }
}

/* TYPE_INFO (MS-TDS 2.2.5.6) into @p c; @p colmeta: text types carry a table name after it. */
static bool type_info(tds_rd *r, rcol *c, bool colmeta, char *tn, size_t cap)
{
    memset(c, 0, sizeof *c);
    c->id = tds_rd_u8(r);
    uint8_t id = c->id;
    switch (id) {
    case 0x1F: c->fixed = 0; snprintf(tn, cap, "null"); return !r->bad;
    case 0x30: c->fixed = 1; snprintf(tn, cap, "tinyint"); return !r->bad;
    case 0x32: c->fixed = 1; snprintf(tn, cap, "bit"); return !r->bad;
    case 0x34: c->fixed = 2; snprintf(tn, cap, "smallint"); return !r->bad;
    case 0x38: c->fixed = 4; snprintf(tn, cap, "int"); return !r->bad;
    case 0x7F: c->fixed = 8; snprintf(tn, cap, "bigint"); return !r->bad;
    case 0x3B: c->fixed = 4; snprintf(tn, cap, "real"); return !r->bad;
    case 0x3E: c->fixed = 8; snprintf(tn, cap, "float"); return !r->bad;
    case 0x3A: c->fixed = 4; snprintf(tn, cap, "smalldatetime"); return !r->bad;
    case 0x3D: c->fixed = 8; snprintf(tn, cap, "datetime"); return !r->bad;
    case 0x3C: c->fixed = 8; snprintf(tn, cap, "money"); return !r->bad;
    case 0x7A: c->fixed = 4; snprintf(tn, cap, "smallmoney"); return !r->bad;
    case 0x26: case 0x68: case 0x6D: case 0x6E: case 0x6F: case 0x24: {
        uint8_t m = tds_rd_u8(r);
        c->lenkind = 1;
        const char *names[] = { "int", "bit", "float", "money", "datetime", "uniqueidentifier" };
        int i = id == 0x26 ? 0 : id == 0x68 ? 1 : id == 0x6D ? 2 : id == 0x6E ? 3 : id == 0x6F ? 4 : 5;
        if (id == 0x26) snprintf(tn, cap, "%s", m == 1 ? "tinyint" : m == 2 ? "smallint" : m == 8 ? "bigint" : "int");
        else if (id == 0x6D) snprintf(tn, cap, "%s", m == 4 ? "real" : "float");
        else if (id == 0x6E) snprintf(tn, cap, "%s", m == 4 ? "smallmoney" : "money");
        else if (id == 0x6F) snprintf(tn, cap, "%s", m == 4 ? "smalldatetime" : "datetime");
        else snprintf(tn, cap, "%s", names[i]);
        return !r->bad;
    }
    case 0x6A: case 0x6C: case 0x37: case 0x3F:
        tds_rd_u8(r);
        c->prec = tds_rd_u8(r);
        c->scale = tds_rd_u8(r);
        c->lenkind = 1;
        snprintf(tn, cap, "%s(%d,%d)", id == 0x6C || id == 0x3F ? "numeric" : "decimal", c->prec, c->scale);
        return !r->bad && c->scale <= 38;
    case 0x28: c->lenkind = 1; snprintf(tn, cap, "date"); return !r->bad;
    case 0x29: case 0x2A: case 0x2B:
        c->scale = tds_rd_u8(r);
        c->lenkind = 1;
        snprintf(tn, cap, "%s(%d)", id == 0x29 ? "time" : id == 0x2A ? "datetime2" : "datetimeoffset", c->scale);
        return !r->bad && c->scale <= 7;
    case 0xA7: case 0xAF: case 0xE7: case 0xEF: case 0xA5: case 0xAD: {
        uint16_t m = tds_rd_u16(r);
        c->text = id == 0xA7 || id == 0xAF || id == 0xE7 || id == 0xEF;
        c->wide = id == 0xE7 || id == 0xEF;
        if (c->text) tds_rd_bytes(r, 5);
        c->lenkind = m == 0xFFFF ? 3 : 2;
        const char *b = id == 0xA7 ? "varchar" : id == 0xAF ? "char" : id == 0xE7 ? "nvarchar" : id == 0xEF ? "nchar"
                      : id == 0xA5 ? "varbinary" : "binary";
        if (m == 0xFFFF) snprintf(tn, cap, "%s(max)", b);
        else snprintf(tn, cap, "%s(%u)", b, c->wide ? m / 2u : m);
        return !r->bad;
    }
    case 0x23: case 0x63: case 0x22: {
        tds_rd_u32(r);
        c->text = id != 0x22;
        c->wide = id == 0x63;
        if (c->text) tds_rd_bytes(r, 5);
        if (colmeta) {
            uint8_t parts = tds_rd_u8(r);
            for (int i = 0; i < parts && !r->bad; i++) tds_rd_bytes(r, (size_t)tds_rd_u16(r) * 2);
        }
        c->lenkind = 4;
        snprintf(tn, cap, "%s", id == 0x23 ? "text" : id == 0x63 ? "ntext" : "image");
        return !r->bad;
    }
    case 0xF1: {
        if (tds_rd_u8(r)) {
            tds_rd_bytes(r, (size_t)tds_rd_u8(r) * 2);
            tds_rd_bytes(r, (size_t)tds_rd_u8(r) * 2);
            tds_rd_bytes(r, (size_t)tds_rd_u16(r) * 2);
        }
        c->lenkind = 3;
        c->text = c->wide = true;
        snprintf(tn, cap, "xml");
        return !r->bad;
    }
    case 0x62:
        tds_rd_u32(r);
        c->lenkind = 5;
        snprintf(tn, cap, "sql_variant");
        return !r->bad;
    default:
        return false;
    }
}

/* One value of @p c at @p r: a JSON value, or NULL when the reply is cut short. */
static json_t *read_value(tds_rd *r, const rcol *c)
{
    if (c->lenkind == 0) {
        const uint8_t *d = tds_rd_bytes(r, (size_t)c->fixed);
        return d || c->fixed == 0 ? (c->fixed ? value(c, d, (size_t)c->fixed) : json_null()) : NULL;
    }
    if (c->lenkind == 1) {
        uint8_t n = tds_rd_u8(r);
        if (r->bad) return NULL;
        if (n == 0) return json_null();
        const uint8_t *d = tds_rd_bytes(r, n);
        return d ? value(c, d, n) : NULL;
    }
    if (c->lenkind == 2) {
        uint16_t n = tds_rd_u16(r);
        if (r->bad) return NULL;
        if (n == 0xFFFF) return json_null();
        const uint8_t *d = tds_rd_bytes(r, n);
        return d ? value(c, d, n) : NULL;
    }
    if (c->lenkind == 3) {
        uint64_t total = tds_rd_u64(r);
        if (r->bad) return NULL;
        if (total == UINT64_MAX) return json_null();
        tds_wbuf w = TDS_WBUF_INIT(TDS_MAX_MESSAGE);
        for (;;) {
            uint32_t n = tds_rd_u32(r);
            if (r->bad) break;
            if (n == 0) break;
            const uint8_t *d = tds_rd_bytes(r, n);
            if (!d) break;
            tds_w_put(&w, d, n);
        }
        json_t *j = r->bad || w.err ? NULL : value(c, w.p ? w.p : (const uint8_t *)"", w.len);
        tds_w_dispose(&w);
        return j;
    }
    if (c->lenkind == 4) {
        uint8_t pl = tds_rd_u8(r);
        if (r->bad) return NULL;
        if (pl == 0) return json_null();
        tds_rd_bytes(r, pl);
        tds_rd_bytes(r, 8);
        uint32_t n = tds_rd_u32(r);
        const uint8_t *d = tds_rd_bytes(r, n);
        return d ? value(c, d, n) : NULL;
    }
    /* sql_variant: length, base type, property bytes, properties, data */
    uint32_t n = tds_rd_u32(r);
    if (r->bad) return NULL;
    if (n == 0) return json_null();
    const uint8_t *d = tds_rd_bytes(r, n);
    if (!d || n < 2 || (size_t)d[1] + 2 > n) return d ? hex(d, n) : NULL;
    rcol b = { .id = d[0] };
    b.text = d[0] == 0xA7 || d[0] == 0xAF || d[0] == 0xE7 || d[0] == 0xEF;
    b.wide = d[0] == 0xE7 || d[0] == 0xEF;
    if ((d[0] == 0x6A || d[0] == 0x6C) && d[1] >= 2) { b.prec = d[2]; b.scale = d[3]; }
    if ((d[0] == 0x29 || d[0] == 0x2A || d[0] == 0x2B) && d[1] >= 1) b.scale = d[2];
    return value(&b, d + 2 + d[1], n - 2 - d[1]);
}

json_t *tds_response_decode(const uint8_t *p, size_t n)
{
    json_t *out = json_object(), *results = json_array(), *counts = json_array(), *errors = json_array();
    json_t *cur_rows = NULL;
    rcol *cols = NULL;
    int ncols = 0;
    tds_rd r = {p, p + n, false};
    while (r.p < r.end) {
        const uint8_t *tok_at = r.p;
        uint8_t tok = tds_rd_u8(&r);
        bool ok = true;
        switch (tok) {
        case TDS_TOK_COLMETADATA: {
            uint16_t nc = tds_rd_u16(&r);
            if (nc == 0xFFFF) break;
            free(cols);
            cols = calloc(nc ? nc : 1, sizeof *cols);
            ncols = 0;
            json_t *res = json_object(), *jc = json_array();
            cur_rows = json_array();
            for (int i = 0; i < nc && ok; i++) {
                tds_rd_u32(&r);
                tds_rd_u16(&r);
                char tn[64];
                ok = cols && type_info(&r, &cols[i], true, tn, sizeof tn);
                uint8_t nl = tds_rd_u8(&r);
                const uint8_t *np = tds_rd_bytes(&r, (size_t)nl * 2);
                if (!ok || !np) { ok = false; break; }
                json_t *c = json_object();
                json_object_set_new(c, "name", wstr(np, (size_t)nl * 2, true));
                json_object_set_new(c, "type", json_string(tn));
                json_array_append_new(jc, c);
                ncols++;
            }
            json_object_set_new(res, "columns", jc);
            json_object_set(res, "rows", cur_rows);
            json_decref(cur_rows);
            json_array_append_new(results, res);
            break;
        }
        case TDS_TOK_ROW: case TDS_TOK_NBCROW: {
            if (!cur_rows) { ok = false; break; }
            const uint8_t *bm = NULL;
            if (tok == TDS_TOK_NBCROW && !(bm = tds_rd_bytes(&r, ((size_t)ncols + 7) / 8))) { ok = false; break; }
            json_t *row = json_array();
            for (int i = 0; i < ncols && ok; i++) {
                if (bm && (bm[i / 8] >> (i % 8) & 1)) { json_array_append_new(row, json_null()); continue; }
                json_t *v = read_value(&r, &cols[i]);
                if (!v) ok = false;
                else json_array_append_new(row, v);
            }
            json_array_append_new(cur_rows, row);
            break;
        }
        case TDS_TOK_DONE: case TDS_TOK_DONEPROC: case TDS_TOK_DONEINPROC: {
            uint16_t st = tds_rd_u16(&r);
            tds_rd_u16(&r);
            uint64_t rc = tds_rd_u64(&r);
            if (!r.bad && (st & 0x10)) json_array_append_new(counts, json_integer((json_int_t)rc));
            break;
        }
        case TDS_TOK_ERROR: case TDS_TOK_INFO: {
            uint16_t len = tds_rd_u16(&r);
            const uint8_t *b = tds_rd_bytes(&r, len);
            if (!b) { ok = false; break; }
            if (tok == TDS_TOK_ERROR) {
                tds_rd m = {b, b + len, false};
                uint32_t num = tds_rd_u32(&m);
                uint8_t state = tds_rd_u8(&m), cls = tds_rd_u8(&m);
                uint16_t ml = tds_rd_u16(&m);
                const uint8_t *mp = tds_rd_bytes(&m, (size_t)ml * 2);
                json_t *e = json_object();
                json_object_set_new(e, "number", json_integer((json_int_t)(int32_t)num));
                json_object_set_new(e, "state", json_integer(state));
                json_object_set_new(e, "class", json_integer(cls));
                if (mp) json_object_set_new(e, "message", wstr(mp, (size_t)ml * 2, true));
                json_array_append_new(errors, e);
            }
            break;
        }
        case TDS_TOK_RETURNSTATUS:
            json_object_set_new(out, "return_status", json_integer((json_int_t)(int32_t)tds_rd_u32(&r)));
            break;
        case TDS_TOK_RETURNVALUE: {
            tds_rd_u16(&r);
            uint8_t nl = tds_rd_u8(&r);
            const uint8_t *np = tds_rd_bytes(&r, (size_t)nl * 2);
            tds_rd_u8(&r);
            tds_rd_u32(&r);
            tds_rd_u16(&r);
            rcol c;
            char tn[64];
            json_t *v = np && type_info(&r, &c, false, tn, sizeof tn) ? read_value(&r, &c) : NULL;
            if (!v) { ok = false; break; }
            json_t *rv = json_object_get(out, "return_values");
            if (!rv) json_object_set_new(out, "return_values", rv = json_array());
            json_t *e = json_object();
            json_object_set_new(e, "name", wstr(np, (size_t)nl * 2, true));
            json_object_set_new(e, "type", json_string(tn));
            json_object_set_new(e, "value", v);
            json_array_append_new(rv, e);
            break;
        }
        case TDS_TOK_ENVCHANGE: case 0xA9 /* ORDER */: case 0xA5 /* COLINFO */: case 0xA4 /* TABNAME */:
        case TDS_TOK_LOGINACK: {
            uint16_t len = tds_rd_u16(&r);
            if (!tds_rd_bytes(&r, len)) ok = false;
            break;
        }
        default:
            ok = false;
            break;
        }
        if (!ok || r.bad) {
            json_object_set_new(out, "undecoded_from", json_integer((json_int_t)(tok_at - p)));
            break;
        }
    }
    free(cols);
    json_object_set_new(out, "results", results);
    json_object_set_new(out, "row_counts", counts);
    json_object_set_new(out, "errors", errors);
    return out;
}
