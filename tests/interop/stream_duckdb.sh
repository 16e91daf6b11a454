#!/usr/bin/env bash
# tests/interop/stream_duckdb.sh: DuckDB reads the bronze and facts tables a stream writes
# identically to `mssql-cdc table cat`. The files come from an independent replay of the
# Delta log (every JSON commit in order, add and remove actions), so neither our snapshot
# code nor our Parquet reader is trusted on the DuckDB side.
set -euo pipefail
: "${MCDC_BIN:?}" "${MCDC_SRC:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export MSSQL_CDC_WAREHOUSE=$T/lake
M() { "$MCDC_BIN" "$@"; }
die() { echo "FAIL: $*" >&2; exit 1; }
DB=$T/db.sqlite
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL, note VARCHAR(MAX) NULL, flag BIT NULL, ratio FLOAT NULL, born DATE NULL' >/dev/null
M sim workload "$DB" --table dbo.orders --transactions 300 --seed 3 --rows-per-transaction 4 \
  --start 2026-10-01T14:00:00 --interval 2s --capture-every 30s >/dev/null
M sim capture "$DB" >/dev/null
for limit in 7 1000; do
  M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders \
    --app-id orders --checkpoint "$T/ck" --facts ops.facts --max-commits-per-batch $limit >/dev/null
done

# the live files of a table by replaying its JSON commits
files() {
  node -e '
    const fs = require("fs"), path = require("path");
    const dir = process.argv[1], log = path.join(dir, "_delta_log");
    const live = new Map();
    for (const f of fs.readdirSync(log).filter((n) => /^\d{20}\.json$/.test(n)).sort())
      for (const line of fs.readFileSync(path.join(log, f), "utf8").split("\n")) {
        if (!line.trim()) continue;
        const a = JSON.parse(line);
        if (a.add) live.set(a.add.path, true);
        if (a.remove) live.delete(a.remove.path);
      }
    console.log([...live.keys()].map((p) => `'"'"'${path.join(dir, decodeURIComponent(p))}'"'"'`).join(","));
  ' "$1"
}
# sort JSON lines by the given keys (the two sides list files in different orders)
sorted() {
  node -e '
    const keys = process.argv[1].split(",");
    const rows = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
    const k = (r) => keys.map((c) => String(r[c] ?? "")).join("\u0001");
    rows.sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
    for (const r of rows) console.log(JSON.stringify(r));
  ' "$1"
}
check() { # check TABLE SORT_KEYS
  local dir=$MSSQL_CDC_WAREHOUSE/${1/./\/}
  M table cat "$1" --format jsonl | sorted "$2" > "$T/ours.jsonl"
  node "$MCDC_SRC/tests/node/duck.mjs" "SELECT * FROM read_parquet([$(files "$dir")])" | sorted "$2" > "$T/duck.jsonl"
  [ -s "$T/ours.jsonl" ] || die "$1 is empty"
  out=$(node "$MCDC_SRC/tests/node/jsonl_compare.mjs" "$T/ours.jsonl" "$T/duck.jsonl") || die "$1: DuckDB reads it differently: $out"
  echo "$1: $out"
}
check bronze.orders _start_lsn,_command_id,_seqval,_operation
check ops.facts app_id,batch_id,event
echo "ok"
