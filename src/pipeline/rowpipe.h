/*
 * pipeline/rowpipe.h: rows handed from the thread that reads the source to a thread that
 * encodes them into a data file, so reading and Parquet encoding overlap (internal).
 *
 * The reader fills each row in place in a chunk of ROWPIPE_ROWS rows (mcdc_rowpipe__row,
 * then mcdc_rowpipe__push, which copies its strings and binaries into the chunk's own
 * bytes), or copies a row in (mcdc_rowpipe__add); a full chunk goes to the writer thread,
 * which appends its rows to the data file in order. At most ROWPIPE_CHUNKS chunks exist, so
 * memory is bounded whatever the batch size, and a reader that gets ahead waits. Rows reach the
 * file in the order they were added. An error of the writer stops the pipe: the next add
 * or the finish returns it, with its message, on the reader's thread. The writer thread
 * starts with the first full chunk: rows that fit in one chunk are written by the caller
 * at the finish.
 */
#ifndef MCDC_PIPELINE_ROWPIPE_H
#define MCDC_PIPELINE_ROWPIPE_H

#include "pipeline/datafile.h"

typedef struct mcdc_rowpipe mcdc_rowpipe;

/** A pipe into @p df (borrowed until mcdc_rowpipe__finish or mcdc_rowpipe__abort returns)
 *  with rows of @p schema (borrowed likewise); its writer thread starts with the first full
 *  chunk (when it cannot, the caller writes every chunk as it fills). @return 0;
 *  MCDC_ENOMEM. */
int mcdc_rowpipe__start(mcdc_rowpipe **out, mcdc_datafile *df, const mcdc_schema *schema);

/** Copy one row into the pipe (may wait for the writer). @return 0 or the writer's error. */
int mcdc_rowpipe__add(mcdc_rowpipe *p, const mcdc_value *row);

/** The cells of the next row, to be filled in place (every cell, in schema order; strings
 *  may point anywhere until mcdc_rowpipe__push returns). The same cells until the push.
 *  @return NULL when out of memory (the error set). */
mcdc_value *mcdc_rowpipe__row(mcdc_rowpipe *p);

/** Add the row mcdc_rowpipe__row gave, copying its strings and binaries (may wait for the
 *  writer). @return 0 or the writer's error. */
int mcdc_rowpipe__push(mcdc_rowpipe *p);

/** Hand over the last rows, wait for the writer to write them, stop it and free the pipe.
 *  @return 0 or the writer's first error. */
int mcdc_rowpipe__finish(mcdc_rowpipe *p);

/** Stop the writer without waiting for pending rows and free; accepts NULL. */
void mcdc_rowpipe__abort(mcdc_rowpipe *p);

#endif
