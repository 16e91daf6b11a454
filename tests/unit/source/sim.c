/* Unit tests for the simulator (source/sim): change rows, LSNs, seqval order, update masks,
 * capture scans, idle entries, SQL Server value semantics and refusals that change nothing. */
#include "sim_test.h"

#include "mcdc/error.h"
#include "source/sim/sim_int.h"

static void test_source_sim__insert_update_delete_rows_masks_and_lsns(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    simt_exec(&t, NULL, "2025-01-01T10:00:01",
              "INSERT INTO dbo.orders VALUES (1, N'Ada', 12.50, '2025-01-01 09:59:00.1234'), (2, 'Bob', 3, NULL)");
    simt_exec(&t, NULL, "2025-01-01T10:00:02",
              "UPDATE dbo.orders SET amount = amount * 2 WHERE order_id = 1; DELETE FROM dbo.orders WHERE customer = 'BOB'");
    /* nothing is visible before a capture scan */
    ASSERT_Q(&t, "SELECT count(*) AS n FROM cdc.dbo_orders_CT", "{\"n\":0}\n");
    ASSERT_Q(&t, "SELECT count(*) AS n FROM cdc.lsn_time_mapping", "{\"n\":0}\n");
    simt_capture(&t, "2025-01-01T10:00:03", 0);
    char exp[4096];
    snprintf(exp, sizeof exp,
             "{\"__$start_lsn\":\"%s\",\"__$seqval\":\"%s\",\"__$operation\":2,\"__$update_mask\":\"0x0F\",\"order_id\":1,\"customer\":\"Ada\",\"amount\":\"12.50\",\"placed_at\":\"2025-01-01T09:59:00.123000\",\"__$command_id\":1}\n"
             "{\"__$start_lsn\":\"%s\",\"__$seqval\":\"%s\",\"__$operation\":2,\"__$update_mask\":\"0x0F\",\"order_id\":2,\"customer\":\"Bob\",\"amount\":\"3.00\",\"placed_at\":null,\"__$command_id\":1}\n"
             "{\"__$start_lsn\":\"%s\",\"__$seqval\":\"%s\",\"__$operation\":3,\"__$update_mask\":\"0x04\",\"order_id\":1,\"customer\":\"Ada\",\"amount\":\"12.50\",\"placed_at\":\"2025-01-01T09:59:00.123000\",\"__$command_id\":1}\n"
             "{\"__$start_lsn\":\"%s\",\"__$seqval\":\"%s\",\"__$operation\":4,\"__$update_mask\":\"0x04\",\"order_id\":1,\"customer\":\"Ada\",\"amount\":\"25.00\",\"placed_at\":\"2025-01-01T09:59:00.123000\",\"__$command_id\":1}\n"
             "{\"__$start_lsn\":\"%s\",\"__$seqval\":\"%s\",\"__$operation\":1,\"__$update_mask\":\"0x0F\",\"order_id\":2,\"customer\":\"Bob\",\"amount\":\"3.00\",\"placed_at\":null,\"__$command_id\":2}\n",
             L("2025-01-01T10:00:01", 4), L("2025-01-01T10:00:01", 2), L("2025-01-01T10:00:01", 4),
             L("2025-01-01T10:00:01", 3), L("2025-01-01T10:00:02", 4), L("2025-01-01T10:00:02", 2),
             L("2025-01-01T10:00:02", 4), L("2025-01-01T10:00:02", 2), L("2025-01-01T10:00:02", 4),
             L("2025-01-01T10:00:02", 3));
    ASSERT_Q(&t, "SELECT __$start_lsn, __$seqval, __$operation, __$update_mask, order_id, customer, amount, placed_at,"
                 " __$command_id FROM cdc.dbo_orders_CT ORDER BY __$start_lsn, __$command_id, __$seqval, __$operation",
             exp);
    snprintf(exp, sizeof exp,
             "{\"start_lsn\":\"%s\",\"tran_begin_time\":\"2025-01-01T10:00:00.000000\",\"tran_end_time\":\"2025-01-01T10:00:00.000000\",\"tran_id\":\"0x00000000000000000001\",\"tran_begin_lsn\":\"%s\"}\n"
             "{\"start_lsn\":\"%s\",\"tran_begin_time\":\"2025-01-01T10:00:01.000000\",\"tran_end_time\":\"2025-01-01T10:00:01.000000\",\"tran_id\":\"0x00000000000000000002\",\"tran_begin_lsn\":\"%s\"}\n"
             "{\"start_lsn\":\"%s\",\"tran_begin_time\":\"2025-01-01T10:00:02.000000\",\"tran_end_time\":\"2025-01-01T10:00:02.000000\",\"tran_id\":\"0x00000000000000000003\",\"tran_begin_lsn\":\"%s\"}\n",
             L("2025-01-01T10:00:00", 2), L("2025-01-01T10:00:00", 1), L("2025-01-01T10:00:01", 4),
             L("2025-01-01T10:00:01", 1), L("2025-01-01T10:00:02", 4), L("2025-01-01T10:00:02", 1));
    ASSERT_Q(&t, "SELECT * FROM cdc.lsn_time_mapping ORDER BY start_lsn", exp);
    ASSERT_Q(&t, "SELECT * FROM dbo.orders", "{\"order_id\":1,\"customer\":\"Ada\",\"amount\":\"25.00\",\"placed_at\":\"2025-01-01T09:59:00.123000\"}\n");
    simt_close(&t);
}

static void test_source_sim__key_update_is_delete_then_insert(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    simt_exec(&t, NULL, "2025-01-01T10:00:01", "INSERT INTO dbo.orders (order_id, customer) VALUES (1, 'a'), (2, 'b')");
    simt_exec(&t, NULL, "2025-01-01T10:00:02", "UPDATE dbo.orders SET order_id = order_id + 10");
    simt_capture(&t, "2025-01-01T10:00:03", 0);
    ASSERT_Q(&t, "SELECT __$operation AS op, __$update_mask AS m, order_id, __$command_id AS c FROM cdc.dbo_orders_CT"
                 " WHERE __$start_lsn > (SELECT min(start_lsn) FROM cdc.lsn_time_mapping WHERE tran_end_time > '2025-01-01 10:00:01')"
                 " ORDER BY __$seqval, __$operation",
             "{\"op\":1,\"m\":\"0x0F\",\"order_id\":1,\"c\":1}\n{\"op\":1,\"m\":\"0x0F\",\"order_id\":2,\"c\":1}\n"
             "{\"op\":2,\"m\":\"0x0F\",\"order_id\":11,\"c\":1}\n{\"op\":2,\"m\":\"0x0F\",\"order_id\":12,\"c\":1}\n");
    ASSERT_Q(&t, "SELECT order_id FROM dbo.orders ORDER BY order_id", "{\"order_id\":11}\n{\"order_id\":12}\n");
    simt_close(&t);
}

static void test_source_sim__interleaved_transactions_interleave_in_seqval(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    /* T2 begins and commits at :05; T1 began at :02 and commits at :08 */
    mcdc_lsn c2 = simt_exec(&t, NULL, "2025-01-01T10:00:05", "INSERT INTO dbo.orders (order_id) VALUES (2)");
    mcdc_lsn c1 = simt_exec(&t, "2025-01-01T10:00:02", "2025-01-01T10:00:08",
                            "INSERT INTO dbo.orders (order_id) VALUES (1); INSERT INTO dbo.orders (order_id) VALUES (3)");
    assert_true(mcdc_lsn_cmp(&c2, &c1) < 0);
    simt_capture(&t, "2025-01-01T10:00:09", 0);
    char exp[1024];
    /* T1's log records were written at its begin: below T2's, in slots 0x8000.. */
    snprintf(exp, sizeof exp,
             "{\"order_id\":1,\"__$seqval\":\"%s\",\"__$start_lsn\":\"%s\",\"__$command_id\":1}\n"
             "{\"order_id\":3,\"__$seqval\":\"%s\",\"__$start_lsn\":\"%s\",\"__$command_id\":2}\n"
             "{\"order_id\":2,\"__$seqval\":\"%s\",\"__$start_lsn\":\"%s\",\"__$command_id\":1}\n",
             L("2025-01-01T10:00:02", 0x8001), L("2025-01-01T10:00:08", 1), L("2025-01-01T10:00:02", 0x8002),
             L("2025-01-01T10:00:08", 1), L("2025-01-01T10:00:05", 2), L("2025-01-01T10:00:05", 3));
    ASSERT_Q(&t, "SELECT order_id, __$seqval, __$start_lsn, __$command_id FROM cdc.dbo_orders_CT ORDER BY __$seqval", exp);
    snprintf(exp, sizeof exp,
             "{\"start_lsn\":\"%s\",\"tran_begin_time\":\"2025-01-01T10:00:05.000000\",\"tran_begin_lsn\":\"%s\"}\n"
             "{\"start_lsn\":\"%s\",\"tran_begin_time\":\"2025-01-01T10:00:02.000000\",\"tran_begin_lsn\":\"%s\"}\n",
             L("2025-01-01T10:00:05", 3), L("2025-01-01T10:00:05", 1), L("2025-01-01T10:00:08", 1),
             L("2025-01-01T10:00:02", 0x8000));
    ASSERT_Q(&t, "SELECT start_lsn, tran_begin_time, tran_begin_lsn FROM cdc.lsn_time_mapping WHERE tran_begin_time > '2025-01-01 10:00:00.000' ORDER BY start_lsn", exp);
    simt_close(&t);
}

static void test_source_sim__partial_scans_and_visibility(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    simt_exec(&t, NULL, "2025-01-01T10:00:01", "INSERT INTO dbo.orders (order_id) VALUES (1)");
    simt_exec(&t, NULL, "2025-01-01T10:00:02", "INSERT INTO dbo.orders (order_id) VALUES (2)");
    simt_exec(&t, NULL, "2025-01-01T10:00:03", "INSERT INTO dbo.orders (order_id) VALUES (3)");
    mcdc_sim_capture_options o = MCDC_SIM_CAPTURE_OPTIONS_INIT;
    mcdc_sim_capture_result r;
    o.max_trans = 2;
    assert_int_equal(0, mcdc_sim_capture(t.sim, T("2025-01-01T10:00:04"), &o, &r));
    /* the enable and the first insert */
    assert_int_equal(2, r.n_trans);
    assert_int_equal(2, r.pending);
    char l[MCDC_LSN_STRLEN];
    assert_string_equal(L("2025-01-01T10:00:01", 3), mcdc_lsn_format(l, &r.max_lsn));
    ASSERT_Q(&t, "SELECT order_id FROM cdc.dbo_orders_CT", "{\"order_id\":1}\n");
    assert_int_equal(0, mcdc_sim_capture(t.sim, T("2025-01-01T10:00:05"), &o, &r));
    assert_int_equal(2, r.n_trans);
    assert_int_equal(0, r.pending);
    ASSERT_Q(&t, "SELECT order_id FROM cdc.dbo_orders_CT ORDER BY __$start_lsn", "{\"order_id\":1}\n{\"order_id\":2}\n{\"order_id\":3}\n");
    /* a capture cycle: up to max_scans scans */
    for (int i = 4; i < 10; i++) {
        char sql[80], at[32];
        snprintf(sql, sizeof sql, "INSERT INTO dbo.orders (order_id) VALUES (%d)", i);
        snprintf(at, sizeof at, "2025-01-01T10:00:%02d", i + 2);
        simt_exec(&t, NULL, at, sql);
    }
    o.max_scans = 2;
    assert_int_equal(0, mcdc_sim_capture(t.sim, T("2025-01-01T10:00:20"), &o, &r));
    assert_int_equal(4, r.n_trans);
    assert_int_equal(2, r.n_scans);
    assert_int_equal(2, r.pending);
    simt_close(&t);
}

static void test_source_sim__idle_entries_when_quiet(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    simt_capture(&t, "2025-01-01T10:00:01", 0);
    simt_capture(&t, "2025-01-01T10:04:59", 0); /* less than 5 minutes: nothing */
    ASSERT_Q(&t, "SELECT count(*) AS n FROM cdc.lsn_time_mapping", "{\"n\":1}\n");
    mcdc_sim_capture_result r;
    mcdc_sim_capture_options o = MCDC_SIM_CAPTURE_OPTIONS_INIT;
    assert_int_equal(0, mcdc_sim_capture(t.sim, T("2025-01-01T10:05:00"), &o, &r));
    assert_true(r.idle);
    char exp[512], l[MCDC_LSN_STRLEN];
    assert_string_equal(L("2025-01-01T10:05:00", 1), mcdc_lsn_format(l, &r.max_lsn));
    snprintf(exp, sizeof exp, "{\"start_lsn\":\"%s\",\"tran_begin_time\":\"2025-01-01T10:05:00.000000\",\"tran_end_time\":\"2025-01-01T10:05:00.000000\",\"tran_id\":\"0x00\",\"tran_begin_lsn\":\"%s\"}\n",
             L("2025-01-01T10:05:00", 1), L("2025-01-01T10:05:00", 1));
    ASSERT_Q(&t, "SELECT * FROM cdc.lsn_time_mapping WHERE tran_id = x'00'", exp);
    /* configurable interval; an explicit idle entry; none while transactions wait */
    o.idle_after_us = 60 * INT64_C(1000000);
    assert_int_equal(0, mcdc_sim_capture(t.sim, T("2025-01-01T10:06:00"), &o, &r));
    assert_true(r.idle);
    mcdc_lsn idle;
    assert_int_equal(0, mcdc_sim_idle(t.sim, T("2025-01-01T10:06:30"), &idle));
    assert_string_equal(L("2025-01-01T10:06:30", 1), mcdc_lsn_format(l, &idle));
    simt_exec(&t, NULL, "2025-01-01T10:07:00", "INSERT INTO dbo.orders (order_id) VALUES (1)");
    expect_error(mcdc_sim_idle(t.sim, T("2025-01-01T10:08:00"), &idle), MCDC_EINVAL, "wait for a capture scan");
    ASSERT_Q(&t, "SELECT count(*) AS n FROM cdc.lsn_time_mapping WHERE tran_id = x'00'", "{\"n\":3}\n");
    simt_close(&t);
}

static void test_source_sim__sql_server_value_semantics(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    assert_int_equal(0, mcdc_sim_create_table(t.sim, "dbo.v",
        "k NVARCHAR(10) NOT NULL, dt DATETIME NULL, d2 DATETIME2(2) NULL, dec DECIMAL(5,2) NULL, m MONEY NULL, "
        "b BIT NULL, g UNIQUEIDENTIFIER NULL, tm TIME(3) NULL, dto DATETIMEOFFSET(0) NULL, c CHAR(4) NULL, "
        "bin VARBINARY(4) NULL, f FLOAT NULL, sd SMALLDATETIME NULL, big DECIMAL(30,10) NULL",
        "k", NULL, T("2025-01-01T00:00:00")));
    simt_exec(&t, NULL, "2025-01-01T00:00:01",
              "INSERT INTO dbo.v VALUES ('abc', '2025-01-01 10:00:00.005', '2025-01-01 10:00:00.125', 1.005, 12.34567, 'true', "
              "'6f9619ff-8b86-d011-b42d-00c04fc964ff', '13:50:01.1234', '2025-01-01 10:00:00.5 +02:00', 'ab', 0x0102, 1.5, "
              "'2025-01-01 10:00:29.999', 12345678901234567890.0123456789)");
    ASSERT_Q(&t, "SELECT * FROM dbo.v",
             "{\"k\":\"abc\",\"dt\":\"2025-01-01T10:00:00.006666\",\"d2\":\"2025-01-01T10:00:00.130000\",\"dec\":\"1.01\","
             "\"m\":\"12.3457\",\"b\":true,\"g\":\"6F9619FF-8B86-D011-B42D-00C04FC964FF\",\"tm\":\"13:50:01.123\","
             "\"dto\":\"2025-01-01T08:00:01.000000Z\",\"c\":\"ab  \",\"bin\":\"0x0102\",\"f\":1.5,"
             "\"sd\":\"2025-01-01T10:00:00.000000\",\"big\":\"12345678901234567890.0123456789\"}\n");
    /* datetime is stored as SQL Server shows it, at 1/300 s */
    ASSERT_Q(&t, "SELECT '' || c2 AS dt FROM sim_src_1", "{\"dt\":\"2025-01-01 10:00:00.007\"}\n");
    /* keys and comparisons are case-insensitive and ignore trailing spaces */
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.v (k) VALUES ('ABC  ')", MCDC_SIM_NOW, T("2025-01-01T00:00:02"), &(mcdc_sim_exec_result){0}),
                 MCDC_EINVAL, "Msg 2627: Violation of PRIMARY KEY constraint 'PK_v'. Cannot insert duplicate key in object 'dbo.v'. The duplicate key value is (ABC  ).");
    simt_exec(&t, NULL, "2025-01-01T00:00:03", "UPDATE dbo.v SET m = m + 1 WHERE k = 'ABC' AND dt = '2025-01-01 10:00:00.007'");
    ASSERT_Q(&t, "SELECT m FROM dbo.v", "{\"m\":\"13.3457\"}\n");
    simt_exec(&t, NULL, "2025-01-01T00:00:04", "UPDATE dbo.v SET dec = 7 / 2, f = 7 / 2.0 WHERE k IN ('x', 'Abc') AND b IS NOT NULL AND dec BETWEEN 1 AND 2");
    ASSERT_Q(&t, "SELECT dec, f FROM dbo.v", "{\"dec\":\"3.00\",\"f\":3.5}\n");
    simt_close(&t);
}

static void test_source_sim__bad_input_is_refused_and_changes_nothing(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    simt_exec(&t, NULL, "2025-01-01T10:00:01", "INSERT INTO dbo.orders VALUES (1, 'Ada', 1, NULL)");
    simt_capture(&t, "2025-01-01T10:00:02", 0);
    char *before = dump_all(&t);
    mcdc_sim_exec_result r;
    int64_t at = T("2025-01-01T10:00:03");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.nope VALUES (1)", MCDC_SIM_NOW, at, &r), MCDC_ENOTFOUND,
                 "Msg 208: Invalid object name 'dbo.nope'.");
    expect_error(mcdc_sim_exec(t.sim, "SELECT * FROM dbo.orders", MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "'SELECT' statements are not supported by the simulator");
    expect_error(mcdc_sim_exec(t.sim, "MERGE dbo.orders USING x", MCDC_SIM_NOW, at, &r), MCDC_EINVAL, "not supported");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders VALUES (2, 'x', 12345678901.5, NULL)", MCDC_SIM_NOW, at, &r),
                 MCDC_EINVAL, "Msg 8115: Arithmetic overflow error converting numeric to data type numeric.");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders (order_id, customer) VALUES (2, REPLICATE('x', 50))",
                               MCDC_SIM_NOW, at, &r), MCDC_EINVAL, "function calls are not supported");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders (order_id, customer) VALUES (2, 'abcdefghijabcdefghijabcdefghijabcdefghijX')",
                               MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "Msg 2628: String or binary data would be truncated in table 't.dbo.orders', column 'customer'.");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders (order_id) VALUES (NULL)", MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "Msg 515: Cannot insert the value NULL into column 'order_id', table 't.dbo.orders'; column does not allow nulls. INSERT fails.");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders (order_id, placed_at) VALUES (2, 'yesterday')", MCDC_SIM_NOW, at, &r),
                 MCDC_EINVAL, "Msg 241: Conversion failed when converting date and/or time from character string.");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders (order_id) VALUES ('x1')", MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "Msg 245: Conversion failed when converting the varchar value 'x1' to data type int.");
    expect_error(mcdc_sim_exec(t.sim, "UPDATE dbo.orders SET nope = 1", MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "Msg 207: Invalid column name 'nope'.");
    expect_error(mcdc_sim_exec(t.sim, "UPDATE dbo.orders SET amount = 1 / 0", MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "Msg 8134: Divide by zero error encountered.");
    /* a transaction failing halfway: the first statements' changes are rolled back too */
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders (order_id) VALUES (5); UPDATE dbo.orders SET amount = 2;"
                               " INSERT INTO dbo.orders (order_id) VALUES (1)", MCDC_SIM_NOW, at, &r),
                 MCDC_EINVAL, "statement 3 (INSERT INTO dbo.orders (order_id) VALUES (1)): Msg 2627: Violation of PRIMARY KEY "
                 "constraint 'PK_orders'. Cannot insert duplicate key in object 'dbo.orders'. The duplicate key value is (1).");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders (order_id) VALUES (9)", MCDC_SIM_NOW, T("2025-01-01T09:00:00"), &r),
                 MCDC_EINVAL, "time would go backwards");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.orders (order_id) VALUES (9)", T("2025-01-01T10:00:05"), at, &r),
                 MCDC_EINVAL, "after it commits");
    expect_error(mcdc_sim_create_table(t.sim, "dbo.x", "a INTEGRAL NOT NULL", "a", NULL, at), MCDC_EINVAL, "unknown type 'INTEGRAL'");
    expect_error(mcdc_sim_create_table(t.sim, "dbo.x", "a INT NULL", "a", NULL, at), MCDC_EINVAL, "Msg 8111");
    expect_error(mcdc_sim_create_table(t.sim, "dbo.orders", "a INT", "a", NULL, at), MCDC_EEXISTS, "Msg 2714");
    expect_error(mcdc_sim_ddl(t.sim, "ALTER TABLE dbo.orders DROP COLUMN order_id", at), MCDC_EINVAL, "Msg 5074");
    expect_error(mcdc_sim_ddl(t.sim, "DROP TABLE dbo.orders", at), MCDC_EINVAL, "not supported by sim ddl");
    char *after = dump_all(&t);
    assert_string_equal(before, after);
    free(before);
    free(after);
    simt_close(&t);
}

static void test_source_sim__rowversion_is_stamped_and_image_is_a_lob(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    assert_int_equal(0, mcdc_sim_create_table(t.sim, "dbo.r", "id INT NOT NULL, img IMAGE NULL, rv TIMESTAMP NOT NULL",
                                              "id", NULL, T("2025-01-01T00:00:00")));
    /* the database's counter stamps every insert and every update, even one that changes nothing */
    simt_exec(&t, NULL, "2025-01-01T00:00:01", "INSERT INTO dbo.r (id, img) VALUES (1, 0x0102), (2, NULL)");
    simt_exec(&t, NULL, "2025-01-01T00:00:02", "UPDATE dbo.r SET img = img WHERE id = 1");
    simt_exec(&t, NULL, "2025-01-01T00:00:03", "INSERT INTO dbo.r VALUES (3, 0x00, NULL)");
    mcdc_sim_exec_result r;
    int64_t at = T("2025-01-01T00:00:04");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.r VALUES (4, NULL, 0x01)", MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "Msg 273: Cannot insert an explicit value into a timestamp column. Use INSERT with a column list to "
                 "exclude the timestamp column, or insert a DEFAULT into the timestamp column.");
    expect_error(mcdc_sim_exec(t.sim, "INSERT INTO dbo.r (id, rv) VALUES (4, 0x01)", MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "Msg 273: Cannot insert an explicit value");
    expect_error(mcdc_sim_exec(t.sim, "UPDATE dbo.r SET rv = 0x01 WHERE id = 1", MCDC_SIM_NOW, at, &r), MCDC_EINVAL,
                 "Msg 272: Cannot update a timestamp column.");
    ASSERT_Q(&t, "SELECT * FROM dbo.r ORDER BY id",
             "{\"id\":1,\"img\":\"0x0102\",\"rv\":\"0x00000000000007D3\"}\n"
             "{\"id\":2,\"img\":null,\"rv\":\"0x00000000000007D2\"}\n"
             "{\"id\":3,\"img\":\"0x00\",\"rv\":\"0x00000000000007D4\"}\n");
    /* image, like text, is NULL in the before image of an update */
    simt_capture(&t, "2025-01-01T00:00:05", 0);
    ASSERT_Q(&t, "SELECT __$operation AS op, __$update_mask AS m, id, img, rv FROM cdc.dbo_r_CT"
                 " ORDER BY __$start_lsn, __$seqval, __$operation",
             "{\"op\":2,\"m\":\"0x07\",\"id\":1,\"img\":\"0x0102\",\"rv\":\"0x00000000000007D1\"}\n"
             "{\"op\":2,\"m\":\"0x07\",\"id\":2,\"img\":null,\"rv\":\"0x00000000000007D2\"}\n"
             "{\"op\":3,\"m\":\"0x04\",\"id\":1,\"img\":null,\"rv\":\"0x00000000000007D1\"}\n"
             "{\"op\":4,\"m\":\"0x04\",\"id\":1,\"img\":\"0x0102\",\"rv\":\"0x00000000000007D3\"}\n"
             "{\"op\":2,\"m\":\"0x07\",\"id\":3,\"img\":\"0x00\",\"rv\":\"0x00000000000007D4\"}\n");
    expect_error(mcdc_sim_create_table(t.sim, "dbo.k", "img IMAGE NOT NULL", "img", NULL, at), MCDC_EINVAL, "Msg 1919");
    /* one timestamp column per table; one added to a table with rows stamps each row */
    at = T("2025-01-01T00:00:06");
    expect_error(mcdc_sim_create_table(t.sim, "dbo.k", "id INT NOT NULL, a ROWVERSION, b TIMESTAMP", "id", NULL, at),
                 MCDC_EINVAL, "Msg 2738: A table can only have one timestamp column. Because table 'k' already has one, "
                 "the column 'b' cannot be added.");
    expect_error(mcdc_sim_ddl(t.sim, "ALTER TABLE dbo.r ADD rv2 ROWVERSION", at), MCDC_EINVAL, "Msg 2738");
    assert_int_equal(0, mcdc_sim_create_table(t.sim, "dbo.p", "id INT NOT NULL", "id", NULL, at));
    simt_exec(&t, NULL, "2025-01-01T00:00:07", "INSERT INTO dbo.p VALUES (1), (2)");
    assert_int_equal(0, mcdc_sim_ddl(t.sim, "ALTER TABLE dbo.p ADD v TIMESTAMP NOT NULL", T("2025-01-01T00:00:08")));
    ASSERT_Q(&t, "SELECT * FROM dbo.p ORDER BY id",
             "{\"id\":1,\"v\":\"0x00000000000007D5\"}\n{\"id\":2,\"v\":\"0x00000000000007D6\"}\n");
    /* a workload writes bytes into image and leaves the stamps to the database: every row's
     * rowversion is unique and the latest is the counter's last value */
    mcdc_sim_workload_options o = MCDC_SIM_WORKLOAD_OPTIONS_INIT;
    mcdc_sim_workload_result wr;
    o.table = "dbo.r";
    o.transactions = 50;
    o.seed = 7;
    o.start_us = T("2025-01-01T00:00:10");
    assert_int_equal(0, mcdc_sim_workload(t.sim, &o, &wr));
    ASSERT_Q(&t, "SELECT count(*) = count(DISTINCT rv) AS uniq, count(*) > 3 AND count(img) > 0 AS some FROM dbo.r",
             "{\"uniq\":1,\"some\":1}\n");
    char want[64];
    snprintf(want, sizeof want, "{\"hi\":\"0x%016llX\"}\n", 0x7D6ULL + (unsigned long long)(wr.n_inserts + wr.n_updates));
    ASSERT_Q(&t, "SELECT max(rv) AS hi FROM dbo.r", want);
    simt_close(&t);
}

static void test_source_sim__workload_is_deterministic(void **state)
{
    (void)state;
    char *dumps[2];
    for (int k = 0; k < 2; k++) {
        simt t;
        simt_open(&t, NULL);
        simt_orders(&t, "2025-01-01T00:00:00");
        mcdc_sim_workload_options o = MCDC_SIM_WORKLOAD_OPTIONS_INIT;
        mcdc_sim_workload_result r;
        o.table = "dbo.orders";
        o.transactions = 3000;
        o.seed = 42;
        o.rows_per_transaction = 3;
        o.start_us = T("2025-01-01T00:00:01");
        assert_int_equal(0, mcdc_sim_workload(t.sim, &o, &r));
        assert_int_equal(3000, r.n_transactions);
        assert_int_equal(9000, r.n_inserts + r.n_updates + r.n_deletes);
        assert_true(r.n_scans > 0);
        mcdc_buf b = MCDC_BUF_INIT(1 << 28);
        char *s = dump_all(&t);
        mcdc_buf_puts(&b, s);
        free(s);
        s = Q(&t, "SELECT * FROM cdc.lsn_time_mapping ORDER BY start_lsn");
        mcdc_buf_puts(&b, s);
        free(s);
        dumps[k] = mcdc_buf_detach(&b);
        simt_close(&t);
    }
    assert_true(strlen(dumps[0]) > 100000);
    assert_string_equal(dumps[0], dumps[1]);
    free(dumps[0]);
    free(dumps[1]);
}

static void test_source_sim__query_is_read_only(void **state)
{
    (void)state;
    simt t;
    simt_open(&t, NULL);
    simt_orders(&t, "2025-01-01T10:00:00");
    mcdc_buf b = MCDC_BUF_INIT(1 << 20);
    expect_error(mcdc_sim_query(t.sim, "DELETE FROM dbo.orders", dump_row, &b), MCDC_EINVAL, "query refused");
    expect_error(mcdc_sim_query(t.sim, "SELECT 1; SELECT 2", dump_row, &b), MCDC_EINVAL, "one read-only SELECT");
    expect_error(mcdc_sim_query(t.sim, "SELECT * FROM dbo.nope", dump_row, &b), MCDC_EINVAL, "no such table");
    mcdc_buf_dispose(&b);
    simt_capture(&t, "2025-01-01T10:00:01", 0);
    char exp[512];
    snprintf(exp, sizeof exp, "{\"capture_instance\":\"dbo_orders\",\"start_lsn\":\"%s\",\"create_date\":\"2025-01-01T10:00:00.000000\"}\n",
             L("2025-01-01T10:00:00", 2));
    ASSERT_Q(&t, "SELECT capture_instance, start_lsn, create_date FROM [cdc].[change_tables]", exp);
    ASSERT_Q(&t, "SELECT column_name, column_ordinal, column_type FROM cdc.captured_columns ORDER BY column_ordinal",
             "{\"column_name\":\"order_id\",\"column_ordinal\":1,\"column_type\":\"int\"}\n"
             "{\"column_name\":\"customer\",\"column_ordinal\":2,\"column_type\":\"nvarchar(40)\"}\n"
             "{\"column_name\":\"amount\",\"column_ordinal\":3,\"column_type\":\"decimal(12,2)\"}\n"
             "{\"column_name\":\"placed_at\",\"column_ordinal\":4,\"column_type\":\"datetime2(3)\"}\n");
    simt_close(&t);
}

/* Stored dates and times in the simulator's own form are parsed at fixed places; every
 * variation (each field's digits, separators, fraction lengths, invalid fields) gives what the
 * general parser gives (reached here through a leading space, which it skips). */
static void test_source_sim__stored_times_parse_as_the_general_parser_does(void **state)
{
    (void)state;
    static const char *const base[] = {"2026-09-17 06:33:16.336", "2026-09-17 06:33:16", "2026-09-17T06:33:16.1234567",
                                       "0001-01-01 00:00:00.0", "9999-12-31 23:59:59.9999999", "2024-02-29 12:00:00.5",
                                       "2023-02-29 12:00:00", "2026-13-01 00:00:00", "2026-00-10 00:00:00", "2026-04-31 00:00:00",
                                       "2026-09-17 24:00:00", "2026-09-17 23:60:00", "2026-09-17 23:59:60", "2026-09-17 06:33:16.",
                                       "2026-09-17 06:33:16.12345678", "2026-09-17 06:33:16.1x3", "2026-09-17 06:33:16+02:00",
                                       "2026-09-17 06:33:16Z", "2026-09-17 06:33", "2026-09-17", "20260917 06:33:16",
                                       "2026-09-17 06:33:16 ", "2026-9-17 06:33:16.000", "2026-09-17x06:33:16.000",
                                       "2026-09-17 06-33-16.000", "2026-09-17 06:33:16,000", "+026-09-17 06:33:16"};
    char sp[64];
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++) {
        for (size_t cut = 0; cut <= strlen(base[i]); cut++) { /* and every prefix */
            const char *s = base[i];
            int64_t t1 = -1, t2 = -2;
            bool o1 = true, o2 = false;
            int m1 = 7, m2 = 8, f1 = 9, f2 = 10;
            int r1 = sim_parse_dt(s, cut, &t1, &o1, &m1, &f1);
            snprintf(sp, sizeof sp, " %.*s", (int)cut, s);
            int r2 = sim_parse_dt(sp, cut + 1, &t2, &o2, &m2, &f2);
            if (r1 != r2 || (r1 == 0 && (t1 != t2 || o1 != o2 || m1 != m2 || f1 != f2)))
                fail_msg("'%.*s': rc %d/%d ticks %lld/%lld offset %d/%d frac %d/%d", (int)cut, s, r1, r2, (long long)t1,
                         (long long)t2, m1, m2, f1, f2);
        }
    }
    int64_t t;
    bool o;
    int m, f;
    assert_int_equal(sim_parse_dt("2026-09-17 06:33:16.336", 23, &t, &o, &m, &f), 0);
    assert_int_equal(t, (INT64_C(20713) * 86400 + 6 * 3600 + 33 * 60 + 16) * 10000000 + 3360000);
    assert_int_equal(f, 3);
    assert_false(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_source_sim__insert_update_delete_rows_masks_and_lsns),
        cmocka_unit_test(test_source_sim__stored_times_parse_as_the_general_parser_does),
        cmocka_unit_test(test_source_sim__key_update_is_delete_then_insert),
        cmocka_unit_test(test_source_sim__interleaved_transactions_interleave_in_seqval),
        cmocka_unit_test(test_source_sim__partial_scans_and_visibility),
        cmocka_unit_test(test_source_sim__idle_entries_when_quiet),
        cmocka_unit_test(test_source_sim__sql_server_value_semantics),
        cmocka_unit_test(test_source_sim__bad_input_is_refused_and_changes_nothing),
        cmocka_unit_test(test_source_sim__rowversion_is_stamped_and_image_is_a_lob),
        cmocka_unit_test(test_source_sim__workload_is_deterministic),
        cmocka_unit_test(test_source_sim__query_is_read_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
