/*
 * source/sim/heartbeat.c: the optional heartbeat of sql/heartbeat.sql, on the simulator:
 * a one-row table dbo.cdc_heartbeat(id tinyint PK, beat_at datetime2(3)) with CDC enabled
 * (capture instance dbo_cdc_heartbeat), and beats that update it, each followed by a
 * capture scan as the capture job would run, so max_lsn moves with every beat on a
 * database that is otherwise quiet.
 *
 * Guarantees: setting up is idempotent (a table, instance or row already there is kept);
 * a beat is one captured commit (2 change rows: update before and after); with realtime,
 * a beat commits when the host clock reaches its time. Nothing here reads change rows.
 * Design: reference anchor-features §1 (heartbeat row), docs/guides/finalization.md.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mcdc/time.h"
#include "source/sim/sim_int.h"

#define HB_SCHEMA "dbo"
#define HB_NAME "cdc_heartbeat"
#define HB_CI "dbo_cdc_heartbeat"

static int beat_sql(char *out, size_t cap, const char *verb, int64_t at_us)
{
    char t[MCDC_TIME_STRLEN];
    mcdc_time_format(t, at_us, 3, false); /* SYSUTCDATETIME(): UTC, no zone */
    if (strcmp(verb, "insert") == 0)
        return snprintf(out, cap, "INSERT INTO dbo.cdc_heartbeat (id, beat_at) VALUES (1, '%s')", t);
    return snprintf(out, cap, "UPDATE dbo.cdc_heartbeat SET beat_at = '%s' WHERE id = 1", t);
}

int sim__heartbeat_beat_in_tx(mcdc_sim *s, int64_t at_us, mcdc_sim_exec_result *out)
{
    char sql[160];
    beat_sql(sql, sizeof sql, "update", at_us);
    int rc = sim__exec_in_tx(s, sql, MCDC_SIM_NOW, at_us, out);
    if (rc == 0 && out->n_rows == 0) { /* the row was deleted: the script's INSERT again */
        beat_sql(sql, sizeof sql, "insert", at_us);
        rc = sim__exec_in_tx(s, sql, MCDC_SIM_NOW, at_us, out);
    }
    return rc;
}

int mcdc_sim_heartbeat_setup(mcdc_sim *s, int64_t at_us, bool *created)
{
    bool made = false;
    if (created) *created = false;
    int rc = sim__begin(s);
    if (rc < 0) return rc;
    sim_table *tb = sim__find_table(s, HB_SCHEMA, HB_NAME);
    bool has_table = tb != NULL, has_ci = false;
    for (int i = 0; tb && i < tb->n_inst; i++) has_ci |= strcmp(tb->inst[i]->name, HB_CI) == 0;
    sim__rollback(s); /* only looked */
    if (!has_table) {
        rc = mcdc_sim_create_table(s, "dbo.cdc_heartbeat", "id TINYINT NOT NULL, beat_at DATETIME2(3) NOT NULL",
                                   "id", HB_CI, at_us);
        if (rc < 0) return rc;
        made = true;
    } else if (!has_ci) {
        if ((rc = mcdc_sim_enable(s, "dbo.cdc_heartbeat", HB_CI, at_us)) < 0) return rc;
        made = true;
    }
    if (made) { /* the one row */
        mcdc_sim_exec_result r;
        if ((rc = sim__begin(s)) < 0) return rc;
        int64_t now;
        if ((rc = sim__advance_clock(s, at_us, &now)) < 0 || (rc = sim__heartbeat_beat_in_tx(s, now, &r)) < 0) {
            sim__rollback(s);
            return rc;
        }
        if ((rc = sim__commit(s)) < 0) return rc;
    }
    if (created) *created = made;
    return 0;
}

static void sleep_until(int64_t host_us)
{
    int64_t d = host_us - mcdc_time_now_us();
    if (d <= 0) return;
    struct timespec ts = {(time_t)(d / 1000000), (long)(d % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

int mcdc_sim_heartbeat(mcdc_sim *s, const mcdc_sim_heartbeat_options *o, mcdc_sim_heartbeat_result *out)
{
    memset(out, 0, sizeof *out);
    if (o->every_us <= 0) return mcdc_error_set(MCDC_EINVAL, "heartbeat: --every must be above zero");
    if (o->beats < 1) return mcdc_error_set(MCDC_EINVAL, "heartbeat: --beats must be at least 1");
    int64_t start = o->start_us;
    if (start == MCDC_SIM_NOW) start = o->realtime ? mcdc_time_now_us() : s->st.clock_us + o->every_us;
    int rc = mcdc_sim_heartbeat_setup(s, o->realtime ? MCDC_SIM_NOW : start, &out->created);
    if (rc < 0) return rc;
    mcdc_sim_capture_options copts = {500, 10, 5 * 60 * INT64_C(1000000)};
    for (int64_t i = 0; i < o->beats; i++) {
        int64_t t = start + i * o->every_us;
        if (o->realtime) sleep_until(t);
        if ((rc = sim__begin(s)) < 0) return rc;
        int64_t now;
        mcdc_sim_exec_result r;
        mcdc_sim_capture_result cr;
        if ((rc = sim__advance_clock(s, o->realtime && t < s->st.clock_us ? s->st.clock_us : t, &now)) < 0 ||
            /* a heartbeat set up by this call has its first beat in the row's INSERT */
            (!(i == 0 && out->created) && (rc = sim__heartbeat_beat_in_tx(s, now, &r)) < 0) ||
            (rc = sim__capture_in_tx(s, now, &copts, &cr)) < 0 ||
            (rc = sim__max_lsn(s, &out->max_lsn, NULL)) < 0) {
            sim__rollback(s);
            return rc;
        }
        if ((rc = sim__commit(s)) < 0) return rc;
        if (out->n_beats++ == 0) out->first_us = now;
        out->last_us = now;
    }
    return 0;
}
