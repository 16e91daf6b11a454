/*
 * tests/unit/source/session.c: sim serve's sessions through session.h with a recording
 * sink: logins, SET statements at login, SELECT batches, RPCs (sp_executesql, sp_prepare,
 * sp_execute, sp_prepexec, sp_unprepare), errors by number, DONE bookkeeping.
 */
#include "session_test.h"

typedef struct fx {
    simt              t;
    mcdc_sim_session *s;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    simt_open(&f->t, NULL);
    simt_orders(&f->t, "2026-01-01T00:00:00");
    simt_exec(&f->t, NULL, "2026-01-01T00:00:01", "INSERT INTO dbo.orders VALUES (1, N'Ann', 10.50, '2026-01-01 00:00:00.125')");
    simt_exec(&f->t, NULL, "2026-01-01T00:00:02", "INSERT INTO dbo.orders VALUES (2, N'Bob', NULL, NULL), (3, N'Cy', 7, NULL)");
    simt_capture(&f->t, "2026-01-01T00:00:03", 0);
    assert_int_equal(0, mcdc_sim_login_add(f->t.sim, "reader", "s3cret!", false));
    mcdc_sim_login_info li = {"reader", NULL, "test"};
    assert_int_equal(0, mcdc_sim_session_open(&f->s, f->t.path, &li, NULL));
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    mcdc_sim_session_close(f->s);
    simt_close(&f->t);
    free(f);
    return 0;
}

static void test_source_session__login_check_matches_the_salted_hash_only(void **state)
{
    fx *f = *state;
    assert_int_equal(0, mcdc_sim_login_check(f->t.path, "reader", "s3cret!"));
    assert_int_equal(0, mcdc_sim_login_check(f->t.path, "READER", "s3cret!"));
    assert_int_equal(MCDC_EPERM, mcdc_sim_login_check(f->t.path, "reader", "s3cret"));
    assert_int_equal(MCDC_EPERM, mcdc_sim_login_check(f->t.path, "nobody", "s3cret!"));
    assert_int_equal(MCDC_EEXISTS, mcdc_sim_login_add(f->t.sim, "Reader", "x", false));
    assert_int_equal(0, mcdc_sim_login_add(f->t.sim, "Reader", "x", true));
    assert_int_equal(0, mcdc_sim_login_check(f->t.path, "reader", "s3cret!")); /* unchanged */
    /* the password is not in the file */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "cat '%s'* | grep -qa 's3cret'", f->t.path);
    assert_int_not_equal(0, system(cmd));
}

static void test_source_session__password_file_first_line_without_its_newline(void **state)
{
    fx *f = *state;
    char path[200], *pw = NULL;
    snprintf(path, sizeof path, "%s/pw", f->t.dir);
    FILE *fp = fopen(path, "w");
    fputs(" two words \r\nsecond line\n", fp);
    fclose(fp);
    assert_int_equal(0, mcdc_sim_password_file_read(&pw, path));
    assert_string_equal(" two words ", pw);
    free(pw);
    fp = fopen(path, "w");
    fputs("\nsecond\n", fp);
    fclose(fp);
    assert_int_equal(MCDC_EINVAL, mcdc_sim_password_file_read(&pw, path));
    assert_null(pw);
    snprintf(path, sizeof path, "%s/none", f->t.dir);
    assert_int_equal(MCDC_EINVAL, mcdc_sim_password_file_read(&pw, path));
}

static void test_source_session__no_logins_refuses_every_login(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    assert_int_equal(MCDC_EPERM, mcdc_sim_login_check(t.path, "sa", ""));
    assert_int_equal(MCDC_EPERM, mcdc_sim_login_check(t.path, "sa", "anything"));
    simt_close(&t);
}

static void test_source_session__wrong_database_and_product_version_are_refused(void **state)
{
    fx *f = *state;
    mcdc_sim_session *s = NULL;
    mcdc_sim_login_info li = {"reader", "other", "test"};
    assert_int_equal(MCDC_ENOTFOUND, mcdc_sim_session_open(&s, f->t.path, &li, NULL));
    assert_null(s);
    li.database = "T";
    assert_int_equal(0, mcdc_sim_session_open(&s, f->t.path, &li, NULL));
    mcdc_sim_session_close(s);
    mcdc_sim_server_options o = {12, 0, NULL};
    assert_int_equal(MCDC_EINVAL, mcdc_sim_session_open(&s, f->t.path, &li, &o));
}

static void test_source_session__login_set_statements_are_accepted_without_results(void **state)
{
    fx *f = *state;
    /* what tedious sends after LOGINACK: no semicolons, lower case */
    assert_string_equal("done\n",
        B(f->s, "set textsize 2147483647 set quoted_identifier on set arithabort off set numeric_roundabort off "
                "set ansi_warnings on set ansi_padding on set ansi_nulls on set concat_null_yields_null on "
                "set cursor_close_on_commit off set implicit_transactions off set dateformat mdy set datefirst 7 "
                "set transaction isolation level read committed"));
    assert_string_equal("env 2 us_english us_english\ninfo 5703/1/0 Changed language setting to us_english.\ndone\n",
                        B(f->s, "SET LANGUAGE us_english"));
    assert_string_equal("done\n", B(f->s, "SET LOCK_TIMEOUT 5000; SET XACT_ABORT, ANSI_NULLS ON;"));
    assert_string_equal("error 195/10/15 'FOO' is not a recognized SET option.\ndone error\n", B(f->s, "SET FOO ON"));
}

static void test_source_session__select_batch_streams_typed_rows_and_counts(void **state)
{
    fx *f = *state;
    assert_string_equal(
        "cols order_id:int not null, customer:nvarchar(40), amount:decimal(12,2)\n"
        "row 1 | Ann | 10.50\nrow 2 | Bob | <NULL>\nrow 3 | Cy | 7.00\n"
        "done more count=3\n"
        "cols order_id:int not null\nrow 3\n"
        "done count=1\n",
        B(f->s, "SELECT order_id, customer, amount FROM dbo.orders ORDER BY order_id; "
                "SELECT order_id FROM dbo.orders WHERE customer = N'Cy'"));
    assert_string_equal("cols order_id:int not null\nrow 1\ndone\n", B(f->s, "SET NOCOUNT ON SELECT order_id FROM dbo.orders WHERE order_id = 1"));
}

static void test_source_session__errors_carry_sql_servers_numbers(void **state)
{
    fx *f = *state;
    B(f->s, "SET NOCOUNT OFF");
    assert_string_equal("error 208/1/16 Invalid object name 'dbo.nothere'.\ndone error\n",
                        B(f->s, "SELECT * FROM dbo.nothere"));
    assert_string_equal("error 2812/62/16 Could not find stored procedure 'sp_nothing'.\ndone error\n",
                        B(f->s, "sp_nothing 1"));
    assert_string_equal("error 2812/62/16 Could not find stored procedure 'dbo.sp_nothing'.\ndone error\n",
                        B(f->s, "EXEC dbo.sp_nothing @a = 1"));
    assert_string_equal("error 105/1/15 Unclosed quotation mark after the character string 'abc'.\ndone error\n",
                        B(f->s, "SELECT 'abc"));
}

static void test_source_session__sp_executesql_binds_declared_parameters(void **state)
{
    fx *f = *state;
    mcdc_sim_param ps[] = {PS(NULL, "SELECT customer FROM dbo.orders WHERE order_id = @id"), PS(NULL, "@id int"),
                           PI("@id", 2, false)};
    assert_string_equal("cols customer:nvarchar(40)\nrow Bob\ndoneinproc more count=1\nstatus 0\ndoneproc\n",
                        R(f->s, NULL, 10, ps, 3));
    mcdc_sim_param missing[] = {ps[0], ps[1]};
    assert_string_equal("error 8178/1/16 The parameterized query '(@id int)' expects the parameter '@id', which was not supplied.\n"
                        "status 0\ndoneproc error\n", R(f->s, "sp_executesql", 0, missing, 2));
}

static void test_source_session__prepared_handles_live_per_session(void **state)
{
    fx *f = *state;
    mcdc_sim_param prep[] = {PI("@handle", 0, true), PS(NULL, "@P1 int"),
                             PS(NULL, "SELECT customer FROM dbo.orders WHERE order_id = @P1"), PI(NULL, 1, false)};
    assert_string_equal("status 0\nretval 0 @handle int=1\ndoneproc\n", R(f->s, NULL, 11, prep, 3));
    mcdc_sim_param ex[] = {PI(NULL, 1, false), PI(NULL, 3, false)};
    assert_string_equal("cols customer:nvarchar(40)\nrow Cy\ndoneinproc more count=1\nstatus 0\ndoneproc\n",
                        R(f->s, NULL, 12, ex, 2));
    assert_string_equal("cols customer:nvarchar(40)\nrow Ann\ndoneinproc more count=1\nstatus 0\nretval 0 @handle int=2\ndoneproc\n",
                        R(f->s, "sp_prepexec", 0, prep, 4));
    mcdc_sim_param un[] = {PI(NULL, 1, false)};
    assert_string_equal("status 0\ndoneproc\n", R(f->s, NULL, 15, un, 1));
    assert_string_equal("error 8179/2/16 Could not find prepared statement with handle 1.\nstatus 0\ndoneproc error\n",
                        R(f->s, NULL, 12, ex, 2));
}

static void test_source_session__transactions_send_envchange(void **state)
{
    fx *f = *state;
    rec r = {MCDC_BUF_INIT(1 << 20), 0, 0, {{0}}};
    mcdc_sim_session_sink k = rec_sink(&r);
    assert_int_equal(0, mcdc_sim_session_tm(f->s, 5, &k));
    assert_int_equal(0, mcdc_sim_session_tm(f->s, 7, &k));
    assert_int_equal(0, mcdc_sim_session_tm(f->s, 8, &k));
    char *got = mcdc_buf_detach(&r.out);
    assert_string_equal("env 8 1 -\ndone\nenv 9 - 1\ndone\n"
                        "error 3903/1/16 The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.\ndone error\n", got);
    free(got);
    assert_true(mcdc_sim_session_spid(f->s) >= 51);
}

static void test_source_session__cancel_between_rows_ends_with_attention(void **state)
{
    fx *f = *state;
    rec r = {MCDC_BUF_INIT(1 << 20), 1, 0, {{0}}};
    mcdc_sim_session_sink k = rec_sink(&r);
    assert_int_equal(0, mcdc_sim_session_batch(f->s, "SELECT order_id FROM dbo.orders; SELECT 1", &k));
    char *got = mcdc_buf_detach(&r.out);
    assert_non_null(strstr(got, "done attn\n"));
    assert_null(strstr(got, "count="));
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_source_session__login_check_matches_the_salted_hash_only, setup, teardown),
        cmocka_unit_test(test_source_session__no_logins_refuses_every_login),
        cmocka_unit_test_setup_teardown(test_source_session__password_file_first_line_without_its_newline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_session__wrong_database_and_product_version_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_session__login_set_statements_are_accepted_without_results, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_session__select_batch_streams_typed_rows_and_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_session__errors_carry_sql_servers_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_session__sp_executesql_binds_declared_parameters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_session__prepared_handles_live_per_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_session__transactions_send_envchange, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_session__cancel_between_rows_ends_with_attention, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
