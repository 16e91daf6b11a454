/* Unit tests for delta/datafile.c, the one writer of a data file and its add action: a
 * datafile freed before finish leaves no file; a finished one is named at the table root
 * and carries its stats, partition values, tags and modification time; whole_strings keeps
 * a long string's min and max whole where the default cuts the min and drops the max;
 * the codec names the file's extension. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

#define LONG_NAME "a-table-name-longer-than-thirty-two-characters"

static int setup(void **state)
{
    *state = testenv_tmpdir("datafile");
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

/* Entries of @p dir other than . and .. (hidden temporary files included). */
static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static mcdc_schema *schema2(void)
{
    mcdc_schema *s = mcdc_schema_new();
    assert_int_equal(0, mcdc_schema_add(s, "name", MCDC_TYPE_STRING, 0, 0, true));
    assert_int_equal(0, mcdc_schema_add(s, "n", MCDC_TYPE_LONG, 0, 0, true));
    return s;
}

static void row2(mcdc_value *v, const char *name, int64_t n)
{
    memset(v, 0, 2 * sizeof *v);
    v[0].v.s.ptr = name;
    v[0].v.s.len = strlen(name);
    v[1].v.i = n;
}

/* Write one row with @p o and finish; the add action in @p out. */
static void write_one(const char *dir, const mcdc_delta_datafile_options *o, mcdc_delta_file *out)
{
    mcdc_schema *s = schema2();
    mcdc_delta_datafile *f = NULL;
    assert_int_equal(0, mcdc_delta_datafile_open(&f, dir, s, o));
    mcdc_value v[2];
    row2(v, LONG_NAME, 42);
    assert_int_equal(0, mcdc_delta_datafile_write(f, v));
    assert_int_equal(1, mcdc_delta_datafile_rows(f));
    assert_int_equal(0, mcdc_delta_datafile_finish(f, out));
    mcdc_delta_datafile_free(f);
    mcdc_schema_free(s);
}

static void test_freed_before_finish_leaves_no_file(void **state)
{
    const char *dir = *state;
    mcdc_schema *s = schema2();
    mcdc_delta_datafile *f = NULL;
    assert_int_equal(0, mcdc_delta_datafile_open(&f, dir, s, NULL));
    mcdc_value v[2];
    for (int i = 0; i < 1000; i++) {
        row2(v, "x", i);
        assert_int_equal(0, mcdc_delta_datafile_write(f, v));
    }
    mcdc_delta_datafile_free(f);
    assert_int_equal(0, dir_entries(dir));
    mcdc_schema_free(s);
}

static void test_finished_file_and_add_action(void **state)
{
    const char *dir = *state;
    mcdc_delta_datafile_options o = MCDC_DELTA_DATAFILE_OPTIONS_INIT;
    o.modification_time = 1234567;
    mcdc_schema *s = schema2();
    mcdc_delta_datafile *f = NULL;
    assert_int_equal(0, mcdc_delta_datafile_open(&f, dir, s, &o));
    mcdc_value v[2];
    row2(v, "b", 1);
    assert_int_equal(0, mcdc_delta_datafile_write(f, v));
    row2(v, "a", 2);
    assert_int_equal(0, mcdc_delta_datafile_write(f, v));
    assert_int_equal(0, mcdc_delta_datafile_set_partition(f, "p", "x"));
    assert_int_equal(0, mcdc_delta_datafile_set_partition(f, "q", NULL));
    assert_int_equal(0, mcdc_delta_datafile_set_tag(f, "t", "v"));
    mcdc_delta_file add;
    assert_int_equal(0, mcdc_delta_datafile_finish(f, &add));
    mcdc_delta_datafile_free(f); /* after finish: the file stays */
    mcdc_schema_free(s);

    assert_int_equal(1, dir_entries(dir));
    assert_int_equal(0, strncmp(add.path, "part-00000-", 11));
    assert_non_null(strstr(add.path, "-c000.snappy.parquet"));
    assert_null(strchr(add.path, '/'));
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, add.path);
    struct stat st;
    assert_int_equal(0, stat(p, &st));
    assert_int_equal(st.st_size, add.size);
    assert_int_equal(1234567, add.modification_time);
    assert_true(add.data_change);
    assert_string_equal("{\"numRecords\":2,\"minValues\":{\"name\":\"a\",\"n\":1},"
                        "\"maxValues\":{\"name\":\"b\",\"n\":2},"
                        "\"nullCount\":{\"name\":0,\"n\":0}}", add.stats);
    assert_int_equal(2, add.partition_values.n);
    assert_string_equal("p", add.partition_values.kv[0].key);
    assert_string_equal("x", add.partition_values.kv[0].value);
    assert_null(add.partition_values.kv[1].value);
    assert_int_equal(1, add.tags.n);
    assert_string_equal("v", add.tags.kv[0].value);

    /* a commit lost: the finished file is removed by name */
    mcdc_delta_datafile_remove(dir, add.path);
    assert_int_equal(0, dir_entries(dir));
    mcdc_delta_file_clear(&add);
}

static void test_whole_strings(void **state)
{
    const char *dir = *state;
    mcdc_delta_file cut, whole;
    write_one(dir, NULL, &cut);
    /* default: a 32-code-point min prefix, no max for the long string */
    assert_non_null(strstr(cut.stats, "\"minValues\":{\"name\":\"a-table-name-longer-than-thirty-\","));
    assert_non_null(strstr(cut.stats, "\"maxValues\":{\"n\":42}"));

    mcdc_delta_datafile_options o = MCDC_DELTA_DATAFILE_OPTIONS_INIT;
    o.whole_strings = true;
    write_one(dir, &o, &whole);
    assert_non_null(strstr(whole.stats, "\"minValues\":{\"name\":\"" LONG_NAME "\","));
    assert_non_null(strstr(whole.stats, "\"maxValues\":{\"name\":\"" LONG_NAME "\",\"n\":42}"));
    assert_string_not_equal(cut.path, whole.path); /* unique names */
    mcdc_delta_file_clear(&cut);
    mcdc_delta_file_clear(&whole);
}

static void test_codec_names_extension_and_make_dirs(void **state)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/not/yet", (const char *)*state);
    mcdc_delta_datafile_options o = MCDC_DELTA_DATAFILE_OPTIONS_INIT;
    o.parquet.codec = MCDC_PARQUET_ZSTD;
    o.make_dirs = true;
    mcdc_delta_file add;
    write_one(dir, &o, &add);
    assert_non_null(strstr(add.path, "-c000.zstd.parquet"));
    assert_int_equal(1, dir_entries(dir));
    mcdc_delta_file_clear(&add);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_freed_before_finish_leaves_no_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finished_file_and_add_action, setup, teardown),
        cmocka_unit_test_setup_teardown(test_whole_strings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_codec_names_extension_and_make_dirs, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
