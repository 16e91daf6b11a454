/*
 * delta/compact.h: what optimize.c, commit.c (the append's post-commit hook) and the unit
 * tests share about compaction: a table's settings, the commit order of files, the plans
 * (which files go into which new file) and running a plan as one dataChange=false commit.
 * Design: docs/decisions/0005-automatic-compaction.md.
 */
#ifndef MCDC_DELTA_COMPACT_H
#define MCDC_DELTA_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/delta.h"

/* The add tag that carries a compacted file's place in commit order (decimal ms: the
 * order of its oldest input), so later compactions keep combining neighbours. */
#define MCDC_DELTA_TAG_ORDER "mcdc.compact.order"

/* Range tags: a pair "mcdc.<name>_min" / "mcdc.<name>_max" of uppercase hex strings of an
 * order-preserving encoding (silver's key range, mcdc.silver.key_min and _max), so that
 * comparing the text compares the encoded values. A compacted file keeps a pair when every
 * one of its inputs carries it valid: the smallest min and the largest max (a bound of its
 * rows, also when deletion vectors dropped some). */
#define MCDC_DELTA_RANGE_TAG_PREFIX "mcdc."

/* Defaults (Delta's auto compaction: minNumFiles 50, maxFileSize 128 MiB, small = under
 * half of it). */
#define MCDC_DELTA_AC_MIN_NUM_FILES 50
#define MCDC_DELTA_AC_TARGET_BYTES  ((int64_t)128 << 20)

/* A table's auto compaction settings, from its configuration. */
typedef struct mcdc_delta__compact_settings {
    bool    enabled;        /* delta.autoOptimize.autoCompact; absent: mcdc.kind bronze/facts */
    int64_t min_num_files;  /* mcdc.autoCompact.minNumFiles (>= 2): fan-in and trigger */
    int64_t target_bytes;   /* delta.targetFileSize: the input cap of one run */
    int64_t min_file_bytes; /* mcdc.autoCompact.minFileSize: files under it are small */
} mcdc_delta__compact_settings;

/* Fill @p out from @p s's configuration (bad values fall back to the defaults). */
void mcdc_delta__compact_settings_of(mcdc_delta__compact_settings *out,
                                     const mcdc_delta_snapshot *s);

/* Parse a byte size: digits with an optional k, m, g (or kb, mb, gb; any case; 1024-based)
 * suffix. -1 when malformed, zero or over 2^50. */
int64_t mcdc_delta__parse_size(const char *text);

/* A file's place in commit order: its MCDC_DELTA_TAG_ORDER tag, else its
 * modificationTime (ms), else 0. */
int64_t mcdc_delta__file_order(const mcdc_delta_file *f);

/* A plan: groups of files, each rewritten into one new file. Group g is
 * idx[end[g-1] .. end[g]) (end[-1] = 0), indexes into the file array planned over, in
 * commit order; all files of a group share their partition values. */
typedef struct mcdc_delta__compact_plan {
    size_t *idx;      /* owned */
    size_t  n_idx;
    size_t *end;      /* owned: n_groups entries */
    size_t  n_groups;
    int64_t bytes;    /* input bytes of all groups */
} mcdc_delta__compact_plan;

/* Auto compaction's plan over @p files (a table's live files, any order): per partition,
 * files in commit order, a file of at least min_file_bytes breaks a run; tier t holds
 * the small files of size in [min_file/F^(t+1), min_file/F^t) with F = min_num_files.
 * The first (oldest) run of files under min_file/F^t holding at least F files of tier t,
 * deepest tier first, becomes one group, cut to the input left of target_bytes (at least
 * two files). At most one group per partition; input of all groups within target_bytes.
 * An empty plan when nothing qualifies. @return 0; MCDC_ENOMEM. */
int mcdc_delta__compact_plan_auto(mcdc_delta__compact_plan *out,
                                  const mcdc_delta_file *const *files, size_t n,
                                  const mcdc_delta__compact_settings *s);

/* `table optimize`'s plan: per partition, every file under half of @p target_bytes (or
 * with a deletion vector deleting at least @p dv_share of its rows, numRecords; any
 * deletion vector when @p dv_share <= 0 or the stats lack the count), in commit order,
 * cut into groups of at most @p target_bytes of input. A group of one file is kept only
 * when that file has such a deletion vector. @return 0; MCDC_ENOMEM. */
int mcdc_delta__compact_plan_all(mcdc_delta__compact_plan *out,
                                 const mcdc_delta_file *const *files, size_t n,
                                 int64_t target_bytes, double dv_share);

/* The share of deleted rows past which `table optimize` folds a file's deletion vector:
 * a silver table's mcdc.silver.dv_fold_share (default 0.2, the share past which silver
 * apply rewrites a file itself), 0 (any vector) for other tables. */
double mcdc_delta__dv_fold_share(const mcdc_delta_snapshot *s);

void mcdc_delta__compact_plan_free(mcdc_delta__compact_plan *p);

/* The planners' input: pointers to @p snap's live files followed by @p added (n_added
 * files, may be NULL with 0), in a new array the caller frees. NULL when out of memory
 * (the error is set). */
const mcdc_delta_file **mcdc_delta__compact_inputs(const mcdc_delta_snapshot *snap,
                                                   const mcdc_delta_file *added, size_t n_added);

/* Rewrite each group of @p p (indexes into snap->files) into one new file and commit
 * removes plus adds with dataChange=false; new files carry MCDC_DELTA_TAG_ORDER. With
 * @p is_auto the commit says "auto": "true" and files are written without dictionary
 * pages (as the stream writes them; half the CPU on bronze's mostly distinct values).
 * Failpoint delta.compact.files_written: the new files are written and fsynced, nothing
 * committed. @p retry_budget_ms bounds conflict retries (1: give up at the first).
 * @return 0; MCDC_ECONFLICT when a file was removed meanwhile (the new files are left as
 *         orphans for vacuum); MCDC_ETIMEOUT; scan, writer and commit codes. */
int mcdc_delta__compact_run(const mcdc_delta_snapshot *snap, const mcdc_delta__compact_plan *p,
                            bool is_auto, int64_t retry_budget_ms,
                            mcdc_delta_optimize_result *res);

/* The append's pre-check: would auto compaction find work once @p added (n_added files)
 * joined the live files of @p snap? Cheap: no I/O. False on any doubt (no memory,
 * disabled, a layout the writer cannot rewrite). */
bool mcdc_delta__compact_due(const mcdc_delta_snapshot *snap, const mcdc_delta_file *added,
                             size_t n_added);

#endif
