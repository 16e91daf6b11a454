/*
 * source/mssql/reader.c: the source interface (mcdc/source.h) over SQL Server, through ODBC.
 *
 * Every operation runs through mssql__retry, so a transient failure (a dropped connection, a
 * deadlock victim, a query timeout) is retried on a new connection. A read goes in pages of
 * about pageRows rows that end on a commit (page_end; mapping_range, the page's commits and their
 * times, which its rows take by LSN; then changes, without a join), and resumes a page after
 * a retry by skipping the rows it already handed out: rows are ordered by a unique key
 * (__$start_lsn, __$command_id, __$seqval, __$operation) over a range below max_lsn that does
 * not change, so nothing is handed out twice and nothing is lost (a cleanup in between is
 * caught by the caller's min_lsn check, as for any read). Rows are block-fetched into bound
 * column arrays (SQL_ATTR_ROW_ARRAY_SIZE) allocated once per read; values point into those
 * arrays and are handed straight to the callback.
 *
 * Commit times: tran_end_time is the server's clock. Away from a change of the zone's offset
 * (more than a few hours from any) a local time has one UTC instant and is converted
 * directly; near one, the page's commits are converted as the simulator does, by feeding
 * every mapping entry from the one at least three hours before the range through core's
 * LSN-order sequencer (mcdc_tz_sequencer), so the repeated hour of a fall-back night reads
 * right and times never go backwards along LSNs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

#include "mcdc/failpoint.h"
#include "mcdc/mssql.h"
#include "mcdc/text.h"
#include "mcdc/time.h"
#include "source/columns.h"
#include "source/mssql/mssql_int.h"

#define US_PER_HOUR INT64_C(3600000000)
#define SEED_BACK_US (3 * US_PER_HOUR)
#define READ_BUFFER_BYTES (4 << 20)
#define MAX_ROW_ARRAY 1024

static mssql_source *S(mcdc_source *b)
{
    return (mssql_source *)b;
}

/* ---- statements with parameters ------------------------------------------------------------ */

/* A statement being run: its handle and the parameter storage it needs. */
typedef struct q {
    SQLHSTMT st;
    SQLLEN   ind[8];
    mcdc_buf sql;
} q;

static int q_open(mssql_source *s, q *x, mcdc_mssql_query id, const mcdc_mssql_fill *fill)
{
    memset(x, 0, sizeof *x);
    x->sql = (mcdc_buf)MCDC_BUF_INIT(1 << 20);
    int rc = mcdc_mssql_statement_render(&x->sql, id, fill);
    if (rc == 0) rc = mssql__stmt(s, &x->st);
    return rc;
}

/* Run the statement and move to its first result set with columns: a procedure may send
 * row counts (DONEINPROC) before the rows it answers with. */
static int q_run(mssql_source *s, q *x, mcdc_mssql_query id)
{
    const char *name = mcdc_mssql_statement_get(id)->name;
    int rc = mssql__exec(s, x->st, x->sql.ptr, name);
    for (int i = 0; rc == 0 && i < 64; i++) {
        SQLSMALLINT n = 0;
        if (!SQL_SUCCEEDED(SQLNumResultCols(x->st, &n)) || n > 0) break;
        SQLRETURN r = SQLMoreResults(x->st);
        if (r == SQL_NO_DATA) break;
        if (!SQL_SUCCEEDED(r)) rc = mssql__fail(s, SQL_HANDLE_STMT, x->st, name);
    }
    return rc;
}

/* Fetch the next row: 1 when there is one, 0 at the end. */
static int q_fetch(mssql_source *s, q *x, const char *what)
{
    SQLRETURN r = SQLFetch(x->st);
    if (r == SQL_NO_DATA) return 0;
    if (!SQL_SUCCEEDED(r)) return mssql__fail(s, SQL_HANDLE_STMT, x->st, what);
    return 1;
}

static void q_close(q *x)
{
    mssql__stmt_free(x->st);
    x->st = SQL_NULL_HSTMT;
    mcdc_buf_dispose(&x->sql);
}

/* Close a statement whose answer is short: see mssql__stmt_end. */
static void q_end(q *x, int rc)
{
    mssql__stmt_end(x->st, rc);
    x->st = SQL_NULL_HSTMT;
    mcdc_buf_dispose(&x->sql);
}

/* ---- time ---------------------------------------------------------------------------------- */

/* True when the zone's offset may change within a few hours of [lo, hi] (local times):
 * then local times are sequenced, not converted one by one. Errs on the side of yes. */
static bool near_change(const mssql_source *s, int64_t lo, int64_t hi)
{
    if (s->tz_fixed || !s->tz || s->srv_offset) return false;
    if (hi - lo > 6 * 24 * US_PER_HOUR) return true;
    /* a local time is within 14 h of its UTC instant; look 4 h beyond that either side */
    int32_t a = mcdc_tz_offset_at(s->tz, lo - 18 * US_PER_HOUR), b = mcdc_tz_offset_at(s->tz, hi + 18 * US_PER_HOUR);
    return a != b;
}

static int64_t to_utc(const mssql_source *s, int64_t local)
{
    if (s->srv_offset) return local - (int64_t)s->srv_offset_min * 60000000;
    return s->tz ? mcdc_tz_local_to_utc(s->tz, local, false, NULL) : local;
}

/* Queue @p text for take_warnings (once while it is queued). */
static void queue_warning(mssql_source *s, const char *text)
{
    for (size_t i = 0; i < s->n_warnings; i++)
        if (!strcmp(s->warnings[i], text)) return;
    if (s->n_warnings >= 64) return;
    char **nw = realloc(s->warnings, (s->n_warnings + 1) * sizeof *nw);
    if (!nw) return;
    s->warnings = nw;
    if ((s->warnings[s->n_warnings] = strdup(text))) s->n_warnings++;
}

/* The server's UTC offset @p offset_min at UTC instant @p now_us against the one its zone
 * gives there: a difference (Windows and IANA rules diverge, or a fixed offset from before
 * SQL Server 2022 that moved) is a warning in the log (rate-limited) and for the batch's facts
 * row, and until the next check finds them equal, commit times are converted with the
 * server's offset. */
static void clock_check(mssql_source *s, int64_t now_us, int64_t offset_min)
{
    if (!s->tz) return;
    int32_t zone_min = mcdc_tz_offset_at(s->tz, now_us) / 60;
    s->srv_offset = zone_min != offset_min;
    s->srv_offset_min = (int)offset_min;
    if (!s->srv_offset) return;
    char t[MCDC_TIME_STRLEN], msg[512];
    snprintf(msg, sizeof msg, "the server's UTC offset is %+d min at %sZ but zone %s gives %+d min (Windows and "
             "IANA rules differ): commit times are converted with the server's offset", (int)offset_min,
             mcdc_time_format(t, now_us, 0, false), mcdc_tz_name(s->tz), (int)zone_min);
    if (mcdc_ratelimit_allow(&s->offset_warn, mcdc_time_mono_us())) mcdc_log(MCDC_LOG_WARN, MSSQL_LOGGER, "%s", msg);
    queue_warning(s, msg);
}

typedef struct ts_entry {
    mcdc_lsn lsn;
    int64_t  utc_us;
} ts_entry;

/* The mapping entries in (after, upto] with their UTC commit times, sequenced from the entry
 * at least three hours before the first one past @p after (as the simulator does). */
typedef struct feed_ctx {
    mcdc_lsn  after, upto;
    ts_entry *e;
    size_t    n, cap;
} feed_ctx;

static int feed_fn(mssql_source *s, void *payload)
{
    feed_ctx *f = payload;
    f->n = 0;
    q x;
    int rc, got;
    bool null;
    mcdc_lsn seed = mcdc_lsn_zero(), lsn;
    int64_t first_local = INT64_MIN, local;
    /* the first entry past after */
    if ((rc = q_open(s, &x, MCDC_MSSQL_Q_MAPPING_FIRST_AFTER, NULL)) == 0 &&
        (rc = mssql__bind_lsn(s, x.st, 1, &f->after, &x.ind[0])) == 0 && (rc = q_run(s, &x, MCDC_MSSQL_Q_MAPPING_FIRST_AFTER)) == 0 &&
        (got = q_fetch(s, &x, "reading commit times")) > 0 && (rc = mssql__get_lsn(s, x.st, 1, &lsn, &null)) == 0)
        rc = mssql__get_local_us(s, x.st, 2, &first_local, &null);
    else if (rc == 0 && got < 0)
        rc = got;
    q_end(&x, rc);
    if (rc < 0) return rc;
    if (first_local == INT64_MIN) return 0;
    /* the seed: the last entry at or below after, at least three hours earlier */
    SQL_TIMESTAMP_STRUCT seed_time;
    mssql__us_to_ts(&seed_time, first_local - SEED_BACK_US);
    seed_time.fraction = seed_time.fraction / 1000000 * 1000000; /* datetime2(3) */
    bool have_seed = false;
    if ((rc = q_open(s, &x, MCDC_MSSQL_Q_MAPPING_SEED, NULL)) == 0 && (rc = mssql__bind_lsn(s, x.st, 1, &f->after, &x.ind[0])) == 0 &&
        (rc = mssql__bind_timestamp(s, x.st, 2, &seed_time, &x.ind[1])) == 0 && (rc = q_run(s, &x, MCDC_MSSQL_Q_MAPPING_SEED)) == 0) {
        if ((got = q_fetch(s, &x, "reading commit times")) > 0) {
            rc = mssql__get_lsn(s, x.st, 1, &seed, &null);
            have_seed = rc == 0 && !null;
        } else if (got < 0) {
            rc = got;
        }
    }
    q_end(&x, rc);
    if (rc < 0) return rc;
    mcdc_lsn from = mcdc_lsn_zero();
    if (have_seed && mcdc_lsn_decrement(&from, &seed) < 0) from = mcdc_lsn_zero();
    /* feed (from, upto]; keep the entries past after */
    mcdc_tz_sequencer seq;
    mcdc_tz_sequencer_init(&seq, s->tz, INT64_MIN, INT64_MIN);
    if ((rc = q_open(s, &x, MCDC_MSSQL_Q_MAPPING_RANGE, NULL)) == 0 && (rc = mssql__bind_lsn(s, x.st, 1, &from, &x.ind[0])) == 0 &&
        (rc = mssql__bind_lsn(s, x.st, 2, &f->upto, &x.ind[1])) == 0)
        rc = q_run(s, &x, MCDC_MSSQL_Q_MAPPING_RANGE);
    while (rc == 0 && (got = q_fetch(s, &x, "reading commit times")) > 0) {
        if ((rc = mssql__get_lsn(s, x.st, 1, &lsn, &null)) < 0 || (rc = mssql__get_local_us(s, x.st, 2, &local, &null)) < 0)
            break;
        int64_t utc = mcdc_tz_sequencer_next(&seq, local);
        if (mcdc_lsn_cmp(&lsn, &f->after) <= 0) continue;
        if (f->n == f->cap) {
            size_t nc = f->cap ? f->cap * 2 : 256;
            ts_entry *ne = realloc(f->e, nc * sizeof *ne);
            if (!ne) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            f->e = ne;
            f->cap = nc;
        }
        f->e[f->n].lsn = lsn;
        f->e[f->n].utc_us = utc;
        f->n++;
    }
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    return rc;
}

/* The commit time of the mapping entry at @p lsn (MCDC_ENOTFOUND when there is none). */
typedef struct commit_ctx {
    mcdc_lsn lsn;
    int64_t  local, utc;
    bool     found;
} commit_ctx;

static int commit_fn(mssql_source *s, void *payload)
{
    commit_ctx *c = payload;
    q x;
    bool null = true;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_COMMIT_TIME, NULL), got = 0;
    if (rc == 0) rc = mssql__bind_lsn(s, x.st, 1, &c->lsn, &x.ind[0]);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_COMMIT_TIME);
    if (rc == 0 && (got = q_fetch(s, &x, "reading a commit time")) > 0) rc = mssql__get_local_us(s, x.st, 1, &c->local, &null);
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    c->found = rc == 0 && got > 0 && !null;
    return rc;
}

int mssql__commit_ts(mssql_source *s, const mcdc_lsn *lsn, int64_t *out_us)
{
    commit_ctx c = { .lsn = *lsn };
    int rc = mssql__retry(s, "reading a commit time", commit_fn, &c);
    if (rc < 0) return rc;
    if (!c.found) {
        char l[MCDC_LSN_STRLEN];
        return mcdc_error_set(MCDC_ENOTFOUND, "no cdc.lsn_time_mapping entry has start_lsn %s", mcdc_lsn_format(l, lsn));
    }
    if (!near_change(s, c.local, c.local)) {
        *out_us = to_utc(s, c.local);
        return 0;
    }
    feed_ctx f = { .upto = *lsn };
    if (mcdc_lsn_decrement(&f.after, lsn) < 0) f.after = mcdc_lsn_zero();
    rc = mssql__retry(s, "reading commit times", feed_fn, &f);
    if (rc == 0) {
        if (f.n > 0 && mcdc_lsn_cmp(&f.e[f.n - 1].lsn, lsn) == 0) *out_us = f.e[f.n - 1].utc_us;
        else *out_us = to_utc(s, c.local);
    }
    free(f.e);
    return rc;
}

/* Statement commit_at_or_before: the newest mapping entry at or below an LSN. */
typedef struct before_ctx {
    mcdc_lsn upto, lsn;
    int64_t  local;
    bool     found;
} before_ctx;

static int before_fn(mssql_source *s, void *payload)
{
    before_ctx *c = payload;
    q x;
    bool null = true, tnull = true;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_COMMIT_AT_OR_BEFORE, NULL), got = 0;
    if (rc == 0) rc = mssql__bind_lsn(s, x.st, 1, &c->upto, &x.ind[0]);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_COMMIT_AT_OR_BEFORE);
    if (rc == 0 && (got = q_fetch(s, &x, "finding the commit before an LSN")) > 0 &&
        (rc = mssql__get_lsn(s, x.st, 1, &c->lsn, &null)) == 0)
        rc = mssql__get_local_us(s, x.st, 2, &c->local, &tnull);
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    c->found = rc == 0 && got > 0 && !null && !tnull;
    return rc;
}

static int op_commit_at_or_before(mcdc_source *b, const mcdc_lsn *lsn, mcdc_lsn *out, int64_t *out_us)
{
    mssql_source *s = S(b);
    before_ctx c = { .upto = *lsn };
    int rc = mssql__retry(s, "finding the commit before an LSN", before_fn, &c);
    if (rc < 0) return rc;
    if (!c.found) {
        char l[MCDC_LSN_STRLEN];
        return mcdc_error_set(MCDC_ENOTFOUND, "no cdc.lsn_time_mapping entry at or before %s", mcdc_lsn_format(l, lsn));
    }
    *out = c.lsn;
    if (!near_change(s, c.local, c.local)) {
        *out_us = to_utc(s, c.local);
        return 0;
    }
    return mssql__commit_ts(s, &c.lsn, out_us); /* near a fall-back change: sequenced */
}

/* ---- capture instances --------------------------------------------------------------------- */

static void cis_free(mssql_ci *a, size_t n)
{
    for (size_t i = 0; a && i < n; i++) {
        free(a[i].name);
        free(a[i].schema);
        free(a[i].table);
        free(a[i].index_columns);
    }
    free(a);
}

typedef struct cis_ctx {
    const char *schema, *table; /* NULL: every instance */
    mssql_ci   *a;
    size_t      n;
} cis_ctx;

static int cis_fn(mssql_source *s, void *payload)
{
    cis_ctx *c = payload;
    cis_free(c->a, c->n);
    c->a = NULL;
    c->n = 0;
    mcdc_mssql_query id = c->table ? MCDC_MSSQL_Q_CAPTURE_INSTANCES_OF : MCDC_MSSQL_Q_CAPTURE_INSTANCES;
    q x;
    int rc = q_open(s, &x, id, NULL), got = 0;
    if (rc == 0 && c->table) {
        if ((rc = mssql__bind_text(s, x.st, 1, c->schema, &x.ind[0])) == 0)
            rc = mssql__bind_text(s, x.st, 2, c->table, &x.ind[1]);
    }
    if (rc == 0) rc = q_run(s, &x, id);
    int i_schema = 0, i_table = 0, i_ci = 0, i_start = 0, i_create = 0, i_index = 0;
    if (rc == 0) {
        i_schema = mssql__col_index(x.st, "source_schema");
        i_table = mssql__col_index(x.st, "source_table");
        i_ci = mssql__col_index(x.st, "capture_instance");
        i_start = mssql__col_index(x.st, "start_lsn");
        i_create = mssql__col_index(x.st, "create_date");
        i_index = mssql__col_index(x.st, "index_column_list");
        if (!i_schema || !i_table || !i_ci || !i_start)
            rc = mcdc_error_set(MCDC_ESOURCE, "sys.sp_cdc_help_change_data_capture returned no capture_instance, "
                                "source_schema, source_table or start_lsn column");
    }
    size_t cap = 0;
    while (rc == 0 && (got = q_fetch(s, &x, "listing capture instances")) > 0) {
        if (c->n == cap) {
            cap = cap ? cap * 2 : 8;
            mssql_ci *na = realloc(c->a, cap * sizeof *na);
            if (!na) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            c->a = na;
        }
        mssql_ci *e = &c->a[c->n++];
        memset(e, 0, sizeof *e);
        char schema[260], table[260], name[260], index[4096] = "";
        bool null;
        if ((rc = mssql__get_text(s, x.st, i_schema, schema, sizeof schema, &null)) < 0 ||
            (rc = mssql__get_text(s, x.st, i_table, table, sizeof table, &null)) < 0 ||
            (rc = mssql__get_text(s, x.st, i_ci, name, sizeof name, &null)) < 0 ||
            (rc = mssql__get_lsn(s, x.st, i_start, &e->start_lsn, &null)) < 0)
            break;
        if (i_create && (rc = mssql__get_local_us(s, x.st, i_create, &e->create_local_us, &null)) < 0) break;
        if (i_index && (rc = mssql__get_text(s, x.st, i_index, index, sizeof index, &null)) < 0) break;
        e->name = strdup(name);
        e->schema = strdup(schema);
        e->table = strdup(table);
        e->index_columns = strdup(index);
        if (!e->name || !e->schema || !e->table || !e->index_columns) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    return rc;
}

int mssql__load_cis(mssql_source *s)
{
    cis_ctx c = { 0 };
    int rc = mssql__retry(s, "listing capture instances", cis_fn, &c);
    if (rc < 0) {
        cis_free(c.a, c.n);
        return rc;
    }
    cis_free(s->ci, s->n_ci);
    s->ci = c.a;
    s->n_ci = c.n;
    s->ci_loaded = true;
    return 0;
}

/* The capture instance named @p name: the exact name, else the one match ignoring case. */
int mssql__find_ci(mssql_source *s, const char *name, mssql_ci **out)
{
    int rc;
    for (int pass = 0; pass < 2; pass++) {
        if ((pass == 1 || !s->ci_loaded) && (rc = mssql__load_cis(s)) < 0) return rc;
        mssql_ci *hit = NULL;
        int n_hits = 0;
        for (size_t i = 0; i < s->n_ci; i++)
            if (!strcmp(s->ci[i].name, name)) {
                *out = &s->ci[i];
                return 0;
            }
        for (size_t i = 0; i < s->n_ci; i++)
            if (!strcasecmp(s->ci[i].name, name)) {
                hit = &s->ci[i];
                n_hits++;
            }
        if (n_hits == 1) {
            *out = hit;
            return 0;
        }
    }
    /* SQL Server lists a capture instance only to a login that can SELECT its source table's
     * captured columns (and is in its gating role): a readable change table of that name
     * means the instance exists and the login lacks that, a permission to fix (exit 3), not
     * a name to correct */
    const char *login = s->login[0] ? s->login : s->cfg.user;
    mcdc_buf ct = MCDC_BUF_INIT(512);
    bool ct_readable = false;
    if (mssql__ct_name(&ct, name) == 0 && mcdc_mssql__has_select(&s->base, ct.ptr, &ct_readable) < 0)
        ct_readable = false;
    mcdc_error_clear();
    if (ct_readable) {
        mcdc_error_set(MCDC_ESOURCE, "capture instance '%s' is hidden from login '%s': its change table %s is readable, but "
                       "SQL Server shows a capture instance (its columns, its min_lsn) only to a login that can SELECT "
                       "every captured column of its source table", name, login, ct.ptr);
        mcdc_error_hint("a DBA grants SELECT on the source table of %s to [%s] (GRANT SELECT ON <schema>.<table> TO [%s];) "
                        "and, if the instance has a gating role (role_name in sys.sp_cdc_help_change_data_capture), adds "
                        "the login to it (ALTER ROLE [<role>] ADD MEMBER [%s];)", name, login, login, login);
        mcdc_buf_dispose(&ct);
        return MCDC_ESOURCE;
    }
    mcdc_buf_dispose(&ct);
    mcdc_buf list = MCDC_BUF_INIT(4096);
    for (size_t i = 0; i < s->n_ci && i < 10; i++) mcdc_buf_printf(&list, "%s%s", i ? ", " : "", s->ci[i].name);
    mcdc_error_set(MCDC_ENOTFOUND, "capture instance '%s' does not exist in database %s, or login '%s' cannot read its "
                   "captured columns", name, s->database[0] ? s->database : "(default)", s->login[0] ? s->login : s->cfg.user);
    if (s->n_ci)
        mcdc_error_hint("the capture instances this login can read: %s%s", list.ptr, s->n_ci > 10 ? ", ..." : "");
    else
        mcdc_error_hint("enable CDC on the table (sys.sp_cdc_enable_table) and grant the login SELECT on it; mssql-cdc "
                        "source check lists what the login can see");
    mcdc_buf_dispose(&list);
    return MCDC_ENOTFOUND;
}

/* ---- captured columns ---------------------------------------------------------------------- */

static void plan_clear(mssql_plan *p)
{
    for (size_t i = 0; p->cols && i < p->n_cols; i++) free(p->cols[i].name);
    free(p->cols);
    mcdc_schema_free(p->schema);
    free(p->ci);
    memset(p, 0, sizeof *p);
}

typedef struct cols_ctx {
    const mssql_ci *ci;
    mssql_col      *cols;
    size_t          n;
} cols_ctx;

static void cols_free(mssql_col *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++) free(c[i].name);
    free(c);
}

static int cols_fn(mssql_source *s, void *payload)
{
    cols_ctx *c = payload;
    cols_free(c->cols, c->n);
    c->cols = NULL;
    c->n = 0;
    q x;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_CAPTURED_COLUMNS, NULL), got = 0;
    if (rc == 0) rc = mssql__bind_text(s, x.st, 1, c->ci->name, &x.ind[0]);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_CAPTURED_COLUMNS);
    int i_name = 0, i_id = 0, i_ord = 0, i_type = 0, i_len = 0, i_prec = 0, i_scale = 0, i_dtp = 0;
    if (rc == 0) {
        i_name = mssql__col_index(x.st, "column_name");
        i_id = mssql__col_index(x.st, "column_id");
        /* column_ordinal, as SQL Server's procedure and its current documentation name it (the
         * position among the captured columns, the update mask's bit); "ordinal" accepted too */
        i_ord = mssql__col_index(x.st, "column_ordinal");
        if (!i_ord) i_ord = mssql__col_index(x.st, "ordinal");
        i_type = mssql__col_index(x.st, "data_type");
        i_len = mssql__col_index(x.st, "character_maximum_length");
        i_prec = mssql__col_index(x.st, "numeric_precision");
        i_scale = mssql__col_index(x.st, "numeric_scale");
        i_dtp = mssql__col_index(x.st, "datetime_precision");
        if (!i_name || !i_id || !i_ord || !i_type)
            rc = mcdc_error_set(MCDC_ESOURCE, "sys.sp_cdc_get_captured_columns returned no column_name, column_id, "
                                "ordinal or data_type column");
    }
    size_t cap = 0;
    while (rc == 0 && (got = q_fetch(s, &x, "reading captured columns")) > 0) {
        if (c->n == cap) {
            cap = cap ? cap * 2 : 16;
            mssql_col *nc = realloc(c->cols, cap * sizeof *nc);
            if (!nc) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            c->cols = nc;
        }
        mssql_col *e = &c->cols[c->n++];
        memset(e, 0, sizeof *e);
        char name[520];
        bool null;
        int64_t v;
        e->max_length = e->precision = e->scale = e->dt_precision = -1;
        if ((rc = mssql__get_text(s, x.st, i_name, name, sizeof name, &null)) < 0) break;
        if (!(e->name = strdup(name))) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
        if ((rc = mssql__get_int64(s, x.st, i_id, &v, &null)) < 0) break;
        e->column_id = (int)v;
        if ((rc = mssql__get_int64(s, x.st, i_ord, &v, &null)) < 0) break;
        e->ordinal = (int)v;
        if ((rc = mssql__get_text(s, x.st, i_type, e->data_type, sizeof e->data_type, &null)) < 0) break;
        if (i_len && (rc = mssql__get_int64(s, x.st, i_len, &v, &null)) == 0 && !null) e->max_length = (int)v;
        if (i_prec && rc == 0 && (rc = mssql__get_int64(s, x.st, i_prec, &v, &null)) == 0 && !null) e->precision = (int)v;
        if (i_scale && rc == 0 && (rc = mssql__get_int64(s, x.st, i_scale, &v, &null)) == 0 && !null) e->scale = (int)v;
        if (i_dtp && rc == 0 && (rc = mssql__get_int64(s, x.st, i_dtp, &v, &null)) == 0 && !null) e->dt_precision = (int)v;
        e->nullable = true;
        if (rc < 0) break;
    }
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    if (rc < 0) return rc;
    /* nullability, computed and dropped columns from sys.columns */
    mcdc_buf obj = MCDC_BUF_INIT(1024);
    if ((rc = mssql__quote(&obj, c->ci->schema, "schema")) == 0 && (rc = mcdc_buf_putc(&obj, '.')) == 0)
        rc = mssql__quote(&obj, c->ci->table, "table");
    if (rc == 0 && (rc = q_open(s, &x, MCDC_MSSQL_Q_SOURCE_COLUMNS, NULL)) == 0 &&
        (rc = mssql__bind_text(s, x.st, 1, obj.ptr, &x.ind[0])) == 0)
        rc = q_run(s, &x, MCDC_MSSQL_Q_SOURCE_COLUMNS);
    while (rc == 0 && (got = q_fetch(s, &x, "reading the table's columns")) > 0) {
        char name[520];
        bool null;
        char collation[260];
        bool no_collation;
        int64_t id, nullable, computed;
        if ((rc = mssql__get_text(s, x.st, 1, name, sizeof name, &null)) < 0 ||
            (rc = mssql__get_int64(s, x.st, 2, &id, &null)) < 0 || (rc = mssql__get_int64(s, x.st, 3, &nullable, &null)) < 0 ||
            (rc = mssql__get_int64(s, x.st, 4, &computed, &null)) < 0 ||
            (rc = mssql__get_text(s, x.st, 5, collation, sizeof collation, &no_collation)) < 0)
            break;
        for (size_t i = 0; i < c->n; i++)
            if (c->cols[i].column_id == id) {
                c->cols[i].in_table = true;
                c->cols[i].nullable = nullable != 0;
                c->cols[i].cp1252 = mssql__collation_cp1252(no_collation ? NULL : collation);
                if (computed) c->cols[i].ordinal = -c->cols[i].ordinal - 1; /* marked: left out below */
            }
    }
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    mcdc_buf_dispose(&obj);
    return rc;
}

static int cmp_ordinal(const void *a, const void *b)
{
    const mssql_col *x = a, *y = b;
    return (x->ordinal > y->ordinal) - (x->ordinal < y->ordinal);
}

static int parse_index_list(const char *list, char ***out, size_t *n_out);

/* Load (again) the plan of @p ci into the source's cache; *out points at it. */
int mssql__load_plan(mssql_source *s, const mssql_ci *ci, mssql_plan **out)
{
    cols_ctx c = { .ci = ci };
    int rc = mssql__retry(s, "reading captured columns", cols_fn, &c);
    if (rc < 0) {
        cols_free(c.cols, c.n);
        return rc;
    }
    /* computed columns are NULL in every change row: left out, with a warning */
    size_t k = 0;
    for (size_t i = 0; i < c.n; i++) {
        if (c.cols[i].ordinal < 0) {
            mcdc_log(MCDC_LOG_WARN, MSSQL_LOGGER, "capture instance %s: computed column %s is left out (CDC stores it "
                     "as NULL)", ci->name, c.cols[i].name);
            free(c.cols[i].name);
            continue;
        }
        c.cols[k++] = c.cols[i];
    }
    c.n = k;
    if (c.n) qsort(c.cols, c.n, sizeof *c.cols, cmp_ordinal);
    /* --columns: the columns it does not name are left out before their types are mapped, so
     * an unmapped type (sql_variant, geography, ...) left out is never fetched nor refused */
    if (s->base.select) {
        const char **names = calloc(c.n + 1, sizeof *names);
        if (!names) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (size_t i = 0; rc == 0 && i < c.n; i++) names[i] = c.cols[i].name;
        if (rc == 0) rc = mcdc_source__select_check(s->base.select, ci->name, names, c.n);
        free(names);
        if (rc < 0) {
            cols_free(c.cols, c.n);
            return rc;
        }
        /* key columns stay: snapshots read in key order (the selection leaves them out above) */
        char **keys = NULL;
        size_t n_keys = 0;
        if ((rc = parse_index_list(ci->index_columns, &keys, &n_keys)) < 0) {
            cols_free(c.cols, c.n);
            return rc;
        }
        k = 0;
        for (size_t i = 0; i < c.n; i++) {
            bool keep = mcdc_source__select_has(s->base.select, c.cols[i].name);
            for (size_t j = 0; j < n_keys && !keep; j++) keep = !strcmp(keys[j], c.cols[i].name);
            if (keep) c.cols[k++] = c.cols[i];
            else free(c.cols[i].name);
        }
        c.n = k;
        for (size_t j = 0; j < n_keys; j++) free(keys[j]);
        free(keys);
    }
    mcdc_schema *sc = mcdc_schema_new();
    if (!sc) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < c.n; i++) {
        mcdc_column col;
        if ((rc = mssql__type_plan(&c.cols[i], ci->name, &col)) == 0)
            rc = mcdc_schema_add(sc, col.name, col.type, col.precision, col.scale, col.nullable);
    }
    if (rc < 0) {
        mcdc_schema_free(sc);
        cols_free(c.cols, c.n);
        return rc;
    }
    mssql_plan *p = NULL;
    for (size_t i = 0; i < s->n_plans; i++)
        if (!strcmp(s->plans[i].ci, ci->name)) p = &s->plans[i];
    if (!p) {
        mssql_plan *np = realloc(s->plans, (s->n_plans + 1) * sizeof *np);
        if (!np) {
            mcdc_schema_free(sc);
            cols_free(c.cols, c.n);
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        }
        s->plans = np;
        p = &s->plans[s->n_plans++];
        memset(p, 0, sizeof *p);
    } else {
        bool perm = p->can_read_ct;
        plan_clear(p);
        p->can_read_ct = perm;
    }
    p->ci = strdup(ci->name);
    p->cols = c.cols;
    p->n_cols = c.n;
    p->schema = sc;
    if (!p->ci) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    *out = p;
    return 0;
}

int mssql__get_plan(mssql_source *s, const mssql_ci *ci, mssql_plan **out)
{
    for (size_t i = 0; i < s->n_plans; i++)
        if (!strcmp(s->plans[i].ci, ci->name)) {
            *out = &s->plans[i];
            return 0;
        }
    return mssql__load_plan(s, ci, out);
}

/* ---- permissions --------------------------------------------------------------------------- */

typedef struct perm_ctx {
    const char *object;
    int64_t     has;
} perm_ctx;

static int perm_fn(mssql_source *s, void *payload)
{
    perm_ctx *p = payload;
    q x;
    bool null = true;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_HAS_SELECT, NULL), got = 0;
    if (rc == 0) rc = mssql__bind_text(s, x.st, 1, p->object, &x.ind[0]);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_HAS_SELECT);
    if (rc == 0 && (got = q_fetch(s, &x, "checking a permission")) > 0) rc = mssql__get_int64(s, x.st, 1, &p->has, &null);
    if (rc == 0 && got < 0) rc = got;
    if (null) p->has = 0;
    q_end(&x, rc);
    return rc;
}

int mcdc_mssql__has_select(mcdc_source *b, const char *object, bool *out)
{
    mssql_source *s = S(b);
    perm_ctx p = { .object = object };
    int rc = mssql__retry(s, "checking a permission", perm_fn, &p);
    *out = rc == 0 && p.has == 1;
    return rc;
}

int mssql__ct_name(mcdc_buf *out, const char *ci)
{
    char name[300];
    if (strlen(ci) > 100)
        return mcdc_error_set(MCDC_EINVAL, "capture instance '%.100s...': longer than 100 characters", ci);
    snprintf(name, sizeof name, "%s_CT", ci);
    int rc = mcdc_buf_puts(out, "[cdc].");
    return rc == 0 ? mssql__quote(out, name, "capture instance") : rc;
}

static int check_ct_permission(mssql_source *s, mssql_plan *p)
{
    if (p->can_read_ct) return 0;
    mcdc_buf obj = MCDC_BUF_INIT(512);
    int rc = mssql__ct_name(&obj, p->ci);
    bool ok = false;
    if (rc == 0) rc = mcdc_mssql__has_select(&s->base, obj.ptr, &ok);
    if (rc == 0 && !ok) {
        rc = mcdc_error_set(MCDC_ESOURCE, "login '%s' has no SELECT permission on %s (the change table of %s)",
                            s->login[0] ? s->login : s->cfg.user, obj.ptr, p->ci);
        mcdc_error_hint("a DBA grants it: GRANT SELECT ON %s TO [%s];", obj.ptr, s->login[0] ? s->login : s->cfg.user);
    }
    if (rc == 0) p->can_read_ct = true;
    mcdc_buf_dispose(&obj);
    return rc;
}

/* ---- operations ---------------------------------------------------------------------------- */

typedef struct lsn_ctx {
    mcdc_mssql_query q;
    const char      *text;  /* min_lsn's capture instance */
    mcdc_lsn         out;
    bool             has_clock; /* max_lsn: the server's clock and offset came with it */
    int64_t          now_us, offset_min;
} lsn_ctx;

static int lsn_fn(mssql_source *s, void *payload)
{
    lsn_ctx *c = payload;
    q x;
    bool null = true;
    int rc = q_open(s, &x, c->q, NULL), got = 0;
    if (rc == 0 && c->text) rc = mssql__bind_text(s, x.st, 1, c->text, &x.ind[0]);
    if (rc == 0) rc = q_run(s, &x, c->q);
    if (rc == 0 && (got = q_fetch(s, &x, mcdc_mssql_statement_get(c->q)->name)) > 0) rc = mssql__get_lsn(s, x.st, 1, &c->out, &null);
    if (rc == 0 && got < 0) rc = got;
    if (null) c->out = mcdc_lsn_zero();
    if (rc == 0 && got > 0 && c->q == MCDC_MSSQL_Q_MAX_LSN) {
        bool n1 = true, n2 = true;
        if ((rc = mssql__get_local_us(s, x.st, 2, &c->now_us, &n1)) == 0) rc = mssql__get_int64(s, x.st, 3, &c->offset_min, &n2);
        c->has_clock = rc == 0 && !n1 && !n2;
    }
    q_end(&x, rc);
    return rc;
}

static int op_max_lsn(mcdc_source *b, mcdc_lsn *out)
{
    lsn_ctx c = { .q = MCDC_MSSQL_Q_MAX_LSN };
    int rc = mssql__retry(S(b), "reading max_lsn", lsn_fn, &c);
    if (rc == 0) *out = c.out;
    if (rc == 0 && c.has_clock) clock_check(S(b), c.now_us, c.offset_min);
    return rc;
}

/* Statement consistent_lsn: the newest commit at or before the server's clock now. */
static int op_consistent_lsn(mcdc_source *b, mcdc_lsn *out)
{
    lsn_ctx c = { .q = MCDC_MSSQL_Q_CONSISTENT_LSN };
    int rc = mssql__retry(S(b), "mapping the server's clock to an LSN", lsn_fn, &c);
    if (rc == 0) *out = c.out;
    return rc;
}

typedef struct time_lsn_ctx {
    SQL_TIMESTAMP_STRUCT at; /* server local */
    mcdc_lsn             out;
} time_lsn_ctx;

static int time_lsn_fn(mssql_source *s, void *payload)
{
    time_lsn_ctx *c = payload;
    q x;
    bool null = true;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_TIME_TO_LSN, NULL), got = 0;
    if (rc == 0) rc = mssql__bind_timestamp(s, x.st, 1, &c->at, &x.ind[0]);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_TIME_TO_LSN);
    if (rc == 0 && (got = q_fetch(s, &x, "mapping a time to an LSN")) > 0) rc = mssql__get_lsn(s, x.st, 1, &c->out, &null);
    if (rc == 0 && got < 0) rc = got;
    if (null) c->out = mcdc_lsn_zero();
    q_end(&x, rc);
    return rc;
}

/* Statement time_to_lsn, with the UTC time turned into the server's local time (the
 * clock cdc.lsn_time_mapping is written in). */
static int op_time_to_lsn(mcdc_source *b, int64_t utc_us, mcdc_lsn *out)
{
    mssql_source *s = S(b);
    int64_t local = utc_us;
    if (s->srv_offset) local = utc_us + (int64_t)s->srv_offset_min * 60000000;
    else if (s->tz) local = utc_us + (int64_t)mcdc_tz_offset_at(s->tz, utc_us) * 1000000;
    time_lsn_ctx c;
    memset(&c, 0, sizeof c);
    mssql__us_to_ts(&c.at, local);
    c.at.fraction = c.at.fraction / 1000000 * 1000000; /* datetime2(3) */
    int rc = mssql__retry(s, "mapping a time to an LSN", time_lsn_fn, &c);
    if (rc == 0) *out = c.out;
    return rc;
}

static int op_min_lsn(mcdc_source *b, const char *ci_name, mcdc_lsn *out)
{
    mssql_source *s = S(b);
    mssql_ci *ci;
    int rc = mssql__find_ci(s, ci_name, &ci);
    if (rc < 0) return rc;
    lsn_ctx c = { .q = MCDC_MSSQL_Q_MIN_LSN, .text = ci->name };
    if ((rc = mssql__retry(s, "reading min_lsn", lsn_fn, &c)) == 0) *out = c.out;
    return rc;
}

static int op_lsn_to_commit_ts(mcdc_source *b, const mcdc_lsn *lsn, int64_t *out_us)
{
    return mssql__commit_ts(S(b), lsn, out_us);
}

typedef struct nth_ctx {
    const mcdc_lsn *after;
    int64_t         n, found;
    mcdc_lsn        last;
} nth_ctx;

static int nth_fn(mssql_source *s, void *payload)
{
    nth_ctx *c = payload;
    q x;
    bool null;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_NTH_COMMIT, NULL), got = 0;
    if (rc == 0) rc = mssql__bind_int64(s, x.st, 1, &c->n, &x.ind[0]);
    if (rc == 0) rc = mssql__bind_lsn(s, x.st, 2, c->after, &x.ind[1]);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_NTH_COMMIT);
    c->found = 0;
    if (rc == 0 && (got = q_fetch(s, &x, "counting commits")) > 0 && (rc = mssql__get_int64(s, x.st, 1, &c->found, &null)) == 0)
        rc = mssql__get_lsn(s, x.st, 2, &c->last, &null);
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    return rc;
}

static int op_nth_commit_after(mcdc_source *b, const mcdc_lsn *after, int64_t n, mcdc_lsn *out, int64_t *out_ts,
                               int64_t *found)
{
    mssql_source *s = S(b);
    *found = 0;
    if (n < 1) return mcdc_error_set(MCDC_EINVAL, "nth_commit_after: n must be at least 1 (got %lld)", (long long)n);
    nth_ctx c = { .after = after, .n = n };
    int rc = mssql__retry(s, "counting commits", nth_fn, &c);
    if (rc < 0) return rc;
    *found = c.found;
    *out = c.found ? c.last : *after;
    *out_ts = 0;
    return c.found ? mssql__commit_ts(s, &c.last, out_ts) : 0;
}

typedef struct now_ctx {
    int64_t utc_us, offset_min;
} now_ctx;

static int now_fn(mssql_source *s, void *payload)
{
    now_ctx *c = payload;
    q x;
    bool null;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_SERVER_NOW, NULL), got = 0;
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_SERVER_NOW);
    if (rc == 0 && (got = q_fetch(s, &x, "reading the server's clock")) > 0 &&
        (rc = mssql__get_local_us(s, x.st, 1, &c->utc_us, &null)) == 0)
        rc = mssql__get_int64(s, x.st, 2, &c->offset_min, &null);
    if (rc == 0 && got == 0) rc = mcdc_error_set(MCDC_ESOURCE, "server_now returned no row");
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    return rc;
}

static int op_server_now(mcdc_source *b, int64_t *out_us)
{
    mssql_source *s = S(b);
    now_ctx c;
    int rc = mssql__retry(s, "reading the server's clock", now_fn, &c);
    if (rc < 0) return rc;
    *out_us = c.utc_us;
    clock_check(s, c.utc_us, c.offset_min);
    return 0;
}

/* ---- several position questions in one statement ------------------------------------------ */

typedef struct pos_ctx {
    const char *ci;                          /* min_lsn's capture instance ("" when not asked) */
    mcdc_lsn    at[MCDC_POS_MAX_AT];         /* zero: no mapping entry has it */
    mcdc_lsn    max, min;
    bool        max_found, min_found, at_found[MCDC_POS_MAX_AT], has_clock;
    int64_t     max_local, min_local, at_local[MCDC_POS_MAX_AT], now_us, offset_min;
} pos_ctx;

static int pos_fn(mssql_source *s, void *payload)
{
    pos_ctx *c = payload;
    q x;
    bool null = true, n1 = true, n2 = true;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_POSITIONS, NULL), got = 0;
    if (rc == 0) rc = mssql__bind_text(s, x.st, 1, c->ci, &x.ind[0]);
    for (int i = 0; rc == 0 && i < MCDC_POS_MAX_AT; i++) rc = mssql__bind_lsn(s, x.st, 2 + i, &c->at[i], &x.ind[1 + i]);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_POSITIONS);
    if (rc == 0 && (got = q_fetch(s, &x, "reading positions")) > 0) {
        if ((rc = mssql__get_lsn(s, x.st, 1, &c->max, &null)) == 0 && null) c->max = mcdc_lsn_zero();
        if (rc == 0 && (rc = mssql__get_local_us(s, x.st, 2, &c->max_local, &null)) == 0) c->max_found = !null;
        if (rc == 0 && (rc = mssql__get_lsn(s, x.st, 3, &c->min, &null)) == 0 && null) c->min = mcdc_lsn_zero();
        if (rc == 0 && (rc = mssql__get_local_us(s, x.st, 4, &c->min_local, &null)) == 0) c->min_found = !null;
        for (int i = 0; rc == 0 && i < MCDC_POS_MAX_AT; i++)
            if ((rc = mssql__get_local_us(s, x.st, 5 + i, &c->at_local[i], &null)) == 0) c->at_found[i] = !null;
        if (rc == 0 && (rc = mssql__get_local_us(s, x.st, 9, &c->now_us, &n1)) == 0)
            rc = mssql__get_int64(s, x.st, 10, &c->offset_min, &n2);
        c->has_clock = rc == 0 && !n1 && !n2;
    }
    if (rc == 0 && got == 0) rc = mcdc_error_set(MCDC_ESOURCE, "positions returned no row");
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    return rc;
}

/* The UTC commit time of @p lsn read as @p local (found: a mapping entry has it); near a
 * fall-back change of the zone, asked again with the sequencing mssql__commit_ts does. */
static int pos_time(mssql_source *s, const mcdc_lsn *lsn, bool found, int64_t local, bool *has, int64_t *out)
{
    *has = false;
    *out = 0;
    if (!found || mcdc_lsn_is_zero(lsn)) return 0;
    if (!near_change(s, local, local)) {
        *out = to_utc(s, local);
        *has = true;
        return 0;
    }
    int rc = mssql__commit_ts(s, lsn, out);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        *out = 0;
        return 0;
    }
    *has = rc == 0;
    return rc;
}

/* Statement positions: max_lsn, min_lsn, the commit times and the clock in one round trip
 * (the n-th commit, when asked, as nth_commit_after). */
static int op_positions(mcdc_source *b, mcdc_positions *qp)
{
    mssql_source *s = S(b);
    pos_ctx c;
    memset(&c, 0, sizeof c);
    c.ci = "";
    int rc;
    if (qp->ask & (MCDC_POS_MIN | MCDC_POS_MIN_TS)) {
        mssql_ci *ci;
        if ((rc = mssql__find_ci(s, qp->ci, &ci)) < 0) return rc;
        c.ci = ci->name;
    }
    int n_at = (qp->ask & MCDC_POS_AT) ? (qp->n_at < MCDC_POS_MAX_AT ? qp->n_at : MCDC_POS_MAX_AT) : 0;
    for (int i = 0; i < n_at; i++) c.at[i] = qp->at[i];
    if ((rc = mssql__retry(s, "reading positions", pos_fn, &c)) < 0) return rc;
    if (c.has_clock) clock_check(s, c.now_us, c.offset_min); /* before converting: its offset may win */
    qp->has_max_ts = qp->has_min_ts = qp->has_now = false;
    qp->max_lsn = c.max;
    qp->min_lsn = c.min;
    if ((qp->ask & MCDC_POS_MAX_TS) && !(qp->has_known_max && mcdc_lsn_cmp(&c.max, &qp->known_max) == 0) &&
        (rc = pos_time(s, &c.max, c.max_found, c.max_local, &qp->has_max_ts, &qp->max_ts_us)) < 0)
        return rc;
    if ((qp->ask & MCDC_POS_MIN_TS) && !(qp->has_known_min && mcdc_lsn_cmp(&c.min, &qp->known_min) == 0) &&
        (rc = pos_time(s, &c.min, c.min_found, c.min_local, &qp->has_min_ts, &qp->min_ts_us)) < 0)
        return rc;
    for (int i = 0; i < n_at; i++)
        if ((rc = pos_time(s, &c.at[i], c.at_found[i], c.at_local[i], &qp->has_at_ts[i], &qp->at_ts_us[i])) < 0)
            return rc;
    if (qp->ask & MCDC_POS_NOW) {
        qp->has_now = c.has_clock;
        qp->now_us = c.has_clock ? c.now_us : 0;
    }
    if (qp->ask & MCDC_POS_NTH) {
        qp->nth_found = 0;
        if ((rc = op_nth_commit_after(b, &qp->nth_after, qp->nth_n, &qp->nth, &qp->nth_ts_us, &qp->nth_found)) < 0)
            return rc;
    }
    return 0;
}

/* "dbo.orders" -> schema, table (brackets allowed: [dbo].[orders]) */
static int split_table(const char *text, char *schema, size_t scap, char *table, size_t tcap)
{
    const char *dot = NULL;
    bool in = false;
    for (const char *p = text; *p; p++) {
        if (*p == '[') in = true;
        else if (*p == ']') in = false;
        else if (*p == '.' && !in && !dot) dot = p;
    }
    if (!dot || dot == text || !dot[1])
        return mcdc_error_set(MCDC_EINVAL, "bad table name '%s': expected schema.table (e.g. dbo.orders)", text);
    const char *a = text, *ae = dot, *t = dot + 1, *te = text + strlen(text);
    if (*a == '[' && ae[-1] == ']') { a++; ae--; }
    if (*t == '[' && te[-1] == ']') { t++; te--; }
    snprintf(schema, scap, "%.*s", (int)(ae - a), a);
    snprintf(table, tcap, "%.*s", (int)(te - t), t);
    return 0;
}

/* Table by table, then oldest first. */
static int cmp_create(const void *a, const void *b)
{
    const mcdc_capture_instance *x = a, *y = b;
    int c = strcmp(x->source_schema, y->source_schema);
    if (!c) c = strcmp(x->source_table, y->source_table);
    return c ? c : (x->create_ts_us > y->create_ts_us) - (x->create_ts_us < y->create_ts_us);
}

static int op_capture_instances(mcdc_source *b, const char *table, mcdc_capture_instance **out, size_t *n_out)
{
    mssql_source *s = S(b);
    char schema[260], name[260];
    *out = NULL;
    *n_out = 0;
    int rc = table ? split_table(table, schema, sizeof schema, name, sizeof name) : 0;
    if (rc < 0) return rc;
    cis_ctx c = { .schema = table ? schema : NULL, .table = table ? name : NULL }; /* NULL: every table's */
    if ((rc = mssql__retry(s, "listing capture instances", cis_fn, &c)) < 0) {
        cis_free(c.a, c.n);
        if (s->last_kind == MSSQL_ERR_NO_OBJECT)
            return mcdc_error_set(MCDC_ENOTFOUND, "table %s does not exist in database %s, or login '%s' cannot read it",
                                  table ? table : "(any)", s->database, s->login);
        return rc;
    }
    mcdc_capture_instance *a = calloc(c.n + 1, sizeof *a);
    if (!a) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < c.n; i++) {
        a[i].name = strdup(c.a[i].name);
        a[i].source_schema = strdup(c.a[i].schema);
        a[i].source_table = strdup(c.a[i].table);
        a[i].start_lsn = c.a[i].start_lsn;
        a[i].enable_lsn = c.a[i].start_lsn; /* as the procedure reports it */
        a[i].create_ts_us = to_utc(s, c.a[i].create_local_us);
        if (!a[i].name || !a[i].source_schema || !a[i].source_table) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    cis_free(c.a, c.n);
    if (rc < 0) {
        mcdc_capture_instances_free(a, c.n);
        return rc;
    }
    qsort(a, c.n, sizeof *a, cmp_create);
    *out = a;
    *n_out = c.n;
    return 0;
}

static int op_captured_columns(mcdc_source *b, const char *ci_name, mcdc_schema **out)
{
    mssql_source *s = S(b);
    mssql_ci *ci;
    mssql_plan *p;
    *out = NULL;
    int rc = mssql__find_ci(s, ci_name, &ci);
    if (rc == 0) rc = mssql__load_plan(s, ci, &p);
    if (rc < 0) return rc;
    if (!(*out = mcdc_schema_copy(p->schema))) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    return 0;
}

/* "[a], [b]" -> names ("]]" inside brackets is one ']') */
static int parse_index_list(const char *list, char ***out, size_t *n_out)
{
    size_t cap = 4, n = 0;
    char **a = calloc(cap, sizeof *a);
    if (!a) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    const char *p = list;
    while (*p) {
        while (*p == ' ' || *p == ',') p++;
        if (!*p) break;
        char name[260];
        size_t k = 0;
        if (*p == '[') {
            for (p++; *p; p++) {
                if (*p == ']') {
                    if (p[1] == ']') p++;
                    else { p++; break; }
                }
                if (k < sizeof name - 1) name[k++] = *p;
            }
        } else {
            while (*p && *p != ',' && k < sizeof name - 1) name[k++] = *p++;
            while (k && name[k - 1] == ' ') k--;
        }
        name[k] = '\0';
        if (n + 1 >= cap) {
            cap *= 2;
            char **na = realloc(a, cap * sizeof *na);
            if (!na) break;
            a = na;
        }
        if (!(a[n] = strdup(name))) break;
        n++;
    }
    *out = a;
    *n_out = n;
    return 0;
}

static int op_key_columns(mcdc_source *b, const char *ci_name, char ***out, size_t *n_out)
{
    mssql_ci *ci;
    *out = NULL;
    *n_out = 0;
    int rc = mssql__find_ci(S(b), ci_name, &ci);
    return rc < 0 ? rc : parse_index_list(ci->index_columns, out, n_out);
}

typedef struct ddl_ctx {
    const char     *ci;
    const mcdc_lsn *after, *upto;
    mcdc_ddl_entry *a;
    size_t          n;
} ddl_ctx;

static int ddl_fn(mssql_source *s, void *payload)
{
    ddl_ctx *c = payload;
    mcdc_ddl_entries_free(c->a, c->n);
    c->a = NULL;
    c->n = 0;
    q x;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_DDL_HISTORY, NULL), got = 0;
    if (rc == 0) rc = mssql__bind_text(s, x.st, 1, c->ci, &x.ind[0]);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_DDL_HISTORY);
    int i_cmd = 0, i_lsn = 0, i_time = 0;
    if (rc == 0) {
        i_cmd = mssql__col_index(x.st, "ddl_command");
        i_lsn = mssql__col_index(x.st, "ddl_lsn");
        i_time = mssql__col_index(x.st, "ddl_time");
        if (!i_cmd || !i_lsn || !i_time)
            rc = mcdc_error_set(MCDC_ESOURCE, "sys.sp_cdc_get_ddl_history returned no ddl_command, ddl_lsn or ddl_time");
    }
    size_t cap = 0;
    while (rc == 0 && (got = q_fetch(s, &x, "reading DDL history")) > 0) {
        char *cmd = NULL;
        mcdc_lsn lsn;
        int64_t local;
        bool null;
        if ((rc = mssql__get_text_alloc(s, x.st, i_cmd, &cmd)) < 0) break;
        if ((rc = mssql__get_lsn(s, x.st, i_lsn, &lsn, &null)) < 0 || (rc = mssql__get_local_us(s, x.st, i_time, &local, &null)) < 0) {
            free(cmd);
            break;
        }
        if (mcdc_lsn_cmp(&lsn, c->after) <= 0 || mcdc_lsn_cmp(&lsn, c->upto) > 0) {
            free(cmd);
            continue;
        }
        if (c->n == cap) {
            cap = cap ? cap * 2 : 8;
            mcdc_ddl_entry *na = realloc(c->a, cap * sizeof *na);
            if (!na) { free(cmd); rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            c->a = na;
        }
        mcdc_ddl_entry *e = &c->a[c->n++];
        memset(e, 0, sizeof *e);
        e->ddl_lsn = lsn;
        e->ddl_time_us = mcdc_time_truncate(to_utc(s, local), MCDC_GRAN_MINUTE);
        e->ddl_command = cmd;
    }
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    return rc;
}

static int cmp_ddl(const void *a, const void *b)
{
    const mcdc_ddl_entry *x = a, *y = b;
    return mcdc_lsn_cmp(&x->ddl_lsn, &y->ddl_lsn);
}

static int op_ddl_history(mcdc_source *b, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                          mcdc_ddl_entry **out, size_t *n_out)
{
    mssql_source *s = S(b);
    mssql_ci *ci;
    *out = NULL;
    *n_out = 0;
    int rc = mssql__find_ci(s, ci_name, &ci);
    if (rc < 0) return rc;
    ddl_ctx c = { .ci = ci->name, .after = after, .upto = upto };
    if ((rc = mssql__retry(s, "reading DDL history", ddl_fn, &c)) < 0) {
        mcdc_ddl_entries_free(c.a, c.n);
        return rc;
    }
    if (c.n) qsort(c.a, c.n, sizeof *c.a, cmp_ddl); /* no entries: c.a is NULL */
    *out = c.a;
    *n_out = c.n;
    return 0;
}

/* ---- reading changes ----------------------------------------------------------------------- */

/* Bound column arrays for one read, allocated once. */
typedef struct rowset {
    SQLULEN       R;          /* rows per fetch */
    SQLULEN       fetched;
    SQLUSMALLINT *status;
    uint8_t      *lsn, *seq, *mask;
    SQLLEN       *lsn_i, *seq_i, *mask_i, *op_i, *cmd_i;
    SQLINTEGER   *op, *cmd;
    char        **data;       /* per captured column (NULL for a long one) */
    SQLLEN      **ind;
    mcdc_buf     *longs;      /* per captured column, the long ones' values */
    int          *order;      /* select-list position (1-based) of each captured column */
    mcdc_value   *vals;       /* slots x captured columns: the converted values */
    char        **text;       /* per captured column, slots x text_cap bytes for a value made into text */
    mcdc_buf      wide;       /* a long UTF-16 value before it is decoded */
    size_t        slots;      /* rows of vals and text: 1, or R when rows are handed over a block at a time */
    mcdc_change  *ch;         /* R headers when handed over a block at a time, else NULL */
    int64_t       n_out;      /* rows of ch filled since the block was last handed over */
} rowset;

#define META_COLS 5
#define MASK_BYTES 128

/* A block handed over whole (mssql_int.h): its own arrays, with a slot per row. */
struct mssql_rows {
    rowset r;
    size_t n_cols;
    size_t bytes;   /* the arrays' size, about */
};

static void rowset_free(rowset *r, size_t n_cols)
{
    free(r->status);
    free(r->lsn);
    free(r->seq);
    free(r->mask);
    free(r->lsn_i);
    free(r->seq_i);
    free(r->mask_i);
    free(r->op_i);
    free(r->cmd_i);
    free(r->op);
    free(r->cmd);
    for (size_t i = 0; i < n_cols; i++) {
        if (r->data) free(r->data[i]);
        if (r->ind) free(r->ind[i]);
        if (r->longs) mcdc_buf_dispose(&r->longs[i]);
    }
    free(r->data);
    free(r->ind);
    free(r->longs);
    free(r->order);
    free(r->vals);
    for (size_t i = 0; r->text && i < n_cols; i++) free(r->text[i]);
    free(r->text);
    mcdc_buf_dispose(&r->wide);
    free(r->ch);
    memset(r, 0, sizeof *r);
}

/* @p per_row: a slot of values and a change header for every row of a fetch (a block handed
 * over whole, mssql_rows), else one slot reused row after row. */
static int rowset_alloc_slots(rowset *r, const mssql_plan *p, bool per_row)
{
    size_t n = p->n_cols;
    SQLLEN width = 10 + 10 + MASK_BYTES + 2 * sizeof(SQLINTEGER) + 5 * sizeof(SQLLEN);
    bool any_long = false;
    for (size_t i = 0; i < n; i++) {
        width += p->cols[i].width + (SQLLEN)sizeof(SQLLEN);
        if (p->cols[i].is_long) any_long = true;
    }
    SQLULEN R = any_long ? 1 : (SQLULEN)(READ_BUFFER_BYTES / width);
    if (R < 1) R = 1;
    if (R > MAX_ROW_ARRAY) R = MAX_ROW_ARRAY;
    memset(r, 0, sizeof *r);
    r->R = R;
    r->status = calloc(R, sizeof *r->status);
    r->lsn = calloc(R, 10);
    r->seq = calloc(R, 10);
    r->mask = calloc(R, MASK_BYTES);
    r->lsn_i = calloc(R, sizeof(SQLLEN));
    r->seq_i = calloc(R, sizeof(SQLLEN));
    r->mask_i = calloc(R, sizeof(SQLLEN));
    r->op_i = calloc(R, sizeof(SQLLEN));
    r->cmd_i = calloc(R, sizeof(SQLLEN));
    r->op = calloc(R, sizeof *r->op);
    r->cmd = calloc(R, sizeof *r->cmd);
    r->data = calloc(n + 1, sizeof *r->data);
    r->ind = calloc(n + 1, sizeof *r->ind);
    r->longs = calloc(n + 1, sizeof *r->longs);
    r->order = calloc(n + 1, sizeof *r->order);
    r->slots = per_row ? R : 1;
    r->vals = calloc(r->slots * n + 1, sizeof *r->vals);
    r->text = calloc(n + 1, sizeof *r->text);
    r->wide = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 30);
    if (per_row && !(r->ch = calloc(R, sizeof *r->ch))) goto oom;
    if (!r->status || !r->lsn || !r->seq || !r->mask || !r->lsn_i || !r->seq_i || !r->mask_i || !r->op_i || !r->cmd_i ||
        !r->op || !r->cmd || !r->data || !r->ind || !r->longs || !r->order || !r->vals || !r->text)
        goto oom;
    int pos = META_COLS;
    for (size_t i = 0; i < n; i++) {
        r->longs[i] = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 30);
        if (p->cols[i].text_cap && !(r->text[i] = malloc(p->cols[i].text_cap * r->slots))) goto oom;
        if (p->cols[i].is_long) continue;
        r->order[i] = ++pos;
        r->data[i] = calloc(R, (size_t)p->cols[i].width);
        r->ind[i] = calloc(R, sizeof(SQLLEN));
        if (!r->data[i] || !r->ind[i]) goto oom;
    }
    for (size_t i = 0; i < n; i++)
        if (p->cols[i].is_long) r->order[i] = ++pos;
    return 0;
oom:
    rowset_free(r, n);
    return mcdc_error_set(MCDC_ENOMEM, "out of memory for a read buffer of %lu rows", (unsigned long)R);
}

static int rowset_alloc(rowset *r, const mssql_plan *p)
{
    return rowset_alloc_slots(r, p, false);
}

/* The select list's captured columns, in fetch order (bound ones, then long ones). */
static int cols_list(mcdc_buf *out, const mssql_plan *p, const rowset *r)
{
    int rc = 0;
    for (int pos = META_COLS + 1; rc == 0 && pos <= META_COLS + (int)p->n_cols; pos++)
        for (size_t i = 0; i < p->n_cols; i++)
            if (r->order[i] == pos) {
                rc = mcdc_buf_puts(out, ", ");
                if (rc == 0) rc = mssql__col_expr(out, &p->cols[i], "c.", false);
            }
    return rc;
}

static int bind_rowset(mssql_source *s, SQLHSTMT st, rowset *r, const mssql_plan *p)
{
    SQLRETURN x = SQLSetStmtAttr(st, SQL_ATTR_ROW_BIND_TYPE, (SQLPOINTER)SQL_BIND_BY_COLUMN, 0);
    if (SQL_SUCCEEDED(x)) x = SQLSetStmtAttr(st, SQL_ATTR_ROW_ARRAY_SIZE, (SQLPOINTER)(uintptr_t)r->R, 0);
    if (SQL_SUCCEEDED(x)) x = SQLSetStmtAttr(st, SQL_ATTR_ROWS_FETCHED_PTR, &r->fetched, 0);
    if (SQL_SUCCEEDED(x)) x = SQLSetStmtAttr(st, SQL_ATTR_ROW_STATUS_PTR, r->status, 0);
    if (SQL_SUCCEEDED(x)) x = SQLBindCol(st, 1, SQL_C_BINARY, r->lsn, 10, r->lsn_i);
    if (SQL_SUCCEEDED(x)) x = SQLBindCol(st, 2, SQL_C_BINARY, r->seq, 10, r->seq_i);
    if (SQL_SUCCEEDED(x)) x = SQLBindCol(st, 3, SQL_C_SLONG, r->op, 0, r->op_i);
    if (SQL_SUCCEEDED(x)) x = SQLBindCol(st, 4, SQL_C_BINARY, r->mask, MASK_BYTES, r->mask_i);
    if (SQL_SUCCEEDED(x)) x = SQLBindCol(st, 5, SQL_C_SLONG, r->cmd, 0, r->cmd_i);
    for (size_t i = 0; SQL_SUCCEEDED(x) && i < p->n_cols; i++)
        if (!p->cols[i].is_long)
            x = SQLBindCol(st, (SQLUSMALLINT)r->order[i], p->cols[i].c_type, r->data[i], p->cols[i].width, r->ind[i]);
    if (!SQL_SUCCEEDED(x)) return mssql__fail(s, SQL_HANDLE_STMT, st, "binding result columns");
    return 0;
}

/* The long column at select position @p pos of the current row into @p b as the value's
 * bytes (UTF-8 for text; UTF-16 and CP1252 are collected in @p wide, then decoded): *len
 * its length or SQL_NULL_DATA. */
static int get_long(mssql_source *s, SQLHSTMT st, int pos, const mssql_col *c, mcdc_buf *b, mcdc_buf *wide, SQLLEN *len)
{
    bool utf16 = c->c_type == SQL_C_WCHAR, cp1252 = c->cp1252 && c->c_type == SQL_C_BINARY;
    mcdc_buf *into = utf16 || cp1252 ? wide : b;
    mcdc_buf_clear(b);
    mcdc_buf_clear(wide);
    SQLWCHAR chunk[16384]; /* 32 KiB, aligned for UTF-16 */
    size_t term = utf16 ? sizeof(SQLWCHAR) : c->c_type == SQL_C_CHAR ? 1 : 0;
    for (;;) {
        SQLLEN ind;
        SQLRETURN x = SQLGetData(st, (SQLUSMALLINT)pos, c->c_type, chunk, sizeof chunk, &ind);
        if (x == SQL_NO_DATA) break;
        if (!SQL_SUCCEEDED(x)) return mssql__fail(s, SQL_HANDLE_STMT, st, "reading a long column");
        if (ind == SQL_NULL_DATA) {
            *len = SQL_NULL_DATA;
            return 0;
        }
        size_t room = sizeof chunk - term;
        size_t got = (ind == SQL_NO_TOTAL || ind > (SQLLEN)room) ? room : (size_t)ind;
        if (mcdc_buf_put(into, chunk, got) < 0) return MCDC_ENOMEM;
        if (x == SQL_SUCCESS) break;
    }
    if (utf16) {
        size_t units = wide->len / sizeof(SQLWCHAR);
        if (mcdc_buf_grow(b, MCDC_TEXT_UTF8_OF_UTF16(units) + 1) < 0) return MCDC_ENOMEM;
        b->len = units ? mcdc_text_utf16_to_utf8((uint8_t *)b->ptr, (const uint16_t *)(const void *)wide->ptr, units) : 0;
        b->ptr[b->len] = 0;
    } else if (cp1252) {
        if (mcdc_buf_grow(b, wide->len * 3 + 1) < 0) return MCDC_ENOMEM;
        b->len = wide->len ? mcdc_text_cp1252_to_utf8((uint8_t *)b->ptr, (const uint8_t *)wide->ptr, wide->len) : 0;
        b->ptr[b->len] = 0;
    }
    if (!b->ptr && mcdc_buf_put(b, "", 0) < 0) return MCDC_ENOMEM;
    *len = (SQLLEN)b->len;
    return 0;
}

typedef struct read_ctx {
    mssql_plan     *plan;
    rowset          own;         /* the bound arrays, unless rows are handed over in blocks */
    rowset         *r;           /* the arrays fetched into: &own, or (*blk)->r */
    mssql_rows    **blk;         /* mssql__read_page: the block being filled (swapped by on_rows) */
    mssql_rows_cb   on_rows;     /* mssql__read_page: takes each fetched block whole */
    bool            known_end;   /* mssql__read_page: page_end is given, not asked */
    bool            seed_after;  /* mssql__read_page: the commit at page_after seeds the clock */
    bool            marked;      /* on_rows: mark holds the clock as of the last block handed over */
    struct {
        mcdc_tz_sequencer seq;
        mcdc_lsn          lsn;
        int64_t           utc;
        bool              has;
    } mark;
    mcdc_buf        ct;          /* [cdc].[ci_CT] */
    mcdc_lsn        upto;
    mcdc_lsn        page_after;  /* the page being read is (page_after, page_end] */
    mcdc_lsn        page_end;
    bool            have_end;
    int64_t         delivered;   /* rows of this page handed out (skipped on a retry) */
    bool            done;
    bool            gone;        /* the change table disappeared (instance disabled) */
    int64_t         n_pages;
    mcdc_change_cb  cb;
    void           *payload;
    int             cb_rc;       /* non-zero: the callback stopped the read */
    /* commit times */
    mcdc_tz_sequencer seq;
    mcdc_lsn        seq_lsn;     /* the last commit given to seq */
    int64_t         seq_utc;
    bool            seq_has;
    feed_ctx        feed;        /* the page's fed entries, near a change of offset */
    bool            feeding;
    /* the page's commits (mapping_range), in LSN order: rows take their commit times from
     * here rather than from a join of every change row to cdc.lsn_time_mapping */
    ts_entry       *pt;          /* utc_us holds the local tran_end_time */
    size_t          n_pt, cap_pt, cur_pt;
} read_ctx;

/* The page's commits (page_after, page_end] with their local commit times into c->pt, and
 * the first and last of those times. Block-fetched, MAPPING_BLOCK rows at a time into bound
 * arrays: a page of 10,000 rows has a few thousand commits. */
#define MAPPING_BLOCK 512
static int page_times_fn(mssql_source *s, read_ctx *c, int64_t *lo_local, int64_t *hi_local)
{
    q x;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_MAPPING_RANGE, NULL);
    c->n_pt = c->cur_pt = 0;
    *lo_local = INT64_MAX;
    *hi_local = INT64_MIN;
    uint8_t (*lsn)[10] = malloc(MAPPING_BLOCK * sizeof *lsn);
    SQL_TIMESTAMP_STRUCT *ts = malloc(MAPPING_BLOCK * sizeof *ts);
    SQLLEN *lsn_i = malloc(MAPPING_BLOCK * sizeof *lsn_i), *ts_i = malloc(MAPPING_BLOCK * sizeof *ts_i);
    SQLULEN fetched = 0;
    if (rc == 0 && (!lsn || !ts || !lsn_i || !ts_i)) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    /* a seeded page also reads the commit at page_after itself: it seeds the sequencer */
    mcdc_lsn from = c->page_after;
    if (c->seed_after && mcdc_lsn_decrement(&from, &c->page_after) < 0) from = c->page_after;
    if (rc == 0) rc = mssql__bind_lsn(s, x.st, 1, &from, &x.ind[0]);
    if (rc == 0) rc = mssql__bind_lsn(s, x.st, 2, &c->page_end, &x.ind[1]);
    if (rc == 0) {
        SQLRETURN b = SQLSetStmtAttr(x.st, SQL_ATTR_ROW_BIND_TYPE, (SQLPOINTER)SQL_BIND_BY_COLUMN, 0);
        if (SQL_SUCCEEDED(b)) b = SQLSetStmtAttr(x.st, SQL_ATTR_ROW_ARRAY_SIZE, (SQLPOINTER)(uintptr_t)MAPPING_BLOCK, 0);
        if (SQL_SUCCEEDED(b)) b = SQLSetStmtAttr(x.st, SQL_ATTR_ROWS_FETCHED_PTR, &fetched, 0);
        if (SQL_SUCCEEDED(b)) b = SQLBindCol(x.st, 1, SQL_C_BINARY, lsn, 10, lsn_i);
        if (SQL_SUCCEEDED(b)) b = SQLBindCol(x.st, 2, SQL_C_TYPE_TIMESTAMP, ts, sizeof *ts, ts_i);
        if (!SQL_SUCCEEDED(b)) rc = mssql__fail(s, SQL_HANDLE_STMT, x.st, "binding commit times");
    }
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_MAPPING_RANGE);
    while (rc == 0) {
        SQLRETURN f = SQLFetch(x.st);
        if (f == SQL_NO_DATA) break;
        if (!SQL_SUCCEEDED(f)) {
            rc = mssql__fail(s, SQL_HANDLE_STMT, x.st, "reading commit times");
            break;
        }
        if (c->n_pt + fetched > c->cap_pt) {
            size_t nc = c->cap_pt ? c->cap_pt : 1024;
            while (nc < c->n_pt + fetched) nc *= 2;
            ts_entry *ne = realloc(c->pt, nc * sizeof *ne);
            if (!ne) { rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); break; }
            c->pt = ne;
            c->cap_pt = nc;
        }
        for (SQLULEN i = 0; rc == 0 && i < fetched; i++) {
            if (lsn_i[i] == SQL_NULL_DATA || ts_i[i] == SQL_NULL_DATA) continue;
            if (lsn_i[i] > 10 || lsn_i[i] < 0) {
                rc = mcdc_error_set(MCDC_ESOURCE, "an LSN column holds %ld bytes, not 10", (long)lsn_i[i]);
                break;
            }
            ts_entry *e = &c->pt[c->n_pt++];
            memset(e->lsn.b, 0, sizeof e->lsn.b); /* a shorter value reads as zero-padded on the left */
            memcpy(e->lsn.b + (10 - lsn_i[i]), lsn[i], (size_t)lsn_i[i]);
            e->utc_us = mssql__ts_to_us(&ts[i]);
            if (e->utc_us < *lo_local) *lo_local = e->utc_us;
            if (e->utc_us > *hi_local) *hi_local = e->utc_us;
        }
    }
    q_end(&x, rc);
    free(lsn);
    free(ts);
    free(lsn_i);
    free(ts_i);
    if (c->n_pt == 0) *lo_local = *hi_local = 0;
    return rc;
}

/* The local commit time of the change rows at @p lsn (rows come in LSN order, so a cursor
 * walks the page's commits once). */
static int page_time_of(read_ctx *c, const mcdc_lsn *lsn, int64_t *out)
{
    while (c->cur_pt < c->n_pt && mcdc_lsn_cmp(&c->pt[c->cur_pt].lsn, lsn) < 0) c->cur_pt++;
    if (c->cur_pt < c->n_pt && mcdc_lsn_cmp(&c->pt[c->cur_pt].lsn, lsn) == 0) {
        *out = c->pt[c->cur_pt].utc_us;
        return 0;
    }
    char l[MCDC_LSN_STRLEN];
    return mcdc_error_set(MCDC_ESOURCE, "change rows at %s have no cdc.lsn_time_mapping entry", mcdc_lsn_format(l, lsn));
}

/* page_end's parameters: (after, upto], the rows to skip, (after, upto] again for the MAX. */
static int bind_page_end(mssql_source *s, q *x, mcdc_lsn *after, mcdc_lsn *upto, int64_t *skip)
{
    int rc = mssql__bind_lsn(s, x->st, 1, after, &x->ind[0]);
    if (rc == 0) rc = mssql__bind_lsn(s, x->st, 2, upto, &x->ind[1]);
    if (rc == 0) rc = mssql__bind_int64(s, x->st, 3, skip, &x->ind[2]);
    if (rc == 0) rc = mssql__bind_lsn(s, x->st, 4, after, &x->ind[3]);
    if (rc == 0) rc = mssql__bind_lsn(s, x->st, 5, upto, &x->ind[4]);
    return rc;
}

typedef struct end_ctx {
    const char *ct;
    mcdc_lsn    after, upto;
    int64_t     n;           /* rows asked */
    mcdc_lsn    end;
    bool        have_end;
} end_ctx;

static int end_fn(mssql_source *s, void *payload)
{
    end_ctx *c = payload;
    mcdc_mssql_fill fill = { .ct = c->ct };
    q x;
    bool null = true;
    int rc = q_open(s, &x, MCDC_MSSQL_Q_PAGE_END, &fill), got = 0;
    int64_t skip = c->n > 0 ? c->n - 1 : 0;
    if (rc == 0) rc = bind_page_end(s, &x, &c->after, &c->upto, &skip);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_PAGE_END);
    if (rc == 0 && (got = q_fetch(s, &x, "reading changes")) > 0) rc = mssql__get_lsn(s, x.st, 1, &c->end, &null);
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc); /* one row: no cancel, no round trip more */
    c->have_end = rc == 0 && got > 0 && !null;
    return rc;
}

static int page_end_fn(mssql_source *s, read_ctx *c)
{
    end_ctx e = { .ct = c->ct.ptr, .after = c->page_after, .upto = c->upto, .n = s->page_rows };
    int rc = end_fn(s, &e);
    c->page_end = e.end;
    c->have_end = e.have_end;
    return rc;
}

/* UTC commit time of a row's commit at @p lsn with local time @p local. */
static int row_commit_ts(read_ctx *c, mssql_source *s, const mcdc_lsn *lsn, int64_t local, int64_t *out)
{
    if (c->seq_has && mcdc_lsn_cmp(lsn, &c->seq_lsn) == 0) {
        *out = c->seq_utc;
        return 0;
    }
    if (c->feeding) {
        size_t lo = 0, hi = c->feed.n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (mcdc_lsn_cmp(&c->feed.e[mid].lsn, lsn) < 0) lo = mid + 1;
            else hi = mid;
        }
        if (lo < c->feed.n && mcdc_lsn_cmp(&c->feed.e[lo].lsn, lsn) == 0) {
            *out = c->feed.e[lo].utc_us;
        } else {
            char l[MCDC_LSN_STRLEN];
            return mcdc_error_set(MCDC_ESOURCE, "change rows at %s have no cdc.lsn_time_mapping entry", mcdc_lsn_format(l, lsn));
        }
        /* keep the plain sequencer in step, for pages after this one */
        mcdc_tz_sequencer_init(&c->seq, s->tz, local, *out);
    } else if (s->srv_offset) {
        *out = to_utc(s, local);
    } else {
        *out = mcdc_tz_sequencer_next(&c->seq, local);
    }
    c->seq_lsn = *lsn;
    c->seq_utc = *out;
    c->seq_has = true;
    return 0;
}

static int read_page_fn(mssql_source *s, void *payload)
{
    read_ctx *c = payload;
    int64_t lo_local = 0, hi_local = 0;
    if (c->on_rows && c->marked) {
        /* a retry: rows converted into a block that was never handed over moved the clock */
        c->seq = c->mark.seq;
        c->seq_lsn = c->mark.lsn;
        c->seq_utc = c->mark.utc;
        c->seq_has = c->mark.has;
    }
    int rc = c->known_end ? 0 : page_end_fn(s, c);
    if (rc < 0) {
        if (s->last_kind == MSSQL_ERR_NO_OBJECT && c->n_pages > 0) {
            /* disabled between two pages: the rest is gone, as the simulator reads it */
            mcdc_error_clear();
            c->gone = true;
            c->done = true;
            return 0;
        }
        return rc;
    }
    if (!c->have_end) {
        c->done = true;
        return 0;
    }
    if ((rc = page_times_fn(s, c, &lo_local, &hi_local)) < 0) return rc;
    if (c->seed_after) {
        /* the commit the range starts after, as the sequencer's predecessor (once: a retry
         * goes on from the last row handed out) */
        if (c->n_pt > 0 && mcdc_lsn_cmp(&c->pt[0].lsn, &c->page_after) == 0 && c->delivered == 0)
            mcdc_tz_sequencer_init(&c->seq, s->tz, c->pt[0].utc_us, to_utc(s, c->pt[0].utc_us));
    }
    if (c->on_rows && !c->marked) {
        c->mark.seq = c->seq;
        c->mark.lsn = c->seq_lsn;
        c->mark.utc = c->seq_utc;
        c->mark.has = c->seq_has;
        c->marked = true;
    }
    c->feeding = near_change(s, lo_local, hi_local);
    if (c->feeding) {
        c->feed.after = c->page_after;
        c->feed.upto = c->page_end;
        if ((rc = feed_fn(s, &c->feed)) < 0) return rc;
    }
    mcdc_mssql_fill fill = { .ct = c->ct.ptr };
    mcdc_buf cols = MCDC_BUF_INIT(1 << 20);
    if ((rc = cols_list(&cols, c->plan, c->r)) < 0) {
        mcdc_buf_dispose(&cols);
        return rc;
    }
    fill.cols = cols.ptr ? cols.ptr : "";
    q x;
    rc = q_open(s, &x, MCDC_MSSQL_Q_CHANGES, &fill);
    mcdc_buf_dispose(&cols);
    if (rc == 0) rc = mssql__bind_lsn(s, x.st, 1, &c->page_after, &x.ind[0]);
    if (rc == 0) rc = mssql__bind_lsn(s, x.st, 2, &c->page_end, &x.ind[1]);
    if (rc == 0) rc = bind_rowset(s, x.st, c->r, c->plan);
    if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_CHANGES);
    int64_t seen = 0;
    rowset *r = c->r;
    r->n_out = 0; /* a retry drops the rows of a block not handed over yet */
    const mssql_plan *p = c->plan;
    while (rc == 0) {
        SQLRETURN f = SQLFetch(x.st);
        if (f == SQL_NO_DATA) break;
        if (!SQL_SUCCEEDED(f)) {
            rc = mssql__fail(s, SQL_HANDLE_STMT, x.st, "reading changes");
            break;
        }
        for (SQLULEN i = 0; rc == 0 && i < r->fetched; i++) {
            if (r->status[i] == SQL_ROW_ERROR) {
                rc = mssql__fail(s, SQL_HANDLE_STMT, x.st, "reading changes");
                break;
            }
            if (seen++ < c->delivered) continue; /* handed out before a retry */
            size_t slot = c->on_rows ? (size_t)r->n_out : 0;
            mcdc_value *vals = r->vals + slot * p->n_cols;
            mcdc_change ch;
            memset(&ch, 0, sizeof ch);
            if (r->lsn_i[i] != 10 || r->seq_i[i] != 10) {
                rc = mcdc_error_set(MCDC_ESOURCE, "%s: __$start_lsn or __$seqval is not binary(10)", c->ct.ptr);
                break;
            }
            memcpy(ch.start_lsn.b, r->lsn + i * 10, 10);
            memcpy(ch.seqval.b, r->seq + i * 10, 10);
            ch.operation = (int)r->op[i];
            ch.command_id = r->cmd_i[i] == SQL_NULL_DATA ? 0 : (int)r->cmd[i];
            ch.update_mask = r->mask + i * MASK_BYTES;
            ch.update_mask_len = r->mask_i[i] == SQL_NULL_DATA ? 0 : (size_t)(r->mask_i[i] > MASK_BYTES ? MASK_BYTES : r->mask_i[i]);
            int64_t local = 0;
            if (c->seq_has && memcmp(ch.start_lsn.b, c->seq_lsn.b, sizeof ch.start_lsn.b) == 0) {
                ch.commit_ts_us = c->seq_utc; /* the commit of the row before */
            } else if ((rc = page_time_of(c, &ch.start_lsn, &local)) < 0 ||
                       (rc = row_commit_ts(c, s, &ch.start_lsn, local, &ch.commit_ts_us)) < 0) {
                break;
            }
            for (size_t k = 0; rc == 0 && k < p->n_cols; k++) {
                const mssql_col *col = &p->cols[k];
                const char *data;
                SQLLEN len;
                if (col->is_long) {
                    if ((rc = get_long(s, x.st, r->order[k], col, &r->longs[k], &r->wide, &len)) < 0) break;
                    data = r->longs[k].ptr;
                } else {
                    data = r->data[k] + (size_t)col->width * i;
                    len = r->ind[k][i];
                }
                rc = mssql__to_value(col, &p->schema->cols[k], data, len, &vals[k],
                                     r->text[k] ? r->text[k] + slot * col->text_cap : NULL, col->text_cap);
            }
            if (rc < 0) break;
            ch.values = vals;
            if (c->on_rows) {
                r->ch[r->n_out++] = ch; /* handed over with its block, below */
                continue;
            }
            int cbr = c->cb(&ch, c->payload);
            c->delivered++;
            if (cbr != 0) {
                c->cb_rc = cbr;
                rc = 0;
                break;
            }
        }
        if (rc == 0 && c->on_rows && r->n_out > 0) {
            /* the whole block to the taker, which gives an empty one to fetch into next */
            int64_t n = r->n_out;
            int cbr = c->on_rows(c->blk, c->payload);
            if (cbr != 0) {
                c->cb_rc = cbr;
                break;
            }
            c->delivered += n;
            c->mark.seq = c->seq;
            c->mark.lsn = c->seq_lsn;
            c->mark.utc = c->seq_utc;
            c->mark.has = c->seq_has;
            c->r = r = &(*c->blk)->r;
            r->n_out = 0;
            rc = bind_rowset(s, x.st, r, p);
        }
        if (c->cb_rc) break;
    }
    q_close(&x);
    if (rc < 0) {
        if (s->last_kind == MSSQL_ERR_NO_OBJECT && c->n_pages > 0) {
            mcdc_error_clear();
            c->gone = true;
            c->done = true;
            return 0;
        }
        return rc;
    }
    if (c->cb_rc) return 0;
    /* the page is read: the next one starts at its end */
    c->page_after = c->page_end;
    c->delivered = 0;
    c->n_pages++;
    if (mcdc_lsn_cmp(&c->page_after, &c->upto) >= 0) c->done = true;
    return 0;
}

/* The pages of (after, upto] into @p c (cb or on_rows set by the caller; c->r NULL for the
 * read's own arrays). */
static int read_run(mssql_source *s, read_ctx *c, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                    int64_t seed_local)
{
    mssql_ci *ci;
    mssql_plan *p;
    int rc = mssql__find_ci(s, ci_name, &ci);
    if (rc == 0) rc = mssql__get_plan(s, ci, &p);
    if (rc == 0) rc = check_ct_permission(s, p);
    if (rc < 0) return rc;
    if (mcdc_lsn_cmp(after, upto) >= 0) return 0;
    c->plan = p;
    c->ct = (mcdc_buf)MCDC_BUF_INIT(1024);
    c->upto = *upto;
    c->page_after = *after;
    mcdc_tz_sequencer_init(&c->seq, s->tz, seed_local, seed_local == INT64_MIN ? INT64_MIN : to_utc(s, seed_local));
    bool own = !c->r;
    if (own) c->r = &c->own;
    if ((rc = mssql__ct_name(&c->ct, p->ci)) == 0 && own) rc = rowset_alloc(&c->own, p);
    if (rc < 0) {
        mcdc_buf_dispose(&c->ct);
        return rc;
    }
    char what[200];
    snprintf(what, sizeof what, "reading changes of %s", p->ci);
    while (rc == 0 && !c->done && !c->cb_rc) {
        rc = mssql__retry(s, what, read_page_fn, c);
        if (rc == 0 && !c->done && !c->cb_rc) mcdc_failpoint("source.mssql.between_pages"); /* tests: a cleanup here */
    }
    if (own) rowset_free(&c->own, p->n_cols);
    free(c->feed.e);
    free(c->pt);
    mcdc_buf_dispose(&c->ct);
    if (rc < 0 && s->last_kind == MSSQL_ERR_NO_OBJECT) {
        mcdc_error_set(MCDC_ENOTFOUND, "capture instance '%s': its change table is gone (CDC was disabled on the table)",
                       ci_name);
        /* the cached list is stale */
        s->ci_loaded = false;
    }
    return rc < 0 ? rc : c->cb_rc;
}

int mssql__read_range(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                      int64_t seed_local, mcdc_change_cb cb, void *payload)
{
    read_ctx c;
    memset(&c, 0, sizeof c);
    c.cb = cb;
    c.payload = payload;
    return read_run(s, &c, ci_name, after, upto, seed_local);
}

/* ---- blocks handed over whole (numPartitions) ------------------------------------------------ */

int mssql__rows_new(mssql_rows **out, const mssql_plan *p)
{
    *out = NULL;
    mssql_rows *b = calloc(1, sizeof *b);
    if (!b) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    int rc = rowset_alloc_slots(&b->r, p, true);
    if (rc < 0) {
        free(b);
        return rc;
    }
    b->n_cols = p->n_cols;
    size_t width = 10 + 10 + MASK_BYTES + sizeof(mcdc_change) + 2 * sizeof(SQLINTEGER) + 5 * sizeof(SQLLEN);
    for (size_t i = 0; i < p->n_cols; i++)
        width += (size_t)p->cols[i].width + sizeof(SQLLEN) + sizeof(mcdc_value) + p->cols[i].text_cap;
    b->bytes = width * b->r.R;
    *out = b;
    return 0;
}

void mssql__rows_free(mssql_rows *b)
{
    if (!b) return;
    rowset_free(&b->r, b->n_cols);
    free(b);
}

int64_t mssql__rows_count(const mssql_rows *b)
{
    return b->r.n_out;
}

const mcdc_change *mssql__rows_changes(const mssql_rows *b)
{
    return b->r.ch;
}

size_t mssql__rows_bytes(const mssql_rows *b)
{
    size_t longs = 0;
    for (size_t i = 0; i < b->n_cols; i++) longs += b->r.longs[i].len;
    return b->bytes + longs;
}

int mssql__read_page(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *end, bool seeded,
                     mssql_rows **io, mssql_rows_cb on_rows, void *payload)
{
    read_ctx c;
    memset(&c, 0, sizeof c);
    c.r = &(*io)->r;
    c.blk = io;
    c.on_rows = on_rows;
    c.payload = payload;
    c.known_end = true;
    c.page_end = *end;
    c.have_end = true;
    c.seed_after = seeded;
    c.n_pages = seeded ? 1 : 0; /* a change table gone before a later range: its rows are gone too */
    return read_run(s, &c, ci_name, after, end, INT64_MIN);
}

static int op_read_changes(mcdc_source *b, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                           mcdc_change_cb cb, void *payload)
{
    mssql_source *s = S(b);
    if (s->base.num_partitions > 1 && !s->is_sibling)
        return mssql__read_partitioned(s, ci_name, after, upto, cb, payload);
    return mssql__read_range(s, ci_name, after, upto, INT64_MIN, cb, payload);
}

/* ---- the pages of a partitioned read ------------------------------------------------------- */

int mssql__page_end(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto, mcdc_lsn *end,
                    bool *found)
{
    mssql_ci *ci;
    mssql_plan *p;
    *found = false;
    int rc = mssql__find_ci(s, ci_name, &ci);
    if (rc == 0) rc = mssql__get_plan(s, ci, &p);
    if (rc == 0) rc = check_ct_permission(s, p);
    if (rc < 0) return rc;
    mcdc_buf ct = MCDC_BUF_INIT(1024);
    if ((rc = mssql__ct_name(&ct, p->ci)) == 0) {
        end_ctx c = { .ct = ct.ptr, .after = *after, .upto = *upto, .n = s->page_rows };
        char what[200];
        snprintf(what, sizeof what, "reading changes of %s", p->ci);
        if ((rc = mssql__retry(s, what, end_fn, &c)) == 0 && c.have_end) {
            *end = c.end;
            *found = true;
        }
    }
    mcdc_buf_dispose(&ct);
    return rc;
}

/* ---- snapshots ----------------------------------------------------------------------------- */

/* A key bound as a parameter: the value's storage while the statement runs. */
typedef struct key_param {
    SQLSMALLINT c_type, sql_type;
    SQLULEN     size;
    SQLSMALLINT digits;
    union {
        SQLBIGINT i;
        double    d;
        float     f;
        unsigned char b;
        SQL_DATE_STRUCT date;
        SQL_TIMESTAMP_STRUCT ts;
    } v;
    char   text[64];
    const void *ptr;
    SQLLEN len, ind;
} key_param;

static int key_param_of(key_param *k, const mcdc_column *col, const mcdc_value *v)
{
    memset(k, 0, sizeof *k);
    k->ind = 0;
    switch (col->type) {
    case MCDC_TYPE_BOOLEAN:
        k->c_type = SQL_C_BIT; k->sql_type = SQL_BIT; k->v.b = v->v.b; k->ptr = &k->v.b; break;
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
        k->c_type = SQL_C_SBIGINT; k->sql_type = SQL_BIGINT; k->size = 19; k->v.i = v->v.i; k->ptr = &k->v.i; break;
    case MCDC_TYPE_FLOAT:
        k->c_type = SQL_C_FLOAT; k->sql_type = SQL_REAL; k->v.f = v->v.f; k->ptr = &k->v.f; break;
    case MCDC_TYPE_DOUBLE:
        k->c_type = SQL_C_DOUBLE; k->sql_type = SQL_DOUBLE; k->v.d = v->v.d; k->ptr = &k->v.d; break;
    case MCDC_TYPE_DECIMAL:
        mcdc_decimal_format(k->text, v->v.dec, col->scale);
        k->c_type = SQL_C_CHAR; k->sql_type = SQL_VARCHAR; k->size = strlen(k->text); k->ptr = k->text;
        k->ind = k->len = (SQLLEN)strlen(k->text);
        break;
    case MCDC_TYPE_DATE: {
        int64_t y;
        unsigned m, d;
        mcdc_civil_from_days(v->v.i, &y, &m, &d);
        k->v.date.year = (SQLSMALLINT)y; k->v.date.month = (SQLUSMALLINT)m; k->v.date.day = (SQLUSMALLINT)d;
        k->c_type = SQL_C_TYPE_DATE; k->sql_type = SQL_TYPE_DATE; k->size = 10; k->ptr = &k->v.date;
        break;
    }
    case MCDC_TYPE_TIMESTAMP_NTZ:
        mssql__us_to_ts(&k->v.ts, v->v.i);
        k->c_type = SQL_C_TYPE_TIMESTAMP; k->sql_type = SQL_TYPE_TIMESTAMP; k->size = 26; k->digits = 6;
        k->ptr = &k->v.ts;
        break;
    case MCDC_TYPE_BINARY:
        k->c_type = SQL_C_BINARY; k->sql_type = SQL_VARBINARY; k->size = v->v.s.len ? v->v.s.len : 1;
        k->ptr = v->v.s.ptr; k->ind = k->len = (SQLLEN)v->v.s.len;
        break;
    default: /* STRING */
        k->c_type = SQL_C_CHAR; k->sql_type = SQL_WVARCHAR; k->size = v->v.s.len ? v->v.s.len : 1;
        k->ptr = v->v.s.ptr; k->ind = k->len = (SQLLEN)v->v.s.len;
        break;
    }
    return 0;
}

typedef struct snap_ctx {
    mssql_plan       *plan;
    const mssql_ci   *ci;
    char            **keys;
    size_t            n_keys;
    int              *key_col;    /* plan column of each key */
    const mcdc_value *lo, *hi;
    /* resume after a retry: the last key handed out (copied into keybuf) */
    bool              has_last;
    mcdc_value       *last;
    mcdc_buf          keybuf;
    rowset            r;
    mcdc_row_cb       cb;
    void             *payload;
    int               cb_rc;
    /* key_at and key_count (chunk planning) use the same context */
    mcdc_mssql_query  query;      /* MCDC_MSSQL_Q_SNAPSHOT, _KEY_AT or _KEY_COUNT */
    bool              desc;       /* key_at: in descending key order, from an upper bound */
    int64_t           n;          /* key_at: the offset */
    int64_t           count;      /* key_count: the answer */
} snap_ctx;

/* " (k1 OP1 ?) OR (k1 = ? AND k2 OP ?) ..." for a bound: @p lower true for lo (>=, or > when
 * @p strict), false for hi (<, or <= when not @p strict: key_at's descending start). */
static int key_pred(mcdc_buf *w, snap_ctx *c, bool lower, bool strict)
{
    int rc = mcdc_buf_puts(w, "(");
    for (size_t i = 0; rc == 0 && i < c->n_keys; i++) {
        if (i) rc = mcdc_buf_puts(w, " OR ");
        rc = mcdc_buf_puts(w, "(");
        for (size_t j = 0; rc == 0 && j <= i; j++) {
            char t[96];
            const mssql_col *col = &c->plan->cols[c->key_col[j]];
            if (j) rc = mcdc_buf_puts(w, " AND ");
            if (rc == 0) rc = mssql__quote(w, col->name, "key column");
            const char *op = j < i                                ? " = "
                             : lower                              ? (strict || j + 1 < c->n_keys ? " > " : " >= ")
                             : (strict || j + 1 < c->n_keys) ? " < "
                                                                  : " <= ";
            if (rc == 0) rc = mcdc_buf_puts(w, op);
            /* the bound as the column's declared type, so the comparison seeks the index */
            mssql__type_text(t, sizeof t, col);
            if (rc == 0) rc = mcdc_buf_printf(w, "CAST(? AS %s)", t);
        }
        if (rc == 0) rc = mcdc_buf_puts(w, ")");
    }
    if (rc == 0) rc = mcdc_buf_puts(w, ")");
    return rc;
}

static int bind_bound(mssql_source *s, SQLHSTMT st, snap_ctx *c, const mcdc_value *kv, key_param *kp, int *idx)
{
    for (size_t i = 0; i < c->n_keys; i++)
        for (size_t j = 0; j <= i; j++) {
            key_param *k = &kp[*idx - 1];
            key_param_of(k, &c->plan->schema->cols[c->key_col[j]], &kv[j]);
            if (!SQL_SUCCEEDED(SQLBindParameter(st, (SQLUSMALLINT)*idx, SQL_PARAM_INPUT, k->c_type, k->sql_type, k->size,
                                                k->digits, (SQLPOINTER)k->ptr, k->len, &k->ind)))
                return mssql__fail(s, SQL_HANDLE_STMT, st, "binding a key bound");
            (*idx)++;
        }
    return 0;
}

/* Copy the key of the row just handed out, for a resume. */
static int remember_key(snap_ctx *c, const mcdc_value *vals)
{
    mcdc_buf_clear(&c->keybuf);
    size_t total = 0;
    for (size_t i = 0; i < c->n_keys; i++) {
        const mcdc_value *v = &vals[c->key_col[i]];
        mcdc_type_id t = c->plan->schema->cols[c->key_col[i]].type;
        if ((t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY) && !v->is_null) total += v->v.s.len;
    }
    if (mcdc_buf_grow(&c->keybuf, total + 1) < 0) return MCDC_ENOMEM;
    for (size_t i = 0; i < c->n_keys; i++) {
        const mcdc_value *v = &vals[c->key_col[i]];
        mcdc_type_id t = c->plan->schema->cols[c->key_col[i]].type;
        c->last[i] = *v;
        if ((t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY) && !v->is_null) {
            size_t at = c->keybuf.len;
            mcdc_buf_put(&c->keybuf, v->v.s.ptr, v->v.s.len); /* room made above: never moves */
            c->last[i].v.s.ptr = c->keybuf.ptr + at;
        }
    }
    c->has_last = true;
    return 0;
}

static int snap_fn(mssql_source *s, void *payload)
{
    snap_ctx *c = payload;
    const mssql_plan *p = c->plan;
    int rc = 0;
    if (c->query == MCDC_MSSQL_Q_KEY_AT && c->has_last) return 0; /* answered before a retry */
    if (s->cfg.isolation == MCDC_MSSQL_ISO_SNAPSHOT) rc = mssql__exec_simple(s, MCDC_MSSQL_Q_SET_SNAPSHOT, NULL);
    if (rc == 0 && s->cfg.lock_timeout_ms >= 0) {
        mcdc_mssql_fill f = { .n = s->cfg.lock_timeout_ms };
        rc = mssql__exec_simple(s, MCDC_MSSQL_Q_SET_LOCK_TIMEOUT, &f);
    }
    if (rc < 0) return rc;
    mcdc_buf list = MCDC_BUF_INIT(1 << 20), table = MCDC_BUF_INIT(1024), where = MCDC_BUF_INIT(1 << 16),
             keys = MCDC_BUF_INIT(1 << 16);
    /* the select list in fetch order: bound columns, then long ones */
    for (int pos = META_COLS + 1; rc == 0 && pos <= META_COLS + (int)p->n_cols; pos++)
        for (size_t i = 0; rc == 0 && i < p->n_cols; i++)
            if (c->r.order[i] == pos) {
                if (list.len) rc = mcdc_buf_puts(&list, ", ");
                if (rc == 0) rc = mssql__col_expr(&list, &p->cols[i], NULL, true);
            }
    if (rc == 0 && (rc = mssql__quote(&table, c->ci->schema, "schema")) == 0 && (rc = mcdc_buf_putc(&table, '.')) == 0)
        rc = mssql__quote(&table, c->ci->table, "table");
    bool resume = c->has_last && c->query == MCDC_MSSQL_Q_SNAPSHOT;
    const mcdc_value *lower = resume ? c->last : c->lo;
    if (rc == 0 && (lower || c->hi)) {
        rc = mcdc_buf_puts(&where, " WHERE ");
        if (rc == 0 && lower) rc = key_pred(&where, c, true, resume);
        if (rc == 0 && lower && c->hi) rc = mcdc_buf_puts(&where, " AND ");
        if (rc == 0 && c->hi) rc = key_pred(&where, c, false, c->query != MCDC_MSSQL_Q_KEY_AT);
    }
    for (size_t i = 0; rc == 0 && i < c->n_keys; i++) {
        if (i) rc = mcdc_buf_puts(&keys, ", ");
        if (rc == 0) rc = mssql__quote(&keys, c->keys[i], "key column");
        if (rc == 0 && c->desc) rc = mcdc_buf_puts(&keys, " DESC");
    }
    mcdc_mssql_fill fill = { .list = list.ptr ? list.ptr : "", .table = table.ptr, .where = where.ptr ? where.ptr : "",
                             .keys = keys.ptr, .n = c->n };
    q x;
    memset(&x, 0, sizeof x);
    size_t n_params = c->n_keys * (c->n_keys + 1); /* per bound */
    key_param *kp = calloc(n_params + 1, sizeof *kp);
    if (!kp) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc == 0) rc = q_open(s, &x, c->query, &fill);
    int idx = 1;
    if (rc == 0 && lower) rc = bind_bound(s, x.st, c, lower, kp, &idx);
    if (rc == 0 && c->hi) rc = bind_bound(s, x.st, c, c->hi, kp, &idx);
    if (c->query == MCDC_MSSQL_Q_KEY_COUNT) {
        bool null = false;
        int got = 0;
        if (rc == 0) rc = q_run(s, &x, c->query);
        if (rc == 0 && (got = q_fetch(s, &x, "counting keys")) > 0) rc = mssql__get_int64(s, x.st, 1, &c->count, &null);
        if (rc == 0 && got < 0) rc = got;
        goto done;
    }
    /* the rowset binds its captured columns from position META_COLS + 1: shift to 1 */
    rowset *r = &c->r;
    SQLRETURN b = SQL_SUCCESS;
    if (rc == 0) {
        b = SQLSetStmtAttr(x.st, SQL_ATTR_ROW_ARRAY_SIZE, (SQLPOINTER)(uintptr_t)r->R, 0);
        if (SQL_SUCCEEDED(b)) b = SQLSetStmtAttr(x.st, SQL_ATTR_ROWS_FETCHED_PTR, &r->fetched, 0);
        if (SQL_SUCCEEDED(b)) b = SQLSetStmtAttr(x.st, SQL_ATTR_ROW_STATUS_PTR, r->status, 0);
        for (size_t i = 0; SQL_SUCCEEDED(b) && i < p->n_cols; i++)
            if (!p->cols[i].is_long)
                b = SQLBindCol(x.st, (SQLUSMALLINT)(r->order[i] - META_COLS), p->cols[i].c_type, r->data[i],
                               p->cols[i].width, r->ind[i]);
        if (!SQL_SUCCEEDED(b)) rc = mssql__fail(s, SQL_HANDLE_STMT, x.st, "binding result columns");
    }
    if (rc == 0) rc = q_run(s, &x, c->query);
    while (rc == 0) {
        SQLRETURN f = SQLFetch(x.st);
        if (f == SQL_NO_DATA) break;
        if (!SQL_SUCCEEDED(f)) {
            rc = mssql__fail(s, SQL_HANDLE_STMT, x.st, "reading the source table");
            break;
        }
        for (SQLULEN i = 0; rc == 0 && i < r->fetched; i++) {
            for (size_t k = 0; rc == 0 && k < p->n_cols; k++) {
                const mssql_col *col = &p->cols[k];
                const char *data;
                SQLLEN len;
                if (col->is_long) {
                    if ((rc = get_long(s, x.st, r->order[k] - META_COLS, col, &r->longs[k], &r->wide, &len)) < 0) break;
                    data = r->longs[k].ptr;
                } else {
                    data = r->data[k] + (size_t)col->width * i;
                    len = r->ind[k][i];
                }
                rc = mssql__to_value(col, &p->schema->cols[k], data, len, &r->vals[k], r->text[k], col->text_cap);
            }
            if (rc < 0) break;
            if (c->query == MCDC_MSSQL_Q_KEY_AT) {
                /* the key alone, in key_columns() order; one row at most */
                for (size_t k = 0; k < c->n_keys; k++) c->last[k] = r->vals[c->key_col[k]];
                c->cb_rc = c->cb(c->last, c->payload);
                c->has_last = true;
                break;
            }
            int cbr = c->cb(r->vals, c->payload);
            if (cbr != 0) {
                c->cb_rc = cbr;
                break;
            }
            if ((rc = remember_key(c, r->vals)) < 0) break;
        }
        if (c->cb_rc || (c->query == MCDC_MSSQL_Q_KEY_AT && c->has_last)) break;
    }
done:
    q_close(&x);
    free(kp);
    mcdc_buf_dispose(&list);
    mcdc_buf_dispose(&table);
    mcdc_buf_dispose(&where);
    mcdc_buf_dispose(&keys);
    if (rc == 0 && s->cfg.isolation == MCDC_MSSQL_ISO_SNAPSHOT) rc = mssql__exec_simple(s, MCDC_MSSQL_Q_SET_READ_COMMITTED, NULL);
    if (rc == 0 && s->cfg.lock_timeout_ms >= 0) {
        mcdc_mssql_fill f = { .n = -1 };
        rc = mssql__exec_simple(s, MCDC_MSSQL_Q_SET_LOCK_TIMEOUT, &f);
    }
    return rc;
}

/* A snapshot, key_at or key_count (c->query and its fields set by the caller). */
static int snap_run(mssql_source *s, snap_ctx *in, const char *ci_name, const mcdc_value *key_lo,
                    const mcdc_value *key_hi, mcdc_row_cb cb, void *payload)
{
    mssql_ci *ci;
    mssql_plan *p;
    int rc = mssql__find_ci(s, ci_name, &ci);
    if (rc == 0) rc = mssql__get_plan(s, ci, &p);
    if (rc < 0) return rc;
    snap_ctx c = *in;
    c.plan = p;
    c.ci = ci;
    c.lo = key_lo;
    c.hi = key_hi;
    c.cb = cb;
    c.payload = payload;
    c.keybuf = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 28);
    if ((rc = parse_index_list(ci->index_columns, &c.keys, &c.n_keys)) < 0) return rc;
    c.key_col = calloc(c.n_keys + 1, sizeof *c.key_col);
    c.last = calloc(c.n_keys + 1, sizeof *c.last);
    if (!c.key_col || !c.last) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc == 0 && c.n_keys == 0)
        rc = mcdc_error_set(MCDC_ESOURCE, "capture instance %s has no unique index (index_column_list is empty)", ci->name),
        mcdc_error_hint("a snapshot reads the table in key order: enable CDC with @index_name or a primary key");
    for (size_t i = 0; rc == 0 && i < c.n_keys; i++) {
        c.key_col[i] = -1;
        for (size_t k = 0; k < p->n_cols; k++)
            if (!strcmp(p->cols[k].name, c.keys[i])) c.key_col[i] = (int)k;
        if (c.key_col[i] < 0)
            rc = mcdc_error_set(MCDC_ESOURCE, "capture instance %s: key column %s is not captured", ci->name, c.keys[i]);
    }
    if (rc == 0) rc = rowset_alloc(&c.r, p);
    if (rc == 0) {
        char what[200];
        snprintf(what, sizeof what, "%s %s.%s", c.query == MCDC_MSSQL_Q_SNAPSHOT ? "reading"
                                               : c.query == MCDC_MSSQL_Q_KEY_AT  ? "seeking a key of"
                                                                                 : "counting the keys of",
                 ci->schema, ci->table);
        rc = mssql__retry(s, what, snap_fn, &c);
        rowset_free(&c.r, p->n_cols);
        if (rc < 0 && s->last_kind == MSSQL_ERR_PERMISSION)
            mcdc_error_hint("a DBA grants it: GRANT SELECT ON [%s].[%s] TO [%s];", ci->schema, ci->table,
                            s->login[0] ? s->login : s->cfg.user);
    }
    for (size_t i = 0; i < c.n_keys; i++) free(c.keys[i]);
    free(c.keys);
    free(c.key_col);
    free(c.last);
    mcdc_buf_dispose(&c.keybuf);
    in->count = c.count;
    return rc < 0 ? rc : c.cb_rc;
}

static int op_snapshot(mcdc_source *b, const char *ci_name, const mcdc_value *key_lo, const mcdc_value *key_hi,
                       mcdc_row_cb cb, void *payload)
{
    snap_ctx c = { .query = MCDC_MSSQL_Q_SNAPSHOT };
    return snap_run(S(b), &c, ci_name, key_lo, key_hi, cb, payload);
}

/* Keyset planning: the key @p n rows after @p from (included) in key order, as one
 * OFFSET n ROWS FETCH NEXT 1 ROWS ONLY over the key (statement key_at). */
static int op_key_at(mcdc_source *b, const char *ci_name, const mcdc_value *from, int64_t n, bool descending,
                     mcdc_row_cb cb, void *payload)
{
    if (n < 0) return mcdc_error_set(MCDC_EINVAL, "key_at: n must not be negative");
    snap_ctx c = { .query = MCDC_MSSQL_Q_KEY_AT, .desc = descending, .n = n };
    return snap_run(S(b), &c, ci_name, descending ? NULL : from, descending ? from : NULL, cb, payload);
}

/* Grid planning: COUNT_BIG(*) over key_lo <= key < key_hi (statement key_count). */
static int op_key_count(mcdc_source *b, const char *ci_name, const mcdc_value *key_lo, const mcdc_value *key_hi,
                        int64_t *out)
{
    snap_ctx c = { .query = MCDC_MSSQL_Q_KEY_COUNT };
    *out = 0;
    int rc = snap_run(S(b), &c, ci_name, key_lo, key_hi, NULL, NULL);
    if (rc == 0) *out = c.count;
    return rc;
}

/* The isolation and lock timeout of the snapshot reads (snap_fn sends them): a value the
 * connection string gave differently is a contradiction, refused. */
static int op_snapshot_reads(mcdc_source *b, mcdc_isolation isolation, int64_t lock_timeout_ms)
{
    mssql_source *s = S(b);
    mcdc_mssql_isolation want = isolation == MCDC_ISOLATION_SNAPSHOT ? MCDC_MSSQL_ISO_SNAPSHOT : MCDC_MSSQL_ISO_READ_COMMITTED;
    if (isolation != MCDC_ISOLATION_SOURCE && s->cfg.isolation_given && s->cfg.isolation != want) {
        mcdc_error_set(MCDC_EINVAL, "%s: isolationLevel=%s in the connection string, but %s asked for", s->cfg.masked,
                       s->cfg.isolation == MCDC_MSSQL_ISO_SNAPSHOT ? "snapshot" : "readCommitted",
                       want == MCDC_MSSQL_ISO_SNAPSHOT ? "snapshot" : "read-committed");
        return mcdc_error_hint("a setting has one spelling: drop one of them");
    }
    if (lock_timeout_ms >= 0 && s->cfg.lock_timeout_ms >= 0 && s->cfg.lock_timeout_ms != lock_timeout_ms) {
        mcdc_error_set(MCDC_EINVAL, "%s: lockTimeoutMs=%lld in the connection string, but %lld ms asked for",
                       s->cfg.masked, (long long)s->cfg.lock_timeout_ms, (long long)lock_timeout_ms);
        return mcdc_error_hint("a setting has one spelling: drop one of them");
    }
    if (lock_timeout_ms > INT32_MAX)
        return mcdc_error_set(MCDC_EINVAL, "lock timeout %lld ms: at most %d ms", (long long)lock_timeout_ms, INT32_MAX);
    if (isolation != MCDC_ISOLATION_SOURCE) s->cfg.isolation = want;
    if (lock_timeout_ms >= 0) s->cfg.lock_timeout_ms = lock_timeout_ms;
    return 0;
}

/* Statement identity (identity_azure on Azure SQL Database, which lacks
 * sys.database_recovery_status); a NULL GUID (the login cannot see its row) stays "". */
static int identity_fn(mssql_source *s, void *payload)
{
    mcdc_source_identity *out = payload;
    mcdc_mssql_query qn = s->engine_edition == 5 ? MCDC_MSSQL_Q_IDENTITY_AZURE : MCDC_MSSQL_Q_IDENTITY;
    q x;
    bool null = true;
    memset(out, 0, sizeof *out);
    int rc = q_open(s, &x, qn, NULL), got = 0;
    if (rc == 0) rc = q_run(s, &x, qn);
    if (rc == 0 && (got = q_fetch(s, &x, "reading the source's identity")) > 0) {
        rc = mssql__get_text(s, x.st, 1, out->server, sizeof out->server, &null);
        if (rc == 0) rc = mssql__get_text(s, x.st, 2, out->database, sizeof out->database, &null);
        if (rc == 0 && qn == MCDC_MSSQL_Q_IDENTITY)
            rc = mssql__get_text(s, x.st, 3, out->database_guid, sizeof out->database_guid, &null);
    }
    if (rc == 0 && got < 0) rc = got;
    q_end(&x, rc);
    for (char *p = out->database_guid; *p; p++)
        if (*p >= 'A' && *p <= 'F') *p = (char)(*p - 'A' + 'a');
    return rc;
}

static int op_identity(mcdc_source *b, mcdc_source_identity *out)
{
    return mssql__retry(S(b), "reading the source's identity", identity_fn, out);
}

static const char *op_server_time_zone(mcdc_source *b)
{
    mssql_source *s = S(b);
    return s->tz ? mcdc_tz_name(s->tz) : "UTC";
}

static void op_close(mcdc_source *b)
{
    mssql_source *s = S(b);
    mssql__disconnect(s);
    if (s->env) SQLFreeHandle(SQL_HANDLE_ENV, s->env);
    if (s->cfg.record_dump) {
        mssql__record(s); /* whatever the driver wrote while closing */
        unlink(s->cfg.record_dump);
    }
    cis_free(s->ci, s->n_ci);
    for (size_t i = 0; i < s->n_plans; i++) plan_clear(&s->plans[i]);
    free(s->plans);
    mcdc_tz_free(s->tz);
    mcdc_mssql_conn_free(&s->cfg);
    for (size_t i = 0; i < s->n_warnings; i++) free(s->warnings[i]);
    free(s->warnings);
    mssql__close_siblings(s);
    if (s->conn_text) {
        memset(s->conn_text, 0, strlen(s->conn_text));
        free(s->conn_text);
    }
    free(s->base.description);
    free(s);
}

static int op_take_warnings(mcdc_source *b, char ***out, size_t *n_out)
{
    mssql_source *s = S(b);
    *out = s->warnings;
    *n_out = s->n_warnings;
    s->warnings = NULL;
    s->n_warnings = 0;
    return 0;
}

static const mcdc_source_ops mssql_ops = {
    op_max_lsn, op_min_lsn, op_lsn_to_commit_ts, op_nth_commit_after, op_server_now, op_capture_instances,
    op_captured_columns, op_key_columns, op_ddl_history, op_read_changes, op_snapshot, op_server_time_zone, op_close,
    op_key_at, op_key_count, mssql__key_buckets, op_consistent_lsn, op_take_warnings, op_snapshot_reads, op_time_to_lsn,
    op_positions, op_identity, op_commit_at_or_before,
    NULL /* key_orders: a character key's order is its collation's */,
};

/* ---- opening ------------------------------------------------------------------------------- */

typedef struct tz_ctx {
    char    id[200];
    bool    has_id;
    int64_t offset_min, now_us;
} tz_ctx;

static int tz_fn(mssql_source *s, void *payload)
{
    tz_ctx *c = payload;
    int rc;
    c->has_id = false;
    if (s->major >= 16 || s->engine_edition == 5 || s->engine_edition == 8) {
        q x;
        bool null = true;
        int got = 0;
        rc = q_open(s, &x, MCDC_MSSQL_Q_TIME_ZONE_ID, NULL);
        if (rc == 0) rc = q_run(s, &x, MCDC_MSSQL_Q_TIME_ZONE_ID);
        if (rc == 0 && (got = q_fetch(s, &x, "reading the server's time zone")) > 0)
            rc = mssql__get_text(s, x.st, 1, c->id, sizeof c->id, &null);
        if (rc == 0 && got < 0) rc = got;
        q_end(&x, rc);
        if (rc < 0) return rc;
        c->has_id = !null && c->id[0];
    }
    now_ctx n;
    if ((rc = now_fn(s, &n)) < 0) return rc;
    c->offset_min = n.offset_min;
    c->now_us = n.utc_us;
    return 0;
}

static int setup_time_zone(mssql_source *s)
{
    tz_ctx c;
    int rc = mssql__retry(s, "reading the server's time zone", tz_fn, &c);
    if (rc < 0) return rc;
    const char *want = s->cfg.time_zone;
    bool is_auto = !strcasecmp(want, "auto");
    mcdc_tz *server = NULL;
    if (c.has_id) {
        if ((rc = mcdc_tz_load(&server, c.id)) < 0) {
            mcdc_error_prefix("the server's time zone");
            return mcdc_error_hint("give the zone in the connection string: sourceTimeZone=<IANA or Windows name>");
        }
    }
    if (!is_auto) {
        mcdc_tz *given;
        if ((rc = mcdc_tz_load(&given, want)) < 0) {
            mcdc_error_prefix("sourceTimeZone=%s", want);
            return rc;
        }
        if (server && strcmp(mcdc_tz_name(server), mcdc_tz_name(given))) {
            rc = mcdc_error_set(MCDC_EINVAL, "sourceTimeZone=%s but the server's zone is %s (%s)", want, c.id,
                                mcdc_tz_name(server));
            mcdc_error_hint("leave sourceTimeZone out (auto), or give the server's zone");
        } else if (!server && mcdc_tz_offset_at(given, c.now_us) / 60 != c.offset_min) {
            rc = mcdc_error_set(MCDC_EINVAL, "sourceTimeZone=%s gives UTC%+d min now, but the server's clock is at UTC%+d min",
                                want, (int)(mcdc_tz_offset_at(given, c.now_us) / 60), (int)c.offset_min);
            mcdc_error_hint("give the zone the server's clock follows");
        }
        mcdc_tz_free(server);
        if (rc < 0) {
            mcdc_tz_free(given);
            return rc;
        }
        s->tz = given;
        return 0;
    }
    if (server) {
        s->tz = server;
        return 0;
    }
    /* before SQL Server 2022: only the offset is known */
    char name[32];
    if (c.offset_min == 0) snprintf(name, sizeof name, "UTC");
    else if (c.offset_min % 60 == 0) snprintf(name, sizeof name, "Etc/GMT%+d", (int)(-c.offset_min / 60));
    else
        return mcdc_error_set(MCDC_EINVAL, "the server's clock is at UTC%+d min and SQL Server %d does not say its zone",
                              (int)c.offset_min, s->major),
               mcdc_error_hint("give it in the connection string: sourceTimeZone=<IANA or Windows name>");
    if ((rc = mcdc_tz_load(&s->tz, name)) < 0) return rc;
    s->tz_fixed = true;
    if (c.offset_min != 0)
        mcdc_log(MCDC_LOG_WARN, MSSQL_LOGGER, "SQL Server %d does not say its time zone: commit times are converted with "
                 "the fixed offset UTC%+d min, which is wrong across a daylight-saving change; give "
                 "sourceTimeZone=<zone> in the connection string", s->major, (int)c.offset_min);
    return 0;
}

static int connect_fn(mssql_source *s, void *payload)
{
    (void)s;
    (void)payload;
    return 0; /* mssql__retry connects first */
}

int mcdc_mssql_source_open(mcdc_source **out, const char *conn)
{
    *out = NULL;
    mssql_source *s = calloc(1, sizeof *s);
    if (!s) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    s->base.ops = &mssql_ops;
    s->dbc = SQL_NULL_HDBC;
    int rc = mcdc_mssql_conn_parse(&s->cfg, conn, NULL);
    if (rc < 0) {
        free(s);
        return rc;
    }
    s->page_rows = s->cfg.page_rows;
    s->max_retries = 3;
    s->backoff_base_ms = 1000;
    const char *b = getenv("MSSQL_CDC_RETRY_BASE_MS");
    if (b && *b) s->backoff_base_ms = atoll(b) < 0 ? 0 : atoll(b);
    s->offset_warn = (mcdc_ratelimit)MCDC_RATELIMIT_INIT(MCDC_RATELIMIT_WARN_US);
    size_t dl = strlen(s->cfg.masked) + 6;
    if (!(s->base.description = malloc(dl))) {
        op_close(&s->base);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    snprintf(s->base.description, dl, "odbc:%s", s->cfg.masked);
    if (!(s->conn_text = strdup(conn))) {
        op_close(&s->base);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    if ((rc = mssql__retry(s, "connecting", connect_fn, NULL)) < 0 || (rc = setup_time_zone(s)) < 0) {
        mcdc_error saved = *mcdc_error_last();
        op_close(&s->base);
        mcdc_error_restore(&saved);
        return rc;
    }
    *out = &s->base;
    return 0;
}

bool mcdc_mssql_source_is(const mcdc_source *src)
{
    return src && src->ops == &mssql_ops;
}
