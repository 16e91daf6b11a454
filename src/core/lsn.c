/*
 * core/lsn.c: parse, format, compare and step 10-byte LSNs.
 *
 * Guarantees: parsing accepts exactly "0x" followed by 1 to 20 hex digits (any case) and
 * nothing else; increment and decrement never wrap (they fail at the ends instead).
 */
#include <string.h>

#include "mcdc/error.h"
#include "mcdc/lsn.h"

mcdc_lsn mcdc_lsn_zero(void)
{
    mcdc_lsn l;
    memset(&l, 0, sizeof l);
    return l;
}

bool mcdc_lsn_is_zero(const mcdc_lsn *l)
{
    for (int i = 0; i < 10; i++)
        if (l->b[i])
            return false;
    return true;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int mcdc_lsn_parse_n(mcdc_lsn *out, const char *s, size_t len)
{
    int shown = (int)(len > 64 ? 64 : len); /* hostile text: quote its start only */
    if (!s || len < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        return mcdc_error_set(MCDC_EINVAL, "bad LSN '%.*s': expected 0x followed by up to 20 "
                              "hex digits", s ? shown : 6, s ? s : "(null)");
    const char *d = s + 2;
    size_t n = len - 2;
    if (n == 0 || n > 20)
        return mcdc_error_set(MCDC_EINVAL, "bad LSN '%.*s': %zu hex digits, expected 1 to 20",
                              shown, s, n);
    /* digits right-aligned in 20 nibbles; the usual full width takes no padding */
    size_t pad = 20 - n;
    mcdc_lsn r;
    for (int i = 0; i < 10; i++) {
        size_t hi = 2 * (size_t)i, lo = hi + 1;
        int a = hi < pad ? 0 : hexval(d[hi - pad]);
        int b = lo < pad ? 0 : hexval(d[lo - pad]);
        if ((a | b) < 0) {
            unsigned char c = (unsigned char)d[a < 0 ? hi - pad : lo - pad];
            if (c >= 0x20 && c < 0x7f)
                return mcdc_error_set(MCDC_EINVAL, "bad LSN '%.*s': '%c' is not a hex digit",
                                      shown, s, c);
            return mcdc_error_set(MCDC_EINVAL, "bad LSN '%.*s': byte 0x%02X is not a hex digit",
                                  shown, s, c);
        }
        r.b[i] = (uint8_t)(a << 4 | b);
    }
    *out = r;
    return 0;
}

int mcdc_lsn_parse(mcdc_lsn *out, const char *s)
{
    return mcdc_lsn_parse_n(out, s, s ? strlen(s) : 0);
}

char *mcdc_lsn_format(char out[MCDC_LSN_STRLEN], const mcdc_lsn *l)
{
    static const char hex[] = "0123456789ABCDEF";
    out[0] = '0';
    out[1] = 'x';
    for (int i = 0; i < 10; i++) {
        out[2 + 2 * i] = hex[l->b[i] >> 4];
        out[3 + 2 * i] = hex[l->b[i] & 15];
    }
    out[22] = '\0';
    return out;
}

int mcdc_lsn_cmp(const mcdc_lsn *a, const mcdc_lsn *b)
{
    return memcmp(a->b, b->b, 10);
}

int mcdc_lsn_increment(mcdc_lsn *out, const mcdc_lsn *l)
{
    mcdc_lsn r = *l;
    for (int i = 9; i >= 0; i--) {
        if (++r.b[i] != 0) {
            *out = r;
            return 0;
        }
    }
    return mcdc_error_set(MCDC_EINVAL, "cannot increment LSN 0xFFFFFFFFFFFFFFFFFFFF: it is the largest");
}

int mcdc_lsn_decrement(mcdc_lsn *out, const mcdc_lsn *l)
{
    mcdc_lsn r = *l;
    if (mcdc_lsn_is_zero(l))
        return mcdc_error_set(MCDC_EINVAL, "cannot decrement LSN 0x00000000000000000000: it is zero");
    for (int i = 9; i >= 0; i--) {
        if (r.b[i]-- != 0)
            break;
    }
    *out = r;
    return 0;
}

mcdc_lsn mcdc_lsn_from_u64(uint16_t hi, uint64_t lo)
{
    mcdc_lsn l;
    l.b[0] = (uint8_t)(hi >> 8);
    l.b[1] = (uint8_t)hi;
    for (int i = 0; i < 8; i++)
        l.b[2 + i] = (uint8_t)(lo >> (56 - 8 * i));
    return l;
}
