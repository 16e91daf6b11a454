/*
 * cli/cmd_finalization_freshness.c: `finalization freshness`: the verdict's age, the age
 * of the newest end offset the facts table recorded for the table, and the source lag,
 * so an alert can tell a held verdict from a stopped stream. With --max-age it is also a
 * check: exit 1 when the verdict's age (verdict_age_seconds, as printed) is greater than
 * the limit, or there is no verdict yet; the report is printed either way.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fin_common.h"
#include "mcdc/finalize.h"
#include "mcdc/source.h"

static const mcdc_opt opts[] = {
    { "control", 0, MCDC_OPT_REQUIRED, "NAME", "the control table" },
    { "table",   0, MCDC_OPT_REQUIRED, "NAME", "the row's key (also the facts rows' target)" },
    { "facts",   0, MCDC_OPT_VALUE, "NAME", "the facts table the stream writes" },
    { "source",  0, MCDC_OPT_VALUE, "SRC", "measure against this source's clock (sim:PATH, odbc:..., @FILE)" },
    { "format",  0, MCDC_OPT_VALUE, "text|json", "output format (default text)" },
    { "max-age", 0, MCDC_OPT_VALUE, "DURATION", "exit 1 when the verdict is older than this (or there is none)" },
    { 0 }
};

static void ts_json(const char *key, bool has, int64_t us, bool comma)
{
    char t[MCDC_TIME_STRLEN];
    if (has)
        printf("\"%s\":\"%s\"%s", key, mcdc_time_format(t, us, 6, false), comma ? "," : "");
    else
        printf("\"%s\":null%s", key, comma ? "," : "");
}

static void secs_json(const char *key, bool has, int64_t us, bool comma)
{
    if (has)
        printf("\"%s\":%.3f%s", key, (double)us / 1e6, comma ? "," : "");
    else
        printf("\"%s\":null%s", key, comma ? "," : "");
}

static void ts_text(const char *label, bool has, int64_t us, bool age, int64_t age_us)
{
    char t[MCDC_TIME_STRLEN];
    if (!has) {
        printf("%-24s none\n", label);
        return;
    }
    printf("%-24s %s", label, mcdc_time_format(t, us, 3, false));
    if (age)
        printf("  (age %.1f s)", (double)age_us / 1e6);
    printf("\n");
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    const char *control = mcdc_cli_get(a, "control"), *table = mcdc_cli_get(a, "table");
    const char *facts = mcdc_cli_get(a, "facts"), *source = mcdc_cli_get(a, "source");
    const char *fmt = mcdc_cli_get(a, "format");
    if (fin_check_format(a->cmd, fmt, false) != 0)
        return MCDC_EXIT_USAGE;
    int64_t max_age_us = -1;
    if (mcdc_cli_get(a, "max-age") && mcdc_duration_parse(&max_age_us, mcdc_cli_get(a, "max-age")) < 0)
        return mcdc_cli_fail();
    char path[FIN_PATH_MAX], fpath[FIN_PATH_MAX];
    if (fin_resolve(path, ctx, control) < 0 || (facts && fin_resolve(fpath, ctx, facts) < 0))
        return mcdc_cli_fail();
    mcdc_source *src = NULL;
    if (source && mcdc_source_open(&src, source) < 0)
        return mcdc_cli_fail();
    mcdc_freshness f;
    int rc = mcdc_control_freshness(&f, path, table, facts ? fpath : NULL, src);
    mcdc_source_close(src);
    if (rc < 0)
        return mcdc_cli_fail();
    bool stale = max_age_us >= 0 && (!f.verdict.has || f.verdict_age_us > max_age_us);
    if (fmt && !strcmp(fmt, "json")) {
        printf("{\"table_name\":");
        fin_print_json_string(table);
        printf(",");
        ts_json("now", true, f.now_us, true);
        printf("\"clock\":\"%s\",", f.now_is_source ? "source" : "host");
        ts_json("finalized_until", f.verdict.has, f.verdict.until_us, true);
        secs_json("verdict_age_seconds", f.verdict.has, f.verdict_age_us, true);
        ts_json("updated_at", f.has_updated_at, f.updated_at_us, true);
        ts_json("facts_end_commit_ts", f.has_facts_end, f.facts_end_commit_ts_us, true);
        secs_json("facts_end_age_seconds", f.has_facts_end, f.facts_end_age_us, true);
        ts_json("facts_written_at", f.has_facts_written, f.facts_written_at_us, true);
        ts_json("source_max_commit_ts", f.has_source, f.source_max_commit_ts_us, true);
        secs_json("source_lag_seconds", f.has_source, f.source_lag_us, max_age_us >= 0);
        if (max_age_us >= 0)
            printf("\"max_age_seconds\":%.3f,\"stale\":%s", (double)max_age_us / 1e6, stale ? "true" : "false");
        printf("}\n");
    } else {
        printf("%-24s %s\n", "table", table);
        ts_text(f.now_is_source ? "now (source clock)" : "now (host clock)", true, f.now_us, false, 0);
        ts_text("finalized_until", f.verdict.has, f.verdict.until_us, true, f.verdict_age_us);
        ts_text("updated_at", f.has_updated_at, f.updated_at_us, false, 0);
        if (facts) {
            ts_text("facts end_commit_ts", f.has_facts_end, f.facts_end_commit_ts_us, true,
                    f.facts_end_age_us);
            ts_text("facts written_at", f.has_facts_written, f.facts_written_at_us, false, 0);
        }
        ts_text("source max commit", f.has_source, f.source_max_commit_ts_us, true, f.source_lag_us);
        if (max_age_us >= 0)
            printf("%-24s %s (max age %.1f s)\n", "verdict", stale ? "stale" : "fresh", (double)max_age_us / 1e6);
    }
    return stale ? MCDC_EXIT_NO : MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_finalization_freshness = {
    "finalization freshness",
    "how old a table's verdict is, next to the stream's and the source's positions",
    "",
    0, 0, opts,
    "mssql-cdc finalization freshness --control ops.table_finalization --table bronze.orders \\\n"
    "    --facts ops.ingestion_facts --format json\n"
    "mssql-cdc finalization freshness --control ops.table_finalization --table bronze.orders \\\n"
    "    --max-age 2h",
    run
};
