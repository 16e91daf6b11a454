/*
 * cli/cmd_finalization_cut.c: `finalization cut`: the newest LSN at which every listed
 * table is complete (finalize/cut.c), so that `table cat --as-of-lsn` on each gives one
 * transactionally consistent view of the database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fin_common.h"
#include "mcdc/finalize.h"

static const mcdc_opt opts[] = {
    { "control", 0, MCDC_OPT_REQUIRED, "NAME", "the control table" },
    { "facts",   0, MCDC_OPT_REQUIRED, "NAME", "the facts table the streams write" },
    { "tables",  0, MCDC_OPT_REQUIRED, "A,B", "the tables (the streams' targets), one database's" },
    { "format",  0, MCDC_OPT_VALUE, "text|json", "output format (default text)" },
    { 0 }
};

#define MAX_TABLES 256

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    const char *fmt = mcdc_cli_get(a, "format"), *list = mcdc_cli_get(a, "tables");
    if (fin_check_format(a->cmd, fmt, false) != 0)
        return MCDC_EXIT_USAGE;
    if (!*list || list[0] == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
        return mcdc_cli_usage_error(a->cmd, "--tables '%s' has an empty name", list);
    char path[FIN_PATH_MAX], fpath[FIN_PATH_MAX];
    if (fin_resolve(path, ctx, mcdc_cli_get(a, "control")) < 0 ||
        fin_resolve(fpath, ctx, mcdc_cli_get(a, "facts")) < 0)
        return mcdc_cli_fail();
    char *copy = strdup(list);
    if (!copy)
        return mcdc_cli_error(MCDC_EXIT_RUNTIME, NULL, "out of memory");
    const char *tables[MAX_TABLES];
    size_t n = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (n == MAX_TABLES) {
            free(copy);
            return mcdc_cli_usage_error(a->cmd, "--tables names more than %d tables", MAX_TABLES);
        }
        tables[n++] = t;
    }
    /* each table's bronze, resolved as the streams' --target names are: its configuration
     * says which source it holds */
    char (*paths)[FIN_PATH_MAX] = calloc(n, sizeof *paths);
    const char **tpaths = calloc(n, sizeof *tpaths);
    if (!paths || !tpaths) {
        free(paths);
        free(tpaths);
        free(copy);
        return mcdc_cli_error(MCDC_EXIT_RUNTIME, NULL, "out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = fin_resolve(paths[i], ctx, tables[i]);
        tpaths[i] = paths[i];
    }
    mcdc_cut cut;
    if (rc < 0 || mcdc_finalize_cut(&cut, path, fpath, tables, tpaths, n) < 0) {
        free(paths);
        free(tpaths);
        free(copy);
        return mcdc_cli_fail();
    }
    free(paths);
    free(tpaths);
    for (size_t i = 0; i < n; i++)
        if (cut.unidentified[i])
            fprintf(stderr, "mssql-cdc: warning: %s records no source identity (its bronze was "
                    "written before identities were recorded): the cut cannot check that it is "
                    "of the other tables' database (its stream records it when it next starts)\n", tables[i]);
    char l[MCDC_LSN_STRLEN], ts[MCDC_TIME_STRLEN] = "";
    mcdc_lsn_format(l, &cut.lsn);
    if (cut.has_commit_ts)
        mcdc_time_format(ts, cut.commit_ts_us, 3, false);
    if (fmt && !strcmp(fmt, "json")) {
        printf("{\"lsn\":\"%s\",\"commit_ts\":%s%s%s,\"lossless\":%s,\"tables\":{", l,
               ts[0] ? "\"" : "", ts[0] ? ts : "null", ts[0] ? "\"" : "",
               cut.lossless ? "true" : "false");
        for (size_t i = 0; i < n; i++) {
            char e[MCDC_LSN_STRLEN];
            mcdc_buf name = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
            if (mcdc_json_quote(&name, tables[i], strlen(tables[i])) < 0) {
                mcdc_buf_dispose(&name);
                mcdc_cut_clear(&cut);
                free(copy);
                return mcdc_cli_fail();
            }
            printf("%s%s:\"%s\"", i ? "," : "", name.ptr, mcdc_lsn_format(e, &cut.ends[i]));
            mcdc_buf_dispose(&name);
        }
        printf("}}\n");
    } else {
        printf("lsn        %s\ncommit_ts  %s\nlossless   %s\n", l, ts[0] ? ts : "unknown",
               cut.lossless ? "yes" : "no (a recorded gap lies below the cut)");
        for (size_t i = 0; i < n; i++) {
            char e[MCDC_LSN_STRLEN];
            printf("table      %s complete up to %s\n", tables[i], mcdc_lsn_format(e, &cut.ends[i]));
        }
    }
    mcdc_cut_clear(&cut);
    free(copy);
    return fflush(stdout) == 0 ? 0 : mcdc_cli_error(MCDC_EXIT_RUNTIME, NULL, "writing stdout failed");
}

const mcdc_cli_command mcdc_cmd_finalization_cut = {
    "finalization cut",
    "the newest LSN at which every listed table is complete (a consistent cut)",
    "",
    0, 0, opts,
    "mssql-cdc finalization cut --control ops.table_finalization --facts ops.ingestion_facts \\\n"
    "    --tables bronze.orders,bronze.order_lines --format json",
    run
};
