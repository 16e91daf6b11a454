# The capture-instance switch history of stream_ci_switch.sh through the SQL Server source:
# odbc: over `mssql-cdc sim serve` (sys.sp_cdc_help_change_data_capture for the instances
# and their start LSNs, the two change tables over TDS), with the same outcomes.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"
start_source() { serve_start; STREAM_SRC=$SRC; }
. "$(dirname "$0")/ci_switch_body.bash"
