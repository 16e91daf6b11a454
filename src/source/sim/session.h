/*
 * source/sim/session.h: a T-SQL session on a simulator database, as a TDS connection sees it.
 *
 * This is the seam between the TDS server (source/sim/tds/, the wire: packets, LOGIN7,
 * tokens, type encoding) and the T-SQL engine (source/sim/, the parser, the checks SQL Server
 * makes and the evaluation over the simulator's store). The wire never parses T-SQL and the
 * engine never sees a packet: a batch or an RPC goes in, a stream of events comes out through
 * mcdc_sim_session_sink, in the order SQL Server would send the matching tokens.
 *
 * Guarantees:
 * - A session belongs to one connection and is used by one thread at a time; sessions on one
 *   database may run in parallel threads (each has its own SQLite connection), and writes
 *   made by other processes are visible to the next statement.
 * - Errors in a statement are reported through sink->error with SQL Server's number, state
 *   and class (102, 207, 208, 229, 2812, 8115, ...), never as a C failure; the return code of
 *   the batch/rpc call is non-zero only for failures of the session itself (I/O, memory, a
 *   sink callback that returned non-zero), after which the connection should be closed.
 * - Result columns carry SQL Server's types (sim_type) and nullability; values are sim_val
 *   of the column's type (the engine converts), strings UTF-8, so the wire only encodes.
 */
#ifndef MCDC_SIM_SESSION_H
#define MCDC_SIM_SESSION_H

#include "source/sim/sim_int.h"

typedef struct mcdc_sim_session mcdc_sim_session;

/** One result column, as COLMETADATA describes it. */
typedef struct mcdc_sim_rcol {
    const char *name;     /* "" for an unaliased expression, as SQL Server sends it */
    sim_type    type;     /* SQL Server's type; text/ntext/image/xml/(max) as the wire needs */
    bool        nullable;
    bool        is_variant; /* sql_variant (SERVERPROPERTY): type is the base type of the value */
} mcdc_sim_rcol;

/** DONE status bits (MS-TDS 2.2.7.6), passed through by the wire. */
#define MCDC_SIM_DONE_MORE   0x0001
#define MCDC_SIM_DONE_ERROR  0x0002
#define MCDC_SIM_DONE_INXACT 0x0004
#define MCDC_SIM_DONE_COUNT  0x0010
#define MCDC_SIM_DONE_ATTN   0x0020

/** Kinds of DONE token. */
typedef enum { MCDC_SIM_DONE_STMT, MCDC_SIM_DONE_PROC, MCDC_SIM_DONE_INPROC } mcdc_sim_done_kind;

/** Where a session's results go. Every callback returns 0 to go on, non-zero to stop. */
typedef struct mcdc_sim_session_sink {
    void *payload;
    /** A result set begins (COLMETADATA). */
    int (*columns)(void *payload, const mcdc_sim_rcol *cols, int ncols);
    /** One row of the current result set (ROW/NBCROW: the wire picks). */
    int (*row)(void *payload, const sim_val *values, int ncols);
    /** A statement or procedure ended (DONE, DONEPROC, DONEINPROC), with its row count. */
    int (*done)(void *payload, mcdc_sim_done_kind kind, unsigned status, uint16_t curcmd,
                int64_t rowcount);
    /** An error (ERROR token) or a message (INFO token, class <= 10). */
    int (*message)(void *payload, bool is_error, int32_t number, uint8_t state, uint8_t cls,
                   const char *text, const char *proc, int32_t line);
    /** A procedure's return status (RETURNSTATUS). */
    int (*return_status)(void *payload, int32_t status);
    /** An output parameter's value (RETURNVALUE); @p ordinal counts from 0. */
    int (*return_value)(void *payload, int ordinal, const char *name, const mcdc_sim_rcol *col,
                        const sim_val *value);
    /** A session setting changed (ENVCHANGE): type per MS-TDS 2.2.7.9 (1 database, 2
     *  language, 8 begin tran, 9 commit tran, 10 rollback tran, ...), texts UTF-8 or NULL. */
    int (*envchange)(void *payload, int type, const char *new_value, const char *old_value);
    /** Polled between rows: non-zero when the client sent ATTENTION. The engine then stops
     *  the call and ends it with one done() carrying MCDC_SIM_DONE_ATTN. May be NULL. */
    bool (*cancelled)(void *payload);
} mcdc_sim_session_sink;

/** A parameter of an RPC or of sp_executesql (name with its '@', type as declared). */
typedef struct mcdc_sim_param {
    const char *name;   /* "@p1", or NULL for a positional parameter */
    sim_type    type;
    sim_val     value;  /* V_NULL for NULL */
    bool        output; /* passed BY REFERENCE: a RETURNVALUE comes back */
} mcdc_sim_param;

/** Who is logged in: checked by the wire against the database's logins at LOGIN7. */
typedef struct mcdc_sim_login_info {
    const char *user;      /* SQL login name */
    const char *database;  /* the database the login asked for, or NULL for the default */
    const char *app_name;
} mcdc_sim_login_info;

/** What the server says it is (sim serve's --product-version, --engine-edition, --database). */
typedef struct mcdc_sim_server_options {
    int         product_version; /* 13, 14, 15 or 16 (SQL Server 2016..2022); 0 means 16 */
    int         engine_edition;  /* SERVERPROPERTY('EngineEdition'): 2 Standard, 3 Enterprise, 5 Azure
                                    SQL Database, ...; 0 means 3 */
    const char *database;        /* the served database's name; NULL for the simulator's own */
    bool        has_utc_offset;  /* the clock functions report utc_offset_min as the server's UTC
                                    offset instead of its zone's (sim serve --utc-offset) */
    int         utc_offset_min;
} mcdc_sim_server_options;
#define MCDC_SIM_SERVER_OPTIONS_INIT { 16, 3, NULL, false, 0 }

/** Open a session on the simulator database at @p path for an authenticated login.
 *  @p opts may be NULL (the defaults). A login->database other than the served one is
 *  MCDC_ENOTFOUND (the wire answers 4060).
 *  @return 0; MCDC_ENOTFOUND; MCDC_EINVAL for a product version outside 13..16; MCDC_EIO. */
int mcdc_sim_session_open(mcdc_sim_session **out, const char *path, const mcdc_sim_login_info *login,
                          const mcdc_sim_server_options *opts);
void mcdc_sim_session_close(mcdc_sim_session *s);

/** The session's id (@@SPID, and the SPID of the TDS packet header): unique in the process,
 *  from 51 up. */
int mcdc_sim_session_spid(const mcdc_sim_session *s);

/** Check a SQL login's password. @return 0 when it matches; MCDC_EPERM when the login does
 *  not exist or the password is wrong (the caller answers 18456 either way). */
int mcdc_sim_login_check(const char *path, const char *user, const char *password);

/** Run a SQLBatch (several statements, several result sets). */
int mcdc_sim_session_batch(mcdc_sim_session *s, const char *sql, const mcdc_sim_session_sink *sink);

/** Run an RPC: @p proc is a name ("sp_executesql", "sys.sp_cdc_help_change_data_capture")
 *  or, when NULL, @p proc_id is the well-known id of MS-TDS 2.2.6.6 (10 sp_executesql,
 *  11 sp_prepare, 12 sp_execute, 13 sp_prepexec, 15 sp_unprepare, ...). */
int mcdc_sim_session_rpc(mcdc_sim_session *s, const char *proc, int proc_id,
                         const mcdc_sim_param *params, int nparams, const mcdc_sim_session_sink *sink);

/** Transaction-manager requests (MS-TDS 2.2.6.9). @p kind: 5 begin, 7 commit, 8 rollback. */
int mcdc_sim_session_tm(mcdc_sim_session *s, int kind, const mcdc_sim_session_sink *sink);

#endif
