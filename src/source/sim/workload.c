/*
 * source/sim/workload.c: a deterministic synthetic workload: inserts, updates and deletes in
 * a given mix, with capture cycles along the way (10 scans of 500, as the capture job).
 *
 * Guarantees: the same seed, start and prior database give the same rows, LSNs and change
 * rows (splitmix64; existing rows are taken in key order). Fast: rows go through the same
 * transaction code as sim exec with prepared statements, many transactions per SQLite
 * transaction. With realtime, each transaction commits (and is visible to readers) when the
 * host clock reaches its time, and never before the simulator's clock, so realtime
 * workloads running at once on one database share the clock (each commit at the later of
 * its time and the clock); rows another workload deleted meanwhile are dropped from the
 * live set. Inserts take keys from a counter that starts past the live row count; on a key
 * taken, the counter jumps ahead by a doubling step, so a large table's used range is
 * crossed in a few dozen tries. With capture cycles (capture_every >= 0) the workload ends
 * with a capture of every commit still waiting, so its last commits are visible when it
 * returns; without, the result says how many wait. Any failure rolls back the SQLite
 * transaction in progress; transactions already committed stay.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcdc/time.h"
#include "source/sim/sim_int.h"

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t next_u64(rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint64_t below(rng *r, uint64_t n)
{
    return n ? next_u64(r) % n : 0;
}

static const char *const words[] = {"Ada", "Grace", "Edsger", "Barbara", "Donald", "Frances", "Niklaus", "Radia",
                                    "Ken", "Margaret", "Tony", "Leslie", "Käthe", "Søren", "Zoë", "José"};

/* A value for a column: keys from the counter k, others random. */
static int gen_value(rng *r, sim_arena *a, const sim_column *c, bool key, int64_t k, int64_t now_us, sim_val *out,
                     const sim_conv_ctx *cx)
{
    sim_val v = {0};
    char buf[96];
    if (!key && c->nullable && below(r, 10) == 0) {
        *out = v;
        return 0;
    }
    const sim_type *t = &c->type;
    int64_t x = key ? k : (int64_t)below(r, 1000000);
    switch (t->k) {
    case ST_BIT: v.k = V_INT; v.u.i = key ? k : (int64_t)below(r, 2); break;
    case ST_TINYINT: v.k = V_INT; v.u.i = key ? k : x % 256; break;
    case ST_SMALLINT: v.k = V_INT; v.u.i = key ? k : x % 32768; break;
    case ST_INT: case ST_BIGINT: v.k = V_INT; v.big = true; v.u.i = x; break;
    case ST_DECIMAL: case ST_NUMERIC: case ST_MONEY: case ST_SMALLMONEY: {
        int p = t->k == ST_MONEY ? 19 : t->k == ST_SMALLMONEY ? 10 : t->prec;
        int s = t->k == ST_MONEY || t->k == ST_SMALLMONEY ? 4 : t->scale;
        v.k = V_DEC;
        v.prec = p;
        v.scale = key ? 0 : s;
        if (key) {
            v.u.dec = k;
        } else {
            mcdc_int128 lim = 1;
            for (int i = 0; i < (p < 9 ? p : 9); i++) lim *= 10;
            if (t->k == ST_SMALLMONEY) lim = 100000000;
            v.u.dec = (mcdc_int128)(next_u64(r) % (uint64_t)lim);
        }
        break;
    }
    case ST_REAL: case ST_FLOAT: v.k = V_FLT; v.u.d = key ? (double)k : (double)below(r, 10000000) / 100.0; break;
    case ST_DATE: v.k = V_DATE; v.u.i = key ? 10957 + k : now_us / MCDC_US_PER_DAY - (int64_t)below(r, 1000); break;
    case ST_TIME: v.k = V_TIME; v.u.i = key ? k * TICKS_PER_SEC % TICKS_PER_DAY : (int64_t)below(r, (uint64_t)TICKS_PER_DAY); break;
    case ST_DATETIME: case ST_DATETIME2: case ST_SMALLDATETIME: case ST_DATETIMEOFFSET:
        v.k = t->k == ST_DATETIMEOFFSET ? V_DTO : V_DT;
        v.u.i = key ? (INT64_C(946684800) + k) * TICKS_PER_SEC
                    : now_us * TICKS_PER_US - (int64_t)below(r, UINT64_C(86400) * 30 * 10000000);
        break;
    case ST_BINARY: case ST_VARBINARY: case ST_IMAGE: case ST_ROWVERSION: { /* rowversion: replaced by the stamp */
        size_t n = t->len <= 0 || t->len > 16 ? 16 : (size_t)t->len;
        char *b = sim_arena_alloc(a, 16);
        uint64_t h = key ? (uint64_t)k : next_u64(r), l = key ? 0 : next_u64(r);
        for (int i = 0; i < 8; i++) { b[i] = (char)(h >> (56 - 8 * i)); b[8 + i] = (char)(l >> (56 - 8 * i)); }
        if (key && n < 16) memmove(b, b + 8 - (n < 8 ? n : 8), n);
        v.k = V_BIN;
        v.u.s.p = b;
        v.u.s.n = n;
        break;
    }
    case ST_UNIQUEIDENTIFIER: {
        uint64_t h = next_u64(r), l = next_u64(r);
        snprintf(buf, sizeof buf, "%08X-%04X-%04X-%04X-%012llX", (unsigned)(h >> 32), (unsigned)(h >> 16) & 0xFFFF,
                 (unsigned)h & 0xFFFF, (unsigned)(l >> 48), (unsigned long long)(l & UINT64_C(0xFFFFFFFFFFFF)));
        goto text;
    }
    case ST_XML:
        snprintf(buf, sizeof buf, "<v n=\"%lld\"/>", (long long)x);
        goto text;
    default: {
        if (key) snprintf(buf, sizeof buf, "K%lld", (long long)k);
        else snprintf(buf, sizeof buf, "%s %lld", words[below(r, sizeof words / sizeof words[0])], (long long)x);
    text:;
        size_t n = strlen(buf);
        if (t->len > 0) {
            bool wide = t->k == ST_NCHAR || t->k == ST_NVARCHAR;
            while (n > 0 && (wide ? sim_utf16_len(buf, n) : (long)n) > t->len) {
                n--;
                while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80) n--; /* whole code points */
            }
        }
        v.k = V_STR;
        v.u.s.p = sim_arena_strndup(a, buf, n);
        v.u.s.n = n;
        break;
    }
    }
    return sim_convert(a, t, &v, out, cx);
}

typedef struct live_rows {
    int64_t *rowid;
    int64_t  n, cap;
} live_rows;

static int live_push(live_rows *l, int64_t rowid)
{
    if (l->n == l->cap) {
        int64_t nc = l->cap ? l->cap * 2 : 1024;
        int64_t *p = realloc(l->rowid, (size_t)nc * sizeof *p);
        if (!p) return mcdc_error_set(MCDC_ENOMEM, "out of memory");
        l->rowid = p;
        l->cap = nc;
    }
    l->rowid[l->n++] = rowid;
    return 0;
}

static int read_by_rowid(mcdc_sim *s, sim_table *tb, int64_t rowid, sim_arena *a, sim_val *row)
{
    if (!tb->get) {
        mcdc_buf b = MCDC_BUF_INIT(1 << 20);
        mcdc_buf_puts(&b, "SELECT rowid");
        for (int k = 0; k < tb->n_live; k++) mcdc_buf_printf(&b, ", c%d", tb->cols[tb->live[k]].column_id);
        mcdc_buf_printf(&b, " FROM sim_src_%lld WHERE rowid = ?", (long long)tb->id);
        int rc = sqlite3_prepare_v3(s->db, b.ptr, -1, SQLITE_PREPARE_PERSISTENT, &tb->get, NULL);
        mcdc_buf_dispose(&b);
        if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "reading a row");
    }
    sqlite3_reset(tb->get);
    sqlite3_bind_int64(tb->get, 1, rowid);
    if (sqlite3_step(tb->get) != SQLITE_ROW) {
        sqlite3_reset(tb->get);
        return mcdc_error_set(MCDC_ENOTFOUND, "%s: row %lld of %s vanished", s->path, (long long)rowid, tb->full);
    }
    int rc = sim__read_row(s, tb, tb->get, 1, a, row);
    sqlite3_reset(tb->get);
    return rc;
}

static void sleep_until(int64_t host_us)
{
    int64_t d = host_us - mcdc_time_now_us();
    if (d <= 0) return;
    struct timespec ts = {(time_t)(d / 1000000), (long)(d % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* The time to commit (or capture) at for planned time @p t: in realtime, never before the
 * simulator's clock, which other realtime workloads move too. */
static int64_t at_time(const mcdc_sim *s, const mcdc_sim_workload_options *o, int64_t t)
{
    return o->realtime && t < s->st.clock_us ? s->st.clock_us : t;
}

int mcdc_sim_workload(mcdc_sim *s, const mcdc_sim_workload_options *o, mcdc_sim_workload_result *out)
{
    memset(out, 0, sizeof *out);
    char schema[129], name[129];
    int rc;
    if (!o->table) return mcdc_error_set(MCDC_EINVAL, "workload: no table given (--table dbo.orders)");
    if ((rc = sim_parse_table_name(o->table, schema, name)) < 0) return rc;
    if (o->transactions < 1) return mcdc_error_set(MCDC_EINVAL, "workload: --transactions must be at least 1");
    if (o->pct_insert < 0 || o->pct_update < 0 || o->pct_delete < 0 || o->pct_insert + o->pct_update + o->pct_delete != 100)
        return mcdc_error_set(MCDC_EINVAL, "workload: the mix must add up to 100 (insert=%d, update=%d, delete=%d)",
                              o->pct_insert, o->pct_update, o->pct_delete);
    if (o->rows_per_transaction < 1 || o->rows_per_transaction > 100000)
        return mcdc_error_set(MCDC_EINVAL, "workload: --rows-per-transaction must be 1 to 100000");
    if (o->interval_us < 0) return mcdc_error_set(MCDC_EINVAL, "workload: --interval must not be negative");
    if (o->heartbeat_every_us < 0) return mcdc_error_set(MCDC_EINVAL, "workload: --heartbeat must not be negative");
    int64_t hb_every = o->heartbeat_every_us;
    if (hb_every > 0 && (rc = mcdc_sim_heartbeat_setup(s, o->realtime ? MCDC_SIM_NOW : MCDC_SIM_CLOCK, NULL)) < 0)
        return rc;
    int64_t host0 = mcdc_time_mono_us();
    /* bulk speed: checkpoint the WAL only at the end (every commit is still atomic) */
    sqlite3_wal_autocheckpoint(s->db, 0);
    if ((rc = sim__begin(s)) < 0) goto restore;
    sim_table *tb = sim__find_table(s, schema, name);
    live_rows live = {0};
    sim_arena a = {0};
    if (!tb) {
        rc = mcdc_error_set(MCDC_ENOTFOUND, "workload: table %s.%s does not exist in %s", schema, name, s->path);
        goto fail;
    }
    int64_t start = o->start_us;
    if (o->realtime) start = start == MCDC_SIM_NOW ? mcdc_time_now_us() : start;
    else if (start == MCDC_SIM_NOW) start = s->st.clock_us + o->interval_us;
    if (start < s->st.clock_us) start = start == o->start_us ? start : s->st.clock_us;
    {
        char sql[128];
        sqlite3_stmt *st;
        snprintf(sql, sizeof sql, "SELECT rowid FROM sim_src_%lld ORDER BY __key", (long long)tb->id);
        if ((rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL)) != SQLITE_OK) { rc = sim__sqlite_error(s, rc, "reading rows"); goto fail; }
        rc = 0;
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) rc = live_push(&live, sqlite3_column_int64(st, 0));
        sqlite3_finalize(st);
        if (rc < 0) goto fail;
    }
    rng r = {o->seed};
    int64_t counter = live.n + 1;
    int64_t next_capture = o->capture_every_us >= 0 ? start : INT64_MAX;
    int64_t next_beat = start; /* the heartbeat's first beat with the first transaction */
    mcdc_sim_capture_options copts = {500, 10, 5 * 60 * INT64_C(1000000)};
    sim_conv_ctx cx = {s->st.db_name, tb->full, NULL};
    sim_val *row = calloc((size_t)tb->n_cols + 1, sizeof *row), *nrow = calloc((size_t)tb->n_cols + 1, sizeof *nrow);
    if (!row || !nrow) { free(row); free(nrow); rc = mcdc_error_set(MCDC_ENOMEM, "out of memory"); goto fail; }
    int64_t in_batch = 0, now = 0;
    for (int64_t i = 0; i < o->transactions; i++) {
        int64_t t_i = start + i * o->interval_us;
        if (o->realtime) {
            if ((rc = sim__commit(s)) < 0) break;
            sleep_until(t_i);
            if ((rc = sim__begin(s)) < 0) break;
            tb = sim__find_table(s, schema, name);
            if (!tb) { rc = mcdc_error_set(MCDC_ENOTFOUND, "workload: table %s vanished", o->table); break; }
        }
        /* heartbeat beats and capture cycles due at or before this commit, in time order */
        int64_t cycles = 0;
        bool captured = false;
        for (;;) {
            if (rc < 0) break;
            bool cap_due = next_capture <= t_i && !captured;
            if (hb_every > 0 && next_beat <= t_i && (!cap_due || next_beat <= next_capture)) {
                if (o->realtime) {
                    if ((rc = sim__commit(s)) < 0) break;
                    sleep_until(next_beat);
                    if ((rc = sim__begin(s)) < 0) break;
                }
                mcdc_sim_exec_result hr;
                if ((rc = sim__advance_clock(s, at_time(s, o, next_beat), &now)) < 0 ||
                    (rc = sim__heartbeat_beat_in_tx(s, now, &hr)) < 0)
                    break;
                out->n_beats++;
                next_beat += hb_every;
                if (o->realtime && !(tb = sim__find_table(s, schema, name))) {
                    rc = mcdc_error_set(MCDC_ENOTFOUND, "workload: table %s vanished", o->table);
                    break;
                }
                continue;
            }
            if (!cap_due) break;
            int64_t at = cycles++ < 1000 ? next_capture : t_i;
            mcdc_sim_capture_result cr = {0};
            if ((rc = sim__advance_clock(s, at_time(s, o, at), &now)) < 0 ||
                (rc = sim__capture_in_tx(s, now, &copts, &cr)) < 0)
                break;
            out->n_scans += cr.n_scans;
            next_capture = at == t_i ? t_i + o->capture_every_us : next_capture + o->capture_every_us;
            if (o->capture_every_us == 0) captured = true; /* once before each commit */
        }
        if (rc < 0) break;
        if ((rc = sim__advance_clock(s, at_time(s, o, t_i), &now)) < 0) break;
        sim_txn t;
        if ((rc = sim__txn_begin(&t, s, &a, now, now)) < 0) break;
        for (int k = 0; rc == 0 && k < o->rows_per_transaction; k++) {
            t.command_id = k + 1;
            int pick = (int)below(&r, 100);
            int op = pick < o->pct_insert ? 0 : pick < o->pct_insert + o->pct_update ? 1 : 2;
            if (live.n == 0) op = 0;
            if (op == 0) {
                int64_t step = 1; /* the jump after a key found taken, doubling */
                for (int tries = 0;; tries++) {
                    for (int c = 0; rc == 0 && c < tb->n_cols; c++) {
                        memset(&row[c], 0, sizeof row[c]);
                        if (tb->cols[c].dropped) continue;
                        cx.column = tb->cols[c].name;
                        rc = gen_value(&r, &a, &tb->cols[c], tb->cols[c].key_ordinal > 0, counter, now, &row[c], &cx);
                    }
                    counter++;
                    if (rc < 0) break;
                    rc = sim__txn_insert(&t, tb, row);
                    if (rc == 0) break;
                    if (rc != MCDC_EINVAL || strncmp(mcdc_error_last()->message, "Msg 2627", 8)) break;
                    rc = 0;
                    mcdc_error_clear();
                    counter += step - 1;
                    if (step < (INT64_C(1) << 20)) step *= 2;
                    if (tries > 1000) {
                        rc = mcdc_error_set(MCDC_EINVAL, "workload: no free key found in %s after 1000 tries", tb->full);
                        break;
                    }
                }
                if (rc < 0) break;
                if ((rc = live_push(&live, sqlite3_last_insert_rowid(s->db))) < 0) break;
                out->n_inserts++;
            } else {
                int64_t idx = (int64_t)below(&r, (uint64_t)live.n);
                rc = read_by_rowid(s, tb, live.rowid[idx], &a, row);
                if (rc == MCDC_ENOTFOUND && o->realtime) {
                    /* another workload deleted it: forget it, change nothing this time */
                    mcdc_error_clear();
                    rc = 0;
                    live.rowid[idx] = live.rowid[--live.n];
                    continue;
                }
                if (rc < 0) break;
                if (op == 1) {
                    memcpy(nrow, row, (size_t)tb->n_cols * sizeof *row);
                    int n_nonkey = 0;
                    for (int c = 0; c < tb->n_live; c++) n_nonkey += tb->cols[tb->live[c]].key_ordinal == 0;
                    if (n_nonkey > 0) {
                        int changes = 1 + (int)below(&r, 2);
                        for (int ch = 0; rc == 0 && ch < changes; ch++) {
                            int pickc = (int)below(&r, (uint64_t)n_nonkey), c = -1;
                            for (int j = 0; j < tb->n_live; j++)
                                if (tb->cols[tb->live[j]].key_ordinal == 0 && pickc-- == 0) c = tb->live[j];
                            cx.column = tb->cols[c].name;
                            rc = gen_value(&r, &a, &tb->cols[c], false, 0, now, &nrow[c], &cx);
                        }
                    }
                    if (rc < 0 || (rc = sim__txn_update(&t, tb, live.rowid[idx], row, nrow)) < 0) break;
                    out->n_updates++;
                } else {
                    if ((rc = sim__txn_delete(&t, tb, live.rowid[idx], row)) < 0) break;
                    live.rowid[idx] = live.rowid[--live.n];
                    out->n_deletes++;
                }
            }
        }
        if (rc < 0) break;
        mcdc_lsn commit;
        bool logged;
        if ((rc = sim__txn_commit(&t, &commit, &logged)) < 0) break;
        out->n_changes += t.n_changes;
        out->n_transactions++;
        out->end_us = now;
        sim_arena_reset(&a);
        if (++in_batch >= 20000 && !o->realtime) {
            if ((rc = sim__commit(s)) < 0 || (rc = sim__begin(s)) < 0) break;
            tb = sim__find_table(s, schema, name);
            in_batch = 0;
        }
    }
    free(row);
    free(nrow);
    /* the last commits: captured now when the workload runs capture cycles (as the capture
     * job would within its next cycle), else counted as waiting */
    while (rc == 0 && o->capture_every_us >= 0 && sim__count_pending(s) > 0) {
        mcdc_sim_capture_options last = {500, 10, -1};
        mcdc_sim_capture_result cr = {0};
        if ((rc = sim__advance_clock(s, at_time(s, o, now ? now : s->st.clock_us), &now)) < 0 ||
            (rc = sim__capture_in_tx(s, now, &last, &cr)) < 0)
            break;
        out->n_scans += cr.n_scans;
    }
    if (rc == 0)
        out->pending = sim__count_pending(s);
    if (rc < 0) goto fail;
    if ((rc = sim__commit(s)) < 0) goto fail;
    free(live.rowid);
    sim_arena_free(&a);
    goto restore;
fail:
    sim__rollback(s);
    free(live.rowid);
    sim_arena_free(&a);
restore:
    sqlite3_wal_autocheckpoint(s->db, 1000);
    sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    out->elapsed_us = mcdc_time_mono_us() - host0;
    return rc;
}
