/*
 * cli/cmd_finalization_is_final.c: `finalization is-final`: an orchestrator sensor.
 * Exit 0 when the period ending at --period-end is complete, 1 when not yet, 2 when the
 * control table or the row does not exist (a typo must not keep a sensor waiting).
 *
 * With --wait it asks again every --poll (default 10s) until the period is final (exit
 * 0) or --timeout passes (exit 1; no timeout: wait until final). A missing table or row
 * is exit 2 at once, on the first read or any later one; a corrupt table is exit 3. It
 * only reads the control table, never writes.
 */
#include <stdio.h>
#include <time.h>

#include "cli.h"
#include "fin_common.h"
#include "mcdc/finalize.h"

static const mcdc_opt opts[] = {
    { "control",    0, MCDC_OPT_REQUIRED, "NAME", "the control table" },
    { "table",      0, MCDC_OPT_REQUIRED, "NAME", "the row's key" },
    { "period-end", 0, MCDC_OPT_REQUIRED, "T", "end of the period [start, end) to check, UTC unless a zone is given" },
    { "quiet",     'q', MCDC_OPT_SWITCH, NULL, "print nothing; the exit code says it" },
    { "wait",       0, MCDC_OPT_SWITCH, NULL, "ask again until final (exit 0) or --timeout (exit 1)" },
    { "timeout",    0, MCDC_OPT_VALUE, "DURATION", "with --wait: give up after this long (default: no limit)" },
    { "poll",       0, MCDC_OPT_VALUE, "DURATION", "with --wait: time between two reads (default 10s)" },
    { 0 }
};

static void sleep_us(int64_t us)
{
    struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* A duration option of --wait, into @p out_us (left as is when not given). */
static int wait_duration(const mcdc_cli_args *a, const char *name, int64_t *out_us)
{
    const char *v = mcdc_cli_get(a, name);
    if (!v)
        return 0;
    if (!mcdc_cli_has(a, "wait"))
        return mcdc_cli_usage_error(a->cmd, "--%s needs --wait", name);
    if (mcdc_duration_parse(out_us, v) < 0)
        return mcdc_cli_fail();
    if (*out_us <= 0 && name[0] == 'p')
        return mcdc_cli_usage_error(a->cmd, "--poll must be longer than 0");
    return 0;
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    const char *control = mcdc_cli_get(a, "control"), *table = mcdc_cli_get(a, "table");
    const char *pe = mcdc_cli_get(a, "period-end");
    int64_t end_us, timeout_us = -1, poll_us = 10 * INT64_C(1000000);
    int ec;
    if ((ec = wait_duration(a, "timeout", &timeout_us)) != 0 || (ec = wait_duration(a, "poll", &poll_us)) != 0)
        return ec;
    if (mcdc_time_parse(&end_us, pe) < 0)
        return mcdc_cli_fail();
    char path[FIN_PATH_MAX];
    if (fin_resolve(path, ctx, control) < 0)
        return mcdc_cli_fail();
    bool wait = mcdc_cli_has(a, "wait");
    int64_t deadline = timeout_us >= 0 ? mcdc_time_mono_us() + timeout_us : -1;
    mcdc_verdict v;
    bool final;
    for (;;) {
        if (mcdc_control_finalized_until(&v, path, table) < 0)
            return mcdc_cli_fail();
        final = mcdc_finalize_covers(&v, end_us);
        if (final || !wait)
            break;
        int64_t now = mcdc_time_mono_us();
        if (deadline >= 0 && now >= deadline)
            break;
        sleep_us(deadline >= 0 && deadline - now < poll_us ? deadline - now : poll_us);
    }
    if (!mcdc_cli_has(a, "quiet")) {
        char until[MCDC_TIME_STRLEN], e[MCDC_TIME_STRLEN];
        mcdc_time_format(e, end_us, 0, false);
        if (v.has)
            mcdc_time_format(until, v.until_us, 0, false);
        printf("%s: %s (period end %s, finalized_until %s)\n", table,
               final ? "final" : wait ? "not final at the timeout" : "not final yet", e, v.has ? until : "none");
    }
    return final ? MCDC_EXIT_OK : MCDC_EXIT_NO;
}

const mcdc_cli_command mcdc_cmd_finalization_is_final = {
    "finalization is-final",
    "exit 0 when a period is complete, 1 when not yet, 2 when the row does not exist",
    "",
    0, 0, opts,
    "mssql-cdc finalization is-final --control ops.table_finalization --table bronze.orders \\\n"
    "    --period-end 2026-10-01T15:00:00\n"
    "mssql-cdc finalization is-final --control ops.table_finalization --table bronze.orders \\\n"
    "    --period-end 2026-10-01T15:00:00 --wait --timeout 2h --poll 1m",
    run
};
