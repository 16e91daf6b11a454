/*
 * cli/cmd_run.c: `mssql-cdc run --config FILE`: every table of a YAML config in one
 * process, on a pool of workers (src/run/).
 *
 * A thin client of the run layer: loads the config, expands it into its tables, and either
 * prints the plan after checking every table and source (--check, which writes nothing) or
 * runs them, printing one line per batch (prefixed with the table) and each table's end.
 * SIGINT and SIGTERM drain: the batches in flight finish and write their verdicts, then
 * the process exits 0; at --drain-timeout what is still in flight is abandoned (its
 * checkpoint replays it) and the exit code is 3. SIGHUP reads the config again: new
 * tables start, removed ones stop, the others run on untouched. Reference: docs/reference/cli-run.md.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcdc/run.h"

static const mcdc_opt opts[] = {
    { "config", 0, MCDC_OPT_VALUE, "FILE", "the YAML config: sources, defaults, tables (required)" },
    { "check", 0, MCDC_OPT_SWITCH, NULL, "check every table and source and print the plan; write nothing" },
    { "status", 0, MCDC_OPT_SWITCH, NULL, "print each table's state from disk, one line per table (no server needed)" },
    { "workers", 0, MCDC_OPT_VALUE, "N", "tables that read their source at once (default: the cores); as many more finish their commits beside them" },
    { "metrics-listen", 0, MCDC_OPT_VALUE, "HOST:PORT", "serve /metrics, /healthz and /readyz here (default: the config's metrics.listen)" },
    { "drain-timeout", 0, MCDC_OPT_VALUE, "DURATION", "on SIGTERM/SIGINT, how long the batches in flight get (default 30s)" },
    { 0 }
};

static void on_signal(int sig)
{
    if (sig == SIGHUP)
        mcdc_run_reload();
    else
        mcdc_run_stop();
}

/* What a reload needs: the config file, the warehouse, and every config and plan loaded
 * (the tables a run keeps point into them until it returns). */
typedef struct reloader {
    const char        *path, *warehouse;
    bool               warehouse_flag;  /* --warehouse given: it wins over warehouse: */
    mcdc_run_config  **cfgs;
    mcdc_run_plan    **plans;
    size_t             n;
} reloader;

/* SIGHUP: load the config again, expand and check it; an invalid one is refused (the run
 * goes on with the tables it has) */
static int reload(const mcdc_run_plan **out, void *payload)
{
    reloader *r = payload;
    mcdc_run_config *cfg = NULL;
    mcdc_run_plan *plan = NULL;
    int rc = mcdc_run_config_load(&cfg, r->path);
    if (rc == 0)
        rc = mcdc_run_plan_make(&plan, cfg, r->warehouse_flag || !cfg->warehouse ? r->warehouse : NULL);
    if (rc == 0)
        rc = mcdc_run_plan_check(plan, NULL, NULL);
    mcdc_run_config **c = rc == 0 ? realloc(r->cfgs, (r->n + 1) * sizeof *c) : NULL;
    if (c)
        r->cfgs = c;
    mcdc_run_plan **p = c ? realloc(r->plans, (r->n + 1) * sizeof *p) : NULL;
    if (p)
        r->plans = p;
    if (rc == 0 && (!c || !p))
        rc = mcdc_error_set(MCDC_ENOMEM, "out of memory");
    if (rc < 0) {
        mcdc_run_plan_free(plan);
        mcdc_run_config_free(cfg);
        return rc;
    }
    r->cfgs[r->n] = cfg;
    r->plans[r->n++] = plan;
    *out = plan;
    return 0;
}

static const char *val(const mcdc_run_table *t, mcdc_run_key k)
{
    return t->value[k] ? t->value[k] : "-";
}

static void print_plan_line(const mcdc_run_table *t, int rc, void *payload)
{
    const mcdc_run_plan *p = payload;
    if (rc < 0) {
        mcdc_cli_fail();
        return;
    }
    printf("table %s: source %s, capture instance %s, app_id %s, checkpoint %s",
           t->value[MCDC_RUN_KEY_TARGET], p->config->sources[t->source].name,
           t->value[MCDC_RUN_KEY_CAPTURE_INSTANCE], t->value[MCDC_RUN_KEY_APP_ID],
           t->checkpoint_path);
    printf(", facts %s, control %s, silver %s, trigger %s\n", val(t, MCDC_RUN_KEY_FACTS),
           val(t, MCDC_RUN_KEY_CONTROL), val(t, MCDC_RUN_KEY_SILVER),
           t->value[MCDC_RUN_KEY_TRIGGER] ? t->value[MCDC_RUN_KEY_TRIGGER] : "available-now");
}

static void print_offset(const mcdc_offset *o)
{
    char l[MCDC_LSN_STRLEN], t[MCDC_TIME_STRLEN];
    printf("%s", mcdc_lsn_format(l, &o->lsn));
    if (o->has_commit_ts)
        printf(" (%s)", mcdc_time_format(t, o->commit_ts_us, 3, false));
}

static void on_event(const mcdc_run_event *e, void *payload)
{
    (void)payload;
    const char *name = e->table->value[MCDC_RUN_KEY_TARGET];
    switch (e->kind) {
    case MCDC_RUN_EVENT_BATCH:
        printf("%s: batch %" PRId64 ": %" PRId64 " rows, end ", name, e->progress->batch_id,
               e->progress->num_input_rows);
        print_offset(&e->progress->end);
        printf("%s\n", e->progress->replayed ? " (replayed)" : "");
        break;
    case MCDC_RUN_EVENT_RETRY:
        fflush(stdout);
        fprintf(stderr, "mssql-cdc: warning: %s: %s; retrying in %.1fs\n", name,
                mcdc_error_last()->message, (double)e->retry_in_us / 1e6);
        break;
    case MCDC_RUN_EVENT_ERROR:
        fflush(stdout);
        mcdc_error_prefix("%s: stopped", name);
        mcdc_cli_fail();
        break;
    case MCDC_RUN_EVENT_DONE:
        printf("%s: done", name);
        if (e->has_verdict && e->verdict.has) {
            char t[MCDC_TIME_STRLEN];
            printf("; finalized_until %s", mcdc_time_format(t, e->verdict.until_us, 0, false));
        }
        printf("\n");
        break;
    }
    fflush(stdout);
}

/* --status: the state each table's run recorded, its checkpoint and its verdict */
static int status(const mcdc_run_config *cfg)
{
    mcdc_run_table_state *st = NULL;
    size_t n = 0;
    if (mcdc_run_state_read_all(&st, &n, cfg->state_dir) < 0)
        return mcdc_cli_fail();
    if (n == 0)
        printf("no table of %s has run yet (no state in %s)\n", cfg->path, cfg->state_dir);
    for (size_t i = 0; i < n; i++) {
        const mcdc_run_table_state *t = &st[i];
        char ts[MCDC_TIME_STRLEN];
        printf("%s: %s", t->table, mcdc_run_state_name(t->state));
        mcdc_offset end;
        int64_t batch = -1;
        if (mcdc_checkpoint_read_last(&end, &batch, t->checkpoint) == 0) {
            printf(", batch %" PRId64 " ending ", batch);
            print_offset(&end);
        } else {
            printf(", no batch yet");
        }
        mcdc_error_clear();
        if (t->control_path) {
            mcdc_control_row row;
            memset(&row, 0, sizeof row);
            if (mcdc_control_get(&row, t->control_path, t->table) == 0 && row.finalized_until.has)
                printf(", finalized_until %s",
                       mcdc_time_format(ts, row.finalized_until.until_us, 0, false));
            else
                printf(", no verdict yet");
            mcdc_control_row_clear(&row);
            mcdc_error_clear();
        }
        printf(", updated %s by pid %" PRId64 " (%s)", mcdc_time_format(ts, t->updated_at_us, 0, true),
               t->pid, t->alive ? "running" : "exited");
        if (t->failures)
            printf(", %d failed round%s", t->failures, t->failures == 1 ? "" : "s");
        if (t->message[0])
            printf(": %s", t->message);
        printf("\n");
    }
    mcdc_run_states_free(st, n);
    return MCDC_EXIT_OK;
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    mcdc_run_config *cfg = NULL;
    mcdc_run_plan *plan = NULL;
    mcdc_run_options ro = MCDC_RUN_OPTIONS_INIT;
    int exit_code = MCDC_EXIT_OK;
    const char *path = mcdc_cli_get(a, "config");
    if (!path)
        return mcdc_cli_usage_error(a->cmd, "--config is required");
    if (mcdc_cli_get(a, "workers")) {
        char *end = NULL;
        long n = strtol(mcdc_cli_get(a, "workers"), &end, 10);
        if (!*mcdc_cli_get(a, "workers") || *end || n < 1 || n > 1024)
            return mcdc_cli_usage_error(a->cmd, "--workers %s: not a number from 1 to 1024",
                                        mcdc_cli_get(a, "workers"));
        ro.workers = (int)n;
    }
    if (mcdc_cli_get(a, "drain-timeout") &&
        mcdc_duration_parse(&ro.drain_timeout_us, mcdc_cli_get(a, "drain-timeout")) < 0)
        return mcdc_cli_fail();
    if (mcdc_cli_has(a, "check") && mcdc_cli_has(a, "status"))
        return mcdc_cli_usage_error(a->cmd, "--check and --status: pass one or the other");
    if (mcdc_run_config_load(&cfg, path) < 0)
        return mcdc_cli_fail();
    if (mcdc_cli_has(a, "status")) {
        exit_code = status(cfg);
        goto done;
    }
    /* --warehouse wins over the config's warehouse:, which wins over the environment */
    const char *wh = ctx->warehouse_flag || !cfg->warehouse ? ctx->warehouse : NULL;
    if (mcdc_run_plan_make(&plan, cfg, wh) < 0) {
        exit_code = mcdc_cli_fail();
        goto done;
    }
    if (mcdc_cli_has(a, "check")) {
        int rc = mcdc_run_plan_check(plan, print_plan_line, plan);
        if (rc < 0) {
            exit_code = mcdc_cli_exit_code(rc);
            goto done;
        }
        printf("config %s: %zu table%s from %zu source%s, warehouse %s: ok (nothing written)\n",
               path, plan->n_tables, plan->n_tables == 1 ? "" : "s", cfg->n_sources,
               cfg->n_sources == 1 ? "" : "s", plan->warehouse);
        goto done;
    }
    ro.on_event = on_event;
    ro.metrics_listen = mcdc_cli_get(a, "metrics-listen");
    ro.reload = reload;
    reloader rl = { path, ctx->warehouse, ctx->warehouse_flag, NULL, NULL, 0 };
    ro.payload = &rl;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    mcdc_run_summary sum;
    int rc = mcdc_run_plan_run(plan, &ro, &sum);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (rc < 0) {
        exit_code = mcdc_cli_fail();
        goto done;
    }
    printf("run: %zu table%s, %zu stopped in error%s\n", sum.n_tables,
           sum.n_tables == 1 ? "" : "s", sum.n_error,
           !sum.drained ? "; drain timeout passed, batches in flight abandoned (their "
                          "checkpoints replay them)" : "");
    fflush(stdout);
    if (!sum.drained) {
        _exit(MCDC_EXIT_RUNTIME); /* workers still run; their checkpoints replay them */
    }
    if (sum.n_error)
        exit_code = mcdc_cli_exit_code(sum.first_error_rc);
    for (size_t i = 0; i < rl.n; i++) {
        mcdc_run_plan_free(rl.plans[i]);
        mcdc_run_config_free(rl.cfgs[i]);
    }
    free(rl.plans);
    free(rl.cfgs);
done:
    mcdc_run_plan_free(plan);
    mcdc_run_config_free(cfg);
    fflush(stdout);
    return exit_code;
}

const mcdc_cli_command mcdc_cmd_run = {
    "run",
    "run every table of a YAML config in one process (check it with --check)",
    "",
    0, 0, opts,
    "mssql-cdc run --config tables.yaml --check\n"
    "mssql-cdc run --config tables.yaml --status\n"
    "mssql-cdc run --config tables.yaml --workers 4 --drain-timeout 30s\n"
    "mssql-cdc run --config tables.yaml --metrics-listen 127.0.0.1:9464",
    run
};
