#!/usr/bin/env bash
# tests/interop/silver_dv_duckdb.sh: a silver table kept in write mode deletion-vectors
# reads the same through an independent reader as through `table cat`, and equals the
# source. The independent reader (tests/node/delta_replay.mjs) replays the log with plain
# JSON parsing, decodes each deletion vector itself (Z85 name, size, CRC-32, portable
# RoaringBitmapArray) and reads the data files with DuckDB's read_parquet, leaving out the
# rows at the deleted positions (file_row_number); DuckDB's delta extension is not
# available offline. The decoder is first checked on a table Spark wrote with deletion
# vectors (tests/data/delta/golden/dv-partitioned-with-checkpoint).
set -euo pipefail
: "${MCDC_BIN:?}" "${MCDC_SRC:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export MSSQL_CDC_WAREHOUSE=$T/lake
M() { "$MCDC_BIN" "$@"; }
die() { echo "FAIL: $*" >&2; exit 1; }
replay() { # replay TABLE_PATH WHAT: table cat and the independent reader agree
  M table cat "$1" --format jsonl > "$T/ours.raw"
  node "$MCDC_SRC/tests/node/delta_replay.mjs" "$1" "$T/ours.raw" "$T/ours.jsonl" "$T/theirs.jsonl" ||
    die "$2: the independent reader failed"
  node "$MCDC_SRC/tests/node/jsonl_compare.mjs" "$T/ours.jsonl" "$T/theirs.jsonl" >/dev/null ||
    die "$2: the independent reader reads other rows"
}

spark=$MCDC_SRC/tests/data/delta/golden/dv-partitioned-with-checkpoint/table
replay "$spark" "Spark's deletion vectors"

DB=$T/db.sqlite
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
M sim workload "$DB" --table dbo.orders --transactions 300 --seed 7 --rows-per-transaction 3 \
  --start 2026-10-01T14:00:00 --interval 2s --capture-every 20s >/dev/null
M sim capture "$DB" >/dev/null
S=(--source "sim:$DB" --capture-instance dbo_orders --target bronze.orders --app-id orders --checkpoint "$T/ck"
   --facts ops.facts --control ops.control)
A=(--bronze bronze.orders --silver silver.orders --capture-instance dbo_orders --keys order_id
   --control ops.control --facts ops.facts --target-file-rows 40 --write-mode deletion-vectors --format json)
M stream "${S[@]}" >/dev/null
M silver apply "${A[@]}" >/dev/null
M table set-property silver.orders mcdc.silver.dv_fold_share=0.6 >/dev/null
marked=0
for seed in 8 9 10 11; do
  M sim workload "$DB" --table dbo.orders --transactions 15 --seed $seed --interval 2s --capture-every 20s >/dev/null
  M sim capture "$DB" >/dev/null
  M stream "${S[@]}" >/dev/null
  M silver apply "${A[@]}" > "$T/apply.json"
  m=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).silver_files_marked)' "$T/apply.json")
  marked=$((marked + m))
  replay "$T/lake/silver/orders" "after workload $seed"
  M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl > "$T/src.jsonl"
  node "$MCDC_SRC/tests/integration/silver_check.mjs" silver-vs-source "$T/ours.raw" "$T/src.jsonl" >/dev/null ||
    die "after workload $seed: silver differs from the source"
done
[ "$marked" -gt 0 ] || die "no file was marked with a deletion vector"
echo "ok ($marked files marked)"
