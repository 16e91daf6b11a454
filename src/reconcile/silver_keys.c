/*
 * reconcile/silver_keys.c: silver's side of reconcile's tier 1: one pass over silver's key
 * columns giving the ordinal or key hash of every row (mcdc/keyhash.h), then the rows and
 * sums per bucket.
 *
 * Files are read at once on several threads, each with its own Parquet reader projecting
 * only the key columns, when a plain Parquet read gives what the Delta scan gives (no
 * deletion vectors, no column mapping, no key among the partition columns, each file's key
 * columns of the table's types); the keys land in per-file arrays joined in path order, the
 * Delta scan's order. Otherwise, and for one thread, the Delta scan reads them. Memory: 9
 * bytes per silver row. Errors on a worker are carried to the caller's thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcdc/keyhash.h"
#include "mcdc/parquet.h"
#include "reconcile/silver_keys.h"

typedef struct ctx {
    const char *const  *names;
    const mcdc_column *const *cols;
    size_t              n_keys;
    bool                by_hash;
} ctx;

/* The key value of one row whose key cells are @p vals. */
static int key_of(const ctx *c, const mcdc_value **vals, mcdc_buf *text, int64_t *k, bool *null)
{
    *null = false;
    *k = 0;
    if (!c->by_hash) {
        if (vals[0]->is_null) {
            *null = true;
            return 0;
        }
        return mcdc_keyhash_ordinal(k, c->cols[0], vals[0]);
    }
    mcdc_buf_clear(text);
    int rc = mcdc_keyhash_text(text, c->cols, vals, c->n_keys);
    if (rc == 0)
        rc = mcdc_keyhash_of_text(k, text->ptr ? text->ptr : "", text->len);
    return rc;
}

/* A growable array of keys. */
typedef struct keyvec {
    int64_t *k;
    bool    *null;
    size_t   n, cap;
    bool     has;    /* a non-NULL key seen: lo and hi hold */
    int64_t  lo, hi;
} keyvec;

static inline void see(keyvec *v, int64_t k)
{
    if (!v->has) { v->lo = v->hi = k; v->has = true; return; }
    if (k < v->lo) v->lo = k;
    if (k > v->hi) v->hi = k;
}

static int push(keyvec *v, int64_t k, bool null)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 65536;
        int64_t *nk = realloc(v->k, nc * sizeof *nk);
        if (nk) v->k = nk;
        bool *nn = realloc(v->null, nc * sizeof *nn);
        if (nn) v->null = nn;
        if (!nk || !nn)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        v->cap = nc;
    }
    v->k[v->n] = k;
    v->null[v->n++] = null;
    if (!null)
        see(v, k);
    return 0;
}

static int by_scan(const ctx *c, const mcdc_delta_snapshot *snap, keyvec *v)
{
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = c->names;
    so.n_columns = c->n_keys;
    mcdc_delta_scan *sc = NULL;
    const mcdc_value **vals = calloc(c->n_keys, sizeof *vals);
    mcdc_buf text = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int rc = vals ? mcdc_delta_scan_open(&sc, snap, &so) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
    const mcdc_value *row;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        for (size_t i = 0; i < c->n_keys; i++)
            vals[i] = &row[i];
        int64_t k;
        bool null;
        rc = key_of(c, vals, &text, &k, &null);
        if (rc == 0)
            rc = push(v, k, null);
    }
    mcdc_delta_scan_free(sc);
    mcdc_buf_dispose(&text);
    free(vals);
    return rc < 0 ? rc : 0;
}

/* ---- files at once ----------------------------------------------------------------------- */

#define NOT_PLAIN 1 /* a file a plain Parquet read cannot stand in for: use the Delta scan */

typedef struct pool {
    const ctx                 *c;
    const mcdc_delta_snapshot *snap;
    keyvec                    *per_file;
    size_t                     next;     /* the next file to take */
    int                        rc;       /* the first failure (or NOT_PLAIN) */
    char                       msg[1100];
    pthread_mutex_t            mu;
} pool;

static bool same_type(const mcdc_column *a, const mcdc_column *b)
{
    return a->type == b->type && (a->type != MCDC_TYPE_DECIMAL || (a->precision == b->precision && a->scale == b->scale));
}

static int read_file(pool *p, size_t fi, mcdc_buf *text, const mcdc_value **vals)
{
    const ctx *c = p->c;
    char *path = mcdc_delta_file_abspath(p->snap, p->snap->files[fi].path);
    if (!path)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_parquet_reader *rd = NULL;
    int rc = mcdc_parquet_reader_open(&rd, path, NULL);
    free(path);
    if (rc == 0 && (rc = mcdc_parquet_reader_select(rd, c->names, c->n_keys)) == MCDC_ENOTFOUND) {
        mcdc_error_clear(); /* a file written before a key column existed: the scan gives NULLs */
        rc = NOT_PLAIN;
    }
    if (rc == 0) {
        const mcdc_schema *s = mcdc_parquet_reader_schema(rd);
        for (size_t i = 0; rc == 0 && i < c->n_keys; i++)
            if (!same_type(&s->cols[i], c->cols[i]))
                rc = NOT_PLAIN;
    }
    keyvec *v = &p->per_file[fi];
    int64_t want = rc == 0 ? mcdc_parquet_reader_num_rows(rd) : 0;
    if (want > 0) { /* one allocation per file */
        v->k = malloc((size_t)want * sizeof *v->k);
        v->null = malloc((size_t)want);
        if (!v->k || !v->null)
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        v->cap = (size_t)want;
    }
    /* a single integer or date key: its ordinal is the cell's integer (mcdc_keyhash_ordinal) */
    bool plain_int = !c->by_hash && c->n_keys == 1;
    const mcdc_value *rows;
    size_t n;
    while (rc == 0 && (rc = mcdc_parquet_reader_next_batch(rd, 4096, &rows, &n)) == 1) {
        rc = 0;
        if (plain_int && v->n + n <= v->cap) {
            int64_t lo = v->has ? v->lo : INT64_MAX, hi = v->has ? v->hi : INT64_MIN;
            bool any = v->has;
            for (size_t r = 0; r < n; r++) {
                bool nl = rows[r].is_null;
                int64_t x = nl ? 0 : rows[r].v.i;
                v->null[v->n] = nl;
                v->k[v->n++] = x;
                if (!nl) {
                    any = true;
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                }
            }
            if (any) { v->has = true; v->lo = lo; v->hi = hi; }
            continue;
        }
        for (size_t r = 0; rc == 0 && r < n; r++) {
            for (size_t i = 0; i < c->n_keys; i++)
                vals[i] = &rows[r * c->n_keys + i];
            int64_t k;
            bool null;
            rc = key_of(c, vals, text, &k, &null);
            if (rc == 0)
                rc = push(v, k, null);
        }
    }
    mcdc_parquet_reader_free(rd);
    return rc < 0 || rc == NOT_PLAIN ? rc : 0;
}

static void *worker(void *arg)
{
    pool *p = arg;
    mcdc_buf text = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    const mcdc_value **vals = calloc(p->c->n_keys, sizeof *vals);
    for (;;) {
        pthread_mutex_lock(&p->mu);
        size_t fi = p->next++;
        bool stop = p->rc != 0 || fi >= p->snap->n_files;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;
        int rc = vals ? read_file(p, fi, &text, vals) : mcdc_error_set(MCDC_ENOMEM, "out of memory");
        if (rc != 0) {
            pthread_mutex_lock(&p->mu);
            if (p->rc == 0) {
                p->rc = rc;
                snprintf(p->msg, sizeof p->msg, "%s", rc == NOT_PLAIN ? "" : mcdc_error_last()->message);
            }
            pthread_mutex_unlock(&p->mu);
            break;
        }
    }
    free(vals);
    mcdc_buf_dispose(&text);
    return NULL;
}

static bool plain_read_ok(const ctx *c, const mcdc_delta_snapshot *snap)
{
    if (snap->column_mapping != MCDC_DELTA_CM_NONE)
        return false;
    for (size_t i = 0; i < snap->n_files; i++)
        if (snap->files[i].has_dv)
            return false;
    for (size_t k = 0; k < c->n_keys; k++)
        for (size_t i = 0; i < snap->metadata.n_partition_columns; i++)
            if (!strcmp(snap->metadata.partition_columns[i], c->names[k]))
                return false;
    return true;
}

/* 1 when the files are read (*v filled), 0 when the Delta scan must read them. */
static int by_files(const ctx *c, const mcdc_delta_snapshot *snap, int threads, keyvec *v, int *used)
{
    pool p = { c, snap, calloc(snap->n_files + 1, sizeof *p.per_file), 0, 0, "", PTHREAD_MUTEX_INITIALIZER };
    if (!p.per_file)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    pthread_t th[8];
    int n_th = 0;
    for (int i = 0; i < threads && i < 8; i++) {
        if (pthread_create(&th[n_th], NULL, worker, &p) != 0)
            break;
        n_th++;
    }
    if (n_th == 0)
        worker(&p);
    for (int i = 0; i < n_th; i++)
        pthread_join(th[i], NULL);
    int rc = p.rc;
    if (rc < 0)
        mcdc_error_set(rc, "%s", p.msg);
    size_t total = 0;
    for (size_t i = 0; i < snap->n_files; i++)
        total += p.per_file[i].n;
    if (rc == 0) {
        v->k = malloc((total + 1) * sizeof *v->k);
        v->null = malloc(total + 1);
        if (!v->k || !v->null)
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    for (size_t i = 0; rc == 0 && i < snap->n_files; i++) {
        if (p.per_file[i].has) {
            if (!v->has || p.per_file[i].lo < v->lo) v->lo = p.per_file[i].lo;
            if (!v->has || p.per_file[i].hi > v->hi) v->hi = p.per_file[i].hi;
            v->has = true;
        }
        if (p.per_file[i].n) {
            memcpy(v->k + v->n, p.per_file[i].k, p.per_file[i].n * sizeof *v->k);
            memcpy(v->null + v->n, p.per_file[i].null, p.per_file[i].n);
        }
        v->n += p.per_file[i].n;
    }
    for (size_t i = 0; i < snap->n_files; i++) {
        free(p.per_file[i].k);
        free(p.per_file[i].null);
    }
    free(p.per_file);
    pthread_mutex_destroy(&p.mu);
    *used = n_th ? n_th : 1;
    if (rc == NOT_PLAIN) {
        free(v->k);
        free(v->null);
        memset(v, 0, sizeof *v);
        return 0;
    }
    return rc < 0 ? rc : 1;
}

int mcdc_reconcile__silver_keys(mcdc_reconcile__keys *out, const mcdc_delta_snapshot *snap,
                                const char *const *names, const mcdc_column *const *cols, size_t n_keys,
                                bool by_hash, int threads)
{
    memset(out, 0, sizeof *out);
    ctx c = { names, cols, n_keys, by_hash };
    keyvec v = { 0 };
    if (threads <= 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n < 1 ? 1 : n > 8 ? 8 : (int)n;
    }
    if ((size_t)threads > snap->n_files)
        threads = (int)snap->n_files;
    int rc = 0, used = 1;
    if (threads > 1 && plain_read_ok(&c, snap))
        rc = by_files(&c, snap, threads, &v, &used);
    if (rc == 0) {
        used = 1;
        rc = by_scan(&c, snap, &v);
    }
    if (rc < 0) {
        free(v.k);
        free(v.null);
        return rc;
    }
    out->k = v.k;
    out->null = v.null;
    out->n = v.n;
    out->threads_used = used;
    out->range_known = true;
    out->has_range = v.has;
    out->lo = v.lo;
    out->hi = v.hi;
    return 0;
}

void mcdc_reconcile__keys_clear(mcdc_reconcile__keys *k)
{
    free(k->k);
    free(k->null);
    memset(k, 0, sizeof *k);
}

bool mcdc_reconcile__key_range(const mcdc_reconcile__keys *k, int64_t *lo, int64_t *hi)
{
    if (k->range_known) {
        *lo = k->lo;
        *hi = k->hi;
        return k->has_range;
    }
    bool have = false;
    int64_t l = 0, h = 0;
    for (size_t i = 0; i < k->n; i++) {
        if (k->null[i])
            continue;
        int64_t x = k->k[i];
        if (!have || x < l) l = x;
        if (!have || x > h) h = x;
        have = true;
    }
    *lo = l;
    *hi = h;
    return have;
}

typedef struct fine_job {
    const mcdc_reconcile__keys *k;
    size_t       from, to;      /* the keys [from, to) */
    int64_t      origin, width;
    bool         fast;          /* the span allows the double quotient */
    int64_t     *rows;
    mcdc_int128 *sums;
} fine_job;

static void *fine_slice(void *arg)
{
    fine_job *j = arg;
    const int64_t *kk = j->k->k;
    const bool *nul = j->k->null;
    if (j->fast) {
        /* the quotient by a multiply in double, corrected by one step (exact below 2^52) */
        double inv = 1.0 / (double)j->width;
        uint64_t w = (uint64_t)j->width, o = (uint64_t)j->origin;
        for (size_t i = j->from; i < j->to; i++) {
            if (nul[i])
                continue;
            uint64_t x = (uint64_t)kk[i] - o, f = (uint64_t)((double)x * inv);
            if (f * w > x) f--;
            else if ((f + 1) * w <= x) f++;
            j->rows[f]++;
            j->sums[f] += kk[i];
        }
        return NULL;
    }
    for (size_t i = j->from; i < j->to; i++) {
        if (nul[i])
            continue;
        /* k - origin fits 64 unsigned bits (k >= origin): no 128-bit division per row */
        uint64_t f = ((uint64_t)kk[i] - (uint64_t)j->origin) / (uint64_t)j->width;
        j->rows[f]++;
        j->sums[f] += kk[i];
    }
    return NULL;
}

int mcdc_reconcile__fine_sums(const mcdc_reconcile__keys *k, int64_t origin, int64_t width, int64_t n_fine,
                              int64_t *rows, mcdc_int128 *sums)
{
    int64_t lo, hi;
    bool fast = mcdc_reconcile__key_range(k, &lo, &hi) && lo >= origin &&
                (uint64_t)hi - (uint64_t)origin < ((uint64_t)1 << 52);
    /* one slice a thread past 2M keys (each with buckets of its own, added up after) */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n_th = k->n < 2000000 || cpus < 2 ? 1 : cpus > 8 ? 8 : (int)cpus;
    fine_job jobs[8];
    pthread_t th[8];
    int started = 0, rc = 0;
    for (int t = 0; t < n_th; t++) {
        jobs[t] = (fine_job){ k, k->n * (size_t)t / (size_t)n_th, k->n * (size_t)(t + 1) / (size_t)n_th, origin, width,
                              fast, t == 0 ? rows : calloc((size_t)n_fine, sizeof *rows),
                              t == 0 ? sums : calloc((size_t)n_fine, sizeof *sums) };
        if (!jobs[t].rows || !jobs[t].sums) {
            if (t) { free(jobs[t].rows); free(jobs[t].sums); }
            n_th = t;
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            break;
        }
    }
    if (rc == 0) {
        for (int t = 1; t < n_th; t++)
            if (pthread_create(&th[t], NULL, fine_slice, &jobs[t]) == 0)
                started = t;
            else
                break;
        for (int t = started + 1; t < n_th; t++) /* a thread that could not start: here */
            fine_slice(&jobs[t]);
        fine_slice(&jobs[0]);
        for (int t = 1; t <= started; t++)
            pthread_join(th[t], NULL);
        for (int t = 1; t < n_th; t++)
            for (int64_t f = 0; f < n_fine; f++) {
                rows[f] += jobs[t].rows[f];
                sums[f] += jobs[t].sums[f];
            }
    }
    for (int t = 1; t < n_th; t++) {
        free(jobs[t].rows);
        free(jobs[t].sums);
    }
    return rc;
}

void mcdc_reconcile__hash_sums(const mcdc_reconcile__keys *k, int64_t n_buckets, int64_t *rows, mcdc_int128 *sums)
{
    for (size_t i = 0; i < k->n; i++) {
        int64_t b = k->k[i] % n_buckets;
        rows[b]++;
        sums[b] += k->k[i];
    }
}
