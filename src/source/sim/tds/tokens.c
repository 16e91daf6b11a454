/*
 * source/sim/tds/tokens.c: the tokens of a response that are not about rows (MS-TDS 2.2.7):
 * ENVCHANGE, ERROR and INFO, LOGINACK, DONE/DONEPROC/DONEINPROC, RETURNSTATUS, FEATUREEXTACK.
 *
 *   ENVCHANGE  E3 len(2) type(1) new old            text values B_VARCHAR, binary B_VARBYTE
 *   ERROR/INFO AA|AB len(2) number(4) state(1) class(1) text(US_VARCHAR) server(B_VARCHAR)
 *              proc(B_VARCHAR) line(4)
 *   LOGINACK   AD len(2) interface(1)=1 TDSVersion(4, big-endian bytes 74 00 00 04)
 *              ProgName(B_VARCHAR) major minor buildhi buildlo
 *   DONE*      FD|FE|FF status(2) curcmd(2) rowcount(8)
 * Example: DONE with a count of 1 after a SELECT: FD 10 00 C1 00 01 00 00 00 00 00 00 00.
 *
 * Guarantees: lengths are computed from what was written (patched after), so a long text
 * can never produce a token whose length disagrees with its bytes; B_VARCHAR texts are cut
 * at 255 UTF-16 units, US_VARCHAR at 65535.
 */
#include <string.h>

#include "source/sim/tds/tds_int.h"

const uint8_t tds_collation[5] = {0x09, 0x04, 0xD0, 0x00, 0x34}; /* SQL_Latin1_General_CP1_CI_AS */

/* Append UTF-8 text as at most max_units UTF-16 units after a length field of lbytes. */
static void put_varchar(tds_wbuf *w, const char *s, size_t lbytes, size_t max_units)
{
    size_t n = s ? strlen(s) : 0;
    size_t at = w->len;
    if (lbytes == 1) tds_w_u8(w, 0);
    else tds_w_u16(w, 0);
    size_t start = w->len;
    size_t units = tds_utf8_to_utf16(w, s ? s : "", n);
    if (units > max_units) {
        /* cut at max_units, never inside a surrogate pair */
        size_t keep = max_units;
        if (!w->err && keep > 0) {
            uint16_t last = (uint16_t)(w->p[start + 2 * (keep - 1)] | w->p[start + 2 * (keep - 1) + 1] << 8);
            if (last >= 0xD800 && last <= 0xDBFF) keep--;
        }
        w->len = start + keep * 2;
        units = keep;
    }
    if (w->err) return;
    if (lbytes == 1) w->p[at] = (uint8_t)units;
    else tds_w_patch_u16(w, at, (uint16_t)units);
}

void tds_w_bvarchar(tds_wbuf *w, const char *utf8)
{
    put_varchar(w, utf8, 1, 255);
}

void tds_w_usvarchar(tds_wbuf *w, const char *utf8)
{
    put_varchar(w, utf8, 2, 65535);
}

/* Token with a 2-byte length: write the token and a placeholder; finish patches it. */
static size_t begin_len(tds_wbuf *w, uint8_t token)
{
    tds_w_u8(w, token);
    size_t at = w->len;
    tds_w_u16(w, 0);
    return at;
}

static void end_len(tds_wbuf *w, size_t at)
{
    size_t n = w->len - at - 2;
    tds_w_patch_u16(w, at, (uint16_t)(n > 0xFFFF ? 0xFFFF : n));
}

void tds_tok_envchange_text(tds_wbuf *w, uint8_t type, const char *new_value, const char *old_value)
{
    size_t at = begin_len(w, TDS_TOK_ENVCHANGE);
    tds_w_u8(w, type);
    tds_w_bvarchar(w, new_value);
    tds_w_bvarchar(w, old_value);
    end_len(w, at);
}

void tds_tok_envchange_bin(tds_wbuf *w, uint8_t type, const uint8_t *nv, uint8_t nv_len, const uint8_t *ov,
                           uint8_t ov_len)
{
    size_t at = begin_len(w, TDS_TOK_ENVCHANGE);
    tds_w_u8(w, type);
    tds_w_u8(w, nv_len);
    tds_w_put(w, nv, nv_len);
    tds_w_u8(w, ov_len);
    tds_w_put(w, ov, ov_len);
    end_len(w, at);
}

void tds_tok_message(tds_wbuf *w, bool is_error, int32_t number, uint8_t state, uint8_t cls, const char *text,
                     const char *server, const char *proc, int32_t line)
{
    size_t at = begin_len(w, is_error ? TDS_TOK_ERROR : TDS_TOK_INFO);
    tds_w_u32(w, (uint32_t)number);
    tds_w_u8(w, state);
    tds_w_u8(w, cls);
    /* the whole token must fit its 2-byte length: cut the text well below that */
    size_t n = text ? strlen(text) : 0;
    if (n > 4000) {
        char cut[4001];
        memcpy(cut, text, 4000);
        size_t k = 4000;
        while (k > 0 && ((unsigned char)cut[k] & 0xC0) == 0x80) k--; /* not inside a character */
        cut[k] = 0;
        tds_w_usvarchar(w, cut);
    } else {
        tds_w_usvarchar(w, text);
    }
    tds_w_bvarchar(w, server);
    tds_w_bvarchar(w, proc);
    tds_w_u32(w, (uint32_t)line);
    end_len(w, at);
}

void tds_tok_loginack(tds_wbuf *w, uint32_t tds_version, int product_version)
{
    size_t at = begin_len(w, TDS_TOK_LOGINACK);
    tds_w_u8(w, 1); /* SQL_TSQL */
    tds_w_u32be(w, tds_version);
    tds_w_bvarchar(w, "Microsoft SQL Server");
    uint8_t v[4];
    tds_prelogin_version(product_version, v);
    tds_w_put(w, v, 4);
    end_len(w, at);
}

void tds_tok_done(tds_wbuf *w, uint8_t token, uint16_t status, uint16_t curcmd, uint64_t rowcount)
{
    tds_w_u8(w, token);
    tds_w_u16(w, status);
    tds_w_u16(w, curcmd);
    tds_w_u64(w, rowcount);
}

void tds_tok_returnstatus(tds_wbuf *w, int32_t status)
{
    tds_w_u8(w, TDS_TOK_RETURNSTATUS);
    tds_w_u32(w, (uint32_t)status);
}

void tds_tok_featureextack_empty(tds_wbuf *w)
{
    tds_w_u8(w, TDS_TOK_FEATUREEXTACK);
    tds_w_u8(w, 0xFF); /* TERMINATOR: no feature acknowledged */
}
