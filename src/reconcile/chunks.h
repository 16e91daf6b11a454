/*
 * reconcile/chunks.h: chunk checks of a completed chunked snapshot (internal to reconcile).
 * See chunks.c.
 */
#ifndef MCDC_RECONCILE_CHUNKS_H
#define MCDC_RECONCILE_CHUNKS_H

#include "mcdc/reconcile.h"

/** Fill @p r's chunk fields: the newest chunked snapshot of bronze @p bronze_name in the
 *  facts table at @p facts_path and, when complete, each chunk's rows in bronze (at
 *  @p bronze_path) against its snapshot_chunk row. Reads only. */
int mcdc_reconcile__check_chunks(mcdc_reconcile_result *r, const char *facts_path, const char *bronze_name,
                                 const char *bronze_path);

#endif
