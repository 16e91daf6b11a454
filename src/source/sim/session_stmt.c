/*
 * source/sim/session_stmt.c: the session's prepared SELECTs, kept by their SQLite text.
 *
 * A T-SQL statement a client sends again (the same page query with new parameters) compiles
 * to the same SQLite text, its literals and variables bound as parameters; preparing that
 * text (a second parse and plan of a query of a few kilobytes) is then skipped. A few
 * statements are kept (SESS_STMT_CACHE), the least recently used one leaves first.
 *
 * Guarantees: a statement is prepared under sim__deny_writes, as every SELECT of a session
 * is, and a kept one is only ever the same text (SQLite re-prepares it itself when the schema
 * changed); one in use is never handed out twice (a second user gets its own, not kept);
 * given back, it is reset and its parameters cleared, so it holds no read transaction.
 */
#include <stdlib.h>
#include <string.h>

#include "source/sim/session_int.h"
#include "source/sim/sim_int.h"

int sess_stmt_get(mcdc_sim_session *s, const char *sql, sqlite3_stmt **out, int *slot)
{
    *out = NULL;
    *slot = -1;
    for (int i = 0; i < SESS_STMT_CACHE; i++) {
        sess_stmt *e = &s->stmts[i];
        if (e->sql && !e->busy && !strcmp(e->sql, sql)) {
            e->busy = true;
            e->used = ++s->stmt_clock;
            *out = e->st;
            *slot = i;
            return SQLITE_OK;
        }
    }
    sqlite3 *db = s->sim->db;
    sqlite3_set_authorizer(db, sim__deny_writes, NULL);
    int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    sqlite3_set_authorizer(db, NULL, NULL);
    if (rc != SQLITE_OK || !*out) return rc;
    /* where to keep it: a free slot, else the least recently used one not in use */
    int victim = -1;
    for (int i = 0; i < SESS_STMT_CACHE; i++) {
        sess_stmt *e = &s->stmts[i];
        if (e->busy) continue;
        if (!e->sql) { victim = i; break; }
        if (victim < 0 || e->used < s->stmts[victim].used) victim = i;
    }
    char *copy = victim >= 0 ? strdup(sql) : NULL;
    if (!copy) return SQLITE_OK; /* not kept: finalized when given back */
    sess_stmt *v = &s->stmts[victim];
    if (v->sql) {
        sqlite3_finalize(v->st);
        free(v->sql);
    }
    v->sql = copy;
    v->st = *out;
    v->busy = true;
    v->used = ++s->stmt_clock;
    *slot = victim;
    return SQLITE_OK;
}

void sess_stmt_put(mcdc_sim_session *s, sqlite3_stmt *st, int slot)
{
    if (!st) return;
    if (slot < 0 || slot >= SESS_STMT_CACHE || s->stmts[slot].st != st) {
        sqlite3_finalize(st);
        return;
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    s->stmts[slot].busy = false;
}

void sess_stmt_clear(mcdc_sim_session *s)
{
    for (int i = 0; i < SESS_STMT_CACHE; i++) {
        sess_stmt *e = &s->stmts[i];
        if (e->sql) sqlite3_finalize(e->st);
        free(e->sql);
        memset(e, 0, sizeof *e);
    }
}
