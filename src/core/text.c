/*
 * core/text.c: UTF-8 <-> UTF-16LE and UTF-8 <-> CP1252, the encodings of mcdc/text.h, for
 * the TDS server's wire, the T-SQL engine's HASHBYTES, DATALENGTH and varchar conversions,
 * and the key hash of reconcile (one decoder, so the three never disagree on a character).
 *
 * and the SQL Server source's reading of nvarchar and varchar text (the decoders: faster than
 * iconv's two steps through UCS-4, ADR 0052).
 *
 * Guarantees: never reads past n bytes; never fails (see the header for what malformed text
 * and characters CP1252 lacks become). ASCII runs take a fast path.
 */
#include <string.h>

#include "mcdc/text.h"

/* CP1252 0x80..0x9F -> Unicode (the rest of CP1252 is Latin-1). */
static const uint16_t cp1252_hi[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
    0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
    0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

int32_t mcdc_text_utf8_next(const char *s, size_t n, size_t *used)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char c = p[0];
    *used = 1;
    if (c < 0x80) return c;
    int k;
    uint32_t cp, min;
    if ((c & 0xE0) == 0xC0) { k = 1; cp = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { k = 2; cp = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { k = 3; cp = c & 0x07; min = 0x10000; }
    else return -1;
    if ((size_t)k >= n) return -1;
    for (int i = 1; i <= k; i++) {
        if ((p[i] & 0xC0) != 0x80) return -1;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    *used = (size_t)k + 1;
    return (int32_t)cp;
}

size_t mcdc_text_utf8_put(uint8_t *b, uint32_t cp)
{
    if (cp < 0x80) { b[0] = (uint8_t)cp; return 1; }
    if (cp < 0x800) { b[0] = (uint8_t)(0xC0 | cp >> 6); b[1] = (uint8_t)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | cp >> 12); b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (uint8_t)(0xF0 | cp >> 18); b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

size_t mcdc_text_utf16_units(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t units = 0, i = 0;
    while (i < n) {
        if (p[i] < 0x80) { i++; units++; continue; }
        size_t used;
        int32_t cp = mcdc_text_utf8_next(s + i, n - i, &used);
        i += used;
        units += cp >= 0x10000 ? 2 : 1;
    }
    return units;
}

/* Eight ASCII bytes at p as eight UTF-16LE units (the caller checked no top bit is set). */
static inline void widen8(uint8_t *out, const unsigned char *p)
{
    for (int j = 0; j < 8; j++) {
        out[2 * j] = p[j];
        out[2 * j + 1] = 0;
    }
}

/* True when none of the 8 bytes at p has its top bit set. */
static inline bool ascii8(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return !(w & UINT64_C(0x8080808080808080));
}

size_t mcdc_text_utf16le(uint8_t *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t k = 0, i = 0;
    while (i < n) {
        if (i + 8 <= n && ascii8(p + i)) { /* an ASCII run, 8 bytes at a time */
            widen8(out + k, p + i);
            i += 8;
            k += 16;
            continue;
        }
        if (p[i] < 0x80) {
            out[k++] = p[i++];
            out[k++] = 0;
            continue;
        }
        size_t used;
        int32_t c = mcdc_text_utf8_next(s + i, n - i, &used);
        uint32_t cp = c < 0 ? 0xFFFD : (uint32_t)c;
        i += used;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            uint16_t hi = (uint16_t)(0xD800 | (cp >> 10)), lo = (uint16_t)(0xDC00 | (cp & 0x3FF));
            out[k++] = (uint8_t)hi; out[k++] = (uint8_t)(hi >> 8);
            out[k++] = (uint8_t)lo; out[k++] = (uint8_t)(lo >> 8);
        } else {
            out[k++] = (uint8_t)cp;
            out[k++] = (uint8_t)(cp >> 8);
        }
    }
    return k;
}

bool mcdc_text_cp1252_has(uint32_t cp)
{
    if (cp < 0x80 || (cp >= 0xA0 && cp <= 0xFF)) return true;
    for (int i = 0; i < 32; i++)
        if (cp1252_hi[i] == cp) return true;
    return false;
}

uint8_t mcdc_text_cp1252_byte(uint32_t cp)
{
    if (cp < 0x80 || (cp >= 0xA0 && cp <= 0xFF)) return (uint8_t)cp;
    for (int i = 0; i < 32; i++)
        if (cp1252_hi[i] == cp) return (uint8_t)(0x80 + i);
    return '?';
}

uint32_t mcdc_text_cp1252_cp(uint8_t b)
{
    return b >= 0x80 && b < 0xA0 ? cp1252_hi[b - 0x80] : b;
}

size_t mcdc_text_cp1252_len(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t out = 0, i = 0;
    while (i < n) {
        size_t used = 1;
        if (p[i] >= 0x80) mcdc_text_utf8_next(s + i, n - i, &used);
        i += used;
        out++;
    }
    return out;
}

size_t mcdc_text_cp1252(uint8_t *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t k = 0, i = 0;
    while (i < n) {
        if (i + 8 <= n && ascii8(p + i)) { /* ASCII is itself in CP1252: 8 bytes at a time */
            memcpy(out + k, p + i, 8);
            i += 8;
            k += 8;
            continue;
        }
        if (p[i] < 0x80) { out[k++] = p[i++]; continue; }
        size_t used;
        int32_t cp = mcdc_text_utf8_next(s + i, n - i, &used);
        i += used;
        out[k++] = cp < 0 ? '?' : mcdc_text_cp1252_byte((uint32_t)cp);
    }
    return k;
}

size_t mcdc_text_utf16_to_utf8(uint8_t *out, const uint16_t *u, size_t n)
{
    size_t k = 0, i = 0;
    while (i < n) {
        uint32_t c = u[i++];
        if (c < 0x80) {
            out[k++] = (uint8_t)c;
            continue;
        }
        if (c < 0x800) {
            out[k++] = (uint8_t)(0xC0 | c >> 6);
            out[k++] = (uint8_t)(0x80 | (c & 0x3F));
            continue;
        }
        if (c >= 0xD800 && c <= 0xDFFF) {
            if (c <= 0xDBFF && i < n && u[i] >= 0xDC00 && u[i] <= 0xDFFF) {
                k += mcdc_text_utf8_put(out + k, 0x10000 + ((c - 0xD800) << 10) + (uint32_t)(u[i] - 0xDC00));
                i++;
                continue;
            }
            c = 0xFFFD; /* unpaired */
        }
        out[k++] = (uint8_t)(0xE0 | c >> 12);
        out[k++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        out[k++] = (uint8_t)(0x80 | (c & 0x3F));
    }
    return k;
}

size_t mcdc_text_cp1252_to_utf8(uint8_t *out, const uint8_t *p, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0x80) out[k++] = p[i];
        else k += mcdc_text_utf8_put(out + k, mcdc_text_cp1252_cp(p[i]));
    }
    return k;
}
