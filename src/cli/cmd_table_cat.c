/*
 * cli/cmd_table_cat.c: `mssql-cdc table cat NAME`: the rows of a Delta table (latest or
 * --as-of-version N). Formats as `parquet cat` (printed by rows.h): text (a header of column names, then one
 * tab-separated line per row), jsonl (architecture §7; nested columns as JSON), csv (RFC
 * 4180 with a header; nested columns as their JSON text). Deleted rows (deletion vectors)
 * are left out; partition values come from the log.
 *
 * Order: a table with a natural order is printed in it, whatever its files hold: bronze
 * (mcdc.kind = bronze) in change order (_start_lsn, _command_id, _seqval, _operation),
 * silver (mcdc.silver.keys) by its keys (scd2: then _valid_from_lsn); such a table's
 * rows are held in memory to be sorted (row_sort.h). Any other table streams file by file in path order. --columns
 * picks and orders the printed columns (a name unknown or given twice is exit 2 naming
 * it, before anything is read); --limit stops after N rows.
 *
 * --as-of-lsn / --as-of-time read bronze or silver as the source held it at a position
 * (silver/as_of.c decides what that is, or refuses); the rows are then ordered as above.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "mcdc/delta.h"
#include "mcdc/silver.h"
#include "mcdc/time.h"
#include "row_sort.h"
#include "rows.h"
#include "table_common.h"

static const mcdc_opt opts[] = {
    { "as-of-version", 0, MCDC_OPT_VALUE, "N", "the table at version N (default latest)" },
    { "as-of-lsn", 0, MCDC_OPT_VALUE, "LSN", "bronze or silver as the source held it at LSN (its commit included)" },
    { "as-of-time", 0, MCDC_OPT_VALUE, "TIME", "as of the last commit before TIME (UTC unless it has an offset)" },
    { "bronze", 0, MCDC_OPT_VALUE, "NAME", "silver's bronze table for --as-of-* (default: the one silver records)" },
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

static bool as_of_is_nested(const void *r, size_t i)
{
    return mcdc_silver_as_of_is_nested(r, i);
}

/* Rows come from a scan (a Delta version) or an as-of reader (a source position). */
typedef struct source {
    mcdc_delta_scan          *scan;
    mcdc_silver_as_of_reader *as_of;
} source;

static int source_next(source *src, const mcdc_value **row)
{
    return src->as_of ? mcdc_silver_as_of_next(src->as_of, row) : mcdc_delta_scan_next(src->scan, row);
}

/* --as-of-lsn / --as-of-time: the position, and silver's bronze. 0, or an exit code. */
static int parse_as_of(mcdc_silver_as_of *at, char *bronze_path, const mcdc_cli_ctx *ctx,
                       const mcdc_cli_args *a, const char *path, const mcdc_delta_snapshot *snap,
                       bool *wanted)
{
    const char *l = mcdc_cli_get(a, "as-of-lsn"), *t = mcdc_cli_get(a, "as-of-time");
    const char *b = mcdc_cli_get(a, "bronze");
    *wanted = l || t;
    if (!*wanted) {
        if (b)
            return mcdc_cli_usage_error(a->cmd, "--bronze goes with --as-of-lsn or --as-of-time");
        return 0;
    }
    if (l && t)
        return mcdc_cli_usage_error(a->cmd, "give --as-of-lsn or --as-of-time, not both");
    if (mcdc_cli_get(a, "as-of-version"))
        return mcdc_cli_usage_error(a->cmd, "--as-of-version reads a Delta version; it does not "
                                    "go with --as-of-lsn or --as-of-time");
    if (l && mcdc_lsn_parse(&at->lsn, l) < 0)
        return mcdc_cli_error(MCDC_EXIT_USAGE, "an LSN is up to 20 hex digits, 0x optional",
                              "--as-of-lsn: '%s' is not an LSN", l);
    if (t) {
        at->by_time = true;
        if (mcdc_time_parse(&at->before_us, t) < 0)
            return mcdc_cli_fail();
    }
    const char *kind = mcdc_delta_snapshot_config(snap, "mcdc.kind", "");
    if (!strcmp(kind, "bronze")) {
        if (b)
            return mcdc_cli_usage_error(a->cmd, "--bronze is for silver tables; %s is bronze", a->pos[0]);
        return 0;
    }
    char *recorded = NULL;
    if (!b && strcmp(kind, "silver") == 0) {
        if (mcdc_silver_as_of_bronze_name(&recorded, path) < 0)
            return mcdc_cli_fail();
        if (!recorded)
            return mcdc_cli_error(MCDC_EXIT_USAGE, "name it with --bronze NAME",
                                  "silver %s records no bronze table", a->pos[0]);
        b = recorded;
    }
    if (b) {
        int ec = mcdc_cli_table_path(bronze_path, ctx, b);
        free(recorded);
        if (ec)
            return ec;
        at->bronze_path = bronze_path;
    }
    return 0;
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
        /* scd2: a key's versions in the order they were valid */
        if (!strcmp(mcdc_delta_snapshot_config(snap, "mcdc.silver.mode", "scd1"), "scd2") && n_order < 64)
            order[n_order++] = "_valid_from_lsn";
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
    source src = { NULL, NULL };
    mcdc_cli_row_sort sorted;
    mcdc_cli_row_sort_init(&sorted, NULL, NULL, 0);
    mcdc_silver_as_of at = MCDC_SILVER_AS_OF_INIT;
    char bronze_path[MCDC_PATH_MAX];
    bool as_of;
    int exit_code = parse_as_of(&at, bronze_path, ctx, a, path, snap, &as_of);
    if (exit_code == 0)
        exit_code = plan_columns(&p, a, snap);
    if (exit_code != 0)
        goto done;
    const mcdc_schema *all;
    if (as_of) {
        if (mcdc_silver_as_of_open(&src.as_of, path, &at, p.names, p.n_names) < 0) {
            exit_code = mcdc_cli_fail();
            goto done;
        }
        all = mcdc_silver_as_of_schema(src.as_of);
    } else {
        mcdc_delta_scan_options so = MCDC_DELTA_SCAN_OPTIONS_INIT;
        so.columns = p.names;
        so.n_columns = p.n_names;
        if (mcdc_delta_scan_open(&src.scan, snap, &so) < 0) {
            exit_code = mcdc_cli_fail();
            goto done;
        }
        all = mcdc_delta_scan_schema(src.scan);
    }
    mcdc_schema shown = { all->cols, p.n_out };
    mcdc_cli_rows out;
    int rc = as_of ? mcdc_cli_rows_begin(&out, stdout, (mcdc_cli_rows_format)format, &shown,
                                         as_of_is_nested, src.as_of)
                   : mcdc_cli_rows_begin(&out, stdout, (mcdc_cli_rows_format)format, &shown,
                                         is_nested, src.scan);
    const mcdc_value *row;
    long long n_rows = 0;
    if (p.n_by == 0) {
        while (rc == 0 && (limit < 0 || n_rows < limit) && (rc = source_next(&src, &row)) == 1) {
            n_rows++;
            rc = mcdc_cli_rows_put(&out, row);
        }
    } else {
        mcdc_cli_row_sort_init(&sorted, all, p.by, p.n_by);
        while (rc == 0 && (rc = source_next(&src, &row)) == 1)
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
    mcdc_delta_scan_free(src.scan);
    mcdc_silver_as_of_free(src.as_of);
    mcdc_delta_snapshot_free(snap);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_table_cat = {
    "table cat",
    "print the rows of a Delta table (latest or a past version), in the table's order",
    "NAME",
    1, 1, opts,
    "mssql-cdc table cat bronze.orders --as-of-version 3 --format jsonl\n"
    "mssql-cdc table cat silver.orders --columns order_id,amount --limit 10\n"
    "mssql-cdc table cat silver.orders --as-of-time 2026-10-01T09:00:00Z",
    run
};
