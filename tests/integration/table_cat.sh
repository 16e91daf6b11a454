#!/usr/bin/env bash
# `table cat` prints a table in its natural order whatever order its files hold: bronze in
# change order (_start_lsn, _command_id, _seqval, _operation), silver by its keys; other
# tables file by file. --columns picks and orders columns (a name unknown or named twice
# is exit 2 naming it, nothing printed); --limit N stops after N rows of that order.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
# Eight batches (eight bronze files, named at random, so path order is not change order),
# with several changes per transaction, updates and deletes.
for h in 0 1 2 3 4 5 6 7; do
  a=$((h * 3 + 1)) b=$((h * 3 + 2)) c=$((h * 3 + 3))
  sim_exec "2026-10-01T14:0$h:00" "INSERT INTO dbo.orders VALUES ($c, N'c$c', 3.00, NULL), ($a, N'a$a', 1.00, NULL), ($b, N'b$b', 2.00, NULL)"
  [ "$h" -gt 0 ] && sim_exec "2026-10-01T14:0$h:30" "UPDATE dbo.orders SET amount = amount + 10 WHERE order_id = $((h * 3 - 1)); DELETE FROM dbo.orders WHERE order_id = $((h * 3))"
  sim_capture "2026-10-01T14:0$h:45"
  M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders --app-id orders \
    --checkpoint "$T/ck" --control ops.control >/dev/null || die "stream batch $h"
done
n_files=$(M table info bronze.orders --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).numFiles))')
[ "$n_files" -ge 8 ] || die "bronze has $n_files files, want 8 or more"

# Bronze: in change order (compared as LSN text, which sorts as LSNs, then numbers).
M table cat bronze.orders --format jsonl >"$T/bronze.jsonl"
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const key = (r) => [r._start_lsn, r._command_id, r._seqval, r._operation];
  const cmp = (a, b) => { for (let i = 0; i < 4; i++) { if (a[i] < b[i]) return -1; if (a[i] > b[i]) return 1; } return 0; };
  for (let i = 1; i < rows.length; i++) if (cmp(key(rows[i - 1]), key(rows[i])) > 0) { console.error("row", i, "out of change order"); process.exit(1); }
  if (rows.length !== 24 + 7 * 3) { console.error("rows:", rows.length); process.exit(1); }' "$T/bronze.jsonl" ||
  die "bronze is not printed in change order"
ct_rows "$T/ct.jsonl"
$CHECK bronze-vs-ct "$T/ct.jsonl" "$T/bronze.jsonl" >/dev/null || die "bronze differs from the change table"

# --limit: the first N rows of that order; --columns: those columns, in that order, and
# the order still holds when the order columns are not printed.
M table cat bronze.orders --format jsonl --limit 5 >"$T/first5.jsonl"
head -5 "$T/bronze.jsonl" | cmp -s - "$T/first5.jsonl" || die "--limit 5 is not the first 5 rows"
M table cat bronze.orders -n 0 >"$T/none.txt"
[ "$(cat "$T/none.txt")" = "$(head -1 "$T/none.txt")" ] && [ "$(wc -l <"$T/none.txt")" -eq 1 ] || die "--limit 0 printed rows"
M table cat bronze.orders --columns order_id,_operation --format csv >"$T/cols.csv"
[ "$(head -1 "$T/cols.csv")" = "order_id,_operation" ] || die "--columns header: $(head -1 "$T/cols.csv")"
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  console.log("order_id,_operation"); for (const r of rows) console.log(`${r.order_id},${r._operation}`);' "$T/bronze.jsonl" |
  cmp -s - "$T/cols.csv" || die "--columns rows differ from the full rows in the same order"
M table cat bronze.orders --columns ORDER_ID --limit 1 >"$T/one.txt" || die "--columns is case-insensitive"
[ "$(head -1 "$T/one.txt")" = "order_id" ] || die "--columns prints the table's spelling: $(cat "$T/one.txt")"

# Refusals: exit 2 naming the column, nothing on stdout.
expect2() { # PATTERN ARGS...
  local pat=$1; shift
  local rc=0; M table cat bronze.orders "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" -eq 2 ] || die "table cat $*: exit $rc, want 2"
  grep -qE -- "$pat" "$T/err" || die "table cat $*: $(cat "$T/err")"
  [ ! -s "$T/out" ] || die "table cat $* printed rows"
}
expect2 "^mssql-cdc: error: --columns names column 'order_id' twice" --columns order_id,amount,order_id
expect2 "names column 'Order_Id' twice" --columns order_id,Order_Id
expect2 "^mssql-cdc: error: --columns: table bronze.orders has no column 'amout'" --columns order_id,amout
grep -q "^hint: its columns: _capture_instance, _start_lsn" "$T/err" || die "unknown column hint: $(cat "$T/err")"
expect2 "has an empty name" --columns order_id,,amount
expect2 "--limit must be a number" --limit ten
expect2 "--limit must be a number" --limit -1

# Silver: by its key, over several files (2 rows per file).
M silver apply --bronze bronze.orders --silver silver.orders --capture-instance dbo_orders --keys order_id \
  --control ops.control --target-file-rows 2 >/dev/null || die "silver apply"
n_files=$(M table info silver.orders --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).numFiles))')
[ "$n_files" -ge 4 ] || die "silver has $n_files files, want 4 or more"
M table cat silver.orders --columns order_id --format csv >"$T/silver.csv"
M sim query "$DB" 'SELECT order_id FROM dbo.orders ORDER BY order_id' --format csv >"$T/src.csv"
cmp -s "$T/src.csv" "$T/silver.csv" || { diff "$T/src.csv" "$T/silver.csv" >&2; die "silver is not printed by key"; }
M table cat silver.orders --columns amount --limit 3 --format csv >"$T/amounts.csv"
M sim query "$DB" 'SELECT amount FROM dbo.orders ORDER BY order_id' --format csv | head -4 | cmp -s - "$T/amounts.csv" ||
  die "silver --columns amount --limit 3 is not the first 3 amounts by key"
echo ok
