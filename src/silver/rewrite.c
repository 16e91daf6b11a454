/*
 * silver/rewrite.c: the files a silver merge writes (interface in silver/rewrite.h).
 *
 * Two ways to write a file:
 * - Streamed: a silver file with a key range (written by silver apply, so sorted by key)
 *   is read row by row beside the change set's images in key order; each row is decided
 *   by the image of its key (rule S3), new keys are written in between, and the rows go
 *   straight to the Parquet writer: no copy of the rows, no sort, no hash, no copy of a
 *   key. The file's key order and range are checked as it is read: a row out of order
 *   undoes the pass (the file is discarded, the images' marks restored) and the file is
 *   written the other way; a row outside the range is an error (its tags are wrong).
 * - Held (runs): rows are copied into memory with their encoded keys, sorted, and written
 *   as one file or as several of about the target size. Used for a rebuild, for files
 *   without a range, and for a file that grows past 1.5 times the target.
 * Both give the same file for a sorted file that stays under the split size.
 *
 * Parallelism: files without a range may hold any key, so they are rewritten first on the
 * calling thread. The other files are grouped where their ranges overlap; a group decides
 * only keys inside its own span (and the new keys targeted at its files), so groups are
 * independent and run on worker threads that take the next group in order. Each group
 * writes into its own result, merged in group order afterwards, so the commit lists the
 * same files with the same rows whatever the timing. Memory: per thread, one file's rows
 * at most (held) or one row group of the writer (streamed).
 */
#include "silver/common.h"
#include "silver/rewrite.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/log.h"
#include "silver/datafile.h"

static int nomem(void)
{
    return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
}

/* Encoded keys in byte order: <0, 0, >0. Eight bytes at a time (keys are short: a call
 * to memcmp costs more than the compare). */
static inline int key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t n = na < nb ? na : nb, i = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; i + 8 <= n; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
#endif
    for (; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return na < nb ? -1 : na > nb;
}



/* ---- results ------------------------------------------------------------------------ */

void mcdc_silver_out_dispose(mcdc_silver_out *out)
{
    for (size_t i = 0; i < out->n_adds; i++)
        mcdc_delta_file_clear(&out->adds[i]);
    free(out->adds);
    free(out->removes);
    memset(out, 0, sizeof *out);
}

int mcdc_silver_out_remove(mcdc_silver_out *out, const mcdc_delta_file *f)
{
    if (out->n_removes == out->cap_removes) {
        size_t cap = out->cap_removes ? out->cap_removes * 2 : 16;
        const mcdc_delta_file **a = realloc(out->removes, cap * sizeof *a);
        if (!a)
            return nomem();
        out->removes = a;
        out->cap_removes = cap;
    }
    out->removes[out->n_removes++] = f;
    return 0;
}

int mcdc_silver_out_add(mcdc_silver_out *out, mcdc_delta_file *f)
{
    if (out->n_adds == out->cap_adds) {
        size_t cap = out->cap_adds ? out->cap_adds * 2 : 16;
        mcdc_delta_file *a = realloc(out->adds, cap * sizeof *a);
        if (!a)
            return nomem();
        out->adds = a;
        out->cap_adds = cap;
    }
    out->adds[out->n_adds++] = *f;
    memset(f, 0, sizeof *f);
    return 0;
}

/* Move everything of @p src to the end of @p dst. */
static int out_move(mcdc_silver_out *dst, mcdc_silver_out *src)
{
    for (size_t i = 0; i < src->n_removes; i++)
        if (mcdc_silver_out_remove(dst, src->removes[i]) < 0)
            return MCDC_ENOMEM;
    src->n_removes = 0;
    for (size_t i = 0; i < src->n_adds; i++)
        if (mcdc_silver_out_add(dst, &src->adds[i]) < 0)
            return MCDC_ENOMEM;
    src->n_adds = 0;
    dst->rows_read += src->rows_read;
    dst->rows_inserted += src->rows_inserted;
    dst->rows_updated += src->rows_updated;
    dst->rows_deleted += src->rows_deleted;
    src->rows_read = src->rows_inserted = src->rows_updated = src->rows_deleted = 0;
    return 0;
}

/* Close @p w (rows written, keys first..last) and add it to @p out with its key range. */
static int finish_file(mcdc_silver_out *out, mcdc_silver_datafile *w, const uint8_t *first,
                       size_t first_len, const uint8_t *last, size_t last_len)
{
    mcdc_delta_file file;
    memset(&file, 0, sizeof file);
    int rc = mcdc_silver_datafile_close(w, &file);
    char *lo = rc == 0 ? mcdc_silver__hex_of(first, first_len) : NULL;
    char *hi = rc == 0 ? mcdc_silver__hex_of(last, last_len) : NULL;
    if (rc == 0 && (!lo || !hi))
        rc = nomem();
    if (rc == 0 && (rc = mcdc_delta_map_set(&file.tags, MCDC_SILVER_TAG_KEY_MIN, lo)) == 0 &&
        (rc = mcdc_delta_map_set(&file.tags, MCDC_SILVER_TAG_KEY_MAX, hi)) == 0)
        rc = mcdc_silver_out_add(out, &file);
    free(lo);
    free(hi);
    mcdc_delta_file_clear(&file);
    return rc;
}

/* ---- held rows ---------------------------------------------------------------------- */

typedef struct arena_block {
    struct arena_block *next;
    size_t              used, cap;
    char                data[];
} arena_block;

typedef struct sort_ent {
    const uint8_t *key;
    size_t         len;
    size_t         row;
} sort_ent;

/* Rows in silver's order with their encoded keys; strings copied into arena blocks that
 * are kept from one run to the next. */
struct mcdc_silver_runs {
    const mcdc_silver_env *env;
    mcdc_silver_out       *out;
    size_t       n_cols;
    mcdc_value  *vals;     /* n_rows * n_cols */
    size_t       n_rows, cap_rows;
    size_t      *key_off;  /* per row: offset of its key in keys */
    size_t      *key_len;
    mcdc_buf     keys;
    mcdc_buf     scratch;  /* one key being encoded */
    arena_block *blocks;   /* chain; cur is the one being filled, those after it are free */
    arena_block *cur;
    sort_ent    *ents;
    size_t       cap_ents;
};

int mcdc_silver_runs_new(mcdc_silver_runs **out, const mcdc_silver_env *env, mcdc_silver_out *dst)
{
    mcdc_silver_runs *r = calloc(1, sizeof *r);
    if (!r)
        return nomem();
    r->env = env;
    r->out = dst;
    r->n_cols = env->schema->n_cols;
    r->keys = (mcdc_buf)MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    r->scratch = (mcdc_buf)MCDC_BUF_INIT(1 << 20);
    *out = r;
    return 0;
}

static void runs_reset(mcdc_silver_runs *r)
{
    r->n_rows = 0;
    r->cur = r->blocks;
    if (r->cur)
        r->cur->used = 0;
    mcdc_buf_clear(&r->keys);
}

void mcdc_silver_runs_free(mcdc_silver_runs *r)
{
    if (!r)
        return;
    while (r->blocks) {
        arena_block *n = r->blocks->next;
        free(r->blocks);
        r->blocks = n;
    }
    free(r->vals);
    free(r->key_off);
    free(r->key_len);
    free(r->ents);
    mcdc_buf_dispose(&r->keys);
    mcdc_buf_dispose(&r->scratch);
    free(r);
}

size_t mcdc_silver_runs_count(const mcdc_silver_runs *r)
{
    return r->n_rows;
}

static char *arena_copy(mcdc_silver_runs *r, const char *p, size_t n)
{
    arena_block *b = r->cur;
    while (b && b->cap - b->used < n) {
        /* the next kept block, if big enough; else a new one after this */
        arena_block *next = b->next;
        if (next && next->cap >= n) {
            next->used = 0;
            b = r->cur = next;
            break;
        }
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->next = next;
        nb->used = 0;
        nb->cap = cap;
        b->next = nb;
        b = r->cur = nb;
    }
    if (!b) {
        size_t cap = n > (1u << 20) ? n : (1u << 20);
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = NULL;
        b->used = 0;
        b->cap = cap;
        r->blocks = r->cur = b;
    }
    char *d = b->data + b->used;
    if (n)
        memcpy(d, p, n);
    b->used += n;
    return d;
}

static int runs_add(mcdc_silver_runs *r, const mcdc_value *row, const uint8_t *key, size_t key_len)
{
    if (r->n_rows == r->cap_rows) {
        size_t cap = r->cap_rows ? r->cap_rows * 2 : 1024;
        mcdc_value *v = realloc(r->vals, cap * r->n_cols * sizeof *v);
        if (!v)
            goto nomem;
        r->vals = v;
        size_t *o = realloc(r->key_off, cap * sizeof *o);
        if (!o)
            goto nomem;
        r->key_off = o;
        size_t *l = realloc(r->key_len, cap * sizeof *l);
        if (!l)
            goto nomem;
        r->key_len = l;
        r->cap_rows = cap;
    }
    const mcdc_schema *s = r->env->schema;
    mcdc_value *d = &r->vals[r->n_rows * r->n_cols];
    for (size_t i = 0; i < r->n_cols; i++) {
        d[i] = row[i];
        mcdc_type_id t = s->cols[i].type;
        if (!row[i].is_null && (t == MCDC_TYPE_STRING || t == MCDC_TYPE_BINARY)) {
            d[i].v.s.ptr = arena_copy(r, row[i].v.s.ptr, row[i].v.s.len);
            if (!d[i].v.s.ptr)
                goto nomem;
        }
    }
    r->key_off[r->n_rows] = r->keys.len;
    r->key_len[r->n_rows] = key_len;
    int rc = mcdc_buf_put(&r->keys, key, key_len);
    if (rc < 0)
        return rc;
    r->n_rows++;
    return 0;
nomem:
    return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory holding the rows of one file");
}

int mcdc_silver_runs_hold(mcdc_silver_runs *r, const mcdc_value *row)
{
    int rc = mcdc_silver_changes_row_key(r->env->cs, &r->scratch, row);
    if (rc == 0)
        rc = runs_add(r, row, (const uint8_t *)r->scratch.ptr, r->scratch.len);
    return rc;
}

static int ent_cmp(const void *pa, const void *pb)
{
    const sort_ent *a = pa, *b = pb;
    int c = key_cmp(a->key, a->len, b->key, b->len);
    if (c)
        return c;
    return a->row < b->row ? -1 : a->row > b->row; /* stable: equal keys keep their order */
}

/* Write rows ents[from..to) (sorted) as one silver file with its key range in tags. */
static int write_piece(mcdc_silver_runs *r, size_t from, size_t to)
{
    mcdc_silver_datafile *w = NULL;
    int rc = mcdc_silver_datafile_open(&w, r->env->silver_path, r->env->schema);
    for (size_t i = from; rc == 0 && i < to; i++)
        rc = mcdc_silver_datafile_write(w, &r->vals[r->ents[i].row * r->n_cols]);
    if (rc == 0)
        rc = finish_file(r->out, w, r->ents[from].key, r->ents[from].len, r->ents[to - 1].key,
                         r->ents[to - 1].len);
    mcdc_silver_datafile_free(w);
    return rc;
}

int mcdc_silver_runs_flush(mcdc_silver_runs *r)
{
    size_t n = r->n_rows;
    if (n == 0)
        return 0;
    if (n > r->cap_ents) {
        sort_ent *e = realloc(r->ents, n * sizeof *e);
        if (!e)
            return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory sorting %zu rows", n);
        r->ents = e;
        r->cap_ents = n;
    }
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        r->ents[i].key = (const uint8_t *)r->keys.ptr + r->key_off[i];
        r->ents[i].len = r->key_len[i];
        r->ents[i].row = i;
        if (i && sorted && key_cmp(r->ents[i - 1].key, r->ents[i - 1].len, r->ents[i].key,
                                   r->ents[i].len) > 0)
            sorted = false;
    }
    if (!sorted)
        qsort(r->ents, n, sizeof *r->ents, ent_cmp);
    size_t target = r->env->target_rows;
    size_t pieces = 1;
    if (n > target + target / 2)
        pieces = (n + target - 1) / target;
    int rc = 0;
    for (size_t p = 0; rc == 0 && p < pieces; p++) {
        size_t from = n * p / pieces, to = n * (p + 1) / pieces;
        if (to > from)
            rc = write_piece(r, from, to);
    }
    runs_reset(r);
    return rc;
}

/* ---- one file ----------------------------------------------------------------------- */

/* A thread's scratch. */
typedef struct worker {
    const mcdc_silver_env *env;
    mcdc_silver_runs      *runs;   /* held rows (made on first use) */
    mcdc_silver_out       *out;    /* the group being written */
    mcdc_buf               key;     /* the held path's row key */
    mcdc_buf               ring[3]; /* the streamed path's row keys (see rewrite_streamed) */
    mcdc_buf               first;   /* the first key a streamed file got */
    unsigned char         *marks;
    size_t                 cap_marks;
    mcdc_value            *img;     /* an image's row decoded (the change set's n_cols + 1) */
} worker;

static void worker_init(worker *w, const mcdc_silver_env *env)
{
    memset(w, 0, sizeof *w);
    w->env = env;
    w->key = (mcdc_buf)MCDC_BUF_INIT(1 << 20);
    for (int i = 0; i < 3; i++)
        w->ring[i] = (mcdc_buf)MCDC_BUF_INIT(1 << 20);
    w->first = (mcdc_buf)MCDC_BUF_INIT(1 << 20);
}

static void worker_dispose(worker *w)
{
    mcdc_silver_runs_free(w->runs);
    mcdc_buf_dispose(&w->key);
    for (int i = 0; i < 3; i++)
        mcdc_buf_dispose(&w->ring[i]);
    mcdc_buf_dispose(&w->first);
    free(w->marks);
    free(w->img);
    memset(w, 0, sizeof *w);
}

static int open_file_scan(mcdc_delta_scan **sc, mcdc_delta_snapshot *view, mcdc_delta_file *arr,
                          const mcdc_silver_env *env, const mcdc_delta_file *f)
{
    *view = *env->silver;
    arr[0] = *f;
    view->files = arr;
    view->n_files = 1;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    return mcdc_delta_scan_open(sc, view, &so);
}

/* A row of a file with a range lies outside it: the tags are wrong, and the files that
 * were not read may hold keys this apply changed. */
static int outside_range(const mcdc_silver_env *env, const mcdc_silver_target *t)
{
    mcdc_error_set(MCDC_ECORRUPT, "%s: file %s holds a key outside the key range of its "
                   "tags (%s, %s)", env->silver_path, t->f->path, MCDC_SILVER_TAG_KEY_MIN,
                   MCDC_SILVER_TAG_KEY_MAX);
    return mcdc_error_hint("a tool rewrote the file and kept silver's tags; rebuild silver "
                           "into a new table");
}

static bool in_range(const mcdc_silver_target *t, const uint8_t *k, size_t kl)
{
    return key_cmp(k, kl, t->lo, t->lo_len) >= 0 && key_cmp(k, kl, t->hi, t->hi_len) <= 0;
}

/* Held: every row of the file decided by a hash look-up, the new keys added, sorted. */
static int rewrite_held(worker *w, const mcdc_silver_target *t)
{
    const mcdc_silver_env *env = w->env;
    int rc = 0;
    if (!w->runs)
        rc = mcdc_silver_runs_new(&w->runs, env, w->out);
    if (rc < 0)
        return rc;
    w->runs->out = w->out;
    mcdc_delta_snapshot view;
    mcdc_delta_file arr[1];
    mcdc_delta_scan *sc = NULL;
    rc = open_file_scan(&sc, &view, arr, env, t->f);
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        w->out->rows_read++;
        mcdc_silver_fate fate;
        const mcdc_value *img;
        if ((rc = mcdc_silver_changes_row_key(env->cs, &w->key, r)) < 0)
            break;
        if (t->known && !in_range(t, (const uint8_t *)w->key.ptr, w->key.len)) {
            rc = outside_range(env, t);
            break;
        }
        if ((rc = mcdc_silver_changes_match_key(env->cs, (const uint8_t *)w->key.ptr,
                                                w->key.len, r, &fate, &img, w->img)) < 0)
            break;
        if (fate == MCDC_SILVER_DROP) {
            w->out->rows_deleted++;
            continue;
        }
        if (fate == MCDC_SILVER_REPLACE)
            w->out->rows_updated++;
        rc = runs_add(w->runs, fate == MCDC_SILVER_REPLACE ? img : r,
                      (const uint8_t *)w->key.ptr, w->key.len);
    }
    mcdc_delta_scan_free(sc);
    for (size_t k = 0; rc == 0 && k < t->n_img; k++) {
        mcdc_silver_image im;
        mcdc_silver_changes_at(env->cs, t->img[k], &im);
        if (im.matched || im.is_delete)
            continue;
        rc = runs_add(w->runs, mcdc_silver_changes_row_at(env->cs, t->img[k], w->img), im.key,
                      im.key_len);
        w->out->rows_inserted++;
    }
    if (rc == 0 && (rc = mcdc_silver_out_remove(w->out, t->f)) == 0)
        rc = mcdc_silver_runs_flush(w->runs);
    return rc;
}

/* The file's row count from its add stats, or -1. */
static int64_t file_rows(const mcdc_delta_file *f)
{
    if (!f->stats)
        return -1;
    json_t *j = json_loads(f->stats, 0, NULL);
    json_t *n = j ? json_object_get(j, "numRecords") : NULL;
    int64_t rows = json_is_integer(n) ? (int64_t)json_integer_value(n) : -1;
    json_decref(j);
    return rows;
}

/* Index of the first image whose key is above @p key. */
static size_t upper_bound(const mcdc_silver_changes *cs, const uint8_t *key, size_t len)
{
    size_t i = mcdc_silver_changes_lower_bound(cs, key, len);
    if (i < mcdc_silver_changes_count(cs)) {
        size_t il;
        const uint8_t *ik = mcdc_silver_changes_key_at(cs, i, &il);
        if (key_cmp(ik, il, key, len) == 0)
            i++;
    }
    return i;
}

typedef struct stream {
    worker               *w;
    mcdc_silver_datafile *file;
    size_t                rows;
    const uint8_t        *last;   /* key of the last row written: an image's, or in ring */
    size_t                last_len;
    int                   last_i; /* the ring buffer holding it, or -1 */
    const uint8_t        *ins_key; /* key of new-key image ins_at (SIZE_MAX: none yet) */
    size_t                ins_len, ins_at;
    mcdc_silver_out       counts; /* counters only, added on success */
} stream;

/* Write @p row of @p key (held in ring buffer @p ring_i, or -1 when it stays put). */
static int stream_put(stream *s, const mcdc_value *row, const uint8_t *key, size_t len,
                      int ring_i)
{
    int rc = 0;
    if (!s->file && (rc = mcdc_silver_datafile_open(&s->file, s->w->env->silver_path,
                                                    s->w->env->schema)) < 0)
        return rc;
    if ((rc = mcdc_silver_datafile_write(s->file, row)) < 0)
        return rc;
    if (s->rows == 0) {
        mcdc_buf_clear(&s->w->first);
        if ((rc = mcdc_buf_put(&s->w->first, key, len)) < 0)
            return rc;
    }
    s->last = key;
    s->last_len = len;
    s->last_i = ring_i;
    s->rows++;
    return 0;
}

/* Write the new keys targeted at the file whose key is below @p key (all when NULL). */
static int stream_inserts(stream *s, const mcdc_silver_target *t, size_t *at, const uint8_t *key,
                          size_t len)
{
    int rc = 0;
    for (; rc == 0 && *at < t->n_img; (*at)++) {
        if (s->ins_at != *at) { /* fetched once per image, not once per row */
            s->ins_key = mcdc_silver_changes_key_at(s->w->env->cs, t->img[*at], &s->ins_len);
            s->ins_at = *at;
        }
        if (key && key_cmp(s->ins_key, s->ins_len, key, len) >= 0)
            break;
        mcdc_silver_image im;
        mcdc_silver_changes_at(s->w->env->cs, t->img[*at], &im);
        if (im.matched || im.is_delete)
            continue;
        rc = stream_put(s, mcdc_silver_changes_row_at(s->w->env->cs, t->img[*at], s->w->img),
                        im.key, im.key_len, -1);
        s->counts.rows_inserted++;
    }
    return rc;
}

/* ---- one integer key without a call per row ----------------------------------------- */

/* 00 for NULL, else 01 and the value's 64 bits big-endian with the sign bit flipped:
 * mcdc_silver_key_encode's bytes for a 64-bit integer cell (checked by fast_key_col). */
static size_t int_key(uint8_t out[9], const mcdc_value *v)
{
    if (v->is_null) {
        out[0] = 0;
        return 1;
    }
    uint64_t u = (uint64_t)v->v.i ^ ((uint64_t)1 << 63);
    out[0] = 1;
    for (int i = 8; i >= 1; i--) {
        out[i] = (uint8_t)u;
        u >>= 8;
    }
    return 9;
}

/* The key column when the key is one integer-like column whose encoding int_key writes
 * (checked against mcdc_silver_key_encode on probe values), else -1. */
static int fast_key_col(const mcdc_silver_changes *cs)
{
    size_t n;
    const int *ki = mcdc_silver_changes_key_index(cs, &n);
    const mcdc_schema *sch = mcdc_silver_changes_schema(cs);
    if (n != 1 || ki[0] < 0 || (size_t)ki[0] >= sch->n_cols)
        return -1;
    const mcdc_column *col = &sch->cols[ki[0]];
    switch (col->type) {
    case MCDC_TYPE_BYTE: case MCDC_TYPE_SHORT: case MCDC_TYPE_INT: case MCDC_TYPE_LONG:
    case MCDC_TYPE_DATE: case MCDC_TYPE_TIMESTAMP: case MCDC_TYPE_TIMESTAMP_NTZ: break;
    default: return -1;
    }
    static const int64_t probes[] = { 0, 1, -1, 255, 256, INT64_MIN, INT64_MAX, 0x0102030405060708 };
    mcdc_buf b = MCDC_BUF_INIT(64);
    bool same = true;
    for (size_t i = 0; same && i <= sizeof probes / sizeof probes[0]; i++) {
        mcdc_value v;
        memset(&v, 0, sizeof v);
        v.is_null = i == sizeof probes / sizeof probes[0];
        if (!v.is_null)
            v.v.i = probes[i];
        uint8_t k[9];
        size_t kl = int_key(k, &v);
        mcdc_buf_clear(&b);
        same = mcdc_silver_key_encode(&b, col, &v) == 0 && b.len == kl &&
               memcmp(b.ptr, k, kl) == 0;
    }
    mcdc_buf_dispose(&b);
    return same ? ki[0] : -1;
}

/* The row's key into @p b: by int_key when @p col >= 0, else as the change set does. */
static inline int row_key(const mcdc_silver_changes *cs, int col, mcdc_buf *b, const mcdc_value *row)
{
    if (col < 0)
        return mcdc_silver_changes_row_key(cs, b, row);
    if (b->cap < 10) /* the key and the buffer's NUL: grown by the change set's way once */
        return mcdc_silver_changes_row_key(cs, b, row);
    b->len = int_key((uint8_t *)b->ptr, &row[col]);
    b->ptr[b->len] = 0;
    return 0;
}

/* Streamed: 1 when written, 0 when the file must be held instead (nothing of the pass
 * left: file discarded, marks restored), < 0 on error. */
static int rewrite_streamed(worker *w, const mcdc_silver_target *t)
{
    const mcdc_silver_env *env = w->env;
    mcdc_silver_changes *cs = env->cs;
    int64_t n_rows = file_rows(t->f);
    if (n_rows < 0 || (uint64_t)n_rows + t->n_img > env->target_rows + env->target_rows / 2)
        return 0;
    size_t m = mcdc_silver_changes_lower_bound(cs, t->lo, t->lo_len);
    size_t end = upper_bound(cs, t->hi, t->hi_len);
    if (end - m > w->cap_marks) {
        unsigned char *p = realloc(w->marks, end - m);
        if (!p)
            return nomem();
        w->marks = p;
        w->cap_marks = end - m;
    }
    for (size_t i = m; i < end; i++)
        w->marks[i - m] = (unsigned char)mcdc_silver_changes_marks(cs, i);
    const size_t m0 = m;
    stream s;
    memset(&s, 0, sizeof s);
    s.w = w;
    s.last_i = -1;
    s.ins_at = SIZE_MAX;
    mcdc_delta_snapshot view;
    mcdc_delta_file arr[1];
    mcdc_delta_scan *sc = NULL;
    int rc = open_file_scan(&sc, &view, arr, env, t->f);
    size_t at = 0;
    bool undo = false;
    /* keys live in three ring buffers, so that none is copied: the row's, the previous
     * row's (prev_i, for the order check) and the last written one's (s.last_i; a row
     * dropped leaves it behind). A row is encoded into a buffer that is neither. */
    int prev_i = -1;
    const int key_col = fast_key_col(cs);
    const uint8_t *mk = NULL; /* key of image m, fetched once per m */
    size_t mkl = 0;
    const mcdc_value *r;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &r)) == 1) {
        rc = 0;
        s.counts.rows_read++;
        int ki = 0;
        while (ki == prev_i || ki == s.last_i)
            ki++;
        if ((rc = row_key(cs, key_col, &w->ring[ki], r)) < 0)
            break;
        const uint8_t *k = (const uint8_t *)w->ring[ki].ptr;
        size_t kl = w->ring[ki].len;
        /* in the range and sorted: the first row at or above lo, each row at or above the
         * one before (so above lo too) and at or below hi; a row below the one before is
         * outside the range when below lo (as the held path would find), else unsorted */
        const uint8_t *pk = prev_i >= 0 ? (const uint8_t *)w->ring[prev_i].ptr : NULL;
        size_t pkl = prev_i >= 0 ? w->ring[prev_i].len : 0;
        if (key_cmp(k, kl, t->hi, t->hi_len) > 0 ||
            (!pk && key_cmp(k, kl, t->lo, t->lo_len) < 0)) {
            rc = outside_range(env, t);
            break;
        }
        if (pk && key_cmp(k, kl, pk, pkl) < 0) {
            if (!in_range(t, k, kl)) {
                rc = outside_range(env, t);
                break;
            }
            undo = true;
            break;
        }
        prev_i = ki;
        if ((rc = stream_inserts(&s, t, &at, k, kl)) < 0)
            break;
        int c = -1;
        while (m < end) {
            if (!mk)
                mk = mcdc_silver_changes_key_at(cs, m, &mkl);
            if ((c = key_cmp(mk, mkl, k, kl)) >= 0)
                break;
            m++;
            mk = NULL;
        }
        mcdc_silver_fate fate = MCDC_SILVER_KEEP;
        const mcdc_value *img = NULL;
        if (m < end && c == 0 && (rc = mcdc_silver_changes_match_at(cs, m, r, &fate, &img,
                                                                     w->img)) < 0)
            break;
        if (fate == MCDC_SILVER_DROP) {
            s.counts.rows_deleted++;
            continue;
        }
        if (fate == MCDC_SILVER_REPLACE)
            s.counts.rows_updated++;
        if ((rc = stream_put(&s, fate == MCDC_SILVER_REPLACE ? img : r, k, kl, ki)) < 0)
            break;
    }
    mcdc_delta_scan_free(sc);
    if (rc == 0 && !undo)
        rc = stream_inserts(&s, t, &at, NULL, 0);
    if (rc == 0 && !undo && s.rows && s.file)
        rc = finish_file(w->out, s.file, (const uint8_t *)w->first.ptr, w->first.len, s.last,
                         s.last_len);
    mcdc_silver_datafile_free(s.file); /* removes the file when not finished */
    if (rc < 0)
        return rc;
    if (undo) {
        for (size_t i = m0; i < end; i++)
            mcdc_silver_changes_set_marks(cs, i, w->marks[i - m0]);
        mcdc_log(MCDC_LOG_INFO, "silver", "%s: file %s is not sorted within its key range; "
                 "rewriting it from held rows", env->silver_path, t->f->path);
        return 0;
    }
    if ((rc = mcdc_silver_out_remove(w->out, t->f)) < 0)
        return rc;
    w->out->rows_read += s.counts.rows_read;
    w->out->rows_inserted += s.counts.rows_inserted;
    w->out->rows_updated += s.counts.rows_updated;
    w->out->rows_deleted += s.counts.rows_deleted;
    return 1;
}

static int rewrite_one(worker *w, const mcdc_silver_target *t)
{
    if (!w->img &&
        !(w->img = calloc(mcdc_silver_changes_schema(w->env->cs)->n_cols + 1, sizeof *w->img)))
        return mcdc_error_set(MCDC_ENOMEM, "silver: out of memory");
    int rc = t->known ? rewrite_streamed(w, t) : 0;
    if (rc == 0)
        rc = rewrite_held(w, t);
    return rc < 0 ? rc : 0;
}

/* ---- groups on threads ------------------------------------------------------------- */

typedef struct group {
    size_t          first, n;  /* targets t[first .. first+n) */
    mcdc_silver_out out;
    int             rc;
    mcdc_error      err;
} group;

typedef struct pool {
    const mcdc_silver_env    *env;
    const mcdc_silver_target *t;
    group                    *groups;
    size_t                    n_groups;
    atomic_size_t             next;
    atomic_bool               failed;
} pool;

static void *pool_run(void *arg)
{
    pool *p = arg;
    worker w;
    worker_init(&w, p->env);
    for (;;) {
        if (atomic_load(&p->failed))
            break;
        size_t g = atomic_fetch_add(&p->next, 1);
        if (g >= p->n_groups)
            break;
        group *gr = &p->groups[g];
        w.out = &gr->out;
        int rc = 0;
        for (size_t i = 0; rc == 0 && i < gr->n; i++)
            rc = rewrite_one(&w, &p->t[gr->first + i]);
        if (rc < 0) {
            gr->rc = rc;
            gr->err = *mcdc_error_last();
            atomic_store(&p->failed, true);
            break;
        }
    }
    worker_dispose(&w);
    return NULL;
}

int mcdc_silver_rewrite(const mcdc_silver_env *env, const mcdc_silver_target *t, size_t n,
                        int threads, mcdc_silver_out *out)
{
    int rc = 0;
    size_t first_known = 0;
    while (first_known < n && !t[first_known].known)
        first_known++;
    /* files without a range: here, in order */
    if (first_known) {
        worker w;
        worker_init(&w, env);
        w.out = out;
        for (size_t i = 0; rc == 0 && i < first_known; i++)
            rc = rewrite_one(&w, &t[i]);
        worker_dispose(&w);
        if (rc < 0)
            return rc;
    }
    if (first_known == n)
        return 0;
    /* groups of overlapping ranges */
    group *groups = calloc(n - first_known, sizeof *groups);
    if (!groups)
        return nomem();
    size_t n_groups = 0;
    const uint8_t *span_hi = NULL;
    size_t span_hi_len = 0;
    for (size_t i = first_known; i < n; i++) {
        if (n_groups && key_cmp(t[i].lo, t[i].lo_len, span_hi, span_hi_len) <= 0) {
            groups[n_groups - 1].n++;
        } else {
            groups[n_groups].first = i;
            groups[n_groups].n = 1;
            n_groups++;
            span_hi = NULL;
        }
        if (!span_hi || key_cmp(t[i].hi, t[i].hi_len, span_hi, span_hi_len) > 0) {
            span_hi = t[i].hi;
            span_hi_len = t[i].hi_len;
        }
    }
    pool p;
    memset(&p, 0, sizeof p);
    p.env = env;
    p.t = t;
    p.groups = groups;
    p.n_groups = n_groups;
    atomic_init(&p.next, 0);
    atomic_init(&p.failed, false);
    size_t want = threads < 1 ? 1 : (size_t)threads;
    if (want > n_groups)
        want = n_groups;
    pthread_t *tids = want > 1 ? calloc(want - 1, sizeof *tids) : NULL;
    size_t started = 0;
    for (size_t i = 0; tids && i + 1 < want; i++) {
        if (pthread_create(&tids[i], NULL, pool_run, &p) != 0)
            break; /* fewer threads: the others take the groups */
        started++;
    }
    pool_run(&p);
    for (size_t i = 0; i < started; i++)
        pthread_join(tids[i], NULL);
    free(tids);
    for (size_t g = 0; g < n_groups; g++) {
        if (rc == 0 && groups[g].rc < 0) {
            rc = mcdc_error_set(groups[g].rc, "%s", groups[g].err.message);
            if (groups[g].err.hint[0])
                mcdc_error_hint("%s", groups[g].err.hint);
        }
        if (rc == 0 && out_move(out, &groups[g].out) < 0)
            rc = MCDC_ENOMEM;
        mcdc_silver_out_dispose(&groups[g].out);
    }
    free(groups);
    return rc;
}
