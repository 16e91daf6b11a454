/*
 * cli/cmd_sim_serve.c: `mssql-cdc sim serve DB --listen HOST:PORT`: serve a simulator
 * database over TDS 7.4 (mcdc/tds.h) until SIGTERM or SIGINT, which close the connections
 * and exit 0. Prints `listening on HOST:PORT` on stderr once connections are accepted.
 * With --replay DIR, statements are answered from a recorded transcript instead.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcdc/tds.h"
#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"listen", 0, MCDC_OPT_VALUE, "HOST:PORT", "address to listen on (port 0 picks a free port)"},
    {"database", 0, MCDC_OPT_VALUE, "NAME", "the database name clients see (default: the file's stem)"},
    {"user", 0, MCDC_OPT_VALUE, "U", "create SQL login U if missing (with --password-file)"},
    {"password-file", 0, MCDC_OPT_VALUE, "F", "the login's password: the first line of F"},
    {"max-connections", 0, MCDC_OPT_VALUE, "N", "connections served at once (default 64)"},
    {"tls-cert", 0, MCDC_OPT_VALUE, "F", "PEM certificate chain for TLS"},
    {"tls-key", 0, MCDC_OPT_VALUE, "F", "PEM private key for TLS"},
    {"encryption", 0, MCDC_OPT_VALUE, "off|login|required", "TLS offered (default: login with a certificate, else off)"},
    {"fault", 0, MCDC_OPT_LIST, "FAULT", "drop-after-rows:N, stall:DURATION, error:1205@N or error:1222@N"},
    {"fault-repeat", 0, MCDC_OPT_SWITCH, NULL, "faults fire every time, not once"},
    {"latency", 0, MCDC_OPT_VALUE, "DURATION", "a round trip added before every answer (e.g. 2ms)"},
    {"product-version", 0, MCDC_OPT_VALUE, "13|14|15|16", "SQL Server major version to claim (default 16)"},
    {"engine-edition", 0, MCDC_OPT_VALUE, "N", "SERVERPROPERTY('EngineEdition') (default 3; 5 is Azure SQL Database)"},
    {"replay", 0, MCDC_OPT_VALUE, "DIR", "answer statements from a transcript (the SQL Server source's record=DIR)"},
    {"utc-offset", 0, MCDC_OPT_VALUE, "+HH:MM", "SYSDATETIMEOFFSET() reports this UTC offset, not the zone's (Windows rules that differ from tzdata)"},
    {0},
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void on_ready(const char *host, int port, void *payload)
{
    (void)payload;
    if (strchr(host, ':')) fprintf(stderr, "listening on [%s]:%d\n", host, port);
    else fprintf(stderr, "listening on %s:%d\n", host, port);
    fflush(stderr);
}

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    mcdc_tds_server_options o = MCDC_TDS_SERVER_OPTIONS_INIT;
    o.db_path = a->pos[0];
    o.listen = mcdc_cli_get(a, "listen");
    if (!o.listen) return mcdc_cli_usage_error(a->cmd, "--listen HOST:PORT is required");
    o.database = mcdc_cli_get(a, "database");
    int64_t v;
    int rc = mcdc_sim_cli_int(a, "max-connections", 64, 1, &v);
    if (rc) return rc;
    o.max_connections = (int)(v > 100000 ? 100000 : v);
    if ((rc = mcdc_sim_cli_int(a, "product-version", 16, 13, &v))) return rc;
    if (v > 16) return mcdc_cli_usage_error(a->cmd, "bad --product-version '%lld': expected 13, 14, 15 or 16", (long long)v);
    o.product_version = (int)v;
    if ((rc = mcdc_sim_cli_int(a, "engine-edition", 3, 1, &v))) return rc;
    if (v > 11) return mcdc_cli_usage_error(a->cmd, "bad --engine-edition '%lld': expected 1 to 11", (long long)v);
    o.engine_edition = (int)v;
    if ((rc = mcdc_sim_cli_duration(a, "latency", 0, &o.latency_us))) return rc;
    o.tls_cert = mcdc_cli_get(a, "tls-cert");
    o.tls_key = mcdc_cli_get(a, "tls-key");
    const char *enc = mcdc_cli_get(a, "encryption");
    if (!enc) o.encryption = o.tls_cert ? MCDC_TDS_ENCRYPT_LOGIN : MCDC_TDS_ENCRYPT_OFF;
    else if (!strcmp(enc, "off")) o.encryption = MCDC_TDS_ENCRYPT_OFF;
    else if (!strcmp(enc, "login")) o.encryption = MCDC_TDS_ENCRYPT_LOGIN;
    else if (!strcmp(enc, "required")) o.encryption = MCDC_TDS_ENCRYPT_REQUIRED;
    else return mcdc_cli_usage_error(a->cmd, "bad --encryption '%s': expected off, login or required", enc);
    o.faults = mcdc_cli_list(a, "fault", &o.n_faults);
    o.fault_repeat = mcdc_cli_has(a, "fault-repeat");
    const char *user = mcdc_cli_get(a, "user"), *pwfile = mcdc_cli_get(a, "password-file");
    if (!user != !pwfile) return mcdc_cli_usage_error(a->cmd, "--user and --password-file go together");
    o.replay_dir = mcdc_cli_get(a, "replay");
    const char *uo = mcdc_cli_get(a, "utc-offset");
    if (uo) {
        int hh = 0, mm = 0, end = -1;
        if ((uo[0] != '+' && uo[0] != '-') || sscanf(uo + 1, "%2d:%2d%n", &hh, &mm, &end) != 2 || end != 5 ||
            uo[end + 1] || hh > 14 || mm > 59 || hh * 60 + mm > 14 * 60)
            return mcdc_cli_usage_error(a->cmd, "bad --utc-offset '%s': expected +HH:MM or -HH:MM, at most 14 hours "
                                        "(e.g. +01:00)", uo);
        o.has_utc_offset = true;
        o.utc_offset_min = (uo[0] == '-' ? -1 : 1) * (hh * 60 + mm);
    }
    o.ready = on_ready;
    o.stop = &stop_flag;
    if (mcdc_tds_check_options(&o) < 0) return mcdc_cli_fail();

    if (user) {
        char *pw;
        if (mcdc_sim_password_file_read(&pw, pwfile) < 0) return mcdc_cli_fail();
        mcdc_sim *sim;
        rc = mcdc_sim_open(&sim, o.db_path, false, NULL);
        if (rc == 0) {
            rc = mcdc_sim_login_add(sim, user, pw, true);
            mcdc_sim_close(sim);
        }
        memset(pw, 0, strlen(pw));
        free(pw);
        if (rc < 0) return mcdc_cli_fail();
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    rc = mcdc_tds_serve(&o);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    if (rc < 0) return mcdc_cli_fail();
    return MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_serve = {
    "sim serve", "serve a simulator database over TDS 7.4 (SQL Server's protocol)", "DB", 1, 1, opts,
    "  mssql-cdc sim serve demo.db --listen 127.0.0.1:1433 --user app --password-file app.pw\n"
    "  mssql-cdc sim serve empty.db --listen 127.0.0.1:0 --user app --password-file app.pw --replay transcript",
    run,
};
