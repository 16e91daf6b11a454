/* Unit tests for delta/configure.c and the commit option that guards a commit by one
 * configuration key: keys set and removed, other keys kept, nothing written when nothing
 * changes, and a guarded append or change refused with MCDC_ECONFLICT once the key moved. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    char *dir = testenv_tmpdir("configure");
    char *t = malloc(strlen(dir) + 8);
    sprintf(t, "%s/t", dir);
    free(dir);
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_delta_map conf = { NULL, 0 };
    mcdc_delta_map_set(&conf, "mcdc.kind", "bronze");
    mcdc_delta_map_set(&conf, "mcdc.owner", "a");
    int rc = mcdc_delta_create(t, s, NULL, 0, &conf, NULL);
    mcdc_delta_map_clear(&conf);
    mcdc_schema_free(s);
    *state = t;
    return rc;
}

static int teardown(void **state)
{
    char *t = *state;
    char *slash = strrchr(t, '/');
    *slash = '\0';
    testenv_rmrf(t);
    free(t);
    return 0;
}

static const char *conf_of(const char *t, const char *key, char *buf, size_t cap)
{
    mcdc_delta_snapshot *s = NULL;
    assert_int_equal(0, mcdc_delta_snapshot_open(&s, t, -1));
    const char *v = mcdc_delta_snapshot_config(s, key, NULL);
    if (v)
        snprintf(buf, cap, "%s", v);
    mcdc_delta_snapshot_free(s);
    return v ? buf : NULL;
}

static void test_delta_configure__sets_and_removes_keys_and_keeps_the_rest(void **state)
{
    const char *t = *state;
    mcdc_delta_map set = { NULL, 0 };
    mcdc_delta_map_set(&set, "mcdc.owner", "b");
    mcdc_delta_map_set(&set, "mcdc.kind", NULL); /* removed */
    mcdc_delta_map_set(&set, "mcdc.source_table", "dbo.t");
    mcdc_delta_commit_result r;
    assert_int_equal(0, mcdc_delta_set_config(t, &set, NULL, &r));
    assert_int_equal(1, r.version);
    char b[64];
    assert_string_equal("b", conf_of(t, "mcdc.owner", b, sizeof b));
    assert_string_equal("dbo.t", conf_of(t, "mcdc.source_table", b, sizeof b));
    assert_null(conf_of(t, "mcdc.kind", b, sizeof b));
    assert_string_equal("1", conf_of(t, "mcdc.schema_version", b, sizeof b));
    /* the same again changes nothing and writes nothing */
    assert_int_equal(0, mcdc_delta_set_config(t, &set, NULL, &r));
    int64_t v;
    assert_int_equal(0, mcdc_delta_latest_version(&v, t));
    assert_int_equal(1, v);
    mcdc_delta_map_clear(&set);
}

static void test_delta_configure__guard_refuses_once_the_key_moved(void **state)
{
    const char *t = *state;
    mcdc_delta_map set = { NULL, 0 };
    mcdc_delta_map_set(&set, "mcdc.owner", "b");
    mcdc_delta_commit_options o = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    o.expect_key = "mcdc.owner";
    o.expect_value = "x"; /* not what the table says */
    assert_int_equal(MCDC_ECONFLICT, mcdc_delta_set_config(t, &set, &o, NULL));
    assert_non_null(strstr(mcdc_error_last()->message, "has mcdc.owner = 'a', this commit needs 'x'"));
    o.expect_value = "a";
    assert_int_equal(0, mcdc_delta_set_config(t, &set, &o, NULL));
    /* an append guarded by the old owner now writes nothing */
    mcdc_delta_file f;
    memset(&f, 0, sizeof f);
    f.path = strdup("part-0.parquet");
    f.size = 1;
    f.modification_time = 1;
    f.data_change = true;
    f.base_row_id = f.default_row_commit_version = f.deletion_timestamp = -1;
    f.dv.offset = -1;
    mcdc_delta_commit_options ao = MCDC_DELTA_COMMIT_OPTIONS_INIT;
    ao.expect_key = "mcdc.owner";
    ao.expect_value = "a";
    assert_int_equal(MCDC_ECONFLICT, mcdc_delta_append(t, &f, 1, &ao, NULL));
    int64_t v;
    assert_int_equal(0, mcdc_delta_latest_version(&v, t));
    assert_int_equal(1, v);
    ao.expect_value = "b";
    assert_int_equal(0, mcdc_delta_append(t, &f, 1, &ao, NULL));
    /* expect_value NULL: only while the key is absent */
    ao.expect_key = "mcdc.absent";
    ao.expect_value = NULL;
    assert_int_equal(0, mcdc_delta_append(t, &f, 1, &ao, NULL));
    ao.expect_key = "mcdc.owner";
    assert_int_equal(MCDC_ECONFLICT, mcdc_delta_append(t, &f, 1, &ao, NULL));
    mcdc_delta_file_clear(&f);
    mcdc_delta_map_clear(&set);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_delta_configure__sets_and_removes_keys_and_keeps_the_rest),
        T(test_delta_configure__guard_refuses_once_the_key_moved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
