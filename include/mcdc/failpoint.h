/*
 * mcdc/failpoint.h: named crash points for crash-recovery tests.
 *
 * With MCDC_FAILPOINT=name[@N][,name[@N]...] in the environment, the process kills
 * itself with SIGKILL the N-th time (default the first) it reaches mcdc_failpoint("name").
 * With name[@N]=stop it stops itself with SIGSTOP instead and carries on when a SIGCONT
 * comes: a race test holds one process inside a window, runs another, then resumes it.
 * Always compiled in; when the variable is unset or empty a call costs one branch.
 * This is the only place the library ends (or stops) the process.
 *
 * Caveats:
 * - The variable is read once, at the first call (or at mcdc_failpoint_init); changing
 *   it later has no effect in this process. Counting is per process and thread-safe.
 * - A malformed MCDC_FAILPOINT is reported by mcdc_failpoint_init (the CLI calls it at
 *   start and exits 2); a process that never calls it ignores a malformed value after
 *   logging one error.
 */
#ifndef MCDC_FAILPOINT_H
#define MCDC_FAILPOINT_H

#include "mcdc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most failpoints one MCDC_FAILPOINT value may arm. */
#define MCDC_FAILPOINT_MAX 32

/** Read and check MCDC_FAILPOINT now (later calls return the same result).
 *  @return 0 (also when unset); MCDC_EINVAL naming the bad part (names are letters,
 *          digits, '_', '.', ':' and '-', at most 63 bytes; N is 1 to 1000000000; the
 *          only action after '=' is "stop"). */
int mcdc_failpoint_init(void);

/** Count a pass through point @p name; SIGKILL the process when it is armed and this
 *  is its N-th pass (SIGSTOP it when armed with "=stop", returning once it is
 *  continued). Thread-safe. */
void mcdc_failpoint(const char *name);

#ifdef __cplusplus
}
#endif
#endif
