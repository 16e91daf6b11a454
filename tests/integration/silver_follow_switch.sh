# A stream running with --silver follows a capture-instance switch made while it runs
# (docs/guides/schema-changes.md): the DBA adds a column and enables dbo_orders_v2 with it
# after the stream started, rows are written through v2; the running stream's silver
# follower takes v2's rows (and the new column) with no restart, and after SIGTERM silver
# equals the source table, the new column included, the stream exiting 0.
. "$(dirname "$0")/stream_lib.bash"
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, qty INT NULL' >/dev/null
sim_capture 2026-10-01T13:59:30
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, 5), (2, 6)"
sim_capture 2026-10-01T14:00:05
"$MCDC_BIN" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.s --app-id s \
  --checkpoint "$T/ck/s" --facts ops.facts --control ops.control --silver silver.s \
  --trigger interval:100ms --progress "$T/progress.jsonl" >"$T/out" 2>"$T/err" &
pid=$!
trap 'kill -9 $pid 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 1 1200); do [ -s "$T/progress.jsonl" ] && break; sleep 0.05; done
[ -s "$T/progress.jsonl" ] || die "no progress event: $(cat "$T/err")"
# silver caught up with v1 before the switch
for _ in $(seq 1 600); do M table cat silver.s --format jsonl 2>/dev/null | grep -q '"order_id":2' && break; sleep 0.05; done
M table cat silver.s --format jsonl | grep -q '"order_id":2' || die "silver never applied the first batch: $(cat "$T/err")"

# the switch, while the stream runs
M sim ddl "$DB" --at 2026-10-01T14:01:00 "ALTER TABLE dbo.orders ADD note NVARCHAR(20) NULL" >/dev/null
M sim enable "$DB" --table dbo.orders --capture-instance dbo_orders_v2 --columns order_id,qty,note \
  --at 2026-10-01T14:02:00 >/dev/null
sim_exec 2026-10-01T14:03:00 "INSERT INTO dbo.orders VALUES (3, 7, N'new'); UPDATE dbo.orders SET note = N'one' WHERE order_id = 1"
sim_capture 2026-10-01T14:03:05
ok=
for _ in $(seq 1 600); do
  if M table cat silver.s --format jsonl 2>/dev/null | grep -q '"order_id":3.*"note":"new"'; then ok=1; break; fi
  kill -0 $pid 2>/dev/null || break
  sleep 0.05
done
[ -n "$ok" ] || die "the running stream's silver did not take the v2 rows: $(grep -i silver "$T/err" | tail -3)"
kill -TERM $pid
wait $pid || die "the stream did not exit 0 after SIGTERM: $(tail -5 "$T/err")"
trap 'rm -rf "$T"' EXIT
grep -q '"capture_instance_switched"' <(M table cat ops.facts --format jsonl) || die "no switch row"
M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl > "$T/src.jsonl"
cat_table silver.s "$T/silver.jsonl"
node "$MCDC_SRC/tests/integration/silver_check.mjs" silver-vs-source "$T/silver.jsonl" "$T/src.jsonl" >/dev/null ||
  die "silver differs from the source: $(cat "$T/silver.jsonl")"
grep -q '"order_id":1,.*"note":"one"' "$T/silver.jsonl" || die "silver lacks v2's update of order 1: $(cat "$T/silver.jsonl")"
echo ok
