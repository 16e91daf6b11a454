/*
 * silver/feed.h: the rows of a Delta scan decoded on a thread of their own and handed
 * over in batches, in scan order (feed.c). Internal to the silver layer: it takes the
 * Parquet decoding of bronze's changes off the thread that builds the change set.
 */
#ifndef MCDC_SILVER_FEED_H
#define MCDC_SILVER_FEED_H

#include "mcdc/delta.h"

typedef struct mcdc_silver_feed mcdc_silver_feed;

/** Start reading @p sc (borrowed: it must outlive the feed, and nothing else may use it
 *  until the feed is freed). Without a thread the feed reads on the caller's thread.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_silver_feed_start(mcdc_silver_feed **out, mcdc_delta_scan *sc);

/** The next row, in the scan's order and columns; valid until the next call.
 *  @return 1 with a row, 0 at the end, or the scan's error (its message on this thread). */
int mcdc_silver_feed_next(mcdc_silver_feed *f, const mcdc_value **row);

/** Stop the reader and free; accepts NULL. */
void mcdc_silver_feed_free(mcdc_silver_feed *f);

#endif
