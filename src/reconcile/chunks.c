/*
 * reconcile/chunks.c: reconcile's chunk checks (`--facts`): for a completed chunked
 * snapshot (ADR 0014), each chunk's row count in bronze equals its snapshot_chunk facts row,
 * and every chunk of the plan has both.
 *
 * The facts side comes from the backfill's reader of the snapshot's state
 * (mcdc_chunked_snapshot_chunks); bronze's side is one scan of its _snapshot and _chunk
 * columns, counting the rows whose _snapshot is S by _chunk (a partial backfill's rows carry
 * their own P and are left out). A snapshot still open is not checked (its chunks are still
 * arriving); one never opened leaves nothing to check. Reads only. Memory: one count per
 * chunk of the plan.
 */
#include <stdlib.h>
#include <string.h>

#include "mcdc/backfill.h"
#include "mcdc/delta.h"
#include "reconcile/chunks.h"

/* Rows of bronze per chunk of snapshot S, into counts[0..n) (chunks past n: *stray). */
static int count_bronze(const char *bronze_path, const mcdc_lsn *S, int64_t *counts, size_t n, int64_t *stray)
{
    mcdc_delta_snapshot *snap = NULL;
    int rc = mcdc_delta_snapshot_open(&snap, bronze_path, -1);
    if (rc < 0)
        return rc;
    static const char *const cols[] = { "_snapshot", "_chunk" };
    char s_text[MCDC_LSN_STRLEN];
    mcdc_lsn_format(s_text, S);
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = cols;
    so.n_columns = 2;
    so.pred.op = MCDC_DELTA_PRED_EQ;
    so.pred.column = "_snapshot";
    so.pred.value.is_null = false;
    so.pred.value.v.s.ptr = s_text;
    so.pred.value.v.s.len = strlen(s_text);
    mcdc_delta_scan *sc = NULL;
    rc = mcdc_delta_scan_open(&sc, snap, &so);
    const mcdc_value *row;
    while (rc == 0 && (rc = mcdc_delta_scan_next(sc, &row)) == 1) {
        rc = 0;
        if (row[0].is_null || row[1].is_null)
            continue;
        mcdc_lsn l;
        if (mcdc_lsn_parse_n(&l, row[0].v.s.ptr, row[0].v.s.len) < 0 || mcdc_lsn_cmp(&l, S) != 0)
            continue;
        if (row[1].v.i >= 0 && (uint64_t)row[1].v.i < n)
            counts[row[1].v.i]++;
        else
            (*stray)++;
    }
    mcdc_delta_scan_free(sc);
    mcdc_delta_snapshot_free(snap);
    return rc < 0 ? rc : 0;
}

static int add_diff(mcdc_reconcile_result *r, int64_t chunk, int64_t facts_rows, int64_t bronze_rows)
{
    mcdc_reconcile_chunk *nc = realloc(r->chunk_diffs, (r->n_chunk_diffs + 1) * sizeof *nc);
    if (!nc)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    r->chunk_diffs = nc;
    nc[r->n_chunk_diffs++] = (mcdc_reconcile_chunk){ chunk, facts_rows, bronze_rows };
    r->chunks_mismatched++;
    return 0;
}

int mcdc_reconcile__check_chunks(mcdc_reconcile_result *r, const char *facts_path, const char *bronze_name,
                                 const char *bronze_path)
{
    mcdc_chunked_snapshot cs;
    mcdc_snapshot_chunk_fact *facts = NULL;
    size_t n_facts = 0;
    int rc = mcdc_chunked_snapshot_chunks(&cs, &facts, &n_facts, facts_path, bronze_name);
    if (rc < 0)
        return rc;
    r->chunks_checked = true;
    r->chunk_state = !cs.found ? MCDC_RECONCILE_CHUNKS_NONE : cs.is_open ? MCDC_RECONCILE_CHUNKS_OPEN
                                                                         : MCDC_RECONCILE_CHUNKS_COMPLETE;
    if (cs.found)
        mcdc_lsn_format(r->chunk_snapshot, &cs.snapshot);
    if (r->chunk_state != MCDC_RECONCILE_CHUNKS_COMPLETE) {
        free(facts);
        return 0;
    }
    /* chunks 0..n-1: the plan's, and any a facts row names past it */
    size_t n = (size_t)cs.chunks_total;
    for (size_t i = 0; i < n_facts; i++)
        if (facts[i].chunk >= 0 && (size_t)facts[i].chunk + 1 > n)
            n = (size_t)facts[i].chunk + 1;
    int64_t *bronze = calloc(n + 1, sizeof *bronze), *fact = malloc((n + 1) * sizeof *fact), stray = 0;
    if (!bronze || !fact)
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    for (size_t i = 0; fact && i < n; i++)
        fact[i] = -1;
    for (size_t i = 0; rc == 0 && i < n_facts; i++)
        if (facts[i].chunk >= 0)
            fact[facts[i].chunk] = facts[i].rows;
    if (rc == 0)
        rc = count_bronze(bronze_path, &cs.snapshot, bronze, n, &stray);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        r->chunks++;
        if (fact[i] != bronze[i])
            rc = add_diff(r, (int64_t)i, fact[i], bronze[i]);
    }
    if (rc == 0 && stray)
        rc = add_diff(r, -1, -1, stray);
    free(bronze);
    free(fact);
    free(facts);
    return rc;
}
