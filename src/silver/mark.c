/*
 * silver/mark.c: the deletion-vector way of a silver merge (write mode
 * deletion-vectors, docs/decisions/0045-silver-deletion-vectors.md): the rows of the
 * touched files that hold a changed key are decided as a rewrite decides them (rule S3,
 * mcdc_silver_changes_match_at), but instead of writing the file again, the rows replaced
 * or dropped join the file's deletion vector; the caller writes the replacing images into
 * one new file.
 *
 * Reading: only the key columns of each touched file, by the scan's projection, and each
 * row's index in its file from the scan (rows its current DV deletes are skipped, so a key
 * is matched in the file where it is live). `_start_lsn` is read too only when some image
 * of the file's key range is not newer than the file's maxValues._start_lsn (a replay):
 * otherwise every image is newer than every row, which is what S3 decides on. A key is
 * found among the images of the file's range by binary search: on its integer value when
 * the key is one integer column (checked against the key encoding), else on its encoding.
 *
 * Threads: files whose key ranges overlap may meet the same images, so they are decided
 * in one group, one after the other; groups run on up to `threads` threads (the apply's
 * option). Files without a range may meet any image: they are decided first, alone. The
 * result does not depend on the threads (each file's vector is its own; the marked files
 * are listed in target order).
 *
 * Writing: the new vectors (each merged with the file's current one) go into one DV file
 * (mcdc_delta_dv_write: durable before the commit names it); each marked file gets a
 * remove of its current add and an add of the same path with the new vector, stats and
 * tags unchanged (stats describe the physical file; the key range still bounds its live
 * keys). A crash before the commit leaves an unreferenced DV file for vacuum, nothing else.
 */
#include "silver/common.h"
#include "silver/rewrite.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nomem(void)
{
    return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
}

/* The file's maxValues._start_lsn from its stats, or false. */
static bool file_max_lsn(const mcdc_delta_file *f, mcdc_lsn *out)
{
    if (!f->stats)
        return false;
    json_t *j = json_loads(f->stats, 0, NULL);
    json_t *mx = j ? json_object_get(json_object_get(j, "maxValues"), "_start_lsn") : NULL;
    bool ok = json_is_string(mx) &&
              mcdc_lsn_parse_n(out, json_string_value(mx), json_string_length(mx)) == 0;
    json_decref(j);
    return ok;
}

/* The key's integer value when @p key is the encoding of a non-NULL integer cell (01 and
 * the 64 bits big-endian with the sign bit flipped). */
static bool int_of_key(const uint8_t *key, size_t len, int64_t *out)
{
    if (len != 9 || key[0] != 1)
        return false;
    uint64_t u = 0;
    for (int i = 1; i <= 8; i++)
        u = u << 8 | key[i];
    *out = (int64_t)(u ^ ((uint64_t)1 << 63));
    return true;
}

/* Whether the key is one column whose encoding int_of_key inverts (probed). */
static bool int_key_column(const mcdc_silver_changes *cs, int *col_out)
{
    size_t n;
    const int *ki = mcdc_silver_changes_key_index(cs, &n);
    const mcdc_schema *sch = mcdc_silver_changes_schema(cs);
    if (n != 1 || ki[0] < 0 || (size_t)ki[0] >= sch->n_cols)
        return false;
    const mcdc_column *col = &sch->cols[ki[0]];
    switch (col->type) {
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
    case MCDC_TYPE_DATE: case MCDC_TYPE_TIMESTAMP: case MCDC_TYPE_TIMESTAMP_NTZ: break;
    default: return false;
    }
    static const int64_t probes[] = { 0, 1, -1, 255, 256, INT64_MIN, INT64_MAX, 0x0102030405060708 };
    mcdc_buf b = MCDC_BUF_INIT(64);
    bool same = true;
    for (size_t i = 0; same && i < sizeof probes / sizeof probes[0]; i++) {
        mcdc_value v;
        memset(&v, 0, sizeof v);
        v.v.i = probes[i];
        mcdc_buf_clear(&b);
        int64_t back;
        same = mcdc_silver_key_encode(&b, col, &v) == 0 &&
               int_of_key((const uint8_t *)b.ptr, b.len, &back) && back == probes[i];
    }
    mcdc_buf_dispose(&b);
    *col_out = ki[0];
    return same;
}

/* Index of the first image whose key is above @p key. */
static size_t upper_bound(const mcdc_silver_changes *cs, const uint8_t *key, size_t len)
{
    size_t i = mcdc_silver_changes_lower_bound(cs, key, len);
    if (i < mcdc_silver_changes_count(cs)) {
        size_t il;
        const uint8_t *ik = mcdc_silver_changes_key_at(cs, i, &il);
        if (mcdc_silver__key_cmp(ik, il, key, len) == 0)
            i++;
    }
    return i;
}

typedef struct marked {
    const mcdc_delta_file *f;
    uint64_t              *rows; /* the new vector: the current one's rows and the new */
    size_t                 n;
} marked;

static int push_row(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        uint64_t *p = realloc(*v, c * sizeof *p);
        if (!p)
            return nomem();
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = x;
    return 0;
}

/* Union of two ascending lists into a new one. */
static int merge_rows(uint64_t **out, size_t *n_out, const uint64_t *a, size_t na,
                      const uint64_t *b, size_t nb)
{
    uint64_t *m = malloc((na + nb + 1) * sizeof *m);
    if (!m)
        return nomem();
    size_t i = 0, j = 0, k = 0;
    while (i < na || j < nb) {
        uint64_t x = j >= nb || (i < na && a[i] <= b[j]) ? a[i] : b[j];
        if (i < na && a[i] == x)
            i++;
        if (j < nb && b[j] == x)
            j++;
        m[k++] = x;
    }
    *out = m;
    *n_out = k;
    return 0;
}

/* The positions in file @p t->f of the rows this merge replaces or drops. */
static int mark_file(const mcdc_silver_env *env, const mcdc_silver_target *t, unsigned char *replaced,
                     mcdc_silver_out *counts, uint64_t **pos, size_t *n_pos, mcdc_value *full,
                     mcdc_value *scratch, mcdc_buf *kb)
{
    mcdc_silver_changes *cs = env->cs;
    const mcdc_schema *sch = env->schema;
    size_t nk;
    const int *ki = mcdc_silver_changes_key_index(cs, &nk);
    int s_lsn = mcdc_schema_find(sch, "_start_lsn");
    size_t m0 = 0, m1 = mcdc_silver_changes_count(cs);
    if (t->known) {
        m0 = mcdc_silver_changes_lower_bound(cs, t->lo, t->lo_len);
        m1 = upper_bound(cs, t->hi, t->hi_len);
    }
    if (m0 >= m1)
        return 0;
    /* _start_lsn is needed only when an image is not newer than every row of the file */
    mcdc_lsn fmax;
    bool need_lsn = s_lsn < 0 || !file_max_lsn(t->f, &fmax);
    for (size_t m = m0; !need_lsn && m < m1; m++) {
        mcdc_silver_image im;
        mcdc_silver_changes_at(cs, m, &im);
        need_lsn = mcdc_lsn_cmp(&im.start_lsn, &fmax) <= 0;
    }
    /* integer keys of the range, when the key is one integer column */
    int icol = -1;
    int64_t *ikeys = NULL;
    bool ints = int_key_column(cs, &icol);
    if (ints && !(ikeys = malloc((m1 - m0) * sizeof *ikeys)))
        return nomem();
    for (size_t m = m0; ints && m < m1; m++) {
        size_t kl;
        const uint8_t *k = mcdc_silver_changes_key_at(cs, m, &kl);
        ints = int_of_key(k, kl, &ikeys[m - m0]);
    }
    const char *cols[64];
    size_t nc = 0;
    int rc = 0;
    if (nk + 1 > sizeof cols / sizeof cols[0]) {
        free(ikeys);
        return mcdc_error_set(MCDC_EINVAL, "silver: too many key columns (%zu)", nk);
    }
    for (size_t i = 0; i < nk; i++)
        cols[nc++] = sch->cols[ki[i]].name;
    if (need_lsn && s_lsn >= 0)
        cols[nc++] = "_start_lsn";
    mcdc_delta_snapshot view = *env->silver;
    mcdc_delta_file arr[1] = { *t->f };
    view.files = arr;
    view.n_files = 1;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = nc;
    mcdc_delta_scan *sc = NULL;
    rc = mcdc_delta_scan_open(&sc, &view, &so);
    for (size_t i = 0; i < sch->n_cols; i++) {
        memset(&full[i], 0, sizeof full[i]);
        full[i].is_null = true;
    }
    size_t cap = 0;
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        counts->rows_read++;
        size_t m = m1;
        if (ints && !r[0].is_null) {
            int64_t v = r[0].v.i;
            size_t lo = 0, hi = m1 - m0;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (ikeys[mid] < v)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo < m1 - m0 && ikeys[lo] == v)
                m = m0 + lo;
            if (m == m1)
                continue;
        }
        for (size_t i = 0; i < nk; i++)
            full[ki[i]] = r[i];
        if (s_lsn >= 0) {
            if (need_lsn) {
                full[s_lsn] = r[nk];
            } else {
                memset(&full[s_lsn], 0, sizeof full[s_lsn]);
                full[s_lsn].is_null = true; /* S3 sees no LSN: the image is newer */
            }
        }
        if (m == m1) {
            if ((rc = mcdc_silver_changes_row_key(cs, kb, full)) < 0)
                break;
            size_t kl = kb->len;
            const uint8_t *k = (const uint8_t *)kb->ptr;
            size_t lo = m0, hi = m1;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2, il;
                const uint8_t *ik = mcdc_silver_changes_key_at(cs, mid, &il);
                if (mcdc_silver__key_cmp(ik, il, k, kl) < 0)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t il = 0;
            const uint8_t *ik = lo < m1 ? mcdc_silver_changes_key_at(cs, lo, &il) : NULL;
            if (!ik || mcdc_silver__key_cmp(ik, il, k, kl) != 0)
                continue;
            m = lo;
        }
        mcdc_silver_fate fate;
        const mcdc_value *img;
        if ((rc = mcdc_silver_changes_match_at(cs, m, full, &fate, &img, scratch)) < 0)
            break;
        if (fate == MCDC_SILVER_KEEP)
            continue;
        if (fate == MCDC_SILVER_REPLACE) {
            replaced[m] = 1;
            counts->rows_updated++;
        } else {
            counts->rows_deleted++;
        }
        int64_t idx = mcdc_delta_scan_row_index(sc);
        if ((rc = push_row(pos, n_pos, &cap, (uint64_t)idx)) < 0)
            break;
    }
    mcdc_delta_scan_free(sc);
    free(ikeys);
    return rc < 0 ? rc : 0;
}

/* The files to mark, shared by the threads: groups of targets whose key ranges overlap
 * (they may meet the same images), one group at a time per thread. */
typedef struct pool {
    const mcdc_silver_env    *env;
    const mcdc_silver_target *t;
    unsigned char            *replaced;
    marked                   *mk;       /* per target */
    size_t                   *first;    /* group g is targets first[g] .. first[g+1] */
    size_t                    n_groups;
    atomic_size_t             next;
    atomic_bool               failed;
    pthread_mutex_t           lock;     /* counts, rc and err below */
    mcdc_silver_out           counts;
    int                       rc;
    size_t                    rc_at;    /* the failing target, for the first error by order */
    mcdc_error                err;
} pool;

/* Decide target @p i into p->mk[i] (the new vector, the current one's rows included). */
static int mark_one(pool *p, size_t i, mcdc_silver_out *counts, mcdc_value *full,
                    mcdc_value *scratch, mcdc_buf *kb)
{
    const mcdc_silver_target *t = &p->t[i];
    uint64_t *pos = NULL;
    size_t n_pos = 0;
    int rc = mark_file(p->env, t, p->replaced, counts, &pos, &n_pos, full, scratch, kb);
    if (rc == 0 && n_pos) {
        p->mk[i].f = t->f;
        /* the scan gives ascending indexes; the current DV's rows join them */
        if (t->f->has_dv) {
            uint64_t *have = NULL;
            size_t n_have = 0;
            rc = mcdc_delta_dv_read(&have, &n_have, p->env->silver_path, &t->f->dv);
            if (rc == 0)
                rc = merge_rows(&p->mk[i].rows, &p->mk[i].n, have, n_have, pos, n_pos);
            free(have);
        } else {
            p->mk[i].rows = pos;
            p->mk[i].n = n_pos;
            pos = NULL;
        }
    }
    free(pos);
    return rc;
}

static void *pool_run(void *arg)
{
    pool *p = arg;
    const mcdc_schema *sch = p->env->schema;
    mcdc_value *full = calloc(sch->n_cols + 1, sizeof *full);
    mcdc_value *scratch = calloc(sch->n_cols + 1, sizeof *scratch);
    mcdc_buf kb = MCDC_BUF_INIT(1 << 20);
    mcdc_silver_out counts;
    memset(&counts, 0, sizeof counts);
    int rc = full && scratch ? 0 : nomem();
    size_t at = 0;
    while (rc == 0 && !atomic_load(&p->failed)) {
        size_t g = atomic_fetch_add(&p->next, 1);
        if (g >= p->n_groups)
            break;
        for (at = p->first[g]; rc == 0 && at < p->first[g + 1]; at++)
            rc = mark_one(p, at, &counts, full, scratch, &kb);
        if (rc < 0)
            at--;
    }
    pthread_mutex_lock(&p->lock);
    p->counts.rows_read += counts.rows_read;
    p->counts.rows_updated += counts.rows_updated;
    p->counts.rows_deleted += counts.rows_deleted;
    if (rc < 0 && (p->rc == 0 || at < p->rc_at)) {
        p->rc = rc;
        p->rc_at = at;
        p->err = *mcdc_error_last();
    }
    pthread_mutex_unlock(&p->lock);
    if (rc < 0)
        atomic_store(&p->failed, true);
    free(full);
    free(scratch);
    mcdc_buf_dispose(&kb);
    return NULL;
}

int mcdc_silver_mark(const mcdc_silver_env *env, const mcdc_silver_target *t, size_t n,
                     int threads, unsigned char *replaced, mcdc_silver_out *out,
                     uint64_t *files_marked)
{
    *files_marked = 0;
    marked *all = calloc(n + 1, sizeof *all);
    size_t *first = calloc(n + 2, sizeof *first);
    int rc = all && first ? 0 : nomem();
    /* groups: each target without a range alone (it may meet any image: these go first,
     * in one group, so no other runs beside them), then runs of overlapping ranges */
    size_t n_groups = 0, k = 0;
    if (rc == 0) {
        size_t u = 0;
        while (u < n && !t[u].known)
            u++;
        if (u == n && n) {
            first[n_groups++] = 0;
        } else {
            if (u)
                first[n_groups++] = 0;
            const uint8_t *span = NULL;
            size_t span_len = 0;
            for (k = u; k < n; k++) {
                if (!span || mcdc_silver__key_cmp(t[k].lo, t[k].lo_len, span, span_len) > 0)
                    first[n_groups++] = k, span = NULL;
                if (!span || mcdc_silver__key_cmp(t[k].hi, t[k].hi_len, span, span_len) > 0) {
                    span = t[k].hi;
                    span_len = t[k].hi_len;
                }
            }
        }
        first[n_groups] = n;
    }
    pool p;
    memset(&p, 0, sizeof p);
    p.env = env;
    p.t = t;
    p.replaced = replaced;
    p.mk = all;
    p.first = first;
    atomic_init(&p.next, 0);
    atomic_init(&p.failed, false);
    pthread_mutex_init(&p.lock, NULL);
    if (rc == 0 && n_groups) {
        /* a group without ranges is all there is or comes first: on this thread alone */
        size_t want = threads < 1 ? 1 : (size_t)threads;
        bool unknown_first = !t[0].known;
        if (unknown_first) {
            p.n_groups = 1;
            pool_run(&p);
            atomic_store(&p.next, 1); /* the pass above took more than its group */
        }
        p.n_groups = n_groups;
        if (want > n_groups)
            want = n_groups;
        pthread_t *tids = want > 1 ? calloc(want - 1, sizeof *tids) : NULL;
        size_t started = 0;
        for (size_t i = 0; tids && i + 1 < want && !atomic_load(&p.failed); i++) {
            if (pthread_create(&tids[i], NULL, pool_run, &p) != 0)
                break;
            started++;
        }
        pool_run(&p);
        for (size_t i = 0; i < started; i++)
            pthread_join(tids[i], NULL);
        free(tids);
        if (p.rc < 0) {
            rc = mcdc_error_set(p.rc, "%s", p.err.message);
            if (p.err.hint[0])
                mcdc_error_hint("%s", p.err.hint);
        }
    }
    pthread_mutex_destroy(&p.lock);
    out->rows_read += p.counts.rows_read;
    out->rows_updated += p.counts.rows_updated;
    out->rows_deleted += p.counts.rows_deleted;
    /* the marked files in target order */
    marked *mk = all;
    size_t n_mk = 0;
    for (size_t i = 0; i < n && all; i++)
        if (all[i].n)
            mk[n_mk++] = all[i];
    free(first);
    mcdc_delta_dv *dvs = rc == 0 && n_mk ? calloc(n_mk, sizeof *dvs) : NULL;
    const uint64_t **sets = rc == 0 && n_mk ? calloc(n_mk, sizeof *sets) : NULL;
    size_t *ns = rc == 0 && n_mk ? calloc(n_mk, sizeof *ns) : NULL;
    if (rc == 0 && n_mk && (!dvs || !sets || !ns))
        rc = nomem();
    for (size_t i = 0; rc == 0 && i < n_mk; i++) {
        sets[i] = mk[i].rows;
        ns[i] = mk[i].n;
    }
    if (rc == 0 && n_mk)
        rc = mcdc_delta_dv_write(env->silver_path, sets, ns, n_mk, dvs);
    for (size_t i = 0; rc == 0 && i < n_mk; i++) {
        mcdc_delta_file add;
        if ((rc = mcdc_delta_file_copy(&add, mk[i].f)) < 0)
            break;
        mcdc_delta_dv_clear(&add.dv);
        add.has_dv = true;
        add.dv = dvs[i];
        memset(&dvs[i], 0, sizeof dvs[i]);
        add.data_change = true;
        rc = mcdc_silver_out_add(out, &add);
        mcdc_delta_file_clear(&add);
        if (rc == 0)
            rc = mcdc_silver_out_remove(out, mk[i].f);
        if (rc == 0)
            (*files_marked)++;
    }
    for (size_t i = 0; dvs && i < n_mk; i++)
        mcdc_delta_dv_clear(&dvs[i]);
    for (size_t i = 0; mk && i < n_mk; i++)
        free(mk[i].rows);
    free(dvs);
    free(sets);
    free(ns);
    free(mk);
    return rc;
}
