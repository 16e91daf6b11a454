/*
 * mcdc/run.h: the run layer: one table's job (its stream, its finalization tracker and its
 * silver follower, wired by the stream's progress events), and the supervisor that runs
 * the jobs of a config file.
 *
 * A job is what `mssql-cdc stream` runs and what `mssql-cdc run --config` runs once per
 * table: the stream publishes progress; the tracker and the follower subscribe to it. The
 * job validates every input before the first write (the stream's, the control table's,
 * silver's and its keys), then takes the checkpoint, seeds the tracker from it and starts
 * the follower before anything is read. Callers (the CLI) only parse, call and print.
 */
#ifndef MCDC_RUN_H
#define MCDC_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/finalize.h"
#include "mcdc/fs.h"
#include "mcdc/log.h"
#include "mcdc/options.h"
#include "mcdc/pipeline.h"
#include "mcdc/silver.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "mcdc/warehouse.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- One table's job (job.c) ----------------------------------------------------------- */

/** Options of a job. Start from MCDC_JOB_OPTIONS_INIT. Strings are borrowed and must
 *  outlive the job. */
typedef struct mcdc_job_options {
    int                 version;       /* 1 */
    mcdc_stream_options stream;        /* the stream's options (source open, paths resolved);
                                        * run_id NULL: the job makes one */
    const char         *source_time_zone; /* sourceTimeZone as given, or NULL ("auto") */
    const char         *control;       /* control table name as given, or NULL */
    const char         *control_path;  /* its directory (with control) */
    mcdc_granularity    granularity;   /* verdict period; default hour */
    const char         *silver;        /* silver table name as given, or NULL (needs control) */
    const char         *silver_path;   /* its directory (with silver) */
    const char         *keys;          /* "k1,k2" or NULL: the capture instance's unique index */
} mcdc_job_options;

#define MCDC_JOB_OPTIONS_INIT                                                               \
    { 1, MCDC_STREAM_OPTIONS_INIT, NULL, NULL, NULL, MCDC_GRAN_HOUR, NULL, NULL, NULL }

/** What a job's end reports about its tracker and follower (mcdc_job_verdict,
 *  mcdc_job_finish_silver). */
typedef struct mcdc_job_silver_result {
    mcdc_silver_apply_result last;  /* the last apply's result */
    uint64_t                 n_applies;
} mcdc_job_silver_result;

typedef struct mcdc_job mcdc_job;

/** Prepare a job (nothing is opened or read). @p opts is copied (strings borrowed).
 *  @return 0; MCDC_EINVAL (silver without control); MCDC_ENOMEM; codes of
 *  mcdc_stream_new. */
int mcdc_job_new(mcdc_job **out, const mcdc_job_options *opts);

/** Validate everything before the first write, reading only: the source's time zone
 *  against sourceTimeZone, the stream (mcdc_stream_check), the control table, silver and
 *  its keys (from the options or the capture instance's unique index, which they must
 *  equal when it has one).
 *  @return 0; MCDC_EINVAL naming what to fix; codes of the checks. */
int mcdc_job_check(mcdc_job *j);

/** Add a listener of the stream's progress (printing, metrics). Listeners added before
 *  mcdc_job_open run before the tracker and follower see the event.
 *  @return 0; MCDC_ENOMEM. */
int mcdc_job_add_listener(mcdc_job *j, mcdc_stream_listener_fn fn, void *payload);

/** mcdc_job_check when not called, then take the checkpoint (creating it when new: the
 *  first write), create or check the control table and start the tracker seeded from the
 *  checkpoint's last committed offset, and start the silver follower.
 *  @return 0; codes of mcdc_stream_open, mcdc_control_track, mcdc_silver_follower_start. */
int mcdc_job_open(mcdc_job *j);

/** Run the stream until its trigger ends or mcdc_job_stop. On an error the follower and
 *  the tracker are stopped (what they had is kept) and the stream's error is the one
 *  recorded.
 *  @return 0; the stream's codes. */
int mcdc_job_run(mcdc_job *j, mcdc_stream_result *result);

/** Stop the run after the batch in flight. Async-signal-safe; thread-safe. */
void mcdc_job_stop(mcdc_job *j);

/** After mcdc_job_run: wait for the tracker to write what is left and report the verdict.
 *  @param[out] has_tracker  false without a control table (then nothing else is set).
 *  @return 0; MCDC_EIO when the last verdict could not be written (the data is committed;
 *          the verdict lags). */
int mcdc_job_verdict(mcdc_job *j, bool *has_tracker, mcdc_verdict *out);

/** After mcdc_job_verdict: apply silver once more (so it follows the last verdict) and stop
 *  the follower.
 *  @param[out] has_silver  false without silver (then @p out is not set).
 *  @return 0; the apply's code, its message prefixed with the silver table. */
int mcdc_job_finish_silver(mcdc_job *j, bool *has_silver, mcdc_job_silver_result *out);

/** The job's run id (its stream's), valid for the job's life. */
const char *mcdc_job_run_id(const mcdc_job *j);

/** Stop what runs and free; NULL is a no-op. Does not close the source. */
void mcdc_job_free(mcdc_job *j);

#ifdef __cplusplus
}
#endif
#endif
