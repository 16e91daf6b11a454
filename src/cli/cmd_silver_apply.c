/*
 * cli/cmd_silver_apply.c: `mssql-cdc silver apply`: keep a silver table equal to the
 * source table from bronze (mcdc_silver_apply), then print {rebuilt, applied_lsn,
 * finalized_until, bronze_found} and what the merge touched. Keys come from --keys, or
 * from the capture instance's unique index through --source. A --bronze that does not
 * exist is exit 2 before anything is written (a typo must not stay green forever), unless
 * --allow-missing-bronze says the stream has not written it yet. Reference:
 * docs/reference/cli-silver.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "mcdc/delta.h"
#include "mcdc/silver.h"
#include "mcdc/source.h"
#include "mcdc/time.h"
#include "mcdc/warehouse.h"

static const mcdc_opt opts[] = {
    { "bronze", 0, MCDC_OPT_REQUIRED, "NAME", "the bronze table the stream writes (name or path)" },
    { "silver", 0, MCDC_OPT_REQUIRED, "NAME", "the silver table to keep (created on the first call)" },
    { "capture-instance", 0, MCDC_OPT_REQUIRED, "CI[,CI]", "the capture instance(s) of the source table in bronze" },
    { "keys", 0, MCDC_OPT_VALUE, "K1[,K2...]", "key columns (or --source to read the unique index)" },
    { "source", 0, MCDC_OPT_VALUE, "SRC", "source to read the keys and instances from (sim:PATH, odbc:..., @FILE)" },
    { "control", 0, MCDC_OPT_REQUIRED, "NAME", "the control table (positions and verdicts)" },
    { "facts", 0, MCDC_OPT_VALUE, "NAME", "the facts table; without it silver's verdict is held" },
    { "granularity", 0, MCDC_OPT_VALUE, "minute|hour|day", "the verdict's period (default hour)" },
    { "target-file-rows", 0, MCDC_OPT_VALUE, "N", "rows per silver file (default 262144)" },
    { "format", 0, MCDC_OPT_VALUE, "text|json", "output format (default text)" },
    { "mode", 0, MCDC_OPT_VALUE, "scd1|scd2", "scd1: the table as it is now (default); scd2: one row per version of a key" },
    { "soft-deletes", 0, MCDC_OPT_SWITCH, NULL, "scd1: keep a deleted key, flagged _deleted with its delete's LSN and time" },
    { "write-mode", 0, MCDC_OPT_VALUE, "rewrite|deletion-vectors", "scd1: write changed files again, or mark replaced rows in deletion vectors (default: the table's, else rewrite)" },
    { "allow-missing-bronze", 0, MCDC_OPT_SWITCH, NULL, "a --bronze that does not exist yet is no error: nothing is applied" },
    { 0 }
};

/* Split a comma list into @p out (pointers into @p buf). */
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

/* The source table's instances: the instance list of the table the first given CI
 * belongs to, found by trying the default naming SCHEMA_TABLE at each underscore. */
static int instances_from_source(mcdc_source *src, const char *ci, char ***out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    for (const char *u = strchr(ci, '_'); u; u = strchr(u + 1, '_')) {
        char table[512];
        if (snprintf(table, sizeof table, "%.*s.%s", (int)(u - ci), ci, u + 1) >= (int)sizeof table)
            break;
        mcdc_capture_instance *a = NULL;
        size_t n = 0;
        if (src->ops->capture_instances(src, table, &a, &n) < 0) {
            mcdc_error_clear();
            continue;
        }
        bool hit = false;
        for (size_t i = 0; i < n; i++)
            hit |= strcasecmp(a[i].name, ci) == 0;
        if (hit) {
            char **names = calloc(n, sizeof *names);
            for (size_t i = 0; names && i < n; i++)
                names[i] = strdup(a[i].name);
            mcdc_capture_instances_free(a, n);
            if (!names)
                return mcdc_error_set(MCDC_ENOMEM, "out of memory");
            *out = names;
            *n_out = n;
            return 0;
        }
        mcdc_capture_instances_free(a, n);
    }
    return 0;
}

static void print_lsn(mcdc_buf *b, bool has, const mcdc_lsn *l, bool json)
{
    char t[MCDC_LSN_STRLEN];
    if (!has)
        mcdc_buf_puts(b, json ? "null" : "none");
    else
        mcdc_buf_printf(b, json ? "\"%s\"" : "%s", mcdc_lsn_format(t, l));
}

static void print_verdict(mcdc_buf *b, const mcdc_verdict *v, bool json)
{
    char t[MCDC_TIME_STRLEN];
    if (!v->has)
        mcdc_buf_puts(b, json ? "null" : "none");
    else
        mcdc_buf_printf(b, json ? "\"%s\"" : "%s", mcdc_time_format(t, v->until_us, 6, false));
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    const char *bronze = mcdc_cli_get(a, "bronze"), *silver = mcdc_cli_get(a, "silver");
    const char *ci = mcdc_cli_get(a, "capture-instance"), *control = mcdc_cli_get(a, "control");
    const char *keys = mcdc_cli_get(a, "keys"), *source = mcdc_cli_get(a, "source");
    const char *facts = mcdc_cli_get(a, "facts"), *format = mcdc_cli_get(a, "format");
    if (!keys && !source)
        return mcdc_cli_usage_error(a->cmd, "pass --keys k1,k2 or --source SRC");
    if (keys && source)
        return mcdc_cli_usage_error(a->cmd, "--keys and --source both give the keys: pass one");
    bool json = format && strcmp(format, "json") == 0;
    if (format && !json && strcmp(format, "text") != 0)
        return mcdc_cli_usage_error(a->cmd, "--format must be text or json, not '%s'", format);
    mcdc_silver_apply_options o = MCDC_SILVER_APPLY_OPTIONS_INIT;
    const char *mode = mcdc_cli_get(a, "mode");
    if (mode && !strcmp(mode, "scd2"))
        o.mode = MCDC_SILVER_SCD2;
    else if (mode && strcmp(mode, "scd1") != 0)
        return mcdc_cli_usage_error(a->cmd, "--mode must be scd1 or scd2, not '%s'", mode);
    o.soft_deletes = mcdc_cli_has(a, "soft-deletes");
    const char *wm = mcdc_cli_get(a, "write-mode");
    if (wm && !strcmp(wm, "rewrite"))
        o.write_mode = MCDC_SILVER_WRITE_REWRITE;
    else if (wm && !strcmp(wm, "deletion-vectors"))
        o.write_mode = MCDC_SILVER_WRITE_DELETION_VECTORS;
    else if (wm)
        return mcdc_cli_usage_error(a->cmd, "--write-mode must be rewrite or deletion-vectors, not '%s'", wm);
    if (o.soft_deletes && o.mode == MCDC_SILVER_SCD2)
        return mcdc_cli_usage_error(a->cmd, "--soft-deletes is for --mode scd1: an scd2 table closes a deleted key's version");
    if (mcdc_cli_has(a, "granularity") &&
        mcdc_granularity_parse(&o.granularity, mcdc_cli_get(a, "granularity")) < 0)
        return mcdc_cli_fail();
    if (mcdc_cli_has(a, "target-file-rows")) {
        char *end;
        long long n = strtoll(mcdc_cli_get(a, "target-file-rows"), &end, 10);
        if (*end || n < 1 || n > (1LL << 40))
            return mcdc_cli_usage_error(a->cmd, "--target-file-rows must be a positive number");
        o.target_file_rows = n;
    }
    char bpath[MCDC_PATH_MAX], spath[MCDC_PATH_MAX], cpath[MCDC_PATH_MAX], fpath[MCDC_PATH_MAX];
    if (mcdc_warehouse_resolve(bpath, ctx->warehouse, bronze) < 0 ||
        mcdc_warehouse_resolve(spath, ctx->warehouse, silver) < 0 ||
        mcdc_warehouse_resolve(cpath, ctx->warehouse, control) < 0 ||
        (facts && mcdc_warehouse_resolve(fpath, ctx->warehouse, facts) < 0))
        return mcdc_cli_fail();
    int64_t bronze_version;
    if (!mcdc_cli_has(a, "allow-missing-bronze") && mcdc_delta_latest_version(&bronze_version, bpath) < 0) {
        if (mcdc_error_last()->code != MCDC_ENOTFOUND)
            return mcdc_cli_fail();
        return mcdc_cli_error(MCDC_EXIT_USAGE,
                              "check the name (the stream creates bronze with its first batch); pass "
                              "--allow-missing-bronze when the stream has not written it yet",
                              "bronze table %s does not exist", bpath);
    }

    int code = 0;
    char ci_buf[1024], key_buf[1024];
    const char *cis[32], *key_list[64];
    char **src_keys = NULL, **src_cis = NULL;
    size_t n_src_keys = 0, n_src_cis = 0;
    mcdc_source *src = NULL;
    snprintf(ci_buf, sizeof ci_buf, "%s", ci);
    int n_cis = split(ci_buf, cis, 32);
    int n_keys = 0;
    if (n_cis == 0)
        return mcdc_cli_usage_error(a->cmd, "--capture-instance is empty");
    if (keys) {
        snprintf(key_buf, sizeof key_buf, "%s", keys);
        n_keys = split(key_buf, key_list, 64);
        if (n_keys == 0)
            return mcdc_cli_usage_error(a->cmd, "--keys is empty");
    } else {
        if (mcdc_source_open(&src, source) < 0)
            return mcdc_cli_fail();
        if (src->ops->key_columns(src, cis[0], &src_keys, &n_src_keys) < 0) {
            code = mcdc_cli_fail();
            goto done;
        }
        if (n_src_keys == 0 || n_src_keys > 64) {
            code = mcdc_cli_error(MCDC_EXIT_USAGE, "pass --keys k1,k2",
                                  "capture instance %s has no unique index to key silver by", cis[0]);
            goto done;
        }
        for (size_t i = 0; i < n_src_keys; i++)
            key_list[n_keys++] = src_keys[i];
        if (n_cis == 1) {
            if (instances_from_source(src, cis[0], &src_cis, &n_src_cis) < 0) {
                code = mcdc_cli_fail();
                goto done;
            }
            for (size_t i = 0; i < n_src_cis && n_cis < 32; i++)
                if (strcasecmp(src_cis[i], cis[0]) != 0)
                    cis[n_cis++] = src_cis[i];
        }
    }
    o.bronze_name = bronze;
    o.bronze_path = bpath;
    o.silver_name = silver;
    o.silver_path = spath;
    o.control_path = cpath;
    o.facts_path = facts ? fpath : NULL;
    o.capture_instances = cis;
    o.n_capture_instances = (size_t)n_cis;
    o.keys = key_list;
    o.n_keys = (size_t)n_keys;
    mcdc_silver_apply_result r;
    if (mcdc_silver_apply(&o, &r) < 0) {
        code = mcdc_cli_fail();
        goto done;
    }
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    if (json) {
        mcdc_buf_printf(&b, "{\"rebuilt\":%s,\"applied_lsn\":", r.rebuilt ? "true" : "false");
        print_lsn(&b, r.has_applied_lsn, &r.applied_lsn, true);
        mcdc_buf_puts(&b, ",\"finalized_until\":");
        print_verdict(&b, &r.finalized_until, true);
        mcdc_buf_printf(&b, ",\"bronze_found\":%s,\"snapshot_open\":%s,\"snapshot_lsn\":",
                        r.bronze_found ? "true" : "false", r.snapshot_open ? "true" : "false");
        print_lsn(&b, r.has_snapshot_lsn, &r.snapshot_lsn, true);
        mcdc_buf_printf(&b, ",\"bronze_version\":%lld,\"silver_version\":%lld,"
                        "\"bronze_files_read\":%llu,\"bronze_files_skipped\":%llu,"
                        "\"bronze_rows_read\":%llu,\"changed_keys\":%llu,\"rows_inserted\":%llu,"
                        "\"rows_updated\":%llu,\"rows_deleted\":%llu,\"silver_files_before\":%llu,"
                        "\"silver_files_rewritten\":%llu,\"silver_files_added\":%llu,"
                        "\"silver_files_marked\":%llu,\"silver_rows_read\":%llu,\"change_set_bytes\":%zu}\n",
                        (long long)r.bronze_version, (long long)r.silver_version,
                        (unsigned long long)r.bronze_files_read,
                        (unsigned long long)r.bronze_files_skipped,
                        (unsigned long long)r.bronze_rows_read, (unsigned long long)r.changed_keys,
                        (unsigned long long)r.rows_inserted, (unsigned long long)r.rows_updated,
                        (unsigned long long)r.rows_deleted,
                        (unsigned long long)r.silver_files_before,
                        (unsigned long long)r.silver_files_rewritten,
                        (unsigned long long)r.silver_files_added,
                        (unsigned long long)r.silver_files_marked,
                        (unsigned long long)r.silver_rows_read, r.change_set_bytes);
    } else if (!r.bronze_found) {
        mcdc_buf_printf(&b, "bronze %s does not exist yet: nothing applied; applied_lsn ", bronze);
        print_lsn(&b, r.has_applied_lsn, &r.applied_lsn, false);
        mcdc_buf_puts(&b, ", finalized_until ");
        print_verdict(&b, &r.finalized_until, false);
        mcdc_buf_putc(&b, '\n');
    } else if (r.snapshot_open) {
        mcdc_buf_printf(&b, "applied %s from %s version %lld while its chunked snapshot is "
                        "open (the waves so far and the changes): %llu changed keys, %llu "
                        "inserted, %llu updated, %llu deleted; the verdict is held until its "
                        "backfill completes; applied_lsn ", silver, bronze,
                        (long long)r.bronze_version, (unsigned long long)r.changed_keys,
                        (unsigned long long)r.rows_inserted, (unsigned long long)r.rows_updated,
                        (unsigned long long)r.rows_deleted);
        print_lsn(&b, r.has_applied_lsn, &r.applied_lsn, false);
        mcdc_buf_puts(&b, ", finalized_until ");
        print_verdict(&b, &r.finalized_until, false);
        mcdc_buf_putc(&b, '\n');
    } else {
        mcdc_buf_printf(&b, "%s %s from %s version %lld: %llu changed keys, %llu inserted, "
                        "%llu updated, %llu deleted; %llu of %llu files rewritten, %llu written\n",
                        r.rebuilt ? "rebuilt" : "applied", silver, bronze,
                        (long long)r.bronze_version, (unsigned long long)r.changed_keys,
                        (unsigned long long)r.rows_inserted, (unsigned long long)r.rows_updated,
                        (unsigned long long)r.rows_deleted,
                        (unsigned long long)r.silver_files_rewritten,
                        (unsigned long long)r.silver_files_before,
                        (unsigned long long)r.silver_files_added);
        if (r.silver_files_marked)
            mcdc_buf_printf(&b, "%llu of the files rewritten kept with a deletion vector\n",
                            (unsigned long long)r.silver_files_marked);
        mcdc_buf_puts(&b, "applied_lsn ");
        print_lsn(&b, r.has_applied_lsn, &r.applied_lsn, false);
        mcdc_buf_puts(&b, ", finalized_until ");
        print_verdict(&b, &r.finalized_until, false);
        mcdc_buf_puts(&b, facts ? "\n" : " (held: no --facts)\n");
    }
    fputs(b.ptr ? b.ptr : "", stdout);
    mcdc_buf_dispose(&b);
done:
    for (size_t i = 0; i < n_src_keys; i++)
        free(src_keys[i]);
    free(src_keys);
    for (size_t i = 0; i < n_src_cis; i++)
        free(src_cis[i]);
    free(src_cis);
    mcdc_source_close(src);
    return code;
}

const mcdc_cli_command mcdc_cmd_silver_apply = {
    "silver apply",
    "keep a silver table equal to the source table from bronze",
    "",
    0, 0, opts,
    "  mssql-cdc silver apply --bronze bronze.orders --silver silver.orders \\\n"
    "    --capture-instance dbo_orders --keys order_id --control ops.control \\\n"
    "    --facts ops.ingestion_facts --format json",
    run
};
