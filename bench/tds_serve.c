/*
 * bench/tds_serve.c: how fast `sim serve` hands out change rows over TDS, against reading the
 * same rows in process, and whose CPU the TDS path spends.
 *
 *   bench_tds_serve DB CI
 *
 * DB is a simulator database (bench/tds_serve.sh makes one with 1 million change rows of an
 * 8-column table), CI its capture instance. Phases:
 *   in-process  the simulator source's read_changes over everything, rows counted and dropped
 *   odbc        a server (mcdc_tds_serve) in a child process on a free port; this process
 *               reads `SELECT * FROM cdc.<CI>_CT` through unixODBC and FreeTDS's driver, every
 *               column bound as text, rows counted and dropped
 * Prints rows/s for both and CPU per row of the server (the child's rusage) and of the
 * client (this process's); the server must stay below the client, so it is never the
 * bottleneck of the SQL Server source's benchmark.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sql.h>
#include <sqlext.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mcdc/error.h"
#include "mcdc/sim.h"
#include "mcdc/source.h"
#include "mcdc/tds.h"
#include "mcdc/time.h"

/* FreeTDS's ODBC driver: $MSSQL_CDC_FREETDS_DRIVER when set (as for the SQL Server source) */
static const char *driver(void)
{
    const char *d = getenv("MSSQL_CDC_FREETDS_DRIVER");
    return d && *d ? d : "/usr/lib/x86_64-linux-gnu/odbc/libtdsodbc.so";
}
#define DRIVER driver()

static int64_t cpu_us(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

static int count_change(const mcdc_change *c, void *payload)
{
    (void)c;
    (*(int64_t *)payload)++;
    return 0;
}

static int read_in_process(const char *db, const char *ci, int64_t *n)
{
    mcdc_source *src = NULL;
    char spec[512];
    snprintf(spec, sizeof spec, "sim:%s", db);
    int rc = mcdc_source_open(&src, spec);
    mcdc_lsn min, max, after;
    if (rc == 0) rc = src->ops->min_lsn(src, ci, &min);
    if (rc == 0) rc = src->ops->max_lsn(src, &max);
    if (rc == 0) rc = mcdc_lsn_decrement(&after, &min);
    if (rc == 0) rc = src->ops->read_changes(src, ci, &after, &max, count_change, n);
    mcdc_source_close(src);
    return rc;
}

static volatile sig_atomic_t child_stop;
static int ready_fd = -1;

static void on_term(int sig)
{
    (void)sig;
    child_stop = 1;
}

static void on_ready(const char *host, int port, void *payload)
{
    (void)host;
    (void)payload;
    if (write(ready_fd, &port, sizeof port) != (ssize_t)sizeof port) _exit(3);
}

static int serve_child(const char *db, int fd)
{
    ready_fd = fd;
    signal(SIGTERM, on_term);
    mcdc_tds_server_options o = MCDC_TDS_SERVER_OPTIONS_INIT;
    o.db_path = db;
    o.listen = "127.0.0.1:0";
    o.ready = on_ready;
    o.stop = &child_stop;
    int rc = mcdc_tds_serve(&o);
    if (rc) fprintf(stderr, "serve: %s\n", mcdc_error_last()->message);
    return rc ? 3 : 0;
}

static int read_odbc(int port, const char *ci, int64_t *n)
{
    SQLHENV env;
    SQLHDBC dbc;
    SQLHSTMT st;
    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env);
    SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc);
    char cs[512], sql[256];
    snprintf(cs, sizeof cs, "Driver=%s;Server=127.0.0.1;Port=%d;TDS_Version=7.4;ClientCharset=UTF-8;Encryption=off;"
             "UID=bench;PWD=bench-pw;Database=bench", DRIVER, port);
    SQLRETURN r = SQLDriverConnect(dbc, NULL, (SQLCHAR *)cs, SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    if (!SQL_SUCCEEDED(r)) {
        fprintf(stderr, "connect failed\n");
        return -1;
    }
    SQLAllocHandle(SQL_HANDLE_STMT, dbc, &st);
    snprintf(sql, sizeof sql, "SELECT * FROM cdc.%s_CT", ci);
    r = SQLExecDirect(st, (SQLCHAR *)sql, SQL_NTS);
    SQLSMALLINT ncols = 0;
    SQLNumResultCols(st, &ncols);
    static char buf[64][256];
    static SQLLEN ind[64];
    for (int i = 0; i < ncols && i < 64; i++) SQLBindCol(st, (SQLUSMALLINT)(i + 1), SQL_C_CHAR, buf[i], sizeof buf[i], &ind[i]);
    while (SQL_SUCCEEDED(r) && SQL_SUCCEEDED(r = SQLFetch(st))) (*n)++;
    int rc = r == SQL_NO_DATA ? 0 : -1;
    if (rc) {
        SQLCHAR state[6], text[512];
        SQLINTEGER nat;
        SQLSMALLINT tl;
        SQLGetDiagRec(SQL_HANDLE_STMT, st, 1, state, &nat, text, sizeof text, &tl);
        fprintf(stderr, "odbc: %s %d %s\n", state, (int)nat, text);
    }
    SQLFreeHandle(SQL_HANDLE_STMT, st);
    SQLDisconnect(dbc);
    SQLFreeHandle(SQL_HANDLE_DBC, dbc);
    SQLFreeHandle(SQL_HANDLE_ENV, env);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: bench_tds_serve DB CI\n");
        return 2;
    }
    const char *db = argv[1], *ci = argv[2];
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, db, false, NULL) || mcdc_sim_login_add(sim, "bench", "bench-pw", true)) {
        fprintf(stderr, "%s: %s\n", db, mcdc_error_last()->message);
        return 3;
    }
    mcdc_sim_close(sim);

    int64_t n_local = 0, t0 = mcdc_time_mono_us(), c0 = cpu_us(RUSAGE_SELF);
    if (read_in_process(db, ci, &n_local)) {
        fprintf(stderr, "in-process: %s\n", mcdc_error_last()->message);
        return 3;
    }
    int64_t t_local = mcdc_time_mono_us() - t0, c_local = cpu_us(RUSAGE_SELF) - c0;

    int fds[2];
    if (pipe(fds)) return 3;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        _exit(serve_child(db, fds[1]));
    }
    close(fds[1]);
    int port = 0;
    if (read(fds[0], &port, sizeof port) != (ssize_t)sizeof port) {
        fprintf(stderr, "the server did not start\n");
        return 3;
    }
    int64_t n_odbc = 0;
    t0 = mcdc_time_mono_us();
    c0 = cpu_us(RUSAGE_SELF);
    int rc = read_odbc(port, ci, &n_odbc);
    int64_t t_odbc = mcdc_time_mono_us() - t0, c_client = cpu_us(RUSAGE_SELF) - c0;
    kill(pid, SIGTERM);
    int status;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    int64_t c_server = (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    if (rc) return 3;

    printf("in-process  %10" PRId64 " rows  %7.2f s  %10.0f rows/s  %6.2f us CPU/row\n", n_local, t_local / 1e6,
           n_local / (t_local / 1e6), (double)c_local / (double)n_local);
    printf("odbc        %10" PRId64 " rows  %7.2f s  %10.0f rows/s  server %6.2f us CPU/row, client %6.2f us CPU/row\n",
           n_odbc, t_odbc / 1e6, n_odbc / (t_odbc / 1e6), (double)c_server / (double)n_odbc,
           (double)c_client / (double)n_odbc);
    bool ok = n_odbc == n_local && c_server < c_client;
    printf("%s: %s\n", ok ? "ok" : "FAIL",
           n_odbc != n_local ? "row counts differ" : c_server < c_client ? "the server spends less CPU per row than the client"
                                                                         : "the server spends more CPU per row than the client");
    return ok ? 0 : 1;
}
