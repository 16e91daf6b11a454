/*
 * cli/cmd_sim_login.c: `mssql-cdc sim login add DB --user U --password-file F`: a SQL login
 * for sim serve. The password is read from the first line of F (never from the command line,
 * so it stays out of `ps` and shell history) and only its salted hash is stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_cli.h"

static const mcdc_opt opts[] = {
    {"user", 0, MCDC_OPT_VALUE, "NAME", "the login name (SQL authentication)"},
    {"password-file", 0, MCDC_OPT_VALUE, "FILE", "file whose first line is the password"},
    {0},
};

static int run(const mcdc_cli_ctx *ctx, const mcdc_cli_args *a)
{
    (void)ctx;
    if (strcmp(a->pos[0], "add"))
        return mcdc_cli_usage_error(a->cmd, "'sim login' knows the action 'add', not '%s'", a->pos[0]);
    const char *db = a->pos[1];
    const char *user = mcdc_cli_get(a, "user"), *file = mcdc_cli_get(a, "password-file");
    if (!user) return mcdc_cli_usage_error(a->cmd, "'sim login add' needs --user");
    if (!file) return mcdc_cli_usage_error(a->cmd, "'sim login add' needs --password-file");
    char *pw = NULL;
    if (mcdc_sim_password_file_read(&pw, file) < 0) return mcdc_cli_fail();
    mcdc_sim *sim;
    int rc = mcdc_sim_open(&sim, db, false, NULL);
    if (rc == 0) rc = mcdc_sim_login_add(sim, user, pw, false);
    memset(pw, 0, strlen(pw));
    free(pw);
    if (rc == 0) printf("login %s added to %s\n", user, db);
    if (rc == MCDC_EEXISTS) { /* the user's mistake: exit 2 */
        mcdc_error saved = *mcdc_error_last();
        mcdc_error_set(MCDC_EINVAL, "%s", saved.message);
        mcdc_error_hint("%s", saved.hint);
    }
    mcdc_sim_close(sim);
    return rc < 0 ? mcdc_cli_fail() : MCDC_EXIT_OK;
}

const mcdc_cli_command mcdc_cmd_sim_login = {
    "sim login", "add a SQL login for sim serve (the password from a file, stored hashed)", "add DB", 2, 2, opts,
    "  mssql-cdc sim login add demo.db --user cdc_reader --password-file reader.pw",
    run,
};
