/*
 * run/counted.c: a config source as `mssql-cdc run` shares it between its tables: the
 * queries and errors of every connection to it (mcdc_source_queries_total and
 * mcdc_source_errors_total), and the shared max_lsn poll that lets an idle table skip its
 * round.
 *
 * The tables of a source share a pool of connections: a round takes an idle one (or opens
 * one) and gives it back, so there are at most as many as rounds run at once (twice
 * --workers: ADR 0063), and what a connection caches (the simulator's commit-time index)
 * serves every table. A connection is wrapped in a counting source that forwards each operation to
 * the real one and counts it (and its failure) on the config source. The shared poll asks
 * max_lsn on a connection of its own, at most once per freshness window, so the idle
 * tables of one source cost one max_lsn query per poll however many they are.
 * A failure is an operation that returned an error other than MCDC_ENOTFOUND (an answer:
 * no mapping entry at that LSN, no such capture instance), or a connection that could not
 * be opened. Guarantees: counters only grow, from 0 in each process; the wrapper answers exactly what
 * the wrapped source answers; the poll never answers a value older than the window asked.
 */
#include <stdlib.h>
#include <string.h>

#include "run_int.h"

static const char *const op_names[MCDC_RUN_SRC_NOPS] = {
    "max_lsn", "min_lsn", "lsn_to_commit_ts", "nth_commit_after", "server_now",
    "capture_instances", "captured_columns", "key_columns", "ddl_history", "read_changes",
    "snapshot", "key_at", "key_count", "key_buckets", "consistent_lsn", "time_to_lsn",
    "positions", "commit_at_or_before",
};

/* every operation is forwarded: a new one in mcdc_source_ops must be added here */
_Static_assert(sizeof(mcdc_source_ops) == 24 * sizeof(void (*)(void)),
               "run/counted.c forwards every operation of mcdc_source_ops");

const char *mcdc_run__src_op_name(int op)
{
    return op >= 0 && op < MCDC_RUN_SRC_NOPS ? op_names[op] : "?";
}

typedef struct counted {
    mcdc_source      base;
    mcdc_source_ops  ops;
    mcdc_source     *inner;
    mcdc_run__source *rs;
} counted;

static int count(mcdc_source *s, int op, int rc)
{
    mcdc_run__source *rs = ((counted *)s)->rs;
    __atomic_add_fetch(&rs->queries[op], 1, __ATOMIC_RELAXED);
    if (rc < 0 && rc != MCDC_ENOTFOUND) /* "no such entry" is an answer, not a failure */
        __atomic_add_fetch(&rs->errors, 1, __ATOMIC_RELAXED);
    return rc;
}

#define IN(s) (((counted *)(s))->inner)

static int c_max_lsn(mcdc_source *s, mcdc_lsn *out)
{
    return count(s, MCDC_RUN_SRC_MAX_LSN, IN(s)->ops->max_lsn(IN(s), out));
}
static int c_min_lsn(mcdc_source *s, const char *ci, mcdc_lsn *out)
{
    return count(s, 1, IN(s)->ops->min_lsn(IN(s), ci, out));
}
static int c_lsn_to_commit_ts(mcdc_source *s, const mcdc_lsn *lsn, int64_t *out)
{
    return count(s, 2, IN(s)->ops->lsn_to_commit_ts(IN(s), lsn, out));
}
static int c_nth_commit_after(mcdc_source *s, const mcdc_lsn *after, int64_t n, mcdc_lsn *out,
                              int64_t *ts, int64_t *found)
{
    return count(s, 3, IN(s)->ops->nth_commit_after(IN(s), after, n, out, ts, found));
}
static int c_server_now(mcdc_source *s, int64_t *out)
{
    return count(s, 4, IN(s)->ops->server_now(IN(s), out));
}
static int c_capture_instances(mcdc_source *s, const char *table, mcdc_capture_instance **out,
                               size_t *n)
{
    return count(s, 5, IN(s)->ops->capture_instances(IN(s), table, out, n));
}
static int c_captured_columns(mcdc_source *s, const char *ci, mcdc_schema **out)
{
    return count(s, 6, IN(s)->ops->captured_columns(IN(s), ci, out));
}
static int c_key_columns(mcdc_source *s, const char *ci, char ***out, size_t *n)
{
    return count(s, 7, IN(s)->ops->key_columns(IN(s), ci, out, n));
}
static int c_ddl_history(mcdc_source *s, const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                         mcdc_ddl_entry **out, size_t *n)
{
    return count(s, 8, IN(s)->ops->ddl_history(IN(s), ci, after, upto, out, n));
}
static int c_read_changes(mcdc_source *s, const char *ci, const mcdc_lsn *after,
                          const mcdc_lsn *upto, mcdc_change_cb cb, void *payload)
{
    return count(s, 9, IN(s)->ops->read_changes(IN(s), ci, after, upto, cb, payload));
}
static int c_snapshot(mcdc_source *s, const char *ci, const mcdc_value *lo, const mcdc_value *hi,
                      mcdc_row_cb cb, void *payload)
{
    return count(s, 10, IN(s)->ops->snapshot(IN(s), ci, lo, hi, cb, payload));
}
static const char *c_server_time_zone(mcdc_source *s)
{
    return IN(s)->ops->server_time_zone(IN(s));
}
static void c_close(mcdc_source *s)
{
    mcdc_source_close(IN(s));
    free(s);
}
static int c_key_at(mcdc_source *s, const char *ci, const mcdc_value *from, int64_t n, bool desc,
                    mcdc_row_cb cb, void *payload)
{
    return count(s, 11, IN(s)->ops->key_at(IN(s), ci, from, n, desc, cb, payload));
}
static int c_key_count(mcdc_source *s, const char *ci, const mcdc_value *lo, const mcdc_value *hi,
                       int64_t *out)
{
    return count(s, 12, IN(s)->ops->key_count(IN(s), ci, lo, hi, out));
}
static int c_key_buckets(mcdc_source *s, const char *ci, const mcdc_key_bucket_spec *spec,
                         mcdc_key_bucket **out, size_t *n)
{
    return count(s, 13, IN(s)->ops->key_buckets(IN(s), ci, spec, out, n));
}

static int c_consistent_lsn(mcdc_source *s, mcdc_lsn *out)
{
    return count(s, 14, IN(s)->ops->consistent_lsn(IN(s), out));
}
static int c_time_to_lsn(mcdc_source *s, int64_t utc_us, mcdc_lsn *out)
{
    return count(s, 15, IN(s)->ops->time_to_lsn(IN(s), utc_us, out));
}
static int c_positions(mcdc_source *s, mcdc_positions *q)
{
    return count(s, 16, IN(s)->ops->positions(IN(s), q)); /* one round trip */
}
static int c_commit_at_or_before(mcdc_source *s, const mcdc_lsn *lsn, mcdc_lsn *out, int64_t *ts)
{
    return count(s, 17, IN(s)->ops->commit_at_or_before(IN(s), lsn, out, ts));
}
/* once per stream start, like server_time_zone: forwarded, not counted */
static int c_identity(mcdc_source *s, mcdc_source_identity *out)
{
    return IN(s)->ops->identity(IN(s), out);
}
/* once per plan, from bronze's reader side: forwarded, not counted */
static int c_key_orders(mcdc_source *s, const char *ci, mcdc_key_order **out, size_t *n)
{
    return IN(s)->ops->key_orders(IN(s), ci, out, n);
}
static int c_take_warnings(mcdc_source *s, char ***out, size_t *n)
{
    return IN(s)->ops->take_warnings(IN(s), out, n); /* not a query */
}
static int c_snapshot_reads(mcdc_source *s, mcdc_isolation iso, int64_t lock_timeout_ms)
{
    return IN(s)->ops->snapshot_reads(IN(s), iso, lock_timeout_ms); /* a setting */
}

int mcdc_run__source_connect(mcdc_source **out, mcdc_run__source *rs)
{
    *out = NULL;
    mcdc_source *inner = NULL;
    int rc = mcdc_source_open(&inner, rs->spec);
    if (rc < 0) {
        __atomic_add_fetch(&rs->errors, 1, __ATOMIC_RELAXED);
        return rc;
    }
    counted *c = calloc(1, sizeof *c);
    if (!c) {
        mcdc_source_close(inner);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    const mcdc_source_ops *in = inner->ops;
    c->ops = (mcdc_source_ops){
        c_max_lsn, c_min_lsn, c_lsn_to_commit_ts, c_nth_commit_after, c_server_now,
        c_capture_instances, c_captured_columns, c_key_columns, c_ddl_history, c_read_changes,
        c_snapshot, c_server_time_zone, c_close,
        in->key_at ? c_key_at : NULL, in->key_count ? c_key_count : NULL,
        in->key_buckets ? c_key_buckets : NULL, in->consistent_lsn ? c_consistent_lsn : NULL,
        in->take_warnings ? c_take_warnings : NULL, in->snapshot_reads ? c_snapshot_reads : NULL,
        in->time_to_lsn ? c_time_to_lsn : NULL,
        in->positions ? c_positions : NULL, /* else asked one by one, each counted */
        in->identity ? c_identity : NULL,
        in->commit_at_or_before ? c_commit_at_or_before : NULL,
        in->key_orders ? c_key_orders : NULL,
    };
    c->base.ops = &c->ops;
    c->base.description = inner->description;
    c->inner = inner;
    c->rs = rs;
    *out = &c->base;
    return 0;
}

mcdc_run__source *mcdc_run__source_new(const char *name, const char *spec)
{
    mcdc_run__source *rs = calloc(1, sizeof *rs);
    if (!rs)
        return NULL;
    pthread_mutex_init(&rs->mu, NULL);
    rs->name = strdup(name);
    rs->spec = strdup(spec);
    if (!rs->name || !rs->spec) {
        mcdc_run__source_free(rs);
        return NULL;
    }
    return rs;
}

int mcdc_run__source_max_lsn(mcdc_run__source *rs, int64_t fresh_us, mcdc_lsn *out)
{
    pthread_mutex_lock(&rs->mu);
    int rc = 0;
    int64_t now = mcdc_time_mono_us();
    if (!rs->has_max || now - rs->max_at_mono_us > fresh_us) {
        if (!rs->poll)
            rc = mcdc_run__source_connect(&rs->poll, rs);
        if (rc == 0 && (rc = rs->poll->ops->max_lsn(rs->poll, &rs->max)) == 0) {
            rs->has_max = true;
            rs->max_at_mono_us = now;
        } else if (rs->poll) {
            /* a broken connection is opened anew at the next poll */
            mcdc_source_close(rs->poll);
            rs->poll = NULL;
        }
    }
    if (rc == 0)
        *out = rs->max;
    pthread_mutex_unlock(&rs->mu);
    return rc;
}

int mcdc_run__source_acquire(mcdc_source **out, mcdc_run__source *rs)
{
    pthread_mutex_lock(&rs->mu);
    mcdc_source *c = rs->n_idle ? rs->idle[--rs->n_idle] : NULL;
    pthread_mutex_unlock(&rs->mu);
    if (c) {
        *out = c;
        return 0;
    }
    return mcdc_run__source_connect(out, rs);
}

void mcdc_run__source_release(mcdc_run__source *rs, mcdc_source *src, bool broken)
{
    if (!src)
        return;
    pthread_mutex_lock(&rs->mu);
    if (!broken && rs->n_idle == rs->cap_idle) {
        size_t cap = rs->cap_idle ? 2 * rs->cap_idle : 4;
        mcdc_source **a = realloc(rs->idle, cap * sizeof *a);
        if (a) {
            rs->idle = a;
            rs->cap_idle = cap;
        }
    }
    bool kept = !broken && rs->n_idle < rs->cap_idle;
    if (kept)
        rs->idle[rs->n_idle++] = src;
    pthread_mutex_unlock(&rs->mu);
    if (!kept)
        mcdc_source_close(src);
}

void mcdc_run__source_free(mcdc_run__source *rs)
{
    if (!rs)
        return;
    for (size_t i = 0; i < rs->n_idle; i++)
        mcdc_source_close(rs->idle[i]);
    free(rs->idle);
    mcdc_source_close(rs->poll);
    pthread_mutex_destroy(&rs->mu);
    free(rs->name);
    free(rs->spec);
    free(rs);
}
