/*
 * source/sim/commit_times.h: commit times of the simulator's mapping entries (the
 * cdc.lsn_time_mapping rows, sim_tx kinds 1-3), in UTC, for the source interface.
 *
 * One sim_commit_times per source; the index of the entries converted is the process's, one
 * per database file, shared by every source open on it (the pooled connections of a run),
 * so each question costs O(log n) plus the entries new since any source's last one, and
 * the history is converted once per process, not once per connection; the seeded walk
 * (each question re-fed from the entry 3 hours before it) stays as the reference the index
 * is tested against (mcdc_sim_source_set_commit_index) and answers what the index cannot.
 * Design and the equivalence argument: commit_times.c.
 */
#ifndef MCDC_SIM_COMMIT_TIMES_H
#define MCDC_SIM_COMMIT_TIMES_H

#include "source/sim/sim_int.h"

/* One entry the index converted. */
typedef struct sim_ct_entry {
    mcdc_lsn lsn;        /* start_lsn of the mapping entry */
    bool     pass2;      /* the sequencer's second_pass after this entry */
    int64_t  local_us;   /* tran_end_time, server local wall clock */
    int64_t  utc_us;     /* the commit time in UTC (the answer) */
} sim_ct_entry;

/* The index itself: one per database file and server zone in a process, shared by every
 * source open on it (commit_times.c), under its own lock. */
typedef struct sim_ct_index sim_ct_index;

typedef struct sim_commit_times {
    mcdc_sim     *sim;        /* borrowed; the source's database, whose connection asks */
    bool          use_index;  /* false: every question takes the seeded walk */
    sim_ct_index *ix;         /* the process's index of this database (NULL: the walk only) */
    int64_t       n_fed;      /* mapping entries this source's questions fed, either way */
    int64_t       dv_synced;  /* its value before this source's last sync of the index, or -1 */
    int64_t       n_synced;   /* syncs this source's questions made (both ends checked in SQL) */
} sim_commit_times;

/* A read_changes in progress: what the seeded walk keeps between pages. */
typedef struct sim_ct_read {
    mcdc_tz_sequencer seq;      /* walk mode: the read's own sequencer */
    mcdc_lsn          fed;      /* walk mode: the last entry it fed */
    mcdc_lsn          prev_lsn; /* the last row stamped, for transactions spanning pages */
    int64_t           prev_ts;
    bool              have_prev;
    mcdc_lsn          after;    /* the read's lower bound (exclusive) */
} sim_ct_read;

/* Join the process's index of @p s's database file (made at the first source open on it);
 * without memory for it the source takes the walk. */
void sim__ct_init(sim_commit_times *ct, mcdc_sim *s);
/* Leave the index; the last source to leave frees it. */
void sim__ct_dispose(sim_commit_times *ct);
/* Answer from the index (joining it again), or leave it and take the walk. */
void sim__ct_use_index(sim_commit_times *ct, bool enabled);

/* The UTC commit time of mapping entry @p lsn. @return 0; MCDC_ENOTFOUND when no entry has
 * that LSN; MCDC_ENOMEM; an SQLite error. Cost: O(log n) plus entries new since the last
 * question (the seeded walk's 3 hours of entries for an LSN the index cannot answer). */
int sim__ct_commit_ts(sim_commit_times *ct, const mcdc_lsn *lsn, int64_t *out_us);

/* The n-th mapping entry above @p after and at or below @p upto (or the last there is, with
 * *found < n; *found 0 leaves *out = *after), with its commit time. */
int sim__ct_nth_after(sim_commit_times *ct, const mcdc_lsn *after, const mcdc_lsn *upto, int64_t n, mcdc_lsn *out,
                      int64_t *out_ts, int64_t *found);

/* Start stamping the rows of a read of changes above @p after. */
int sim__ct_read_begin(sim_commit_times *ct, sim_ct_read *rd, const mcdc_lsn *after);
/* Set commit_ts_us of @p n rows (in read order, all above the read's after). *n_ok is the
 * count stamped before the first row without a mapping entry (then MCDC_ESOURCE). */
int sim__ct_stamp(sim_commit_times *ct, sim_ct_read *rd, mcdc_change *rows, size_t n, size_t *n_ok);

#endif
