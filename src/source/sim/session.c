/*
 * source/sim/session.c: a T-SQL session on a simulator database (session.h): batches, RPCs
 * and transaction requests in, result events out through the sink.
 *
 * A batch is lexed whole and split into statements (';' or the keyword that begins the next
 * one, as SQL Server allows); a lexical error ends the batch before anything runs. Each
 * statement reloads the simulator's state first, so writes by other processes are seen by the
 * next statement. DONE tokens are held back one step: each goes out with the MORE bit once
 * another follows, and the last one of the batch without it (a batch that produced none ends
 * with a bare DONE), as SQL Server sends them.
 *
 * Errors of a statement are SQL Server's (number, state, class) through sink->message; C
 * failures (memory, I/O, a sink callback's non-zero) end the call with a negative code.
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "source/sim/login.h"
#include "source/sim/session_int.h"
#include "source/sim/tsql_sys.h"

static atomic_int next_spid = 51;

int tsql_fail(tsql_error *e, int number, int cls, int state, int line, const char *fmt, ...)
{
    va_list ap;
    e->number = number;
    e->cls = (uint8_t)cls;
    e->state = (uint8_t)state;
    e->line = line;
    e->abort_batch = cls == 15 || number == 208 || number == 207 || number == 2812;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
    return TSQL_ESQL;
}

/* PRAGMA data_version of the session's connection: it changes when another connection
 * commits to the file (a grant or a revoke among them), -1 when it cannot be read. */
static int64_t data_version(mcdc_sim_session *s)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(s->sim->db, "PRAGMA data_version", -1, &st, NULL) != SQLITE_OK) return -1;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* A grant or revoke takes effect at the login's next batch or RPC, as on SQL Server (a
 * session's permissions are checked as each statement runs): the grants are read again
 * when the file changed since they were read. */
static int grants_refresh(mcdc_sim_session *s)
{
    if (!s->has_login) return 0;
    int64_t v = data_version(s);
    if (v >= 0 && v == s->grants_version) return 0;
    sim_grant_list g;
    int rc = sim_login_grants(s->sim, s->user, &g);
    if (rc < 0) return rc;
    sim_login_grants_dispose(&s->grants);
    s->grants = g;
    s->grants_version = v;
    return 0;
}

int mcdc_sim_session_open(mcdc_sim_session **out, const char *path, const mcdc_sim_login_info *login,
                          const mcdc_sim_server_options *opts)
{
    mcdc_sim_server_options def = MCDC_SIM_SERVER_OPTIONS_INIT;
    if (!opts) opts = &def;
    *out = NULL;
    int pv = opts->product_version ? opts->product_version : 16;
    if (pv < 13 || pv > 16)
        return mcdc_error_set(MCDC_EINVAL, "product version %d is not one of 13, 14, 15, 16", pv),
               mcdc_error_hint("give --product-version 13 (SQL Server 2016) to 16 (SQL Server 2022)");
    mcdc_sim_session *s = calloc(1, sizeof *s);
    if (!s) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
    s->product_version = pv;
    s->engine_edition = opts->engine_edition ? opts->engine_edition : 3;
    s->has_utc_offset = opts->has_utc_offset;
    s->utc_offset_min = opts->utc_offset_min;
    s->spid = atomic_fetch_add(&next_spid, 1);
    s->lock_timeout = -1;
    snprintf(s->language, sizeof s->language, "us_english");
    int rc = mcdc_sim_open(&s->sim, path, false, NULL);
    if (rc < 0) goto fail;
    snprintf(s->db_name, sizeof s->db_name, "%s", opts->database && *opts->database ? opts->database : s->sim->st.db_name);
    snprintf(s->user, sizeof s->user, "%s", login && login->user ? login->user : "dbo");
    if (login && login->database && *login->database && strcasecmp(login->database, s->db_name)) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "Cannot open database \"%s\" requested by the login. The login failed.",
                            login->database);
        goto fail;
    }
    if ((rc = tsql_register_functions(s)) < 0) goto fail;
    if (login && login->user) {
        s->has_login = true;
        s->grants_version = data_version(s);
        if ((rc = sim_login_grants(s->sim, login->user, &s->grants)) < 0) goto fail;
    }
    *out = s;
    return 0;
fail:
    mcdc_sim_session_close(s);
    return rc;
}

void mcdc_sim_session_close(mcdc_sim_session *s)
{
    if (!s) return;
    sess_prepared_clear(s);
    sess_stmt_clear(s);
    sim_login_grants_dispose(&s->grants);
    mcdc_sim_close(s->sim);
    sim_arena_free(&s->arena);
    free(s);
}

int mcdc_sim_session_spid(const mcdc_sim_session *s)
{
    return s->spid;
}

/* ---- output: DONE held back one step ---------------------------------------------------- */

int sess_flush_done(mcdc_sim_session *s, bool more)
{
    if (!s->done_pending) return 0;
    s->done_pending = false;
    unsigned st = s->done_status | (more ? MCDC_SIM_DONE_MORE : 0);
    if (s->in_tran) st |= MCDC_SIM_DONE_INXACT;
    return s->sink->done(s->sink->payload, s->done_kind, st, s->done_curcmd, s->done_count) ? MCDC_ERROR : 0;
}

int sess_done(mcdc_sim_session *s, mcdc_sim_done_kind kind, unsigned status, uint16_t curcmd, int64_t count)
{
    int rc = sess_flush_done(s, true);
    if (rc < 0) return rc;
    s->done_pending = true;
    if (kind == MCDC_SIM_DONE_STMT) {
        s->last_rowcount = status & MCDC_SIM_DONE_COUNT || !(status & MCDC_SIM_DONE_ERROR) ? count : 0;
        if (!(status & MCDC_SIM_DONE_ERROR)) s->last_error = 0;
    }
    s->done_kind = s->in_proc && kind == MCDC_SIM_DONE_STMT ? MCDC_SIM_DONE_INPROC : kind;
    s->done_status = status;
    s->done_curcmd = curcmd;
    s->done_count = count;
    return 0;
}

int sess_emit_error(mcdc_sim_session *s, const tsql_error *e)
{
    int rc = sess_flush_done(s, true);
    if (rc < 0) return rc;
    s->had_error = true;
    if (e->cls > 10) s->last_error = e->number;
    if (s->sink->message(s->sink->payload, e->cls > 10, e->number, e->state, e->cls, e->text, e->proc[0] ? e->proc : s->proc_name,
                         e->line > 0 ? e->line : 1))
        return MCDC_ERROR;
    return 0;
}

int sess_emit_info(mcdc_sim_session *s, int32_t number, const char *text)
{
    int rc = sess_flush_done(s, true);
    if (rc < 0) return rc;
    return s->sink->message(s->sink->payload, false, number, 1, 0, text, "", 1) ? MCDC_ERROR : 0;
}

/* ---- batches ------------------------------------------------------------------------------ */

static int finish(mcdc_sim_session *s, int rc)
{
    if (rc < 0) {
        s->done_pending = false;
        return rc;
    }
    if (s->cancelled) {
        s->done_pending = false;
        s->cancelled = false;
        return s->sink->done(s->sink->payload, MCDC_SIM_DONE_STMT, MCDC_SIM_DONE_ATTN, 0, 0) ? MCDC_ERROR : 0;
    }
    if (!s->done_pending) {
        s->done_pending = true;
        s->done_kind = MCDC_SIM_DONE_STMT;
        s->done_status = 0;
        s->done_curcmd = 0;
        s->done_count = 0;
    }
    return sess_flush_done(s, false);
}

int mcdc_sim_session_batch(mcdc_sim_session *s, const char *sql, const mcdc_sim_session_sink *sink)
{
    s->sink = sink;
    s->proc_name = "";
    s->done_pending = false;
    s->cancelled = false;
    s->in_proc = false;
    s->had_error = false;
    sim_arena_reset(&s->arena);
    s->vars = NULL;
    s->n_vars = s->cap_vars = 0;
    int rc = grants_refresh(s);
    if (rc == 0) rc = sess_run_text(s, sql, strlen(sql), NULL, 0);
    return finish(s, rc);
}

int mcdc_sim_session_rpc(mcdc_sim_session *s, const char *proc, int proc_id, const mcdc_sim_param *params, int nparams,
                         const mcdc_sim_session_sink *sink)
{
    s->sink = sink;
    s->proc_name = "";
    s->done_pending = false;
    s->cancelled = false;
    s->in_proc = false;
    s->had_error = false;
    sim_arena_reset(&s->arena);
    s->vars = NULL;
    s->n_vars = s->cap_vars = 0;
    int rc = grants_refresh(s);
    if (rc == 0) rc = sess_rpc(s, proc, proc_id, params, nparams);
    return finish(s, rc);
}

int mcdc_sim_session_tm(mcdc_sim_session *s, int kind, const mcdc_sim_session_sink *sink)
{
    s->sink = sink;
    s->done_pending = false;
    s->cancelled = false;
    int rc = 0;
    if (kind == 5) {
        s->in_tran = true;
        s->tran_id++;
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long)s->tran_id);
        if (sink->envchange(sink->payload, 8, id, NULL)) rc = MCDC_ERROR;
    } else if (kind == 7 || kind == 8) {
        if (!s->in_tran) {
            tsql_error e = {0};
            tsql_fail(&e, kind == 7 ? 3902 : 3903, 16, 1, 1, kind == 7
                      ? "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION."
                      : "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.");
            rc = sess_emit_error(s, &e);
            if (rc == 0) rc = sess_done(s, MCDC_SIM_DONE_STMT, MCDC_SIM_DONE_ERROR, 0, 0);
        } else {
            s->in_tran = false;
            char id[32];
            snprintf(id, sizeof id, "%lld", (long long)s->tran_id);
            if (sink->envchange(sink->payload, kind == 7 ? 9 : 10, NULL, id)) rc = MCDC_ERROR;
        }
    } else {
        tsql_error e = {0};
        tsql_fail(&e, 8509, 16, 1, 1, "Transaction manager request %d is not supported by this server.", kind);
        rc = sess_emit_error(s, &e);
    }
    return finish(s, rc);
}
