-- sql/heartbeat.sql: the optional heartbeat for mssql-cdc, run by a DBA in the source
-- database (sqlcmd -d shop -i sql/heartbeat.sql). Idempotent: run it again and nothing
-- changes; what is already there is kept.
--
-- On a quiet database CDC capture writes an idle entry to cdc.lsn_time_mapping about every
-- 5 minutes, so sys.fn_cdc_get_max_lsn(), and with it every table's verdict, can trail
-- real time by 5 minutes. This script adds a one-row table with CDC enabled and an Agent
-- job that updates it every 10 s: each update is a captured commit, so max_lsn moves every
-- 10 s. Cost: 8,640 updates a day (17,280 change rows, removed by the cleanup job with the
-- rest). mssql-cdc never writes to it; `run --config` leaves its capture instance,
-- dbo_cdc_heartbeat, out of include patterns unless a table names it.
--
-- Needs: db_owner in this database (CDC), SQLAgentOperatorRole or sysadmin in msdb (the job),
-- SQL Server Agent running. Measured effect: docs/guides/finalization.md.
SET NOCOUNT ON;
SET XACT_ABORT ON;

IF OBJECT_ID(N'dbo.cdc_heartbeat', N'U') IS NULL
    CREATE TABLE dbo.cdc_heartbeat (id TINYINT NOT NULL CONSTRAINT PK_cdc_heartbeat PRIMARY KEY, beat_at DATETIME2(3) NOT NULL);

IF NOT EXISTS (SELECT 1 FROM dbo.cdc_heartbeat WHERE id = 1)
    INSERT INTO dbo.cdc_heartbeat (id, beat_at) VALUES (1, SYSUTCDATETIME());

IF NOT EXISTS (SELECT 1 FROM sys.databases WHERE database_id = DB_ID() AND is_cdc_enabled = 1)
    EXEC sys.sp_cdc_enable_db;

IF NOT EXISTS (SELECT 1 FROM sys.tables WHERE object_id = OBJECT_ID(N'dbo.cdc_heartbeat') AND is_tracked_by_cdc = 1)
    EXEC sys.sp_cdc_enable_table
        @source_schema = N'dbo',
        @source_name = N'cdc_heartbeat',
        @capture_instance = N'dbo_cdc_heartbeat',
        @role_name = NULL,
        @supports_net_changes = 0;

DECLARE @db sysname = DB_NAME();
DECLARE @job sysname = N'cdc_heartbeat_' + @db;
DECLARE @step nvarchar(200) = N'UPDATE dbo.cdc_heartbeat SET beat_at = SYSUTCDATETIME() WHERE id = 1;';

IF NOT EXISTS (SELECT 1 FROM msdb.dbo.sysjobs WHERE name = @job)
BEGIN
    EXEC msdb.dbo.sp_add_job
        @job_name = @job,
        @description = N'mssql-cdc heartbeat: a captured update every 10 s, so max_lsn moves on a quiet database (sql/heartbeat.sql)';
    EXEC msdb.dbo.sp_add_jobstep
        @job_name = @job,
        @step_name = N'beat',
        @subsystem = N'TSQL',
        @database_name = @db,
        @command = @step;
    -- every day (freq_type 4, interval 1), every 10 seconds (subday type 2 = seconds)
    EXEC msdb.dbo.sp_add_jobschedule
        @job_name = @job,
        @name = @job,
        @freq_type = 4, @freq_interval = 1,
        @freq_subday_type = 2, @freq_subday_interval = 10;
    EXEC msdb.dbo.sp_add_jobserver @job_name = @job;
END;

SELECT @job AS job_name, capture_instance, start_lsn
FROM cdc.change_tables
WHERE capture_instance = N'dbo_cdc_heartbeat';
