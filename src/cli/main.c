/*
 * cli/main.c: the mssql-cdc entry point: global options, the log sink, dispatch.
 *
 * Global options come before the command (as in git). Data goes to stdout; logs and
 * errors to stderr (with --log-format json, errors too are JSON objects, wherever the
 * option stands among the global ones). Exit codes: cli.h and docs/reference/cli.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mcdc/options.h"
#include "mcdc/failpoint.h"
#include "mcdc/log.h"
#include "mcdc/proc.h"
#include "mcdc/storage.h"
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
        if (mcdc_log_context()) {
            fputs("\",\"table\":\"", stderr);
            json_escape(stderr, mcdc_log_context());
        }
        fputs("\",\"msg\":\"", stderr);
        json_escape(stderr, msg);
        fputs("\"}\n", stderr);
    } else {
        if (mcdc_log_context())
            fprintf(stderr, "%s %-5s %s [%s]: %s\n", ts, mcdc_log_level_name(level), logger,
                    mcdc_log_context(), msg);
        else
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
            "  --allow-unsafe-single-writer\n"
            "                           use an S3-compatible store that ignores If-None-Match (one writer only)\n"
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

/* Whether --log-format json is among the global options (before the command), so that
 * an error about an earlier global option is JSON too. */
static bool wants_json(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--log-format") && i + 1 < argc)
            json = !strcmp(argv[++i], "json");
        else if (!strncmp(argv[i], "--log-format=", 13))
            json = !strcmp(argv[i] + 13, "json");
        else if (!strcmp(argv[i], "--warehouse") || !strcmp(argv[i], "--log-level"))
            i++;
    }
    return json;
}

/* An option before the command that is not a global one: a command's option given too
 * early, or a typo of a global option. */
static int unknown_global(const char *a, size_t len)
{
    static const char *const globals[] = { "warehouse", "log-level", "log-format", "allow-unsafe-single-writer",
                                           "version", "help" };
    const char *name = a + (a[1] == '-' ? 2 : 1);
    size_t nlen = len - (size_t)(name - a);
    char hint[512];
    const char *near = mcdc_nearest_name(name, nlen, globals, sizeof globals / sizeof *globals);
    if (near) {
        snprintf(hint, sizeof hint, "did you mean --%s? (global options: --warehouse, --log-level, --log-format, --version, --help)", near);
        return mcdc_cli_error(MCDC_EXIT_USAGE, hint, "unknown global option '%.*s'", (int)len, a);
    }
    for (int k = 0; mcdc_cli_commands[k]; k++)
        for (const mcdc_opt *o = mcdc_cli_commands[k]->opts; o && o->name; o++)
            if (strlen(o->name) == nlen && !strncmp(o->name, name, nlen))
                return mcdc_cli_error(MCDC_EXIT_USAGE, "write it after the command's name, e.g. mssql-cdc COMMAND ARGS; "
                                      "only --warehouse, --log-level and --log-format go before it",
                                      "'%.*s' is an option of a command, not a global option", (int)len, a);
    return mcdc_cli_error(MCDC_EXIT_USAGE, "global options: --warehouse, --log-level, --log-format, --version, --help",
                          "unknown global option '%.*s'", (int)len, a);
}

/* The command or group nearest to the unknown word @p w, or NULL. */
static const char *nearest_command(const char *w)
{
    const char *names[256];
    size_t n = 0;
    for (int k = 0; mcdc_cli_commands[k] && n < 256; k++) {
        const char *name = mcdc_cli_commands[k]->name, *sp = strchr(name, ' ');
        static char groups[64][32];
        if (!sp) {
            names[n++] = name;
            continue;
        }
        size_t len = (size_t)(sp - name);
        bool seen = false;
        for (size_t j = 0; j < n && !seen; j++)
            seen = strlen(names[j]) == len && !strncmp(names[j], name, len);
        if (!seen && len < sizeof groups[0] && k < 64) {
            memcpy(groups[k], name, len);
            groups[k][len] = '\0';
            names[n++] = groups[k];
        }
    }
    return mcdc_nearest_name(w, strlen(w), names, n);
}

/* The subcommand of @p group nearest to @p w, or NULL. */
static const char *nearest_subcommand(const char *group, const char *w)
{
    const char *names[256];
    size_t n = 0, glen = strlen(group);
    for (int k = 0; mcdc_cli_commands[k] && n < 256; k++) {
        const char *name = mcdc_cli_commands[k]->name;
        if (!strncmp(name, group, glen) && name[glen] == ' ')
            names[n++] = name + glen + 1;
    }
    return mcdc_nearest_name(w, strlen(w), names, n);
}

int main(int argc, char **argv)
{
    mcdc_proc_keep_freed_memory(); /* before any thread: a service reuses its batches' memory */
    mcdc_cli_ctx ctx = {0};
    int i = 1;
    ctx.prog = "mssql-cdc";
    ctx.warehouse = getenv("MSSQL_CDC_WAREHOUSE");
    mcdc_cli_set_json_errors(wants_json(argc, argv));
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
        if (!strcmp(a, "--allow-unsafe-single-writer")) {
            mcdc_storage_allow_unsafe_single_writer(true);
            continue;
        }
        bool takes = (len == 11 && !strncmp(a, "--warehouse", len)) || (len == 11 && !strncmp(a, "--log-level", len)) ||
                     (len == 12 && !strncmp(a, "--log-format", len));
        if (!takes)
            return unknown_global(a, len);
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            return mcdc_cli_usage_error(NULL, "option '%.*s' needs a value", (int)len, a);
        if (!strncmp(a, "--warehouse", len)) {
            ctx.warehouse = val;
            ctx.warehouse_flag = true;
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
            const char *near = nearest_subcommand(argv[i], argv[i + 1]);
            char hint[256];
            snprintf(hint, sizeof hint, "did you mean '%s %s'?", argv[i], near ? near : "");
            return mcdc_cli_error(MCDC_EXIT_USAGE, near ? hint : NULL, "unknown subcommand '%s %s'", argv[i], argv[i + 1]);
        }
        const char *near = nearest_command(argv[i]);
        char hint[256];
        snprintf(hint, sizeof hint, "did you mean '%s'? ('mssql-cdc --help' lists the commands)", near ? near : "");
        return mcdc_cli_error(MCDC_EXIT_USAGE, near ? hint : "'mssql-cdc --help' lists the commands",
                              "unknown command '%s'", argv[i]);
    }
    mcdc_cli_args args;
    int rc = mcdc_cli_parse(best, argc - i - best_words, argv + i + best_words, &args);
    if (rc == -1)
        return 0;
    if (rc != 0)
        return rc;
    return best->run(&ctx, &args);
}
