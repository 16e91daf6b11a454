/*
 * cli/cmd_table_set_property.c: `mssql-cdc table set-property NAME KEY=VALUE`: set a Delta
 * table property this tool knows the consequences of, in one commit.
 *
 * Only delta.enableTypeWidening=true for now: it also adds Delta's typeWidening table
 * feature (protocol reader 3, writer 7), so a bronze table can widen a column when the
 * source's type widens (docs/guides/schema-changes.md). Engines without the feature can
 * no longer read the table afterwards; that is why the stream never sets it by itself.
 * And mcdc.silver.dv_fold_share=S (0 <= S <= 1): the share of deleted rows past which a
 * silver apply in write mode deletion-vectors rewrites a file instead of marking it
 * (docs/decisions/0045-silver-deletion-vectors.md). And delta.checkpointPolicy=v2: adds
 * the v2Checkpoint feature (reader 3, writer 7) in the same commit, so the table's
 * checkpoints are V2 with sidecars (docs/decisions/0049-v2-checkpoints.md); =classic, the
 * default, changes nothing (refused on a table with the feature, which is not removed).
 * A property already set writes nothing. Any other key or value is refused (exit 2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "table_common.h"
#include "mcdc/delta.h"
#include "mcdc/pipeline.h"

static const mcdc_opt opts[] = {
    { 0 }
};

/* delta.checkpointPolicy=v2|classic: v2 adds the v2Checkpoint feature in the same commit;
 * classic is what a table without the feature already has. */
static int set_policy(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args, const char *value)
{
    bool v2 = strcmp(value, "v2") == 0;
    if (!v2 && strcmp(value, "classic") != 0)
        return mcdc_cli_usage_error(args->cmd, "delta.checkpointPolicy=%s: the policy is v2 or "
                                    "classic", value);
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
    if (ec)
        return ec;
    mcdc_delta_snapshot *snap = NULL;
    if (mcdc_delta_snapshot_open(&snap, path, -1) < 0)
        return mcdc_cli_fail();
    bool has = false;
    for (size_t i = 0; i < snap->protocol.n_writer_features; i++)
        has |= strcmp(snap->protocol.writer_features[i], "v2Checkpoint") == 0;
    int64_t version = snap->version;
    mcdc_delta_snapshot_free(snap);
    if (!v2) {
        if (has)
            return mcdc_cli_usage_error(args->cmd, "delta.checkpointPolicy=classic: %s has the "
                                        "v2Checkpoint table feature, which is not removed (its "
                                        "checkpoints stay V2)", args->pos[0]);
        printf("%s: delta.checkpointPolicy=classic (version %lld, unchanged)\n", args->pos[0],
               (long long)version);
        return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
    }
    mcdc_delta_commit_result res = { 0 };
    if (mcdc_delta_enable_v2_checkpoints(path, &res) < 0)
        return mcdc_cli_fail();
    if (res.version > version)
        printf("%s: delta.checkpointPolicy=v2 (version %lld, feature v2Checkpoint)\n",
               args->pos[0], (long long)res.version);
    else
        printf("%s: delta.checkpointPolicy=v2 (version %lld, unchanged)\n", args->pos[0],
               (long long)version);
    return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args)
{
    const char *kv = args->pos[1];
    const char *eq = strchr(kv, '=');
    static const char fold[] = "mcdc.silver.dv_fold_share";
    if (eq && (size_t)(eq - kv) == strlen(fold) && strncmp(kv, fold, strlen(fold)) == 0) {
        char *end = NULL;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || !(v >= 0 && v <= 1))
            return mcdc_cli_usage_error(args->cmd, "%s=%s: the share must be a number from 0 "
                                        "to 1", fold, eq + 1);
        char path[MCDC_PATH_MAX];
        int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
        if (ec)
            return ec;
        mcdc_delta_snapshot *snap = NULL;
        if (mcdc_delta_snapshot_open(&snap, path, -1) < 0)
            return mcdc_cli_fail();
        const char *kind = mcdc_table_kind(snap, NULL);
        bool silver = kind && strcmp(kind, "silver") == 0;
        mcdc_delta_snapshot_free(snap);
        if (!silver)
            return mcdc_cli_usage_error(args->cmd, "%s: is not a silver table (%s is silver "
                                        "apply's)", args->pos[0], fold);
        mcdc_delta_map set = { NULL, 0 };
        mcdc_delta_commit_result res = { 0 };
        int rc = mcdc_delta_map_set(&set, fold, eq + 1);
        if (rc == 0)
            rc = mcdc_delta_set_config(path, &set, NULL, &res);
        mcdc_delta_map_clear(&set);
        if (rc < 0)
            return mcdc_cli_fail();
        printf("%s: %s=%s\n", args->pos[0], fold, eq + 1);
        return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
    }
    static const char policy[] = "delta.checkpointPolicy";
    if (eq && (size_t)(eq - kv) == strlen(policy) && strncmp(kv, policy, strlen(policy)) == 0)
        return set_policy(ctx, args, eq + 1);
    if (!eq || strncmp(kv, "delta.enableTypeWidening", (size_t)(eq - kv)) != 0 ||
        eq - kv != (long)strlen("delta.enableTypeWidening"))
        return mcdc_cli_usage_error(args->cmd, "property '%.*s': not one this command sets "
                                    "(delta.enableTypeWidening=true, delta.checkpointPolicy=v2, "
                                    "mcdc.silver.dv_fold_share=S)",
                                    eq ? (int)(eq - kv) : (int)strlen(kv), kv);
    if (strcasecmp(eq + 1, "true") != 0)
        return mcdc_cli_usage_error(args->cmd, "delta.enableTypeWidening=%s: only true is "
                                    "supported (a table feature is not removed)", eq + 1);
    char path[MCDC_PATH_MAX];
    int ec = mcdc_cli_table_path(path, ctx, args->pos[0]);
    if (ec)
        return ec;
    mcdc_delta_commit_result res = { 0 };
    if (mcdc_delta_enable_type_widening(path, &res) < 0)
        return mcdc_cli_fail();
    printf("%s: delta.enableTypeWidening=true (version %lld, feature typeWidening)\n",
           args->pos[0], (long long)res.version);
    return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_table_set_property = {
    "table set-property",
    "set a table property (delta.enableTypeWidening=true: let column types widen; "
    "delta.checkpointPolicy=v2: write V2 checkpoints with sidecars; "
    "mcdc.silver.dv_fold_share=S: rewrite a silver file past that share of deleted rows)",
    "NAME KEY=VALUE",
    2, 2, opts,
    "mssql-cdc table set-property bronze.orders delta.enableTypeWidening=true",
    run
};
