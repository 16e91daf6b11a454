/*
 * cli/cmd_finalization_show.c: `finalization show`: the rows of a control table, all of
 * them or one, as text, one JSON document or JSON lines; with --facts, each row beside the
 * capture-instance switches its table's streams have followed (mcdc_finalize_switches).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fin_common.h"
#include "mcdc/finalize.h"

static const mcdc_opt opts[] = {
    { "control", 0, MCDC_OPT_REQUIRED, "NAME", "the control table" },
    { "table",   0, MCDC_OPT_VALUE, "NAME", "only this row (exit 2 when it does not exist)" },
    { "facts",   0, MCDC_OPT_VALUE, "NAME", "also show each table's capture-instance switch from this facts table" },
    { "format",  0, MCDC_OPT_VALUE, "text|json|jsonl", "output format (default text)" },
    { 0 }
};

/* The switch columns --facts adds, after the control columns. */
static const char *const switch_cols[] = { "switched_from", "switched_to", "switched_at_lsn",
                                           "switched_in_batch", "last_batch" };
#define N_SWITCH_COLS (sizeof switch_cols / sizeof *switch_cols)

static const mcdc_switch_state *state_of(const mcdc_switch_state *a, size_t n, const char *table)
{
    for (size_t i = 0; a && i < n; i++)
        if (!strcmp(a[i].target, table))
            return &a[i];
    return NULL;
}

/* The switch columns of one row: text (tab-separated, NULL as NULL) or JSON members. */
static int put_switch(mcdc_buf *b, const mcdc_switch_state *st, bool json)
{
    const char *v[N_SWITCH_COLS] = { 0 };
    char n1[24], n2[24];
    if (st && st->switch_batch >= 0) {
        snprintf(n1, sizeof n1, "%lld", (long long)st->switch_batch);
        v[0] = st->from_instance;
        v[1] = st->to_instance;
        v[2] = st->at_lsn[0] ? st->at_lsn : NULL;
        v[3] = n1;
    }
    if (st && st->last_batch >= 0) {
        snprintf(n2, sizeof n2, "%lld", (long long)st->last_batch);
        v[4] = n2;
    }
    int rc = 0;
    for (size_t c = 0; c < N_SWITCH_COLS && rc == 0; c++) {
        bool number = c >= 3;
        if (!json) {
            rc = mcdc_buf_printf(b, "\t%s", v[c] ? v[c] : "NULL");
            continue;
        }
        rc = mcdc_buf_printf(b, ",\"%s\":", switch_cols[c]);
        if (rc == 0)
            rc = !v[c] ? mcdc_buf_puts(b, "null") : number ? mcdc_buf_puts(b, v[c])
                                                         : mcdc_json_quote(b, v[c], strlen(v[c]));
    }
    return rc;
}

static int print_rows(const mcdc_control_row *rows, size_t n, const char *fmt,
                      const mcdc_switch_state *sw, size_t n_sw, bool with_switch)
{
    const mcdc_schema *s = mcdc_control_schema();
    mcdc_buf b = MCDC_BUF_INIT((size_t)1 << 30);
    int rc = 0;
    if (!s)
        return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (!strcmp(fmt, "text")) {
        for (size_t c = 0; c < s->n_cols; c++)
            printf("%s%s", c ? "\t" : "", s->cols[c].name);
        for (size_t c = 0; with_switch && c < N_SWITCH_COLS; c++)
            printf("\t%s", switch_cols[c]);
        printf("\n");
    } else if (!strcmp(fmt, "json")) {
        printf("[");
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        b.len = 0;
        const mcdc_switch_state *st = state_of(sw, n_sw, rows[i].table_name);
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
            if (rc == 0 && with_switch)
                rc = put_switch(&b, st, false);
        } else {
            rc = mcdc_control_row_to_json(&b, &rows[i]);
            if (rc == 0 && with_switch && b.len > 0 && b.ptr[b.len - 1] == '}') {
                b.len--; /* the switch members go inside the row's object */
                if ((rc = put_switch(&b, st, true)) == 0)
                    rc = mcdc_buf_put(&b, "}", 1);
            }
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
    const char *facts = mcdc_cli_get(a, "facts");
    char path[FIN_PATH_MAX], facts_path[FIN_PATH_MAX];
    if (fin_resolve(path, ctx, control) < 0 || (facts && fin_resolve(facts_path, ctx, facts) < 0))
        return mcdc_cli_fail();
    mcdc_switch_state *sw = NULL;
    size_t n_sw = 0;
    mcdc_control_row *rows = NULL, one;
    size_t n = 0;
    int rc;
    if (table) {
        if (mcdc_control_get(&one, path, table) < 0)
            return mcdc_cli_fail();
        rows = &one;
        n = 1;
    } else if (mcdc_control_read_all(&rows, &n, path) < 0) {
        return mcdc_cli_fail();
    }
    rc = facts ? mcdc_finalize_switches(&sw, &n_sw, facts_path) : 0;
    if (rc == 0)
        rc = print_rows(rows, n, fmt ? fmt : "text", sw, n_sw, facts != NULL);
    mcdc_switch_states_free(sw, n_sw);
    if (table)
        mcdc_control_row_clear(&one);
    else
        mcdc_control_rows_free(rows, n);
    return rc < 0 ? mcdc_cli_fail() : MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_finalization_show = {
    "finalization show",
    "print the verdicts of a control table",
    "",
    0, 0, opts,
    "mssql-cdc finalization show --control ops.table_finalization\n"
    "mssql-cdc finalization show --control ops.table_finalization --table bronze.orders --format json\n"
    "mssql-cdc finalization show --control ops.table_finalization --facts ops.ingestion_facts",
    run
};
