/*
 * cli/cmd_report.c: `mssql-cdc report`: write the monitoring report (one self-contained
 * HTML page with inline SVG charts) from a facts table and a control table and, with
 * --reconcile, the last reconcile per table from the reconcile report table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/delta.h"
#include "mcdc/fs.h"
#include "mcdc/report.h"
#include "mcdc/warehouse.h"

static const mcdc_opt opts[] = {
    { "facts", 0, MCDC_OPT_VALUE, "NAME", "the facts table the streams write (--facts of stream)" },
    { "control", 0, MCDC_OPT_VALUE, "NAME", "the control table holding the verdicts" },
    { "reconcile", 0, MCDC_OPT_VALUE, "NAME", "the reconcile report table (reconcile --report): the last reconcile per table" },
    { "out", 'o', MCDC_OPT_VALUE, "FILE.html", "write the page here (default: standard output)" },
    { "title", 0, MCDC_OPT_VALUE, "TEXT", "the page's title (default: mssql-cdc report)" },
    { "max-versions", 0, MCDC_OPT_VALUE, "N", "read the verdict history from the newest N control versions (default 2000, 0 for all)" },
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    char facts[MCDC_PATH_MAX], control[MCDC_PATH_MAX];
    const char *f = mcdc_cli_get(a, "facts"), *c = mcdc_cli_get(a, "control"), *out = mcdc_cli_get(a, "out");
    const char *mv = mcdc_cli_get(a, "max-versions");
    long long max_versions = 2000;
    if (!f || !c)
        return mcdc_cli_usage_error(a->cmd, "report needs --facts NAME and --control NAME");
    if (mcdc_cli_local_path_check(a, "out"))
        return MCDC_EXIT_USAGE;
    if (mv) {
        char *end;
        max_versions = strtoll(mv, &end, 10);
        if (end == mv || *end || max_versions < 0)
            return mcdc_cli_usage_error(a->cmd, "--max-versions must be a whole number >= 0, not '%s'", mv);
    }
    if (mcdc_warehouse_resolve(facts, ctx->warehouse, f) < 0 || mcdc_warehouse_resolve(control, ctx->warehouse, c) < 0)
        return mcdc_cli_fail();
    mcdc_report_data d = {0};
    mcdc_buf page = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    const char *rn = mcdc_cli_get(a, "reconcile");
    char rec[MCDC_PATH_MAX];
    if (rn && mcdc_warehouse_resolve(rec, ctx->warehouse, rn) < 0)
        return mcdc_cli_fail();
    int64_t v;
    if (rn && mcdc_delta_latest_version(&v, rec) < 0) {
        if (mcdc_error_last()->code != MCDC_ENOTFOUND)
            return mcdc_cli_fail();
        return mcdc_cli_error(MCDC_EXIT_USAGE, "check --reconcile (reconcile --report NAME creates it on its first run)",
                              "reconcile report table %s does not exist", rn);
    }
    int rc = mcdc_report_load(&d, facts, control, max_versions);
    if (rc == 0 && rn)
        rc = mcdc_report_load_reconcile(&d, rec);
    if (rc == 0) {
        d.title = mcdc_cli_get(a, "title") ? strdup(mcdc_cli_get(a, "title")) : NULL;
        rc = mcdc_report_render(&page, &d);
    }
    if (rc == 0) {
        if (out)
            rc = mcdc_fs_write_atomic(out, page.ptr, page.len);
        else if (fwrite(page.ptr, 1, page.len, stdout) != page.len)
            rc = mcdc_error_set(MCDC_EIO, "standard output: write failed");
    }
    int ec = rc < 0 ? mcdc_cli_fail() : 0;
    if (rc == 0 && out)
        fprintf(stderr, "wrote %s (%zu table%s, %zu facts row%s)\n", out, d.n_verdicts, d.n_verdicts == 1 ? "" : "s",
                d.n_batches, d.n_batches == 1 ? "" : "s");
    mcdc_buf_dispose(&page);
    mcdc_report_data_free(&d);
    return ec;
}

const mcdc_cli_command mcdc_cmd_report = {
    "report", "write an HTML report: rows, lags and verdicts per table, as inline SVG charts",
    "", 0, 0, opts,
    "  mssql-cdc report --facts ops.ingestion_facts --control ops.table_finalization --out report.html\n"
    "  mssql-cdc report --facts ops.ingestion_facts --control ops.table_finalization \\\n"
    "    --reconcile ops.reconcile --out report.html",
    run,
};
