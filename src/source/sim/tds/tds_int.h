/*
 * source/sim/tds/tds_int.h: the internals of `sim serve`'s TDS 7.4 server shared by its files:
 * the byte writer, text conversions (UTF-8, UTF-16LE, CP1252), packet framing, PRELOGIN,
 * LOGIN7, tokens, type encoding and decoding, TLS, faults and the connection loop.
 *
 * Layout of the module (one concept per file):
 *   wbuf.c      tds_wbuf, a growable byte writer with a sticky error
 *   text.c      UTF-8 <-> UTF-16LE and UTF-8 <-> CP1252 (varchar's code page)
 *   packet.c    reading messages from packets, writing responses split to the packet size
 *   prelogin.c  PRELOGIN request parsing and response building, the encryption decision
 *   login7.c    LOGIN7 parsing and password de-obfuscation
 *   tokens.c    ENVCHANGE, INFO/ERROR, LOGINACK, DONE*, RETURNSTATUS, FEATUREEXTACK
 *   typeenc.c   TYPE_INFO and values of result columns (COLMETADATA, ROW, NBCROW, RETURNVALUE)
 *   typedec.c   TYPE_INFO and values of RPC parameters, RPC request parsing
 *   tls.c       GnuTLS, with the handshake carried in PRELOGIN packets (MS-TDS 2.2.6.5)
 *   fault.c     --fault and --latency: parsing and the process-wide firing state
 *   conn.c      one connection: login, then requests until the client leaves
 *   server.c    listening, one thread per connection, stopping on a signal
 *
 * The wire never parses T-SQL: requests go to the engine (tds_engine, normally session.h's
 * functions) and the engine's events come back through mcdc_sim_session_sink as tokens.
 * Design: MS-TDS (kardianos/rdb ms/_ref), docs/decisions/0010-tds-server-wire.md.
 */
#ifndef MCDC_TDS_INT_H
#define MCDC_TDS_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mcdc/tds.h"
#include "source/sim/session.h"

/* ---- byte writer (wbuf.c) ---------------------------------------------------------------- */

typedef struct tds_wbuf {
    uint8_t *p;   /* the bytes; NULL until the first write */
    size_t   len; /* bytes written */
    size_t   cap; /* bytes allocated */
    size_t   max; /* growing past this fails with MCDC_ENOMEM */
    int      err; /* sticky: the first failure; every later write is a no-op */
} tds_wbuf;

#define TDS_WBUF_INIT(max_bytes) { NULL, 0, 0, (max_bytes), 0 }

void tds_w_put(tds_wbuf *w, const void *p, size_t n);
void tds_w_u8(tds_wbuf *w, uint8_t v);
void tds_w_u16(tds_wbuf *w, uint16_t v); /* little-endian */
void tds_w_u32(tds_wbuf *w, uint32_t v);
void tds_w_u64(tds_wbuf *w, uint64_t v);
void tds_w_u16be(tds_wbuf *w, uint16_t v);
void tds_w_u32be(tds_wbuf *w, uint32_t v);
void tds_w_zero(tds_wbuf *w, size_t n);
/** Make room for @p n more bytes; @return a pointer to them, or NULL (w->err set). */
uint8_t *tds_w_reserve(tds_wbuf *w, size_t n);
/** Patch a little-endian u16 at @p at (already written). */
void tds_w_patch_u16(tds_wbuf *w, size_t at, uint16_t v);
void tds_w_patch_u32(tds_wbuf *w, size_t at, uint32_t v);
void tds_w_clear(tds_wbuf *w);
void tds_w_dispose(tds_wbuf *w);

/* ---- text (text.c) ----------------------------------------------------------------------- */

/** Append UTF-8 @p s as UTF-16LE; invalid bytes become U+FFFD. @return code units written. */
size_t tds_utf8_to_utf16(tds_wbuf *w, const char *s, size_t n);
/** Count the UTF-16 code units of UTF-8 text (invalid bytes count as one U+FFFD). */
size_t tds_utf16_units(const char *s, size_t n);
/** Append UTF-8 @p s in CP1252 (characters CP1252 cannot hold become '?'). @return bytes. */
size_t tds_utf8_to_cp1252(tds_wbuf *w, const char *s, size_t n);
/** Count the CP1252 bytes of UTF-8 text (one per character). */
size_t tds_cp1252_len(const char *s, size_t n);
/** Append UTF-16LE @p p (@p n bytes) as UTF-8; lone surrogates become U+FFFD. */
void tds_utf16_to_utf8(tds_wbuf *w, const uint8_t *p, size_t n);
/** Append CP1252 bytes as UTF-8. */
void tds_cp1252_to_utf8(tds_wbuf *w, const uint8_t *p, size_t n);

/* ---- a cursor over received bytes ---------------------------------------------------------- */

typedef struct tds_rd {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* one past the last; no read reaches it */
    bool           bad; /* sticky: a read ran past end */
} tds_rd;

static inline bool tds_rd_has(tds_rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return false;
    }
    return true;
}
static inline uint8_t tds_rd_u8(tds_rd *r)
{
    return tds_rd_has(r, 1) ? *r->p++ : 0;
}
static inline uint16_t tds_rd_u16(tds_rd *r)
{
    if (!tds_rd_has(r, 2)) return 0;
    uint16_t v = (uint16_t)(r->p[0] | r->p[1] << 8);
    r->p += 2;
    return v;
}
static inline uint32_t tds_rd_u32(tds_rd *r)
{
    if (!tds_rd_has(r, 4)) return 0;
    uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
    r->p += 4;
    return v;
}
static inline uint64_t tds_rd_u64(tds_rd *r)
{
    uint64_t lo = tds_rd_u32(r);
    return lo | (uint64_t)tds_rd_u32(r) << 32;
}
static inline const uint8_t *tds_rd_bytes(tds_rd *r, size_t n)
{
    if (!tds_rd_has(r, n)) return NULL;
    const uint8_t *p = r->p;
    r->p += n;
    return p;
}

/* ---- packets (packet.c) -------------------------------------------------------------------- */

/* Packet types (MS-TDS 2.2.3.1.1). */
enum {
    TDS_PKT_BATCH = 1, TDS_PKT_RPC = 3, TDS_PKT_REPLY = 4, TDS_PKT_ATTN = 6, TDS_PKT_BULK = 7,
    TDS_PKT_TM = 14, TDS_PKT_LOGIN7 = 16, TDS_PKT_SSPI = 17, TDS_PKT_PRELOGIN = 18
};
/* Packet status bits. */
#define TDS_ST_EOM    0x01
#define TDS_ST_IGNORE 0x02
#define TDS_HDR 8
#define TDS_MIN_PACKET 512
#define TDS_MAX_PACKET 32767
#define TDS_DEFAULT_PACKET 4096
/* A request larger than this (all its packets together) closes the connection. */
#define TDS_MAX_MESSAGE ((size_t)64 << 20)

typedef struct tds_conn tds_conn;

/** Read one whole message (its packets until EOM; a message marked IGNORE is dropped and the
 *  next one read). @return 0 with *type and @p msg (payload only); 1 when the client closed
 *  the connection before a message began; MCDC_ECORRUPT for a malformed packet; MCDC_EIO. */
int tds_read_message(tds_conn *c, uint8_t *type, tds_wbuf *msg);
/** Start a response message of packet type @p type: c->out is cleared. */
void tds_out_begin(tds_conn *c, uint8_t type);
/* Whole packets of a response are written together once this many bytes of them wait: a
 * write per 64 KiB, not one or two per packet (the client reads them as fast). */
#define TDS_SEND_BATCH ((size_t)64 << 10)
/** Send the full packets in c->out (keeps the tail) once TDS_SEND_BATCH bytes of them wait;
 *  @return 0 or MCDC_EIO. */
int tds_out_flush(tds_conn *c);
/** Send every full packet in c->out now (keeps the tail); @return 0 or MCDC_EIO. */
int tds_out_flush_now(tds_conn *c);
/** Send the rest of c->out as the message's last packet (EOM). @return 0 or MCDC_EIO. */
int tds_out_end(tds_conn *c);
/** Raw transport, bypassing TLS (the handshake itself travels this way). */
int tds__send_raw(tds_conn *c, const uint8_t *p, size_t n);
int tds__recv_raw(tds_conn *c, uint8_t *p, size_t n);
/** Send bytes as they are, through TLS when it is on. */
int tds__send_raw_or_tls(tds_conn *c, const uint8_t *p, size_t n);
/** Split @p payload of a message into packets of @p packet_size into @p w (for tests). */
void tds_frame(tds_wbuf *w, uint8_t type, uint16_t spid, size_t packet_size, const uint8_t *payload, size_t n);

/* ---- PRELOGIN (prelogin.c) ------------------------------------------------------------------ */

/* Encryption values of PRELOGIN (MS-TDS 2.2.6.5). */
enum { TDS_ENC_OFF = 0, TDS_ENC_ON = 1, TDS_ENC_NOT_SUP = 2, TDS_ENC_REQ = 3 };
/* What the connection does after PRELOGIN. */
typedef enum { TDS_TLS_NONE, TDS_TLS_LOGIN_ONLY, TDS_TLS_FULL, TDS_TLS_REFUSE } tds_tls_plan;

typedef struct tds_prelogin {
    bool    has_encryption;
    uint8_t encryption;  /* the client's ENCRYPTION byte */
    bool    has_version;
    uint32_t version;    /* client's version (big-endian as sent) */
    uint8_t mars;        /* MARS byte, 0 when absent */
} tds_prelogin;

/** Parse a PRELOGIN request payload. @return 0; MCDC_ECORRUPT. */
int tds_prelogin_parse(tds_prelogin *out, const uint8_t *p, size_t n);
/** The encryption answer and plan for the client's byte and the server's mode. */
uint8_t tds_prelogin_decide(mcdc_tds_encryption mode, uint8_t client, tds_tls_plan *plan);
/** Major, minor and build (big-endian) of the product version, for PRELOGIN and LOGINACK. */
void tds_prelogin_version(int product_version, uint8_t out[4]);
/** Append the PRELOGIN response payload (VERSION, ENCRYPTION, INSTOPT, THREADID, MARS). */
void tds_prelogin_response(tds_wbuf *w, uint8_t encryption, int product_version);

/* ---- LOGIN7 (login7.c) ---------------------------------------------------------------------- */

typedef struct tds_login7 {
    uint32_t tds_version;  /* as sent (little-endian value, 0x74000004 for 7.4) */
    uint32_t packet_size;  /* requested; 0 means the server's default */
    uint8_t  flags1, flags2, type_flags, flags3;
    bool     has_feature_ext;   /* OptionFlags3 fExtension with a valid FeatureExt block */
    bool     sspi;              /* integrated security asked (not supported) */
    char    *host, *user, *password, *app, *server, *library, *language, *database; /* UTF-8 */
} tds_login7;

/** Parse a LOGIN7 payload; strings are UTF-8 copies (the password de-obfuscated).
 *  @return 0; MCDC_ECORRUPT; MCDC_ENOMEM. Free with tds_login7_free (wipes the password). */
int tds_login7_parse(tds_login7 *out, const uint8_t *p, size_t n);
void tds_login7_free(tds_login7 *l);
/** Obfuscate (for tests and clients) or de-obfuscate one password byte (MS-TDS 2.2.6.4). */
uint8_t tds_pw_obfuscate(uint8_t b);
uint8_t tds_pw_clear(uint8_t b);

/* ---- tokens (tokens.c) ---------------------------------------------------------------------- */

enum {
    TDS_TOK_RETURNSTATUS = 0x79, TDS_TOK_COLMETADATA = 0x81, TDS_TOK_ERROR = 0xAA,
    TDS_TOK_INFO = 0xAB, TDS_TOK_RETURNVALUE = 0xAC, TDS_TOK_LOGINACK = 0xAD,
    TDS_TOK_FEATUREEXTACK = 0xAE, TDS_TOK_ROW = 0xD1, TDS_TOK_NBCROW = 0xD2,
    TDS_TOK_ENVCHANGE = 0xE3, TDS_TOK_DONE = 0xFD, TDS_TOK_DONEPROC = 0xFE, TDS_TOK_DONEINPROC = 0xFF
};

/** B_VARCHAR: one byte of UTF-16 units, then UTF-16LE (text cut at 255 units). */
void tds_w_bvarchar(tds_wbuf *w, const char *utf8);
/** US_VARCHAR: two bytes of UTF-16 units, then UTF-16LE. */
void tds_w_usvarchar(tds_wbuf *w, const char *utf8);
/** ENVCHANGE with text values (database 1, language 2, packet size 4, ...). */
void tds_tok_envchange_text(tds_wbuf *w, uint8_t type, const char *new_value, const char *old_value);
/** ENVCHANGE with binary values (collation 7, transactions 8..12). */
void tds_tok_envchange_bin(tds_wbuf *w, uint8_t type, const uint8_t *nv, uint8_t nv_len, const uint8_t *ov,
                           uint8_t ov_len);
/** ERROR (is_error) or INFO. */
void tds_tok_message(tds_wbuf *w, bool is_error, int32_t number, uint8_t state, uint8_t cls, const char *text,
                     const char *server, const char *proc, int32_t line);
void tds_tok_loginack(tds_wbuf *w, uint32_t tds_version, int product_version);
void tds_tok_done(tds_wbuf *w, uint8_t token, uint16_t status, uint16_t curcmd, uint64_t rowcount);
void tds_tok_returnstatus(tds_wbuf *w, int32_t status);
void tds_tok_featureextack_empty(tds_wbuf *w);

/* The collation every string of the simulator has: SQL_Latin1_General_CP1_CI_AS (CP1252). */
extern const uint8_t tds_collation[5];

/* ---- types (typeenc.c, typedec.c) ----------------------------------------------------------- */

/** Append TYPE_INFO for a result column (COLMETADATA and RETURNVALUE); for text, ntext and
 *  image also the table name part of COLMETADATA when @p in_colmetadata. */
void tds_type_info(tds_wbuf *w, const mcdc_sim_rcol *col, bool in_colmetadata);
/** Append one value of a column in ROW form (NULL as the type's NULL). @return 0 or
 *  MCDC_EINVAL when the value does not fit the column (an engine bug; the message says). */
int tds_value(tds_wbuf *w, const mcdc_sim_rcol *col, const sim_val *v);
/** Append COLMETADATA for @p n columns (n == 0: the "no metadata" form). */
int tds_colmetadata(tds_wbuf *w, const mcdc_sim_rcol *cols, int n);
/** Append a ROW or NBCROW (NBCROW when a value is NULL). */
int tds_row(tds_wbuf *w, const mcdc_sim_rcol *cols, const sim_val *vals, int n);
/** How a result column's values are written, decided once from its COLMETADATA (tds_row_plan):
 *  the common column types without the per-value dispatch of tds_value. */
typedef struct tds_colplan {
    uint8_t kind;     /* TDS_PLAN_* (typeenc.c) */
    uint8_t width;    /* bytes of an integer or float */
    bool    nullable; /* the N form: a length byte first */
    int64_t lo, hi;   /* an integer type's range */
} tds_colplan;
/** The plan of each of @p n columns into @p plan. */
void tds_row_plan(const mcdc_sim_rcol *cols, int n, tds_colplan *plan);
/** tds_row by a plan of the same columns: the same bytes, the same errors. */
int tds_row_planned(tds_wbuf *w, const mcdc_sim_rcol *cols, const tds_colplan *plan, const sim_val *vals, int n);
/** Append RETURNVALUE. */
int tds_returnvalue(tds_wbuf *w, int ordinal, const char *name, const mcdc_sim_rcol *col, const sim_val *v);
/** PLP chunk size used for (max) values and xml. */
#define TDS_PLP_CHUNK 4096

/** One decoded RPC call of a request (several may come in one message). */
typedef struct tds_rpc_call {
    char           *proc;     /* the name as sent (UTF-8), or NULL when proc_id is used */
    int             proc_id;
    uint16_t        options;  /* OptionFlags: 1 WithRecompile, 2 NoMetaData */
    mcdc_sim_param *params;
    int             n_params;
} tds_rpc_call;

/** Parse an RPC request payload (after ALL_HEADERS) into calls; strings and values live in
 *  @p a. @return 0; MCDC_ECORRUPT with a message naming what is wrong; MCDC_EUNSUPPORTED
 *  for a parameter type the simulator cannot hold (TVP, UDT, sql_variant input). */
int tds_rpc_parse(sim_arena *a, const uint8_t *p, size_t n, tds_rpc_call **calls, int *n_calls);
/** Skip ALL_HEADERS (MS-TDS 2.2.5.3) at the start of a request. @return 0; MCDC_ECORRUPT. */
int tds_skip_all_headers(tds_rd *r);

/* ---- date helpers shared by the encoders and decoders ---------------------------------------- */

#define TDS_DAYS_0001_TO_1970 INT64_C(719162)
#define TDS_DAYS_1900_TO_1970 INT64_C(25567)

/* ---- faults (fault.c) ------------------------------------------------------------------------ */

typedef enum { TDS_FAULT_DROP_AFTER_ROWS = 1, TDS_FAULT_STALL, TDS_FAULT_ERROR } tds_fault_kind;

typedef struct tds_fault {
    tds_fault_kind kind;
    int64_t        n;        /* rows (drop-after-rows) or statement number (error) */
    int64_t        stall_us; /* stall */
    int32_t        error;    /* 1205 or 1222 */
    int            fired;    /* times fired (guarded by tds_faults.mu) */
} tds_fault;

typedef struct tds_faults {
    tds_fault       f[8];
    int             n;
    bool            repeat;
    int64_t         latency_us;
    int64_t         n_requests; /* requests answered by the server, all connections */
    pthread_mutex_t mu;
} tds_faults;

/** --latency: sleep one round trip before answering a message of the client (conn.c). A
 *  request also goes through the faults (tds_faults_on_request), which add the same latency. */
void tds_conn_round_trip(const tds_conn *c);

/** Parse one --fault value into @p out. @return 0; MCDC_EINVAL with a message and hint. */
int tds_fault_parse(tds_fault *out, const char *text);
/** A request begins: the error to answer it with (0: none) and how long to stall first. */
void tds_faults_on_request(tds_faults *fs, int32_t *error, int64_t *stall_us);
/** Rows of the current result so far: true when the connection must be dropped now. */
bool tds_faults_drop_now(tds_faults *fs, int64_t rows_in_result);

/* ---- transcripts (transcript.c) ---------------------------------------------------------------- */

typedef struct tds_replay tds_replay;
/** Load every *.jsonl file of @p dir (in name order). @return 0; MCDC_EINVAL naming the file
 *  and line of a bad entry, or a directory without entries. */
int  tds_replay_load(tds_replay **out, const char *dir);
void tds_replay_free(tds_replay *r);
/** The recorded response to a request of packet @p type with payload @p body (after
 *  ALL_HEADERS): the next unused recording of those bytes, else the last one used.
 *  @return false when the request was never recorded. Thread-safe. */
bool tds_replay_answer(tds_replay *r, uint8_t type, const uint8_t *body, size_t n, const uint8_t **resp, size_t *resp_n);
/** A reply's tokens for people (respdec.c): results with columns and rows, row counts,
 *  errors with number, state and class, return status and values; a jansson object. */
struct json_t *tds_response_decode(const uint8_t *p, size_t n);
/** A line naming a request for messages: the statement text, or the procedure's name. */
void tds_replay_describe(char *out, size_t cap, uint8_t type, const uint8_t *body, size_t n);

/* ---- the engine (conn.c) ------------------------------------------------------------------- */

/** What the wire calls to run requests: session.h's functions, or fakes in tests. */
typedef struct tds_engine {
    int (*login_check)(const char *path, const char *user, const char *password);
    int (*open)(mcdc_sim_session **out, const char *path, const mcdc_sim_login_info *login,
                const mcdc_sim_server_options *opts);
    void (*close)(mcdc_sim_session *s);
    int (*spid)(const mcdc_sim_session *s);
    int (*batch)(mcdc_sim_session *s, const char *sql, const mcdc_sim_session_sink *sink);
    int (*rpc)(mcdc_sim_session *s, const char *proc, int proc_id, const mcdc_sim_param *params, int nparams,
               const mcdc_sim_session_sink *sink);
    int (*tm)(mcdc_sim_session *s, int kind, const mcdc_sim_session_sink *sink);
} tds_engine;

extern const tds_engine tds_engine_sim;

/* ---- TLS (tls.c) ----------------------------------------------------------------------------- */

typedef struct tds_tls_creds tds_tls_creds;
/** Load a certificate chain and key (PEM). @return 0; MCDC_EINVAL naming the file. */
int  tds_tls_creds_load(tds_tls_creds **out, const char *cert_file, const char *key_file);
void tds_tls_creds_free(tds_tls_creds *c);
/** Run the server side of the handshake inside PRELOGIN packets. @return 0; MCDC_EIO. */
int  tds_tls_start(tds_conn *c, const tds_tls_creds *creds);
/** Stop using TLS (after LOGIN7 in login-only mode): later bytes travel in the clear. */
void tds_tls_stop(tds_conn *c);
ssize_t tds_tls_recv(tds_conn *c, void *p, size_t n);
ssize_t tds_tls_send(tds_conn *c, const void *p, size_t n);
bool tds_tls_pending(tds_conn *c);

/* ---- the connection (conn.c) --------------------------------------------------------------- */

/** What every connection of a server shares (read-only after start, but faults). */
typedef struct tds_server_ctx {
    const char           *db_path;
    const char           *database;      /* the served name (ENVCHANGE, 4060 checks) */
    mcdc_tds_encryption   encryption;
    const tds_tls_creds  *creds;         /* NULL without --tls-cert */
    mcdc_sim_server_options sopts;
    const tds_engine     *engine;
    tds_faults           *faults;        /* may be NULL */
    tds_replay           *replay;        /* --replay: answers from a transcript, or NULL */
    volatile int         *stopping;      /* non-zero once the server stops */
} tds_server_ctx;

/** A byte transport: a socket normally, memory in the fuzzer. */
typedef struct tds_io {
    ssize_t (*recv)(void *payload, void *p, size_t n); /* 0 at end of stream, <0 on error */
    ssize_t (*send)(void *payload, const void *p, size_t n);
    bool (*readable)(void *payload);                   /* input waiting (attention check) */
    void *payload;
} tds_io;

struct tds_conn {
    const tds_server_ctx *srv;
    tds_io       io;
    void        *tls;          /* gnutls_session_t while TLS is on, else NULL */
    int          tls_phase;    /* 0 off, 1 handshake (records in PRELOGIN packets), 2 records */
    tds_wbuf     hs_out;       /* handshake bytes waiting to go out in a PRELOGIN packet */
    uint8_t     *hs_in;        /* handshake bytes received, not yet consumed */
    size_t       hs_in_len, hs_in_pos;
    tds_wbuf     hs_msg;       /* the PRELOGIN message holding hs_in */
    tds_wbuf     out;          /* the response message being written (payload only) */
    tds_wbuf     wire;         /* packets of out, headers in, being written at once */
    uint8_t      out_type;     /* its packet type */
    uint8_t      out_pkt_id;   /* packet number, from 1 per message */
    size_t       packet_size;  /* negotiated (512..32767) */
    uint16_t     spid;
    bool         broken;       /* an I/O failure or a dropped connection: stop at once */
    bool         attention;    /* the client sent ATTENTION during the current request */
    bool         any_done;     /* a DONE-kind token was written in the current response */
    int64_t      rows_in_result;
    uint8_t      tran[8];      /* current transaction descriptor (zero outside one) */
    uint64_t     next_tran;
    mcdc_sim_session *session;
    tds_wbuf     scratch;      /* request payload and text conversions */
    char         last_req[72]; /* the start of the last request's text, for the log */
};

/** Serve one connection until the client leaves, the server stops or the connection fails.
 *  Never returns an error for the client's mistakes (it answers them or closes). */
void tds_conn_serve(const tds_server_ctx *srv, const tds_io *io);

#endif
