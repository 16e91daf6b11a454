/* Unit tests for pipeline/owner.c: the stream family an app id belongs to (the owner a
 * bronze records), and refusals of a table of another kind. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/error.h"
#include "mcdc/pipeline.h"
#include "unit/delta/testenv.h"

static void family_is(const char *want, const char *app_id)
{
    char f[64];
    assert_int_equal(0, mcdc_stream_family(f, sizeof f, app_id));
    assert_string_equal(want, f);
}

static void test_pipeline_owner__generations_and_keys_share_a_family(void **state)
{
    (void)state;
    family_is("orders", "orders");
    family_is("orders", "orders.g2");
    family_is("orders", "orders.g12#facts");
    family_is("orders", "orders#snapshot");
    family_is("orders-v1", "orders-v1.g1");
    family_is("orders.g", "orders.g");       /* no digits: not a generation */
    family_is("orders.gx1", "orders.gx1");
    family_is("a.g1", "a.g1.g2");            /* only the last suffix */
    family_is(".g1", ".g1");                 /* nothing before the suffix */
    char small[4];
    assert_int_equal(MCDC_EINVAL, mcdc_stream_family(small, sizeof small, "orders"));
}

static void test_pipeline_owner__a_table_of_another_kind_is_refused(void **state)
{
    (void)state;
    char *dir = testenv_tmpdir("owner");
    char t[512], none[512];
    snprintf(t, sizeof t, "%s/t", dir);
    snprintf(none, sizeof none, "%s/none", dir);
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_delta_map conf = { NULL, 0 };
    mcdc_delta_map_set(&conf, "mcdc.kind", "silver");
    assert_int_equal(0, mcdc_delta_create(t, s, NULL, 0, &conf, NULL));
    mcdc_delta_map_clear(&conf);
    mcdc_schema_free(s);
    assert_int_equal(0, mcdc_table_check_kind(t, "silver.t", "silver", "--silver"));
    assert_int_equal(0, mcdc_table_check_kind(none, "x.none", "facts", "--facts"));
    assert_int_equal(MCDC_EINVAL, mcdc_table_check_kind(t, "silver.t", "facts", "--facts"));
    assert_string_equal("--facts silver.t: is a silver table, not a facts table",
                        mcdc_error_last()->message);
    assert_non_null(strstr(mcdc_error_last()->hint, "give --facts a facts table"));
    testenv_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_owner__generations_and_keys_share_a_family),
        cmocka_unit_test(test_pipeline_owner__a_table_of_another_kind_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
