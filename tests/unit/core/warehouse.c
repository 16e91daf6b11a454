/* Unit tests for core/warehouse.c: dotted names to warehouse paths, paths as given, and
 * refusal of names that would leave the warehouse. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/warehouse.h"

static void ok(const char *wh, const char *name, const char *want)
{
    char out[MCDC_PATH_MAX];
    int rc = mcdc_warehouse_resolve(out, wh, name);
    if (rc != 0)
        fail_msg("resolve(%s, %s): %s", wh, name, mcdc_error_last()->message);
    assert_string_equal(want, out);
}

static void refused(const char *name, const char *why)
{
    char out[MCDC_PATH_MAX];
    if (mcdc_warehouse_resolve(out, "/lake", name) != MCDC_EINVAL)
        fail_msg("'%s' was accepted as %s", name, out);
    assert_string_equal("", out);
    assert_non_null(strstr(mcdc_error_last()->message, why));
    assert_non_null(strstr(mcdc_error_last()->hint, "schema.table"));
}

static void test_core_warehouse__dotted_names_live_in_the_warehouse(void **state)
{
    (void)state;
    ok("/lake", "bronze.orders", "/lake/bronze/orders");
    ok("/lake/", "ops.ingestion_facts", "/lake/ops/ingestion_facts");
    ok("./lake", "bronze.dbo.orders", "./lake/bronze/dbo/orders");
    ok("lake", "orders", "lake/orders");
    ok("/", "a.b", "/a/b");
    ok("/lake", "sch ema.tåble", "/lake/sch ema/tåble");
    assert_false(mcdc_warehouse_is_path("bronze.orders"));
}

static void test_core_warehouse__paths_are_used_as_given(void **state)
{
    (void)state;
    ok("/lake", "/data/other/orders", "/data/other/orders");
    ok("/lake", "./rel/t/", "./rel/t");
    ok("/lake", "../sibling/t", "../sibling/t");
    ok("/lake", "/", "/");
    assert_true(mcdc_warehouse_is_path("./x"));
}

static void test_core_warehouse__escaping_names_refused(void **state)
{
    (void)state;
    refused("", "empty");
    refused("..", "'..' may not leave");
    refused("a..b", "empty part");
    refused(".hidden", "empty part");
    refused("bronze.", "empty part");
    refused("a...b", "empty part");
    refused("a\\b.c", "'\\'");
    refused("bronze.ord\ners", "control character");
    refused("bronze.\x7f", "control character");
    refused("/tmp/x\ty", "control character");
    char out[MCDC_PATH_MAX];
    assert_int_equal(MCDC_EINVAL, mcdc_warehouse_resolve(out, "", "a.b"));
    assert_int_equal(MCDC_EINVAL, mcdc_warehouse_resolve(out, "/lake", NULL));
    char *longname = malloc(MCDC_PATH_MAX + 10);
    memset(longname, 'a', MCDC_PATH_MAX + 9);
    longname[MCDC_PATH_MAX + 9] = '\0';
    longname[5] = '.';
    assert_int_equal(MCDC_EINVAL, mcdc_warehouse_resolve(out, "/lake", longname));
    longname[7] = '/';
    assert_int_equal(MCDC_EINVAL, mcdc_warehouse_resolve(out, "/lake", longname));
    free(longname);
}

static void test_core_warehouse__uri_locations_are_refused(void **state)
{
    (void)state;
    char out[MCDC_PATH_MAX];
    static const char *uris[] = { "S3A://b/x", "abfss://c@acct.dfs/x",
                                  "gs://b/t", "file:///tmp/lake/t", "hdfs+x.y-z://n/t" };
    for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
        if (mcdc_warehouse_resolve(out, "/lake", uris[i]) != MCDC_EUNSUPPORTED)
            fail_msg("'%s' was accepted as '%s'", uris[i], out);
        assert_string_equal("", out);
        assert_non_null(strstr(mcdc_error_last()->message, "table location '"));
        assert_non_null(strstr(mcdc_error_last()->message, "is not supported yet"));
        assert_non_null(strstr(mcdc_error_last()->hint, "local directory"));
        assert_true(mcdc_warehouse_is_uri(uris[i]));
    }
    assert_non_null(strstr(mcdc_error_last()->message, "(hdfs+x.y-z://)"));
    /* a URI warehouse is refused when a dotted name needs it, its password masked */
    assert_int_equal(MCDC_EUNSUPPORTED, mcdc_warehouse_resolve(out, "abfss://key:SECRET@acct/lake",
                                                               "bronze.orders"));
    assert_non_null(strstr(mcdc_error_last()->message, "warehouse location 'abfss://key:***@acct/lake'"));
    assert_null(strstr(mcdc_error_last()->message, "SECRET"));
    /* s3:// is an object store: credentials in it are no bucket name, and are masked */
    assert_int_equal(MCDC_EINVAL, mcdc_warehouse_resolve(out, "s3://key:SECRET@bucket/lake", "bronze.orders"));
    assert_non_null(strstr(mcdc_error_last()->message, "warehouse location 's3://key:***@bucket/lake': not s3://BUCKET/PREFIX"));
    assert_null(strstr(mcdc_error_last()->message, "SECRET"));
    assert_int_equal(MCDC_EINVAL, mcdc_warehouse_resolve(out, "/lake", "s3://B_ad/x"));
    assert_non_null(strstr(mcdc_error_last()->message, "table location 's3://B_ad/x'"));
    /* not URIs: local paths that merely hold "://" later or a colon */
    ok("/lake", "./s3://x", "./s3://x");
    ok("/lake", "/data/a:b/t", "/data/a:b/t");
    ok("s3://b/lake", "/data/t", "/data/t"); /* the warehouse is not used for a path */
    assert_false(mcdc_warehouse_is_uri("3s://x"));
    assert_false(mcdc_warehouse_is_uri("s3:/x"));
    assert_false(mcdc_warehouse_is_uri("://x"));
    assert_false(mcdc_warehouse_is_uri(NULL));
}

static void test_core_warehouse__s3_names_need_credentials(void **state)
{
    (void)state;
    char out[MCDC_PATH_MAX];
    setenv("HOME", "/nonexistent-home", 1);
    setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent-home/c", 1);
    setenv("AWS_CONFIG_FILE", "/nonexistent-home/c", 1);
    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_PROFILE");
    unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
    /* a dotted name under an s3:// warehouse is an s3:// location, checked before use */
    assert_int_equal(MCDC_EINVAL, mcdc_warehouse_resolve(out, "s3://my-lake/wh/", "bronze.orders"));
    assert_string_equal("s3://my-lake/wh/bronze/orders", out);
    assert_non_null(strstr(mcdc_error_last()->message, "S3 credentials: none found"));
    assert_non_null(strstr(mcdc_error_last()->hint, "AWS_ACCESS_KEY_ID"));
}

static void test_core_warehouse__dir_from_flag_env_or_default(void **state)
{
    (void)state;
    unsetenv("MSSQL_CDC_WAREHOUSE");
    assert_string_equal("./lake", mcdc_warehouse_dir(NULL));
    setenv("MSSQL_CDC_WAREHOUSE", "", 1);
    assert_string_equal("./lake", mcdc_warehouse_dir(NULL));
    setenv("MSSQL_CDC_WAREHOUSE", "/srv/lake", 1);
    assert_string_equal("/srv/lake", mcdc_warehouse_dir(NULL));
    assert_string_equal("/flag", mcdc_warehouse_dir("/flag"));
    unsetenv("MSSQL_CDC_WAREHOUSE");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_warehouse__dotted_names_live_in_the_warehouse),
        cmocka_unit_test(test_core_warehouse__paths_are_used_as_given),
        cmocka_unit_test(test_core_warehouse__escaping_names_refused),
        cmocka_unit_test(test_core_warehouse__uri_locations_are_refused),
        cmocka_unit_test(test_core_warehouse__s3_names_need_credentials),
        cmocka_unit_test(test_core_warehouse__dir_from_flag_env_or_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
