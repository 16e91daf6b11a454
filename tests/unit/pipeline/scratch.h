/*
 * tests/unit/pipeline/scratch.h: what the stream's and the run's unit tests against the
 * simulator share (test-only; each test file includes it once): a scratch directory
 * `root` with the paths db, ck, bronze and facts under it, made by scratch_setup and
 * removed by scratch_teardown; at() for timestamps; and the five-transaction history of
 * stream_sim.c and stream_trips.c.
 */
#ifndef MCDC_TESTS_PIPELINE_SCRATCH_H
#define MCDC_TESTS_PIPELINE_SCRATCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mcdc/sim.h"
#include "mcdc/time.h"

static char root[256], db[300], ck[300], bronze[300], facts[300];

/* A new scratch directory /tmp/mcdc-TAG-XXXXXX and the paths under it; 0 or -1. */
static inline int scratch_setup(const char *tag)
{
    snprintf(root, sizeof root, "/tmp/mcdc-%s-XXXXXX", tag);
    if (!mkdtemp(root))
        return -1;
    snprintf(db, sizeof db, "%s/db.sqlite", root);
    snprintf(ck, sizeof ck, "%s/ck", root);
    snprintf(bronze, sizeof bronze, "%s/bronze", root);
    snprintf(facts, sizeof facts, "%s/facts", root);
    return 0;
}

static inline int scratch_teardown(void **state)
{
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static inline int64_t at(const char *s)
{
    int64_t us = 0;
    mcdc_time_parse(&us, s);
    return us;
}

/* Five transactions of ten inserts into dbo.t (four on day 1, one on day 3), everything
 * captured. */
static inline void five_transactions(void)
{
    mcdc_sim *sim = NULL;
    assert_int_equal(0, mcdc_sim_open(&sim, db, true, NULL));
    assert_int_equal(0, mcdc_sim_create_table(sim, "dbo.t", "id INT NOT NULL, name NVARCHAR(20) NULL",
                                              "id", NULL, at("2026-10-01T00:00:00")));
    mcdc_sim_capture_result cr;
    mcdc_sim_exec_result er;
    assert_int_equal(0, mcdc_sim_capture(sim, at("2026-10-01T00:00:01"), NULL, &cr));
    char sql[4096];
    for (int t = 0; t < 5; t++) {
        size_t n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO dbo.t (id, name) VALUES ");
        for (int i = 0; i < 10; i++)
            n += (size_t)snprintf(sql + n, sizeof sql - n, "%s(%d, 'n%d')", i ? ", " : "",
                                  t * 10 + i, i);
        char when[32];
        snprintf(when, sizeof when, "2026-10-0%dT10:00:0%d", t < 4 ? 1 : 3, t);
        assert_int_equal(0, mcdc_sim_exec(sim, sql, MCDC_SIM_NOW, at(when), &er));
    }
    assert_int_equal(0, mcdc_sim_capture(sim, at("2026-10-03T10:00:10"), NULL, &cr));
    mcdc_sim_close(sim);
}

#endif
