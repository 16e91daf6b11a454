#!/usr/bin/env bash
# tests/interop/delta_widening_duckdb.sh: a table whose columns were widened in the same
# commit as an append (int -> long, date -> timestamp_ntz, float -> double,
# decimal(10,2) -> decimal(18,4), a column added; typeWidening feature, delta.typeChanges)
# reads the same through an independent reader (tests/node/delta_replay.mjs: the log
# replayed by plain JSON parsing, the data files by DuckDB, cast to the table's types) as
# through `mssql-cdc table cat`. The table comes from test_delta_evolve run with
# MCDC_DELTA_INTEROP_DIR.
set -euo pipefail
: "${MCDC_SRC:?}" "${MCDC_BUILD:?}" "${MCDC_BIN:?}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
MCDC_DELTA_INTEROP_DIR=$dir "$MCDC_BUILD/tests/test_delta_evolve" > "$dir/unit.log" 2>&1 ||
  { cat "$dir/unit.log"; exit 1; }
t=$dir/widened
grep -q 'delta.typeChanges' "$t/_delta_log/00000000000000000002.json" || { echo "no typeChanges"; exit 1; }
"$MCDC_BIN" table cat "$t" --format jsonl > "$dir/ours.raw"
node "$MCDC_SRC/tests/node/delta_replay.mjs" "$t" "$dir/ours.raw" "$dir/ours.jsonl" "$dir/theirs.jsonl"
[ "$(wc -l < "$dir/ours.jsonl")" -eq 6 ] || { echo "expected 6 rows:"; cat "$dir/ours.jsonl"; exit 1; }
node "$MCDC_SRC/tests/node/jsonl_compare.mjs" "$dir/ours.jsonl" "$dir/theirs.jsonl"
# the rows of the file written before the widening, in the wider types
grep -qx '{"id":1,"d":"1970-01-02T00:00:00.000000","f":1.5,"amount":"1.2500","note":null}' "$dir/ours.jsonl" ||
  { echo "first row:"; head -1 "$dir/ours.jsonl"; exit 1; }
echo "ok"
