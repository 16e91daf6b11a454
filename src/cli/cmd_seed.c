/*
 * cli/cmd_seed.c: `mssql-cdc seed`: a stream's first snapshot from an existing copy of the
 * table (a Delta table made elsewhere, as in a migration), stamped with the LSN of --as-of.
 *
 * Parses and checks the arguments, opens the source, runs mcdc_seed_run
 * (src/pipeline/seed.c) and prints what it appended. Exit codes: 0 seeded (also a rerun of
 * the same seed), 2 bad usage or input (nothing written), 3 failure, 4 --as-of older than
 * what CDC still holds. Reference: docs/reference/cli-seed.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "mcdc/backfill.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "mcdc/warehouse.h"

static const mcdc_opt opts[] = {
    { "source", 0, MCDC_OPT_VALUE, "SRC", "sim:PATH, odbc:CONNECTION-STRING or @FILE (default $MSSQL_CDC_SOURCE)" },
    { "capture-instance", 0, MCDC_OPT_VALUE, "CI", "the stream's capture instance (required)" },
    { "target", 0, MCDC_OPT_VALUE, "NAME", "the stream's bronze table (required)" },
    { "from", 0, MCDC_OPT_VALUE, "TABLE", "the copy: a Delta table, columns matched by name ignoring case (required)" },
    { "as-of", 0, MCDC_OPT_VALUE, "TIME|LSN", "when the copy was taken: a time (UTC without a zone) or a commit LSN (required)" },
    { "app-id", 0, MCDC_OPT_VALUE, "ID", "the stream's base app id (required)" },
    { "facts", 0, MCDC_OPT_VALUE, "NAME", "the stream's facts table: the bootstrap row goes there (required)" },
    { 0 }
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    mcdc_seed_options so = MCDC_SEED_OPTIONS_INIT;
    mcdc_source *src = NULL;
    int rc, exit_code = MCDC_EXIT_OK;
    static char target_path[MCDC_PATH_MAX], from_path[MCDC_PATH_MAX], facts_path[MCDC_PATH_MAX];
    const char *missing = !mcdc_cli_get(a, "capture-instance") ? "--capture-instance"
                        : !mcdc_cli_get(a, "target") ? "--target"
                        : !mcdc_cli_get(a, "from") ? "--from"
                        : !mcdc_cli_get(a, "as-of") ? "--as-of"
                        : !mcdc_cli_get(a, "app-id") ? "--app-id"
                        : !mcdc_cli_get(a, "facts") ? "--facts" : NULL;
    if (missing)
        return mcdc_cli_usage_error(a->cmd, "%s is required", missing);
    so.capture_instance = mcdc_cli_get(a, "capture-instance");
    so.target = mcdc_cli_get(a, "target");
    so.from = mcdc_cli_get(a, "from");
    so.as_of = mcdc_cli_get(a, "as-of");
    so.app_id = mcdc_cli_get(a, "app-id");
    so.facts = mcdc_cli_get(a, "facts");
    if ((rc = mcdc_warehouse_resolve(target_path, ctx->warehouse, so.target)) < 0 ||
        (rc = mcdc_warehouse_resolve(from_path, ctx->warehouse, so.from)) < 0 ||
        (rc = mcdc_warehouse_resolve(facts_path, ctx->warehouse, so.facts)) < 0)
        goto fail;
    so.target_path = target_path;
    so.from_path = from_path;
    so.facts_path = facts_path;
    const char *spec = mcdc_cli_get(a, "source");
    if (!spec)
        spec = getenv("MSSQL_CDC_SOURCE");
    if (!spec || !*spec)
        return mcdc_cli_usage_error(a->cmd, "no source: pass --source or set MSSQL_CDC_SOURCE");
    if ((rc = mcdc_source_open(&src, spec)) < 0)
        goto fail;
    so.source = src;
    mcdc_seed_result res;
    if ((rc = mcdc_seed_run(&so, &res)) < 0)
        goto fail;
    char l[MCDC_LSN_STRLEN], t[MCDC_TIME_STRLEN];
    if (res.already)
        printf("seed %s: already holds this seed of %s at %s (%s); nothing read again\n", so.target, so.from,
               mcdc_lsn_format(l, &res.lsn), mcdc_time_format(t, res.commit_ts_us, 3, true));
    else
        printf("seed %s: %" PRId64 " rows of %s as of %s (%s); run the stream with --bootstrap: it starts "
               "after it\n", so.target, res.rows, so.from, mcdc_lsn_format(l, &res.lsn),
               mcdc_time_format(t, res.commit_ts_us, 3, true));
    goto done;
fail:
    exit_code = mcdc_cli_fail();
done:
    mcdc_source_close(src);
    fflush(stdout);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_seed = {
    "seed",
    "a stream's first snapshot from an existing copy of the table, stamped with the LSN of --as-of",
    "",
    0, 0, opts,
    "mssql-cdc seed --source sim:demo.db --capture-instance dbo_orders --target bronze.orders \\\n"
    "    --from copy.orders --as-of 2026-10-01T14:00:00 --app-id orders-v1 --facts ops.ingestion_facts",
    run
};
