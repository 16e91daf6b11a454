/*
 * silver/ranges.h: deletes of keys missing from a chunk read by key range (rules W2 and W3
 * in mcdc/silver.h), for an open chunked snapshot's waves and a partial backfill's chunks
 * (ranges.c). Internal to the silver layer.
 *
 * A chunk [lo, hi) is given by JSON key values in the source's key order (its unique
 * index's columns, as the snapshot_plan row and a wave's userMetadata name them). Silver
 * compares its keys with the bounds in that order, column by column, with the encoding of
 * mcdc_silver_key_encode(): exact for the types whose order does not depend on the source
 * (integers, bit, decimals, floats, dates, times and timestamps). A character or binary
 * column is compared as the source orders it (mcdc/key_order.h: the simulator's collation,
 * a uniqueidentifier's byte groups, bytes) when the plan recorded that order (the
 * source's key_orders); otherwise such keys are left alone here (mcdc_silver__keyorder
 * says why): a SQL Server character key's order is its collation's.
 */
#ifndef MCDC_SILVER_RANGES_H
#define MCDC_SILVER_RANGES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/delta.h"
#include "mcdc/lsn.h"
#include "mcdc/silver.h"

/* The source's key columns mapped to silver's and bronze's. */
typedef struct mcdc_silver_keyorder {
    size_t n;
    int   *s_col;   /* silver column of the i-th key column in the source's order */
    int   *b_col;   /* its bronze column */
    size_t *perm;   /* perm[i]: the source-order position of silver's i-th key (--keys) */
    int    *ord;    /* mcdc_key_order of each, as the source said (value when it did not) */
} mcdc_silver_keyorder;

/* A chunk read at stamp L: [lo, hi) in the key order's encoding. */
typedef struct mcdc_silver_kchunk {
    bool     lo_open, hi_open;
    uint8_t *lo, *hi;      /* owned */
    size_t   lo_len, hi_len;
    bool     has_stamp;    /* its L is known (otherwise it is left alone) */
    mcdc_lsn stamp;
} mcdc_silver_kchunk;

/* Map the source's key columns @p names (a JSON array of names in index order; NULL or
 * not an array: silver's own key, when it has one column) to silver's (@p keys, any order)
 * and bronze's columns, with the source's order of each (@p orders: a JSON array of
 * mcdc_key_order names, as the plan recorded them; NULL: unknown). *ok false, with *why,
 * when bounds cannot be compared with silver's keys: another set of columns than silver's
 * key, or a character or binary column whose order the source did not tell.
 * @return 0; MCDC_ENOMEM. */
int mcdc_silver__keyorder(mcdc_silver_keyorder *out, bool *ok, const char **why,
                          const json_t *names, const json_t *orders, const char *const *keys,
                          size_t n_keys, const mcdc_schema *silver, const mcdc_schema *bronze);
void mcdc_silver__keyorder_clear(mcdc_silver_keyorder *k);

/* Set @p c's bounds from JSON keys @p lo and @p hi (null: open; a scalar for one column,
 * a list for several). @return 0; MCDC_ECORRUPT when a bound does not fit the key's types;
 * MCDC_ENOMEM. */
int mcdc_silver__kchunk_set(mcdc_silver_kchunk *c, const mcdc_silver_keyorder *k,
                            const mcdc_schema *silver, const json_t *lo, const json_t *hi);
void mcdc_silver__kchunks_free(mcdc_silver_kchunk *c, size_t n);

/* The range deletes of @p n disjoint chunks (those with a stamp): every key silver holds
 * (one read of its key columns and _start_lsn) inside a chunk stamped L whose silver image
 * is older than L and that @p cs holds no image of at or above L goes into @p cs as a
 * delete at L (operation 1, no command id or seqval, capture instance @p ci). Reorders
 * @p chunks. *n_deleted: the deletes added. @return 0; MCDC_ENOMEM; scan and change-set
 * codes. */
int mcdc_silver__chunk_deletes(const mcdc_delta_snapshot *silver, const mcdc_schema *silver_flat,
                               const mcdc_schema *bronze_flat, mcdc_silver_changes *cs,
                               const mcdc_silver_keyorder *k, mcdc_silver_kchunk *chunks,
                               size_t n, const char *ci, size_t *n_deleted);

#endif
