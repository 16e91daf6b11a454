#!/usr/bin/env bash
# tests/interop/delta_preview_tables.sh: `mssql-cdc table cat` prints a variantType-preview
# table's variant column as each value's JSON text (an object, a decimal with its scale,
# NULL), in jsonl, csv and text. The table (a hand-written log over a Parquet file whose
# variant column is the protocol's struct of value and metadata binaries) comes from
# test_delta_scan_protocol run with MCDC_DELTA_INTEROP_DIR.
set -euo pipefail
: "${MCDC_SRC:?}" "${MCDC_BUILD:?}" "${MCDC_BIN:?}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
MCDC_DELTA_INTEROP_DIR=$dir "$MCDC_BUILD/tests/test_delta_scan_protocol" > "$dir/unit.log" 2>&1 ||
  { cat "$dir/unit.log"; exit 1; }
die() { echo "FAIL: $*" >&2; exit 1; }
got=$("$MCDC_BIN" table cat "$dir/variant" --format jsonl)
want='{"id":1,"v":{"a":1}}
{"id":2,"v":12.30}
{"id":3,"v":null}'
[ "$got" = "$want" ] || die "jsonl: $got"
got=$("$MCDC_BIN" table cat "$dir/variant" --format csv)
grep -qx '1,"{""a"":1}"' <<<"$got" || die "csv: $got"
"$MCDC_BIN" table info "$dir/variant" > "$dir/info" || die "table info: $(cat "$dir/info")"
grep -q "variantType-preview" "$dir/info" || die "table info does not name the feature: $(cat "$dir/info")"
echo "ok"
