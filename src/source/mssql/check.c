/*
 * source/mssql/check.c: `source check`, the read-only preflight of a SQL Server source.
 *
 * Asks what a stream will need, one finding each, with what to do about a problem: the
 * server and database, CDC on the database, the capture instances the login can see and
 * their tables, key columns, captured columns and types, SELECT on each change table and
 * source table, the time zone and how commit times are converted, max_lsn and its age (more
 * than 15 minutes behind the server's clock means capture is not running: it writes an idle
 * entry about every 5 minutes while it runs), min_lsn and the retention it implies. Sends
 * only statements of statements.c; writes nothing anywhere. A problem is a finding with
 * ok = false, not an error: the caller prints them all.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/mssql.h"
#include "mcdc/time.h"
#include "source/mssql/mssql_int.h"

#define STALE_US (INT64_C(15) * 60 * 1000000)

static mcdc_check_item *add(mcdc_check_report *r, bool ok, const char *what, const char *fix, const char *fmt, ...)
    MCDC_PRINTF(5, 6);

static mcdc_check_item *add(mcdc_check_report *r, bool ok, const char *what, const char *fix, const char *fmt, ...)
{
    mcdc_check_item *n = realloc(r->items, (r->n_items + 1) * sizeof *n);
    if (!n) return NULL;
    r->items = n;
    mcdc_check_item *it = &n[r->n_items++];
    memset(it, 0, sizeof *it);
    snprintf(it->what, sizeof it->what, "%s", what);
    snprintf(it->fix, sizeof it->fix, "%s", fix ? fix : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->found, sizeof it->found, fmt, ap);
    va_end(ap);
    it->ok = ok;
    if (!ok) r->ok = false;
    return it;
}

static void fmt_age(char *out, size_t cap, int64_t us)
{
    double s = (double)us / 1e6;
    if (s < 120) snprintf(out, cap, "%.0f s", s);
    else if (s < 7200) snprintf(out, cap, "%.0f min", s / 60);
    else if (s < 3 * 86400) snprintf(out, cap, "%.1f h", s / 3600);
    else snprintf(out, cap, "%.1f days", s / 86400);
}

typedef struct cdc_ctx {
    int64_t enabled;
    bool    has;
} cdc_ctx;

static int cdc_fn(mssql_source *s, void *payload)
{
    cdc_ctx *c = payload;
    mcdc_buf sql = MCDC_BUF_INIT(1024);
    SQLHSTMT st = SQL_NULL_HSTMT;
    bool null = true;
    c->has = false;
    int rc = mcdc_mssql_statement_render(&sql, MCDC_MSSQL_Q_DATABASE_CDC, NULL);
    if (rc == 0) rc = mssql__stmt(s, &st);
    if (rc == 0) rc = mssql__exec(s, st, sql.ptr, "database_cdc");
    if (rc == 0) {
        SQLRETURN f = SQLFetch(st);
        if (SQL_SUCCEEDED(f)) {
            rc = mssql__get_int64(s, st, 1, &c->enabled, &null);
            c->has = rc == 0 && !null;
        } else if (f != SQL_NO_DATA) {
            rc = mssql__fail(s, SQL_HANDLE_STMT, st, "database_cdc");
        }
    }
    mssql__stmt_end(st, rc);
    mcdc_buf_dispose(&sql);
    return rc;
}

static void check_instance(mcdc_check_report *r, mssql_source *s, mssql_ci *ci, int64_t now_us)
{
    char what[64], fix[512];
    snprintf(what, sizeof what, "capture instance %s", ci->name);
    add(r, true, what, NULL, "table %s.%s", ci->schema, ci->table);
    const char *user = s->login[0] ? s->login : s->cfg.user;
    /* key columns */
    if (!ci->index_columns[0])
        add(r, false, what, "enable CDC with a primary key or @index_name (a unique index)", "no unique index: keys unknown");
    else
        add(r, true, what, NULL, "key columns %s", ci->index_columns);
    /* captured columns and types */
    mssql_plan *p = NULL;
    if (mssql__load_plan(s, ci, &p) < 0) {
        const mcdc_error *e = mcdc_error_last();
        add(r, false, what, e->hint, "%s", e->message);
    } else {
        mcdc_buf b = MCDC_BUF_INIT(4096);
        for (size_t i = 0; i < p->n_cols; i++) {
            char t[96];
            mssql__type_text(t, sizeof t, &p->cols[i]);
            mcdc_buf_printf(&b, "%s%s %s", i ? ", " : "", p->cols[i].name, t);
        }
        add(r, true, what, NULL, "%zu captured columns: %s", p->n_cols, b.ptr ? b.ptr : "");
        mcdc_buf_dispose(&b);
    }
    mcdc_error_clear();
    /* permissions */
    mcdc_buf obj = MCDC_BUF_INIT(512);
    bool can = false;
    if (mssql__ct_name(&obj, ci->name) == 0 && mcdc_mssql__has_select(&s->base, obj.ptr, &can) == 0) {
        snprintf(fix, sizeof fix, "a DBA grants it: GRANT SELECT ON %s TO [%s];", obj.ptr, user);
        add(r, can, what, can ? NULL : fix, "SELECT on %s (every read): %s", obj.ptr, can ? "granted" : "missing");
    }
    mcdc_buf_clear(&obj);
    mcdc_buf_printf(&obj, "[%s].[%s]", ci->schema, ci->table);
    if (mcdc_mssql__has_select(&s->base, obj.ptr, &can) == 0) {
        /* every stream needs it: SQL Server shows a capture instance's columns and min_lsn only
         * to a login that can SELECT its source table's captured columns */
        snprintf(fix, sizeof fix, "a DBA grants it: GRANT SELECT ON %s TO [%s];", obj.ptr, user);
        add(r, can, what, can ? NULL : fix, "SELECT on %s (the instance's metadata and min_lsn, bootstrap, backfill): %s",
            obj.ptr, can ? "granted" : "missing");
    }
    mcdc_buf_dispose(&obj);
    mcdc_error_clear();
    /* min_lsn and retention */
    mcdc_lsn min;
    char l[MCDC_LSN_STRLEN];
    if (s->base.ops->min_lsn(&s->base, ci->name, &min) == 0) {
        int64_t ts;
        if (mcdc_lsn_is_zero(&min)) {
            add(r, true, what, "wait for the capture job to process the enable (up to a few minutes when the server is quiet)",
                "min_lsn 0x00000000000000000000: capture has not processed the enable yet");
        } else if (mssql__commit_ts(s, &min, &ts) == 0) {
            char t[MCDC_TIME_STRLEN], age[32];
            fmt_age(age, sizeof age, now_us - ts);
            add(r, true, what, NULL, "min_lsn %s (%s): changes are kept for about %s", mcdc_lsn_format(l, &min),
                mcdc_time_format(t, ts, 3, false), age);
        } else {
            add(r, true, what, NULL, "min_lsn %s", mcdc_lsn_format(l, &min));
        }
    }
    mcdc_error_clear();
}

int mcdc_mssql_check(mcdc_check_report *out, mcdc_source *src, const char *const *cis, size_t n_cis)
{
    memset(out, 0, sizeof *out);
    out->ok = true;
    if (!mcdc_mssql_source_is(src))
        return mcdc_error_set(MCDC_EINVAL, "source check reads SQL Server sources (odbc:...)"),
               mcdc_error_hint("for the simulator, mssql-cdc sim status shows its state");
    mssql_source *s = (mssql_source *)src;
    int rc;
    add(out, true, "server", NULL, "SQL Server %s (%s, engine edition %d)", s->version, s->edition, s->engine_edition);
    if (s->major && s->major < 13 && s->engine_edition != 5 && s->engine_edition != 8)
        add(out, false, "server", "upgrade to SQL Server 2016 SP3 or later", "version %d is older than SQL Server 2016",
            s->major);
    add(out, true, "database", NULL, "%s, as login %s", s->database, s->login);
    cdc_ctx c;
    if ((rc = mssql__retry(s, "reading sys.databases", cdc_fn, &c)) < 0) return rc;
    if (c.has && !c.enabled)
        add(out, false, "database", "a member of sysadmin runs EXEC sys.sp_cdc_enable_db; in the database",
            "CDC is not enabled on %s", s->database);
    else if (c.has)
        add(out, true, "database", NULL, "CDC is enabled");
    /* the clock and the time zone */
    int64_t now;
    if ((rc = src->ops->server_now(src, &now)) < 0) return rc;
    char t[MCDC_TIME_STRLEN];
    add(out, true, "time zone", s->tz_fixed && mcdc_tz_offset_at(s->tz, now) != 0
                                    ? "give the zone with sourceTimeZone=<zone> in the connection string"
                                    : NULL,
        "%s%s; server clock %s UTC", mcdc_tz_name(s->tz),
        s->tz_fixed ? " (a fixed offset: SQL Server before 2022 does not say its zone)" : "",
        mcdc_time_format(t, now, 3, false));
    /* max_lsn and its age */
    mcdc_lsn max;
    char l[MCDC_LSN_STRLEN];
    if ((rc = src->ops->max_lsn(src, &max)) < 0) return rc;
    if (mcdc_lsn_is_zero(&max)) {
        add(out, false, "max_lsn", "start SQL Server Agent and the capture job (EXEC sys.sp_cdc_help_jobs; shows it)",
            "none: capture has not processed anything in this database");
    } else {
        int64_t ts;
        if ((rc = mssql__commit_ts(s, &max, &ts)) < 0) return rc;
        char age[32];
        fmt_age(age, sizeof age, now - ts);
        bool stale = now - ts > STALE_US;
        add(out, !stale, "max_lsn",
            stale ? "SQL Server Agent or the capture job is not running (capture writes an entry about every 5 minutes "
                    "while it runs): start the Agent, or EXEC sys.sp_cdc_start_job;"
                  : NULL,
            "%s at %s, %s behind the server's clock%s", mcdc_lsn_format(l, &max), mcdc_time_format(t, ts, 3, false), age,
            stale ? " (stale)" : "");
    }
    /* capture instances */
    if ((rc = mssql__load_cis(s)) < 0) return rc;
    if (n_cis == 0) {
        if (s->n_ci == 0)
            add(out, false, "capture instances", "enable CDC on a table (sys.sp_cdc_enable_table) and grant the login "
                "SELECT on it", "none visible to login %s", s->login);
        /* by name: a lookup may reload (and move) the list */
        size_t n = s->n_ci;
        char **names = calloc(n + 1, sizeof *names);
        for (size_t i = 0; names && i < n; i++) names[i] = strdup(s->ci[i].name);
        for (size_t i = 0; names && i < n; i++) {
            mssql_ci *ci;
            if (names[i] && mssql__find_ci(s, names[i], &ci) == 0) check_instance(out, s, ci, now);
            mcdc_error_clear();
            free(names[i]);
        }
        free(names);
    }
    for (size_t i = 0; i < n_cis; i++) {
        mssql_ci *ci;
        char what[64];
        snprintf(what, sizeof what, "capture instance %s", cis[i]);
        if (mssql__find_ci(s, cis[i], &ci) < 0) {
            const mcdc_error *e = mcdc_error_last();
            add(out, false, what, e->hint, "%s", e->message);
            mcdc_error_clear();
            continue;
        }
        check_instance(out, s, ci, now);
    }
    return 0;
}

void mcdc_check_report_free(mcdc_check_report *r)
{
    if (!r) return;
    free(r->items);
    memset(r, 0, sizeof *r);
}
