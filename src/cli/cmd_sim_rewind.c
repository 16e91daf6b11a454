/*
 * cli/cmd_sim_rewind.c: `mssql-cdc sim rewind DB --to LSN`: the database as a restore to LSN
 * (or a failover to a replica that lags) leaves it: what was logged after LSN is gone.
 */
#include <stdio.h>
#include <string.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"to", 0, MCDC_OPT_REQUIRED, "LSN", "keep everything up to this LSN, drop what came after (0x + 20 hex digits)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    const char *to_text = mcdc_cli_get(a, "to");
    mcdc_lsn to;
    if (mcdc_lsn_parse(&to, to_text) < 0) {
        mcdc_error_clear();
        return mcdc_cli_usage_error(a->cmd, "--to '%s': not an LSN (0x + 20 hex digits, as sim status and "
                                    "cdc.lsn_time_mapping show them)", to_text);
    }
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    mcdc_sim_rewind_result r;
    if (mcdc_sim_rewind(sim, &to, &r) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    char l[MCDC_LSN_STRLEN], m[MCDC_LSN_STRLEN];
    printf("rewound to %s: %lld change rows, %lld log entries dropped, %lld source row changes undone; "
           "max_lsn %s\n", mcdc_lsn_format(l, &to), (long long)r.n_change_rows, (long long)r.n_mapping_rows,
           (long long)r.n_source_rows, mcdc_lsn_format(m, &r.max_lsn));
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_rewind = {
    "sim rewind", "drop everything logged after an LSN, as a restore of the database would", "DB", 1, 1, opts,
    "  mssql-cdc sim rewind demo.db --to 0x00E31CC6D43A1EC00004",
    run,
};
