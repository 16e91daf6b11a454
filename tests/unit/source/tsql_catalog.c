/*
 * tests/unit/source/tsql_catalog.c: the columns and types of every system object and
 * procedure result the T-SQL engine answers, compared with a table transcribed from
 * Microsoft's documentation of that object (learn.microsoft.com, "Result set" / "Column name,
 * Data type" tables; sysname is nvarchar(128)). For sys.databases and sys.columns the engine
 * answers a documented subset of the columns: each one it answers is checked. Nullability is
 * checked where the documentation states it.
 */
#include "session_test.h"

typedef struct doc_col {
    const char *name;
    const char *type;
    int         nullable; /* 1 nullable, 0 not null, -1 not stated */
} doc_col;

typedef struct doc_object {
    const char    *query;   /* what makes the engine answer with the object's columns */
    const doc_col *cols;
    bool           subset;  /* the engine answers some of the documented columns, in order */
} doc_object;

#define SYSNAME "nvarchar(128)"

static const doc_col lsn_time_mapping[] = {
    {"start_lsn", "binary(10)", -1}, {"tran_begin_time", "datetime", -1}, {"tran_end_time", "datetime", -1},
    {"tran_id", "varbinary(10)", -1}, {"tran_begin_lsn", "binary(10)", -1}, {NULL, NULL, 0}};
static const doc_col change_table[] = {
    {"__$start_lsn", "binary(10)", 0}, {"__$end_lsn", "binary(10)", -1}, {"__$seqval", "binary(10)", 0},
    {"__$operation", "int", 0}, {"__$update_mask", "varbinary(128)", -1}, {"order_id", "int", -1},
    {"amount", "decimal(12,2)", -1}, {"__$command_id", "int", -1}, {NULL, NULL, 0}};
static const doc_col change_tables[] = {
    {"object_id", "int", -1}, {"version", "int", -1}, {"source_object_id", "int", -1},
    {"capture_instance", SYSNAME, -1}, {"start_lsn", "binary(10)", 1}, {"end_lsn", "binary(10)", -1},
    {"supports_net_changes", "bit", -1}, {"has_drop_pending", "bit", -1}, {"role_name", SYSNAME, 1},
    {"index_name", SYSNAME, 1}, {"filegroup_name", SYSNAME, 1}, {"create_date", "datetime", -1},
    {"partition_switch", "bit", -1}, {NULL, NULL, 0}};
static const doc_col captured_columns_view[] = {
    {"object_id", "int", -1}, {"column_name", SYSNAME, -1}, {"column_id", "int", -1}, {"column_type", SYSNAME, -1},
    {"column_ordinal", "int", -1}, {"is_computed", "bit", -1}, {NULL, NULL, 0}};
static const doc_col index_columns[] = {
    {"object_id", "int", -1}, {"column_name", SYSNAME, -1}, {"index_ordinal", "tinyint", -1}, {"column_id", "int", -1},
    {NULL, NULL, 0}};
static const doc_col ddl_history_view[] = {
    {"source_object_id", "int", -1}, {"object_id", "int", -1}, {"required_column_update", "bit", -1},
    {"ddl_command", "nvarchar(max)", -1}, {"ddl_lsn", "binary(10)", -1}, {"ddl_time", "datetime", -1}, {NULL, NULL, 0}};
static const doc_col sys_columns[] = {
    {"object_id", "int", -1}, {"name", SYSNAME, -1}, {"column_id", "int", -1}, {"system_type_id", "tinyint", -1},
    {"user_type_id", "int", -1}, {"max_length", "smallint", -1}, {"precision", "tinyint", -1}, {"scale", "tinyint", -1},
    {"collation_name", SYSNAME, 1}, {"is_nullable", "bit", -1}, {"is_ansi_padded", "bit", -1},
    {"is_rowguidcol", "bit", -1}, {"is_identity", "bit", -1}, {"is_computed", "bit", -1}, {NULL, NULL, 0}};
static const doc_col sys_databases[] = {
    {"name", SYSNAME, -1}, {"database_id", "int", -1}, {"source_database_id", "int", 1}, {"owner_sid", "varbinary(85)", -1},
    {"create_date", "datetime", -1}, {"compatibility_level", "tinyint", -1}, {"collation_name", SYSNAME, -1},
    {"user_access", "tinyint", -1}, {"user_access_desc", "nvarchar(60)", -1}, {"is_read_only", "bit", -1},
    {"is_auto_close_on", "bit", 0}, {"is_auto_shrink_on", "bit", -1}, {"state", "tinyint", -1},
    {"state_desc", "nvarchar(60)", -1}, {"is_cdc_enabled", "bit", -1}, {NULL, NULL, 0}};
static const doc_col wait_stats[] = {
    {"session_id", "smallint", -1}, {"wait_type", "nvarchar(60)", -1}, {"waiting_tasks_count", "bigint", -1},
    {"wait_time_ms", "bigint", -1}, {"max_wait_time_ms", "bigint", -1}, {"signal_wait_time_ms", "bigint", -1},
    {NULL, NULL, 0}};
static const doc_col help_cdc[] = {
    {"source_schema", SYSNAME, -1}, {"source_table", SYSNAME, -1}, {"capture_instance", SYSNAME, -1},
    {"object_id", "int", -1}, {"source_object_id", "int", -1}, {"start_lsn", "binary(10)", 1},
    {"end_lsn", "binary(10)", -1}, {"supports_net_changes", "bit", -1}, {"has_drop_pending", "bit", -1},
    {"role_name", SYSNAME, 1}, {"index_name", SYSNAME, -1}, {"filegroup_name", SYSNAME, 1},
    {"create_date", "datetime", -1}, {"index_column_list", "nvarchar(max)", -1}, {"captured_column_list", "nvarchar(max)", -1},
    {NULL, NULL, 0}};
static const doc_col captured_columns_proc[] = {
    {"source_schema", SYSNAME, -1}, {"source_table", SYSNAME, -1}, {"capture_instance", SYSNAME, -1},
    {"column_name", SYSNAME, -1}, {"column_id", "int", -1}, {"column_ordinal", "int", -1}, {"data_type", SYSNAME, -1},
    {"character_maximum_length", "int", 1}, {"numeric_precision", "tinyint", 1}, {"numeric_precision_radix", "smallint", 1},
    {"numeric_scale", "int", 1}, {"datetime_precision", "smallint", 1}, {NULL, NULL, 0}};
static const doc_col ddl_history_proc[] = {
    {"source_schema", SYSNAME, -1}, {"source_table", SYSNAME, -1}, {"capture_instance", SYSNAME, -1},
    {"required_column_update", "bit", -1}, {"ddl_command", "nvarchar(max)", -1}, {"ddl_lsn", "binary(10)", -1},
    {"ddl_time", "datetime", -1}, {NULL, NULL, 0}};
static const doc_col spaceused[] = {
    {"name", "nvarchar(128)", -1}, {"rows", "char(20)", -1}, {"reserved", "varchar(18)", -1}, {"data", "varchar(18)", -1},
    {"index_size", "varchar(18)", -1}, {"unused", "varchar(18)", -1}, {NULL, NULL, 0}};

static const doc_col all_changes[] = {
    {"__$start_lsn", "binary(10)", -1}, {"__$seqval", "binary(10)", -1}, {"__$operation", "int", -1},
    {"__$update_mask", "varbinary(128)", -1}, {"order_id", "int", -1}, {"amount", "decimal(12,2)", -1}, {NULL, NULL, 0}};

static const doc_object objects[] = {
    {"DECLARE @a binary(10) = sys.fn_cdc_get_min_lsn(N'dbo_orders'), @b binary(10) = sys.fn_cdc_get_max_lsn(); "
     "SELECT * FROM cdc.fn_cdc_get_all_changes_dbo_orders(@a, @b, N'all')", all_changes, false},
    {"SELECT * FROM cdc.lsn_time_mapping", lsn_time_mapping, false},
    {"SELECT * FROM cdc.dbo_orders_CT", change_table, false},
    {"SELECT * FROM cdc.change_tables", change_tables, false},
    {"SELECT * FROM cdc.captured_columns", captured_columns_view, false},
    {"SELECT * FROM cdc.index_columns", index_columns, false},
    {"SELECT * FROM cdc.ddl_history", ddl_history_view, false},
    {"SELECT * FROM sys.columns", sys_columns, true},
    {"SELECT * FROM sys.databases", sys_databases, true},
    {"SELECT * FROM sys.dm_exec_session_wait_stats", wait_stats, false},
    {"EXEC sys.sp_cdc_help_change_data_capture", help_cdc, false},
    {"EXEC sys.sp_cdc_get_captured_columns @capture_instance = N'dbo_orders'", captured_columns_proc, false},
    {"EXEC sys.sp_cdc_get_ddl_history N'dbo_orders'", ddl_history_proc, false},
    {"EXEC sp_spaceused N'dbo.orders'", spaceused, false},
};

static void test_source_tsql_catalog__columns_and_types_follow_microsofts_documentation(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    int rc = mcdc_sim_create_table(t.sim, "dbo.orders", "order_id INT NOT NULL, amount DECIMAL(12,2) NULL", "order_id",
                                   NULL, T("2026-01-01T00:00:00"));
    if (rc) fail_msg("create: %s", mcdc_error_last()->message);
    simt_capture(&t, "2026-01-01T00:00:01", 0);
    mcdc_sim_session *s;
    mcdc_sim_login_info li = {"dbo", NULL, "test"};
    assert_int_equal(0, mcdc_sim_session_open(&s, t.path, &li, NULL));
    for (size_t o = 0; o < sizeof objects / sizeof objects[0]; o++) {
        const char *got = B(s, objects[o].query);
        const char *cols = strstr(got, "cols ");
        if (!cols) fail_msg("%s answered no result set:\n%s", objects[o].query, got);
        /* "cols a:int not null, b:nvarchar(128)\n" */
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)strcspn(cols + 5, "\n"), cols + 5);
        int d = 0;
        for (char *c = line, *next; c; c = next) {
            next = strstr(c, ", ");
            if (next) { *next = 0; next += 2; }
            char *colon = strchr(c, ':');
            assert_non_null(colon);
            *colon = 0;
            bool not_null = strstr(colon + 1, " not null") != NULL;
            if (not_null) *strstr(colon + 1, " not null") = 0;
            while (objects[o].subset && objects[o].cols[d].name && strcmp(objects[o].cols[d].name, c)) d++;
            const doc_col *dc = &objects[o].cols[d];
            if (!dc->name) fail_msg("%s: column %s is not in the documented list (or out of its order)", objects[o].query, c);
            if (strcmp(dc->name, c)) fail_msg("%s: column %d is %s, documented %s", objects[o].query, d + 1, c, dc->name);
            if (strcmp(dc->type, colon + 1)) fail_msg("%s: column %s is %s, documented %s", objects[o].query, c, colon + 1, dc->type);
            if (dc->nullable >= 0 && dc->nullable == not_null)
                fail_msg("%s: column %s is %snullable, documented %snullable", objects[o].query, c, not_null ? "not " : "",
                         dc->nullable ? "" : "not ");
            d++;
        }
        if (!objects[o].subset && objects[o].cols[d].name)
            fail_msg("%s: documented column %s is missing", objects[o].query, objects[o].cols[d].name);
    }
    mcdc_sim_session_close(s);
    simt_close(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_tsql_catalog__columns_and_types_follow_microsofts_documentation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
