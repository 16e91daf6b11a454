/*
 * tests/unit/core/text.c: UTF-8 to UTF-16LE and CP1252 (mcdc/text.h), the bytes SQL Server
 * stores for an nvarchar and a varchar: worked examples, surrogate pairs, malformed input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mcdc/text.h"

static void test_core_text__utf16le_of_ascii_latin_and_a_pair(void **state)
{
    (void)state;
    uint8_t out[32];
    const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* a é € 😀 */
    size_t n = strlen(s);
    assert_int_equal(5, mcdc_text_utf16_units(s, n));
    assert_int_equal(10, mcdc_text_utf16le(out, s, n));
    const uint8_t want[] = {0x61, 0, 0xE9, 0, 0xAC, 0x20, 0x3D, 0xD8, 0x00, 0xDE};
    assert_memory_equal(want, out, sizeof want);
}

static void test_core_text__malformed_bytes_are_one_replacement_each(void **state)
{
    (void)state;
    uint8_t out[32];
    size_t used;
    /* an overlong '/', a lone surrogate, a truncated sequence */
    assert_int_equal(-1, mcdc_text_utf8_next("\xc0\xaf", 2, &used));
    assert_int_equal(1, used);
    assert_int_equal(-1, mcdc_text_utf8_next("\xed\xa0\x80", 3, &used));
    assert_int_equal(-1, mcdc_text_utf8_next("\xe2\x82", 2, &used));
    assert_int_equal(0x20AC, mcdc_text_utf8_next("\xe2\x82\xac", 3, &used));
    assert_int_equal(3, used);
    assert_int_equal(3, mcdc_text_utf16_units("x\xe2\x82", 3));
    assert_int_equal(6, mcdc_text_utf16le(out, "x\xe2\x82", 3));
    const uint8_t want[] = {'x', 0, 0xFD, 0xFF, 0xFD, 0xFF};
    assert_memory_equal(want, out, sizeof want);
}

static void test_core_text__cp1252_holds_latin1_and_its_own_30_and_no_more(void **state)
{
    (void)state;
    uint8_t out[32];
    const char *s = "\xc3\xa9\xe2\x82\xac\xc5\xb8\xc2\x81\xce\xb1z"; /* é € Ÿ U+0081 α z */
    size_t n = strlen(s);
    assert_int_equal(6, mcdc_text_cp1252_len(s, n));
    assert_int_equal(6, mcdc_text_cp1252(out, s, n));
    const uint8_t want[] = {0xE9, 0x80, 0x9F, 0x81, '?', 'z'};
    assert_memory_equal(want, out, sizeof want);
    assert_true(mcdc_text_cp1252_has(0x20AC));
    assert_false(mcdc_text_cp1252_has(0x3B1));
    assert_int_equal(0x20AC, mcdc_text_cp1252_cp(0x80));
    assert_int_equal(0x81, mcdc_text_cp1252_cp(0x81));
    assert_int_equal(0xE9, mcdc_text_cp1252_cp(0xE9));
    uint8_t b[4];
    assert_int_equal(3, mcdc_text_utf8_put(b, 0x20AC));
    assert_memory_equal("\xe2\x82\xac", b, 3);
    assert_int_equal(4, mcdc_text_utf8_put(b, 0x1F600));
    assert_memory_equal("\xf0\x9f\x98\x80", b, 4);
}

/* UTF-16 and CP1252 back to UTF-8 (what the SQL Server source reads): every BMP range, a
 * pair, unpaired surrogates as U+FFFD, and a round trip of every code point. */
static void test_core_text__utf16_and_cp1252_decode_to_utf8(void **state)
{
    (void)state;
    uint8_t out[64];
    const uint16_t u[] = { 'a', 0x00E9, 0x07FF, 0x0800, 0x20AC, 0xFFFF, 0xD83D, 0xDE00 };
    const char *want = "a\xc3\xa9\xdf\xbf\xe0\xa0\x80\xe2\x82\xac\xef\xbf\xbf\xf0\x9f\x98\x80";
    assert_int_equal(strlen(want), mcdc_text_utf16_to_utf8(out, u, 8));
    assert_memory_equal(want, out, strlen(want));
    /* a low first, a high before a non-low, a high at the end */
    const uint16_t bad[] = { 0xDE00, 0xD83D, 'x', 0xD83D };
    const char *want_bad = "\xef\xbf\xbd\xef\xbf\xbdx\xef\xbf\xbd";
    assert_int_equal(strlen(want_bad), mcdc_text_utf16_to_utf8(out, bad, 4));
    assert_memory_equal(want_bad, out, strlen(want_bad));
    assert_true(mcdc_text_utf16_to_utf8(out, bad, 0) == 0);
    /* the worst case stays within the bound: 3 bytes a unit */
    const uint16_t three[] = { 0xFFFF, 0xDC00, 0x0800 };
    assert_true(mcdc_text_utf16_to_utf8(out, three, 3) == MCDC_TEXT_UTF8_OF_UTF16(3));
    /* ASCII runs of every length around non-ASCII, a pair at every offset */
    for (size_t len = 0; len < 12; len++)
        for (size_t at = 0; at <= len; at++) {
            uint16_t w[16];
            char want_mix[40];
            size_t wn = 0, kn = 0;
            for (size_t j = 0; j < len; j++) {
                if (j == at) {
                    w[wn++] = 0xD83D; w[wn++] = 0xDE00;
                    memcpy(want_mix + kn, "\xf0\x9f\x98\x80", 4);
                    kn += 4;
                }
                w[wn++] = (uint16_t)('a' + j);
                want_mix[kn++] = (char)('a' + j);
            }
            uint8_t got[64];
            size_t g = mcdc_text_utf16_to_utf8(got, w, wn);
            if (g != kn || memcmp(got, want_mix, kn) != 0) fail_msg("length %zu, pair at %zu", len, at);
        }
    /* every code point: UTF-8 -> UTF-16LE -> UTF-8 is the identity */
    for (uint32_t cp = 1; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        uint8_t s[4], le[8], back[8];
        size_t n = mcdc_text_utf8_put(s, cp);
        size_t m = mcdc_text_utf16le(le, (const char *)s, n);
        uint16_t w[2] = { (uint16_t)(le[0] | le[1] << 8), (uint16_t)(m > 2 ? le[2] | le[3] << 8 : 0) };
        size_t k = mcdc_text_utf16_to_utf8(back, w, m / 2);
        if (k != n || memcmp(s, back, n) != 0) fail_msg("U+%04X does not round-trip", (unsigned)cp);
    }
    /* CP1252: ASCII, the 0x80 block (the euro, an undefined byte), Latin-1 */
    const uint8_t cp[] = { 'z', 0x80, 0x81, 0x9F, 0xE9, 0xFF };
    const char *want_cp = "z\xe2\x82\xac\xc2\x81\xc5\xb8\xc3\xa9\xc3\xbf";
    assert_int_equal(strlen(want_cp), mcdc_text_cp1252_to_utf8(out, cp, sizeof cp));
    assert_memory_equal(want_cp, out, strlen(want_cp));
}

/* The encoders one character at a time, through mcdc_text_utf8_next: what the 8-byte ASCII
 * runs of mcdc_text_utf16le and mcdc_text_cp1252 must agree with. */
static size_t ref_utf16le(uint8_t *out, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0, used; i < n; i += used) {
        int32_t c = mcdc_text_utf8_next(s + i, n - i, &used);
        uint32_t cp = c < 0 ? 0xFFFD : (uint32_t)c;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            uint16_t u[2] = {(uint16_t)(0xD800 | cp >> 10), (uint16_t)(0xDC00 | (cp & 0x3FF))};
            for (int j = 0; j < 2; j++) out[k++] = (uint8_t)u[j], out[k++] = (uint8_t)(u[j] >> 8);
        } else {
            out[k++] = (uint8_t)cp;
            out[k++] = (uint8_t)(cp >> 8);
        }
    }
    return k;
}

static size_t ref_cp1252(uint8_t *out, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0, used; i < n; i += used) {
        int32_t c = mcdc_text_utf8_next(s + i, n - i, &used);
        out[k++] = c < 0 ? '?' : mcdc_text_cp1252_byte((uint32_t)c);
    }
    return k;
}

static void test_core_text__ascii_runs_encode_as_character_by_character(void **state)
{
    (void)state;
    static const char *const pieces[] = {"a", "Z", " ", "\x7F", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xFF", "\xE2\x82",
                                         "\xC3"};
    uint32_t seed = 12345;
    char s[200];
    uint8_t a[400], b[400];
    for (int round = 0; round < 4000; round++) {
        size_t n = 0;
        int parts = (int)(seed % 40);
        for (int i = 0; i < parts; i++) {
            seed = seed * 1103515245u + 12345u;
            const char *p = pieces[(seed >> 16) % 10 < 6 ? 0 : (seed >> 16) % 10]; /* mostly ASCII */
            if (p == pieces[0]) p = pieces[(seed >> 8) % 4];
            size_t k = strlen(p);
            memcpy(s + n, p, k);
            n += k;
        }
        seed = seed * 1103515245u + 12345u;
        /* every length of every prefix, so runs end at each offset */
        for (size_t m = 0; m <= n; m += 1 + m / 8) {
            size_t ka = mcdc_text_utf16le(a, s, m), kb = ref_utf16le(b, s, m);
            assert_int_equal(ka, kb);
            assert_int_equal(ka, 2 * mcdc_text_utf16_units(s, m));
            if (ka) assert_memory_equal(a, b, ka);
            ka = mcdc_text_cp1252(a, s, m);
            kb = ref_cp1252(b, s, m);
            assert_int_equal(ka, kb);
            assert_int_equal(ka, mcdc_text_cp1252_len(s, m));
            if (ka) assert_memory_equal(a, b, ka);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_text__utf16_and_cp1252_decode_to_utf8),
        cmocka_unit_test(test_core_text__ascii_runs_encode_as_character_by_character),
        cmocka_unit_test(test_core_text__utf16le_of_ascii_latin_and_a_pair),
        cmocka_unit_test(test_core_text__malformed_bytes_are_one_replacement_each),
        cmocka_unit_test(test_core_text__cp1252_holds_latin1_and_its_own_30_and_no_more),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
