/*
 * tests/unit/source/session_test.h: a recording sink for sim serve's sessions: every event
 * (COLMETADATA, ROW, DONE, ERROR/INFO, RETURNSTATUS, RETURNVALUE, ENVCHANGE) appended as a
 * line of text, so tests compare what a client would see with one string.
 */
#ifndef MCDC_SESSION_TEST_H
#define MCDC_SESSION_TEST_H

#include "sim_test.h"
#include "source/sim/session.h"

typedef struct rec {
    mcdc_buf out;
    int      cancel_after_rows; /* >0: cancelled() turns true after that many rows */
    int      rows;
    sim_type types[128];   /* of the current result set */
} rec;

static void rec_type(mcdc_buf *b, const sim_type *t)
{
    char tn[64];
    sim_type_format(tn, sizeof tn, t);
    mcdc_buf_puts(b, tn);
}

static int rec_columns(void *p, const mcdc_sim_rcol *c, int n)
{
    rec *r = p;
    mcdc_buf_puts(&r->out, "cols");
    for (int i = 0; i < n && i < 128; i++) r->types[i] = c[i].type;
    for (int i = 0; i < n; i++) {
        mcdc_buf_printf(&r->out, "%s%s:", i ? ", " : " ", c[i].name);
        if (c[i].is_variant) mcdc_buf_puts(&r->out, "sql_variant/");
        rec_type(&r->out, &c[i].type);
        if (!c[i].nullable) mcdc_buf_puts(&r->out, " not null");
    }
    return mcdc_buf_putc(&r->out, '\n');
}

static int rec_row(void *p, const sim_val *v, int n)
{
    rec *r = p;
    r->rows++;
    mcdc_buf_puts(&r->out, "row");
    for (int i = 0; i < n; i++) {
        mcdc_buf_puts(&r->out, i ? " | " : " ");
        sim_val_text(&r->out, &r->types[i < 128 ? i : 0], &v[i]);
    }
    return mcdc_buf_putc(&r->out, '\n');
}

static int rec_done(void *p, mcdc_sim_done_kind k, unsigned st, uint16_t cmd, int64_t count)
{
    rec *r = p;
    mcdc_buf_printf(&r->out, "%s", k == MCDC_SIM_DONE_STMT ? "done" : k == MCDC_SIM_DONE_PROC ? "doneproc" : "doneinproc");
    if (st & MCDC_SIM_DONE_MORE) mcdc_buf_puts(&r->out, " more");
    if (st & MCDC_SIM_DONE_ERROR) mcdc_buf_puts(&r->out, " error");
    if (st & MCDC_SIM_DONE_ATTN) mcdc_buf_puts(&r->out, " attn");
    if (st & MCDC_SIM_DONE_COUNT) mcdc_buf_printf(&r->out, " count=%lld", (long long)count);
    (void)cmd;
    return mcdc_buf_putc(&r->out, '\n');
}

static int rec_message(void *p, bool is_error, int32_t num, uint8_t state, uint8_t cls, const char *text,
                       const char *proc, int32_t line)
{
    rec *r = p;
    (void)line;
    return mcdc_buf_printf(&r->out, "%s %d/%d/%d %s%s%s%s\n", is_error ? "error" : "info", num, state, cls, text,
                           proc && *proc ? " (in " : "", proc && *proc ? proc : "", proc && *proc ? ")" : "");
}

static int rec_status(void *p, int32_t st)
{
    return mcdc_buf_printf(&((rec *)p)->out, "status %d\n", st);
}

static int rec_retval(void *p, int ord, const char *name, const mcdc_sim_rcol *c, const sim_val *v)
{
    rec *r = p;
    mcdc_buf_printf(&r->out, "retval %d %s ", ord, name);
    rec_type(&r->out, &c->type);
    mcdc_buf_putc(&r->out, '=');
    sim_val_text(&r->out, &c->type, v);
    return mcdc_buf_putc(&r->out, '\n');
}

static int rec_env(void *p, int type, const char *nv, const char *ov)
{
    return mcdc_buf_printf(&((rec *)p)->out, "env %d %s %s\n", type, nv ? nv : "-", ov ? ov : "-");
}

static bool rec_cancelled(void *p)
{
    rec *r = p;
    return r->cancel_after_rows > 0 && r->rows >= r->cancel_after_rows;
}

static mcdc_sim_session_sink rec_sink(rec *r)
{
    mcdc_sim_session_sink k = {r, rec_columns, rec_row, rec_done, rec_message, rec_status, rec_retval, rec_env,
                               rec_cancelled};
    return k;
}

/* Run a batch and return what the client saw (static buffer, valid until the next call). */
static __attribute__((unused)) const char *B(mcdc_sim_session *s, const char *sql)
{
    static char *last;
    rec r = {MCDC_BUF_INIT(1 << 26), 0, 0, {{0}}};
    mcdc_sim_session_sink k = rec_sink(&r);
    int rc = mcdc_sim_session_batch(s, sql, &k);
    if (rc) fail_msg("batch %s: rc %d %s", sql, rc, mcdc_error_last()->message);
    free(last);
    last = mcdc_buf_detach(&r.out);
    return last ? last : "";
}

/* A string parameter (nvarchar). */
static __attribute__((unused)) mcdc_sim_param PS(const char *name, const char *text)
{
    mcdc_sim_param p = {name, {ST_NVARCHAR, -1, 0, 0}, {0}, false};
    p.value.k = V_STR;
    p.value.big = true;
    p.value.u.s.p = text;
    p.value.u.s.n = strlen(text);
    return p;
}

static __attribute__((unused)) mcdc_sim_param PI(const char *name, int64_t v, bool output)
{
    mcdc_sim_param p = {name, {ST_INT, 0, 0, 0}, {0}, output};
    p.value.k = V_INT;
    p.value.u.i = v;
    return p;
}

static __attribute__((unused)) const char *R(mcdc_sim_session *s, const char *proc, int id, const mcdc_sim_param *ps, int n)
{
    static char *last;
    rec r = {MCDC_BUF_INIT(1 << 26), 0, 0, {{0}}};
    mcdc_sim_session_sink k = rec_sink(&r);
    int rc = mcdc_sim_session_rpc(s, proc, id, ps, n, &k);
    if (rc) fail_msg("rpc %s: rc %d %s", proc ? proc : "(id)", rc, mcdc_error_last()->message);
    free(last);
    last = mcdc_buf_detach(&r.out);
    return last ? last : "";
}

#endif
