/*
 * tests/unit/source/tds_client.h: a test client for the TDS server's connection loop: a
 * memory transport (the client's bytes in, the server's bytes out), builders of the client's
 * messages (PRELOGIN, LOGIN7, SQLBatch, RPC, ATTENTION), a reader of the server's packets and
 * tokens, and a fake engine (user "u", password "secret", database "d") whose batches are
 * tiny commands: "SELECT 1", "ROWS n", "ERR", "TYPES".
 * Used by tests/unit/source/tds_wire.c and tests/fuzz/fuzz_tds_server.c.
 */
#ifndef MCDC_TDS_CLIENT_H
#define MCDC_TDS_CLIENT_H

#include <stdlib.h>
#include <string.h>

#include "source/sim/tds/tds_int.h"

/* ---- memory transport --------------------------------------------------------------------- */

typedef struct memio {
    const uint8_t *in;   /* what the client sent, in order */
    size_t         in_len, in_pos;
    size_t         chunk; /* deliver at most this many bytes per recv (0: all) */
    tds_wbuf       out;  /* what the server sent */
    size_t         n_sends; /* send calls that carried it */
} memio;

static inline ssize_t memio_recv(void *p, void *buf, size_t n)
{
    memio *m = p;
    size_t k = m->in_len - m->in_pos;
    if (k > n) k = n;
    if (m->chunk && k > m->chunk) k = m->chunk;
    if (k == 0) return 0;
    memcpy(buf, m->in + m->in_pos, k);
    m->in_pos += k;
    return (ssize_t)k;
}

static inline ssize_t memio_send(void *p, const void *buf, size_t n)
{
    memio *m = p;
    m->n_sends++;
    tds_w_put(&m->out, buf, n);
    return m->out.err ? -1 : (ssize_t)n;
}

static inline bool memio_readable(void *p)
{
    memio *m = p;
    return m->in_pos < m->in_len;
}

/* ---- client messages ------------------------------------------------------------------------- */

static void cl_utf16(tds_wbuf *w, const char *s)
{
    tds_utf8_to_utf16(w, s, strlen(s));
}

static inline void cl_prelogin(tds_wbuf *w, uint8_t encryption)
{
    tds_wbuf p = TDS_WBUF_INIT(1 << 20);
    /* VERSION at 11 (6 bytes), ENCRYPTION at 17 (1 byte) */
    uint8_t hdr[] = {0, 0, 11, 0, 6, 1, 0, 17, 0, 1, 0xFF};
    tds_w_put(&p, hdr, sizeof hdr);
    uint8_t ver[6] = {0x0B, 0, 0, 0, 0, 0};
    tds_w_put(&p, ver, 6);
    tds_w_u8(&p, encryption);
    tds_frame(w, TDS_PKT_PRELOGIN, 0, 4096, p.p, p.len);
    tds_w_dispose(&p);
}

static void cl_login7_payload(tds_wbuf *p, const char *user, const char *password, const char *database,
                              uint32_t packet_size)
{
    const char *strs[9] = {"host", user, password, "app", "srv", "", "lib", "", database};
    tds_w_u32(p, 0); /* length, patched */
    tds_w_u32(p, 0x74000004);
    tds_w_u32(p, packet_size);
    tds_w_zero(p, 12);
    tds_w_u8(p, 0xE0);
    tds_w_u8(p, 0x03);
    tds_w_u8(p, 0);
    tds_w_u8(p, 0);
    tds_w_zero(p, 8);
    size_t off = 94;
    for (int i = 0; i < 9; i++) {
        size_t n = tds_utf16_units(strs[i], strlen(strs[i]));
        tds_w_u16(p, (uint16_t)off);
        tds_w_u16(p, (uint16_t)n);
        off += n * 2;
    }
    tds_w_zero(p, 6);                               /* ClientID */
    for (int i = 0; i < 3; i++) { tds_w_u16(p, (uint16_t)off); tds_w_u16(p, 0); } /* SSPI, AtchDB, ChangePassword */
    tds_w_u32(p, 0);
    for (int i = 0; i < 9; i++) {
        size_t at = p->len;
        cl_utf16(p, strs[i]);
        if (i == 2)
            for (size_t k = at; k < p->len; k++) p->p[k] = tds_pw_obfuscate(p->p[k]);
    }
    tds_w_patch_u32(p, 0, (uint32_t)p->len);
}

static void cl_login7(tds_wbuf *w, const char *user, const char *password, const char *database, uint32_t packet_size)
{
    tds_wbuf p = TDS_WBUF_INIT(1 << 20);
    cl_login7_payload(&p, user, password, database, packet_size);
    tds_frame(w, TDS_PKT_LOGIN7, 0, 4096, p.p, p.len);
    tds_w_dispose(&p);
}

static inline void cl_all_headers(tds_wbuf *p)
{
    tds_w_u32(p, 22);    /* total */
    tds_w_u32(p, 18);    /* transaction descriptor header */
    tds_w_u16(p, 2);
    tds_w_zero(p, 8);
    tds_w_u32(p, 1);     /* outstanding requests */
}

static inline void cl_batch(tds_wbuf *w, const char *sql, size_t packet_size)
{
    tds_wbuf p = TDS_WBUF_INIT(1 << 24);
    cl_all_headers(&p);
    cl_utf16(&p, sql);
    tds_frame(w, TDS_PKT_BATCH, 0, packet_size, p.p, p.len);
    tds_w_dispose(&p);
}

static inline void cl_attention(tds_wbuf *w)
{
    tds_frame(w, TDS_PKT_ATTN, 0, 4096, NULL, 0);
}

/* ---- reading the server's answer --------------------------------------------------------------- */

/* Join the packets of the server's messages: *n_msgs messages, payloads concatenated into
 * out (each message's start offset in starts). Returns false on a malformed packet. */
static inline bool sv_messages(const uint8_t *p, size_t n, tds_wbuf *out, size_t *starts, int max, int *n_msgs,
                        size_t packet_size, bool *sizes_ok)
{
    size_t i = 0;
    *n_msgs = 0;
    bool begin = true;
    *sizes_ok = true;
    while (i < n) {
        if (n - i < 8) return false;
        size_t len = (size_t)p[i + 2] << 8 | p[i + 3];
        if (len < 8 || len > n - i) return false;
        if (begin) {
            if (*n_msgs >= max) return false;
            starts[(*n_msgs)++] = out->len;
        }
        tds_w_put(out, p + i + 8, len - 8);
        bool eom = p[i + 1] & 1;
        if (!eom && len != packet_size) *sizes_ok = false;
        begin = eom;
        i += len;
    }
    return true;
}

/* ---- the fake engine ---------------------------------------------------------------------------- */

typedef struct fake_session {
    int spid;
    int n_batches;
} fake_session;

static fake_session fake_sessions[4];
static int fake_last_rpc_nparams;
static mcdc_sim_param fake_last_params[16];

static inline int fake_login_check(const char *path, const char *user, const char *password)
{
    (void)path;
    return strcmp(user, "u") == 0 && strcmp(password, "secret") == 0 ? 0 : MCDC_EPERM;
}

static inline int fake_open(mcdc_sim_session **out, const char *path, const mcdc_sim_login_info *login,
                     const mcdc_sim_server_options *opts)
{
    (void)path;
    (void)opts;
    if (login->database && strcmp(login->database, "d")) return MCDC_ENOTFOUND;
    fake_sessions[0].spid = 51;
    *out = (mcdc_sim_session *)&fake_sessions[0];
    return 0;
}

static inline void fake_close(mcdc_sim_session *s)
{
    (void)s;
}

static inline int fake_spid(const mcdc_sim_session *s)
{
    return ((const fake_session *)s)->spid;
}

static inline int fake_batch(mcdc_sim_session *s, const char *sql, const mcdc_sim_session_sink *k)
{
    ((fake_session *)s)->n_batches++;
    if (!strcmp(sql, "SELECT 1")) {
        mcdc_sim_rcol c = {"", {ST_INT, 0, 0, 0}, false, false};
        sim_val v = {.k = V_INT, .u.i = 1};
        if (k->columns(k->payload, &c, 1) || k->row(k->payload, &v, 1)) return 1;
        return k->done(k->payload, MCDC_SIM_DONE_STMT, MCDC_SIM_DONE_COUNT, 0xC1, 1);
    }
    if (!strncmp(sql, "ROWS ", 5)) {
        long n = atol(sql + 5);
        mcdc_sim_rcol c[2] = {{"id", {ST_BIGINT, 0, 0, 0}, false, false}, {"name", {ST_NVARCHAR, 40, 0, 0}, true, false}};
        if (k->columns(k->payload, c, 2)) return 1;
        long i;
        for (i = 0; i < n; i++) {
            if (k->cancelled(k->payload)) return 0;
            sim_val v[2] = {{.k = V_INT, .big = true, .u.i = i}, {.k = i % 3 ? V_STR : V_NULL, .u.s = {"row", 3}}};
            if (k->row(k->payload, v, 2)) return 1;
        }
        return k->done(k->payload, MCDC_SIM_DONE_STMT, MCDC_SIM_DONE_COUNT, 0xC1, i);
    }
    if (!strcmp(sql, "BEGIN TRAN")) {
        if (k->envchange(k->payload, 8, NULL, NULL)) return 1;
        return k->done(k->payload, MCDC_SIM_DONE_STMT, 0, 0xD4, 0);
    }
    k->message(k->payload, true, 208, 1, 16, "Invalid object name 'x'.", "", 1);
    return k->done(k->payload, MCDC_SIM_DONE_STMT, MCDC_SIM_DONE_ERROR, 0xC1, 0);
}

static inline int fake_rpc(mcdc_sim_session *s, const char *proc, int proc_id, const mcdc_sim_param *params, int nparams,
                    const mcdc_sim_session_sink *k)
{
    (void)s;
    (void)proc;
    (void)proc_id;
    fake_last_rpc_nparams = nparams;
    for (int i = 0; i < nparams && i < 16; i++) fake_last_params[i] = params[i];
    if (k->return_status(k->payload, 0)) return 1;
    return k->done(k->payload, MCDC_SIM_DONE_PROC, 0, 0xE0, 0);
}

static inline int fake_tm(mcdc_sim_session *s, int kind, const mcdc_sim_session_sink *k)
{
    (void)s;
    if (k->envchange(k->payload, kind == 5 ? 8 : kind == 7 ? 9 : 10, NULL, NULL)) return 1;
    return k->done(k->payload, MCDC_SIM_DONE_STMT, 0, 0, 0);
}

static const tds_engine fake_engine = {fake_login_check, fake_open, fake_close, fake_spid, fake_batch, fake_rpc, fake_tm};

/* Serve one connection on the fake engine: the client's bytes in, the server's bytes out. */
static inline void fake_serve(memio *m, tds_faults *faults)
{
    tds_server_ctx ctx = {0};
    ctx.db_path = "fake.db";
    ctx.database = "d";
    ctx.encryption = MCDC_TDS_ENCRYPT_OFF;
    ctx.sopts = (mcdc_sim_server_options)MCDC_SIM_SERVER_OPTIONS_INIT;
    ctx.engine = &fake_engine;
    ctx.faults = faults;
    tds_io io = {memio_recv, memio_send, memio_readable, m};
    tds_conn_serve(&ctx, &io);
}

#endif
