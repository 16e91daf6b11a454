/* Unit tests for finalize/control_file.c: a control row's one-row data file keeps
 * table_name whole in its stats (min = max, however long) and in its "mcdc.control_row"
 * tag, stats timestamps in milliseconds while the tag keeps microseconds, the given
 * modification time, and the file at the returned absolute path. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/finalize.h"
#include "finalize/control_file.h"

#define KEY "bronze.a_table_whose_name_is_longer_than_thirty_two_characters"

static void test_row_file_keeps_table_name_whole(void **state)
{
    (void)state;
    char dir[] = "/tmp/mcdc-fin-ctlfile-XXXXXX";
    assert_non_null(mkdtemp(dir));
    mcdc_control_row r = { .table_name = KEY, .has_updated_at = true,
                           .updated_at_us = INT64_C(1790000000123456),
                           .has_snapshot_wave = true, .snapshot_wave = 3 };
    mcdc_delta_file add;
    char abs[4096];
    assert_int_equal(0, mcdc_control__write_row_file(&add, abs, sizeof abs, dir, &r, 777));
    struct stat st;
    assert_int_equal(0, stat(abs, &st));
    assert_int_equal(st.st_size, add.size);
    assert_int_equal(777, add.modification_time);
    assert_non_null(strstr(add.stats, "\"numRecords\":1,"));
    assert_non_null(strstr(add.stats, "\"minValues\":{\"table_name\":\"" KEY "\","));
    assert_non_null(strstr(add.stats, "\"maxValues\":{\"table_name\":\"" KEY "\","));
    /* milliseconds in stats */
    assert_non_null(strstr(add.stats, "\"updated_at\":\"2026-09-21T14:13:20.123\""));
    assert_null(strstr(add.stats, "123456"));
    assert_non_null(strstr(add.stats, "\"snapshot_wave\":3"));
    assert_int_equal(1, add.tags.n);
    assert_string_equal(MCDC_CONTROL_ROW_TAG, add.tags.kv[0].key);
    assert_non_null(strstr(add.tags.kv[0].value, "\"table_name\":\"" KEY "\""));
    assert_non_null(strstr(add.tags.kv[0].value, "123456")); /* microseconds in the tag */
    mcdc_delta_file_clear(&add);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(0, system(cmd));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_file_keeps_table_name_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
