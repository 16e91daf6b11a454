/*
 * source/sim/tds/text.c: the text encodings of the wire: UTF-8 (the engine's strings),
 * UTF-16LE (nvarchar, names, messages) and CP1252 (varchar in SQL_Latin1_General_CP1_CI_AS).
 *
 * Guarantees: never fails on bad input: invalid UTF-8 and lone surrogates become U+FFFD, and a
 * character CP1252 cannot hold becomes '?', as SQL Server converts nvarchar to varchar. The
 * five bytes CP1252 leaves undefined (0x81 0x8D 0x8F 0x90 0x9D) map to the C1 controls of the
 * same value, as Windows' table does.
 */
#include <string.h>

#include "source/sim/tds/tds_int.h"

/* CP1252 0x80..0x9F -> Unicode. */
static const uint16_t cp1252_hi[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
    0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
    0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

/* Decode one code point; *len gets the bytes used (>= 1). Invalid: U+FFFD. */
static uint32_t next_cp(const unsigned char *s, size_t n, size_t *len)
{
    unsigned char c = s[0];
    *len = 1;
    if (c < 0x80) return c;
    int k;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) { k = 1; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { k = 2; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { k = 3; cp = c & 0x07; min = 0x10000; }
    else return 0xFFFD;
    if ((size_t)k >= n) return 0xFFFD;
    for (int i = 1; i <= k; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0xFFFD;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
    *len = (size_t)k + 1;
    return cp;
}

size_t tds_utf8_to_utf16(tds_wbuf *w, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t units = 0, i = 0;
    /* ASCII runs are the common case: two bytes per character, written in one reserve */
    while (i < n) {
        size_t run = 0;
        while (i + run < n && p[i + run] < 0x80) run++;
        if (run) {
            uint8_t *d = tds_w_reserve(w, run * 2);
            if (!d) return units;
            for (size_t j = 0; j < run; j++) {
                d[2 * j] = p[i + j];
                d[2 * j + 1] = 0;
            }
            i += run;
            units += run;
            continue;
        }
        size_t len;
        uint32_t cp = next_cp(p + i, n - i, &len);
        i += len;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            tds_w_u16(w, (uint16_t)(0xD800 | (cp >> 10)));
            tds_w_u16(w, (uint16_t)(0xDC00 | (cp & 0x3FF)));
            units += 2;
        } else {
            tds_w_u16(w, (uint16_t)cp);
            units++;
        }
    }
    return units;
}

size_t tds_utf16_units(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t units = 0, i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
            i++;
            units++;
            continue;
        }
        size_t len;
        uint32_t cp = next_cp(p + i, n - i, &len);
        i += len;
        units += cp >= 0x10000 ? 2 : 1;
    }
    return units;
}

static uint8_t to_cp1252(uint32_t cp)
{
    if (cp < 0x80 || (cp >= 0xA0 && cp <= 0xFF)) return (uint8_t)cp;
    for (int i = 0; i < 32; i++)
        if (cp1252_hi[i] == cp) return (uint8_t)(0x80 + i);
    return '?';
}

size_t tds_utf8_to_cp1252(tds_wbuf *w, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t out = 0, i = 0;
    while (i < n) {
        size_t run = 0;
        while (i + run < n && p[i + run] < 0x80) run++;
        if (run) {
            tds_w_put(w, p + i, run);
            i += run;
            out += run;
            continue;
        }
        size_t len;
        uint32_t cp = next_cp(p + i, n - i, &len);
        i += len;
        tds_w_u8(w, to_cp1252(cp));
        out++;
    }
    return out;
}

size_t tds_cp1252_len(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t out = 0, i = 0;
    while (i < n) {
        size_t len = 1;
        if (p[i] >= 0x80) next_cp(p + i, n - i, &len);
        i += len;
        out++;
    }
    return out;
}

static void put_utf8(tds_wbuf *w, uint32_t cp)
{
    uint8_t b[4];
    size_t k;
    if (cp < 0x80) { b[0] = (uint8_t)cp; k = 1; }
    else if (cp < 0x800) { b[0] = (uint8_t)(0xC0 | cp >> 6); b[1] = (uint8_t)(0x80 | (cp & 0x3F)); k = 2; }
    else if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | cp >> 12); b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F)); k = 3;
    } else {
        b[0] = (uint8_t)(0xF0 | cp >> 18); b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (uint8_t)(0x80 | (cp & 0x3F)); k = 4;
    }
    tds_w_put(w, b, k);
}

void tds_utf16_to_utf8(tds_wbuf *w, const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i + 1 < n) {
        uint32_t u = (uint32_t)(p[i] | p[i + 1] << 8);
        i += 2;
        if (u < 0x80) {
            tds_w_u8(w, (uint8_t)u);
            continue;
        }
        if (u >= 0xD800 && u <= 0xDBFF && i + 1 < n) {
            uint32_t lo = (uint32_t)(p[i] | p[i + 1] << 8);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                i += 2;
                put_utf8(w, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                continue;
            }
        }
        put_utf8(w, (u >= 0xD800 && u <= 0xDFFF) ? 0xFFFD : u);
    }
}

void tds_cp1252_to_utf8(tds_wbuf *w, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t c = p[i];
        put_utf8(w, c >= 0x80 && c < 0xA0 ? cp1252_hi[c - 0x80] : c);
    }
}
