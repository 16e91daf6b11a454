/*
 * pipeline/rowpipe.c: a bounded producer/consumer pipe of row chunks between the source
 * reader and the Parquet writer (interface and guarantees in pipeline/rowpipe.h).
 *
 * Chunks form a ring: the reader fills chunk `fill`; a full chunk joins the queue
 * (n_queued); the writer takes the oldest (`take`), writes its rows and releases it. The
 * reader waits while every other chunk is queued or being written, so at most
 * ROWPIPE_CHUNKS chunks of ROWPIPE_ROWS rows exist. One mutex guards the counters, the
 * flags and the error; the rows of a chunk belong to whoever holds it (reader while
 * filling, writer while writing), never to both. A chunk's cells are allocated when the
 * reader first fills it, and not zeroed (every cell of a row is written before the writer
 * reads it): a batch of a few rows touches only the memory its rows need, so many small
 * batches in one process do not each fault in the whole ring.
 */
#include "pipeline/rowpipe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ROWPIPE_ROWS   4096
#define ROWPIPE_CHUNKS 4

typedef struct chunk {
    mcdc_value *vals;      /* ROWPIPE_ROWS * n_cols cells; strings point into bytes */
    size_t      n_rows;    /* rows filled */
    char       *bytes;     /* copies of the rows' strings and binaries */
    size_t      len, cap;  /* bytes used and allocated */
} chunk;

struct mcdc_rowpipe {
    mcdc_datafile      *df;       /* the writer thread's file */
    const mcdc_schema  *schema;
    size_t              n_cols;
    chunk               chunks[ROWPIPE_CHUNKS];
    int                 fill;     /* reader: the chunk being filled */
    int                 take;     /* writer: the next chunk to write (guarded) */
    int                 n_queued; /* chunks handed over and not yet released (guarded) */
    bool                closing;  /* no more chunks will come (guarded) */
    bool                stop;     /* abort: drop what is queued (guarded) */
    int                 rc;       /* the writer's first error (guarded) */
    mcdc_error          err;      /* its record, copied from the writer's thread */
    pthread_mutex_t     mu;
    pthread_cond_t      cv;       /* signalled on every change of the guarded state */
    pthread_t           thread;
};

static bool is_bytes(mcdc_type_id t)
{
    return t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY;
}

static void *writer_main(void *arg)
{
    mcdc_rowpipe *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->n_queued == 0 && !p->closing && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop || (p->n_queued == 0 && p->closing))
            break;
        chunk *c = &p->chunks[p->take];
        pthread_mutex_unlock(&p->mu);
        int rc = 0;
        for (size_t i = 0; i < c->n_rows && rc == 0; i++)
            rc = mcdc_datafile__add(p->df, c->vals + i * p->n_cols);
        pthread_mutex_lock(&p->mu);
        if (rc < 0 && p->rc == 0) {
            p->rc = rc;
            p->err = *mcdc_error_last();
        }
        c->n_rows = 0;
        c->len = 0;
        p->take = (p->take + 1) % ROWPIPE_CHUNKS;
        p->n_queued--;
        pthread_cond_broadcast(&p->cv);
        if (p->rc < 0)
            break;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int mcdc_rowpipe__start(mcdc_rowpipe **out, mcdc_datafile *df, const mcdc_schema *schema)
{
    *out = NULL;
    mcdc_rowpipe *p = calloc(1, sizeof *p);
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "row pipe: out of memory");
    p->df = df;
    p->schema = schema;
    p->n_cols = schema->n_cols ? schema->n_cols : 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (pthread_create(&p->thread, NULL, writer_main, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        free(p);
        return mcdc_error_set(MCDC_ERROR, "row pipe: cannot start the writer thread");
    }
    *out = p;
    return 0;
}

/* Point the chunk's string cells into its bytes (offsets while filling: bytes may move). */
static void fix_pointers(mcdc_rowpipe *p, chunk *c)
{
    for (size_t i = 0; i < c->n_rows; i++)
        for (size_t k = 0; k < p->schema->n_cols; k++) {
            mcdc_value *v = &c->vals[i * p->n_cols + k];
            if (!v->is_null && is_bytes(p->schema->cols[k].type))
                v->v.s.ptr = c->bytes + (size_t)(uintptr_t)v->v.s.ptr;
        }
}

static int writer_error(mcdc_rowpipe *p)
{
    mcdc_error_set(p->err.code ? p->err.code : p->rc, "%s", p->err.message);
    if (p->err.hint[0])
        mcdc_error_hint("%s", p->err.hint);
    return p->rc;
}

/* Hand the filling chunk to the writer and wait for a free one. */
static int hand_over(mcdc_rowpipe *p)
{
    chunk *c = &p->chunks[p->fill];
    fix_pointers(p, c);
    pthread_mutex_lock(&p->mu);
    p->n_queued++;
    pthread_cond_broadcast(&p->cv);
    while (p->n_queued >= ROWPIPE_CHUNKS && p->rc == 0) /* the next chunk is being written */
        pthread_cond_wait(&p->cv, &p->mu);
    int rc = p->rc;
    pthread_mutex_unlock(&p->mu);
    p->fill = (p->fill + 1) % ROWPIPE_CHUNKS;
    return rc < 0 ? writer_error(p) : 0;
}

int mcdc_rowpipe__add(mcdc_rowpipe *p, const mcdc_value *row)
{
    chunk *c = &p->chunks[p->fill];
    if (!c->vals && !(c->vals = malloc((size_t)ROWPIPE_ROWS * p->n_cols * sizeof(mcdc_value))))
        return mcdc_error_set(MCDC_ENOMEM, "row pipe: out of memory");
    mcdc_value *dst = c->vals + c->n_rows * p->n_cols;
    for (size_t k = 0; k < p->schema->n_cols; k++) {
        dst[k] = row[k];
        if (row[k].is_null || !is_bytes(p->schema->cols[k].type))
            continue;
        size_t n = row[k].v.s.len;
        if (c->len + n > c->cap) {
            size_t cap = c->cap ? c->cap : 1 << 16;
            while (cap < c->len + n)
                cap *= 2;
            char *nb = realloc(c->bytes, cap);
            if (!nb)
                return mcdc_error_set(MCDC_ENOMEM, "row pipe: out of memory for %zu bytes", cap);
            c->bytes = nb;
            c->cap = cap;
        }
        if (n)
            memcpy(c->bytes + c->len, row[k].v.s.ptr, n);
        dst[k].v.s.ptr = (const char *)(uintptr_t)c->len; /* an offset until handed over */
        c->len += n;
    }
    if (++c->n_rows == ROWPIPE_ROWS)
        return hand_over(p);
    return 0;
}

static void destroy(mcdc_rowpipe *p)
{
    for (int i = 0; i < ROWPIPE_CHUNKS; i++) {
        free(p->chunks[i].vals);
        free(p->chunks[i].bytes);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

int mcdc_rowpipe__finish(mcdc_rowpipe *p)
{
    int rc = 0;
    if (p->chunks[p->fill].n_rows > 0)
        rc = hand_over(p);
    pthread_mutex_lock(&p->mu);
    p->closing = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    if (rc == 0 && p->rc < 0)
        rc = writer_error(p);
    destroy(p);
    return rc;
}

void mcdc_rowpipe__abort(mcdc_rowpipe *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    destroy(p);
}
