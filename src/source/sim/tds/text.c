/*
 * source/sim/tds/text.c: the text encodings of the wire (UTF-16LE for nvarchar, names and
 * messages; CP1252 for varchar in SQL_Latin1_General_CP1_CI_AS) appended to a tds_wbuf.
 *
 * The encodings themselves are core's (mcdc/text.h), shared with the T-SQL engine's
 * HASHBYTES and DATALENGTH and with reconcile's key hash; this file only sizes and fills the
 * writer. Guarantees: never fails on bad input (see mcdc/text.h for what malformed text
 * becomes); a full writer sets its sticky error and nothing more is written.
 */
#include <string.h>

#include "mcdc/text.h"
#include "source/sim/tds/tds_int.h"

/* One pass when the writer already has room for the longest result (UTF-16 takes at most
 * two bytes per UTF-8 byte, CP1252 one), else size first, then fill: the same bytes. */
size_t tds_utf8_to_utf16(tds_wbuf *w, const char *s, size_t n)
{
    if (!w->err && w->p && n <= (w->cap - w->len) / 2) {
        size_t k = mcdc_text_utf16le(w->p + w->len, s, n);
        w->len += k;
        return k / 2;
    }
    size_t units = mcdc_text_utf16_units(s, n);
    uint8_t *d = tds_w_reserve(w, units * 2);
    if (!d) return 0;
    mcdc_text_utf16le(d, s, n);
    return units;
}

size_t tds_utf16_units(const char *s, size_t n) { return mcdc_text_utf16_units(s, n); }

size_t tds_utf8_to_cp1252(tds_wbuf *w, const char *s, size_t n)
{
    if (!w->err && w->p && n <= w->cap - w->len) {
        size_t k = mcdc_text_cp1252(w->p + w->len, s, n);
        w->len += k;
        return k;
    }
    size_t len = mcdc_text_cp1252_len(s, n);
    uint8_t *d = tds_w_reserve(w, len);
    if (!d) return 0;
    mcdc_text_cp1252(d, s, n);
    return len;
}

size_t tds_cp1252_len(const char *s, size_t n) { return mcdc_text_cp1252_len(s, n); }

void tds_utf16_to_utf8(tds_wbuf *w, const uint8_t *p, size_t n)
{
    size_t i = 0;
    uint8_t b[4];
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
                tds_w_put(w, b, mcdc_text_utf8_put(b, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)));
                continue;
            }
        }
        tds_w_put(w, b, mcdc_text_utf8_put(b, (u >= 0xD800 && u <= 0xDFFF) ? 0xFFFD : u));
    }
}

void tds_cp1252_to_utf8(tds_wbuf *w, const uint8_t *p, size_t n)
{
    uint8_t b[4];
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0x80) tds_w_u8(w, p[i]);
        else tds_w_put(w, b, mcdc_text_utf8_put(b, mcdc_text_cp1252_cp(p[i])));
    }
}
