/*
 * reconcile/inflight.h: the keys changed after silver's position, internal to reconcile.
 * See inflight.c.
 */
#ifndef MCDC_RECONCILE_INFLIGHT_H
#define MCDC_RECONCILE_INFLIGHT_H

#include <stdbool.h>
#include <stddef.h>

#include "mcdc/lsn.h"
#include "mcdc/source.h"
#include "mcdc/value.h"

typedef struct mcdc_reconcile__changed mcdc_reconcile__changed;

/** The key texts (mcdc/keyhash.h) of every change after @p after: bronze's rows beyond it
 *  (snapshot rows, operation 0, left out), then the change table of @p ci from bronze's
 *  newest _start_lsn (or @p after, the larger) up to @p upto. @p keys are captured
 *  column names; @p cap the captured columns.
 *  @param[out] out  free with mcdc_reconcile__changed_free().
 *  @return 0; MCDC_ENOTFOUND for a bronze without the key columns; source and Delta codes. */
int mcdc_reconcile__changed_keys(mcdc_reconcile__changed **out, const char *bronze_path, mcdc_source *src,
                                 const char *ci, const mcdc_lsn *after, const mcdc_lsn *upto,
                                 const char *const *keys, size_t n_keys, const mcdc_schema *cap);

/** Whether the key with text @p text (@p len bytes) changed. */
bool mcdc_reconcile__changed_has(const mcdc_reconcile__changed *c, const char *text, size_t len);

/** Number of distinct changed keys. */
size_t mcdc_reconcile__changed_count(const mcdc_reconcile__changed *c);

void mcdc_reconcile__changed_free(mcdc_reconcile__changed *c);

#endif
