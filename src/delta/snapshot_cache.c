/*
 * delta/snapshot_cache.c: mcdc_delta_snapshot_open through an in-process cache of the
 * newest snapshot of a few tables, brought up to date by reading only the commits after
 * it (docs/decisions/0004-delta-snapshot-cache.md).
 *
 * An open of table T at the latest version (or at version N) finds T's cached snapshot
 * at version C and reads C+1.json, C+2.json, ... until one is absent (or up to N), then
 * checks that C.json is still the file the cached state was built from. The commits read
 * are applied to the cached state, in place when no one else holds it, else to a copy.
 * Anything unusual falls back to the full load of snapshot.c, which also gives the
 * errors, so a corrupt or missing commit is reported exactly as without the cache.
 *
 * Cache invariants:
 * (C1) Freshness: the version returned is the newest whose commit file existed when its
 *      successor was probed and found absent, i.e. the latest at the time of the call.
 *      Commit files appear whole (link of a fsynced temp file) and are never rewritten.
 * (C2) Identity: a cached state is used only while its version's commit file has the
 *      change token (locally device, inode, size, mtime and ctime; size and ETag on an
 *      object store) as when the state was read, checked after
 *      the probes; a table deleted and recreated at the path is loaded afresh, as is one
 *      whose new commits carry a metaData with another table id.
 * (C3) Sharing: a cached snapshot is shared read-only by reference count; it is changed
 *      in place only under the cache lock while the cache and the opener hold the only two
 *      references, so no other reader ever sees it change.
 * (C4) Bounds: at most `limit` tables (LRU; default 8, MCDC_SNAPSHOT_CACHE, or
 *      mcdc_delta_snapshot_cache_limit), tables over MAX_CACHED_ACTIONS actions are not
 *      kept, and tombstones past delta.deletedFileRetentionDuration are pruned as the
 *      cached state grows, as a checkpoint would drop them.
 * (C5) As-of opens below the cached version bypass the cache; at or above it they read
 *      forward exactly to the version asked for.
 * (C6) A table's first load is made once: concurrent opens of its latest version wait for
 *      the one that loads it (a run checking its tables on several threads at once).
 * Locking: one mutex guards the table list, the loads in progress, the counters and
 * in-place changes; file reads and full loads run outside it. It is held across fork(2),
 * so a child never inherits it locked (nor a load in progress).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "delta/internal.h"
#include "mcdc/storage.h"
#include "mcdc/log.h"

#define DEFAULT_TABLES     8
#define MAX_TABLES         64
#define MAX_CACHED_ACTIONS ((size_t)4 << 20)

/* The hidden part of a shared snapshot. */
struct mcdc_delta__snapshot_priv {
    atomic_int          refs;       /* holders, the cache included */
    mcdc_delta__file_id id;         /* identity of the version's commit file */
    size_t              files_cap;  /* allocated entries of snap->files */
    size_t              tombs_cap;  /* allocated entries of snap->tombstones */
    size_t             *tslots;     /* hash index of tombstones (indexes), or NULL */
    size_t              n_tslots;   /* power of two */
    size_t              prune_at;   /* prune expired tombstones above this count */
};

typedef struct centry {
    char                *path; /* owned: the table path as given */
    mcdc_delta_snapshot *snap; /* one reference held by the cache */
    uint64_t             used; /* LRU clock */
    int64_t              cp_told; /* a checkpoint of this version exists (background writer), or 0 */
} centry;

static pthread_mutex_t        g_mu = PTHREAD_MUTEX_INITIALIZER;
static centry                 g_e[MAX_TABLES];
static int                    g_n;
static int                    g_limit = -1; /* -1: not read from the environment yet */
static uint64_t               g_clock;
static mcdc_delta_cache_stats g_stats;

/* ---- identity ----------------------------------------------------------------------- */

void mcdc_delta__file_id_of(mcdc_delta__file_id *out, const char *path)
{
    mcdc_storage_info info;
    memset(out, 0, sizeof *out);
    if (mcdc_storage_stat(&info, path) != 0 || !info.token[0]) {
        mcdc_error_clear();
        return;
    }
    out->valid = true;
    memcpy(out->token, info.token, sizeof out->token);
    out->mtime_ms = info.mtime_ms;
}

bool mcdc_delta__file_id_same(const mcdc_delta__file_id *a, const mcdc_delta__file_id *b)
{
    return a->valid && b->valid && strcmp(a->token, b->token) == 0;
}

/* ---- references --------------------------------------------------------------------- */

static void priv_free(struct mcdc_delta__snapshot_priv *p)
{
    if (p) {
        free(p->tslots);
        free(p);
    }
}

bool mcdc_delta__snapshot_unref(mcdc_delta_snapshot *s)
{
    struct mcdc_delta__snapshot_priv *p = s->priv;
    if (!p)
        return true;
    if (atomic_fetch_sub(&p->refs, 1) > 1)
        return false;
    priv_free(p);
    s->priv = NULL;
    return true;
}

/* Make @p s shareable (refs 1) with the identity @p id. */
static int share(mcdc_delta_snapshot *s, const mcdc_delta__file_id *id)
{
    struct mcdc_delta__snapshot_priv *p = calloc(1, sizeof *p);
    if (!p)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
    atomic_init(&p->refs, 1);
    p->id = *id;
    p->files_cap = s->n_files;
    p->tombs_cap = s->n_tombstones;
    p->prune_at = s->n_tombstones * 2 > 1024 ? s->n_tombstones * 2 : 1024;
    s->priv = p;
    return 0;
}

/* ---- the table list (under g_mu) ---------------------------------------------------- */

static void atfork_prepare(void)
{
    pthread_mutex_lock(&g_mu);
}

static void atfork_release(void)
{
    pthread_mutex_unlock(&g_mu);
}

static void forget_loads_locked(void);

/* The child has none of the parent's threads: no load in progress is its (C6). */
static void atfork_child(void)
{
    forget_loads_locked();
    pthread_mutex_unlock(&g_mu);
}

/* A child forked while another thread holds the lock must not inherit it held, nor wait
 * for a load another thread of the parent was making. */
static void atfork_once_locked(void)
{
    static bool registered;
    if (!registered)
        registered = pthread_atfork(atfork_prepare, atfork_release, atfork_child) == 0;
}

static int limit_locked(void)
{
    atfork_once_locked();
    if (g_limit < 0) {
        const char *e = getenv("MCDC_SNAPSHOT_CACHE");
        g_limit = DEFAULT_TABLES;
        if (e && *e) {
            char *end;
            long v = strtol(e, &end, 10);
            if (*end == '\0' && v >= 0)
                g_limit = v > MAX_TABLES ? MAX_TABLES : (int)v;
        }
    }
    return g_limit;
}

static centry *find_locked(const char *path)
{
    for (int i = 0; i < g_n; i++)
        if (strcmp(g_e[i].path, path) == 0)
            return &g_e[i];
    return NULL;
}

/* Remove entry @p e; returns its snapshot (the cache's reference) for the caller to free
 * outside the lock. */
static mcdc_delta_snapshot *evict_locked(centry *e)
{
    mcdc_delta_snapshot *s = e->snap;
    free(e->path);
    *e = g_e[--g_n];
    memset(&g_e[g_n], 0, sizeof g_e[g_n]);
    return s;
}

/* Make @p s (shared, the caller's reference) the cached state of @p path unless the cache
 * already has that version or a newer one. Returns a snapshot to free outside the lock. */
static mcdc_delta_snapshot *install_locked(const char *path, mcdc_delta_snapshot *s)
{
    int limit = limit_locked();
    if (limit == 0 || s->n_files + s->n_tombstones > MAX_CACHED_ACTIONS)
        return NULL;
    centry *e = find_locked(path);
    if (e) {
        if (e->snap == s || e->snap->version >= s->version)
            return NULL;
        mcdc_delta_snapshot *old = e->snap;
        atomic_fetch_add(&s->priv->refs, 1);
        e->snap = s;
        e->used = ++g_clock;
        e->cp_told = 0; /* a full load or a copy: it knows its own checkpoint */
        return old;
    }
    mcdc_delta_snapshot *old = NULL;
    if (g_n >= limit) {
        int lru = 0;
        for (int i = 1; i < g_n; i++)
            if (g_e[i].used < g_e[lru].used)
                lru = i;
        old = evict_locked(&g_e[lru]);
    }
    char *p = strdup(path);
    if (!p)
        return old; /* not cached: fine */
    atomic_fetch_add(&s->priv->refs, 1);
    g_e[g_n].path = p;
    g_e[g_n].snap = s;
    g_e[g_n].used = ++g_clock;
    g_n++;
    return old;
}

void mcdc_delta_snapshot_cache_stats(mcdc_delta_cache_stats *out)
{
    pthread_mutex_lock(&g_mu);
    *out = g_stats;
    pthread_mutex_unlock(&g_mu);
}

void mcdc_delta_snapshot_cache_limit(int max_tables)
{
    mcdc_delta_snapshot *drop[MAX_TABLES];
    int n_drop = 0;
    pthread_mutex_lock(&g_mu);
    atfork_once_locked();
    g_limit = max_tables < 0 ? 0 : max_tables > MAX_TABLES ? MAX_TABLES : max_tables;
    while (g_n > g_limit) {
        int lru = 0;
        for (int i = 1; i < g_n; i++)
            if (g_e[i].used < g_e[lru].used)
                lru = i;
        drop[n_drop++] = evict_locked(&g_e[lru]);
    }
    pthread_mutex_unlock(&g_mu);
    for (int i = 0; i < n_drop; i++)
        mcdc_delta_snapshot_free(drop[i]);
}

/* ---- reading the commits after the cached version ----------------------------------- */

typedef struct pending {
    mcdc_delta_action *a;       /* actions of the commits read, in order (owned) */
    size_t             n, cap;
    const char        *table_id; /* the cached metaData id (borrowed) */
    bool               other_table; /* a metaData with another id was read */
} pending;

static void pending_free(pending *p)
{
    for (size_t i = 0; i < p->n; i++)
        mcdc_delta_action_clear(&p->a[i]);
    free(p->a);
    memset(p, 0, sizeof *p);
}

static int collect(mcdc_delta_action *a, void *payload)
{
    pending *p = payload;
    switch (a->kind) {
    case MCDC_DELTA_ACTION_CHECKPOINT_METADATA:
    case MCDC_DELTA_ACTION_SIDECAR:
        /* not allowed in a commit: the full load reports it */
        return mcdc_error_set(MCDC_ECORRUPT, "checkpoint-only action in a commit file");
    case MCDC_DELTA_ACTION_METADATA:
        if (strcmp(a->u.metadata.id ? a->u.metadata.id : "", p->table_id) != 0)
            p->other_table = true;
        break;
    case MCDC_DELTA_ACTION_PROTOCOL:
    case MCDC_DELTA_ACTION_ADD:
    case MCDC_DELTA_ACTION_REMOVE:
    case MCDC_DELTA_ACTION_TXN:
    case MCDC_DELTA_ACTION_DOMAIN_METADATA:
        break;
    default:
        return 0; /* commitInfo, cdc, unknown: no state */
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        mcdc_delta_action *x = realloc(p->a, cap * sizeof *x);
        if (!x)
            return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
        p->a = x;
        p->cap = cap;
    }
    p->a[p->n++] = *a;
    memset(a, 0, sizeof *a); /* ownership moved */
    return 0;
}

/* Read commit @p v into @p p. 1 when read (with its identity), 0 when absent, < 0 on
 * an error (for the full load to report). */
static int read_commit(pending *p, const char *logdir, int64_t v, mcdc_delta__file_id *id)
{
    char name[32];
    mcdc_delta__commit_name(name, v);
    char *path = mcdc_delta__join(logdir, name);
    if (!path)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_buf buf = MCDC_BUF_INIT(MCDC_DELTA_MAX_COMMIT_BYTES);
    mcdc_storage_info info;
    int rc = mcdc_storage_read(&buf, &info, path);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        mcdc_buf_dispose(&buf);
        free(path);
        return 0;
    }
    if (rc == MCDC_ENOMEM && buf.len == 0 && info.size > MCDC_DELTA_MAX_COMMIT_BYTES)
        rc = mcdc_error_set(MCDC_ECORRUPT, "%s: commit file too large", name);
    if (rc == 0) {
        id->valid = info.token[0] != '\0';
        memcpy(id->token, info.token, sizeof id->token);
        id->mtime_ms = info.mtime_ms;
        rc = mcdc_delta__parse_json_actions(path, buf.ptr ? buf.ptr : "", buf.len, collect, p);
    }
    mcdc_buf_dispose(&buf);
    free(path);
    return rc < 0 ? rc : 1;
}

/* ---- applying actions to a snapshot ------------------------------------------------- */

static bool same_key(const mcdc_delta_file *a, const mcdc_delta_file *b)
{
    if (strcmp(a->path, b->path) != 0 || a->has_dv != b->has_dv)
        return false;
    if (!a->has_dv)
        return true;
    return a->dv.storage_type == b->dv.storage_type &&
           (a->dv.offset < 0 ? -1 : a->dv.offset) == (b->dv.offset < 0 ? -1 : b->dv.offset) &&
           strcmp(a->dv.path_or_inline_dv, b->dv.path_or_inline_dv) == 0;
}

static uint64_t key_hash(const mcdc_delta_file *f)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *s = f->path; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    if (f->has_dv) {
        h = (h ^ (unsigned char)f->dv.storage_type) * 1099511628211ULL;
        for (const char *s = f->dv.path_or_inline_dv; *s; s++)
            h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    }
    return h;
}

/* Index of the live file with @p f's key, or -1; *at gets the first index whose path is
 * not less than f->path (where a new file goes). */
static ptrdiff_t find_live(const mcdc_delta_snapshot *s, const mcdc_delta_file *f, size_t *at)
{
    size_t lo = 0, hi = s->n_files;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->files[mid].path, f->path) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *at = lo;
    for (size_t i = lo; i < s->n_files && strcmp(s->files[i].path, f->path) == 0; i++)
        if (same_key(&s->files[i], f))
            return (ptrdiff_t)i;
    return -1;
}

static int tomb_rehash(mcdc_delta_snapshot *s, size_t n_slots)
{
    struct mcdc_delta__snapshot_priv *p = s->priv;
    size_t *t = malloc(n_slots * sizeof *t);
    if (!t)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
    for (size_t i = 0; i < n_slots; i++)
        t[i] = SIZE_MAX;
    for (size_t i = 0; i < s->n_tombstones; i++) {
        size_t h = (size_t)key_hash(&s->tombstones[i]) & (n_slots - 1);
        while (t[h] != SIZE_MAX)
            h = (h + 1) & (n_slots - 1);
        t[h] = i;
    }
    free(p->tslots);
    p->tslots = t;
    p->n_tslots = n_slots;
    return 0;
}

/* Make room for one more tombstone in the index. */
static int tomb_reserve(mcdc_delta_snapshot *s)
{
    struct mcdc_delta__snapshot_priv *p = s->priv;
    if (p->tslots && (s->n_tombstones + 1) * 2 <= p->n_tslots)
        return 0;
    size_t n = 1024;
    while (n < (s->n_tombstones + 1) * 2)
        n *= 2;
    return tomb_rehash(s, n);
}

/* Slot holding the tombstone with @p f's key, or SIZE_MAX; *free_slot gets the empty
 * slot where it would go. */
static size_t tomb_slot(const mcdc_delta_snapshot *s, const mcdc_delta_file *f, size_t *free_slot)
{
    const struct mcdc_delta__snapshot_priv *p = s->priv;
    size_t m = p->n_tslots - 1, h = (size_t)key_hash(f) & m;
    while (p->tslots[h] != SIZE_MAX) {
        if (same_key(&s->tombstones[p->tslots[h]], f))
            return h;
        h = (h + 1) & m;
    }
    if (free_slot)
        *free_slot = h;
    return SIZE_MAX;
}

/* Delete the index slot @p h (backward-shift deletion for linear probing). */
static void tslot_delete(struct mcdc_delta__snapshot_priv *p, const mcdc_delta_snapshot *s,
                         size_t h)
{
    size_t m = p->n_tslots - 1, i = h, j = h;
    for (;;) {
        j = (j + 1) & m;
        if (p->tslots[j] == SIZE_MAX)
            break;
        size_t k = (size_t)key_hash(&s->tombstones[p->tslots[j]]) & m;
        /* move j back to i unless its home k lies cyclically in (i, j] */
        bool stay = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stay) {
            p->tslots[i] = p->tslots[j];
            i = j;
        }
    }
    p->tslots[i] = SIZE_MAX;
}

/* Remove the tombstone in slot @p h: the last tombstone takes its place. */
static void tomb_remove(mcdc_delta_snapshot *s, size_t h)
{
    struct mcdc_delta__snapshot_priv *p = s->priv;
    size_t idx = p->tslots[h], last = s->n_tombstones - 1;
    tslot_delete(p, s, h);
    mcdc_delta_file_clear(&s->tombstones[idx]);
    if (idx != last) {
        size_t hl = tomb_slot(s, &s->tombstones[last], NULL);
        s->tombstones[idx] = s->tombstones[last];
        if (hl != SIZE_MAX)
            p->tslots[hl] = idx;
    }
    memset(&s->tombstones[last], 0, sizeof s->tombstones[last]);
    s->n_tombstones--;
}

static int apply_file(mcdc_delta_snapshot *s, mcdc_delta_file *f, bool is_add)
{
    struct mcdc_delta__snapshot_priv *p = s->priv;
    int rc = tomb_reserve(s);
    if (rc < 0)
        return rc;
    size_t at;
    ptrdiff_t live = find_live(s, f, &at);
    size_t free_slot = SIZE_MAX;
    size_t th = tomb_slot(s, f, &free_slot);
    if (is_add) {
        if (th != SIZE_MAX)
            tomb_remove(s, th);
        if (live >= 0) {
            mcdc_delta_file_clear(&s->files[live]);
            s->files[live] = *f;
        } else {
            if (s->n_files == p->files_cap) {
                size_t cap = p->files_cap ? p->files_cap * 2 : 16;
                mcdc_delta_file *x = realloc(s->files, cap * sizeof *x);
                if (!x)
                    return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
                s->files = x;
                p->files_cap = cap;
            }
            memmove(&s->files[at + 1], &s->files[at], (s->n_files - at) * sizeof *s->files);
            s->files[at] = *f;
            s->n_files++;
        }
    } else {
        if (live >= 0) {
            mcdc_delta_file_clear(&s->files[live]);
            memmove(&s->files[live], &s->files[live + 1],
                    (s->n_files - (size_t)live - 1) * sizeof *s->files);
            s->n_files--;
        }
        if (th != SIZE_MAX) {
            size_t idx = p->tslots[th];
            mcdc_delta_file_clear(&s->tombstones[idx]);
            s->tombstones[idx] = *f;
        } else {
            if (s->n_tombstones == p->tombs_cap) {
                size_t cap = p->tombs_cap ? p->tombs_cap * 2 : 16;
                mcdc_delta_file *x = realloc(s->tombstones, cap * sizeof *x);
                if (!x)
                    return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
                s->tombstones = x;
                p->tombs_cap = cap;
            }
            s->tombstones[s->n_tombstones] = *f;
            p->tslots[free_slot] = s->n_tombstones++;
        }
    }
    memset(f, 0, sizeof *f);
    return 0;
}

static int apply_txn(mcdc_delta_snapshot *s, mcdc_delta_txn *t)
{
    size_t lo = 0, hi = s->n_txns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(s->txns[mid].app_id, t->app_id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->n_txns && strcmp(s->txns[lo].app_id, t->app_id) == 0) {
        free(s->txns[lo].app_id);
        s->txns[lo] = *t;
    } else {
        mcdc_delta_txn *x = realloc(s->txns, (s->n_txns + 1) * sizeof *x);
        if (!x)
            return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
        s->txns = x;
        memmove(&x[lo + 1], &x[lo], (s->n_txns - lo) * sizeof *x);
        x[lo] = *t;
        s->n_txns++;
    }
    memset(t, 0, sizeof *t);
    return 0;
}

static int apply_domain(mcdc_delta_snapshot *s, mcdc_delta_domain *d)
{
    size_t i = 0;
    while (i < s->n_domains && strcmp(s->domains[i].domain, d->domain) != 0)
        i++;
    if (i < s->n_domains) {
        free(s->domains[i].domain);
        free(s->domains[i].configuration);
        if (d->removed) {
            s->domains[i] = s->domains[--s->n_domains];
            free(d->domain);
            free(d->configuration);
        } else {
            s->domains[i] = *d;
        }
    } else if (d->removed) {
        free(d->domain);
        free(d->configuration);
    } else {
        mcdc_delta_domain *x = realloc(s->domains, (s->n_domains + 1) * sizeof *x);
        if (!x)
            return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
        s->domains = x;
        x[s->n_domains++] = *d;
    }
    memset(d, 0, sizeof *d);
    return 0;
}

static void clear_as(mcdc_delta_action_kind kind, void *member, size_t size)
{
    mcdc_delta_action a = { .kind = kind };
    memcpy(&a.u, member, size);
    mcdc_delta_action_clear(&a);
    memset(member, 0, size);
}

static int apply_metadata(mcdc_delta_snapshot *s, mcdc_delta_metadata *m)
{
    mcdc_delta_schema *schema = NULL;
    int rc = mcdc_delta_schema_parse(&schema, m->schema_string);
    if (rc < 0)
        return rc;
    clear_as(MCDC_DELTA_ACTION_METADATA, &s->metadata, sizeof s->metadata);
    mcdc_delta_schema_free(s->schema);
    s->metadata = *m;
    memset(m, 0, sizeof *m);
    s->schema = schema;
    return 0;
}

/* Drop tombstones past the retention, as the next checkpoint would (C4). */
static int prune_tombstones(mcdc_delta_snapshot *s)
{
    struct mcdc_delta__snapshot_priv *p = s->priv;
    int64_t cutoff = mcdc_delta__now_ms() -
                     mcdc_delta__interval_ms(mcdc_delta_snapshot_config(
                                                 s, "delta.deletedFileRetentionDuration", NULL),
                                             7 * 86400000LL);
    size_t k = 0;
    for (size_t i = 0; i < s->n_tombstones; i++) {
        if (s->tombstones[i].deletion_timestamp >= 0 && s->tombstones[i].deletion_timestamp < cutoff)
            mcdc_delta_file_clear(&s->tombstones[i]);
        else
            s->tombstones[k++] = s->tombstones[i];
    }
    s->n_tombstones = k;
    p->prune_at = k * 2 > 1024 ? k * 2 : 1024;
    free(p->tslots);
    p->tslots = NULL;
    p->n_tslots = 0;
    return 0;
}

/* Apply @p p's actions to @p s, which no one else can see. On failure @p s is
 * inconsistent and must be dropped. */
static int apply_pending(mcdc_delta_snapshot *s, pending *p)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->n; i++) {
        mcdc_delta_action *a = &p->a[i];
        switch (a->kind) {
        case MCDC_DELTA_ACTION_PROTOCOL:
            clear_as(MCDC_DELTA_ACTION_PROTOCOL, &s->protocol, sizeof s->protocol);
            s->protocol = a->u.protocol;
            memset(&a->u.protocol, 0, sizeof a->u.protocol);
            break;
        case MCDC_DELTA_ACTION_METADATA:
            rc = apply_metadata(s, &a->u.metadata);
            break;
        case MCDC_DELTA_ACTION_ADD:
        case MCDC_DELTA_ACTION_REMOVE:
            rc = apply_file(s, &a->u.file, a->kind == MCDC_DELTA_ACTION_ADD);
            break;
        case MCDC_DELTA_ACTION_TXN:
            rc = apply_txn(s, &a->u.txn);
            break;
        case MCDC_DELTA_ACTION_DOMAIN_METADATA:
            rc = apply_domain(s, &a->u.domain);
            break;
        default:
            break;
        }
        if (rc == 0)
            a->kind = MCDC_DELTA_ACTION_UNKNOWN; /* consumed */
    }
    if (rc == 0)
        rc = mcdc_delta_check_readable(&s->protocol, &s->metadata);
    if (rc == 0) /* after both: a commit may change the protocol, the metadata or both */
        s->column_mapping = mcdc_delta__cm_mode(&s->protocol, &s->metadata.configuration);
    if (rc == 0 && s->n_tombstones > s->priv->prune_at)
        rc = prune_tombstones(s);
    return rc;
}

void mcdc_delta__snapshot_checkpointed(mcdc_delta_snapshot *s)
{
    if (!s->priv)
        return;
    pthread_mutex_lock(&g_mu);
    centry *e = find_locked(s->table_path);
    if (e && e->snap == s && atomic_load(&s->priv->refs) == 2 && s->checkpoint_version < s->version) {
        s->checkpoint_version = s->version;
        prune_tombstones(s);
    }
    pthread_mutex_unlock(&g_mu);
}

void mcdc_delta__snapshot_cache_checkpointed(const char *path, int64_t version)
{
    pthread_mutex_lock(&g_mu);
    centry *e = find_locked(path);
    mcdc_delta_snapshot *s = e ? e->snap : NULL;
    if (s && version > e->cp_told)
        e->cp_told = version;
    if (s && atomic_load(&s->priv->refs) == 1 && s->version >= version && s->checkpoint_version < version) {
        s->checkpoint_version = version;
        prune_tombstones(s);
    }
    pthread_mutex_unlock(&g_mu);
}

/* ---- copies ------------------------------------------------------------------------- */

static int copy_files(mcdc_delta_file **out, const mcdc_delta_file *in, size_t n)
{
    *out = calloc(n ? n : 1, sizeof **out);
    if (!*out)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
    for (size_t i = 0; i < n; i++) {
        int rc = mcdc_delta_file_copy(&(*out)[i], &in[i]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* A private deep copy of @p in (refs 1, identity kept). */
static int snapshot_copy(mcdc_delta_snapshot **out, const mcdc_delta_snapshot *in)
{
    *out = NULL;
    mcdc_delta_snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
    s->version = in->version;
    s->checkpoint_version = in->checkpoint_version;
    s->column_mapping = in->column_mapping;
    s->timestamp_ms = in->timestamp_ms;
    s->table_path = strdup(in->table_path);
    /* field by field: a copy through the actions' JSON and a parse of the schema string
     * cost ~0.5 M instructions a copy of a facts table's state, a third of a facts commit */
    int rc = s->table_path ? 0 : mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
    if (rc == 0)
        rc = mcdc_delta_protocol_copy(&s->protocol, &in->protocol);
    if (rc == 0)
        rc = mcdc_delta_metadata_copy(&s->metadata, &in->metadata);
    if (rc == 0 && in->schema)
        rc = mcdc_delta_schema_copy(&s->schema, in->schema);
    if (rc == 0 && (rc = copy_files(&s->files, in->files, in->n_files)) == 0)
        s->n_files = in->n_files;
    if (rc == 0 && (rc = copy_files(&s->tombstones, in->tombstones, in->n_tombstones)) == 0)
        s->n_tombstones = in->n_tombstones;
    if (rc == 0) {
        s->txns = calloc(in->n_txns ? in->n_txns : 1, sizeof *s->txns);
        s->domains = calloc(in->n_domains ? in->n_domains : 1, sizeof *s->domains);
        if (!s->txns || !s->domains)
            rc = mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
    }
    for (size_t i = 0; rc == 0 && i < in->n_txns; i++) {
        s->txns[i] = in->txns[i];
        s->txns[i].app_id = strdup(in->txns[i].app_id);
        if (!s->txns[i].app_id)
            rc = mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
        else
            s->n_txns++;
    }
    for (size_t i = 0; rc == 0 && i < in->n_domains; i++) {
        s->domains[i] = in->domains[i];
        s->domains[i].domain = strdup(in->domains[i].domain);
        s->domains[i].configuration = strdup(in->domains[i].configuration);
        s->n_domains++;
        if (!s->domains[i].domain || !s->domains[i].configuration)
            rc = mcdc_error_set(MCDC_ENOMEM, "snapshot cache: out of memory");
    }
    if (rc == 0)
        rc = share(s, &in->priv->id);
    if (rc < 0) {
        mcdc_delta_snapshot_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- private snapshots -------------------------------------------------------------- */

int mcdc_delta__snapshot_private_latest(mcdc_delta_snapshot **s, const char *path)
{
    mcdc_delta_snapshot *cur = *s;
    *s = NULL;
    if (cur && cur->priv && atomic_load(&cur->priv->refs) == 1 && strcmp(cur->table_path, path) == 0) {
        /* as an open through the cache does (C1, C2), on a state no one else holds */
        char *logdir = mcdc_delta__join(path, "_delta_log");
        pending p = { .table_id = cur->metadata.id ? cur->metadata.id : "" };
        mcdc_delta__file_id last = cur->priv->id;
        int64_t v = cur->version;
        int rc = logdir ? 1 : -1;
        while (rc > 0) {
            mcdc_delta__file_id id = { 0 };
            if ((rc = read_commit(&p, logdir, v + 1, &id)) > 0) {
                last = id;
                v++;
            }
        }
        bool usable = rc == 0 && !p.other_table;
        if (usable) {
            char name[32];
            mcdc_delta__commit_name(name, cur->version);
            char *cpath = mcdc_delta__join(logdir, name);
            mcdc_delta__file_id now = { 0 };
            if (cpath)
                mcdc_delta__file_id_of(&now, cpath);
            free(cpath);
            usable = mcdc_delta__file_id_same(&now, &cur->priv->id);
        }
        free(logdir);
        if (usable && v > cur->version)
            usable = apply_pending(cur, &p) == 0;
        pending_free(&p);
        mcdc_error_clear();
        if (usable) {
            cur->version = v;
            cur->timestamp_ms = last.mtime_ms;
            cur->priv->id = last;
            *s = cur;
            return 0;
        }
    }
    mcdc_delta_snapshot_free(cur);
    mcdc_delta__file_id id = { 0 };
    mcdc_delta_snapshot *n = NULL;
    int rc = mcdc_delta__snapshot_load(&n, path, -1, &id);
    if (rc < 0)
        return rc;
    if (id.valid && share(n, &id) < 0)
        mcdc_error_clear(); /* served once, loaded afresh next time */
    *s = n;
    return 0;
}

/* ---- open --------------------------------------------------------------------------- */

/* A full load; the result is cached when it has an identity. */
static int open_full(mcdc_delta_snapshot **out, const char *path, int64_t version, bool cache)
{
    mcdc_delta__file_id id = { 0 };
    int rc = mcdc_delta__snapshot_load(out, path, version, cache ? &id : NULL);
    pthread_mutex_lock(&g_mu);
    g_stats.full++;
    pthread_mutex_unlock(&g_mu);
    if (rc < 0 || !cache || !id.valid)
        return rc;
    if (share(*out, &id) < 0) {
        mcdc_error_clear();
        return 0; /* served, not cached */
    }
    pthread_mutex_lock(&g_mu);
    mcdc_delta_snapshot *old = install_locked(path, *out);
    pthread_mutex_unlock(&g_mu);
    mcdc_delta_snapshot_free(old);
    return 0;
}

/* ---- first loads ------------------------------------------------------------------- */

/* (C6) One full load at a time per table: an open of the latest version that finds the
 * table neither cached nor being loaded loads it and installs it; one that finds it being
 * loaded waits for that load and then opens as usual (from the cache when the load was
 * installed, else loading itself). Without it, the tables of a run checked on several
 * threads at once each loaded the shared facts and control tables in full. */
static pthread_cond_t g_loaded = PTHREAD_COND_INITIALIZER;
static char          *g_loading[MAX_TABLES]; /* paths being loaded in full */
static int            g_n_loading;

static bool loading_locked(const char *path)
{
    for (int i = 0; i < g_n_loading; i++)
        if (strcmp(g_loading[i], path) == 0)
            return true;
    return false;
}

/* Whether this thread now loads @p path (false: too many loads at once, or no memory:
 * it loads without the others waiting for it). */
static bool loading_begin_locked(const char *path)
{
    if (g_n_loading == MAX_TABLES || !(g_loading[g_n_loading] = strdup(path)))
        return false;
    g_n_loading++;
    return true;
}

static void forget_loads_locked(void)
{
    for (int i = 0; i < g_n_loading; i++)
        free(g_loading[i]);
    g_n_loading = 0;
}

static void loading_end(const char *path)
{
    pthread_mutex_lock(&g_mu);
    for (int i = 0; i < g_n_loading; i++)
        if (strcmp(g_loading[i], path) == 0) {
            free(g_loading[i]);
            g_loading[i] = g_loading[--g_n_loading];
            break;
        }
    pthread_cond_broadcast(&g_loaded);
    pthread_mutex_unlock(&g_mu);
}

int mcdc_delta_snapshot_open(mcdc_delta_snapshot **out, const char *path, int64_t version)
{
    *out = NULL;
    pthread_mutex_lock(&g_mu);
    int limit = limit_locked();
    centry *e = limit ? find_locked(path) : NULL;
    while (!e && limit && version < 0 && loading_locked(path)) { /* (C6) */
        pthread_cond_wait(&g_loaded, &g_mu);
        e = find_locked(path);
    }
    mcdc_delta_snapshot *base = e ? e->snap : NULL;
    if (base) {
        atomic_fetch_add(&base->priv->refs, 1);
        e->used = ++g_clock;
    }
    bool loader = !base && limit && version < 0 && loading_begin_locked(path);
    pthread_mutex_unlock(&g_mu);
    if (!base) {
        int rc = open_full(out, path, version, limit > 0);
        if (loader)
            loading_end(path);
        return rc;
    }
    if (version >= 0 && version < base->version) {
        /* (C5) an older version: not from the cache */
        mcdc_delta_snapshot_free(base);
        return mcdc_delta__snapshot_load(out, path, version, NULL);
    }

    /* (C1) read the commits after the cached version */
    char *logdir = mcdc_delta__join(path, "_delta_log");
    pending p = { .table_id = base->metadata.id ? base->metadata.id : "" };
    mcdc_delta__file_id last = base->priv->id;
    int64_t v = base->version;
    int rc = logdir ? 0 : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    bool usable = rc == 0;
    while (usable && (version < 0 || v < version)) {
        mcdc_delta__file_id id = { 0 };
        rc = read_commit(&p, logdir, v + 1, &id);
        if (rc <= 0) {
            usable = rc == 0 && version < 0; /* an as-of version must exist */
            break;
        }
        last = id;
        v++;
    }
    if (rc < 0)
        mcdc_error_clear(); /* the full load reports it */
    usable = usable && !p.other_table;
    if (usable) {
        /* (C2) the cached version's commit is still the file the state came from */
        char name[32];
        mcdc_delta__commit_name(name, base->version);
        char *cpath = mcdc_delta__join(logdir, name);
        mcdc_delta__file_id now = { 0 };
        if (cpath)
            mcdc_delta__file_id_of(&now, cpath);
        free(cpath);
        usable = mcdc_delta__file_id_same(&now, &base->priv->id);
    }
    free(logdir);
    if (!usable) {
        pending_free(&p);
        pthread_mutex_lock(&g_mu);
        centry *e2 = find_locked(path);
        mcdc_delta_snapshot *drop = e2 && e2->snap == base ? evict_locked(e2) : NULL;
        pthread_mutex_unlock(&g_mu);
        mcdc_delta_snapshot_free(drop);
        mcdc_delta_snapshot_free(base);
        return open_full(out, path, version, true);
    }
    if (v == base->version) {
        pending_free(&p);
        pthread_mutex_lock(&g_mu);
        g_stats.hits++;
        pthread_mutex_unlock(&g_mu);
        *out = base;
        return 0;
    }

    /* (C3) apply in place when only the cache and we hold the state, else to a copy */
    pthread_mutex_lock(&g_mu);
    centry *e2 = find_locked(path);
    bool in_place = e2 && e2->snap == base && atomic_load(&base->priv->refs) == 2;
    g_stats.incremental++;
    g_stats.commits_read += (uint64_t)(v - base->version);
    if (in_place) {
        rc = apply_pending(base, &p);
        if (rc == 0 && e2->cp_told > base->checkpoint_version && e2->cp_told <= v) {
            base->checkpoint_version = e2->cp_told;
            rc = prune_tombstones(base);
        }
        if (rc == 0) {
            base->version = v;
            base->timestamp_ms = last.mtime_ms;
            base->priv->id = last;
            e2->used = ++g_clock;
            pthread_mutex_unlock(&g_mu);
            pending_free(&p);
            *out = base;
            return 0;
        }
        mcdc_delta_snapshot *drop = evict_locked(e2);
        pthread_mutex_unlock(&g_mu);
        mcdc_error_clear();
        pending_free(&p);
        mcdc_delta_snapshot_free(drop);
        mcdc_delta_snapshot_free(base);
        return open_full(out, path, version, true);
    }
    g_stats.copies++;
    pthread_mutex_unlock(&g_mu);
    mcdc_delta_snapshot *s = NULL;
    rc = snapshot_copy(&s, base);
    mcdc_delta_snapshot_free(base);
    if (rc == 0)
        rc = apply_pending(s, &p);
    pending_free(&p);
    if (rc < 0) {
        mcdc_delta_snapshot_free(s);
        mcdc_error_clear();
        return open_full(out, path, version, true);
    }
    s->version = v;
    s->timestamp_ms = last.mtime_ms;
    s->priv->id = last;
    pthread_mutex_lock(&g_mu);
    mcdc_delta_snapshot *old = install_locked(path, s);
    pthread_mutex_unlock(&g_mu);
    mcdc_delta_snapshot_free(old);
    *out = s;
    return 0;
}
