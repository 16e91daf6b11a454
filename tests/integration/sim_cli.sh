#!/usr/bin/env bash
# The sim commands as the acceptance checks spell them: init, exec, capture, idle, cleanup,
# enable, disable, ddl, workload, query, status. Exact change rows through the CLI, bad input
# exits 2 and changes nothing (dumps before and after compared), the same workload seed gives
# identical dumps of every table.
set -euo pipefail
bin=${MCDC_BIN:?MCDC_BIN must point at mssql-cdc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_exit() { # CODE CMD...: run, check the exit code, keep stderr in $work/err
  local want=$1; shift
  set +e; "$@" >"$work/out" 2>"$work/err"; local got=$?; set -e
  [ "$got" -eq "$want" ] || { cat "$work/err" >&2; fail "exit $got, expected $want: $*"; }
}
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL'
dump() { # DB: every table and view the simulator shows, as jsonl
  for q in 'SELECT * FROM dbo.orders ORDER BY order_id' \
           'SELECT * FROM cdc.dbo_orders_CT ORDER BY __$start_lsn, __$command_id, __$seqval, __$operation' \
           'SELECT * FROM cdc.lsn_time_mapping ORDER BY start_lsn' 'SELECT * FROM cdc.change_tables' \
           'SELECT * FROM cdc.captured_columns ORDER BY object_id, column_ordinal' 'SELECT * FROM cdc.ddl_history' \
           'SELECT * FROM sim_tx ORDER BY lsn' 'SELECT * FROM sim_state'; do
    "$bin" sim query "$1" "$q" --format jsonl
  done
}

db=$work/a.db
"$bin" sim init "$db" --table dbo.orders --schema "$schema" --keys order_id --time-zone America/New_York \
  --at 2025-11-02T05:00:00 >/dev/null
"$bin" sim exec "$db" --at 2025-11-02T05:30:00 "INSERT INTO dbo.orders VALUES (1, N'Zoë', 12.50, '2025-11-02 01:29:59.9995')" >/dev/null
"$bin" sim exec "$db" --at 2025-11-02T06:10:00 "UPDATE dbo.orders SET amount = amount + 0.255 WHERE customer = N'ZOË'" >/dev/null
"$bin" sim query "$db" 'SELECT count(*) AS n FROM cdc.dbo_orders_CT' --format csv >"$work/q"
[ "$(cat "$work/q")" = $'n\n0' ] || fail "changes visible before a capture scan: $(cat "$work/q")"
"$bin" sim capture "$db" --at 2025-11-02T06:11:00 --max-trans 2 >"$work/out"
grep -q '^processed 2 commits in 1 scans; max_lsn 0x[0-9A-F]\{20\}; 1 waiting$' "$work/out" || fail "partial scan: $(cat "$work/out")"
"$bin" sim capture "$db" --at 2025-11-02T06:12:00 >/dev/null
"$bin" sim query "$db" 'SELECT __$operation, __$update_mask, order_id, customer, amount, placed_at FROM cdc.dbo_orders_CT ORDER BY __$start_lsn, __$seqval, __$operation' --format jsonl >"$work/q"
cat >"$work/exp" <<'JSON'
{"__$operation":2,"__$update_mask":"0x0F","order_id":1,"customer":"Zoë","amount":"12.50","placed_at":"2025-11-02T01:30:00.000000"}
{"__$operation":3,"__$update_mask":"0x04","order_id":1,"customer":"Zoë","amount":"12.50","placed_at":"2025-11-02T01:30:00.000000"}
{"__$operation":4,"__$update_mask":"0x04","order_id":1,"customer":"Zoë","amount":"12.76","placed_at":"2025-11-02T01:30:00.000000"}
JSON
diff -u "$work/exp" "$work/q" || fail "change rows"
"$bin" sim query "$db" 'SELECT tran_end_time FROM cdc.lsn_time_mapping ORDER BY start_lsn' --format csv >"$work/q"
printf 'tran_end_time\n2025-11-02T01:00:00.000000\n2025-11-02T01:30:00.000000\n2025-11-02T01:10:00.000000\n' | diff -u - "$work/q" \
  || fail "mapping in server local time"
"$bin" sim status "$db" --format json >"$work/q"
grep -q '"max_lsn_commit_ts":"2025-11-02T06:10:00.000Z","clock":"2025-11-02T06:12:00.000Z","time_zone":"America/New_York","waiting_for_capture":0' "$work/q" \
  || fail "status: $(cat "$work/q")"

# bad input: exit 2, clear message, nothing changed
dump "$db" >"$work/before"
expect_exit 2 "$bin" sim exec "$db" --at 2025-11-02T07:00:00 "INSERT INTO dbo.nope VALUES (1)"
grep -q "Msg 208: Invalid object name 'dbo.nope'" "$work/err" || fail "unknown table message: $(cat "$work/err")"
expect_exit 2 "$bin" sim exec "$db" --at 2025-11-02T07:00:00 "TRUNCATE TABLE dbo.orders"
grep -q "'TRUNCATE' statements are not supported by the simulator" "$work/err" || fail "unsupported: $(cat "$work/err")"
expect_exit 2 "$bin" sim exec "$db" --at 2025-11-02T07:00:00 "INSERT INTO dbo.orders (order_id, amount) VALUES (2, 99999999999.99)"
grep -q "Msg 8115: Arithmetic overflow" "$work/err" || fail "overflow: $(cat "$work/err")"
expect_exit 2 "$bin" sim exec "$db" --at 2025-11-02T07:00:00 "INSERT INTO dbo.orders (order_id) VALUES (2); INSERT INTO dbo.orders (order_id) VALUES (1)"
grep -q "Violation of PRIMARY KEY constraint 'PK_orders'. Cannot insert duplicate key in object 'dbo.orders'. The duplicate key value is (1)." "$work/err" \
  || fail "duplicate key: $(cat "$work/err")"
grep -q "^hint: the transaction was rolled back: nothing changed" "$work/err" || fail "rollback hint"
expect_exit 2 "$bin" sim exec "$db" --at 2025-11-02T06:00:00 "INSERT INTO dbo.orders (order_id) VALUES (3)"
grep -q "time would go backwards" "$work/err" || fail "clock: $(cat "$work/err")"
expect_exit 2 "$bin" sim init "$db" --table dbo.t2 --schema 'a MONEYBAGS' --keys a --at 2025-11-02T07:00:00
grep -q "unknown type 'MONEYBAGS'" "$work/err" || fail "bad type: $(cat "$work/err")"
expect_exit 2 "$bin" sim query "$db" "DELETE FROM dbo.orders"
expect_exit 2 "$bin" sim exec "$work/missing.db" --at 2025-11-02T07:00:00 "INSERT INTO dbo.orders (order_id) VALUES (3)"
grep -q "does not exist" "$work/err" || fail "missing db"
dump "$db" >"$work/after"
diff -u "$work/before" "$work/after" || fail "a refused command changed the database"

# second instance, DDL, idle, cleanup, disable
"$bin" sim enable "$db" --table dbo.orders --capture-instance dbo_orders_v2 --at 2025-11-02T07:00:00 >/dev/null
expect_exit 2 "$bin" sim enable "$db" --table dbo.orders --capture-instance dbo_orders_v3 --at 2025-11-02T07:00:01
"$bin" sim ddl "$db" --at 2025-11-02T07:01:00 'ALTER TABLE dbo.orders ADD note NVARCHAR(10) NULL' >/dev/null
"$bin" sim capture "$db" --at 2025-11-02T07:02:00 >/dev/null
"$bin" sim query "$db" "SELECT capture_instance, start_lsn IS NOT NULL AS started FROM cdc.change_tables ORDER BY capture_instance" --format csv >"$work/q"
printf 'capture_instance,started\ndbo_orders,1\ndbo_orders_v2,1\n' | diff -u - "$work/q" || fail "instances"
"$bin" sim query "$db" "SELECT count(*) AS n FROM cdc.ddl_history" --format csv | tail -1 | grep -qx 2 || fail "ddl history"
"$bin" sim capture "$db" --at 2025-11-02T07:08:00 | grep -q "idle entry written" || fail "idle entry after 5 minutes"
"$bin" sim idle "$db" --at 2025-11-02T07:09:00 | grep -q "^idle entry 0x" || fail "sim idle"
"$bin" sim cleanup "$db" --retention 10m --at 2025-11-02T08:00:00 >"$work/q"
grep -q "^low water mark 0x[0-9A-F]\{20\}: min_lsn moved; 1 change rows and 2 mapping entries deleted$" "$work/q" || fail "cleanup: $(cat "$work/q")"
"$bin" sim disable "$db" --capture-instance dbo_orders --at 2025-11-02T08:01:00 >/dev/null
expect_exit 2 "$bin" sim query "$db" "SELECT * FROM cdc.dbo_orders_CT"

# the same seed gives identical dumps of every table
for k in 1 2; do
  mkdir "$work/w$k"
  "$bin" sim init "$work/w$k/w.db" --table dbo.orders --schema "$schema" --keys order_id --at 2025-01-01T00:00:00 >/dev/null
  "$bin" sim workload "$work/w$k/w.db" --table dbo.orders --transactions 3000 --seed 11 --start 2025-01-01T00:00:01 \
    --mix insert=50,update=35,delete=15 --rows-per-transaction 2 --interval 100ms --capture-every 2s >"$work/wl$k"
  dump "$work/w$k/w.db" >"$work/d$k"
done
grep -q '^3000 transactions (' "$work/wl1" || fail "workload summary: $(cat "$work/wl1")"
[ "$(wc -l <"$work/d1")" -gt 3000 ] || fail "workload dump too small"
cmp -s "$work/d1" "$work/d2" || fail "the same seed gave different dumps"
"$bin" sim workload "$work/w2/w.db" --table dbo.orders --transactions 10 --seed 12 >/dev/null
dump "$work/w2/w.db" >"$work/d2"
cmp -s "$work/d1" "$work/d2" && fail "another seed changed nothing"
expect_exit 2 "$bin" sim workload "$work/w2/w.db" --table dbo.orders --transactions 10 --mix insert=50,update=10
echo "sim_cli: ok"
