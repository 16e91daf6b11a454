/*
 * source/mssql/partitions.c: numPartitions=N: one read_changes over N connections at once,
 * handed to the caller in LSN order.
 *
 * The range (after, upto] is split at commit LSNs into up to N ranges of about as many change
 * rows (mssql__split_range: a count, then page_end for each split point), so no transaction
 * straddles two ranges. The first range is read on the source's own connection, straight
 * into the caller's callback, as an unpartitioned read is. Each later range is read at the
 * same time by a thread on a connection of its own (a sibling source opened with the same
 * connection string, kept for later batches), whose rows are copied into blocks queued for
 * the caller; once range k is handed out, range k+1's queue is, then its thread's remaining
 * rows as they come. A queue holds at most QUEUE_BYTES: a thread that far ahead waits, so
 * memory stays bounded (N-1 queues) whatever the batch. Every range is read with the
 * retries and resumes of an unpartitioned read (mssql__read_range). A failure of any range
 * stops the others and is returned once the ranges before it were handed out; the stream
 * commits nothing of the batch then, as for any failed read. Commit times are converted per
 * range, each range's sequencer seeded with the commit at its start.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/mssql.h"
#include "source/mssql/mssql_int.h"

#define QUEUE_BYTES ((size_t)64 << 20)  /* per range read ahead */
#define BLOCK_BYTES ((size_t)1 << 20)   /* rows are queued in blocks of about this much */
#define MAX_PARTS 64

typedef struct block {
    struct block *next;
    mcdc_buf      b;
    int64_t       n_rows;
} block;

typedef struct part {
    mssql_source       *src;       /* the sibling reading it (borrowed) */
    const char         *ci;
    mcdc_lsn            after, upto;
    int64_t             seed_local;
    const mcdc_schema  *schema;    /* the values' types */
    pthread_t           th;
    bool                started;
    /* guarded by mu */
    pthread_mutex_t     mu;
    pthread_cond_t      cv;
    block              *head, *tail;
    size_t              bytes;     /* queued */
    bool                done;      /* the thread finished (rc, err) */
    bool                cancel;    /* the caller wants no more rows */
    int                 rc;
    mcdc_error          err;
    /* the thread's own */
    block              *cur;
} part;

/* ---- the reading threads ------------------------------------------------------------------- */

static int push(part *p, block *b)
{
    pthread_mutex_lock(&p->mu);
    while (p->bytes >= QUEUE_BYTES && !p->cancel) pthread_cond_wait(&p->cv, &p->mu);
    bool cancel = p->cancel;
    if (!cancel) {
        if (p->tail) p->tail->next = b;
        else p->head = b;
        p->tail = b;
        p->bytes += b->b.len;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    if (cancel) {
        mcdc_buf_dispose(&b->b);
        free(b);
        return 1;
    }
    return 0;
}

/* One row: the change, its update mask, its values (string pointers as lengths), then the
 * bytes of its strings in column order. */
static int on_row(const mcdc_change *ch, void *payload)
{
    part *p = payload;
    if (!p->cur) {
        if (!(p->cur = calloc(1, sizeof *p->cur))) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        p->cur->b = (mcdc_buf)MCDC_BUF_INIT((size_t)1 << 31);
    }
    mcdc_buf *b = &p->cur->b;
    size_t n = p->schema->n_cols;
    mcdc_change h = *ch;
    h.update_mask = NULL;
    h.values = NULL;
    if (mcdc_buf_put(b, &h, sizeof h) < 0 || mcdc_buf_put(b, ch->update_mask, ch->update_mask_len) < 0 ||
        mcdc_buf_put(b, ch->values, n * sizeof *ch->values) < 0)
        return MCDC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        mcdc_type_id t = p->schema->cols[i].type;
        const mcdc_value *v = &ch->values[i];
        if ((t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY) && !v->is_null && v->v.s.len &&
            mcdc_buf_put(b, v->v.s.ptr, v->v.s.len) < 0)
            return MCDC_ENOMEM;
    }
    p->cur->n_rows++;
    if (b->len >= BLOCK_BYTES) {
        block *full = p->cur;
        p->cur = NULL;
        return push(p, full);
    }
    pthread_mutex_lock(&p->mu);
    int stop = p->cancel;
    pthread_mutex_unlock(&p->mu);
    return stop;
}

static void *reader(void *arg)
{
    part *p = arg;
    int rc = mssql__read_range(p->src, p->ci, &p->after, &p->upto, p->seed_local, on_row, p);
    if (rc == 0 && p->cur && p->cur->n_rows) {
        block *last = p->cur;
        p->cur = NULL;
        rc = push(p, last) > 0 ? 1 : 0;
    }
    if (p->cur) {
        mcdc_buf_dispose(&p->cur->b);
        free(p->cur);
        p->cur = NULL;
    }
    pthread_mutex_lock(&p->mu);
    p->done = true;
    p->rc = rc < 0 ? rc : 0;
    if (rc < 0) p->err = *mcdc_error_last();
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* ---- handing the rows out ------------------------------------------------------------------ */

/* The rows of block @p b to @p cb; a non-zero return of cb is returned. */
static int deliver(const part *p, const block *b, mcdc_value *vals, mcdc_change_cb cb, void *payload)
{
    size_t n = p->schema->n_cols;
    const char *at = b->b.ptr;
    for (int64_t r = 0; r < b->n_rows; r++) {
        mcdc_change ch;
        memcpy(&ch, at, sizeof ch);
        at += sizeof ch;
        ch.update_mask = (const uint8_t *)at;
        at += ch.update_mask_len;
        memcpy(vals, at, n * sizeof *vals);
        at += n * sizeof *vals;
        for (size_t i = 0; i < n; i++) {
            mcdc_type_id t = p->schema->cols[i].type;
            if ((t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY) && !vals[i].is_null) {
                vals[i].v.s.ptr = at;
                at += vals[i].v.s.len;
            }
        }
        ch.values = vals;
        int rc = cb(&ch, payload);
        if (rc) return rc;
    }
    return 0;
}

static void cancel(part *p)
{
    pthread_mutex_lock(&p->mu);
    p->cancel = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* Hand out range @p p's rows as its thread queues them, until it is done. */
static int drain(part *p, mcdc_value *vals, mcdc_change_cb cb, void *payload)
{
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->head && !p->done) pthread_cond_wait(&p->cv, &p->mu);
        block *b = p->head;
        if (b) {
            p->head = b->next;
            if (!p->head) p->tail = NULL;
            p->bytes -= b->b.len;
            pthread_cond_broadcast(&p->cv);
        }
        bool done = p->done && !b;
        pthread_mutex_unlock(&p->mu);
        if (done) return 0;
        int rc = deliver(p, b, vals, cb, payload);
        mcdc_buf_dispose(&b->b);
        free(b);
        if (rc) return rc;
    }
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
    int want = s->base.num_partitions > MAX_PARTS ? MAX_PARTS : s->base.num_partitions;
    mcdc_lsn splits[MAX_PARTS];
    int64_t split_local[MAX_PARTS];
    int n_splits = 0;
    int rc = mssql__split_range(s, ci_name, after, upto, want, s->page_rows, splits, split_local, &n_splits);
    if (rc < 0) return rc;
    if (n_splits == 0) return mssql__read_range(s, ci_name, after, upto, INT64_MIN, cb, payload);
    mssql_ci *ci;
    mssql_plan *plan;
    if ((rc = mssql__find_ci(s, ci_name, &ci)) < 0 || (rc = mssql__get_plan(s, ci, &plan)) < 0) return rc;
    if ((rc = open_siblings(s, n_splits)) < 0) return rc;
    part parts[MAX_PARTS];
    memset(parts, 0, sizeof parts);
    mcdc_value *vals = calloc(plan->schema->n_cols + 1, sizeof *vals);
    if (!vals) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (int k = 0; k < n_splits; k++) {
        part *p = &parts[k];
        mssql_source *sib = s->sibs[k];
        sib->base.select = s->base.select;
        sib->srv_offset = s->srv_offset;
        sib->srv_offset_min = s->srv_offset_min;
        p->src = sib;
        p->ci = ci_name;
        p->after = splits[k];
        p->upto = k + 1 < n_splits ? splits[k + 1] : *upto;
        p->seed_local = split_local[k];
        p->schema = plan->schema;
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->cv, NULL);
    }
    int started = 0;
    for (int k = 0; k < n_splits && rc == 0; k++) {
        if (pthread_create(&parts[k].th, NULL, reader, &parts[k]) != 0) {
            rc = mcdc_error_set(MCDC_ERROR, "cannot start a partition reader thread");
            break;
        }
        parts[k].started = true;
        started++;
    }
    mcdc_log(MCDC_LOG_DEBUG, MSSQL_LOGGER, "reading %s in %d ranges over %d connections", ci_name, n_splits + 1,
             n_splits + 1);
    /* the first range on this connection, straight to the caller */
    if (rc == 0) rc = mssql__read_range(s, ci_name, after, &splits[0], INT64_MIN, cb, payload);
    int k = 0;
    for (; rc == 0 && k < n_splits; k++) {
        rc = drain(&parts[k], vals, cb, payload);
        if (rc == 0 && parts[k].rc < 0) {
            mcdc_error e = parts[k].err;
            rc = mcdc_error_set(e.code, "%s", e.message);
            if (e.hint[0]) mcdc_error_hint("%s", e.hint);
        }
    }
    /* stop and join every reader; free what they queued */
    mcdc_error saved = *mcdc_error_last();
    for (int j = 0; j < n_splits; j++) {
        part *p = &parts[j];
        if (p->started) {
            cancel(p);
            pthread_join(p->th, NULL);
        }
        for (block *b = p->head, *nb; b; b = nb) {
            nb = b->next;
            mcdc_buf_dispose(&b->b);
            free(b);
        }
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
    }
    free(vals);
    if (rc < 0) {
        mcdc_error_set(saved.code, "%s", saved.message);
        if (saved.hint[0]) mcdc_error_hint("%s", saved.hint);
    }
    (void)started;
    return rc;
}
