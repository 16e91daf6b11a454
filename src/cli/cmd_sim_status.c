/*
 * cli/cmd_sim_status.c: `mssql-cdc sim status DB`: max_lsn and its commit time, the virtual
 * clock, and per capture instance its min_lsn, change rows and source rows.
 */
#include <stdio.h>
#include <string.h>

#include "mcdc/time.h"
#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"format", 0, MCDC_OPT_VALUE, "text|json", "output format (default text)"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    const char *fmt;
    int rc = mcdc_sim_cli_format(a, "text|json", &fmt);
    if (rc) return rc;
    mcdc_sim *sim;
    if (mcdc_sim_open_readonly(&sim, a->pos[0]) < 0) return mcdc_cli_fail();
    mcdc_sim_status st;
    if (mcdc_sim_get_status(sim, &st) < 0) {
        mcdc_sim_close(sim);
        return mcdc_cli_fail();
    }
    char l[MCDC_LSN_STRLEN], t1[MCDC_TIME_STRLEN], t2[MCDC_TIME_STRLEN];
    mcdc_lsn_format(l, &st.max_lsn);
    mcdc_time_format(t1, st.max_lsn_commit_us, 3, true);
    mcdc_time_format(t2, st.clock_us, 3, true);
    bool json = !strcmp(fmt, "json");
    mcdc_buf b = MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX);
    if (json) {
        mcdc_buf_printf(&b, "{\"max_lsn\":\"%s\",\"max_lsn_commit_ts\":", l);
        if (mcdc_lsn_is_zero(&st.max_lsn)) mcdc_buf_puts(&b, "null");
        else mcdc_buf_printf(&b, "\"%s\"", t1);
        mcdc_buf_printf(&b, ",\"clock\":\"%s\",\"time_zone\":", t2);
        mcdc_json_quote(&b, st.time_zone, strlen(st.time_zone));
        mcdc_buf_printf(&b, ",\"waiting_for_capture\":%lld,\"capture_instances\":[", (long long)st.pending);
        for (size_t i = 0; i < st.n_inst; i++) {
            char m[MCDC_LSN_STRLEN];
            mcdc_buf_puts(&b, i ? ",{\"name\":" : "{\"name\":");
            mcdc_json_quote(&b, st.inst[i].name, strlen(st.inst[i].name));
            mcdc_buf_puts(&b, ",\"table\":");
            mcdc_json_quote(&b, st.inst[i].table, strlen(st.inst[i].table));
            mcdc_buf_printf(&b, ",\"min_lsn\":\"%s\",\"change_rows\":%lld,\"source_rows\":%lld}",
                            mcdc_lsn_format(m, &st.inst[i].min_lsn), (long long)st.inst[i].change_rows,
                            (long long)st.inst[i].source_rows);
        }
        mcdc_buf_puts(&b, "]}\n");
    } else {
        mcdc_buf_printf(&b, "max_lsn      %s%s%s\nclock        %s\ntime zone    %s\nwaiting      %lld commits not yet scanned\n",
                        l, mcdc_lsn_is_zero(&st.max_lsn) ? " (capture has not run)" : " committed ",
                        mcdc_lsn_is_zero(&st.max_lsn) ? "" : t1, t2, st.time_zone, (long long)st.pending);
        for (size_t i = 0; i < st.n_inst; i++) {
            char m[MCDC_LSN_STRLEN];
            mcdc_buf_printf(&b, "instance     %s on %s: min_lsn %s, %lld change rows, %lld source rows\n",
                            st.inst[i].name, st.inst[i].table, mcdc_lsn_format(m, &st.inst[i].min_lsn),
                            (long long)st.inst[i].change_rows, (long long)st.inst[i].source_rows);
        }
    }
    if (b.ptr) fputs(b.ptr, stdout);
    mcdc_buf_dispose(&b);
    mcdc_sim_status_dispose(&st);
    mcdc_sim_close(sim);
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_status = {
    "sim status", "max_lsn, the clock, and per capture instance min_lsn and row counts", "DB", 1, 1, opts,
    "  mssql-cdc sim status demo.db --format json",
    run,
};
