/*
 * cli/cmd_table_history.c: `mssql-cdc table history NAME`: one line per version still in
 * the log: version, commit timestamp, operation, userMetadata and txn actions.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "table_common.h"
#include "mcdc/delta.h"
#include "mcdc/time.h"

static const mcdc_opt opts[] = {
    { "format", 0, MCDC_OPT_VALUE, "text|jsonl", "output format (default text)" },
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args)
{
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
    if (ec)
        return ec;
    const char *fmt = mcdc_cli_table_format(args, "text|jsonl");
    if (!fmt)
        return mcdc_cli_usage_error(args->cmd, "--format must be text or jsonl");
    mcdc_delta_history_entry *h;
    size_t n;
    if (mcdc_delta_history(&h, &n, path) < 0)
        return mcdc_cli_fail();
    bool jsonl = strcmp(fmt, "jsonl") == 0;
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    for (size_t i = 0; i < n; i++) {
        char ts[MCDC_TIME_STRLEN];
        mcdc_time_format(ts, h[i].timestamp_ms * 1000, 3, true);
        mcdc_buf_clear(&b);
        if (jsonl) {
            mcdc_buf_printf(&b, "{\"version\":%lld,\"timestamp\":\"%s\",\"operation\":",
                            (long long)h[i].version, ts);
            if (h[i].operation)
                mcdc_json_quote(&b, h[i].operation, strlen(h[i].operation));
            else
                mcdc_buf_puts(&b, "null");
            mcdc_buf_puts(&b, ",\"userMetadata\":");
            if (h[i].user_metadata)
                mcdc_json_quote(&b, h[i].user_metadata, strlen(h[i].user_metadata));
            else
                mcdc_buf_puts(&b, "null");
            mcdc_buf_puts(&b, ",\"txn\":[");
            for (size_t k = 0; k < h[i].n_txns; k++) {
                mcdc_buf_puts(&b, k ? ",{\"appId\":" : "{\"appId\":");
                mcdc_json_quote(&b, h[i].txns[k].app_id, strlen(h[i].txns[k].app_id));
                mcdc_buf_printf(&b, ",\"version\":%lld}", (long long)h[i].txns[k].version);
            }
            mcdc_buf_puts(&b, "]}");
        } else {
            mcdc_buf_printf(&b, "%-6lld %s  %-14s", (long long)h[i].version, ts,
                            h[i].operation ? h[i].operation : "-");
            for (size_t k = 0; k < h[i].n_txns; k++)
                mcdc_buf_printf(&b, "  txn %s=%lld", h[i].txns[k].app_id,
                                (long long)h[i].txns[k].version);
            if (h[i].user_metadata)
                mcdc_buf_printf(&b, "  %s", h[i].user_metadata);
        }
        puts(b.ptr);
    }
    mcdc_buf_dispose(&b);
    mcdc_delta_history_free(h, n);
    return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_table_history = {
    "table history",
    "one line per version of a Delta table: time, operation, txn, userMetadata",
    "NAME",
    1, 1, opts,
    "mssql-cdc table history bronze.orders --format jsonl",
    run
};
