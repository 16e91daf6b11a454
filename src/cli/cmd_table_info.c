/*
 * cli/cmd_table_info.c: `mssql-cdc table info NAME`: a Delta table's version, protocol,
 * schema, partition columns, configuration, number and size of live files, txn versions.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "table_common.h"
#include "mcdc/delta.h"
#include "mcdc/time.h"

static const mcdc_opt opts[] = {
    { "format", 0, MCDC_OPT_VALUE, "text|json", "output format (default text)" },
    { "as-of-version", 0, MCDC_OPT_VALUE, "N", "the table at version N (default latest)" },
    { 0 }
};

static void quote(mcdc_buf *b, const char *s)
{
    if (s)
        mcdc_json_quote(b, s, strlen(s));
    else
        mcdc_buf_puts(b, "null");
}

static void strlist(mcdc_buf *b, char **l, size_t n)
{
    mcdc_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            mcdc_buf_putc(b, ',');
        quote(b, l[i]);
    }
    mcdc_buf_putc(b, ']');
}

static void as_json(mcdc_buf *b, const mcdc_delta_snapshot *s, int64_t bytes)
{
    const mcdc_delta_protocol *p = &s->protocol;
    mcdc_buf_printf(b, "{\"path\":");
    quote(b, s->table_path);
    mcdc_buf_printf(b, ",\"version\":%lld,\"id\":", (long long)s->version);
    quote(b, s->metadata.id);
    mcdc_buf_printf(b, ",\"protocol\":{\"minReaderVersion\":%d,\"minWriterVersion\":%d",
                    p->min_reader_version, p->min_writer_version);
    if (p->has_reader_features) {
        mcdc_buf_puts(b, ",\"readerFeatures\":");
        strlist(b, p->reader_features, p->n_reader_features);
    }
    if (p->has_writer_features) {
        mcdc_buf_puts(b, ",\"writerFeatures\":");
        strlist(b, p->writer_features, p->n_writer_features);
    }
    mcdc_buf_puts(b, "},\"schema\":[");
    for (size_t i = 0; i < s->schema->n_fields; i++) {
        const mcdc_delta_field *f = &s->schema->fields[i];
        mcdc_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        quote(b, f->name);
        mcdc_buf_puts(b, ",\"type\":");
        mcdc_delta_type_to_json(b, &f->type);
        mcdc_buf_printf(b, ",\"nullable\":%s}", f->nullable ? "true" : "false");
    }
    mcdc_buf_puts(b, "],\"partitionColumns\":");
    strlist(b, s->metadata.partition_columns, s->metadata.n_partition_columns);
    mcdc_buf_puts(b, ",\"configuration\":{");
    for (size_t i = 0; i < s->metadata.configuration.n; i++) {
        if (i)
            mcdc_buf_putc(b, ',');
        quote(b, s->metadata.configuration.kv[i].key);
        mcdc_buf_putc(b, ':');
        quote(b, s->metadata.configuration.kv[i].value);
    }
    mcdc_buf_printf(b, "},\"numFiles\":%zu,\"sizeInBytes\":%lld,\"txn\":{", s->n_files,
                    (long long)bytes);
    for (size_t i = 0; i < s->n_txns; i++) {
        if (i)
            mcdc_buf_putc(b, ',');
        quote(b, s->txns[i].app_id);
        mcdc_buf_printf(b, ":%lld", (long long)s->txns[i].version);
    }
    mcdc_buf_printf(b, "},\"checkpointVersion\":%lld}", (long long)s->checkpoint_version);
}

static void as_text(mcdc_buf *b, const mcdc_delta_snapshot *s, int64_t bytes)
{
    const mcdc_delta_protocol *p = &s->protocol;
    mcdc_buf_printf(b, "path:               %s\nversion:            %lld\nid:                 %s\n",
                    s->table_path, (long long)s->version, s->metadata.id);
    mcdc_buf_printf(b, "protocol:           reader %d, writer %d", p->min_reader_version,
                    p->min_writer_version);
    for (size_t i = 0; i < p->n_reader_features; i++)
        mcdc_buf_printf(b, "%s%s", i ? ", " : "; reader features: ", p->reader_features[i]);
    for (size_t i = 0; i < p->n_writer_features; i++)
        mcdc_buf_printf(b, "%s%s", i ? ", " : "; writer features: ", p->writer_features[i]);
    mcdc_buf_puts(b, "\nschema:\n");
    for (size_t i = 0; i < s->schema->n_fields; i++) {
        const mcdc_delta_field *f = &s->schema->fields[i];
        mcdc_buf_printf(b, "  %-24s ", f->name);
        mcdc_delta_type_to_json(b, &f->type);
        mcdc_buf_puts(b, f->nullable ? "\n" : " not null\n");
    }
    mcdc_buf_puts(b, "partition columns: ");
    for (size_t i = 0; i < s->metadata.n_partition_columns; i++)
        mcdc_buf_printf(b, "%s%s", i ? ", " : " ", s->metadata.partition_columns[i]);
    mcdc_buf_puts(b, "\nconfiguration:\n");
    for (size_t i = 0; i < s->metadata.configuration.n; i++)
        mcdc_buf_printf(b, "  %s = %s\n", s->metadata.configuration.kv[i].key,
                        s->metadata.configuration.kv[i].value ? s->metadata.configuration.kv[i].value
                                                              : "null");
    mcdc_buf_printf(b, "files:              %zu (%lld bytes)\n", s->n_files, (long long)bytes);
    mcdc_buf_puts(b, "txn:\n");
    for (size_t i = 0; i < s->n_txns; i++)
        mcdc_buf_printf(b, "  %s = %lld\n", s->txns[i].app_id, (long long)s->txns[i].version);
    if (s->checkpoint_version >= 0)
        mcdc_buf_printf(b, "checkpoint:         %lld\n", (long long)s->checkpoint_version);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args)
{
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
    if (ec)
        return ec;
    const char *fmt = mcdc_cli_table_format(args, "text|json");
    if (!fmt)
        return mcdc_cli_usage_error(args->cmd, "--format must be text or json");
    int64_t version = -1;
    const char *v = mcdc_cli_get(args, "as-of-version");
    if (v) {
        char *end;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || x < 0)
            return mcdc_cli_usage_error(args->cmd, "--as-of-version must be a version number, not '%s'", v);
        version = x;
    }
    mcdc_delta_snapshot *s;
    if (mcdc_delta_snapshot_open(&s, path, version) < 0)
        return mcdc_cli_fail();
    int64_t bytes = 0;
    for (size_t i = 0; i < s->n_files; i++)
        bytes += s->files[i].size > 0 ? s->files[i].size : 0;
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    if (strcmp(fmt, "json") == 0) {
        as_json(&b, s, bytes);
        mcdc_buf_putc(&b, '\n');
    } else {
        as_text(&b, s, bytes);
    }
    fputs(b.ptr ? b.ptr : "", stdout);
    mcdc_buf_dispose(&b);
    mcdc_delta_snapshot_free(s);
    return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_table_info = {
    "table info",
    "a Delta table's version, protocol, schema, partitioning, configuration, files and txns",
    "NAME",
    1, 1, opts,
    "mssql-cdc table info bronze.orders --format json",
    run
};
