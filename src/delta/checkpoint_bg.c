/*
 * delta/checkpoint_bg.c: the writers' checkpoints, written by a background thread after the
 * commit that made them due has returned (docs/decisions/0016-background-checkpoints.md),
 * and the automatic compactions that appends asking for it leave to a second background
 * thread (docs/decisions/0046-background-auto-compaction.md).
 *
 * A commit of version V to a table with delta.checkpointInterval K (default 10) makes a
 * checkpoint due when the newest multiple of K at or below V, D = V - V % K > 0, has no
 * checkpoint at or above it (_last_checkpoint < D). mcdc_delta_commit then asks for one
 * (mcdc_delta__checkpoint_request) and returns; one worker thread per process writes it, at
 * the newest version when it gets to the table (requests for one table coalesce).
 *
 *     commit V --due?--> request(table) --> [queue] --> worker: private snapshot, newest
 *        |  no                                             version --> checkpoint file -->
 *        v                                                 _last_checkpoint --> log cleanup
 *     return                 (the commit has returned long before)
 *
 * Invariants:
 * (B1) A commit never waits for a checkpoint: asking costs a lock and a table lookup and,
 *      the first time a version is due in a process, one read of _last_checkpoint.
 * (B2) Files are written as mcdc_delta_checkpoint writes them (temp file, fsync, link
 *      without replace; _last_checkpoint replaced atomically afterwards, never backwards),
 *      so a kill -9 at any point leaves the table readable and _last_checkpoint naming a
 *      complete checkpoint or an older one.
 * (B3) A due checkpoint that is missing (the process was killed, or exited with _exit, or
 *      the write failed) is asked for again by the next commit to the table in any
 *      process, since due-ness is read from _last_checkpoint, not remembered.
 * (B4) The worker reads its own private snapshot of the table (kept between checkpoints and
 *      advanced by the commits after it), never the cached one the writers share, so a
 *      commit never has to copy the cached state because the worker holds it.
 * (B5) At exit() the process waits for the checkpoints and compactions asked for (atexit),
 *      so a short CLI run still leaves them; mcdc_delta_checkpoints_wait waits earlier. A
 *      child of fork() starts with no worker and no requests.
 * (B6) An append with compact_in_background whose commit leaves auto compaction work asks
 *      the compaction worker (a second thread, at the writers' priority) for one compaction
 *      of the table (requests coalesce) and returns. The worker runs mcdc_delta_auto_compact
 *      on a fresh snapshot, the compaction the append would have run itself: bounded,
 *      dataChange=false, giving up on a lost conflict; its commit rebases over the appends
 *      made meanwhile (they only add files). It may run beside a checkpoint of the table,
 *      which only writes a file for a version already committed. Due-ness is derived from
 *      the snapshot by every append, so a compaction lost to a kill or an _exit is asked
 *      for again by the next append. When no entry or thread is to be had, or the worker
 *      has not started the table's compaction in COMPACT_BACKLOG requests (busy with other
 *      tables, or starved of CPU), the append compacts itself: a table never runs more
 *      than that many appends ahead of its compactions.
 * Failpoints: delta.checkpoint.background, in the worker before it reads the table (the
 * writing failpoints of checkpoint.c follow); delta.compact.background, before a
 * compaction (those of compact.c follow).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "delta/internal.h"
#include "mcdc/failpoint.h"
#include "mcdc/log.h"

#define MAX_TABLES 8
#define COMPACT_BACKLOG 50 /* (B6) appends that may ask before one compacts itself */

typedef struct table_req {
    char                *path;        /* owned; the table path as the writer gave it */
    int64_t              known;       /* newest checkpoint version known to exist, or -1 */
    int64_t              want;        /* a checkpoint at or after this version is asked for; -1 none */
    int64_t              busy;        /* the version the worker is checkpointing now; -1 none */
    bool                 unsupported; /* V2-checkpoint table: this writer does not checkpoint it */
    bool                 compact_want; /* an auto compaction is asked for (B6) */
    bool                 compact_busy; /* the worker is compacting the table now */
    int                  compact_asks; /* requests since the worker last started one (B6) */
    mcdc_delta_snapshot *snap;        /* the worker's private snapshot (B4), or NULL */
    uint64_t             used;        /* LRU clock */
} table_req;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
enum { W_CHECKPOINT, W_COMPACT, W_N }; /* the two workers: checkpoints, compactions */
static pthread_cond_t  g_work[W_N] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };
                                                           /* a request for that worker */
static pthread_cond_t  g_idle = PTHREAD_COND_INITIALIZER; /* a worker finished one */
static table_req       g_t[MAX_TABLES];                    /* under g_mu */
static int             g_n;                                /* used entries of g_t */
static uint64_t        g_clock;
static bool            g_running[W_N]; /* that worker's thread exists in this process */
static bool            g_hooks;     /* atexit and atfork registered */
static bool            g_hold;      /* test hook: the workers take no new work */

/* Nothing asked for or under way for the entry: it may be given to another table. */
static bool idle_entry(const table_req *t)
{
    return t->want < 0 && t->busy < 0 && !t->compact_want && !t->compact_busy;
}

static table_req *find_locked(const char *path)
{
    for (int i = 0; i < g_n; i++)
        if (strcmp(g_t[i].path, path) == 0)
            return &g_t[i];
    return NULL;
}

static bool pending_locked(void)
{
    for (int i = 0; i < g_n; i++)
        if (!idle_entry(&g_t[i]))
            return true;
    return false;
}

/* An entry for @p path: found, free, or the least recently used idle one (its private
 * snapshot dropped into *drop for the caller to free outside the lock). NULL when every
 * entry is busy or asked for. */
static table_req *entry_locked(const char *path, mcdc_delta_snapshot **drop)
{
    table_req *t = find_locked(path);
    if (!t && g_n < MAX_TABLES) {
        char *p = strdup(path);
        if (!p)
            return NULL;
        t = &g_t[g_n++];
        *t = (table_req){ .path = p, .known = -1, .want = -1, .busy = -1 };
    }
    for (int i = 0; !t && i < g_n; i++)
        if (idle_entry(&g_t[i]) && (!t || g_t[i].used < t->used))
            t = &g_t[i];
    if (t && strcmp(t->path, path) != 0) {
        char *p = strdup(path);
        if (!p)
            return NULL;
        free(t->path);
        *drop = t->snap;
        *t = (table_req){ .path = p, .known = -1, .want = -1, .busy = -1 };
    }
    if (t)
        t->used = ++g_clock;
    return t;
}

/* ---- the worker --------------------------------------------------------------------- */

/* The table with work worker @p kind can start, least recently asked first. */
static table_req *next_locked(int kind)
{
    table_req *best = NULL;
    if (g_hold)
        return NULL;
    for (int i = 0; i < g_n; i++) {
        table_req *t = &g_t[i];
        bool ready = kind == W_CHECKPOINT ? t->want >= 0 && t->busy < 0
                                          : t->compact_want && !t->compact_busy;
        if (ready && (!best || t->used < best->used))
            best = t;
    }
    return best;
}

/* (B6) one compaction of @p t's table, g_mu held on entry and on return */
static void compact_locked(table_req *t)
{
    t->compact_want = false;
    t->compact_busy = true;
    t->compact_asks = 0;
    char *path = strdup(t->path);
    pthread_mutex_unlock(&g_mu);
    if (path) {
        mcdc_failpoint("delta.compact.background");
        mcdc_delta__auto_compact_logged(path);
    } else {
        mcdc_log(MCDC_LOG_WARN, "delta", "background compaction not run: out of memory (the "
                 "next append asks again)");
    }
    pthread_mutex_lock(&g_mu);
    t = path ? find_locked(path) : NULL; /* a busy entry is never reused */
    if (t)
        t->compact_busy = false;
    else
        for (int i = 0; i < g_n; i++)
            g_t[i].compact_busy = false; /* no path to find it by: out of memory */
    pthread_cond_broadcast(&g_idle);
    free(path);
}

static void *worker(void *arg)
{
    int kind = (int)(intptr_t)arg;
#ifdef __linux__
    /* checkpoints below the writers: on a busy machine the commit's thread gets the core
     * first. Compactions at the writers' priority (ADR 0046): at nice 10 a CPU-bound stream
     * on a loaded machine starved them, and the appends then compacted themselves. */
    if (kind == W_CHECKPOINT && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) != 0) {
    }
#endif
    pthread_mutex_lock(&g_mu);
    for (;;) {
        table_req *t = next_locked(kind);
        if (!t) {
            pthread_cond_broadcast(&g_idle);
            pthread_cond_wait(&g_work[kind], &g_mu);
            continue;
        }
        if (kind == W_COMPACT) {
            compact_locked(t);
            continue;
        }
        t->busy = t->want;
        t->want = -1;
        mcdc_delta_snapshot *snap = t->snap;
        t->snap = NULL;
        char *path = strdup(t->path);
        pthread_mutex_unlock(&g_mu);

        mcdc_failpoint("delta.checkpoint.background");
        int rc = path ? mcdc_delta__snapshot_private_latest(&snap, path)
                      : mcdc_error_set(MCDC_ENOMEM, "out of memory");
        if (rc == 0)
            rc = mcdc_delta__checkpoint_write(snap);
        bool unsupported = rc == MCDC_EUNSUPPORTED;
        if (rc == 0) {
            mcdc_delta__snapshot_cache_checkpointed(path, snap->version);
            rc = mcdc_delta__cleanup_log(snap);
        }
        if (rc < 0 && !unsupported)
            mcdc_log(MCDC_LOG_WARN, "delta", "%s: background checkpoint not written (the next "
                     "commit asks again): %s", path ? path : "?", mcdc_error_last()->message);
        mcdc_error_clear();

        pthread_mutex_lock(&g_mu);
        t = path ? find_locked(path) : NULL; /* a busy entry is never reused */
        if (t) {
            if (rc == 0 && snap->version > t->known)
                t->known = snap->version;
            t->unsupported |= unsupported;
            t->busy = -1;
            t->snap = snap;
            snap = NULL;
        }
        pthread_cond_broadcast(&g_idle);
        pthread_mutex_unlock(&g_mu);
        mcdc_delta_snapshot_free(snap);
        free(path);
        pthread_mutex_lock(&g_mu);
    }
    return NULL;
}

static void wait_all(void)
{
    pthread_mutex_lock(&g_mu);
    while ((g_running[W_CHECKPOINT] || g_running[W_COMPACT]) && pending_locked())
        pthread_cond_wait(&g_idle, &g_mu);
    pthread_mutex_unlock(&g_mu);
}

static void at_exit(void)
{
    wait_all();
}

static void atfork_prepare(void)
{
    pthread_mutex_lock(&g_mu);
}

static void atfork_parent(void)
{
    pthread_mutex_unlock(&g_mu);
}

/* (B5) the child has no worker: it forgets the requests (the next commit asks again) and
 * keeps what is known to exist; the idle entries' snapshots are its own copies */
static void atfork_child(void)
{
    for (int i = 0; i < g_n; i++) {
        g_t[i].want = -1;
        g_t[i].busy = -1;
        g_t[i].compact_want = false;
        g_t[i].compact_busy = false;
        g_t[i].compact_asks = 0;
    }
    g_running[W_CHECKPOINT] = g_running[W_COMPACT] = false;
    pthread_cond_init(&g_work[W_CHECKPOINT], NULL);
    pthread_cond_init(&g_work[W_COMPACT], NULL);
    pthread_cond_init(&g_idle, NULL);
    pthread_mutex_unlock(&g_mu);
}

/* Start worker @p kind (under g_mu); false when it cannot be started. */
static bool start_locked(int kind)
{
    if (g_running[kind])
        return true;
    if (!g_hooks) {
        if (atexit(at_exit) != 0 || pthread_atfork(atfork_prepare, atfork_parent, atfork_child) != 0)
            return false;
        g_hooks = true;
    }
    pthread_t th;
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0)
        return false;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    bool ok = pthread_create(&th, &at, worker, (void *)(intptr_t)kind) == 0;
    pthread_attr_destroy(&at);
    g_running[kind] = ok;
    return ok;
}

/* ---- requests ----------------------------------------------------------------------- */

bool mcdc_delta__checkpoint_request(const char *path, int64_t version, int64_t interval)
{
    if (version <= 0 || interval <= 0)
        return false;
    int64_t due = version - version % interval;
    if (due <= 0)
        return false;
    pthread_mutex_lock(&g_mu);
    table_req *t = find_locked(path);
    bool covered = t && (t->unsupported || t->known >= due || t->want >= due || t->busy >= due);
    pthread_mutex_unlock(&g_mu);
    if (covered)
        return false;
    int64_t last = mcdc_delta__read_last_checkpoint(path); /* (B3) outside the lock */
    mcdc_delta_snapshot *drop = NULL;
    bool inline_write = false, asked = false;
    pthread_mutex_lock(&g_mu);
    t = entry_locked(path, &drop);
    if (t) {
        if (last > t->known)
            t->known = last;
        if (!t->unsupported && t->known < due && t->want < version && t->busy < due) {
            t->want = version;
            asked = true;
            if (start_locked(W_CHECKPOINT))
                pthread_cond_signal(&g_work[W_CHECKPOINT]);
            else {
                t->want = -1;
                inline_write = true;
            }
        }
    }
    pthread_mutex_unlock(&g_mu);
    mcdc_delta_snapshot_free(drop);
    if (inline_write) {
        /* no thread to be had: write it here, as before */
        bool written;
        if (mcdc_delta__maybe_checkpoint(path, due, interval, &written) < 0) {
            mcdc_log(MCDC_LOG_WARN, "delta", "%s: checkpoint not written: %s", path,
                     mcdc_error_last()->message);
            mcdc_error_clear();
        }
    }
    return asked;
}

bool mcdc_delta__compact_request(const char *path)
{
    mcdc_delta_snapshot *drop = NULL;
    bool asked = false;
    pthread_mutex_lock(&g_mu);
    table_req *t = entry_locked(path, &drop);
    if (t && t->compact_asks < COMPACT_BACKLOG && start_locked(W_COMPACT)) {
        t->compact_want = true;
        t->compact_asks++;
        asked = true;
        pthread_cond_signal(&g_work[W_COMPACT]);
    }
    pthread_mutex_unlock(&g_mu);
    mcdc_delta_snapshot_free(drop);
    return asked;
}

void mcdc_delta__background_hold(bool hold)
{
    pthread_mutex_lock(&g_mu);
    g_hold = hold;
    if (!hold) {
        pthread_cond_broadcast(&g_work[W_CHECKPOINT]);
        pthread_cond_broadcast(&g_work[W_COMPACT]);
    }
    pthread_mutex_unlock(&g_mu);
}

int mcdc_delta_checkpoints_wait(void)
{
    wait_all();
    return 0;
}
