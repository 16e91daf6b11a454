/*
 * pipeline/lease.h: the lease of a checkpoint on object storage (internal to the pipeline
 * layer; used by checkpoint.c). An object store has no flock, so one stream per checkpoint
 * is kept by a lease object: created if absent with an owner id and an expiry, renewed by a
 * thread every third of its duration, taken over (compare and swap on its change token)
 * once expired. A courtesy, not a fence: exactly-once rests on create-if-absent offsets/N,
 * commits/N and Delta commits, never on the lease. Design: docs/decisions/0044.
 */
#ifndef MCDC_PIPELINE_LEASE_H
#define MCDC_PIPELINE_LEASE_H

#include <stdbool.h>
#include <stdint.h>

/** The shortest lease accepted (renewals every third of it must fit). */
#define MCDC_LEASE_MIN_US 1000000LL

/** A held lease. */
typedef struct mcdc_lease mcdc_lease;

/** Take the lease object @p loc for @p duration_us, and renew it from a thread every
 *  third of that until mcdc_lease_release(). A lease that is absent, released or expired
 *  is taken (logged when another owner's is taken over). A live lease of an owner on this
 *  host whose process is gone (a stream killed before it could release) is waited for
 *  until it expires, saying how long (log, warn); a live lease of any other owner is
 *  refused. @p what names the checkpoint in messages.
 *  @param[out] out  the held lease; release with mcdc_lease_release().
 *  @return 0; MCDC_ECONFLICT naming the holder and the seconds until its expiry (exit 3);
 *  MCDC_ECORRUPT for a lease object that is not one; MCDC_EIO. */
int mcdc_lease_acquire(mcdc_lease **out, const char *loc, int64_t duration_us, const char *what);

/** Whether the lease still is ours: 0; MCDC_ECONFLICT when a renewal found another owner
 *  holding it (it expired while renewals failed, and was taken over). Thread-safe. */
int mcdc_lease_check(mcdc_lease *l);

/** This holder's owner id ("host:pid:random"), valid until release. */
const char *mcdc_lease_owner(const mcdc_lease *l);

/** Stop renewing and release: the lease object is rewritten as expired (compare and
 *  swap, so a lease taken over meanwhile is left alone), so the next stream takes it at
 *  once. Accepts NULL. */
void mcdc_lease_release(mcdc_lease *l);

#endif
