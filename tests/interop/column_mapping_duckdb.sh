#!/usr/bin/env bash
# tests/interop/column_mapping_duckdb.sh: a source column whose name Delta engines refuse
# in Parquet (`Order Date`: a space; also `qty,units`) makes bronze and silver tables
# with column mapping in name mode (physical names col-..., Parquet field ids, the
# columnMapping feature with timestampNtz, reader 3 / writer 7), end to end through the
# stream and silver apply; an independent reader (tests/node/delta_replay.mjs: the log
# replayed by plain JSON parsing, data files by DuckDB, columns by physical name) reads
# both identically to `table cat`, and silver equals the source table. `table optimize`
# compacts bronze (name mode): the new file keeps the physical names and field ids, `table
# cat` and the independent reader read the compacted bronze exactly as before.
set -euo pipefail
: "${MCDC_BIN:?}" "${MCDC_SRC:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export MSSQL_CDC_WAREHOUSE=$T/lake
M() { "$MCDC_BIN" "$@"; }
die() { echo "FAIL: $*" >&2; exit 1; }
DB=$T/shop.db
M sim init "$DB" --table dbo.orders --keys id --at 2026-10-01T13:59:00 \
  --schema 'id INT NOT NULL, [Order Date] DATE NULL, [qty,units] INT NULL, amount DECIMAL(12,2) NULL' > /dev/null
M sim exec "$DB" "INSERT INTO dbo.orders (id, [Order Date], [qty,units], amount) VALUES (1, '2026-10-01', 3, 1.50)" \
  --at 2026-10-01T14:00:00 > /dev/null
stream() {
  M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders --app-id orders \
    --checkpoint "$T/ck" --facts ops.facts > /dev/null
  M silver apply --bronze bronze.orders --silver silver.orders --capture-instance dbo_orders \
    --source "sim:$DB" --control ops.ctl > /dev/null
}
M sim workload "$DB" --table dbo.orders --transactions 200 --seed 5 --start 2026-10-01T14:00:01 --interval 1s > /dev/null
stream
M sim workload "$DB" --table dbo.orders --transactions 200 --seed 6 --interval 1s > /dev/null
M sim exec "$DB" "INSERT INTO dbo.orders (id, [Order Date], [qty,units], amount) VALUES (999999, '2026-12-31', 1, 9.99)" > /dev/null
M sim exec "$DB" "UPDATE dbo.orders SET [Order Date] = '2027-01-01' WHERE id = 999999" > /dev/null
M sim capture "$DB" > /dev/null
stream

for t in bronze/orders silver/orders; do
  log=$MSSQL_CDC_WAREHOUSE/$t/_delta_log/00000000000000000000.json
  grep -q '"readerFeatures":\["timestampNtz","columnMapping"\]' "$log" || die "$t: no columnMapping reader feature"
  grep -q '"delta.columnMapping.mode":"name"' "$log" || die "$t: not in name mode"
  grep -q 'Order Date' "$log" || die "$t: the logical name is not in the schema"
  # the data files name no column by its logical name
  for f in "$MSSQL_CDC_WAREHOUSE/$t"/part-*.parquet; do
    meta=$(M parquet meta "$f")
    grep -q 'Order Date' <<<"$meta" && die "$t: $f has a column named 'Order Date'"
    grep -q 'field_id=' <<<"$meta" || die "$t: $f has no field ids"
  done
  M table cat "${t/\//.}" --format jsonl > "$T/ours.raw"
  node "$MCDC_SRC/tests/node/delta_replay.mjs" "$MSSQL_CDC_WAREHOUSE/$t" "$T/ours.raw" "$T/ours.jsonl" "$T/theirs.jsonl"
  [ -s "$T/ours.jsonl" ] || die "$t is empty"
  grep -q '"Order Date":"20' "$T/theirs.jsonl" || die "$t: DuckDB found no Order Date values"
  out=$(node "$MCDC_SRC/tests/node/jsonl_compare.mjs" "$T/ours.jsonl" "$T/theirs.jsonl") || die "$t: read differently: $out"
  echo "$t: $out"
done

# silver equals the source table
M sim query "$DB" 'SELECT id, [Order Date], [qty,units], amount FROM dbo.orders ORDER BY id' --format jsonl > "$T/src.jsonl"
M table cat silver.orders --format jsonl |
  node -e 'const rows = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
           rows.sort((a, b) => a.id - b.id);
           for (const r of rows) console.log(JSON.stringify({ id: r.id, "Order Date": r["Order Date"], "qty,units": r["qty,units"], amount: r.amount }));' > "$T/silver.jsonl"
cmp -s "$T/src.jsonl" "$T/silver.jsonl" || { diff "$T/src.jsonl" "$T/silver.jsonl" | head; die "silver differs from the source"; }
grep -q '"id":999999,"Order Date":"2027-01-01"' "$T/silver.jsonl" || die "the last update is not in silver"
echo "silver equals dbo.orders: $(wc -l < "$T/src.jsonl") rows"

# compaction of a column-mapped table: physical names and field ids kept, the same rows
for t in bronze.orders; do
  dir=$MSSQL_CDC_WAREHOUSE/${t/.//}
  n0=$(M table files "$t" --force 2>/dev/null | wc -l)
  [ "$n0" -ge 2 ] || die "$t: $n0 files, nothing to compact"
  M table cat "$t" --format jsonl | sort > "$T/before.jsonl"
  M table optimize "$t" > "$T/opt.out" 2>&1 || die "$t: table optimize: $(cat "$T/opt.out")"
  n1=$(M table files "$t" --force 2>/dev/null | wc -l)
  [ "$n1" = 1 ] || die "$t: $n1 files after optimize (from $n0): $(cat "$T/opt.out")"
  M table cat "$t" --format jsonl | sort > "$T/after.jsonl"
  cmp -s "$T/before.jsonl" "$T/after.jsonl" || { diff "$T/before.jsonl" "$T/after.jsonl" | head; die "$t: rows changed by optimize"; }
  f=$(M table files "$t" --force 2>/dev/null)
  meta=$(M parquet meta "$f")
  grep -q 'Order Date' <<<"$meta" && die "$t: the compacted file has a column named 'Order Date'"
  # every column of the file is a physical name of the schema, with the column's id
  node -e 'const fs = require("fs"), [log, meta] = process.argv.slice(1);
    let schema; for (const f of fs.readdirSync(log).filter((x) => x.endsWith(".json")).sort())
      for (const l of fs.readFileSync(log + "/" + f, "utf8").split("\n").filter((x) => x))
        { const a = JSON.parse(l); if (a.metaData) schema = JSON.parse(a.metaData.schemaString); }
    for (const c of schema.fields) {
      const p = c.metadata["delta.columnMapping.physicalName"], id = c.metadata["delta.columnMapping.id"];
      if (!new RegExp("\\b" + p + "\\b.*field_id=" + id + "\\b").test(meta)) { console.error(c.name, p, id); process.exit(1); } }' \
    "$dir/_delta_log" "$meta" || die "$t: the compacted file lost a physical name or field id: $meta"
  # the new add's stats are keyed by physical names (PROTOCOL.md, column mapping writers)
  last=$(ls "$dir/_delta_log"/*.json | tail -1)
  grep '"add"' "$last" | grep -q '\\"minValues\\":{\\"col-' || die "$t: the compacted file's stats are not keyed by physical name: $(grep '"add"' "$last")"
  M table cat "$t" --format jsonl > "$T/ours.raw"
  node "$MCDC_SRC/tests/node/delta_replay.mjs" "$dir" "$T/ours.raw" "$T/ours.jsonl" "$T/theirs.jsonl"
  out=$(node "$MCDC_SRC/tests/node/jsonl_compare.mjs" "$T/ours.jsonl" "$T/theirs.jsonl") || die "$t after optimize: read differently: $out"
  echo "$t optimized ($n0 files to 1): $out"
done
echo "ok"
