/*
 * cli/cmd_sim_init.c: `mssql-cdc sim init DB [--table T --schema S --keys K]`: create a
 * simulator database (if needed) and a table with CDC enabled on it. A failed init of a new
 * file leaves no file behind (mcdc_sim_init).
 */
#include <stdio.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"table", 0, MCDC_OPT_VALUE, "SCHEMA.TABLE", "the table to create, e.g. dbo.orders"},
    {"schema", 0, MCDC_OPT_VALUE, "COLUMNS", "'name TYPE [NULL|NOT NULL], ...' (SQL Server types)"},
    {"keys", 0, MCDC_OPT_VALUE, "COL[,COL]", "primary key columns (the capture's unique index)"},
    {"capture-instance", 0, MCDC_OPT_VALUE, "NAME", "capture instance name (default SCHEMA_TABLE)"},
    {"time-zone", 0, MCDC_OPT_VALUE, "ZONE", "server time zone, IANA or Windows name (default UTC; new databases only)"},
    {"at", 0, MCDC_OPT_VALUE, "TIME", "when (ISO-8601, UTC without a zone; default now)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    int64_t at;
    int rc = mcdc_sim_cli_time(a, "at", &at);
    if (rc) return rc;
    const char *table = mcdc_cli_get(a, "table");
    if (!table && (mcdc_cli_has(a, "schema") || mcdc_cli_has(a, "keys") || mcdc_cli_has(a, "capture-instance")))
        return mcdc_cli_usage_error(a->cmd, "--schema, --keys and --capture-instance need --table");
    mcdc_sim *sim;
    if (mcdc_sim_init(&sim, a->pos[0], mcdc_cli_get(a, "time-zone"), table, mcdc_cli_get(a, "schema"),
                      mcdc_cli_get(a, "keys"), mcdc_cli_get(a, "capture-instance"), at) < 0)
        return mcdc_cli_fail();
    mcdc_sim_status st;
    if (mcdc_sim_get_status(sim, &st) == 0) {
        if (table)
            printf("created %s in %s, CDC enabled (capture instance %s); server time zone %s\n", table, a->pos[0],
                   st.n_inst ? st.inst[st.n_inst - 1].name : "?", st.time_zone);
        else
            printf("simulator database %s ready; server time zone %s\n", a->pos[0], st.time_zone);
        mcdc_sim_status_dispose(&st);
    }
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_init = {
    "sim init", "create a simulator database and a table with CDC enabled", "DB", 1, 1, opts,
    "  mssql-cdc sim init demo.db --table dbo.orders --keys order_id \\\n"
    "    --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL'",
    run,
};
