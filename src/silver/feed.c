/*
 * silver/feed.c: a Delta scan read on a thread of its own (interface in silver/feed.h).
 *
 * Two batches go back and forth: the reader fills one with up to BATCH_ROWS rows (values
 * copied, strings into the batch's own bytes) while the caller consumes the other. Rows
 * come out exactly in the scan's order, so what is built from them does not depend on the
 * timing. Memory: two batches. An error of the scan ends the last batch and is handed to
 * the caller with its message; freeing the feed early stops the reader and joins it.
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
    bool        full;   /* filled, not yet consumed */
    bool        last;   /* the reader stopped after it (end or error) */
} batch;

struct mcdc_silver_feed {
    mcdc_delta_scan *sc;
    size_t           n_cols;
    bool            *is_text;  /* per column: string or binary */
    bool             threaded;
    pthread_t        thread;
    pthread_mutex_t  mu;
    pthread_cond_t   cv;
    batch            b[2];
    bool             stop;     /* the caller is done */
    int              rc;       /* the reader's end: 0 or an error */
    mcdc_error       err;
    int              cur;      /* the caller's batch */
    size_t           at;       /* next row in it */
    bool             held;     /* the caller holds b[cur] */
};

/* Copy row @p r into @p b; false when its strings do not fit (the batch is not empty). */
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

static void *reader(void *arg)
{
    mcdc_silver_feed *f = arg;
    const mcdc_value *pending = NULL;
    int k = 0, rc = 1;
    while (rc == 1) {
        batch *b = &f->b[k];
        pthread_mutex_lock(&f->mu);
        while (b->full && !f->stop)
            pthread_cond_wait(&f->cv, &f->mu);
        bool stop = f->stop;
        pthread_mutex_unlock(&f->mu);
        if (stop)
            break;
        b->n = 0;
        b->used = 0;
        if (pending && !batch_put(f, b, pending)) {
            rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory reading bronze");
            pending = NULL;
        }
        pending = NULL;
        while (rc == 1 && b->n < BATCH_ROWS) {
            const mcdc_value *r;
            rc = mcdc_delta_scan_next(f->sc, &r);
            if (rc == 1 && !batch_put(f, b, r)) {
                if (b->n == 0) {
                    rc = mcdc_error_set(MCDC_ENOMEM, "silver: out of memory reading bronze");
                    break;
                }
                pending = r; /* valid until the next scan call: first row of the next batch */
                break;
            }
        }
        pthread_mutex_lock(&f->mu);
        b->full = true;
        b->last = rc != 1;
        if (rc != 1) {
            f->rc = rc < 0 ? rc : 0;
            if (rc < 0)
                f->err = *mcdc_error_last();
        }
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
    }
    free(f->is_text);
    free(f);
}

int mcdc_silver_feed_start(mcdc_silver_feed **out, mcdc_delta_scan *sc)
{
    *out = NULL;
    mcdc_silver_feed *f = calloc(1, sizeof *f);
    if (!f)
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    f->sc = sc;
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
        ok = f->b[i].vals && f->b[i].bytes;
    }
    if (!ok) {
        mcdc_silver_feed_free(f);
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    }
    f->threaded = pthread_create(&f->thread, NULL, reader, f) == 0;
    *out = f;
    return 0;
}

int mcdc_silver_feed_next(mcdc_silver_feed *f, const mcdc_value **row)
{
    if (!f->threaded)
        return mcdc_delta_scan_next(f->sc, row);
    for (;;) {
        batch *b = &f->b[f->cur];
        if (f->held && f->at < b->n) {
            *row = &b->vals[f->at++ * f->n_cols];
            return 1;
        }
        pthread_mutex_lock(&f->mu);
        if (f->held) {
            if (b->last) { /* the reader is done */
                int rc = f->rc;
                mcdc_error err = f->err;
                pthread_mutex_unlock(&f->mu);
                if (rc < 0) {
                    mcdc_error_set(rc, "%s", err.message);
                    if (err.hint[0])
                        mcdc_error_hint("%s", err.hint);
                }
                return rc;
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
        f->at = 0;
    }
}
