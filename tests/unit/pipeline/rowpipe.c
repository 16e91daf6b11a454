/* Unit tests for pipeline/rowpipe.c: a pipe holds the cells of the chunks its reader has
 * filled only, so a batch of a few rows does not fault in the whole ring (many small
 * batches in one `run` process each paid for four full chunks); and every row reaches the
 * data file as it was added, in order, through rows filled in place whose strings the
 * caller reuses at once, values longer than a block of the chunk's bytes, empty strings and
 * NULLs, over more rows than the ring holds; and a batch that fits in one chunk starts no
 * writer thread. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "mcdc/error.h"
#include "mcdc/parquet.h"
#include "mcdc/value.h"
#include "pipeline/datafile.h"
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

#define N_ROWS 20000 /* more than the ring's 4 x 4096 */

/* Row i's string: empty every 7th, NULL every 11th, past a 256 KiB block every 5000th. */
static size_t text_of(int i, char *buf, bool *null)
{
    *null = i % 11 == 3;
    size_t n = i % 5000 == 17 ? (size_t)300000 + (size_t)i : i % 7 == 0 ? 0 : (size_t)(i * 31 % 97);
    for (size_t k = 0; k < n; k++)
        buf[k] = (char)('a' + (i + (int)k) % 26);
    return n;
}

/* The process's thread count, from /proc/self/status. */
static int threads(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

/* Pipe @p n_rows rows into a data file and read them back in order; *started: whether a
 * writer thread ran while the rows were added (the thread count rose). */
static void pipe_rows(int n_rows, bool *started)
{
    char dir[] = "/tmp/mcdc-rowpipe-XXXXXX";
    assert_non_null(mkdtemp(dir));
    mcdc_schema *s = mcdc_schema_new();
    assert_int_equal(mcdc_schema_add(s, "k", MCDC_TYPE_LONG, 0, 0, false), 0);
    assert_int_equal(mcdc_schema_add(s, "s", MCDC_TYPE_STRING, 0, 0, true), 0);
    assert_int_equal(mcdc_schema_add(s, "b", MCDC_TYPE_BINARY, 0, 0, true), 0);
    mcdc_datafile *df = NULL;
    assert_int_equal(mcdc_datafile__open(&df, dir, s), 0);
    mcdc_rowpipe *p = NULL;
    int t0 = threads();
    *started = false;
    assert_int_equal(mcdc_rowpipe__start(&p, df, s), 0);
    char *buf = malloc(400000);
    assert_non_null(buf);
    for (int i = 0; i < n_rows; i++) {
        bool null;
        size_t n = text_of(i, buf, &null);
        mcdc_value in[3] = { { .v.i = i }, { .is_null = null, .v.s = { buf, n } }, { .v.s = { buf, n < 5 ? n : 5 } } };
        if (i % 2) { /* filled in place */
            mcdc_value *row = mcdc_rowpipe__row(p);
            assert_non_null(row);
            memcpy(row, in, sizeof in);
            assert_int_equal(mcdc_rowpipe__push(p), 0);
        } else {
            assert_int_equal(mcdc_rowpipe__add(p, in), 0);
        }
        memset(buf, '#', n); /* the pipe copied it */
        if (threads() > t0)
            *started = true;
    }
    assert_int_equal(mcdc_rowpipe__finish(p), 0);
    mcdc_delta_file add = { 0 };
    assert_int_equal(mcdc_datafile__finish(df, &add), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, add.path);
    mcdc_parquet_reader *r = NULL;
    assert_int_equal(mcdc_parquet_reader_open(&r, path, NULL), 0);
    assert_int_equal(mcdc_parquet_reader_num_rows(r), n_rows);
    const mcdc_value *row;
    for (int i = 0; i < n_rows; i++) {
        assert_int_equal(mcdc_parquet_reader_next(r, &row), 1);
        bool null;
        size_t n = text_of(i, buf, &null);
        if (row[0].v.i != i) fail_msg("row %d has key %lld", i, (long long)row[0].v.i);
        assert_int_equal(row[1].is_null, null);
        if (!null && (row[1].v.s.len != n || memcmp(row[1].v.s.ptr, buf, n) != 0))
            fail_msg("row %d: string of %zu bytes differs (%zu read)", i, n, row[1].v.s.len);
        size_t nb = n < 5 ? n : 5;
        if (row[2].is_null || row[2].v.s.len != nb || memcmp(row[2].v.s.ptr, buf, nb) != 0)
            fail_msg("row %d: binary differs", i);
    }
    assert_int_equal(mcdc_parquet_reader_next(r, &row), 0);
    mcdc_parquet_reader_free(r);
    mcdc_delta_file_clear(&add);
    free(buf);
    mcdc_schema_free(s);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void rows_reach_the_file_in_order(void **state)
{
    (void)state;
    bool started;
    pipe_rows(N_ROWS, &started);
    assert_true(started); /* more rows than a chunk: the writer thread ran */
}

/* A batch that fits in one chunk is written by the caller at the finish: no thread to
 * start and join (a chunk goes to the writer only when full, so none could overlap). */
static void a_small_batch_starts_no_thread(void **state)
{
    (void)state;
    bool started;
    pipe_rows(CHUNK_ROWS - 1, &started);
    assert_false(started);
    pipe_rows(CHUNK_ROWS + 1, &started);
    assert_true(started);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(few_rows_hold_one_chunk),
        cmocka_unit_test(rows_reach_the_file_in_order),
        cmocka_unit_test(a_small_batch_starts_no_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
