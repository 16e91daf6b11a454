#!/usr/bin/env bash
# `finalization cut`: two tables of one database (orders and their lines, every
# transaction touching both) streamed by two streams, the lines' stream held back so the
# latest states certainly disagree. At the cut L, silver of each read as of L agrees
# transaction by transaction (every line has its order, every order its two lines, each
# order's total the sum of its lines' quantities), and equals the source tables at L
# replayed from the change tables (as_of_check.mjs). Refusals: exit 2 with the reason.
. "$MCDC_SRC/tests/integration/stream_lib.bash"
AS_OF="node $MCDC_SRC/tests/integration/as_of_check.mjs"
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T09:00:00 \
  --schema 'order_id INT NOT NULL, total INT NULL' >/dev/null
M sim init "$DB" --table dbo.lines --keys line_id --at 2026-10-01T09:00:01 \
  --schema 'line_id INT NOT NULL, order_id INT NOT NULL, qty INT NULL' >/dev/null
sim_capture 2026-10-01T09:00:30
# 90 transactions, each on both tables: a new order with two lines; every 4th also changes
# a line of an older order and that order's total; every 7th deletes an older order with
# its lines.
t=$(date -u -d 2026-10-01T09:01:00 +%s)
for o in $(seq 1 90); do
  at=$(date -u -d "@$((t + o))" +%Y-%m-%dT%H:%M:%S)
  q1=$((o % 5 + 1)) q2=$((o % 3 + 2))
  sql="INSERT INTO dbo.orders VALUES ($o, $((q1 + q2))); INSERT INTO dbo.lines VALUES ($((o * 10 + 1)), $o, $q1); INSERT INTO dbo.lines VALUES ($((o * 10 + 2)), $o, $q2)"
  if [ $((o % 4)) = 0 ] && [ $((o / 2 % 7)) != 0 ]; then
    p=$((o / 2))
    sql="$sql; UPDATE dbo.lines SET qty = qty + 10 WHERE line_id = $((p * 10 + 1)); UPDATE dbo.orders SET total = total + 10 WHERE order_id = $p"
  fi
  if [ $((o % 7)) = 0 ]; then
    p=$((o / 7))
    sql="$sql; DELETE FROM dbo.lines WHERE order_id = $p; DELETE FROM dbo.orders WHERE order_id = $p"
  fi
  M sim exec "$DB" --at "$at" "$sql" >/dev/null
  [ $((o % 10)) = 0 ] && sim_capture "$at"
done
sim_capture 2026-10-01T09:03:00
s2() { # s2 TABLE APP [ARGS...]
  local tbl=$1 app=$2; shift 2
  M stream --source "sim:$DB" --capture-instance "dbo_$tbl" --target "bronze.$tbl" --app-id "$app" \
    --checkpoint "$T/ck/$app" --facts ops.facts "$@" >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
  M finalization advance --control ops.control --table "bronze.$tbl" --checkpoint "$T/ck/$app" >/dev/null
  M silver apply --bronze "bronze.$tbl" --silver "silver.$tbl" --capture-instance "dbo_$tbl" \
    --keys "$([ "$tbl" = orders ] && echo order_id || echo line_id)" --control ops.control >/dev/null
}
s2 orders o --trigger available-now
s2 lines l --trigger once --max-commits-per-batch 20
s2 lines l --trigger once --max-commits-per-batch 20

M finalization cut --control ops.control --facts ops.facts --tables bronze.orders,bronze.lines \
  --format json >"$T/cut.json"
L=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).lsn)' "$T/cut.json")
node -e '
  const c = JSON.parse(require("fs").readFileSync(process.argv[1]));
  const o = c.tables["bronze.orders"], l = c.tables["bronze.lines"];
  if (!(l < o)) throw new Error(`the lines stream should be behind: ${JSON.stringify(c)}`);
  if (c.lsn !== l || c.lossless !== true || !c.commit_ts) throw new Error(`cut: ${JSON.stringify(c)}`);' "$T/cut.json" \
  || die "the cut is not the held-back table's end"
# the latest states disagree (the premise), the states at the cut agree
consistent() { # consistent ORDERS.jsonl LINES.jsonl: exit 0 when they agree
  node -e '
    const fs = require("fs");
    const rows = (f) => fs.readFileSync(f, "utf8").split("\n").filter(Boolean).map(JSON.parse);
    const orders = new Map(rows(process.argv[1]).map((r) => [r.order_id, r]));
    const lines = rows(process.argv[2]);
    const by = new Map();
    for (const l of lines) {
      if (!orders.has(l.order_id)) { console.error(`line ${l.line_id} without order ${l.order_id}`); process.exit(1); }
      by.set(l.order_id, [...(by.get(l.order_id) || []), l]);
    }
    for (const [id, o] of orders) {
      const ls = by.get(id) || [];
      const sum = ls.reduce((s, l) => s + l.qty, 0);
      if (ls.length !== 2 || sum !== o.total) { console.error(`order ${id}: ${ls.length} lines, total ${o.total}, lines sum ${sum}`); process.exit(1); }
    }
    if (orders.size < 10) { console.error(`only ${orders.size} orders`); process.exit(1); }' "$1" "$2"
}
cat_table silver.orders "$T/so.jsonl"
cat_table silver.lines "$T/sl.jsonl"
if consistent "$T/so.jsonl" "$T/sl.jsonl" 2>/dev/null; then die "the latest states agree: the lines stream was not held back"; fi
M table cat silver.orders --as-of-lsn "$L" --format jsonl >"$T/ao.jsonl"
M table cat silver.lines --as-of-lsn "$L" --format jsonl >"$T/al.jsonl"
consistent "$T/ao.jsonl" "$T/al.jsonl" || die "silver.orders and silver.lines as of the cut $L disagree"
M sim query "$DB" 'SELECT * FROM cdc.dbo_orders_CT' --format jsonl >"$T/cto.jsonl"
M sim query "$DB" 'SELECT * FROM cdc.dbo_lines_CT' --format jsonl >"$T/ctl.jsonl"
$AS_OF state "$T/cto.jsonl" "$L" "$T/ao.jsonl" >/dev/null || die "silver.orders as of $L is not dbo.orders at $L"
$AS_OF state "$T/ctl.jsonl" "$L" "$T/al.jsonl" >/dev/null || die "silver.lines as of $L is not dbo.lines at $L"
# text output names each table
M finalization cut --control ops.control --facts ops.facts --tables bronze.orders,bronze.lines >"$T/cut.txt"
grep -q "^lsn        $L$" "$T/cut.txt" || die "text output: $(cat "$T/cut.txt")"
grep -q "^table      bronze.lines complete up to $L$" "$T/cut.txt" || die "text output: $(cat "$T/cut.txt")"

refused() {
  local why=$1; shift
  local rc=0
  M finalization cut --control ops.control --facts ops.facts "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || die "cut $*: exit $rc, want 2 ($(cat "$T/err"))"
  grep -q -- "$why" "$T/err" || die "cut $*: the error does not say '$why': $(cat "$T/err")"
  [ ! -s "$T/out" ] || die "cut $*: printed although refused"
}
refused "no row for bronze.nope" --tables bronze.orders,bronze.nope
refused "listed twice" --tables bronze.orders,bronze.orders
refused "empty name" --tables bronze.orders,
rc=0; M finalization cut --control ops.control --facts ops.nofacts --tables bronze.orders 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "does not exist" "$T/err" || die "cut with a missing facts table: exit $rc: $(cat "$T/err")"
# bronze records its source's identity; tables of two databases are never cut together, and
# a stream refuses to write one database's changes into another's bronze (nothing written)
DB2=$T/other.sqlite
M sim init "$DB2" --table dbo.orders --keys order_id --at 2026-10-01T09:00:00 \
  --schema 'order_id INT NOT NULL, total INT NULL' >/dev/null
M sim exec "$DB2" --at 2026-10-01T09:00:10 "INSERT INTO dbo.orders VALUES (1, 1)" >/dev/null
M sim capture "$DB2" --at 2026-10-01T09:00:30 >/dev/null
M table info bronze.orders | grep -q '^ *mcdc\.source\.database = db$' || die "bronze.orders records no identity: $(M table info bronze.orders)"
M stream --source "sim:$DB2" --capture-instance dbo_orders --target bronze.other --app-id other \
  --checkpoint "$T/ck/other" --facts ops.facts --trigger once >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
M finalization advance --control ops.control --table bronze.other --checkpoint "$T/ck/other" >/dev/null
refused "bronze.lines and bronze.other are tables of different sources" --tables bronze.lines,bronze.orders,bronze.other
grep -q "database db (database_guid .*database other (database_guid" "$T/err" || die "the refusal names no sources: $(cat "$T/err")"
before=$(M table history bronze.orders --format jsonl | md5sum)
rc=0; M stream --source "sim:$DB2" --capture-instance dbo_orders --target bronze.orders --app-id o \
  --checkpoint "$T/ck/o" --facts ops.facts --trigger once >/dev/null 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "holds the changes of server mssql-cdc-sim, database db" "$T/err" ||
  die "a stream of another database into bronze.orders: exit $rc: $(cat "$T/err")"
[ "$(M table history bronze.orders --format jsonl | md5sum)" = "$before" ] || die "the refused stream wrote bronze.orders"
# a stream started at latest holds nothing before its start: a cut below it is refused
M sim exec "$DB" --at 2026-10-01T09:04:00 "INSERT INTO dbo.orders VALUES (1000, 0)" >/dev/null
sim_capture 2026-10-01T09:04:10
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.late --app-id late \
  --checkpoint "$T/ck/late" --facts ops.facts --starting-lsn latest --trigger once >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
M finalization advance --control ops.control --table bronze.late --checkpoint "$T/ck/late" >/dev/null
refused "holds nothing before" --tables bronze.lines,bronze.late
# a bronze written before identities were recorded: the cut allows it with a warning, and
# its stream accepts it and records the identity
node -e '
  const fs = require("fs"), dir = process.argv[1] + "/_delta_log";
  const logs = fs.readdirSync(dir).filter((f) => /^\d{20}\.json$/.test(f)).sort();
  let md;
  for (const f of logs)
    for (const l of fs.readFileSync(`${dir}/${f}`, "utf8").split("\n").filter(Boolean))
      if (JSON.parse(l).metaData) md = JSON.parse(l).metaData;
  for (const k of Object.keys(md.configuration)) if (k.startsWith("mcdc.source.")) delete md.configuration[k];
  const next = String(parseInt(logs[logs.length - 1], 10) + 1).padStart(20, "0");
  fs.writeFileSync(`${dir}/${next}.json`, JSON.stringify({ metaData: md }) + "\n", { flag: "wx" });' \
  "$MSSQL_CDC_WAREHOUSE/bronze/lines"
M table info bronze.lines | grep -q 'mcdc\.source\.' && die "bronze.lines still records an identity"
M finalization cut --control ops.control --facts ops.facts --tables bronze.orders,bronze.lines >/dev/null 2>"$T/err" ||
  die "cut with an unidentified table: $(cat "$T/err")"
grep -q "warning: bronze.lines records no source identity" "$T/err" || die "no warning: $(cat "$T/err")"
s2 lines l --trigger once --max-commits-per-batch 20
M table info bronze.lines | grep -q '^ *mcdc\.source\.database = db$' || die "bronze.lines was not stamped: $(M table info bronze.lines)"
M finalization cut --control ops.control --facts ops.facts --tables bronze.orders,bronze.lines >/dev/null 2>"$T/err"
[ ! -s "$T/err" ] || die "cut warns after the stamp: $(cat "$T/err")"
echo "finalization_cut: ok (cut at $L)"
