/*
 * cli/args.c: option parsing, --help and error printing shared by every command.
 *
 * One option array per command drives parsing, --help and the usage errors, so the
 * three never disagree. Guarantees: an unknown option, a missing value, a repeated
 * single-valued option, a missing required option or a wrong number of arguments is
 * exit 2 with a message naming it and a pointer to the command's --help; nothing runs.
 * An unknown option that is near one of the command's ("--appid") is answered with
 * "did you mean --app-id?"; a global option given after the command (--warehouse,
 * --log-level, --log-format) is answered with where it goes. Every error the tool prints
 * goes through mcdc_cli_error, as text or, with --log-format json, as one JSON object.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mcdc/options.h"
#include "mcdc/buf.h"
#include "mcdc/time.h"
#include "mcdc/value.h"
#include "mcdc/warehouse.h"

/* The global options (main.c parses them), for the error of one given after the command. */
static const char *const global_opts[] = { "warehouse", "log-level", "log-format", "version" };
static const char *const global_args[] = { "DIR", "L", "text|json", NULL };

static bool json_errors;

void mcdc_cli_set_json_errors(bool json)
{
    json_errors = json;
}

static void put_json_string(mcdc_buf *b, const char *key, const char *s, bool comma)
{
    mcdc_buf_printf(b, "\"%s\":", key);
    if (s && *s)
        mcdc_json_quote(b, s, strlen(s));
    else
        mcdc_buf_puts(b, "null");
    if (comma)
        mcdc_buf_putc(b, ',');
}

static void print_error(int exit_code, const char *msg, const char *hint)
{
    if (!json_errors) {
        fprintf(stderr, "mssql-cdc: error: %s\n", msg);
        if (hint && *hint)
            fprintf(stderr, "hint: %s\n", hint);
        return;
    }
    char ts[MCDC_TIME_STRLEN];
    mcdc_buf b = MCDC_BUF_INIT((size_t)1 << 20);
    mcdc_time_format(ts, mcdc_time_now_us(), 3, true);
    mcdc_buf_printf(&b, "{\"ts\":\"%s\",\"level\":\"ERROR\",\"logger\":\"cli\",", ts);
    put_json_string(&b, "msg", msg, true);
    put_json_string(&b, "hint", hint, true);
    mcdc_buf_printf(&b, "\"exit_code\":%d}\n", exit_code);
    if (b.ptr)
        fwrite(b.ptr, 1, b.len, stderr);
    else /* out of memory: the message still reaches the user */
        fprintf(stderr, "{\"level\":\"ERROR\",\"logger\":\"cli\",\"msg\":\"out of memory\",\"exit_code\":%d}\n", exit_code);
    mcdc_buf_dispose(&b);
}

int mcdc_cli_error(int exit_code, const char *hint, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error(exit_code, msg, hint);
    return exit_code;
}

static int find_opt(const mcdc_cli_command *cmd, const char *name, size_t len, char short_name)
{
    for (int i = 0; cmd->opts && cmd->opts[i].name; i++) {
        const mcdc_opt *o = &cmd->opts[i];
        if (short_name ? o->short_name == short_name
                       : strlen(o->name) == len && !strncmp(o->name, name, len))
            return i;
    }
    return -1;
}

static int opt_index(const mcdc_cli_args *a, const char *name)
{
    return find_opt(a->cmd, name, strlen(name), 0);
}

const char *mcdc_cli_get(const mcdc_cli_args *a, const char *name)
{
    int i = opt_index(a, name);
    return i < 0 ? NULL : a->value[i];
}

bool mcdc_cli_has(const mcdc_cli_args *a, const char *name)
{
    int i = opt_index(a, name);
    return i >= 0 && (a->value[i] != NULL || a->n_list[i] > 0);
}

int mcdc_cli_local_path_check(const mcdc_cli_args *a, const char *name)
{
    const char *v = mcdc_cli_get(a, name);
    if (!v || !mcdc_warehouse_is_uri(v))
        return 0;
    return mcdc_cli_error(MCDC_EXIT_USAGE, "give a path on this machine",
                          "--%s %s: a local file or directory is expected here, not a URI", name, v);
}

const char *const *mcdc_cli_list(const mcdc_cli_args *a, const char *name, int *n)
{
    int i = opt_index(a, name);
    *n = i < 0 ? 0 : a->n_list[i];
    return i < 0 ? NULL : a->list[i];
}

int mcdc_cli_exit_code(int rc)
{
    switch (rc) {
    case MCDC_OK:
    case MCDC_EALREADY:     return MCDC_EXIT_OK;
    case MCDC_EINVAL:
    case MCDC_ENOTFOUND:
    case MCDC_EUNSUPPORTED:
    case MCDC_ELOCKED:      return MCDC_EXIT_USAGE;
    case MCDC_EDATALOSS:    return MCDC_EXIT_DATALOSS;
    case MCDC_ESCHEMA:      return MCDC_EXIT_SCHEMA;
    default:                return MCDC_EXIT_RUNTIME;
    }
}

int mcdc_cli_fail(void)
{
    const mcdc_error *e = mcdc_error_last();
    int code = mcdc_cli_exit_code(e->code ? e->code : MCDC_ERROR);
    print_error(code, e->message[0] ? e->message : mcdc_strerror(e->code), e->hint);
    return code;
}

static int usage_verror(const mcdc_cli_command *cmd, const char *hint, const char *fmt, va_list ap)
{
    char msg[2048], dflt[160];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (!hint) {
        snprintf(dflt, sizeof dflt, "see 'mssql-cdc %s%s--help'", cmd ? cmd->name : "", cmd ? " " : "");
        hint = dflt;
    }
    print_error(MCDC_EXIT_USAGE, msg, hint);
    return MCDC_EXIT_USAGE;
}

int mcdc_cli_usage_error(const mcdc_cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = usage_verror(cmd, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

static int usage_hint(const mcdc_cli_command *cmd, const char *hint, const char *fmt, ...) MCDC_PRINTF(3, 4);
static int usage_hint(const mcdc_cli_command *cmd, const char *hint, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = usage_verror(cmd, hint, fmt, ap);
    va_end(ap);
    return rc;
}

/* An unknown long option --NAME (@p len bytes): where a global option goes, the nearest
 * option of the command, or only the pointer to --help. */
static int unknown_option(const mcdc_cli_command *cmd, const char *name, size_t len)
{
    char hint[512];
    for (size_t g = 0; g < sizeof global_opts / sizeof *global_opts; g++) {
        if (strlen(global_opts[g]) != len || strncmp(global_opts[g], name, len))
            continue;
        if (global_args[g])
            snprintf(hint, sizeof hint, "write it before the command: mssql-cdc --%s %s %s ...", global_opts[g],
                     global_args[g], cmd->name);
        else
            snprintf(hint, sizeof hint, "run it alone: mssql-cdc --%s", global_opts[g]);
        return usage_hint(cmd, hint, "'--%s' is a global option: it goes before the command '%s', not after it",
                          global_opts[g], cmd->name);
    }
    const char *names[MCDC_CLI_MAX_OPTS + 1];
    size_t n = 0;
    for (int i = 0; cmd->opts && cmd->opts[i].name && n < MCDC_CLI_MAX_OPTS; i++)
        names[n++] = cmd->opts[i].name;
    names[n++] = "help";
    const char *near = mcdc_nearest_name(name, len, names, n);
    if (near) {
        snprintf(hint, sizeof hint, "did you mean --%s? (see 'mssql-cdc %s --help')", near, cmd->name);
        return usage_hint(cmd, hint, "unknown option '--%.*s' for '%s'", (int)len, name, cmd->name);
    }
    return mcdc_cli_usage_error(cmd, "unknown option '--%.*s' for '%s'", (int)len, name, cmd->name);
}

void mcdc_cli_print_help(const mcdc_cli_command *cmd, FILE *f)
{
    fprintf(f, "usage: mssql-cdc %s%s%s%s\n\n%s\n", cmd->name,
            cmd->opts && cmd->opts[0].name ? " [OPTIONS]" : "",
            cmd->usage && *cmd->usage ? " " : "", cmd->usage ? cmd->usage : "", cmd->summary);
    fprintf(f, "\noptions:\n");
    for (int i = 0; cmd->opts && cmd->opts[i].name; i++) {
        const mcdc_opt *o = &cmd->opts[i];
        char left[96], shortopt[8] = "    ";
        if (o->short_name)
            snprintf(shortopt, sizeof shortopt, "-%c, ", o->short_name);
        snprintf(left, sizeof left, "%s--%s%s%s", shortopt, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %-36s %s%s\n", left, o->help,
                o->kind == MCDC_OPT_LIST ? " (repeatable)" : o->kind == MCDC_OPT_REQUIRED ? " (required)" : "");
    }
    fprintf(f, "  %-36s %s\n", "    --help", "show this help");
    if (cmd->example)
        fprintf(f, "\nexample:\n%s\n", cmd->example);
    fprintf(f, "\nexit codes: 0 ok, 1 no (is-final), 2 usage or input, 3 runtime failure,\n"
               "4 data loss, 5 schema change (docs/reference/cli.md)\n");
}

int mcdc_cli_parse(const mcdc_cli_command *cmd, int argc, char **argv, mcdc_cli_args *out)
{
    static char *no_pos[1];
    memset(out, 0, sizeof *out);
    out->cmd = cmd;
    out->pos = argv;
    int n_pos = 0;
    bool opts_done = false;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (!opts_done && !strcmp(a, "--")) {
            opts_done = true;
            continue;
        }
        if (opts_done || a[0] != '-' || a[1] == '\0') {
            argv[n_pos++] = a; /* compact positionals to the front, in order */
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            mcdc_cli_print_help(cmd, stdout);
            return -1;
        }
        int k;
        const char *val = NULL;
        if (a[1] == '-') {
            const char *name = a + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            k = find_opt(cmd, name, len, 0);
            if (k < 0)
                return unknown_option(cmd, name, len);
            if (eq)
                val = eq + 1;
        } else {
            if (a[2] != '\0')
                return mcdc_cli_usage_error(cmd, "unknown option '%s' for '%s'", a, cmd->name);
            k = find_opt(cmd, NULL, 0, a[1]);
            if (k < 0)
                return mcdc_cli_usage_error(cmd, "unknown option '%s' for '%s'", a, cmd->name);
        }
        const mcdc_opt *o = &cmd->opts[k];
        if (o->kind == MCDC_OPT_SWITCH) {
            if (val)
                return mcdc_cli_usage_error(cmd, "option '--%s' takes no value", o->name);
            out->value[k] = "1";
            continue;
        }
        if (!val) {
            if (i + 1 >= argc)
                return mcdc_cli_usage_error(cmd, "option '--%s' needs a value (%s)", o->name, o->arg ? o->arg : "VALUE");
            val = argv[++i];
        }
        if (o->kind != MCDC_OPT_LIST) {
            if (out->value[k] && strcmp(out->value[k], val))
                return mcdc_cli_usage_error(cmd, "option '--%s' given twice with different values", o->name);
            out->value[k] = val;
        } else {
            if (out->n_list[k] >= MCDC_CLI_MAX_LIST)
                return mcdc_cli_usage_error(cmd, "option '--%s' given more than %d times", o->name, MCDC_CLI_MAX_LIST);
            out->list[k][out->n_list[k]++] = val;
        }
    }
    char missing[512] = "";
    int n_missing = 0;
    for (int k = 0; cmd->opts && cmd->opts[k].name; k++) {
        if (cmd->opts[k].kind != MCDC_OPT_REQUIRED || out->value[k])
            continue;
        size_t used = strlen(missing);
        snprintf(missing + used, sizeof missing - used, "%s--%s", n_missing ? ", " : "", cmd->opts[k].name);
        n_missing++;
    }
    if (n_missing)
        return mcdc_cli_usage_error(cmd, "missing required option%s %s for '%s'", n_missing > 1 ? "s" : "",
                                    missing, cmd->name);
    out->n_pos = n_pos;
    if (n_pos == 0)
        out->pos = no_pos;
    if (n_pos < cmd->min_pos)
        return mcdc_cli_usage_error(cmd, "'%s' needs %s%s", cmd->name, cmd->usage ? cmd->usage : "arguments",
                                    n_pos ? " (too few arguments)" : "");
    if (cmd->max_pos >= 0 && n_pos > cmd->max_pos)
        return mcdc_cli_usage_error(cmd, "unexpected argument '%s' for '%s'", argv[cmd->max_pos], cmd->name);
    return 0;
}
