/*
 * delta/variant.c: a Variant value (the variantType feature; Parquet's VariantEncoding.md)
 * as JSON text, for readers of tables with variant columns.
 *
 * A variant is two binaries: metadata (a dictionary of field names) and value (a tree of
 * primitives, short strings, objects and arrays). Byte layout, as decoded here:
 *
 *   metadata  offset  size           meaning
 *             0       1              header: version (bits 0-3, must be 1), sorted (bit 4),
 *                                    offset_size - 1 (bits 6-7)
 *             1       offset_size    dictionary_size n, little-endian
 *             ...     offset_size    n + 1 offsets into the bytes that follow
 *             ...                    the UTF-8 names
 *   value     0       1              basic_type (bits 0-1) | value_header << 2
 *             1       ...            value_data (per basic type: primitive, short string,
 *                                    object: count, field ids, offsets, values; array:
 *                                    count, offsets, values)
 *
 * Worked example: metadata 01 01 00 01 61 (version 1, one name "a") with value
 * 02 01 00 00 02 0C 01 is the object {"a": 1}: basic type 2, one element, field id 0,
 * offsets 0 and 2, then 0C 01 (primitive int8, 1).
 *
 * JSON text: null, booleans, integers and decimals as numbers (decimals with exactly their
 * scale's digits), floats and doubles as the shortest text that reads back (NaN and the
 * infinities as strings), strings as strings, binary as "0x" + uppercase hex, date
 * "YYYY-MM-DD", timestamps as architecture §7 prints them (ntz without a zone, with Z
 * otherwise), time "HH:MM:SS.ffffff", uuid in 8-4-4-4-12 form; object keys in the order the
 * value lists them (sorted by name). Every offset is checked against its buffer; depth is
 * capped. Never allocates beyond the output buffer.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "delta/internal.h"
#include "mcdc/time.h"

#define MAX_VARIANT_DEPTH 128

typedef struct vmeta {
    const uint8_t *p;
    size_t         len;
    size_t         n;       /* dictionary size */
    size_t         osz;     /* offset size */
    size_t         strings; /* where the names start */
} vmeta;

static uint64_t le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static int bad(const char *why)
{
    return mcdc_error_set(MCDC_ECORRUPT, "variant: %s", why);
}

/* Well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF): the
 * encoding requires it of every string, and JSON text needs it. */
static bool utf8_ok(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint8_t c = p[i];
        size_t k = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 9;
        if (k == 9 || k > n - i - 1 || (k == 1 && c < 0xC2))
            return false;
        uint32_t cp = k == 0 ? c : k == 1 ? c & 0x1F : k == 2 ? c & 0x0F : c & 0x07;
        for (size_t j = 1; j <= k; j++) {
            if ((p[i + j] & 0xC0) != 0x80)
                return false;
            cp = cp << 6 | (p[i + j] & 0x3F);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return false;
        i += k + 1;
    }
    return true;
}

static int name_at(const vmeta *m, uint64_t id, const char **s, size_t *len)
{
    if (id >= m->n)
        return bad("field id past the metadata dictionary");
    uint64_t a = le(m->p + 1 + m->osz * (1 + id), m->osz);
    uint64_t b = le(m->p + 1 + m->osz * (2 + id), m->osz);
    if (a > b || m->strings + b > m->len)
        return bad("dictionary offsets out of range");
    *s = (const char *)m->p + m->strings + a;
    *len = (size_t)(b - a);
    return utf8_ok((const uint8_t *)*s, *len) ? 0 : bad("a field name is not UTF-8");
}

static int put_double(mcdc_buf *out, double d, bool is_float)
{
    if (isnan(d))
        return mcdc_buf_puts(out, "\"NaN\"");
    if (isinf(d))
        return mcdc_buf_puts(out, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    char t[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, d);
        if (is_float ? strtof(t, NULL) == (float)d : strtod(t, NULL) == d)
            break;
    }
    return mcdc_buf_puts(out, t);
}

static int put_time(mcdc_buf *out, int64_t v, int64_t per_sec, int digits)
{
    int64_t s = v / per_sec, frac = v % per_sec;
    if (v < 0 || s >= 86400)
        return bad("time of day out of range");
    return mcdc_buf_printf(out, "\"%02d:%02d:%02d.%0*lld\"", (int)(s / 3600), (int)(s / 60 % 60),
                           (int)(s % 60), digits, (long long)frac);
}

static int value_json(mcdc_buf *out, const vmeta *m, const uint8_t *v, size_t len, int depth);

static int primitive(mcdc_buf *out, int type, const uint8_t *d, size_t len)
{
    static const signed char width[] = { 0, 0, 0, 1, 2, 4, 8, 8, -1, -1, -1, 4, 8, 8, 4, -1, -1,
                                         8, 8, 8, 16 };
    if (type < 0 || type >= (int)sizeof width)
        return mcdc_error_set(MCDC_EUNSUPPORTED, "variant: primitive type %d, which this build "
                              "does not read", type);
    if (width[type] > 0 && len < (size_t)width[type])
        return bad("primitive value truncated");
    mcdc_column col = { NULL, MCDC_TYPE_STRING, 0, 0, true };
    mcdc_value x = { 0 };
    switch (type) {
    case 0: return mcdc_buf_puts(out, "null");
    case 1: return mcdc_buf_puts(out, "true");
    case 2: return mcdc_buf_puts(out, "false");
    case 3: return mcdc_buf_printf(out, "%d", (int)(int8_t)d[0]);
    case 4: return mcdc_buf_printf(out, "%d", (int)(int16_t)le(d, 2));
    case 5: return mcdc_buf_printf(out, "%d", (int)(int32_t)le(d, 4));
    case 6: return mcdc_buf_printf(out, "%lld", (long long)(int64_t)le(d, 8));
    case 7: {
        double f;
        uint64_t u = le(d, 8);
        memcpy(&f, &u, 8);
        return put_double(out, f, false);
    }
    case 14: {
        float f;
        uint32_t u = (uint32_t)le(d, 4);
        memcpy(&f, &u, 4);
        return put_double(out, (double)f, true);
    }
    case 8:
    case 9:
    case 10: {
        size_t w = type == 8 ? 4 : type == 9 ? 8 : 16;
        if (len < 1 + w || d[0] > 38)
            return bad("decimal truncated or scale above 38");
        unsigned __int128 u = (d[w] & 0x80) ? ~(unsigned __int128)0 : 0;
        for (size_t i = w; i-- > 0;)
            u = u << 8 | d[1 + i];
        mcdc_int128 x10 = (mcdc_int128)u, lim = 1;
        for (int k = 0; k < 38; k++)
            lim *= 10;
        if (x10 >= lim || x10 <= -lim)
            return bad("decimal of more than 38 digits");
        char t[48];
        return mcdc_buf_puts(out, mcdc_decimal_format(t, (mcdc_int128)u, d[0]));
    }
    case 11:
        col.type = MCDC_TYPE_DATE;
        x.v.i = (int32_t)le(d, 4);
        return mcdc_value_to_json(out, &col, &x);
    case 12:
    case 13:
    case 18:
    case 19:
        col.type = type == 12 || type == 18 ? MCDC_TYPE_TIMESTAMP : MCDC_TYPE_TIMESTAMP_NTZ;
        x.v.i = (int64_t)le(d, 8);
        if (type >= 18) /* nanoseconds: microseconds as the value model holds them */
            x.v.i = x.v.i / 1000 - (x.v.i % 1000 < 0);
        return mcdc_value_to_json(out, &col, &x);
    case 17: return put_time(out, (int64_t)le(d, 8), 1000000, 6);
    case 15:
    case 16: {
        if (len < 4 || le(d, 4) > len - 4)
            return bad("binary or string length past the value");
        size_t n = (size_t)le(d, 4);
        if (type == 16 && !utf8_ok(d + 4, n))
            return bad("a string is not UTF-8");
        x.v.s.ptr = (const char *)d + 4;
        x.v.s.len = n;
        col.type = type == 15 ? MCDC_TYPE_BINARY : MCDC_TYPE_STRING;
        return mcdc_value_to_json(out, &col, &x);
    }
    case 20: {
        int rc = mcdc_buf_putc(out, '"');
        for (int i = 0; rc == 0 && i < 16; i++)
            rc = mcdc_buf_printf(out, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", d[i]);
        return rc ? rc : mcdc_buf_putc(out, '"');
    }
    }
    return bad("unknown primitive");
}

/* Objects (@p object) and arrays: count, [field ids], offsets, values. */
static int container(mcdc_buf *out, const vmeta *m, const uint8_t *v, size_t len, int hdr,
                     bool object, int depth)
{
    size_t off_sz = (size_t)(hdr & 3) + 1;
    size_t id_sz = object ? (size_t)((hdr >> 2) & 3) + 1 : 0;
    bool large = object ? (hdr >> 4) & 1 : (hdr >> 2) & 1;
    size_t cnt_sz = large ? 4 : 1;
    if (len < 1 + cnt_sz)
        return bad("element count truncated");
    uint64_t n = le(v + 1, cnt_sz);
    size_t head = 1 + cnt_sz;
    if (n > len || (len - head) / (id_sz + off_sz) < n + 1)
        return bad("element list past the value");
    const uint8_t *ids = v + head, *offs = ids + n * id_sz, *vals = offs + (n + 1) * off_sz;
    size_t vals_len = len - (size_t)(vals - v);
    if (le(offs + n * off_sz, off_sz) > vals_len)
        return bad("last offset past the value");
    int rc = mcdc_buf_putc(out, object ? '{' : '[');
    for (uint64_t i = 0; rc == 0 && i < n; i++) {
        uint64_t a = le(offs + i * off_sz, off_sz);
        if (a >= vals_len)
            return bad("element offset past the value");
        if (i)
            rc = mcdc_buf_putc(out, ',');
        if (rc == 0 && object) {
            const char *s = NULL;
            size_t sl = 0;
            rc = name_at(m, le(ids + i * id_sz, id_sz), &s, &sl);
            if (rc == 0)
                rc = mcdc_json_quote(out, s, sl);
            if (rc == 0)
                rc = mcdc_buf_putc(out, ':');
        }
        if (rc == 0)
            rc = value_json(out, m, vals + a, vals_len - (size_t)a, depth + 1);
    }
    return rc ? rc : mcdc_buf_putc(out, object ? '}' : ']');
}

static int value_json(mcdc_buf *out, const vmeta *m, const uint8_t *v, size_t len, int depth)
{
    if (depth > MAX_VARIANT_DEPTH)
        return bad("nested too deep");
    if (len < 1)
        return bad("empty value");
    int basic = v[0] & 3, hdr = v[0] >> 2;
    switch (basic) {
    case 0:
        return primitive(out, hdr, v + 1, len - 1);
    case 1: {
        if ((size_t)hdr > len - 1)
            return bad("short string past the value");
        if (!utf8_ok(v + 1, (size_t)hdr))
            return bad("a string is not UTF-8");
        mcdc_column col = { NULL, MCDC_TYPE_STRING, 0, 0, true };
        mcdc_value x = { 0 };
        x.v.s.ptr = (const char *)v + 1;
        x.v.s.len = (size_t)hdr;
        return mcdc_value_to_json(out, &col, &x);
    }
    default:
        return container(out, m, v, len, hdr, basic == 2, depth);
    }
}

int mcdc_delta__variant_to_json(mcdc_buf *out, const uint8_t *meta, size_t meta_len,
                                const uint8_t *value, size_t value_len)
{
    vmeta m = { meta, meta_len, 0, 0, 0 };
    if (meta_len < 1 || (meta[0] & 0x0F) != 1)
        return mcdc_error_set(MCDC_EUNSUPPORTED, "variant: metadata version %d, this build reads 1",
                              meta_len ? meta[0] & 0x0F : -1);
    m.osz = (size_t)(meta[0] >> 6) + 1;
    if (meta_len < 1 + m.osz)
        return bad("metadata truncated");
    uint64_t n = le(meta + 1, m.osz);
    if (n > meta_len || (meta_len - 1) / m.osz < n + 2)
        return bad("metadata dictionary past its end");
    m.n = (size_t)n;
    m.strings = 1 + m.osz * (m.n + 2);
    return value_json(out, &m, value, value_len, 0);
}
