/* Unit tests for delta/vacuum.c: what is deleted and what is kept (live files, recent
 * tombstones, recent unreferenced files, names starting with '_' or '.'), and the refusal
 * of short retentions without force. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <utime.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "unit/delta/testenv.h"

static int setup(void **state)
{
    *state = testenv_tmpdir("vacuum");
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

/* a file aged @p days days */
static void put_aged(const char *t, const char *rel, int days)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", t, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    mkdir(p, 0777);
    *slash = '/';
    testenv_write(p, "data");
    struct utimbuf u;
    u.actime = u.modtime = time(NULL) - (time_t)days * 86400;
    utime(p, &u);
}

static bool exists(const char *t, const char *rel)
{
    char p[1024];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", t, rel);
    return stat(p, &st) == 0;
}

static void test_delta_vacuum__deletes_only_unreferenced_old_files(void **state)
{
    const char *t = *state;
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    assert_int_equal(0, mcdc_delta_create(t, s, NULL, 0, NULL, NULL));
    mcdc_schema_free(s);
    /* live.parquet is committed; old-removed was removed 10 days ago, recent-removed now */
    char log[1024];
    snprintf(log, sizeof log, "%s/_delta_log/00000000000000000001.json", t);
    long long now = (long long)time(NULL) * 1000;
    char body[2048];
    snprintf(body, sizeof body,
             "{\"add\":{\"path\":\"live.parquet\",\"partitionValues\":{},\"size\":4,\"modificationTime\":1,\"dataChange\":true}}\n"
             "{\"add\":{\"path\":\"p%%3D1/live2.parquet\",\"partitionValues\":{},\"size\":4,\"modificationTime\":1,\"dataChange\":true}}\n"
             "{\"remove\":{\"path\":\"old-removed.parquet\",\"deletionTimestamp\":%lld,\"dataChange\":true}}\n"
             "{\"remove\":{\"path\":\"recent-removed.parquet\",\"deletionTimestamp\":%lld,\"dataChange\":true}}\n",
             now - 10LL * 86400000, now - 3600000);
    testenv_write(log, body);
    put_aged(t, "live.parquet", 30);
    put_aged(t, "p=1/live2.parquet", 30);
    put_aged(t, "old-removed.parquet", 30);
    put_aged(t, "recent-removed.parquet", 30);
    put_aged(t, "orphan-old.parquet", 9);
    put_aged(t, "p=2/orphan-old.parquet", 9);
    put_aged(t, "orphan-new.parquet", 0); /* a writer may be about to commit it */
    put_aged(t, "_change_data/x.parquet", 30);
    put_aged(t, ".hidden.parquet", 30);

    mcdc_delta_vacuum_result r;
    assert_int_equal(MCDC_EINVAL, mcdc_delta_vacuum(t, 3600 * INT64_C(1000000), false, false, &r));
    assert_non_null(strstr(mcdc_error_last()->hint, "--force"));
    assert_int_equal(0, mcdc_delta_vacuum(t, -1, false, true, &r)); /* dry run */
    assert_int_equal(3, r.n_deleted);
    assert_true(exists(t, "old-removed.parquet"));
    assert_int_equal(0, mcdc_delta_vacuum(t, -1, false, false, &r));
    assert_int_equal(3, r.n_deleted);
    assert_int_equal(12, r.bytes_deleted);
    assert_true(exists(t, "live.parquet"));
    assert_true(exists(t, "p=1/live2.parquet"));
    assert_false(exists(t, "old-removed.parquet"));
    assert_true(exists(t, "recent-removed.parquet"));
    assert_false(exists(t, "orphan-old.parquet"));
    assert_false(exists(t, "p=2/orphan-old.parquet"));
    assert_true(exists(t, "orphan-new.parquet"));
    assert_true(exists(t, "_change_data/x.parquet"));
    assert_true(exists(t, ".hidden.parquet"));
    assert_true(exists(t, "_delta_log/00000000000000000000.json"));
    /* a forced short retention still spares live files and brand-new ones */
    assert_int_equal(0, mcdc_delta_vacuum(t, 0, true, false, &r));
    assert_true(exists(t, "live.parquet"));
    assert_false(exists(t, "recent-removed.parquet"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_delta_vacuum__deletes_only_unreferenced_old_files,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
