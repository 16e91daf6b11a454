/* Unit tests for pipeline/schema_change.c: the widening rule ("holds", anchor-features §1)
 * that decides whether a stream goes on through an ALTER COLUMN, and the column a DDL
 * statement names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <cmocka.h>

#include "pipeline/stream_int.h"

static mcdc_column col(mcdc_type_id t, int p, int s)
{
    mcdc_column c = { NULL, t, p, s, true };
    return c;
}

static void test_pipeline_schema_change__holds_is_the_widening_rule(void **state)
{
    (void)state;
    struct { mcdc_column from, to; bool holds; } cases[] = {
        { col(MCDC_TYPE_STRING, 0, 0), col(MCDC_TYPE_STRING, 0, 0), true }, /* the same type */
        { col(MCDC_TYPE_SHORT, 0, 0), col(MCDC_TYPE_INT, 0, 0), true },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_LONG, 0, 0), true },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_INT, 0, 0), false },    /* a narrowing */
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), true },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), false },
        { col(MCDC_TYPE_SHORT, 0, 0), col(MCDC_TYPE_DECIMAL, 5, 0), true },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DECIMAL, 12, 2), true },
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_DECIMAL, 11, 2), false },
        { col(MCDC_TYPE_LONG, 0, 0), col(MCDC_TYPE_DECIMAL, 20, 0), true },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 18, 2), true },
        { col(MCDC_TYPE_DECIMAL, 10, 2), col(MCDC_TYPE_DECIMAL, 10, 3), false },
        { col(MCDC_TYPE_DECIMAL, 18, 2), col(MCDC_TYPE_DECIMAL, 10, 2), false },
        { col(MCDC_TYPE_FLOAT, 0, 0), col(MCDC_TYPE_DOUBLE, 0, 0), true },
        { col(MCDC_TYPE_DOUBLE, 0, 0), col(MCDC_TYPE_FLOAT, 0, 0), false },
        { col(MCDC_TYPE_DATE, 0, 0), col(MCDC_TYPE_TIMESTAMP_NTZ, 0, 0), true },
        { col(MCDC_TYPE_STRING, 0, 0), col(MCDC_TYPE_INT, 0, 0), false },  /* varchar -> int */
        { col(MCDC_TYPE_INT, 0, 0), col(MCDC_TYPE_STRING, 0, 0), false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (mcdc_stream__type_holds(&cases[i].from, &cases[i].to) != cases[i].holds)
            fail_msg("case %zu: expected %s", i, cases[i].holds ? "holds" : "does not hold");
}

static void test_pipeline_schema_change__the_column_of_a_ddl_statement(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        { "ALTER TABLE dbo.orders ADD note NVARCHAR(20) NULL", "note" },
        { "alter table [dbo].[orders] add [Order Date] datetime2 null", "Order Date" },
        { "ALTER TABLE dbo.orders DROP COLUMN customer", "customer" },
        { "ALTER TABLE dbo.orders ALTER COLUMN qty BIGINT NULL", "qty" },
        { "ALTER TABLE dbo.orders ALTER COLUMN \"amount\" DECIMAL(18,2)", "amount" },
        { "ALTER TABLE dbo.address ADD zip INT", "zip" },   /* not the ADD inside "address" */
        { "TRUNCATE TABLE dbo.orders", "" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char out[130];
        mcdc_stream__ddl_column(out, cases[i][0]);
        assert_string_equal(cases[i][1], out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipeline_schema_change__the_column_of_a_ddl_statement),
        cmocka_unit_test(test_pipeline_schema_change__holds_is_the_widening_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
