/*
 * source/mssql/partitions.c: numPartitions=N: one read_changes over N connections at once,
 * handed to the caller in LSN order.
 *
 * The ranges are the pages of an unpartitioned read: range k is (end of k-1, end of k], each
 * end a page_end (mssql__page_end: the pageRows-th row's __$start_lsn, or the last one's), so
 * no transaction straddles two ranges and the server runs the statements an unpartitioned
 * read runs, page_end, mapping_range and changes per page, and nothing else (ADR 0057). The
 * caller's thread finds range 0's end; a batch of one page is read on its own connection
 * as without partitions. Otherwise N readers, each a thread on a connection of its own (the
 * source's own and N-1 sibling sources opened with the same connection string, kept for
 * later batches), take ranges 0, 1, 2, ... in turn: the reader of range k waits until range
 * k-1's end is known, finds range k's end with one page_end, and reads the page (its first
 * commit seeds the commit-time sequencer, read with the page's commit times). A reader
 * starts range k only when k is among the N next to be handed out.
 *
 * Handover: a reader hands each block it fetched over whole (mssql__read_page: the bound
 * arrays the driver wrote into, with the rows' headers and values pointing into them), and
 * gets an empty block from a pool to fetch into next; nothing is copied. The caller's
 * thread hands out range after range in LSN order, each range's blocks in the order they
 * were queued, then returns the blocks to the pool.
 *
 * Invariants:
 * (P1) rows reach the callback in the order of an unpartitioned read: range k's rows all
 *      before range k+1's, a range's blocks in fetch order (one reader per range, one queue
 *      per range, drained in order by one thread).
 * (P2) a range ends where a page_end put it: on the last row of a commit.
 * (P3) at most N ranges are in flight, and a range's queue holding QUEUE_BYTES makes its
 *      reader wait (a transaction larger than a page), so memory stays bounded.
 * (P4) a failure of a range stops every reader and is returned once the ranges before it
 *      were handed out; the stream commits nothing of the batch then, as for any failed read.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/mssql.h"
#include "source/mssql/mssql_int.h"

#define QUEUE_BYTES ((size_t)64 << 20) /* per range, a reader that far ahead waits (P3) */
#define MAX_READERS 64

/* A queued block, or a free one in the pool. */
typedef struct block {
    struct block *next;
    mssql_rows   *rows;   /* owned */
    size_t        bytes;  /* mssql__rows_bytes when queued */
} block;

/* The range in flight in one slot (slot k % N); guarded by the pipeline's mutex. */
typedef struct range {
    int64_t     k;         /* the range it holds, -1 before the first */
    mcdc_lsn    after, end;
    block      *head, *tail;
    size_t      bytes;     /* queued */
    bool        done;      /* its reader finished it (rc, err) */
    int         rc;
    mcdc_error  err;
} range;

typedef struct pipeline {
    pthread_mutex_t    mu;
    pthread_cond_t     readers;    /* a slot, a plan, queue room or a cancel for the readers */
    pthread_cond_t     caller;     /* a block or an end for the range being handed out */
    range             *slots;      /* n_readers of them */
    int                n_readers;
    int64_t            next_k;     /* the next range a reader takes */
    int64_t            planned;    /* ranges 0 .. planned-1 have their ends */
    mcdc_lsn           plan_after; /* the end of range planned-1 */
    int64_t            last;       /* the last range, INT64_MAX until known */
    int64_t            delivering; /* the range the caller hands out now */
    bool               cancel;     /* the caller wants no more rows */
    bool               space_wait; /* a reader waits for room in its queue */
    block             *pool;       /* free blocks, with their rows */
    const char        *ci;
    mcdc_lsn           batch_after, upto;
    mcdc_lsn           end0;       /* range 0's end, found by the caller */
    const mssql_plan  *plan;       /* for new blocks */
} pipeline;

typedef struct reader {
    pipeline     *pl;
    mssql_source *src;     /* its connection (borrowed) */
    range        *cur;     /* the range being read */
    block        *own;     /* its block to fetch into (allocated by the caller) */
    mssql_rows   *fill;    /* the rows being fetched into */
    pthread_t     th;
    bool          started;
} reader;

static range *slot_of(pipeline *pl, int64_t k)
{
    return &pl->slots[k % pl->n_readers];
}

static void block_free(block *b)
{
    if (!b) return;
    mssql__rows_free(b->rows);
    free(b);
}

/* A free block with its rows: from the pool, else new. Called without the mutex. */
static int block_get(pipeline *pl, block **out)
{
    pthread_mutex_lock(&pl->mu);
    block *b = pl->pool;
    if (b) pl->pool = b->next;
    pthread_mutex_unlock(&pl->mu);
    if (!b) {
        if (!(b = calloc(1, sizeof *b))) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        int rc = mssql__rows_new(&b->rows, pl->plan);
        if (rc < 0) {
            free(b);
            return rc;
        }
    }
    b->next = NULL;
    *out = b;
    return 0;
}

/* ---- the reading threads ------------------------------------------------------------------- */

/* mssql_rows_cb: queue the full block *io on the reader's range and give it an empty one. */
static int on_rows(mssql_rows **io, void *payload)
{
    reader *rd = payload;
    pipeline *pl = rd->pl;
    block *spare;
    int rc = block_get(pl, &spare);
    if (rc < 0) return rc;
    range *r = rd->cur;
    size_t bytes = mssql__rows_bytes(*io);
    pthread_mutex_lock(&pl->mu);
    while (r->bytes >= QUEUE_BYTES && !pl->cancel && r->k <= pl->last) {
        pl->space_wait = true;
        pthread_cond_wait(&pl->readers, &pl->mu);
    }
    bool cancel = pl->cancel || r->k > pl->last; /* a range before it failed: never handed out */
    if (!cancel) {
        /* the spare's rows are fetched into next; the spare carries the full ones (P1) */
        mssql_rows *full = *io;
        *io = spare->rows;
        spare->rows = full;
        spare->bytes = bytes;
        if (r->tail) r->tail->next = spare;
        else r->head = spare;
        r->tail = spare;
        r->bytes += bytes;
        if (r->k == pl->delivering) pthread_cond_signal(&pl->caller);
        spare = NULL;
    } else {
        spare->next = pl->pool;
        pl->pool = spare;
    }
    pthread_mutex_unlock(&pl->mu);
    return cancel ? 1 : 0;
}

/* Range k's end after pl->plan_after, by page_end on the reader's connection; the mutex is
 * held on entry and on return, released around the statement. */
static int plan_range(reader *rd, int64_t k, range *r)
{
    pipeline *pl = rd->pl;
    mcdc_lsn after = pl->plan_after, end;
    bool found = false;
    pthread_mutex_unlock(&pl->mu);
    int rc = mssql__page_end(rd->src, pl->ci, &after, &pl->upto, &end, &found);
    if (rc < 0 && rd->src->last_kind == MSSQL_ERR_NO_OBJECT) {
        /* disabled after the first page: the rest is gone, as an unpartitioned read finds */
        mcdc_error_clear();
        rc = 0;
        found = false;
    }
    pthread_mutex_lock(&pl->mu);
    r->after = after;
    if (rc < 0 || !found) {
        pl->last = rc < 0 ? k : k - 1;
    } else {
        r->end = end;
        pl->plan_after = end;
        if (mcdc_lsn_cmp(&end, &pl->upto) >= 0) pl->last = k;
    }
    pl->planned = k + 1;
    pthread_cond_broadcast(&pl->readers);
    pthread_cond_signal(&pl->caller);
    return rc;
}

static void *read_ranges(void *arg)
{
    reader *rd = arg;
    pipeline *pl = rd->pl;
    block *own = rd->own;
    int rc = 0;
    pthread_mutex_lock(&pl->mu);
    while (rc == 0 && !pl->cancel && pl->next_k <= pl->last) {
        int64_t k = pl->next_k;
        if (k >= pl->delivering + pl->n_readers) { /* P3 */
            pthread_cond_wait(&pl->readers, &pl->mu);
            continue;
        }
        pl->next_k++;
        range *r = slot_of(pl, k);
        memset(r, 0, sizeof *r);
        r->k = k;
        while (pl->planned < k && !pl->cancel) pthread_cond_wait(&pl->readers, &pl->mu);
        if (pl->cancel) break;
        if (k > pl->last) break; /* range k-1 was the last */
        if (pl->planned == k && (rc = plan_range(rd, k, r)) < 0) {
            r->done = true;
            r->rc = rc;
            r->err = *mcdc_error_last();
            pthread_cond_signal(&pl->caller);
            break;
        }
        if (k > pl->last) break; /* nothing after range k-1 */
        if (k == 0) {
            r->after = pl->batch_after;
            r->end = pl->end0; /* planned by the caller (plan_after may be range 1's end by now) */
        }
        rd->cur = r;
        pthread_mutex_unlock(&pl->mu);
        rd->fill = own->rows;
        rc = mssql__read_page(rd->src, pl->ci, &r->after, &r->end, k > 0, &rd->fill, on_rows, rd);
        own->rows = rd->fill;
        pthread_mutex_lock(&pl->mu);
        r->done = true;
        r->rc = rc < 0 ? rc : 0;
        if (rc < 0) {
            /* no range after this one is read or handed out; the ones before are (P4) */
            r->err = *mcdc_error_last();
            if (k < pl->last) pl->last = k;
            pthread_cond_broadcast(&pl->readers);
        }
        if (r->k == pl->delivering) pthread_cond_signal(&pl->caller);
    }
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

/* ---- handing the rows out ------------------------------------------------------------------ */

/* Hand out range @p k's blocks as its reader queues them, until it is done: 0, the
 * callback's non-zero return, or the range's failure. *@p none set when there is no range k. */
static int drain(pipeline *pl, int64_t k, mcdc_change_cb cb, void *payload, bool *none)
{
    range *r = slot_of(pl, k);
    *none = false;
    pthread_mutex_lock(&pl->mu);
    pl->delivering = k;
    pthread_cond_broadcast(&pl->readers); /* slot k-1's is free now */
    for (;;) {
        bool mine = r->k == k;
        while (!(mine && (r->head || r->done)) && k <= pl->last) {
            pthread_cond_wait(&pl->caller, &pl->mu);
            mine = r->k == k;
        }
        if (!(mine && (r->head || r->done))) { /* k > last, and never started */
            *none = true;
            pthread_mutex_unlock(&pl->mu);
            return 0;
        }
        block *b = r->head;
        if (!b) break; /* done */
        r->head = b->next;
        if (!r->head) r->tail = NULL;
        if (r->bytes >= QUEUE_BYTES && pl->space_wait) {
            pl->space_wait = false;
            pthread_cond_broadcast(&pl->readers);
        }
        r->bytes -= b->bytes;
        pthread_mutex_unlock(&pl->mu);
        const mcdc_change *ch = mssql__rows_changes(b->rows);
        int64_t n = mssql__rows_count(b->rows);
        int rc = 0;
        for (int64_t i = 0; i < n && rc == 0; i++) rc = cb(&ch[i], payload);
        pthread_mutex_lock(&pl->mu);
        b->next = pl->pool;
        pl->pool = b;
        if (rc) {
            pthread_mutex_unlock(&pl->mu);
            return rc;
        }
    }
    int rc = r->rc;
    mcdc_error e = r->err;
    pthread_mutex_unlock(&pl->mu);
    if (rc < 0) {
        mcdc_error_restore(&e);
    }
    return rc;
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

/* A batch of one page: read on the caller's thread, its rows handed out block by block. */
typedef struct one_page {
    mcdc_change_cb cb;
    void          *payload;
} one_page;

static int one_page_rows(mssql_rows **io, void *payload)
{
    one_page *o = payload;
    const mcdc_change *ch = mssql__rows_changes(*io);
    int64_t n = mssql__rows_count(*io);
    for (int64_t i = 0; i < n; i++) {
        int rc = o->cb(&ch[i], o->payload);
        if (rc) return rc;
    }
    return 0; /* the same block is fetched into again */
}

int mssql__read_partitioned(mssql_source *s, const char *ci_name, const mcdc_lsn *after, const mcdc_lsn *upto,
                            mcdc_change_cb cb, void *payload)
{
    if (mcdc_lsn_cmp(after, upto) >= 0) return mssql__read_range(s, ci_name, after, upto, INT64_MIN, cb, payload);
    mssql_ci *ci;
    mssql_plan *plan;
    mcdc_lsn end0;
    bool found = false;
    int rc = mssql__page_end(s, ci_name, after, upto, &end0, &found);
    if (rc < 0 && s->last_kind == MSSQL_ERR_NO_OBJECT) {
        s->ci_loaded = false; /* the cached list is stale */
        return mcdc_error_set(MCDC_ENOTFOUND, "capture instance '%s': its change table is gone (CDC was disabled on "
                              "the table)", ci_name);
    }
    if (rc == 0) rc = mssql__find_ci(s, ci_name, &ci);
    if (rc == 0) rc = mssql__get_plan(s, ci, &plan);
    if (rc < 0 || !found) return rc;
    if (mcdc_lsn_cmp(&end0, upto) >= 0) {
        mssql_rows *b;
        if ((rc = mssql__rows_new(&b, plan)) < 0) return rc;
        one_page o = {cb, payload};
        rc = mssql__read_page(s, ci_name, after, upto, false, &b, one_page_rows, &o);
        mssql__rows_free(b);
        return rc;
    }
    int n_readers = s->base.num_partitions > MAX_READERS ? MAX_READERS : s->base.num_partitions;
    if ((rc = open_siblings(s, n_readers - 1)) < 0) return rc;
    pipeline pl;
    memset(&pl, 0, sizeof pl);
    reader rds[MAX_READERS];
    memset(rds, 0, sizeof rds);
    if (!(pl.slots = calloc((size_t)n_readers, sizeof *pl.slots))) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int i = 0; i < n_readers; i++) pl.slots[i].k = -1;
    pthread_mutex_init(&pl.mu, NULL);
    pthread_cond_init(&pl.readers, NULL);
    pthread_cond_init(&pl.caller, NULL);
    pl.n_readers = n_readers;
    pl.planned = 1;
    pl.plan_after = end0;
    pl.end0 = end0;
    pl.last = INT64_MAX;
    pl.ci = ci_name;
    pl.batch_after = *after;
    pl.upto = *upto;
    pl.plan = plan;
    for (int w = 0; w < n_readers; w++) {
        mssql_source *src = w ? s->sibs[w - 1] : s;
        if (w) {
            src->base.select = s->base.select;
            src->srv_offset = s->srv_offset;
            src->srv_offset_min = s->srv_offset_min;
        }
        rds[w].pl = &pl;
        rds[w].src = src;
        if (rc == 0) rc = block_get(&pl, &rds[w].own);
    }
    for (int w = 0; w < n_readers && rc == 0; w++) {
        if (pthread_create(&rds[w].th, NULL, read_ranges, &rds[w]) != 0)
            rc = mcdc_error_set(MCDC_ERROR, "cannot start a partition reader thread");
        else
            rds[w].started = true;
    }
    int64_t k = 0;
    for (bool none = false; rc == 0 && !none; k++) rc = drain(&pl, k, cb, payload, &none);
    mcdc_log(MCDC_LOG_DEBUG, MSSQL_LOGGER, "read %s in %lld ranges of a page over %d connections", ci_name,
             (long long)(k - 1), n_readers);
    /* stop and join every reader; free what they queued */
    mcdc_error saved = *mcdc_error_last();
    pthread_mutex_lock(&pl.mu);
    pl.cancel = true;
    pthread_cond_broadcast(&pl.readers);
    pthread_mutex_unlock(&pl.mu);
    for (int w = 0; w < n_readers; w++) {
        if (rds[w].started) pthread_join(rds[w].th, NULL);
        block_free(rds[w].own);
    }
    for (int i = 0; i < n_readers; i++)
        for (block *b = pl.slots[i].head, *nb; b; b = nb) {
            nb = b->next;
            block_free(b);
        }
    for (block *b = pl.pool, *nb; b; b = nb) {
        nb = b->next;
        block_free(b);
    }
    pthread_mutex_destroy(&pl.mu);
    pthread_cond_destroy(&pl.readers);
    pthread_cond_destroy(&pl.caller);
    free(pl.slots);
    if (rc < 0) {
        mcdc_error_restore(&saved);
    }
    return rc;
}
