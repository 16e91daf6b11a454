/*
 * source/sim/commit_times.c: UTC commit times of the simulator's mapping entries, answered
 * from an index kept between questions.
 *
 * The server clock (tran_end_time, local, 1/300 s) is converted by core/tz's LSN-order
 * sequencer, which must see the commits before the one asked about to know which pass of a
 * repeated (fall-back) hour it is in. Two ways to do that live here:
 *
 *   the seeded walk   each question starts a fresh sequencer at the seed, the last entry at
 *                     least 3 hours (local) before the first entry asked about, and feeds
 *                     every entry from there: hours of entries per question. It stays as the
 *                     reference (mcdc_sim_source_set_commit_index(src, false)) and answers the
 *                     few questions the index cannot (below).
 *   the index         one sequencer run, begun at the seed of the first question and fed
 *                     forward as questions reach further; every entry it fed is kept with its
 *                     answer and the sequencer state after it. A question is a binary search
 *                     plus the entries new since the last one.
 *
 * Why the index answers what the walk answers. In a simulator history the true UTC commit
 * times never go backwards (S3), so the sequencer's output at an unambiguous local time (not
 * in a repeated hour) is that time's one UTC instant, whatever came before, and is never
 * clamped (every earlier output is at or below its own true time). Two runs of the
 * sequencer that both pass an unambiguous entry g therefore agree from g on. The walk for an
 * entry e passes the last unambiguous entry at or before e: e itself, or, when e sits in a
 * repeated hour, its seed (3 hours earlier, so outside that hour). So the index agrees with
 * the walk for every entry at or after the first unambiguous entry of its run (or for all of
 * them when the run began at the start of the history); entries before that (`warm`) and
 * LSNs below the run are answered by the walk.
 *
 * Invariants of a valid index:
 * (T1) e[] holds every mapping entry in (start_after, fed], in LSN order, and no other.
 *      Entries are only appended (forward allocation, S2), cut from the front by cleanup and
 *      from the back by a rewind; each question first re-checks both ends (ct_sync),
 *      unless no commit was made since its source's last check (data_version).
 * (T2) seq is the sequencer state after e[n-1]; a cut from the back restores it from the
 *      new last entry (local, utc, second pass), so the run goes on as if never extended.
 * (T3) e[i].utc_us for i >= warm equals the seeded walk's answer for e[i].lsn.
 * The index holds at most MAX_ENTRIES; past that its older half is dropped (start_after
 * moves up), and questions below it take the walk or rebuild the index from their seed.
 *
 * Sharing. A process holds one index per database file (and server zone): every source
 * open on the file joins it (sim__ct_init) and the last to close frees it, so the pooled
 * connections of a run convert the history once, not once each. Each question takes the
 * index's lock for its whole course, sync, extension and answer, and runs its SQL on the
 * asking source's connection; the reader takes no long read transactions, so each
 * statement sees at least every commit an earlier question saw, and to the invariants
 * another connection is just another question (a rewind or cleanup seen first by one
 * source is seen by the next question's sync, whichever source asks).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "source/sim/commit_times.h"

#define SEED_BACK_TICKS (INT64_C(3) * 3600 * TICKS_PER_SEC)
#define MAX_ENTRIES     ((size_t)1 << 20)
#define FEED_CHUNK      4096

static int64_t parse_local_us(const char *txt)
{
    int64_t ticks;
    bool has_off;
    int off, nf;
    if (!txt || sim_parse_dt(txt, strlen(txt), &ticks, &has_off, &off, &nf) < 0)
        return INT64_MIN;
    return ticks / TICKS_PER_US;
}

/* Call @p fn for each mapping entry in (after, upto], in LSN order, at most @p limit of them
 * (-1: all). *n_out counts the rows read. A non-zero return of fn stops and is returned. */
typedef int (*entry_fn)(void *payload, const mcdc_lsn *lsn, int64_t local_us);

static int each_entry(mcdc_sim *s, const mcdc_lsn *after, const mcdc_lsn *upto, int64_t limit, entry_fn fn,
                      void *payload, int64_t *n_out)
{
    sqlite3_stmt *st;
    *n_out = 0;
    int rc = sim__stmt(s, "SELECT lsn, end_time FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn > ? AND lsn <= ?"
                          " ORDER BY lsn LIMIT ?", "reading commit times", &st);
    if (rc < 0) return rc;
    sim__bind_lsn(st, 1, after);
    sim__bind_lsn(st, 2, upto);
    sqlite3_bind_int64(st, 3, limit);
    rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        mcdc_lsn l;
        sim__column_lsn(st, 0, &l);
        (*n_out)++;
        rc = fn(payload, &l, parse_local_us((const char *)sqlite3_column_text(st, 1)));
    }
    sim__stmt_done(s, st);
    return rc;
}

/* One LSN from a single-row query (@p sql a string literal) with ?1 bound to @p arg; *have
 * false when no row. */
static int query_lsn(mcdc_sim *s, const char *sql, const mcdc_lsn *arg, mcdc_lsn *out, bool *have)
{
    sqlite3_stmt *st;
    *have = false;
    int rc = sim__stmt(s, sql, "reading commit times", &st);
    if (rc < 0) return rc;
    if (arg) sim__bind_lsn(st, 1, arg);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        sim__column_lsn(st, 0, out);
        *have = true;
    }
    sim__stmt_done(s, st);
    return 0;
}

/* Where a run for the entries above @p after begins: *start_after is the LSN below the seed
 * (zero when there is no seed: the run begins at the first entry of the history). */
static int seed_of(mcdc_sim *s, const mcdc_lsn *after, mcdc_lsn *start_after, bool *from_start)
{
    sqlite3_stmt *st;
    *start_after = mcdc_lsn_zero();
    *from_start = true;
    /* the local time of the first entry past after, then the seed entry 3 h before it */
    int rc = sqlite3_prepare_v2(s->db, "SELECT end_time FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn > ? ORDER BY lsn LIMIT 1",
                                -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "reading commit times");
    sim__bind_lsn(st, 1, after);
    int64_t first_local = INT64_MIN;
    if (sqlite3_step(st) == SQLITE_ROW) first_local = parse_local_us((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (first_local == INT64_MIN) return 0;
    char seed_time[40];
    sim_format_dt(seed_time, sizeof seed_time, first_local * TICKS_PER_US - SEED_BACK_TICKS, 3);
    rc = sqlite3_prepare_v2(s->db, "SELECT lsn FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn <= ? AND end_time <= ?"
                            " ORDER BY lsn DESC LIMIT 1", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "reading commit times");
    sim__bind_lsn(st, 1, after);
    sqlite3_bind_text(st, 2, seed_time, -1, SQLITE_TRANSIENT);
    mcdc_lsn seed = mcdc_lsn_zero();
    bool have = sqlite3_step(st) == SQLITE_ROW;
    if (have) sim__column_lsn(st, 0, &seed);
    sqlite3_finalize(st);
    mcdc_lsn before;
    if (have && mcdc_lsn_decrement(&before, &seed) == 0) {
        *start_after = before;
        *from_start = false;
    }
    return 0;
}

/* ---- the seeded walk ------------------------------------------------------------------------ */

typedef struct walk {
    mcdc_tz_sequencer seq;
    const mcdc_lsn   *want;   /* the entry asked about */
    bool              found;
    int64_t           utc_us;
} walk;

static int walk_entry(void *payload, const mcdc_lsn *lsn, int64_t local_us)
{
    walk *w = payload;
    int64_t utc = mcdc_tz_sequencer_next(&w->seq, local_us);
    w->found = mcdc_lsn_cmp(lsn, w->want) == 0;
    w->utc_us = utc;
    return 0;
}

static int not_found(const mcdc_lsn *lsn)
{
    char l[MCDC_LSN_STRLEN];
    return mcdc_error_set(MCDC_ENOTFOUND, "no cdc.lsn_time_mapping entry has start_lsn %s", mcdc_lsn_format(l, lsn));
}

/* The walk's answer for one entry: seeded from 3 hours before it, fed up to it. */
static int walk_commit_ts(sim_commit_times *ct, const mcdc_lsn *lsn, int64_t *out_us)
{
    mcdc_lsn before, start;
    bool from_start;
    int64_t n;
    int rc;
    if (mcdc_lsn_decrement(&before, lsn) < 0) before = mcdc_lsn_zero();
    if ((rc = seed_of(ct->sim, &before, &start, &from_start)) < 0) return rc;
    walk w = {.want = lsn};
    mcdc_tz_sequencer_init(&w.seq, ct->sim->tz, INT64_MIN, INT64_MIN);
    rc = each_entry(ct->sim, &start, lsn, -1, walk_entry, &w, &n);
    ct->n_fed += n;
    if (rc < 0) return rc;
    if (!w.found) return not_found(lsn);
    *out_us = w.utc_us;
    return 0;
}

/* ---- the index ------------------------------------------------------------------------------ */

struct sim_ct_index {
    pthread_mutex_t   mu;         /* held by every question that uses the fields below */
    sim_ct_index     *next;       /* the process's list (under g_mu) */
    int               refs;       /* sources holding it (under g_mu) */
    bool              listed;     /* in the list (false: the file could not be identified) */
    dev_t             dev;        /* the database file it indexes */
    ino_t             ino;
    char             *zone;       /* the server zone its answers are in */
    bool              valid;      /* the fields below describe a run */
    mcdc_lsn          start_after;/* every existing entry in (start_after, fed] is in e[] */
    mcdc_lsn          fed;        /* the last entry fed (== e[n-1].lsn when n > 0) */
    bool              from_start; /* the run began at the first entry of the history */
    size_t            warm;       /* e[i] for i >= warm equals the seeded walk's answer */
    sim_ct_entry     *e;          /* entries in LSN order, malloc'd */
    size_t            n, cap;     /* used and allocated entries of e[] */
    mcdc_tz_sequencer seq;        /* the run's state after e[n-1] */
};

/* The process's indexes. A file is known by device and inode: a database deleted and made
 * again at its path is another file (its inode cannot be reused while a source holds the
 * old one open), so it gets an index of its own. No fork(2) happens while the library
 * runs (children are posix_spawn'ed and exec), so the locks need no fork handlers. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static sim_ct_index   *g_list;

static sim_ct_index *index_new(void)
{
    sim_ct_index *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    pthread_mutex_init(&x->mu, NULL);
    x->refs = 1;
    return x;
}

static void index_free(sim_ct_index *x)
{
    pthread_mutex_destroy(&x->mu);
    free(x->zone);
    free(x->e);
    free(x);
}

/* Join the process's index of ct->sim's file (ct->ix NULL without memory for one). */
static void join(sim_commit_times *ct)
{
    mcdc_sim *s = ct->sim;
    struct stat sb;
    const char *zone = mcdc_tz_name(s->tz);
    if (!zone) zone = "";
    if (!s->path || stat(s->path, &sb) != 0) {
        ct->ix = index_new(); /* unknown file: an index of its own */
        return;
    }
    pthread_mutex_lock(&g_mu);
    sim_ct_index *x = g_list;
    while (x && !(x->dev == sb.st_dev && x->ino == sb.st_ino && !strcmp(x->zone, zone))) x = x->next;
    if (x) {
        x->refs++;
    } else if ((x = index_new()) != NULL) {
        if ((x->zone = strdup(zone)) != NULL) {
            x->dev = sb.st_dev;
            x->ino = sb.st_ino;
            x->listed = true;
            x->next = g_list;
            g_list = x;
        } else {
            index_free(x);
            x = NULL;
        }
    }
    pthread_mutex_unlock(&g_mu);
    ct->ix = x;
}

void sim__ct_init(sim_commit_times *ct, mcdc_sim *s)
{
    memset(ct, 0, sizeof *ct);
    ct->sim = s;
    ct->dv_synced = -1;
    join(ct);
    ct->use_index = ct->ix != NULL; /* without memory for an index, the walk answers */
}

void sim__ct_use_index(sim_commit_times *ct, bool enabled)
{
    if (!enabled) sim__ct_dispose(ct);
    else if (!ct->ix) join(ct);
    ct->use_index = ct->ix != NULL;
}

void sim__ct_dispose(sim_commit_times *ct)
{
    sim_ct_index *x = ct->ix;
    ct->ix = NULL;
    ct->use_index = false;
    ct->dv_synced = -1;
    if (!x) return;
    pthread_mutex_lock(&g_mu);
    bool last = --x->refs == 0;
    if (last && x->listed) {
        sim_ct_index **p = &g_list;
        while (*p != x) p = &(*p)->next;
        *p = x->next;
    }
    pthread_mutex_unlock(&g_mu);
    if (last) index_free(x);
}

static bool ambiguous(const mcdc_tz *tz, int64_t local_us)
{
    return mcdc_tz_local_to_utc(tz, local_us, false, NULL) != mcdc_tz_local_to_utc(tz, local_us, true, NULL);
}

/* The functions below take the index's lock held (ct->ix->mu); their SQL goes through the
 * asking source's connection, which sees every commit the index's earlier questions saw
 * (each statement reads the newest commit; questions are ordered by the lock). */

/* Begin a new run for the entries above @p after (nothing fed yet). */
static int ct_rebuild(sim_commit_times *ct, const mcdc_lsn *after)
{
    sim_ct_index *x = ct->ix;
    int rc = seed_of(ct->sim, after, &x->start_after, &x->from_start);
    if (rc < 0) {
        x->valid = false;
        return rc;
    }
    x->fed = x->start_after;
    x->n = 0;
    x->warm = x->from_start ? 0 : SIZE_MAX;
    mcdc_tz_sequencer_init(&x->seq, ct->sim->tz, INT64_MIN, INT64_MIN);
    x->valid = true;
    return 0;
}

static int ct_push(void *payload, const mcdc_lsn *lsn, int64_t local_us)
{
    sim_commit_times *ct = payload;
    sim_ct_index *x = ct->ix;
    if (x->n == MAX_ENTRIES) {
        /* keep the newer half: the run goes on, questions below it take the walk */
        size_t half = x->n / 2;
        x->start_after = x->e[half - 1].lsn;
        x->from_start = false;
        memmove(x->e, x->e + half, (x->n - half) * sizeof *x->e);
        x->n -= half;
        x->warm = x->warm == SIZE_MAX ? SIZE_MAX : x->warm > half ? x->warm - half : 0;
    }
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 1024;
        sim_ct_entry *ne = realloc(x->e, cap * sizeof *ne);
        if (!ne) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        x->e = ne;
        x->cap = cap;
    }
    sim_ct_entry *y = &x->e[x->n];
    y->lsn = *lsn;
    y->local_us = local_us;
    y->utc_us = mcdc_tz_sequencer_next(&x->seq, local_us);
    y->pass2 = x->seq.second_pass;
    if (x->warm == SIZE_MAX && !ambiguous(ct->sim->tz, local_us)) x->warm = x->n;
    x->n++;
    x->fed = *lsn;
    return 0;
}

/* Feed up to @p limit more entries (-1: all) at or below @p upto; *n_fed counts them. */
static int ct_extend(sim_commit_times *ct, const mcdc_lsn *upto, int64_t limit, int64_t *n_fed)
{
    sim_ct_index *x = ct->ix;
    *n_fed = 0;
    if (mcdc_lsn_cmp(&x->fed, upto) >= 0) return 0;
    mcdc_lsn from = x->fed;
    int rc = each_entry(ct->sim, &from, upto, limit, ct_push, ct, n_fed);
    ct->n_fed += *n_fed;
    if (rc < 0) x->valid = false;
    return rc;
}

/* The first position whose LSN is above @p lsn (n when none). */
static size_t upper_bound(const sim_ct_index *x, const mcdc_lsn *lsn)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mcdc_lsn_cmp(&x->e[mid].lsn, lsn) <= 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The connection's PRAGMA data_version (-1 when it cannot be read): it moves with every
 * commit another connection (of any process) made since its last reading. */
static int64_t data_version(sim_commit_times *ct)
{
    sqlite3_stmt *st;
    if (sim__stmt(ct->sim, "PRAGMA data_version", "reading the data version", &st) < 0) {
        mcdc_error_clear(); /* the ends are checked */
        return -1;
    }
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sim__stmt_done(ct->sim, st); /* no read transaction is kept open */
    return v;
}

/* Check both ends of the index against the database, mending it (T1, T2). */
static int sync_ends(sim_commit_times *ct)
{
    sim_ct_index *x = ct->ix;
    mcdc_lsn last, first;
    bool have;
    int rc = query_lsn(ct->sim, "SELECT lsn FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn <= ?1 ORDER BY lsn DESC LIMIT 1",
                       &x->fed, &last, &have);
    if (rc < 0) return rc;
    if (!have) {
        x->valid = false;
        return 0;
    }
    if (mcdc_lsn_cmp(&last, &x->fed) != 0) {
        /* a rewind: cut back to the last entry still there, restoring the run after it (T2) */
        size_t keep = upper_bound(x, &last);
        if (keep == 0 || keep <= x->warm || mcdc_lsn_cmp(&x->e[keep - 1].lsn, &last) != 0) {
            x->valid = false;
            return 0;
        }
        x->n = keep;
        x->fed = last;
        const sim_ct_entry *y = &x->e[keep - 1];
        mcdc_tz_sequencer_init(&x->seq, ct->sim->tz, y->local_us, y->utc_us);
        x->seq.second_pass = y->pass2;
    }
    if ((rc = query_lsn(ct->sim, "SELECT lsn FROM sim_tx WHERE kind IN (1, 2, 3) ORDER BY lsn LIMIT 1", NULL, &first,
                        &have)) < 0)
        return rc;
    if (have && mcdc_lsn_cmp(&x->e[0].lsn, &first) < 0) {
        /* a cleanup removed the oldest entries: drop them too */
        size_t drop = 0;
        while (drop < x->n && mcdc_lsn_cmp(&x->e[drop].lsn, &first) < 0) drop++;
        if (drop == x->n) {
            x->valid = false;
            return 0;
        }
        memmove(x->e, x->e + drop, (x->n - drop) * sizeof *x->e);
        x->n -= drop;
        x->warm = x->warm == SIZE_MAX ? SIZE_MAX : x->warm > drop ? x->warm - drop : 0;
    }
    return 0;
}

/* Re-check both ends against the database (T1) after another process may have cleaned up
 * or rewound. Nothing can have changed when no commit was made since this source's last
 * sync (its connection's data_version, read before that sync, has not moved): whatever
 * other sources did to the index since, they did against the same database, so the
 * check is skipped. */
static int ct_sync(sim_commit_times *ct)
{
    sim_ct_index *x = ct->ix;
    if (!x->valid || x->n == 0) {
        x->valid = false;
        return 0;
    }
    int64_t dv = data_version(ct);
    if (dv >= 0 && dv == ct->dv_synced) return 0;
    ct->dv_synced = -1;
    ct->n_synced++;
    int rc = sync_ends(ct);
    if (rc == 0) ct->dv_synced = dv;
    return rc;
}

/* Make the index hold every entry above @p after that exists (T1), rebuilding it from the
 * seed of @p after when it starts above. */
static int ct_cover(sim_commit_times *ct, const mcdc_lsn *after)
{
    sim_ct_index *x = ct->ix;
    int rc = ct_sync(ct);
    if (rc < 0) return rc;
    if (x->valid && (x->from_start || mcdc_lsn_cmp(after, &x->start_after) >= 0)) return 0;
    return ct_rebuild(ct, after);
}

/* Extend so that entry @p lsn, when it exists, is in e[] (FEED_CHUNK entries at a time). */
static int ct_reach(sim_commit_times *ct, const mcdc_lsn *lsn)
{
    int64_t fed;
    int rc;
    do {
        if ((rc = ct_extend(ct, lsn, FEED_CHUNK, &fed)) < 0) return rc;
    } while (fed == FEED_CHUNK);
    return 0;
}

/* The answer for position @p i: the index's, or the walk's before the run has warmed (T3). */
static int answer_at(sim_commit_times *ct, size_t i, int64_t *out_us)
{
    sim_ct_index *x = ct->ix;
    if (i >= x->warm) {
        *out_us = x->e[i].utc_us;
        return 0;
    }
    mcdc_lsn l = x->e[i].lsn;
    return walk_commit_ts(ct, &l, out_us);
}

int sim__ct_commit_ts(sim_commit_times *ct, const mcdc_lsn *lsn, int64_t *out_us)
{
    if (!ct->use_index) return walk_commit_ts(ct, lsn, out_us);
    sim_ct_index *x = ct->ix;
    mcdc_lsn before;
    int rc;
    if (mcdc_lsn_decrement(&before, lsn) < 0) before = mcdc_lsn_zero();
    pthread_mutex_lock(&x->mu);
    if ((rc = ct_cover(ct, &before)) == 0 && (rc = ct_reach(ct, lsn)) == 0) {
        size_t i = upper_bound(x, lsn);
        if (i == 0 || mcdc_lsn_cmp(&x->e[i - 1].lsn, lsn) != 0) rc = not_found(lsn);
        else rc = answer_at(ct, i - 1, out_us);
    }
    pthread_mutex_unlock(&x->mu);
    return rc;
}

/* sim__ct_nth_after from the index, the lock held: *covered false when the index cannot
 * answer (its older half dropped past after), for the reference to count in SQL. */
static int nth_from_index(sim_commit_times *ct, const mcdc_lsn *after, const mcdc_lsn *upto, int64_t n,
                          mcdc_lsn *out, int64_t *out_ts, int64_t *found, bool *covered)
{
    sim_ct_index *x = ct->ix;
    int rc;
    if ((rc = ct_cover(ct, after)) < 0) return rc;
    size_t p = upper_bound(x, after);
    while ((int64_t)(x->n - p) < n) {
        int64_t fed, want = n - (int64_t)(x->n - p);
        if ((rc = ct_extend(ct, upto, want, &fed)) < 0) return rc;
        p = upper_bound(x, after);
        if (fed < want) break;
    }
    *covered = x->valid && (x->from_start || mcdc_lsn_cmp(after, &x->start_after) >= 0);
    if (!*covered) return 0;
    size_t end = upper_bound(x, upto);
    if (end <= p) return 0;
    size_t k = end - p < (size_t)n ? end - p : (size_t)n;
    *found = (int64_t)k;
    *out = x->e[p + k - 1].lsn;
    return answer_at(ct, p + k - 1, out_ts);
}

int sim__ct_nth_after(sim_commit_times *ct, const mcdc_lsn *after, const mcdc_lsn *upto, int64_t n, mcdc_lsn *out,
                      int64_t *out_ts, int64_t *found)
{
    int rc;
    *found = 0;
    *out = *after;
    *out_ts = 0;
    if (ct->use_index) {
        bool covered = false;
        pthread_mutex_lock(&ct->ix->mu);
        rc = nth_from_index(ct, after, upto, n, out, out_ts, found, &covered);
        pthread_mutex_unlock(&ct->ix->mu);
        if (rc < 0 || covered) return rc;
    }
    {
        /* the reference: count the entries in SQL, then walk for the last one's time */
        sqlite3_stmt *st;
        mcdc_sim *s = ct->sim;
        rc = sqlite3_prepare_v2(s->db, "SELECT lsn FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn > ? AND lsn <= ?"
                                " ORDER BY lsn LIMIT ?", -1, &st, NULL);
        if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "reading commits");
        sim__bind_lsn(st, 1, after);
        sim__bind_lsn(st, 2, upto);
        sqlite3_bind_int64(st, 3, n);
        while (sqlite3_step(st) == SQLITE_ROW) {
            sim__column_lsn(st, 0, out);
            (*found)++;
        }
        sqlite3_finalize(st);
        return *found ? walk_commit_ts(ct, out, out_ts) : 0;
    }
}

/* ---- stamping the rows of a read ------------------------------------------------------------ */

int sim__ct_read_begin(sim_commit_times *ct, sim_ct_read *rd, const mcdc_lsn *after)
{
    memset(rd, 0, sizeof *rd);
    rd->after = *after;
    if (ct->use_index) {
        pthread_mutex_lock(&ct->ix->mu);
        int rc = ct_cover(ct, after);
        pthread_mutex_unlock(&ct->ix->mu);
        return rc;
    }
    bool from_start;
    mcdc_tz_sequencer_init(&rd->seq, ct->sim->tz, INT64_MIN, INT64_MIN);
    return seed_of(ct->sim, after, &rd->fed, &from_start);
}

typedef struct walk_page {
    mcdc_tz_sequencer *seq;
    mcdc_lsn          *fed;
    sim_ct_entry      *e;
    size_t             n, cap;
} walk_page;

static int walk_page_entry(void *payload, const mcdc_lsn *lsn, int64_t local_us)
{
    walk_page *w = payload;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        sim_ct_entry *ne = realloc(w->e, cap * sizeof *ne);
        if (!ne) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        w->e = ne;
        w->cap = cap;
    }
    w->e[w->n].lsn = *lsn;
    w->e[w->n].utc_us = mcdc_tz_sequencer_next(w->seq, local_us);
    *w->fed = *lsn;
    w->n++;
    return 0;
}

static int missing_entry(sim_commit_times *ct, const mcdc_lsn *lsn)
{
    char l[MCDC_LSN_STRLEN];
    return mcdc_error_set(MCDC_ESOURCE, "%s: change rows at %s have no cdc.lsn_time_mapping entry", ct->sim->path,
                          mcdc_lsn_format(l, lsn));
}

/* Is entry @p lsn, when it exists, in e[]? */
static bool ct_holds(const sim_ct_index *x, const mcdc_lsn *lsn)
{
    return x->valid && (x->from_start || mcdc_lsn_cmp(lsn, &x->start_after) > 0) && mcdc_lsn_cmp(lsn, &x->fed) <= 0;
}

/* The first position in [lo, ne) of @p e whose LSN is at or above @p lsn, e[lo] below it:
 * a galloping search, O(log distance), since the entries between two rows of one capture
 * instance may be the other instances' commits (49 of 50 in a database of 50 busy tables)
 * or none (one busy table), and a step each was the cost of the first. */
static size_t lower_bound_from(const sim_ct_entry *e, size_t lo, size_t ne, const mcdc_lsn *lsn)
{
    size_t step = 1, hi = lo + 1;
    while (hi < ne && mcdc_lsn_cmp(&e[hi].lsn, lsn) < 0) {
        lo = hi;
        step *= 2;
        hi = ne - lo > step ? lo + step : ne;
    }
    /* e[lo] < lsn, and e[hi] >= lsn or hi == ne */
    lo++;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (mcdc_lsn_cmp(&e[mid].lsn, lsn) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

int sim__ct_stamp(sim_commit_times *ct, sim_ct_read *rd, mcdc_change *rows, size_t n, size_t *n_ok)
{
    int rc = 0;
    *n_ok = 0;
    if (n == 0) return 0;
    const mcdc_lsn *last = &rows[n - 1].start_lsn;
    sim_ct_entry *e;
    size_t ne, j = 0;
    walk_page w = {.seq = &rd->seq, .fed = &rd->fed};
    sim_ct_index *x = ct->use_index ? ct->ix : NULL;
    if (x) {
        const mcdc_lsn *below = rd->have_prev ? &rd->prev_lsn : &rd->after;
        /* another process may have cleaned up or rewound since the last page, another
         * source of this one may have moved the index: the lock is held to the last row */
        pthread_mutex_lock(&x->mu);
        if ((rc = ct_cover(ct, below)) < 0 || (rc = ct_reach(ct, last)) < 0) {
            pthread_mutex_unlock(&x->mu);
            return rc;
        }
        e = x->e;
        ne = x->n;
        j = upper_bound(x, below);
        if (j > 0 && mcdc_lsn_cmp(&e[j - 1].lsn, below) == 0) j--;
    } else {
        int64_t fed;
        rc = each_entry(ct->sim, &rd->fed, last, -1, walk_page_entry, &w, &fed);
        ct->n_fed += fed;
        if (rc < 0) {
            free(w.e);
            return rc;
        }
        e = w.e;
        ne = w.n;
    }
    for (size_t i = 0; i < n; i++) {
        mcdc_change *c = &rows[i];
        bool same_txn = rd->have_prev && mcdc_lsn_cmp(&rd->prev_lsn, &c->start_lsn) == 0;
        if (j < ne && mcdc_lsn_cmp(&e[j].lsn, &c->start_lsn) < 0) j = lower_bound_from(e, j, ne, &c->start_lsn);
        if (x && !same_txn && !ct_holds(x, &c->start_lsn)) {
            /* below what the index holds (its older half dropped while reaching this page) */
            if ((rc = walk_commit_ts(ct, &c->start_lsn, &c->commit_ts_us)) < 0) {
                if (rc == MCDC_ENOTFOUND) rc = missing_entry(ct, &c->start_lsn);
                break;
            }
        } else if (j < ne && mcdc_lsn_cmp(&e[j].lsn, &c->start_lsn) == 0) {
            if (!x) c->commit_ts_us = e[j].utc_us;
            else if ((rc = answer_at(ct, j, &c->commit_ts_us)) < 0) break;
        } else if (same_txn) {
            /* a transaction whose rows span two pages: its entry was fed before */
            c->commit_ts_us = rd->prev_ts;
        } else {
            rc = missing_entry(ct, &c->start_lsn);
            break;
        }
        rd->prev_lsn = c->start_lsn;
        rd->prev_ts = c->commit_ts_us;
        rd->have_prev = true;
        (*n_ok)++;
    }
    if (x) pthread_mutex_unlock(&x->mu);
    free(w.e);
    return rc;
}
