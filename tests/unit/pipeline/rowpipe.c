/* Unit tests for pipeline/rowpipe.c: a pipe holds the cells of the chunks its reader has
 * filled only, so a batch of a few rows does not fault in the whole ring (many small
 * batches in one `run` process each paid for four full chunks). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "mcdc/error.h"
#include "mcdc/value.h"
#include "pipeline/rowpipe.h"

#define N_COLS     17
#define CHUNK_ROWS 4096 /* ROWPIPE_ROWS */

static size_t allocated(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static void few_rows_hold_one_chunk(void **state)
{
    (void)state;
    mcdc_schema *s = mcdc_schema_new();
    assert_non_null(s);
    for (int i = 0; i < N_COLS; i++) {
        char name[16];
        snprintf(name, sizeof name, "c%d", i);
        assert_int_equal(mcdc_schema_add(s, name, MCDC_TYPE_LONG, 0, 0, true), 0);
    }
    mcdc_value row[N_COLS];
    for (int i = 0; i < N_COLS; i++)
        row[i] = (mcdc_value){ .is_null = false, .v.i = i };
    size_t before = allocated();
    mcdc_rowpipe *p = NULL;
    /* no row is handed over, so the writer never touches its (absent) data file */
    assert_int_equal(mcdc_rowpipe__start(&p, NULL, s), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(mcdc_rowpipe__add(p, row), 0);
    size_t used = allocated() - before;
    size_t chunk = (size_t)CHUNK_ROWS * N_COLS * sizeof(mcdc_value);
    if (allocated() == 0 && before == 0) {
        mcdc_rowpipe__abort(p);
        mcdc_schema_free(s);
        skip(); /* an allocator that does not report (sanitizers) */
    }
    /* the ring is 4 chunks; 3 rows need the cells of one */
    assert_true(used < 2 * chunk);
    assert_true(used >= chunk / 2);
    mcdc_rowpipe__abort(p);
    mcdc_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(few_rows_hold_one_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
