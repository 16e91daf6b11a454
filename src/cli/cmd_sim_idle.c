/*
 * cli/cmd_sim_idle.c: `mssql-cdc sim idle DB --at T`: write an idle (dummy) mapping entry,
 * as capture does on a quiet database.
 */
#include <stdio.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"at", 0, MCDC_OPT_VALUE, "TIME", "entry time (ISO-8601, UTC without a zone; default now)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    int64_t at;
    int rc = mcdc_sim_cli_time(a, "at", &at);
    if (rc) return rc;
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    mcdc_lsn l;
    if (mcdc_sim_idle(sim, at, &l) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    char s[MCDC_LSN_STRLEN];
    printf("idle entry %s (tran_id 0x00); max_lsn %s\n", mcdc_lsn_format(s, &l), s);
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_idle = {
    "sim idle", "write an idle mapping entry (tran_id 0x00)", "DB", 1, 1, opts,
    "  mssql-cdc sim idle demo.db --at 2026-10-01T14:05:00",
    run,
};
