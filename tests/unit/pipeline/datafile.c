/* Unit tests for pipeline/datafile.c, bronze's and facts' data file options: row groups of
 * 16 MiB at most (ADR 0053), so the writer thread writes a large batch's file while it is
 * read and the commit after the read writes only the last row group; the rows read back
 * the same, in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/parquet.h"
#include "pipeline/datafile.h"

#define N_ROWS   24000
#define TEXT_LEN 1024 /* 24 MiB of text that snappy cannot shrink */

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void fill(char *buf, int row)
{
    uint64_t x = 0x9E3779B97F4A7C15ull ^ (uint64_t)(row + 1);
    for (int k = 0; k < TEXT_LEN; k++)
        buf[k] = (char)('!' + next(&x) % 90);
}

static void large_files_have_row_groups_of_16_mib(void **state)
{
    (void)state;
    char dir[] = "/tmp/mcdc-datafile-XXXXXX";
    assert_non_null(mkdtemp(dir));
    mcdc_schema *s = mcdc_schema_new();
    assert_int_equal(mcdc_schema_add(s, "k", MCDC_TYPE_LONG, 0, 0, false), 0);
    assert_int_equal(mcdc_schema_add(s, "t", MCDC_TYPE_STRING, 0, 0, true), 0);
    mcdc_datafile *df = NULL;
    assert_int_equal(mcdc_datafile__open(&df, dir, s), 0);
    char buf[TEXT_LEN];
    for (int i = 0; i < N_ROWS; i++) {
        fill(buf, i);
        mcdc_value row[2] = { { .v.i = i }, { .v.s = { buf, TEXT_LEN } } };
        assert_int_equal(mcdc_datafile__add(df, row), 0);
    }
    mcdc_delta_file add = { 0 };
    assert_int_equal(mcdc_datafile__finish(df, &add), 0);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, add.path);
    mcdc_parquet_reader *r = NULL;
    assert_int_equal(mcdc_parquet_reader_open(&r, path, NULL), 0);
    assert_int_equal(mcdc_parquet_reader_num_rows(r), N_ROWS);
    /* 24 MiB of values: two row groups, not one of up to 128 MiB */
    assert_int_equal(mcdc_parquet_reader_num_row_groups(r), 2);
    const mcdc_value *row;
    for (int i = 0; i < N_ROWS; i++) {
        assert_int_equal(mcdc_parquet_reader_next(r, &row), 1);
        fill(buf, i);
        if (row[0].v.i != i || row[1].v.s.len != TEXT_LEN || memcmp(row[1].v.s.ptr, buf, TEXT_LEN) != 0)
            fail_msg("row %d differs", i);
    }
    assert_int_equal(mcdc_parquet_reader_next(r, &row), 0);
    mcdc_parquet_reader_free(r);
    mcdc_delta_file_clear(&add);
    mcdc_schema_free(s);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(large_files_have_row_groups_of_16_mib),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
