/*
 * source/sim/tds/fault.c: faults for tests (`--fault`, `--fault-repeat`, `--latency`).
 *
 *   drop-after-rows:N   close the connection once a result set has sent N rows
 *   stall:DURATION      hold the next response that long before it starts
 *   error:1205@N        answer the N-th request (SQLBatch or RPC, counted over the whole
 *   error:1222@N        server from 1) with the deadlock-victim or lock-timeout error
 * --latency adds its delay to every request here; the handshake's answers take it through
 * tds_conn_round_trip (conn.c), so every round trip of a client costs it once.
 * Each fault fires once in the server's life; with --fault-repeat, drop and stall fire every
 * time and an error fires on every N-th request (N, 2N, ...).
 *
 * Guarantees: firing is decided under one mutex, so with several connections a fault still
 * fires exactly once; parsing refuses anything else with a message naming the value.
 */
#include <stdlib.h>
#include <string.h>

#include "mcdc/time.h"
#include "source/sim/tds/tds_int.h"

static int bad_fault(const char *text, const char *why)
{
    mcdc_error_set(MCDC_EINVAL, "--fault %s: %s", text, why);
    return mcdc_error_hint("use drop-after-rows:N, stall:DURATION (250ms, 2s), error:1205@N or error:1222@N");
}

static bool parse_pos(const char *s, int64_t *out)
{
    if (!*s) return false;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end || v < 1 || s[0] == '+' || s[0] == '-') return false;
    *out = v;
    return true;
}

int tds_fault_parse(tds_fault *out, const char *text)
{
    memset(out, 0, sizeof *out);
    if (!strncmp(text, "drop-after-rows:", 16)) {
        out->kind = TDS_FAULT_DROP_AFTER_ROWS;
        if (!parse_pos(text + 16, &out->n)) return bad_fault(text, "N must be a positive integer");
        return 0;
    }
    if (!strncmp(text, "stall:", 6)) {
        out->kind = TDS_FAULT_STALL;
        if (mcdc_duration_parse(&out->stall_us, text + 6) < 0 || out->stall_us <= 0) {
            mcdc_error_clear();
            return bad_fault(text, "DURATION must be a positive duration");
        }
        return 0;
    }
    if (!strncmp(text, "error:", 6)) {
        out->kind = TDS_FAULT_ERROR;
        const char *at = strchr(text + 6, '@');
        if (!at) return bad_fault(text, "the statement number is missing (error:1205@N)");
        size_t nl = (size_t)(at - (text + 6));
        if (nl == 4 && !strncmp(text + 6, "1205", 4)) out->error = 1205;
        else if (nl == 4 && !strncmp(text + 6, "1222", 4)) out->error = 1222;
        else return bad_fault(text, "the error must be 1205 (deadlock victim) or 1222 (lock timeout)");
        if (!parse_pos(at + 1, &out->n)) return bad_fault(text, "N must be a positive integer");
        return 0;
    }
    return bad_fault(text, "unknown fault kind");
}

void tds_faults_on_request(tds_faults *fs, int32_t *error, int64_t *stall_us)
{
    *error = 0;
    *stall_us = fs->latency_us;
    pthread_mutex_lock(&fs->mu);
    int64_t k = ++fs->n_requests;
    for (int i = 0; i < fs->n; i++) {
        tds_fault *f = &fs->f[i];
        if (f->kind == TDS_FAULT_STALL && (fs->repeat || !f->fired)) {
            f->fired++;
            *stall_us += f->stall_us;
        } else if (f->kind == TDS_FAULT_ERROR && !*error) {
            bool hit = fs->repeat ? k % f->n == 0 : (!f->fired && k == f->n);
            if (hit) {
                f->fired++;
                *error = f->error;
            }
        }
    }
    pthread_mutex_unlock(&fs->mu);
}

bool tds_faults_drop_now(tds_faults *fs, int64_t rows_in_result)
{
    /* kind and n never change once loaded: only a row count some fault names takes the lock
     * (this runs for every row sent) */
    bool named = false;
    for (int i = 0; i < fs->n && !named; i++)
        named = fs->f[i].kind == TDS_FAULT_DROP_AFTER_ROWS && rows_in_result == fs->f[i].n;
    if (!named) return false;
    bool drop = false;
    pthread_mutex_lock(&fs->mu);
    for (int i = 0; i < fs->n && !drop; i++) {
        tds_fault *f = &fs->f[i];
        if (f->kind == TDS_FAULT_DROP_AFTER_ROWS && rows_in_result == f->n && (fs->repeat || !f->fired)) {
            f->fired++;
            drop = true;
        }
    }
    pthread_mutex_unlock(&fs->mu);
    return drop;
}
