/*
 * cli/cmd_finalization_show.c: `finalization show`: the rows of a control table, all of
 * them or one, as text, one JSON document or JSON lines.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fin_common.h"
#include "mcdc/finalize.h"

static const mcdc_opt opts[] = {
    { "control", 0, MCDC_OPT_REQUIRED, "NAME", "the control table" },
    { "table",   0, MCDC_OPT_VALUE, "NAME", "only this row (exit 2 when it does not exist)" },
    { "format",  0, MCDC_OPT_VALUE, "text|json|jsonl", "output format (default text)" },
    { 0 }
};

static int print_rows(const mcdc_control_row *rows, size_t n, const char *fmt)
{
    const mcdc_schema *s = mcdc_control_schema();
    mcdc_buf b = MCDC_BUF_INIT((size_t)1 << 30);
    int rc = 0;
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (!strcmp(fmt, "text")) {
        for (size_t c = 0; c < s->n_cols; c++)
            printf("%s%s", c ? "\t" : "", s->cols[c].name);
        printf("\n");
    } else if (!strcmp(fmt, "json")) {
        printf("[");
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        b.len = 0;
        if (!strcmp(fmt, "text")) {
            mcdc_value v[MCDC_CONTROL_NCOLS];
            char lsn[MCDC_LSN_STRLEN];
            mcdc_control_row_values(&rows[i], v, lsn);
            for (size_t c = 0; c < s->n_cols && rc == 0; c++) {
                if (c)
                    rc = mcdc_buf_put(&b, "\t", 1);
                if (rc == 0)
                    rc = mcdc_value_to_text(&b, &s->cols[c], &v[c]);
            }
        } else {
            rc = mcdc_control_row_to_json(&b, &rows[i]);
        }
        if (rc == 0)
            printf("%s%.*s%s", (!strcmp(fmt, "json") && i) ? "," : "", (int)b.len,
                   b.ptr ? b.ptr : "", strcmp(fmt, "json") ? "\n" : "");
    }
    if (!strcmp(fmt, "json"))
        printf("]\n");
    mcdc_buf_dispose(&b);
    return rc;
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    const char *control = mcdc_cli_get(a, "control"), *table = mcdc_cli_get(a, "table");
    const char *fmt = mcdc_cli_get(a, "format");
    if (fin_check_format(a->cmd, fmt, true) != 0)
        return MCDC_EXIT_USAGE;
    char path[FIN_PATH_MAX];
    if (fin_resolve(path, ctx, control) < 0)
        return mcdc_cli_fail();
    mcdc_control_row *rows = NULL, one;
    size_t n = 0;
    int rc;
    if (table) {
        if (mcdc_control_get(&one, path, table) < 0)
            return mcdc_cli_fail();
        rc = print_rows(&one, 1, fmt ? fmt : "text");
        mcdc_control_row_clear(&one);
    } else {
        if (mcdc_control_read_all(&rows, &n, path) < 0)
            return mcdc_cli_fail();
        rc = print_rows(rows, n, fmt ? fmt : "text");
        mcdc_control_rows_free(rows, n);
    }
    return rc < 0 ? mcdc_cli_fail() : MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_finalization_show = {
    "finalization show",
    "print the verdicts of a control table",
    "",
    0, 0, opts,
    "mssql-cdc finalization show --control ops.table_finalization\n"
    "mssql-cdc finalization show --control ops.table_finalization --table bronze.orders --format json",
    run
};
