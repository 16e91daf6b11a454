/*
 * cli/cmd_sim_grant.c: `mssql-cdc sim grant DB --user U --on OBJECT [--revoke]`: SELECT on one
 * object for a login of sim serve, or taken back. A login without grants reads everything (as a db_owner); one with
 * grants reads only what it was granted, and is refused with SQL Server's error 229 elsewhere.
 */
#include <stdio.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"user", 0, MCDC_OPT_VALUE, "NAME", "the login (created with sim login add)"},
    {"on", 0, MCDC_OPT_VALUE, "OBJECT", "the object: dbo.<table>, cdc.<ci>_CT, cdc.lsn_time_mapping, ..."},
    {"revoke", 0, MCDC_OPT_SWITCH, NULL, "take the grant back (its login's sim serve sessions lose it at their next request)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    const char *user = mcdc_cli_get(a, "user"), *on = mcdc_cli_get(a, "on");
    if (!user) return mcdc_cli_usage_error(a->cmd, "'sim grant' needs --user");
    if (!on) return mcdc_cli_usage_error(a->cmd, "'sim grant' needs --on");
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    bool revoke = mcdc_cli_has(a, "revoke"), had = false;
    int rc = revoke ? mcdc_sim_revoke(sim, user, on, &had) : mcdc_sim_grant(sim, user, on);
    mcdc_sim_close(sim);
    if (rc < 0) return mcdc_cli_fail();
    if (!revoke)
        printf("SELECT on %s granted to %s\n", on, user);
    else if (had)
        printf("SELECT on %s revoked from %s\n", on, user);
    else
        printf("%s had no SELECT on %s: nothing revoked\n", user, on);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_grant = {
    "sim grant", "give a sim serve login SELECT on one object", "DB", 1, 1, opts,
    "  mssql-cdc sim grant demo.db --user cdc_reader --on cdc.dbo_orders_CT\n"
    "  mssql-cdc sim grant demo.db --user cdc_reader --on dbo.orders --revoke",
    run,
};
