/*
 * cli/cmd_sim_cleanup.c: `mssql-cdc sim cleanup DB --retention 3d`: the cleanup job: move
 * min_lsn, then delete change rows and mapping entries below it.
 */
#include <stdio.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"retention", 0, MCDC_OPT_VALUE, "DURATION", "keep this much history before the last commit (default 3d)"},
    {"threshold", 0, MCDC_OPT_VALUE, "N", "rows per delete batch (default 5000)"},
    {"at", 0, MCDC_OPT_VALUE, "TIME", "when (ISO-8601, UTC without a zone; default now)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    int64_t at, ret, thr;
    int rc;
    if ((rc = mcdc_sim_cli_time(a, "at", &at)) || (rc = mcdc_sim_cli_duration(a, "retention", 3 * INT64_C(86400000000), &ret)) ||
        (rc = mcdc_sim_cli_int(a, "threshold", 5000, 1, &thr)))
        return rc;
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    mcdc_sim_cleanup_result r;
    if (mcdc_sim_cleanup(sim, ret, at, thr, -1, &r) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    char l[MCDC_LSN_STRLEN];
    if (mcdc_lsn_is_zero(&r.low_water))
        printf("nothing older than the retention\n");
    else
        printf("low water mark %s: min_lsn moved; %lld change rows and %lld mapping entries deleted\n",
               mcdc_lsn_format(l, &r.low_water), (long long)r.n_change_rows, (long long)r.n_mapping_rows);
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_cleanup = {
    "sim cleanup", "clean up change rows older than the retention", "DB", 1, 1, opts,
    "  mssql-cdc sim cleanup demo.db --retention 3d --at 2026-10-05T02:00:00",
    run,
};
