/*
 * report/load.c: gather the report's data from the facts and control tables.
 *
 * Reads only. Batches are the facts rows (event rows are kept and marked, so the charts
 * can leave them out); the latest verdicts are the control rows; the verdict over time is
 * read from the control table's versions, one point each time a table's finalized_until
 * changed. Cost: one scan of facts, plus one small scan per control version read (the
 * control table keeps one file per row, docs/decisions/0002). The last reconcile per silver
 * table is one scan of the reconcile report table, keeping per silver only the run with the
 * newest run_at (ties: the larger run_id) and its counts, so memory is one entry per silver.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/delta.h"
#include "mcdc/finalize.h"
#include "mcdc/report.h"
#include "mcdc/time.h"

static const char *const facts_cols[] = {
    "target", "event", "batch_id", "rows", "inserts", "updates", "deletes",
    "end_commit_ts", "written_at", "capture_lag_seconds", "ingestion_lag_seconds", "source_max_commit_ts",
};
enum { F_TARGET, F_EVENT, F_BATCH, F_ROWS, F_INS, F_UPD, F_DEL, F_END, F_WRITTEN, F_CAP, F_ING, F_SRCMAX, F_N };

static int64_t ival(const mcdc_value *v)
{
    return v->is_null ? 0 : v->v.i;
}

static int64_t tval(const mcdc_value *v)
{
    return v->is_null ? MCDC_REPORT_NONE : v->v.i;
}

static int64_t lag_ms(const mcdc_value *v)
{
    return v->is_null || isnan(v->v.d) ? MCDC_REPORT_NONE : (int64_t)llround(v->v.d * 1000.0);
}

static char *str(const mcdc_value *v)
{
    if (v->is_null)
        return NULL;
    char *s = malloc(v->v.s.len + 1);
    if (s) {
        memcpy(s, v->v.s.ptr, v->v.s.len);
        s[v->v.s.len] = '\0';
    }
    return s;
}

static int cmp_batch(const void *a, const void *b)
{
    const mcdc_report_batch *x = a, *y = b;
    int c = strcmp(x->target ? x->target : "", y->target ? y->target : "");
    if (c)
        return c;
    return x->batch_id < y->batch_id ? -1 : x->batch_id > y->batch_id;
}

static int load_facts(mcdc_report_data *d, const char *path)
{
    mcdc_delta_snapshot *snap = NULL;
    mcdc_delta_scan *scan = NULL;
    mcdc_delta_scan_options o = MCDC_DELTA_SCAN_OPTIONS_INIT;
    const mcdc_value *row;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc < 0)
        return rc;
    o.columns = facts_cols;
    o.n_columns = F_N;
    rc = mcdc_delta_scan_open(&scan, snap, &o);
    while (rc == 0 && (rc = mcdc_delta_scan_next(scan, &row)) == 1) {
        mcdc_report_batch b = {0};
        b.target = str(&row[F_TARGET]);
        b.event = str(&row[F_EVENT]);
        b.batch_id = ival(&row[F_BATCH]);
        b.rows = ival(&row[F_ROWS]);
        b.inserts = ival(&row[F_INS]);
        b.updates = ival(&row[F_UPD]);
        b.deletes = ival(&row[F_DEL]);
        b.end_commit_ts_us = tval(&row[F_END]);
        b.written_at_us = tval(&row[F_WRITTEN]);
        b.capture_lag_ms = lag_ms(&row[F_CAP]);
        b.ingestion_lag_ms = lag_ms(&row[F_ING]);
        int64_t src = tval(&row[F_SRCMAX]);
        if (src == MCDC_REPORT_NONE)
            src = b.end_commit_ts_us;
        if (src != MCDC_REPORT_NONE && (d->source_now_us == MCDC_REPORT_NONE || src > d->source_now_us))
            d->source_now_us = src;
        rc = mcdc_report_add_batch(d, &b);
        free(b.target);
        free(b.event);
    }
    mcdc_delta_scan_free(scan);
    mcdc_delta_snapshot_free(snap);
    if (rc < 0)
        return mcdc_error_prefix("facts table %s", path);
    if (d->n_batches > 1)
        qsort(d->batches, d->n_batches, sizeof *d->batches, cmp_batch);
    return 0;
}

/* The verdicts of one version of the control table, appended as points where they moved. */
typedef struct seen {
    char   *table;
    int64_t until_us;
} seen;

static int load_points(mcdc_report_data *d, const char *path, int64_t max_versions)
{
    static const char *const cols[] = {"table_name", "finalized_until", "end_commit_ts"};
    int64_t latest;
    seen *s = NULL;
    size_t n_seen = 0;
    int rc = mcdc_delta_latest_version(&latest, path);
    if (rc < 0)
        return rc;
    int64_t first = max_versions > 0 && latest + 1 > max_versions ? latest + 1 - max_versions : 0;
    for (int64_t v = first; v <= latest && rc >= 0; v++) {
        mcdc_delta_snapshot *snap = NULL;
        mcdc_delta_scan *scan = NULL;
        mcdc_delta_scan_options o = MCDC_DELTA_SCAN_OPTIONS_INIT;
        const mcdc_value *row;
        o.columns = cols;
        o.n_columns = 3;
        rc = mcdc_delta_snapshot_open(&snap, path, v);
        if (rc == MCDC_ENOTFOUND) { /* a version removed by log cleanup */
            mcdc_error_clear();
            rc = 0;
            continue;
        }
        if (rc == 0)
            rc = mcdc_delta_scan_open(&scan, snap, &o);
        while (rc == 0 && (rc = mcdc_delta_scan_next(scan, &row)) == 1) {
            if (row[0].is_null || row[1].is_null || row[2].is_null) {
                rc = 0;
                continue;
            }
            size_t k = 0;
            while (k < n_seen && (strlen(s[k].table) != row[0].v.s.len ||
                                  memcmp(s[k].table, row[0].v.s.ptr, row[0].v.s.len)))
                k++;
            if (k < n_seen && s[k].until_us == row[1].v.i) {
                rc = 0;
                continue;
            }
            if (k == n_seen) {
                seen *p = realloc(s, (n_seen + 1) * sizeof *s);
                if (!p) {
                    rc = mcdc_error_set(MCDC_ENOMEM, "report: out of memory");
                    break;
                }
                s = p;
                s[n_seen].table = str(&row[0]);
                n_seen++;
            }
            s[k].until_us = row[1].v.i;
            mcdc_report_point pt = {s[k].table, row[2].v.i, row[1].v.i};
            rc = mcdc_report_add_point(d, &pt);
        }
        mcdc_delta_scan_free(scan);
        mcdc_delta_snapshot_free(snap);
    }
    for (size_t k = 0; k < n_seen; k++)
        free(s[k].table);
    free(s);
    return rc < 0 ? mcdc_error_prefix("control table %s", path) : 0;
}

static int load_verdicts(mcdc_report_data *d, const char *path)
{
    mcdc_control_row *rows = NULL;
    size_t n = 0;
    int rc = mcdc_control_read_all(&rows, &n, path);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        mcdc_report_verdict v = {0};
        v.table = rows[i].table_name;
        v.finalized_until_us = rows[i].finalized_until.has ? rows[i].finalized_until.until_us : MCDC_REPORT_NONE;
        if (rows[i].has_end_lsn)
            mcdc_lsn_format(v.end_lsn, &rows[i].end_lsn);
        v.end_commit_ts_us = rows[i].has_end_commit_ts ? rows[i].end_commit_ts_us : MCDC_REPORT_NONE;
        v.updated_at_us = rows[i].has_updated_at ? rows[i].updated_at_us : MCDC_REPORT_NONE;
        rc = mcdc_report_add_verdict(d, &v);
    }
    mcdc_control_rows_free(rows, n);
    return rc;
}

static bool vis(const mcdc_value *v, const char *s)
{
    return !v->is_null && v->v.s.len == strlen(s) && !memcmp(v->v.s.ptr, s, v->v.s.len);
}

static int cmp_reconcile(const void *a, const void *b)
{
    const mcdc_report_reconcile *x = a, *y = b;
    return strcmp(x->silver, y->silver);
}

/* Add one named line ("STATUS text") to @p r, at most 10. */
static int add_named(mcdc_report_reconcile *r, size_t *n_named, const char *status, const mcdc_value *text)
{
    if (*n_named >= 10 || text->is_null)
        return 0;
    size_t old = r->named ? strlen(r->named) : 0, len = strlen(status) + 1 + text->v.s.len + 1;
    char *p = realloc(r->named, old + len + 1);
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "report: out of memory");
    r->named = p;
    snprintf(p + old, len + 1, "%s %.*s\n", status, (int)text->v.s.len, text->v.s.ptr);
    (*n_named)++;
    return 0;
}

int mcdc_report_load_reconcile(mcdc_report_data *d, const char *path)
{
    static const char *const cols[] = {"run_id", "run_at", "silver", "silver_version", "status", "failure_type", "key",
                                       "detail"};
    enum { R_RUN, R_AT, R_SILVER, R_VERSION, R_STATUS, R_FAILURE, R_KEY, R_DETAIL };
    mcdc_delta_snapshot *snap = NULL;
    mcdc_delta_scan *scan = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, path, -1);
    if (rc < 0)
        return rc;
    if (strcmp(mcdc_delta_snapshot_config(snap, "mcdc.kind", ""), "reconcile") != 0) {
        mcdc_delta_snapshot_free(snap);
        mcdc_error_set(MCDC_EINVAL, "%s is not a reconcile report table (mcdc.kind is not reconcile)", path);
        return mcdc_error_hint("pass the table reconcile --report writes");
    }
    mcdc_delta_scan_options o = MCDC_DELTA_SCAN_OPTIONS_INIT;
    o.columns = cols;
    o.n_columns = sizeof cols / sizeof cols[0];
    mcdc_report_reconcile *runs = NULL;
    size_t n = 0, *n_named = NULL;
    const mcdc_value *row;
    rc = mcdc_delta_scan_open(&scan, snap, &o);
    while (rc == 0 && (rc = mcdc_delta_scan_next(scan, &row)) == 1) {
        rc = 0;
        if (row[R_RUN].is_null || row[R_AT].is_null || row[R_SILVER].is_null || row[R_RUN].v.s.len >= 37)
            continue;
        size_t k = 0;
        while (k < n && !vis(&row[R_SILVER], runs[k].silver))
            k++;
        if (k == n) {
            mcdc_report_reconcile *p = realloc(runs, (n + 1) * sizeof *p);
            size_t *q = realloc(n_named, (n + 1) * sizeof *q);
            if (p) runs = p;
            if (q) n_named = q;
            if (!p || !q || !(runs[n].silver = str(&row[R_SILVER]))) {
                rc = mcdc_error_set(MCDC_ENOMEM, "report: out of memory");
                break;
            }
            runs[n].run_at_us = MCDC_REPORT_NONE;
            runs[n].named = NULL;
            n++;
        }
        mcdc_report_reconcile *r = &runs[k];
        int64_t at = row[R_AT].v.i;
        char id[37];
        memcpy(id, row[R_RUN].v.s.ptr, row[R_RUN].v.s.len);
        id[row[R_RUN].v.s.len] = 0;
        int c = at < r->run_at_us ? -1 : at > r->run_at_us ? 1 : strcmp(id, r->run_id);
        if (c < 0)
            continue;
        if (c > 0) { /* a newer run of this silver: start over */
            char *silver = r->silver;
            free(r->named);
            memset(r, 0, sizeof *r);
            r->silver = silver;
            r->run_at_us = at;
            memcpy(r->run_id, id, sizeof id);
            n_named[k] = 0;
        }
        if (!row[R_VERSION].is_null)
            r->silver_version = row[R_VERSION].v.i;
        if (row[R_FAILURE].is_null) { /* a bucket row */
            r->buckets++;
            if (vis(&row[R_STATUS], "MATCH")) r->matched++;
            else if (vis(&row[R_STATUS], "IN_FLIGHT")) r->in_flight++;
            else r->mismatched++;
            continue;
        }
        const mcdc_value *f = &row[R_FAILURE];
        if (vis(f, "CHUNK_ROWS")) { r->chunks++; rc = add_named(r, &n_named[k], "CHUNK_ROWS", &row[R_DETAIL]); continue; }
        if (vis(f, "IN_FLIGHT")) { r->keys_in_flight++; continue; }
        if (vis(f, "MISSING")) r->missing++;
        else if (vis(f, "EXTRA")) r->extra++;
        else if (vis(f, "DIFFERENT")) r->different++;
        else if (vis(f, "DUPLICATE")) r->duplicate++;
        char st[32];
        snprintf(st, sizeof st, "%.*s", (int)(f->v.s.len < 31 ? f->v.s.len : 31), f->v.s.ptr);
        rc = add_named(r, &n_named[k], st, &row[R_KEY]);
    }
    mcdc_delta_scan_free(scan);
    mcdc_delta_snapshot_free(snap);
    if (rc == 0 && n > 1)
        qsort(runs, n, sizeof *runs, cmp_reconcile);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = mcdc_report_add_reconcile(d, &runs[i]);
    for (size_t i = 0; i < n; i++) {
        free(runs[i].silver);
        free(runs[i].named);
    }
    free(runs);
    free(n_named);
    return rc < 0 ? mcdc_error_prefix("reconcile report table %s", path) : 0;
}

int mcdc_report_load(mcdc_report_data *d, const char *facts_path, const char *control_path,
                     int64_t max_versions)
{
    int rc;
    d->source_now_us = MCDC_REPORT_NONE;
    d->generated_at_us = mcdc_time_now_us();
    if ((rc = load_facts(d, facts_path)) < 0)
        return rc;
    if ((rc = load_verdicts(d, control_path)) < 0)
        return rc;
    return load_points(d, control_path, max_versions);
}
