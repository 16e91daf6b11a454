# A capture-instance switch (docs/guides/schema-changes.md): a column is added to the
# source (not captured by dbo_orders), a second instance dbo_orders_v2 captures it, a
# transaction commits right before the enable. The stream reads dbo_orders below S (v2's
# start LSN) and dbo_orders_v2 from S, the batch range cut at S; a kill -9 right after the
# cut batch's bronze commit and one inside the first v2 batch replay correctly: every
# commit is in bronze exactly once (v1 below S, v2 from S), the capture_instance_switched
# row is written once, silver follows (the new column NULL for rows not touched since).
# The configured instance disabled, the stream goes on through its table's newest one.
# A newer instance without a key column stops the stream at S with exit 5.
. "$(dirname "$0")/stream_lib.bash"
start_source() { STREAM_SRC="sim:$DB"; }
# the DBA's script has the documented steps, in order
sql=$MCDC_SRC/sql/switch_capture_instance.sql
for step in "EXEC sys.sp_cdc_enable_table" "@captured_column_list = N'\$(Columns)'" "GRANT SELECT ON cdc." \
    "sys.fn_cdc_get_min_lsn(capture_instance)" "capture_instance_switched" "EXEC sys.sp_cdc_disable_table"; do
  grep -qF "$step" "$sql" || die "sql/switch_capture_instance.sql lacks: $step"
done
[ "$(grep -nF "EXEC sys.sp_cdc_enable_table" "$sql" | cut -d: -f1)" -lt "$(grep -nF "EXEC sys.sp_cdc_disable_table" "$sql" | cut -d: -f1)" ] || die "disable before enable"
. "$(dirname "$0")/ci_switch_body.bash"
