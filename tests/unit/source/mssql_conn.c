/* Unit tests for odbc: connection strings (source/mssql/conn.c): braced values and escaped
 * braces, FreeTDS's defaults, Microsoft's Encrypt= translated, unknown keywords refused,
 * encryption without a CA file refused, mssql-cdc's own settings, and no password in any
 * message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "source/mssql/conn.h"

#define TDS "/usr/lib/x86_64-linux-gnu/odbc/libtdsodbc.so"

static void parse_ok(mcdc_mssql_conn *c, const char *text)
{
    if (mcdc_mssql_conn_parse(c, text, TDS) != 0)
        fail_msg("parse '%s': %s", text, mcdc_error_last()->message);
}

/* A refusal with @p code whose message holds @p needle and never the word "hunter2". */
static void parse_fails(const char *text, int code, const char *needle)
{
    mcdc_mssql_conn c;
    int rc = mcdc_mssql_conn_parse(&c, text, TDS);
    const mcdc_error *e = mcdc_error_last();
    if (rc != code) fail_msg("parse '%s': rc %d (want %d): %s", text, rc, code, e->message);
    if (!strstr(e->message, needle)) fail_msg("message '%s' lacks '%s'", e->message, needle);
    if (strstr(e->message, "hunter2") || strstr(e->hint, "hunter2")) fail_msg("password shown: %s", e->message);
    assert_null(c.odbc);
}

static void test_source_mssql_conn__freetds_defaults(void **state)
{
    (void)state;
    mcdc_mssql_conn c;
    parse_ok(&c, "Server=db.example.com;Database=shop;UID=reader;PWD=hunter2");
    assert_string_equal("Driver=" TDS ";Server=db.example.com;Database=shop;UID=reader;PWD=hunter2;TDS_Version=7.4;"
                        "ClientCharset=UTF-8", c.odbc);
    assert_true(c.is_freetds);
    assert_string_equal("reader", c.user);
    assert_string_equal("shop", c.database);
    assert_string_equal("db.example.com", c.server);
    assert_string_equal("Server=db.example.com;Database=shop;UID=reader;PWD=***", c.masked);
    assert_int_equal(30, c.connect_timeout_s);
    assert_int_equal(300, c.query_timeout_s);
    assert_int_equal(-1, c.lock_timeout_ms);
    assert_int_equal(MCDC_MSSQL_ISO_READ_COMMITTED, c.isolation);
    assert_string_equal("auto", c.time_zone);
    mcdc_mssql_conn_free(&c);
    /* given values stand; keywords ignore case */
    parse_ok(&c, "server=h;port=1444;tds_version=7.3;clientcharset=UTF-8;uid=u;pwd=p");
    assert_string_equal("Driver=" TDS ";Server=h;port=1444;tds_version=7.3;clientcharset=UTF-8;uid=u;pwd=p", c.odbc);
    mcdc_mssql_conn_free(&c);
}

static void test_source_mssql_conn__braced_values_and_escaped_braces(void **state)
{
    (void)state;
    mcdc_mssql_conn c;
    /* Microsoft's rule on input: "}}" inside braces is one '}' */
    parse_ok(&c, "Server=h;UID=u;PWD={a;b}}c=d}");
    /* FreeTDS reads a braced value raw up to "};" or a final '}', so '}' is not doubled */
    assert_string_equal("Driver=" TDS ";Server=h;UID=u;PWD={a;b}c=d};TDS_Version=7.4;ClientCharset=UTF-8", c.odbc);
    assert_string_equal("Server=h;UID=u;PWD=***", c.masked);
    mcdc_mssql_conn_free(&c);
    parse_ok(&c, "Server=h;UID=u;PWD={ends}}}");
    assert_string_equal("Driver=" TDS ";Server=h;UID=u;PWD={ends}};TDS_Version=7.4;ClientCharset=UTF-8", c.odbc);
    mcdc_mssql_conn_free(&c);
    /* Microsoft's driver gets "}}" back */
    parse_ok(&c, "Driver={ODBC Driver 18 for SQL Server};Server=tcp:h,1433;UID=u;PWD={a;b}}c}");
    assert_false(c.is_freetds);
    assert_string_equal("Driver={ODBC Driver 18 for SQL Server};Server=tcp:h,1433;UID=u;PWD={a;b}}c}", c.odbc);
    mcdc_mssql_conn_free(&c);
    /* a value FreeTDS cannot read, a brace left open, text after the brace */
    parse_fails("Server=h;UID=u;PWD={x}};y}", MCDC_EINVAL, "FreeTDS's driver cannot read");
    parse_fails("Server=h;UID=u;PWD={hunter2", MCDC_EINVAL, "no closing '}'");
    parse_fails("Server=h;UID=u;PWD={hunter2}x;Database=d", MCDC_EINVAL, "text after the closing '}'");
    parse_fails("Server=h;hunter2", MCDC_EINVAL, "has no '='");
}

static void test_source_mssql_conn__server_port_for_freetds(void **state)
{
    (void)state;
    mcdc_mssql_conn c;
    parse_ok(&c, "Server=tcp:db,1444;UID=u;PWD=p");
    assert_string_equal("Driver=" TDS ";Server=db;Port=1444;UID=u;PWD=p;TDS_Version=7.4;ClientCharset=UTF-8", c.odbc);
    mcdc_mssql_conn_free(&c);
    parse_fails("Server=db,1444;Port=1433;UID=u", MCDC_EINVAL, "both give the port");
}

static void test_source_mssql_conn__unknown_keywords_refused(void **state)
{
    (void)state;
    parse_fails("Server=h;Encryp=yes;Colour=blue;PWD=hunter2", MCDC_EINVAL, "unknown keywords for FreeTDS's driver: Encryp, Colour");
    parse_fails("Server=h;UID=u;uid=v", MCDC_EINVAL, "UID and uid name the same setting");
    parse_fails("Server=h;Address=x", MCDC_EINVAL, "unknown keyword for FreeTDS's driver: Address");
    parse_fails("DSN=prod;PWD=hunter2", MCDC_EINVAL, "DSN= is not supported");
    /* FreeTDS's keywords are unknown to Microsoft's driver, and CAFile has a hint */
    parse_fails("Driver={ODBC Driver 18 for SQL Server};Server=h;TDS_Version=7.4;PWD=hunter2", MCDC_EINVAL,
                "unknown keyword for Microsoft's driver: TDS_Version");
    mcdc_mssql_conn c;
    assert_int_equal(MCDC_EINVAL, mcdc_mssql_conn_parse(&c, "Driver={ODBC Driver 18 for SQL Server};Server=h;CAFile=/x", TDS));
    assert_non_null(strstr(mcdc_error_last()->hint, "trust store"));
}

static void test_source_mssql_conn__encrypt_translated_for_freetds(void **state)
{
    (void)state;
    mcdc_mssql_conn c;
    parse_ok(&c, "Server=h;Encrypt=no;UID=u");
    assert_string_equal("Driver=" TDS ";Server=h;Encryption=off;UID=u;TDS_Version=7.4;ClientCharset=UTF-8", c.odbc);
    mcdc_mssql_conn_free(&c);
    parse_ok(&c, "Server=h;Encrypt=optional");
    assert_non_null(strstr(c.odbc, ";Encryption=off;"));
    mcdc_mssql_conn_free(&c);
    parse_ok(&c, "Server=h;Encrypt=mandatory;TrustServerCertificate=yes");
    assert_string_equal("Driver=" TDS ";Server=h;Encryption=require;TDS_Version=7.4;ClientCharset=UTF-8", c.odbc);
    mcdc_mssql_conn_free(&c);
    parse_ok(&c, "Server=h;Encryption=request");
    assert_non_null(strstr(c.odbc, ";Encryption=request;"));
    mcdc_mssql_conn_free(&c);
    parse_fails("Server=h;Encrypt=yes;Encryption=require", MCDC_EINVAL, "name the same setting");
    parse_fails("Server=h;Encrypt=strict", MCDC_EINVAL, "TDS 8.0");
    parse_fails("Server=h;Encrypt=maybe", MCDC_EINVAL, "expected yes, no, mandatory or optional");
    parse_fails("Server=h;Encryption=sometimes", MCDC_EINVAL, "expected off, request or require");
    parse_fails("Server=h;TDS_Version=8.0", MCDC_EINVAL, "no TDS 8.0");
    parse_fails("Server=h;ClientCharset=ISO-8859-1", MCDC_EINVAL, "reads text as UTF-8");
}

static void test_source_mssql_conn__encryption_needs_a_ca_file(void **state)
{
    (void)state;
    parse_fails("Server=h;UID=u;PWD=hunter2;Encrypt=yes", MCDC_EINVAL, "would not check the server's certificate");
    parse_fails("Server=h;Encryption=require", MCDC_EINVAL, "would not check");
    parse_fails("Server=h;Encrypt=yes;TrustServerCertificate=perhaps", MCDC_EINVAL, "is not yes or no");
    parse_fails("Server=h;Encrypt=yes;CAFile=/nonexistent/ca.pem", MCDC_EINVAL, "cannot be read");
    char ca[] = "/tmp/mcdc-ca-XXXXXX";
    int fd = mkstemp(ca);
    assert_true(fd >= 0);
    close(fd);
    char text[256];
    snprintf(text, sizeof text, "Server=tcp:db.example.com,1444;Encrypt=yes;CAFile=%s;UID=u;PWD=p", ca);
    mcdc_mssql_conn c;
    parse_ok(&c, text);
    /* the host and CA file go into a private freetds.conf section at connect time */
    assert_string_equal("Driver=" TDS ";Port=1444;Encryption=require;UID=u;PWD=p;TDS_Version=7.4;ClientCharset=UTF-8", c.odbc);
    assert_string_equal("db.example.com", c.host);
    assert_string_equal(ca, c.ca_file);
    mcdc_mssql_conn_free(&c);
    /* CAFile alone turns encryption on */
    snprintf(text, sizeof text, "Server=h;CAFile=%s", ca);
    parse_ok(&c, text);
    assert_string_equal("Driver=" TDS ";TDS_Version=7.4;ClientCharset=UTF-8;Encryption=require", c.odbc);
    mcdc_mssql_conn_free(&c);
    unlink(ca);
    /* Microsoft's driver checks against the system store: Encrypt=yes alone is fine */
    parse_ok(&c, "Driver={ODBC Driver 18 for SQL Server};Server=h;Encrypt=yes");
    mcdc_mssql_conn_free(&c);
}

static void test_source_mssql_conn__own_settings_taken_out(void **state)
{
    (void)state;
    mcdc_mssql_conn c;
    parse_ok(&c, "Server=h;connectTimeout=5;QUERYTIMEOUT=0;lockTimeoutMs=250;isolationLevel=snapshot;pageRows=7;"
                 "sourceTimeZone=Europe/Paris;UID=u");
    assert_string_equal("Driver=" TDS ";Server=h;UID=u;TDS_Version=7.4;ClientCharset=UTF-8", c.odbc);
    assert_int_equal(5, c.connect_timeout_s);
    assert_int_equal(0, c.query_timeout_s);
    assert_int_equal(250, c.lock_timeout_ms);
    assert_int_equal(MCDC_MSSQL_ISO_SNAPSHOT, c.isolation);
    assert_int_equal(7, c.page_rows);
    assert_string_equal("Europe/Paris", c.time_zone);
    mcdc_mssql_conn_free(&c);
    parse_fails("Server=h;connectTimeout=-1", MCDC_EINVAL, "connectTimeout=-1 is not a whole number");
    parse_fails("Server=h;queryTimeout=5s", MCDC_EINVAL, "queryTimeout=5s");
    parse_fails("Server=h;pageRows=0", MCDC_EINVAL, "pageRows=0 is not a whole number");
    parse_fails("Server=h;isolationLevel=nolock", MCDC_EINVAL, "expected readCommitted or snapshot");
}

static void test_source_mssql_conn__driver_lookup(void **state)
{
    (void)state;
    char path[512];
    setenv("MSSQL_CDC_FREETDS_DRIVER", "/nonexistent/libtdsodbc.so", 1);
    assert_int_equal(MCDC_ENOTFOUND, mcdc_mssql_conn_find_freetds(path, sizeof path));
    assert_non_null(strstr(mcdc_error_last()->message, "/nonexistent/libtdsodbc.so"));
    mcdc_mssql_conn c;
    assert_int_equal(MCDC_ENOTFOUND, mcdc_mssql_conn_parse(&c, "Server=h", NULL));
    unsetenv("MSSQL_CDC_FREETDS_DRIVER");
    /* the test machine has tdsodbc installed (scripts/install-deps) */
    assert_int_equal(0, mcdc_mssql_conn_find_freetds(path, sizeof path));
    assert_non_null(strstr(path, "libtdsodbc.so"));
    assert_int_equal(0, mcdc_mssql_conn_parse(&c, "Server=h", NULL));
    assert_true(c.is_freetds);
    assert_string_equal(path, c.driver);
    mcdc_mssql_conn_free(&c);
    /* a driver named by its odbcinst.ini name */
    parse_ok(&c, "Driver=FreeTDS;Server=h");
    assert_true(c.is_freetds);
    assert_string_equal("Driver=FreeTDS;Server=h;TDS_Version=7.4;ClientCharset=UTF-8", c.odbc);
    mcdc_mssql_conn_free(&c);
    parse_fails("", MCDC_EINVAL, "has no connection string");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_mssql_conn__freetds_defaults),
        cmocka_unit_test(test_source_mssql_conn__braced_values_and_escaped_braces),
        cmocka_unit_test(test_source_mssql_conn__server_port_for_freetds),
        cmocka_unit_test(test_source_mssql_conn__unknown_keywords_refused),
        cmocka_unit_test(test_source_mssql_conn__encrypt_translated_for_freetds),
        cmocka_unit_test(test_source_mssql_conn__encryption_needs_a_ca_file),
        cmocka_unit_test(test_source_mssql_conn__own_settings_taken_out),
        cmocka_unit_test(test_source_mssql_conn__driver_lookup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
