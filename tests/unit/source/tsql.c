/*
 * tests/unit/source/tsql.c: the T-SQL engine behind sim serve, through the session API:
 * one test per construct and per strictness rule, the same query in several spellings.
 */
#include "session_test.h"

typedef struct fx {
    simt              t;
    mcdc_sim_session *s;
} fx;

static int open_at(void **state, int version)
{
    fx *f = calloc(1, sizeof *f);
    simt_open(&f->t, NULL);
    simt_orders(&f->t, "2026-01-01T00:00:00");
    simt_exec(&f->t, NULL, "2026-01-01T00:00:01", "INSERT INTO dbo.orders VALUES (1, N'Ann', 10.50, '2026-01-01 00:00:00.125')");
    simt_exec(&f->t, NULL, "2026-01-01T00:00:02", "INSERT INTO dbo.orders VALUES (2, N'Bob', NULL, NULL), (3, N'Cy', 7, NULL)");
    simt_capture(&f->t, "2026-01-01T00:00:03", 0);
    mcdc_sim_login_info li = {"dbo", NULL, "test"};
    mcdc_sim_server_options o = {version, 0, NULL};
    assert_int_equal(0, mcdc_sim_session_open(&f->s, f->t.path, &li, &o));
    *state = f;
    return 0;
}
static int setup(void **state) { return open_at(state, 16); }
static int setup15(void **state) { return open_at(state, 15); }

static int teardown(void **state)
{
    fx *f = *state;
    mcdc_sim_session_close(f->s);
    simt_close(&f->t);
    free(f);
    return 0;
}

static void test_source_tsql__same_query_in_other_spellings_gives_the_same_answer(void **state)
{
    fx *f = *state;
    const char *want = "cols customer:nvarchar(40)\nrow Bob\ndone count=1\n";
    assert_string_equal(want, B(f->s, "SELECT customer FROM dbo.orders WHERE order_id = 2"));
    assert_string_equal(want, B(f->s, "select   CUSTOMER\n from [dbo].[orders]   where ORDER_ID=2;"));
    assert_string_equal(want, B(f->s, "SELECT [customer] FROM \"dbo\".orders AS o WHERE o.order_id = 2 -- c\n"));
    assert_string_equal(want, B(f->s, "/* a */ SELECT o.customer FROM orders o WHERE 2 = o.[order_id]"));
    assert_string_equal(want, B(f->s, "DECLARE @id int = 2; SELECT customer FROM dbo.orders WHERE order_id = @id"));
}

static void test_source_tsql__top_order_offset_fetch(void **state)
{
    fx *f = *state;
    assert_string_equal("cols order_id:int not null\nrow 3\nrow 2\ndone count=2\n",
                        B(f->s, "SELECT TOP (2) order_id FROM dbo.orders ORDER BY order_id DESC"));
    assert_string_equal("cols order_id:int not null\nrow 2\ndone count=1\n",
                        B(f->s, "DECLARE @n int = 1; SELECT TOP (@n) order_id FROM dbo.orders WHERE order_id > 1 ORDER BY order_id"));
    assert_string_equal("error 102/1/15 Incorrect syntax near '@n'.\ndone error\n",
                        B(f->s, "DECLARE @n int = 1; SELECT TOP @n order_id FROM dbo.orders"));
    assert_string_equal("cols order_id:int not null\nrow 2\ndone count=1\n",
                        B(f->s, "SELECT order_id FROM dbo.orders ORDER BY order_id OFFSET 1 ROWS FETCH NEXT 1 ROWS ONLY"));
    assert_string_equal("error 102/1/15 Incorrect syntax near 'OFFSET'.\ndone error\n",
                        B(f->s, "SELECT order_id FROM dbo.orders OFFSET 1 ROWS"));
}

static void test_source_tsql__alias_is_not_visible_in_where_or_group_by(void **state)
{
    fx *f = *state;
    assert_string_equal("error 207/1/16 Invalid column name 'x'.\ndone error\n",
                        B(f->s, "SELECT order_id AS x FROM dbo.orders WHERE x = 1"));
    assert_string_equal("error 207/1/16 Invalid column name 'c'.\ndone error\n",
                        B(f->s, "SELECT customer AS c, COUNT_BIG(*) FROM dbo.orders GROUP BY c"));
    assert_string_equal("cols x:int not null\nrow 3\nrow 2\nrow 1\ndone count=3\n",
                        B(f->s, "SELECT order_id AS x FROM dbo.orders ORDER BY x DESC"));
}

static void test_source_tsql__group_by_with_aggregates_and_sql_server_types(void **state)
{
    fx *f = *state;
    assert_string_equal("cols n:bigint not null, :int, :int, :decimal(38,2)\nrow 3 | 1 | 3 | 17.50\ndone count=1\n",
                        B(f->s, "SELECT COUNT_BIG(*) AS n, MIN(order_id), MAX(order_id), SUM(amount) FROM dbo.orders"));
}

static void test_source_tsql__sum_of_int_overflows_with_8115(void **state)
{
    fx *f = *state;
    const char *got = B(f->s, "SELECT SUM(v) FROM (VALUES (2147483647), (1)) AS t(v)");
    assert_non_null(strstr(got, "error 8115/2/16 Arithmetic overflow error converting expression to data type int."));
}

static void test_source_tsql__string_is_not_implicitly_binary_257(void **state)
{
    fx *f = *state;
    assert_string_equal("error 257/3/16 Implicit conversion from data type varchar to binary is not allowed. Use the "
                        "CONVERT function to run this query.\ndone error\n",
                        B(f->s, "SELECT sys.fn_cdc_increment_lsn('0x00000000000000000001')"));
    assert_string_equal("cols :binary(10)\nrow 0x00000000000000000002\ndone count=1\n",
                        B(f->s, "SELECT sys.fn_cdc_increment_lsn(CONVERT(binary(10), '0x00000000000000000001', 1))"));
}

static void test_source_tsql__derived_table_order_by_needs_top_1033(void **state)
{
    fx *f = *state;
    const char *got = B(f->s, "SELECT * FROM (SELECT order_id FROM dbo.orders ORDER BY order_id) AS d");
    assert_non_null(strstr(got, "error 1033/1/15 The ORDER BY clause is invalid in views"));
    assert_string_equal("cols order_id:int not null\nrow 1\ndone count=1\n",
                        B(f->s, "SELECT * FROM (SELECT TOP (1) order_id FROM dbo.orders ORDER BY order_id) AS d"));
}

static void test_source_tsql__unknown_names_208_2812_and_syntax_102(void **state)
{
    fx *f = *state;
    assert_string_equal("error 208/1/16 Invalid object name 'dbo.nope'.\ndone error\n", B(f->s, "SELECT * FROM dbo.nope"));
    assert_string_equal("error 208/1/16 Invalid object name 'cdc.nope_CT'.\ndone error\n", B(f->s, "SELECT * FROM cdc.nope_CT"));
    assert_string_equal("error 102/1/15 Incorrect syntax near 'FROM'.\ndone error\n", B(f->s, "SELECT FROM dbo.orders"));
    assert_string_equal("error 2812/62/16 Could not find stored procedure 'sys.sp_nope'.\ndone error\n", B(f->s, "EXEC sys.sp_nope"));
}

static void test_source_tsql__unaliased_expression_has_an_empty_name(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :int not null, a:numeric(2,1) not null, :nvarchar(3) not null\nrow 3 | 1.5 | abc\ndone count=1\n",
                        B(f->s, "SELECT 1 + 2, 1.5 AS a, N'abc'"));
}

static void test_source_tsql__case_between_is_null_or_in_union_all(void **state)
{
    fx *f = *state;
    assert_string_equal("cols order_id:int not null, k:varchar(5)\nrow 1 | small\nrow 2 | none\nrow 3 | small\ndone count=3\n",
                        B(f->s, "SELECT order_id, CASE WHEN amount IS NULL THEN 'none' WHEN amount BETWEEN 0 AND 100 THEN 'small' "
                                "ELSE 'big' END AS k FROM dbo.orders WHERE order_id IN (1, 2) OR customer = N'cy' ORDER BY order_id"));
    assert_string_equal("cols a:int not null\nrow 1\nrow 2\ndone count=2\n", B(f->s, "SELECT 1 AS a UNION ALL SELECT 2 ORDER BY a"));
}

static void test_source_tsql__window_functions_ntile_and_lag(void **state)
{
    fx *f = *state;
    assert_string_equal("cols order_id:int not null, :bigint not null, :int\nrow 1 | 1 | <NULL>\nrow 2 | 1 | 1\nrow 3 | 2 | 2\ndone count=3\n",
                        B(f->s, "SELECT order_id, NTILE(2) OVER (ORDER BY order_id), LAG(order_id) OVER (ORDER BY order_id) "
                                "FROM dbo.orders ORDER BY order_id"));
}

static void test_source_tsql__cdc_functions_and_change_table(void **state)
{
    fx *f = *state;
    const char *got = B(f->s, "DECLARE @max binary(10) = sys.fn_cdc_get_max_lsn(); "
                              "SELECT COUNT(*) FROM cdc.dbo_orders_CT WHERE __$start_lsn <= @max AND __$start_lsn > sys.fn_cdc_get_min_lsn(N'dbo_orders')");
    assert_string_equal("cols :int not null\nrow 3\ndone count=1\n", got);
    got = B(f->s, "SELECT sys.fn_cdc_get_min_lsn('nothing')");
    assert_string_equal("cols :binary(10)\nrow 0x00000000000000000000\ndone count=1\n", got);
    got = B(f->s, "SELECT sys.fn_cdc_map_lsn_to_time(sys.fn_cdc_get_max_lsn())");
    assert_string_equal("cols :datetime\nrow 2026-01-01 00:00:02.000\ndone count=1\n", got);
}

static void test_source_tsql__serverproperty_is_sql_variant_and_spid(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :sql_variant/nvarchar(128), :sql_variant/int\nrow 16 | 3\ndone count=1\n",
                        B(f->s, "SELECT SERVERPROPERTY('ProductMajorVersion'), SERVERPROPERTY('EngineEdition')"));
    char want[100];
    snprintf(want, sizeof want, "cols :smallint not null\nrow %d\ndone count=1\n", mcdc_sim_session_spid(f->s));
    assert_string_equal(want, B(f->s, "SELECT @@SPID"));
}

static void test_source_tsql__current_timezone_id_needs_version_16_even_untaken(void **state)
{
    fx *f = *state;
    assert_string_equal("error 195/10/15 'CURRENT_TIMEZONE_ID' is not a recognized built-in function name.\ndone error\n",
                        B(f->s, "SELECT CASE WHEN 1 = 0 THEN CURRENT_TIMEZONE_ID() ELSE N'x' END"));
}

static void test_source_tsql__current_timezone_id_on_16(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :nvarchar(256) not null\nrow UTC\ndone count=1\n", B(f->s, "SELECT CURRENT_TIMEZONE_ID()"));
}

static void test_source_tsql__convert_styles_dateadd_datediff_quotename_hashbytes(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :varchar(30) not null\nrow 0x0A0B\ndone count=1\n", B(f->s, "SELECT CONVERT(varchar(30), 0x0A0B, 1)"));
    assert_string_equal("cols :varchar(30)\nrow 2026-01-01T00:00:00.125\ndone count=1\n",
                        B(f->s, "SELECT CONVERT(varchar(30), placed_at, 126) FROM dbo.orders WHERE order_id = 1"));
    assert_string_equal("cols :datetime2(3), :int\nrow 2026-01-02 00:00:00.125 | 1440\ndone count=1\n",
                        B(f->s, "SELECT DATEADD(day, 1, placed_at), DATEDIFF(minute, placed_at, DATEADD(dd, 1, placed_at)) "
                                "FROM dbo.orders WHERE order_id = 1"));
    assert_string_equal("cols :nvarchar(258)\nrow [a]]b]\ndone count=1\n", B(f->s, "SELECT QUOTENAME(N'a]b')"));
    assert_string_equal("cols :varbinary(8000)\nrow 0x900150983CD24FB0D6963F7D28E17F72\ndone count=1\n",
                        B(f->s, "SELECT HASHBYTES('MD5', 'abc')"));
}

static void test_source_tsql__permission_denied_229(void **state)
{
    fx *f = *state;
    assert_int_equal(0, mcdc_sim_login_add(f->t.sim, "narrow", "pw", false));
    assert_int_equal(0, mcdc_sim_grant(f->t.sim, "narrow", "cdc.lsn_time_mapping"));
    mcdc_sim_session *s;
    mcdc_sim_login_info li = {"narrow", NULL, "t"};
    assert_int_equal(0, mcdc_sim_session_open(&s, f->t.path, &li, NULL));
    assert_string_equal("error 229/5/14 The SELECT permission was denied on the object 'orders', database 't', schema 'dbo'.\ndone error\n",
                        B(s, "SELECT * FROM dbo.orders"));
    assert_string_equal("cols :binary(10)\nrow 0x00000000000000000000\ndone count=1\n",
                        B(s, "SELECT sys.fn_cdc_get_min_lsn(N'dbo_orders')"));
    assert_string_equal("cols :int not null\nrow 3\ndone count=1\n", B(s, "SELECT COUNT(*) FROM cdc.lsn_time_mapping"));
    mcdc_sim_session_close(s);
}

int main(void)
{
#define T_(n) cmocka_unit_test_setup_teardown(test_source_tsql__##n, setup, teardown)
    const struct CMUnitTest tests[] = {
        T_(same_query_in_other_spellings_gives_the_same_answer),
        T_(top_order_offset_fetch),
        T_(alias_is_not_visible_in_where_or_group_by),
        T_(group_by_with_aggregates_and_sql_server_types),
        T_(sum_of_int_overflows_with_8115),
        T_(string_is_not_implicitly_binary_257),
        T_(derived_table_order_by_needs_top_1033),
        T_(unknown_names_208_2812_and_syntax_102),
        T_(unaliased_expression_has_an_empty_name),
        T_(case_between_is_null_or_in_union_all),
        T_(window_functions_ntile_and_lag),
        T_(cdc_functions_and_change_table),
        T_(serverproperty_is_sql_variant_and_spid),
        cmocka_unit_test_setup_teardown(test_source_tsql__current_timezone_id_needs_version_16_even_untaken, setup15, teardown),
        T_(current_timezone_id_on_16),
        T_(convert_styles_dateadd_datediff_quotename_hashbytes),
        T_(permission_denied_229),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
