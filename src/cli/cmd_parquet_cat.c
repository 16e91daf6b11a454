/*
 * cli/cmd_parquet_cat.c: `mssql-cdc parquet cat FILE`: print a Parquet file's rows.
 *
 * Formats (printed by rows.h, as `table cat` does): text (a header line of column names,
 * then one line per row, tab-separated, NULL as "NULL"), jsonl (one object per row as in
 * architecture §7; nested columns as JSON objects and arrays, maps as arrays of
 * {"key","value"}), csv (RFC 4180 with a header; nested columns as their JSON text).
 * Reference: docs/reference/cli-parquet.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/parquet.h"
#include "rows.h"

static const mcdc_opt opts[] = {
    { "format", 0, MCDC_OPT_VALUE, "text|jsonl|csv", "output format (default text)" },
    { "columns", 0, MCDC_OPT_VALUE, "A,B", "print only these top-level columns, in this order" },
    { "limit", 'n', MCDC_OPT_VALUE, "N", "stop after N rows" },
    { 0 }
};

static bool is_nested(const void *r, size_t i)
{
    return mcdc_parquet_reader_is_nested(r, i);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    const char *fmt = mcdc_cli_get(a, "format");
    int format = mcdc_cli_rows_format_named(fmt);
    if (format < 0)
        return mcdc_cli_usage_error(a->cmd, "--format must be text, jsonl or csv, not '%s'", fmt);
    long long limit = -1;
    if (mcdc_cli_get(a, "limit")) {
        char *end;
        limit = strtoll(mcdc_cli_get(a, "limit"), &end, 10);
        if (*end || limit < 0)
            return mcdc_cli_usage_error(a->cmd, "--limit needs a count, not '%s'", mcdc_cli_get(a, "limit"));
    }
    mcdc_parquet_reader *r;
    if (mcdc_parquet_reader_open(&r, a->pos[0], NULL) < 0)
        return mcdc_cli_fail();
    int rc = 0, exit_code = MCDC_EXIT_OK;
    if (mcdc_cli_get(a, "columns")) {
        char *list = strdup(mcdc_cli_get(a, "columns"));
        size_t cap = 1;
        for (const char *p = list ? list : ""; *p; p++)
            cap += *p == ',';
        const char **names = calloc(cap, sizeof *names);
        size_t n = 0;
        if (!list || !names) {
            free(list);
            free(names);
            mcdc_parquet_reader_free(r);
            return mcdc_cli_error(MCDC_EXIT_RUNTIME, NULL, "out of memory");
        }
        for (char *save = NULL, *t = strtok_r(list, ",", &save); t && n < cap; t = strtok_r(NULL, ",", &save))
            names[n++] = t;
        rc = mcdc_parquet_reader_select(r, names, n);
        free(names);
        free(list);
        if (rc < 0) {
            exit_code = rc == MCDC_ENOTFOUND ? (mcdc_cli_fail(), MCDC_EXIT_USAGE) : mcdc_cli_fail();
            mcdc_parquet_reader_free(r);
            return exit_code;
        }
    }
    mcdc_cli_rows out;
    rc = mcdc_cli_rows_begin(&out, stdout, (mcdc_cli_rows_format)format,
                             mcdc_parquet_reader_schema(r), is_nested, r);
    const mcdc_value *row;
    long long n_rows = 0;
    while (rc == 0 && (limit < 0 || n_rows < limit) && (rc = mcdc_parquet_reader_next(r, &row)) == 1) {
        n_rows++;
        rc = mcdc_cli_rows_put(&out, row);
    }
    int end_rc = mcdc_cli_rows_end(&out);
    if (rc == 0)
        rc = end_rc;
    if (rc < 0)
        exit_code = mcdc_cli_fail();
    mcdc_parquet_reader_free(r);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_parquet_cat = {
    "parquet cat",
    "print the rows of a Parquet file",
    "FILE",
    1, 1, opts,
    "mssql-cdc parquet cat part-0001.parquet --format jsonl --columns id,name",
    run
};
