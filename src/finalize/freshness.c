/*
 * finalize/freshness.c: how old a table's verdict is, and whether the stream behind it
 * still moves (anchor-features §1 "monitoring/alerts"; docs/guides/finalization.md).
 *
 * Three ages against one clock (the source's server_now when a source is given, else
 * the host's): the verdict's (now - finalized_until), the newest end offset the facts
 * table recorded for the table (now - max end_commit_ts of its batch rows), and the
 * source's (now - commit time of max_lsn). A verdict that ages while the facts keep
 * moving is held (the tracker or the advance job fails); when both age, the stream
 * stopped or the source is quiet.
 *
 * Facts are read, never written. Data files whose stats prove they hold no row of the
 * table, or no end_commit_ts newer than one already found, are not opened.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/parquet.h"
#include "mcdc/source.h"

/* Delta stats keep timestamps in milliseconds; a max may be up to 1 ms below the value. */
#define STATS_TS_SLACK_US 1000

typedef struct facts_best {
    bool    has_end;
    int64_t end_us;
    bool    has_written;
    int64_t written_us;
    bool    has_src;
    int64_t src_us;
} facts_best;

typedef struct cand_file {
    size_t  index;   /* in snap->files */
    bool    has_max; /* stats give max end_commit_ts */
    int64_t max_us;
} cand_file;

static int cmp_cand(const void *a, const void *b)
{
    const cand_file *x = a, *y = b;
    if (x->has_max != y->has_max)
        return x->has_max ? 1 : -1; /* unknown first: they cannot be pruned */
    if (x->max_us != y->max_us)
        return x->max_us < y->max_us ? 1 : -1;
    return 0;
}

/* From a file's stats: may it hold rows of @p key, and its max end_commit_ts. */
static bool stats_may_match(const char *stats, const char *key, bool *has_max, int64_t *max_us)
{
    *has_max = false;
    if (!stats)
        return true;
    json_t *o = json_loads(stats, 0, NULL);
    if (!o)
        return true;
    bool may = true;
    json_t *mins = json_object_get(o, "minValues"), *maxs = json_object_get(o, "maxValues");
    const char *tmin = json_string_value(json_object_get(mins, "target"));
    const char *tmax = json_string_value(json_object_get(maxs, "target"));
    if (tmin && strcmp(key, tmin) < 0)
        may = false;
    if (tmax && strlen(tmax) < 32 && strcmp(key, tmax) > 0)
        may = false; /* a max of 32 characters or more may be truncated */
    const char *emax = json_string_value(json_object_get(maxs, "end_commit_ts"));
    if (emax && mcdc_time_parse(max_us, emax) == 0) {
        *has_max = true;
        *max_us += STATS_TS_SLACK_US;
    }
    json_decref(o);
    return may;
}

static bool json_ts(json_t *row, const char *col, int64_t *out)
{
    const char *s = json_string_value(json_object_get(row, col));
    return s && mcdc_time_parse(out, s) == 0;
}

static int scan_file(facts_best *b, const mcdc_delta_snapshot *snap, const mcdc_delta_file *f,
                     const char *key, const char *const *cols, size_t n_cols)
{
    char *abs = mcdc_delta_file_abspath(snap, f->path);
    if (!abs)
        return mcdc_error_set(MCDC_ENOMEM, "facts: out of memory");
    mcdc_parquet_reader *rd = NULL;
    int rc = mcdc_parquet_reader_open(&rd, abs, NULL);
    free(abs);
    if (rc == 0)
        rc = mcdc_parquet_reader_select(rd, cols, n_cols);
    if (rc == 0) {
        mcdc_value v;
        memset(&v, 0, sizeof v);
        v.v.s.ptr = key;
        v.v.s.len = strlen(key);
        rc = mcdc_parquet_reader_filter(rd, "target", MCDC_PARQUET_EQ, &v);
    }
    while (rc == 0) {
        json_t *row = NULL;
        rc = mcdc_parquet_reader_next_json(rd, &row);
        if (rc <= 0)
            break;
        rc = 0;
        const char *target = json_string_value(json_object_get(row, "target"));
        json_t *ev = json_object_get(row, "event");
        if (target && strcmp(target, key) == 0 && (!ev || json_is_null(ev))) {
            int64_t t;
            if (json_ts(row, "end_commit_ts", &t) && (!b->has_end || t > b->end_us)) {
                b->has_end = true;
                b->end_us = t;
                if (json_ts(row, "source_max_commit_ts", &t)) {
                    b->has_src = true;
                    b->src_us = t;
                }
            }
            if (json_ts(row, "written_at", &t) && (!b->has_written || t > b->written_us)) {
                b->has_written = true;
                b->written_us = t;
            }
        }
        json_decref(row);
    }
    mcdc_parquet_reader_free(rd);
    return rc < 0 ? rc : 0;
}

static int read_facts(facts_best *b, const char *facts_path, const char *key)
{
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, facts_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_set(MCDC_ENOTFOUND, "facts table %s does not exist", facts_path);
        return mcdc_error_hint("give the facts table the stream writes (stream --facts)");
    }
    if (rc < 0)
        return rc;
    static const char *const wanted[] = { "target", "end_commit_ts", "event", "written_at",
                                          "source_max_commit_ts" };
    const char *cols[5];
    size_t n_cols = 0;
    for (size_t i = 0; i < 5; i++)
        if (mcdc_delta_schema_find(snap->schema, wanted[i]) >= 0)
            cols[n_cols++] = wanted[i];
    if (n_cols < 2 || strcmp(cols[0], "target") || strcmp(cols[1], "end_commit_ts")) {
        rc = mcdc_error_set(MCDC_EINVAL, "%s: not a facts table: no target or end_commit_ts column",
                            facts_path);
        mcdc_delta_snapshot_free(snap);
        return rc;
    }
    cand_file *c = calloc(snap->n_files ? snap->n_files : 1, sizeof *c);
    if (!c) {
        mcdc_delta_snapshot_free(snap);
        return mcdc_error_set(MCDC_ENOMEM, "facts: out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < snap->n_files; i++) {
        cand_file x = { i, false, 0 };
        if (stats_may_match(snap->files[i].stats, key, &x.has_max, &x.max_us))
            c[n++] = x;
    }
    qsort(c, n, sizeof *c, cmp_cand);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (c[i].has_max && b->has_end && c[i].max_us <= b->end_us && b->has_written)
            continue; /* cannot hold a newer end offset */
        rc = scan_file(b, snap, &snap->files[c[i].index], key, cols, n_cols);
        if (rc < 0)
            mcdc_error_prefix("facts table %s", facts_path);
    }
    free(c);
    mcdc_delta_snapshot_free(snap);
    return rc;
}

int mcdc_control_freshness(mcdc_freshness *out, const char *path, const char *table_name,
                           const char *facts_path, struct mcdc_source *src)
{
    MCDC_ASSERT_ARG(out && path && table_name);
    mcdc_freshness f;
    memset(&f, 0, sizeof f);
    mcdc_control_row row;
    int rc = mcdc_control_get(&row, path, table_name);
    if (rc < 0)
        return rc;
    f.verdict = row.finalized_until;
    f.has_updated_at = row.has_updated_at;
    f.updated_at_us = row.updated_at_us;
    mcdc_control_row_clear(&row);

    facts_best b;
    memset(&b, 0, sizeof b);
    if (facts_path && (rc = read_facts(&b, facts_path, table_name)) < 0)
        return rc;

    f.now_us = mcdc_time_now_us();
    if (src) {
        mcdc_lsn max;
        int64_t ts;
        if ((rc = src->ops->server_now(src, &f.now_us)) < 0)
            return rc;
        f.now_is_source = true;
        if ((rc = src->ops->max_lsn(src, &max)) < 0)
            return rc;
        if (!mcdc_lsn_is_zero(&max)) {
            rc = src->ops->lsn_to_commit_ts(src, &max, &ts);
            if (rc == 0) {
                f.has_source = true;
                f.source_max_commit_ts_us = ts;
            } else if (rc != MCDC_ENOTFOUND) {
                return rc;
            }
            mcdc_error_clear();
        }
    } else if (b.has_src) {
        f.has_source = true;
        f.source_max_commit_ts_us = b.src_us;
    }
    if (f.verdict.has)
        f.verdict_age_us = f.now_us - f.verdict.until_us;
    f.has_facts_end = b.has_end;
    f.facts_end_commit_ts_us = b.end_us;
    f.facts_end_age_us = b.has_end ? f.now_us - b.end_us : 0;
    f.has_facts_written = b.has_written;
    f.facts_written_at_us = b.written_us;
    if (f.has_source)
        f.source_lag_us = f.now_us - f.source_max_commit_ts_us;
    *out = f;
    return 0;
}
