# The schema-change history of stream_schema_changes.sh through the SQL Server source:
# odbc: over `mssql-cdc sim serve` (sys.sp_cdc_get_ddl_history and
# sys.sp_cdc_get_captured_columns over TDS), with the same outcomes: ADD, DROP, int to
# bigint and decimal(10,2) to decimal(18,2) go on (exit 5 under fail first), varchar to int
# exits 5 before reading; bronze, facts and silver as through sim:.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"
start_source() { serve_start; STREAM_SRC=$SRC; }
. "$(dirname "$0")/schema_changes_body.bash"
echo ok
