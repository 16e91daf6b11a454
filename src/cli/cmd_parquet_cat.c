/*
 * cli/cmd_parquet_cat.c: `mssql-cdc parquet cat FILE`: print a Parquet file's rows.
 *
 * Formats: text (a header line of column names, then one line per row, tab-separated,
 * NULL as "NULL"), jsonl (one object per row as in architecture §7; nested columns as
 * JSON objects and arrays, maps as arrays of {"key","value"}), csv (RFC 4180 with a
 * header; nested columns as their JSON text). Reference: docs/reference/cli-parquet.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/buf.h"
#include "mcdc/parquet.h"
#include "mcdc/value.h"

static const mcdc_opt opts[] = {
    { "format", 0, MCDC_OPT_VALUE, "text|jsonl|csv", "output format (default text)" },
    { "columns", 0, MCDC_OPT_VALUE, "A,B", "print only these top-level columns, in this order" },
    { "limit", 'n', MCDC_OPT_VALUE, "N", "stop after N rows" },
    { 0 }
};

static int put_header(mcdc_buf *out, const mcdc_schema *s, char sep, bool csv)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->n_cols; i++) {
        if (i)
            rc = mcdc_buf_putc(out, sep);
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
    (void)ctx;
    const char *fmt = mcdc_cli_get(a, "format") ? mcdc_cli_get(a, "format") : "text";
    if (strcmp(fmt, "text") && strcmp(fmt, "jsonl") && strcmp(fmt, "csv"))
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
            fprintf(stderr, "mssql-cdc: error: out of memory\n");
            return MCDC_EXIT_RUNTIME;
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
    const mcdc_schema *s = mcdc_parquet_reader_schema(r);
    bool jsonl = !strcmp(fmt, "jsonl"), csv = !strcmp(fmt, "csv");
    mcdc_buf out = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    if (!jsonl)
        rc = put_header(&out, s, csv ? ',' : '\t', csv);
    const mcdc_value *row;
    long long n_rows = 0;
    while (rc == 0 && (limit < 0 || n_rows < limit) && (rc = mcdc_parquet_reader_next(r, &row)) == 1) {
        rc = 0;
        n_rows++;
        if (jsonl)
            rc = mcdc_buf_putc(&out, '{');
        for (size_t i = 0; rc == 0 && i < s->n_cols; i++) {
            const mcdc_column *c = &s->cols[i];
            const mcdc_value *v = &row[i];
            if (i)
                rc = mcdc_buf_putc(&out, jsonl || csv ? ',' : '\t');
            if (rc)
                break;
            if (jsonl) {
                rc = mcdc_json_quote(&out, c->name, strlen(c->name));
                if (rc == 0)
                    rc = mcdc_buf_putc(&out, ':');
                if (rc == 0 && mcdc_parquet_reader_is_nested(r, i) && !v->is_null)
                    rc = mcdc_buf_put(&out, v->v.s.ptr, v->v.s.len);
                else if (rc == 0)
                    rc = mcdc_value_to_json(&out, c, v);
            } else if (csv) {
                rc = mcdc_value_to_csv(&out, c, v);
            } else {
                rc = mcdc_value_to_text(&out, c, v);
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
    fflush(stdout);
    mcdc_buf_dispose(&out);
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
