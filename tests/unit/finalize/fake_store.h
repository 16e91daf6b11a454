/*
 * tests/unit/finalize/fake_store.h: an in-memory verdict store and a log recorder for the
 * tracker tests: the store keeps one verdict (never backwards), counts calls and can be
 * told to fail or to block; the recorder counts messages per level. Both thread-safe.
 */
#ifndef TEST_FINALIZE_FAKE_STORE_H
#define TEST_FINALIZE_FAKE_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/log.h"

typedef struct fake_store {
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    mcdc_verdict    v;          /* the stored verdict */
    int             n_calls;    /* advance calls */
    int             n_writes;   /* calls that moved the verdict */
    int             fail_next;  /* fail this many calls, then succeed; -1 = always */
    bool            block;      /* hold every call until cleared */
} fake_store;

static void fake_store_init(fake_store *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
}

static void fake_store_dispose(fake_store *f)
{
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
}

static int fake_advance(void *payload, const mcdc_offset *end, mcdc_granularity g,
                        mcdc_verdict *out)
{
    fake_store *f = payload;
    int64_t cand;
    int rc = mcdc_finalize_candidate(&cand, end, g);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&f->mu);
    f->n_calls++;
    pthread_cond_broadcast(&f->cv);
    while (f->block)
        pthread_cond_wait(&f->cv, &f->mu);
    if (f->fail_next != 0) {
        if (f->fail_next > 0)
            f->fail_next--;
        pthread_mutex_unlock(&f->mu);
        return mcdc_error_set(MCDC_EIO, "control table: disk on fire");
    }
    if (mcdc_finalize_moves(&f->v, cand)) {
        f->v.has = true;
        f->v.until_us = cand;
        f->n_writes++;
    }
    *out = f->v;
    pthread_mutex_unlock(&f->mu);
    return 0;
}

static void fake_set(fake_store *f, int fail_next, bool block)
{
    pthread_mutex_lock(&f->mu);
    f->fail_next = fail_next;
    f->block = block;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static int fake_calls(fake_store *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->n_calls;
    pthread_mutex_unlock(&f->mu);
    return n;
}

static int fake_writes(fake_store *f)
{
    pthread_mutex_lock(&f->mu);
    int n = f->n_writes;
    pthread_mutex_unlock(&f->mu);
    return n;
}

/* Log recorder. */
static atomic_int log_n_error, log_n_warn, log_n_info;
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char log_last[1024];

static void rec_sink(mcdc_log_level level, const char *logger, const char *msg, void *payload)
{
    (void)logger;
    (void)payload;
    if (level == MCDC_LOG_ERROR) atomic_fetch_add(&log_n_error, 1);
    else if (level == MCDC_LOG_WARN) atomic_fetch_add(&log_n_warn, 1);
    else if (level == MCDC_LOG_INFO) atomic_fetch_add(&log_n_info, 1);
    pthread_mutex_lock(&log_mu);
    strncpy(log_last, msg, sizeof log_last - 1);
    pthread_mutex_unlock(&log_mu);
}

static void rec_reset(void)
{
    atomic_store(&log_n_error, 0);
    atomic_store(&log_n_warn, 0);
    atomic_store(&log_n_info, 0);
    log_last[0] = 0;
    mcdc_log_set_sink(rec_sink, NULL);
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

#endif
