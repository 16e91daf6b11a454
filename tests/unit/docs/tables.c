/* docs/reference/tables.md names every column of the tables mssql-cdc writes: the facts
 * table, the control table and bronze's metadata columns, as the code defines them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mcdc/finalize.h"
#include "mcdc/fs.h"
#include "mcdc/pipeline.h"

static mcdc_buf doc = MCDC_BUF_INIT(1 << 22);

static int load(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/reference/tables.md", getenv("MCDC_SRC") ? getenv("MCDC_SRC") : ".");
    return mcdc_fs_read_all(&doc, path) == 0 ? 0 : -1;
}

static int unload(void **state)
{
    (void)state;
    mcdc_buf_dispose(&doc);
    return 0;
}

static void check_schema(const char *table, const mcdc_schema *s)
{
    for (size_t i = 0; i < s->n_cols; i++) {
        char cell[256];
        snprintf(cell, sizeof cell, "| `%s` |", s->cols[i].name);
        if (!strstr(doc.ptr, cell))
            fail_msg("docs/reference/tables.md lacks %s column %s", table, s->cols[i].name);
    }
}

static void test_docs_tables__facts_columns_are_documented(void **state)
{
    (void)state;
    mcdc_schema *s = NULL;
    assert_int_equal(0, mcdc_facts_schema(&s));
    assert_int_equal(29, s->n_cols);
    check_schema("facts", s);
    mcdc_schema_free(s);
}

static void test_docs_tables__control_columns_are_documented(void **state)
{
    (void)state;
    check_schema("control", mcdc_control_schema());
}

static void test_docs_tables__bronze_metadata_columns_are_documented(void **state)
{
    (void)state;
    mcdc_schema *captured = mcdc_schema_new(), *s = NULL;
    assert_int_equal(0, mcdc_bronze_schema(&s, captured, true));
    check_schema("bronze", s);
    mcdc_schema_free(s);
    mcdc_schema_free(captured);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_docs_tables__facts_columns_are_documented),
        cmocka_unit_test(test_docs_tables__control_columns_are_documented),
        cmocka_unit_test(test_docs_tables__bronze_metadata_columns_are_documented),
    };
    return cmocka_run_group_tests(tests, load, unload);
}
