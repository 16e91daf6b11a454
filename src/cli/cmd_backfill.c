/*
 * cli/cmd_backfill.c: `mssql-cdc backfill`: read an open chunked snapshot's chunks into
 * bronze in waves, beside the running stream; resumable at any point.
 *
 * Parses and checks the arguments, opens the source, runs mcdc_backfill_run
 * (src/pipeline/backfill.c), prints a progress line per wave on stderr and a summary on
 * stdout. --status prints where the snapshot stands and reads nothing else. Exit codes:
 * 0 complete (also a rerun after completion, which reads and writes nothing), 1 chunks
 * are left (--max-waves, --max-seconds), 2 no snapshot was ever opened for the target or
 * bad usage, 3 failure, 4 data loss. Reference: docs/reference/cli-backfill.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/backfill.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "mcdc/warehouse.h"

static const mcdc_opt opts[] = {
    { "source", 0, MCDC_OPT_VALUE, "SRC", "sim:PATH, odbc:CONNECTION-STRING or @FILE (default $MSSQL_CDC_SOURCE)" },
    { "capture-instance", 0, MCDC_OPT_VALUE, "CI", "the stream's capture instance (required)" },
    { "target", 0, MCDC_OPT_VALUE, "NAME", "the stream's bronze table (required)" },
    { "app-id", 0, MCDC_OPT_VALUE, "ID", "the stream's base app id (required; the generation is found)" },
    { "facts", 0, MCDC_OPT_VALUE, "NAME", "the stream's facts table, where the snapshot's state is (required)" },
    { "chunk-rows", 0, MCDC_OPT_VALUE, "N", "rows per chunk when planning (default 1000000; the plan never changes)" },
    { "max-waves", 0, MCDC_OPT_VALUE, "N", "stop after N waves (exit 1 while chunks are left)" },
    { "max-seconds", 0, MCDC_OPT_VALUE, "S", "start no wave after S seconds (exit 1 while chunks are left)" },
    { "target-wave-seconds", 0, MCDC_OPT_VALUE, "S", "size waves to about S seconds from the last wave's pace (default 300; 0: one chunk)" },
    { "min-headroom", 0, MCDC_OPT_VALUE, "DURATION", "pause while the stream's retention headroom is below DURATION (1h, 3d)" },
    { "progress", 0, MCDC_OPT_VALUE, "FILE", "append one JSON line per wave (the progress line's figures)" },
    { "status", 0, MCDC_OPT_SWITCH, NULL, "print where the snapshot stands; read nothing else" },
    { "range", 0, MCDC_OPT_VALUE, "LO..HI", "partial backfill of LO <= key < HI (JSON key values; null: open); no bootstrap row" },
    { "isolation", 0, MCDC_OPT_VALUE, "snapshot|read-committed", "isolation of the reads (default: the source's; odbc: isolationLevel=)" },
    { "lock-timeout", 0, MCDC_OPT_VALUE, "DURATION", "a read waiting this long on a lock fails (odbc: only; lockTimeoutMs=)" },
    { 0 }
};

static int parse_count(int64_t *out, const mcdc_cli_args *a, const char *name, bool zero_ok)
{
    const char *v = mcdc_cli_get(a, name);
    if (!v)
        return 0;
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || n < (zero_ok ? 0 : 1))
        return mcdc_error_set(MCDC_EINVAL, "--%s %s: not a %s integer", name, v,
                              zero_ok ? "non-negative" : "positive");
    *out = n;
    return 0;
}

static int parse_seconds(int64_t *out_us, const mcdc_cli_args *a, const char *name, bool zero_ok)
{
    const char *v = mcdc_cli_get(a, name);
    if (!v)
        return 0;
    char *end = NULL;
    double d = strtod(v, &end);
    if (!*v || *end || d < 0 || (!zero_ok && d == 0) || d > 1e9)
        return mcdc_error_set(MCDC_EINVAL, "--%s %s: not a %s number of seconds", name, v,
                              zero_ok ? "non-negative" : "positive");
    *out_us = (int64_t)(d * 1e6);
    return 0;
}

static void print_status(FILE *f, const mcdc_backfill_status *st)
{
    char l[MCDC_LSN_STRLEN];
    fprintf(f, "snapshot %s (generation %" PRId64 ", app_id %s): ", mcdc_lsn_format(l, &st->snapshot),
            st->generation, st->app_id);
    if (st->complete)
        fprintf(f, "complete");
    else if (!st->planned)
        fprintf(f, "open, not planned yet");
    else
        fprintf(f, "open");
    if (st->planned) {
        fprintf(f, ", %" PRId64 "/%" PRId64 " chunks, %" PRId64 " rows", st->chunks_done,
                st->chunks_total, st->rows_done);
        if (st->rows_estimate >= 0)
            fprintf(f, " of about %" PRId64, st->rows_estimate);
        fprintf(f, ", %" PRId64 " waves", st->waves);
    }
    fprintf(f, "\n");
}

static void on_wave(const mcdc_backfill_status *st, int64_t wave, double rate, double left, void *payload)
{
    (void)payload;
    fprintf(stderr, "backfill: wave %" PRId64 ": %" PRId64 "/%" PRId64 " chunks, %" PRId64 " rows",
            wave, st->chunks_done, st->chunks_total, st->rows_done);
    if (st->rows_estimate >= 0)
        fprintf(stderr, " of about %" PRId64, st->rows_estimate);
    fprintf(stderr, ", %.0f rows/s, about %.0fs left\n", rate, left);
    fflush(stderr);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    mcdc_backfill_options bo = MCDC_BACKFILL_OPTIONS_INIT;
    mcdc_source *src = NULL;
    int rc, exit_code = MCDC_EXIT_OK;
    static char target_path[MCDC_PATH_MAX], facts_path[MCDC_PATH_MAX];
    const char *missing = !mcdc_cli_get(a, "capture-instance") ? "--capture-instance"
                        : !mcdc_cli_get(a, "target") ? "--target"
                        : !mcdc_cli_get(a, "app-id") ? "--app-id"
                        : !mcdc_cli_get(a, "facts") ? "--facts" : NULL;
    if (missing)
        return mcdc_cli_usage_error(a->cmd, "%s is required", missing);
    bo.capture_instance = mcdc_cli_get(a, "capture-instance");
    bo.target = mcdc_cli_get(a, "target");
    bo.app_id = mcdc_cli_get(a, "app-id");
    bo.facts = mcdc_cli_get(a, "facts");
    bo.status_only = mcdc_cli_has(a, "status");
    bo.progress_path = mcdc_cli_get(a, "progress");
    if (mcdc_cli_local_path_check(a, "progress"))
        return MCDC_EXIT_USAGE;
    bo.range = mcdc_cli_get(a, "range");
    const char *iso = mcdc_cli_get(a, "isolation");
    if (iso && !strcmp(iso, "snapshot"))
        bo.isolation = MCDC_ISOLATION_SNAPSHOT;
    else if (iso && !strcmp(iso, "read-committed"))
        bo.isolation = MCDC_ISOLATION_READ_COMMITTED;
    else if (iso)
        return mcdc_cli_usage_error(a->cmd, "--isolation %s: expected snapshot or read-committed", iso);
    if (mcdc_cli_get(a, "lock-timeout")) {
        int64_t us = 0;
        if ((rc = mcdc_duration_parse(&us, mcdc_cli_get(a, "lock-timeout"))) < 0)
            goto fail;
        if (us < 0 || us / 1000 > INT32_MAX)
            return mcdc_cli_usage_error(a->cmd, "--lock-timeout %s: from 0ms to 24d", mcdc_cli_get(a, "lock-timeout"));
        bo.lock_timeout_ms = us / 1000;
    }
    if (mcdc_cli_get(a, "min-headroom") &&
        ((rc = mcdc_duration_parse(&bo.min_headroom_us, mcdc_cli_get(a, "min-headroom"))) < 0 ||
         bo.min_headroom_us <= 0)) {
        if (rc == 0)
            mcdc_error_set(MCDC_EINVAL, "--min-headroom %s: must be positive", mcdc_cli_get(a, "min-headroom"));
        goto fail;
    }
    if ((rc = parse_count(&bo.chunk_rows, a, "chunk-rows", false)) < 0 ||
        (rc = parse_count(&bo.max_waves, a, "max-waves", false)) < 0 ||
        (rc = parse_seconds(&bo.max_us, a, "max-seconds", false)) < 0 ||
        (rc = parse_seconds(&bo.target_wave_us, a, "target-wave-seconds", true)) < 0 ||
        (rc = mcdc_warehouse_resolve(target_path, ctx->warehouse, bo.target)) < 0 ||
        (rc = mcdc_warehouse_resolve(facts_path, ctx->warehouse, bo.facts)) < 0)
        goto fail;
    bo.target_path = target_path;
    bo.facts_path = facts_path;
    const char *spec = mcdc_cli_get(a, "source");
    if (!spec)
        spec = getenv("MSSQL_CDC_SOURCE");
    if (!spec || !*spec)
        return mcdc_cli_usage_error(a->cmd, "no source: pass --source or set MSSQL_CDC_SOURCE");
    if ((rc = mcdc_source_open(&src, spec)) < 0)
        goto fail;
    bo.source = src;
    bo.progress = on_wave;
    mcdc_backfill_status st;
    rc = mcdc_backfill_run(&bo, &st);
    if (rc < 0)
        goto fail;
    if (bo.status_only) {
        print_status(stdout, &st);
        exit_code = st.complete ? MCDC_EXIT_OK : MCDC_EXIT_NO;
        goto done;
    }
    if (st.partial) {
        char l[MCDC_LSN_STRLEN];
        printf("backfill %s --range %s: %" PRId64 " waves, %" PRId64 "/%" PRId64 " chunks, %" PRId64
               " rows at %s; %s\n", bo.target, bo.range, st.run_waves, st.chunks_done, st.chunks_total,
               st.run_rows, mcdc_lsn_format(l, &st.partial_lsn),
               st.partial_complete ? "complete (the stream's snapshot is unchanged)"
                                   : "stopped: chunks left (a rerun reads the whole range again)");
        exit_code = st.partial_complete ? MCDC_EXIT_OK : MCDC_EXIT_NO;
        goto done;
    }
    printf("backfill %s: %" PRId64 " waves, %" PRId64 " chunks, %" PRId64 " rows this run; ",
           bo.target, st.run_waves, st.run_chunks, st.run_rows);
    print_status(stdout, &st);
    exit_code = st.complete ? MCDC_EXIT_OK : MCDC_EXIT_NO;
    goto done;
fail:
    exit_code = mcdc_cli_fail();
done:
    mcdc_source_close(src);
    fflush(stdout);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_backfill = {
    "backfill",
    "read an open chunked snapshot into bronze in waves, beside the stream; resumable",
    "",
    0, 0, opts,
    "mssql-cdc backfill --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v3 --facts ops.ingestion_facts --chunk-rows 50000\n"
    "mssql-cdc backfill --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v3 --facts ops.ingestion_facts --status\n"
    "mssql-cdc backfill --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v3 --facts ops.ingestion_facts --range 1000..2000\n"
    "mssql-cdc backfill --source @sqlserver.src --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v3 --facts ops.ingestion_facts --isolation snapshot --lock-timeout 5s",
    run
};
