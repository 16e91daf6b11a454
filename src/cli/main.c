/*
 * cli/main.c: the mssql-cdc entry point: global options, the log sink, dispatch.
 *
 * Global options come before the command (as in git). Data goes to stdout; logs and
 * errors to stderr. Exit codes: cli.h and docs/reference/cli.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mcdc/failpoint.h"
#include "mcdc/log.h"
#include "mcdc/time.h"

static const char *log_format = "text";

static void json_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
}

static void stderr_sink(mcdc_log_level level, const char *logger, const char *msg, void *payload)
{
    char ts[MCDC_TIME_STRLEN];
    (void)payload;
    mcdc_time_format(ts, mcdc_time_now_us(), 3, true);
    flockfile(stderr);
    if (!strcmp(log_format, "json")) {
        fprintf(stderr, "{\"ts\":\"%s\",\"level\":\"%s\",\"logger\":\"", ts, mcdc_log_level_name(level));
        json_escape(stderr, logger);
        fputs("\",\"msg\":\"", stderr);
        json_escape(stderr, msg);
        fputs("\"}\n", stderr);
    } else {
        fprintf(stderr, "%s %-5s %s: %s\n", ts, mcdc_log_level_name(level), logger, msg);
    }
    funlockfile(stderr);
}

static void print_main_help(FILE *f)
{
    fprintf(f,
            "usage: mssql-cdc [--warehouse DIR] [--log-level L] [--log-format text|json] COMMAND [ARGS]\n\n"
            "Stream SQL Server Change Data Capture into Delta Lake tables, exactly once, and\n"
            "say when a period of data is complete.\n\n"
            "commands:\n");
    for (int i = 0; mcdc_cli_commands[i]; i++)
        fprintf(f, "  %-24s %s\n", mcdc_cli_commands[i]->name, mcdc_cli_commands[i]->summary);
    fprintf(f,
            "\nglobal options:\n"
            "  --warehouse DIR          where table names resolve (default $MSSQL_CDC_WAREHOUSE, else ./lake)\n"
            "  --log-level L            debug, info, warn or error (default info)\n"
            "  --log-format F           text or json lines on stderr (default text)\n"
            "  --version                print the version and exit\n"
            "  --help                   show this help; 'mssql-cdc COMMAND --help' for a command\n"
            "\nexit codes: 0 ok, 1 no (is-final), 2 usage or input, 3 runtime failure,\n"
            "4 data loss, 5 schema change. Reference: docs/reference/cli.md, man mssql-cdc.\n");
}

/* How many words of argv name command @p c (0 when it does not match). */
static int match_words(const mcdc_cli_command *c, int argc, char **argv)
{
    const char *p = c->name;
    int i = 0;
    while (*p) {
        const char *sp = strchr(p, ' ');
        size_t len = sp ? (size_t)(sp - p) : strlen(p);
        if (i >= argc || strlen(argv[i]) != len || strncmp(argv[i], p, len))
            return 0;
        i++;
        p += len;
        while (*p == ' ')
            p++;
    }
    return i;
}

static int group_help(const char *group)
{
    int n = 0;
    size_t len = strlen(group);
    for (int i = 0; mcdc_cli_commands[i]; i++) {
        const char *name = mcdc_cli_commands[i]->name;
        if (!strncmp(name, group, len) && name[len] == ' ') {
            if (n++ == 0)
                printf("usage: mssql-cdc %s SUBCOMMAND [OPTIONS]\n\nsubcommands:\n", group);
            printf("  %-24s %s\n", name, mcdc_cli_commands[i]->summary);
        }
    }
    if (n)
        printf("\n'mssql-cdc %s SUBCOMMAND --help' shows a subcommand's options.\n", group);
    return n;
}

int main(int argc, char **argv)
{
    mcdc_cli_ctx ctx = {0};
    int i = 1;
    ctx.prog = "mssql-cdc";
    ctx.warehouse = getenv("MSSQL_CDC_WAREHOUSE");
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i], *val = NULL;
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_main_help(stdout);
            return 0;
        }
        if (!strcmp(a, "--version")) {
            printf("mssql-cdc %s\n", MCDC_VERSION);
            return 0;
        }
        bool takes = (len == 11 && !strncmp(a, "--warehouse", len)) || (len == 11 && !strncmp(a, "--log-level", len)) ||
                     (len == 12 && !strncmp(a, "--log-format", len));
        if (!takes)
            return mcdc_cli_usage_error(NULL, "unknown global option '%.*s' (global options: --warehouse, --log-level, --log-format, --version, --help)", (int)len, a);
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return mcdc_cli_usage_error(NULL, "option '%.*s' needs a value", (int)len, a);
        if (!strncmp(a, "--warehouse", len)) {
            ctx.warehouse = val;
        } else if (!strncmp(a, "--log-level", len)) {
            mcdc_log_level lv;
            if (mcdc_log_level_parse(&lv, val) < 0)
                return mcdc_cli_fail();
            mcdc_log_set_level(lv);
        } else {
            if (strcmp(val, "text") && strcmp(val, "json"))
                return mcdc_cli_usage_error(NULL, "bad --log-format '%s': expected text or json", val);
            log_format = val;
        }
    }
    if (!ctx.warehouse || !*ctx.warehouse)
        ctx.warehouse = "./lake";
    ctx.log_format = log_format;
    mcdc_log_set_sink(stderr_sink, NULL);
    if (mcdc_failpoint_init() < 0)
        return mcdc_cli_fail();
    if (i >= argc) {
        print_main_help(stderr);
        return MCDC_EXIT_USAGE;
    }
    const mcdc_cli_command *best = NULL;
    int best_words = 0;
    for (int k = 0; mcdc_cli_commands[k]; k++) {
        int w = match_words(mcdc_cli_commands[k], argc - i, argv + i);
        if (w > best_words) {
            best = mcdc_cli_commands[k];
            best_words = w;
        }
    }
    if (!best) {
        if (i + 1 >= argc || !strcmp(argv[i + 1], "--help") || !strcmp(argv[i + 1], "-h")) {
            if (group_help(argv[i]))
                return i + 1 >= argc ? MCDC_EXIT_USAGE : 0;
        } else if (group_help(argv[i])) {
            fprintf(stderr, "mssql-cdc: error: unknown subcommand '%s %s'\n", argv[i], argv[i + 1]);
            return MCDC_EXIT_USAGE;
        }
        fprintf(stderr, "mssql-cdc: error: unknown command '%s'\nhint: 'mssql-cdc --help' lists the commands\n", argv[i]);
        return MCDC_EXIT_USAGE;
    }
    mcdc_cli_args args;
    int rc = mcdc_cli_parse(best, argc - i - best_words, argv + i + best_words, &args);
    if (rc == -1)
        return 0;
    if (rc != 0)
        return rc;
    return best->run(&ctx, &args);
}
