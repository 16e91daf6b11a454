/*
 * tests/unit/source/tsql_statements.c: every statement the SQL Server source sends
 * (source/mssql/statements.c, rendered with mcdc_mssql_statement_example) runs against the
 * simulator's T-SQL engine as FreeTDS's ODBC driver sends it: '?' markers become @P1.. and
 * the statement goes through sp_executesql with the declared parameter types. Each must
 * answer without an error, and the answers that matter are checked.
 */
#include <stdarg.h>

#include "session_test.h"
#include "source/mssql/statements.h"
#include "source/sim/session_int.h"
#include "source/sim/sim_int.h"

typedef struct fx {
    simt              t;
    mcdc_sim_session *s;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    simt_open(&f->t, NULL);
    int rc = mcdc_sim_create_table(f->t.sim, "dbo.orders", "order_id INT NOT NULL, amount DECIMAL(12,2) NULL", "order_id",
                                   NULL, T("2026-01-01T00:00:00"));
    if (rc) fail_msg("create: %s", mcdc_error_last()->message);
    simt_exec(&f->t, NULL, "2026-01-01T00:00:01", "INSERT INTO dbo.orders VALUES (1, 10.50)");
    simt_exec(&f->t, NULL, "2026-01-01T00:00:02", "INSERT INTO dbo.orders VALUES (2, NULL), (3, 7)");
    simt_capture(&f->t, "2026-01-01T00:00:03", 0);
    mcdc_sim_login_info li = {"dbo", NULL, "test"};
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

static mcdc_sim_param PB(const char *hex)
{
    static char bufs[8][10];
    static int k;
    char *b = bufs[k++ % 8];
    for (int i = 0; i < 10; i++) {
        unsigned v;
        sscanf(hex + 2 + 2 * i, "%2x", &v);
        b[i] = (char)v;
    }
    mcdc_sim_param p = {NULL, {ST_BINARY, 10, 0, 0}, {0}, false};
    p.value.k = V_BIN;
    p.value.u.s.p = b;
    p.value.u.s.n = 10;
    return p;
}

/* The values FreeTDS would bind for statement @p q, by the types its `params` lists. */
static int values_for(mcdc_mssql_query q, mcdc_sim_param *v, char *decl, size_t cap)
{
    const char *zero = "0x00000000000000000000";
    const char *max = L("2026-01-01T00:00:02", 4);
    int n = 0;
    switch (q) {
    case MCDC_MSSQL_Q_MIN_LSN: case MCDC_MSSQL_Q_CAPTURED_COLUMNS: case MCDC_MSSQL_Q_DDL_HISTORY:
        v[n++] = PS(NULL, "dbo_orders"); break;
    case MCDC_MSSQL_Q_COMMIT_TIME: case MCDC_MSSQL_Q_MAPPING_FIRST_AFTER:
        v[n++] = PB(q == MCDC_MSSQL_Q_COMMIT_TIME ? max : zero); break;
    case MCDC_MSSQL_Q_COMMIT_AT_OR_BEFORE: /* just below the second insert's commit */
        v[n++] = PB(L("2026-01-01T00:00:01", 9)); break;
    case MCDC_MSSQL_Q_TIME_TO_LSN: {
        mcdc_sim_param t = {NULL, {ST_DATETIME2, 0, 0, 3}, {0}, false};
        t.value.k = V_DT;
        t.value.u.i = T("2026-01-01T00:00:01.500") * 10;
        v[n++] = t;
        break;
    }
    case MCDC_MSSQL_Q_MAPPING_SEED: {
        v[n++] = PB(max);
        mcdc_sim_param t = {NULL, {ST_DATETIME2, 0, 0, 3}, {0}, false};
        t.value.k = V_DT;
        t.value.u.i = T("2026-01-01T00:00:05") * 10;
        v[n++] = t;
        break;
    }
    case MCDC_MSSQL_Q_POSITIONS:
        v[n++] = PS(NULL, "dbo_orders"); v[n++] = PB(max); v[n++] = PB(zero); v[n++] = PB(zero); v[n++] = PB(zero);
        break;
    case MCDC_MSSQL_Q_MAPPING_RANGE: case MCDC_MSSQL_Q_CHANGES:
        v[n++] = PB(zero); v[n++] = PB(max); break;
    case MCDC_MSSQL_Q_NTH_COMMIT:
        v[n++] = PI(NULL, 2, false); v[n - 1].type.k = ST_BIGINT; v[n - 1].value.big = true; v[n++] = PB(zero); break;
    case MCDC_MSSQL_Q_PAGE_END:
        v[n++] = PB(zero); v[n++] = PB(max); v[n++] = PI(NULL, 1, false); v[n - 1].type.k = ST_BIGINT;
        v[n++] = PB(zero); v[n++] = PB(max); break;
    case MCDC_MSSQL_Q_CAPTURE_INSTANCES_OF:
        v[n++] = PS(NULL, "dbo"); v[n++] = PS(NULL, "orders"); break;
    case MCDC_MSSQL_Q_SOURCE_COLUMNS: case MCDC_MSSQL_Q_HAS_SELECT:
        v[n++] = PS(NULL, "dbo.orders"); break;
    case MCDC_MSSQL_Q_SNAPSHOT: case MCDC_MSSQL_Q_KEY_AT: case MCDC_MSSQL_Q_KEY_COUNT:
    case MCDC_MSSQL_Q_KEY_BUCKETS:
        v[n++] = PI(NULL, 1, false); v[n++] = PI(NULL, 3, false); break;
    default: break;
    }
    size_t k = 0;
    decl[0] = 0;
    for (int i = 0; i < n; i++) {
        char tn[64];
        sim_type_format(tn, sizeof tn, &v[i].type);
        k += (size_t)snprintf(decl + k, cap - k, "%s@P%d %s", i ? ", " : "", i + 1, tn);
    }
    return n;
}

/* '?' markers (outside strings) to @P1.. */
static char *markers(const char *sql)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    int n = 0;
    bool in_str = false;
    for (const char *p = sql; *p; p++) {
        if (*p == '\'') in_str = !in_str;
        if (*p == '?' && !in_str) mcdc_buf_printf(&b, "@P%d", ++n);
        else mcdc_buf_putc(&b, *p);
    }
    return mcdc_buf_detach(&b);
}

static const char *run(fx *f, mcdc_mssql_query q)
{
    mcdc_buf sql = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_mssql_statement_example(&sql, q));
    mcdc_buf_putc(&sql, '\0');
    char *text = markers(sql.ptr);
    mcdc_sim_param ps[8];
    char decl[300];
    int n = values_for(q, ps + 2, decl, sizeof decl);
    ps[0] = PS(NULL, text);
    ps[1] = PS(NULL, decl);
    const char *got = R(f->s, "sp_executesql", 0, ps, n + 2);
    if (strstr(got, "error "))
        fail_msg("statement %s:\n%s\nanswered:\n%s", mcdc_mssql_statement_get(q)->name, text, got);
    free(text);
    mcdc_buf_dispose(&sql);
    return got;
}

static void test_source_tsql_statements__every_statement_runs(void **state)
{
    fx *f = *state;
    for (int q = 0; q < MCDC_MSSQL_Q_COUNT; q++) run(f, (mcdc_mssql_query)q);
}

static const char *page_end_with(fx *f, mcdc_sim_param *v)
{
    mcdc_buf sql = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_mssql_statement_example(&sql, MCDC_MSSQL_Q_PAGE_END));
    mcdc_buf_putc(&sql, '\0');
    char *text = markers(sql.ptr);
    mcdc_sim_param ps[7] = {PS(NULL, text), PS(NULL, "@P1 binary(10), @P2 binary(10), @P3 bigint, @P4 binary(10), @P5 binary(10)")};
    memcpy(ps + 2, v, 5 * sizeof *v);
    const char *got = R(f->s, "sp_executesql", 0, ps, 7);
    free(text);
    mcdc_buf_dispose(&sql);
    return got;
}

static void test_source_tsql_statements__answers_that_matter(void **state)
{
    fx *f = *state;
    char want[300], *last = strdup(strstr(B(f->s, "SELECT MAX(start_lsn) FROM cdc.lsn_time_mapping"), "row "));
    *strchr(last, '\n') = 0;
    /* max_lsn comes with the server's clock and its UTC offset (UTC: 0) */
    snprintf(want, sizeof want, "cols :binary(10), :datetime2(7) not null, :int not null\n%s | ", last);
    const char *mx = run(f, MCDC_MSSQL_Q_MAX_LSN);
    char mxl[24];
    snprintf(mxl, sizeof mxl, "%.22s", last + 4);
    assert_true(!strncmp(mx, want, strlen(want)));
    assert_non_null(strstr(mx, " | 0\ndoneinproc more count=1\nstatus 0\ndoneproc\n"));
    snprintf(want, sizeof want, "cols :binary(10)\n%s\ndoneinproc more count=1\nstatus 0\ndoneproc\n", last);
    free(last);
    /* the clock (00:00:03, the capture) is past every commit: the newest one */
    assert_string_equal(want, run(f, MCDC_MSSQL_Q_CONSISTENT_LSN));
    /* 00:00:01.5 maps to the first insert's commit (00:00:01), not the second's */
    char at[64];
    snprintf(at, sizeof at, "row 0x%.16s0003\n", L("2026-01-01T00:00:01", 0) + 2);
    const char *tl = run(f, MCDC_MSSQL_Q_TIME_TO_LSN);
    if (!strstr(tl, at)) fail_msg("time_to_lsn: %s, want %s", tl, at);
    /* the commit at or before an LSN between two commits is the earlier one, with its time */
    char before[160];
    snprintf(before, sizeof before, "row 0x%.16s0003 | 2026-01-01 00:00:01.000\ndoneinproc more count=1\n",
             L("2026-01-01T00:00:01", 0) + 2);
    const char *cb = run(f, MCDC_MSSQL_Q_COMMIT_AT_OR_BEFORE);
    if (!strstr(cb, before)) fail_msg("commit_at_or_before: %s, want %s", cb, before);
    assert_non_null(strstr(run(f, MCDC_MSSQL_Q_CHANGES), "count=3\n"));
    /* page_end: the N-th row's commit (the second row is the second commit's first), the last
     * row's when fewer are left, NULL for an empty range */
    const char *c1 = L("2026-01-01T00:00:01", 0), *c2 = L("2026-01-01T00:00:02", 0);
    char c1row[40], c2row[40];
    snprintf(c1row, sizeof c1row, "row 0x%.16s", c1 + 2);
    snprintf(c2row, sizeof c2row, "row 0x%.16s", c2 + 2);
    const char *zero = "0x00000000000000000000";
    for (int skip = 0; skip < 4; skip++) {
        mcdc_sim_param v[5] = {PB(zero), PB(mxl), PI(NULL, skip, false), PB(zero), PB(mxl)};
        v[2].type.k = ST_BIGINT;
        const char *pe = page_end_with(f, v);
        if (!strstr(pe, skip == 0 ? c1row : c2row)) fail_msg("page_end skipping %d: %s", skip, pe);
    }
    mcdc_sim_param none[5] = {PB(mxl), PB(mxl), PI(NULL, 0, false), PB(mxl), PB(mxl)};
    none[2].type.k = ST_BIGINT;
    assert_non_null(strstr(page_end_with(f, none), "row <NULL>\n"));
    assert_non_null(strstr(run(f, MCDC_MSSQL_Q_SNAPSHOT), "row 1 | 10.50\nrow 2 | <NULL>\ndoneinproc more count=2\n"));
    assert_non_null(strstr(run(f, MCDC_MSSQL_Q_KEY_COUNT), "row 2\n"));
    const char *kb = run(f, MCDC_MSSQL_Q_KEY_BUCKETS); /* keys 1 and 2: bucket 0 of width 1000 from 1 */
    if (!strstr(kb, "row 0 | 2 | 3 | 1 | 2\n")) fail_msg("%s", kb);
    assert_non_null(strstr(run(f, MCDC_MSSQL_Q_CAPTURED_COLUMNS), "count=2\n"));
    assert_non_null(strstr(run(f, MCDC_MSSQL_Q_CAPTURE_INSTANCES), "count=1\n"));
    const char *sc = run(f, MCDC_MSSQL_Q_SOURCE_COLUMNS);
    if (!strstr(sc, "row order_id | 1 | 0 | 0 | <NULL>\nrow amount | 2 | 1 | 0 | <NULL>\n")) fail_msg("%s", sc);
    assert_non_null(strstr(run(f, MCDC_MSSQL_Q_DATABASE_CDC), "row 1\n"));
    /* positions: max_lsn and its commit time, min_lsn and its, the first LSN's (max_lsn's),
     * none for the zero LSNs, the clock and its offset: one row */
    const char *pos = run(f, MCDC_MSSQL_Q_POSITIONS);
    fprintf(stderr, "# positions:\n%s", pos);
    assert_non_null(strstr(pos, "row 0x"));
    assert_non_null(strstr(pos, " | <NULL> | <NULL> | <NULL> | "));
    assert_non_null(strstr(pos, "doneinproc more count=1\n"));
}

/* SQLite virtual machine instructions a statement runs, counted by the progress handler. */
static int count_step(void *p)
{
    (*(int64_t *)p)++;
    return 0;
}

static int64_t cost(fx *f, mcdc_mssql_query q, mcdc_sim_param *v, int n)
{
    mcdc_buf sql = MCDC_BUF_INIT(1 << 20);
    assert_int_equal(0, mcdc_mssql_statement_example(&sql, q));
    mcdc_buf_putc(&sql, '\0');
    char *text = markers(sql.ptr), decl[300];
    size_t k = 0;
    decl[0] = 0;
    for (int i = 0; i < n; i++) {
        char tn[64];
        sim_type_format(tn, sizeof tn, &v[i].type);
        k += (size_t)snprintf(decl + k, sizeof decl - k, "%s@P%d %s", i ? ", " : "", i + 1, tn);
    }
    mcdc_sim_param ps[8] = {PS(NULL, text), PS(NULL, decl)};
    assert_true(n <= 6);
    memcpy(ps + 2, v, (size_t)n * sizeof *v);
    int64_t steps = 0;
    sqlite3_progress_handler(f->s->sim->db, 10, count_step, &steps);
    const char *got = R(f->s, "sp_executesql", 0, ps, n + 2);
    sqlite3_progress_handler(f->s->sim->db, 0, NULL, NULL);
    if (strstr(got, "error ")) fail_msg("statement %s answered:\n%s", mcdc_mssql_statement_get(q)->name, got);
    free(text);
    mcdc_buf_dispose(&sql);
    return steps;
}

/* The n-th commit's LSN (from 0; -1 the last), as 0x + 20 hex digits. */
static const char *nth_lsn(fx *f, int n)
{
    static char bufs[4][24];
    static int k;
    char q[160], *b = bufs[k++ % 4];
    if (n < 0) snprintf(q, sizeof q, "SELECT MAX(start_lsn) FROM cdc.lsn_time_mapping");
    else snprintf(q, sizeof q, "SELECT start_lsn FROM cdc.lsn_time_mapping ORDER BY start_lsn OFFSET %d ROWS FETCH NEXT 1 ROWS ONLY", n);
    const char *got = B(f->s, q), *row = strstr(got, "row 0x");
    if (!row) fail_msg("%s: %s", q, got);
    assert_non_null(row);
    snprintf(b, 23, "%s", row + 4);
    return b;
}

/* A page's statements read their range, not the table from the page on: a page of 10 of
 * 3,000 commits costs a small part of the whole range's read (the mapping's processed_lsn
 * bound once made every page walk every commit after it). */
static void test_source_tsql_statements__a_page_reads_its_range_only(void **state)
{
    fx *f = *state;
    mcdc_sim_workload_options o = MCDC_SIM_WORKLOAD_OPTIONS_INIT;
    mcdc_sim_workload_result wr;
    o.table = "dbo.orders";
    o.transactions = 3000;
    o.start_us = T("2026-01-01T00:01:00");
    o.capture_every_us = 60 * INT64_C(1000000);
    if (mcdc_sim_workload(f->t.sim, &o, &wr)) fail_msg("workload: %s", mcdc_error_last()->message);
    const char *first = nth_lsn(f, 0), *page = nth_lsn(f, 10), *last = nth_lsn(f, -1);
    assert_non_null(strstr(B(f->s, "SELECT COUNT(*) FROM cdc.lsn_time_mapping"), "row 299")); /* some deletes find no row */
    /* the session's connection maps the file rather than reading it page by page */
    sqlite3_stmt *st;
    assert_int_equal(SQLITE_OK, sqlite3_prepare_v2(f->s->sim->db, "PRAGMA mmap_size", -1, &st, NULL));
    assert_int_equal(SQLITE_ROW, sqlite3_step(st));
    assert_true(sqlite3_column_int64(st, 0) >= (int64_t)1 << 30);
    sqlite3_finalize(st);
    const mcdc_mssql_query qs[] = {MCDC_MSSQL_Q_MAPPING_RANGE, MCDC_MSSQL_Q_CHANGES, MCDC_MSSQL_Q_PAGE_END};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        bool pe = qs[i] == MCDC_MSSQL_Q_PAGE_END;
        /* what a statement costs whatever its range (the rowid bounds' binary searches), left
         * out of both: an empty range's cost (page_end's: its first row's) */
        mcdc_sim_param e[5] = {PB(first), PB(pe ? page : first), PI(NULL, 0, false), PB(first), PB(pe ? page : first)};
        e[2].type.k = ST_BIGINT;
        int64_t fixed = cost(f, qs[i], e, pe ? 5 : 2);
        mcdc_sim_param v[5] = {PB(first), PB(page), PI(NULL, 9, false), PB(first), PB(page)};
        v[2].type.k = ST_BIGINT;
        int64_t small = cost(f, qs[i], v, pe ? 5 : 2) - fixed;
        v[1] = v[4] = PB(last);
        v[2] = PI(NULL, 2999, false);
        v[2].type.k = ST_BIGINT;
        int64_t whole = cost(f, qs[i], v, pe ? 5 : 2) - fixed;
        fprintf(stderr, "# %s: %lld steps for 10 commits, %lld for all, %lld for none\n", mcdc_mssql_statement_get(qs[i])->name,
                (long long)small, (long long)whole, (long long)fixed);
        if (small * 20 > whole) fail_msg("%s: a page of 10 commits cost %lld, the whole range %lld", mcdc_mssql_statement_get(qs[i])->name,
                                         (long long)small, (long long)whole);
        /* page_end skips 2,999 rows to the last: by rowid alone, with no LSN read or compared
         * for a skipped row (about 7 instructions each; 13 when each was compared three times) */
        if (pe && whole + fixed >= 2999)
            fail_msg("page_end: %lld instructions to skip 2,999 rows", (long long)whole * 10);
    }
}

/* How many rows of the change table a batch's SELECT returns ("row" lines), failing on an error. */
static int ct_rows(fx *f, const char *fmt, ...)
{
    char q[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(q, sizeof q, fmt, ap);
    va_end(ap);
    const char *got = B(f->s, q);
    if (strstr(got, "error ")) fail_msg("%s: %s", q, got);
    int n = 0;
    for (const char *p = got; (p = strstr(p, "row ")); p += 4) n++;
    return n;
}

/* A range of __$start_lsn on a change table is read as rowid bounds with no LSN compared per
 * row: the rows are exactly those the comparisons name, for every operator, either side,
 * BETWEEN, NULL (none), values longer and shorter than an LSN, a variable, and the view's own
 * bound (a change not yet captured is not shown, then is). */
static void test_source_tsql_statements__lsn_ranges_read_exactly_their_rows(void **state)
{
    fx *f = *state;
    char l0[24], l1[24];
    snprintf(l0, sizeof l0, "%s", nth_lsn(f, 1)); /* the two inserts' commits (0 is the table's creation) */
    snprintf(l1, sizeof l1, "%s", nth_lsn(f, 2));
    const char *ct = "SELECT order_id FROM cdc.dbo_orders_CT WHERE";
    assert_int_equal(ct_rows(f, "SELECT order_id FROM cdc.dbo_orders_CT"), 3);
    assert_int_equal(ct_rows(f, "%s __$start_lsn > %s", ct, l0), 2);
    assert_int_equal(ct_rows(f, "%s __$start_lsn >= %s", ct, l0), 3);
    assert_int_equal(ct_rows(f, "%s __$start_lsn >= %s", ct, l1), 2);
    assert_int_equal(ct_rows(f, "%s __$start_lsn < %s", ct, l1), 1);
    assert_int_equal(ct_rows(f, "%s __$start_lsn <= %s", ct, l1), 3);
    assert_int_equal(ct_rows(f, "%s __$start_lsn = %s", ct, l1), 2);
    assert_int_equal(ct_rows(f, "%s __$start_lsn > %s AND __$start_lsn <= %s", ct, l0, l1), 2);
    assert_int_equal(ct_rows(f, "%s %s < __$start_lsn", ct, l0), 2);
    assert_int_equal(ct_rows(f, "%s %s >= __$start_lsn", ct, l0), 1);
    assert_int_equal(ct_rows(f, "%s __$start_lsn BETWEEN %s AND %s", ct, l0, l0), 1);
    assert_int_equal(ct_rows(f, "%s __$start_lsn BETWEEN %s AND %s", ct, l1, l0), 0);
    assert_int_equal(ct_rows(f, "%s __$start_lsn NOT BETWEEN %s AND %s", ct, l0, l0), 2);
    assert_int_equal(ct_rows(f, "%s __$start_lsn > %s AND order_id = 3", ct, l0), 1);
    assert_int_equal(ct_rows(f, "%s __$start_lsn > %s OR order_id = 1", ct, l0), 3);
    /* one byte more or fewer than an LSN: compared as bytes, then by length */
    assert_int_equal(ct_rows(f, "%s __$start_lsn > %s00", ct, l0), 2);
    assert_int_equal(ct_rows(f, "%s __$start_lsn < %s00", ct, l0), 1);
    assert_int_equal(ct_rows(f, "%s __$start_lsn >= 0x00", ct), 3);
    assert_int_equal(ct_rows(f, "%s __$start_lsn < 0xFF", ct), 3);
    assert_int_equal(ct_rows(f, "%s __$start_lsn < 0x00", ct), 0);
    /* NULL matches no row, whichever bound it is */
    assert_int_equal(ct_rows(f, "%s __$start_lsn > NULL", ct), 0);
    assert_int_equal(ct_rows(f, "%s __$start_lsn <= NULL", ct), 0);
    assert_int_equal(ct_rows(f, "DECLARE @n binary(10) = NULL; %s __$start_lsn <= @n", ct), 0);
    assert_int_equal(ct_rows(f, "DECLARE @n binary(10) = NULL; %s __$start_lsn BETWEEN %s AND @n", ct, l0), 0);
    assert_int_equal(ct_rows(f, "DECLARE @x binary(10) = %s; %s __$start_lsn <= @x", l0, ct), 1);
    assert_int_equal(ct_rows(f, "%s __$start_lsn > %s ORDER BY __$start_lsn DESC OFFSET 1 ROWS", ct, l0), 1);
    assert_int_equal(ct_rows(f, "SELECT COUNT(*) FROM cdc.dbo_orders_CT WHERE __$start_lsn <= %s", l1), 1);
    /* committed but not captured yet: not in the change table, whatever the range */
    simt_exec(&f->t, NULL, "2026-01-01T00:00:04", "INSERT INTO dbo.orders VALUES (4, 1)");
    assert_int_equal(ct_rows(f, "SELECT order_id FROM cdc.dbo_orders_CT"), 3);
    assert_int_equal(ct_rows(f, "%s __$start_lsn > %s", ct, l1), 0);
    assert_int_equal(ct_rows(f, "%s __$start_lsn >= 0x00 ORDER BY __$start_lsn DESC", ct), 3);
    /* nor through a join, either side of an outer join, or a subquery */
    const char *o = "SELECT o.order_id FROM dbo.orders o";
    assert_int_equal(ct_rows(f, "%s LEFT JOIN cdc.dbo_orders_CT c ON c.order_id = o.order_id WHERE c.order_id IS NULL", o), 1);
    assert_int_equal(ct_rows(f, "%s LEFT JOIN cdc.dbo_orders_CT c ON c.order_id = o.order_id", o), 4);
    assert_int_equal(ct_rows(f, "SELECT o.order_id FROM cdc.dbo_orders_CT c RIGHT JOIN dbo.orders o ON c.order_id = o.order_id"
                                " WHERE c.__$operation IS NULL"), 1);
    assert_int_equal(ct_rows(f, "%s JOIN cdc.dbo_orders_CT c ON c.order_id = o.order_id", o), 3);
    assert_int_equal(ct_rows(f, "%s JOIN cdc.dbo_orders_CT c ON c.order_id = o.order_id WHERE c.__$start_lsn > %s", o, l0), 2);
    assert_int_equal(ct_rows(f, "%s WHERE EXISTS (SELECT 1 FROM cdc.dbo_orders_CT c WHERE c.order_id = o.order_id)", o), 3);
    assert_non_null(strstr(B(f->s, "SELECT (SELECT COUNT(*) FROM cdc.dbo_orders_CT) AS n"), "row 3\n"));
    assert_non_null(strstr(B(f->s, "SELECT COUNT(*) FROM cdc.dbo_orders_CT a, cdc.dbo_orders_CT b"), "row 9\n"));
    simt_capture(&f->t, "2026-01-01T00:00:05", 0);
    assert_int_equal(ct_rows(f, "%s __$start_lsn > %s", ct, l1), 1);
    assert_int_equal(ct_rows(f, "SELECT order_id FROM cdc.dbo_orders_CT"), 4);
}

/* The session keeps a page's SELECT prepared: the next page (same text, new parameters)
 * answers from the kept statement with its own values; more distinct statements than the
 * cache holds evict the least recently used, and every answer stays right. */
static void test_source_tsql_statements__a_repeated_select_runs_from_its_kept_statement(void **state)
{
    fx *f = *state;
    char l0[24];
    snprintf(l0, sizeof l0, "%s", nth_lsn(f, 1));
    const char *q = "DECLARE @x binary(10) = %s; SELECT order_id FROM cdc.dbo_orders_CT WHERE __$start_lsn > @x";
    assert_int_equal(ct_rows(f, q, l0), 2);
    uint64_t before = f->s->stmt_clock;
    int kept = 0;
    for (int i = 0; i < SESS_STMT_CACHE; i++) kept += f->s->stmts[i].sql != NULL && !f->s->stmts[i].busy;
    assert_true(kept >= 1);
    assert_int_equal(ct_rows(f, q, "0x00000000000000000000"), 3); /* the same text: a hit */
    int hits = 0;
    for (int i = 0; i < SESS_STMT_CACHE; i++)
        if (f->s->stmts[i].sql && f->s->stmts[i].used > before && strstr(f->s->stmts[i].sql, "order_id")) hits++;
    assert_int_equal(hits, 1);
    /* twice as many different statements as are kept, then the first again */
    char conds[400] = "";
    for (int k = 0; k < 2 * SESS_STMT_CACHE; k++) { /* literals are parameters: the text differs by its shape */
        strcat(conds, " AND order_id > 0");
        assert_int_equal(ct_rows(f, "SELECT order_id FROM cdc.dbo_orders_CT WHERE order_id < 3%s", conds), 2);
    }
    int full = 0;
    for (int i = 0; i < SESS_STMT_CACHE; i++) full += f->s->stmts[i].sql != NULL;
    assert_int_equal(full, SESS_STMT_CACHE);
    assert_int_equal(ct_rows(f, q, l0), 2);
    for (int i = 0; i < SESS_STMT_CACHE; i++) assert_false(f->s->stmts[i].busy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_source_tsql_statements__every_statement_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_tsql_statements__answers_that_matter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_tsql_statements__a_page_reads_its_range_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_tsql_statements__lsn_ranges_read_exactly_their_rows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_source_tsql_statements__a_repeated_select_runs_from_its_kept_statement, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
