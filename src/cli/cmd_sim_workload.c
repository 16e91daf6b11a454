/*
 * cli/cmd_sim_workload.c: `mssql-cdc sim workload DB --table T --transactions N`: a
 * deterministic synthetic workload with capture scans along the way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/time.h"
#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"table", 0, MCDC_OPT_VALUE, "SCHEMA.TABLE", "the table to change"},
    {"transactions", 0, MCDC_OPT_VALUE, "N", "how many transactions"},
    {"seed", 0, MCDC_OPT_VALUE, "S", "random seed (default 1): the same seed gives the same history"},
    {"start", 0, MCDC_OPT_VALUE, "TIME", "first commit time (default: the simulator's clock + interval; with --realtime, now)"},
    {"interval", 0, MCDC_OPT_VALUE, "DURATION", "time between commits (default 10ms)"},
    {"mix", 0, MCDC_OPT_VALUE, "insert=P,update=P,delete=P", "percentages of each change (default insert=60,update=30,delete=10)"},
    {"rows-per-transaction", 0, MCDC_OPT_VALUE, "K", "changes per transaction (default 1)"},
    {"capture-every", 0, MCDC_OPT_VALUE, "DURATION", "run a capture cycle this often, and one at the end (default 5s; 'never' for none)"},
    {"realtime", 0, MCDC_OPT_SWITCH, NULL, "commit each transaction when the host clock reaches its time (workloads at once share the clock)"},
    {"heartbeat", 0, MCDC_OPT_VALUE, "DURATION", "also beat the heartbeat of sql/heartbeat.sql this often (set up when absent), e.g. 10s"},
    {0},
};

static int parse_mix(const mcdc_cli_args *a, mcdc_sim_workload_options *o)
{
    const char *v = mcdc_cli_get(a, "mix");
    if (!v) return 0;
    int ins = 0, upd = 0, del = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        char *end;
        if (!eq) goto bad;
        *eq = '\0';
        long p = strtol(eq + 1, &end, 10);
        if (*end || end == eq + 1 || p < 0 || p > 100) goto bad;
        if (!strcmp(tok, "insert")) ins = (int)p;
        else if (!strcmp(tok, "update")) upd = (int)p;
        else if (!strcmp(tok, "delete")) del = (int)p;
        else goto bad;
    }
    if (ins + upd + del != 100)
        return mcdc_cli_usage_error(a->cmd, "bad --mix '%s': the percentages must add up to 100", v);
    o->pct_insert = ins;
    o->pct_update = upd;
    o->pct_delete = del;
    return 0;
bad:
    return mcdc_cli_usage_error(a->cmd, "bad --mix '%s': expected insert=P,update=P,delete=P", v);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    mcdc_sim_workload_options o = MCDC_SIM_WORKLOAD_OPTIONS_INIT;
    int64_t n, seed, rows;
    int rc;
    o.table = mcdc_cli_get(a, "table");
    if (!o.table) return mcdc_cli_usage_error(a->cmd, "'sim workload' needs --table");
    if (!mcdc_cli_get(a, "transactions")) return mcdc_cli_usage_error(a->cmd, "'sim workload' needs --transactions N");
    if ((rc = mcdc_sim_cli_int(a, "transactions", 0, 1, &n)) || (rc = mcdc_sim_cli_int(a, "seed", 1, 0, &seed)) ||
        (rc = mcdc_sim_cli_int(a, "rows-per-transaction", 1, 1, &rows)) || (rc = mcdc_sim_cli_time(a, "start", &o.start_us)) ||
        (rc = mcdc_sim_cli_duration(a, "interval", 10000, &o.interval_us)) || (rc = parse_mix(a, &o)))
        return rc;
    const char *ce = mcdc_cli_get(a, "capture-every");
    if (ce && !strcmp(ce, "never")) o.capture_every_us = -1;
    else if ((rc = mcdc_sim_cli_duration(a, "capture-every", 5 * INT64_C(1000000), &o.capture_every_us))) return rc;
    if (rows > 100000) return mcdc_cli_usage_error(a->cmd, "--rows-per-transaction is capped at 100000");
    o.transactions = n;
    o.seed = (uint64_t)seed;
    o.rows_per_transaction = (int)rows;
    o.realtime = mcdc_cli_has(a, "realtime");
    if (mcdc_cli_get(a, "heartbeat")) {
        if ((rc = mcdc_sim_cli_duration(a, "heartbeat", 0, &o.heartbeat_every_us))) return rc;
        if (o.heartbeat_every_us <= 0)
            return mcdc_cli_usage_error(a->cmd, "bad --heartbeat: the time between beats must be above zero");
    }
    mcdc_sim *sim;
    if (mcdc_sim_open(&sim, a->pos[0], false, NULL) < 0) return mcdc_cli_fail();
    mcdc_sim_workload_result r;
    if (mcdc_sim_workload(sim, &o, &r) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    char t[MCDC_TIME_STRLEN];
    double secs = r.elapsed_us / 1e6;
    printf("%lld transactions (%lld inserts, %lld updates, %lld deletes), %lld change rows, %lld capture scans;"
           " last commit %s; %.2f s (%.0f changes/s)\n",
           (long long)r.n_transactions, (long long)r.n_inserts, (long long)r.n_updates, (long long)r.n_deletes,
           (long long)r.n_changes, (long long)r.n_scans, mcdc_time_format(t, r.end_us, 3, true), secs,
           secs > 0 ? (double)(r.n_inserts + r.n_updates + r.n_deletes) / secs : 0.0);
    if (r.n_beats > 0) printf("%lld heartbeat beats (dbo.cdc_heartbeat)\n", (long long)r.n_beats);
    if (r.pending > 0)
        printf("%lld commits wait for a capture scan: run 'mssql-cdc sim capture %s'\n", (long long)r.pending,
               a->pos[0]);
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_workload = {
    "sim workload", "a deterministic synthetic workload with capture scans along the way", "DB", 1, 1, opts,
    "  mssql-cdc sim workload demo.db --table dbo.orders --transactions 10000 --seed 7 --start 2026-10-01T00:00:00",
    run,
};
