/*
 * cli/cmd_table_checkpoint.c: `mssql-cdc table checkpoint NAME`: write a checkpoint of the
 * latest version now (writers also do it every delta.checkpointInterval commits) and
 * clean up log files past the log retention. A version that has its checkpoint already
 * (a writer's background one) is not written again.
 */
#include <stdio.h>

#include "cli.h"
#include "table_common.h"
#include "mcdc/delta.h"

static const mcdc_opt opts[] = {
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args)
{
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
    if (ec)
        return ec;
    int64_t v;
    bool written;
    if (mcdc_delta_latest_version(&v, path) < 0 || mcdc_delta_checkpoint(path, v, &written) < 0)
        return mcdc_cli_fail();
    if (written)
        printf("checkpoint written at version %lld\n", (long long)v);
    else
        printf("checkpoint at version %lld already there\n", (long long)v);
    return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_table_checkpoint = {
    "table checkpoint",
    "write a checkpoint of a Delta table's latest version",
    "NAME",
    1, 1, opts,
    "mssql-cdc table checkpoint bronze.orders",
    run
};
