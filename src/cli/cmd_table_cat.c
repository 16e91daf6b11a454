/*
 * cli/cmd_table_cat.c: `mssql-cdc table cat NAME`: every row of a Delta table (latest or
 * --as-of-version N). Formats as `parquet cat`: text (a header of column names, then one
 * tab-separated line per row), jsonl (architecture §7; nested columns as JSON), csv (RFC
 * 4180 with a header; nested columns as their JSON text). Rows come file by file in path
 * order; deleted rows (deletion vectors) are left out; partition values come from the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "table_common.h"
#include "mcdc/delta.h"

static const mcdc_opt opts[] = {
    { "as-of-version", 0, MCDC_OPT_VALUE, "N", "the table at version N (default latest)" },
    { "format", 0, MCDC_OPT_VALUE, "text|jsonl|csv", "output format (default text)" },
    { 0 }
};

static int put_header(mcdc_buf *out, const mcdc_schema *s, bool csv)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->n_cols; i++) {
        if (i)
            rc = mcdc_buf_putc(out, csv ? ',' : '\t');
        if (rc == 0 && csv) {
            mcdc_column c = { s->cols[i].name, MCDC_TYPE_STRING, 0, 0, false };
            mcdc_value v = { .is_null = false };
            v.v.s.ptr = s->cols[i].name;
            v.v.s.len = strlen(s->cols[i].name);
            rc = mcdc_value_to_csv(out, &c, &v);
        } else if (rc == 0) {
            rc = mcdc_buf_puts(out, s->cols[i].name);
        }
    }
    return rc ? rc : mcdc_buf_putc(out, '\n');
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, a->pos[0]);
    if (ec)
        return ec;
    const char *fmt = mcdc_cli_table_format(a, "text|jsonl|csv");
    if (!fmt)
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
    const mcdc_schema *s = mcdc_delta_scan_schema(scan);
    bool jsonl = !strcmp(fmt, "jsonl"), csv = !strcmp(fmt, "csv");
    mcdc_buf out = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int rc = jsonl ? 0 : put_header(&out, s, csv);
    const mcdc_value *row;
    while (rc == 0 && (rc = mcdc_delta_scan_next(scan, &row)) == 1) {
        rc = jsonl ? mcdc_buf_putc(&out, '{') : 0;
        for (size_t i = 0; rc == 0 && i < s->n_cols; i++) {
            const mcdc_column *c = &s->cols[i];
            if (i)
                rc = mcdc_buf_putc(&out, jsonl || csv ? ',' : '\t');
            if (rc)
                break;
            if (jsonl) {
                rc = mcdc_json_quote(&out, c->name, strlen(c->name));
                if (rc == 0)
                    rc = mcdc_buf_putc(&out, ':');
                if (rc == 0 && mcdc_delta_scan_is_nested(scan, i) && !row[i].is_null)
                    rc = mcdc_buf_put(&out, row[i].v.s.ptr, row[i].v.s.len);
                else if (rc == 0)
                    rc = mcdc_value_to_json(&out, c, &row[i]);
            } else if (csv) {
                rc = mcdc_value_to_csv(&out, c, &row[i]);
            } else {
                rc = mcdc_value_to_text(&out, c, &row[i]);
            }
        }
        if (rc == 0 && jsonl)
            rc = mcdc_buf_putc(&out, '}');
        if (rc == 0)
            rc = mcdc_buf_putc(&out, '\n');
        if (rc == 0 && out.len > (1 << 16)) {
            fwrite(out.ptr, 1, out.len, stdout);
            mcdc_buf_clear(&out);
        }
    }
    if (out.len)
        fwrite(out.ptr, 1, out.len, stdout);
    int exit_code = fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
    mcdc_buf_dispose(&out);
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
