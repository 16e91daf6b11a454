/*
 * source/sim/session_int.h: the session's state, shared by session.c (the calls of
 * session.h and the DONE bookkeeping), session_run.c (statements of a batch) and
 * session_rpc.c (RPCs: sp_executesql, sp_prepare and friends, procedures by name).
 */
#ifndef MCDC_SIM_SESSION_INT_H
#define MCDC_SIM_SESSION_INT_H

#include "source/sim/login.h"
#include "source/sim/tsql.h"

/** A statement prepared by sp_prepare/sp_prepexec, kept until sp_unprepare or the close. */
typedef struct sess_prepared {
    int   handle;  /* from 1, as SQL Server numbers them */
    char *params;  /* the @params declaration ("@p1 int, @p2 nvarchar(10)"), malloc'd */
    char *sql;     /* the statement text, malloc'd */
} sess_prepared;

/** A SELECT prepared on the session's connection, kept for the next statement that compiles
 *  to the same SQLite text (session_stmt.c). */
typedef struct sess_stmt {
    char         *sql;  /* malloc'd; NULL: a free slot */
    sqlite3_stmt *st;
    uint64_t      used; /* when last taken, for eviction */
    bool          busy; /* taken and not yet given back */
} sess_stmt;
#define SESS_STMT_CACHE 8

/** A variable of the batch (DECLARE) or a parameter (sp_executesql). */
typedef struct sess_var {
    char     name[130]; /* with its '@' */
    sim_type type;
    sim_val  value;     /* in the session's arena for the batch */
    bool     output;
    int      ordinal;   /* the RPC parameter it came from, -1 for a DECLARE */
} sess_var;

struct mcdc_sim_session {
    mcdc_sim      *sim;            /* own handle: own SQLite connection */
    char           user[130];      /* the login */
    char           db_name[130];   /* DB_NAME() */
    int            product_version; /* 13..16 */
    int            engine_edition;
    bool           has_utc_offset; /* sim serve --utc-offset: the clock's offset, not the zone's */
    int            utc_offset_min;
    int            spid;
    sim_grant_list grants;         /* what the login may read */
    bool           has_login;      /* grants are the login's, read again when the file changed */
    int64_t        grants_version; /* PRAGMA data_version when the grants were read */
    sim_arena      arena;          /* per call (batch or RPC): tokens, trees, values */
    /* SET options */
    bool           nocount;
    bool           fmtonly;        /* SET FMTONLY ON: a SELECT sends its columns, no rows */
    int            lock_timeout;   /* ms, -1 wait forever */
    int            isolation;      /* 2 read committed (the default) */
    char           language[64];
    int64_t        tran_id;
    bool           in_tran;
    /* prepared statements */
    sess_prepared *prep;
    int            n_prep;
    int            next_handle;
    /* variables of the running batch */
    sess_var      *vars;
    int            n_vars, cap_vars;
    /* output of the running call */
    const mcdc_sim_session_sink *sink;
    const char    *proc_name;      /* for messages: "" in a batch */
    int            proc_status;    /* RETURNSTATUS of the procedure called */
    int64_t        last_rowcount;  /* @@ROWCOUNT: rows of the last statement */
    int32_t        last_error;     /* @@ERROR: the last statement's error number, 0 when it succeeded */
    bool           in_proc;        /* inside an RPC: statements end with DONEINPROC */
    bool           had_error;      /* an error was sent in the running call */
    bool           done_pending;   /* a DONE is held back (sess_done) */
    mcdc_sim_done_kind done_kind;
    unsigned       done_status;
    uint16_t       done_curcmd;
    int64_t        done_count;
    bool           cancelled;      /* the sink said ATTENTION */
    tsql_error    *run_err;        /* where SQLite functions record SQL Server errors, during a step */
    sess_stmt      stmts[SESS_STMT_CACHE]; /* prepared SELECTs by their text (session_stmt.c) */
    uint64_t       stmt_clock;
};

/* session.c */
int  sess_done(mcdc_sim_session *s, mcdc_sim_done_kind kind, unsigned status, uint16_t curcmd, int64_t count);
int  sess_flush_done(mcdc_sim_session *s, bool more);
int  sess_emit_error(mcdc_sim_session *s, const tsql_error *e);
int  sess_emit_info(mcdc_sim_session *s, int32_t number, const char *text);

/* session_run.c: run the statements of @p sql with @p vars (parameters) defined. */
int  sess_run_text(mcdc_sim_session *s, const char *sql, size_t len, const sess_var *vars, int n_vars);

/* session_rpc.c */
int  sess_rpc(mcdc_sim_session *s, const char *proc, int proc_id, const mcdc_sim_param *params, int nparams);
void sess_prepared_clear(mcdc_sim_session *s);

/* session_stmt.c: a prepared statement for @p sql, from the cache or prepared now under the
 * read-only authorizer (*slot: its cache slot, -1 when not kept); given back with
 * sess_stmt_put, which resets it for the next use (or finalizes it); cleared at the close. */
int  sess_stmt_get(mcdc_sim_session *s, const char *sql, sqlite3_stmt **out, int *slot);
void sess_stmt_put(mcdc_sim_session *s, sqlite3_stmt *st, int slot);
void sess_stmt_clear(mcdc_sim_session *s);

/* DONE curcmd values SQL Server sends */
#define CURCMD_SELECT  193
#define CURCMD_INSERT  195
#define CURCMD_DELETE  196
#define CURCMD_UPDATE  197
#define CURCMD_EXECUTE 224

#endif
