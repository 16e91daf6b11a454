/*
 * cli/cmd_sim_disable.c: `mssql-cdc sim disable DB --capture-instance CI`: drop a capture
 * instance, its change table and DDL history, at once.
 */
#include <stdio.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"capture-instance", 0, MCDC_OPT_VALUE, "NAME", "the capture instance to disable"},
    {"at", 0, MCDC_OPT_VALUE, "TIME", "when (ISO-8601, UTC without a zone; default now)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    int64_t at;
    int rc = mcdc_sim_cli_time(a, "at", &at);
    if (rc) return rc;
    const char *ci = mcdc_cli_get(a, "capture-instance");
    if (!ci) return mcdc_cli_usage_error(a->cmd, "'sim disable' needs --capture-instance");
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    if (mcdc_sim_disable(sim, ci, at) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    printf("capture instance %s disabled: its change table is gone\n", ci);
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_disable = {
    "sim disable", "disable a capture instance (its change table is dropped)", "DB", 1, 1, opts,
    "  mssql-cdc sim disable demo.db --capture-instance dbo_orders",
    run,
};
