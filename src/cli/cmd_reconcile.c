/*
 * cli/cmd_reconcile.c: `mssql-cdc reconcile`: compare silver with its source table
 * (mcdc_reconcile_run) and print the buckets compared and the keys that differ (with
 * --facts, the chunks of bronze's chunked snapshot that differ from their facts rows). Exit 0
 * when nothing mismatches (keys in flight allowed), 1 when something does, 2 for bad usage (a missing table or
 * control row included), 3 for a failure. Every option is checked before the source's
 * table is read. Reference: docs/reference/cli-reconcile.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/delta.h"
#include "mcdc/reconcile.h"
#include "mcdc/source.h"
#include "mcdc/warehouse.h"

static const mcdc_opt opts[] = {
    { "source", 0, MCDC_OPT_VALUE, "SRC", "sim:PATH, odbc:CONNECTION-STRING or @FILE (default $MSSQL_CDC_SOURCE)" },
    { "capture-instance", 0, MCDC_OPT_REQUIRED, "CI", "the capture instance of the source table" },
    { "silver", 0, MCDC_OPT_REQUIRED, "NAME", "the silver table to compare (name or path)" },
    { "bronze", 0, MCDC_OPT_REQUIRED, "NAME", "the bronze table the stream writes: tells keys in flight from mismatches" },
    { "control", 0, MCDC_OPT_REQUIRED, "NAME", "the control table holding silver's applied_lsn" },
    { "keys", 0, MCDC_OPT_VALUE, "K1[,K2...]", "key columns (default: the capture instance's unique index)" },
    { "bucket-rows", 0, MCDC_OPT_VALUE, "N", "rows per bucket (default 1000000)" },
    { "sample", 0, MCDC_OPT_VALUE, "FRACTION", "share of matching buckets compared row by row, 0..1 (default 0.01)" },
    { "seed", 0, MCDC_OPT_VALUE, "N", "seed of the sample (default: from the clock)" },
    { "settle", 0, MCDC_OPT_VALUE, "SECONDS", "re-check unexplained keys once capture has passed the source read, waiting at most SECONDS (default 0)" },
    { "facts", 0, MCDC_OPT_VALUE, "NAME", "the facts table: check each chunk of bronze's completed chunked snapshot against it" },
    { "report", 0, MCDC_OPT_VALUE, "NAME", "append a row per bucket and per key named to this report table (kind reconcile)" },
    { "format", 0, MCDC_OPT_VALUE, "text|json", "output format (default text)" },
    { 0 }
};

static int split(char *buf, const char **out, int max)
{
    int n = 0;
    for (char *p = buf; p && *p && n < max;) {
        char *c = strchr(p, ',');
        if (c)
            *c = 0;
        while (*p == ' ')
            p++;
        if (*p)
            out[n++] = p;
        p = c ? c + 1 : NULL;
    }
    return n;
}

static const char *chunk_state(const mcdc_reconcile_result *r)
{
    return r->chunk_state == MCDC_RECONCILE_CHUNKS_COMPLETE ? "complete"
         : r->chunk_state == MCDC_RECONCILE_CHUNKS_OPEN ? "open" : "none";
}

static void print_chunks(mcdc_buf *b, const mcdc_reconcile_result *r, bool json)
{
    if (json) {
        mcdc_buf_printf(b, ",\"chunks\":{\"snapshot\":");
        if (r->chunk_snapshot[0]) mcdc_buf_printf(b, "\"%s\"", r->chunk_snapshot);
        else mcdc_buf_puts(b, "null");
        mcdc_buf_printf(b, ",\"state\":\"%s\",\"checked\":%lld,\"mismatched\":%lld,\"differ\":[", chunk_state(r),
                        (long long)r->chunks, (long long)r->chunks_mismatched);
        for (size_t i = 0; i < r->n_chunk_diffs; i++) {
            const mcdc_reconcile_chunk *c = &r->chunk_diffs[i];
            mcdc_buf_printf(b, "%s{\"chunk\":%lld,\"facts_rows\":", i ? "," : "", (long long)c->chunk);
            mcdc_buf_printf(b, c->facts_rows < 0 ? "null" : "%lld", (long long)c->facts_rows);
            mcdc_buf_printf(b, ",\"bronze_rows\":%lld}", (long long)c->bronze_rows);
        }
        mcdc_buf_puts(b, "]}");
        return;
    }
    if (r->chunk_state == MCDC_RECONCILE_CHUNKS_NONE) {
        mcdc_buf_puts(b, "chunks: bronze has no chunked snapshot: nothing to check\n");
        return;
    }
    if (r->chunk_state == MCDC_RECONCILE_CHUNKS_OPEN) {
        mcdc_buf_printf(b, "chunks: snapshot %s is still open: not checked\n", r->chunk_snapshot);
        return;
    }
    mcdc_buf_printf(b, "chunks: snapshot %s, %lld checked against the facts rows, %lld differ\n", r->chunk_snapshot,
                    (long long)r->chunks, (long long)r->chunks_mismatched);
    for (size_t i = 0; i < r->n_chunk_diffs; i++) {
        const mcdc_reconcile_chunk *c = &r->chunk_diffs[i];
        if (c->chunk < 0)
            mcdc_buf_printf(b, "CHUNK     %lld rows of the snapshot in bronze have a chunk outside its plan\n",
                            (long long)c->bronze_rows);
        else if (c->facts_rows < 0)
            mcdc_buf_printf(b, "CHUNK     %lld: no snapshot_chunk row, %lld rows in bronze\n", (long long)c->chunk,
                            (long long)c->bronze_rows);
        else
            mcdc_buf_printf(b, "CHUNK     %lld: %lld rows in its snapshot_chunk row, %lld in bronze\n", (long long)c->chunk,
                            (long long)c->facts_rows, (long long)c->bronze_rows);
    }
}

static void print_result(const mcdc_reconcile_result *r, const char *silver, bool json)
{
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    if (json) {
        mcdc_buf_printf(&b, "{\"run_id\":\"%s\",\"buckets\":%lld,\"matched\":%lld,\"in_flight\":%lld,\"mismatched\":%lld,"
                        "\"seconds\":%.3f,\"hashed\":%lld,\"buckets_by\":\"%s\",\"source_rows\":%lld,"
                        "\"silver_rows\":%lld,\"silver_version\":%lld,\"silver_lsn\":",
                        r->run_id, (long long)r->buckets, (long long)r->matched, (long long)r->in_flight,
                        (long long)r->mismatched, r->seconds, (long long)r->hashed,
                        r->by_hash ? "hash" : "ordinal", (long long)r->source_rows,
                        (long long)r->silver_rows, (long long)r->silver_version);
        if (r->silver_lsn)
            mcdc_buf_printf(&b, "\"%s\"", r->silver_lsn);
        else
            mcdc_buf_puts(&b, "null");
        mcdc_buf_puts(&b, ",\"keys\":[");
        for (size_t i = 0; i < r->n_keys; i++)
            mcdc_buf_printf(&b, "%s{\"key\":%s,\"status\":\"%s\"}", i ? "," : "", r->keys[i].key_json,
                            mcdc_reconcile_status_name(r->keys[i].status));
        mcdc_buf_puts(&b, "]");
        if (r->chunks_checked)
            print_chunks(&b, r, true);
        mcdc_buf_puts(&b, "}\n");
    } else {
        mcdc_buf_printf(&b, "%s version %lld (applied_lsn %s): buckets %lld (by %s), matched %lld, in flight %lld, "
                        "mismatched %lld, compared row by row %lld; source rows %lld, silver rows %lld; %.3f s\n",
                        silver, (long long)r->silver_version, r->silver_lsn ? r->silver_lsn : "none",
                        (long long)r->buckets, r->by_hash ? "key hash" : "key", (long long)r->matched,
                        (long long)r->in_flight, (long long)r->mismatched, (long long)r->hashed,
                        (long long)r->source_rows, (long long)r->silver_rows, r->seconds);
        for (size_t i = 0; i < r->n_keys; i++)
            mcdc_buf_printf(&b, "%-9s %s\n", mcdc_reconcile_status_name(r->keys[i].status), r->keys[i].key_json);
        if (r->chunks_checked)
            print_chunks(&b, r, false);
    }
    fputs(b.ptr ? b.ptr : "", stdout);
    mcdc_buf_dispose(&b);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    const char *silver = mcdc_cli_get(a, "silver"), *bronze = mcdc_cli_get(a, "bronze");
    const char *control = mcdc_cli_get(a, "control"), *format = mcdc_cli_get(a, "format");
    const char *keys = mcdc_cli_get(a, "keys");
    bool json = format && strcmp(format, "json") == 0;
    if (format && !json && strcmp(format, "text") != 0)
        return mcdc_cli_usage_error(a->cmd, "--format must be text or json, not '%s'", format);
    mcdc_reconcile_options o = MCDC_RECONCILE_OPTIONS_INIT;
    char *end;
    if (mcdc_cli_has(a, "bucket-rows")) {
        long long n = strtoll(mcdc_cli_get(a, "bucket-rows"), &end, 10);
        if (*end || end == mcdc_cli_get(a, "bucket-rows") || n < 1 || n > (1LL << 40))
            return mcdc_cli_usage_error(a->cmd, "--bucket-rows must be a positive number, not '%s'",
                                        mcdc_cli_get(a, "bucket-rows"));
        o.bucket_rows = n;
    }
    if (mcdc_cli_has(a, "sample")) {
        const char *s = mcdc_cli_get(a, "sample");
        double f = strtod(s, &end);
        if (*end || end == s || !(f >= 0.0 && f <= 1.0))
            return mcdc_cli_usage_error(a->cmd, "--sample must be a fraction from 0 to 1, not '%s'", s);
        o.sample = f;
    }
    if (mcdc_cli_has(a, "settle")) {
        const char *s = mcdc_cli_get(a, "settle");
        double f = strtod(s, &end);
        if (*end || end == s || !(f >= 0.0 && f <= 3600.0))
            return mcdc_cli_usage_error(a->cmd, "--settle must be seconds from 0 to 3600, not '%s'", s);
        o.settle_us = (int64_t)(f * 1e6);
    }
    if (mcdc_cli_has(a, "seed")) {
        const char *s = mcdc_cli_get(a, "seed");
        unsigned long long n = strtoull(s, &end, 10);
        if (*end || end == s || *s == '-')
            return mcdc_cli_usage_error(a->cmd, "--seed must be a non-negative number, not '%s'", s);
        o.seed = n;
        o.has_seed = true;
    }
    char key_buf[1024];
    const char *key_list[64];
    int n_keys = 0;
    if (keys) {
        snprintf(key_buf, sizeof key_buf, "%s", keys);
        if ((n_keys = split(key_buf, key_list, 64)) == 0)
            return mcdc_cli_usage_error(a->cmd, "--keys is empty");
        o.keys = key_list;
        o.n_keys = (size_t)n_keys;
    }
    const char *report = mcdc_cli_get(a, "report"), *facts = mcdc_cli_get(a, "facts");
    char spath[MCDC_PATH_MAX], bpath[MCDC_PATH_MAX], cpath[MCDC_PATH_MAX], rpath[MCDC_PATH_MAX], fpath[MCDC_PATH_MAX];
    if (mcdc_warehouse_resolve(spath, ctx->warehouse, silver) < 0 ||
        mcdc_warehouse_resolve(bpath, ctx->warehouse, bronze) < 0 ||
        mcdc_warehouse_resolve(cpath, ctx->warehouse, control) < 0 ||
        (report && mcdc_warehouse_resolve(rpath, ctx->warehouse, report) < 0) ||
        (facts && mcdc_warehouse_resolve(fpath, ctx->warehouse, facts) < 0))
        return mcdc_cli_fail();
    int64_t v;
    if (mcdc_delta_latest_version(&v, bpath) < 0) {
        if (mcdc_error_last()->code != MCDC_ENOTFOUND)
            return mcdc_cli_fail();
        return mcdc_cli_error(MCDC_EXIT_USAGE, "check --bronze (the stream creates it with its first batch)",
                              "bronze table %s does not exist", bronze);
    }
    if (facts && mcdc_delta_latest_version(&v, fpath) < 0) {
        if (mcdc_error_last()->code != MCDC_ENOTFOUND)
            return mcdc_cli_fail();
        return mcdc_cli_error(MCDC_EXIT_USAGE, "check --facts: the facts table the stream and backfill write (stream --facts)",
                              "facts table %s does not exist", facts);
    }
    const char *spec = mcdc_cli_get(a, "source");
    if (!spec)
        spec = getenv("MSSQL_CDC_SOURCE");
    if (!spec || !*spec)
        return mcdc_cli_usage_error(a->cmd, "no source: pass --source or set MSSQL_CDC_SOURCE");
    mcdc_source *src = NULL;
    if (mcdc_source_open(&src, spec) < 0)
        return mcdc_cli_fail();
    o.source = src;
    o.capture_instance = mcdc_cli_get(a, "capture-instance");
    o.silver_name = silver;
    o.silver_path = spath;
    o.control_path = cpath;
    o.bronze_path = bpath;
    o.report_name = report;
    o.report_path = report ? rpath : NULL;
    o.bronze_name = bronze;
    o.facts_path = facts ? fpath : NULL;
    mcdc_reconcile_result r;
    int code;
    if (mcdc_reconcile_run(&o, &r) < 0) {
        code = mcdc_cli_fail();
    } else {
        print_result(&r, silver, json);
        if (report && !json)
            printf("report: %lld bucket rows, %zu key rows and %zu chunk rows appended to %s (run_id %s)\n",
                   (long long)r.buckets, r.n_keys, r.n_chunk_diffs, report, r.run_id);
        code = r.mismatched || r.chunks_mismatched ? 1 : 0;
        mcdc_reconcile_result_clear(&r);
    }
    mcdc_source_close(src);
    return code;
}

const mcdc_cli_command mcdc_cmd_reconcile = {
    "reconcile",
    "prove that silver equals the source table, naming the keys that differ",
    "",
    0, 0, opts,
    "  mssql-cdc reconcile --source sim:db.sqlite --capture-instance dbo_orders \\\n"
    "    --silver silver.orders --bronze bronze.orders --control ops.control \\\n"
    "    --sample 1.0 --report ops.reconcile --format json\n"
    "  mssql-cdc reconcile --source sim:db.sqlite --capture-instance dbo_orders \\\n"
    "    --silver silver.orders --bronze bronze.orders --control ops.control \\\n"
    "    --facts ops.ingestion_facts",
    run
};
