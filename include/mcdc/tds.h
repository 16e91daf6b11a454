/*
 * mcdc/tds.h: `sim serve`, a TDS 7.4 server in front of a simulator database, so that SQL
 * Server clients (FreeTDS, ODBC, tedious, python-tds) can read a simulated CDC database.
 *
 * Overview: mcdc_tds_serve() listens on one address, serves each connection in its own
 * thread (up to max_connections at once; more are closed at once) and returns when *stop
 * becomes non-zero, after closing every connection. Each connection logs in with SQL
 * authentication (LOGIN7) against the database's logins and then runs batches, RPCs and
 * transaction-manager requests through the simulator's T-SQL engine.
 *
 * Caveats:
 * - Passwords are never logged or kept after the login check.
 * - Faults (--fault) fire process-wide: a fault fires once in the server's life unless
 *   fault_repeat is set, whichever connection meets it.
 * - TLS needs a certificate and key in PEM files; encryption MCDC_TDS_ENCRYPT_LOGIN
 *   encrypts only the LOGIN7 packet unless the client asks for more, as SQL Server does.
 */
#ifndef MCDC_TDS_H
#define MCDC_TDS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Encryption the server offers in PRELOGIN. */
typedef enum {
    MCDC_TDS_ENCRYPT_OFF = 0,     /* no TLS: ENCRYPT_NOT_SUP */
    MCDC_TDS_ENCRYPT_LOGIN = 1,   /* TLS for LOGIN7 only, full TLS when the client asks */
    MCDC_TDS_ENCRYPT_REQUIRED = 2 /* full TLS; a client that cannot do TLS is refused */
} mcdc_tds_encryption;

/** Where `listening on HOST:PORT` goes: called once the socket accepts connections. */
typedef void (*mcdc_tds_ready_fn)(const char *host, int port, void *payload);

typedef struct mcdc_tds_server_options {
    int                 version;          /* 1 */
    const char         *db_path;          /* the simulator database file */
    const char         *listen;           /* "HOST:PORT"; port 0 picks a free port */
    const char         *database;         /* served name; NULL: the file's stem */
    int                 max_connections;  /* at once; 0 means 64 */
    const char         *tls_cert;         /* PEM files, or NULL */
    const char         *tls_key;
    mcdc_tds_encryption encryption;
    const char *const  *faults;           /* --fault values ("drop-after-rows:N", ...) */
    int                 n_faults;
    bool                fault_repeat;
    int64_t             latency_us;       /* added before every response */
    int                 product_version;  /* 13..16; 0 means 16 */
    int                 engine_edition;   /* SERVERPROPERTY('EngineEdition'); 0 means 3 */
    mcdc_tds_ready_fn   ready;
    void               *ready_payload;
    volatile sig_atomic_t *stop;          /* the server returns once *stop != 0 */
    const char         *replay_dir;       /* answer from this transcript (mcdc_tds_transcript_convert), or NULL */
    bool                has_utc_offset;   /* SYSDATETIMEOFFSET() and SYSDATETIME() report utc_offset_min,
                                             not the zone's offset (--utc-offset) */
    int                 utc_offset_min;
} mcdc_tds_server_options;

#define MCDC_TDS_SERVER_OPTIONS_INIT { 1, NULL, NULL, NULL, 0, NULL, NULL, MCDC_TDS_ENCRYPT_OFF, NULL, 0, false, 0, 0, 0, NULL, NULL, NULL, NULL, false, 0 }

/** Check the options without serving: the address, the faults, the TLS files and the
 *  database (it must open). @return 0; MCDC_EINVAL with a message and hint naming the
 *  option; MCDC_ENOTFOUND for a missing database. */
int mcdc_tds_check_options(const mcdc_tds_server_options *o);

/** Serve until *o->stop becomes non-zero. Thread-safe with respect to other processes on the
 *  same database. @return 0 after a stop; MCDC_EINVAL for bad options (as check); MCDC_EIO
 *  when the address cannot be bound. */
int mcdc_tds_serve(const mcdc_tds_server_options *o);

/** Append the requests and responses of a FreeTDS packet dump (DumpFile=, DebugFlags=0x10)
 *  to the transcript @p out_path (JSONL, one line per request: docs/guides/sqlserver.md),
 *  starting at byte *@p offset of the dump, which is moved past the last complete exchange.
 *  PRELOGIN, LOGIN7 and ATTENTION messages are left out. A dump that does not exist is
 *  nothing to add. @return 0; MCDC_EIO; MCDC_ENOMEM. */
int mcdc_tds_transcript_convert(const char *dump_path, long *offset, const char *out_path);

#ifdef __cplusplus
}
#endif
#endif
