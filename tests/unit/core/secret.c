/* Unit tests for core/secret.c: password masking in ODBC connection strings and URLs,
 * including braces, "}}" escapes, quotes, braced keys, URL userinfo, odd spacing and case,
 * and strings that are not connection strings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/secret.h"

static void check(const char *in, const char *want)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    assert_int_equal(0, mcdc_secret_mask(&b, in));
    if (strcmp(b.ptr ? b.ptr : "", want) != 0)
        fail_msg("mask(%s)\n  got  %s\n  want %s", in, b.ptr ? b.ptr : "", want);
    mcdc_buf_dispose(&b);
    char small[512];
    assert_string_equal(want, mcdc_secret_mask_str(small, sizeof small, in));
}

static void test_core_secret__masks_pwd_and_password_any_case(void **state)
{
    (void)state;
    check("Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433;UID=sa;PWD=S3cret!;Encrypt=yes",
          "Driver={ODBC Driver 18 for SQL Server};Server=tcp:db,1433;UID=sa;PWD=***;Encrypt=yes");
    check("uid=sa;pwd=abc", "uid=sa;pwd=***");
    check("uid=sa;Pwd=abc;", "uid=sa;Pwd=***;");
    check("Password=hunter2;Server=x", "Password=***;Server=x");
    check("PASSWORD=hunter2", "PASSWORD=***");
    check("passWord=", "passWord=***");
    check("odbc:PWD=x;Server=y", "odbc:PWD=***;Server=y");
    check("odbc:Server=y;Pwd=x", "odbc:Server=y;Pwd=***");
    check(" Pwd = spaced ; UID=a", " Pwd =***; UID=a");
}

static void test_core_secret__braced_values_with_escapes(void **state)
{
    (void)state;
    check("PWD={a;b=c}}d};UID=sa", "PWD=***;UID=sa");
    check("UID=sa;PWD={}}}}}}};Server=s", "UID=sa;PWD=***;Server=s");
    check("UID=sa;PWD={}}}}}};Server=s", "UID=sa;PWD=***"); /* six: all escapes, unterminated */
    check("PWD= {x;y} ;Server=s", "PWD=***;Server=s");
    check("PWD={}", "PWD=***");
    /* Unterminated: everything after is treated as the password. */
    check("UID=sa;PWD={abc;Server=s;Encrypt=yes", "UID=sa;PWD=***");
    /* A braced value of another key holding "PWD=" is masked from there. */
    check("Driver={x;PWD=y};Pwd=z", "Driver={x;PWD=***;Pwd=***");
    check("App={a}}b};Pwd={p}", "App={a}}b};Pwd=***");
}

static void test_core_secret__leaves_other_text_alone(void **state)
{
    (void)state;
    check("", "");
    check("sim:/tmp/db.sqlite", "sim:/tmp/db.sqlite");
    check("@/etc/mssql-cdc/source", "@/etc/mssql-cdc/source");
    check(";;;", ";;;");
    check("Server=x;;UID=y", "Server=x;;UID=y");
    check("PWDX=1;Passwords=3", "PWDX=1;Passwords=3");
    check("Description=PWD is set;Server=s", "Description=PWD is set;Server=s");
    check("Trusted_Connection=yes", "Trusted_Connection=yes");
    check("===", "===");
    check("PWD==x", "PWD=***");
    check("novalue;PWD=x", "novalue;PWD=***");
}

static void test_core_secret__sloppy_spellings_err_on_masking(void **state)
{
    (void)state;
    check("UID=saPWD=secret;Server=s", "UID=saPWD=***;Server=s");
    check("UserPwd=secret", "UserPwd=***");
    check("odbc: PWD =secret", "odbc: PWD =***");
    check("x Password=secret", "x Password=***");
    check("Server=s;Options=a password = b;UID=u", "Server=s;Options=a password =***;UID=u");
}

static void test_core_secret__url_userinfo_is_masked(void **state)
{
    (void)state;
    check("sqlserver://sa:secret@host", "sqlserver://sa:***@host");
    check("mssql+pyodbc://user:pw@dsn", "mssql+pyodbc://user:***@dsn");
    check("mssql://sa:s3cret@db.example:1433/sales?encrypt=true",
          "mssql://sa:***@db.example:1433/sales?encrypt=true");
    /* a raw '@', '/' or '#' in the password: the last '@' ends the userinfo */
    check("sqlserver://sa:p@ss@host", "sqlserver://sa:***@host");
    check("sqlserver://sa:pa/ss#1@host/db", "sqlserver://sa:***@host/db");
    /* a user part alone may be a token */
    check("https://ghp_TOKEN@example.com/x", "https://***@example.com/x");
    /* inside a connection string, after a scheme prefix, twice */
    check("odbc:Server=sqlserver://sa:pw@h;PWD=x", "odbc:Server=sqlserver://sa:***@h;PWD=***");
    check("a://u:1@h b://v:2@k", "a://u:***@h b://v:***@k");
    /* a password in the query is an attribute like any other */
    check("mssql://host/db?user=sa&password=secret", "mssql://host/db?user=sa&password=***");
    /* URLs without userinfo are left alone */
    check("sqlserver://host:1433/db", "sqlserver://host:1433/db");
    check("jdbc:sqlserver://host;databaseName=x;password=p", "jdbc:sqlserver://host;databaseName=x;password=***");
    check("://", "://");
    check("x://@h", "x://***@h");
}

static void test_core_secret__braced_quoted_and_odd_keys(void **state)
{
    (void)state;
    /* the spelling of the issue: a braced value holding ';' and an escaped '}' */
    check("PWD={a;b}}c}", "PWD=***");
    check("Server=h;PWD={a;b}}c};UID=x", "Server=h;PWD=***;UID=x");
    check("Server=h;PWD = {a;b}}c} ;UID=x", "Server=h;PWD =***;UID=x");
    /* a braced key */
    check("Server=h;{PWD}={a;b}}c};UID=x", "Server=h;{PWD}=***;UID=x");
    /* quoted values (ADO.NET style), with doubled quotes */
    check("Server=h;PWD=\"a;b\";UID=x", "Server=h;PWD=***;UID=x");
    check("Server=h;Password='a;b''c';UID=x", "Server=h;Password=***;UID=x");
    check("Server=h;PWD=\"a;b", "Server=h;PWD=***");
    check("App=\"x;y\";PWD=z", "App=\"x;y\";PWD=***");
    /* other names of a secret */
    check("Passwd=x;Pass=y;UID=u", "Passwd=***;Pass=***;UID=u");
    check("AccessToken=eyJ;Server=s", "AccessToken=***;Server=s");
    check("AccountKey=abc==;Client Secret=s", "AccountKey=***;Client Secret=***");
}

static void test_core_secret__no_secret_survives_random_inputs(void **state)
{
    (void)state;
    /* Build strings from hostile pieces; the secret token must never appear masked out. */
    static const char *pieces[] = {"PWD=", "pwd = ", "Password=", "{", "}", "}}", ";", "=", " ", "UID=sa", "x",
                                   "\"", "'", "://", "@", ":", "/"};
    srand(42);
    for (int round = 0; round < 20000; round++) {
        char in[256] = "";
        int n = 1 + rand() % 8;
        for (int i = 0; i < n; i++)
            strcat(in, pieces[rand() % 17]);
        strcat(in, round % 3 == 2 ? "sqlserver://sa:TOPSECRET@host" : "Pwd=TOPSECRET");
        if (rand() % 2)
            strcat(in, ";Server=s");
        char out[512];
        mcdc_secret_mask_str(out, sizeof out, in);
        /* The secret always follows "Pwd=" or a URL's "user:", so whichever attribute
         * swallows it (a password, an unterminated brace, another key's value) masks it. */
        if (strstr(out, "TOPSECRET"))
            fail_msg("leaked: %s -> %s", in, out);
    }
}

static void test_core_secret__small_output_is_cut(void **state)
{
    (void)state;
    char out[8];
    assert_string_equal("UID=sa;", mcdc_secret_mask_str(out, sizeof out, "UID=sa;PWD=secret"));
    char one[1];
    assert_string_equal("", mcdc_secret_mask_str(one, 1, "PWD=x"));
    mcdc_buf tiny = MCDC_BUF_INIT(4);
    assert_int_equal(0, mcdc_buf_puts(&tiny, "ab"));
    assert_int_equal(MCDC_ENOMEM, mcdc_secret_mask(&tiny, "PWD=secret"));
    assert_string_equal("ab", tiny.ptr);
    mcdc_buf_dispose(&tiny);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_secret__masks_pwd_and_password_any_case),
        cmocka_unit_test(test_core_secret__braced_values_with_escapes),
        cmocka_unit_test(test_core_secret__leaves_other_text_alone),
        cmocka_unit_test(test_core_secret__sloppy_spellings_err_on_masking),
        cmocka_unit_test(test_core_secret__url_userinfo_is_masked),
        cmocka_unit_test(test_core_secret__braced_quoted_and_odd_keys),
        cmocka_unit_test(test_core_secret__no_secret_survives_random_inputs),
        cmocka_unit_test(test_core_secret__small_output_is_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
