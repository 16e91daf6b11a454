#!/usr/bin/env bash
# tests/interop/delta_protocol_tables.sh: the preview feature names typeWidening-preview and
# variantType-preview on tables whose logs follow the protocol's text (tests/data/protocol/:
# hand-written by this project after the type-widening RFC as Delta 3.2 shipped it and
# PROTOCOL.md's variant section; not Spark's tables, which this repository does not hold).
# `table cat` prints exactly the expected rows: older files' values in the wider types the
# log records (top-level, a map key, a decimal inside a map inside an array), each variant
# as its JSON text; DuckDB reading the same data files agrees on every value; a variant that
# does not decode inside an array fails the read (exit 3), it is not dropped.
set -euo pipefail
: "${MCDC_SRC:?}" "${MCDC_BIN:?}"
data=$MCDC_SRC/tests/data/protocol
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
die() { echo "FAIL: $*" >&2; exit 1; }
for t in type-widening-preview variant-type-preview; do
  cp -r "$data/$t" "$dir/$t" # read from a copy: a reader writes nothing, and this proves it
  "$MCDC_BIN" table cat "$dir/$t" --format jsonl > "$dir/$t.jsonl" || die "$t: table cat failed"
  diff -u "$data/$t.expected.jsonl" "$dir/$t.jsonl" >&2 || die "$t: rows differ from $t.expected.jsonl"
  diff -r "$data/$t" "$dir/$t" >/dev/null || die "$t: reading it changed the table"
done
"$MCDC_BIN" table info "$dir/type-widening-preview" | grep -q "typeWidening-preview" || die "table info does not name typeWidening-preview"
"$MCDC_BIN" table info "$dir/variant-type-preview" | grep -q "variantType-preview" || die "table info does not name variantType-preview"
# DuckDB over the same files, each cast to the table's types, reads the same values
node "$MCDC_SRC/tests/node/duck.mjs" "SELECT e::BIGINT AS e, m::MAP(DOUBLE, INTEGER) AS m,
  a::MAP(VARCHAR, DECIMAL(10,4))[] AS a FROM read_parquet('$data/type-widening-preview/*.parquet', union_by_name = true, filename = true)
  ORDER BY filename, e NULLS LAST" > "$dir/duck.jsonl"
node "$MCDC_SRC/tests/node/jsonl_compare.mjs" "$dir/type-widening-preview.jsonl" "$dir/duck.jsonl" >/dev/null ||
  die "DuckDB reads the type-widening table's files differently: $(node "$MCDC_SRC/tests/node/jsonl_compare.mjs" "$dir/type-widening-preview.jsonl" "$dir/duck.jsonl" 2>&1)"
# a variant that does not decode, inside an array: the read fails naming the column
set +e
"$MCDC_BIN" table cat "$data/variant-type-preview-bad" --format jsonl > "$dir/bad.out" 2> "$dir/bad.err"; rc=$?
set -e
[ $rc = 3 ] || die "a variant that does not decode: exit $rc, output $(cat "$dir/bad.out")"
grep -q "column variant_array: variant:" "$dir/bad.err" || die "the error: $(cat "$dir/bad.err")"
echo ok
