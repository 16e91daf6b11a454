/*
 * run/run_int.h: what the files of the run layer share (not public).
 */
#ifndef MCDC_RUN_INT_H
#define MCDC_RUN_INT_H

#include "mcdc/run.h"

/* the source options a table may give under options: */
extern const char *const mcdc_run__option_keys[];

/* the config key of setting @p k */
const char *mcdc_run__key_name(int k);

/* the job options of table @p t over the open source @p src (strings borrowed from t) */
int mcdc_run__job_options(mcdc_job_options *jo, const mcdc_run_table *t, mcdc_source *src);

#endif
