/*
 * run/run_int.h: what the files of the run layer share (not public).
 */
#ifndef MCDC_RUN_INT_H
#define MCDC_RUN_INT_H

#include <pthread.h>

#include "mcdc/run.h"

/* the source options a table may give under options: */
extern const char *const mcdc_run__option_keys[];

/* the config key of setting @p k */
const char *mcdc_run__key_name(int k);

/* the job options of table @p t over the open source @p src (strings borrowed from t) */
int mcdc_run__job_options(mcdc_job_options *jo, const mcdc_run_table *t, mcdc_source *src);

/* ---- a config source shared by its tables (counted.c) ---- */

enum { MCDC_RUN_SRC_MAX_LSN = 0, MCDC_RUN_SRC_NOPS = 18 };

typedef struct mcdc_run__source {
    char           *name, *spec;
    uint64_t        queries[MCDC_RUN_SRC_NOPS]; /* per operation (atomic) */
    uint64_t        errors;                     /* failed operations and opens (atomic) */
    pthread_mutex_t mu;                         /* the pool and the shared poll: */
    mcdc_source   **idle;                       /* connections no round uses now */
    size_t          n_idle, cap_idle;
    mcdc_source    *poll;                       /* its own connection, opened at first use */
    bool            has_max;
    mcdc_lsn        max;
    int64_t         max_at_mono_us;
} mcdc_run__source;

/* the name of operation @p op ("max_lsn", ...) (label query=) */
const char *mcdc_run__src_op_name(int op);
/* a new shared source (NULL: out of memory) */
mcdc_run__source *mcdc_run__source_new(const char *name, const char *spec);
/* open a connection to @p rs whose operations are counted on it; close with
 * mcdc_source_close */
int mcdc_run__source_connect(mcdc_source **out, mcdc_run__source *rs);
/* a connection of the pool: an idle one, or a new one */
int mcdc_run__source_acquire(mcdc_source **out, mcdc_run__source *rs);
/* give @p src back to the pool; @p broken (a round that failed) closes it instead */
void mcdc_run__source_release(mcdc_run__source *rs, mcdc_source *src, bool broken);
/* the source's max_lsn, asked on the poll connection unless asked less than @p fresh_us ago */
int mcdc_run__source_max_lsn(mcdc_run__source *rs, int64_t fresh_us, mcdc_lsn *out);
void mcdc_run__source_free(mcdc_run__source *rs);

/* ---- systemd's notify protocol (notify.c); no-ops without NOTIFY_SOCKET ---- */

/* send @p state ("READY=1", "WATCHDOG=1", ...) */
void mcdc_run__notify(const char *state);
/* READY=1 with a STATUS line */
void mcdc_run__notify_ready(void);
/* the watchdog interval systemd asks for (WATCHDOG_USEC for this pid), 0 when none */
int64_t mcdc_run__notify_watchdog_us(void);

#endif
