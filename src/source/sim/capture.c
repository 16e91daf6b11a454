/*
 * source/sim/capture.c: capture scans, idle entries and cleanup by retention.
 *
 * A scan takes the next committed log entries (transactions, enables, DDL) past the processed
 * LSN, at most max_trans of them, in LSN (commit) order, and makes them visible: the views
 * show change rows, mapping entries and DDL history only up to the processed LSN, so changes
 * committed but not yet scanned cannot be seen, as on SQL Server. A scan that finds nothing
 * writes one idle entry (tran_id 0x00) when idle_after passed since the last mapping entry.
 * Cleanup moves every instance's start_lsn first (one transaction), then deletes change rows
 * and mapping entries below the low water mark in batches, each its own transaction.
 */
#include <stdio.h>
#include <string.h>

#include "mcdc/time.h"
#include "source/sim/sim_int.h"

int64_t sim__count_pending(mcdc_sim *s)
{
    sqlite3_stmt *st;
    int64_t n = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sim_tx WHERE lsn > ?", -1, &st, NULL) != SQLITE_OK) return 0;
    sim__bind_lsn(st, 1, &s->st.processed);
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

int sim__max_lsn(mcdc_sim *s, mcdc_lsn *out, int64_t *end_utc_us)
{
    sqlite3_stmt *st;
    *out = mcdc_lsn_zero();
    if (end_utc_us) *end_utc_us = 0;
    int rc = sim__stmt(s, "SELECT lsn, end_utc_us FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn <= ?"
                          " ORDER BY lsn DESC LIMIT 1", "reading max_lsn", &st);
    if (rc < 0) return rc;
    sim__bind_lsn(st, 1, &s->st.processed);
    if (sqlite3_step(st) == SQLITE_ROW) {
        sim__column_lsn(st, 0, out);
        if (end_utc_us) *end_utc_us = sqlite3_column_int64(st, 1);
    }
    sim__stmt_done(s, st);
    return 0;
}

static int write_idle(mcdc_sim *s, int64_t now, mcdc_lsn *out)
{
    mcdc_lsn lsn;
    int rc = sim__alloc_lsn(s, now, &lsn);
    if (rc == 0) rc = sim__tx_record(s, &lsn, TX_IDLE, &lsn, now, now, 0);
    if (rc == 0) {
        s->st.processed = lsn;
        if (out) *out = lsn;
    }
    return rc;
}

int sim__capture_in_tx(mcdc_sim *s, int64_t now, const mcdc_sim_capture_options *opts, mcdc_sim_capture_result *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "SELECT lsn FROM sim_tx WHERE lsn > ? ORDER BY lsn LIMIT ?", -1, &st, NULL);
    if (rc != SQLITE_OK) return sim__sqlite_error(s, rc, "scanning the log");
    for (int scan = 0; scan < opts->max_scans; scan++) {
        sqlite3_reset(st);
        sim__bind_lsn(st, 1, &s->st.processed);
        sqlite3_bind_int(st, 2, opts->max_trans);
        int64_t n = 0;
        mcdc_lsn last = s->st.processed;
        while (sqlite3_step(st) == SQLITE_ROW) {
            sim__column_lsn(st, 0, &last);
            n++;
        }
        if (n == 0) break;
        s->st.processed = last;
        out->n_trans += n;
        out->n_scans++;
        if (n < opts->max_trans) break;
    }
    sqlite3_finalize(st);
    if (out->n_trans == 0 && opts->idle_after_us >= 0) {
        mcdc_lsn max;
        int64_t last_us;
        if ((rc = sim__max_lsn(s, &max, &last_us)) < 0) return rc;
        if (mcdc_lsn_is_zero(&max) || now - last_us >= opts->idle_after_us) {
            if ((rc = write_idle(s, now, NULL)) < 0) return rc;
            out->idle = true;
        }
    }
    return 0;
}

int mcdc_sim_capture(mcdc_sim *s, int64_t at_us, const mcdc_sim_capture_options *opts, mcdc_sim_capture_result *out)
{
    mcdc_sim_capture_options def = MCDC_SIM_CAPTURE_OPTIONS_INIT;
    if (!opts) opts = &def;
    memset(out, 0, sizeof *out);
    if (opts->max_trans < 1 || opts->max_scans < 1)
        return mcdc_error_set(MCDC_EINVAL, "capture needs at least one transaction per scan and one scan (got %d and %d)",
                              opts->max_trans, opts->max_scans);
    int rc = sim__begin(s);
    if (rc < 0) return rc;
    int64_t now;
    if ((rc = sim__advance_clock(s, at_us, &now)) < 0 || (rc = sim__capture_in_tx(s, now, opts, out)) < 0 ||
        (rc = sim__max_lsn(s, &out->max_lsn, NULL)) < 0)
        goto fail;
    out->pending = sim__count_pending(s);
    if ((rc = sim__commit(s)) < 0) goto fail;
    return 0;
fail:
    sim__rollback(s);
    memset(out, 0, sizeof *out);
    return rc;
}

int mcdc_sim_idle(mcdc_sim *s, int64_t at_us, mcdc_lsn *out)
{
    int rc = sim__begin(s);
    if (rc < 0) return rc;
    int64_t now, pending;
    if ((rc = sim__advance_clock(s, at_us, &now)) < 0) goto fail;
    if ((pending = sim__count_pending(s)) > 0) {
        rc = mcdc_error_set(MCDC_EINVAL, "%lld committed log entries wait for a capture scan; capture writes an idle "
                            "entry only when it finds nothing to do", (long long)pending);
        mcdc_error_hint("run 'mssql-cdc sim capture %s' first", s->path);
        goto fail;
    }
    if ((rc = write_idle(s, now, out)) < 0 || (rc = sim__commit(s)) < 0) goto fail;
    return 0;
fail:
    sim__rollback(s);
    return rc;
}

static int64_t exec_changes(mcdc_sim *s, const char *sql, const mcdc_lsn *wm, int64_t limit, int *rc)
{
    sqlite3_stmt *st;
    *rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (*rc != SQLITE_OK) {
        *rc = sim__sqlite_error(s, *rc, "cleaning up");
        return 0;
    }
    sim__bind_lsn(st, 1, wm);
    sqlite3_bind_int64(st, 2, limit);
    int r = sqlite3_step(st);
    sqlite3_finalize(st);
    *rc = r == SQLITE_DONE ? 0 : sim__sqlite_error(s, r, "cleaning up");
    return sqlite3_changes(s->db);
}

int mcdc_sim_cleanup(mcdc_sim *s, int64_t retention_us, int64_t at_us, int64_t threshold, int64_t max_batches,
                     mcdc_sim_cleanup_result *out)
{
    memset(out, 0, sizeof *out);
    if (retention_us < 0)
        return mcdc_error_set(MCDC_EINVAL, "retention must not be negative");
    if (threshold <= 0) threshold = 5000;
    int rc = sim__begin(s);
    if (rc < 0) return rc;
    int64_t now;
    sqlite3_stmt *st = NULL;
    mcdc_lsn wm = mcdc_lsn_zero();
    if ((rc = sim__advance_clock(s, at_us, &now)) < 0) goto fail;
    /* the low water mark: the last entry at or before max(tran_end_time) - retention, lowered to
     * the first entry with the same tran_end_time */
    rc = sqlite3_prepare_v2(s->db, "SELECT max(end_time) FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn <= ?", -1, &st, NULL);
    if (rc != SQLITE_OK) { rc = sim__sqlite_error(s, rc, "cleaning up"); goto fail; }
    sim__bind_lsn(st, 1, &s->st.processed);
    char cutoff[40] = "";
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        const char *maxt = (const char *)sqlite3_column_text(st, 0);
        int64_t ticks;
        bool has_off;
        int off, nf;
        if (sim_parse_dt(maxt, strlen(maxt), &ticks, &has_off, &off, &nf) == 0)
            sim_format_datetime(cutoff, sizeof cutoff, sim_round_datetime(ticks - retention_us * TICKS_PER_US));
    }
    sqlite3_finalize(st);
    st = NULL;
    if (cutoff[0]) {
        rc = sqlite3_prepare_v2(s->db, "SELECT min(lsn) FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn <= ?1 AND end_time ="
                                " (SELECT end_time FROM sim_tx WHERE kind IN (1, 2, 3) AND lsn <= ?1 AND end_time <= ?2"
                                " ORDER BY lsn DESC LIMIT 1)", -1, &st, NULL);
        if (rc != SQLITE_OK) { rc = sim__sqlite_error(s, rc, "cleaning up"); goto fail; }
        sim__bind_lsn(st, 1, &s->st.processed);
        sqlite3_bind_text(st, 2, cutoff, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
            sim__column_lsn(st, 0, &wm);
        sqlite3_finalize(st);
        st = NULL;
    }
    if (!mcdc_lsn_is_zero(&wm)) {
        rc = sqlite3_prepare_v2(s->db, "UPDATE sim_instances SET start_lsn = ?1 WHERE start_lsn < ?1", -1, &st, NULL);
        if (rc != SQLITE_OK) { rc = sim__sqlite_error(s, rc, "cleaning up"); goto fail; }
        sim__bind_lsn(st, 1, &wm);
        rc = sqlite3_step(st);
        sqlite3_finalize(st);
        st = NULL;
        if (rc != SQLITE_DONE) { rc = sim__sqlite_error(s, rc, "cleaning up"); goto fail; }
    }
    if ((rc = sim__commit(s)) < 0) goto fail;
    out->low_water = wm;
    if (mcdc_lsn_is_zero(&wm)) {
        out->done = true;
        return 0;
    }
    /* delete in batches, each its own transaction */
    int64_t batches = 0;
    for (int phase = 0; phase < 2; phase++) {
        for (int i = 0; phase == 1 || i < s->n_inst; i++) {
            char sql[256];
            if (phase == 0)
                snprintf(sql, sizeof sql, "DELETE FROM sim_ct_%lld WHERE rowid IN (SELECT rowid FROM sim_ct_%lld WHERE"
                         " \"__$start_lsn\" < ?1 ORDER BY rowid LIMIT ?2)", (long long)s->inst[i]->id,
                         (long long)s->inst[i]->id);
            else
                snprintf(sql, sizeof sql, "DELETE FROM sim_tx WHERE lsn IN (SELECT lsn FROM sim_tx WHERE lsn < ?1"
                         " ORDER BY lsn LIMIT ?2)");
            for (;;) {
                if (max_batches >= 0 && batches >= max_batches) return 0;
                if ((rc = sim__begin(s)) < 0) return rc;
                if (phase == 0 && i >= s->n_inst) { sim__rollback(s); break; }
                int64_t n = exec_changes(s, sql, &wm, threshold, &rc);
                if (rc < 0 || (rc = sim__commit(s)) < 0) {
                    sim__rollback(s);
                    return rc;
                }
                batches++;
                if (phase == 0) out->n_change_rows += n;
                else out->n_mapping_rows += n;
                if (n < threshold) break;
            }
            if (phase == 1) break;
        }
    }
    out->done = true;
    return 0;
fail:
    sqlite3_finalize(st);
    sim__rollback(s);
    return rc;
}
