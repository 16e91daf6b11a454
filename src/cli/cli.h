/*
 * cli/cli.h: what every command of the mssql-cdc tool shares: the option table that
 * drives parsing, --help and usage errors; the parsed arguments; the global context;
 * the exit codes (a stable contract, append only: docs/reference/cli.md#exit-codes).
 *
 * A command is one file src/cli/cmd_<name>.c defining a const mcdc_cli_command and
 * listed once in the table in main.c. Commands hold no logic of their own: they parse,
 * call the library and print.
 */
#ifndef MCDC_CLI_H
#define MCDC_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "mcdc/error.h"

/* Exit codes (architecture §7). Append only. */
enum {
    MCDC_EXIT_OK       = 0, /* success, including a write found already committed */
    MCDC_EXIT_NO       = 1, /* "no": is-final when the period is not final yet */
    MCDC_EXIT_USAGE    = 2, /* bad usage or input, missing table or row, unknown source */
    MCDC_EXIT_RUNTIME  = 3, /* I/O, corrupt file, unresolved conflict, source error */
    MCDC_EXIT_DATALOSS = 4, /* changes purged before they were read */
    MCDC_EXIT_SCHEMA   = 5  /* a schema change that needs a decision */
};

typedef enum {
    MCDC_OPT_SWITCH, /* --name, no value */
    MCDC_OPT_VALUE,  /* --name VALUE or --name=VALUE; once */
    MCDC_OPT_LIST,   /* --name VALUE, repeatable; values kept in order */
    MCDC_OPT_REQUIRED /* as VALUE, and the command does not run without it: the parser
                       * names each one missing (exit 2) */
} mcdc_opt_kind;

typedef struct mcdc_opt {
    const char   *name;  /* long name without "--" */
    char          short_name; /* 0 for none */
    mcdc_opt_kind kind;
    const char   *arg;   /* metavariable in help ("N", "text|jsonl"), NULL for switches */
    const char   *help;  /* one line */
} mcdc_opt;

#define MCDC_CLI_MAX_OPTS 40
#define MCDC_CLI_MAX_LIST 64

typedef struct mcdc_cli_command mcdc_cli_command;

/* Global options, parsed before the command. */
typedef struct mcdc_cli_ctx {
    const char *warehouse;  /* --warehouse, $MSSQL_CDC_WAREHOUSE, or "./lake" */
    const char *log_format; /* "text" or "json" */
    const char *prog;       /* "mssql-cdc" */
    bool warehouse_flag;    /* the warehouse came from --warehouse */
} mcdc_cli_ctx;

/* A command's parsed arguments. */
typedef struct mcdc_cli_args {
    const mcdc_cli_command *cmd;
    const char *value[MCDC_CLI_MAX_OPTS];            /* VALUE: the value, SWITCH: "1" */
    const char *list[MCDC_CLI_MAX_OPTS][MCDC_CLI_MAX_LIST]; /* LIST values */
    int         n_list[MCDC_CLI_MAX_OPTS];
    char      **pos;   /* positional arguments */
    int         n_pos;
} mcdc_cli_args;

struct mcdc_cli_command {
    const char     *name;     /* "parquet cat": words as typed */
    const char     *summary;  /* one line for the command list */
    const char     *usage;    /* positional part of the usage line, e.g. "FILE" */
    int             min_pos, max_pos; /* how many positional arguments (-1: any) */
    const mcdc_opt *opts;     /* terminated by { 0 }; --help is implied */
    const char     *example;  /* one or more example lines */
    int (*run)(const mcdc_cli_ctx *ctx, const mcdc_cli_args *args);
};

/** The value of option @p name, or NULL when not given (switches give "1"). */
const char *mcdc_cli_get(const mcdc_cli_args *a, const char *name);
/** True when switch or value @p name was given. */
bool mcdc_cli_has(const mcdc_cli_args *a, const char *name);
/** 0 when option @p name is absent or names a local path; else print an error (exit 2)
 *  saying the option takes a file or directory on this machine, not a URI (s3://...), and
 *  return 2. For options that are never table locations (--dir, --out, --progress). */
int mcdc_cli_local_path_check(const mcdc_cli_args *a, const char *name);
/** The values of LIST option @p name; *n gets their count. */
const char *const *mcdc_cli_list(const mcdc_cli_args *a, const char *name, int *n);

/** Print the last library error in the standard frame and return its exit code. */
int mcdc_cli_fail(void);
/** Print a usage error for the command (with a pointer to --help) and return 2. */
int mcdc_cli_usage_error(const mcdc_cli_command *cmd, const char *fmt, ...) MCDC_PRINTF(2, 3);
/** Print an error in the standard frame, "mssql-cdc: error: <message>" and "hint: <hint>"
 *  (no hint line when @p hint is NULL or ""), or as one JSON object when errors are JSON
 *  (mcdc_cli_set_json_errors); return @p exit_code. Every error the tool prints goes
 *  through here. */
int mcdc_cli_error(int exit_code, const char *hint, const char *fmt, ...) MCDC_PRINTF(3, 4);
/** With @p json, errors are printed as one JSON object per error on stderr, one line:
 *  {"ts", "level":"ERROR", "logger":"cli", "msg", "hint" (or null), "exit_code"}, as the
 *  log lines of --log-format json. Set once by main before any command runs. */
void mcdc_cli_set_json_errors(bool json);
/** The exit code for a library error code. */
int mcdc_cli_exit_code(int rc);

/** Parse argv (after the command words) into @p out. Returns 0, or an exit code
 *  (2 after printing a usage error; -1 meaning --help was printed and we exit 0). */
int mcdc_cli_parse(const mcdc_cli_command *cmd, int argc, char **argv, mcdc_cli_args *out);
/** Print the command's --help to @p f. */
void mcdc_cli_print_help(const mcdc_cli_command *cmd, FILE *f);

/** The table of all commands, NULL-terminated (main.c). */
extern const mcdc_cli_command *const mcdc_cli_commands[];

#endif
