/*
 * cli/cmd_sim_capture.c: `mssql-cdc sim capture DB`: run a capture scan, as SQL Server's
 * capture job does; without --at at the simulator's clock, which it leaves where it is.
 */
#include <stdio.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"at", 0, MCDC_OPT_VALUE, "TIME", "scan time (ISO-8601, UTC without a zone; default the simulator's clock, unmoved)"},
    {"max-trans", 0, MCDC_OPT_VALUE, "N", "transactions per scan (default 500)"},
    {"max-scans", 0, MCDC_OPT_VALUE, "N", "scans in this run (default 1; the capture job's cycle is 10)"},
    {"idle-after", 0, MCDC_OPT_VALUE, "DURATION", "idle entry when nothing was found and this long passed since the last entry (default 5m)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    int64_t at, mt, ms, idle;
    int rc;
    if ((rc = mcdc_sim_cli_time(a, "at", &at)) || (rc = mcdc_sim_cli_int(a, "max-trans", 500, 1, &mt)) ||
        (rc = mcdc_sim_cli_int(a, "max-scans", 1, 1, &ms)) ||
        (rc = mcdc_sim_cli_duration(a, "idle-after", 5 * 60 * INT64_C(1000000), &idle)))
        return rc;
    if (!mcdc_cli_get(a, "at"))
        at = MCDC_SIM_CLOCK; /* a scan without --at never jumps the clock to the host's date */
    if (mt > 1000000 || ms > 1000000) return mcdc_cli_usage_error(a->cmd, "--max-trans and --max-scans are capped at 1000000");
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    mcdc_sim_capture_options o = {(int)mt, (int)ms, idle};
    mcdc_sim_capture_result r;
    if (mcdc_sim_capture(sim, at, &o, &r) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    char l[MCDC_LSN_STRLEN];
    printf("processed %lld commits in %lld scans%s; max_lsn %s; %lld waiting\n", (long long)r.n_trans,
           (long long)r.n_scans, r.idle ? " (none found: idle entry written)" : "", mcdc_lsn_format(l, &r.max_lsn),
           (long long)r.pending);
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_capture = {
    "sim capture", "run a capture scan: make committed transactions visible", "DB", 1, 1, opts,
    "  mssql-cdc sim capture demo.db --at 2026-10-01T14:00:05",
    run,
};
