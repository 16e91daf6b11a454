/*
 * fuzz_sim_tsql: sim serve's T-SQL engine on hostile batches: whatever text a client sends,
 * the session answers through its sink without crashing, leaking or failing as a C call
 * (only SQL Server errors), and its event stream stays well formed: rows only after their
 * columns, each row as wide as its result set, exactly one final DONE (without the MORE bit)
 * at the end and none after it.
 *
 * The database (a table with CDC, a few committed and captured changes) is made once in a
 * temporary directory; batches may change it, as a client's could.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcdc/sim.h"
#include "mcdc/time.h"
#include "source/sim/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct state {
    int  ncols;      /* of the current result set, -1 before any */
    bool final_seen; /* a DONE without MORE */
} state;

static void check(bool ok)
{
    if (!ok) abort();
}

static int on_columns(void *p, const mcdc_sim_rcol *c, int n)
{
    state *s = p;
    check(!s->final_seen && n > 0 && c);
    for (int i = 0; i < n; i++) check(c[i].name != NULL);
    s->ncols = n;
    return 0;
}

static int on_row(void *p, const sim_val *v, int n)
{
    state *s = p;
    check(!s->final_seen && s->ncols == n && v);
    for (int i = 0; i < n; i++)
        if (v[i].k == V_STR || v[i].k == V_BIN) check(v[i].u.s.n == 0 || v[i].u.s.p);
    return 0;
}

static int on_done(void *p, mcdc_sim_done_kind k, unsigned st, uint16_t cmd, int64_t count)
{
    state *s = p;
    (void)k;
    (void)cmd;
    check(!s->final_seen && count >= 0);
    if (!(st & MCDC_SIM_DONE_MORE)) s->final_seen = true;
    s->ncols = -1;
    return 0;
}

static int on_message(void *p, bool is_error, int32_t num, uint8_t state_, uint8_t cls, const char *text, const char *proc,
                      int32_t line)
{
    state *s = p;
    (void)state_;
    (void)proc;
    (void)line;
    check(!s->final_seen && text && num >= 0 && (is_error ? cls > 10 : cls <= 10));
    return 0;
}

static int on_status(void *p, int32_t st)
{
    (void)st;
    check(!((state *)p)->final_seen);
    return 0;
}

static int on_retval(void *p, int ord, const char *name, const mcdc_sim_rcol *c, const sim_val *v)
{
    (void)ord;
    check(!((state *)p)->final_seen && name && c && v);
    return 0;
}

static int on_env(void *p, int type, const char *nv, const char *ov)
{
    (void)type;
    (void)nv;
    (void)ov;
    check(!((state *)p)->final_seen);
    return 0;
}

static mcdc_sim_session *session;
static char dir[64];

static void cleanup(void)
{
    mcdc_sim_session_close(session);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "fuzz_sim_tsql: cannot remove %s\n", dir);
}

static void setup(void)
{
    char path[128];
    snprintf(dir, sizeof dir, "/tmp/mcdc_fuzz_tsql_XXXXXX");
    check(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/f.db", dir);
    mcdc_sim *sim;
    int64_t t0;
    check(mcdc_time_parse(&t0, "2026-01-01T00:00:00") == 0);
    check(mcdc_sim_open(&sim, path, true, NULL) == 0);
    check(mcdc_sim_create_table(sim, "dbo.orders", "order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, "
                                "placed_at DATETIME2(3) NULL", "order_id", NULL, t0) == 0);
    mcdc_sim_exec_result r;
    check(mcdc_sim_exec(sim, "INSERT INTO dbo.orders VALUES (1, N'Ann', 10.50, '2026-01-01 00:00:00.125'), (2, N'Bob', NULL, NULL)",
                        t0 + 1000000, t0 + 1000000, &r) == 0);
    mcdc_sim_capture_result cr;
    check(mcdc_sim_capture(sim, t0 + 2000000, NULL, &cr) == 0);
    check(mcdc_sim_login_add(sim, "fuzz", "pw", false) == 0);
    mcdc_sim_close(sim);
    mcdc_sim_login_info li = {"fuzz", NULL, "fuzz"};
    check(mcdc_sim_session_open(&session, path, &li, NULL) == 0);
    atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!session) setup();
    char *sql = malloc(size + 1);
    if (!sql) return 0;
    memcpy(sql, data, size);
    sql[size] = '\0'; /* a NUL inside ends the batch, as the wire's decoded text would */
    state st = {-1, false};
    mcdc_sim_session_sink k = {&st, on_columns, on_row, on_done, on_message, on_status, on_retval, on_env, NULL};
    int rc = mcdc_sim_session_batch(session, sql, &k);
    check(rc == 0 || rc == MCDC_ENOMEM);
    if (rc == 0) check(st.final_seen);
    /* the same text as an sp_executesql statement */
    mcdc_sim_param p = {NULL, {ST_NVARCHAR, -1, 0, 0}, {0}, false};
    p.value.k = V_STR;
    p.value.big = true;
    p.value.u.s.p = sql;
    p.value.u.s.n = strlen(sql);
    st = (state){-1, false};
    rc = mcdc_sim_session_rpc(session, "sp_executesql", 0, &p, 1, &k);
    check(rc == 0 || rc == MCDC_ENOMEM);
    if (rc == 0) check(st.final_seen);
    free(sql);
    return 0;
}
