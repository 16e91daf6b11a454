/*
 * cli/cmd_table_cat.c: `mssql-cdc table cat NAME`: every row of a Delta table (latest or
 * --as-of-version N). Formats as `parquet cat` (printed by rows.h): text (a header of column names, then one
 * tab-separated line per row), jsonl (architecture §7; nested columns as JSON), csv (RFC
 * 4180 with a header; nested columns as their JSON text). Rows come file by file in path
 * order; deleted rows (deletion vectors) are left out; partition values come from the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/delta.h"
#include "rows.h"
#include "table_common.h"

static const mcdc_opt opts[] = {
    { "as-of-version", 0, MCDC_OPT_VALUE, "N", "the table at version N (default latest)" },
    { "format", 0, MCDC_OPT_VALUE, "text|jsonl|csv", "output format (default text)" },
    { 0 }
};

static bool is_nested(const void *scan, size_t i)
{
    return mcdc_delta_scan_is_nested(scan, i);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, a->pos[0]);
    if (ec)
        return ec;
    int format = mcdc_cli_rows_format_named(mcdc_cli_get(a, "format"));
    if (format < 0)
        return mcdc_cli_usage_error(a->cmd, "--format must be text, jsonl or csv");
    int64_t version = -1;
    const char *v = mcdc_cli_get(a, "as-of-version");
    if (v) {
        char *end;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || x < 0)
            return mcdc_cli_usage_error(a->cmd, "--as-of-version must be a version number, not '%s'", v);
        version = x;
    }
    mcdc_delta_snapshot *snap;
    if (mcdc_delta_snapshot_open(&snap, path, version) < 0)
        return mcdc_cli_fail();
    mcdc_delta_scan *scan;
    if (mcdc_delta_scan_open(&scan, snap, NULL) < 0) {
        mcdc_delta_snapshot_free(snap);
        return mcdc_cli_fail();
    }
    mcdc_cli_rows out;
    int rc = mcdc_cli_rows_begin(&out, stdout, (mcdc_cli_rows_format)format,
                                 mcdc_delta_scan_schema(scan), is_nested, scan);
    const mcdc_value *row;
    while (rc == 0 && (rc = mcdc_delta_scan_next(scan, &row)) == 1)
        rc = mcdc_cli_rows_put(&out, row);
    int end_rc = mcdc_cli_rows_end(&out);
    if (rc == 0)
        rc = end_rc;
    int exit_code = MCDC_EXIT_OK;
    if (rc < 0)
        exit_code = mcdc_cli_fail();
    mcdc_delta_scan_free(scan);
    mcdc_delta_snapshot_free(snap);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_table_cat = {
    "table cat",
    "print every row of a Delta table (latest or a past version)",
    "NAME",
    1, 1, opts,
    "mssql-cdc table cat bronze.orders --as-of-version 3 --format jsonl",
    run
};
