/*
 * cli/cmd_finalization_is_final.c: `finalization is-final`: an orchestrator sensor.
 * Exit 0 when the period ending at --period-end is complete, 1 when not yet, 2 when the
 * control table or the row does not exist (a typo must not keep a sensor waiting).
 */
#include <stdio.h>

#include "cli.h"
#include "fin_common.h"
#include "mcdc/finalize.h"

static const mcdc_opt opts[] = {
    { "control",    0, MCDC_OPT_VALUE, "NAME", "the control table" },
    { "table",      0, MCDC_OPT_VALUE, "NAME", "the row's key" },
    { "period-end", 0, MCDC_OPT_VALUE, "T", "end of the period [start, end) to check, UTC unless a zone is given" },
    { "quiet",     'q', MCDC_OPT_SWITCH, NULL, "print nothing; the exit code says it" },
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    const char *control = mcdc_cli_get(a, "control"), *table = mcdc_cli_get(a, "table");
    const char *pe = mcdc_cli_get(a, "period-end");
    if (!control || !table || !pe)
        return mcdc_cli_usage_error(a->cmd, "--control, --table and --period-end are required");
    int64_t end_us;
    if (mcdc_time_parse(&end_us, pe) < 0)
        return mcdc_cli_fail();
    char path[FIN_PATH_MAX];
    if (fin_resolve(path, ctx, control) < 0)
        return mcdc_cli_fail();
    mcdc_verdict v;
    if (mcdc_control_finalized_until(&v, path, table) < 0)
        return mcdc_cli_fail();
    bool final = mcdc_finalize_covers(&v, end_us);
    if (!mcdc_cli_has(a, "quiet")) {
        char until[MCDC_TIME_STRLEN], e[MCDC_TIME_STRLEN];
        mcdc_time_format(e, end_us, 0, false);
        if (v.has)
            mcdc_time_format(until, v.until_us, 0, false);
        printf("%s: %s (period end %s, finalized_until %s)\n", table,
               final ? "final" : "not final yet", e, v.has ? until : "none");
    }
    return final ? MCDC_EXIT_OK : MCDC_EXIT_NO;
}

const mcdc_cli_command mcdc_cmd_finalization_is_final = {
    "finalization is-final",
    "exit 0 when a period is complete, 1 when not yet, 2 when the row does not exist",
    "",
    0, 0, opts,
    "mssql-cdc finalization is-final --control ops.table_finalization --table bronze.orders \\\n"
    "    --period-end 2026-10-01T15:00:00",
    run
};
