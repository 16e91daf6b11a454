/*
 * reconcile/reconcile.c: compare silver with its source table (mcdc_reconcile_run): tier 1
 * per key bucket, tier 2 row by row, each differing key named.
 *
 * Steps, each reading only:
 *   1. check: the capture instance's columns and keys, silver (pinned at its latest
 *      version) holding every captured column with the same type, silver's control row;
 *   2. silver pass 1: the key of every silver row as an ordinal or key hash;
 *   3. tier 1: the source's grouped query (key_buckets), the same sums over silver's keys,
 *      buckets compared;
 *   4. tier 2: the buckets that differ plus ceil(sample x matching) others: their source
 *      rows (a keyed snapshot per bucket by ordinal, one filtered snapshot by hash) and
 *      silver rows (pass 2), sorted by key text, compared by row hash;
 *   5. in flight: the keys named, against the keys changed after silver's applied_lsn in
 *      bronze and the change table (inflight.c);
 *   6. with a facts table, the chunk checks of bronze's completed chunked snapshot (chunks.c).
 * Reconcile invariants:
 * (R1) A bucket holds the same keys on both sides: its membership is a function of the
 *      key alone (ordinal floor, or key hash modulo), computed identically by every
 *      source and here (mcdc/keyhash.h), never of a collation's order.
 * (R2) A key is named at most once, by the first rule that holds: not in silver MISSING,
 *      not in the source EXTRA, more than once in silver DUPLICATE, else DIFFERENT.
 * (R3) Nothing is written but the report table, and that only after every read.
 * (R4) A named key is IN_FLIGHT only when a change to it after silver's applied_lsn is in
 *      bronze or the change table; a bucket is in flight only when every key named in it
 *      is, so a difference no change explains stays a MISMATCH. (A bucket whose tier-1
 *      counts differed but whose rows all compared equal in tier 2 names no key: the source
 *      moved between the two reads, and it is in flight.) applied_lsn is read before
 *      silver is pinned, so it is never newer than the version compared.
 * Design: docs/decisions/0015-reconcile-buckets-by-key-hash.md and
 * 0029-reconcile-under-a-moving-source.md; anchor-features §2.8.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mcdc/delta.h"
#include "mcdc/finalize.h"
#include "mcdc/keyhash.h"
#include "mcdc/reconcile.h"
#include "reconcile/chunks.h"
#include "reconcile/inflight.h"
#include "reconcile/report.h"
#include "reconcile/silver_keys.h"
#include "mcdc/pipeline.h"
#include "mcdc/time.h"

#define FINE_BUCKETS 100000

const char *mcdc_reconcile_status_name(mcdc_reconcile_status s)
{
    switch (s) {
    case MCDC_RECONCILE_MISSING: return "MISSING";
    case MCDC_RECONCILE_EXTRA: return "EXTRA";
    case MCDC_RECONCILE_DIFFERENT: return "DIFFERENT";
    case MCDC_RECONCILE_DUPLICATE: return "DUPLICATE";
    case MCDC_RECONCILE_IN_FLIGHT: return "IN_FLIGHT";
    }
    return "?";
}

void mcdc_reconcile_result_clear(mcdc_reconcile_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_keys; i++)
        free(r->keys[i].key_json);
    free(r->keys);
    free(r->silver_lsn);
    free(r->chunk_diffs);
    memset(r, 0, sizeof *r);
}

/* One bucket of the comparison. */
typedef struct bucket {
    int64_t     fine_lo, fine_hi; /* by ordinal: the fine buckets it spans (inclusive) */
    int64_t     src_rows, sil_rows;
    mcdc_int128 src_sum, sil_sum;
    bool        differs;          /* tier 1 differs, or tier 2 named a key in it */
    bool        selected;         /* compared row by row */
    int64_t     n_named;          /* keys tier 2 named in it */
    int64_t     n_in_flight;      /* ...of which in flight */
} bucket;

/* One row of tier 2, from either side. */
typedef struct entry {
    char    *text;      /* owned key text */
    size_t   text_len;
    char    *json;      /* owned key as a JSON object */
    uint8_t  hash[MCDC_KEYHASH_ROW_LEN];
    int      side;      /* 0 source, 1 silver */
    int64_t  bucket;
} entry;

/* The state of one run. */
typedef struct run {
    const mcdc_reconcile_options *o;
    mcdc_reconcile_result        *r;
    mcdc_schema          *cap;      /* captured columns, owned */
    const char          **keys;     /* key column names (borrowed from o or src_keys) */
    size_t                n_keys;
    char                **src_keys; /* owned when read from the source */
    size_t                n_src_keys;
    int                  *key_idx;  /* positions of the keys in cap */
    const mcdc_column   **key_cols;
    const mcdc_value    **key_vals; /* scratch */
    const mcdc_column   **row_cols; /* every captured column, for the row hash */
    const mcdc_value    **row_vals; /* scratch */
    bool                  by_hash;
    int64_t               origin, width; /* by ordinal */
    int64_t               n_fine;        /* by ordinal: fine buckets */
    int32_t              *fine_to_bucket;/* by ordinal: n_fine entries */
    int64_t               n_hash;        /* by hash: buckets */
    bucket               *b;
    size_t                nb;
    mcdc_delta_snapshot  *snap;
    int64_t              *sil_keys;      /* pass 1: ordinal or hash per silver row */
    bool                 *sil_null;      /* pass 1: by ordinal, a NULL key */
    size_t                n_sil, cap_sil;
    mcdc_reconcile__keys  silk;          /* pass 1 as read (its arrays are sil_keys, sil_null) */
    entry                *e;
    size_t                ne, cap_e;
    mcdc_buf              text, scratch;
    char                **named_text;    /* key text of each key named, as r->keys */
    size_t               *named_len;
    int64_t              *named_bucket;
    char                  lsn_counts[MCDC_LSN_STRLEN]; /* max_lsn before tier 1's query */
    char                  lsn_rows[MCDC_LSN_STRLEN];   /* max_lsn before tier 2's rows */
    bool                  has_read_end;
    int64_t               read_end_us;   /* the source's clock when tier 2's read ended */
    char                 *early_lsn;     /* silver's applied_lsn read before silver was pinned */
    bool                  has_early;
} run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- step 1: checks ---------------------------------------------------------------- */

static int check_inputs(run *R)
{
    const mcdc_reconcile_options *o = R->o;
    mcdc_source *src = o->source;
    if (o->bucket_rows < 1)
        return mcdc_error_set(MCDC_EINVAL, "bucket rows %" PRId64 ": must be at least 1", o->bucket_rows);
    if (!(o->sample >= 0.0 && o->sample <= 1.0))
        return mcdc_error_set(MCDC_EINVAL, "sample %g: must be a fraction from 0 to 1", o->sample);
    int rc = src->ops->captured_columns(src, o->capture_instance, &R->cap);
    if (rc < 0)
        return rc;
    if (o->keys && o->n_keys) {
        R->keys = (const char **)calloc(o->n_keys, sizeof *R->keys);
        if (!R->keys)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (size_t i = 0; i < o->n_keys; i++)
            R->keys[i] = o->keys[i];
        R->n_keys = o->n_keys;
    } else {
        if ((rc = src->ops->key_columns(src, o->capture_instance, &R->src_keys, &R->n_src_keys)) < 0)
            return rc;
        if (R->n_src_keys == 0) {
            mcdc_error_set(MCDC_EINVAL, "capture instance %s has no unique index to compare keys by",
                           o->capture_instance);
            return mcdc_error_hint("pass --keys k1,k2");
        }
        R->keys = (const char **)calloc(R->n_src_keys, sizeof *R->keys);
        if (!R->keys)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        for (size_t i = 0; i < R->n_src_keys; i++)
            R->keys[i] = R->src_keys[i];
        R->n_keys = R->n_src_keys;
    }
    R->key_idx = calloc(R->n_keys, sizeof *R->key_idx);
    R->key_cols = calloc(R->n_keys, sizeof *R->key_cols);
    R->key_vals = calloc(R->n_keys, sizeof *R->key_vals);
    R->row_cols = calloc(R->cap->n_cols + 1, sizeof *R->row_cols);
    R->row_vals = calloc(R->cap->n_cols + 1, sizeof *R->row_vals);
    if (!R->key_idx || !R->key_cols || !R->key_vals || !R->row_cols || !R->row_vals)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < R->cap->n_cols; i++)
        R->row_cols[i] = &R->cap->cols[i];
    for (size_t i = 0; i < R->n_keys; i++) {
        int k = mcdc_schema_find(R->cap, R->keys[i]);
        if (k < 0) {
            mcdc_error_set(MCDC_EINVAL, "key column %s: capture instance %s has no such column", R->keys[i],
                           o->capture_instance);
            return mcdc_error_hint("pass --keys with captured columns, or leave it out to use the unique index");
        }
        R->key_idx[i] = k;
        R->key_cols[i] = &R->cap->cols[k];
        if (!mcdc_keyhash_type_ok(R->key_cols[i]))
            return mcdc_error_set(MCDC_EUNSUPPORTED, "key column %s: a floating-point key cannot be compared",
                                  R->keys[i]);
    }
    R->by_hash = !(R->n_keys == 1 && mcdc_keyhash_has_ordinal(R->key_cols[0]));
    if (!src->ops->key_buckets) {
        mcdc_error_set(MCDC_EUNSUPPORTED, "source %s: reconcile is not supported by this source yet",
                       src->description ? src->description : "?");
        return mcdc_error_hint("reconcile a copy on the simulator, or wait for the source's key_buckets query");
    }
    /* silver's position, read before silver is pinned: a silver apply that commits in
     * between only makes it older than the version compared, never newer (R4) */
    mcdc_control_row early;
    memset(&early, 0, sizeof early);
    if (mcdc_control_get(&early, o->control_path, o->silver_name) == 0) {
        R->has_early = true;
        if (early.applied_lsn && !(R->early_lsn = strdup(early.applied_lsn)))
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    } else {
        mcdc_error_clear();
    }
    mcdc_control_row_clear(&early);
    if (rc < 0)
        return rc;
    rc = mcdc_delta_snapshot_open(&R->snap, o->silver_path, -1);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_set(MCDC_ENOTFOUND, "silver table %s does not exist", o->silver_name);
        return mcdc_error_hint("check --silver (silver apply creates it on its first call)");
    }
    if (rc < 0)
        return rc;
    R->r->silver_version = R->snap->version;
    mcdc_schema *flat = NULL;
    if ((rc = mcdc_delta_schema_to_flat(&flat, R->snap->schema)) < 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < R->cap->n_cols; i++) {
        const mcdc_column *c = &R->cap->cols[i];
        int k = mcdc_schema_find(flat, c->name);
        const mcdc_column *s = k >= 0 ? &flat->cols[k] : NULL;
        if (!s)
            rc = mcdc_error_set(MCDC_EINVAL, "silver table %s has no column %s of capture instance %s",
                                o->silver_name, c->name, o->capture_instance);
        else if (s->type != c->type || (c->type == MCDC_TYPE_DECIMAL && s->scale != c->scale)) {
            char a[48], b[48];
            rc = mcdc_error_set(MCDC_EINVAL, "silver table %s: column %s is %s, the capture instance's is %s",
                                o->silver_name, c->name, mcdc_type_name(a, sizeof a, s),
                                mcdc_type_name(b, sizeof b, c));
        }
        if (rc < 0)
            mcdc_error_hint("check --silver and --capture-instance: they must name the same table");
    }
    mcdc_schema_free(flat);
    if (rc < 0)
        return rc;
    if ((rc = mcdc_table_check_kind(o->silver_path, o->silver_name, "silver", "--silver")) < 0)
        return rc;
    if (o->report_path && (rc = mcdc_reconcile__report_check(o->report_path, o->report_name)) < 0)
        return rc;
    mcdc_control_row row;
    memset(&row, 0, sizeof row);
    rc = mcdc_control_get(&row, o->control_path, o->silver_name);
    if (rc == MCDC_ENOTFOUND)
        mcdc_error_hint("check --control and --silver: silver apply writes silver's control row");
    if (rc < 0)
        return rc;
    const char *applied = R->has_early ? R->early_lsn : row.applied_lsn;
    if (applied && !(R->r->silver_lsn = strdup(applied)))
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_control_row_clear(&row);
    return rc;
}

/* ---- the key of a row ---------------------------------------------------------------- */

/* The ordinal or key hash of a row whose key cells are R->key_vals; *is_null for a NULL
 * ordinal key (left out by ordinal, as in the source's query). */
static int key_value(run *R, int64_t *out, bool *is_null)
{
    *is_null = false;
    if (!R->by_hash) {
        if (R->key_vals[0]->is_null) {
            *is_null = true;
            return 0;
        }
        return mcdc_keyhash_ordinal(out, R->key_cols[0], R->key_vals[0]);
    }
    mcdc_buf_clear(&R->text);
    int rc = mcdc_keyhash_text(&R->text, R->key_cols, R->key_vals, R->n_keys);
    if (rc == 0)
        rc = mcdc_keyhash_of_text(out, R->text.ptr ? R->text.ptr : "", R->text.len);
    return rc;
}

/* The bucket of an ordinal or key hash, or -1 when outside every bucket. */
static int64_t bucket_of(const run *R, int64_t k)
{
    if (R->by_hash)
        return k % R->n_hash;
    mcdc_int128 d = (mcdc_int128)k - R->origin;
    if (d < 0)
        return -1;
    mcdc_int128 f = d / R->width;
    if (f >= R->n_fine)
        return -1;
    return R->fine_to_bucket[(size_t)f];
}

/* ---- step 2: silver pass 1 ------------------------------------------------------------ */

static int silver_keys(run *R)
{
    mcdc_reconcile__keys k;
    int rc = mcdc_reconcile__silver_keys(&k, R->snap, R->keys, R->key_cols, R->n_keys, R->by_hash, R->o->threads);
    if (rc < 0)
        return rc;
    R->silk = k;
    R->sil_keys = k.k;
    R->sil_null = k.null;
    R->n_sil = k.n;
    R->cap_sil = k.n;
    R->r->silver_rows = (int64_t)R->n_sil;
    return 0;
}

/* ---- step 3: tier 1 ------------------------------------------------------------------- */

static int plan_by_hash(run *R, mcdc_key_bucket_spec *spec)
{
    int64_t n = ((int64_t)R->n_sil + R->o->bucket_rows - 1) / R->o->bucket_rows;
    if (n < 1) n = 1;
    if (n > ((int64_t)1 << 24)) n = (int64_t)1 << 24;
    R->n_hash = n;
    R->nb = (size_t)n;
    R->b = calloc(R->nb, sizeof *R->b);
    if (!R->b)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    spec->by_hash = true;
    spec->width = n;
    mcdc_key_bucket *sb = NULL;
    size_t nsb = 0;
    int rc = R->o->source->ops->key_buckets(R->o->source, R->o->capture_instance, spec, &sb, &nsb);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < nsb; i++) {
        if (sb[i].bucket < 0 || sb[i].bucket >= n) {
            free(sb);
            return mcdc_error_set(MCDC_ESOURCE, "the source returned bucket %" PRId64 " of %" PRId64, sb[i].bucket, n);
        }
        R->b[sb[i].bucket].src_rows += sb[i].n_rows;
        R->b[sb[i].bucket].src_sum += sb[i].key_sum;
        R->r->source_rows += sb[i].n_rows;
    }
    free(sb);
    int64_t *rows = calloc((size_t)n, sizeof *rows);
    mcdc_int128 *sums = calloc((size_t)n, sizeof *sums);
    if (!rows || !sums) {
        free(rows);
        free(sums);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    mcdc_reconcile__hash_sums(&R->silk, n, rows, sums);
    for (int64_t i = 0; i < n; i++) {
        R->b[i].sil_rows = rows[i];
        R->b[i].sil_sum = sums[i];
    }
    free(rows);
    free(sums);
    return 0;
}

static int plan_by_ordinal(run *R, mcdc_key_bucket_spec *spec)
{
    mcdc_source *src = R->o->source;
    mcdc_key_bucket *sb = NULL;
    size_t nsb = 0;
    spec->width = 0;
    int rc = src->ops->key_buckets(src, R->o->capture_instance, spec, &sb, &nsb);
    if (rc < 0)
        return rc;
    bool have = false;
    int64_t lo = 0, hi = 0;
    if (nsb && sb[0].n_rows) {
        have = true;
        lo = sb[0].key_min;
        hi = sb[0].key_max;
    }
    free(sb);
    sb = NULL;
    int64_t slo, shi;
    if (mcdc_reconcile__key_range(&R->silk, &slo, &shi)) {
        if (!have || slo < lo) lo = slo;
        if (!have || shi > hi) hi = shi;
        have = true;
    }
    if (!have)
        return 0; /* both sides empty (or NULL keys only): no bucket */
    mcdc_int128 span = (mcdc_int128)hi - lo + 1;
    R->origin = lo;
    R->width = (int64_t)((span + FINE_BUCKETS - 1) / FINE_BUCKETS);
    R->n_fine = (int64_t)((span + R->width - 1) / R->width);
    spec->origin = R->origin;
    spec->width = R->width;
    if ((rc = src->ops->key_buckets(src, R->o->capture_instance, spec, &sb, &nsb)) < 0)
        return rc;
    bucket *fine = calloc((size_t)R->n_fine, sizeof *fine);
    R->fine_to_bucket = calloc((size_t)R->n_fine, sizeof *R->fine_to_bucket);
    R->b = calloc((size_t)R->n_fine, sizeof *R->b);
    if (!fine || !R->fine_to_bucket || !R->b) {
        free(fine);
        free(sb);
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nsb; i++) {
        /* keys the source gained below or past the range since the first query fall in the
         * first or last bucket, whose tier-2 reads are open on that side */
        int64_t f = sb[i].bucket < 0 ? 0 : sb[i].bucket >= R->n_fine ? R->n_fine - 1 : sb[i].bucket;
        fine[f].src_rows += sb[i].n_rows;
        fine[f].src_sum += sb[i].key_sum;
        R->r->source_rows += sb[i].n_rows;
    }
    free(sb);
    int64_t *frows = rc == 0 ? calloc((size_t)R->n_fine, sizeof *frows) : NULL;
    mcdc_int128 *fsums = rc == 0 ? calloc((size_t)R->n_fine, sizeof *fsums) : NULL;
    if (rc == 0 && (!frows || !fsums))
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc == 0)
        rc = mcdc_reconcile__fine_sums(&R->silk, R->origin, R->width, R->n_fine, frows, fsums);
    if (rc == 0) {
        for (int64_t f = 0; f < R->n_fine; f++) {
            fine[f].sil_rows = frows[f];
            fine[f].sil_sum = fsums[f];
        }
    }
    free(frows);
    free(fsums);
    /* merge fine buckets until one holds bucket_rows rows of the larger side */
    bucket cur = { 0 };
    cur.fine_lo = 0;
    for (int64_t f = 0; rc == 0 && f < R->n_fine; f++) {
        cur.src_rows += fine[f].src_rows;
        cur.sil_rows += fine[f].sil_rows;
        cur.src_sum += fine[f].src_sum;
        cur.sil_sum += fine[f].sil_sum;
        R->fine_to_bucket[f] = (int32_t)R->nb;
        int64_t big = cur.src_rows > cur.sil_rows ? cur.src_rows : cur.sil_rows;
        if (big >= R->o->bucket_rows || f == R->n_fine - 1) {
            cur.fine_hi = f;
            R->b[R->nb++] = cur;
            memset(&cur, 0, sizeof cur);
            cur.fine_lo = f + 1;
        }
    }
    free(fine);
    return rc;
}

/* ---- step 4: tier 2 ------------------------------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int select_buckets(run *R)
{
    size_t n_match = 0;
    for (size_t i = 0; i < R->nb; i++) {
        bucket *b = &R->b[i];
        b->differs = b->src_rows != b->sil_rows || b->src_sum != b->sil_sum;
        b->selected = b->differs;
        n_match += !b->differs;
    }
    size_t k = (size_t)ceil(R->o->sample * (double)n_match);
    if (k == 0)
        return 0;
    size_t *m = malloc(n_match * sizeof *m), j = 0;
    if (!m)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < R->nb; i++)
        if (!R->b[i].differs)
            m[j++] = i;
    uint64_t seed = R->o->has_seed ? R->o->seed : (uint64_t)time(NULL) ^ (uint64_t)clock();
    for (size_t i = 0; i < k && i < n_match; i++) {
        size_t r = i + (size_t)(splitmix(&seed) % (n_match - i));
        size_t t = m[i];
        m[i] = m[r];
        m[r] = t;
        R->b[m[i]].selected = true;
    }
    free(m);
    return 0;
}

/* Record the row whose captured cells are @p values as a tier-2 entry of @p side. */
static int add_entry(run *R, const mcdc_value *values, int side, int64_t bkt)
{
    for (size_t i = 0; i < R->n_keys; i++)
        R->key_vals[i] = &values[R->key_idx[i]];
    for (size_t i = 0; i < R->cap->n_cols; i++)
        R->row_vals[i] = &values[i];
    if (R->ne == R->cap_e) {
        size_t nc = R->cap_e ? R->cap_e * 2 : 1024;
        entry *ne = realloc(R->e, nc * sizeof *ne);
        if (!ne)
            return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        R->e = ne;
        R->cap_e = nc;
    }
    entry *e = &R->e[R->ne];
    memset(e, 0, sizeof *e);
    e->side = side;
    e->bucket = bkt;
    mcdc_buf_clear(&R->text);
    int rc = mcdc_keyhash_text(&R->text, R->key_cols, R->key_vals, R->n_keys);
    if (rc == 0)
        rc = mcdc_keyhash_row(e->hash, &R->scratch, R->row_cols, R->row_vals, R->cap->n_cols);
    if (rc < 0)
        return rc;
    e->text_len = R->text.len;
    e->text = mcdc_buf_detach(&R->text);
    if (!e->text && !(e->text = strdup("")))
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    mcdc_buf j = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    rc = mcdc_buf_putc(&j, '{');
    for (size_t i = 0; rc == 0 && i < R->n_keys; i++) {
        if (i) mcdc_buf_putc(&j, ',');
        rc = mcdc_json_quote(&j, R->key_cols[i]->name, strlen(R->key_cols[i]->name));
        if (rc == 0) rc = mcdc_buf_putc(&j, ':');
        if (rc == 0) rc = mcdc_value_to_json(&j, R->key_cols[i], R->key_vals[i]);
    }
    if (rc == 0) rc = mcdc_buf_putc(&j, '}');
    if (rc < 0) {
        mcdc_buf_dispose(&j);
        free(e->text);
        return rc;
    }
    e->json = mcdc_buf_detach(&j);
    R->ne++;
    return 0;
}

typedef struct src_read {
    run    *R;
    int64_t bucket; /* by ordinal: the bucket read; by hash: -1 (filter per row) */
} src_read;

static int on_source_row(const mcdc_value *values, void *payload)
{
    src_read *s = payload;
    run *R = s->R;
    int64_t bkt = s->bucket;
    if (bkt >= 0 && values[R->key_idx[0]].is_null)
        return 0; /* by ordinal a NULL key is in no bucket, as on silver's side */
    if (bkt < 0) {
        int64_t h = 0;
        bool is_null;
        for (size_t i = 0; i < R->n_keys; i++)
            R->key_vals[i] = &values[R->key_idx[i]];
        int rc = key_value(R, &h, &is_null);
        if (rc < 0)
            return rc;
        bkt = bucket_of(R, h);
        if (!R->b[bkt].selected)
            return 0;
    }
    return add_entry(R, values, 0, bkt);
}

static int read_source_rows(run *R)
{
    mcdc_source *src = R->o->source;
    src_read s = { R, -1 };
    if (R->by_hash) {
        for (size_t i = 0; i < R->nb; i++)
            if (R->b[i].selected)
                return src->ops->snapshot(src, R->o->capture_instance, NULL, NULL, on_source_row, &s);
        return 0;
    }
    for (size_t i = 0; i < R->nb; i++) {
        if (!R->b[i].selected)
            continue;
        mcdc_value lo = { 0 }, hi = { 0 };
        lo.v.i = (int64_t)((mcdc_int128)R->origin + (mcdc_int128)R->b[i].fine_lo * R->width);
        hi.v.i = (int64_t)((mcdc_int128)R->origin + (mcdc_int128)(R->b[i].fine_hi + 1) * R->width);
        s.bucket = (int64_t)i;
        /* the first bucket is open below and the last above, so no bound leaves the type */
        int rc = src->ops->snapshot(src, R->o->capture_instance, i == 0 ? NULL : &lo,
                                    i == R->nb - 1 ? NULL : &hi, on_source_row, &s);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int read_silver_rows(run *R)
{
    const char **names = calloc(R->cap->n_cols + 1, sizeof *names);
    if (!names)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; i < R->cap->n_cols; i++)
        names[i] = R->cap->cols[i].name;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = names;
    so.n_columns = R->cap->n_cols;
    mcdc_delta_scan *sc = NULL;
    int rc = mcdc_delta_scan_open(&sc, R->snap, &so);
    const mcdc_value *row;
    size_t n = 0;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        rc = 0;
        size_t i = n++;
        if (i >= R->n_sil) {
            rc = mcdc_error_set(MCDC_ECONFLICT, "silver table %s changed while it was read", R->o->silver_name);
            break;
        }
        if (!R->by_hash && R->sil_null[i])
            continue;
        int64_t bkt = bucket_of(R, R->sil_keys[i]);
        if (bkt >= 0 && R->b[bkt].selected)
            rc = add_entry(R, row, 1, bkt);
    }
    mcdc_delta_scan_free(sc);
    free(names);
    return rc < 0 ? rc : 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    size_t n = x->text_len < y->text_len ? x->text_len : y->text_len;
    int c = memcmp(x->text, y->text, n);
    if (c)
        return c;
    if (x->text_len != y->text_len)
        return x->text_len < y->text_len ? -1 : 1;
    return x->side - y->side;
}

static int compare_rows(run *R)
{
    if (R->ne)
        qsort(R->e, R->ne, sizeof *R->e, cmp_entry);
    mcdc_reconcile_result *r = R->r;
    for (size_t i = 0; i < R->ne;) {
        size_t j = i;
        while (j < R->ne && R->e[j].text_len == R->e[i].text_len &&
               memcmp(R->e[j].text, R->e[i].text, R->e[i].text_len) == 0)
            j++;
        size_t n_src = 0, n_sil = 0;
        const entry *s = NULL, *k = NULL;
        for (size_t x = i; x < j; x++) {
            if (R->e[x].side == 0) { n_src++; s = &R->e[x]; }
            else { n_sil++; if (!k) k = &R->e[x]; }
        }
        int st = 0;
        if (n_sil == 0) st = MCDC_RECONCILE_MISSING;
        else if (n_src == 0) st = MCDC_RECONCILE_EXTRA;
        else if (n_sil > 1) st = MCDC_RECONCILE_DUPLICATE;
        else if (memcmp(s->hash, k->hash, sizeof s->hash) != 0) st = MCDC_RECONCILE_DIFFERENT;
        if (st) {
            mcdc_reconcile_key *nk = realloc(r->keys, (r->n_keys + 1) * sizeof *nk);
            if (nk) r->keys = nk;
            char **nt = realloc(R->named_text, (r->n_keys + 1) * sizeof *nt);
            if (nt) R->named_text = nt;
            size_t *nl = realloc(R->named_len, (r->n_keys + 1) * sizeof *nl);
            if (nl) R->named_len = nl;
            int64_t *nb = realloc(R->named_bucket, (r->n_keys + 1) * sizeof *nb);
            if (nb) R->named_bucket = nb;
            if (!nk || !nt || !nl || !nb)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            const entry *e = s ? s : k;
            R->named_text[r->n_keys] = R->e[e - R->e].text;
            R->named_len[r->n_keys] = e->text_len;
            R->named_bucket[r->n_keys] = e->bucket;
            R->e[e - R->e].text = NULL;
            nk[r->n_keys].key_json = R->e[e - R->e].json;
            R->e[e - R->e].json = NULL;
            nk[r->n_keys].status = (mcdc_reconcile_status)st;
            r->n_keys++;
            R->b[e->bucket].differs = true;
            R->b[e->bucket].n_named++;
        }
        i = j;
    }
    return 0;
}

static int read_max_lsn(run *R, char out[MCDC_LSN_STRLEN])
{
    mcdc_lsn l;
    int rc = R->o->source->ops->max_lsn(R->o->source, &l);
    if (rc == 0)
        mcdc_lsn_format(out, &l);
    return rc;
}

/* The JSON key {"k": ordinal} of an ordinal bucket bound. */
static char *bound_json(const run *R, int64_t v)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    mcdc_value x = { 0 };
    x.v.i = v;
    mcdc_buf_putc(&b, '{');
    mcdc_json_quote(&b, R->key_cols[0]->name, strlen(R->key_cols[0]->name));
    mcdc_buf_putc(&b, ':');
    mcdc_value_to_json(&b, R->key_cols[0], &x);
    if (mcdc_buf_putc(&b, '}') < 0) {
        mcdc_buf_dispose(&b);
        return NULL;
    }
    return mcdc_buf_detach(&b);
}

/* One row per bucket and per key named, appended to the report table. */
static int write_report(run *R, int64_t run_at_us)
{
    mcdc_reconcile_result *r = R->r;
    size_t n = R->nb + r->n_keys + r->n_chunk_diffs;
    mcdc_reconcile__row *rows = calloc(n + 1, sizeof *rows);
    char **owned = calloc(3 * n + 1, sizeof *owned);
    size_t n_owned = 0;
    int rc = 0;
    if (!rows || !owned)
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < R->nb; i++) {
        const bucket *b = &R->b[i];
        mcdc_reconcile__row *w = &rows[i];
        w->source_lsn = R->lsn_counts;
        w->has_counts = true;
        w->source_rows = b->src_rows;
        w->silver_rows = b->sil_rows;
        w->status = !b->differs ? "MATCH" : b->n_in_flight == b->n_named ? "IN_FLIGHT" : "MISMATCH";
        w->has_hashed = true;
        w->hashed = b->selected;
        char *d = NULL;
        if (R->by_hash) {
            mcdc_buf j = MCDC_BUF_INIT(1 << 12);
            mcdc_buf_printf(&j, "{\"hash_bucket\":%zu,\"hash_buckets\":%lld}", i, (long long)R->n_hash);
            d = owned[n_owned++] = mcdc_buf_detach(&j);
            if (!d) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        } else {
            w->has_sums = true;
            w->source_sum = b->src_sum;
            w->silver_sum = b->sil_sum;
            if (i > 0) {
                w->bucket_lo = owned[n_owned++] = bound_json(R, (int64_t)((mcdc_int128)R->origin + (mcdc_int128)b->fine_lo * R->width));
                if (!w->bucket_lo) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            }
            if (i + 1 < R->nb) {
                w->bucket_hi = owned[n_owned++] = bound_json(R, (int64_t)((mcdc_int128)R->origin + (mcdc_int128)(b->fine_hi + 1) * R->width));
                if (!w->bucket_hi) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            }
        }
        w->detail = d;
    }
    for (size_t i = 0; rc == 0 && i < r->n_keys; i++) {
        mcdc_reconcile__row *w = &rows[R->nb + i];
        w->source_lsn = R->lsn_rows;
        w->key = r->keys[i].key_json;
        w->failure_type = mcdc_reconcile_status_name(r->keys[i].status);
    }
    for (size_t i = 0; rc == 0 && i < r->n_chunk_diffs; i++) { /* a chunk row: CHUNK_ROWS */
        const mcdc_reconcile_chunk *c = &r->chunk_diffs[i];
        mcdc_reconcile__row *w = &rows[R->nb + r->n_keys + i];
        mcdc_buf j = MCDC_BUF_INIT(1 << 12);
        mcdc_buf_printf(&j, "{\"snapshot\":\"%s\",\"chunk\":%lld,\"facts_rows\":", r->chunk_snapshot, (long long)c->chunk);
        mcdc_buf_printf(&j, c->facts_rows < 0 ? "null" : "%lld", (long long)c->facts_rows);
        mcdc_buf_printf(&j, ",\"bronze_rows\":%lld}", (long long)c->bronze_rows);
        w->detail = owned[n_owned++] = mcdc_buf_detach(&j);
        if (!w->detail) rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
        w->status = "MISMATCH";
        w->failure_type = "CHUNK_ROWS";
    }
    if (rc == 0)
        rc = mcdc_reconcile__report_append(R->o->report_path, r->run_id, run_at_us, R->o->silver_name,
                                           r->silver_version, r->silver_lsn, rows, n);
    for (size_t i = 0; owned && i < n_owned; i++)
        free(owned[i]);
    free(owned);
    free(rows);
    return rc;
}

/* Mark IN_FLIGHT the keys named (not yet so) with a change after @p after in bronze or the
 * change table up to @p upto; *left gets the keys still not in flight. */
static int mark_in_flight(run *R, const mcdc_lsn *after, const mcdc_lsn *upto, size_t *left)
{
    mcdc_reconcile_result *r = R->r;
    mcdc_reconcile__changed *c = NULL;
    int rc = mcdc_reconcile__changed_keys(&c, R->o->bronze_path, R->o->source, R->o->capture_instance, after, upto,
                                          R->keys, R->n_keys, R->cap);
    if (rc < 0)
        return rc;
    *left = 0;
    for (size_t i = 0; i < r->n_keys; i++) {
        if (r->keys[i].status == MCDC_RECONCILE_IN_FLIGHT)
            continue;
        if (mcdc_reconcile__changed_has(c, R->named_text[i], R->named_len[i])) {
            r->keys[i].status = MCDC_RECONCILE_IN_FLIGHT;
            R->b[R->named_bucket[i]].n_in_flight++;
        } else {
            (*left)++;
        }
    }
    mcdc_reconcile__changed_free(c);
    return 0;
}

/* Whether capture has passed the source's clock at the end of tier 2's read: the commit
 * time of max_lsn is at or after it (*upto gets that max_lsn). */
static int capture_passed(run *R, mcdc_lsn *upto, bool *passed)
{
    mcdc_source *src = R->o->source;
    *passed = false;
    int rc = src->ops->max_lsn(src, upto);
    if (rc < 0)
        return rc;
    int64_t ts;
    rc = src->ops->lsn_to_commit_ts(src, upto, &ts);
    if (rc == MCDC_ENOTFOUND) {
        mcdc_error_clear();
        return 0;
    }
    if (rc == 0)
        *passed = ts >= R->read_end_us;
    return rc;
}

/* Re-check the keys named: one changed after silver's applied_lsn, in bronze or in the
 * change table up to max_lsn read now (after the source), is IN_FLIGHT. With a settle
 * time, keys still unexplained are checked once more after capture has passed the time of
 * the source read (or the settle time is up): a commit the read saw but capture had not
 * harvested yet is then in the change table. */
static int recheck_in_flight(run *R)
{
    mcdc_reconcile_result *r = R->r;
    if (!R->o->bronze_path || !r->silver_lsn || r->n_keys == 0)
        return 0;
    mcdc_lsn after, upto;
    mcdc_source *src = R->o->source;
    int rc = mcdc_lsn_parse(&after, r->silver_lsn);
    if (rc < 0)
        return mcdc_error_set(MCDC_ECORRUPT, "silver %s: applied_lsn '%s' in the control table is not an LSN",
                              R->o->silver_name, r->silver_lsn);
    if ((rc = src->ops->max_lsn(src, &upto)) < 0)
        return rc;
    size_t left;
    if ((rc = mark_in_flight(R, &after, &upto, &left)) < 0 || left == 0 || R->o->settle_us <= 0 || !R->has_read_end)
        return rc;
    double deadline = now_s() + (double)R->o->settle_us / 1e6;
    mcdc_lsn seen = upto;
    bool passed = false;
    while ((rc = capture_passed(R, &upto, &passed)) == 0 && !passed && now_s() < deadline) {
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (rc < 0 || mcdc_lsn_cmp(&upto, &seen) <= 0)
        return rc;
    return mark_in_flight(R, &after, &upto, &left);
}

int mcdc_reconcile_run(const mcdc_reconcile_options *opts, mcdc_reconcile_result *out)
{
    memset(out, 0, sizeof *out);
    if (!opts || !opts->source || !opts->capture_instance || !opts->silver_path || !opts->silver_name ||
        !opts->control_path)
        return mcdc_error_set(MCDC_EINVAL, "reconcile: source, capture instance, silver and control are required");
    double t0 = now_s();
    int64_t run_at_us = mcdc_time_now_us();
    run R;
    memset(&R, 0, sizeof R);
    R.o = opts;
    R.r = out;
    R.text = (mcdc_buf)MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    R.scratch = (mcdc_buf)MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    mcdc_key_bucket_spec spec = { 1, NULL, 0, false, 0, 0 };
    int rc = check_inputs(&R);
    if (rc == 0)
        rc = silver_keys(&R);
    if (rc == 0)
        rc = read_max_lsn(&R, R.lsn_counts);
    if (rc == 0) {
        spec.keys = R.keys;
        spec.n_keys = R.n_keys;
        rc = R.by_hash ? plan_by_hash(&R, &spec) : plan_by_ordinal(&R, &spec);
    }
    if (rc == 0)
        rc = select_buckets(&R);
    if (rc == 0)
        rc = read_max_lsn(&R, R.lsn_rows);
    if (rc == 0)
        rc = read_source_rows(&R);
    if (rc == 0 && opts->settle_us > 0 && opts->source->ops->server_now) {
        if (opts->source->ops->server_now(opts->source, &R.read_end_us) == 0)
            R.has_read_end = true;
        else
            mcdc_error_clear(); /* no clock: no second check */
    }
    if (rc == 0)
        rc = read_silver_rows(&R);
    if (rc == 0)
        rc = compare_rows(&R);
    if (rc == 0)
        rc = recheck_in_flight(&R);
    if (rc == 0 && opts->facts_path && opts->bronze_path)
        rc = mcdc_reconcile__check_chunks(out, opts->facts_path, opts->bronze_name ? opts->bronze_name : opts->bronze_path,
                                          opts->bronze_path);
    if (rc == 0) {
        out->by_hash = R.by_hash;
        out->buckets = (int64_t)R.nb;
        for (size_t i = 0; i < R.nb; i++) {
            const bucket *b = &R.b[i];
            out->hashed += b->selected;
            if (!b->differs)
                out->matched++;
            else if (b->n_in_flight == b->n_named)
                out->in_flight++; /* every key named in flight; none named: the rows compared equal */
            else
                out->mismatched++;
        }
        out->seconds = now_s() - t0;
        mcdc_delta_uuid(out->run_id);
        if (opts->report_path)
            rc = write_report(&R, run_at_us);
    }
    for (size_t i = 0; i < R.ne; i++) {
        free(R.e[i].text);
        free(R.e[i].json);
    }
    free(R.e);
    for (size_t i = 0; R.named_text && i < out->n_keys; i++)
        free(R.named_text[i]);
    free(R.named_text);
    free(R.named_len);
    free(R.named_bucket);
    free(R.early_lsn);
    free(R.b);
    free(R.fine_to_bucket);
    free(R.sil_keys);
    free(R.sil_null);
    mcdc_delta_snapshot_free(R.snap);
    for (size_t i = 0; i < R.n_src_keys; i++)
        free(R.src_keys[i]);
    free(R.src_keys);
    free(R.keys);
    free(R.key_idx);
    free(R.key_cols);
    free(R.key_vals);
    free(R.row_cols);
    free(R.row_vals);
    mcdc_schema_free(R.cap);
    mcdc_buf_dispose(&R.text);
    mcdc_buf_dispose(&R.scratch);
    if (rc < 0)
        mcdc_reconcile_result_clear(out);
    return rc < 0 ? rc : 0;
}
