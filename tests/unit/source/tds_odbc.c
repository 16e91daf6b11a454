/* The TDS server through a real client stack: unixODBC with FreeTDS's driver (TDS 7.4,
 * DSN-less) against `sim serve` running in this process on a free port. Batches with several
 * result sets, prepared statements with parameters (sp_prepare/sp_execute/sp_executesql as
 * the driver sends them), cancel, every simulator type read back with its exact value, a
 * wrong password (18456, SQLSTATE 28000), and the faults as the client sees them. */
#include <pthread.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <sql.h>
#include <sqlext.h>

#include "mcdc/error.h"
#include "mcdc/sim.h"
#include "mcdc/tds.h"

/* FreeTDS's ODBC driver: $MSSQL_CDC_FREETDS_DRIVER when set (as for the SQL Server source) */
static const char *driver(void)
{
    const char *d = getenv("MSSQL_CDC_FREETDS_DRIVER");
    return d && *d ? d : "/usr/lib/x86_64-linux-gnu/odbc/libtdsodbc.so";
}
#define DRIVER driver()

typedef struct srv {
    char                   dir[64], path[128];
    pthread_t              th;
    volatile sig_atomic_t  stop;
    int                    port;
    pthread_mutex_t        mu;
    pthread_cond_t         cv;
    mcdc_tds_server_options o;
    const char            *faults[4];
    int                    rc;
} srv;

static void on_ready(const char *host, int port, void *payload)
{
    (void)host;
    srv *s = payload;
    pthread_mutex_lock(&s->mu);
    s->port = port;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *serve_main(void *p)
{
    srv *s = p;
    s->rc = mcdc_tds_serve(&s->o);
    if (s->rc) {
        fprintf(stderr, "serve: %s\n", mcdc_error_last()->message);
        on_ready("", -1, s);
    }
    return NULL;
}

static const char *ALL_COLUMNS =
    "id INT NOT NULL, b BIT NULL, ti TINYINT NULL, si SMALLINT NULL, bi BIGINT NULL, r REAL NULL, f FLOAT NULL, "
    "d DECIMAL(38,10) NULL, n NUMERIC(5,2) NULL, m MONEY NULL, sm SMALLMONEY NULL, dt DATE NULL, tm TIME(7) NULL, "
    "dtm DATETIME NULL, sdt SMALLDATETIME NULL, dt2 DATETIME2(7) NULL, dto DATETIMEOFFSET(3) NULL, c CHAR(5) NULL, "
    "vc VARCHAR(20) NULL, nc NCHAR(3) NULL, nvc NVARCHAR(20) NULL, vcm VARCHAR(MAX) NULL, nvcm NVARCHAR(MAX) NULL, "
    "tx TEXT NULL, ntx NTEXT NULL, bn BINARY(4) NULL, vb VARBINARY(10) NULL, vbm VARBINARY(MAX) NULL, "
    "g UNIQUEIDENTIFIER NULL, x XML NULL, img IMAGE NULL, rv ROWVERSION NOT NULL";

static char *big_text(char c, size_t n)
{
    char *s = malloc(n + 1);
    memset(s, c, n);
    s[n] = 0;
    return s;
}

static void start(srv *s, const char *fault)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "/tmp/mcdc-tds-odbc-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->path, sizeof s->path, "%s/shop.db", s->dir);
    mcdc_sim *sim;
    assert_int_equal(mcdc_sim_init(&sim, s->path, NULL, "dbo.t", ALL_COLUMNS, "id", NULL, MCDC_SIM_NOW), 0);
    char *vcm = big_text('x', 9000), *sql = malloc(20000);
    snprintf(sql, 20000,
             "INSERT INTO dbo.t VALUES (1, 1, 255, -32768, 9223372036854775807, 2.5, -0.25, "
             "1234567890123456789012345678.0123456789, -123.45, 922337203685477.5807, -214748.3648, '0001-01-01', "
             "'23:59:59.9999999', '2025-01-01 10:00:00.003', '2025-01-01 10:01:00', '9999-12-31 23:59:59.9999999', "
             "'2025-01-01 10:00:00.123 +02:00', 'ab', N'\xE2\x82\xAC and \xE2\x84\xA2 \xC4\x81', N'\xC3\xBC', "
             "N'Zo\xC3\xAB \xF0\x9F\x98\x80', '%s', N'\xC3\xA9\xC3\xA9', 'hello', N'w\xC3\xB6rld', 0x01020304, "
             "0xDEADBEEF, 0x00FF, '6F9619FF-8B86-D011-B42D-00C04FC964FF', '<a>1</a>', 0x00CAFE00, NULL), (2%s)",
             vcm, ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
                  "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL");
    { mcdc_sim_exec_result er; assert_int_equal(mcdc_sim_exec(sim, sql, MCDC_SIM_NOW, MCDC_SIM_NOW, &er), 0); }
    /* 3000 more rows for cancel and the drop fault */
    for (int k = 0; k < 3; k++) {
        size_t off = (size_t)snprintf(sql, 20000, "INSERT INTO dbo.t (id, vc) VALUES ");
        for (int i = 0; i < 1000; i++)
            off += (size_t)snprintf(sql + off, 20000 - off, "%s(%d, 'r%d')", i ? "," : "", 100 + k * 1000 + i, i);
        { mcdc_sim_exec_result er; assert_int_equal(mcdc_sim_exec(sim, sql, MCDC_SIM_NOW, MCDC_SIM_NOW, &er), 0); }
    }
    assert_int_equal(mcdc_sim_login_add(sim, "u", "p;w-d", false), 0);
    mcdc_sim_close(sim);
    free(vcm);
    free(sql);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->o = (mcdc_tds_server_options)MCDC_TDS_SERVER_OPTIONS_INIT;
    s->o.db_path = s->path;
    s->o.listen = "127.0.0.1:0";
    s->o.ready = on_ready;
    s->o.ready_payload = s;
    s->o.stop = &s->stop;
    if (fault) {
        s->faults[0] = fault;
        s->o.faults = s->faults;
        s->o.n_faults = 1;
    }
    assert_int_equal(pthread_create(&s->th, NULL, serve_main, s), 0);
    pthread_mutex_lock(&s->mu);
    while (s->port == 0) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    assert_true(s->port > 0);
}

static void stop(srv *s)
{
    s->stop = 1;
    pthread_join(s->th, NULL);
    assert_int_equal(s->rc, 0);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", s->dir);
    assert_int_equal(system(cmd), 0);
}

typedef struct cli {
    SQLHENV env;
    SQLHDBC dbc;
    SQLHSTMT st;
} cli;

static void diag(SQLSMALLINT type, SQLHANDLE h, char state[6], SQLINTEGER *native, char *text, size_t cap)
{
    SQLSMALLINT n = 0;
    state[0] = 0;
    *native = 0;
    text[0] = 0;
    SQLGetDiagRec(type, h, 1, (SQLCHAR *)state, native, (SQLCHAR *)text, (SQLSMALLINT)cap, &n);
}

static SQLRETURN try_connect(cli *c, const srv *s, const char *pwd)
{
    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &c->env);
    SQLSetEnvAttr(c->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    SQLAllocHandle(SQL_HANDLE_DBC, c->env, &c->dbc);
    char cs[512];
    snprintf(cs, sizeof cs,
             "Driver=%s;Server=127.0.0.1;Port=%d;TDS_Version=7.4;ClientCharset=UTF-8;Encryption=off;UID=u;PWD={%s};"
             "Database=shop", DRIVER, s->port, pwd);
    SQLRETURN rc = SQLDriverConnect(c->dbc, NULL, (SQLCHAR *)cs, SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    if (SQL_SUCCEEDED(rc)) SQLAllocHandle(SQL_HANDLE_STMT, c->dbc, &c->st);
    return rc;
}

static void connect_ok(cli *c, const srv *s)
{
    SQLRETURN rc = try_connect(c, s, "p;w-d");
    if (!SQL_SUCCEEDED(rc)) {
        char st[6], text[512];
        SQLINTEGER nat;
        diag(SQL_HANDLE_DBC, c->dbc, st, &nat, text, sizeof text);
        fprintf(stderr, "connect: %s %d %s\n", st, (int)nat, text);
        fail();
    }
}

static void disconnect(cli *c)
{
    if (c->st) SQLFreeHandle(SQL_HANDLE_STMT, c->st);
    SQLDisconnect(c->dbc);
    SQLFreeHandle(SQL_HANDLE_DBC, c->dbc);
    SQLFreeHandle(SQL_HANDLE_ENV, c->env);
    memset(c, 0, sizeof *c);
}

static void ok(cli *c, SQLRETURN rc, const char *what)
{
    if (SQL_SUCCEEDED(rc) || rc == SQL_NO_DATA) return;
    char st[6], text[512];
    SQLINTEGER nat;
    diag(SQL_HANDLE_STMT, c->st, st, &nat, text, sizeof text);
    fprintf(stderr, "%s: %s %d %s\n", what, st, (int)nat, text);
    fail();
}

/* Column @p i of the current row as text; NULL as "NULL". Long values are read in pieces. */
static char *col_text(cli *c, int i)
{
    size_t cap = 256, len = 0;
    char *out = malloc(cap);
    for (;;) {
        SQLLEN ind = 0;
        SQLRETURN rc = SQLGetData(c->st, (SQLUSMALLINT)i, SQL_C_CHAR, out + len, (SQLLEN)(cap - len), &ind);
        if (rc == SQL_NO_DATA) break;
        ok(c, rc, "SQLGetData");
        if (ind == SQL_NULL_DATA) {
            strcpy(out, "NULL");
            return out;
        }
        if (rc == SQL_SUCCESS_WITH_INFO) { /* truncated: more to read */
            len = cap - 1;
            cap *= 2;
            out = realloc(out, cap);
            continue;
        }
        len += strlen(out + len);
        break;
    }
    out[len] = 0;
    return out;
}

static void test_source_tds_odbc__every_type_reads_back_exactly(void **state)
{
    (void)state;
    srv s;
    start(&s, NULL);
    cli c = {0};
    connect_ok(&c, &s);
    ok(&c, SQLExecDirect(c.st, (SQLCHAR *)"SELECT * FROM dbo.t WHERE id <= 2", SQL_NTS), "select");
    char *vcm = big_text('x', 9000);
    /* rv: the database's rowversion counter stamps rows 1 and 2 with 0x7D1 and 0x7D2 */
    const char *want[32] = {
        "1", "1", "255", "-32768", "9223372036854775807", "2.5", "-0.25", "1234567890123456789012345678.0123456789",
        "-123.45", "922337203685477.5807", "-214748.3648", "0001-01-01", "23:59:59.9999999", "2025-01-01 10:00:00.003",
        "2025-01-01 10:01:00", "9999-12-31 23:59:59.9999999", "2025-01-01 10:00:00.123 +02:00", "ab   ",
        "\xE2\x82\xAC and \xE2\x84\xA2 ?", "\xC3\xBC  ", "Zo\xC3\xAB \xF0\x9F\x98\x80", vcm, "\xC3\xA9\xC3\xA9",
        "hello", "w\xC3\xB6rld", "01020304", "DEADBEEF", "00FF", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "<a>1</a>",
        "00CAFE00", "00000000000007D1",
    };
    SQLSMALLINT ncols;
    SQLNumResultCols(c.st, &ncols);
    assert_int_equal(ncols, 32);
    ok(&c, SQLFetch(c.st), "fetch 1");
    for (int i = 0; i < 32; i++) {
        if (i == 11) { /* date 0001-01-01: as a struct (FreeTDS's text drops the year's zeros) */
            SQL_DATE_STRUCT d;
            SQLLEN ind;
            ok(&c, SQLGetData(c.st, 12, SQL_C_TYPE_DATE, &d, sizeof d, &ind), "date");
            assert_int_equal(d.year, 1);
            assert_int_equal(d.month, 1);
            assert_int_equal(d.day, 1);
            continue;
        }
        char *got = col_text(&c, i + 1);
        if (strcasecmp(got, want[i])) {
            fprintf(stderr, "column %d: got '%.80s' want '%.80s'\n", i + 1, got, want[i]);
            fail();
        }
        free(got);
    }
    ok(&c, SQLFetch(c.st), "fetch 2");
    for (int i = 1; i < 31; i++) {
        char *got = col_text(&c, i + 1);
        assert_string_equal(got, "NULL");
        free(got);
    }
    {
        char *got = col_text(&c, 32);
        assert_int_equal(strcasecmp(got, "00000000000007D2"), 0);
        free(got);
    }
    assert_int_equal(SQLFetch(c.st), SQL_NO_DATA);
    /* the column types as the driver reports them */
    SQLCloseCursor(c.st);
    ok(&c, SQLExecDirect(c.st, (SQLCHAR *)"SELECT d, n, m, dt2, nvc, vcm, g, img, rv FROM dbo.t WHERE id = 1", SQL_NTS), "select types");
    static const struct { SQLSMALLINT type; SQLULEN size; SQLSMALLINT digits; bool nulls; const char *name; } types[9] = {
        {SQL_DECIMAL, 38, 10, true, NULL}, {SQL_NUMERIC, 5, 2, true, NULL}, {SQL_DECIMAL, 19, 4, true, NULL},
        {SQL_TYPE_TIMESTAMP, 27, 7, true, NULL}, {SQL_WVARCHAR, 20, 0, true, NULL}, {SQL_VARCHAR, 0, 0, true, NULL},
        {SQL_GUID, 36, 0, true, NULL}, {SQL_LONGVARBINARY, 0, 0, true, "image"}, {SQL_BINARY, 8, 0, false, "timestamp"}};
    for (int i = 0; i < 9; i++) {
        SQLCHAR name[64];
        SQLSMALLINT nl, type, digits, nullable;
        SQLULEN size;
        ok(&c, SQLDescribeCol(c.st, (SQLUSMALLINT)(i + 1), name, sizeof name, &nl, &type, &size, &digits, &nullable), "describe");
        if (types[i].type == SQL_DECIMAL && type == SQL_NUMERIC) type = SQL_DECIMAL; /* FreeTDS says numeric for both */
        if (type != types[i].type) fprintf(stderr, "column %d: type %d, want %d\n", i + 1, type, types[i].type);
        assert_int_equal(type, types[i].type);
        if (types[i].size && size != types[i].size) fprintf(stderr, "column %d: size %d, want %d\n", i + 1, (int)size, (int)types[i].size);
        if (types[i].size) assert_int_equal(size, types[i].size);
        assert_int_equal(digits, types[i].digits);
        assert_int_equal(nullable, types[i].nulls ? SQL_NULLABLE : SQL_NO_NULLS);
        if (types[i].name) { /* a timestamp column is told by its UserType, 80 */
            char tn[64];
            SQLSMALLINT tl;
            ok(&c, SQLColAttribute(c.st, (SQLUSMALLINT)(i + 1), SQL_DESC_TYPE_NAME, tn, sizeof tn, &tl, NULL), "type name");
            assert_string_equal(tn, types[i].name);
        }
    }
    free(vcm);
    /* the version LOGINACK gives is SERVERPROPERTY's */
    SQLCloseCursor(c.st);
    char ver[64];
    SQLSMALLINT vl;
    ok(&c, SQLGetInfo(c.dbc, SQL_DBMS_VER, ver, sizeof ver, &vl), "SQLGetInfo");
    ok(&c, SQLExecDirect(c.st, (SQLCHAR *)"SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(32))", SQL_NTS), "version");
    ok(&c, SQLFetch(c.st), "fetch version");
    char *pv = col_text(&c, 1);
    int a1, b1, c1, a2, b2, c2;
    assert_int_equal(sscanf(ver, "%d.%d.%d", &a1, &b1, &c1), 3);
    assert_int_equal(sscanf(pv, "%d.%d.%d", &a2, &b2, &c2), 3);
    assert_int_equal(a1, a2);
    assert_int_equal(b1, b2);
    assert_int_equal(c1, c2);
    free(pv);
    disconnect(&c);
    stop(&s);
}

static void test_source_tds_odbc__batches_prepared_statements_and_cancel(void **state)
{
    (void)state;
    srv s;
    start(&s, NULL);
    cli c = {0};
    connect_ok(&c, &s);
    /* one batch, two result sets */
    ok(&c, SQLExecDirect(c.st, (SQLCHAR *)"SELECT id FROM dbo.t WHERE id = 1; SELECT vc FROM dbo.t WHERE id = 100", SQL_NTS),
       "batch");
    ok(&c, SQLFetch(c.st), "fetch");
    char *v = col_text(&c, 1);
    assert_string_equal(v, "1");
    free(v);
    assert_int_equal(SQLFetch(c.st), SQL_NO_DATA);
    ok(&c, SQLMoreResults(c.st), "more results");
    ok(&c, SQLFetch(c.st), "fetch 2");
    v = col_text(&c, 1);
    assert_string_equal(v, "r0");
    free(v);
    assert_int_equal(SQLFetch(c.st), SQL_NO_DATA);
    assert_int_equal(SQLMoreResults(c.st), SQL_NO_DATA);

    /* a prepared statement with parameters, executed twice */
    ok(&c, SQLPrepare(c.st, (SQLCHAR *)"SELECT vc FROM dbo.t WHERE id = ? AND vc = ?", SQL_NTS), "prepare");
    SQLINTEGER id = 101;
    char vc[16] = "r1";
    SQLLEN id_ind = 0, vc_ind = SQL_NTS;
    ok(&c, SQLBindParameter(c.st, 1, SQL_PARAM_INPUT, SQL_C_SLONG, SQL_INTEGER, 0, 0, &id, 0, &id_ind), "bind 1");
    ok(&c, SQLBindParameter(c.st, 2, SQL_PARAM_INPUT, SQL_C_CHAR, SQL_VARCHAR, 20, 0, vc, sizeof vc, &vc_ind), "bind 2");
    for (int k = 0; k < 2; k++) {
        ok(&c, SQLExecute(c.st), "execute");
        ok(&c, SQLFetch(c.st), "fetch prepared");
        v = col_text(&c, 1);
        assert_string_equal(v, vc);
        free(v);
        assert_int_equal(SQLFetch(c.st), SQL_NO_DATA);
        SQLCloseCursor(c.st);
        id = 102;
        strcpy(vc, "r2");
    }
    SQLFreeStmt(c.st, SQL_RESET_PARAMS);

    /* cancel a long result after one row; the connection goes on */
    ok(&c, SQLExecDirect(c.st, (SQLCHAR *)"SELECT id, vc FROM dbo.t ORDER BY id", SQL_NTS), "big select");
    ok(&c, SQLFetch(c.st), "first row");
    ok(&c, SQLCancel(c.st), "cancel");
    SQLFreeStmt(c.st, SQL_CLOSE);
    ok(&c, SQLExecDirect(c.st, (SQLCHAR *)"SELECT COUNT_BIG(*) FROM dbo.t", SQL_NTS), "after cancel");
    ok(&c, SQLFetch(c.st), "count");
    v = col_text(&c, 1);
    assert_string_equal(v, "3002");
    free(v);
    disconnect(&c);
    stop(&s);
}

static void test_source_tds_odbc__wrong_password_is_18456(void **state)
{
    (void)state;
    srv s;
    start(&s, NULL);
    cli c = {0};
    SQLRETURN rc = try_connect(&c, &s, "not-it");
    assert_false(SQL_SUCCEEDED(rc));
    char st[6], text[512];
    SQLINTEGER nat;
    diag(SQL_HANDLE_DBC, c.dbc, st, &nat, text, sizeof text);
    assert_int_equal(nat, 18456);
    assert_true(!strcmp(st, "28000") || !strcmp(st, "42000")); /* FreeTDS says 42000, Microsoft's driver 28000 */
    assert_non_null(strstr(text, "Login failed for user 'u'."));
    SQLFreeHandle(SQL_HANDLE_DBC, c.dbc);
    SQLFreeHandle(SQL_HANDLE_ENV, c.env);
    stop(&s);
}

static void expect_fault(const char *fault, const char *sql, const char *sqlstate, SQLINTEGER native)
{
    srv s;
    start(&s, fault);
    cli c = {0};
    connect_ok(&c, &s);
    SQLRETURN rc = SQLExecDirect(c.st, (SQLCHAR *)sql, SQL_NTS);
    while (SQL_SUCCEEDED(rc)) rc = SQLFetch(c.st);
    if (sqlstate && !strcmp(sqlstate, "08S01")) { /* the next statement finds the connection dead */
        SQLFreeStmt(c.st, SQL_CLOSE);
        rc = SQLExecDirect(c.st, (SQLCHAR *)"SELECT 1", SQL_NTS);
        assert_false(SQL_SUCCEEDED(rc));
    }
    char st[6] = "", text[512] = "";
    SQLINTEGER nat = 0;
    /* FreeTDS gives server errors SQLSTATE 42000, the number tells them apart; a broken
     * connection comes as 01000 "Unexpected EOF" then 08S01 */
    bool found = false;
    for (SQLSMALLINT k = 1; k < 8 && !found; k++) {
        SQLSMALLINT tl;
        if (!SQL_SUCCEEDED(SQLGetDiagRec(SQL_HANDLE_STMT, c.st, k, (SQLCHAR *)st, &nat, (SQLCHAR *)text, sizeof text, &tl))) break;
        found = (!sqlstate || !strcmp(st, sqlstate)) && (!native || nat == native);
    }
    if (!found) {
        fprintf(stderr, "%s: got %s %d %s\n", fault, st, (int)nat, text);
        fail();
    }
    disconnect(&c);
    stop(&s);
}

static void test_source_tds_odbc__faults_reach_the_client(void **state)
{
    (void)state;
    expect_fault("error:1205@1", "SELECT id FROM dbo.t", NULL, 1205);
    expect_fault("error:1222@1", "SELECT id FROM dbo.t", NULL, 1222);
    expect_fault("drop-after-rows:10", "SELECT id, vc FROM dbo.t", "08S01", 0);
}

int main(void)
{
    if (access(DRIVER, R_OK) != 0) {
        fprintf(stderr, "FreeTDS's ODBC driver %s is missing: run scripts/install-deps\n", DRIVER);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_tds_odbc__every_type_reads_back_exactly),
        cmocka_unit_test(test_source_tds_odbc__batches_prepared_statements_and_cancel),
        cmocka_unit_test(test_source_tds_odbc__wrong_password_is_18456),
        cmocka_unit_test(test_source_tds_odbc__faults_reach_the_client),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
