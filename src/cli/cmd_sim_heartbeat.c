/*
 * cli/cmd_sim_heartbeat.c: `mssql-cdc sim heartbeat DB [--every 10s] [--beats N]`: the
 * heartbeat of sql/heartbeat.sql on the simulator (set up when absent, then beats, each a
 * captured update followed by a capture cycle).
 */
#include <stdio.h>

#include "mcdc/time.h"
#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"every", 0, MCDC_OPT_VALUE, "DURATION", "time between beats (default 10s, as the script's Agent job)"},
    {"beats", 0, MCDC_OPT_VALUE, "N", "how many beats (default 1)"},
    {"start", 0, MCDC_OPT_VALUE, "TIME", "first beat (default: the simulator's clock + every; with --realtime, now)"},
    {"realtime", 0, MCDC_OPT_SWITCH, NULL, "beat when the host clock reaches each beat's time"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    mcdc_sim_heartbeat_options o = MCDC_SIM_HEARTBEAT_OPTIONS_INIT;
    int rc;
    if ((rc = mcdc_sim_cli_duration(a, "every", o.every_us, &o.every_us)) ||
        (rc = mcdc_sim_cli_int(a, "beats", 1, 1, &o.beats)))
        return rc;
    if (o.every_us <= 0) return mcdc_cli_usage_error(a->cmd, "bad --every: the time between beats must be above zero");
    if (mcdc_cli_get(a, "start") && (rc = mcdc_sim_cli_time(a, "start", &o.start_us))) return rc;
    o.realtime = mcdc_cli_has(a, "realtime");
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    mcdc_sim_heartbeat_result r;
    if (mcdc_sim_heartbeat(sim, &o, &r) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    char f[MCDC_TIME_STRLEN], l[MCDC_TIME_STRLEN], m[MCDC_LSN_STRLEN];
    if (r.created)
        printf("created dbo.cdc_heartbeat, CDC enabled (capture instance dbo_cdc_heartbeat)\n");
    printf("%lld beats from %s to %s; max_lsn %s\n", (long long)r.n_beats, mcdc_time_format(f, r.first_us, 3, true),
           mcdc_time_format(l, r.last_us, 3, true), mcdc_lsn_format(m, &r.max_lsn));
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_heartbeat = {
    "sim heartbeat", "the heartbeat of sql/heartbeat.sql: a CDC table updated every 10 s", "DB", 1, 1, opts,
    "  mssql-cdc sim heartbeat demo.db --every 10s --beats 30",
    run,
};
