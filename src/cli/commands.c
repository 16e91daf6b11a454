/*
 * cli/commands.c: the one table of commands. `mssql-cdc --help` lists exactly these, in
 * this order; each is defined in its own cmd_<name>.c.
 */
#include <stddef.h>

#include "cli.h"

#define COMMAND(sym) extern const mcdc_cli_command sym;
#include "commands.def"
#undef COMMAND

const mcdc_cli_command *const mcdc_cli_commands[] = {
#define COMMAND(sym) &sym,
#include "commands.def"
#undef COMMAND
    NULL
};
