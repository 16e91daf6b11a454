/*
 * cli/cmd_table_vacuum.c: `mssql-cdc table vacuum NAME`: delete data files that no version
 * within the retention references and that are older than the retention.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "table_common.h"
#include "mcdc/delta.h"
#include "mcdc/time.h"

static const mcdc_opt opts[] = {
    { "retention", 0, MCDC_OPT_VALUE, "DURATION", "keep files referenced or written within this (default 7d)" },
    { "force", 0, MCDC_OPT_SWITCH, NULL, "allow a retention under 7 days" },
    { "dry-run", 0, MCDC_OPT_SWITCH, NULL, "count what would be deleted, delete nothing" },
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args)
{
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
    if (ec)
        return ec;
    int64_t retention = -1;
    const char *r = mcdc_cli_get(args, "retention");
    if (r && mcdc_duration_parse(&retention, r) < 0)
        return mcdc_cli_usage_error(args->cmd, "--retention: %s", mcdc_error_last()->message);
    bool dry = mcdc_cli_has(args, "dry-run");
    mcdc_delta_vacuum_result res;
    if (mcdc_delta_vacuum(path, retention, mcdc_cli_has(args, "force"), dry, &res) < 0)
        return mcdc_cli_fail();
    printf("%s %lld files (%lld bytes), kept %lld%s\n", dry ? "would delete" : "deleted",
           (long long)res.n_deleted, (long long)res.bytes_deleted, (long long)res.n_kept,
           res.n_failed ? ", some could not be removed (see the log)" : "");
    if (fflush(stdout) != 0)
        return MCDC_EXIT_RUNTIME;
    return res.n_failed ? MCDC_EXIT_RUNTIME : MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_table_vacuum = {
    "table vacuum",
    "delete data files no version within the retention references",
    "NAME",
    1, 1, opts,
    "mssql-cdc table vacuum bronze.orders --retention 14d",
    run
};
