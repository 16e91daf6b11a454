/*
 * cli/fin_common.h: what the finalization commands share: resolving a table name in the
 * warehouse, checking --format, printing a JSON string and times.
 */
#ifndef MCDC_CLI_FIN_COMMON_H
#define MCDC_CLI_FIN_COMMON_H

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mcdc/buf.h"
#include "mcdc/error.h"
#include "mcdc/time.h"
#include "mcdc/value.h"
#include "mcdc/warehouse.h"

#define FIN_PATH_MAX MCDC_PATH_MAX

/* The directory of table @p name (architecture §4). */
static inline int fin_resolve(char out[FIN_PATH_MAX], const mcdc_cli_ctx *ctx, const char *name)
{
    return mcdc_warehouse_resolve(out, ctx->warehouse, name);
}

/* 0 when @p fmt is NULL, text, json or (when @p jsonl) jsonl; else a usage error. */
static inline int fin_check_format(const mcdc_cli_command *cmd, const char *fmt, bool jsonl)
{
    if (!fmt || !strcmp(fmt, "text") || !strcmp(fmt, "json") || (jsonl && !strcmp(fmt, "jsonl")))
        return 0;
    return mcdc_cli_usage_error(cmd, "--format %s: expected text, json%s", fmt,
                                jsonl ? " or jsonl" : "");
}

static inline void fin_print_json_string(const char *s)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    if (mcdc_json_quote(&b, s, strlen(s)) == 0)
        fwrite(b.ptr, 1, b.len, stdout);
    mcdc_buf_dispose(&b);
}

#endif
