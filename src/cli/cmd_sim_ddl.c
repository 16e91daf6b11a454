/*
 * cli/cmd_sim_ddl.c: `mssql-cdc sim ddl DB 'ALTER TABLE ...'`: a schema change with its CDC
 * consequences and DDL history.
 */
#include <stdio.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"at", 0, MCDC_OPT_VALUE, "TIME", "when (ISO-8601, UTC without a zone; default now)"},
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
    if (mcdc_sim_ddl(sim, a->pos[1], at) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    printf("schema changed; DDL history visible after the next capture scan\n");
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_ddl = {
    "sim ddl", "ALTER TABLE ADD / DROP COLUMN / ALTER COLUMN, with DDL history", "DB STATEMENT", 2, 2, opts,
    "  mssql-cdc sim ddl demo.db --at 2026-10-01T15:00:00 'ALTER TABLE dbo.orders ADD note NVARCHAR(100) NULL'",
    run,
};
