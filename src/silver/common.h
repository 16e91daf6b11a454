/*
 * silver/common.h: what the applies and the as-of reader share (common.c): the rank of a
 * bronze row (rule S1), copies and comparisons of rows, the position a merge commit records, and the
 * verdict step. Internal to the silver layer.
 */
#ifndef MCDC_SILVER_COMMON_H
#define MCDC_SILVER_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/finalize.h"
#include "mcdc/silver.h"
#include "silver/changes.h"

/** memcmp order of two encoded keys (mcdc_silver_key_encode), a prefix first. */
int mcdc_silver__key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb);

/** Upper-case hex of @p n bytes (the key-range tags' form), NUL-terminated; free().
 *  NULL when out of memory. */
char *mcdc_silver__hex_of(const uint8_t *p, size_t n);

/** The bytes of hex text @p s (either case); free(). NULL when malformed (odd length, a
 *  non-hex digit) or out of memory. */
uint8_t *mcdc_silver__unhex(const char *s, size_t *n_out);

/** The rank of a bronze row from its _start_lsn, _operation, _command_id and _seqval
 *  cells. @return 0; MCDC_ECORRUPT naming what is malformed (a NULL _start_lsn or
 *  _operation, an operation outside 0-4, LSN text that does not parse). */
int mcdc_silver__rank_of(mcdc_silver_rank *out, const mcdc_value *start_lsn,
                         const mcdc_value *operation, const mcdc_value *command_id,
                         const mcdc_value *seqval);

/** <0, 0, >0: rank of @p a against @p b by rule S1 (changes.c). */
int mcdc_silver_rank_cmp(const mcdc_silver_rank *a, const mcdc_silver_rank *b);

/** A copy of @p n cells, cell i taken from row[map[i]] (map NULL: row[i]) and described
 *  by cols[i], with the bytes of its strings and binaries, in one allocation (free()).
 *  NULL when out of memory. */
mcdc_value *mcdc_silver__values_dup(const mcdc_column *cols, const mcdc_value *row,
                                    const int *map, size_t n);

/** Whether cells a[i] and b[i] hold one value for every i < @p n (cols[i] their type; NULL
 *  equals NULL only). The applies' and the as-of reader's test of an unchanged state. */
bool mcdc_silver__same_cells(const mcdc_column *cols, size_t n, const mcdc_value *a,
                             const mcdc_value *b);

/** The bronze position a silver merge commit records (userMetadata
 *  silver_apply.applied_lsn). false when @p user_metadata has none. */
bool mcdc_silver__meta_applied_lsn(const char *user_metadata, mcdc_lsn *out);

/** Step "verdict" of an apply: with o->facts_path and bronze's verdict @p brow (read
 *  before bronze), advance silver's finalized_until to at most bronze's; @p out gets the
 *  verdict after. Nothing is done without facts or a bronze verdict. @return 0; codes of
 *  mcdc_control_advance. */
int mcdc_silver__advance_verdict(const mcdc_silver_apply_options *o, const mcdc_control_row *brow,
                                 mcdc_verdict *out);

#endif
