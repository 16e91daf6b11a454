/*
 * tests/unit/reconcile/plant.h: plant a defect in a Delta table for the reconcile tests
 * (test-only; each test file includes it once): plant_drop_row rewrites the data file
 * holding the first row whose integer column equals a value, without that row, in one
 * commit (a remove and the new file's add), as a writer that lost a row would.
 */
#ifndef MCDC_TESTS_RECONCILE_PLANT_H
#define MCDC_TESTS_RECONCILE_PLANT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "mcdc/delta.h"
#include "mcdc/parquet.h"

typedef struct plant_state {
    mcdc_delta_file *old, *files;
    size_t           n_files;
} plant_state;

static inline int plant_rewrite(const mcdc_delta_snapshot *snap, mcdc_delta_action **out, size_t *n,
                                void *payload)
{
    plant_state *p = payload;
    (void)snap;
    *out = calloc(p->n_files + 1, sizeof **out);
    *n = 0;
    mcdc_delta_remove_of(&(*out)[(*n)++], p->old, 1);
    for (size_t i = 0; i < p->n_files; i++) {
        (*out)[*n].kind = MCDC_DELTA_ACTION_ADD;
        assert_int_equal(0, mcdc_delta_file_copy(&(*out)[*n].u.file, &p->files[i]));
        (*n)++;
    }
    return 0;
}

/* Drop the first row of table @p table whose column @p column holds @p value. */
static inline void plant_drop_row(const char *table, const char *column, int64_t value)
{
    mcdc_delta_snapshot *snap = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, table, -1));
    bool done = false;
    for (size_t fi = 0; fi < snap->n_files && !done; fi++) {
        char *path = mcdc_delta_file_abspath(snap, snap->files[fi].path);
        mcdc_parquet_reader *rd = NULL;
        assert_int_equal(0, mcdc_parquet_reader_open(&rd, path, NULL));
        free(path);
        int cc = mcdc_schema_find(mcdc_parquet_reader_schema(rd), column);
        assert_true(cc >= 0);
        mcdc_delta_writer *w = NULL;
        mcdc_delta_writer_options wo = MCDC_DELTA_WRITER_OPTIONS_INIT;
        assert_int_equal(0, mcdc_delta_writer_open(&w, snap, &wo));
        const mcdc_value *row;
        bool hit = false;
        int rc;
        while ((rc = mcdc_parquet_reader_next(rd, &row)) == 1) {
            if (!hit && !row[cc].is_null && row[cc].v.i == value) {
                hit = true;
                continue;
            }
            assert_int_equal(0, mcdc_delta_writer_write(w, row));
        }
        assert_int_equal(0, rc);
        mcdc_parquet_reader_free(rd);
        if (hit) {
            plant_state p = { &snap->files[fi], NULL, 0 };
            assert_int_equal(0, mcdc_delta_writer_finish(w, &p.files, &p.n_files));
            mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
            o.operation = "WRITE";
            assert_int_equal(0, mcdc_delta_commit(table, plant_rewrite, &p, &o, NULL));
            mcdc_delta_files_free(p.files, p.n_files);
            done = true;
        }
        mcdc_delta_writer_free(w);
    }
    mcdc_delta_snapshot_free(snap);
    assert_true(done);
}

#endif
