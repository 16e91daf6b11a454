/*
 * source/sim/tds/conn.c: one TDS connection, from PRELOGIN to the client's last request.
 *
 * States (the function behind each edge):
 *   start --prelogin()--> [tls_start()] --login()--> ready --request()--> ready ... --> closed
 *   prelogin: PRELOGIN answered, the encryption decided (prelogin.c's table)
 *   login:    LOGIN7 read (through TLS when negotiated; login-only drops TLS after it), the
 *             password checked by the engine (a failure: 18456, then closed), the session
 *             opened (an unknown database: 4060 and 18456, then closed), then the answer
 *             ENVCHANGE database, INFO 5701, ENVCHANGE collation, ENVCHANGE language,
 *             INFO 5703, LOGINACK, [FEATUREEXTACK], ENVCHANGE packet size, DONE
 *             (the order of MS-TDS 4.2's example and of SQL Server itself).
 *   request:  SQLBatch, RPC or a transaction-manager request through the engine, whose events
 *             become tokens (the sink below); ATTENTION ends the request with DONE+ATTN.
 *
 * Guarantees: malformed input from the client never crashes the server: a framing error
 * closes the connection, a malformed RPC is answered with error 8009 and the connection goes
 * on. The password is wiped once checked and never logged. Responses go out in packets of
 * the negotiated size as they are produced, so a large result is never held whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcdc/log.h"
#include "source/sim/tds/tds_int.h"

#define SERVER_NAME "mssql-cdc"

/* ---- small helpers ----------------------------------------------------------------------------- */

static void sleep_us(const tds_conn *c, int64_t us)
{
    while (us > 0 && !(c->srv->stopping && *c->srv->stopping)) {
        int64_t step = us > 100000 ? 100000 : us;
        struct timespec ts = {(time_t)(step / 1000000), (long)(step % 1000000) * 1000};
        nanosleep(&ts, NULL);
        us -= step;
    }
}

/* --latency: one network round trip, before the answer to a message of the client (a request,
 * PRELOGIN, LOGIN7, a TLS handshake flight, a late cancel). Never per packet: a response of
 * many packets streams out after the one delay, as on a network. */
void tds_conn_round_trip(const tds_conn *c)
{
    if (c->srv->faults && c->srv->faults->latency_us > 0) sleep_us(c, c->srv->faults->latency_us);
}

static void msg(tds_conn *c, bool is_error, int32_t number, uint8_t state, uint8_t cls, const char *text)
{
    tds_tok_message(&c->out, is_error, number, state, cls, text, SERVER_NAME, "", 1);
}

/* Send what is buffered, even a partial packet, without ending the message (a drop fault). */
static void flush_partial(tds_conn *c)
{
    if (tds_out_flush_now(c)) return;
    if (c->out.len) {
        /* a non-final packet shorter than the packet size: the client sees the rows, then a close */
        uint8_t h[TDS_HDR] = {c->out_type, 0, (uint8_t)((c->out.len + TDS_HDR) >> 8), (uint8_t)(c->out.len + TDS_HDR),
                              (uint8_t)(c->spid >> 8), (uint8_t)c->spid, c->out_pkt_id++, 0};
        tds_wbuf f = TDS_WBUF_INIT(TDS_MAX_PACKET + TDS_HDR);
        tds_w_put(&f, h, TDS_HDR);
        tds_w_put(&f, c->out.p, c->out.len);
        if (!f.err) tds__send_raw_or_tls(c, f.p, f.len);
        tds_w_dispose(&f);
        tds_w_clear(&c->out);
    }
}

/* ---- the sink: the engine's events as tokens ---------------------------------------------------- */

typedef struct req {
    tds_conn      *c;
    mcdc_sim_rcol *cols;     /* a copy of the current result's columns */
    tds_colplan   *plan;     /* how each column's values are written (tds_row_plan) */
    int            n_cols;
    int            cap_cols;
    bool           last_done_final; /* the last token was a DONE* without DONE_MORE */
    bool           more_calls; /* RPC: more calls of this request follow (DONEPROC gets MORE) */
    unsigned       n_polls;  /* cancelled() calls: the socket is looked at every 32nd */
    int            rc;       /* a failure of the wire (I/O, encoding), sticky */
} req;

static int after_token(req *r)
{
    tds_conn *c = r->c;
    if (c->out.err) r->rc = c->out.err;
    else if (tds_out_flush(c)) r->rc = MCDC_EIO;
    return r->rc ? 1 : 0;
}

static bool poll_attention(tds_conn *c)
{
    if (c->attention || c->broken) return true;
    bool ready = tds_tls_pending(c) || (c->io.readable && c->io.readable(c->io.payload));
    if (!ready) return false;
    uint8_t type;
    tds_wbuf m = TDS_WBUF_INIT(TDS_MAX_MESSAGE);
    int rc = tds_read_message(c, &type, &m);
    tds_w_dispose(&m);
    if (rc == 0 && type == TDS_PKT_ATTN) c->attention = true;
    else c->broken = true; /* the client went away, or sent a request while one runs (no MARS) */
    return true;
}

static int sk_columns(void *p, const mcdc_sim_rcol *cols, int ncols)
{
    req *r = p;
    if (r->rc || r->c->attention) return 1;
    if (ncols > r->cap_cols) {
        mcdc_sim_rcol *g = realloc(r->cols, sizeof *g * (size_t)ncols);
        if (g) r->cols = g;
        tds_colplan *pl = realloc(r->plan, sizeof *pl * (size_t)ncols);
        if (pl) r->plan = pl;
        if (!g || !pl) return r->rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"), 1;
        r->cap_cols = ncols;
    }
    if (ncols > 0) memcpy(r->cols, cols, sizeof *cols * (size_t)ncols);
    if (ncols > 0) tds_row_plan(r->cols, ncols, r->plan);
    r->n_cols = ncols;
    r->c->rows_in_result = 0;
    r->last_done_final = false;
    int rc = tds_colmetadata(&r->c->out, cols, ncols);
    if (rc) return r->rc = rc, 1;
    return after_token(r);
}

static int sk_row(void *p, const sim_val *values, int ncols)
{
    req *r = p;
    tds_conn *c = r->c;
    if (r->rc || c->attention) return 1;
    if (ncols != r->n_cols) {
        r->rc = mcdc_error_set(MCDC_EINVAL, "a row of %d values for %d columns", ncols, r->n_cols);
        return 1;
    }
    int rc = tds_row_planned(&c->out, r->cols, r->plan, values, ncols);
    if (rc) {
        r->rc = rc;
        return 1;
    }
    c->rows_in_result++;
    if (c->srv->faults && tds_faults_drop_now(c->srv->faults, c->rows_in_result)) {
        flush_partial(c);
        mcdc_log(MCDC_LOG_INFO, "tds", "fault drop-after-rows: closing the connection after %lld rows",
                 (long long)c->rows_in_result);
        c->broken = true;
        r->rc = MCDC_EIO;
        return 1;
    }
    r->last_done_final = false;
    return after_token(r);
}

static int sk_done(void *p, mcdc_sim_done_kind kind, unsigned status, uint16_t curcmd, int64_t rowcount)
{
    req *r = p;
    if (r->rc || r->c->attention) return r->rc ? 1 : 0;
    uint8_t tok = kind == MCDC_SIM_DONE_PROC ? TDS_TOK_DONEPROC : kind == MCDC_SIM_DONE_INPROC ? TDS_TOK_DONEINPROC : TDS_TOK_DONE;
    if (tok == TDS_TOK_DONEPROC && r->more_calls) status |= MCDC_SIM_DONE_MORE;
    tds_tok_done(&r->c->out, tok, (uint16_t)status, curcmd, rowcount < 0 ? 0 : (uint64_t)rowcount);
    r->last_done_final = !(status & MCDC_SIM_DONE_MORE);
    r->n_cols = 0;
    return after_token(r);
}

static int sk_message(void *p, bool is_error, int32_t number, uint8_t state, uint8_t cls, const char *text,
                      const char *proc, int32_t line)
{
    req *r = p;
    if (r->rc || r->c->attention) return r->rc ? 1 : 0;
    tds_tok_message(&r->c->out, is_error, number, state, cls, text, SERVER_NAME, proc ? proc : "", line);
    return after_token(r);
}

static int sk_return_status(void *p, int32_t status)
{
    req *r = p;
    if (r->rc || r->c->attention) return r->rc ? 1 : 0;
    tds_tok_returnstatus(&r->c->out, status);
    return after_token(r);
}

static int sk_return_value(void *p, int ordinal, const char *name, const mcdc_sim_rcol *col, const sim_val *value)
{
    req *r = p;
    if (r->rc || r->c->attention) return r->rc ? 1 : 0;
    int rc = tds_returnvalue(&r->c->out, ordinal, name, col, value);
    if (rc) return r->rc = rc, 1;
    return after_token(r);
}

static int sk_envchange(void *p, int type, const char *new_value, const char *old_value)
{
    req *r = p;
    tds_conn *c = r->c;
    if (r->rc || c->attention) return r->rc ? 1 : 0;
    static const uint8_t zero[8] = {0};
    if (type == 8) { /* begin transaction: a new descriptor */
        uint64_t id = ++c->next_tran;
        for (int i = 0; i < 8; i++) c->tran[i] = (uint8_t)(id >> (8 * i));
        tds_tok_envchange_bin(&c->out, 8, c->tran, 8, NULL, 0);
    } else if (type == 9 || type == 10) { /* commit, rollback: the old descriptor */
        tds_tok_envchange_bin(&c->out, (uint8_t)type, NULL, 0, memcmp(c->tran, zero, 8) ? c->tran : zero, 8);
        memset(c->tran, 0, 8);
    } else {
        tds_tok_envchange_text(&c->out, (uint8_t)type, new_value, old_value);
    }
    return after_token(r);
}

static bool sk_cancelled(void *p)
{
    req *r = p;
    if (r->c->srv->stopping && *r->c->srv->stopping) { /* the server stops: end the request now */
        r->c->broken = true;
        return true;
    }
    /* a poll() per row would cost more than the row: look at the socket every 32nd call */
    if (r->c->attention) return true;
    if (r->n_polls++ % 32) return false;
    return poll_attention(r->c);
}

static mcdc_sim_session_sink make_sink(req *r)
{
    return (mcdc_sim_session_sink){r, sk_columns, sk_row, sk_done, sk_message, sk_return_status, sk_return_value,
                                   sk_envchange, sk_cancelled};
}

/* A failure of the wire while answering (an engine value that does not fit its column, an
 * allocation): logged, and the connection closes. */
static int wire_failed(tds_conn *c, req *r)
{
    if (r->rc && !c->broken)
        mcdc_log(MCDC_LOG_WARN, "tds", "session %u: cannot answer: %s", c->spid, mcdc_error_last()->message);
    return MCDC_EIO;
}

/* End a response: DONE+ATTN after a cancel, a closing DONE when the engine left none. */
static int finish(tds_conn *c, req *r, uint8_t done_tok)
{
    if (c->broken) return MCDC_EIO;
    if (c->attention) {
        /* tokens already written stay; the last one acknowledges the cancel */
        tds_tok_done(&c->out, TDS_TOK_DONE, MCDC_SIM_DONE_ATTN, 0, 0);
        c->attention = false;
    } else if (!r->last_done_final) {
        tds_tok_done(&c->out, done_tok, 0, 0, 0);
    }
    return tds_out_end(c);
}

/* ---- requests ---------------------------------------------------------------------------------- */

static int32_t before_response(tds_conn *c);

/* --replay: the recorded response to this request, or error 50000 naming it. @return 1 when
 * the request is not answered from the transcript (no --replay), else 0 or the send's code. */
static int replayed(tds_conn *c, uint8_t type, const uint8_t *p, size_t n)
{
    if (!c->srv->replay) return 1;
    tds_rd rd = {p, p + n, false};
    tds_out_begin(c, TDS_PKT_REPLY);
    if (tds_skip_all_headers(&rd)) {
        msg(c, true, 4002, 1, 16, "The incoming tabular data stream (TDS) protocol stream is incorrect.");
        tds_tok_done(&c->out, TDS_TOK_DONE, MCDC_SIM_DONE_ERROR, 0, 0);
        return tds_out_end(c);
    }
    const uint8_t *resp;
    size_t rn;
    size_t bn = (size_t)(rd.end - rd.p);
    before_response(c);
    if (tds_replay_answer(c->srv->replay, type, rd.p, bn, &resp, &rn)) {
        tds_w_put(&c->out, resp, rn);
        return tds_out_end(c);
    }
    char what[600], text[800];
    tds_replay_describe(what, sizeof what, type, rd.p, bn);
    snprintf(text, sizeof text, "not in the transcript being replayed: %s", what);
    mcdc_log(MCDC_LOG_WARN, "tds", "session %u: %s", c->spid, text);
    msg(c, true, 50000, 1, 16, text);
    tds_tok_done(&c->out, type == TDS_PKT_RPC ? TDS_TOK_DONEPROC : TDS_TOK_DONE, MCDC_SIM_DONE_ERROR, 0, 0);
    return tds_out_end(c);
}

static int fault_error(tds_conn *c, int32_t err, uint8_t done_tok)
{
    char text[256];
    if (err == 1205) {
        snprintf(text, sizeof text, "Transaction (Process ID %u) was deadlocked on lock resources with another "
                 "process and has been chosen as the deadlock victim. Rerun the transaction.", c->spid);
        msg(c, true, 1205, 51, 13, text);
    } else {
        msg(c, true, 1222, 56, 16, "Lock request time out period exceeded.");
    }
    tds_tok_done(&c->out, done_tok, MCDC_SIM_DONE_ERROR, 0, 0);
    return tds_out_end(c);
}

/* Faults and latency before a response: the error to answer with instead, or 0. */
static int32_t before_response(tds_conn *c)
{
    int32_t err = 0;
    int64_t stall = 0;
    if (c->srv->faults) tds_faults_on_request(c->srv->faults, &err, &stall);
    if (stall > 0) sleep_us(c, stall);
    return err;
}

/* Keep the start of a request's text (or its procedure's name) as c->last_req: a late
 * cancel is logged with it, naming the statement the client closed before its end. Control
 * characters become spaces; a character cut at the end is dropped. */
static void note_request(tds_conn *c, const char *prefix, const char *text, size_t n)
{
    size_t o = (size_t)snprintf(c->last_req, sizeof c->last_req, "%s", prefix);
    if (o >= sizeof c->last_req) o = sizeof c->last_req - 1;
    size_t i = 0;
    for (; i < n && o + 1 < sizeof c->last_req; i++) c->last_req[o++] = (unsigned char)text[i] < 0x20 ? ' ' : text[i];
    if (i < n) { /* cut: drop a character the cut split */
        while (o > 0 && ((unsigned char)c->last_req[o - 1] & 0xC0) == 0x80) o--;
        if (o > 0 && (unsigned char)c->last_req[o - 1] >= 0xC0) o--;
    }
    c->last_req[o] = 0;
}

static void note_rpc(tds_conn *c, const tds_rpc_call *call)
{
    char prefix[48];
    if (call->proc) snprintf(prefix, sizeof prefix, "%.32s: ", call->proc);
    else {
        static const char *const by_id[] = {[10] = "sp_executesql", [11] = "sp_prepare", [12] = "sp_execute",
                                             [13] = "sp_prepexec", [15] = "sp_unprepare"};
        const char *name = call->proc_id > 0 && call->proc_id < 16 ? by_id[call->proc_id] : NULL;
        if (name) snprintf(prefix, sizeof prefix, "%s: ", name);
        else snprintf(prefix, sizeof prefix, "procedure %d: ", call->proc_id);
    }
    for (int i = 0; i < call->n_params; i++) { /* the statement: the first text that is not a parameter list */
        const sim_val *v = &call->params[i].value;
        if (v->k == V_STR && v->u.s.n > 0 && v->u.s.p[0] != '@') {
            note_request(c, prefix, v->u.s.p, v->u.s.n);
            return;
        }
    }
    note_request(c, prefix, "", 0);
}

static int do_batch(tds_conn *c, const uint8_t *p, size_t n)
{
    tds_rd rd = {p, p + n, false};
    tds_out_begin(c, TDS_PKT_REPLY);
    if (tds_skip_all_headers(&rd)) {
        msg(c, true, 4002, 1, 16, "The incoming tabular data stream (TDS) protocol stream is incorrect.");
        tds_tok_done(&c->out, TDS_TOK_DONE, MCDC_SIM_DONE_ERROR, 0, 0);
        return tds_out_end(c);
    }
    tds_w_clear(&c->scratch);
    tds_utf16_to_utf8(&c->scratch, rd.p, (size_t)(rd.end - rd.p));
    tds_w_u8(&c->scratch, 0);
    if (c->scratch.err) return c->scratch.err;
    note_request(c, "", (const char *)c->scratch.p, c->scratch.len - 1);
    int32_t err = before_response(c);
    if (err) return fault_error(c, err, TDS_TOK_DONE);
    req r = {c, NULL, NULL, 0, 0, false, false, 0, 0};
    mcdc_sim_session_sink sink = make_sink(&r);
    int rc = c->srv->engine->batch(c->session, (const char *)c->scratch.p, &sink);
    free(r.cols);
    free(r.plan);
    if (r.rc || c->broken) return wire_failed(c, &r);
    if (rc && !c->attention) {
        mcdc_log(MCDC_LOG_WARN, "tds", "session %u: the batch failed: %s", c->spid, mcdc_error_last()->message);
        return rc;
    }
    return finish(c, &r, TDS_TOK_DONE);
}

static int do_rpc(tds_conn *c, const uint8_t *p, size_t n)
{
    tds_rd rd = {p, p + n, false};
    tds_out_begin(c, TDS_PKT_REPLY);
    sim_arena a = {0};
    tds_rpc_call *calls = NULL;
    int ncalls = 0;
    int rc = tds_skip_all_headers(&rd);
    if (rc == 0) rc = tds_rpc_parse(&a, rd.p, (size_t)(rd.end - rd.p), &calls, &ncalls);
    if (rc == MCDC_ENOMEM) {
        sim_arena_free(&a);
        return rc;
    }
    if (rc) {
        char text[1200];
        snprintf(text, sizeof text, "The incoming tabular data stream (TDS) remote procedure call (RPC) protocol "
                 "stream is incorrect. %s", mcdc_error_last()->message);
        msg(c, true, 8009, 1, 16, text);
        tds_tok_done(&c->out, TDS_TOK_DONEPROC, MCDC_SIM_DONE_ERROR, 0, 0);
        sim_arena_free(&a);
        return tds_out_end(c);
    }
    if (ncalls > 0) note_rpc(c, &calls[0]);
    int32_t err = before_response(c);
    if (err) {
        sim_arena_free(&a);
        return fault_error(c, err, TDS_TOK_DONEPROC);
    }
    req r = {c, NULL, NULL, 0, 0, false, false, 0, 0};
    mcdc_sim_session_sink sink = make_sink(&r);
    for (int i = 0; i < ncalls && rc == 0 && !c->attention && !r.rc; i++) {
        r.more_calls = i + 1 < ncalls;
        rc = c->srv->engine->rpc(c->session, calls[i].proc, calls[i].proc_id, calls[i].params, calls[i].n_params, &sink);
    }
    free(r.cols);
    free(r.plan);
    sim_arena_free(&a);
    if (r.rc || c->broken) return wire_failed(c, &r);
    if (rc && !c->attention) {
        mcdc_log(MCDC_LOG_WARN, "tds", "session %u: the RPC failed: %s", c->spid, mcdc_error_last()->message);
        return rc;
    }
    return finish(c, &r, TDS_TOK_DONEPROC);
}

static int do_tm(tds_conn *c, const uint8_t *p, size_t n)
{
    tds_rd rd = {p, p + n, false};
    tds_out_begin(c, TDS_PKT_REPLY);
    int rc = tds_skip_all_headers(&rd);
    uint16_t kind = tds_rd_u16(&rd);
    if (rc || rd.bad || (kind != 5 && kind != 7 && kind != 8)) {
        char text[160];
        snprintf(text, sizeof text, "The transaction manager request %u is not supported.", kind);
        msg(c, true, 4002, 1, 16, rc || rd.bad ? "The incoming tabular data stream (TDS) protocol stream is incorrect." : text);
        tds_tok_done(&c->out, TDS_TOK_DONE, MCDC_SIM_DONE_ERROR, 0, 0);
        return tds_out_end(c);
    }
    before_response(c);
    req r = {c, NULL, NULL, 0, 0, false, false, 0, 0};
    mcdc_sim_session_sink sink = make_sink(&r);
    rc = c->srv->engine->tm(c->session, kind, &sink);
    free(r.cols);
    free(r.plan);
    if (r.rc || c->broken) return wire_failed(c, &r);
    if (rc) return rc;
    return finish(c, &r, TDS_TOK_DONE);
}

/* ---- login --------------------------------------------------------------------------------------- */

static int refuse(tds_conn *c, int32_t number, uint8_t state, uint8_t cls, const char *text)
{
    tds_out_begin(c, TDS_PKT_REPLY);
    msg(c, true, number, state, cls, text);
    tds_tok_done(&c->out, TDS_TOK_DONE, MCDC_SIM_DONE_ERROR, 0, 0);
    tds_out_end(c);
    return MCDC_EPERM;
}

static int login_failed(tds_conn *c, const char *user)
{
    char text[600];
    snprintf(text, sizeof text, "Login failed for user '%.500s'.", user ? user : "");
    return refuse(c, 18456, 1, 14, text);
}

static int do_prelogin(tds_conn *c)
{
    uint8_t type;
    tds_wbuf m = TDS_WBUF_INIT(65536);
    int rc = tds_read_message(c, &type, &m);
    tds_prelogin pl;
    if (rc == 0 && type != TDS_PKT_PRELOGIN) rc = mcdc_error_set(MCDC_ECORRUPT, "the first message is of type %u, not PRELOGIN", type);
    if (rc == 0) rc = tds_prelogin_parse(&pl, m.p, m.len);
    tds_w_dispose(&m);
    if (rc) return rc;
    tds_tls_plan plan;
    mcdc_tds_encryption mode = c->srv->creds ? c->srv->encryption : MCDC_TDS_ENCRYPT_OFF;
    uint8_t enc = tds_prelogin_decide(mode, pl.has_encryption ? pl.encryption : TDS_ENC_NOT_SUP, &plan);
    tds_conn_round_trip(c);
    tds_out_begin(c, TDS_PKT_REPLY);
    tds_prelogin_response(&c->out, enc, c->srv->sopts.product_version);
    if ((rc = tds_out_end(c))) return rc;
    if (plan == TDS_TLS_REFUSE) return mcdc_error_set(MCDC_EPERM, "the client cannot encrypt and the server requires it");
    if (plan == TDS_TLS_FULL || plan == TDS_TLS_LOGIN_ONLY) {
        if ((rc = tds_tls_start(c, c->srv->creds))) return rc;
    }
    return plan == TDS_TLS_LOGIN_ONLY ? 1 : 0;
}

static int do_login(tds_conn *c, bool login_only_tls)
{
    uint8_t type;
    tds_wbuf m = TDS_WBUF_INIT(65536 * 2);
    int rc = tds_read_message(c, &type, &m);
    if (login_only_tls) tds_tls_stop(c);
    if (rc == 0 && type != TDS_PKT_LOGIN7) rc = mcdc_error_set(MCDC_ECORRUPT, "expected LOGIN7, got a message of type %u", type);
    tds_login7 l;
    if (rc == 0) rc = tds_login7_parse(&l, m.p, m.len);
    if (m.p) memset(m.p, 0, m.len); /* the obfuscated password was in there */
    tds_w_dispose(&m);
    if (rc) return rc;
    tds_conn_round_trip(c);
    const tds_server_ctx *s = c->srv;
    if (l.sspi || !l.user || !*l.user) {
        rc = refuse(c, 18452, 1, 14, "Login failed. The login is from an untrusted domain and cannot be used with "
                    "Integrated authentication.");
        tds_login7_free(&l);
        return rc;
    }
    rc = s->engine->login_check(s->db_path, l.user, l.password ? l.password : "");
    if (l.password) memset(l.password, 0, strlen(l.password));
    if (rc) {
        mcdc_log(MCDC_LOG_INFO, "tds", "login failed for user '%s'", l.user);
        rc = login_failed(c, l.user);
        tds_login7_free(&l);
        return rc;
    }
    const char *db = l.database && *l.database ? l.database : NULL;
    mcdc_sim_login_info li = {l.user, db, l.app};
    rc = s->engine->open(&c->session, s->db_path, &li, &s->sopts);
    if (rc == MCDC_ENOTFOUND) {
        char text[600];
        snprintf(text, sizeof text, "Cannot open database \"%.500s\" requested by the login. The login failed.", db ? db : "");
        tds_out_begin(c, TDS_PKT_REPLY);
        msg(c, true, 4060, 1, 11, text);
        snprintf(text, sizeof text, "Login failed for user '%.500s'.", l.user);
        msg(c, true, 18456, 1, 14, text);
        tds_tok_done(&c->out, TDS_TOK_DONE, MCDC_SIM_DONE_ERROR, 0, 0);
        tds_out_end(c);
        tds_login7_free(&l);
        return MCDC_EPERM;
    }
    if (rc) {
        mcdc_log(MCDC_LOG_WARN, "tds", "cannot open a session for '%s': %s", l.user, mcdc_error_last()->message);
        rc = refuse(c, 18456, 1, 14, "Login failed for user.");
        tds_login7_free(&l);
        return rc;
    }
    c->spid = (uint16_t)(s->engine->spid ? s->engine->spid(c->session) : 51);
    size_t ps = l.packet_size == 0 ? TDS_DEFAULT_PACKET : l.packet_size;
    if (ps < TDS_MIN_PACKET) ps = TDS_MIN_PACKET;
    if (ps > TDS_MAX_PACKET) ps = TDS_MAX_PACKET;
    uint32_t ver = l.tds_version >= 0x74000004 ? 0x74000004 : l.tds_version;

    const char *served = s->database ? s->database : (db ? db : "master");
    char text[600];
    tds_out_begin(c, TDS_PKT_REPLY);
    tds_tok_envchange_text(&c->out, 1, served, "master");
    snprintf(text, sizeof text, "Changed database context to '%.500s'.", served);
    msg(c, false, 5701, 2, 0, text);
    tds_tok_envchange_bin(&c->out, 7, tds_collation, 5, NULL, 0);
    tds_tok_envchange_text(&c->out, 2, "us_english", "");
    msg(c, false, 5703, 1, 0, "Changed language setting to us_english.");
    tds_tok_loginack(&c->out, ver, s->sopts.product_version);
    if (l.has_feature_ext) tds_tok_featureextack_empty(&c->out);
    char psz[16];
    snprintf(psz, sizeof psz, "%zu", ps);
    tds_tok_envchange_text(&c->out, 4, psz, "4096");
    tds_tok_done(&c->out, TDS_TOK_DONE, 0, 0, 0);
    rc = tds_out_end(c);
    c->packet_size = ps;
    mcdc_log(MCDC_LOG_INFO, "tds", "session %u: '%s' logged in (%s)", c->spid, l.user, l.app ? l.app : "");
    tds_login7_free(&l);
    return rc;
}

/* ---- the loop ------------------------------------------------------------------------------------ */

void tds_conn_serve(const tds_server_ctx *srv, const tds_io *io)
{
    tds_conn c;
    memset(&c, 0, sizeof c);
    c.srv = srv;
    c.io = *io;
    c.packet_size = TDS_DEFAULT_PACKET;
    c.out = (tds_wbuf)TDS_WBUF_INIT(TDS_MAX_MESSAGE);
    c.wire = (tds_wbuf)TDS_WBUF_INIT(TDS_SEND_BATCH + 2 * (TDS_MAX_PACKET + TDS_HDR));
    c.hs_out = (tds_wbuf)TDS_WBUF_INIT(1 << 20);
    c.hs_msg = (tds_wbuf)TDS_WBUF_INIT(TDS_MAX_PACKET + 1);
    c.scratch = (tds_wbuf)TDS_WBUF_INIT(TDS_MAX_MESSAGE * 2);
    tds_wbuf m = TDS_WBUF_INIT(TDS_MAX_MESSAGE);
    int rc = do_prelogin(&c);
    if (rc >= 0) rc = do_login(&c, rc == 1);
    while (rc == 0 && !c.broken && !(srv->stopping && *srv->stopping)) {
        uint8_t type;
        rc = tds_read_message(&c, &type, &m);
        if (rc) break;
        const uint8_t *mp = m.p ? m.p : (const uint8_t *)""; /* an empty message has no buffer */
        switch (type) {
        case TDS_PKT_BATCH: if ((rc = replayed(&c, type, mp, m.len)) == 1) rc = do_batch(&c, mp, m.len); break;
        case TDS_PKT_RPC: if ((rc = replayed(&c, type, mp, m.len)) == 1) rc = do_rpc(&c, mp, m.len); break;
        case TDS_PKT_TM: if ((rc = replayed(&c, type, mp, m.len)) == 1) rc = do_tm(&c, mp, m.len); break;
        case TDS_PKT_ATTN: /* a cancel that arrived after the request finished */
            mcdc_log(MCDC_LOG_DEBUG, "tds", "session %u: a cancel after the request had ended (%s)", c.spid,
                     c.last_req);
            tds_conn_round_trip(&c);
            tds_out_begin(&c, TDS_PKT_REPLY);
            tds_tok_done(&c.out, TDS_TOK_DONE, MCDC_SIM_DONE_ATTN, 0, 0);
            rc = tds_out_end(&c);
            break;
        default:
            tds_out_begin(&c, TDS_PKT_REPLY);
            msg(&c, true, 4002, 1, 16, "The incoming tabular data stream (TDS) protocol stream is incorrect.");
            tds_tok_done(&c.out, TDS_TOK_DONE, MCDC_SIM_DONE_ERROR, 0, 0);
            tds_out_end(&c);
            rc = MCDC_ECORRUPT;
            break;
        }
        if (m.cap > (1u << 20)) tds_w_dispose(&m); /* do not keep a large request's buffer */
    }
    if (rc < 0 && rc != MCDC_EPERM && rc != MCDC_EIO)
        mcdc_log(MCDC_LOG_INFO, "tds", "session %u: closing: %s", c.spid, mcdc_error_last()->message);
    if (c.session) srv->engine->close(c.session);
    tds_tls_stop(&c);
    tds_w_dispose(&m);
    tds_w_dispose(&c.out);
    tds_w_dispose(&c.wire);
    tds_w_dispose(&c.scratch);
}
