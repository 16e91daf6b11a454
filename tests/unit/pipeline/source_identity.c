/* Unit tests for pipeline/source_identity.c: when two source identities are one database,
 * how one is shown, and reading the one a bronze table records. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/delta.h"
#include "mcdc/pipeline.h"
#include "mcdc/source.h"
#include "unit/delta/testenv.h"

static mcdc_source_identity ident(const char *server, const char *db, const char *guid)
{
    mcdc_source_identity id;
    memset(&id, 0, sizeof id);
    snprintf(id.server, sizeof id.server, "%s", server);
    snprintf(id.database, sizeof id.database, "%s", db);
    snprintf(id.database_guid, sizeof id.database_guid, "%s", guid);
    return id;
}

static void test_pipeline_source_identity__the_guid_decides_when_both_know_it(void **state)
{
    (void)state;
    const char *g1 = "0f8fad5b-d9cb-469f-a165-70867728950e", *g2 = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
    mcdc_source_identity a = ident("SRV1", "shop", g1), b = ident("srv1", "Shop", "");
    assert_true(mcdc_source_identity_same(&a, &b));      /* names, any case */
    b = ident("SRV1", "shop", g2);
    assert_false(mcdc_source_identity_same(&a, &b));     /* same names, another database */
    b = ident("SRV2", "renamed", "0F8FAD5B-D9CB-469F-A165-70867728950E");
    assert_true(mcdc_source_identity_same(&a, &b));      /* one GUID: renamed, moved */
    b = ident("SRV1", "other", "");
    assert_false(mcdc_source_identity_same(&a, &b));
    b = ident("SRV2", "shop", "");
    assert_false(mcdc_source_identity_same(&a, &b));
    char t[700];
    assert_string_equal("server SRV1, database shop (database_guid 0f8fad5b-d9cb-469f-a165-70867728950e)",
                        mcdc_source_identity_text(t, sizeof t, &a));
    b = ident("SRV1", "shop", "");
    assert_string_equal("server SRV1, database shop", mcdc_source_identity_text(t, sizeof t, &b));
}

static void test_pipeline_source_identity__bronze_records_it_or_not(void **state)
{
    (void)state;
    char *dir = testenv_tmpdir("ident");
    char with[512], without[512];
    snprintf(with, sizeof with, "%s/with", dir);
    snprintf(without, sizeof without, "%s/without", dir);
    mcdc_schema *s = mcdc_schema_new();
    mcdc_schema_add(s, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_delta_map conf = { NULL, 0 };
    mcdc_delta_map_set(&conf, "mcdc.kind", "bronze");
    assert_int_equal(0, mcdc_delta_create(without, s, NULL, 0, &conf, NULL));
    mcdc_delta_map_set(&conf, "mcdc.source.server", "SRV1");
    mcdc_delta_map_set(&conf, "mcdc.source.database", "shop");
    assert_int_equal(0, mcdc_delta_create(with, s, NULL, 0, &conf, NULL));
    mcdc_delta_map_clear(&conf);
    mcdc_schema_free(s);

    mcdc_delta_snapshot *snap = NULL;
    mcdc_source_identity id;
    bool recorded = true;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, without, -1));
    mcdc_bronze_source_identity(snap, &id, &recorded);
    assert_false(recorded);
    assert_string_equal("", id.server);
    mcdc_delta_snapshot_free(snap);
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, with, -1));
    mcdc_bronze_source_identity(snap, &id, &recorded);
    assert_true(recorded);
    assert_string_equal("SRV1", id.server);
    assert_string_equal("shop", id.database);
    assert_string_equal("", id.database_guid);
    mcdc_delta_snapshot_free(snap);
    testenv_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_source_identity__the_guid_decides_when_both_know_it),
        cmocka_unit_test(test_pipeline_source_identity__bronze_records_it_or_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
