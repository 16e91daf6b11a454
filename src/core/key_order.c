/*
 * core/key_order.c: the key-order encodings of mcdc/key_order.h (the simulator's collation
 * and SQL Server's uniqueidentifier order), one definition for the simulator's keys and
 * silver's chunk bounds.
 */
#include "mcdc/key_order.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "mcdc/text.h"

static const char *const names[] = { "value", "text_ci", "guid", "bytes" };

const char *mcdc_key_order_name(mcdc_key_order o)
{
    return (unsigned)o < sizeof names / sizeof names[0] ? names[o] : "value";
}

int mcdc_key_order_parse(const char *s)
{
    for (size_t i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0)
            return (int)i;
    return -1;
}

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

int mcdc_key_order_text_ci(mcdc_buf *out, const char *s, size_t n)
{
    while (n > 0 && s[n - 1] == ' ')
        n--;
    int rc = 0;
    size_t i = 0;
    while (rc == 0 && i < n) {
        size_t k = 1;
        int32_t v = mcdc_text_utf8_next(s + i, n - i, &k);
        uint32_t cp = v < 0 ? (unsigned char)s[i] : (uint32_t)v;
        if (v < 0 || k == 0)
            k = 1;
        cp = fold(cp);
        /* code points as 3 big-endian bytes keep code point order; 0 escaped */
        unsigned char b[3] = { (unsigned char)(cp >> 16), (unsigned char)(cp >> 8), (unsigned char)cp };
        rc = cp == 0 ? mcdc_buf_put(out, "\0\0\0\xFF", 4) : mcdc_buf_put(out, b, 3);
        i += k;
    }
    return rc ? rc : mcdc_buf_put(out, "\0\0\0\0", 4);
}

static int hexval(char c)
{
    return isdigit((unsigned char)c) ? c - '0' : (toupper((unsigned char)c) - 'A' + 10);
}

int mcdc_key_order_guid(mcdc_buf *out, const char *s, size_t n)
{
    if (n != 36)
        return mcdc_key_order_text_ci(out, s, n);
    static const int order[16] = { 10, 11, 12, 13, 14, 15, 8, 9, 6, 7, 4, 5, 0, 1, 2, 3 };
    unsigned char b[16] = { 0 }, k[16];
    for (size_t i = 0, j = 0; i < 36 && j < 32; i++) {
        if (s[i] == '-')
            continue;
        b[j / 2] = (unsigned char)(j % 2 ? (b[j / 2] | hexval(s[i])) : hexval(s[i]) << 4);
        j++;
    }
    for (int i = 0; i < 16; i++)
        k[i] = b[order[i]];
    return mcdc_buf_put(out, k, 16);
}
