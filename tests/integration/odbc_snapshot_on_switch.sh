# The --snapshot-on-switch history of snapshot_on_switch.sh through the SQL Server source:
# odbc: over `mssql-cdc sim serve` (the switch, then the partial backfill of every key by
# key_at, key_count and the source-table read over TDS), with the same outcomes.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"
start_source() { serve_start; STREAM_SRC=$SRC; }
. "$(dirname "$0")/snapshot_on_switch_body.bash"
