/*
 * mcdc/tz.h: time zones from the system's TZif files, without touching TZ.
 *
 * Loads /usr/share/zoneinfo/<IANA name> (RFC 8536, versions 1 to 4, including the POSIX
 * TZ footer for instants past the last transition) and converts between local wall-clock
 * time and UTC for that zone. Windows zone names (as SQL Server reports them, e.g.
 * "Eastern Standard Time") map to IANA names.
 *
 * Caveats:
 * - A loaded zone is immutable: share it between threads freely.
 * - Local to UTC is ambiguous in the repeated (fall-back) hour and undefined in the
 *   skipped (spring-forward) hour; see mcdc_tz_local_to_utc for the rules.
 */
#ifndef MCDC_TZ_H
#define MCDC_TZ_H

#include <stdbool.h>
#include <stdint.h>

#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcdc_tz mcdc_tz;

/** Load a zone by IANA name ("UTC", "America/New_York") or Windows name ("Eastern
 *  Standard Time"). @return 0; MCDC_ENOTFOUND for an unknown zone (the message names
 *  it and the hint says where zones are looked up); MCDC_ECORRUPT for a bad TZif file. */
int mcdc_tz_load(mcdc_tz **out, const char *name);
/** Free a zone; accepts NULL. */
void mcdc_tz_free(mcdc_tz *tz);
/** The IANA name the zone was loaded as (after mapping a Windows name). Borrowed. */
const char *mcdc_tz_name(const mcdc_tz *tz);

/** UTC offset in seconds in force at UTC instant @p utc_us (e.g. -18000 for EST). */
int32_t mcdc_tz_offset_at(const mcdc_tz *tz, int64_t utc_us);
/** Local wall-clock microseconds for UTC instant @p utc_us. */
int64_t mcdc_tz_utc_to_local(const mcdc_tz *tz, int64_t utc_us);
/** UTC instant for local wall-clock time @p local_us.
 *  In a repeated hour, @p later_pass false takes the first (earlier) instant, true the
 *  second. In a skipped hour the local time is read with the offset in force before the
 *  gap (as SQL Server's AT TIME ZONE does), and *was_gap is set when given. */
int64_t mcdc_tz_local_to_utc(const mcdc_tz *tz, int64_t local_us, bool later_pass, bool *was_gap);

/** The IANA name for a Windows zone name, or NULL when unknown (case-insensitive). */
const char *mcdc_tz_windows_to_iana(const char *windows_name);

/** Commit-time conversion along LSN order (architecture §6), shared by every source.
 *  Feed local commit times in LSN order; each comes back as UTC. A commit whose local
 *  time reads more than a minute earlier than its predecessor's, inside a repeated hour,
 *  starts the second pass (the offset after the change), so UTC times never go
 *  backwards along LSNs. */
typedef struct mcdc_tz_sequencer {
    const mcdc_tz *tz;        /* borrowed */
    int64_t        prev_local_us; /* local time of the previous commit; INT64_MIN at start */
    int64_t        prev_utc_us;   /* its UTC time */
    bool           second_pass;   /* inside a repeated hour, after the jump back */
} mcdc_tz_sequencer;

/** Start a sequencer; @p prev_local_us / @p prev_utc_us seed it with the commit before
 *  the first one to convert (INT64_MIN when none). */
void mcdc_tz_sequencer_init(mcdc_tz_sequencer *seq, const mcdc_tz *tz, int64_t prev_local_us,
                            int64_t prev_utc_us);
/** Convert the next commit's local time to UTC. */
int64_t mcdc_tz_sequencer_next(mcdc_tz_sequencer *seq, int64_t local_us);

#ifdef __cplusplus
}
#endif
#endif
