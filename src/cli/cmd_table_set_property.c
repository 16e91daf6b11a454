/*
 * cli/cmd_table_set_property.c: `mssql-cdc table set-property NAME KEY=VALUE`: set a Delta
 * table property this tool knows the consequences of, in one commit.
 *
 * Only delta.enableTypeWidening=true for now: it also adds Delta's typeWidening table
 * feature (protocol reader 3, writer 7), so a bronze table can widen a column when the
 * source's type widens (docs/guides/schema-changes.md). Engines without the feature can
 * no longer read the table afterwards; that is why the stream never sets it by itself.
 * A property already set writes nothing. Any other key or value is refused (exit 2).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "table_common.h"
#include "mcdc/delta.h"

static const mcdc_opt opts[] = {
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args)
{
    const char *kv = args->pos[1];
    const char *eq = strchr(kv, '=');
    if (!eq || strncmp(kv, "delta.enableTypeWidening", (size_t)(eq - kv)) != 0 ||
        eq - kv != (long)strlen("delta.enableTypeWidening"))
        return mcdc_cli_usage_error(args->cmd, "property '%.*s': not one this command sets "
                                    "(delta.enableTypeWidening=true)",
                                    eq ? (int)(eq - kv) : (int)strlen(kv), kv);
    if (strcasecmp(eq + 1, "true") != 0)
        return mcdc_cli_usage_error(args->cmd, "delta.enableTypeWidening=%s: only true is "
                                    "supported (a table feature is not removed)", eq + 1);
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
    if (ec)
        return ec;
    mcdc_delta_commit_result res = { 0 };
    if (mcdc_delta_enable_type_widening(path, &res) < 0)
        return mcdc_cli_fail();
    printf("%s: delta.enableTypeWidening=true (version %lld, feature typeWidening)\n",
           args->pos[0], (long long)res.version);
    return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_table_set_property = {
    "table set-property",
    "set a Delta table property (delta.enableTypeWidening=true: let column types widen)",
    "NAME KEY=VALUE",
    2, 2, opts,
    "mssql-cdc table set-property bronze.orders delta.enableTypeWidening=true",
    run
};
