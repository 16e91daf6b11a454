#!/usr/bin/env bash
# Files written by DuckDB read back identically: every codec DuckDB writes, data pages v1
# and v2 (v2 brings DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, BYTE_STREAM_SPLIT),
# dictionary and plain pages, several row groups, every flat type, nulls and extreme
# values, and nested lists, structs and maps. The reference is DuckDB reading the same
# file; both sides are normalised by tests/node/jsonl_compare.mjs. Also checks that the
# files really use the encodings and page kinds this test claims to cover.
set -euo pipefail
BIN=$MCDC_BIN
NODE_DIR=$MCDC_SRC/tests/node
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

flat="SELECT i AS id,
  (i % 2 = 0) AS b, (i % 100)::TINYINT AS t8, (i * 7 % 30000)::SMALLINT AS t16,
  CASE WHEN i % 9 = 0 THEN NULL ELSE i * 1000 END::INTEGER AS t32,
  CASE i % 4 WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 9223372036854775807 ELSE i * 123456789 END::BIGINT AS t64,
  (i % 200)::UTINYINT AS u8, (i * 3)::USMALLINT AS u16, (i * 100000)::UINTEGER AS u32,
  CASE WHEN i % 3 = 0 THEN 18446744073709551615 ELSE i END::UBIGINT AS u64,
  CASE i % 50 WHEN 0 THEN 'nan'::FLOAT WHEN 1 THEN 'inf'::FLOAT ELSE (i / 7.0)::FLOAT END AS f32,
  CASE i % 50 WHEN 0 THEN '-inf'::DOUBLE ELSE i / 3.0 END AS f64,
  (i % 1000 / 10.0)::DECIMAL(4,1) AS d4, (i * 1.01)::DECIMAL(9,2) AS d9,
  (i * -12345.6789)::DECIMAL(18,4) AS d18, (i * 98765432109876.5)::DECIMAL(38,10) AS d38,
  CASE WHEN i % 11 = 0 THEN NULL WHEN i % 11 = 1 THEN '' ELSE 'cat' || (i % 13) END AS s_dict,
  'unique-' || i || repeat('x', i % 40) AS s_plain,
  CASE WHEN i = 5 THEN repeat('long', 300) ELSE 'é' || i END AS s_utf8,
  ('\\x00\\xFF' || i)::BLOB AS bin,
  DATE '1970-01-01' + (i * 37 - 20000)::INTEGER AS dt,
  TIMESTAMP '2001-02-03 04:05:06.789012' + to_microseconds(i * 1234567) AS ts,
  TIMESTAMPTZ '1999-12-31 23:59:59+00' + to_microseconds(i * 7654321) AS tstz,
  TIMESTAMP_NS '2020-01-01 00:00:00.123456789' AS tsns,
  TIME '01:02:03.456789' + to_microseconds(i * 1000) AS tm,
  CASE WHEN i % 7 = 0 THEN NULL ELSE ('00000000-0000-0000-0000-' || lpad(i::VARCHAR, 12, '0'))::UUID END AS uid
FROM range(1500) t(i)"

nested="SELECT i AS id,
  CASE WHEN i % 5 = 0 THEN NULL WHEN i % 5 = 1 THEN [] ELSE [i, NULL, i + 1] END AS l_int,
  [{'a': i, 'b': 'q' || i}, NULL] AS l_struct,
  {'x': i, 'y': [i * 2, i * 3], 'z': {'deep': CASE WHEN i % 2 = 0 THEN NULL ELSE 'd' || i END}} AS st,
  CASE WHEN i % 6 = 0 THEN NULL ELSE MAP {'key' || i: i, 'other': NULL} END AS m,
  [[i], [], NULL, [i, i]] AS ll,
  CASE WHEN i % 4 = 0 THEN NULL ELSE {'only': NULL} END AS st_null
FROM range(700) t(i)"

: >"$work/gen.list"
flat=${flat//$'\n'/ }
nested=${nested//$'\n'/ }
files=()
for codec in uncompressed snappy gzip zstd lz4_raw brotli; do
  vers="v1"
  case $codec in uncompressed | snappy | zstd) vers="v1 v2" ;; esac
  for ver in $vers; do
    f=$work/flat_${codec}_$ver.parquet
    printf '%s\t%s\n' "$work/gen.out" "COPY ($flat) TO '$f' (FORMAT parquet, COMPRESSION $codec, PARQUET_VERSION $ver, ROW_GROUP_SIZE 1000)" >>"$work/gen.list"
    files+=("$f")
  done
done
for ver in v1 v2; do
  f=$work/nested_$ver.parquet
  printf '%s\t%s\n' "$work/gen.out" "COPY ($nested) TO '$f' (FORMAT parquet, COMPRESSION snappy, PARQUET_VERSION $ver, ROW_GROUP_SIZE 300)" >>"$work/gen.list"
  files+=("$f")
done
for f in "${files[@]}"; do
  printf '%s\t%s\n' "$f.duck" "SELECT * FROM read_parquet('$f')" >>"$work/gen.list"
done
node "$NODE_DIR/duck_many.mjs" "$work/gen.list"
if ls "$work"/*.err >/dev/null 2>&1; then cat "$work"/*.err; exit 1; fi

pass=0 fail=0
check() { if [ "$2" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: $2"; fi; }

: >"$work/compare.list"
for f in "${files[@]}"; do
  n=$(basename "$f")
  if "$BIN" parquet cat --format jsonl "$f" >"$f.ours" 2>"$f.err"; then
    printf '%s\t%s\t%s\n' "$n" "$f.ours" "$f.duck" >>"$work/compare.list"
  else
    check "$n" "$(cat "$f.err")"
  fi
done
while IFS=$'\t' read -r label result; do
  if [[ $result == ok* ]]; then check "$label" ok; else check "$label" "$result"; fi
done < <(node "$NODE_DIR/jsonl_compare.mjs" --list "$work/compare.list")

# the files cover what this test says they do
encodings=$(for f in "${files[@]}"; do "$BIN" parquet meta --format json "$f"; done |
  grep -o '"\(PLAIN\|RLE_DICTIONARY\|PLAIN_DICTIONARY\|DELTA_BINARY_PACKED\|DELTA_LENGTH_BYTE_ARRAY\|DELTA_BYTE_ARRAY\|BYTE_STREAM_SPLIT\|SNAPPY\|GZIP\|ZSTD\|LZ4_RAW\|BROTLI\|UNCOMPRESSED\)"' | sort -u | tr -d '"' | tr '\n' ' ')
for e in PLAIN RLE_DICTIONARY DELTA_BINARY_PACKED SNAPPY GZIP ZSTD LZ4_RAW BROTLI UNCOMPRESSED; do
  [[ " $encodings " == *" $e "* ]] && check "covers $e" ok || check "covers $e" "no file uses it (seen: $encodings)"
done

# projection and text/csv output agree with jsonl on a column
f=$work/flat_snappy_v1.parquet
"$BIN" parquet cat --format jsonl --columns s_dict,id -n 3 "$f" >"$work/proj.jsonl"
node -e '
  const l = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const ok = l.length === 3 && JSON.stringify(Object.keys(l[0])) === "[\"s_dict\",\"id\"]" && l[0].s_dict === null && l[1].s_dict === "" && l[2].id === 2;
  console.log(ok ? "ok" : "bad projection: " + JSON.stringify(l));' "$work/proj.jsonl" >"$work/proj.out"
check "projection" "$(cat "$work/proj.out")"
csv=$("$BIN" parquet cat --format csv --columns id,s_dict "$f" | sed -n '1,3p' | tr '\n' '|')
[ "$csv" = 'id,s_dict|0,|1,""|' ] && check "csv" ok || check "csv" "got $csv"
set +e
"$BIN" parquet cat --columns nope "$f" >/dev/null 2>"$work/e"
rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'no column named "nope"' "$work/e" && check "unknown column" ok || check "unknown column" "exit $rc: $(cat "$work/e")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
