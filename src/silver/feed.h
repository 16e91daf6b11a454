/*
 * silver/feed.h: the rows of a Delta scan decoded on a thread of their own and handed
 * over in batches, in scan order (feed.c). Internal to the silver layer: it takes the
 * Parquet decoding of bronze's changes, and the per-row work that needs no shared state
 * (a prep hook), off the thread that builds the change set.
 */
#ifndef MCDC_SILVER_FEED_H
#define MCDC_SILVER_FEED_H

#include "mcdc/buf.h"
#include "mcdc/delta.h"

typedef struct mcdc_silver_feed mcdc_silver_feed;

/** Work run on the reader thread for each row, in scan order, once the row is in its
 *  batch (its strings point into the batch): fill the record @p rec (the feed's rec_size
 *  bytes) and append bytes to @p extra as needed, recording offsets (the bytes move as
 *  they grow; the consumer sees them as mcdc_silver_feed_batch.extra). A negative return
 *  (with the error set) ends the feed at this row: the rows before it are handed out,
 *  then the error, as if the scan had failed there. */
typedef int (*mcdc_silver_feed_prep)(void *arg, const mcdc_value *row, void *rec,
                                     mcdc_buf *extra);

/** Work the reader thread may do while it waits for the caller to hand a batch back (both
 *  batches are full); called again while it returns true, then the reader sleeps. It must
 *  not change what the rows become. */
typedef bool (*mcdc_silver_feed_idle)(void *arg);

/** Start reading @p sc (borrowed: it must outlive the feed, and nothing else may use it
 *  until the feed is freed). @p prep (may be NULL) runs on each row with @p arg and a
 *  record of @p rec_size bytes; @p idle (may be NULL) with @p arg when the reader waits.
 *  Without a thread the feed reads (and prepares) on the caller's thread, with the same
 *  batches, and idle is never called.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_silver_feed_start(mcdc_silver_feed **out, mcdc_delta_scan *sc,
                           mcdc_silver_feed_prep prep, mcdc_silver_feed_idle idle, void *arg,
                           size_t rec_size);

/** A batch of rows: valid until the next mcdc_silver_feed_next() or the free. */
typedef struct mcdc_silver_feed_batch {
    const mcdc_value *rows;     /* n rows of n_cols values, in the scan's columns */
    size_t            n, n_cols;
    const char       *recs;     /* n records of rec_size bytes (with a prep) */
    size_t            rec_size;
    const char       *extra;    /* the bytes the prep appended */
} mcdc_silver_feed_batch;

/** The next batch, in the scan's order.
 *  @return 1 with a batch of at least one row, 0 at the end, or the error of the scan or
 *          the prep (its message on this thread). */
int mcdc_silver_feed_next(mcdc_silver_feed *f, mcdc_silver_feed_batch *out);

/** Stop the reader and free; accepts NULL. */
void mcdc_silver_feed_free(mcdc_silver_feed *f);

#endif
