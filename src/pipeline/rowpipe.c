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
 *
 * The writer thread starts when the first chunk is handed over: a batch that fits in one
 * chunk (the usual small batch of a service) is written by the caller at the finish, with
 * no thread to start and join; it could not have overlapped anything anyway, since a chunk
 * goes to the writer only once it is full. When the thread cannot start, the caller writes
 * every chunk itself, as it hands it over.
 *
 * A chunk's strings are copied into blocks of ROWPIPE_BLOCK bytes (a longer one into a block
 * of its own size) that never move, so a cell points at its final copy as soon as it is
 * added; a released chunk keeps its blocks for its next rows. Which columns hold bytes is
 * worked out once, at the start.
 */
#include "pipeline/rowpipe.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ROWPIPE_ROWS   4096
#define ROWPIPE_CHUNKS 4
#define ROWPIPE_BLOCK  ((size_t)256 << 10)

typedef struct block {
    char  *bytes;
    size_t len, cap;
} block;

typedef struct chunk {
    mcdc_value *vals;      /* ROWPIPE_ROWS * n_cols cells; strings point into blocks */
    size_t      n_rows;    /* rows filled */
    block      *blocks;    /* copies of the rows' strings and binaries */
    size_t      n_blocks;  /* allocated */
    size_t      cur;       /* the block being filled */
} chunk;

struct mcdc_rowpipe {
    mcdc_datafile      *df;       /* the writer thread's file */
    const mcdc_schema  *schema;
    size_t              n_cols;
    size_t             *byte_cols; /* the columns that hold strings or binaries */
    size_t              n_byte_cols;
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
    bool                started;  /* the writer thread runs */
    bool                inline_writes; /* it could not start: the caller writes the chunks */
};

static void release(chunk *c)
{
    c->n_rows = 0;
    for (size_t i = 0; i <= c->cur && i < c->n_blocks; i++)
        c->blocks[i].len = 0;
    c->cur = 0;
}

/* Write a chunk's rows on the calling thread (the writer's, or the caller's without one). */
static int write_chunk(mcdc_rowpipe *p, chunk *c)
{
    int rc = 0;
    for (size_t i = 0; i < c->n_rows && rc == 0; i++)
        rc = mcdc_datafile__add(p->df, c->vals + i * p->n_cols);
    return rc;
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
        int rc = write_chunk(p, c);
        pthread_mutex_lock(&p->mu);
        if (rc < 0 && p->rc == 0) {
            p->rc = rc;
            p->err = *mcdc_error_last();
        }
        release(c);
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
    if (!p || !(p->byte_cols = malloc((schema->n_cols + 1) * sizeof *p->byte_cols))) {
        free(p);
        return mcdc_error_set(MCDC_ENOMEM, "row pipe: out of memory");
    }
    p->df = df;
    p->schema = schema;
    p->n_cols = schema->n_cols ? schema->n_cols : 1;
    for (size_t k = 0; k < schema->n_cols; k++)
        if (schema->cols[k].type == MCDC_TYPE_STRING || schema->cols[k].type == MCDC_TYPE_BINARY)
            p->byte_cols[p->n_byte_cols++] = k;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    *out = p;
    return 0;
}

static int writer_error(mcdc_rowpipe *p)
{
    mcdc_error_set(p->err.code ? p->err.code : p->rc, "%s", p->err.message);
    if (p->err.hint[0])
        mcdc_error_hint("%s", p->err.hint);
    return p->rc;
}

/* Hand the filling chunk to the writer (starting it the first time) and wait for a free
 * one; without a writer thread, write it here. */
static int hand_over(mcdc_rowpipe *p)
{
    if (!p->started && !p->inline_writes) {
        p->started = pthread_create(&p->thread, NULL, writer_main, p) == 0;
        p->inline_writes = !p->started;
    }
    if (p->inline_writes) {
        chunk *c = &p->chunks[p->fill];
        int rc = write_chunk(p, c);
        release(c);
        return rc;
    }
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

/* Room for @p n bytes in the chunk's blocks: the current one, the next (kept from an
 * earlier fill, or new), or a block of its own for a long value. */
static char *room(chunk *c, size_t n)
{
    if (c->n_blocks && c->blocks[c->cur].cap - c->blocks[c->cur].len >= n) {
        block *b = &c->blocks[c->cur];
        char *at = b->bytes + b->len;
        b->len += n;
        return at;
    }
    size_t next = c->n_blocks ? c->cur + 1 : 0;
    while (next < c->n_blocks && c->blocks[next].cap < n) /* a kept block too small: skip it */
        next++;
    if (next == c->n_blocks) {
        block *nb = realloc(c->blocks, (c->n_blocks + 1) * sizeof *nb);
        if (!nb)
            return NULL;
        c->blocks = nb;
        size_t cap = n > ROWPIPE_BLOCK ? n : ROWPIPE_BLOCK;
        if (!(nb[c->n_blocks].bytes = malloc(cap)))
            return NULL;
        nb[c->n_blocks].cap = cap;
        nb[c->n_blocks].len = 0;
        c->n_blocks++;
    }
    for (size_t i = c->cur + 1; i < next; i++) /* skipped blocks stay empty */
        c->blocks[i].len = 0;
    c->cur = next;
    c->blocks[next].len = n;
    return c->blocks[next].bytes;
}

mcdc_value *mcdc_rowpipe__row(mcdc_rowpipe *p)
{
    chunk *c = &p->chunks[p->fill];
    if (!c->vals && !(c->vals = malloc((size_t)ROWPIPE_ROWS * p->n_cols * sizeof(mcdc_value)))) {
        mcdc_error_set(MCDC_ENOMEM, "row pipe: out of memory");
        return NULL;
    }
    return c->vals + c->n_rows * p->n_cols;
}

int mcdc_rowpipe__push(mcdc_rowpipe *p)
{
    chunk *c = &p->chunks[p->fill];
    mcdc_value *row = c->vals + c->n_rows * p->n_cols;
    for (size_t j = 0; j < p->n_byte_cols; j++) {
        mcdc_value *v = &row[p->byte_cols[j]];
        if (v->is_null)
            continue;
        if (v->v.s.len == 0) {
            v->v.s.ptr = ""; /* never the caller's memory */
            continue;
        }
        char *at = room(c, v->v.s.len);
        if (!at)
            return mcdc_error_set(MCDC_ENOMEM, "row pipe: out of memory for %zu bytes", v->v.s.len);
        memcpy(at, v->v.s.ptr, v->v.s.len);
        v->v.s.ptr = at;
    }
    if (++c->n_rows == ROWPIPE_ROWS)
        return hand_over(p);
    return 0;
}

int mcdc_rowpipe__add(mcdc_rowpipe *p, const mcdc_value *row)
{
    mcdc_value *dst = mcdc_rowpipe__row(p);
    if (!dst)
        return MCDC_ENOMEM;
    memcpy(dst, row, p->schema->n_cols * sizeof *dst);
    return mcdc_rowpipe__push(p);
}

static void destroy(mcdc_rowpipe *p)
{
    for (int i = 0; i < ROWPIPE_CHUNKS; i++) {
        free(p->chunks[i].vals);
        for (size_t b = 0; b < p->chunks[i].n_blocks; b++)
            free(p->chunks[i].blocks[b].bytes);
        free(p->chunks[i].blocks);
    }
    free(p->byte_cols);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

int mcdc_rowpipe__finish(mcdc_rowpipe *p)
{
    int rc = 0;
    if (!p->started) { /* no chunk was handed over (or no thread): the last one, here */
        chunk *c = &p->chunks[p->fill];
        rc = write_chunk(p, c);
        release(c);
        destroy(p);
        return rc;
    }
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
    if (!p->started) {
        destroy(p);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    destroy(p);
}
