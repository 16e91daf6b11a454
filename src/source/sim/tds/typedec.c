/*
 * source/sim/tds/typedec.c: RPC requests (MS-TDS 2.2.6.6): the procedure (a name or a
 * well-known id), and each parameter's name, status, TYPE_INFO and value, decoded into the
 * simulator's types and values (mcdc_sim_param).
 *
 * RPCReqBatch, repeated and separated by 0xFF (BatchFlag) or 0xFE (NoExecFlag):
 *   NameLenProcID  US_VARCHAR name, or 0xFFFF then the id (2): 10 sp_executesql, 11 sp_prepare,
 *                  12 sp_execute, 13 sp_prepexec, 15 sp_unprepare, ...
 *   OptionFlags    2 bytes
 *   parameters     name B_VARCHAR, status (1: 0x01 by reference, 0x02 default), TYPE_INFO, value
 * Values as in typeenc.c's table; text, ntext and image parameters carry a 4-byte length and
 * no text pointer; PLP values come in chunks. Strings arrive as UTF-16LE (n-types) or in the
 * code page of their collation (CP1252 here) and leave as UTF-8.
 * Example: sp_executesql N'SELECT @a', N'@a int', @a = 5 begins FF FF 0A 00 00 00.
 *
 * Guarantees: every length is checked against the payload (MCDC_ECORRUPT names the parameter
 * and the byte offset); a type the simulator cannot hold is MCDC_EUNSUPPORTED.
 */
#include <stdio.h>
#include <string.h>

#include "source/sim/tds/tds_int.h"

#define MAX_PARAMS 2100 /* SQL Server's limit */
#define MAX_CALLS  1024

int tds_skip_all_headers(tds_rd *r)
{
    const uint8_t *start = r->p;
    uint32_t total = tds_rd_u32(r);
    if (r->bad || total < 4 || total - 4 > (size_t)(r->end - r->p))
        return mcdc_error_set(MCDC_ECORRUPT, "ALL_HEADERS: total length %u does not fit the request", total);
    /* each header: length (4, itself included), type (2), data */
    const uint8_t *end = start + total;
    while (r->p < end) {
        if (end - r->p < 6)
            return mcdc_error_set(MCDC_ECORRUPT, "ALL_HEADERS: %zu bytes left, too few for a header", (size_t)(end - r->p));
        uint32_t hl = tds_rd_u32(r);
        if (r->bad || hl < 6 || hl - 4 > (size_t)(end - r->p))
            return mcdc_error_set(MCDC_ECORRUPT, "ALL_HEADERS: a header of length %u does not fit", hl);
        r->p += hl - 4;
    }
    return 0;
}

typedef struct pctx {
    sim_arena  *a;
    tds_rd      r;
    const uint8_t *base;
    int         index; /* parameter number, for messages */
    tds_wbuf    tmp;
} pctx;

static int bad(pctx *c, const char *what)
{
    return mcdc_error_set(MCDC_ECORRUPT, "RPC parameter %d at byte %zu: %s", c->index, (size_t)(c->r.p - c->base), what);
}

static int text_value(pctx *c, const uint8_t *p, size_t n, bool wide, sim_val *out)
{
    tds_w_clear(&c->tmp);
    if (wide) tds_utf16_to_utf8(&c->tmp, p, n);
    else tds_cp1252_to_utf8(&c->tmp, p, n);
    if (c->tmp.err) return c->tmp.err;
    out->k = V_STR;
    out->big = wide;
    out->u.s.p = sim_arena_strndup(c->a, c->tmp.len ? (const char *)c->tmp.p : "", c->tmp.len);
    out->u.s.n = c->tmp.len;
    return out->u.s.p ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
}

static int bin_value(pctx *c, const uint8_t *p, size_t n, sim_val *out)
{
    out->k = V_BIN;
    out->u.s.p = sim_arena_strndup(c->a, n ? (const char *)p : "", n);
    out->u.s.n = n;
    return out->u.s.p ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
}

/* PLP: total (8), chunks of length (4) + data, a 0 length ends. Collects into c->tmp2. */
static int read_plp(pctx *c, tds_wbuf *into, bool *is_null)
{
    uint64_t total = tds_rd_u64(&c->r);
    if (c->r.bad) return bad(c, "the PLP length is cut short");
    *is_null = total == UINT64_MAX;
    if (*is_null) return 0;
    for (;;) {
        uint32_t k = tds_rd_u32(&c->r);
        if (c->r.bad) return bad(c, "a PLP chunk length is cut short");
        if (k == 0) return 0;
        const uint8_t *d = tds_rd_bytes(&c->r, k);
        if (!d) return bad(c, "a PLP chunk runs past the request");
        tds_w_put(into, d, k);
        if (into->err) return into->err;
    }
}

static int64_t floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int64_t p10(int n)
{
    int64_t r = 1;
    while (n-- > 0) r *= 10;
    return r;
}

static uint64_t le_n(const uint8_t *d, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | d[i];
    return v;
}

/* Fixed-width and N-type data of @p n bytes for wire type @p id into the parameter. */
static int fixed_value(pctx *c, uint8_t id, const uint8_t *d, size_t n, mcdc_sim_param *pm)
{
    sim_val *v = &pm->value;
    switch (id) {
    case 0x30: case 0x32: case 0x34: case 0x38: case 0x7F: case 0x26: case 0x68: {
        if (n != 1 && n != 2 && n != 4 && n != 8) return bad(c, "an integer of a length other than 1, 2, 4 or 8");
        uint64_t u = le_n(d, (int)n);
        int64_t i = n == 1 ? (int64_t)(uint8_t)u : n == 2 ? (int64_t)(int16_t)u : n == 4 ? (int64_t)(int32_t)u : (int64_t)u;
        if (id == 0x32 || id == 0x68) { pm->type.k = ST_BIT; i = i != 0; }
        else pm->type.k = n == 1 ? ST_TINYINT : n == 2 ? ST_SMALLINT : n == 4 ? ST_INT : ST_BIGINT;
        v->k = V_INT;
        v->big = pm->type.k == ST_BIGINT;
        v->u.i = i;
        return 0;
    }
    case 0x3B: case 0x3E: case 0x6D:
        if (n == 4) {
            uint32_t u = (uint32_t)le_n(d, 4);
            float f;
            memcpy(&f, &u, 4);
            pm->type.k = ST_REAL;
            v->u.d = f;
        } else if (n == 8) {
            uint64_t u = le_n(d, 8);
            memcpy(&v->u.d, &u, 8);
            pm->type.k = ST_FLOAT;
        } else {
            return bad(c, "a float of a length other than 4 or 8");
        }
        v->k = V_FLT;
        return 0;
    case 0x3C: case 0x7A: case 0x6E: {
        int64_t m;
        if (n == 8) m = (int64_t)((uint64_t)(uint32_t)le_n(d, 4) << 32 | (uint32_t)le_n(d + 4, 4));
        else if (n == 4) m = (int32_t)le_n(d, 4);
        else return bad(c, "money of a length other than 4 or 8");
        pm->type.k = n == 8 ? ST_MONEY : ST_SMALLMONEY;
        pm->type.prec = n == 8 ? 19 : 10;
        pm->type.scale = 4;
        v->k = V_DEC;
        v->prec = pm->type.prec;
        v->scale = 4;
        v->u.dec = m;
        return 0;
    }
    case 0x3D: case 0x3A: case 0x6F: {
        int64_t ticks;
        if (n == 8) {
            int64_t days = (int32_t)le_n(d, 4);
            int64_t f = (uint32_t)le_n(d + 4, 4);
            if (f >= INT64_C(25920000)) return bad(c, "a datetime's time is past midnight");
            if (days < -53690 || days > 2958463) return bad(c, "a datetime outside 1753-01-01..9999-12-31");
            ticks = (days - TDS_DAYS_1900_TO_1970) * TICKS_PER_DAY + (f * 100000 + 1) / 3;
            pm->type.k = ST_DATETIME;
        } else if (n == 4) {
            int64_t days = (int64_t)le_n(d, 2), mins = (int64_t)le_n(d + 2, 2);
            if (mins >= 1440) return bad(c, "a smalldatetime's minutes are past midnight");
            ticks = (days - TDS_DAYS_1900_TO_1970) * TICKS_PER_DAY + mins * 60 * TICKS_PER_SEC;
            pm->type.k = ST_SMALLDATETIME;
        } else {
            return bad(c, "a datetime of a length other than 4 or 8");
        }
        v->k = V_DT;
        v->u.i = ticks;
        return 0;
    }
    case 0x24: {
        if (n != 16) return bad(c, "a uniqueidentifier of a length other than 16");
        char txt[37];
        snprintf(txt, sizeof txt, "%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X", d[3], d[2],
                 d[1], d[0], d[5], d[4], d[7], d[6], d[8], d[9], d[10], d[11], d[12], d[13], d[14], d[15]);
        pm->type.k = ST_UNIQUEIDENTIFIER;
        v->k = V_STR;
        v->u.s.p = sim_arena_strndup(c->a, txt, 36);
        v->u.s.n = 36;
        return v->u.s.p ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    default:
        return bad(c, "an unknown fixed type");
    }
}

static int fixed_len_of(uint8_t id)
{
    switch (id) {
    case 0x30: case 0x32: return 1;
    case 0x34: return 2;
    case 0x38: case 0x3B: case 0x3A: case 0x7A: return 4;
    case 0x3C: case 0x3D: case 0x3E: case 0x7F: return 8;
    default: return 0;
    }
}

static int temporal_value(pctx *c, uint8_t id, int scale, const uint8_t *d, size_t n, mcdc_sim_param *pm)
{
    sim_val *v = &pm->value;
    int tb = scale <= 2 ? 3 : scale <= 4 ? 4 : 5;
    size_t want = id == 0x28 ? 3 : id == 0x29 ? (size_t)tb : id == 0x2A ? (size_t)tb + 3 : (size_t)tb + 5;
    if (n != want) return bad(c, "a date or time value of the wrong length");
    pm->type.scale = id == 0x28 ? 0 : scale;
    if (id == 0x28) {
        if (le_n(d, 3) > 3652058) return bad(c, "a date after 9999-12-31");
        pm->type.k = ST_DATE;
        v->k = V_DATE;
        v->u.i = (int64_t)le_n(d, 3) - TDS_DAYS_0001_TO_1970;
        return 0;
    }
    int64_t units = (int64_t)le_n(d, tb), unit = p10(7 - scale);
    if (units >= p10(scale) * 86400) return bad(c, "a time past midnight");
    int64_t tod = units * unit;
    if (id == 0x29) {
        pm->type.k = ST_TIME;
        v->k = V_TIME;
        v->u.i = tod;
        return 0;
    }
    if (le_n(d + tb, 3) > 3652058) return bad(c, "a date after 9999-12-31");
    int64_t days = (int64_t)le_n(d + tb, 3) - TDS_DAYS_0001_TO_1970;
    int64_t ticks = days * TICKS_PER_DAY + tod;
    if (id == 0x2A) {
        pm->type.k = ST_DATETIME2;
        v->k = V_DT;
        v->u.i = ticks;
        return 0;
    }
    int16_t off = (int16_t)le_n(d + tb + 3, 2);
    if (off < -840 || off > 840) return bad(c, "a time zone offset beyond +-14:00");
    pm->type.k = ST_DATETIMEOFFSET;
    v->k = V_DTO;
    v->off = off;
    v->u.i = ticks; /* UTC on the wire, UTC in the value */
    (void)floordiv;
    return 0;
}

static int read_param(pctx *c, mcdc_sim_param *pm)
{
    memset(pm, 0, sizeof *pm);
    uint8_t nlen = tds_rd_u8(&c->r);
    const uint8_t *np = tds_rd_bytes(&c->r, (size_t)nlen * 2);
    if (c->r.bad) return bad(c, "the name is cut short");
    if (nlen) {
        tds_w_clear(&c->tmp);
        tds_utf16_to_utf8(&c->tmp, np, (size_t)nlen * 2);
        if (c->tmp.err) return c->tmp.err;
        pm->name = sim_arena_strndup(c->a, (const char *)c->tmp.p, c->tmp.len);
        if (!pm->name) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    uint8_t status = tds_rd_u8(&c->r);
    pm->output = (status & 0x01) != 0;
    uint8_t id = tds_rd_u8(&c->r);
    if (c->r.bad) return bad(c, "the type is cut short");
    sim_val *v = &pm->value;
    v->k = V_NULL;
    int fl = fixed_len_of(id);
    if (id == 0x1F) { /* NULLTYPE */
        pm->type.k = ST_INT;
        return 0;
    }
    if (fl) {
        const uint8_t *d = tds_rd_bytes(&c->r, (size_t)fl);
        if (!d) return bad(c, "the value is cut short");
        return fixed_value(c, id, d, (size_t)fl, pm);
    }
    switch (id) {
    case 0x26: case 0x68: case 0x6D: case 0x6E: case 0x6F: case 0x24: {
        uint8_t maxlen = tds_rd_u8(&c->r);
        uint8_t len = tds_rd_u8(&c->r);
        if (c->r.bad) return bad(c, "the type is cut short");
        if (len == 0) {
            /* NULL: the type from the declared length */
            mcdc_sim_param tmp = {0};
            uint8_t z[16] = {0};
            int rc = fixed_value(c, id, z, maxlen, &tmp);
            if (rc) return rc;
            pm->type = tmp.type;
            return 0;
        }
        const uint8_t *d = tds_rd_bytes(&c->r, len);
        if (!d) return bad(c, "the value is cut short");
        return fixed_value(c, id, d, len, pm);
    }
    case 0x6A: case 0x6C: case 0x37: case 0x3F: {
        tds_rd_u8(&c->r); /* maxlen */
        uint8_t prec = tds_rd_u8(&c->r), scale = tds_rd_u8(&c->r);
        uint8_t len = tds_rd_u8(&c->r);
        if (c->r.bad) return bad(c, "the type is cut short");
        if (prec < 1 || prec > 38 || scale > prec) return bad(c, "a decimal precision or scale out of range");
        pm->type.k = id == 0x6C || id == 0x3F ? ST_NUMERIC : ST_DECIMAL;
        pm->type.prec = prec;
        pm->type.scale = scale;
        if (len == 0) return 0;
        const uint8_t *d = tds_rd_bytes(&c->r, len);
        if (!d) return bad(c, "the value is cut short");
        if (len < 2 || len > 17) return bad(c, "a decimal of a length outside 2..17");
        unsigned __int128 mag = 0;
        for (int i = len - 1; i >= 1; i--) mag = mag << 8 | d[i];
        unsigned __int128 lim = 1;
        for (int i = 0; i < prec; i++) lim *= 10;
        if (mag >= lim) return bad(c, "a decimal with more digits than its precision");
        v->k = V_DEC;
        v->prec = prec;
        v->scale = scale;
        v->u.dec = d[0] ? (mcdc_int128)mag : -(mcdc_int128)mag;
        return 0;
    }
    case 0x28: case 0x29: case 0x2A: case 0x2B: {
        int scale = 0;
        if (id != 0x28) {
            scale = tds_rd_u8(&c->r);
            if (scale > 7) return bad(c, "a time scale above 7");
        }
        uint8_t len = tds_rd_u8(&c->r);
        if (c->r.bad) return bad(c, "the type is cut short");
        if (len == 0) {
            pm->type.k = id == 0x28 ? ST_DATE : id == 0x29 ? ST_TIME : id == 0x2A ? ST_DATETIME2 : ST_DATETIMEOFFSET;
            pm->type.scale = scale;
            return 0;
        }
        const uint8_t *d = tds_rd_bytes(&c->r, len);
        if (!d) return bad(c, "the value is cut short");
        return temporal_value(c, id, scale, d, len, pm);
    }
    case 0xA7: case 0xAF: case 0xE7: case 0xEF: case 0xA5: case 0xAD: {
        bool chr = id == 0xA7 || id == 0xAF, wide = id == 0xE7 || id == 0xEF;
        uint16_t maxlen = tds_rd_u16(&c->r);
        if (chr || wide) tds_rd_bytes(&c->r, 5); /* collation: CP1252 assumed for varchar */
        if (c->r.bad) return bad(c, "the type is cut short");
        pm->type.k = id == 0xA7 ? ST_VARCHAR : id == 0xAF ? ST_CHAR : id == 0xE7 ? ST_NVARCHAR : id == 0xEF ? ST_NCHAR
                   : id == 0xA5 ? ST_VARBINARY : ST_BINARY;
        pm->type.len = maxlen == 0xFFFF ? -1 : wide ? maxlen / 2 : maxlen;
        if (maxlen == 0xFFFF) {
            tds_wbuf data = TDS_WBUF_INIT(TDS_MAX_MESSAGE);
            bool is_null;
            int rc = read_plp(c, &data, &is_null);
            if (rc == 0 && !is_null) rc = chr || wide ? text_value(c, data.p, data.len, wide, v) : bin_value(c, data.p, data.len, v);
            tds_w_dispose(&data);
            return rc;
        }
        uint16_t len = tds_rd_u16(&c->r);
        if (c->r.bad) return bad(c, "the value's length is cut short");
        if (len == 0xFFFF) return 0;
        const uint8_t *d = tds_rd_bytes(&c->r, len);
        if (!d) return bad(c, "the value is cut short");
        return chr || wide ? text_value(c, d, len, wide, v) : bin_value(c, d, len, v);
    }
    case 0x23: case 0x63: case 0x22: {
        tds_rd_u32(&c->r);
        if (id != 0x22) tds_rd_bytes(&c->r, 5);
        uint32_t len = tds_rd_u32(&c->r);
        if (c->r.bad) return bad(c, "the type is cut short");
        pm->type.k = id == 0x23 ? ST_TEXT : id == 0x63 ? ST_NTEXT : ST_VARBINARY;
        pm->type.len = -1;
        if (len == 0xFFFFFFFF) return 0;
        const uint8_t *d = tds_rd_bytes(&c->r, len);
        if (!d) return bad(c, "the value is cut short");
        return id == 0x22 ? bin_value(c, d, len, v) : text_value(c, d, len, id == 0x63, v);
    }
    case 0xF1: {
        uint8_t schema = tds_rd_u8(&c->r);
        if (schema) {
            uint8_t n1 = tds_rd_u8(&c->r);
            tds_rd_bytes(&c->r, (size_t)n1 * 2);
            uint8_t n2 = tds_rd_u8(&c->r);
            tds_rd_bytes(&c->r, (size_t)n2 * 2);
            uint16_t n3 = tds_rd_u16(&c->r);
            tds_rd_bytes(&c->r, (size_t)n3 * 2);
        }
        if (c->r.bad) return bad(c, "the type is cut short");
        pm->type.k = ST_XML;
        pm->type.len = -1;
        tds_wbuf data = TDS_WBUF_INIT(TDS_MAX_MESSAGE);
        bool is_null;
        int rc = read_plp(c, &data, &is_null);
        if (rc == 0 && !is_null) rc = text_value(c, data.p, data.len, true, v);
        tds_w_dispose(&data);
        return rc;
    }
    default:
        return mcdc_error_set(MCDC_EUNSUPPORTED, "RPC parameter %d: type 0x%02X (sql_variant, table-valued or CLR) is not supported",
                              c->index, id);
    }
}

int tds_rpc_parse(sim_arena *a, const uint8_t *p, size_t n, tds_rpc_call **calls, int *n_calls)
{
    *calls = NULL;
    *n_calls = 0;
    pctx c = {a, {p, p + n, false}, p, 0, TDS_WBUF_INIT(TDS_MAX_MESSAGE * 2)};
    int rc = 0, cap = 0;
    tds_rpc_call *out = NULL;
    while (rc == 0 && c.r.p < c.r.end) {
        if (*n_calls >= MAX_CALLS) { rc = mcdc_error_set(MCDC_ECORRUPT, "RPC: more than %d calls in one request", MAX_CALLS); break; }
        if (*n_calls == cap) {
            int ncap = cap ? cap * 2 : 4;
            tds_rpc_call *g = sim_arena_alloc(a, sizeof *g * (size_t)ncap);
            if (!g) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            if (out) memcpy(g, out, sizeof *g * (size_t)cap);
            out = g;
            cap = ncap;
        }
        tds_rpc_call *call = &out[(*n_calls)++];
        memset(call, 0, sizeof *call);
        uint16_t nl = tds_rd_u16(&c.r);
        if (nl == 0xFFFF) {
            call->proc_id = tds_rd_u16(&c.r);
        } else {
            const uint8_t *np = tds_rd_bytes(&c.r, (size_t)nl * 2);
            if (!np) { rc = mcdc_error_set(MCDC_ECORRUPT, "RPC: the procedure name runs past the request"); break; }
            tds_w_clear(&c.tmp);
            tds_utf16_to_utf8(&c.tmp, np, (size_t)nl * 2);
            if ((rc = c.tmp.err)) break;
            call->proc = sim_arena_strndup(a, nl ? (const char *)c.tmp.p : "", c.tmp.len);
            if (!call->proc) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
        }
        call->options = tds_rd_u16(&c.r);
        if (c.r.bad) { rc = mcdc_error_set(MCDC_ECORRUPT, "RPC: the request is cut short before its options"); break; }
        int pcap = 0;
        while (c.r.p < c.r.end && *c.r.p != 0xFF && *c.r.p != 0xFE && *c.r.p != 0x80) {
            if (call->n_params >= MAX_PARAMS) { rc = mcdc_error_set(MCDC_ECORRUPT, "RPC: more than %d parameters", MAX_PARAMS); break; }
            if (call->n_params == pcap) {
                int ncap = pcap ? pcap * 2 : 8;
                mcdc_sim_param *g = sim_arena_alloc(a, sizeof *g * (size_t)ncap);
                if (!g) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
                if (call->params) memcpy(g, call->params, sizeof *g * (size_t)pcap);
                call->params = g;
                pcap = ncap;
            }
            c.index = call->n_params + 1;
            rc = read_param(&c, &call->params[call->n_params]);
            if (rc) break;
            call->n_params++;
        }
        if (rc == 0 && c.r.p < c.r.end) c.r.p++; /* the separator */
    }
    tds_w_dispose(&c.tmp);
    if (rc == 0) *calls = out;
    else *n_calls = 0;
    return rc;
}
