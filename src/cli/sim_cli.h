/*
 * cli/sim_cli.h: what the sim commands share: reading --at style times and printing rows.
 */
#ifndef MCDC_SIM_CLI_H
#define MCDC_SIM_CLI_H

#include <stdint.h>

#include "cli.h"
#include "mcdc/sim.h"

/** The time of option @p opt (ISO-8601, UTC without a zone), or MCDC_SIM_NOW when absent.
 *  @return 0, or the exit code after printing a usage error. */
int mcdc_sim_cli_time(const mcdc_cli_args *a, const char *opt, int64_t *out);
/** A positive integer option, @p def when absent. @return 0 or an exit code. */
int mcdc_sim_cli_int(const mcdc_cli_args *a, const char *opt, int64_t def, int64_t min, int64_t *out);
/** A duration option, @p def when absent. @return 0 or an exit code. */
int mcdc_sim_cli_duration(const mcdc_cli_args *a, const char *opt, int64_t def, int64_t *out);
/** Check --format against "a|b|c"; @return 0 or an exit code. */
int mcdc_sim_cli_format(const mcdc_cli_args *a, const char *allowed, const char **out);

#endif
