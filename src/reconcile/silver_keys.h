/*
 * reconcile/silver_keys.h: silver's side of tier 1 (internal to reconcile and its bench):
 * the ordinal or key hash of every silver row, and the per-bucket sums over them. See
 * silver_keys.c.
 */
#ifndef MCDC_RECONCILE_SILVER_KEYS_H
#define MCDC_RECONCILE_SILVER_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/delta.h"
#include "mcdc/value.h"

/* One ordinal or key hash per silver row, in the Delta scan's order (files in path order,
 * rows in file order), so a later scan of the same snapshot meets row i at index i. */
typedef struct mcdc_reconcile__keys {
    int64_t *k;     /* ordinal (by ordinal) or key hash (by hash) */
    bool    *null;  /* by ordinal: the key is NULL (k is 0) */
    size_t   n;
    int      threads_used; /* files read at once (1: the Delta scan) */
    bool     range_known;  /* lo, hi and has_range were computed while reading */
    bool     has_range;    /* a non-NULL key exists */
    int64_t  lo, hi;       /* the smallest and largest non-NULL key */
} mcdc_reconcile__keys;

/* Read the keys of every row of @p snap: columns @p names, of types @p cols. With
 * @p threads > 1 (0: one per CPU, at most 8) files are read at once when that reads what
 * the Delta scan would (no deletion vectors, no column mapping, keys not partition
 * columns, each file's key columns of the table's types); else by the Delta scan. */
int mcdc_reconcile__silver_keys(mcdc_reconcile__keys *out, const mcdc_delta_snapshot *snap,
                                const char *const *names, const mcdc_column *const *cols, size_t n_keys,
                                bool by_hash, int threads);
void mcdc_reconcile__keys_clear(mcdc_reconcile__keys *k);

/* The smallest and largest non-NULL ordinal; false when there is none. */
bool mcdc_reconcile__key_range(const mcdc_reconcile__keys *k, int64_t *lo, int64_t *hi);

/* By ordinal: rows and ordinal sums per fine bucket floor((k - origin) / width) into
 * rows[0..n_fine) and sums[0..n_fine) (added to; NULL keys left out), on several threads for
 * many keys. Every key must lie in [origin, origin + n_fine * width). */
int mcdc_reconcile__fine_sums(const mcdc_reconcile__keys *k, int64_t origin, int64_t width, int64_t n_fine,
                              int64_t *rows, mcdc_int128 *sums);

/* By hash: rows and hash sums per bucket hash % n_buckets (added to). */
void mcdc_reconcile__hash_sums(const mcdc_reconcile__keys *k, int64_t n_buckets, int64_t *rows, mcdc_int128 *sums);

#endif
