/*
 * source/mssql/partitions.c: numPartitions=N: one read_changes over N connections at once,
 * handed to the caller in LSN order.
 *
 * The range (after, upto] is split at commit LSNs into consecutive ranges of about 1/N of the
 * change rows, at most RANGE_PAGES pages each (mssql__split_range: a count, then a page_end and a
 * commit_time per split point), so no transaction straddles two ranges. N readers, each a
 * thread on a connection of its own (the source's own and N-1 sibling sources opened with the
 * same connection string, kept for later batches), read them as a pipeline: reader w takes
 * ranges w, w+N, w+2N, ..., and starts a range only when it is among the N next to be handed
 * out, so at most N ranges are in memory. A reader copies its range's rows into 1 MiB blocks
 * queued for the caller's thread, which hands out range after range in LSN order as their
 * blocks come. A queue holding QUEUE_BYTES makes its reader wait (a single transaction larger
 * than a range), so memory stays bounded whatever the batch. Every range is read with the
 * pages, retries and resumes of an unpartitioned read (mssql__read_range). A failure of a
 * range stops every reader and is returned once the ranges before it were handed out; the
 * stream commits nothing of the batch then, as for any failed read. Commit times are
 * converted per range, each range's sequencer seeded with the commit at its start.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/mssql.h"
#include "source/mssql/mssql_int.h"

#define QUEUE_BYTES ((size_t)64 << 20)  /* per range, a reader that far ahead waits */
#define BLOCK_BYTES ((size_t)1 << 20)   /* rows are queued in blocks of about this much */
#define RANGE_PAGES 5                   /* a range holds at most 5 pages of rows (unless too many) */
#define MAX_RANGES  256
#define MAX_READERS 64

typedef struct block {
    struct block *next;
    mcdc_buf      b;
    int64_t       n_rows;
} block;

/* One range and its queue; guarded by the pipeline's mutex. */
typedef struct range {
    mcdc_lsn    after, upto;
    int64_t     seed_local;
    block      *head, *tail;
    size_t      bytes;     /* queued */
    bool        done;      /* its reader finished it (rc, err) */
    int         rc;
    mcdc_error  err;
} range;

typedef struct pipeline {
    pthread_mutex_t    mu;
    pthread_cond_t     cv;       /* any change: a block queued or taken, a range done, cancel */
    range             *ranges;
    int                n_ranges, n_readers;
    int                delivering; /* the range the caller hands out now */
    bool               cancel;   /* the caller wants no more rows */
    const char        *ci;
    const mcdc_schema *schema;   /* the values' types */
} pipeline;

typedef struct reader {
    pipeline     *pl;
    mssql_source *src;     /* its connection (borrowed) */
    int           first;   /* it reads ranges first, first + N, ... */
    int           cur;     /* the range being read */
    block        *blk;     /* being filled */
    pthread_t     th;
    bool          started;
} reader;

/* ---- the reading threads ------------------------------------------------------------------- */

static void block_free(block *b)
{
    if (!b) return;
    mcdc_buf_dispose(&b->b);
    free(b);
}

/* Queue @p b on the reader's range: 1 when the caller cancelled (b freed). */
static int push(reader *rd, block *b)
{
    pipeline *pl = rd->pl;
    range *r = &pl->ranges[rd->cur];
    pthread_mutex_lock(&pl->mu);
    while (r->bytes >= QUEUE_BYTES && !pl->cancel) pthread_cond_wait(&pl->cv, &pl->mu);
    bool cancel = pl->cancel;
    if (!cancel) {
        if (r->tail) r->tail->next = b;
        else r->head = b;
        r->tail = b;
        r->bytes += b->b.len;
        pthread_cond_broadcast(&pl->cv);
    }
    pthread_mutex_unlock(&pl->mu);
    if (cancel) block_free(b);
    return cancel ? 1 : 0;
}

/* One row: the change, its update mask, its values (string pointers as lengths), then the
 * bytes of its strings in column order. */
static int on_row(const mcdc_change *ch, void *payload)
{
    reader *rd = payload;
    if (!rd->blk) {
        if (!(rd->blk = calloc(1, sizeof *rd->blk))) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        rd->blk->b = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 31);
    }
    mcdc_buf *b = &rd->blk->b;
    const mcdc_schema *sc = rd->pl->schema;
    size_t n = sc->n_cols;
    mcdc_change h = *ch;
    h.update_mask = NULL;
    h.values = NULL;
    if (mcdc_buf_put(b, &h, sizeof h) < 0 || mcdc_buf_put(b, ch->update_mask, ch->update_mask_len) < 0 ||
        mcdc_buf_put(b, ch->values, n * sizeof *ch->values) < 0)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory for a partition's rows");
    for (size_t i = 0; i < n; i++) {
        mcdc_type_id t = sc->cols[i].type;
        const mcdc_value *v = &ch->values[i];
        if ((t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY) && !v->is_null && v->v.s.len &&
            mcdc_buf_put(b, v->v.s.ptr, v->v.s.len) < 0)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory for a partition's rows");
    }
    rd->blk->n_rows++;
    if (b->len < BLOCK_BYTES) return 0;
    block *full = rd->blk;
    rd->blk = NULL;
    return push(rd, full);
}

static void *read_ranges(void *arg)
{
    reader *rd = arg;
    pipeline *pl = rd->pl;
    for (int k = rd->first; k < pl->n_ranges; k += pl->n_readers) {
        /* at most N ranges in memory: start k once it is among the next N to hand out */
        pthread_mutex_lock(&pl->mu);
        while (k >= pl->delivering + pl->n_readers && !pl->cancel) pthread_cond_wait(&pl->cv, &pl->mu);
        bool cancel = pl->cancel;
        pthread_mutex_unlock(&pl->mu);
        if (cancel) break;
        range *r = &pl->ranges[k];
        rd->cur = k;
        int rc = mssql__read_range(rd->src, pl->ci, &r->after, &r->upto, r->seed_local, on_row, rd);
        if (rc == 0 && rd->blk && rd->blk->n_rows) {
            block *last = rd->blk;
            rd->blk = NULL;
            rc = push(rd, last);
        }
        block_free(rd->blk);
        rd->blk = NULL;
        pthread_mutex_lock(&pl->mu);
        r->done = true;
        r->rc = rc < 0 ? rc : 0;
        if (rc < 0) r->err = *mcdc_error_last();
        pthread_cond_broadcast(&pl->cv);
        pthread_mutex_unlock(&pl->mu);
        if (rc != 0) break; /* failed, or cancelled */
    }
    return NULL;
}

/* ---- handing the rows out ------------------------------------------------------------------ */

/* The rows of block @p b to @p cb; a non-zero return of cb is returned. */
static int deliver(const mcdc_schema *sc, const block *b, mcdc_value *vals, mcdc_change_cb cb, void *payload)
{
    size_t n = sc->n_cols;
    const char *at = b->b.ptr;
    for (int64_t i = 0; i < b->n_rows; i++) {
        mcdc_change ch;
        memcpy(&ch, at, sizeof ch);
        at += sizeof ch;
        ch.update_mask = (const uint8_t *)at;
        at += ch.update_mask_len;
        memcpy(vals, at, n * sizeof *vals);
        at += n * sizeof *vals;
        for (size_t k = 0; k < n; k++) {
            mcdc_type_id t = sc->cols[k].type;
            if ((t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY) && !vals[k].is_null) {
                vals[k].v.s.ptr = at;
                at += vals[k].v.s.len;
            }
        }
        ch.values = vals;
        int rc = cb(&ch, payload);
        if (rc) return rc;
    }
    return 0;
}

/* Hand out range @p k's rows as its reader queues them, until it is done. */
static int drain(pipeline *pl, int k, mcdc_value *vals, mcdc_change_cb cb, void *payload)
{
    range *r = &pl->ranges[k];
    pthread_mutex_lock(&pl->mu);
    pl->delivering = k;
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
    for (;;) {
        pthread_mutex_lock(&pl->mu);
        while (!r->head && !r->done) pthread_cond_wait(&pl->cv, &pl->mu);
        block *b = r->head;
        if (b) {
            r->head = b->next;
            if (!r->head) r->tail = NULL;
            r->bytes -= b->b.len;
            pthread_cond_broadcast(&pl->cv);
        }
        bool done = r->done && !b;
        pthread_mutex_unlock(&pl->mu);
        if (done) break;
        int rc = deliver(pl->schema, b, vals, cb, payload);
        block_free(b);
        if (rc) return rc;
    }
    if (r->rc < 0) {
        mcdc_error e = r->err;
        mcdc_error_set(e.code, "%s", e.message);
        if (e.hint[0]) mcdc_error_hint("%s", e.hint);
        return r->rc;
    }
    return 0;
}

/* ---- siblings ------------------------------------------------------------------------------ */

static int open_siblings(mssql_source *s, int n)
{
    if (s->n_sibs >= n) return 0;
    mssql_source **a = realloc(s->sibs, (size_t)n * sizeof *a);
    if (!a) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    s->sibs = a;
    while (s->n_sibs < n) {
        mcdc_source *b;
        int rc = mcdc_mssql_source_open(&b, s->conn_text);
        if (rc < 0) return rc;
        mssql_source *sib = (mssql_source *)b;
        sib->is_sibling = true;
        s->sibs[s->n_sibs++] = sib;
    }
    return 0;
}

void mssql__close_siblings(mssql_source *s)
{
    for (int i = 0; i < s->n_sibs; i++) mcdc_source_close(&s->sibs[i]->base);
    free(s->sibs);
    s->sibs = NULL;
    s->n_sibs = 0;
}

int mssql__read_partitioned(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                            mcdc_change_cb cb, void *payload)
{
    if (mcdc_lsn_cmp(after, upto) >= 0) return mssql__read_range(s, ci_name, after, upto, INT64_MIN, cb, payload);
    int want = s->base.num_partitions > MAX_READERS ? MAX_READERS : s->base.num_partitions;
    mcdc_lsn splits[MAX_RANGES];
    int64_t split_local[MAX_RANGES];
    int n_splits = 0;
    int rc = mssql__split_range(s, ci_name, after, upto, want, s->page_rows, RANGE_PAGES * s->page_rows,
                                MAX_RANGES - 1, splits,
                                split_local, &n_splits);
    if (rc < 0) return rc;
    if (n_splits == 0) return mssql__read_range(s, ci_name, after, upto, INT64_MIN, cb, payload);
    mssql_ci *ci;
    mssql_plan *plan;
    if ((rc = mssql__find_ci(s, ci_name, &ci)) < 0 || (rc = mssql__get_plan(s, ci, &plan)) < 0) return rc;
    int n_ranges = n_splits + 1, n_readers = want < n_ranges ? want : n_ranges;
    if ((rc = open_siblings(s, n_readers - 1)) < 0) return rc;
    pipeline pl;
    memset(&pl, 0, sizeof pl);
    reader rds[MAX_READERS];
    memset(rds, 0, sizeof rds);
    pl.ranges = calloc((size_t)n_ranges, sizeof *pl.ranges);
    mcdc_value *vals = calloc(plan->schema->n_cols + 1, sizeof *vals);
    if (!pl.ranges || !vals) {
        free(pl.ranges);
        free(vals);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&pl.mu, NULL);
    pthread_cond_init(&pl.cv, NULL);
    pl.n_ranges = n_ranges;
    pl.n_readers = n_readers;
    pl.ci = ci_name;
    pl.schema = plan->schema;
    for (int k = 0; k < n_ranges; k++) {
        pl.ranges[k].after = k ? splits[k - 1] : *after;
        pl.ranges[k].upto = k < n_splits ? splits[k] : *upto;
        pl.ranges[k].seed_local = k ? split_local[k - 1] : INT64_MIN;
    }
    for (int w = 0; w < n_readers; w++) {
        mssql_source *src = w ? s->sibs[w - 1] : s;
        if (w) {
            src->base.select = s->base.select;
            src->srv_offset = s->srv_offset;
            src->srv_offset_min = s->srv_offset_min;
        }
        rds[w].pl = &pl;
        rds[w].src = src;
        rds[w].first = w;
    }
    mcdc_log(MCDC_LOG_DEBUG, MSSQL_LOGGER, "reading %s in %d ranges over %d connections", ci_name, n_ranges, n_readers);
    for (int w = 0; w < n_readers && rc == 0; w++) {
        if (pthread_create(&rds[w].th, NULL, read_ranges, &rds[w]) != 0)
            rc = mcdc_error_set(MCDC_ERROR, "cannot start a partition reader thread");
        else
            rds[w].started = true;
    }
    for (int k = 0; rc == 0 && k < n_ranges; k++) rc = drain(&pl, k, vals, cb, payload);
    /* stop and join every reader; free what they queued */
    mcdc_error saved = *mcdc_error_last();
    pthread_mutex_lock(&pl.mu);
    pl.cancel = true;
    pthread_cond_broadcast(&pl.cv);
    pthread_mutex_unlock(&pl.mu);
    for (int w = 0; w < n_readers; w++)
        if (rds[w].started) pthread_join(rds[w].th, NULL);
    for (int k = 0; k < n_ranges; k++)
        for (block *b = pl.ranges[k].head, *nb; b; b = nb) {
            nb = b->next;
            block_free(b);
        }
    pthread_mutex_destroy(&pl.mu);
    pthread_cond_destroy(&pl.cv);
    free(pl.ranges);
    free(vals);
    if (rc < 0) {
        mcdc_error_set(saved.code, "%s", saved.message);
        if (saved.hint[0]) mcdc_error_hint("%s", saved.hint);
    }
    return rc;
}
