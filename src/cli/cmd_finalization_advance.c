/*
 * cli/cmd_finalization_advance.c: `finalization advance`: move a table's verdict from an
 * explicit end offset or from a stream checkpoint's last committed batch (the separate
 * job for places where the stream's tracker cannot run). Every argument is checked
 * before anything is written.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fin_common.h"
#include "mcdc/finalize.h"
#include "mcdc/pipeline.h"

static const mcdc_opt opts[] = {
    { "control",       0, MCDC_OPT_REQUIRED, "NAME", "the control table (created on first use)" },
    { "table",         0, MCDC_OPT_REQUIRED, "NAME", "the row's key: the table name exactly as consumers use it" },
    { "end-lsn",       0, MCDC_OPT_VALUE, "0x…", "end offset LSN of a committed batch (with --end-commit-ts)" },
    { "end-commit-ts", 0, MCDC_OPT_VALUE, "T", "commit time of that LSN, UTC unless a zone is given" },
    { "checkpoint",    0, MCDC_OPT_VALUE, "DIR", "take the end offset of the checkpoint's last committed batch" },
    { "granularity",   0, MCDC_OPT_VALUE, "minute|hour|day", "the period (default hour)" },
    { "format",        0, MCDC_OPT_VALUE, "text|json", "output format (default text)" },
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    const mcdc_cli_command *cmd = a->cmd;
    const char *control = mcdc_cli_get(a, "control"), *table = mcdc_cli_get(a, "table");
    const char *lsn = mcdc_cli_get(a, "end-lsn"), *ts = mcdc_cli_get(a, "end-commit-ts");
    const char *ck = mcdc_cli_get(a, "checkpoint"), *fmt = mcdc_cli_get(a, "format");
    mcdc_granularity g;
    if (!*table)
        return mcdc_cli_usage_error(cmd, "--table is empty: give the row's key");
    if (fin_check_format(cmd, fmt, false) != 0)
        return MCDC_EXIT_USAGE;
    if (mcdc_finalize_granularity_parse(&g, mcdc_cli_get(a, "granularity")) < 0)
        return mcdc_cli_fail();
    if (ck && (lsn || ts))
        return mcdc_cli_usage_error(cmd, "give either --checkpoint or --end-lsn with --end-commit-ts, not both");
    if (!ck && (!lsn || !ts))
        return mcdc_cli_usage_error(cmd, "give --end-lsn and --end-commit-ts, or --checkpoint");

    mcdc_offset end;
    memset(&end, 0, sizeof end);
    int64_t batch = -1;
    if (ck) {
        if (mcdc_checkpoint_check_target(ck, table) < 0 ||
            mcdc_checkpoint_read_last(&end, &batch, ck) < 0)
            return mcdc_cli_fail();
        if (!end.has_commit_ts) {
            return mcdc_cli_error(MCDC_EXIT_USAGE, "nothing to finalize until a batch ends on a mapped commit",
                                  "checkpoint %s: batch %lld's end offset has no commit time", ck,
                                  (long long)batch);
        }
    } else {
        if (mcdc_lsn_parse(&end.lsn, lsn) < 0 || mcdc_time_parse(&end.commit_ts_us, ts) < 0)
            return mcdc_cli_fail();
        end.has_commit_ts = true;
    }
    char path[FIN_PATH_MAX];
    if (fin_resolve(path, ctx, control) < 0)
        return mcdc_cli_fail();
    mcdc_advance_result r;
    if (mcdc_control_advance(path, table, &end, g, &r) < 0)
        return mcdc_cli_fail();

    char until[MCDC_TIME_STRLEN] = "", endts[MCDC_TIME_STRLEN], l[MCDC_LSN_STRLEN];
    if (r.verdict.has)
        mcdc_time_format(until, r.verdict.until_us, 0, false);
    mcdc_time_format(endts, end.commit_ts_us, 3, false);
    mcdc_lsn_format(l, &end.lsn);
    if (fmt && !strcmp(fmt, "json")) {
        printf("{\"table_name\":");
        fin_print_json_string(table);
        printf(",\"finalized_until\":%s%s%s,\"moved\":%s,\"end_lsn\":\"%s\",\"end_commit_ts\":\"%s\","
               "\"granularity\":\"%s\",\"control_version\":%lld,\"conflicts\":%d,\"rebases\":%d}\n",
               r.verdict.has ? "\"" : "", r.verdict.has ? until : "null", r.verdict.has ? "\"" : "",
               r.wrote ? "true" : "false", l, endts, mcdc_granularity_name(g),
               (long long)r.version, r.n_conflicts, r.n_rebases);
    } else {
        printf("%s: finalized_until %s (%s; end offset %s at %s, %s)\n", table,
               r.verdict.has ? until : "none", r.wrote ? "moved" : "unchanged", l, endts,
               mcdc_granularity_name(g));
    }
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_finalization_advance = {
    "finalization advance",
    "move a table's verdict from a committed end offset or a checkpoint",
    "",
    0, 0, opts,
    "mssql-cdc finalization advance --control ops.table_finalization --table bronze.orders \\\n"
    "    --end-lsn 0x0000002D000001A00003 --end-commit-ts 2026-10-01T15:10:00\n"
    "mssql-cdc finalization advance --control ops.table_finalization --table bronze.orders \\\n"
    "    --checkpoint /data/checkpoints/orders",
    run
};
