/*
 * pipeline/lease.c: the lease object of a checkpoint on object storage (see lease.h).
 *
 * The object (JSON, rewritten whole, every write a compare and swap of mcdc/storage.h):
 *   {"version":1, "owner":"host:pid:random", "host":.., "pid":N, "acquired_at":TIME,
 *    "renewed_at":TIME, "expires_at":TIME, "duration_ms":N, "released":false}
 * Lease invariants:
 * (L1) Every write is a swap from the token last read or written, or a create when absent:
 *      of two streams racing for one lease exactly one wins; the other reads again.
 * (L2) A lease is taken only when absent, released, expired (expires_at before this host's
 *      clock) or already ours; a live lease of another owner is refused, or, when its owner
 *      is a process of this host that no longer runs, waited for until it expires.
 * (L3) The holder renews every third of the duration; a renewal that finds another owner
 *      marks the lease lost, and mcdc_lease_check() refuses from then on.
 * (L4) Release rewrites the object as released (a swap: a lease taken over meanwhile is
 *      left alone); it is never deleted, so its token history stays one chain.
 * Expiry compares the holder's clock with the reader's: hosts sharing a checkpoint need
 * clocks within a small part of the lease (NTP). The lease never guards correctness.
 */
#include "pipeline/lease.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mcdc/error.h"
#include "mcdc/log.h"
#include "mcdc/storage.h"
#include "mcdc/time.h"

#define MAX_LEASE_BYTES 4096
#define MAX_RACES 64 /* swaps lost in a row before giving up */

struct mcdc_lease {
    char           *loc;          /* the lease object */
    char           *what;         /* the checkpoint, for messages */
    char            owner[160];   /* ours: host:pid:random */
    char            host[96];
    int64_t         duration_us;
    int64_t         acquired_at_us;
    pthread_t       thread;       /* the renewer */
    bool            has_thread;
    pthread_mutex_t mu;           /* guards everything below */
    pthread_cond_t  cv;           /* signalled by release */
    bool            stop;
    char            token[sizeof ((mcdc_storage_info *)0)->token]; /* of our last write */
    int64_t         expires_at_us; /* as our last write recorded it */
    bool            lost;         /* a renewal found another owner (L3) */
    char            lost_to[160];
};

/* What a lease object says. */
typedef struct holder {
    char    owner[160], host[96];
    int64_t pid, expires_at_us;
    bool    released;
} holder;

static void sleep_us(int64_t us)
{
    struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static int parse_holder(holder *out, const char *text, size_t len, const char *loc)
{
    memset(out, 0, sizeof *out);
    json_error_t je;
    json_t *j = json_loadb(text ? text : "", len, 0, &je);
    const char *owner = NULL, *host = NULL, *exp = NULL;
    json_int_t pid = 0;
    int released = 0;
    int rc = 0;
    if (!j || json_unpack(j, "{s:s, s:s, s:I, s:s, s?b}", "owner", &owner, "host", &host, "pid", &pid,
                          "expires_at", &exp, "released", &released) != 0 ||
        mcdc_time_parse(&out->expires_at_us, exp) < 0) {
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: not a lease (needs owner, host, pid and expires_at)", loc);
        mcdc_error_hint("remove %s when no stream runs on this checkpoint; the next stream writes it again", loc);
    } else {
        snprintf(out->owner, sizeof out->owner, "%s", owner);
        snprintf(out->host, sizeof out->host, "%s", host);
        out->pid = pid;
        out->released = released != 0;
    }
    json_decref(j);
    return rc;
}

/* The object's text for a write now: expiring @p expires_at_us. malloc'd. */
static char *render(const mcdc_lease *l, int64_t now_us, int64_t expires_at_us, bool released)
{
    char acq[MCDC_TIME_STRLEN], ren[MCDC_TIME_STRLEN], exp[MCDC_TIME_STRLEN];
    json_t *j = json_pack("{s:i, s:s, s:s, s:I, s:s, s:s, s:s, s:I, s:b}", "version", 1, "owner", l->owner,
                          "host", l->host, "pid", (json_int_t)getpid(), "acquired_at",
                          mcdc_time_format(acq, l->acquired_at_us, 3, true), "renewed_at",
                          mcdc_time_format(ren, now_us, 3, true), "expires_at",
                          mcdc_time_format(exp, expires_at_us, 3, true), "duration_ms",
                          (json_int_t)(l->duration_us / 1000), "released", released);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    return text;
}

/* Swap our content in from @p token (NULL: create). Updates token and expiry on success. */
static int write_lease(mcdc_lease *l, const char *token, bool released)
{
    int64_t now = mcdc_time_now_us(), exp = released ? now : now + l->duration_us;
    char *text = render(l, now, exp, released);
    if (!text)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", l->loc);
    mcdc_storage_info info;
    int rc = mcdc_storage_swap(&info, l->loc, text, strlen(text), token);
    free(text);
    if (rc == 0) {
        pthread_mutex_lock(&l->mu);
        snprintf(l->token, sizeof l->token, "%s", info.token);
        l->expires_at_us = exp;
        pthread_mutex_unlock(&l->mu);
    }
    return rc;
}

/* Read the lease object: its holder and token. MCDC_ENOTFOUND when absent. */
static int read_lease(holder *h, char token[sizeof ((mcdc_storage_info *)0)->token], const char *loc)
{
    mcdc_buf b = MCDC_BUF_INIT(MAX_LEASE_BYTES);
    mcdc_storage_info info;
    int rc = mcdc_storage_read(&b, &info, loc);
    if (rc == 0)
        rc = parse_holder(h, b.ptr, b.len, loc);
    if (rc == 0)
        snprintf(token, sizeof info.token, "%s", info.token);
    mcdc_buf_dispose(&b);
    return rc;
}

static bool process_gone(int64_t pid)
{
    return pid > 0 && pid != (int64_t)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* ---- the renewer (L3) ---------------------------------------------------------------- */

static void *renewer(void *arg)
{
    mcdc_lease *l = arg;
    int64_t every = l->duration_us / 3;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        int64_t ns = (int64_t)until.tv_nsec + (every % 1000000) * 1000;
        until.tv_sec += (time_t)(every / 1000000 + ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        while (!l->stop && pthread_cond_timedwait(&l->cv, &l->mu, &until) == 0)
            ;
        if (l->stop || l->lost)
            break;
        char token[sizeof l->token];
        snprintf(token, sizeof token, "%s", l->token);
        pthread_mutex_unlock(&l->mu);
        int rc = write_lease(l, token, false);
        if (rc == MCDC_ECONFLICT || rc == MCDC_ENOTFOUND) {
            holder h;
            char cur[sizeof l->token];
            int rr = read_lease(&h, cur, l->loc);
            pthread_mutex_lock(&l->mu);
            if (rr == 0 && strcmp(h.owner, l->owner) == 0) {
                snprintf(l->token, sizeof l->token, "%s", cur); /* our own write, its answer lost */
            } else if (rr == 0 || rr == MCDC_ENOTFOUND) {
                l->lost = true;
                snprintf(l->lost_to, sizeof l->lost_to, "%s", rr == 0 ? h.owner : "(removed)");
                mcdc_log(MCDC_LOG_ERROR, "checkpoint", "%s: the lease was taken over by %s; this stream stops "
                         "before its next checkpoint write", l->what, l->lost_to);
            }
            pthread_mutex_unlock(&l->mu);
            mcdc_error_clear();
        } else if (rc < 0) {
            mcdc_log(MCDC_LOG_WARN, "checkpoint", "%s: renewing the lease: %s (retried in %" PRId64 " ms)", l->what,
                     mcdc_error_last()->message, every / 1000);
            mcdc_error_clear();
        }
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* ---- acquire, check, release --------------------------------------------------------- */

static mcdc_lease *lease_new(const char *loc, int64_t duration_us, const char *what)
{
    mcdc_lease *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->loc = strdup(loc);
    l->what = strdup(what);
    if (!l->loc || !l->what) {
        free(l->loc);
        free(l->what);
        free(l);
        return NULL;
    }
    l->duration_us = duration_us;
    if (gethostname(l->host, sizeof l->host) != 0 || !l->host[0])
        snprintf(l->host, sizeof l->host, "localhost");
    l->host[sizeof l->host - 1] = '\0';
    uint8_t r[4] = { 0 };
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        r[0] = (uint8_t)mcdc_time_mono_us();
    snprintf(l->owner, sizeof l->owner, "%s:%ld:%02x%02x%02x%02x", l->host, (long)getpid(), r[0], r[1], r[2], r[3]);
    pthread_mutex_init(&l->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&l->cv, &ca);
    pthread_condattr_destroy(&ca);
    return l;
}

static void lease_free(mcdc_lease *l)
{
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l->loc);
    free(l->what);
    free(l);
}

static int refuse(const mcdc_lease *l, const holder *h, int64_t now)
{
    double left = (double)(h->expires_at_us - now) / 1e6;
    mcdc_error_set(MCDC_ECONFLICT, "checkpoint %s: another stream holds its lease: owner %s (pid %" PRId64
                   " on %s), for another %.1f s", l->what, h->owner, h->pid, h->host, left);
    return mcdc_error_hint("one stream per checkpoint: stop that stream; a stream that died without stopping "
                           "keeps its lease until it expires (%.1f s from now), after which it is taken over", left);
}

int mcdc_lease_acquire(mcdc_lease **out, const char *loc, int64_t duration_us, const char *what)
{
    MCDC_ASSERT_ARG(out && loc && what && duration_us >= MCDC_LEASE_MIN_US);
    *out = NULL;
    mcdc_lease *l = lease_new(loc, duration_us, what);
    if (!l)
        return mcdc_error_set(MCDC_ENOMEM, "%s: out of memory", loc);
    l->acquired_at_us = mcdc_time_now_us();
    int rc = 0, races = 0;
    char waited_for[160] = "";
    for (;;) {
        holder h;
        char token[sizeof l->token];
        rc = read_lease(&h, token, loc);
        if (rc == MCDC_ENOTFOUND) {
            mcdc_error_clear();
            rc = write_lease(l, NULL, false);
        } else if (rc == 0) {
            int64_t now = mcdc_time_now_us();
            bool mine = strcmp(h.owner, l->owner) == 0;
            if (h.released || h.expires_at_us <= now || mine) {
                rc = write_lease(l, token, false);
                if (rc == 0 && !h.released && !mine)
                    mcdc_log(MCDC_LOG_INFO, "checkpoint", "%s: took over the expired lease of %s", what, h.owner);
            } else if (strcmp(h.host, l->host) == 0 && process_gone(h.pid)) {
                /* a stream of this host that died holding it: wait for the expiry (L2) */
                int64_t wait = h.expires_at_us - now;
                if (strcmp(waited_for, h.owner) != 0) {
                    mcdc_log(MCDC_LOG_WARN, "checkpoint", "%s: the lease of %s (pid %" PRId64 ", no longer running) "
                             "expires in %.1f s; waiting for it", what, h.owner, h.pid, (double)wait / 1e6);
                    snprintf(waited_for, sizeof waited_for, "%s", h.owner);
                }
                sleep_us(wait + 20000);
                continue;
            } else {
                rc = refuse(l, &h, now);
                break;
            }
        } else {
            break;
        }
        if (rc == 0)
            break;
        if ((rc != MCDC_ECONFLICT && rc != MCDC_ENOTFOUND) || ++races > MAX_RACES)
            break;
        mcdc_error_clear(); /* another stream wrote it between our read and swap (L1) */
    }
    if (rc == 0) {
        if (pthread_create(&l->thread, NULL, renewer, l) != 0) {
            rc = mcdc_error_set(MCDC_EIO, "%s: cannot start the lease's renewal thread", loc);
            write_lease(l, l->token, true);
        } else {
            l->has_thread = true;
        }
    }
    if (rc < 0) {
        lease_free(l);
        return rc;
    }
    mcdc_log(MCDC_LOG_DEBUG, "checkpoint", "%s: lease taken as %s for %" PRId64 " ms", what, l->owner,
             duration_us / 1000);
    *out = l;
    return 0;
}

int mcdc_lease_check(mcdc_lease *l)
{
    pthread_mutex_lock(&l->mu);
    bool lost = l->lost;
    char to[sizeof l->lost_to];
    snprintf(to, sizeof to, "%s", l->lost_to);
    pthread_mutex_unlock(&l->mu);
    if (!lost)
        return 0;
    mcdc_error_set(MCDC_ECONFLICT, "checkpoint %s: its lease was taken over by %s while this stream ran",
                   l->what, to);
    return mcdc_error_hint("another stream writes this checkpoint: keep one stream per checkpoint (a longer "
                           "--lease rides out slower renewals)");
}

const char *mcdc_lease_owner(const mcdc_lease *l)
{
    return l->owner;
}

void mcdc_lease_release(mcdc_lease *l)
{
    if (!l)
        return;
    mcdc_error saved = *mcdc_error_last(); /* a caller's failure being cleaned up stays the error */
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->cv);
    pthread_mutex_unlock(&l->mu);
    if (l->has_thread)
        pthread_join(l->thread, NULL);
    if (!l->lost) {
        char token[sizeof l->token];
        snprintf(token, sizeof token, "%s", l->token);
        if (write_lease(l, token, true) < 0) {
            mcdc_log(MCDC_LOG_DEBUG, "checkpoint", "%s: releasing the lease: %s", l->what,
                     mcdc_error_last()->message);
        }
    }
    lease_free(l);
    if (saved.code) {
        mcdc_error_restore(&saved);
    } else {
        mcdc_error_clear();
    }
}
