/*
 * cli/cmd_sim_exec.c: `mssql-cdc sim exec DB 'STATEMENT; ...'`: run statements as one
 * transaction on the simulator.
 */
#include <stdio.h>

#include "mcdc/time.h"
#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"at", 0, MCDC_OPT_VALUE, "TIME", "commit time (ISO-8601, UTC without a zone; default now)"},
    {"begin-at", 0, MCDC_OPT_VALUE, "TIME", "begin time, at or before --at (default: the commit time)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    int64_t at, begin;
    int rc = mcdc_sim_cli_time(a, "at", &at);
    if (rc || (rc = mcdc_sim_cli_time(a, "begin-at", &begin))) return rc;
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    mcdc_sim_exec_result r;
    if (mcdc_sim_exec(sim, a->pos[1], begin, at, &r) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    char l[MCDC_LSN_STRLEN], t[MCDC_TIME_STRLEN];
    mcdc_time_format(t, r.commit_us, 3, true);
    if (mcdc_lsn_is_zero(&r.commit_lsn))
        printf("committed at %s: %lld rows, nothing logged for CDC\n", t, (long long)r.n_rows);
    else
        printf("committed at %s, commit LSN %s: %lld rows, %lld change rows (visible after a capture scan)\n", t,
               mcdc_lsn_format(l, &r.commit_lsn), (long long)r.n_rows, (long long)r.n_changes);
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_exec = {
    "sim exec", "run INSERT/UPDATE/DELETE statements as one transaction", "DB STATEMENTS", 2, 2, opts,
    "  mssql-cdc sim exec demo.db --at 2026-10-01T14:00:00 \\\n"
    "    \"INSERT INTO dbo.orders VALUES (1, N'Ada', 12.50, '2026-10-01 13:59:00')\"",
    run,
};
