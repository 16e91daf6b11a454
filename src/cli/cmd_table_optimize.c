/*
 * cli/cmd_table_optimize.c: `mssql-cdc table optimize NAME`: rewrite each partition's small
 * files into files of the target size (one commit, dataChange=false).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "table_common.h"
#include "mcdc/delta.h"

static const mcdc_opt opts[] = {
    { "target-size", 0, MCDC_OPT_VALUE, "BYTES", "target file size, e.g. 134217728, 64M, 1G (default 128M)" },
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args)
{
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
    if (ec)
        return ec;
    int64_t target = 0;
    const char *t = mcdc_cli_get(args, "target-size");
    if (t) {
        char *end;
        long long n = strtoll(t, &end, 10);
        long long mul = !*end ? 1 : !strcmp(end, "K") ? 1024 : !strcmp(end, "M") ? 1 << 20
                                  : !strcmp(end, "G") ? 1 << 30 : -1;
        if (end == t || n <= 0 || mul < 0)
            return mcdc_cli_usage_error(args->cmd, "--target-size must be a byte count (K, M, G allowed), not '%s'", t);
        target = n * mul;
    }
    mcdc_delta_optimize_result r;
    if (mcdc_delta_optimize(path, target, &r) < 0)
        return mcdc_cli_fail();
    if (r.n_removed == 0)
        printf("nothing to compact at version %lld\n", (long long)r.version);
    else
        printf("version %lld: rewrote %lld files into %lld (%lld rows)\n", (long long)r.version,
               (long long)r.n_removed, (long long)r.n_added, (long long)r.n_rows);
    return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_table_optimize = {
    "table optimize",
    "rewrite small data files of a Delta table into files of the target size",
    "NAME",
    1, 1, opts,
    "mssql-cdc table optimize bronze.orders --target-size 64M",
    run
};
