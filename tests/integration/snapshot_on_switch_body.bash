# tests/integration/snapshot_on_switch_body.bash: the --snapshot-on-switch history of
# snapshot_on_switch.sh (sim:) and odbc_snapshot_on_switch.sh (odbc: over sim serve), sourced
# after stream_lib.bash by both; start_source sets STREAM_SRC once the database exists.
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, qty INT NULL' >/dev/null
sim_capture 2026-10-01T13:59:30
start_source
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, 5), (2, 6), (3, 7)"
sim_capture 2026-10-01T14:00:05
run() { # run APP [ARGS]: one stream run of bronze.APP with silver.APP
  local app=$1; shift
  M stream --source "$STREAM_SRC" --capture-instance dbo_orders --target "bronze.$app" --app-id "$app" \
    --checkpoint "$T/ck/$app" --facts ops.facts --control ops.control --silver "silver.$app" "$@"
}
set +e
M stream --source "$STREAM_SRC" --capture-instance dbo_orders --target bronze.x --app-id x \
  --checkpoint "$T/ck/x" --snapshot-on-switch >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc = 2 ] || die "--snapshot-on-switch without --facts: exit $rc"
grep -q "needs --facts" "$T/err" || die "the refusal: $(cat "$T/err")"
[ ! -e "$T/ck/x" ] && [ ! -e "$MSSQL_CDC_WAREHOUSE/bronze/x" ] || die "the refused run wrote something"

run s --snapshot-on-switch >/dev/null || die "first run"
run n >/dev/null || die "first run without the flag"
# the new column, filled before the new instance captures it: no change row anywhere
M sim ddl "$DB" --at 2026-10-01T14:01:00 "ALTER TABLE dbo.orders ADD note NVARCHAR(20) NULL" >/dev/null
sim_exec 2026-10-01T14:01:30 "UPDATE dbo.orders SET note = N'n1' WHERE order_id = 1; UPDATE dbo.orders SET note = N'n2' WHERE order_id = 2; UPDATE dbo.orders SET note = N'n3' WHERE order_id = 3"
M sim enable "$DB" --table dbo.orders --capture-instance dbo_orders_v2 --columns order_id,qty,note \
  --at 2026-10-01T14:02:00 >/dev/null
sim_exec 2026-10-01T14:03:00 "INSERT INTO dbo.orders VALUES (4, 8, N'four'); UPDATE dbo.orders SET qty = 70 WHERE order_id = 3"
sim_capture 2026-10-01T14:03:05
M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl > "$T/src.jsonl"
grep -q '"order_id":1,.*"note":"n1"' "$T/src.jsonl" || die "the source lacks the filled column: $(cat "$T/src.jsonl")"

silver_is_source() { # silver_is_source APP
  cat_table "silver.$1" "$T/silver.jsonl"
  node "$MCDC_SRC/tests/integration/silver_check.mjs" silver-vs-source "$T/silver.jsonl" "$T/src.jsonl" >/dev/null 2>&1
}
# without the flag: rows 1 and 2 (not changed since the switch) keep NULL in note
run n >/dev/null || die "the run without the flag"
silver_is_source n && die "without --snapshot-on-switch silver already equals the source (the test proves nothing)"
grep -q '"order_id":1,.*"note":null' "$T/silver.jsonl" || die "without the flag: $(cat "$T/silver.jsonl")"

# with it: killed inside the snapshot's read, then run again
set +e
MCDC_FAILPOINT=backfill.after_data_files@1 run s --snapshot-on-switch >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc = 137 ] || die "no kill inside the snapshot (exit $rc): $(tail -3 "$T/err")"
grep -q "snapshot-on-switch: reading dbo.orders again through dbo_orders_v2" "$T/err" || die "no word of the snapshot: $(cat "$T/err")"
run s --snapshot-on-switch >"$T/out" 2>"$T/err" || die "the rerun: $(cat "$T/err")"
grep -q "snapshot-on-switch: 4 rows of dbo_orders_v2 read into bronze.s" "$T/err" || die "the rerun did not finish the snapshot: $(cat "$T/err")"
silver_is_source s || die "with --snapshot-on-switch silver differs from the source: $(cat "$T/silver.jsonl")"
grep -q '"order_id":2,.*"note":"n2"' "$T/silver.jsonl" || die "silver lacks row 2's note: $(cat "$T/silver.jsonl")"
# bronze: every change once (v1 below S, v2 from S), plus the snapshot's rows (operation 0)
M table cat ops.facts --format jsonl > "$T/facts.jsonl"
[ "$(grep -c '"event":"snapshot_range"' "$T/facts.jsonl")" = 1 ] || die "not one completed snapshot row"
grep -q '"event":"bootstrap"' "$T/facts.jsonl" && die "a bootstrap row was written"
[ "$(M table cat bronze.s --format jsonl | grep -c '"_operation":0')" -ge 4 ] || die "no snapshot rows in bronze"
# once done, a later run reads nothing again
run s --snapshot-on-switch >/dev/null 2>"$T/err" || die "a later run: $(cat "$T/err")"
grep -q "snapshot-on-switch: reading" "$T/err" && die "a later run read the table again"
[ "$(M table cat ops.facts --format jsonl | grep -c '"event":"snapshot_range"')" = 1 ] || die "a second snapshot row"
echo ok
