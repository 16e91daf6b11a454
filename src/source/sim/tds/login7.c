/*
 * source/sim/tds/login7.c: LOGIN7 (MS-TDS 2.2.6.4): the client's login record.
 *
 * Fixed part (94 bytes), little-endian:
 *   offset size  meaning
 *   0      4     Length of the whole record
 *   4      4     TDSVersion (0x74000004 for 7.4)
 *   8      4     PacketSize asked for (0: the server's default)
 *   12     12    ClientProgVer, ClientPID, ConnectionID
 *   24     1     OptionFlags1; 25 OptionFlags2 (0x80 fIntSecurity); 26 TypeFlags;
 *   27     1     OptionFlags3 (0x10 fExtension)
 *   28     8     ClientTimeZone, ClientLCID
 *   36     4*9   (offset, length in characters) of HostName, UserName, Password, AppName,
 *                ServerName, Extension (its offset points at a 4-byte FeatureExt offset),
 *                CltIntName, Language, Database
 *   72     6     ClientID (MAC)
 *   78     4     SSPI (offset, length in bytes); 82 AtchDBFile; 86 ChangePassword
 *   90     4     cbSSPILong
 * Strings are UTF-16LE. The password's bytes are obfuscated: each byte had its nibbles
 * swapped and was XORed with 0xA5. Example: 'a' (0x61 0x00 in UTF-16LE) travels as B3 A5.
 *
 * Guarantees: every offset and length is checked against the record; the password is
 * wiped from memory by tds_login7_free and never logged.
 */
#include <stdlib.h>
#include <string.h>

#include "source/sim/tds/tds_int.h"

uint8_t tds_pw_obfuscate(uint8_t b)
{
    return (uint8_t)(((b << 4) | (b >> 4)) ^ 0xA5);
}

uint8_t tds_pw_clear(uint8_t b)
{
    b ^= 0xA5;
    return (uint8_t)((b << 4) | (b >> 4));
}

static int get_str(char **out, const uint8_t *p, size_t n, size_t at, const char *what, bool password)
{
    size_t off = (size_t)p[at] | (size_t)p[at + 1] << 8;
    size_t cch = (size_t)p[at + 2] | (size_t)p[at + 3] << 8;
    *out = NULL;
    if (off > n || cch * 2 > n - off)
        return mcdc_error_set(MCDC_ECORRUPT, "LOGIN7: %s (offset %zu, %zu characters) runs past the record", what, off, cch);
    tds_wbuf w = TDS_WBUF_INIT(65536 * 4);
    const uint8_t *s = p + off;
    uint8_t *clear = NULL;
    if (password && cch) {
        clear = malloc(cch * 2);
        if (!clear) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (size_t i = 0; i < cch * 2; i++) clear[i] = tds_pw_clear(s[i]);
        s = clear;
    }
    tds_utf16_to_utf8(&w, s, cch * 2);
    tds_w_u8(&w, 0);
    if (clear) {
        memset(clear, 0, cch * 2);
        free(clear);
    }
    if (w.err) {
        int rc = w.err;
        tds_w_dispose(&w);
        return rc;
    }
    *out = (char *)w.p;
    return 0;
}

int tds_login7_parse(tds_login7 *out, const uint8_t *p, size_t n)
{
    memset(out, 0, sizeof *out);
    if (n < 94) return mcdc_error_set(MCDC_ECORRUPT, "LOGIN7: the record has %zu bytes, fewer than the 94 of its fixed part", n);
    tds_rd r = {p, p + n, false};
    uint32_t len = tds_rd_u32(&r);
    if (len > n || len < 94)
        return mcdc_error_set(MCDC_ECORRUPT, "LOGIN7: Length %u does not fit the %zu bytes received", len, n);
    n = len;
    out->tds_version = tds_rd_u32(&r);
    out->packet_size = tds_rd_u32(&r);
    out->flags1 = p[24];
    out->flags2 = p[25];
    out->type_flags = p[26];
    out->flags3 = p[27];
    out->sspi = (out->flags2 & 0x80) != 0;
    static const struct { size_t at; const char *what; } f[9] = {
        {36, "HostName"}, {40, "UserName"}, {44, "Password"}, {48, "AppName"}, {52, "ServerName"},
        {56, "Extension"}, {60, "CltIntName"}, {64, "Language"}, {68, "Database"},
    };
    char **dst[9] = {&out->host, &out->user, &out->password, &out->app, &out->server, NULL,
                     &out->library, &out->language, &out->database};
    int rc = 0;
    for (int i = 0; i < 9 && rc == 0; i++) {
        if (!dst[i]) continue;
        rc = get_str(dst[i], p, n, f[i].at, f[i].what, i == 2);
    }
    if (rc == 0 && (out->flags3 & 0x10)) {
        /* Extension: its offset points at a DWORD, the offset of the FeatureExt block */
        size_t eoff = (size_t)p[56] | (size_t)p[57] << 8, elen = (size_t)p[58] | (size_t)p[59] << 8;
        if (elen >= 4 && eoff <= n && n - eoff >= 4) {
            size_t fe = (size_t)p[eoff] | (size_t)p[eoff + 1] << 8 | (size_t)p[eoff + 2] << 16 | (size_t)p[eoff + 3] << 24;
            out->has_feature_ext = fe < n;
        }
    }
    if (rc == 0) {
        size_t soff = (size_t)p[78] | (size_t)p[79] << 8, slen = (size_t)p[80] | (size_t)p[81] << 8;
        if (soff > n || slen > n - soff)
            rc = mcdc_error_set(MCDC_ECORRUPT, "LOGIN7: SSPI (offset %zu, %zu bytes) runs past the record", soff, slen);
        if (slen) out->sspi = true;
    }
    if (rc) tds_login7_free(out);
    return rc;
}

void tds_login7_free(tds_login7 *l)
{
    if (l->password) {
        memset(l->password, 0, strlen(l->password));
        free(l->password);
    }
    free(l->host);
    free(l->user);
    free(l->app);
    free(l->server);
    free(l->library);
    free(l->language);
    free(l->database);
    memset(l, 0, sizeof *l);
}
