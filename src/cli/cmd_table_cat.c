/*
 * cli/cmd_table_cat.c: `mssql-cdc table cat NAME`: the rows of a Delta table (latest or
 * --as-of-version N). Formats as `parquet cat` (printed by rows.h): text (a header of column names, then one
 * tab-separated line per row), jsonl (architecture §7; nested columns as JSON), csv (RFC
 * 4180 with a header; nested columns as their JSON text). Deleted rows (deletion vectors)
 * are left out; partition values come from the log.
 *
 * Order: a table with a natural order is printed in it, whatever its files hold: bronze
 * (mcdc.kind = bronze) in change order (_start_lsn, _command_id, _seqval, _operation),
 * silver (mcdc.silver.keys) by its keys; such a table's rows are held in memory to be
 * sorted (row_sort.h). Any other table streams file by file in path order. --columns
 * picks and orders the printed columns (a name unknown or given twice is exit 2 naming
 * it, before anything is read); --limit stops after N rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "mcdc/delta.h"
#include "row_sort.h"
#include "rows.h"
#include "table_common.h"

static const mcdc_opt opts[] = {
    { "as-of-version", 0, MCDC_OPT_VALUE, "N", "the table at version N (default latest)" },
    { "format", 0, MCDC_OPT_VALUE, "text|jsonl|csv", "output format (default text)" },
    { "columns", 0, MCDC_OPT_VALUE, "A,B", "print only these columns, in this order" },
    { "limit", 'n', MCDC_OPT_VALUE, "N", "stop after N rows (of the table's order)" },
    { 0 }
};

#define MAX_COLS 4096

static const char *const bronze_order[] = { "_start_lsn", "_command_id", "_seqval", "_operation" };

static bool is_nested(const void *scan, size_t i)
{
    return mcdc_delta_scan_is_nested(scan, i);
}

/* The columns to read: @p names gets the printed ones (n_out), then the order columns not
 * printed; @p by the scan indexes of the order columns. */
typedef struct plan {
    const char *names[MAX_COLS];
    size_t      n_names, n_out;
    size_t      by[64];
    size_t      n_by;
    char       *keys_copy; /* owned: the silver keys text that names point into */
    char       *cols_copy; /* owned: the --columns text that names point into */
} plan;

static int find_name(const plan *p, const char *name)
{
    for (size_t i = 0; i < p->n_names; i++)
        if (!strcasecmp(p->names[i], name))
            return (int)i;
    return -1;
}

/* The table's column list, for the hint of an unknown --columns name. */
static void columns_hint(char *out, size_t cap, const mcdc_delta_schema *s)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s->n_fields && used + 8 < cap; i++) {
        int w = snprintf(out + used, cap - used, "%s%s", i ? ", " : "", s->fields[i].name);
        if (w < 0 || (size_t)w >= cap - used) {
            snprintf(out + used, cap - used, ", ...");
            break;
        }
        used += (size_t)w;
    }
}

static int plan_columns(plan *p, const mcdc_cli_args *a, const mcdc_delta_snapshot *snap)
{
    const mcdc_delta_schema *s = snap->schema;
    const char *cols = mcdc_cli_get(a, "columns");
    if (!cols) {
        for (size_t i = 0; i < s->n_fields && p->n_names < MAX_COLS; i++)
            p->names[p->n_names++] = s->fields[i].name;
    } else {
        if (!(p->cols_copy = strdup(cols)))
            return mcdc_cli_error(MCDC_EXIT_RUNTIME, NULL, "out of memory");
        char *save = NULL;
        if (!*cols || cols[0] == ',' || cols[strlen(cols) - 1] == ',' || strstr(cols, ",,"))
            return mcdc_cli_usage_error(a->cmd, "--columns '%s' has an empty name", cols);
        for (char *t = strtok_r(p->cols_copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            int f = mcdc_delta_schema_find(s, t);
            if (f < 0) {
                char hint[1024];
                columns_hint(hint, sizeof hint, s);
                char full[1100];
                snprintf(full, sizeof full, "its columns: %s", hint);
                return mcdc_cli_error(MCDC_EXIT_USAGE, full, "--columns: table %s has no column '%s'",
                                      a->pos[0], t);
            }
            if (find_name(p, s->fields[f].name) >= 0)
                return mcdc_cli_usage_error(a->cmd, "--columns names column '%s' twice", t);
            if (p->n_names == MAX_COLS)
                return mcdc_cli_usage_error(a->cmd, "--columns names more than %d columns", MAX_COLS);
            p->names[p->n_names++] = s->fields[f].name;
        }
    }
    p->n_out = p->n_names;

    /* The natural order, by the columns that exist (a foreign table may lack some). */
    const char *order[64];
    size_t n_order = 0;
    const char *keys = mcdc_delta_snapshot_config(snap, "mcdc.silver.keys", NULL);
    if (!strcmp(mcdc_delta_snapshot_config(snap, "mcdc.kind", ""), "bronze")) {
        for (size_t i = 0; i < sizeof bronze_order / sizeof *bronze_order; i++)
            order[n_order++] = bronze_order[i];
    } else if (keys && *keys) {
        if (!(p->keys_copy = strdup(keys)))
            return mcdc_cli_error(MCDC_EXIT_RUNTIME, NULL, "out of memory");
        char *save = NULL;
        for (char *t = strtok_r(p->keys_copy, ",", &save); t && n_order < 64; t = strtok_r(NULL, ",", &save))
            order[n_order++] = t;
    }
    for (size_t k = 0; k < n_order; k++) {
        int f = mcdc_delta_schema_find(s, order[k]);
        if (f < 0)
            continue;
        int at = find_name(p, s->fields[f].name);
        if (at < 0) {
            if (p->n_names == MAX_COLS)
                continue;
            at = (int)p->n_names;
            p->names[p->n_names++] = s->fields[f].name;
        }
        p->by[p->n_by++] = (size_t)at;
    }
    return 0;
}

static int parse_count(const mcdc_cli_args *a, const char *name, long long *out)
{
    const char *v = mcdc_cli_get(a, name);
    if (!v)
        return 0;
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < 0)
        return mcdc_cli_usage_error(a->cmd, "--%s must be a number (0 or more), not '%s'", name, v);
    *out = x;
    return 0;
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
    long long version = -1, limit = -1;
    if ((ec = parse_count(a, "as-of-version", &version)) != 0 || (ec = parse_count(a, "limit", &limit)) != 0)
        return ec;
    mcdc_delta_snapshot *snap;
    if (mcdc_delta_snapshot_open(&snap, path, version) < 0)
        return mcdc_cli_fail();
    plan p;
    memset(&p, 0, sizeof p);
    mcdc_delta_scan *scan = NULL;
    mcdc_cli_row_sort sorted;
    mcdc_cli_row_sort_init(&sorted, NULL, NULL, 0);
    int exit_code = plan_columns(&p, a, snap);
    if (exit_code != 0)
        goto done;
    mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
    so.columns = p.names;
    so.n_columns = p.n_names;
    if (mcdc_delta_scan_open(&scan, snap, &so) < 0) {
        exit_code = mcdc_cli_fail();
        goto done;
    }
    const mcdc_schema *all = mcdc_delta_scan_schema(scan);
    mcdc_schema shown = { all->cols, p.n_out };
    mcdc_cli_rows out;
    int rc = mcdc_cli_rows_begin(&out, stdout, (mcdc_cli_rows_format)format, &shown, is_nested, scan);
    const mcdc_value *row;
    long long n_rows = 0;
    if (p.n_by == 0) {
        while (rc == 0 && (limit < 0 || n_rows < limit) && (rc = mcdc_delta_scan_next(scan, &row)) == 1) {
            n_rows++;
            rc = mcdc_cli_rows_put(&out, row);
        }
    } else {
        mcdc_cli_row_sort_init(&sorted, all, p.by, p.n_by);
        while (rc == 0 && (rc = mcdc_delta_scan_next(scan, &row)) == 1)
            rc = mcdc_cli_row_sort_add(&sorted, row);
        if (rc == 0)
            mcdc_cli_row_sort_sort(&sorted);
        for (size_t i = 0; rc == 0 && i < sorted.n_rows && (limit < 0 || (long long)i < limit); i++)
            rc = mcdc_cli_rows_put(&out, sorted.rows[i]);
    }
    int end_rc = mcdc_cli_rows_end(&out);
    if (rc == 0)
        rc = end_rc;
    if (rc < 0)
        exit_code = mcdc_cli_fail();
done:
    mcdc_cli_row_sort_free(&sorted);
    free(p.keys_copy);
    free(p.cols_copy);
    mcdc_delta_scan_free(scan);
    mcdc_delta_snapshot_free(snap);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_table_cat = {
    "table cat",
    "print the rows of a Delta table (latest or a past version), in the table's order",
    "NAME",
    1, 1, opts,
    "mssql-cdc table cat bronze.orders --as-of-version 3 --format jsonl\n"
    "mssql-cdc table cat silver.orders --columns order_id,amount --limit 10",
    run
};
