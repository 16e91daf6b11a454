#!/usr/bin/env bash
# tests/interop/table_files_duckdb.sh: `table files NAME` lists exactly the live data files,
# so that DuckDB's plain read_parquet([...]) over them (no Delta extension) gives exactly
# the rows `table cat` prints: bronze and facts after many batches and a compaction,
# silver after updates and deletes (files rewritten and removed), a past --version. A
# table a plain read would get wrong (deletion vectors, column mapping, partition values)
# is refused with exit 2 naming why, unless --force; --format json carries the same
# paths with sizes and partition values.
set -euo pipefail
: "${MCDC_BIN:?}" "${MCDC_SRC:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
export MSSQL_CDC_WAREHOUSE=lake # relative: the listed paths must still be absolute
M() { "$MCDC_BIN" "$@"; }
die() { echo "FAIL: $*" >&2; exit 1; }
DB=$T/db.sqlite
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL, flag BIT NULL' >/dev/null
M sim workload "$DB" --table dbo.orders --transactions 200 --seed 5 --rows-per-transaction 3 \
  --start 2026-10-01T14:00:00 --interval 2s --capture-every 20s >/dev/null
M sim capture "$DB" >/dev/null
S=(--source "sim:$DB" --capture-instance dbo_orders --target bronze.orders --app-id orders --checkpoint "$T/ck"
   --facts ops.facts --control ops.control)
M stream "${S[@]}" --max-commits-per-batch 5 >/dev/null
M silver apply --bronze bronze.orders --silver silver.orders --capture-instance dbo_orders --keys order_id \
  --control ops.control --target-file-rows 50 >/dev/null
v_silver=$(M table info silver.orders --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
M sim workload "$DB" --table dbo.orders --transactions 100 --seed 6 --interval 2s --capture-every 20s >/dev/null
M sim capture "$DB" >/dev/null
M stream "${S[@]}" >/dev/null
M silver apply --bronze bronze.orders --silver silver.orders --capture-instance dbo_orders --keys order_id \
  --control ops.control --target-file-rows 50 >/dev/null
M table optimize ops.facts >/dev/null

check() { # check TABLE [--version N]: DuckDB over the listed files = table cat
  local t=$1; shift
  local as_of=()
  [ $# -gt 0 ] && as_of=(--as-of-version "$2")
  M table files "$t" "$@" >"$T/files.txt" || die "table files $t $*"
  [ -s "$T/files.txt" ] || die "table files $t listed nothing"
  grep -qv '^/' "$T/files.txt" && die "table files $t: a path that is not absolute: $(grep -v '^/' "$T/files.txt" | head -1)"
  local list
  list=$(sed "s/'/''/g; s/.*/'&'/" "$T/files.txt" | paste -sd, -)
  M table cat "$t" "${as_of[@]}" --format jsonl >"$T/ours.jsonl"
  node "$MCDC_SRC/tests/node/duck.mjs" "SELECT * FROM read_parquet([$list], union_by_name = true)" >"$T/duck.jsonl"
  [ "$(wc -l <"$T/ours.jsonl")" -eq "$(wc -l <"$T/duck.jsonl")" ] ||
    die "$t $*: table cat has $(wc -l <"$T/ours.jsonl") rows, DuckDB over the files $(wc -l <"$T/duck.jsonl")"
  # Normalise both sides through the comparer's rules, then compare as sorted sets.
  node "$MCDC_SRC/tests/node/jsonl_compare.mjs" <(sorted_by_key "$T/ours.jsonl") <(sorted_by_key "$T/duck.jsonl") >"$T/cmp" ||
    die "$t $*: DuckDB reads the listed files differently: $(cat "$T/cmp")"
  echo "$t $*: $(cat "$T/cmp") ($(wc -l <"$T/files.txt") files)"
}
sorted_by_key() { # rows sorted by a text key of every column in a fixed order
  node -e '
    const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter((l) => l).map(JSON.parse);
    const norm = (v) => v === null || v === undefined ? "" : String(v).replace("T", " ").replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
    const keys = rows.length ? Object.keys(rows[0]).sort() : [];
    const k = (r) => keys.map((c) => norm(r[c])).join("\u0001");
    rows.sort((a, b) => (k(a) < k(b) ? -1 : k(a) > k(b) ? 1 : 0));
    for (const r of rows) console.log(JSON.stringify(r));' "$1"
}
check bronze.orders
check ops.facts
check silver.orders
check silver.orders --version "$v_silver"
check ops.control

# json: the same paths, with sizes that are the files' sizes.
M table files silver.orders --format json >"$T/files.json"
M table files silver.orders >"$T/files.txt"
node -e '
  const fs = require("fs");
  const j = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  const txt = fs.readFileSync(process.argv[2], "utf8").trim().split("\n");
  if (j.table !== "silver.orders" || !j.path.startsWith("/") || j.plain_parquet !== true || j.problems !== null) process.exit(1);
  if (JSON.stringify(j.files.map((f) => f.path)) !== JSON.stringify(txt)) process.exit(2);
  for (const f of j.files) if (fs.statSync(f.path).size !== f.size || f.deletion_vector !== false) process.exit(3);' \
  "$T/files.json" "$T/files.txt" || die "table files --format json: $(head -c 600 "$T/files.json")"

# Tables a plain Parquet read gets wrong: refused, nothing on stdout; --force lists them.
G=$MCDC_SRC/tests/data/delta/golden
refused() { # refused TABLE_DIR PATTERN
  local rc=0
  M table files "$1" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" -eq 2 ] || die "table files $1: exit $rc, want 2"
  grep -qE "$2" "$T/err" || die "table files $1: $(cat "$T/err")"
  grep -q "^hint: read it with a Delta reader (DuckDB's delta_scan), or pass --force" "$T/err" || die "hint: $(cat "$T/err")"
  [ ! -s "$T/out" ] || die "a refused table files printed files"
  M table files "$1" --force >"$T/out" 2>"$T/err" || die "table files $1 --force"
  [ -s "$T/out" ] && grep -q "WARN" "$T/err" || die "table files $1 --force: no files or no warning"
}
refused "$G/dv-partitioned-with-checkpoint/table" "a plain Parquet read of its files would not give its rows: 2 of its 15 files have deletion vectors"
refused "$G/table-with-columnmapping-mode-name/table" "it uses column mapping \(mode name"
refused "$G/data-reader-partition-values/table" "it is partitioned by as_int, as_long"
M table files "$G/dv-partitioned-with-checkpoint/table" --force --format json 2>/dev/null |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);
    if (j.plain_parquet!==false||!j.files.some((f)=>f.deletion_vector)||!j.files.every((f)=>"part" in f.partition_values)) process.exit(1)})' ||
  die "table files --force --format json of a DV table"
rc=0; M table files ops.nope 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "does not exist" "$T/err" || die "table files of a missing table: exit $rc: $(cat "$T/err")"
echo ok
