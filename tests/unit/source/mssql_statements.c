/* Unit tests for the SQL Server source's statements (source/mssql/statements.c): each one is
 * read-only, renders with its placeholders filled, and is listed word for word with its
 * permission in docs/reference/sqlserver-queries.md. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cmocka.h>

#include "mcdc/fs.h"
#include "source/mssql/statements.h"

static void test_source_mssql_statements__read_only_and_complete(void **state)
{
    (void)state;
    for (int q = 0; q < MCDC_MSSQL_Q_COUNT; q++) {
        const mcdc_mssql_statement *st = mcdc_mssql_statement_get(q);
        assert_non_null(st);
        assert_non_null(st->name);
        assert_non_null(st->sql);
        assert_true(st->permission[0] && st->purpose[0]);
        /* only reads, procedures that read, and session settings */
        if (strncmp(st->sql, "SELECT ", 7) && strncmp(st->sql, "EXEC sys.sp_cdc_help_change_data_capture", 40) &&
            strncmp(st->sql, "EXEC sys.sp_cdc_get_", 20) && strncmp(st->sql, "SET ", 4))
            fail_msg("%s: not a read: %s", st->name, st->sql);
        static const char *const writes[] = { "INSERT", "UPDATE ", "DELETE", "MERGE", "CREATE", "ALTER", "DROP",
                                              "NOLOCK", "READUNCOMMITTED", "sp_cdc_enable", "sp_cdc_cleanup" };
        for (size_t i = 0; i < sizeof writes / sizeof writes[0]; i++)
            if (strcasestr(st->sql, writes[i])) fail_msg("%s holds %s", st->name, writes[i]);
        mcdc_buf b = MCDC_BUF_INIT(1 << 16);
        assert_int_equal(0, mcdc_mssql_statement_example(&b, q));
        if (strchr(b.ptr, '{') || strchr(b.ptr, '}')) fail_msg("%s: placeholder left: %s", st->name, b.ptr);
        mcdc_buf_dispose(&b);
    }
    assert_null(mcdc_mssql_statement_get(MCDC_MSSQL_Q_COUNT));
}

static void test_source_mssql_statements__render_fills_placeholders(void **state)
{
    (void)state;
    mcdc_buf b = MCDC_BUF_INIT(1 << 16);
    assert_int_equal(0, mcdc_mssql_statement_example(&b, MCDC_MSSQL_Q_CHANGES));
    assert_string_equal("SELECT c.__$start_lsn, c.__$seqval, c.__$operation, c.__$update_mask, c.__$command_id,"
                        " c.[order_id], c.[amount] FROM [cdc].[dbo_orders_CT] AS c WHERE c.__$start_lsn > ? AND"
                        " c.__$start_lsn <= ? ORDER BY c.__$start_lsn, c.__$command_id, c.__$seqval, c.__$operation",
                        b.ptr);
    mcdc_buf_clear(&b);
    mcdc_mssql_fill f = { .n = 250 };
    assert_int_equal(0, mcdc_mssql_statement_render(&b, MCDC_MSSQL_Q_SET_LOCK_TIMEOUT, &f));
    assert_string_equal("SET LOCK_TIMEOUT 250", b.ptr);
    mcdc_buf_clear(&b);
    assert_int_equal(MCDC_EINVAL, mcdc_mssql_statement_render(&b, MCDC_MSSQL_Q_PAGE_END, &f));
    assert_non_null(strstr(mcdc_error_last()->message, "{ct} not given"));
    mcdc_buf_dispose(&b);
}

static void test_source_mssql_statements__listed_for_dbas(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/reference/sqlserver-queries.md", getenv("MCDC_SRC") ? getenv("MCDC_SRC") : ".");
    mcdc_buf doc = MCDC_BUF_INIT(1 << 22);
    if (mcdc_fs_read_all(&doc, path) < 0) fail_msg("%s: %s", path, mcdc_error_last()->message);
    int listed = 0;
    for (const char *p = doc.ptr; (p = strstr(p, "\n### ")); p++) listed++;
    assert_int_equal(MCDC_MSSQL_Q_COUNT, listed);
    for (int q = 0; q < MCDC_MSSQL_Q_COUNT; q++) {
        const mcdc_mssql_statement *st = mcdc_mssql_statement_get(q);
        char want[4096];
        snprintf(want, sizeof want, "### %s\n\n```tsql\n%s\n```\n", st->name, st->sql);
        if (!strstr(doc.ptr, want)) fail_msg("%s does not list %s as:\n%s", path, st->name, want);
        snprintf(want, sizeof want, "- Permission: %s\n", st->permission);
        const char *at = strstr(doc.ptr, st->sql);
        if (!strstr(at, want)) fail_msg("%s: %s's permission is not '%s'", path, st->name, st->permission);
    }
    mcdc_buf_dispose(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_mssql_statements__read_only_and_complete),
        cmocka_unit_test(test_source_mssql_statements__render_fills_placeholders),
        cmocka_unit_test(test_source_mssql_statements__listed_for_dbas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
