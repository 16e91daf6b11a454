/*
 * cli/cmd_stream.c: `mssql-cdc stream`: run a stream from a capture instance into a bronze
 * table (and a facts table), exactly once, with an optional finalization tracker.
 *
 * A thin client of the run layer's job (src/run/job.c): parses and checks the arguments,
 * opens the source, resolves table names, and hands them to the job, which validates
 * everything before the first write, takes the checkpoint, starts the tracker (--control)
 * and silver's follower (--silver) and runs the stream. Prints one line per batch on
 * stdout and a summary. SIGINT and SIGTERM finish the batch in flight and exit 0.
 * Reference: docs/reference/cli-stream.md.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "mcdc/run.h"

static const mcdc_opt opts[] = {
    { "source", 0, MCDC_OPT_VALUE, "SRC", "sim:PATH, odbc:CONNECTION-STRING or @FILE (default $MSSQL_CDC_SOURCE)" },
    { "capture-instance", 0, MCDC_OPT_VALUE, "CI", "the capture instance to read (required)" },
    { "target", 0, MCDC_OPT_VALUE, "NAME", "bronze table name or path (required)" },
    { "app-id", 0, MCDC_OPT_VALUE, "ID", "Delta txn appId of this stream's writes (required)" },
    { "checkpoint", 0, MCDC_OPT_VALUE, "DIR", "the stream's checkpoint directory, or s3://BUCKET/PREFIX (required)" },
    { "lease", 0, MCDC_OPT_VALUE, "DURATION|off", "a checkpoint on s3://: how long its lease lasts unless renewed (default 30s, renewed every third; off: no lease)" },
    { "facts", 0, MCDC_OPT_VALUE, "NAME", "facts table: one row per batch" },
    { "trigger", 0, MCDC_OPT_VALUE, "T", "available-now (default), once or interval:DURATION" },
    { "max-commits-per-batch", 0, MCDC_OPT_VALUE, "N", "at most N source commits per batch (default unlimited)" },
    { "starting-lsn", 0, MCDC_OPT_VALUE, "X", "earliest (default), latest or an LSN; only for a new checkpoint" },
    { "bootstrap", 0, MCDC_OPT_SWITCH, NULL, "snapshot the table into bronze first (once per target)" },
    { "bootstrap-mode", 0, MCDC_OPT_VALUE, "M", "with --bootstrap: full (default, one read) or chunked (open a snapshot for `backfill`; needs --facts)" },
    { "backfill", 0, MCDC_OPT_SWITCH, NULL, "run the open chunked snapshot's waves in this process, one after each batch, the rest at the end (needs --facts)" },
    { "snapshot-on-switch", 0, MCDC_OPT_SWITCH, NULL, "after following a newer capture instance, read the table again in chunks so rows not changed since get its columns (needs --facts)" },
    { "on-data-loss", 0, MCDC_OPT_VALUE, "fail|skip|resnapshot", "on changes purged before they were read: fail (default, exit 4), skip (failOnDataLoss=false) or resnapshot (a new snapshot in generation n+1; needs --facts)" },
    { "resnapshot-interval", 0, MCDC_OPT_VALUE, "DURATION", "with --on-data-loss resnapshot: at most one automatic re-snapshot per DURATION on the source's clock (default 7d, 0: no limit)" },
    { "adopt", 0, MCDC_OPT_SWITCH, NULL, "take over an existing bronze from its owning stream (new or empty --checkpoint)" },
    { "progress", 0, MCDC_OPT_VALUE, "FILE", "append progress events as JSON lines" },
    { "control", 0, MCDC_OPT_VALUE, "NAME", "control table: advance finalized_until while streaming" },
    { "granularity", 0, MCDC_OPT_VALUE, "G", "verdict period with --control: minute, hour (default) or day" },
    { "silver", 0, MCDC_OPT_VALUE, "NAME", "silver table applied after the batches (needs --control)" },
    { "keys", 0, MCDC_OPT_VALUE, "K1[,K2]", "silver's key columns (default: the capture instance's unique index)" },
    { "columns", 0, MCDC_OPT_VALUE, "'NAME [TYPE], ...'", "read only these captured columns, in this order, retyped where a TYPE is given" },
    { "schema-change", 0, MCDC_OPT_VALUE, "P", "at DDL on the source: classify (default: go on where the stream can follow) or fail (stop at any DDL, exit 5)" },
    { "option", 0, MCDC_OPT_LIST, "KEY=VALUE", "source option (captureInstance, maxCommitsPerBatch, startingLsn, failOnDataLoss, includeCommandId, sourceTimeZone, columns, schemaChangePolicy, numPartitions)" },
    { 0 }
};

static const char *const known_options[] = {
    "captureInstance", "maxCommitsPerBatch", "startingLsn", "failOnDataLoss",
    "includeCommandId", "sourceTimeZone", "columns", "schemaChangePolicy", "numPartitions", NULL
};

static mcdc_job *volatile running; /* the job a signal stops */

static void on_signal(int sig)
{
    (void)sig;
    if (running)
        mcdc_job_stop(running);
}

/* ---- printing, as a listener ---------------------------------------------------------- */

static void print_offset(FILE *f, const mcdc_offset *o)
{
    char l[MCDC_LSN_STRLEN], t[MCDC_TIME_STRLEN];
    fprintf(f, "%s", mcdc_lsn_format(l, &o->lsn));
    if (o->has_commit_ts)
        fprintf(f, " (%s)", mcdc_time_format(t, o->commit_ts_us, 3, false));
}

static void printer(const mcdc_stream_progress *p, void *payload)
{
    (void)payload;
    if (p->kind != MCDC_PROGRESS_BATCH)
        return;
    printf("batch %" PRId64 ": %" PRId64 " rows, end ", p->batch_id, p->num_input_rows);
    print_offset(stdout, &p->end);
    printf("%s\n", p->replayed ? " (replayed)" : "");
    fflush(stdout);
}

/* ---- argument checks ------------------------------------------------------------------------ */

/* A flag and its --option spelling must agree; the option alone counts as the flag. */
static int merge_setting(const char **value, const char *flag, const mcdc_options *o,
                         const char *key)
{
    const char *ov = mcdc_options_get_str(o, key, NULL);
    if (ov && *value && strcmp(ov, *value) != 0) {
        mcdc_error_set(MCDC_EINVAL, "--%s %s and --option %s=%s disagree", flag, *value, key, ov);
        return mcdc_error_hint("give the setting once");
    }
    if (!*value)
        *value = ov;
    return 0;
}

static int resolve(char out[MCDC_PATH_MAX], const mcdc_cli_ctx *ctx, const char *name)
{
    return mcdc_warehouse_resolve(out, ctx->warehouse, name);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    mcdc_job_options jo = MCDC_JOB_OPTIONS_INIT;
    mcdc_stream_options so = MCDC_STREAM_OPTIONS_INIT;
    mcdc_options *o = NULL;
    mcdc_source *src = NULL, *bsrc = NULL;
    mcdc_job *job = NULL;
    int rc, exit_code = MCDC_EXIT_OK;
    static char target_path[MCDC_PATH_MAX], facts_path[MCDC_PATH_MAX], control_path[MCDC_PATH_MAX];
    static char silver_path[MCDC_PATH_MAX];

    if ((rc = mcdc_options_new(&o, "stream option", known_options)) < 0)
        return mcdc_cli_fail();
    int n_opt = 0;
    const char *const *items = mcdc_cli_list(a, "option", &n_opt);
    for (int i = 0; i < n_opt; i++)
        if ((rc = mcdc_options_add(o, items[i])) < 0)
            goto usage;
    mcdc_options_warn_unknown(o);

    const char *ci = mcdc_cli_get(a, "capture-instance");
    const char *mcpb = mcdc_cli_get(a, "max-commits-per-batch");
    const char *start = mcdc_cli_get(a, "starting-lsn");
    const char *columns = mcdc_cli_get(a, "columns");
    const char *policy = mcdc_cli_get(a, "schema-change");
    if ((rc = merge_setting(&columns, "columns", o, "columns")) < 0 ||
        (rc = merge_setting(&ci, "capture-instance", o, "captureInstance")) < 0 ||
        (rc = merge_setting(&mcpb, "max-commits-per-batch", o, "maxCommitsPerBatch")) < 0 ||
        (rc = merge_setting(&start, "starting-lsn", o, "startingLsn")) < 0)
        goto usage;
    const char *missing = !ci ? "--capture-instance" : !mcdc_cli_get(a, "target") ? "--target"
                        : !mcdc_cli_get(a, "app-id") ? "--app-id"
                        : !mcdc_cli_get(a, "checkpoint") ? "--checkpoint" : NULL;
    if (missing) {
        exit_code = mcdc_cli_usage_error(a->cmd, "%s is required", missing);
        goto done;
    }
    so.capture_instance = ci;
    so.target = mcdc_cli_get(a, "target");
    so.app_id = mcdc_cli_get(a, "app-id");
    so.checkpoint = mcdc_cli_get(a, "checkpoint");
    so.facts = mcdc_cli_get(a, "facts");
    so.progress_path = mcdc_cli_get(a, "progress");
    if (mcdc_cli_local_path_check(a, "progress"))
        return MCDC_EXIT_USAGE;
    so.bootstrap = mcdc_cli_has(a, "bootstrap");
    so.adopt = mcdc_cli_has(a, "adopt");
    if (mcdc_cli_get(a, "bootstrap-mode")) {
        const char *m = mcdc_cli_get(a, "bootstrap-mode");
        const char *odl = mcdc_cli_get(a, "on-data-loss");
        if (!so.bootstrap && !(odl && !strcmp(odl, "resnapshot"))) {
            exit_code = mcdc_cli_usage_error(a->cmd, "--bootstrap-mode needs --bootstrap (or "
                                             "--on-data-loss resnapshot, whose snapshots it "
                                             "takes)");
            goto done;
        }
        if (strcmp(m, "full") && strcmp(m, "chunked")) {
            exit_code = mcdc_cli_usage_error(a->cmd, "--bootstrap-mode %s: expected full or chunked", m);
            goto done;
        }
        so.bootstrap_mode = strcmp(m, "chunked") ? MCDC_BOOTSTRAP_FULL : MCDC_BOOTSTRAP_CHUNKED;
        if (so.bootstrap_mode == MCDC_BOOTSTRAP_CHUNKED && !so.facts && so.bootstrap) {
            exit_code = mcdc_cli_usage_error(a->cmd, "--bootstrap-mode chunked needs --facts (the "
                                             "snapshot's state is recorded there)");
            goto done;
        }
    }
    if (mcdc_cli_get(a, "trigger") &&
        (rc = mcdc_trigger_parse(&so.trigger, &so.interval_us, mcdc_cli_get(a, "trigger"))) < 0)
        goto usage;
    if (mcpb) {
        char *end = NULL;
        long long n = strtoll(mcpb, &end, 10);
        if (!*mcpb || *end || n < 1) {
            mcdc_error_set(MCDC_EINVAL, "max commits per batch '%s': not a positive integer", mcpb);
            goto usage;
        }
        so.max_commits_per_batch = n;
    }
    if (start) {
        if ((rc = mcdc_start_parse(&so.starting, &so.starting_lsn, start)) < 0)
            goto usage;
        so.starting_given = true;
    }
    if (policy && strcmp(policy, "classify") && strcmp(policy, "fail")) {
        exit_code = mcdc_cli_usage_error(a->cmd, "--schema-change %s: expected classify or fail",
                                         policy);
        goto done;
    }
    so.schema_change = policy && !strcmp(policy, "fail") ? MCDC_SCHEMA_CHANGE_FAIL
                                                         : MCDC_SCHEMA_CHANGE_CLASSIFY;
    if (so.adopt && (so.bootstrap || so.starting_given)) {
        exit_code = mcdc_cli_usage_error(a->cmd, "--adopt and %s: pass one or the other "
                                         "(--adopt resumes where the table's owner left off)",
                                         so.bootstrap ? "--bootstrap" : "--starting-lsn");
        goto done;
    }
    if (so.bootstrap && so.starting_given) {
        exit_code = mcdc_cli_usage_error(a->cmd, "--bootstrap and --starting-lsn: pass one or "
                                         "the other (the snapshot's LSN is where the stream "
                                         "starts)");
        goto done;
    }
    if ((rc = mcdc_options_get_bool(o, "failOnDataLoss", true, &so.fail_on_data_loss)) < 0 ||
        (rc = mcdc_options_get_bool(o, "includeCommandId", true, &so.include_command_id)) < 0)
        goto usage;
    const char *odl = mcdc_cli_get(a, "on-data-loss");
    if (odl) {
        if (!strcmp(odl, "fail"))
            so.on_data_loss = MCDC_ON_DATA_LOSS_FAIL;
        else if (!strcmp(odl, "skip"))
            so.on_data_loss = MCDC_ON_DATA_LOSS_SKIP;
        else if (!strcmp(odl, "resnapshot"))
            so.on_data_loss = MCDC_ON_DATA_LOSS_RESNAPSHOT;
        else {
            exit_code = mcdc_cli_usage_error(a->cmd, "--on-data-loss %s: expected fail, skip or "
                                             "resnapshot", odl);
            goto done;
        }
        /* failOnDataLoss=false is the same setting as skip: one spelling, one value */
        if (mcdc_options_get_str(o, "failOnDataLoss", NULL) &&
            so.fail_on_data_loss != (so.on_data_loss != MCDC_ON_DATA_LOSS_SKIP)) {
            exit_code = mcdc_cli_usage_error(a->cmd, "--on-data-loss %s and --option "
                                             "failOnDataLoss=%s disagree (failOnDataLoss=false "
                                             "is --on-data-loss skip): give the setting once",
                                             odl, so.fail_on_data_loss ? "true" : "false");
            goto done;
        }
        if (so.on_data_loss == MCDC_ON_DATA_LOSS_SKIP)
            so.fail_on_data_loss = false;
    }
    so.snapshot_on_switch = mcdc_cli_has(a, "snapshot-on-switch");
    if (so.snapshot_on_switch && !so.facts) {
        exit_code = mcdc_cli_usage_error(a->cmd, "--snapshot-on-switch needs --facts (the "
                                         "switch and the snapshot after it are recorded there)");
        goto done;
    }
    if (so.on_data_loss == MCDC_ON_DATA_LOSS_RESNAPSHOT && !so.facts) {
        exit_code = mcdc_cli_usage_error(a->cmd, "--on-data-loss resnapshot needs --facts (the "
                                         "re-snapshot and its gap are recorded there)");
        goto done;
    }
    if (mcdc_cli_get(a, "lease")) {
        const char *lv = mcdc_cli_get(a, "lease");
        char subject[80];
        snprintf(subject, sizeof subject, "--lease %s", lv);
        if ((rc = mcdc_checkpoint_lease_parse(&so.lease_us, lv, subject)) < 0)
            goto usage;
    }
    if (mcdc_cli_get(a, "resnapshot-interval")) {
        const char *iv = mcdc_cli_get(a, "resnapshot-interval");
        if (so.on_data_loss != MCDC_ON_DATA_LOSS_RESNAPSHOT) {
            exit_code = mcdc_cli_usage_error(a->cmd, "--resnapshot-interval needs --on-data-loss "
                                             "resnapshot");
            goto done;
        }
        if (!strcmp(iv, "0"))
            so.resnapshot_interval_us = 0;
        else if ((rc = mcdc_duration_parse(&so.resnapshot_interval_us, iv)) < 0)
            goto usage;
    }
    if (!so.fail_on_data_loss && !so.facts) {
        exit_code = mcdc_cli_usage_error(a->cmd, "%s needs --facts (skipped changes are "
                                         "recorded there as a data_skipped row)",
                                         odl ? "--on-data-loss skip" : "failOnDataLoss=false");
        goto done;
    }
    mcdc_granularity gran = MCDC_GRAN_HOUR;
    if (mcdc_cli_get(a, "granularity")) {
        if (!mcdc_cli_get(a, "control")) {
            exit_code = mcdc_cli_usage_error(a->cmd, "--granularity needs --control");
            goto done;
        }
        if ((rc = mcdc_finalize_granularity_parse(&gran, mcdc_cli_get(a, "granularity"))) < 0)
            goto usage;
    }
    if (mcdc_cli_get(a, "silver") && !mcdc_cli_get(a, "control")) {
        exit_code = mcdc_cli_usage_error(a->cmd, "--silver needs --control (silver's position "
                                         "and verdict live there)");
        goto done;
    }
    if (mcdc_cli_get(a, "keys") && !mcdc_cli_get(a, "silver")) {
        exit_code = mcdc_cli_usage_error(a->cmd, "--keys needs --silver");
        goto done;
    }
    if ((rc = resolve(target_path, ctx, so.target)) < 0)
        goto usage;
    so.target_path = target_path;
    if (so.facts) {
        if ((rc = resolve(facts_path, ctx, so.facts)) < 0)
            goto usage;
        so.facts_path = facts_path;
    }

    long n_parts = 0;
    const char *np = mcdc_options_get_str(o, "numPartitions", NULL);
    if (np) {
        char *end = NULL;
        n_parts = strtol(np, &end, 10);
        if (!*np || *end || n_parts < 1 || n_parts > 64) {
            mcdc_error_set(MCDC_EINVAL, "numPartitions=%s: expected an integer from 1 to 64", np);
            mcdc_error_hint("give the number of connections one batch is read over, e.g. --option numPartitions=4");
            goto usage;
        }
    }
    const char *spec = mcdc_cli_get(a, "source");
    if (!spec)
        spec = getenv("MSSQL_CDC_SOURCE");
    if (!spec || !*spec) {
        exit_code = mcdc_cli_usage_error(a->cmd, "no source: pass --source or set "
                                         "MSSQL_CDC_SOURCE");
        goto done;
    }
    if ((rc = mcdc_source_open(&src, spec)) < 0)
        goto usage; /* unknown scheme, bad connection string: exit 2; unreachable server: 3 */
    if (n_parts && (rc = mcdc_source_set_partitions(src, (int)n_parts)) < 0)
        goto usage;
    if (columns && (rc = mcdc_source_select_columns(&src, columns)) < 0)
        goto usage; /* a malformed list: exit 2; its names are checked with the source's */
    if (mcdc_cli_has(a, "backfill")) { /* the waves read on a connection of their own */
        if (!so.facts) {
            exit_code = mcdc_cli_usage_error(a->cmd, "--backfill needs --facts (the snapshot's state is there)");
            goto done;
        }
        mcdc_chunked_snapshot cs;
        if (!(so.bootstrap && so.bootstrap_mode == MCDC_BOOTSTRAP_CHUNKED) &&
            ((rc = mcdc_chunked_snapshot_find(&cs, so.facts_path, so.target)) < 0 || !cs.found)) {
            if (rc < 0)
                goto usage;
            exit_code = mcdc_cli_usage_error(a->cmd, "--backfill: no chunked snapshot of %s was ever opened "
                                             "(facts %s): add --bootstrap --bootstrap-mode chunked", so.target,
                                             so.facts);
            goto done;
        }
        if ((rc = mcdc_source_open(&bsrc, spec)) < 0 ||
            (columns && (rc = mcdc_source_select_columns(&bsrc, columns)) < 0))
            goto usage;
        jo.backfill_source = bsrc;
    }
    so.source = src;
    jo.stream = so;
    jo.source_time_zone = mcdc_options_get_str(o, "sourceTimeZone", NULL);
    jo.granularity = gran;
    jo.keys = mcdc_cli_get(a, "keys");
    if (mcdc_cli_get(a, "control")) {
        if ((rc = resolve(control_path, ctx, mcdc_cli_get(a, "control"))) < 0)
            goto usage;
        jo.control = mcdc_cli_get(a, "control");
        jo.control_path = control_path;
    }
    if (mcdc_cli_get(a, "silver")) {
        if ((rc = resolve(silver_path, ctx, mcdc_cli_get(a, "silver"))) < 0)
            goto usage;
        jo.silver = mcdc_cli_get(a, "silver");
        jo.silver_path = silver_path;
    }

    /* every input before the first write; then the checkpoint is taken (created when new),
     * the tracker and silver's follower start */
    mcdc_stream_result res;
    if ((rc = mcdc_job_new(&job, &jo)) < 0 || (rc = mcdc_job_check(job)) < 0 ||
        (rc = mcdc_job_add_listener(job, printer, NULL)) < 0 || (rc = mcdc_job_open(job)) < 0)
        goto usage;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    running = job;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    rc = mcdc_job_run(job, &res);
    running = NULL;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (rc < 0)
        goto usage;

    printf("stream %s: %" PRId64 " batch%s, %" PRId64 " rows", so.app_id, res.n_batches,
           res.n_batches == 1 ? "" : "es", res.n_rows);
    if (res.n_snapshot_rows)
        printf(", %" PRId64 " snapshot rows", res.n_snapshot_rows);
    if (res.has_end) {
        printf("; %s is complete up to ", so.target);
        print_offset(stdout, &res.end);
    } else {
        printf("; nothing committed yet");
    }
    printf("\n");
    bool has_backfill = false;
    mcdc_backfill_status bst;
    int64_t n_waves = 0;
    if (mcdc_job_finish_backfill(job, &has_backfill, &bst, &n_waves) < 0)
        goto usage;
    if (has_backfill) {
        char l[MCDC_LSN_STRLEN];
        printf("backfill %s: %" PRId64 " waves in this process; snapshot %s: %s, %" PRId64 "/%" PRId64
               " chunks, %" PRId64 " rows\n", so.target, n_waves, mcdc_lsn_format(l, &bst.snapshot),
               bst.complete ? "complete" : "open", bst.chunks_done, bst.chunks_total, bst.rows_done);
    }
    bool has_tracker = false, has_silver = false;
    mcdc_verdict v;
    if (mcdc_job_verdict(job, &has_tracker, &v) < 0) {
        exit_code = mcdc_cli_fail();
        if (exit_code == MCDC_EXIT_OK)
            exit_code = MCDC_EXIT_RUNTIME;
        goto done;
    }
    if (has_tracker) {
        if (v.has) {
            char t[MCDC_TIME_STRLEN];
            printf("finalized_until %s for %s in %s\n",
                   mcdc_time_format(t, v.until_us, 0, false), so.target,
                   mcdc_cli_get(a, "control"));
        } else {
            printf("no verdict yet for %s in %s\n", so.target, mcdc_cli_get(a, "control"));
        }
    }
    mcdc_job_silver_result sr;
    if (mcdc_job_finish_silver(job, &has_silver, &sr) < 0)
        goto usage;
    if (has_silver) {
        char l[MCDC_LSN_STRLEN], t[MCDC_TIME_STRLEN];
        printf("silver %s: %llu applies; applied_lsn %s, finalized_until %s\n",
               mcdc_cli_get(a, "silver"), (unsigned long long)sr.n_applies,
               sr.last.has_applied_lsn ? mcdc_lsn_format(l, &sr.last.applied_lsn) : "none",
               sr.last.finalized_until.has
                   ? mcdc_time_format(t, sr.last.finalized_until.until_us, 0, false)
                   : "none");
    }
    goto done;
usage:
    exit_code = mcdc_cli_fail();
done:
    mcdc_job_free(job);
    mcdc_source_close(src);
    mcdc_source_close(bsrc);
    mcdc_options_free(o);
    fflush(stdout);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_stream = {
    "stream",
    "stream a capture instance into a bronze table and a facts table, exactly once",
    "",
    0, 0, opts,
    "mssql-cdc stream --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v1 --checkpoint ck/orders --facts ops.ingestion_facts\n"
    "mssql-cdc stream --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v2 --checkpoint ck/orders-v2 --facts ops.ingestion_facts --adopt\n"
    "mssql-cdc stream --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v3 --checkpoint ck/orders-v3 --facts ops.ingestion_facts --bootstrap \\\n"
    "    --bootstrap-mode chunked\n"
    "mssql-cdc stream --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v1 --checkpoint ck/orders --facts ops.ingestion_facts --on-data-loss resnapshot\n"
    "mssql-cdc stream --source sim:demo.db --capture-instance dbo_orders --target bronze.orders_slim \\\n"
    "    --app-id orders-slim --checkpoint ck/orders-slim --columns 'order_id, amount decimal(20,2)'\n"
    "mssql-cdc stream --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --app-id orders-v1 --checkpoint ck/orders --facts ops.ingestion_facts --snapshot-on-switch\n"
    "mssql-cdc --warehouse s3://my-lake/warehouse stream --source sim:demo.db --capture-instance dbo_orders \\\n"
    "    --target bronze.orders --app-id orders-v1 --checkpoint s3://my-lake/checkpoints/orders --lease 30s",
    run
};
