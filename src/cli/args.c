/*
 * cli/args.c: option parsing, --help and error printing shared by every command.
 *
 * One option array per command drives parsing, --help and the usage errors, so the
 * three never disagree. Guarantees: an unknown option, a missing value, a repeated
 * single-valued option or a wrong number of arguments is exit 2 with a message naming
 * it and a pointer to the command's --help; nothing runs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

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
    fprintf(stderr, "mssql-cdc: error: %s\n", e->message[0] ? e->message : mcdc_strerror(e->code));
    if (e->hint[0])
        fprintf(stderr, "hint: %s\n", e->hint);
    return mcdc_cli_exit_code(e->code ? e->code : MCDC_ERROR);
}

int mcdc_cli_usage_error(const mcdc_cli_command *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "mssql-cdc: error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nhint: see 'mssql-cdc %s%s--help'\n", cmd ? cmd->name : "", cmd ? " " : "");
    return MCDC_EXIT_USAGE;
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
        fprintf(f, "  %-36s %s%s\n", left, o->help, o->kind == MCDC_OPT_LIST ? " (repeatable)" : "");
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
                return mcdc_cli_usage_error(cmd, "unknown option '--%.*s' for '%s'", (int)len, name, cmd->name);
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
        if (o->kind == MCDC_OPT_VALUE) {
            if (out->value[k] && strcmp(out->value[k], val))
                return mcdc_cli_usage_error(cmd, "option '--%s' given twice with different values", o->name);
            out->value[k] = val;
        } else {
            if (out->n_list[k] >= MCDC_CLI_MAX_LIST)
                return mcdc_cli_usage_error(cmd, "option '--%s' given more than %d times", o->name, MCDC_CLI_MAX_LIST);
            out->list[k][out->n_list[k]++] = val;
        }
    }
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
