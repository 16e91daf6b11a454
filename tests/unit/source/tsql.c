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
    assert_string_equal(want, B(f->s, "DECLARE @id bigint; SET @id = 1 + 1; SELECT customer FROM dbo.orders WHERE order_id = @id"));
    /* the parameter forms of the RPCs */
    const char *inproc = "cols customer:nvarchar(40)\nrow Bob\ndoneinproc more count=1\nstatus 0\ndoneproc\n";
    mcdc_sim_param ex[] = {PS(NULL, "select customer from dbo.orders where order_id = @P1"), PS(NULL, "@P1 int"), PI(NULL, 2, false)};
    assert_string_equal(inproc, R(f->s, NULL, 10, ex, 3));
    mcdc_sim_param named[] = {PS("@stmt", "SELECT customer FROM [dbo].[orders] WHERE [order_id]=@k"), PS("@params", "@k smallint"),
                              PI("@k", 2, false)};
    assert_string_equal(inproc, R(f->s, "sp_executesql", 0, named, 3));
    mcdc_sim_param pe[] = {PI("@handle", 0, true), PS(NULL, "@P1 nvarchar(10)"),
                           PS(NULL, "SELECT customer FROM dbo.orders WHERE order_id = @P1"), PS(NULL, "2")};
    const char *got = R(f->s, NULL, 13, pe, 4);
    assert_non_null(strstr(got, "cols customer:nvarchar(40)\nrow Bob\ndoneinproc more count=1\nstatus 0\nretval 0 @handle int="));
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

static void test_source_tsql__order_by_after_a_star_names_the_output_columns(void **state)
{
    fx *f = *state;
    /* a '*' expands to many output columns from one select-list item: ORDER BY's names are
     * looked up among the output columns, not the items (reading past the items crashed) */
    const char *star = B(f->s, "SELECT * FROM dbo.orders ORDER BY order_id DESC");
    assert_non_null(strstr(star, "\nrow 3 | "));
    assert_true(strstr(star, "\nrow 3 | ") < strstr(star, "\nrow 1 | "));
    /* k names the output column after the expanded star (amount), not the star's neighbour */
    const char *both = B(f->s, "SELECT *, amount AS k FROM dbo.orders ORDER BY k DESC");
    assert_non_null(strstr(both, "\nrow 1 | "));
    assert_true(strstr(both, "\nrow 1 | ") < strstr(both, "\nrow 3 | "));
    assert_true(strstr(both, "\nrow 3 | ") < strstr(both, "\nrow 2 | "));
    assert_string_equal("cols order_id:int not null\nrow 1\nrow 2\nrow 3\ndone count=3\n",
                        B(f->s, "SELECT order_id FROM dbo.orders ORDER BY [ORDER_ID]"));
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

static void test_source_tsql__sum_of_wide_decimal_is_exact_decimal_38_or_8115(void **state)
{
    fx *f = *state;
    /* 112345678901234567890.12 needs 23 digits: a double holds about 16 of them */
    assert_string_equal("cols :decimal(38,2)\nrow 112345678901234567890.12\ndone count=1\n",
                        B(f->s, "SELECT SUM(v) FROM (VALUES (CAST(99999999999999999999.99 AS decimal(38,2))), "
                                "(CAST(NULL AS decimal(38,2))), (CAST(0.01 AS decimal(38,2))), "
                                "(CAST(12345678901234567890.12 AS decimal(38,2)))) AS t(v)"));
    assert_string_equal("cols :decimal(38,2)\nrow <NULL>\ndone count=1\n",
                        B(f->s, "SELECT SUM(v) FROM (VALUES (CAST(1 AS decimal(38,2)))) AS t(v) WHERE v > 5"));
    /* decimal(18,0) totals past bigint stay exact too */
    assert_string_equal("cols :decimal(38,0)\nrow 1999999999999999998\ndone count=1\n",
                        B(f->s, "SELECT SUM(v) FROM (VALUES (CAST(999999999999999999 AS decimal(18,0))), "
                                "(CAST(999999999999999999 AS decimal(18,0)))) AS t(v)"));
    assert_string_equal("cols :decimal(38,1)\nrow 3.5\ndone count=1\n",
                        B(f->s, "SELECT SUM(DISTINCT v) FROM (VALUES (CAST(1.5 AS decimal(10,1))), (CAST(1.5 AS decimal(10,1))), "
                                "(CAST(2 AS decimal(10,1)))) AS t(v)"));
    assert_string_equal("cols k:int not null, :decimal(38,2)\nrow 1 | 0.10\nrow 2 | 0.30\nrow 3 | 0.70\ndone count=3\n",
                        B(f->s, "SELECT k, SUM(v) OVER (ORDER BY k) FROM (VALUES (1, CAST(0.10 AS decimal(20,2))), "
                                "(2, CAST(0.20 AS decimal(20,2))), (3, CAST(0.40 AS decimal(20,2)))) AS t(k, v)"));
    const char *got = B(f->s, "SELECT SUM(v) FROM (VALUES (CAST(999999999999999999999999999999999999.99 AS decimal(38,2))), "
                              "(CAST(999999999999999999999999999999999999.99 AS decimal(38,2)))) AS t(v)");
    assert_non_null(strstr(got, "error 8115/"));
    assert_non_null(strstr(got, "Arithmetic overflow error converting expression to data type numeric."));
}

static void test_source_tsql__avg_of_decimal_is_exact_decimal_38_scale_at_least_6(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :decimal(38,6), :decimal(38,6), :decimal(38,8)\nrow 1.875000 | 1.666666 | 1.00000001\ndone count=1\n",
                        B(f->s, "SELECT AVG(v), AVG(w), AVG(x) FROM (VALUES "
                                "(CAST(1.50 AS decimal(10,2)), CAST(1 AS decimal(30,0)), CAST(1.00000001 AS decimal(20,8))), "
                                "(CAST(2.25 AS decimal(10,2)), CAST(2 AS decimal(30,0)), NULL), "
                                "(NULL, CAST(2 AS decimal(30,0)), NULL)) AS t(v, w, x)"));
    assert_string_equal("cols :decimal(38,6)\nrow 112345678901234567890.120000\ndone count=1\n",
                        B(f->s, "SELECT AVG(v) FROM (VALUES (CAST(112345678901234567890.12 AS decimal(38,2))), "
                                "(CAST(112345678901234567890.12 AS decimal(38,2)))) AS t(v)"));
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

static void test_source_tsql__image_is_never_compared_and_rowversion_is_binary_8(void **state)
{
    fx *f = *state;
    assert_int_equal(0, mcdc_sim_create_table(f->t.sim, "dbo.r", "id INT NOT NULL, img IMAGE NULL, rv ROWVERSION NOT NULL",
                                              "id", NULL, T("2026-01-01T00:00:04")));
    simt_exec(&f->t, NULL, "2026-01-01T00:00:05", "INSERT INTO dbo.r (id, img) VALUES (1, 0x0A0B)");
    assert_string_equal("cols id:int not null, img:image, rv:timestamp not null\nrow 1 | 0x0A0B | 0x00000000000007D1\n"
                        "done count=1\n", B(f->s, "SELECT id, img, rv FROM dbo.r"));
    assert_string_equal("error 402/1/16 The data types image and varbinary are incompatible in the equal to operator.\n"
                        "done error\n", B(f->s, "SELECT id FROM dbo.r WHERE img = 0x0A0B"));
    assert_string_equal("error 402/1/16 The data types varbinary and image are incompatible in the not equal to operator.\n"
                        "done error\n", B(f->s, "select id from [dbo].[r] where 0x0A0B <> IMG"));
    assert_string_equal("cols id:int not null\nrow 1\ndone count=1\n",
                        B(f->s, "SELECT id FROM dbo.r WHERE rv >= 0x00000000000007D1 AND rv < CAST(0x00000000000007D2 AS binary(8))"));
    assert_string_equal("cols name:nvarchar(128), system_type_id:tinyint not null, max_length:smallint not null\n"
                        "row id | 56 | 4\nrow img | 34 | 16\nrow rv | 189 | 8\ndone count=3\n",
                        B(f->s, "SELECT name, system_type_id, max_length FROM sys.columns WHERE object_id = OBJECT_ID('dbo.r')"
                                " ORDER BY column_id"));
    assert_string_equal("cols b:varbinary(max), t:varchar(20) not null\nrow 0x0A0B | 0x00000000000007D1\ndone count=1\n",
                        B(f->s, "SELECT CAST(img AS varbinary(max)) AS b, CONVERT(varchar(20), rv, 1) AS t FROM dbo.r"));
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
    assert_string_equal("cols :nvarchar(128), :int\nrow 16.0.4135.4 | 3\ndone count=1\n",
                        B(f->s, "SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)), "
                                "CONVERT(int, SERVERPROPERTY('EngineEdition'))"));
    char want[100];
    snprintf(want, sizeof want, "cols :smallint not null\nrow %d\ndone count=1\n", mcdc_sim_session_spid(f->s));
    assert_string_equal(want, B(f->s, "SELECT @@SPID"));
}

static void test_source_tsql__current_timezone_id_needs_version_16_even_untaken(void **state)
{
    fx *f = *state;
    assert_string_equal("error 195/10/15 'CURRENT_TIMEZONE_ID' is not a recognized built-in function name.\ndone error\n",
                        B(f->s, "SELECT CASE WHEN 1 = 0 THEN CURRENT_TIMEZONE_ID() ELSE N'x' END"));
    assert_string_equal("cols :sql_variant/nvarchar(128), :sql_variant/nvarchar(128)\nrow 15 | 15.0.4355.3\ndone count=1\n",
                        B(f->s, "SELECT SERVERPROPERTY('ProductMajorVersion'), SERVERPROPERTY('ProductVersion')"));
}

static void test_source_tsql__current_timezone_id_on_16(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :nvarchar(256) not null\nrow UTC\ndone count=1\n", B(f->s, "SELECT CURRENT_TIMEZONE_ID()"));
    /* Azure SQL Database (engine edition 5) has it whatever the version number */
    mcdc_sim_session *az;
    mcdc_sim_login_info li = {"dbo", NULL, "t"};
    mcdc_sim_server_options o = {13, 5, NULL};
    assert_int_equal(0, mcdc_sim_session_open(&az, f->t.path, &li, &o));
    assert_string_equal("cols :nvarchar(256) not null, :sql_variant/int\nrow UTC | 5\ndone count=1\n",
                        B(az, "SELECT CURRENT_TIMEZONE_ID(), SERVERPROPERTY('EngineEdition')"));
    mcdc_sim_session_close(az);
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
    assert_string_equal("cols :int, :int\nrow 0 | 1\ndone count=1\n",
                        B(s, "SELECT HAS_PERMS_BY_NAME(N'dbo.orders', 'OBJECT', 'SELECT'), "
                             "HAS_PERMS_BY_NAME(N'cdc.lsn_time_mapping', 'OBJECT', 'SELECT')"));
    const char *got = B(s, "EXEC sys.sp_cdc_help_change_data_capture");
    assert_non_null(strstr(got, "doneinproc more count=0\n")); /* the instance it cannot read is left out */
    got = B(s, "EXEC sys.sp_cdc_get_captured_columns N'dbo_orders'");
    assert_non_null(strstr(got, "error 22985/1/16"));
    assert_int_equal(0, mcdc_sim_grant(f->t.sim, "narrow", "cdc.dbo_orders_CT"));
    mcdc_sim_session_close(s);
    assert_int_equal(0, mcdc_sim_session_open(&s, f->t.path, &li, NULL));
    got = B(s, "SELECT COUNT(*) FROM cdc.dbo_orders_CT WHERE __$start_lsn >= sys.fn_cdc_get_min_lsn('dbo_orders')");
    assert_string_equal("cols :int not null\nrow 3\ndone count=1\n", got);
    /* the change table alone does not show the instance: SQL Server gates a capture instance's
     * metadata by SELECT on its source table (min_lsn zero, left out of the listing) */
    assert_string_equal("cols :binary(10)\nrow 0x00000000000000000000\ndone count=1\n",
                        B(s, "SELECT sys.fn_cdc_get_min_lsn(N'dbo_orders')"));
    assert_non_null(strstr(B(s, "EXEC sys.sp_cdc_help_change_data_capture"), "doneinproc more count=0\n"));
    assert_int_equal(0, mcdc_sim_grant(f->t.sim, "narrow", "dbo.orders"));
    mcdc_sim_session_close(s);
    assert_int_equal(0, mcdc_sim_session_open(&s, f->t.path, &li, NULL));
    assert_non_null(strstr(B(s, "EXEC sys.sp_cdc_help_change_data_capture"), "doneinproc more count=1\n"));
    assert_null(strstr(B(s, "SELECT sys.fn_cdc_get_min_lsn(N'dbo_orders')"), "row 0x00000000000000000000\n"));
    mcdc_sim_session_close(s);
}


static void test_source_tsql__joins_and_outer_join_nullability(void **state)
{
    fx *f = *state;
    assert_string_equal("cols order_id:int not null, tran_end_time:datetime\nrow 1 | 2026-01-01 00:00:01.000\n"
                        "row 2 | 2026-01-01 00:00:02.000\nrow 3 | 2026-01-01 00:00:02.000\ndone count=3\n",
                        B(f->s, "SELECT o.order_id, m.tran_end_time FROM dbo.orders AS o JOIN cdc.dbo_orders_CT c ON "
                                "c.order_id = o.order_id INNER JOIN cdc.lsn_time_mapping m ON m.start_lsn = c.__$start_lsn "
                                "ORDER BY o.order_id"));
    assert_string_equal("cols order_id:int not null, __$operation:int\nrow 1 | <NULL>\nrow 2 | 2\nrow 3 | 2\ndone count=3\n",
                        B(f->s, "SELECT o.order_id, c.__$operation FROM dbo.orders o LEFT OUTER JOIN cdc.dbo_orders_CT c "
                                "ON c.order_id = o.order_id AND c.order_id > 1 ORDER BY 1"));
}

static void test_source_tsql__subqueries_exists_and_values(void **state)
{
    fx *f = *state;
    assert_string_equal("cols customer:nvarchar(40)\nrow Cy\ndone count=1\n",
                        B(f->s, "SELECT customer FROM dbo.orders WHERE order_id = (SELECT MAX(order_id) FROM dbo.orders)"));
    assert_string_equal("cols customer:nvarchar(40)\nrow Ann\ndone count=1\n",
                        B(f->s, "SELECT customer FROM dbo.orders o WHERE EXISTS (SELECT 1 FROM cdc.dbo_orders_CT c "
                                "WHERE c.order_id = o.order_id AND c.amount > 8)"));
    assert_string_equal("cols a:int not null, b:nvarchar(2) not null\nrow 2 | yy\nrow 1 | x\ndone count=2\n",
                        B(f->s, "SELECT v.a, v.b FROM (VALUES (1, N'x'), (2, N'yy')) AS v(a, b) ORDER BY v.a DESC"));
    assert_string_equal("cols n:bigint not null\nrow 2\ndone count=1\n",
                        B(f->s, "SELECT COUNT_BIG(*) AS n FROM (SELECT order_id FROM dbo.orders WHERE order_id IN "
                                "(SELECT order_id FROM cdc.dbo_orders_CT WHERE amount IS NOT NULL)) AS d"));
}

static void test_source_tsql__collate_and_the_default_collation(void **state)
{
    fx *f = *state;
    assert_string_equal("cols customer:nvarchar(40)\nrow Ann\ndone count=1\n", B(f->s, "SELECT customer FROM dbo.orders WHERE customer = N'ANN  '"));
    assert_string_equal("cols customer:nvarchar(40)\ndone count=0\n",
                        B(f->s, "SELECT customer FROM dbo.orders WHERE customer = N'ANN' COLLATE Latin1_General_CS_AS"));
    assert_string_equal("cols customer:nvarchar(40)\nrow Ann\nrow Cy\ndone count=2\n",
                        B(f->s, "SELECT customer FROM dbo.orders WHERE customer LIKE N'%y' OR customer LIKE N'a%' ORDER BY 1"));
}

static void test_source_tsql__variables_declare_set_and_select_assignment(void **state)
{
    fx *f = *state;
    assert_string_equal("cols x:int\nrow 10\ndone count=1\n", B(f->s, "DECLARE @x int; SET @x = 5; SET @x = @x * 2; SELECT @x AS x"));
    assert_string_equal("cols x:int\nrow 10\ndone count=1\n", B(f->s, "DECLARE @x int = 5 SET @x = @x * 2 SELECT @x AS x"));
    assert_string_equal("done more count=1\ncols :int\nrow 3\ndone count=1\n",
                        B(f->s, "DECLARE @n int = 0; SELECT @n = COUNT(*) FROM dbo.orders; SELECT @n"));
    assert_string_equal("error 137/2/15 Must declare the scalar variable \"@nope\".\ndone error\n", B(f->s, "SELECT @nope"));
    assert_string_equal("error 257/3/16 Implicit conversion from data type varchar to binary is not allowed. Use the CONVERT "
                        "function to run this query.\ndone error\n", B(f->s, "DECLARE @b binary(10) = '0x01'"));
}

static void test_source_tsql__decimal_arithmetic_is_exact_with_sql_servers_types(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :decimal(23,2), :decimal(13,2), :decimal(23,13), :int not null, :int not null\n"
                        "row 21.00 | 11.50 | 3.5000000000000 | 0 | 1\ndone count=1\n",
                        B(f->s, "SELECT amount * 2, amount + 1, amount / 3, order_id / 2, order_id % 2 FROM dbo.orders WHERE order_id = 1"));
    assert_string_equal("cols :decimal(37,1) not null\nrow 12345678901234567890123456789012345.7\ndone count=1\n",
                        B(f->s, "SELECT 12345678901234567890123456789012345.6 + 0.1"));
    assert_string_equal("cols :int not null\nerror 8134/1/16 Divide by zero error encountered.\ndone error\n", B(f->s, "SELECT 1/0"));
}

static void test_source_tsql__union_all_takes_the_common_type(void **state)
{
    fx *f = *state;
    assert_string_equal("cols a:numeric(11,1)\nrow 2.5\nrow 1.0\nrow <NULL>\ndone count=3\n",
                        B(f->s, "SELECT 1 AS a UNION ALL SELECT 2.5 UNION ALL SELECT NULL ORDER BY a DESC"));
    const char *got = B(f->s, "SELECT 1 UNION ALL SELECT 1, 2");
    assert_non_null(strstr(got, "error 205/1/16"));
}

static void test_source_tsql__grouped_select_list_columns_must_be_grouped_8120(void **state)
{
    fx *f = *state;
    assert_string_equal("error 8120/1/16 Column 'dbo.orders.customer' is invalid in the select list because it is not "
                        "contained in either an aggregate function or the GROUP BY clause.\ndone error\n",
                        B(f->s, "SELECT customer, COUNT(*) FROM dbo.orders"));
    assert_string_equal("cols customer:nvarchar(40), n:int not null\nrow Ann | 1\nrow Bob | 1\nrow Cy | 1\ndone count=3\n",
                        B(f->s, "SELECT customer, COUNT(*) AS n FROM dbo.orders GROUP BY customer HAVING COUNT(*) > 0 ORDER BY customer"));
}

static void test_source_tsql__casts_and_conversion_errors(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :decimal(5,2) not null, :int not null, :int not null, :datetime2(0) not null\n"
                        "row 12.35 | 42 | 3 | 2026-03-04 05:06:08\ndone count=1\n",
                        B(f->s, "SELECT CAST(N'12.345' AS decimal(5,2)), CONVERT(int, '42'), CAST(3.7 AS int), "
                                "CONVERT(datetime2(0), '2026-03-04T05:06:07.89')"));
    assert_string_equal("cols :int not null\nerror 245/1/16 Conversion failed when converting the varchar value 'abc' to "
                        "data type int.\ndone error\n", B(f->s, "SELECT CAST('abc' AS int)"));
    assert_string_equal("cols :decimal(12,2) not null, :nvarchar(40) not null\nrow 10.50 | Ann\nrow 0.00 | Bob\nrow 7.00 | Cy\n"
                        "done count=3\n", B(f->s, "SELECT ISNULL(amount, 0), COALESCE(NULL, customer, N'z') FROM dbo.orders ORDER BY order_id"));
}

static void test_source_tsql__more_cdc_functions_and_all_changes(void **state)
{
    fx *f = *state;
    const char *got = B(f->s, "SELECT sys.fn_cdc_decrement_lsn(sys.fn_cdc_get_max_lsn()), "
                              "sys.fn_cdc_map_time_to_lsn('largest less than or equal', '2026-01-01 00:00:01.5')");
    char want[300];
    snprintf(want, sizeof want, "cols :binary(10), :binary(10)\nrow 0x%.16s0003 | 0x%.16s0003\ndone count=1\n",
             L("2026-01-01T00:00:02", 0) + 2, L("2026-01-01T00:00:01", 0) + 2);
    assert_string_equal(want, got);
    assert_string_equal("cols __$operation:int, order_id:int\nrow 2 | 1\nrow 2 | 2\nrow 2 | 3\ndone count=3\n",
                        B(f->s, "DECLARE @from binary(10) = sys.fn_cdc_get_min_lsn(N'dbo_orders'), @to binary(10) = "
                                "sys.fn_cdc_get_max_lsn(); SELECT __$operation, order_id FROM "
                                "cdc.fn_cdc_get_all_changes_dbo_orders(@from, @to, N'all') ORDER BY __$seqval"));
    got = B(f->s, "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(0x00000000000000000001, sys.fn_cdc_get_max_lsn(), N'all')");
    assert_non_null(strstr(got, "error 313/1/16 An insufficient number of arguments were supplied for the procedure or "
                                "function cdc.fn_cdc_get_all_changes_dbo_orders.\n"));
    assert_string_equal("cols :int, :int\nrow 1 | <NULL>\ndone count=1\n",
                        B(f->s, "SELECT HAS_PERMS_BY_NAME(N'dbo.orders', 'OBJECT', 'SELECT'), HAS_PERMS_BY_NAME(N'dbo.nope', 'OBJECT', 'SELECT')"));
}

static void test_source_tsql__datepart_tzoffset_and_the_clock(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :int not null, :int not null\nrow 0 | 330\ndone count=1\n",
                        B(f->s, "SELECT DATEPART(TZOFFSET, SYSDATETIMEOFFSET()), DATEPART(tzoffset, '2026-01-01 10:00:00 +05:30')"));
    const char *got = B(f->s, "SELECT SYSUTCDATETIME()");
    assert_non_null(strstr(got, "cols :datetime2(7) not null\nrow 20"));
}

static void test_source_tsql__system_objects_and_procedures(void **state)
{
    fx *f = *state;
    assert_string_equal("cols name:nvarchar(128), column_id:int not null, system_type_id:tinyint not null, max_length:smallint "
                        "not null, precision:tinyint not null, scale:tinyint not null, is_nullable:bit\n"
                        "row order_id | 1 | 56 | 4 | 10 | 0 | 0\nrow customer | 2 | 231 | 80 | 0 | 0 | 1\n"
                        "row amount | 3 | 106 | 9 | 12 | 2 | 1\nrow placed_at | 4 | 42 | 7 | 23 | 3 | 1\ndone count=4\n",
                        B(f->s, "SELECT name, column_id, system_type_id, max_length, precision, scale, is_nullable FROM "
                                "sys.columns WHERE object_id = OBJECT_ID(N'dbo.orders') ORDER BY column_id"));
    assert_string_equal("cols name:nvarchar(128), database_id:int not null, is_cdc_enabled:bit not null\nrow master | 1 | 0\n"
                        "row t | 5 | 1\ndone count=2\n",
                        B(f->s, "SELECT name, database_id, is_cdc_enabled FROM sys.databases ORDER BY database_id"));
    assert_string_equal("cols name:nvarchar(128), rows:char(20), reserved:varchar(18), data:varchar(18), index_size:varchar(18), "
                        "unused:varchar(18)\nrow orders | 3                    | 8 KB | 8 KB | 0 KB | 0 KB\n"
                        "doneinproc more count=1\nstatus 0\ndoneproc\n", B(f->s, "EXEC sp_spaceused @objname = N'dbo.orders'"));
    const char *got = B(f->s, "EXEC sys.sp_cdc_help_change_data_capture @source_schema = N'dbo', @source_name = N'orders'");
    assert_non_null(strstr(got, "row dbo | orders | dbo_orders | "));
    assert_non_null(strstr(got, " | [order_id] | [order_id], [customer], [amount], [placed_at]\ndoneinproc more count=1\n"));
    assert_string_equal("error 8145/1/16 @nope is not a parameter for procedure sys.sp_cdc_get_captured_columns. "
                        "(in sp_cdc_get_captured_columns)\ndone error\n",
                        B(f->s, "EXEC sys.sp_cdc_get_captured_columns @nope = 1"));
    assert_string_equal("error 22985/1/16 Could not find the capture instance 'x' in sys.sp_cdc_get_ddl_history. Specify a "
                        "valid capture instance. (in sp_cdc_get_ddl_history)\ndone error\n",
                        B(f->s, "EXEC sys.sp_cdc_get_ddl_history 'x'"));
    /* by RPC: the error names the procedure and its return status is 1 */
    mcdc_sim_param bad[] = {PS("@capture_instance", "x")};
    assert_string_equal("error 22985/1/16 Could not find the capture instance 'x' in sys.sp_cdc_get_ddl_history. Specify a "
                        "valid capture instance. (in sp_cdc_get_ddl_history)\nstatus 1\ndoneproc error\n",
                        R(f->s, "sys.sp_cdc_get_ddl_history", 0, bad, 1));
    assert_string_equal("cols :int not null\nrow 3\ndoneinproc more count=1\nstatus 0\ndoneproc\n",
                        B(f->s, "EXEC sp_executesql N'SELECT COUNT(*) FROM dbo.orders WHERE order_id <= @m', N'@m int', @m = 5"));
}

static void test_source_tsql__dml_and_cdc_procedures_for_smoke_scripts(void **state)
{
    fx *f = *state;
    assert_string_equal("done more count=1\ndone count=2\n",
                        B(f->s, "INSERT INTO dbo.orders (order_id, customer) VALUES (4, N'Dee'); UPDATE dbo.orders SET amount = 1 "
                                "WHERE order_id IN (2, 4)"));
    assert_string_equal("cols :int not null\nrow 4\ndone count=1\n", B(f->s, "SELECT COUNT(*) FROM dbo.orders WHERE amount IS NOT NULL"));
    assert_string_equal("done more count=1\ncols :int not null\nrow 5\ndone count=1\n",
                        B(f->s, "INSERT INTO dbo.orders VALUES (5, NULL, NULL, NULL) SELECT COUNT(*) FROM dbo.orders"));
    assert_string_equal("status 0\ndoneproc\n", B(f->s, "EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = "
                                                     "N'orders', @role_name = NULL, @capture_instance = N'dbo_orders_v2'"));
    const char *got = B(f->s, "SELECT capture_instance FROM cdc.change_tables ORDER BY capture_instance");
    assert_string_equal("cols capture_instance:nvarchar(128) not null\nrow dbo_orders\nrow dbo_orders_v2\ndone count=2\n", got);
    assert_string_equal("status 0\ndoneproc\n", B(f->s, "EXEC sys.sp_cdc_disable_table N'dbo', N'orders', N'dbo_orders_v2'"));
    assert_string_equal("cols :int not null\nrow 1\ndone count=1\n", B(f->s, "SELECT COUNT(*) FROM cdc.change_tables"));
    got = B(f->s, "DELETE FROM dbo.orders WHERE order_id = 99");
    assert_string_equal("done count=0\n", got);
    got = B(f->s, "INSERT INTO dbo.orders VALUES (1, N'dup', NULL, NULL)");
    assert_non_null(strstr(got, "error 2627/1/14 Violation of PRIMARY KEY constraint"));
}

static void test_source_tsql__a_syntax_error_anywhere_runs_nothing(void **state)
{
    fx *f = *state;
    assert_string_equal("error 102/1/15 Incorrect syntax near 'FROM'.\ndone error\n",
                        B(f->s, "INSERT INTO dbo.orders VALUES (9, N'x', NULL, NULL); SELECT FROM dbo.orders"));
    assert_string_equal("cols :int not null\nrow 0\ndone count=1\n", B(f->s, "SELECT COUNT(*) FROM dbo.orders WHERE order_id = 9"));
    assert_string_equal("error 195/10/15 'FOO' is not a recognized SET option.\ndone error\n",
                        B(f->s, "SET NOCOUNT ON; SELECT 1; SET FOO ON"));
    assert_string_equal("cols :int not null\nrow 1\ndone count=1\n", B(f->s, "SELECT 1")); /* NOCOUNT was not set */
    /* an unknown object is found when its statement runs: the ones before it ran */
    assert_string_equal("cols :int not null\nrow 1\ndone more count=1\nerror 208/1/16 Invalid object name 'dbo.nope'.\ndone error\n",
                        B(f->s, "SELECT 1; SELECT * FROM dbo.nope; SELECT 2"));
}

static void test_source_tsql__varchar_holds_what_its_code_page_holds(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :varchar(20) not null, :nvarchar(5) not null\nrow \xe2\x82\xac \xc3\xbc ? \xc3\xa9 | \xe2\x82\xac\ndone count=1\n",
                        B(f->s, "SELECT CAST(N'\xe2\x82\xac \xc3\xbc \xe4\xb8\xad \xc3\xa9' AS varchar(20)), CAST(N'\xe2\x82\xac' AS nvarchar(5))"));
}

static void test_source_tsql__sp_executesql_output_parameters_come_back(void **state)
{
    fx *f = *state;
    mcdc_sim_param ps[] = {PS(NULL, "SELECT @o = COUNT(*) FROM dbo.orders WHERE order_id > @min"), PS(NULL, "@min int, @o int OUTPUT"),
                           PI("@min", 1, false), PI("@o", 0, true)};
    assert_string_equal("doneinproc more count=1\nstatus 0\nretval 3 @o int=2\ndoneproc\n", R(f->s, "sp_executesql", 0, ps, 4));
}

static void test_source_tsql__cleanup_change_table_moves_min_lsn_to_the_low_water_mark(void **state)
{
    fx *f = *state;
    assert_string_equal("status 0\ndoneproc\n",
                        B(f->s, "DECLARE @l binary(10) = (SELECT MAX(start_lsn) FROM cdc.lsn_time_mapping); "
                                "EXEC sys.sp_cdc_cleanup_change_table @capture_instance = N'dbo_orders', @low_water_mark = @l, "
                                "@threshold = 10"));
    char want[200];
    snprintf(want, sizeof want, "cols :binary(10), :int\nrow %s | 2\ndone count=1\n", L("2026-01-01T00:00:02", 4));
    assert_string_equal(want, B(f->s, "SELECT sys.fn_cdc_get_min_lsn(N'dbo_orders'), (SELECT COUNT(*) FROM cdc.dbo_orders_CT)"));
    const char *got = B(f->s, "EXEC sys.sp_cdc_cleanup_change_table N'dbo_orders', 0x00000000000000000009");
    assert_non_null(strstr(got, "error 22964/1/16"));
}

static void test_source_tsql__change_table_range_seeks_give_the_scans_answers(void **state)
{
    fx *f = *state;
    simt_exec(&f->t, NULL, "2026-01-01T00:00:04", "UPDATE dbo.orders SET amount = 1 WHERE order_id IN (1, 2)");
    simt_exec(&f->t, NULL, "2026-01-01T00:00:05", "DELETE FROM dbo.orders WHERE order_id = 3");
    simt_capture(&f->t, "2026-01-01T00:00:06", 0);
    static const char *const ops[] = {">", ">=", "<", "<=", "="};
    static const char *const shifts[] = {"", "sys.fn_cdc_increment_lsn", "sys.fn_cdc_decrement_lsn"};
    char q1[600], q2[600];
    for (int lsn = 0; lsn < 5; lsn++)
        for (int sh = 0; sh < 3; sh++)
            for (int o = 0; o < 5; o++) {
                char x[200];
                snprintf(x, sizeof x, "%s((SELECT start_lsn FROM cdc.lsn_time_mapping ORDER BY start_lsn OFFSET %d ROWS "
                                      "FETCH NEXT 1 ROWS ONLY))", shifts[sh], lsn);
                snprintf(q1, sizeof q1, "DECLARE @x binary(10) = %s; SELECT COUNT(*), MIN(__$seqval) FROM cdc.dbo_orders_CT "
                                        "WHERE __$start_lsn %s @x", x, ops[o]);
                snprintf(q2, sizeof q2, "DECLARE @x binary(10) = %s; SELECT COUNT(*), MIN(__$seqval) FROM cdc.dbo_orders_CT "
                                        "WHERE CAST(__$start_lsn AS varbinary(10)) %s @x", x, ops[o]);
                char *a = strdup(B(f->s, q1));
                const char *b = B(f->s, q2);
                if (strcmp(a, b) || strstr(a, "error")) fail_msg("%s\n%s\n!=\n%s", q1, a, b);
                free(a);
            }
    /* flipped, BETWEEN, and an ORDER BY of the read order by rowid */
    const char *want = B(f->s, "SELECT __$start_lsn, __$seqval, __$operation FROM cdc.dbo_orders_CT ORDER BY "
                               "CAST(__$start_lsn AS varbinary(10)), __$command_id, __$seqval, __$operation");
    char *w = strdup(want);
    assert_string_equal(w, B(f->s, "SELECT __$start_lsn, __$seqval, __$operation FROM cdc.dbo_orders_CT WHERE 0x00 < __$start_lsn "
                                   "AND __$start_lsn BETWEEN 0x00 AND 0xFFFFFFFFFFFFFFFFFFFF ORDER BY __$start_lsn, "
                                   "__$command_id, __$seqval, __$operation"));
    free(w);
}

static void test_source_tsql__distinct_rowcount_and_error(void **state)
{
    fx *f = *state;
    assert_string_equal("cols customer:nvarchar(2) not null\nrow a\nrow b\ndone count=2\n",
                        B(f->s, "SELECT DISTINCT customer FROM (VALUES (N'a'), (N'A '), (N'b')) AS v(customer) ORDER BY 1"));
    assert_string_equal("done more count=2\ncols :int not null, :int not null\nrow 2 | 0\ndone count=1\n",
                        B(f->s, "UPDATE dbo.orders SET amount = 2 WHERE order_id > 1; SELECT @@ROWCOUNT, @@ERROR"));
    assert_string_equal("cols :int not null\nerror 8134/1/16 Divide by zero error encountered.\ndone more error\n"
                        "cols :int not null\nrow 8134\ndone count=1\n", B(f->s, "SELECT 1/0; SELECT @@ERROR"));
}

/* SQL Server stores an nvarchar as UTF-16LE and a varchar in its code page (CP1252): what
 * DATALENGTH measures and HASHBYTES hashes, not the engine's UTF-8. */
static void test_source_tsql__datalength_and_hashbytes_see_utf16_and_cp1252_bytes(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :int not null, :int not null, :int not null, :int not null, :int not null, :int not null, "
                        ":int not null, :int not null, :int not null\nrow 6 | 3 | 2 | 1 | 4 | 4 | 8 | 2 | 3\ndone count=1\n",
                        B(f->s, "SELECT DATALENGTH(N'abc'), DATALENGTH('abc'), DATALENGTH(N'\xc3\xa9'), DATALENGTH('\xc3\xa9'), "
                                "DATALENGTH(N'\xf0\x9f\x98\x80'), DATALENGTH(1), DATALENGTH(CAST(1 AS bigint)), DATALENGTH(0x0A0B), "
                                "DATALENGTH(CAST('2026-01-01' AS date))"));
    assert_string_equal("cols :int\nrow 6\ndone count=1\n", B(f->s, "SELECT DATALENGTH(customer) FROM dbo.orders WHERE order_id = 1"));
    /* SHA-256 of 61 00 62 00 63 00, of E9, of the surrogate pair 3D D8 00 DE, and of a column */
    assert_string_equal("cols :varbinary(8000), :varbinary(8000)\n"
                        "row 0x13E228567E8249FCE53337F25D7970DE3BD68AB2653424C7B8F9FD05E33CAEDF | "
                        "0xDE2E331D891AE267A7009CB45B4E8830F170E0C937288EA2731A1941C7A53B0D\ndone count=1\n",
                        B(f->s, "SELECT HASHBYTES('SHA2_256', N'abc'), HASHBYTES('SHA2_256', '\xc3\xa9')"));
    assert_string_equal("cols :varbinary(8000)\nrow 0x81C96284B596ED3155A3F0F11DA0DD13494DC91618323A3BFF4C9701229015CC\ndone count=1\n",
                        B(f->s, "SELECT HASHBYTES('SHA2_256', N'\xf0\x9f\x98\x80')"));
    assert_string_equal("cols :varbinary(8000)\nrow 0xD6946B9A849B1141617C89A6818E49E957AA03CA8E76B3C0C4FFE343049802DB\ndone count=1\n",
                        B(f->s, "SELECT HASHBYTES('SHA2_256', customer) FROM dbo.orders WHERE order_id = 1"));
    assert_string_equal("cols :varbinary(8000)\nrow 0x900150983CD24FB0D6963F7D28E17F72\ndone count=1\n",
                        B(f->s, "SELECT HASHBYTES('MD5', 0x616263)"));
    assert_string_equal("error 8116/1/16 Argument data type int is invalid for argument 2 of hashbytes function.\ndone error\n",
                        B(f->s, "SELECT HASHBYTES('MD5', 1)"));
    /* the key hash of mcdc/keyhash.h's worked value (tests/unit/core/keyhash.c) */
    assert_string_equal("cols :bigint\nrow 6362924643553687\ndone count=1\n",
                        B(f->s, "SELECT CONVERT(bigint, SUBSTRING(HASHBYTES('SHA2_256', N'2:42;'), 1, 7))"));
}

static void test_source_tsql__substring_binary_to_int_and_date_texts(void **state)
{
    fx *f = *state;
    assert_string_equal("cols :varbinary(8), :nvarchar(6), :varchar(6), :nvarchar(2), :nvarchar(3), :nvarchar(3)\n"
                        "row 0x01020304050607 | bcd | ab | a |  | \xf0\x9f\x98\x80\ndone count=1\n",
                        B(f->s, "SELECT SUBSTRING(0x0102030405060708, 1, 7), SUBSTRING(N'abcdef', 2, 3), SUBSTRING('abcdef', 0, 3), "
                                "SUBSTRING(N'ab', -1, 3), SUBSTRING(N'abc', 5, 1), SUBSTRING(N'a\xf0\x9f\x98\x80', 2, 2)"));
    assert_string_equal("cols :nvarchar(3)\nerror 537/1/16 Invalid length parameter passed to the substring function.\ndone error\n",
                        B(f->s, "SELECT SUBSTRING(N'abc', 1, -1)"));
    /* binary to integer: big-endian, the last bytes when longer than the type */
    assert_string_equal("cols :bigint not null, :int not null, :smallint not null, :tinyint not null\n"
                        "row 283686952306183 | -1 | -32768 | 2\ndone count=1\n",
                        B(f->s, "SELECT CONVERT(bigint, 0x01020304050607), CONVERT(int, 0xFFFFFFFF), CONVERT(smallint, 0x018000), "
                                "CONVERT(tinyint, 0x0102)"));
    /* style 23, the default texts of date, time, datetime2 and datetimeoffset */
    assert_string_equal("cols :nvarchar(10) not null, :nvarchar(10) not null, :nvarchar(max) not null, :nvarchar(max) not null, "
                        ":nvarchar(max) not null\n"
                        "row 2026-03-04 | 2026-03-04 | 01:02:03.500 | 2026-01-02 03:04:05.50 | 2026-01-02 03:04:05 +01:00\ndone count=1\n",
                        B(f->s, "SELECT CONVERT(nvarchar(10), CAST('2026-03-04' AS date), 23), "
                                "CONVERT(nvarchar(10), CAST('2026-03-04 23:59:59' AS datetime2), 23), "
                                "CONVERT(nvarchar(max), CAST('01:02:03.5' AS time(3))), "
                                "CONVERT(nvarchar(max), CAST('2026-01-02 03:04:05.5' AS datetime2(2))), "
                                "CONVERT(nvarchar(max), CAST('2026-01-02 03:04:05 +01:00' AS datetimeoffset(0)))"));
    /* 'YYYYMMDD' literals; DATEDIFF_BIG past int's range (a datetimeoffset counts in UTC) */
    assert_string_equal("cols :date not null, :datetime2(0) not null\nrow 1970-01-02 | 1970-01-02 01:02:03\ndone count=1\n",
                        B(f->s, "SELECT CAST('19700102' AS date), CAST('19700102 01:02:03' AS datetime2(0))"));
    assert_string_equal("cols :date not null\nerror 241/1/16 Conversion failed when converting date and/or time from character "
                        "string.\ndone error\n",
                        B(f->s, "SELECT CAST('197001021' AS date)"));
    assert_string_equal("cols :bigint, :bigint\nrow 1772586123123456 | 1772578923000000\ndone count=1\n",
                        B(f->s, "SELECT DATEDIFF_BIG(microsecond, '19700101', CAST('2026-03-04 01:02:03.1234567' AS datetime2)), "
                                "DATEDIFF_BIG(microsecond, '19700101', CAST('2026-03-04 01:02:03 +02:00' AS datetimeoffset))"));
    assert_string_equal("cols :int\nerror 535/1/16 The datediff function resulted in an overflow. The number of dateparts "
                        "separating two date/time instances is too large. Try to use datediff with a less precise datepart.\n"
                        "done error\n",
                        B(f->s, "SELECT DATEDIFF(microsecond, '19700101', CAST('2026-03-04' AS datetime2))"));
}

int main(void)
{
#define T_(n) cmocka_unit_test_setup_teardown(test_source_tsql__##n, setup, teardown)
    const struct CMUnitTest tests[] = {
        T_(same_query_in_other_spellings_gives_the_same_answer),
        T_(top_order_offset_fetch),
        T_(alias_is_not_visible_in_where_or_group_by),
        T_(order_by_after_a_star_names_the_output_columns),
        T_(group_by_with_aggregates_and_sql_server_types),
        T_(sum_of_int_overflows_with_8115),
        T_(sum_of_wide_decimal_is_exact_decimal_38_or_8115),
        T_(avg_of_decimal_is_exact_decimal_38_scale_at_least_6),
        T_(string_is_not_implicitly_binary_257),
        T_(image_is_never_compared_and_rowversion_is_binary_8),
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
        T_(joins_and_outer_join_nullability),
        T_(subqueries_exists_and_values),
        T_(collate_and_the_default_collation),
        T_(variables_declare_set_and_select_assignment),
        T_(decimal_arithmetic_is_exact_with_sql_servers_types),
        T_(union_all_takes_the_common_type),
        T_(grouped_select_list_columns_must_be_grouped_8120),
        T_(casts_and_conversion_errors),
        T_(more_cdc_functions_and_all_changes),
        T_(datepart_tzoffset_and_the_clock),
        T_(system_objects_and_procedures),
        T_(dml_and_cdc_procedures_for_smoke_scripts),
        T_(a_syntax_error_anywhere_runs_nothing),
        T_(varchar_holds_what_its_code_page_holds),
        T_(sp_executesql_output_parameters_come_back),
        T_(cleanup_change_table_moves_min_lsn_to_the_low_water_mark),
        T_(change_table_range_seeks_give_the_scans_answers),
        T_(distinct_rowcount_and_error),
        T_(permission_denied_229),
        T_(datalength_and_hashbytes_see_utf16_and_cp1252_bytes),
        T_(substring_binary_to_int_and_date_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
