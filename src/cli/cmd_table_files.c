/*
 * cli/cmd_table_files.c: `mssql-cdc table files NAME`: the live data files of a Delta
 * table (latest or --version N), so that another engine's plain Parquet reader reads
 * exactly the table (DuckDB: read_parquet([...], union_by_name = true)) without a Delta
 * extension.
 *
 * Text prints one absolute path per line, in the snapshot's path order; json prints one
 * document with each file's size, partition values and deletion vector. A table whose
 * rows a plain Parquet read would not give (deletion vectors: deleted rows come back;
 * column mapping: the files hold physical names; partition columns: their values are in
 * the log, not in the files) is exit 2 naming why, unless --force. Only reads the log.
 * Reference: docs/reference/cli-table.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/delta.h"
#include "mcdc/fs.h"
#include "mcdc/storage.h"
#include "mcdc/log.h"
#include "table_common.h"

static const mcdc_opt opts[] = {
    { "version", 0, MCDC_OPT_VALUE, "N", "the files of version N (default latest)" },
    { "format", 0, MCDC_OPT_VALUE, "text|json", "text: one absolute path per line (default); json: with sizes and partition values" },
    { "force", 0, MCDC_OPT_SWITCH, NULL, "list the files even when a plain Parquet read would not give the table's rows" },
    { 0 }
};

/* Why a plain Parquet read of the files would not give the table's rows, in @p out
 * ("" when it would). */
static void plain_read_problems(char *out, size_t cap, const mcdc_delta_snapshot *s)
{
    size_t n_dv = 0, used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < s->n_files; i++)
        n_dv += s->files[i].has_dv;
    if (n_dv)
        used += (size_t)snprintf(out + used, cap - used, "%zu of its %zu files have deletion vectors "
                                 "(a plain read returns the deleted rows)", n_dv, s->n_files);
    if (s->column_mapping != MCDC_DELTA_CM_NONE && used < cap)
        used += (size_t)snprintf(out + used, cap - used, "%sit uses column mapping (mode %s: the files "
                                 "hold physical column names)", used ? "; " : "",
                                 s->column_mapping == MCDC_DELTA_CM_NAME ? "name" : "id");
    if (s->metadata.n_partition_columns && used < cap) {
        used += (size_t)snprintf(out + used, cap - used, "%sit is partitioned by ", used ? "; " : "");
        for (size_t i = 0; i < s->metadata.n_partition_columns && used < cap; i++)
            used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? ", " : "", s->metadata.partition_columns[i]);
        if (used < cap)
            snprintf(out + used, cap - used, " (partition values are in the log, not in the files)");
    }
}

static void put_json(mcdc_buf *b, const char *s)
{
    if (s)
        mcdc_json_quote(b, s, strlen(s));
    else
        mcdc_buf_puts(b, "null");
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    char path[MCDC_PATH_MAX], root[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, a->pos[0]);
    if (ec)
        return ec;
    const char *fmt = mcdc_cli_table_format(a, "text|json");
    if (!fmt)
        return mcdc_cli_usage_error(a->cmd, "--format must be text or json, not '%s'", mcdc_cli_get(a, "format"));
    bool json = !strcmp(fmt, "json");
    int64_t version = -1;
    const char *v = mcdc_cli_get(a, "version");
    if (v) {
        char *end;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || x < 0)
            return mcdc_cli_usage_error(a->cmd, "--version must be a version number, not '%s'", v);
        version = x;
    }
    /* The snapshot of the absolute root, so that every file's path comes out absolute. */
    int rc;
    if (mcdc_storage_is_s3(path)) /* already absolute: s3://bucket/key */
        rc = snprintf(root, MCDC_PATH_MAX, "%s", path) < MCDC_PATH_MAX ? 0 : MCDC_EINVAL;
    else
        rc = mcdc_fs_realpath(root, path);
    if (rc == MCDC_ENOTFOUND)
        return mcdc_cli_error(MCDC_EXIT_USAGE, "check the name; a stream creates its tables with its first batch",
                              "table %s does not exist", path);
    if (rc < 0)
        return mcdc_cli_fail();
    mcdc_delta_snapshot *snap;
    if (mcdc_delta_snapshot_open(&snap, root, version) < 0)
        return mcdc_cli_fail();
    char why[1024];
    plain_read_problems(why, sizeof why, snap);
    if (why[0] && !mcdc_cli_has(a, "force")) {
        mcdc_delta_snapshot_free(snap);
        return mcdc_cli_error(MCDC_EXIT_USAGE,
                              "read it with a Delta reader (DuckDB's delta_scan), or pass --force to list the files anyway",
                              "table %s: a plain Parquet read of its files would not give its rows: %s", a->pos[0], why);
    }
    if (why[0])
        mcdc_log(MCDC_LOG_WARN, "table", "%s: listed with --force, but %s", a->pos[0], why);
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    int exit_code = MCDC_EXIT_OK;
    rc = 0;
    if (json) {
        mcdc_buf_puts(&b, "{\"table\":");
        put_json(&b, a->pos[0]);
        mcdc_buf_puts(&b, ",\"path\":");
        put_json(&b, root);
        mcdc_buf_printf(&b, ",\"version\":%lld,\"plain_parquet\":%s,\"problems\":", (long long)snap->version,
                        why[0] ? "false" : "true");
        put_json(&b, why[0] ? why : NULL);
        mcdc_buf_puts(&b, ",\"files\":[");
    }
    for (size_t i = 0; rc == 0 && i < snap->n_files; i++) {
        const mcdc_delta_file *f = &snap->files[i];
        char *abs = mcdc_delta_file_abspath(snap, f->path);
        if (!abs) {
            rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
            break;
        }
        if (!json) {
            mcdc_buf_puts(&b, abs);
            rc = mcdc_buf_putc(&b, '\n');
        } else {
            mcdc_buf_puts(&b, i ? ",{\"path\":" : "{\"path\":");
            put_json(&b, abs);
            mcdc_buf_printf(&b, ",\"size\":%lld,\"partition_values\":{", (long long)f->size);
            for (size_t k = 0; k < f->partition_values.n; k++) {
                if (k)
                    mcdc_buf_putc(&b, ',');
                put_json(&b, f->partition_values.kv[k].key);
                mcdc_buf_putc(&b, ':');
                put_json(&b, f->partition_values.kv[k].value);
            }
            rc = mcdc_buf_printf(&b, "},\"deletion_vector\":%s}", f->has_dv ? "true" : "false");
        }
        free(abs);
    }
    if (rc == 0 && json)
        rc = mcdc_buf_puts(&b, "]}\n");
    if (rc < 0)
        exit_code = mcdc_cli_fail();
    else if (b.len && fwrite(b.ptr, 1, b.len, stdout) != b.len)
        exit_code = mcdc_cli_error(MCDC_EXIT_RUNTIME, NULL, "writing the file list failed");
    mcdc_buf_dispose(&b);
    mcdc_delta_snapshot_free(snap);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_table_files = {
    "table files",
    "list a Delta table's live data files, for a plain Parquet reader (DuckDB read_parquet)",
    "NAME",
    1, 1, opts,
    "mssql-cdc table files silver.orders\n"
    "mssql-cdc table files bronze.orders --version 3 --format json",
    run
};
