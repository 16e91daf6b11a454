/*
 * silver/feed.c: a Delta scan read on a thread of its own (interface in silver/feed.h).
 *
 * Two batches go back and forth: the reader fills one with up to BATCH_ROWS rows (values
 * copied, strings into the batch's own bytes), running the prep hook on each row as it
 * lands, while the caller consumes the other (when both are full, the reader runs the idle
 * hook until it has nothing to do, then sleeps). Rows come out exactly in the scan's order,
 * so what is built from them does not depend on the timing. Memory: two batches (rows,
 * records, and the prep's bytes, a batch closing once they pass BATCH_BYTES). An error of
 * the scan or the prep ends the last batch before the failing row and is handed to the
 * caller with its message after the rows before it; freeing the feed early stops the
 * reader and joins it. Without a thread, the caller fills the same batches itself.
 */
#include "silver/feed.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_ROWS  4096
#define BATCH_BYTES ((size_t)1 << 20)

typedef struct batch {
    mcdc_value *vals;   /* BATCH_ROWS * n_cols */
    size_t      n;
    char       *bytes;  /* strings of the rows */
    size_t      used, cap;
    char       *recs;   /* BATCH_ROWS * rec_size */
    mcdc_buf    extra;  /* the prep's bytes */
    bool        full;   /* filled, not yet consumed */
    bool        last;   /* the reader stopped after it (end or error) */
} batch;

struct mcdc_silver_feed {
    mcdc_delta_scan      *sc;
    size_t                n_cols;
    bool                 *is_text;  /* per column: string or binary */
    mcdc_silver_feed_prep prep;
    mcdc_silver_feed_idle idle;
    void                 *arg;
    size_t                rec_size;
    const mcdc_value     *pending;  /* a row that did not fit: first of the next batch */
    bool                  threaded;
    pthread_t             thread;
    pthread_mutex_t       mu;
    pthread_cond_t        cv;
    batch                 b[2];
    bool                  stop;     /* the caller is done */
    bool                  ended;    /* without a thread: the last batch was filled */
    int                   rc;       /* the reader's end: 0 or an error */
    mcdc_error            err;
    int                   cur;      /* the caller's batch */
    bool                  held;     /* the caller holds b[cur] */
};

/* Copy row @p r into @p b; false when its strings do not fit (the batch is not empty) or
 * there is no memory for them. */
static bool batch_put(mcdc_silver_feed *f, batch *b, const mcdc_value *r)
{
    size_t need = 0;
    for (size_t i = 0; i < f->n_cols; i++)
        if (f->is_text[i] && !r[i].is_null)
            need += r[i].v.s.len;
    if (b->cap - b->used < need) {
        if (b->n)
            return false;
        char *p = realloc(b->bytes, need);
        if (!p)
            return false;
        b->bytes = p;
        b->cap = need;
        b->used = 0;
    }
    mcdc_value *d = &b->vals[b->n * f->n_cols];
    for (size_t i = 0; i < f->n_cols; i++) {
        d[i] = r[i];
        if (f->is_text[i] && !r[i].is_null) {
            if (r[i].v.s.len)
                memcpy(b->bytes + b->used, r[i].v.s.ptr, r[i].v.s.len);
            d[i].v.s.ptr = b->bytes + b->used;
            b->used += r[i].v.s.len;
        }
    }
    b->n++;
    return true;
}

/* Put row @p r into @p b and prepare it. @return 1; 0 when it does not fit (the batch is
 * full); an error (the row is not in the batch). */
static int put(mcdc_silver_feed *f, batch *b, const mcdc_value *r)
{
    if (!batch_put(f, b, r))
        return b->n ? 0 : mcdc_error_set(MCDC_ENOMEM, "silver: out of memory reading bronze");
    if (f->prep) {
        int rc = f->prep(f->arg, &b->vals[(b->n - 1) * f->n_cols],
                         b->recs + (b->n - 1) * f->rec_size, &b->extra);
        if (rc < 0) {
            b->n--;
            return rc;
        }
    }
    return 1;
}

/* Fill @p b with the next rows. @return 1 (more may follow), 0 at the end of the scan, or
 * an error (the rows before the failing one are in the batch). */
static int fill(mcdc_silver_feed *f, batch *b)
{
    b->n = 0;
    b->used = 0;
    mcdc_buf_clear(&b->extra);
    while (b->n < BATCH_ROWS && b->extra.len < BATCH_BYTES) {
        const mcdc_value *r = f->pending;
        f->pending = NULL;
        if (!r) {
            int rc = mcdc_delta_scan_next(f->sc, &r);
            if (rc != 1)
                return rc;
        }
        int rc = put(f, b, r);
        if (rc == 0) {
            f->pending = r; /* valid until the next scan call */
            return 1;
        }
        if (rc < 0)
            return rc;
    }
    return 1;
}

/* Record the end of the rows: 0 or the error on this thread. */
static void set_end(mcdc_silver_feed *f, int rc)
{
    f->rc = rc < 0 ? rc : 0;
    if (rc < 0)
        f->err = *mcdc_error_last();
}

/* The end recorded, with its error set on the calling thread. */
static int report_end(const mcdc_silver_feed *f)
{
    if (f->rc < 0) {
        mcdc_error_set(f->rc, "%s", f->err.message);
        if (f->err.hint[0])
            mcdc_error_hint("%s", f->err.hint);
    }
    return f->rc;
}

static void *reader(void *arg)
{
    mcdc_silver_feed *f = arg;
    int k = 0, rc = 1;
    while (rc == 1) {
        batch *b = &f->b[k];
        pthread_mutex_lock(&f->mu);
        while (b->full && !f->stop) {
            if (f->idle) {
                pthread_mutex_unlock(&f->mu);
                bool more = f->idle(f->arg);
                pthread_mutex_lock(&f->mu);
                if (more)
                    continue;
            }
            pthread_cond_wait(&f->cv, &f->mu);
        }
        bool stop = f->stop;
        pthread_mutex_unlock(&f->mu);
        if (stop)
            break;
        rc = fill(f, b);
        pthread_mutex_lock(&f->mu);
        b->full = true;
        b->last = rc != 1;
        if (rc != 1)
            set_end(f, rc);
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        k ^= 1;
    }
    return NULL;
}

void mcdc_silver_feed_free(mcdc_silver_feed *f)
{
    if (!f)
        return;
    if (f->threaded) {
        pthread_mutex_lock(&f->mu);
        f->stop = true;
        pthread_cond_broadcast(&f->cv);
        pthread_mutex_unlock(&f->mu);
        pthread_join(f->thread, NULL);
    }
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->cv);
    for (int i = 0; i < 2; i++) {
        free(f->b[i].vals);
        free(f->b[i].bytes);
        free(f->b[i].recs);
        mcdc_buf_dispose(&f->b[i].extra);
    }
    free(f->is_text);
    free(f);
}

int mcdc_silver_feed_start(mcdc_silver_feed **out, mcdc_delta_scan *sc,
                           mcdc_silver_feed_prep prep, mcdc_silver_feed_idle idle, void *arg,
                           size_t rec_size)
{
    *out = NULL;
    mcdc_silver_feed *f = calloc(1, sizeof *f);
    if (!f)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->sc = sc;
    f->prep = prep;
    f->idle = idle;
    f->arg = arg;
    f->rec_size = prep ? rec_size : 0;
    const mcdc_schema *s = mcdc_delta_scan_schema(sc);
    f->n_cols = s->n_cols;
    f->is_text = calloc(f->n_cols + 1, sizeof *f->is_text);
    bool ok = f->is_text != NULL;
    for (size_t i = 0; ok && i < f->n_cols; i++)
        f->is_text[i] = s->cols[i].type == MCDC_TYPE_STRING || s->cols[i].type == MCDC_TYPE_BINARY;
    for (int i = 0; ok && i < 2; i++) {
        f->b[i].vals = malloc(BATCH_ROWS * (f->n_cols ? f->n_cols : 1) * sizeof(mcdc_value));
        f->b[i].bytes = malloc(BATCH_BYTES);
        f->b[i].cap = BATCH_BYTES;
        f->b[i].recs = malloc(BATCH_ROWS * (f->rec_size ? f->rec_size : 1));
        f->b[i].extra = (mcdc_buf)MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
        ok = f->b[i].vals && f->b[i].bytes && f->b[i].recs;
    }
    if (!ok) {
        mcdc_silver_feed_free(f);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    f->threaded = pthread_create(&f->thread, NULL, reader, f) == 0;
    *out = f;
    return 0;
}

static void hand_out(const mcdc_silver_feed *f, const batch *b, mcdc_silver_feed_batch *out)
{
    out->rows = b->vals;
    out->n = b->n;
    out->n_cols = f->n_cols;
    out->recs = b->recs;
    out->rec_size = f->rec_size;
    out->extra = b->extra.ptr;
}

int mcdc_silver_feed_next(mcdc_silver_feed *f, mcdc_silver_feed_batch *out)
{
    if (!f->threaded) {
        if (f->ended)
            return report_end(f);
        int rc = fill(f, &f->b[0]);
        if (rc != 1) {
            set_end(f, rc);
            f->ended = true;
        }
        if (f->b[0].n) {
            hand_out(f, &f->b[0], out);
            return 1;
        }
        return report_end(f);
    }
    for (;;) {
        pthread_mutex_lock(&f->mu);
        batch *b = &f->b[f->cur];
        if (f->held) {
            if (b->last) { /* the reader is done */
                pthread_mutex_unlock(&f->mu);
                return report_end(f);
            }
            b->full = false; /* hand it back */
            pthread_cond_broadcast(&f->cv);
            f->held = false;
            f->cur ^= 1;
            b = &f->b[f->cur];
        }
        while (!b->full)
            pthread_cond_wait(&f->cv, &f->mu);
        pthread_mutex_unlock(&f->mu);
        f->held = true;
        if (b->n) {
            hand_out(f, b, out);
            return 1;
        }
    }
}
