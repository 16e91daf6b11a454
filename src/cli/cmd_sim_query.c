/*
 * cli/cmd_sim_query.c: `mssql-cdc sim query DB 'SELECT ...'`: a read-only query with SQL
 * Server's names, printed as text, jsonl or csv (architecture §7 encodings).
 */
#include <stdio.h>
#include <string.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"format", 0, MCDC_OPT_VALUE, "text|jsonl|csv", "output format (default text: tab-separated with a header)"},
    {0},
};

typedef struct out_state {
    const char *format;
    long long   n;
    mcdc_buf    line;
} out_state;

static int print_row(const mcdc_schema *sc, const mcdc_value *v, void *payload)
{
    out_state *o = payload;
    mcdc_buf *b = &o->line;
    int rc = 0;
    mcdc_buf_clear(b);
    bool json = !strcmp(o->format, "jsonl"), csv = !strcmp(o->format, "csv");
    if (!v) { /* the header */
        if (json) return 0;
        for (size_t i = 0; i < sc->n_cols; i++) {
            if (i) mcdc_buf_putc(b, csv ? ',' : '\t');
            if (csv) mcdc_value_to_csv(b, &(mcdc_column){.type = MCDC_TYPE_STRING}, &(mcdc_value){.v.s = {sc->cols[i].name, strlen(sc->cols[i].name)}});
            else mcdc_buf_puts(b, sc->cols[i].name);
        }
        mcdc_buf_putc(b, '\n');
        if (b->ptr) fwrite(b->ptr, 1, b->len, stdout);
        return 0;
    }
    if (json) mcdc_buf_putc(b, '{');
    for (size_t i = 0; rc == 0 && i < sc->n_cols; i++) {
        if (json) {
            if (i) mcdc_buf_putc(b, ',');
            mcdc_json_quote(b, sc->cols[i].name, strlen(sc->cols[i].name));
            mcdc_buf_putc(b, ':');
            rc = mcdc_value_to_json(b, &sc->cols[i], &v[i]);
        } else {
            if (i) mcdc_buf_putc(b, csv ? ',' : '\t');
            rc = csv ? mcdc_value_to_csv(b, &sc->cols[i], &v[i]) : mcdc_value_to_text(b, &sc->cols[i], &v[i]);
        }
    }
    if (json) mcdc_buf_putc(b, '}');
    mcdc_buf_putc(b, '\n');
    if (rc < 0) return rc;
    if (b->ptr) fwrite(b->ptr, 1, b->len, stdout);
    o->n++;
    return 0;
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    out_state o = {NULL, 0, MCDC_BUF_INIT(MCDC_BUF_DEFAULT_MAX)};
    int rc = mcdc_sim_cli_format(a, "text|jsonl|csv", &o.format);
    if (rc) return rc;
    mcdc_sim *sim;
    if (mcdc_sim_open_readonly(&sim, a->pos[0]) < 0) return mcdc_cli_fail();
    rc = mcdc_sim_query(sim, a->pos[1], print_row, &o);
    mcdc_buf_dispose(&o.line);
    mcdc_sim_close(sim);
    if (rc < 0) return mcdc_cli_fail();
    return fflush(stdout) == 0 ? MCDC_EXIT_OK : MCDC_EXIT_RUNTIME;
}

const mcdc_cli_command mcdc_cmd_sim_query = {
    "sim query", "read-only SELECT with SQL Server names (dbo.t, cdc.<ci>_CT, cdc.lsn_time_mapping)", "DB SQL", 2, 2,
    opts,
    "  mssql-cdc sim query demo.db 'SELECT * FROM cdc.dbo_orders_CT ORDER BY __$start_lsn, __$seqval' --format jsonl",
    run,
};
