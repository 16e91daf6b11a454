/* Unit tests for delta/type_widening.c: enabling type widening is one commit with the
 * property and the feature, and a second call writes nothing; an append evolving to a
 * wider schema is refused without it (nothing written) and widens with it, in the commit
 * of its files. */
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
    *state = testenv_tmpdir("widen");
    return 0;
}

static int teardown(void **state)
{
    testenv_rmrf(*state);
    free(*state);
    return 0;
}

static int64_t latest(const char *t)
{
    int64_t v = -1;
    assert_int_equal(0, mcdc_delta_latest_version(&v, t));
    return v;
}

static void test_delta_type_widening__enable_once_then_widen_with_the_append(void **state)
{
    char t[600];
    snprintf(t, sizeof t, "%s/t", (const char *)*state);
    mcdc_schema *narrow = mcdc_schema_new(), *wide = mcdc_schema_new();
    mcdc_schema_add(narrow, "id", MCDC_TYPE_INT, 0, 0, true);
    mcdc_schema_add(narrow, "amount", MCDC_TYPE_DECIMAL, 10, 2, true);
    mcdc_schema_add(wide, "id", MCDC_TYPE_LONG, 0, 0, true);
    mcdc_schema_add(wide, "amount", MCDC_TYPE_DECIMAL, 18, 2, true);
    mcdc_schema_add(wide, "note", MCDC_TYPE_STRING, 0, 0, true);
    assert_int_equal(0, mcdc_delta_create(t, narrow, NULL, 0, NULL, NULL));
    assert_int_equal(0, latest(t));

    /* without the property: refused, nothing written */
    assert_int_equal(MCDC_ESCHEMA, mcdc_delta_append_evolving(t, NULL, 0, wide, NULL, NULL));
    assert_int_equal(0, latest(t));
    /* the same schema: nothing to change, nothing written */
    assert_int_equal(0, mcdc_delta_append_evolving(t, NULL, 0, narrow, NULL, NULL));
    assert_int_equal(0, latest(t));

    assert_int_equal(0, mcdc_delta_enable_type_widening(t, NULL));
    assert_int_equal(1, latest(t));
    assert_int_equal(0, mcdc_delta_enable_type_widening(t, NULL));
    assert_int_equal(1, latest(t));
    mcdc_delta_snapshot *snap;
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    assert_string_equal("true", mcdc_delta_snapshot_config(snap, "delta.enableTypeWidening", ""));
    bool r = false, w = false;
    for (size_t i = 0; i < snap->protocol.n_reader_features; i++)
        r |= strcmp(snap->protocol.reader_features[i], "typeWidening") == 0;
    for (size_t i = 0; i < snap->protocol.n_writer_features; i++)
        w |= strcmp(snap->protocol.writer_features[i], "typeWidening") == 0;
    assert_true(r && w);
    assert_int_equal(3, snap->protocol.min_reader_version);
    assert_int_equal(7, snap->protocol.min_writer_version);
    mcdc_delta_snapshot_free(snap);

    /* with it: one commit widens id and amount and adds note */
    assert_int_equal(0, mcdc_delta_append_evolving(t, NULL, 0, wide, NULL, NULL));
    assert_int_equal(2, latest(t));
    assert_int_equal(0, mcdc_delta_snapshot_open(&snap, t, -1));
    mcdc_schema *now = NULL;
    assert_int_equal(0, mcdc_delta_schema_to_flat(&now, snap->schema));
    assert_int_equal(3, now->n_cols);
    assert_true(mcdc_delta_type_same(&now->cols[0], &wide->cols[0]));
    assert_true(mcdc_delta_type_same(&now->cols[1], &wide->cols[1]));
    assert_false(mcdc_delta_type_same(&now->cols[1], &narrow->cols[1]));
    assert_non_null(strstr(snap->metadata.schema_string, "delta.typeChanges"));
    mcdc_schema_free(now);
    mcdc_delta_snapshot_free(snap);
    mcdc_schema_free(narrow);
    mcdc_schema_free(wide);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_delta_type_widening__enable_once_then_widen_with_the_append,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
