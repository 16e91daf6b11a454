/* Unit tests for the TDS server's wire (source/sim/tds): password obfuscation, PRELOGIN,
 * LOGIN7, token and type encodings byte for byte (MS-TDS's layouts), RPC parameter decoding,
 * and whole connections on a fake engine: the login answer's token order, a wrong password,
 * packet splitting, ATTENTION, transactions and faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "tds_client.h"

#define BYTES(...) ((const uint8_t[]){__VA_ARGS__}), sizeof((const uint8_t[]){__VA_ARGS__})

static void expect_bytes(const tds_wbuf *w, const uint8_t *exp, size_t n)
{
    if (w->len != n || memcmp(w->p, exp, n)) {
        fprintf(stderr, "got %zu bytes:", w->len);
        for (size_t i = 0; i < w->len && i < 64; i++) fprintf(stderr, " %02X", w->p[i]);
        fprintf(stderr, "\nexpected %zu:", n);
        for (size_t i = 0; i < n && i < 64; i++) fprintf(stderr, " %02X", exp[i]);
        fprintf(stderr, "\n");
        fail();
    }
}

static void mem_eq_(const void *got, const uint8_t *exp, size_t n)
{
    assert_memory_equal(got, exp, n);
}
#define mem_eq(got, ...) mem_eq_((got), __VA_ARGS__)

static const uint8_t *find(const uint8_t *hay, size_t n, const void *needle, size_t k)
{
    for (size_t i = 0; k && i + k <= n; i++)
        if (!memcmp(hay + i, needle, k)) return hay + i;
    return NULL;
}

/* ---- building blocks ------------------------------------------------------------------------ */

static void test_source_tds_wire__password_obfuscation_is_nibble_swap_and_xor(void **state)
{
    (void)state;
    assert_int_equal(tds_pw_obfuscate('a'), 0xB3);
    assert_int_equal(tds_pw_obfuscate(0), 0xA5);
    for (int b = 0; b < 256; b++) assert_int_equal(tds_pw_clear(tds_pw_obfuscate((uint8_t)b)), b);
}

static void test_source_tds_wire__prelogin_answer_and_encryption_table(void **state)
{
    (void)state;
    tds_wbuf w = TDS_WBUF_INIT(1024);
    tds_prelogin_response(&w, TDS_ENC_NOT_SUP, 16);
    expect_bytes(&w, BYTES(0x00, 0x00, 0x1A, 0x00, 0x06, 0x01, 0x00, 0x20, 0x00, 0x01, 0x02, 0x00, 0x21, 0x00, 0x01,
                           0x03, 0x00, 0x22, 0x00, 0x00, 0x04, 0x00, 0x22, 0x00, 0x01, 0xFF, 0x10, 0x00, 0x10, 0x27,
                           0x00, 0x04, 0x02, 0x00, 0x00));
    tds_prelogin pl;
    assert_int_equal(tds_prelogin_parse(&pl, w.p, w.len), 0);
    assert_true(pl.has_encryption);
    assert_int_equal(pl.encryption, TDS_ENC_NOT_SUP);
    assert_int_equal(pl.version, 0x10001027u);
    /* no terminator, an option pointing past the payload */
    assert_int_equal(tds_prelogin_parse(&pl, w.p, 10), MCDC_ECORRUPT);
    uint8_t badp[] = {1, 0, 200, 0, 1, 0xFF};
    assert_int_equal(tds_prelogin_parse(&pl, badp, sizeof badp), MCDC_ECORRUPT);
    tds_tls_plan plan;
    assert_int_equal(tds_prelogin_decide(MCDC_TDS_ENCRYPT_OFF, TDS_ENC_ON, &plan), TDS_ENC_NOT_SUP);
    assert_int_equal(plan, TDS_TLS_NONE);
    assert_int_equal(tds_prelogin_decide(MCDC_TDS_ENCRYPT_LOGIN, TDS_ENC_OFF, &plan), TDS_ENC_OFF);
    assert_int_equal(plan, TDS_TLS_LOGIN_ONLY);
    assert_int_equal(tds_prelogin_decide(MCDC_TDS_ENCRYPT_LOGIN, TDS_ENC_ON, &plan), TDS_ENC_ON);
    assert_int_equal(plan, TDS_TLS_FULL);
    assert_int_equal(tds_prelogin_decide(MCDC_TDS_ENCRYPT_LOGIN, TDS_ENC_NOT_SUP, &plan), TDS_ENC_NOT_SUP);
    assert_int_equal(plan, TDS_TLS_NONE);
    assert_int_equal(tds_prelogin_decide(MCDC_TDS_ENCRYPT_REQUIRED, TDS_ENC_OFF, &plan), TDS_ENC_REQ);
    assert_int_equal(plan, TDS_TLS_FULL);
    assert_int_equal(tds_prelogin_decide(MCDC_TDS_ENCRYPT_REQUIRED, TDS_ENC_NOT_SUP, &plan), TDS_ENC_REQ);
    assert_int_equal(plan, TDS_TLS_REFUSE);
    tds_w_dispose(&w);
}

static void test_source_tds_wire__login7_fields_and_password_are_decoded(void **state)
{
    (void)state;
    tds_wbuf p = TDS_WBUF_INIT(1 << 16);
    cl_login7_payload(&p, "ü-user", "pä55;word", "orders", 8192);
    tds_login7 l;
    assert_int_equal(tds_login7_parse(&l, p.p, p.len), 0);
    assert_string_equal(l.user, "ü-user");
    assert_string_equal(l.password, "pä55;word");
    assert_string_equal(l.database, "orders");
    assert_string_equal(l.app, "app");
    assert_int_equal(l.packet_size, 8192);
    assert_int_equal(l.tds_version, 0x74000004u);
    assert_false(l.sspi);
    tds_login7_free(&l);
    /* the password's clear text is not in the record */
    tds_wbuf clear = TDS_WBUF_INIT(1024);
    cl_utf16(&clear, "pä55;word");
    assert_null(find(p.p, p.len, clear.p, clear.len));
    /* a user name running past the record; a record shorter than its fixed part */
    p.p[42] = 0xFF;
    assert_int_equal(tds_login7_parse(&l, p.p, p.len), MCDC_ECORRUPT);
    assert_int_equal(tds_login7_parse(&l, p.p, 50), MCDC_ECORRUPT);
    tds_w_dispose(&clear);
    tds_w_dispose(&p);
}

static void test_source_tds_wire__tokens_byte_for_byte(void **state)
{
    (void)state;
    tds_wbuf w = TDS_WBUF_INIT(1 << 16);
    tds_tok_done(&w, TDS_TOK_DONE, 0x10, 0xC1, 1);
    expect_bytes(&w, BYTES(0xFD, 0x10, 0x00, 0xC1, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0));
    tds_w_clear(&w);
    tds_tok_envchange_text(&w, 1, "d", "master");
    expect_bytes(&w, BYTES(0xE3, 0x11, 0x00, 0x01, 0x01, 'd', 0, 0x06, 'm', 0, 'a', 0, 's', 0, 't', 0, 'e', 0, 'r', 0));
    tds_w_clear(&w);
    tds_tok_message(&w, true, 208, 1, 16, "x", "s", "", 1);
    expect_bytes(&w, BYTES(0xAA, 0x12, 0x00, 0xD0, 0x00, 0x00, 0x00, 0x01, 0x10, 0x01, 0x00, 'x', 0, 0x01, 's', 0,
                           0x00, 0x01, 0x00, 0x00, 0x00));
    tds_w_clear(&w);
    tds_tok_loginack(&w, 0x74000004, 16);
    assert_int_equal(w.p[0], 0xAD);
    assert_int_equal(w.p[1] | w.p[2] << 8, w.len - 3);
    mem_eq(w.p + 4, BYTES(0x74, 0x00, 0x00, 0x04));
    mem_eq(w.p + w.len - 4, BYTES(0x10, 0x00, 0x10, 0x27)); /* 16.0.4135 */
    tds_w_clear(&w);
    tds_tok_envchange_bin(&w, 7, tds_collation, 5, NULL, 0);
    expect_bytes(&w, BYTES(0xE3, 0x08, 0x00, 0x07, 0x05, 0x09, 0x04, 0xD0, 0x00, 0x34, 0x00));
    tds_w_dispose(&w);
}

/* ---- types ------------------------------------------------------------------------------------ */

static sim_type TY(sim_tkind k, int len, int prec, int scale)
{
    return (sim_type){k, len, prec, scale};
}

/* TYPE_INFO (COLMETADATA form) then the value, against the expected bytes. */
static void check_type(sim_type t, bool nullable, bool variant, sim_val v, const uint8_t *ti, size_t ti_n,
                       const uint8_t *val, size_t val_n)
{
    mcdc_sim_rcol c = {"c", t, nullable, variant};
    tds_wbuf w = TDS_WBUF_INIT(1 << 20);
    tds_type_info(&w, &c, true);
    expect_bytes(&w, ti, ti_n);
    tds_w_clear(&w);
    assert_int_equal(tds_value(&w, &c, &v), 0);
    expect_bytes(&w, val, val_n);
    tds_w_dispose(&w);
}

#define VI(x) ((sim_val){.k = V_INT, .u.i = (x)})
#define VS(str_) ((sim_val){.k = V_STR, .u.s = {(str_), sizeof(str_) - 1}})
#define VNULL ((sim_val){.k = V_NULL})
#define COLL 0x09, 0x04, 0xD0, 0x00, 0x34

static void test_source_tds_wire__numeric_types_byte_for_byte(void **state)
{
    (void)state;
    check_type(TY(ST_INT, 0, 0, 0), false, false, VI(5), BYTES(0x38), BYTES(5, 0, 0, 0));
    check_type(TY(ST_INT, 0, 0, 0), true, false, VI(5), BYTES(0x26, 4), BYTES(4, 5, 0, 0, 0));
    check_type(TY(ST_INT, 0, 0, 0), true, false, VNULL, BYTES(0x26, 4), BYTES(0));
    check_type(TY(ST_BIGINT, 0, 0, 0), true, false, VI(-1), BYTES(0x26, 8), BYTES(8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF));
    check_type(TY(ST_TINYINT, 0, 0, 0), false, false, VI(255), BYTES(0x30), BYTES(0xFF));
    check_type(TY(ST_SMALLINT, 0, 0, 0), false, false, VI(-2), BYTES(0x34), BYTES(0xFE, 0xFF));
    check_type(TY(ST_BIT, 0, 0, 0), false, false, VI(1), BYTES(0x32), BYTES(1));
    check_type(TY(ST_BIT, 0, 0, 0), true, false, VNULL, BYTES(0x68, 1), BYTES(0));
    check_type(TY(ST_REAL, 0, 0, 0), false, false, ((sim_val){.k = V_FLT, .u.d = 1.5}), BYTES(0x3B), BYTES(0, 0, 0xC0, 0x3F));
    check_type(TY(ST_FLOAT, 0, 0, 0), true, false, ((sim_val){.k = V_FLT, .u.d = 1.5}), BYTES(0x6D, 8),
               BYTES(8, 0, 0, 0, 0, 0, 0, 0xF8, 0x3F));
    check_type(TY(ST_DECIMAL, 0, 5, 2), true, false, ((sim_val){.k = V_DEC, .prec = 5, .scale = 2, .u.dec = -1234}),
               BYTES(0x6A, 5, 5, 2), BYTES(5, 0, 0xD2, 0x04, 0, 0));
    mcdc_int128 max38 = 1;
    for (int i = 0; i < 38; i++) max38 *= 10;
    check_type(TY(ST_NUMERIC, 0, 38, 0), false, false, ((sim_val){.k = V_DEC, .prec = 38, .scale = 0, .u.dec = max38 - 1}),
               BYTES(0x6C, 17, 38, 0), BYTES(17, 1, 0xff, 0xff, 0xff, 0xff, 0x3f, 0x22, 0x8a, 0x09, 0x7a, 0xc4, 0x86, 0x5a, 0xa8, 0x4c, 0x3b, 0x4b));
    /* a value with a smaller scale is rescaled exactly; one beyond the precision is refused */
    check_type(TY(ST_DECIMAL, 0, 12, 2), true, false, ((sim_val){.k = V_DEC, .prec = 12, .scale = 0, .u.dec = 3}),
               BYTES(0x6A, 9, 12, 2), BYTES(9, 1, 0x2C, 0x01, 0, 0, 0, 0, 0, 0));
    mcdc_sim_rcol c = {"amount", TY(ST_DECIMAL, 0, 5, 2), true, false};
    tds_wbuf w = TDS_WBUF_INIT(1024);
    assert_int_equal(tds_value(&w, &c, &(sim_val){.k = V_DEC, .prec = 6, .scale = 2, .u.dec = 100000}), MCDC_EINVAL);
    assert_non_null(strstr(mcdc_error_last()->message, "amount"));
    c.type = TY(ST_TINYINT, 0, 0, 0);
    assert_int_equal(tds_value(&w, &c, &VI(256)), MCDC_EINVAL);
    c.type = TY(ST_INT, 0, 0, 0);
    c.nullable = false;
    assert_int_equal(tds_value(&w, &c, &VNULL), MCDC_EINVAL);
    tds_w_dispose(&w);
    check_type(TY(ST_MONEY, 0, 0, 0), true, false, ((sim_val){.k = V_DEC, .prec = 19, .scale = 4, .u.dec = 123456}),
               BYTES(0x6E, 8), BYTES(8, 0, 0, 0, 0, 0x40, 0xE2, 0x01, 0x00));
    check_type(TY(ST_MONEY, 0, 0, 0), false, false, ((sim_val){.k = V_DEC, .prec = 19, .scale = 4, .u.dec = -10000}),
               BYTES(0x3C), BYTES(0xFF, 0xFF, 0xFF, 0xFF, 0xF0, 0xD8, 0xFF, 0xFF));
    check_type(TY(ST_SMALLMONEY, 0, 0, 0), false, false, ((sim_val){.k = V_DEC, .prec = 10, .scale = 4, .u.dec = 10000}),
               BYTES(0x7A), BYTES(0x10, 0x27, 0, 0));
}

static void test_source_tds_wire__temporal_types_byte_for_byte(void **state)
{
    (void)state;
    check_type(TY(ST_DATE, 0, 0, 0), true, false, ((sim_val){.k = V_DATE, .u.i = 0}), BYTES(0x28), BYTES(3, 0x3A, 0xF9, 0x0A));
    check_type(TY(ST_DATE, 0, 0, 0), true, false, ((sim_val){.k = V_DATE, .u.i = -719162}), BYTES(0x28), BYTES(3, 0, 0, 0));
    check_type(TY(ST_DATE, 0, 0, 0), true, false, VNULL, BYTES(0x28), BYTES(0));
    check_type(TY(ST_TIME, 0, 0, 7), true, false, ((sim_val){.k = V_TIME, .u.i = INT64_C(452961234567)}), BYTES(0x29, 7),
               BYTES(5, 0x87, 0xee, 0x97, 0x76, 0x69));
    check_type(TY(ST_TIME, 0, 0, 0), true, false, ((sim_val){.k = V_TIME, .u.i = INT64_C(10000000)}), BYTES(0x29, 0),
               BYTES(3, 1, 0, 0));
    check_type(TY(ST_DATETIME2, 0, 0, 3), true, false, ((sim_val){.k = V_DT, .u.i = INT64_C(1735725601123) * 10000}),
               BYTES(0x2A, 3), BYTES(7, 0x63, 0x55, 0x25, 0x02, 0xb3, 0x47, 0x0b));
    int64_t utc = (INT64_C(20089) * 86400 + 8 * 3600) * TICKS_PER_SEC;
    check_type(TY(ST_DATETIMEOFFSET, 0, 0, 7), true, false, ((sim_val){.k = V_DTO, .off = 120, .u.i = utc}), BYTES(0x2B, 7),
               BYTES(10, 0x00, 0x40, 0x23, 0x0e, 0x43, 0xb3, 0x47, 0x0b, 0x78, 0x00));
    /* datetime: 1900-01-01 00:00:00.003 is one 1/300 s tick */
    check_type(TY(ST_DATETIME, 0, 0, 0), false, false, ((sim_val){.k = V_DT, .u.i = -25567 * TICKS_PER_DAY + 33333}),
               BYTES(0x3D), BYTES(0, 0, 0, 0, 1, 0, 0, 0));
    check_type(TY(ST_DATETIME, 0, 0, 0), true, false, ((sim_val){.k = V_DT, .u.i = 0}), BYTES(0x6F, 8),
               BYTES(8, 0xDF, 0x63, 0, 0, 0, 0, 0, 0));
    check_type(TY(ST_SMALLDATETIME, 0, 0, 0), false, false,
               ((sim_val){.k = V_DT, .u.i = -25566 * TICKS_PER_DAY + 60 * TICKS_PER_SEC}), BYTES(0x3A), BYTES(1, 0, 1, 0));
}

static void test_source_tds_wire__string_binary_guid_and_variant_byte_for_byte(void **state)
{
    (void)state;
    /* varchar travels in CP1252: the euro is 0x80, the trade mark 0x99, what CP1252 lacks is '?' */
    check_type(TY(ST_VARCHAR, 10, 0, 0), true, false, VS("\xE2\x82\xACx\xE2\x84\xA2\xC4\x81"), BYTES(0xA7, 10, 0, COLL),
               BYTES(4, 0, 0x80, 'x', 0x99, '?'));
    check_type(TY(ST_CHAR, 3, 0, 0), false, false, VS("ab "), BYTES(0xAF, 3, 0, COLL), BYTES(3, 0, 'a', 'b', ' '));
    check_type(TY(ST_NVARCHAR, 5, 0, 0), true, false, VS("\xC3\xA9"), BYTES(0xE7, 10, 0, COLL), BYTES(2, 0, 0xE9, 0));
    check_type(TY(ST_NVARCHAR, 5, 0, 0), true, false, VNULL, BYTES(0xE7, 10, 0, COLL), BYTES(0xFF, 0xFF));
    check_type(TY(ST_NCHAR, 2, 0, 0), false, false, VS("\xF0\x9F\x98\x80"), BYTES(0xEF, 4, 0, COLL),
               BYTES(4, 0, 0x3D, 0xD8, 0x00, 0xDE));
    check_type(TY(ST_VARBINARY, 4, 0, 0), true, false, ((sim_val){.k = V_BIN, .u.s = {"\xDE\xAD", 2}}), BYTES(0xA5, 4, 0),
               BYTES(2, 0, 0xDE, 0xAD));
    check_type(TY(ST_BINARY, 2, 0, 0), false, false, ((sim_val){.k = V_BIN, .u.s = {"\x01\x02", 2}}), BYTES(0xAD, 2, 0),
               BYTES(2, 0, 1, 2));
    check_type(TY(ST_UNIQUEIDENTIFIER, 0, 0, 0), true, false, VS("6F9619FF-8B86-D011-B42D-00C04FC964FF"), BYTES(0x24, 16),
               BYTES(16, 0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF));
    check_type(TY(ST_TEXT, -1, 0, 0), true, false, VS("hi"), BYTES(0x23, 0xFF, 0xFF, 0xFF, 0x7F, COLL, 0),
               BYTES(16, 0x64, 0x75, 0x6D, 0x6D, 0x79, 0x20, 0x74, 0x65, 0x78, 0x74, 0x70, 0x74, 0x72, 0, 0, 0,
                     0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 'h', 'i'));
    check_type(TY(ST_NTEXT, -1, 0, 0), true, false, VNULL, BYTES(0x63, 0xFE, 0xFF, 0xFF, 0x7F, COLL, 0), BYTES(0));
    /* image: IMAGETYPE, no collation, a text pointer and timestamp before the bytes; NULL is a 0 pointer length */
    check_type(TY(ST_IMAGE, 0, 0, 0), true, false, ((sim_val){.k = V_BIN, .u.s = {"\x00\xCA", 2}}),
               BYTES(0x22, 0xFF, 0xFF, 0xFF, 0x7F, 0),
               BYTES(16, 0x64, 0x75, 0x6D, 0x6D, 0x79, 0x20, 0x74, 0x65, 0x78, 0x74, 0x70, 0x74, 0x72, 0, 0, 0,
                     0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0x00, 0xCA));
    check_type(TY(ST_IMAGE, 0, 0, 0), true, false, VNULL, BYTES(0x22, 0xFF, 0xFF, 0xFF, 0x7F, 0), BYTES(0));
    /* rowversion: binary(8) */
    check_type(TY(ST_ROWVERSION, 8, 0, 0), false, false, ((sim_val){.k = V_BIN, .u.s = {"\0\0\0\0\0\0\x07\xD1", 8}}),
               BYTES(0xAD, 8, 0), BYTES(8, 0, 0, 0, 0, 0, 0, 0, 0x07, 0xD1));
    check_type(TY(ST_ROWVERSION, 8, 0, 0), true, false, VNULL, BYTES(0xAD, 8, 0), BYTES(0xFF, 0xFF));
    check_type(TY(ST_XML, -1, 0, 0), true, false, VS("<a/>"), BYTES(0xF1, 0),
               BYTES(8, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, '<', 0, 'a', 0, '/', 0, '>', 0, 0, 0, 0, 0));
    check_type(TY(ST_NVARCHAR, -1, 0, 0), true, false, VNULL, BYTES(0xE7, 0xFF, 0xFF, COLL),
               BYTES(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF));
    check_type(TY(ST_VARCHAR, -1, 0, 0), true, false, VS(""), BYTES(0xA7, 0xFF, 0xFF, COLL), BYTES(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    /* sql_variant (SERVERPROPERTY): an int and an nvarchar(128) */
    check_type(TY(ST_INT, 0, 0, 0), true, true, VI(16), BYTES(0x62, 0x49, 0x1F, 0, 0), BYTES(6, 0, 0, 0, 0x38, 0, 16, 0, 0, 0));
    check_type(TY(ST_NVARCHAR, 128, 0, 0), true, true, VS("16"), BYTES(0x62, 0x49, 0x1F, 0, 0),
               BYTES(13, 0, 0, 0, 0xE7, 7, COLL, 0x00, 0x01, '1', 0, '6', 0));
    check_type(TY(ST_INT, 0, 0, 0), true, true, VNULL, BYTES(0x62, 0x49, 0x1F, 0, 0), BYTES(0, 0, 0, 0));
}

static void test_source_tds_wire__max_values_travel_in_plp_chunks(void **state)
{
    (void)state;
    char *big = malloc(10000);
    memset(big, 'a', 10000);
    mcdc_sim_rcol c = {"v", TY(ST_VARCHAR, -1, 0, 0), true, false};
    tds_wbuf w = TDS_WBUF_INIT(1 << 20);
    assert_int_equal(tds_value(&w, &c, &(sim_val){.k = V_STR, .u.s = {big, 10000}}), 0);
    assert_int_equal(w.len, 8 + 3 * 4 + 10000 + 4);
    mem_eq(w.p, BYTES(0x10, 0x27, 0, 0, 0, 0, 0, 0, 0x00, 0x10, 0, 0));
    mem_eq(w.p + 12 + 4096, BYTES(0x00, 0x10, 0, 0));
    mem_eq(w.p + 12 + 4096 + 4 + 4096, BYTES(0x10, 0x07, 0, 0));
    mem_eq(w.p + w.len - 4, BYTES(0, 0, 0, 0));
    for (size_t i = 12; i < 12 + 4096; i++) assert_int_equal(w.p[i], 'a');
    free(big);
    tds_w_dispose(&w);
}

static void test_source_tds_wire__colmetadata_row_and_nbcrow(void **state)
{
    (void)state;
    mcdc_sim_rcol c[2] = {{"id", TY(ST_INT, 0, 0, 0), true, false}, {"n", TY(ST_NVARCHAR, 4, 0, 0), true, false}};
    tds_wbuf w = TDS_WBUF_INIT(1 << 16);
    assert_int_equal(tds_colmetadata(&w, c, 2), 0);
    expect_bytes(&w, BYTES(0x81, 2, 0, 0, 0, 0, 0, 0x09, 0x00, 0x26, 4, 2, 'i', 0, 'd', 0, 0, 0, 0, 0, 0x09, 0x00, 0xE7,
                           8, 0, COLL, 1, 'n', 0));
    tds_w_clear(&w);
    sim_val v[2] = {VI(1), VNULL};
    assert_int_equal(tds_row(&w, c, v, 2), 0);
    expect_bytes(&w, BYTES(0xD2, 0x02, 4, 1, 0, 0, 0));
    tds_w_clear(&w);
    v[1] = VS("a");
    assert_int_equal(tds_row(&w, c, v, 2), 0);
    expect_bytes(&w, BYTES(0xD1, 4, 1, 0, 0, 0, 2, 0, 'a', 0));
    tds_w_clear(&w);
    assert_int_equal(tds_returnvalue(&w, 1, "@o", &c[0], &v[0]), 0);
    expect_bytes(&w, BYTES(0xAC, 1, 0, 2, '@', 0, 'o', 0, 1, 0, 0, 0, 0, 0x09, 0x00, 0x26, 4, 4, 1, 0, 0, 0));
    /* a timestamp column: UserType 80 (MS-TDS has no flag for it), binary(8) */
    tds_w_clear(&w);
    mcdc_sim_rcol rv = {"rv", TY(ST_ROWVERSION, 8, 0, 0), false, false};
    assert_int_equal(tds_colmetadata(&w, &rv, 1), 0);
    expect_bytes(&w, BYTES(0x81, 1, 0, 0x50, 0, 0, 0, 0x08, 0x00, 0xAD, 8, 0, 2, 'r', 0, 'v', 0));
    tds_w_dispose(&w);
}

/* Encode one value into a writer with no buffer, one that is full (every byte needs growth)
 * and one with room to spare (the in-place paths): the same return code and the same bytes;
 * and a row holding it the same by tds_row and by tds_row_planned. */
static void same_bytes_in_every_writer(mcdc_sim_rcol c, sim_val v)
{
    tds_wbuf fresh = TDS_WBUF_INIT(1 << 20), full = TDS_WBUF_INIT(1 << 20), roomy = TDS_WBUF_INIT(1 << 20);
    uint8_t *pre = tds_w_reserve(&full, 256);
    assert_non_null(pre);
    memset(pre, 0xAA, 256);
    assert_int_equal(full.len, full.cap);
    assert_non_null(tds_w_reserve(&roomy, 1 << 16));
    tds_w_clear(&roomy);
    int rc_fresh = tds_value(&fresh, &c, &v), rc_full = tds_value(&full, &c, &v), rc_roomy = tds_value(&roomy, &c, &v);
    char t[64];
    sim_type_format(t, sizeof t, &c.type);
    if (rc_fresh != rc_full || rc_fresh != rc_roomy || fresh.len != full.len - 256 || fresh.len != roomy.len ||
        (fresh.len && (memcmp(fresh.p, full.p + 256, fresh.len) || memcmp(fresh.p, roomy.p, fresh.len)))) {
        fprintf(stderr, "%s%s value kind %d: rc %d/%d/%d, %zu/%zu/%zu bytes\n", t, c.nullable ? " NULL" : " NOT NULL",
                (int)v.k, rc_fresh, rc_full, rc_roomy, fresh.len, full.len - 256, roomy.len);
        fail();
    }
    tds_w_dispose(&fresh);
    tds_w_dispose(&full);
    tds_w_dispose(&roomy);
    /* the same value as a row (ROW, or NBCROW when NULL) by the column's plan, between an int
     * and an nvarchar, against tds_row */
    mcdc_sim_rcol cs[3] = {{"a", TY(ST_INT, 0, 0, 0), true, false}, c, {"z", TY(ST_NVARCHAR, 8, 0, 0), false, false}};
    sim_val vs[3] = {VI(7), v, VS("z")};
    tds_colplan plan[3];
    tds_row_plan(cs, 3, plan);
    for (int room = 0; room < 2; room++) {
        tds_wbuf a = TDS_WBUF_INIT(1 << 20), b = TDS_WBUF_INIT(1 << 20);
        if (room) {
            assert_non_null(tds_w_reserve(&b, 1 << 16));
            tds_w_clear(&b);
        }
        int ra = tds_row(&a, cs, vs, 3), rb = tds_row_planned(&b, cs, plan, vs, 3);
        if (ra != rb || a.len != b.len || (a.len && memcmp(a.p, b.p, a.len))) {
            fprintf(stderr, "row of %s%s value kind %d (room %d): rc %d/%d, %zu/%zu bytes\n", t,
                    c.nullable ? " NULL" : " NOT NULL", (int)v.k, room, ra, rb, a.len, b.len);
            fail();
        }
        tds_w_dispose(&a);
        tds_w_dispose(&b);
    }
}

static void test_source_tds_wire__values_are_the_same_bytes_whatever_room_the_writer_has(void **state)
{
    (void)state;
    static const sim_tkind fixed[] = {ST_BIT, ST_TINYINT, ST_SMALLINT, ST_INT, ST_BIGINT, ST_REAL, ST_FLOAT, ST_MONEY,
                                      ST_SMALLMONEY, ST_DATETIME, ST_SMALLDATETIME};
    const sim_val nums[] = {VI(0), VI(1), VI(-1), VI(255), VI(256), VI(INT32_MAX), VI(INT64_C(-3000000000)), VNULL,
                            {.k = V_FLT, .u.d = -2.75}, {.k = V_DEC, .prec = 12, .scale = 2, .u.dec = -143867045},
                            {.k = V_DT, .u.i = INT64_C(17587363963360000)}, {.k = V_DATE, .u.i = 20089}, VS("7")};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        for (int nl = 0; nl < 2; nl++)
            for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
                same_bytes_in_every_writer((mcdc_sim_rcol){"c", TY(fixed[k], 0, 0, 0), nl, false}, nums[i]);
    /* decimal, the date/time types and uniqueidentifier: a length byte, then the value */
    const sim_type lengthy[] = {TY(ST_DECIMAL, 0, 12, 2), TY(ST_NUMERIC, 0, 38, 0), TY(ST_DECIMAL, 0, 5, 2),
                                TY(ST_DATE, 0, 0, 0), TY(ST_TIME, 0, 0, 7), TY(ST_TIME, 0, 0, 0), TY(ST_DATETIME2, 0, 0, 3),
                                TY(ST_DATETIME2, 0, 0, 7), TY(ST_DATETIMEOFFSET, 0, 0, 7), TY(ST_UNIQUEIDENTIFIER, 0, 0, 0)};
    const sim_val temporal[] = {VNULL, {.k = V_DEC, .prec = 12, .scale = 2, .u.dec = 143867045},
                                {.k = V_DEC, .prec = 6, .scale = 2, .u.dec = 100000}, VI(3),
                                {.k = V_DT, .u.i = INT64_C(17587363963360000)}, {.k = V_DATE, .u.i = -719162},
                                {.k = V_TIME, .u.i = INT64_C(452961234567)}, {.k = V_DTO, .off = -300, .u.i = 0},
                                VS("6F9619FF-8B86-D011-B42D-00C04FC964FF"), VS("not a guid")};
    for (size_t k = 0; k < sizeof lengthy / sizeof lengthy[0]; k++)
        for (size_t i = 0; i < sizeof temporal / sizeof temporal[0]; i++)
            same_bytes_in_every_writer((mcdc_sim_rcol){"c", lengthy[k], true, false}, temporal[i]);
    /* strings and binaries: ASCII, Latin-1, CP1252's extras, characters CP1252 lacks, a character
     * beyond the BMP, malformed UTF-8, and lengths at and past the 8000-byte limit */
    size_t big_n = 8001;
    char *big = malloc(big_n);
    memset(big, 'x', big_n);
    const sim_val strs[] = {VNULL, VS(""), VS("Leslie 890590"), VS("Jos\xC3\xA9 K\xC3\xA4the"), VS("\xE2\x82\xAC\xE2\x84\xA2"),
                            VS("\xC4\x81\xE4\xB8\xAD"), VS("\xF0\x9F\x98\x80!"), VS("\xFF\xE2\x82 \xC3"),
                            {.k = V_BIN, .u.s = {"\x00\xE3\x7A\x15", 4}}, VI(5),
                            {.k = V_STR, .u.s = {big, 4000}}, {.k = V_STR, .u.s = {big, 4001}},
                            {.k = V_STR, .u.s = {big, 8000}}, {.k = V_STR, .u.s = {big, 8001}}};
    const sim_type strt[] = {TY(ST_VARCHAR, 16, 0, 0), TY(ST_CHAR, 8000, 0, 0), TY(ST_NVARCHAR, 40, 0, 0),
                             TY(ST_NVARCHAR, 4000, 0, 0), TY(ST_NCHAR, 10, 0, 0), TY(ST_VARBINARY, 128, 0, 0),
                             TY(ST_BINARY, 10, 0, 0), TY(ST_VARCHAR, -1, 0, 0), TY(ST_NVARCHAR, -1, 0, 0),
                             TY(ST_TEXT, -1, 0, 0), TY(ST_NTEXT, -1, 0, 0), TY(ST_XML, -1, 0, 0)};
    for (size_t k = 0; k < sizeof strt / sizeof strt[0]; k++)
        for (int nl = 0; nl < 2; nl++)
            for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
                same_bytes_in_every_writer((mcdc_sim_rcol){"c", strt[k], nl, false}, strs[i]);
    /* sql_variant, as SERVERPROPERTY sends it */
    same_bytes_in_every_writer((mcdc_sim_rcol){"c", TY(ST_NVARCHAR, 128, 0, 0), true, true}, VS("Jos\xC3\xA9"));
    same_bytes_in_every_writer((mcdc_sim_rcol){"c", TY(ST_INT, 0, 0, 0), true, true}, VI(16));
    free(big);
}

/* The powers of ten behind every decimal scale and precision: 1 at scale 0 into
 * decimal(38, s) travels as 10^s, and 10^38 - 1 is the largest decimal(38, 0). */
static void test_source_tds_wire__decimals_scale_by_every_power_of_ten(void **state)
{
    (void)state;
    unsigned __int128 p = 1;
    for (int sc = 0; sc <= 38; sc++, p *= 10) {
        mcdc_sim_rcol c = {"d", TY(ST_DECIMAL, 0, 38, sc), true, false};
        tds_wbuf w = TDS_WBUF_INIT(1024);
        int rc = tds_value(&w, &c, &VI(1));
        if (sc == 38) { /* 10^38 has 39 digits */
            assert_int_equal(rc, MCDC_EINVAL);
        } else {
            assert_int_equal(rc, 0);
            uint8_t exp[18] = {17, 1};
            for (int k = 0; k < 16; k++) exp[2 + k] = (uint8_t)(p >> (8 * k));
            expect_bytes(&w, exp, sizeof exp);
        }
        tds_w_dispose(&w);
    }
}

/* The text encoders write in place when the writer has room and size first when it has not:
 * the same bytes and the same count of UTF-16 units or CP1252 bytes. */
static void test_source_tds_wire__text_encoders_agree_with_and_without_room(void **state)
{
    (void)state;
    static const char *const texts[] = {"", "abc", "Jos\xC3\xA9", "\xE2\x82\xAC\xE2\x84\xA2\xC4\x81", "\xF0\x9F\x98\x80",
                                        "\xFF\xFE", "\xE2\x82", "a\xC3"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        size_t n = strlen(texts[i]);
        for (int cp = 0; cp < 2; cp++) {
            tds_wbuf a = TDS_WBUF_INIT(1 << 16), b = TDS_WBUF_INIT(1 << 16);
            assert_non_null(tds_w_reserve(&b, 1024));
            tds_w_clear(&b);
            size_t ka = cp ? tds_utf8_to_cp1252(&a, texts[i], n) : tds_utf8_to_utf16(&a, texts[i], n);
            size_t kb = cp ? tds_utf8_to_cp1252(&b, texts[i], n) : tds_utf8_to_utf16(&b, texts[i], n);
            assert_int_equal(ka, kb);
            assert_int_equal(a.len, b.len);
            assert_int_equal(a.len, cp ? ka : ka * 2);
            assert_int_equal(ka, cp ? tds_cp1252_len(texts[i], n) : tds_utf16_units(texts[i], n));
            if (a.len) assert_memory_equal(a.p, b.p, a.len);
            tds_w_dispose(&a);
            tds_w_dispose(&b);
        }
    }
}

/* ---- RPC --------------------------------------------------------------------------------------- */

static void p_name(tds_wbuf *p, const char *name, uint8_t status)
{
    tds_w_u8(p, (uint8_t)strlen(name));
    cl_utf16(p, name);
    tds_w_u8(p, status);
}

static void test_source_tds_wire__rpc_parameters_are_decoded_with_their_types(void **state)
{
    (void)state;
    tds_wbuf p = TDS_WBUF_INIT(1 << 16);
    tds_w_u16(&p, 0xFFFF);
    tds_w_u16(&p, 10); /* sp_executesql */
    tds_w_u16(&p, 0);
    p_name(&p, "", 0); /* @stmt nvarchar(4000) */
    tds_w_u8(&p, 0xE7); tds_w_u16(&p, 8000); tds_w_put(&p, tds_collation, 5);
    tds_w_u16(&p, 18); cl_utf16(&p, "SELECT @a");
    p_name(&p, "@a", 0); /* int 7 */
    tds_w_u8(&p, 0x26); tds_w_u8(&p, 4); tds_w_u8(&p, 4); tds_w_u32(&p, 7);
    p_name(&p, "@d", 0); /* decimal(10,2) -1.50 */
    tds_w_u8(&p, 0x6A); tds_w_u8(&p, 9); tds_w_u8(&p, 10); tds_w_u8(&p, 2); tds_w_u8(&p, 9); tds_w_u8(&p, 0);
    tds_w_u64(&p, 150);
    p_name(&p, "@s", 0); /* varchar(10) "\x80" in CP1252 */
    tds_w_u8(&p, 0xA7); tds_w_u16(&p, 10); tds_w_put(&p, tds_collation, 5); tds_w_u16(&p, 1); tds_w_u8(&p, 0x80);
    p_name(&p, "@n", 1); /* nvarchar(max) NULL, output */
    tds_w_u8(&p, 0xE7); tds_w_u16(&p, 0xFFFF); tds_w_put(&p, tds_collation, 5); tds_w_u64(&p, UINT64_MAX);
    p_name(&p, "@t", 0); /* datetime2(3) 2025-01-01 10:00:01.123 */
    tds_w_u8(&p, 0x2A); tds_w_u8(&p, 3); tds_w_u8(&p, 7);
    tds_w_put(&p, BYTES(0x63, 0x55, 0x25, 0x02, 0xb3, 0x47, 0x0b));
    p_name(&p, "@g", 0); /* uniqueidentifier */
    tds_w_u8(&p, 0x24); tds_w_u8(&p, 16); tds_w_u8(&p, 16);
    tds_w_put(&p, BYTES(0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF));
    p_name(&p, "@b", 0); /* varbinary(max) in two chunks */
    tds_w_u8(&p, 0xA5); tds_w_u16(&p, 0xFFFF); tds_w_u64(&p, 3);
    tds_w_u32(&p, 2); tds_w_put(&p, "\x01\x02", 2); tds_w_u32(&p, 1); tds_w_put(&p, "\x03", 1); tds_w_u32(&p, 0);
    /* a second call by name, after the batch separator */
    tds_w_u8(&p, 0xFF);
    tds_w_u16(&p, 12); cl_utf16(&p, "sp_unprepare");
    tds_w_u16(&p, 0);
    p_name(&p, "", 0);
    tds_w_u8(&p, 0x38); tds_w_u32(&p, 3);

    sim_arena a = {0};
    tds_rpc_call *calls;
    int n;
    assert_int_equal(tds_rpc_parse(&a, p.p, p.len, &calls, &n), 0);
    assert_int_equal(n, 2);
    assert_null(calls[0].proc);
    assert_int_equal(calls[0].proc_id, 10);
    assert_int_equal(calls[0].n_params, 8);
    mcdc_sim_param *q = calls[0].params;
    assert_null(q[0].name);
    assert_int_equal(q[0].type.k, ST_NVARCHAR);
    assert_int_equal(q[0].type.len, 4000);
    assert_int_equal(q[0].value.u.s.n, 9);
    assert_memory_equal(q[0].value.u.s.p, "SELECT @a", 9);
    assert_string_equal(q[1].name, "@a");
    assert_int_equal(q[1].type.k, ST_INT);
    assert_int_equal(q[1].value.u.i, 7);
    assert_int_equal(q[2].type.k, ST_DECIMAL);
    assert_int_equal(q[2].type.prec, 10);
    assert_int_equal(q[2].type.scale, 2);
    assert_true(q[2].value.u.dec == -150);
    assert_int_equal(q[3].type.k, ST_VARCHAR);
    assert_int_equal(q[3].value.u.s.n, 3);
    assert_memory_equal(q[3].value.u.s.p, "\xE2\x82\xAC", 3);
    assert_int_equal(q[4].type.k, ST_NVARCHAR);
    assert_int_equal(q[4].type.len, -1);
    assert_int_equal(q[4].value.k, V_NULL);
    assert_true(q[4].output);
    assert_int_equal(q[5].type.k, ST_DATETIME2);
    assert_int_equal(q[5].type.scale, 3);
    assert_true(q[5].value.u.i == INT64_C(1735725601123) * 10000);
    assert_int_equal(q[6].value.u.s.n, 36);
    assert_memory_equal(q[6].value.u.s.p, "6F9619FF-8B86-D011-B42D-00C04FC964FF", 36);
    assert_int_equal(q[7].value.k, V_BIN);
    assert_int_equal(q[7].value.u.s.n, 3);
    assert_memory_equal(q[7].value.u.s.p, "\x01\x02\x03", 3);
    assert_string_equal(calls[1].proc, "sp_unprepare");
    assert_int_equal(calls[1].params[0].value.u.i, 3);
    /* every cut of the request is refused, never read past */
    for (size_t cut = 1; cut < p.len; cut++) {
        uint8_t *copy = malloc(cut);
        memcpy(copy, p.p, cut);
        int rc = tds_rpc_parse(&a, copy, cut, &calls, &n);
        assert_true(rc == 0 || rc == MCDC_ECORRUPT);
        free(copy);
    }
    sim_arena_free(&a);
    tds_w_dispose(&p);
}

/* ---- whole connections on the fake engine ----------------------------------------------------------- */

typedef struct session_out {
    tds_wbuf payload;
    size_t   starts[64];
    int      n;
    bool     sizes_ok;
} session_out;

static void run(const tds_wbuf *client, session_out *o, tds_faults *faults, size_t packet_size)
{
    memio m = {client->p, client->len, 0, 0, TDS_WBUF_INIT(1 << 26)};
    fake_serve(&m, faults);
    o->payload = (tds_wbuf)TDS_WBUF_INIT(1 << 26);
    assert_true(sv_messages(m.out.p, m.out.len, &o->payload, o->starts, 64, &o->n, packet_size, &o->sizes_ok));
    tds_w_dispose(&m.out);
}

static const uint8_t *msg_at(session_out *o, int i, size_t *len)
{
    size_t end = i + 1 < o->n ? o->starts[i + 1] : o->payload.len;
    *len = end - o->starts[i];
    return o->payload.p + o->starts[i];
}

static void test_source_tds_wire__login_answer_in_sql_server_order_then_a_batch(void **state)
{
    (void)state;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "d", 4096);
    cl_batch(&cl, "SELECT 1", 4096);
    session_out o;
    run(&cl, &o, NULL, 4096);
    assert_int_equal(o.n, 3);
    size_t n;
    const uint8_t *m = msg_at(&o, 1, &n);
    /* walk the tokens of the login answer */
    uint8_t seq[16];
    int ns = 0;
    size_t i = 0;
    while (i < n && ns < 16) {
        uint8_t t = m[i];
        seq[ns++] = t;
        if (t == TDS_TOK_DONE) { i += 13; continue; }
        if (t == TDS_TOK_ENVCHANGE) seq[ns - 1] = (uint8_t)(0xE0 | m[i + 3]); /* E1 database, E7 collation, ... */
        i += 3 + (size_t)(m[i + 1] | m[i + 2] << 8);
    }
    assert_int_equal(i, n);
    assert_int_equal(ns, 8);
    mem_eq(seq, BYTES(0xE1, 0xAB, 0xE7, 0xE2, 0xAB, 0xAD, 0xE4, 0xFD));
    m = msg_at(&o, 2, &n);
    assert_int_equal(n, 11 + 5 + 13);
    mem_eq(m, BYTES(0x81, 1, 0, 0, 0, 0, 0, 0x08, 0x00, 0x38, 0, 0xD1, 1, 0, 0, 0, 0xFD, 0x10, 0x00, 0xC1,
                                 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0));
    tds_w_dispose(&o.payload);
    tds_w_dispose(&cl);
}

static void test_source_tds_wire__wrong_password_gets_18456_and_a_close(void **state)
{
    (void)state;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "Wr0ngPw", "d", 4096);
    cl_batch(&cl, "SELECT 1", 4096);
    memio m = {cl.p, cl.len, 0, 0, TDS_WBUF_INIT(1 << 20)};
    fake_serve(&m, NULL);
    session_out o = {.payload = TDS_WBUF_INIT(1 << 20)};
    assert_true(sv_messages(m.out.p, m.out.len, &o.payload, o.starts, 64, &o.n, 4096, &o.sizes_ok));
    assert_int_equal(o.n, 2); /* the batch was never answered: the connection closed */
    size_t n;
    const uint8_t *p = msg_at(&o, 1, &n);
    assert_int_equal(p[0], TDS_TOK_ERROR);
    mem_eq(p + 3, BYTES(0x18, 0x48, 0, 0, 1, 14)); /* 18456, state 1, class 14 */
    (void)p;
    tds_w_dispose(&o.payload);
    tds_w_dispose(&m.out);
    tds_w_dispose(&cl);
}

static void test_source_tds_wire__unknown_database_gets_4060_then_18456(void **state)
{
    (void)state;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_OFF);
    cl_login7(&cl, "u", "secret", "nope", 4096);
    session_out o;
    run(&cl, &o, NULL, 4096);
    assert_int_equal(o.n, 2);
    size_t n;
    const uint8_t *p = msg_at(&o, 1, &n);
    assert_int_equal(p[0], TDS_TOK_ERROR);
    mem_eq(p + 3, BYTES(0xDC, 0x0F, 0, 0, 1, 11)); /* 4060 */
    assert_non_null(find(p, n, BYTES(0x18, 0x48, 0, 0, 1, 14)));
    tds_w_dispose(&o.payload);
    tds_w_dispose(&cl);
}

static void test_source_tds_wire__responses_split_to_the_negotiated_packet_size(void **state)
{
    (void)state;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "", 512);
    cl_batch(&cl, "ROWS 1000", 512);
    memio m = {cl.p, cl.len, 0, 7, TDS_WBUF_INIT(1 << 24)}; /* the client's bytes arrive 7 at a time */
    fake_serve(&m, NULL);
    session_out o = {.payload = TDS_WBUF_INIT(1 << 24)};
    assert_true(sv_messages(m.out.p, m.out.len, &o.payload, o.starts, 64, &o.n, 512, &o.sizes_ok));
    assert_int_equal(o.n, 3);
    assert_true(o.sizes_ok); /* every packet but a message's last is exactly 512 bytes */
    size_t n;
    const uint8_t *p = msg_at(&o, 1, &n);
    assert_non_null(find(p, n, BYTES(0xE3, 17, 0, 4, 3, '5', 0, '1', 0, '2', 0, 4, '4', 0, '0', 0, '9', 0, '6', 0)));
    p = msg_at(&o, 2, &n);
    mem_eq(p + n - 13, BYTES(0xFD, 0x10, 0x00, 0xC1, 0x00, 0xE8, 0x03, 0, 0, 0, 0, 0, 0)); /* 1000 rows */
    tds_w_dispose(&o.payload);
    tds_w_dispose(&m.out);
    tds_w_dispose(&cl);
}

/* A long response goes out in writes of many packets (about TDS_SEND_BATCH bytes each), not
 * one or two writes per packet: a loopback client reads 1.2 million rows with a few thousand
 * system calls on each side rather than sixty thousand. */
static void test_source_tds_wire__packets_of_a_response_are_written_together(void **state)
{
    (void)state;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "", 4096);
    cl_batch(&cl, "ROWS 50000", 4096);
    memio m = {cl.p, cl.len, 0, 0, TDS_WBUF_INIT(1 << 24), 0};
    fake_serve(&m, NULL);
    session_out o = {.payload = TDS_WBUF_INIT(1 << 24)};
    assert_true(sv_messages(m.out.p, m.out.len, &o.payload, o.starts, 64, &o.n, 4096, &o.sizes_ok));
    assert_int_equal(o.n, 3);
    assert_true(o.sizes_ok); /* still packets of exactly 4096 bytes but a message's last */
    size_t n, packets = (m.out.len + 4095) / 4096;
    const uint8_t *p = msg_at(&o, 2, &n);
    mem_eq(p + n - 13, BYTES(0xFD, 0x10, 0x00, 0xC1, 0x00, 0x50, 0xC3, 0, 0, 0, 0, 0, 0)); /* 50,000 rows */
    fprintf(stderr, "# %zu bytes in %zu packets, %zu writes\n", m.out.len, packets, m.n_sends);
    assert_true(packets > 50);
    assert_true(m.n_sends <= m.out.len / TDS_SEND_BATCH + 4); /* prelogin, login, then the rows */
    tds_w_dispose(&o.payload);
    tds_w_dispose(&m.out);
    tds_w_dispose(&cl);
}

static void test_source_tds_wire__attention_ends_the_request_with_done_attn(void **state)
{
    (void)state;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "d", 4096);
    cl_batch(&cl, "ROWS 100000", 4096);
    cl_attention(&cl);
    cl_batch(&cl, "SELECT 1", 4096);
    /* the attention is read while the rows stream: deliver the batch, then let the rest wait */
    session_out o;
    run(&cl, &o, NULL, 4096);
    assert_true(o.n >= 3);
    size_t n;
    const uint8_t *p = msg_at(&o, 2, &n);
    mem_eq(p + n - 13, BYTES(0xFD, 0x20, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0));
    assert_true(n < 100000); /* the rows stopped */
    tds_w_dispose(&o.payload);
    tds_w_dispose(&cl);
    /* an attention between requests is acknowledged alone */
    cl = (tds_wbuf)TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "d", 4096);
    cl_attention(&cl);
    run(&cl, &o, NULL, 4096);
    assert_int_equal(o.n, 3);
    p = msg_at(&o, 2, &n);
    expect_bytes(&(tds_wbuf){(uint8_t *)p, n, n, n, 0}, BYTES(0xFD, 0x20, 0x00, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0));
    tds_w_dispose(&o.payload);
    tds_w_dispose(&cl);
}

static void test_source_tds_wire__transactions_get_descriptors_in_envchange(void **state)
{
    (void)state;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "d", 4096);
    tds_wbuf p = TDS_WBUF_INIT(1024);
    cl_all_headers(&p);
    tds_w_u16(&p, 5); /* TM_BEGIN_XACT */
    tds_w_u8(&p, 0);
    tds_w_u8(&p, 0);
    tds_frame(&cl, TDS_PKT_TM, 0, 4096, p.p, p.len);
    tds_w_clear(&p);
    cl_all_headers(&p);
    tds_w_u16(&p, 7); /* TM_COMMIT_XACT */
    tds_w_u8(&p, 0);
    tds_w_u8(&p, 0);
    tds_frame(&cl, TDS_PKT_TM, 0, 4096, p.p, p.len);
    session_out o;
    run(&cl, &o, NULL, 4096);
    assert_int_equal(o.n, 4);
    size_t n;
    const uint8_t *m = msg_at(&o, 2, &n);
    expect_bytes(&(tds_wbuf){(uint8_t *)m, n, n, n, 0},
                 BYTES(0xE3, 11, 0, 8, 8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    m = msg_at(&o, 3, &n);
    mem_eq(m, BYTES(0xE3, 11, 0, 9, 0, 8, 1, 0, 0, 0, 0, 0, 0, 0));
    tds_w_dispose(&p);
    tds_w_dispose(&o.payload);
    tds_w_dispose(&cl);
}

/* drop-after-rows is asked about every row sent: it fires at its row count only, once (every
 * time with --fault-repeat), and a server without one never fires. */
static void test_source_tds_wire__drop_after_rows_fires_at_its_count_only(void **state)
{
    (void)state;
    tds_faults fs = {0};
    pthread_mutex_init(&fs.mu, NULL);
    for (int64_t r = 1; r <= 10; r++) assert_false(tds_faults_drop_now(&fs, r));
    assert_int_equal(tds_fault_parse(&fs.f[0], "stall:1ms"), 0);
    assert_int_equal(tds_fault_parse(&fs.f[1], "drop-after-rows:3"), 0);
    fs.n = 2;
    int fired = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t r = 1; r <= 10; r++)
            if (tds_faults_drop_now(&fs, r)) {
                assert_int_equal(r, 3);
                fired++;
            }
    assert_int_equal(fired, 1);
    assert_int_equal(fs.f[1].fired, 1);
    assert_int_equal(fs.f[0].fired, 0);
    fs.repeat = true;
    assert_true(tds_faults_drop_now(&fs, 3));
    assert_false(tds_faults_drop_now(&fs, 4));
    assert_int_equal(fs.f[1].fired, 2);
    pthread_mutex_destroy(&fs.mu);
}

static void test_source_tds_wire__faults_parse_and_fire_once(void **state)
{
    (void)state;
    tds_fault f;
    assert_int_equal(tds_fault_parse(&f, "drop-after-rows:3"), 0);
    assert_int_equal(f.kind, TDS_FAULT_DROP_AFTER_ROWS);
    assert_int_equal(f.n, 3);
    assert_int_equal(tds_fault_parse(&f, "stall:250ms"), 0);
    assert_int_equal(f.stall_us, 250000);
    assert_int_equal(tds_fault_parse(&f, "error:1222@2"), 0);
    assert_int_equal(f.error, 1222);
    assert_int_equal(f.n, 2);
    assert_int_equal(tds_fault_parse(&f, "error:1204@2"), MCDC_EINVAL);
    assert_int_equal(tds_fault_parse(&f, "error:1205"), MCDC_EINVAL);
    assert_int_equal(tds_fault_parse(&f, "drop-after-rows:0"), MCDC_EINVAL);
    assert_int_equal(tds_fault_parse(&f, "stall:soon"), MCDC_EINVAL);
    assert_int_equal(tds_fault_parse(&f, "explode"), MCDC_EINVAL);
    assert_non_null(strstr(mcdc_error_last()->hint, "drop-after-rows:N"));

    /* error:1205@2: the second request gets the deadlock error, the third runs */
    tds_faults fs = {0};
    pthread_mutex_init(&fs.mu, NULL);
    assert_int_equal(tds_fault_parse(&fs.f[0], "error:1205@2"), 0);
    fs.n = 1;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "d", 4096);
    for (int i = 0; i < 3; i++) cl_batch(&cl, "SELECT 1", 4096);
    session_out o;
    run(&cl, &o, &fs, 4096);
    assert_int_equal(o.n, 5);
    size_t n;
    const uint8_t *m = msg_at(&o, 3, &n);
    assert_int_equal(m[0], TDS_TOK_ERROR);
    mem_eq(m + 3, BYTES(0xB5, 0x04, 0, 0, 51, 13)); /* 1205, state 51, class 13 */
    mem_eq(m + n - 13, BYTES(0xFD, 0x02, 0x00));
    m = msg_at(&o, 4, &n);
    assert_int_equal(m[0], TDS_TOK_COLMETADATA);
    tds_w_dispose(&o.payload);
    tds_w_dispose(&cl);

    /* drop-after-rows:5: five rows reach the client, then the connection closes mid-message */
    fs.f[0] = (tds_fault){0};
    assert_int_equal(tds_fault_parse(&fs.f[0], "drop-after-rows:5"), 0);
    cl = (tds_wbuf)TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "d", 4096);
    cl_batch(&cl, "ROWS 10", 4096);
    memio mm = {cl.p, cl.len, 0, 0, TDS_WBUF_INIT(1 << 20)};
    fake_serve(&mm, &fs);
    session_out o2 = {.payload = TDS_WBUF_INIT(1 << 20)};
    assert_true(sv_messages(mm.out.p, mm.out.len, &o2.payload, o2.starts, 64, &o2.n, 4096, &o2.sizes_ok));
    assert_int_equal(o2.n, 3);
    m = msg_at(&o2, 2, &n);
    int rows = 0;
    for (size_t i = 0; i < n; i++) rows += m[i] == TDS_TOK_ROW || m[i] == TDS_TOK_NBCROW; /* ids are < 0xD1 */
    assert_int_equal(rows, 5);
    assert_null(find(m, n, BYTES(0xFD)));
    assert_int_equal(mm.out.p[1] & 1, 1); /* (the prelogin answer was whole) */
    tds_w_dispose(&o2.payload);
    tds_w_dispose(&mm.out);
    tds_w_dispose(&cl);
    pthread_mutex_destroy(&fs.mu);
}

static void test_source_tds_wire__rpc_reaches_the_engine_and_a_bad_one_gets_8009(void **state)
{
    (void)state;
    tds_wbuf cl = TDS_WBUF_INIT(1 << 20);
    cl_prelogin(&cl, TDS_ENC_NOT_SUP);
    cl_login7(&cl, "u", "secret", "d", 4096);
    tds_wbuf p = TDS_WBUF_INIT(1024);
    cl_all_headers(&p);
    tds_w_u16(&p, 0xFFFF);
    tds_w_u16(&p, 12); /* sp_execute 5 */
    tds_w_u16(&p, 0);
    p_name(&p, "", 0);
    tds_w_u8(&p, 0x26); tds_w_u8(&p, 4); tds_w_u8(&p, 4); tds_w_u32(&p, 5);
    tds_frame(&cl, TDS_PKT_RPC, 0, 4096, p.p, p.len);
    tds_w_clear(&p);
    cl_all_headers(&p);
    tds_w_u16(&p, 0xFFFF);
    tds_w_u16(&p, 12);
    tds_w_u16(&p, 0);
    p_name(&p, "", 0);
    tds_w_u8(&p, 0x26); tds_w_u8(&p, 4); tds_w_u8(&p, 4); /* value cut short */
    tds_frame(&cl, TDS_PKT_RPC, 0, 4096, p.p, p.len);
    cl_batch(&cl, "SELECT 1", 4096);
    tds_w_clear(&p); /* two calls in one request: the first DONEPROC says more follows */
    cl_all_headers(&p);
    for (int k = 0; k < 2; k++) {
        if (k) tds_w_u8(&p, 0xFF);
        tds_w_u16(&p, 0xFFFF);
        tds_w_u16(&p, 15); /* sp_unprepare 1 */
        tds_w_u16(&p, 0);
        p_name(&p, "", 0);
        tds_w_u8(&p, 0x38); tds_w_u32(&p, 1);
    }
    tds_frame(&cl, TDS_PKT_RPC, 0, 4096, p.p, p.len);
    session_out o;
    fake_last_rpc_nparams = -1;
    run(&cl, &o, NULL, 4096);
    assert_int_equal(o.n, 6);
    assert_int_equal(fake_last_rpc_nparams, 1);
    assert_int_equal(fake_last_params[0].value.u.i, 1); /* the last call's (sp_unprepare 1) */
    size_t n;
    const uint8_t *m = msg_at(&o, 2, &n);
    expect_bytes(&(tds_wbuf){(uint8_t *)m, n, n, n, 0},
                 BYTES(0x79, 0, 0, 0, 0, 0xFE, 0, 0, 0xE0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    m = msg_at(&o, 3, &n);
    assert_int_equal(m[0], TDS_TOK_ERROR);
    mem_eq(m + 3, BYTES(0x49, 0x1F, 0, 0)); /* 8009 */
    m = msg_at(&o, 4, &n);
    assert_int_equal(m[0], TDS_TOK_COLMETADATA); /* the connection went on */
    m = msg_at(&o, 5, &n);
    expect_bytes(&(tds_wbuf){(uint8_t *)m, n, n, n, 0},
                 BYTES(0x79, 0, 0, 0, 0, 0xFE, 1, 0, 0xE0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                       0x79, 0, 0, 0, 0, 0xFE, 0, 0, 0xE0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    tds_w_dispose(&p);
    tds_w_dispose(&o.payload);
    tds_w_dispose(&cl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_tds_wire__password_obfuscation_is_nibble_swap_and_xor),
        cmocka_unit_test(test_source_tds_wire__prelogin_answer_and_encryption_table),
        cmocka_unit_test(test_source_tds_wire__login7_fields_and_password_are_decoded),
        cmocka_unit_test(test_source_tds_wire__tokens_byte_for_byte),
        cmocka_unit_test(test_source_tds_wire__numeric_types_byte_for_byte),
        cmocka_unit_test(test_source_tds_wire__temporal_types_byte_for_byte),
        cmocka_unit_test(test_source_tds_wire__string_binary_guid_and_variant_byte_for_byte),
        cmocka_unit_test(test_source_tds_wire__max_values_travel_in_plp_chunks),
        cmocka_unit_test(test_source_tds_wire__colmetadata_row_and_nbcrow),
        cmocka_unit_test(test_source_tds_wire__values_are_the_same_bytes_whatever_room_the_writer_has),
        cmocka_unit_test(test_source_tds_wire__text_encoders_agree_with_and_without_room),
        cmocka_unit_test(test_source_tds_wire__decimals_scale_by_every_power_of_ten),
        cmocka_unit_test(test_source_tds_wire__rpc_parameters_are_decoded_with_their_types),
        cmocka_unit_test(test_source_tds_wire__login_answer_in_sql_server_order_then_a_batch),
        cmocka_unit_test(test_source_tds_wire__wrong_password_gets_18456_and_a_close),
        cmocka_unit_test(test_source_tds_wire__unknown_database_gets_4060_then_18456),
        cmocka_unit_test(test_source_tds_wire__responses_split_to_the_negotiated_packet_size),
        cmocka_unit_test(test_source_tds_wire__packets_of_a_response_are_written_together),
        cmocka_unit_test(test_source_tds_wire__attention_ends_the_request_with_done_attn),
        cmocka_unit_test(test_source_tds_wire__transactions_get_descriptors_in_envchange),
        cmocka_unit_test(test_source_tds_wire__faults_parse_and_fire_once),
        cmocka_unit_test(test_source_tds_wire__drop_after_rows_fires_at_its_count_only),
        cmocka_unit_test(test_source_tds_wire__rpc_reaches_the_engine_and_a_bad_one_gets_8009),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
