/*
 * source/sim/tds/typeenc.c: result columns on the wire (MS-TDS 2.2.5.4-2.2.5.6, 2.2.7.4,
 * 2.2.7.19, 2.2.7.20, 2.2.7.13): TYPE_INFO in COLMETADATA and RETURNVALUE, and each value in
 * ROW, NBCROW and RETURNVALUE, for every type the simulator holds.
 *
 * Wire types: a NOT NULL column of a fixed type travels as SQL Server sends it, in the fixed
 * form (INT4 0x38, ...), a nullable one in the N form with a length byte (INTN 0x26 4, ...);
 * decimal, the date/time types, uniqueidentifier and strings always carry lengths.
 *   type              TYPE_INFO                       value
 *   bit..bigint       30/32/34/38/7F | 68 1, 26 n     LE integer
 *   real, float       3B/3E | 6D 4/8                  IEEE LE
 *   money, smallmoney 3C/7A | 6E 8/4                  money: high 4 bytes then low 4 (1/10000s)
 *   datetime          3D | 6F 8                       days since 1900 (4), 1/300 s of day (4)
 *   smalldatetime     3A | 6F 4                       days since 1900 (2), minutes (2)
 *   decimal/numeric   6A/6C len prec scale            sign (1 = +), magnitude LE (len-1 bytes)
 *   date              28                              days since 0001-01-01 (3)
 *   time(s)           29 s                            10^-s seconds of day (3/4/5 bytes by s)
 *   datetime2(s)      2A s                            time, then date
 *   datetimeoffset(s) 2B s                            UTC time, UTC date, offset minutes (2)
 *   uniqueidentifier  24 16                           the GUID's 16 bytes (first 3 groups LE)
 *   char/varchar      AF/A7 maxlen(2) collation(5)    length(2) + CP1252; (max): PLP
 *   nchar/nvarchar    EF/E7 maxlen(2) collation(5)    length(2) + UTF-16LE; (max): PLP
 *   binary/varbinary  AD/A5 maxlen(2)                 length(2) + bytes; (max): PLP
 *   text/ntext/image  23/63/22 maxlen(4) [collation]  textptr(1+16) timestamp(8) length(4) data
 *   xml               F1 00                           PLP of UTF-16LE
 *   sql_variant       62 maxlen(4)=8009               length(4) basetype(1) propbytes(1) props data
 * NULL: length byte 0 (N forms, textptr), 0xFFFF (2-byte lengths), PLP 0xFFFFFFFFFFFFFFFF,
 * variant length 0. PLP values travel in chunks of TDS_PLP_CHUNK bytes, then a 0 terminator.
 * Example: decimal(5,2) -12.34 nullable: TYPE_INFO 6A 05 05 02, value 05 00 D2 04 00 00.
 *
 * Guarantees: a value that does not fit its column (a string kind for an int, a decimal
 * beyond its precision) is refused with MCDC_EINVAL naming the column, never sent wrong.
 */
#include <math.h>
#include <string.h>

#include "mcdc/text.h"
#include "source/sim/tds/tds_int.h"

enum {
    T_INT1 = 0x30, T_BIT = 0x32, T_INT2 = 0x34, T_INT4 = 0x38, T_DATETIM4 = 0x3A, T_FLT4 = 0x3B, T_MONEY = 0x3C,
    T_DATETIME = 0x3D, T_FLT8 = 0x3E, T_MONEY4 = 0x7A, T_INT8 = 0x7F, T_GUID = 0x24, T_INTN = 0x26,
    T_DECIMALN = 0x6A, T_NUMERICN = 0x6C, T_BITN = 0x68, T_FLTN = 0x6D, T_MONEYN = 0x6E, T_DATETIMN = 0x6F,
    T_DATEN = 0x28, T_TIMEN = 0x29, T_DATETIME2N = 0x2A, T_DTON = 0x2B, T_BIGVARBIN = 0xA5, T_BIGVARCHR = 0xA7,
    T_BIGBINARY = 0xAD, T_BIGCHAR = 0xAF, T_NVARCHAR = 0xE7, T_NCHAR = 0xEF, T_XML = 0xF1, T_TEXT = 0x23,
    T_IMAGE = 0x22, T_NTEXT = 0x63, T_VARIANT = 0x62
};

static const char *kind_name(sim_vkind k)
{
    static const char *n[] = {"NULL", "integer", "decimal", "float", "string", "binary", "date", "time",
                              "datetime", "datetimeoffset"};
    return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

static int mismatch(const mcdc_sim_rcol *c, const sim_val *v, const char *why)
{
    char t[64];
    sim_type_format(t, sizeof t, &c->type);
    return mcdc_error_set(MCDC_EINVAL, "column '%s' of type %s: a %s value %s", c->name ? c->name : "", t,
                          kind_name(v->k), why);
}

/* ---- what a column is on the wire ------------------------------------------------------------ */

static bool is_max(const sim_type *t)
{
    return t->len < 0;
}

/* Byte width of a fixed type's data (0 for types that are not fixed-width). */
static int fixed_width(sim_tkind k)
{
    switch (k) {
    case ST_BIT: case ST_TINYINT: return 1;
    case ST_SMALLINT: return 2;
    case ST_INT: case ST_REAL: case ST_SMALLMONEY: case ST_SMALLDATETIME: return 4;
    case ST_BIGINT: case ST_FLOAT: case ST_MONEY: case ST_DATETIME: return 8;
    default: return 0;
    }
}

static uint8_t fixed_type(sim_tkind k)
{
    switch (k) {
    case ST_BIT: return T_BIT;
    case ST_TINYINT: return T_INT1;
    case ST_SMALLINT: return T_INT2;
    case ST_INT: return T_INT4;
    case ST_BIGINT: return T_INT8;
    case ST_REAL: return T_FLT4;
    case ST_FLOAT: return T_FLT8;
    case ST_MONEY: return T_MONEY;
    case ST_SMALLMONEY: return T_MONEY4;
    case ST_DATETIME: return T_DATETIME;
    case ST_SMALLDATETIME: return T_DATETIM4;
    default: return 0;
    }
}

static uint8_t ntype(sim_tkind k)
{
    switch (k) {
    case ST_BIT: return T_BITN;
    case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT: return T_INTN;
    case ST_REAL: case ST_FLOAT: return T_FLTN;
    case ST_MONEY: case ST_SMALLMONEY: return T_MONEYN;
    case ST_DATETIME: case ST_SMALLDATETIME: return T_DATETIMN;
    default: return 0;
    }
}

static int dec_prec(const sim_type *t)
{
    return t->prec > 0 && t->prec <= 38 ? t->prec : 18;
}

static int dec_bytes(int prec)
{
    return prec <= 9 ? 5 : prec <= 19 ? 9 : prec <= 28 ? 13 : 17;
}

static int time_bytes(int scale)
{
    return scale <= 2 ? 3 : scale <= 4 ? 4 : 5;
}

static int tscale(const sim_type *t)
{
    return t->scale >= 0 && t->scale <= 7 ? t->scale : 7;
}

/* Declared byte length of a char/binary column (non-max). */
static uint16_t str_maxlen(const sim_type *t)
{
    bool wide = t->k == ST_NCHAR || t->k == ST_NVARCHAR;
    int n = t->len > 0 ? t->len : (wide ? 4000 : 8000);
    if (wide) n *= 2;
    return (uint16_t)(n > 8000 ? 8000 : n);
}

/* A string kind that travels as PLP: (max) types and xml. */
static bool is_plp(const sim_type *t)
{
    switch (t->k) {
    case ST_VARCHAR: case ST_NVARCHAR: case ST_VARBINARY:
        return is_max(t) || (t->k == ST_NVARCHAR ? t->len > 4000 : t->len > 8000);
    case ST_XML: return true;
    default: return false;
    }
}

static bool is_binary(sim_tkind k)
{
    return k == ST_BINARY || k == ST_VARBINARY || k == ST_IMAGE || k == ST_ROWVERSION;
}

/* Where the next @p n bytes go when the writer has that much room already (no error, no
 * growth), else NULL: the value encoders then write in place instead of through a copy,
 * and commit what they wrote by advancing w->len (the same bytes either way). */
static inline uint8_t *room(tds_wbuf *w, size_t n)
{
    return !w->err && w->p && w->cap - w->len >= n ? w->p + w->len : NULL;
}

/* ---- TYPE_INFO --------------------------------------------------------------------------------- */

static void string_type_info(tds_wbuf *w, const sim_type *t)
{
    uint8_t id;
    switch (t->k) {
    case ST_CHAR: id = T_BIGCHAR; break;
    case ST_VARCHAR: id = T_BIGVARCHR; break;
    case ST_NCHAR: id = T_NCHAR; break;
    case ST_NVARCHAR: id = T_NVARCHAR; break;
    case ST_BINARY: case ST_ROWVERSION: id = T_BIGBINARY; break; /* rowversion: binary(8) */
    default: id = T_BIGVARBIN; break;
    }
    tds_w_u8(w, id);
    tds_w_u16(w, is_plp(t) ? 0xFFFF : str_maxlen(t));
    if (!is_binary(t->k)) tds_w_put(w, tds_collation, 5);
}

void tds_type_info(tds_wbuf *w, const mcdc_sim_rcol *col, bool in_colmetadata)
{
    const sim_type *t = &col->type;
    if (col->is_variant) {
        tds_w_u8(w, T_VARIANT);
        tds_w_u32(w, 8009);
        return;
    }
    int fw = fixed_width(t->k);
    if (fw) {
        if (!col->nullable) {
            tds_w_u8(w, fixed_type(t->k));
        } else {
            tds_w_u8(w, ntype(t->k));
            tds_w_u8(w, (uint8_t)fw);
        }
        return;
    }
    switch (t->k) {
    case ST_DECIMAL: case ST_NUMERIC: {
        int p = dec_prec(t);
        tds_w_u8(w, t->k == ST_DECIMAL ? T_DECIMALN : T_NUMERICN);
        tds_w_u8(w, (uint8_t)dec_bytes(p));
        tds_w_u8(w, (uint8_t)p);
        tds_w_u8(w, (uint8_t)(t->scale >= 0 && t->scale <= p ? t->scale : 0));
        return;
    }
    case ST_DATE: tds_w_u8(w, T_DATEN); return;
    case ST_TIME: tds_w_u8(w, T_TIMEN); tds_w_u8(w, (uint8_t)tscale(t)); return;
    case ST_DATETIME2: tds_w_u8(w, T_DATETIME2N); tds_w_u8(w, (uint8_t)tscale(t)); return;
    case ST_DATETIMEOFFSET: tds_w_u8(w, T_DTON); tds_w_u8(w, (uint8_t)tscale(t)); return;
    case ST_UNIQUEIDENTIFIER: tds_w_u8(w, T_GUID); tds_w_u8(w, 16); return;
    case ST_XML: tds_w_u8(w, T_XML); tds_w_u8(w, 0); return;
    case ST_TEXT: case ST_NTEXT:
        tds_w_u8(w, t->k == ST_TEXT ? T_TEXT : T_NTEXT);
        tds_w_u32(w, t->k == ST_TEXT ? 0x7FFFFFFF : 0x7FFFFFFE);
        tds_w_put(w, tds_collation, 5);
        if (in_colmetadata) tds_w_u8(w, 0); /* TableName: no parts */
        return;
    case ST_IMAGE: /* MS-TDS 2.2.5.4.2: LONGLEN_TYPE, no collation, TableName in COLMETADATA */
        tds_w_u8(w, T_IMAGE);
        tds_w_u32(w, 0x7FFFFFFF);
        if (in_colmetadata) tds_w_u8(w, 0);
        return;
    default:
        string_type_info(w, t);
        return;
    }
}

/* ---- value bytes -------------------------------------------------------------------------------- */

/* 10^n (1 for n <= 0); a table for every decimal precision, looked up for every value */
#define E19 ((mcdc_int128)10000000000000000000ULL)
static const mcdc_int128 pow10_table[39] = {
    1, 10ULL, 100ULL, 1000ULL, 10000ULL,
    100000ULL, 1000000ULL, 10000000ULL, 100000000ULL, 1000000000ULL,
    10000000000ULL, 100000000000ULL, 1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
    1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL, 1000000000000000000ULL, 10000000000000000000ULL,
    E19 * 10ULL, E19 * 100ULL, E19 * 1000ULL,
    E19 * 10000ULL, E19 * 100000ULL, E19 * 1000000ULL,
    E19 * 10000000ULL, E19 * 100000000ULL, E19 * 1000000000ULL,
    E19 * 10000000000ULL, E19 * 100000000000ULL, E19 * 1000000000000ULL,
    E19 * 10000000000000ULL, E19 * 100000000000000ULL, E19 * 1000000000000000ULL,
    E19 * 10000000000000000ULL, E19 * 100000000000000000ULL, E19 * 1000000000000000000ULL,
    E19 * 10000000000000000000ULL,
};
#undef E19

static mcdc_int128 pow10i(int n)
{
    if (n <= 0) return 1;
    if (n <= 38) return pow10_table[n];
    mcdc_int128 r = 1;
    while (n-- > 0) r *= 10;
    return r;
}

/* The unscaled value of v at scale s (half away from zero when digits are dropped). */
static int to_scaled(const sim_val *v, int s, mcdc_int128 *out)
{
    if (v->k == V_INT) {
        *out = (mcdc_int128)v->u.i * pow10i(s);
        return 0;
    }
    if (v->k == V_DEC) {
        int d = s - v->scale;
        if (d >= 0) {
            *out = v->u.dec * pow10i(d);
        } else {
            mcdc_int128 p = pow10i(-d), q = v->u.dec / p, r = v->u.dec % p;
            if (r < 0 ? -r * 2 >= p : r * 2 >= p) q += v->u.dec < 0 ? -1 : 1;
            *out = q;
        }
        return 0;
    }
    if (v->k == V_FLT && isfinite(v->u.d)) {
        double x = v->u.d * (double)pow10i(s);
        if (fabs(x) >= 1e38) return -1;
        *out = (mcdc_int128)llround(x);
        return 0;
    }
    return -1;
}

static int as_i64(const sim_val *v, int64_t *out)
{
    if (v->k == V_INT) { *out = v->u.i; return 0; }
    if (v->k == V_DEC && v->scale == 0 && v->u.dec >= INT64_MIN && v->u.dec <= INT64_MAX) { *out = (int64_t)v->u.dec; return 0; }
    return -1;
}

static int as_double(const sim_val *v, double *out)
{
    if (v->k == V_FLT) { *out = v->u.d; return 0; }
    if (v->k == V_INT) { *out = (double)v->u.i; return 0; }
    if (v->k == V_DEC) { *out = (double)v->u.dec / (double)pow10i(v->scale); return 0; }
    return -1;
}

/* The low n bytes of v, little-endian; the common widths as one store each (every value) */
static inline void le(uint8_t *d, uint64_t v, int n)
{
    const uint8_t b[8] = {(uint8_t)v,         (uint8_t)(v >> 8),  (uint8_t)(v >> 16), (uint8_t)(v >> 24),
                          (uint8_t)(v >> 32), (uint8_t)(v >> 40), (uint8_t)(v >> 48), (uint8_t)(v >> 56)};
    switch (n) {
    case 8: memcpy(d, b, 8); return;
    case 4: memcpy(d, b, 4); return;
    case 2: memcpy(d, b, 2); return;
    default:
        for (int i = 0; i < n; i++) d[i] = b[i];
    }
}

static int64_t floordiv64(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Ticks rounded to the unit of scale s, as a count of those units. */
static int64_t round_units(int64_t ticks, int s)
{
    int64_t u = (int64_t)pow10i(7 - s);
    return floordiv64(ticks + u / 2, u);
}

static int hexv(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int guid_bytes(const sim_val *v, uint8_t out[16])
{
    if (v->k == V_BIN && v->u.s.n == 16) {
        memcpy(out, v->u.s.p, 16);
        return 0;
    }
    if (v->k != V_STR) return -1;
    const char *s = v->u.s.p;
    size_t n = v->u.s.n;
    if (n == 38 && s[0] == '{' && s[37] == '}') { s++; n -= 2; }
    if (n != 36) return -1;
    uint8_t b[16];
    int j = 0;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-') return -1;
            continue;
        }
        int h = hexv(s[i]), l = hexv(s[i + 1]);
        if (h < 0 || l < 0) return -1;
        b[j++] = (uint8_t)(h << 4 | l);
        i++;
    }
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int i = 0; i < 16; i++) out[i] = b[order[i]];
    return 0;
}

/* The data bytes of a non-string value (fixed, decimal, temporal, GUID); *n its length. */
static int raw_bytes(const mcdc_sim_rcol *c, const sim_val *v, uint8_t out[17], size_t *n)
{
    const sim_type *t = &c->type;
    int64_t i;
    double d;
    switch (t->k) {
    case ST_BIT:
        if (as_i64(v, &i)) return mismatch(c, v, "cannot be a bit");
        out[0] = i != 0;
        *n = 1;
        return 0;
    case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT: {
        if (as_i64(v, &i)) return mismatch(c, v, "is not an integer");
        int w = fixed_width(t->k);
        int64_t lo = w == 1 ? 0 : w == 2 ? INT16_MIN : w == 4 ? INT32_MIN : INT64_MIN;
        int64_t hi = w == 1 ? 255 : w == 2 ? INT16_MAX : w == 4 ? INT32_MAX : INT64_MAX;
        if (i < lo || i > hi) return mismatch(c, v, "is out of the type's range");
        le(out, (uint64_t)i, w);
        *n = (size_t)w;
        return 0;
    }
    case ST_REAL: case ST_FLOAT:
        if (as_double(v, &d)) return mismatch(c, v, "is not a number");
        if (t->k == ST_REAL) {
            float f = (float)d;
            uint32_t u;
            memcpy(&u, &f, 4);
            le(out, u, 4);
            *n = 4;
        } else {
            uint64_t u;
            memcpy(&u, &d, 8);
            le(out, u, 8);
            *n = 8;
        }
        return 0;
    case ST_MONEY: case ST_SMALLMONEY: {
        mcdc_int128 m;
        if (to_scaled(v, 4, &m)) return mismatch(c, v, "is not a number");
        if (t->k == ST_SMALLMONEY) {
            if (m < INT32_MIN || m > INT32_MAX) return mismatch(c, v, "is out of smallmoney's range");
            le(out, (uint64_t)(int64_t)m, 4);
            *n = 4;
        } else {
            if (m < INT64_MIN || m > INT64_MAX) return mismatch(c, v, "is out of money's range");
            uint64_t u = (uint64_t)(int64_t)m;
            le(out, u >> 32, 4);
            le(out + 4, u & 0xFFFFFFFFu, 4);
            *n = 8;
        }
        return 0;
    }
    case ST_DECIMAL: case ST_NUMERIC: {
        int p = dec_prec(t), s = t->scale >= 0 && t->scale <= p ? t->scale : 0;
        mcdc_int128 m;
        if (to_scaled(v, s, &m)) return mismatch(c, v, "is not a number");
        bool neg = m < 0;
        unsigned __int128 mag = neg ? (unsigned __int128)(-(m + 1)) + 1 : (unsigned __int128)m;
        if (mag >= (unsigned __int128)pow10i(p)) return mismatch(c, v, "has more digits than the precision");
        int nb = dec_bytes(p);
        out[0] = neg ? 0 : 1;
        for (int k = 0; k < nb - 1; k++) out[1 + k] = (uint8_t)(mag >> (8 * k));
        *n = (size_t)nb;
        return 0;
    }
    case ST_DATE: {
        int64_t days;
        if (v->k == V_DATE) days = v->u.i;
        else if (v->k == V_DT) days = floordiv64(v->u.i, TICKS_PER_DAY);
        else return mismatch(c, v, "is not a date");
        days += TDS_DAYS_0001_TO_1970;
        if (days < 0 || days > 3652058) return mismatch(c, v, "is out of date's range");
        le(out, (uint64_t)days, 3);
        *n = 3;
        return 0;
    }
    case ST_TIME: {
        if (v->k != V_TIME) return mismatch(c, v, "is not a time");
        int s = tscale(t);
        int64_t u = round_units(v->u.i, s), day = (int64_t)pow10i(s) * 86400;
        if (u >= day) u = day - 1;
        if (u < 0) u = 0;
        int nb = time_bytes(s);
        le(out, (uint64_t)u, nb);
        *n = (size_t)nb;
        return 0;
    }
    case ST_DATETIME2: case ST_DATETIMEOFFSET: {
        int64_t ticks;
        if (t->k == ST_DATETIME2 && v->k == V_DT) ticks = v->u.i;
        else if (t->k == ST_DATETIMEOFFSET && v->k == V_DTO) ticks = v->u.i;
        else if (v->k == V_DATE) ticks = v->u.i * TICKS_PER_DAY;
        else return mismatch(c, v, "is not a date and time");
        int s = tscale(t);
        int64_t per_day = (int64_t)pow10i(s) * 86400;
        int64_t u = round_units(ticks, s);
        int64_t days = floordiv64(u, per_day), tod = u - days * per_day;
        days += TDS_DAYS_0001_TO_1970;
        if (days < 0 || days > 3652058) return mismatch(c, v, "is out of the type's range");
        int nb = time_bytes(s);
        le(out, (uint64_t)tod, nb);
        le(out + nb, (uint64_t)days, 3);
        *n = (size_t)nb + 3;
        if (t->k == ST_DATETIMEOFFSET) {
            le(out + nb + 3, (uint64_t)(int64_t)v->off, 2);
            *n += 2;
        }
        return 0;
    }
    case ST_DATETIME: case ST_SMALLDATETIME: {
        int64_t ticks;
        if (v->k == V_DT) ticks = v->u.i;
        else if (v->k == V_DATE) ticks = v->u.i * TICKS_PER_DAY;
        else return mismatch(c, v, "is not a date and time");
        int64_t days = floordiv64(ticks, TICKS_PER_DAY), tod = ticks - days * TICKS_PER_DAY;
        days += TDS_DAYS_1900_TO_1970;
        if (t->k == ST_DATETIME) {
            int64_t f = (tod * 3 + 50000) / 100000; /* 1/300 s */
            if (f >= INT64_C(25920000)) { f = 0; days++; }
            if (days < -53690 || days > 2958463) return mismatch(c, v, "is out of datetime's range");
            le(out, (uint64_t)days, 4);
            le(out + 4, (uint64_t)f, 4);
            *n = 8;
        } else {
            int64_t m = (tod + 30 * TICKS_PER_SEC) / (60 * TICKS_PER_SEC);
            if (m >= 1440) { m = 0; days++; }
            if (days < 0 || days > 65535) return mismatch(c, v, "is out of smalldatetime's range");
            le(out, (uint64_t)days, 2);
            le(out + 2, (uint64_t)m, 2);
            *n = 4;
        }
        return 0;
    }
    case ST_UNIQUEIDENTIFIER:
        if (guid_bytes(v, out)) return mismatch(c, v, "is not a uniqueidentifier");
        *n = 16;
        return 0;
    default:
        return mismatch(c, v, "is not a fixed-width value");
    }
}

/* ---- strings ---------------------------------------------------------------------------------- */

static bool is_wide(sim_tkind k)
{
    return k == ST_NCHAR || k == ST_NVARCHAR || k == ST_NTEXT || k == ST_XML;
}


/* Append a string value in the column's encoding (no length). */
static int put_string(tds_wbuf *w, const mcdc_sim_rcol *c, const sim_val *v)
{
    sim_tkind k = c->type.k;
    if (is_binary(k)) {
        if (v->k != V_BIN && v->k != V_STR) return mismatch(c, v, "is not binary");
        tds_w_put(w, v->u.s.p, v->u.s.n);
        return 0;
    }
    if (v->k != V_STR) return mismatch(c, v, "is not a string");
    if (is_wide(k)) tds_utf8_to_utf16(w, v->u.s.p, v->u.s.n);
    else tds_utf8_to_cp1252(w, v->u.s.p, v->u.s.n);
    return 0;
}

static int put_plp(tds_wbuf *w, const mcdc_sim_rcol *c, const sim_val *v)
{
    if (v->k == V_NULL) {
        tds_w_u64(w, UINT64_MAX);
        return 0;
    }
    size_t at = w->len;
    tds_w_u64(w, 0);
    size_t start = w->len;
    int rc = put_string(w, c, v);
    if (rc) return rc;
    if (w->err) return w->err;
    size_t total = w->len - start;
    tds_w_patch_u32(w, at, (uint32_t)total);
    tds_w_patch_u32(w, at + 4, (uint32_t)((uint64_t)total >> 32));
    /* insert a 4-byte chunk length before each chunk: grow, then move chunks back to front */
    size_t chunks = total ? (total + TDS_PLP_CHUNK - 1) / TDS_PLP_CHUNK : 0;
    if (!tds_w_reserve(w, chunks * 4 + 4)) return w->err;
    size_t src_end = start + total, dst_end = w->len - 4;
    w->p[w->len - 4] = w->p[w->len - 3] = w->p[w->len - 2] = w->p[w->len - 1] = 0; /* terminator */
    for (size_t ci = chunks; ci-- > 0;) {
        size_t off = ci * TDS_PLP_CHUNK, len = total - off < TDS_PLP_CHUNK ? total - off : TDS_PLP_CHUNK;
        size_t src = start + off;
        dst_end -= len;
        memmove(w->p + dst_end, w->p + src, len);
        dst_end -= 4;
        le(w->p + dst_end, len, 4);
        (void)src_end;
    }
    return 0;
}

static int put_short_string(tds_wbuf *w, const mcdc_sim_rcol *c, const sim_val *v)
{
    if (v->k == V_NULL) {
        tds_w_u16(w, 0xFFFF);
        return 0;
    }
    if (v->k == V_STR || v->k == V_BIN) { /* in place when the longest encoding fits */
        size_t most = is_wide(c->type.k) ? v->u.s.n * 2 : v->u.s.n;
        uint8_t *d = most <= 8000 ? room(w, 2 + most) : NULL;
        if (d) {
            size_t at = w->len;
            d[0] = d[1] = 0;
            w->len += 2;
            int rc = put_string(w, c, v);
            if (rc) return rc;
            tds_w_patch_u16(w, at, (uint16_t)(w->len - at - 2));
            return 0;
        }
    }
    size_t at = w->len;
    tds_w_u16(w, 0);
    int rc = put_string(w, c, v);
    if (rc) return rc;
    size_t n = w->len - at - 2;
    if (n > 8000 && !w->err) return mismatch(c, v, "is longer than 8000 bytes");
    tds_w_patch_u16(w, at, (uint16_t)n);
    return 0;
}

static int put_text(tds_wbuf *w, const mcdc_sim_rcol *c, const sim_val *v)
{
    if (v->k == V_NULL) {
        tds_w_u8(w, 0);
        return 0;
    }
    static const uint8_t ptr[16] = {0x64, 0x75, 0x6D, 0x6D, 0x79, 0x20, 0x74, 0x65,
                                    0x78, 0x74, 0x70, 0x74, 0x72, 0x00, 0x00, 0x00};
    tds_w_u8(w, 16);
    tds_w_put(w, ptr, 16);
    tds_w_zero(w, 8); /* timestamp */
    size_t at = w->len;
    tds_w_u32(w, 0);
    int rc = put_string(w, c, v);
    if (rc) return rc;
    tds_w_patch_u32(w, at, (uint32_t)(w->len - at - 4));
    return 0;
}

/* ---- sql_variant ---------------------------------------------------------------------------- */

static int put_variant(tds_wbuf *w, const mcdc_sim_rcol *c, const sim_val *v)
{
    if (v->k == V_NULL) {
        tds_w_u32(w, 0);
        return 0;
    }
    const sim_type *t = &c->type;
    size_t at = w->len;
    tds_w_u32(w, 0);
    int rc = 0;
    if (fixed_width(t->k)) {
        uint8_t b[17];
        size_t n;
        if ((rc = raw_bytes(c, v, b, &n))) return rc;
        tds_w_u8(w, fixed_type(t->k));
        tds_w_u8(w, 0);
        tds_w_put(w, b, n);
    } else {
        switch (t->k) {
        case ST_DECIMAL: case ST_NUMERIC: case ST_DATE: case ST_TIME: case ST_DATETIME2:
        case ST_DATETIMEOFFSET: case ST_UNIQUEIDENTIFIER: {
            uint8_t b[17];
            size_t n;
            if ((rc = raw_bytes(c, v, b, &n))) return rc;
            if (t->k == ST_DECIMAL || t->k == ST_NUMERIC) {
                int p = dec_prec(t);
                tds_w_u8(w, t->k == ST_DECIMAL ? T_DECIMALN : T_NUMERICN);
                tds_w_u8(w, 2);
                tds_w_u8(w, (uint8_t)p);
                tds_w_u8(w, (uint8_t)(t->scale >= 0 && t->scale <= p ? t->scale : 0));
            } else if (t->k == ST_DATE || t->k == ST_UNIQUEIDENTIFIER) {
                tds_w_u8(w, t->k == ST_DATE ? T_DATEN : T_GUID);
                tds_w_u8(w, 0);
            } else {
                tds_w_u8(w, t->k == ST_TIME ? T_TIMEN : t->k == ST_DATETIME2 ? T_DATETIME2N : T_DTON);
                tds_w_u8(w, 1);
                tds_w_u8(w, (uint8_t)tscale(t));
            }
            tds_w_put(w, b, n);
            break;
        }
        case ST_CHAR: case ST_VARCHAR: case ST_NCHAR: case ST_NVARCHAR: case ST_TEXT: case ST_NTEXT: {
            bool wide = is_wide(t->k);
            bool fixed = t->k == ST_CHAR || t->k == ST_NCHAR;
            tds_w_u8(w, wide ? (fixed ? T_NCHAR : T_NVARCHAR) : (fixed ? T_BIGCHAR : T_BIGVARCHR));
            tds_w_u8(w, 7);
            tds_w_put(w, tds_collation, 5);
            sim_type st = *t;
            if (st.len < 0 || st.len > (wide ? 4000 : 8000)) st.len = wide ? 4000 : 8000;
            tds_w_u16(w, str_maxlen(&st));
            if ((rc = put_string(w, c, v))) return rc;
            break;
        }
        case ST_BINARY: case ST_VARBINARY:
            tds_w_u8(w, t->k == ST_BINARY ? T_BIGBINARY : T_BIGVARBIN);
            tds_w_u8(w, 2);
            tds_w_u16(w, 8000);
            if ((rc = put_string(w, c, v))) return rc;
            break;
        default:
            return mismatch(c, v, "cannot travel in a sql_variant");
        }
    }
    size_t n = w->len - at - 4;
    if (n > 8009 + 2 && !w->err) return mismatch(c, v, "is too long for a sql_variant");
    tds_w_patch_u32(w, at, (uint32_t)n);
    return 0;
}

/* ---- values ------------------------------------------------------------------------------------ */

int tds_value(tds_wbuf *w, const mcdc_sim_rcol *c, const sim_val *v)
{
    const sim_type *t = &c->type;
    if (c->is_variant) return put_variant(w, c, v);
    int fw = fixed_width(t->k);
    if (fw) {
        if (v->k == V_NULL) {
            if (!c->nullable) return mismatch(c, v, "in a NOT NULL column");
            tds_w_u8(w, 0);
            return 0;
        }
        size_t h = c->nullable ? 1 : 0, n;
        uint8_t *d = room(w, 1 + 17), b[17];
        int rc = raw_bytes(c, v, d ? d + h : b, &n);
        if (rc) return rc;
        if (d) { /* written in place */
            if (h) d[0] = (uint8_t)n;
            w->len += h + n;
            return 0;
        }
        if (c->nullable) tds_w_u8(w, (uint8_t)n);
        tds_w_put(w, b, n);
        return 0;
    }
    switch (t->k) {
    case ST_DECIMAL: case ST_NUMERIC: case ST_DATE: case ST_TIME: case ST_DATETIME2: case ST_DATETIMEOFFSET:
    case ST_UNIQUEIDENTIFIER: {
        if (v->k == V_NULL) {
            tds_w_u8(w, 0);
            return 0;
        }
        size_t n;
        uint8_t *d = room(w, 1 + 17), b[17];
        int rc = raw_bytes(c, v, d ? d + 1 : b, &n);
        if (rc) return rc;
        if (d) {
            d[0] = (uint8_t)n;
            w->len += 1 + n;
            return 0;
        }
        tds_w_u8(w, (uint8_t)n);
        tds_w_put(w, b, n);
        return 0;
    }
    case ST_TEXT: case ST_NTEXT: case ST_IMAGE:
        return put_text(w, c, v);
    default:
        return is_plp(t) ? put_plp(w, c, v) : put_short_string(w, c, v);
    }
}

/* ---- tokens with values ------------------------------------------------------------------------ */

static uint16_t col_flags(const mcdc_sim_rcol *c)
{
    return (uint16_t)((c->nullable ? 0x0001 : 0) | 0x0008); /* fNullable; usUpdateable = unknown */
}

int tds_colmetadata(tds_wbuf *w, const mcdc_sim_rcol *cols, int n)
{
    tds_w_u8(w, TDS_TOK_COLMETADATA);
    if (n <= 0) {
        tds_w_u16(w, 0xFFFF);
        return w->err;
    }
    tds_w_u16(w, (uint16_t)n);
    for (int i = 0; i < n; i++) {
        tds_w_u32(w, cols[i].type.k == ST_ROWVERSION ? 0x50 : 0); /* UserType: 80 marks a timestamp column */
        tds_w_u16(w, col_flags(&cols[i]));
        tds_type_info(w, &cols[i], true);
        tds_w_bvarchar(w, cols[i].name ? cols[i].name : "");
    }
    return w->err;
}

int tds_row(tds_wbuf *w, const mcdc_sim_rcol *cols, const sim_val *vals, int n)
{
    bool any_null = false;
    for (int i = 0; i < n && !any_null; i++) any_null = vals[i].k == V_NULL;
    if (!any_null) {
        tds_w_u8(w, TDS_TOK_ROW);
        for (int i = 0; i < n; i++) {
            int rc = tds_value(w, &cols[i], &vals[i]);
            if (rc) return rc;
        }
        return w->err;
    }
    tds_w_u8(w, TDS_TOK_NBCROW);
    size_t nb = ((size_t)n + 7) / 8;
    uint8_t *bm = tds_w_reserve(w, nb);
    if (!bm) return w->err;
    size_t at = (size_t)(bm - w->p);
    memset(bm, 0, nb);
    for (int i = 0; i < n; i++) {
        if (vals[i].k == V_NULL) {
            w->p[at + (size_t)i / 8] |= (uint8_t)(1u << (i % 8));
            continue;
        }
        int rc = tds_value(w, &cols[i], &vals[i]);
        if (rc) return rc;
    }
    return w->err;
}

/* ---- rows by a plan ------------------------------------------------------------------------------ */

enum { TDS_PLAN_VALUE, TDS_PLAN_INT, TDS_PLAN_FLOAT, TDS_PLAN_NARROW, TDS_PLAN_WIDE, TDS_PLAN_BINARY };

void tds_row_plan(const mcdc_sim_rcol *cols, int n, tds_colplan *plan)
{
    for (int i = 0; i < n; i++) {
        const mcdc_sim_rcol *c = &cols[i];
        tds_colplan *p = &plan[i];
        memset(p, 0, sizeof *p);
        p->nullable = c->nullable;
        if (c->is_variant) continue; /* TDS_PLAN_VALUE: tds_value */
        switch (c->type.k) {
        case ST_TINYINT: case ST_SMALLINT: case ST_INT: case ST_BIGINT: {
            int w = fixed_width(c->type.k);
            p->kind = TDS_PLAN_INT;
            p->width = (uint8_t)w;
            p->lo = w == 1 ? 0 : w == 2 ? INT16_MIN : w == 4 ? INT32_MIN : INT64_MIN;
            p->hi = w == 1 ? 255 : w == 2 ? INT16_MAX : w == 4 ? INT32_MAX : INT64_MAX;
            break;
        }
        case ST_FLOAT: p->kind = TDS_PLAN_FLOAT; p->width = 8; break;
        case ST_CHAR: case ST_VARCHAR: if (!is_plp(&c->type)) p->kind = TDS_PLAN_NARROW; break;
        case ST_NCHAR: case ST_NVARCHAR: if (!is_plp(&c->type)) p->kind = TDS_PLAN_WIDE; break;
        case ST_BINARY: case ST_VARBINARY: case ST_ROWVERSION: if (!is_plp(&c->type)) p->kind = TDS_PLAN_BINARY; break;
        default: break;
        }
    }
}

/* One non-NULL value by its plan, in place; 1 when the plan does not cover it (another kind
 * of value, one out of range, too long or without room), for tds_value to write or refuse. */
static inline int put_planned(tds_wbuf *w, const tds_colplan *p, const sim_val *v)
{
    size_t h = p->nullable ? 1 : 0, n;
    uint8_t *d;
    switch (p->kind) {
    case TDS_PLAN_INT:
        if (v->k != V_INT || v->u.i < p->lo || v->u.i > p->hi || !(d = room(w, 9))) return 1;
        d[0] = p->width;
        le(d + h, (uint64_t)v->u.i, p->width);
        w->len += h + p->width;
        return 0;
    case TDS_PLAN_FLOAT: {
        if (v->k != V_FLT || !(d = room(w, 9))) return 1;
        uint64_t u;
        memcpy(&u, &v->u.d, 8);
        d[0] = 8;
        le(d + h, u, 8);
        w->len += h + 8;
        return 0;
    }
    case TDS_PLAN_NARROW: case TDS_PLAN_WIDE: case TDS_PLAN_BINARY: {
        bool bin = p->kind == TDS_PLAN_BINARY, wide = p->kind == TDS_PLAN_WIDE;
        if (!(v->k == V_STR || (bin && v->k == V_BIN)) || v->u.s.n > (wide ? 4000 : 8000) ||
            !(d = room(w, 2 + (wide ? 2 : 1) * v->u.s.n)))
            return 1;
        if (bin) {
            if (v->u.s.n) memcpy(d + 2, v->u.s.p, v->u.s.n);
            n = v->u.s.n;
        } else {
            n = wide ? mcdc_text_utf16le(d + 2, v->u.s.p, v->u.s.n) : mcdc_text_cp1252(d + 2, v->u.s.p, v->u.s.n);
        }
        d[0] = (uint8_t)n;
        d[1] = (uint8_t)(n >> 8);
        w->len += 2 + n;
        return 0;
    }
    default:
        return 1;
    }
}

int tds_row_planned(tds_wbuf *w, const mcdc_sim_rcol *cols, const tds_colplan *plan, const sim_val *vals, int n)
{
    bool any_null = false;
    for (int i = 0; i < n && !any_null; i++) any_null = vals[i].k == V_NULL;
    tds_w_u8(w, any_null ? TDS_TOK_NBCROW : TDS_TOK_ROW);
    if (any_null) { /* NBCROW: the NULL bitmap, then the other values */
        size_t nb = ((size_t)n + 7) / 8;
        uint8_t *bm = tds_w_reserve(w, nb);
        if (!bm) return w->err;
        memset(bm, 0, nb);
        for (int i = 0; i < n; i++)
            if (vals[i].k == V_NULL) bm[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    for (int i = 0; i < n; i++) {
        if (vals[i].k == V_NULL) continue; /* in the bitmap */
        if (put_planned(w, &plan[i], &vals[i]) == 0) continue;
        int rc = tds_value(w, &cols[i], &vals[i]);
        if (rc) return rc;
    }
    return w->err;
}

int tds_returnvalue(tds_wbuf *w, int ordinal, const char *name, const mcdc_sim_rcol *col, const sim_val *v)
{
    tds_w_u8(w, TDS_TOK_RETURNVALUE);
    tds_w_u16(w, (uint16_t)ordinal);
    tds_w_bvarchar(w, name ? name : "");
    tds_w_u8(w, 0x01); /* an output parameter */
    tds_w_u32(w, 0);
    mcdc_sim_rcol c = *col;
    c.nullable = true; /* an output parameter may always be NULL */
    tds_w_u16(w, col_flags(&c));
    tds_type_info(w, &c, false);
    int rc = tds_value(w, &c, v);
    return rc ? rc : w->err;
}
