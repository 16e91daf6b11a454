/*
 * bench/odbc_read.c: how fast the SQL Server source reads change rows over ODBC, against a
 * plain ODBC fetch loop reading the same statement.
 *
 *   bench_odbc_read PORT CI [PAGE_ROWS]
 *   bench_odbc_read PORT CI PAGE_ROWS N1,N2,...
 *
 * The second form reads with the source only, once per numPartitions value (one batch over N
 * connections), and prints each one's rows/s against the first value's, the client's and the
 * server's CPU a row, and the CPU-bound floor: both processes' CPU over the machine's cores,
 * the shortest the read can take here however many connections it uses (exit 1 when the row
 * counts differ).
 * PORT is a running `mssql-cdc sim serve` (login bench / bench-pw, database bench; see
 * bench/odbc_read.sh), CI the capture instance. Phases, each over every change row:
 *   source  the SQL Server source (odbc:...) read_changes from min_lsn to max_lsn: block
 *           fetches into bound column arrays, values converted to mcdc_value, rows counted
 *   plain   the source's own `changes` statement over the same range, run once and read one
 *           row at a time with SQLFetch and SQLGetData of every column as text (what a
 *           simple ODBC client does), rows counted
 * Prints rows/s of each and their ratio; exits 1 when the source is not at least twice as
 * fast as the plain loop or the counts differ. $MCDC_BENCH_CONN_EXTRA adds connection
 * keywords to both (e.g. PacketSize=32767). Figures: docs/benchmarks.md.
 */
#include <inttypes.h>
#include <sql.h>
#include <sqlext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mcdc/error.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "source/mssql/conn.h"
#include "source/mssql/statements.h"

static int64_t cpu_us(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* CPU of the server process $MCDC_BENCH_SERVER_PID (sim serve), microseconds; -1 unknown. */
static int64_t server_cpu_us(void)
{
    const char *pid = getenv("MCDC_BENCH_SERVER_PID");
    if (!pid || !*pid) return -1;
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the fields after the command name */
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) return -1;
    return (int64_t)(ut + st) * 1000000 / sysconf(_SC_CLK_TCK);
}

static int count_change(const mcdc_change *c, void *payload)
{
    (void)c;
    (*(int64_t *)payload)++;
    return 0;
}

static int plain_loop(const char *conn, const char *sql, const mcdc_lsn *after, const mcdc_lsn *upto, int64_t *n)
{
    SQLHENV env;
    SQLHDBC dbc;
    SQLHSTMT st;
    SQLAllocHandle(SQL_HANDLE_ENV, SQL_NULL_HANDLE, &env);
    SQLSetEnvAttr(env, SQL_ATTR_ODBC_VERSION, (SQLPOINTER)SQL_OV_ODBC3, 0);
    SQLAllocHandle(SQL_HANDLE_DBC, env, &dbc);
    SQLRETURN r = SQLDriverConnect(dbc, NULL, (SQLCHAR *)conn, SQL_NTS, NULL, 0, NULL, SQL_DRIVER_NOPROMPT);
    if (!SQL_SUCCEEDED(r)) {
        fprintf(stderr, "plain: connect failed\n");
        return -1;
    }
    SQLAllocHandle(SQL_HANDLE_STMT, dbc, &st);
    SQLLEN i1 = 10, i2 = 10;
    SQLBindParameter(st, 1, SQL_PARAM_INPUT, SQL_C_BINARY, SQL_BINARY, 10, 0, (SQLPOINTER)after->b, 10, &i1);
    SQLBindParameter(st, 2, SQL_PARAM_INPUT, SQL_C_BINARY, SQL_BINARY, 10, 0, (SQLPOINTER)upto->b, 10, &i2);
    r = SQLExecDirect(st, (SQLCHAR *)sql, SQL_NTS);
    SQLSMALLINT ncols = 0;
    SQLNumResultCols(st, &ncols);
    char buf[8192];
    SQLLEN ind;
    while (SQL_SUCCEEDED(r) && SQL_SUCCEEDED(r = SQLFetch(st))) {
        for (SQLSMALLINT i = 1; i <= ncols; i++) SQLGetData(st, (SQLUSMALLINT)i, SQL_C_CHAR, buf, sizeof buf, &ind);
        (*n)++;
    }
    int rc = r == SQL_NO_DATA ? 0 : -1;
    if (rc) {
        SQLCHAR state[6], text[512];
        SQLINTEGER nat;
        SQLSMALLINT tl;
        SQLGetDiagRec(SQL_HANDLE_STMT, st, 1, state, &nat, text, sizeof text, &tl);
        fprintf(stderr, "plain: %s %d %s\n", state, (int)nat, text);
    }
    SQLFreeHandle(SQL_HANDLE_STMT, st);
    SQLDisconnect(dbc);
    SQLFreeHandle(SQL_HANDLE_DBC, dbc);
    SQLFreeHandle(SQL_HANDLE_ENV, env);
    return rc;
}

/* The second form: the source read with numPartitions = each of @p list. */
static int partitions(const char *spec, const char *ci, const char *list)
{
    double base = 0;
    int64_t n_first = -1;
    for (const char *p = list; *p;) {
        int n = atoi(p);
        mcdc_source *src = NULL;
        mcdc_lsn min, max, after;
        int rc = mcdc_source_open(&src, spec);
        if (rc == 0) rc = mcdc_source_set_partitions(src, n);
        if (rc == 0) rc = src->ops->min_lsn(src, ci, &min);
        if (rc == 0) rc = src->ops->max_lsn(src, &max);
        if (rc == 0) rc = mcdc_lsn_decrement(&after, &min);
        int64_t rows = 0, t0 = mcdc_time_mono_us(), c0 = cpu_us(), s0 = server_cpu_us();
        if (rc == 0) rc = src->ops->read_changes(src, ci, &after, &max, count_change, &rows);
        int64_t t = mcdc_time_mono_us() - t0, c = cpu_us() - c0;
        if (rc < 0) {
            fprintf(stderr, "numPartitions=%d: %s\n", n, mcdc_error_last()->message);
            return 3;
        }
        mcdc_source_close(src);
        double r = rows / (t / 1e6);
        if (n_first < 0) {
            n_first = rows;
            base = r;
        }
        printf("numPartitions=%-3d %10" PRId64 " rows  %7.2f s  %10.0f rows/s  %5.2fx  client %5.2f us CPU/row", n, rows,
               t / 1e6, r, r / base, (double)c / (double)rows);
        int64_t s1 = server_cpu_us();
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        if (s0 >= 0 && s1 >= 0 && rows > 0) {
            double floor_s = (double)(c + s1 - s0) / 1e6 / (double)(cores > 0 ? cores : 1);
            printf("  server %5.2f us CPU/row  floor %5.2f s on %ld cores (wall %.2fx)", (double)(s1 - s0) / (double)rows,
                   floor_s, cores, t / 1e6 / floor_s);
        }
        printf("\n");
        if (rows != n_first) {
            printf("FAIL: numPartitions=%d read %" PRId64 " rows, not %" PRId64 "\n", n, rows, n_first);
            return 1;
        }
        while (*p && *p != ',') p++;
        if (*p == ',') p++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_odbc_read PORT CI [PAGE_ROWS]\n");
        return 2;
    }
    const char *ci = argv[2];
    char text[512], spec[600];
    snprintf(text, sizeof text, "Server=127.0.0.1;Port=%s;Database=bench;UID=bench;PWD=bench-pw;pageRows=%s", argv[1],
             argc > 3 ? argv[3] : "10000");
    const char *extra = getenv("MCDC_BENCH_CONN_EXTRA"); /* more keywords for both readers, e.g. PacketSize=16384 */
    if (extra && *extra) snprintf(text + strlen(text), sizeof text - strlen(text), ";%s", extra);
    snprintf(spec, sizeof spec, "odbc:%s", text);
    if (argc > 4) return partitions(spec, ci, argv[4]);
    mcdc_source *src = NULL;
    mcdc_lsn min, max, after;
    int rc = mcdc_source_open(&src, spec);
    if (rc == 0) rc = src->ops->min_lsn(src, ci, &min);
    if (rc == 0) rc = src->ops->max_lsn(src, &max);
    if (rc == 0) rc = mcdc_lsn_decrement(&after, &min);
    mcdc_schema *sc = NULL;
    if (rc == 0) rc = src->ops->captured_columns(src, ci, &sc);
    if (rc < 0) {
        fprintf(stderr, "source: %s\n", mcdc_error_last()->message);
        return 3;
    }
    int64_t n_src = 0, t0 = mcdc_time_mono_us(), c0 = cpu_us(), s0 = server_cpu_us();
    if (src->ops->read_changes(src, ci, &after, &max, count_change, &n_src) < 0) {
        fprintf(stderr, "source: %s\n", mcdc_error_last()->message);
        return 3;
    }
    int64_t t_src = mcdc_time_mono_us() - t0, c_src = cpu_us() - c0, s_src = server_cpu_us();
    s_src = s0 >= 0 && s_src >= 0 ? s_src - s0 : -1;
    mcdc_source_close(src);

    /* the same statement, read the simple way */
    mcdc_buf cols = MCDC_BUF_INIT(1 << 16), ct = MCDC_BUF_INIT(1024), sql = MCDC_BUF_INIT(1 << 16);
    for (size_t i = 0; i < sc->n_cols; i++) mcdc_buf_printf(&cols, ", c.[%s]", sc->cols[i].name);
    mcdc_buf_printf(&ct, "[cdc].[%s_CT]", ci);
    mcdc_mssql_fill fill = { .ct = ct.ptr, .cols = cols.ptr ? cols.ptr : "" };
    mcdc_mssql_conn conn;
    if (mcdc_mssql_statement_render(&sql, MCDC_MSSQL_Q_CHANGES, &fill) < 0 || mcdc_mssql_conn_parse(&conn, text, NULL) < 0) {
        fprintf(stderr, "%s\n", mcdc_error_last()->message);
        return 3;
    }
    int64_t n_plain = 0;
    t0 = mcdc_time_mono_us();
    c0 = cpu_us();
    s0 = server_cpu_us();
    rc = plain_loop(conn.odbc, sql.ptr, &after, &max, &n_plain);
    int64_t t_plain = mcdc_time_mono_us() - t0, c_plain = cpu_us() - c0, s_plain = server_cpu_us();
    s_plain = s0 >= 0 && s_plain >= 0 ? s_plain - s0 : -1;
    mcdc_mssql_conn_free(&conn);
    mcdc_buf_dispose(&cols);
    mcdc_buf_dispose(&ct);
    mcdc_buf_dispose(&sql);
    mcdc_schema_free(sc);
    if (rc) return 3;
    double r_src = n_src / (t_src / 1e6), r_plain = n_plain / (t_plain / 1e6);
    printf("source      %10" PRId64 " rows  %7.2f s  %10.0f rows/s  client %5.2f us CPU/row", n_src, t_src / 1e6, r_src,
           (double)c_src / (double)n_src);
    if (s_src >= 0) printf("  server %5.2f us CPU/row", (double)s_src / (double)n_src);
    printf("\n");
    printf("plain loop  %10" PRId64 " rows  %7.2f s  %10.0f rows/s  client %5.2f us CPU/row", n_plain, t_plain / 1e6, r_plain,
           (double)c_plain / (double)n_plain);
    if (s_plain >= 0) printf("  server %5.2f us CPU/row", (double)s_plain / (double)n_plain);
    printf(" (SQLFetch + SQLGetData, one row at a time)\n");
    printf("ratio       source / plain loop = %.2f\n", r_src / r_plain);
    printf("source_seconds %.3f\n", t_src / 1e6);
    bool ok = n_src == n_plain && r_src >= 2 * r_plain;
    printf("%s: %s\n", ok ? "ok" : "FAIL",
           n_src != n_plain ? "row counts differ" : ok ? "the source is at least twice as fast" : "the source is not twice as fast");
    return ok ? 0 : 1;
}
