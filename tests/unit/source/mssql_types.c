/* Unit tests for the SQL Server type map (source/mssql/types.c): each type's schema column
 * and fetch plan, unmapped types refused naming the column, and the conversion of fetched
 * cells (decimals and money from text, datetimeoffset and time from their SQL_SS structs,
 * timestamps to the microsecond, strings and binaries borrowed, nvarchar decoded from UTF-16). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/time.h"
#include "source/mssql/mssql_int.h"

static mssql_col col_of(const char *type, int len, int prec, int scale, int dtp)
{
    mssql_col c;
    memset(&c, 0, sizeof c);
    c.name = (char *)"c1";
    snprintf(c.data_type, sizeof c.data_type, "%s", type);
    c.max_length = len;
    c.precision = prec;
    c.scale = scale;
    c.dt_precision = dtp;
    c.nullable = true;
    c.in_table = true;
    return c;
}

static void test_source_mssql_types__map_as_the_original(void **state)
{
    (void)state;
    static const struct {
        const char *type;
        int len, prec, scale;
        mcdc_type_id want;
        int want_p, want_s;
        bool is_long;
    } cases[] = {
        { "bit", 0, 0, 0, MCDC_TYPE_BOOLEAN, 0, 0, false },
        { "tinyint", 0, 3, 0, MCDC_TYPE_SHORT, 0, 0, false },
        { "smallint", 0, 5, 0, MCDC_TYPE_SHORT, 0, 0, false },
        { "int", 0, 10, 0, MCDC_TYPE_INT, 0, 0, false },
        { "bigint", 0, 19, 0, MCDC_TYPE_LONG, 0, 0, false },
        { "real", 0, 24, 0, MCDC_TYPE_FLOAT, 0, 0, false },
        { "float", 0, 53, 0, MCDC_TYPE_DOUBLE, 0, 0, false },
        { "decimal", 0, 12, 2, MCDC_TYPE_DECIMAL, 12, 2, false },
        { "numeric", 0, 38, 10, MCDC_TYPE_DECIMAL, 38, 10, false },
        { "money", 0, 19, 4, MCDC_TYPE_DECIMAL, 19, 4, false },
        { "smallmoney", 0, 10, 4, MCDC_TYPE_DECIMAL, 10, 4, false },
        { "date", 0, 0, 0, MCDC_TYPE_DATE, 0, 0, false },
        { "datetime", 0, 0, 0, MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, false },
        { "datetime2", 0, 0, 0, MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, false },
        { "smalldatetime", 0, 0, 0, MCDC_TYPE_TIMESTAMP_NTZ, 0, 0, false },
        { "datetimeoffset", 0, 0, 0, MCDC_TYPE_TIMESTAMP, 0, 0, false },
        { "time", 0, 0, 0, MCDC_TYPE_STRING, 0, 0, false },
        { "nvarchar", 40, 0, 0, MCDC_TYPE_STRING, 0, 0, false },
        { "varchar", -1, 0, 0, MCDC_TYPE_STRING, 0, 0, true },
        { "ntext", 0, 0, 0, MCDC_TYPE_STRING, 0, 0, true },
        { "xml", -1, 0, 0, MCDC_TYPE_STRING, 0, 0, true },
        { "uniqueidentifier", 0, 0, 0, MCDC_TYPE_STRING, 0, 0, false },
        { "varbinary", 16, 0, 0, MCDC_TYPE_BINARY, 0, 0, false },
        { "varbinary", -1, 0, 0, MCDC_TYPE_BINARY, 0, 0, true },
        { "image", 0, 0, 0, MCDC_TYPE_BINARY, 0, 0, true },
        { "timestamp", 0, 0, 0, MCDC_TYPE_BINARY, 0, 0, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mssql_col c = col_of(cases[i].type, cases[i].len, cases[i].prec, cases[i].scale, 7);
        mcdc_column out;
        if (mssql__type_plan(&c, "dbo_t", &out) != 0) fail_msg("%s: %s", cases[i].type, mcdc_error_last()->message);
        if (out.type != cases[i].want) fail_msg("%s: type %d, want %d", cases[i].type, out.type, cases[i].want);
        assert_int_equal(cases[i].want_p, out.precision);
        assert_int_equal(cases[i].want_s, out.scale);
        if (c.is_long != cases[i].is_long) fail_msg("%s: is_long %d", cases[i].type, c.is_long);
        if (!c.is_long) assert_true(c.width > 0);
    }
    static const char *const unmapped[] = { "sql_variant", "geography", "geometry", "hierarchyid", "MyClrType" };
    for (size_t i = 0; i < 5; i++) {
        mssql_col c = col_of(unmapped[i], 0, 0, 0, 0);
        mcdc_column out;
        assert_int_equal(MCDC_EUNSUPPORTED, mssql__type_plan(&c, "dbo_t", &out));
        char want[128];
        snprintf(want, sizeof want, "capture instance dbo_t: column c1 has type %s, which mssql-cdc cannot map", unmapped[i]);
        assert_string_equal(want, mcdc_error_last()->message);
    }
}

static mcdc_value convert(mssql_col *c, const void *data, SQLLEN len, char *scratch)
{
    mcdc_column col;
    if (mssql__type_plan(c, "dbo_t", &col) != 0) fail_msg("%s", mcdc_error_last()->message);
    mcdc_value v;
    if (mssql__to_value(c, &col, data, len, &v, scratch, 48) != 0) fail_msg("%s", mcdc_error_last()->message);
    return v;
}

static void test_source_mssql_types__decimals_exact_from_text(void **state)
{
    (void)state;
    char scratch[48];
    mssql_col c = col_of("decimal", 0, 12, 2, 0);
    assert_true(convert(&c, "-1234.50", 8, scratch).v.dec == -123450);
    assert_true(convert(&c, ".5", 2, scratch).v.dec == 50);   /* FreeTDS may drop the 0 */
    assert_true(convert(&c, "-.05", 4, scratch).v.dec == -5);
    assert_true(convert(&c, "7", 1, scratch).v.dec == 700);
    mssql_col m = col_of("money", 0, 19, 4, 0);
    assert_true(convert(&m, "922337203685477.5807", 20, scratch).v.dec == INT64_MAX);
    mssql_col big = col_of("decimal", 0, 38, 0, 0);
    mcdc_value v = convert(&big, "99999999999999999999999999999999999999", 38, scratch);
    char out[48];
    assert_string_equal("99999999999999999999999999999999999999", mcdc_decimal_format(out, v.v.dec, 0));
    /* more digits than the scale holds are refused, never rounded */
    mcdc_column col;
    mssql__type_plan(&c, "dbo_t", &col);
    assert_int_equal(MCDC_ESOURCE, mssql__to_value(&c, &col, "1.234", 5, &v, scratch, 48));
    assert_true(convert(&c, "1", SQL_NULL_DATA, scratch).is_null);
}

static void test_source_mssql_types__times_from_their_structs(void **state)
{
    (void)state;
    char scratch[48];
    /* datetimeoffset 2026-10-01 10:00:00.1234567 -04:00 is 14:00:00.123456 UTC */
    struct {
        SQLSMALLINT year;
        SQLUSMALLINT month, day, hour, minute, second;
        SQLUINTEGER fraction;
        SQLSMALLINT tzh, tzm;
    } dto = { 2026, 10, 1, 10, 0, 0, 123456700, -4, 0 };
    mssql_col c = col_of("datetimeoffset", 0, 0, 0, 7);
    int64_t want;
    assert_int_equal(0, mcdc_time_parse(&want, "2026-10-01T14:00:00.123456Z"));
    assert_true(convert(&c, &dto, 20, scratch).v.i == want);
    /* +05:30 */
    dto.hour = 19;
    dto.minute = 30;
    dto.tzh = 5;
    dto.tzm = 30;
    assert_true(convert(&c, &dto, 20, scratch).v.i == want);
    /* time(7) and time(0) as text of their scale */
    struct {
        SQLUSMALLINT hour, minute, second;
        SQLUINTEGER fraction;
    } t = { 13, 50, 1, 123456700 };
    mssql_col tc = col_of("time", 0, 0, 0, 7);
    mcdc_value v = convert(&tc, &t, 12, scratch);
    assert_int_equal(16, v.v.s.len);
    assert_memory_equal("13:50:01.1234567", v.v.s.ptr, 16);
    tc.dt_precision = 0;
    v = convert(&tc, &t, 12, scratch);
    assert_int_equal(8, v.v.s.len);
    assert_memory_equal("13:50:01", v.v.s.ptr, 8);
    /* datetime2(7) to the microsecond: the 100 ns digit is cut */
    SQL_TIMESTAMP_STRUCT ts = { 2026, 10, 1, 14, 0, 0, 123456700 };
    mssql_col d2 = col_of("datetime2", 0, 0, 0, 7);
    assert_int_equal(0, mcdc_time_parse(&want, "2026-10-01T14:00:00.123456"));
    assert_true(convert(&d2, &ts, sizeof ts, scratch).v.i == want);
    SQL_DATE_STRUCT d = { 1969, 12, 31 };
    mssql_col dc = col_of("date", 0, 0, 0, 0);
    assert_true(convert(&dc, &d, sizeof d, scratch).v.i == -1);
    /* a struct of the wrong size is refused */
    mcdc_column col;
    mssql__type_plan(&c, "dbo_t", &col);
    assert_int_equal(MCDC_ESOURCE, mssql__to_value(&c, &col, (const char *)&dto, 16, &v, scratch, 48));
}

static void test_source_mssql_types__strings_borrowed_and_checked(void **state)
{
    (void)state;
    char scratch[48];
    mssql_col c = col_of("varchar", 4, 0, 0, 0);
    char buf[17] = "Zoë€";
    mcdc_value v = convert(&c, buf, (SQLLEN)strlen(buf), scratch);
    assert_ptr_equal(buf, v.v.s.ptr);
    assert_int_equal(strlen(buf), v.v.s.len);
    /* a value cut by a too small buffer is an error, never silently short */
    mcdc_column col;
    mssql__type_plan(&c, "dbo_t", &col);
    assert_int_equal(MCDC_ESOURCE, mssql__to_value(&c, &col, buf, 17, &v, scratch, 48));
    mssql_col b = col_of("varbinary", 3, 0, 0, 0);
    v = convert(&b, "\x01\x02\x03", 3, scratch);
    assert_int_equal(3, v.v.s.len);
}

/* nchar, nvarchar and sysname come as UTF-16 (SQL_C_WCHAR) and are decoded here, not by the
 * driver's iconv: every character exactly, a pair as one character, an unpaired surrogate as
 * U+FFFD; a cut or odd-length value is refused. */
static void test_source_mssql_types__nvarchar_decoded_from_utf16(void **state)
{
    (void)state;
    char scratch[48];
    mssql_col c = col_of("nvarchar", 6, 0, 0, 0);
    mcdc_column col;
    assert_int_equal(0, mssql__type_plan(&c, "dbo_t", &col));
    assert_int_equal(SQL_C_WCHAR, c.c_type);
    assert_int_equal(7 * (SQLLEN)sizeof(SQLWCHAR), c.width);
    assert_int_equal(19, c.text_cap);
    /* Z o ë € 😀 (a pair), bound as SQLWCHAR with its terminator */
    SQLWCHAR w[7] = { 'Z', 'o', 0x00EB, 0x20AC, 0xD83D, 0xDE00, 0 };
    mcdc_value v = convert(&c, w, 6 * sizeof(SQLWCHAR), scratch);
    assert_ptr_equal(scratch, v.v.s.ptr);
    const char *want = "Zo\xc3\xab\xe2\x82\xac\xf0\x9f\x98\x80";
    assert_int_equal(strlen(want), v.v.s.len);
    assert_memory_equal(want, v.v.s.ptr, v.v.s.len);
    /* a lone high, a lone low and a high at the end: U+FFFD each */
    SQLWCHAR bad[7] = { 0xD800, 'a', 0xDC00, 'b', 0xDBFF, 0, 0 };
    v = convert(&c, bad, 5 * sizeof(SQLWCHAR), scratch);
    const char *want_bad = "\xef\xbf\xbd" "a" "\xef\xbf\xbd" "b" "\xef\xbf\xbd";
    assert_int_equal(strlen(want_bad), v.v.s.len);
    assert_memory_equal(want_bad, v.v.s.ptr, v.v.s.len);
    /* the empty string is not NULL */
    v = convert(&c, w, 0, scratch);
    assert_false(v.is_null);
    assert_int_equal(0, v.v.s.len);
    /* more units than nvarchar(6) holds, or half a unit: refused */
    SQLWCHAR big[8] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 0 };
    assert_int_equal(MCDC_ESOURCE, mssql__to_value(&c, &col, (const char *)big, 7 * sizeof(SQLWCHAR), &v, scratch, 48));
    assert_int_equal(MCDC_ESOURCE, mssql__to_value(&c, &col, (const char *)w, 3, &v, scratch, 48));
    /* (max) and ntext are long: fetched in chunks and decoded whole, never bound */
    mssql_col m = col_of("nvarchar", -1, 0, 0, 0);
    assert_int_equal(0, mssql__type_plan(&m, "dbo_t", &col));
    assert_true(m.is_long);
    assert_int_equal(SQL_C_WCHAR, m.c_type);
    mssql_col s = col_of("sysname", 0, 0, 0, 0);
    assert_int_equal(0, mssql__type_plan(&s, "dbo_t", &col));
    assert_int_equal(129 * (SQLLEN)sizeof(SQLWCHAR), s.width);
}

/* char and varchar in a code page 1252 collation come as their bytes (SQL_C_BINARY) and are
 * decoded here; in any other collation the driver converts them (SQL_C_CHAR). */
static void test_source_mssql_types__cp1252_varchar_decoded_here(void **state)
{
    (void)state;
    assert_true(mssql__collation_cp1252("SQL_Latin1_General_CP1_CI_AS"));
    assert_true(mssql__collation_cp1252("sql_latin1_general_cp1_cs_as"));
    assert_true(mssql__collation_cp1252("SQL_Latin1_General_Pref_CP1_CI_AS"));
    assert_true(mssql__collation_cp1252("Latin1_General_100_CI_AS_SC"));
    assert_true(mssql__collation_cp1252("Latin1_General_BIN2"));
    assert_false(mssql__collation_cp1252("Latin1_General_100_CI_AS_SC_UTF8"));
    assert_false(mssql__collation_cp1252("SQL_Latin1_General_CP1250_CI_AS"));
    assert_false(mssql__collation_cp1252("SQL_Latin1_General_CP437_BIN"));
    assert_false(mssql__collation_cp1252("Cyrillic_General_CI_AS"));
    assert_false(mssql__collation_cp1252("Japanese_CI_AS"));
    assert_false(mssql__collation_cp1252(NULL));
    char scratch[48];
    mssql_col c = col_of("varchar", 8, 0, 0, 0);
    c.cp1252 = true;
    mcdc_column col;
    assert_int_equal(0, mssql__type_plan(&c, "dbo_t", &col));
    assert_int_equal(SQL_C_BINARY, c.c_type);
    assert_int_equal(8, c.width);
    assert_int_equal(24, c.text_cap);
    /* K ä t h e, the euro sign, an undefined byte (0x81: the C1 control, as Windows) */
    const char raw[] = "K\xe4the\x80\x81";
    mcdc_value v = convert(&c, raw, 7, scratch);
    const char *want = "K\xc3\xa4the\xe2\x82\xac\xc2\x81";
    assert_ptr_equal(scratch, v.v.s.ptr);
    assert_int_equal(strlen(want), v.v.s.len);
    assert_memory_equal(want, v.v.s.ptr, v.v.s.len);
    v = convert(&c, raw, 0, scratch);
    assert_false(v.is_null);
    assert_int_equal(0, v.v.s.len);
    assert_int_equal(MCDC_ESOURCE, mssql__to_value(&c, &col, "123456789", 9, &v, scratch, 48));
    /* char(n) keeps its padding; text is long */
    mssql_col f = col_of("char", 3, 0, 0, 0);
    f.cp1252 = true;
    v = convert(&f, "a  ", 3, scratch);
    assert_int_equal(3, v.v.s.len);
    assert_memory_equal("a  ", v.v.s.ptr, 3);
    mssql_col t = col_of("text", 0, 0, 0, 0);
    t.cp1252 = true;
    assert_int_equal(0, mssql__type_plan(&t, "dbo_t", &col));
    assert_true(t.is_long);
    assert_int_equal(SQL_C_BINARY, t.c_type);
    /* another code page: the driver's conversion, as text */
    mssql_col o = col_of("varchar", 8, 0, 0, 0);
    assert_int_equal(0, mssql__type_plan(&o, "dbo_t", &col));
    assert_int_equal(SQL_C_CHAR, o.c_type);
    assert_int_equal(0, o.text_cap);
}

static void test_source_mssql_types__quoting_and_typed_nulls(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(1024);
    assert_int_equal(0, mssql__quote(&b, "order id", "column"));
    assert_string_equal("[order id]", b.ptr);
    assert_int_equal(MCDC_EINVAL, mssql__quote(&b, "a]b", "column"));
    assert_int_equal(MCDC_EINVAL, mssql__quote(&b, "a\nb", "column"));
    mcdc_buf_clear(&b);
    mssql_col c = col_of("decimal", 0, 12, 2, 0);
    c.in_table = false; /* dropped from the table, still captured */
    assert_int_equal(0, mssql__col_expr(&b, &c, NULL, true));
    assert_string_equal("CAST(NULL AS decimal(12,2)) AS [c1]", b.ptr);
    mcdc_buf_clear(&b);
    assert_int_equal(0, mssql__col_expr(&b, &c, "c.", false));
    assert_string_equal("c.[c1]", b.ptr);
    char t[64];
    mssql_col v = col_of("nvarchar", -1, 0, 0, 0);
    mssql__type_text(t, sizeof t, &v);
    assert_string_equal("nvarchar(max)", t);
    mssql_col d = col_of("datetime2", 0, 0, 0, 3);
    mssql__type_text(t, sizeof t, &d);
    assert_string_equal("datetime2(3)", t);
    mcdc_buf_dispose(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_mssql_types__map_as_the_original),
        cmocka_unit_test(test_source_mssql_types__decimals_exact_from_text),
        cmocka_unit_test(test_source_mssql_types__times_from_their_structs),
        cmocka_unit_test(test_source_mssql_types__strings_borrowed_and_checked),
        cmocka_unit_test(test_source_mssql_types__nvarchar_decoded_from_utf16),
        cmocka_unit_test(test_source_mssql_types__cp1252_varchar_decoded_here),
        cmocka_unit_test(test_source_mssql_types__quoting_and_typed_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
