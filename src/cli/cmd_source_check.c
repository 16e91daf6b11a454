/*
 * cli/cmd_source_check.c: `source check`: the read-only preflight of a SQL Server source
 * (mcdc_mssql_check). Prints each finding on one line, with what to do about a problem on the
 * next; exit 0 when a stream can run, 3 when not, 2 for bad usage (a bad connection string
 * included). The source string is shown only with its password masked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/mssql.h"
#include "mcdc/source.h"
#include "mcdc/value.h"

static const mcdc_opt opts[] = {
    { "source", 0, MCDC_OPT_VALUE, "SRC", "odbc:CONNECTION-STRING or @FILE (default $MSSQL_CDC_SOURCE)" },
    { "capture-instance", 0, MCDC_OPT_LIST, "CI", "check this capture instance (default: every one the login can see)" },
    { "format", 0, MCDC_OPT_VALUE, "text|json", "output format (default text)" },
    { 0 }
};

static void json_str(const char *s)
{
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    if (mcdc_json_quote(&b, s, strlen(s)) == 0) fputs(b.ptr, stdout);
    mcdc_buf_dispose(&b);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    const char *fmt = mcdc_cli_get(a, "format");
    bool json = fmt && !strcmp(fmt, "json");
    if (fmt && !json && strcmp(fmt, "text"))
        return mcdc_cli_usage_error(a->cmd, "--format %s: expected text or json", fmt);
    const char *spec = mcdc_cli_get(a, "source");
    if (!spec) spec = getenv("MSSQL_CDC_SOURCE");
    if (!spec || !*spec) return mcdc_cli_usage_error(a->cmd, "no source: pass --source or set MSSQL_CDC_SOURCE");
    int n_ci = 0;
    const char *const *cis = mcdc_cli_list(a, "capture-instance", &n_ci);
    mcdc_source *src = NULL;
    if (mcdc_source_open(&src, spec) < 0) return mcdc_cli_fail();
    mcdc_check_report r;
    int rc = mcdc_mssql_check(&r, src, cis, (size_t)n_ci);
    if (rc < 0) {
        mcdc_source_close(src);
        return mcdc_cli_fail();
    }
    if (json) {
        printf("{\"source\":");
        json_str(src->description);
        printf(",\"ok\":%s,\"items\":[", r.ok ? "true" : "false");
        for (size_t i = 0; i < r.n_items; i++) {
            printf("%s{\"what\":", i ? "," : "");
            json_str(r.items[i].what);
            printf(",\"ok\":%s,\"found\":", r.items[i].ok ? "true" : "false");
            json_str(r.items[i].found);
            printf(",\"fix\":");
            if (r.items[i].fix[0]) json_str(r.items[i].fix);
            else printf("null");
            printf("}");
        }
        printf("]}\n");
    } else {
        printf("source %s\n", src->description);
        for (size_t i = 0; i < r.n_items; i++) {
            const mcdc_check_item *it = &r.items[i];
            printf("%-4s %s: %s\n", it->ok ? "ok" : "FAIL", it->what, it->found);
            if (it->fix[0]) printf("     %s: %s\n", it->ok ? "note" : "fix", it->fix);
        }
        printf("%s\n", r.ok ? "a stream can run" : "a stream cannot run until the FAIL lines are fixed");
    }
    bool ok = r.ok;
    mcdc_check_report_free(&r);
    mcdc_source_close(src);
    fflush(stdout);
    return ok ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_source_check = {
    "source check",
    "read-only preflight of a SQL Server source: what a stream needs, and what to fix",
    "",
    0, 0, opts,
    "mssql-cdc source check --source @/etc/mssql-cdc/shop.odbc --capture-instance dbo_orders\n"
    "mssql-cdc source check --source 'odbc:Server=db;Database=shop;UID=cdc_reader;PWD=...' --format json",
    run
};
