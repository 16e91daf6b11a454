# A full --bootstrap records its consistent_lsn (the newest commit at or before the server's
# clock right after the read: no row read is newer) in the bootstrap row's detail and in its
# bronze commit's userMetadata, and a rerun that finds the snapshot in bronze writes the same.
source "$MCDC_SRC/tests/integration/stream_lib.bash"

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'a'), (2, N'b')"
sim_capture 2026-10-01T14:00:30
MAX=$(M sim query "$DB" 'SELECT MAX(start_lsn) AS l FROM cdc.lsn_time_mapping' --format csv | tail -1)
ST() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --checkpoint "$T/ck" --facts ops.facts --bootstrap "$@"; }
set +e; MCDC_FAILPOINT=stream.bootstrap.after_snapshot ST >/dev/null 2>&1; rc=$?; set -e
[ $rc = 137 ] || die "not killed after the snapshot (exit $rc)"
ST >/dev/null 2>"$T/err" || die "stream --bootstrap: $(cat "$T/err")"
row=$(M table cat ops.facts --format csv --columns event,rows,detail | grep '^bootstrap,')
[ "$row" = "bootstrap,2,\"{\"\"consistent_lsn\"\":\"\"$MAX\"\"}\"" ] || die "bootstrap row: $row (want $MAX)"
M table history bronze.o --format jsonl | grep -q "consistent_lsn.*$MAX" ||
  die "the snapshot commit's userMetadata has no consistent_lsn: $(M table history bronze.o --format jsonl)"
echo ok
