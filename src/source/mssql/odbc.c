/*
 * source/mssql/odbc.c: one ODBC connection to SQL Server, its failures and their retries.
 *
 * Failures are read from the diagnostic records and put in classes (mssql_err_kind):
 *   transient  SQLSTATE 08xxx (connection), HYT00/HYT01 (timeouts), 40001 (serialization),
 *              errors 1205 (deadlock victim) and 1222 (lock timeout), and FreeTDS's own
 *              connection errors (20002-20009, 20017 "unexpected EOF", which it reports with
 *              SQLSTATE 01000 when the server drops a connection mid-result): retried by mssql__retry
 *              on a new connection, 3 times, after about 1-2, 2-4 and 4-8 s, a warning each;
 *   login      18456 (SQLSTATE 28000): "login failed for user 'u'", never retried;
 *   permission 229, 230, 262, 297, 300: named with the GRANT that fixes it, never retried;
 *   other      anything else: MCDC_ESOURCE with the server's first message.
 * A message never shows the password: the connection string only ever appears masked, and
 * the driver's messages do not repeat it. With CAFile (FreeTDS), the host and CA file are
 * written to a private freetds.conf section (mode 0600) named by Servername=, since FreeTDS
 * reads a CA file only from there; FREETDSCONF points at that file for the process.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/tds.h"
#include "mcdc/time.h"
#include "source/mssql/mssql_int.h"

/* ---- diagnostics --------------------------------------------------------------------------- */

static mssql_err_kind classify(const char *state, SQLINTEGER native)
{
    if (native == 18456 || !strcmp(state, "28000"))
        return MSSQL_ERR_LOGIN;
    if (native == 229 || native == 230 || native == 262 || native == 297 || native == 300)
        return MSSQL_ERR_PERMISSION;
    if (!strncmp(state, "08", 2) || !strcmp(state, "HYT00") || !strcmp(state, "HYT01") || !strcmp(state, "40001") ||
        native == 1205 || native == 1222 ||
        /* FreeTDS's own: connection failed, timeout, read or write failed, cannot connect, EOF */
        native == 20002 || native == 20003 || native == 20004 || native == 20006 || native == 20009 || native == 20017)
        return MSSQL_ERR_TRANSIENT;
    if (native == 208 || native == 22981)
        return MSSQL_ERR_NO_OBJECT;
    return MSSQL_ERR_OTHER;
}

/* "[FreeTDS][SQL Server]text" -> "text" */
static const char *strip_prefixes(const char *m)
{
    while (*m == '[') {
        const char *e = strchr(m, ']');
        if (!e) break;
        m = e + 1;
    }
    return m;
}

/* The object and schema of "... denied on the object 'x', database 'd', schema 's'." */
static void denied_object(const char *text, char *out, size_t cap)
{
    const char *o = strstr(text, "object '"), *sc = strstr(text, "schema '");
    out[0] = '\0';
    if (!o) return;
    o += 8;
    const char *oe = strchr(o, '\'');
    if (!oe) return;
    if (sc) {
        sc += 8;
        const char *se = strchr(sc, '\'');
        if (se) {
            snprintf(out, cap, "%.*s.[%.*s]", (int)(se - sc), sc, (int)(oe - o), o);
            return;
        }
    }
    snprintf(out, cap, "[%.*s]", (int)(oe - o), o);
}

int mssql__fail(mssql_source *s, SQLSMALLINT handle_type, SQLHANDLE h, const char *what)
{
    SQLCHAR state[6] = "", first_state[6] = "", text[1024];
    SQLINTEGER native = 0, first_native = 0;
    SQLSMALLINT len;
    char first[1024] = "";
    mssql_err_kind kind = MSSQL_ERR_NONE;
    /* the most telling record wins: login and permission over transient over the rest */
    for (SQLSMALLINT i = 1; i < 20; i++) {
        if (!SQL_SUCCEEDED(SQLGetDiagRec(handle_type, h, i, state, &native, text, sizeof text, &len)))
            break;
        mssql_err_kind k = classify((const char *)state, native);
        bool better = kind == MSSQL_ERR_NONE || (k == MSSQL_ERR_LOGIN || k == MSSQL_ERR_PERMISSION) ||
                      (k == MSSQL_ERR_TRANSIENT && kind == MSSQL_ERR_OTHER);
        if (better && !(kind == MSSQL_ERR_LOGIN || kind == MSSQL_ERR_PERMISSION)) {
            kind = k;
            snprintf(first, sizeof first, "%s", strip_prefixes((const char *)text));
            memcpy(first_state, state, sizeof state);
            first_native = native;
        }
    }
    if (kind == MSSQL_ERR_NONE) {
        kind = MSSQL_ERR_OTHER;
        snprintf(first, sizeof first, "the driver gave no reason");
    }
    /* a connection the server closed may be reported as a bare HY000 "Unknown error":
     * the driver's own verdict on the connection decides */
    if (kind == MSSQL_ERR_OTHER && s->dbc != SQL_NULL_HDBC) {
        SQLUINTEGER dead = SQL_CD_FALSE;
        if (SQL_SUCCEEDED(SQLGetConnectAttr(s->dbc, SQL_ATTR_CONNECTION_DEAD, &dead, 0, NULL)) && dead == SQL_CD_TRUE) {
            kind = MSSQL_ERR_TRANSIENT;
            size_t n = strlen(first);
            snprintf(first + n, sizeof first - n, " (the connection is gone)");
        }
    }
    s->last_kind = kind;
    const char *server = s->cfg.server[0] ? s->cfg.server : "the server";
    switch (kind) {
    case MSSQL_ERR_LOGIN:
        mcdc_error_set(MCDC_ESOURCE, "%s: login failed for user '%s' (error %d)", server, s->cfg.user, (int)first_native);
        return mcdc_error_hint("check UID= and PWD= in the connection string, that the login exists and may connect "
                               "to the database%s%s (the server's error log says which)",
                               s->cfg.database[0] ? " " : "", s->cfg.database);
    case MSSQL_ERR_PERMISSION: {
        char obj[300];
        denied_object(first, obj, sizeof obj);
        mcdc_error_set(MCDC_ESOURCE, "%s: %s: %s", server, what, first);
        if (obj[0])
            return mcdc_error_hint("a DBA grants it: GRANT SELECT ON %s TO [%s]; (docs/guides/sqlserver.md, least privilege)",
                                   obj, s->cfg.user);
        return mcdc_error_hint("see docs/reference/sqlserver-queries.md for the permission each statement needs");
    }
    case MSSQL_ERR_TRANSIENT:
        mcdc_error_set(MCDC_ESOURCE, "%s: %s: %s (SQLSTATE %s, error %d)", server, what, first, (const char *)first_state,
                       (int)first_native);
        if (s->cfg.ca_file && !strncmp(what, "connecting", 10))
            return mcdc_error_hint("check that the server is up and reachable (Server=, Port=, connectTimeout=), and that "
                                   "its certificate is signed by the CA in CAFile=%s and names the host %s",
                                   s->cfg.ca_file, s->cfg.host ? s->cfg.host : server);
        return mcdc_error_hint("check that the server is up and reachable (Server=, Port=, connectTimeout=, queryTimeout=)");
    default:
        return mcdc_error_set(MCDC_ESOURCE, "%s: %s: %s (SQLSTATE %s, error %d)", server, what, first,
                              (const char *)first_state, (int)first_native);
    }
}

/* ---- connections --------------------------------------------------------------------------- */

static pthread_mutex_t conf_lock = PTHREAD_MUTEX_INITIALIZER;
static char conf_file[256];
static int conf_sections;

/* Add a section for this source to the process's private freetds.conf; its name goes into
 * @p section. FREETDSCONF names the file from the first one on. */
static int write_conf_section(mssql_source *s, char *section, size_t cap)
{
    int rc = 0;
    pthread_mutex_lock(&conf_lock);
    if (!conf_file[0]) {
        const char *tmp = getenv("TMPDIR");
        char dir[200];
        snprintf(dir, sizeof dir, "%s/mssql-cdc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dir)) {
            rc = mcdc_error_set(MCDC_EIO, "cannot create a private directory for freetds.conf: %s", strerror(errno));
            goto out;
        }
        snprintf(conf_file, sizeof conf_file, "%s/freetds.conf", dir);
    }
    snprintf(section, cap, "mssql_cdc_%d", ++conf_sections);
    FILE *f = fopen(conf_file, "a");
    if (!f) {
        rc = mcdc_error_set(MCDC_EIO, "%s: %s", conf_file, strerror(errno));
        goto out;
    }
    fchmod(fileno(f), 0600);
    fprintf(f, "[%s]\n\thost = %s\n\tca file = %s\n", section, s->cfg.host, s->cfg.ca_file);
    if (fclose(f) != 0) {
        rc = mcdc_error_set(MCDC_EIO, "%s: %s", conf_file, strerror(errno));
        goto out;
    }
    setenv("FREETDSCONF", conf_file, 1);
    snprintf(s->conf_path, sizeof s->conf_path, "%s", conf_file);
out:
    pthread_mutex_unlock(&conf_lock);
    return rc;
}

static int server_info(mssql_source *s);

int mssql__connect(mssql_source *s)
{
    if (s->dbc != SQL_NULL_HDBC)
        return 0;
    s->last_kind = MSSQL_ERR_NONE;
    if (!s->env) {
        if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &s->env)))
            return mcdc_error_set(MCDC_ESOURCE, "unixODBC: cannot allocate an environment");
        SQLSetEnvAttr(s->env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    }
    if (s->cfg.record_dump) {
        /* the dump is private to this user while it exists (mssql__record turns it into the transcript) */
        int fd = open(s->cfg.record_dump, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0)
            return mcdc_error_set(MCDC_EIO, "record=%s: cannot write %s: %s", s->cfg.record_dir, s->cfg.record_dump,
                                  strerror(errno));
        close(fd);
    }
    SQLHDBC dbc;
    if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_DBC, s->env, &dbc)))
        return mcdc_error_set(MCDC_ESOURCE, "unixODBC: cannot allocate a connection");
    SQLSetConnectAttr(dbc, SQL_ATTR_LOGIN_TIMEOUT, (SQLPOINTER)(intptr_t)s->cfg.connect_timeout_s, 0);
    SQLSetConnectAttr(dbc, SQL_ATTR_CONNECTION_TIMEOUT, (SQLPOINTER)(intptr_t)s->cfg.connect_timeout_s, 0);
    mcdc_buf cs = MCDC_BUF_INIT(1 << 17);
    int rc = 0;
    if (s->cfg.ca_file) {
        char section[64];
        if ((rc = write_conf_section(s, section, sizeof section)) < 0) {
            SQLFreeHandle(SQL_HANDLE_DBC, dbc);
            return rc;
        }
        /* Driver= first, then Servername= (which must come before the rest) */
        const char *semi = strchr(s->cfg.odbc, ';');
        size_t dl = semi ? (size_t)(semi - s->cfg.odbc) : strlen(s->cfg.odbc);
        mcdc_buf_put(&cs, s->cfg.odbc, dl);
        mcdc_buf_printf(&cs, ";Servername=%s", section);
        if (semi) mcdc_buf_puts(&cs, semi);
    } else {
        mcdc_buf_puts(&cs, s->cfg.odbc);
    }
    if (!cs.ptr) {
        SQLFreeHandle(SQL_HANDLE_DBC, dbc);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    SQLRETURN r = SQLDriverConnect(dbc, NULL, (SQLCHAR *)cs.ptr, SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    explicit_bzero(cs.ptr, cs.len);
    mcdc_buf_dispose(&cs);
    if (!SQL_SUCCEEDED(r)) {
        char what[160];
        snprintf(what, sizeof what, "connecting with %s", s->cfg.is_freetds ? "FreeTDS" : s->cfg.driver);
        rc = mssql__fail(s, SQL_HANDLE_DBC, dbc, what);
        SQLFreeHandle(SQL_HANDLE_DBC, dbc);
        return rc;
    }
    s->dbc = dbc;
    if ((rc = server_info(s)) < 0) {
        mssql_err_kind k = s->last_kind;
        mssql__disconnect(s);
        s->last_kind = k;
    }
    return rc;
}

void mssql__disconnect(mssql_source *s)
{
    if (s->dbc == SQL_NULL_HDBC) return;
    SQLDisconnect(s->dbc);
    SQLFreeHandle(SQL_HANDLE_DBC, s->dbc);
    s->dbc = SQL_NULL_HDBC;
    mssql__record(s);
}

int mssql__record(mssql_source *s)
{
    if (!s->cfg.record_dump) return 0;
    char out[4096];
    snprintf(out, sizeof out, "%s/transcript.jsonl", s->cfg.record_dir);
    int rc = mcdc_tds_transcript_convert(s->cfg.record_dump, &s->record_off, out);
    if (rc < 0) mcdc_log(MCDC_LOG_WARN, MSSQL_LOGGER, "record=%s: %s", s->cfg.record_dir, mcdc_error_last()->message);
    return rc;
}

int mssql__stmt(mssql_source *s, SQLHSTMT *out)
{
    *out = SQL_NULL_HSTMT;
    int rc = mssql__connect(s);
    if (rc < 0) return rc;
    if (!SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, s->dbc, out)))
        return mssql__fail(s, SQL_HANDLE_DBC, s->dbc, "allocating a statement");
    if (s->cfg.query_timeout_s > 0)
        SQLSetStmtAttr(*out, SQL_ATTR_QUERY_TIMEOUT, (SQLPOINTER)(intptr_t)s->cfg.query_timeout_s, 0);
    return 0;
}

void mssql__stmt_free(SQLHSTMT st)
{
    if (st != SQL_NULL_HSTMT) {
        SQLFreeStmt(st, SQL_CLOSE);
        SQLFreeHandle(SQL_HANDLE_STMT, st);
    }
}

void mssql__stmt_end(SQLHSTMT st, int rc)
{
    if (rc == 0 && st != SQL_NULL_HSTMT) {
        SQLRETURN r;
        do
            r = SQLMoreResults(st);
        while (SQL_SUCCEEDED(r));
    }
    mssql__stmt_free(st);
}

/* ---- retries ------------------------------------------------------------------------------- */

static void sleep_ms(int64_t ms)
{
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

int mssql__retry(mssql_source *s, const char *what, int (*fn)(mssql_source *s, void *payload), void *payload)
{
    static unsigned seed;
    if (!seed) seed = (unsigned)(mcdc_time_now_us() ^ (int64_t)getpid());
    for (int attempt = 0;; attempt++) {
        s->last_kind = MSSQL_ERR_NONE;
        int rc = mssql__connect(s);
        if (rc == 0) rc = fn(s, payload);
        if (rc == 0 || s->last_kind != MSSQL_ERR_TRANSIENT)
            return rc;
        mssql__disconnect(s);
        if (attempt >= s->max_retries) {
            mcdc_error saved = *mcdc_error_last();
            mcdc_error_set(MCDC_ESOURCE, "%s: gave up after %d retries: %s", what, s->max_retries, saved.message);
            return mcdc_error_hint("%s", saved.hint[0] ? saved.hint : "the server may be down; the next run retries the batch");
        }
        /* about base*2^attempt .. 2*base*2^attempt */
        int64_t lo = s->backoff_base_ms << attempt;
        int64_t wait = lo + (int64_t)(rand_r(&seed) % (unsigned)(lo + 1));
        mcdc_log(MCDC_LOG_WARN, MSSQL_LOGGER, "%s: %s; retrying on a new connection in %.1f s (retry %d of %d)", what,
                 mcdc_error_last()->message, (double)wait / 1000.0, attempt + 1, s->max_retries);
        mcdc_error_clear();
        sleep_ms(wait);
    }
}

/* ---- parameters and execution ------------------------------------------------------------- */

static int bind(mssql_source *s, SQLHSTMT st, int idx, SQLSMALLINT c_type, SQLSMALLINT sql_type, SQLULEN size,
                SQLSMALLINT digits, void *value, SQLLEN buflen, SQLLEN *ind)
{
    if (!SQL_SUCCEEDED(SQLBindParameter(st, (SQLUSMALLINT)idx, SQL_PARAM_INPUT, c_type, sql_type, size, digits, value,
                                        buflen, ind)))
        return mssql__fail(s, SQL_HANDLE_STMT, st, "binding a parameter");
    return 0;
}

int mssql__bind_lsn(mssql_source *s, SQLHSTMT st, int idx, const mcdc_lsn *lsn, SQLLEN *ind)
{
    *ind = 10;
    return bind(s, st, idx, SQL_C_BINARY, SQL_BINARY, 10, 0, (void *)lsn->b, 10, ind);
}

int mssql__bind_text(mssql_source *s, SQLHSTMT st, int idx, const char *text, SQLLEN *ind)
{
    size_t n = strlen(text);
    *ind = (SQLLEN)n;
    return bind(s, st, idx, SQL_C_CHAR, SQL_WVARCHAR, n ? n : 1, 0, (void *)text, (SQLLEN)n + 1, ind);
}

int mssql__bind_int64(mssql_source *s, SQLHSTMT st, int idx, const int64_t *v, SQLLEN *ind)
{
    *ind = 0;
    return bind(s, st, idx, SQL_C_SBIGINT, SQL_BIGINT, 19, 0, (void *)v, 0, ind);
}

int mssql__bind_timestamp(mssql_source *s, SQLHSTMT st, int idx, const SQL_TIMESTAMP_STRUCT *v, SQLLEN *ind)
{
    *ind = sizeof *v;
    return bind(s, st, idx, SQL_C_TYPE_TIMESTAMP, SQL_TYPE_TIMESTAMP, 23, 3, (void *)v, sizeof *v, ind);
}

int mssql__exec(mssql_source *s, SQLHSTMT st, const char *sql, const char *what)
{
    SQLRETURN r = SQLExecDirect(st, (SQLCHAR *)sql, SQL_NTS);
    if (r == SQL_NO_DATA || SQL_SUCCEEDED(r)) return 0;
    return mssql__fail(s, SQL_HANDLE_STMT, st, what);
}

int mssql__exec_simple(mssql_source *s, mcdc_mssql_query q, const mcdc_mssql_fill *fill)
{
    mcdc_buf sql = MCDC_BUF_INIT(1 << 16);
    int rc = mcdc_mssql_statement_render(&sql, q, fill);
    SQLHSTMT st = SQL_NULL_HSTMT;
    if (rc == 0) rc = mssql__stmt(s, &st);
    if (rc == 0) rc = mssql__exec(s, st, sql.ptr, mcdc_mssql_statement_get(q)->name);
    while (rc == 0 && SQL_SUCCEEDED(SQLMoreResults(st))) {
    }
    mssql__stmt_free(st);
    mcdc_buf_dispose(&sql);
    return rc;
}

/* ---- column reads ------------------------------------------------------------------------- */

static int get(mssql_source *s, SQLHSTMT st, int col, SQLSMALLINT c_type, void *buf, SQLLEN cap, SQLLEN *ind)
{
    SQLRETURN r = SQLGetData(st, (SQLUSMALLINT)col, c_type, buf, cap, ind);
    if (!SQL_SUCCEEDED(r)) return mssql__fail(s, SQL_HANDLE_STMT, st, "reading a result column");
    return 0;
}

int mssql__get_lsn(mssql_source *s, SQLHSTMT st, int col, mcdc_lsn *out, bool *is_null)
{
    uint8_t b[16];
    SQLLEN ind;
    int rc = get(s, st, col, SQL_C_BINARY, b, sizeof b, &ind);
    if (rc < 0) return rc;
    memset(out->b, 0, sizeof out->b);
    *is_null = ind == SQL_NULL_DATA;
    if (*is_null) return 0;
    if (ind > 10 || ind < 0)
        return mcdc_error_set(MCDC_ESOURCE, "an LSN column holds %ld bytes, not 10", (long)ind);
    /* binary(10) comes whole; a shorter value (0x00) reads as zero-padded on the left */
    memcpy(out->b + (10 - ind), b, (size_t)ind);
    return 0;
}

int mssql__get_int64(mssql_source *s, SQLHSTMT st, int col, int64_t *out, bool *is_null)
{
    SQLBIGINT v = 0;
    SQLLEN ind;
    int rc = get(s, st, col, SQL_C_SBIGINT, &v, 0, &ind);
    if (rc < 0) return rc;
    *is_null = ind == SQL_NULL_DATA;
    *out = *is_null ? 0 : (int64_t)v;
    return 0;
}

int mssql__get_text(mssql_source *s, SQLHSTMT st, int col, char *out, size_t cap, bool *is_null)
{
    SQLLEN ind;
    out[0] = '\0';
    int rc = get(s, st, col, SQL_C_CHAR, out, (SQLLEN)cap, &ind);
    if (rc < 0) return rc;
    *is_null = ind == SQL_NULL_DATA;
    if (*is_null) out[0] = '\0';
    return 0;
}

int mssql__get_text_alloc(mssql_source *s, SQLHSTMT st, int col, char **out)
{
    mcdc_buf b = MCDC_BUF_INIT((size_t)1 << 28);
    char chunk[8192];
    *out = NULL;
    for (;;) {
        SQLLEN ind;
        SQLRETURN r = SQLGetData(st, (SQLUSMALLINT)col, SQL_C_CHAR, chunk, sizeof chunk, &ind);
        if (r == SQL_NO_DATA) break;
        if (!SQL_SUCCEEDED(r)) {
            mcdc_buf_dispose(&b);
            return mssql__fail(s, SQL_HANDLE_STMT, st, "reading a text column");
        }
        if (ind == SQL_NULL_DATA) break;
        size_t got = (ind == SQL_NO_TOTAL || ind >= (SQLLEN)sizeof chunk) ? sizeof chunk - 1 : (size_t)ind;
        if (mcdc_buf_put(&b, chunk, got) < 0) {
            mcdc_buf_dispose(&b);
            return MCDC_ENOMEM;
        }
        if (r == SQL_SUCCESS) break;
    }
    *out = mcdc_buf_detach(&b);
    return *out ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
}

int64_t mssql__ts_to_us(const SQL_TIMESTAMP_STRUCT *t)
{
    int64_t days = mcdc_days_from_civil(t->year, t->month, t->day);
    return ((days * 24 + t->hour) * 60 + t->minute) * INT64_C(60000000) + (int64_t)t->second * 1000000 +
           (int64_t)(t->fraction / 1000);
}

void mssql__us_to_ts(SQL_TIMESTAMP_STRUCT *out, int64_t us)
{
    int64_t days = us / INT64_C(86400000000), rem = us % INT64_C(86400000000);
    if (rem < 0) {
        rem += INT64_C(86400000000);
        days--;
    }
    int64_t y;
    unsigned m, d;
    mcdc_civil_from_days(days, &y, &m, &d);
    out->year = (SQLSMALLINT)y;
    out->month = (SQLUSMALLINT)m;
    out->day = (SQLUSMALLINT)d;
    int64_t secs = rem / 1000000;
    out->hour = (SQLUSMALLINT)(secs / 3600);
    out->minute = (SQLUSMALLINT)(secs / 60 % 60);
    out->second = (SQLUSMALLINT)(secs % 60);
    out->fraction = (SQLUINTEGER)(rem % 1000000) * 1000;
}

int mssql__get_local_us(mssql_source *s, SQLHSTMT st, int col, int64_t *out, bool *is_null)
{
    SQL_TIMESTAMP_STRUCT t;
    SQLLEN ind;
    int rc = get(s, st, col, SQL_C_TYPE_TIMESTAMP, &t, sizeof t, &ind);
    if (rc < 0) return rc;
    *is_null = ind == SQL_NULL_DATA;
    *out = *is_null ? 0 : mssql__ts_to_us(&t);
    return 0;
}

int mssql__col_index(SQLHSTMT st, const char *name)
{
    SQLSMALLINT n = 0;
    if (!SQL_SUCCEEDED(SQLNumResultCols(st, &n))) return 0;
    for (SQLSMALLINT i = 1; i <= n; i++) {
        SQLCHAR cn[256];
        SQLSMALLINT len, type, digits, nullable;
        SQLULEN size;
        if (SQL_SUCCEEDED(SQLDescribeCol(st, (SQLUSMALLINT)i, cn, sizeof cn, &len, &type, &size, &digits, &nullable)) &&
            !strcasecmp((const char *)cn, name))
            return i;
    }
    return 0;
}

/* ---- what the server is -------------------------------------------------------------------- */

static int server_info(mssql_source *s)
{
    mcdc_buf sql = MCDC_BUF_INIT(1 << 12);
    SQLHSTMT st = SQL_NULL_HSTMT;
    int rc = mcdc_mssql_statement_render(&sql, MCDC_MSSQL_Q_SERVER_INFO, NULL);
    if (rc == 0 && !SQL_SUCCEEDED(SQLAllocHandle(SQL_HANDLE_STMT, s->dbc, &st)))
        rc = mssql__fail(s, SQL_HANDLE_DBC, s->dbc, "allocating a statement");
    if (rc == 0 && s->cfg.query_timeout_s > 0)
        SQLSetStmtAttr(st, SQL_ATTR_QUERY_TIMEOUT, (SQLPOINTER)(intptr_t)s->cfg.query_timeout_s, 0);
    if (rc == 0) rc = mssql__exec(s, st, sql.ptr, "reading the server's version");
    if (rc == 0) {
        SQLRETURN r = SQLFetch(st);
        if (!SQL_SUCCEEDED(r))
            rc = r == SQL_NO_DATA ? mcdc_error_set(MCDC_ESOURCE, "server_info returned no row")
                                  : mssql__fail(s, SQL_HANDLE_STMT, st, "reading the server's version");
    }
    bool null;
    int64_t v;
    if (rc == 0) rc = mssql__get_text(s, st, 1, s->version, sizeof s->version, &null);
    if (rc == 0 && (rc = mssql__get_int64(s, st, 2, &v, &null)) == 0) s->major = null ? 0 : (int)v;
    if (rc == 0 && (rc = mssql__get_int64(s, st, 3, &v, &null)) == 0) s->engine_edition = null ? 0 : (int)v;
    if (rc == 0) rc = mssql__get_text(s, st, 4, s->edition, sizeof s->edition, &null);
    if (rc == 0) rc = mssql__get_text(s, st, 5, s->database, sizeof s->database, &null);
    if (rc == 0) rc = mssql__get_text(s, st, 6, s->login, sizeof s->login, &null);
    mssql__stmt_end(st, rc);
    mcdc_buf_dispose(&sql);
    if (rc == 0 && s->major == 0 && s->version[0]) s->major = atoi(s->version);
    return rc;
}
