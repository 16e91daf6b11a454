/*
 * silver/changes.h: the change set's add split in two (changes.c), so that a reader
 * thread can do the per-row work that needs no change-set state while the owner thread
 * inserts. Internal to the silver layer.
 *
 * mcdc_silver_changes_add(cs, row) is exactly prepare then add_prepared. prepare only
 * reads what mcdc_silver_changes_new() fixed (schemas, keys, options), so it may run on
 * another thread while the owner calls add_prepared, provided the rows are then added in
 * the order they were offered (the result must not depend on the timing). A row that
 * prepare rejects fails the apply at that row, with the message add would give.
 * prefault lets the reader thread, while it waits, fault in the memory the owner's next
 * images go to (fresh memory is costly on some virtual machines).
 */
#ifndef MCDC_SILVER_CHANGES_H
#define MCDC_SILVER_CHANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/silver.h"

/* What ranks a row among the rows of its key (rule S1). */
typedef struct mcdc_silver_rank {
    mcdc_lsn lsn;            /* _start_lsn */
    mcdc_lsn seqval;         /* valid when has_seqval */
    int32_t  command_id;     /* valid when has_command_id */
    bool     has_seqval;
    bool     has_command_id;
    uint8_t  op;             /* 0-4 */
} mcdc_silver_rank;

/* A bronze row prepared for mcdc_silver_changes_add_prepared(). */
typedef struct mcdc_silver_prepared {
    bool             take;    /* false: the options skip the row (only counted) */
    mcdc_silver_rank rank;
    uint64_t         hash;    /* of the encoded key */
    uint64_t         p0, p1;  /* the key's first 16 bytes, big-endian, zero-padded */
    size_t           key_off; /* the encoded key: at this offset of the bytes appended to */
    size_t           key_len;
    size_t           size;    /* bytes of the row's image */
    bool             wide;    /* the image needs its wide form (changes.c) */
} mcdc_silver_prepared;

/** The longest encoded key a row may have (a row with a longer one is refused). */
#define MCDC_SILVER_KEY_MAX ((size_t)1 << 20)

/** Prepare bronze row @p row (bronze's order): check it, parse its metadata, decide
 *  whether the options take it, and append its encoded key to @p keys (when taken).
 *  Thread-safe against the owner's calls (see above).
 *  @return 0; the errors of mcdc_silver_changes_add() for a malformed row or one of a
 *          capture instance not allowed; MCDC_ENOMEM. */
int mcdc_silver_changes_prepare(const mcdc_silver_changes *cs, const mcdc_value *row,
                                mcdc_silver_prepared *p, mcdc_buf *keys);

/** Add row @p row prepared as @p p, whose encoded key is @p key (p->key_len bytes; NULL when
 *  the row is not taken); as
 *  mcdc_silver_changes_add() from there. @return 0; MCDC_ENOMEM past the cap. */
int mcdc_silver_changes_add_prepared(mcdc_silver_changes *cs, const mcdc_value *row,
                                     const mcdc_silver_prepared *p, const uint8_t *key);

/** Fetch the index slot of a key with hash @p hash into the cache ahead of its add (a
 *  hint; any hash is fine). */
void mcdc_silver_changes_prefetch(const mcdc_silver_changes *cs, uint64_t hash);

/** Fault in memory for the change set's next image chunk ahead of its use, a huge page
 *  per call, so that a thread with time to spare (the bronze reader waiting for the
 *  owner) pays for fresh memory instead of the owner. Only once the change set is large
 *  (its chunks at their largest) and the cap leaves room: at most one chunk (8 MiB) is
 *  held ahead, dropped by the sort. Thread-safe against the owner's calls.
 *  @return true when it did some work (call again), false when nothing is wanted now. */
bool mcdc_silver_changes_prefault(mcdc_silver_changes *cs);

#endif
