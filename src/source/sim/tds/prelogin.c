/*
 * source/sim/tds/prelogin.c: PRELOGIN (MS-TDS 2.2.6.5): the client's options, the server's
 * answer, and the encryption decision.
 *
 * Payload: option headers, then their data; offsets count from the payload's start.
 *   per option: token (1: 0 VERSION, 1 ENCRYPTION, 2 INSTOPT, 3 THREADID, 4 MARS, 5 TRACEID,
 *               6 FEDAUTHREQUIRED, 7 NONCEOPT), offset (2, big-endian), length (2, big-endian)
 *   0xFF ends the headers.
 * Example (the server's answer to a client asking ENCRYPT_NOT_SUP, SQL Server 16.0.4135.4):
 *   00 00 1A 00 06  01 00 20 00 01  02 00 21 00 01  03 00 22 00 00  04 00 22 00 01  FF
 *   10 00 10 27 00 04  02  00  00
 *
 * Encryption (the client's byte against --encryption; MS-TDS 2.2.6.5's table):
 *   client \ mode   off              login               required
 *   OFF (0)         NOT_SUP, none    OFF, login only     REQ, full
 *   ON (1)/REQ (3)  NOT_SUP, none*   ON, full            REQ, full
 *   NOT_SUP (2)     NOT_SUP, none    NOT_SUP, none       REQ, refused
 * (* the client gives up itself when it requires encryption.)
 */
#include "source/sim/tds/tds_int.h"

int tds_prelogin_parse(tds_prelogin *out, const uint8_t *p, size_t n)
{
    *out = (tds_prelogin){0};
    size_t i = 0;
    for (int k = 0;; k++) {
        if (i >= n) return mcdc_error_set(MCDC_ECORRUPT, "PRELOGIN: the option list has no 0xFF terminator");
        uint8_t tok = p[i];
        if (tok == 0xFF) break;
        if (k > 32 || i + 5 > n) return mcdc_error_set(MCDC_ECORRUPT, "PRELOGIN: option header %d is cut short", k);
        size_t off = (size_t)p[i + 1] << 8 | p[i + 2], len = (size_t)p[i + 3] << 8 | p[i + 4];
        i += 5;
        if (off > n || len > n - off)
            return mcdc_error_set(MCDC_ECORRUPT, "PRELOGIN: option %u points past the payload", tok);
        const uint8_t *d = p + off;
        if (tok == 0 && len >= 4) {
            out->has_version = true;
            out->version = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
        } else if (tok == 1 && len >= 1) {
            out->has_encryption = true;
            out->encryption = d[0];
        } else if (tok == 4 && len >= 1) {
            out->mars = d[0];
        }
    }
    return 0;
}

uint8_t tds_prelogin_decide(mcdc_tds_encryption mode, uint8_t client, tds_tls_plan *plan)
{
    bool can = client != TDS_ENC_NOT_SUP;
    bool wants = client == TDS_ENC_ON || client == TDS_ENC_REQ;
    switch (mode) {
    case MCDC_TDS_ENCRYPT_LOGIN:
        if (!can) { *plan = TDS_TLS_NONE; return TDS_ENC_NOT_SUP; }
        if (wants) { *plan = TDS_TLS_FULL; return TDS_ENC_ON; }
        *plan = TDS_TLS_LOGIN_ONLY;
        return TDS_ENC_OFF;
    case MCDC_TDS_ENCRYPT_REQUIRED:
        *plan = can ? TDS_TLS_FULL : TDS_TLS_REFUSE;
        return TDS_ENC_REQ;
    default:
        *plan = TDS_TLS_NONE;
        return TDS_ENC_NOT_SUP;
    }
}

void tds_prelogin_version(int product_version, uint8_t out[4])
{
    /* the builds SERVERPROPERTY('ProductVersion') names (source/sim/tsql_sys.c): 13.0.7024.30,
     * 14.0.3465.1, 15.0.4355.3, 16.0.4135.4 */
    static const uint16_t builds[4] = {7024, 3465, 4355, 4135};
    int v = product_version >= 13 && product_version <= 16 ? product_version : 16;
    out[0] = (uint8_t)v;
    out[1] = 0;
    out[2] = (uint8_t)(builds[v - 13] >> 8);
    out[3] = (uint8_t)builds[v - 13];
}

static uint16_t sub_build(int product_version)
{
    static const uint16_t subs[4] = {30, 1, 3, 4};
    int v = product_version >= 13 && product_version <= 16 ? product_version : 16;
    return subs[v - 13];
}

void tds_prelogin_response(tds_wbuf *w, uint8_t encryption, int product_version)
{
    /* five headers (25 bytes) and the terminator: data starts at 26 */
    static const struct { uint8_t tok; uint16_t len; } opt[5] = {{0, 6}, {1, 1}, {2, 1}, {3, 0}, {4, 1}};
    uint16_t off = 26;
    for (int i = 0; i < 5; i++) {
        tds_w_u8(w, opt[i].tok);
        tds_w_u16be(w, off);
        tds_w_u16be(w, opt[i].len);
        off = (uint16_t)(off + opt[i].len);
    }
    tds_w_u8(w, 0xFF);
    uint8_t v[4];
    tds_prelogin_version(product_version, v);
    tds_w_put(w, v, 4);
    tds_w_u16be(w, sub_build(product_version));
    tds_w_u8(w, encryption);
    tds_w_u8(w, 0); /* INSTOPT: the default instance */
    tds_w_u8(w, 0); /* MARS off */
}
