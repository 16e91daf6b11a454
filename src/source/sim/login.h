/*
 * source/sim/login.h: logins and SELECT grants of a simulator database, inside the engine
 * (login.c). The public calls (mcdc_sim_login_add, mcdc_sim_grant) are in mcdc/sim.h and the
 * LOGIN7 check (mcdc_sim_login_check) in session.h.
 */
#ifndef MCDC_SIM_LOGIN_H
#define MCDC_SIM_LOGIN_H

#include "source/sim/session.h"
#include "source/sim/sim_int.h"

/** The objects a login may SELECT from. */
typedef struct sim_grant_list {
    bool   restricted; /* false: no grants, the login reads everything (db_owner) */
    char **names;      /* "schema.object", as granted */
    int    n;
} sim_grant_list;

/** Read @p user's grants (an older file without the table: no grants). */
int  sim_login_grants(mcdc_sim *s, const char *user, sim_grant_list *out);
void sim_login_grants_dispose(sim_grant_list *g);
/** True when the login may SELECT from schema.name (names compare case-insensitively). */
bool sim_login_can_read(const sim_grant_list *g, const char *schema, const char *name);
/** True when the login may see capture instance @p ci's metadata: SELECT on its source table
 *  (SQL Server's CDC security model; a change-table grant alone is not enough). */
bool sim_login_can_see_instance(const sim_grant_list *g, const mcdc_sim *sim, const sim_instance *ci);
/** True when schema.name is an object the simulator serves (a table, a change table, a cdc view). */
bool sim_login_object_exists(mcdc_sim *s, const char *schema, const char *name);

#endif
