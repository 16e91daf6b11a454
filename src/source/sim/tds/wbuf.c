/*
 * source/sim/tds/wbuf.c: tds_wbuf, the byte writer every encoder of the TDS server appends to.
 *
 * Guarantees: a write past the writer's cap or a failed allocation sets a sticky error
 * (w->err, MCDC_ENOMEM) and every later write does nothing, so encoders check once at the
 * end. Integers are written little-endian unless the name says _be (PRELOGIN and packet
 * headers are big-endian, everything else in TDS is little-endian).
 */
#include <stdlib.h>
#include <string.h>

#include "source/sim/tds/tds_int.h"

uint8_t *tds_w_reserve(tds_wbuf *w, size_t n)
{
    static uint8_t none[1]; /* where nothing is written: no arithmetic on a NULL buffer */
    if (w->err) return NULL;
    if (n == 0) return w->p ? w->p + w->len : none;
    size_t need;
    if (mcdc_add_overflow(w->len, n, &need) || need > w->max) {
        w->err = mcdc_error_set(MCDC_ENOMEM, "a TDS message grew past %zu bytes", w->max);
        return NULL;
    }
    if (need > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < need) cap = cap > w->max / 2 ? w->max : cap * 2;
        uint8_t *p = realloc(w->p, cap);
        if (!p) {
            w->err = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            return NULL;
        }
        w->p = p;
        w->cap = cap;
    }
    uint8_t *at = w->p + w->len;
    w->len = need;
    return at;
}

void tds_w_put(tds_wbuf *w, const void *p, size_t n)
{
    if (!n) return;
    uint8_t *d = tds_w_reserve(w, n);
    if (d) memcpy(d, p, n);
}

void tds_w_u8(tds_wbuf *w, uint8_t v)
{
    if (!w->err && w->len < w->cap) {
        w->p[w->len++] = v;
        return;
    }
    tds_w_put(w, &v, 1);
}

void tds_w_u16(tds_wbuf *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    tds_w_put(w, b, 2);
}

void tds_w_u32(tds_wbuf *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    tds_w_put(w, b, 4);
}

void tds_w_u64(tds_wbuf *w, uint64_t v)
{
    tds_w_u32(w, (uint32_t)v);
    tds_w_u32(w, (uint32_t)(v >> 32));
}

void tds_w_u16be(tds_wbuf *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
    tds_w_put(w, b, 2);
}

void tds_w_u32be(tds_wbuf *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    tds_w_put(w, b, 4);
}

void tds_w_zero(tds_wbuf *w, size_t n)
{
    uint8_t *d = tds_w_reserve(w, n);
    if (d) memset(d, 0, n);
}

void tds_w_patch_u16(tds_wbuf *w, size_t at, uint16_t v)
{
    if (w->err || at + 2 > w->len) return;
    w->p[at] = (uint8_t)v;
    w->p[at + 1] = (uint8_t)(v >> 8);
}

void tds_w_patch_u32(tds_wbuf *w, size_t at, uint32_t v)
{
    if (w->err || at + 4 > w->len) return;
    for (int i = 0; i < 4; i++) w->p[at + (size_t)i] = (uint8_t)(v >> (8 * i));
}

void tds_w_clear(tds_wbuf *w)
{
    w->len = 0;
    w->err = 0;
}

void tds_w_dispose(tds_wbuf *w)
{
    free(w->p);
    w->p = NULL;
    w->len = w->cap = 0;
    w->err = 0;
}
