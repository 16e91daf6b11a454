/*
 * cli/cmd_sim_enable.c: `mssql-cdc sim enable DB --table T --capture-instance CI`: enable a
 * (second) capture instance on a table.
 */
#include <stdio.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"table", 0, MCDC_OPT_VALUE, "SCHEMA.TABLE", "the source table"},
    {"capture-instance", 0, MCDC_OPT_VALUE, "NAME", "the new capture instance (default SCHEMA_TABLE)"},
    {"columns", 0, MCDC_OPT_VALUE, "A,B", "capture only these columns (sp_cdc_enable_table's @captured_column_list; default all)"},
    {"at", 0, MCDC_OPT_VALUE, "TIME", "when (ISO-8601, UTC without a zone; default now)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    int64_t at;
    int rc = mcdc_sim_cli_time(a, "at", &at);
    if (rc) return rc;
    if (!mcdc_cli_get(a, "table")) return mcdc_cli_usage_error(a->cmd, "'sim enable' needs --table");
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    if (mcdc_sim_enable_columns(sim, mcdc_cli_get(a, "table"), mcdc_cli_get(a, "capture-instance"),
                                mcdc_cli_get(a, "columns"), at) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    printf("capture instance enabled on %s; its min_lsn reads 0x00 until a capture scan processes the enable\n",
           mcdc_cli_get(a, "table"));
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_enable = {
    "sim enable", "enable a capture instance on a table (at most two per table)", "DB", 1, 1, opts,
    "  mssql-cdc sim enable demo.db --table dbo.orders --capture-instance dbo_orders_v2\n"
    "  mssql-cdc sim enable demo.db --table dbo.orders --capture-instance dbo_orders_v3 --columns order_id,amount",
    run,
};
