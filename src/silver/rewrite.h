/*
 * silver/rewrite.h: writing silver files for one merge (rewrite.c): sorted runs of held
 * rows, and the copy-on-write of the silver files that hold changed keys, several files
 * at once. Internal to the silver layer; apply.c plans, this writes.
 */
#ifndef MCDC_SILVER_REWRITE_H
#define MCDC_SILVER_REWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcdc/delta.h"
#include "mcdc/silver.h"

#define MCDC_SILVER_TAG_KEY_MIN "mcdc.silver.key_min"
#define MCDC_SILVER_TAG_KEY_MAX "mcdc.silver.key_max"

/** What the writes of a merge need (all borrowed). */
typedef struct mcdc_silver_env {
    const char                *silver_path;
    const mcdc_delta_snapshot *silver;      /* the snapshot the rewritten files are read from */
    const mcdc_schema         *schema;      /* silver's flat schema (rows are in its order) */
    mcdc_silver_changes       *cs;          /* sorted before any rewrite */
    size_t                     target_rows; /* rows per file; a run past 1.5x is split */
} mcdc_silver_env;

/** What a merge wrote: the files to add and to remove in its commit, and counts. */
typedef struct mcdc_silver_out {
    mcdc_delta_file        *adds;      /* owned add actions (with key range tags) */
    size_t                  n_adds, cap_adds;
    const mcdc_delta_file **removes;   /* borrowed from the env's snapshot */
    size_t                  n_removes, cap_removes;
    uint64_t rows_read, rows_inserted, rows_updated, rows_deleted;
} mcdc_silver_out;

/** Free what @p out owns; leaves it zeroed. */
void mcdc_silver_out_dispose(mcdc_silver_out *out);

/** Append a file to remove. @return 0; MCDC_ENOMEM. */
int mcdc_silver_out_remove(mcdc_silver_out *out, const mcdc_delta_file *f);
/** Append a file to add; its contents move into @p out (@p f is left zeroed).
 *  @return 0; MCDC_ENOMEM (@p f unchanged). */
int mcdc_silver_out_add(mcdc_silver_out *out, mcdc_delta_file *f);

/** Rows held in memory and written as sorted files (a rebuild, new keys). */
typedef struct mcdc_silver_runs mcdc_silver_runs;

/** @return 0; MCDC_ENOMEM. Free with mcdc_silver_runs_free(). */
int mcdc_silver_runs_new(mcdc_silver_runs **out, const mcdc_silver_env *env, mcdc_silver_out *dst);
void mcdc_silver_runs_free(mcdc_silver_runs *r);
/** Hold one row (silver's order; strings copied); its key is encoded here. */
int mcdc_silver_runs_hold(mcdc_silver_runs *r, const mcdc_value *row);
/** Rows held so far. */
size_t mcdc_silver_runs_count(const mcdc_silver_runs *r);
/** Sort the held rows by key and write them as one file, or as files of about
 *  target_rows when past 1.5x that; adds go to the out. Nothing held: nothing written. */
int mcdc_silver_runs_flush(mcdc_silver_runs *r);

/** One silver file to rewrite. */
typedef struct mcdc_silver_target {
    const mcdc_delta_file *f;       /* in env->silver */
    bool                   known;   /* lo/hi are its exact key range (from its tags) */
    const uint8_t         *lo, *hi;
    size_t                 lo_len, hi_len;
    const size_t          *img;     /* the images (indices in key order, ascending) of new */
    size_t                 n_img;   /* keys this file receives when no row holds them */
} mcdc_silver_target;

/** Rewrite @p n files: each file's rows decided against the change set (rule S3) plus the
 *  new keys it receives, written sorted by key with their key range in tags. @p t lists
 *  the files without a range first, then the others by ascending lo. Files without a
 *  range are rewritten first, on this thread; then groups of files whose ranges overlap,
 *  independent of each other, on up to @p threads threads. A file with a range is
 *  streamed (its rows are sorted: no copy, no sort) unless it would grow past 1.5x the
 *  target or its rows turn out unsorted or outside the range; such a file is rewritten
 *  from held rows instead. The result does not depend on the threads: @p out gets the
 *  files in the order of @p t, each file's rows the same.
 *  @return 0; codes of the Parquet and Delta layers (the first failing file's, by the
 *          order of @p t, with its message on this thread). */
int mcdc_silver_rewrite(const mcdc_silver_env *env, const mcdc_silver_target *t, size_t n,
                        int threads, mcdc_silver_out *out);

/** Deletion-vector mode (mark.c): decide the rows of @p n target files that hold a
 *  changed key (rule S3, as a rewrite does) and mark the replaced and dropped ones in
 *  each file's deletion vector (merged with its current one; all new vectors in one DV
 *  file), without writing the file again. Each marked file's remove and its add with the
 *  new vector go to @p out; a file with no such row is left out. @p replaced[i] is set to
 *  1 for each image i (key order) that replaced a row: the caller writes those images
 *  (the images never met stay unmatched, as after a rewrite). @p files_marked counts the
 *  marked files. @p t lists the files without a range first, then the others by
 *  ascending lo (as mcdc_silver_rewrite); groups of overlapping ranges are decided on up
 *  to @p threads threads. @return 0; codes of the scan and of mcdc_delta_dv_write. */
int mcdc_silver_mark(const mcdc_silver_env *env, const mcdc_silver_target *t, size_t n,
                     int threads, unsigned char *replaced, mcdc_silver_out *out,
                     uint64_t *files_marked);

#endif
