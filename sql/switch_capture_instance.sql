-- sql/switch_capture_instance.sql: switch a table's CDC to a new capture instance without
-- losing a change, for a DBA, in the source database, with sqlcmd variables. Run it twice:
--
--   sqlcmd -d shop -i sql/switch_capture_instance.sql -v Step=enable Schema=dbo Table=orders ^
--       OldInstance=dbo_orders NewInstance=dbo_orders_v2 Columns="order_id,customer,amount,note" ^
--       Grantee=mssql_cdc_reader
--   ... wait until every stream shows the switch and one more batch (step 4 below) ...
--   sqlcmd -d shop -i sql/switch_capture_instance.sql -v Step=disable Schema=dbo Table=orders ^
--       OldInstance=dbo_orders NewInstance=dbo_orders_v2 Columns="" Grantee=""
--
-- What mssql-cdc does meanwhile (docs/guides/schema-changes.md): every stream of the table
-- reads the old instance below the new one's start LSN S and the new one from S, the
-- batch range cut at S, and writes one capture_instance_switched facts row ("old -> new").
-- Streams keep their --capture-instance (the old name); once the old instance is disabled
-- it resolves through the table to the new one. mssql-cdc never creates or drops
-- instances: that is this script, run by someone with db_owner.
--
-- Steps:
--   1) enable the new instance with its column list (every column mssql-cdc should read,
--      the unique index's columns included), on the old instance's unique index;
--   2) GRANT SELECT on its change table to the streams' login (or role);
--   3) show both instances: the new one's start_lsn, and min_lsn (0x00 until the capture
--      job has processed the enable: a few seconds, up to ~5 minutes on a quiet database);
--   4) (not SQL) wait until every stream of the table has a capture_instance_switched row
--      and one more batch after it: in
--        mssql-cdc finalization show --control ops.table_finalization --facts ops.ingestion_facts
--      each of the table's targets shows switched_to = the new instance and
--      last_batch > switched_in_batch (the rows themselves: mssql-cdc table cat
--      ops.ingestion_facts --format csv --columns app_id,batch_id,event,detail);
--   5) disable the old instance (Step=disable refuses while the new one is not captured).
-- Idempotent: an instance already enabled is left as it is; disabling an instance already
-- gone does nothing.
-- sqlcmd: stop at the first error
:on error exit
SET NOCOUNT ON;
SET XACT_ABORT ON;

IF N'$(Step)' NOT IN (N'enable', N'disable')
    THROW 50000, N'switch_capture_instance.sql: pass -v Step=enable or Step=disable', 1;

IF N'$(Step)' = N'enable'
BEGIN
    -- 1) the new instance, on the old one's unique index
    IF NOT EXISTS (SELECT 1 FROM cdc.change_tables WHERE capture_instance = N'$(NewInstance)')
    BEGIN
        DECLARE @index sysname =
            (SELECT index_name FROM cdc.change_tables WHERE capture_instance = N'$(OldInstance)');
        IF @index IS NULL
            THROW 50000, N'capture instance $(OldInstance) not found, or it has no unique index', 1;
        EXEC sys.sp_cdc_enable_table
            @source_schema = N'$(Schema)',
            @source_name = N'$(Table)',
            @capture_instance = N'$(NewInstance)',
            @role_name = NULL,
            @index_name = @index,
            @captured_column_list = N'$(Columns)',
            @supports_net_changes = 0;
    END;

    -- 2) the streams' login reads the new change table
    IF N'$(Grantee)' <> N''
    BEGIN
        DECLARE @grant nvarchar(max) = N'GRANT SELECT ON cdc.' + QUOTENAME(N'$(NewInstance)' + N'_CT')
            + N' TO ' + QUOTENAME(N'$(Grantee)') + N';';
        EXEC sys.sp_executesql @grant;
    END;

    -- 3) both instances; the new one's min_lsn is 0x00 until capture processed the enable
    SELECT capture_instance, start_lsn, create_date,
           sys.fn_cdc_get_min_lsn(capture_instance) AS min_lsn
    FROM cdc.change_tables
    WHERE source_object_id = OBJECT_ID(N'$(Schema).$(Table)')
    ORDER BY create_date;
    PRINT N'next: wait until every stream of $(Schema).$(Table) has a capture_instance_switched '
        + N'facts row and one more batch, then run this script with -v Step=disable';
END;

IF N'$(Step)' = N'disable'
BEGIN
    -- 5) the old instance goes, once the new one is captured
    IF ISNULL(sys.fn_cdc_get_min_lsn(N'$(NewInstance)'), 0x00000000000000000000) = 0x00000000000000000000
        THROW 50000, N'capture instance $(NewInstance) is not captured yet (min_lsn 0x00): wait for the capture job', 1;
    IF EXISTS (SELECT 1 FROM cdc.change_tables WHERE capture_instance = N'$(OldInstance)')
        EXEC sys.sp_cdc_disable_table
            @source_schema = N'$(Schema)',
            @source_name = N'$(Table)',
            @capture_instance = N'$(OldInstance)';
END;
