/*
 * source/mssql/statements.c: the T-SQL the SQL Server source sends (see statements.h).
 *
 * Every statement is read-only: mssql-cdc never writes to the source. The permissions are
 * the least-privilege model of the original design (anchor-features §4.3): SELECT on the
 * source table and on cdc.[<ci>_CT] (and membership in the instance's gating role, if it has
 * one), nothing else. No statement below needs a grant of its own, but SQL Server's CDC
 * security model shows a capture instance's metadata (the sp_cdc_* procedures, min_lsn) only
 * to a login that can SELECT the source table's captured columns. Changing a statement
 * changes what DBAs were told: update docs/reference/sqlserver-queries.md in the same commit
 * (a unit test compares them).
 */
#include <stdio.h>
#include <string.h>

#include "source/mssql/statements.h"

#define NO_GRANT "none (public)"
#define CT_GRANT "SELECT on cdc.[<ci>_CT] (GRANT SELECT ON cdc.[<ci>_CT] TO <login>)"
#define SOURCE_GATE "none of its own; answers 0x00000000000000000000 to a login without SELECT on the source table's " \
    "captured columns (and membership in the instance's gating role, if it has one)"

static const mcdc_mssql_statement statements[MCDC_MSSQL_Q_COUNT] = {
    [MCDC_MSSQL_Q_SERVER_INFO] = {
        "server_info",
        "SELECT CAST(SERVERPROPERTY('ProductVersion') AS nvarchar(128)),"
        " CAST(SERVERPROPERTY('ProductMajorVersion') AS int),"
        " CAST(SERVERPROPERTY('EngineEdition') AS int),"
        " CAST(SERVERPROPERTY('Edition') AS nvarchar(128)),"
        " DB_NAME(), SUSER_SNAME()",
        "",
        "SERVERPROPERTY, DB_NAME, SUSER_SNAME",
        NO_GRANT,
        "Once per connection: the version decides how the time zone is read (CURRENT_TIMEZONE_ID exists "
        "from SQL Server 2022, major version 16, and on Azure SQL, engine editions 5 and 8); source check "
        "prints all of it.",
    },
    [MCDC_MSSQL_Q_DATABASE_CDC] = {
        "database_cdc",
        "SELECT is_cdc_enabled FROM sys.databases WHERE database_id = DB_ID()",
        "",
        "sys.databases",
        NO_GRANT,
        "source check: is CDC enabled on the database (sys.sp_cdc_enable_db).",
    },
    [MCDC_MSSQL_Q_IDENTITY] = {
        "identity",
        "SELECT @@SERVERNAME, DB_NAME(), (SELECT CAST(database_guid AS nvarchar(36))"
        " FROM sys.database_recovery_status WHERE database_id = DB_ID())",
        "",
        "@@SERVERNAME, DB_NAME, sys.database_recovery_status",
        NO_GRANT,
        "Once per stream start: the source's identity, which bronze records (mcdc.source.server, "
        "mcdc.source.database, mcdc.source.database_guid) so that a stream never writes into another "
        "database's bronze and finalization cut never joins tables of two databases. The GUID row is "
        "visible only to the database's owner or a login with VIEW ANY DATABASE; without it the GUID is "
        "NULL and only the server and database names are recorded and compared.",
    },
    [MCDC_MSSQL_Q_IDENTITY_AZURE] = {
        "identity_azure",
        "SELECT @@SERVERNAME, DB_NAME()",
        "",
        "@@SERVERNAME, DB_NAME",
        NO_GRANT,
        "identity on Azure SQL Database (engine edition 5), which has no sys.database_recovery_status: "
        "the server and database names only.",
    },
    [MCDC_MSSQL_Q_TIME_ZONE_ID] = {
        "time_zone_id",
        "SELECT CURRENT_TIMEZONE_ID()",
        "",
        "CURRENT_TIMEZONE_ID",
        NO_GRANT,
        "Once per connection on SQL Server 2022+ and Azure SQL: the server's Windows time zone, in which "
        "tran_end_time is written (mapped to an IANA zone with core's CLDR table). Older servers give only "
        "the offset of server_now.",
    },
    [MCDC_MSSQL_Q_SERVER_NOW] = {
        "server_now",
        "SELECT SYSUTCDATETIME(), DATEPART(TZOFFSET, SYSDATETIMEOFFSET())",
        "",
        "SYSUTCDATETIME, SYSDATETIMEOFFSET",
        NO_GRANT,
        "The server's clock, against which lags and freshness are measured, and its UTC offset now, "
        "compared with the offset the time zone gives (a difference is a warning; the server's wins).",
    },
    [MCDC_MSSQL_Q_MAX_LSN] = {
        "max_lsn",
        "SELECT sys.fn_cdc_get_max_lsn(), SYSUTCDATETIME(), DATEPART(TZOFFSET, SYSDATETIMEOFFSET())",
        "",
        "sys.fn_cdc_get_max_lsn, SYSUTCDATETIME, SYSDATETIMEOFFSET",
        NO_GRANT,
        "Every batch and every idle poll: the highest LSN capture has processed (NULL before the first "
        "capture, read as zero); a batch never reads past it. With it, the server's clock and UTC offset "
        "now, compared with the offset its time zone gives at that instant: a difference (Windows and IANA "
        "rules diverge) is a warning in the log and in the batch's facts row, and the batch's commit times "
        "are converted with the server's offset.",
    },
    [MCDC_MSSQL_Q_MIN_LSN] = {
        "min_lsn",
        "SELECT sys.fn_cdc_get_min_lsn(?)",
        "nvarchar(128)",
        "sys.fn_cdc_get_min_lsn",
        SOURCE_GATE,
        "Before and after every read (the data-loss guard): the lowest LSN cleanup left for the capture "
        "instance; 0x00000000000000000000 until capture processed the enable.",
    },
    [MCDC_MSSQL_Q_COMMIT_TIME] = {
        "commit_time",
        "SELECT tran_end_time FROM cdc.lsn_time_mapping WHERE start_lsn = ?",
        "binary(10)",
        "cdc.lsn_time_mapping",
        NO_GRANT,
        "The commit time (server clock) of a batch's end and of min_lsn: the offsets and facts record it.",
    },
    [MCDC_MSSQL_Q_MAPPING_FIRST_AFTER] = {
        "mapping_first_after",
        "SELECT TOP (1) start_lsn, tran_end_time FROM cdc.lsn_time_mapping WHERE start_lsn > ? ORDER BY start_lsn",
        "binary(10)",
        "cdc.lsn_time_mapping",
        NO_GRANT,
        "Near a fall-back change of the server's zone only: the first commit of a range, to find the commit "
        "three hours earlier from which commit times are sequenced.",
    },
    [MCDC_MSSQL_Q_MAPPING_SEED] = {
        "mapping_seed",
        "SELECT TOP (1) start_lsn FROM cdc.lsn_time_mapping WHERE start_lsn <= ? AND tran_end_time <= ?"
        " ORDER BY start_lsn DESC",
        "binary(10), datetime2(3)",
        "cdc.lsn_time_mapping",
        NO_GRANT,
        "Near a fall-back change only: the last commit at least three hours before a range (the sequencer's "
        "starting point).",
    },
    [MCDC_MSSQL_Q_COMMIT_AT_OR_BEFORE] = {
        "commit_at_or_before",
        "SELECT TOP (1) start_lsn, tran_end_time FROM cdc.lsn_time_mapping WHERE start_lsn <= ? ORDER BY start_lsn DESC",
        "binary(10)",
        "cdc.lsn_time_mapping",
        NO_GRANT,
        "Only in a batch whose range holds DDL: the last commit at or before each DDL's LSN (a DDL LSN is no "
        "commit's), whose time the schema_change facts row records.",
    },
    [MCDC_MSSQL_Q_MAPPING_RANGE] = {
        "mapping_range",
        "SELECT start_lsn, tran_end_time FROM cdc.lsn_time_mapping WHERE start_lsn > ? AND start_lsn <= ?"
        " ORDER BY start_lsn",
        "binary(10), binary(10)",
        "cdc.lsn_time_mapping",
        NO_GRANT,
        "Each page of a read: its commits in LSN order with their times, which the page's change rows take "
        "(cheaper for the server than joining every change row to the mapping); near a fall-back change, "
        "also every commit from a few hours before, so a repeated local hour is read with the right offset "
        "(a commit reading more than a minute earlier than its predecessor starts the second pass). With "
        "numPartitions=N, a page read on its own connection also reads the commit it starts after, the "
        "predecessor of its first.",
    },
    [MCDC_MSSQL_Q_NTH_COMMIT] = {
        "nth_commit",
        "SELECT COUNT_BIG(*), MAX(start_lsn) FROM (SELECT TOP (?) start_lsn FROM cdc.lsn_time_mapping"
        " WHERE start_lsn > ? ORDER BY start_lsn) AS t",
        "bigint, binary(10)",
        "cdc.lsn_time_mapping",
        NO_GRANT,
        "With --max-commits-per-batch: where a batch of at most N commits (database-wide, idle entries "
        "included) ends.",
    },
    [MCDC_MSSQL_Q_CAPTURE_INSTANCES] = {
        "capture_instances",
        "EXEC sys.sp_cdc_help_change_data_capture",
        "",
        "sys.sp_cdc_help_change_data_capture (cdc.change_tables, cdc.index_columns)",
        "SELECT on the captured columns of each listed instance's source table, and membership in its gating "
        "role if it has one (instances the login cannot read are left out)",
        "At start and when a capture instance is not found: the instances, their tables, start_lsn, "
        "create_date and unique index (index_column_list).",
    },
    [MCDC_MSSQL_Q_CAPTURE_INSTANCES_OF] = {
        "capture_instances_of",
        "EXEC sys.sp_cdc_help_change_data_capture @source_schema = ?, @source_name = ?",
        "nvarchar(128), nvarchar(128)",
        "sys.sp_cdc_help_change_data_capture",
        "SELECT on the captured columns of the table",
        "Every batch with schema-change detection: the instances of the stream's table (a second instance "
        "means a switch).",
    },
    [MCDC_MSSQL_Q_CAPTURED_COLUMNS] = {
        "captured_columns",
        "EXEC sys.sp_cdc_get_captured_columns @capture_instance = ?",
        "nvarchar(128)",
        "sys.sp_cdc_get_captured_columns (cdc.captured_columns)",
        "SELECT on the captured columns of the source table",
        "At start and with schema-change detection: the captured columns and their types (mapped as "
        "docs/guides/sqlserver.md says; an unmapped type is refused naming the column).",
    },
    [MCDC_MSSQL_Q_SOURCE_COLUMNS] = {
        "source_columns",
        "SELECT name, column_id, is_nullable, is_computed, collation_name FROM sys.columns"
        " WHERE object_id = OBJECT_ID(?) ORDER BY column_id",
        "nvarchar(300)",
        "sys.columns, OBJECT_ID",
        "none beyond SELECT on the source table (sys.columns shows the columns of tables the login can read)",
        "With captured_columns: nullability, computed columns (left out with a warning), which captured "
        "columns were dropped from the table (read as typed NULL in snapshots), and the collation of char "
        "and varchar columns (in a code page 1252 collation their bytes are decoded by mssql-cdc).",
    },
    [MCDC_MSSQL_Q_DDL_HISTORY] = {
        "ddl_history",
        "EXEC sys.sp_cdc_get_ddl_history @capture_instance = ?",
        "nvarchar(128)",
        "sys.sp_cdc_get_ddl_history (cdc.ddl_history)",
        "SELECT on the captured columns of the source table",
        "Every batch with schema-change detection: the DDL applied to the table (filtered to the batch's "
        "range by mssql-cdc).",
    },
    [MCDC_MSSQL_Q_HAS_SELECT] = {
        "has_select",
        "SELECT HAS_PERMS_BY_NAME(?, 'OBJECT', 'SELECT')",
        "nvarchar(300)",
        "HAS_PERMS_BY_NAME",
        NO_GRANT,
        "At start and in source check, for the change table and the source table: a missing grant is named "
        "with the GRANT that fixes it, before any read fails half-way.",
    },
    [MCDC_MSSQL_Q_PAGE_END] = {
        "page_end",
        "SELECT ISNULL((SELECT __$start_lsn FROM {ct} WHERE __$start_lsn > ? AND __$start_lsn <= ? ORDER BY __$start_lsn"
        " OFFSET ? ROWS FETCH NEXT 1 ROWS ONLY), (SELECT TOP (1) __$start_lsn FROM {ct} WHERE __$start_lsn > ?"
        " AND __$start_lsn <= ? ORDER BY __$start_lsn DESC))",
        "binary(10), binary(10), bigint, binary(10), binary(10)",
        "cdc.[<ci>_CT]",
        CT_GRANT,
        "Each page of a read: the commit LSN at which a page of about N rows ends, the N-th row's (a page "
        "holds whole transactions, so a batch is read in pages without holding it in memory), or the last "
        "row's when fewer are left (NULL: none). The offset is N - 1; an ordered seek on the change table's "
        "clustered index that skips N - 1 rows, or, when fewer are left, one backward seek for the last. "
        "The page's commits and their times then come from mapping_range. ISNULL, not COALESCE: SQL Server "
        "rewrites COALESCE as a CASE that evaluates a subquery argument twice, the seek included.",
    },
    [MCDC_MSSQL_Q_CHANGES] = {
        "changes",
        "SELECT c.__$start_lsn, c.__$seqval, c.__$operation, c.__$update_mask, c.__$command_id{cols}"
        " FROM {ct} AS c WHERE c.__$start_lsn > ? AND c.__$start_lsn <= ?"
        " ORDER BY c.__$start_lsn, c.__$command_id, c.__$seqval, c.__$operation",
        "binary(10), binary(10)",
        "cdc.[<ci>_CT]",
        CT_GRANT,
        "Each page of a read: the change rows of (after, end], in commit order (their commit times from the "
        "page's mapping_range). The change table is read directly (not through cdc.fn_cdc_get_all_changes_<ci>, which raises "
        "Msg 313 on a purged range and leaves out __$command_id on SQL Server 2022).",
    },
    [MCDC_MSSQL_Q_SET_SNAPSHOT] = {
        "set_snapshot",
        "SET TRANSACTION ISOLATION LEVEL SNAPSHOT",
        "",
        "",
        "ALLOW_SNAPSHOT_ISOLATION ON for the database (ALTER DATABASE ... SET ALLOW_SNAPSHOT_ISOLATION ON)",
        "Before a snapshot read of the source table with isolationLevel=snapshot.",
    },
    [MCDC_MSSQL_Q_SET_READ_COMMITTED] = {
        "set_read_committed",
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
        "",
        "",
        NO_GRANT,
        "After a snapshot read with isolationLevel=snapshot, and on every new connection.",
    },
    [MCDC_MSSQL_Q_SET_LOCK_TIMEOUT] = {
        "set_lock_timeout",
        "SET LOCK_TIMEOUT {n}",
        "",
        "",
        NO_GRANT,
        "Before a snapshot read with lockTimeoutMs=N (-1, waiting forever, after it).",
    },
    [MCDC_MSSQL_Q_SNAPSHOT] = {
        "snapshot",
        "SELECT {list} FROM {table}{where} ORDER BY {keys}",
        "the key columns' types, twice per bound",
        "the source table",
        "SELECT on the source table (GRANT SELECT ON <schema>.<table> TO <login>), or on its captured and key "
        "columns",
        "Bootstrap and backfill: the current rows of the table in key order, within a half-open key range "
        "(lo <= key < hi).",
    },
    [MCDC_MSSQL_Q_KEY_AT] = {
        "key_at",
        "SELECT {list} FROM {table}{where} ORDER BY {keys} OFFSET {n} ROWS FETCH NEXT 1 ROWS ONLY",
        "the key columns' types, for the starting key",
        "the source table",
        "SELECT on the source table (GRANT SELECT ON <schema>.<table> TO <login>), or on its captured and key "
        "columns",
        "Backfill's chunk planning: the key of the row N places after a starting key in key order (the "
        "starting key included; ORDER BY ... DESC for the last key), one index seek and a walk of N index "
        "entries. Read-only, read committed.",
    },
    [MCDC_MSSQL_Q_KEY_COUNT] = {
        "key_count",
        "SELECT COUNT_BIG(*) FROM {table}{where}",
        "the key columns' types, per bound",
        "the source table",
        "SELECT on the source table (GRANT SELECT ON <schema>.<table> TO <login>), or on its key columns",
        "Backfill's chunk planning: the number of rows within a half-open key range (lo <= key < hi), as a "
        "snapshot would read them, counted on the key index. Read-only, read committed.",
    },
    [MCDC_MSSQL_Q_KEY_BUCKETS] = {
        "key_buckets",
        "SELECT b, COUNT_BIG(*), SUM(CAST(k AS decimal(38,0))), MIN(k), MAX(k) FROM (SELECT {bucket} AS b, k FROM"
        " (SELECT {key} AS k FROM {table}{where}) AS r) AS t GROUP BY b ORDER BY b",
        "",
        "the source table",
        "SELECT on the source table (GRANT SELECT ON <schema>.<table> TO <login>), or on its key columns",
        "reconcile's tier 1: per key bucket, the rows and the sum of their keys, in one grouped query over the "
        "key columns (never NOLOCK). A single integer or date key is summed by its ordinal (CAST(k AS bigint), "
        "DATEDIFF(day, '1970-01-01', k); NULL keys left out) and bucketed by floor((ordinal - origin) / width)"
        ". Any other key is summed by its key hash, CONVERT(bigint, SUBSTRING(HASHBYTES('SHA2_256', t), 1, 7)) "
        "over its key text t (per column N'-;' for NULL, else the UTF-16 length, ':', the column as "
        "nvarchar and ';'), and bucketed by hash % buckets. Read-only, read committed.",
    },
    [MCDC_MSSQL_Q_CONSISTENT_LSN] = {
        "consistent_lsn",
        "SELECT sys.fn_cdc_map_time_to_lsn('largest less than or equal', SYSDATETIME())",
        "",
        "sys.fn_cdc_map_time_to_lsn (cdc.lsn_time_mapping), SYSDATETIME",
        NO_GRANT,
        "After each snapshot read (a backfill's chunk, a full bootstrap): the largest commit LSN at or before "
        "the server's time when the read ended, recorded as the read's consistent_lsn (a row read may be newer "
        "than the LSN stamped before the read). NULL before the first capture, read as zero.",
    },
    [MCDC_MSSQL_Q_TIME_TO_LSN] = {
        "time_to_lsn",
        "SELECT sys.fn_cdc_map_time_to_lsn('largest less than or equal', ?)",
        "datetime2(3)",
        "sys.fn_cdc_map_time_to_lsn (cdc.lsn_time_mapping)",
        NO_GRANT,
        "seed --as-of TIME: the largest commit LSN at or before that time (given in the server's clock), "
        "which the seeded rows are stamped with. NULL when no commit that old is mapped (read as zero).",
    },
    [MCDC_MSSQL_Q_POSITIONS] = {
        "positions",
        "SELECT x.max_lsn, mx.tran_end_time, x.min_lsn, mn.tran_end_time, a1.tran_end_time, a2.tran_end_time,"
        " a3.tran_end_time, a4.tran_end_time, SYSUTCDATETIME(), DATEPART(TZOFFSET, SYSDATETIMEOFFSET())"
        " FROM (SELECT sys.fn_cdc_get_max_lsn() AS max_lsn, sys.fn_cdc_get_min_lsn(?) AS min_lsn) AS x"
        " LEFT JOIN cdc.lsn_time_mapping AS mx ON mx.start_lsn = x.max_lsn"
        " LEFT JOIN cdc.lsn_time_mapping AS mn ON mn.start_lsn = x.min_lsn"
        " LEFT JOIN cdc.lsn_time_mapping AS a1 ON a1.start_lsn = ?"
        " LEFT JOIN cdc.lsn_time_mapping AS a2 ON a2.start_lsn = ?"
        " LEFT JOIN cdc.lsn_time_mapping AS a3 ON a3.start_lsn = ?"
        " LEFT JOIN cdc.lsn_time_mapping AS a4 ON a4.start_lsn = ?",
        "nvarchar(128), binary(10), binary(10), binary(10), binary(10)",
        "sys.fn_cdc_get_max_lsn, sys.fn_cdc_get_min_lsn, cdc.lsn_time_mapping, SYSUTCDATETIME, SYSDATETIMEOFFSET",
        "none of its own; min_lsn is 0x00000000000000000000 to a login without SELECT on the source table's "
        "captured columns (and membership in the instance's gating role, if it has one)",
        "Twice a batch, in place of max_lsn, min_lsn, commit_time and server_now one by one: once planned "
        "(min_lsn for the data-loss guard, the commit times of max_lsn, of the position the batch resumes "
        "from and of its end) and once after the read (min_lsn again, a purge between pages; its commit "
        "time, the retention watermark; max_lsn and its commit time; the server's clock and UTC offset). "
        "Unused LSN parameters are 0x00000000000000000000, which no mapping entry has.",
    },
};

const mcdc_mssql_statement *mcdc_mssql_statement_get(mcdc_mssql_query q)
{
    if ((int)q < 0 || q >= MCDC_MSSQL_Q_COUNT) return NULL;
    return &statements[q];
}

int mcdc_mssql_statement_render(mcdc_buf *out, mcdc_mssql_query q, const mcdc_mssql_fill *fill)
{
    const mcdc_mssql_statement *st = mcdc_mssql_statement_get(q);
    if (!st) return mcdc_error_set(MCDC_EINVAL, "no statement %d", (int)q);
    static const mcdc_mssql_fill none = { 0 };
    if (!fill) fill = &none;
    int rc = 0;
    for (const char *p = st->sql; rc == 0 && *p;) {
        const char *open = strchr(p, '{');
        if (!open) {
            rc = mcdc_buf_puts(out, p);
            break;
        }
        rc = mcdc_buf_put(out, p, (size_t)(open - p));
        const char *close = strchr(open, '}');
        size_t n = (size_t)(close - open - 1);
        const char *v = NULL;
        char num[24];
        if (n == 2 && !strncmp(open + 1, "ct", 2)) v = fill->ct;
        else if (n == 4 && !strncmp(open + 1, "cols", 4)) v = fill->cols;
        else if (n == 4 && !strncmp(open + 1, "list", 4)) v = fill->list;
        else if (n == 5 && !strncmp(open + 1, "table", 5)) v = fill->table;
        else if (n == 5 && !strncmp(open + 1, "where", 5)) v = fill->where;
        else if (n == 4 && !strncmp(open + 1, "keys", 4)) v = fill->keys;
        else if (n == 3 && !strncmp(open + 1, "key", 3)) v = fill->key;
        else if (n == 6 && !strncmp(open + 1, "bucket", 6)) v = fill->bucket;
        else if (n == 1 && open[1] == 'n') {
            snprintf(num, sizeof num, "%lld", (long long)fill->n);
            v = num;
        }
        if (!v) return mcdc_error_set(MCDC_EINVAL, "statement %s: {%.*s} not given", st->name, (int)n, open + 1);
        if (rc == 0) rc = mcdc_buf_puts(out, v);
        p = close + 1;
    }
    return rc;
}

int mcdc_mssql_statement_example(mcdc_buf *out, mcdc_mssql_query q)
{
    const mcdc_mssql_fill fill = {
        .ct = "[cdc].[dbo_orders_CT]",
        .cols = ", c.[order_id], c.[amount]",
        .list = "[order_id], [amount]",
        .table = "[dbo].[orders]",
        .where = " WHERE [order_id] >= ? AND [order_id] < ?",
        .keys = "[order_id]",
        .key = "CAST([order_id] AS bigint)",
        .bucket = "(k - 1 - ((k - 1) % 1000 + 1000) % 1000) / 1000",
        .n = 5000,
    };
    return mcdc_mssql_statement_render(out, q, &fill);
}
