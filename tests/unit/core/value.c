/* Unit tests for core/value.c: schemas, type names, exact 128-bit decimals and the
 * jsonl / csv / text encodings of every type (architecture §7). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/time.h"
#include "mcdc/value.h"

static mcdc_int128 pow10_128(int n)
{
    mcdc_int128 v = 1;
    while (n-- > 0)
        v *= 10;
    return v;
}

static void dec_round_trip(const char *text, int p, int s, const char *want_fmt)
{
    mcdc_int128 v;
    char out[48];
    if (mcdc_decimal_parse(&v, text, strlen(text), p, s) != 0)
        fail_msg("parse '%s' as decimal(%d,%d): %s", text, p, s, mcdc_error_last()->message);
    assert_string_equal(want_fmt, mcdc_decimal_format(out, v, s));
}

static void test_core_value__decimal_format_exact(void **state)
{
    (void)state;
    char out[48];
    assert_string_equal("0", mcdc_decimal_format(out, 0, 0));
    assert_string_equal("0.00", mcdc_decimal_format(out, 0, 2));
    assert_string_equal("-12.30", mcdc_decimal_format(out, -1230, 2));
    assert_string_equal("0.05", mcdc_decimal_format(out, 5, 2));
    assert_string_equal("-0.05", mcdc_decimal_format(out, -5, 2));
    assert_string_equal("12345", mcdc_decimal_format(out, 12345, 0));
    mcdc_int128 max38 = pow10_128(38) - 1;
    assert_string_equal("99999999999999999999999999999999999999", mcdc_decimal_format(out, max38, 0));
    assert_string_equal("-99999999999999999999999999999999999999", mcdc_decimal_format(out, -max38, 0));
    assert_string_equal("0.99999999999999999999999999999999999999", mcdc_decimal_format(out, max38, 38));
    assert_string_equal("-9999999999999999999999999999.9999999999", mcdc_decimal_format(out, -max38, 10));
    mcdc_int128 min = -(mcdc_int128)(((unsigned __int128)1 << 127) - 1) - 1;
    assert_string_equal("-170141183460469231731687303715884105728", mcdc_decimal_format(out, min, 0));
}

static void test_core_value__decimal_parse_exact(void **state)
{
    (void)state;
    dec_round_trip("12.3", 10, 2, "12.30");
    dec_round_trip("-0.05", 10, 2, "-0.05");
    dec_round_trip("+7", 5, 0, "7");
    dec_round_trip(".5", 3, 1, "0.5");
    dec_round_trip("-0", 3, 1, "0.0");
    dec_round_trip("1.2300", 10, 2, "1.23"); /* trailing zeros beyond the scale are exact */
    dec_round_trip("00012.5", 4, 1, "12.5");
    dec_round_trip("99999999999999999999999999999999999999", 38, 0, "99999999999999999999999999999999999999");
    dec_round_trip("-99999999999999999999999999999999999999", 38, 0, "-99999999999999999999999999999999999999");
    dec_round_trip("0.99999999999999999999999999999999999999", 38, 38, "0.99999999999999999999999999999999999999");
    dec_round_trip("-1234567890123456789012345678.9012345678", 38, 10, "-1234567890123456789012345678.9012345678");
    mcdc_int128 v;
    static const struct { const char *s; int p, sc; const char *why; } bad[] = {
        {"1.234", 10, 2, "more than 2 fraction digits"},
        {"1e3", 10, 0, "bad decimal"},
        {"", 10, 0, "bad decimal"},
        {"-", 10, 0, "bad decimal"},
        {".", 10, 0, "bad decimal"},
        {"1.2.3", 10, 2, "bad decimal"},
        {"12a", 10, 0, "bad decimal"},
        {" 12", 10, 0, "bad decimal"},
        {"1000", 5, 2, "does not fit decimal(5,2)"},
        {"100000000000000000000000000000000000000", 38, 0, "does not fit"}, /* 39 digits */
        {"1234567890123456789012345678901234567890123", 38, 0, "does not fit"},
        {"99999999999999999999999999999999999999", 38, 2, "does not fit"}, /* would overflow scaled */
        {"1", 39, 0, "precision must be 1 to 38"},
        {"1", 5, 6, "precision must be 1 to 38"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (mcdc_decimal_parse(&v, bad[i].s, strlen(bad[i].s), bad[i].p, bad[i].sc) != MCDC_EINVAL)
            fail_msg("'%s' accepted as decimal(%d,%d)", bad[i].s, bad[i].p, bad[i].sc);
        if (!strstr(mcdc_error_last()->message, bad[i].why))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].s, mcdc_error_last()->message, bad[i].why);
    }
    /* The length bounds the text: no NUL needed. */
    assert_int_equal(0, mcdc_decimal_parse(&v, "12.34junk", 5, 10, 2));
    assert_true(v == 1234);
}

static void test_core_value__schema_and_type_names(void **state)
{
    (void)state;
    mcdc_schema *s = mcdc_schema_new();
    assert_non_null(s);
    assert_int_equal(0, mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, false));
    assert_int_equal(0, mcdc_schema_add(s, "amount", MCDC_TYPE_DECIMAL, 12, 2, true));
    assert_int_equal(MCDC_EINVAL, mcdc_schema_add(s, "ID", MCDC_TYPE_INT, 0, 0, true));
    assert_non_null(strstr(mcdc_error_last()->message, "appears twice"));
    assert_int_equal(MCDC_EINVAL, mcdc_schema_add(s, "d", MCDC_TYPE_DECIMAL, 39, 0, true));
    assert_int_equal(MCDC_EINVAL, mcdc_schema_add(s, "d", MCDC_TYPE_DECIMAL, 5, 6, true));
    assert_int_equal(1, mcdc_schema_find(s, "AMOUNT"));
    assert_int_equal(-1, mcdc_schema_find(s, "nope"));
    mcdc_schema *c = mcdc_schema_copy(s);
    assert_int_equal(2, c->n_cols);
    assert_string_equal("amount", c->cols[1].name);
    assert_int_equal(12, c->cols[1].precision);
    char name[32];
    assert_string_equal("decimal(12,2)", mcdc_type_name(name, sizeof name, &c->cols[1]));
    assert_string_equal("long", mcdc_type_name(name, sizeof name, &c->cols[0]));
    mcdc_schema_free(c);
    mcdc_schema_free(s);
    mcdc_schema_free(NULL);

    static const char *names[] = {"boolean", "byte", "short", "integer", "long", "float", "double", "string",
                                  "binary", "date", "timestamp", "timestamp_ntz", "decimal(38,10)", "decimal(1,0)"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        mcdc_column col = {0};
        if (mcdc_type_parse(&col, names[i]) != 0)
            fail_msg("type %s: %s", names[i], mcdc_error_last()->message);
        assert_string_equal(names[i], mcdc_type_name(name, sizeof name, &col));
    }
    mcdc_column col = {0};
    assert_int_equal(0, mcdc_type_parse(&col, "decimal"));
    assert_string_equal("decimal(10,0)", mcdc_type_name(name, sizeof name, &col));
    static const char *bad[] = {"decimal(39,0)", "decimal(5,6)", "decimal(5,2", "decimal(5,2)x", "varchar", "int",
                                "array<int>", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(MCDC_EUNSUPPORTED, mcdc_type_parse(&col, bad[i]));
}

/* Every type in the three encodings. */
typedef struct enc_case {
    mcdc_column col;
    mcdc_value  v;
    const char *json, *csv, *text;
} enc_case;

static void check_case(const enc_case *c)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    char tn[32];
    mcdc_type_name(tn, sizeof tn, &c->col);
    assert_int_equal(0, mcdc_value_to_json(&b, &c->col, &c->v));
    if (strcmp(b.ptr ? b.ptr : "", c->json))
        fail_msg("%s json: got %s want %s", tn, b.ptr, c->json);
    mcdc_buf_clear(&b);
    assert_int_equal(0, mcdc_value_to_csv(&b, &c->col, &c->v));
    if (strcmp(b.ptr ? b.ptr : "", c->csv))
        fail_msg("%s csv: got %s want %s", tn, b.ptr ? b.ptr : "", c->csv);
    mcdc_buf_clear(&b);
    assert_int_equal(0, mcdc_value_to_text(&b, &c->col, &c->v));
    if (strcmp(b.ptr ? b.ptr : "", c->text))
        fail_msg("%s text: got %s want %s", tn, b.ptr, c->text);
    mcdc_buf_dispose(&b);
}

#define COL(t) { (char *)"c", (t), 0, 0, true }
#define STR(x) { .s = { (x), sizeof(x) - 1 } }

static void test_core_value__encodings_of_every_type(void **state)
{
    (void)state;
    int64_t ts;
    assert_int_equal(0, mcdc_time_parse(&ts, "2025-03-04T05:06:07.123456Z"));
    const enc_case cases[] = {
        {COL(MCDC_TYPE_BOOLEAN), {false, {.b = true}}, "true", "true", "true"},
        {COL(MCDC_TYPE_BOOLEAN), {false, {.b = false}}, "false", "false", "false"},
        {COL(MCDC_TYPE_BYTE), {false, {.i = -128}}, "-128", "-128", "-128"},
        {COL(MCDC_TYPE_SHORT), {false, {.i = 32767}}, "32767", "32767", "32767"},
        {COL(MCDC_TYPE_INT), {false, {.i = -2147483648LL}}, "-2147483648", "-2147483648", "-2147483648"},
        {COL(MCDC_TYPE_LONG), {false, {.i = INT64_MIN}}, "-9223372036854775808", "-9223372036854775808",
         "-9223372036854775808"},
        {COL(MCDC_TYPE_FLOAT), {false, {.f = 0.1f}}, "0.1", "0.1", "0.1"},
        {COL(MCDC_TYPE_FLOAT), {false, {.f = NAN}}, "\"NaN\"", "NaN", "NaN"},
        {COL(MCDC_TYPE_DOUBLE), {false, {.d = 0.1}}, "0.1", "0.1", "0.1"},
        {COL(MCDC_TYPE_DOUBLE), {false, {.d = 1e300}}, "1e+300", "1e+300", "1e+300"},
        {COL(MCDC_TYPE_DOUBLE), {false, {.d = -2.5}}, "-2.5", "-2.5", "-2.5"},
        {COL(MCDC_TYPE_DOUBLE), {false, {.d = INFINITY}}, "\"Infinity\"", "Infinity", "Infinity"},
        {COL(MCDC_TYPE_DOUBLE), {false, {.d = -INFINITY}}, "\"-Infinity\"", "-Infinity", "-Infinity"},
        {{(char *)"c", MCDC_TYPE_DECIMAL, 10, 2, true}, {false, {.dec = -1230}}, "\"-12.30\"", "-12.30", "-12.30"},
        {COL(MCDC_TYPE_STRING), {false, STR("plain")}, "\"plain\"", "plain", "plain"},
        {COL(MCDC_TYPE_STRING), {false, STR("")}, "\"\"", "\"\"", ""},
        {COL(MCDC_TYPE_STRING), {false, STR("a,b")}, "\"a,b\"", "\"a,b\"", "a,b"},
        {COL(MCDC_TYPE_STRING), {false, STR("say \"hi\"\n")}, "\"say \\\"hi\\\"\\n\"", "\"say \"\"hi\"\"\n\"",
         "say \"hi\"\n"},
        {COL(MCDC_TYPE_STRING), {false, STR("tab\there\\\x01\r")}, "\"tab\\there\\\\\\u0001\\r\"",
         "\"tab\there\\\x01\r\"", "tab\there\\\x01\r"},
        {COL(MCDC_TYPE_STRING), {false, STR("h\xc3\xa9llo \xe2\x82\xac")}, "\"h\xc3\xa9llo \xe2\x82\xac\"",
         "h\xc3\xa9llo \xe2\x82\xac", "h\xc3\xa9llo \xe2\x82\xac"},
        {COL(MCDC_TYPE_BINARY), {false, STR("\x00\xab\xff")}, "\"0x00ABFF\"", "0x00ABFF", "0x00ABFF"},
        {COL(MCDC_TYPE_BINARY), {false, STR("")}, "\"0x\"", "0x", "0x"},
        {COL(MCDC_TYPE_DATE), {false, {.i = 20151}}, "\"2025-03-04\"", "2025-03-04", "2025-03-04"},
        {COL(MCDC_TYPE_DATE), {false, {.i = -1}}, "\"1969-12-31\"", "1969-12-31", "1969-12-31"},
        {COL(MCDC_TYPE_TIMESTAMP), {false, {.i = ts}}, "\"2025-03-04T05:06:07.123456Z\"",
         "2025-03-04T05:06:07.123456Z", "2025-03-04T05:06:07.123456Z"},
        {COL(MCDC_TYPE_TIMESTAMP_NTZ), {false, {.i = ts}}, "\"2025-03-04T05:06:07.123456\"",
         "2025-03-04T05:06:07.123456", "2025-03-04T05:06:07.123456"},
        {COL(MCDC_TYPE_TIMESTAMP_NTZ), {false, {.i = 0}}, "\"1970-01-01T00:00:00.000000\"",
         "1970-01-01T00:00:00.000000", "1970-01-01T00:00:00.000000"},
        {COL(MCDC_TYPE_STRING), {true, {.i = 0}}, "null", "", "NULL"},
        {COL(MCDC_TYPE_LONG), {true, {.i = 0}}, "null", "", "NULL"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(&cases[i]);
}

static void test_core_value__json_quote_and_caps(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(1 << 10);
    assert_int_equal(0, mcdc_json_quote(&b, "a\0b", 3));
    assert_string_equal("\"a\\u0000b\"", b.ptr);
    mcdc_buf_dispose(&b);
    mcdc_buf tiny = MCDC_BUF_INIT(4);
    mcdc_column col = COL(MCDC_TYPE_STRING);
    mcdc_value v = {false, STR("too long for four bytes")};
    assert_int_equal(MCDC_ENOMEM, mcdc_value_to_json(&tiny, &col, &v));
    assert_true(mcdc_value_to_csv(&tiny, &col, &v) < 0);
    mcdc_buf_dispose(&tiny);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_value__decimal_format_exact),
        cmocka_unit_test(test_core_value__decimal_parse_exact),
        cmocka_unit_test(test_core_value__schema_and_type_names),
        cmocka_unit_test(test_core_value__encodings_of_every_type),
        cmocka_unit_test(test_core_value__json_quote_and_caps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
