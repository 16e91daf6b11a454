/*
 * tests/unit/pipeline/fake_source.h: an in-memory CDC source for the stream engine's unit
 * tests: a commit list (cdc.lsn_time_mapping, idle entries included), change rows of one
 * capture instance with two captured columns (id INT, name STRING), a settable min_lsn and
 * a hook that runs between two rows of a read (to purge during a read), and one that runs
 * once as a read starts (to let another writer in while a batch is read).
 */
#ifndef MCDC_TEST_FAKE_SOURCE_H
#define MCDC_TEST_FAKE_SOURCE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/source.h"

#define FAKE_MAX 512

typedef struct fake_row {
    uint64_t lsn;      /* commit LSN (low 64 bits) */
    uint64_t seq;      /* seqval */
    int      op, cmd;
    int      id;
    char     name[16];
} fake_row;

typedef struct fake_source {
    mcdc_source base;
    uint64_t commits[FAKE_MAX];  /* commit LSNs in order */
    int64_t  commit_ts[FAKE_MAX];
    int      n_commits;
    fake_row rows[FAKE_MAX];
    int      n_rows;
    uint64_t min_lsn;            /* 0: capture has not processed the instance */
    int64_t  now_us;
    int      n_max_lsn_calls;    /* max_lsn queries seen */
    int      n_read_calls;       /* read_changes calls seen */
    int      n_questions;        /* max_lsn, min_lsn, commit time, nth commit, now, read */
    int      purge_after_rows;   /* > 0: after this many rows of a read, set min_lsn */
    uint64_t purge_to;
    int      snapshot_rows;      /* rows the source table holds (ids 1..n) */
    void   (*read_hook)(void *); /* run once as the next read starts (cleared first) */
    void    *read_hook_arg;
} fake_source;

static mcdc_lsn fake_lsn(uint64_t v)
{
    return mcdc_lsn_from_u64(0, v);
}

static uint64_t fake_u64(const mcdc_lsn *l)
{
    uint64_t v = 0;
    for (int i = 2; i < 10; i++)
        v = (v << 8) | l->b[i];
    return v;
}

static int fake_max_lsn(mcdc_source *s, mcdc_lsn *out)
{
    fake_source *f = (fake_source *)s;
    f->n_max_lsn_calls++;
    f->n_questions++;
    *out = fake_lsn(f->n_commits ? f->commits[f->n_commits - 1] : 0);
    return 0;
}

static int fake_min_lsn(mcdc_source *s, const char *ci, mcdc_lsn *out)
{
    fake_source *f = (fake_source *)s;
    f->n_questions++;
    if (strcmp(ci, "dbo_t") != 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "capture instance %s not found", ci);
    *out = fake_lsn(f->min_lsn);
    return 0;
}

static int fake_commit_ts(mcdc_source *s, const mcdc_lsn *lsn, int64_t *out)
{
    fake_source *f = (fake_source *)s;
    f->n_questions++;
    uint64_t v = fake_u64(lsn);
    for (int i = 0; i < f->n_commits; i++)
        if (f->commits[i] == v && v >= f->min_lsn) {
            *out = f->commit_ts[i];
            return 0;
        }
    return mcdc_error_set(MCDC_ENOTFOUND, "no mapping entry");
}

static int fake_nth(mcdc_source *s, const mcdc_lsn *after, int64_t n, mcdc_lsn *out, int64_t *ts,
                    int64_t *found)
{
    fake_source *f = (fake_source *)s;
    f->n_questions++;
    uint64_t a = fake_u64(after);
    *found = 0;
    for (int i = 0; i < f->n_commits; i++) {
        if (f->commits[i] <= a)
            continue;
        (*found)++;
        *out = fake_lsn(f->commits[i]);
        *ts = f->commit_ts[i];
        if (*found == n)
            break;
    }
    return 0;
}

static int fake_now(mcdc_source *s, int64_t *out)
{
    ((fake_source *)s)->n_questions++;
    *out = ((fake_source *)s)->now_us;
    return 0;
}

/* One capture instance, dbo_t of dbo.t. */
static int fake_instances(mcdc_source *s, const char *table, mcdc_capture_instance **out,
                          size_t *n_out)
{
    (void)s;
    *out = NULL;
    *n_out = 0;
    if (table && strcasecmp(table, "dbo.t") != 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "table %s does not exist", table);
    mcdc_capture_instance *a = calloc(1, sizeof *a);
    if (!a)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    a->name = strdup("dbo_t");
    a->source_schema = strdup("dbo");
    a->source_table = strdup("t");
    *out = a;
    *n_out = 1;
    return 0;
}

static int fake_columns(mcdc_source *s, const char *ci, mcdc_schema **out)
{
    (void)s;
    if (strcmp(ci, "dbo_t") != 0)
        return mcdc_error_set(MCDC_ENOTFOUND, "capture instance %s not found", ci);
    *out = mcdc_schema_new();
    mcdc_schema_add(*out, "id", MCDC_TYPE_INT, 0, 0, false);
    mcdc_schema_add(*out, "name", MCDC_TYPE_STRING, 0, 0, true);
    return 0;
}

static int fake_read(mcdc_source *s, const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                     mcdc_change_cb cb, void *payload)
{
    fake_source *f = (fake_source *)s;
    (void)ci;
    f->n_read_calls++;
    f->n_questions++;
    if (f->read_hook) {
        void (*hook)(void *) = f->read_hook;
        f->read_hook = NULL;
        hook(f->read_hook_arg);
    }
    uint64_t a = fake_u64(after), u = fake_u64(upto);
    int seen = 0;
    for (int i = 0; i < f->n_rows; i++) {
        fake_row *r = &f->rows[i];
        if (r->lsn <= a || r->lsn > u || r->lsn < f->min_lsn)
            continue;
        if (f->purge_after_rows > 0 && seen == f->purge_after_rows) {
            f->min_lsn = f->purge_to;
            f->purge_after_rows = 0;
            continue; /* purged rows are gone */
        }
        mcdc_value v[2];
        v[0].is_null = false;
        v[0].v.i = r->id;
        v[1].is_null = false;
        v[1].v.s.ptr = r->name;
        v[1].v.s.len = strlen(r->name);
        mcdc_change ch = { fake_lsn(r->lsn), fake_lsn(r->seq), r->op, r->cmd, 0, NULL, 0, v };
        for (int k = 0; k < f->n_commits; k++)
            if (f->commits[k] == r->lsn)
                ch.commit_ts_us = f->commit_ts[k];
        seen++;
        int rc = cb(&ch, payload);
        if (rc)
            return rc;
    }
    return 0;
}

static int fake_snapshot(mcdc_source *s, const char *ci, const mcdc_value *lo, const mcdc_value *hi,
                         mcdc_row_cb cb, void *payload)
{
    fake_source *f = (fake_source *)s;
    (void)ci; (void)lo; (void)hi;
    for (int i = 1; i <= f->snapshot_rows; i++) {
        mcdc_value v[2];
        v[0].is_null = false;
        v[0].v.i = i;
        v[1].is_null = true;
        int rc = cb(v, payload);
        if (rc)
            return rc;
    }
    return 0;
}

static const char *fake_zone(mcdc_source *s)
{
    (void)s;
    return "UTC";
}

static void fake_close(mcdc_source *s)
{
    (void)s;
}

static const mcdc_source_ops fake_ops = {
    fake_max_lsn, fake_min_lsn, fake_commit_ts, fake_nth, fake_now, fake_instances, fake_columns, NULL,
    NULL, fake_read, fake_snapshot, fake_zone, fake_close, NULL, NULL
};

static void fake_init(fake_source *f)
{
    memset(f, 0, sizeof *f);
    f->base.ops = &fake_ops;
    f->base.description = "fake";
    f->now_us = INT64_C(1790000000000000);
}

/* A commit at LSN @p lsn, @p secs after the base time, with @p n rows (op 2 unless given). */
static void fake_commit(fake_source *f, uint64_t lsn, int secs, int n, int op)
{
    f->commits[f->n_commits] = lsn;
    f->commit_ts[f->n_commits] = INT64_C(1790000000000000) + (int64_t)secs * 1000000;
    f->n_commits++;
    for (int i = 0; i < n; i++) {
        fake_row *r = &f->rows[f->n_rows++];
        r->lsn = lsn;
        r->seq = lsn * 16 + (uint64_t)i;
        r->op = op;
        r->cmd = i + 1;
        r->id = (int)(lsn * 100 + (uint64_t)i);
        snprintf(r->name, sizeof r->name, "n%d", r->id);
    }
    if (!f->min_lsn)
        f->min_lsn = f->commits[0];
}

#endif
