/*
 * cli/table_common.h: what the `table` commands share: resolving NAME (a dotted name in
 * the warehouse, or a path) and checking --format against the allowed spellings.
 */
#ifndef MCDC_CLI_TABLE_COMMON_H
#define MCDC_CLI_TABLE_COMMON_H

#include <string.h>

#include "cli.h"
#include "mcdc/warehouse.h"

/* Resolve NAME into @p out; prints the error and returns an exit code, or 0. */
static inline int mcdc_cli_table_path(char out[MCDC_PATH_MAX], const mcdc_cli_ctx *ctx,
                                      const char *name)
{
    if (mcdc_warehouse_resolve(out, ctx->warehouse, name) < 0)
        return mcdc_cli_fail();
    return 0;
}

/* The --format value, defaulting to "text", checked against a '|'-separated list. */
static inline const char *mcdc_cli_table_format(const mcdc_cli_args *a, const char *allowed)
{
    const char *f = mcdc_cli_get(a, "format");
    if (!f)
        return "text";
    size_t n = strlen(f);
    for (const char *p = allowed; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, f, n) == 0)
            return f;
        p += len + (bar ? 1 : 0);
    }
    return NULL;
}

#endif
