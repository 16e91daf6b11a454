#!/usr/bin/env bash
# Every file of apache/parquet-testing (tests/data/parquet-testing) has an expected
# outcome here, and a file without one fails the test:
#   duck         rows identical to DuckDB's reading (normalised by tests/node/jsonl_compare.mjs)
#   csv          also identical to the file's _expect.csv
#   same:F       rows identical to ours of file F (the same data in another codec, for
#                codecs DuckDB cannot read)
#   expect       rows identical to the JSON lines below, from the file's .md (DuckDB refuses
#                map_no_value, and wraps int96_from_spark's year 290000 around)
#   twins        each *_byte_stream_split column equals its *_plain twin (DuckDB refuses it)
#   md5:HASH     the jsonl output has this MD5 (rows too large to hold; see below)
#   error:TEXT   `parquet cat` exits 3 and its message contains TEXT
set -euo pipefail
T=$MCDC_SRC/tests/data/parquet-testing
BIN=$MCDC_BIN
NODE_DIR=$MCDC_SRC/tests/node
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A want=(
  [alltypes_dictionary]=duck [alltypes_plain]=duck [alltypes_plain.snappy]=duck
  [alltypes_tiny_pages]=duck [alltypes_tiny_pages_plain]=duck [binary]=duck
  [binary_truncated_min_max]=duck [byte_array_decimal]=duck [byte_stream_split.zstd]=duck
  [byte_stream_split_extended.gzip]=twins [column_chunk_key_value_metadata]=duck
  [concatenated_gzip_members]=duck [data_index_bloom_encoding_stats]=duck
  [data_index_bloom_encoding_with_length]=duck
  [datapage_v1-corrupt-checksum]="error:column a, page at byte 4: page CRC mismatch: the header says bbce3b9d, the data has 0f4f6d0a"
  [datapage_v1-snappy-compressed-checksum]=duck [datapage_v1-uncompressed-checksum]=duck
  [datapage_v2.snappy]=duck [datapage_v2_empty_datapage.snappy]=duck
  [delta_binary_packed]=csv [delta_byte_array]=csv [delta_encoding_optional_column]=csv
  [delta_encoding_required_column]=csv [delta_length_byte_array]=duck
  [dict-page-offset-zero]=duck [fixed_length_byte_array]=duck [fixed_length_decimal]=duck
  [fixed_length_decimal_legacy]=duck [float16_nonzeros_and_nans]=duck
  [float16_zeros_and_nans]=duck [floating_orders_nan_count]=duck
  [hadoop_lz4_compressed]=same:lz4_raw_compressed
  [hadoop_lz4_compressed_larger]=same:lz4_raw_compressed_larger
  [non_hadoop_lz4_compressed]=same:lz4_raw_compressed
  [incorrect_map_schema]=duck [int32_decimal]=duck [int32_with_null_pages]=duck
  [int64_decimal]=duck [int96_from_spark]=expect
  [large_string_map.brotli]=md5:b886c86c3fa80f75da53f6391394e9af
  [list_columns]=duck [lz4_raw_compressed]=duck [lz4_raw_compressed_larger]=duck
  [map_no_value]=expect [nan_in_stats]=duck
  [nation.dict-malformed]="error:column name, page at byte 421: page of 28 bytes overruns the column chunk"
  [nested_lists.snappy]=duck [nested_maps.snappy]=duck [nested_structs.rust]=duck
  [nonnullable.impala]=duck [null_list]=duck [nullable.impala]=duck [nulls.snappy]=duck
  [old_list_structure]=duck [overflow_i16_page_cnt]=duck [page_v2_empty_compressed]=duck
  [plain-dict-uncompressed-checksum]=duck [repeated_no_annotation]=duck
  [repeated_primitive_no_list]=duck [rle-dict-snappy-checksum]=duck
  [rle-dict-uncompressed-corrupt-checksum]="error:column long_field, page at byte 4: page CRC mismatch"
  [rle_boolean_encoding]=duck [single_nan]=duck [sort_columns]=duck [unknown-logical-type]=duck
  # not Parquet files: bloom filter blobs
  [bloom_filter.bin]="error:bad magic at byte 1032: not a Parquet file"
  [bloom_filter.xxhash.bin]="error:bad magic at byte 1036: not a Parquet file"
)

# large_string_map.brotli: 4 KiB of brotli that inflate to a dictionary page and a data
# page of 1 GiB + 4 bytes each (valid: page sizes go up to 2^31-1). DuckDB's reading, too
# slow to run here (2 minutes, 6 GiB; `SELECT len(map_keys(arr)), length(map_keys(arr)[1]),
# md5(map_keys(arr)[1]), map_values(arr) FROM read_parquet(...)`): 2 rows, each a map of
# one key of 1073741824 bytes with MD5 adb5a28fda6ec2a01075b9945887a083 (that of 2^30 'a')
# and the value 1. The jsonl of those rows has the MD5 above:
#   for i in 1 2; do printf '{"arr":[{"key":"'; head -c 1073741824 /dev/zero | tr '\0' a
#   printf '","value":1}]}\n'; done | md5sum
# Reading it takes about 35 s of CPU and 4.2 GiB; in a sanitizer build (which scripts/test
# does not run interop tests in) it takes six minutes, so there this one file is skipped.

cat >"$work/map_no_value.expect" <<'EOF'
{"my_map":[{"key":1,"value":null},{"key":2,"value":null},{"key":3,"value":null}],"my_map_no_v":[1,2,3],"my_list":[1,2,3]}
{"my_map":[{"key":4,"value":null},{"key":5,"value":null},{"key":6,"value":null}],"my_map_no_v":[4,5,6],"my_list":[4,5,6]}
{"my_map":[{"key":7,"value":null},{"key":8,"value":null},{"key":9,"value":null}],"my_map_no_v":[7,8,9],"my_list":[7,8,9]}
EOF
# int96_from_spark.md: 1704141296123456, 1704070800000000, 253402225200000000,
# 1735599600000000, null, 9089380393200000000 microseconds since the epoch
cat >"$work/int96_from_spark.expect" <<'EOF'
{"a":"2024-01-01T20:34:56.123456Z"}
{"a":"2024-01-01T01:00:00.000000Z"}
{"a":"9999-12-31T03:00:00.000000Z"}
{"a":"2024-12-30T23:00:00.000000Z"}
{"a":null}
{"a":"290000-12-30T23:00:00.000000Z"}
EOF

# DuckDB's reading of every file compared with it, in one process
for f in "$T"/*.parquet; do
  name=$(basename "$f" .parquet)
  case ${want[$name]:-} in duck | csv) printf '%s\t%s\n' "$work/$name.duck" "SELECT * FROM read_parquet('$f')" ;; esac
done >"$work/duck.list"
node "$NODE_DIR/duck_many.mjs" "$work/duck.list"

pass=0 fail=0
: >"$work/compare.list"
check() { # name outcome-text
  if [ "$2" = ok ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $1: $2"; fi
}

for f in "$T"/*.parquet "$T"/*.bin; do
  name=$(basename "$f"); name=${name%.parquet}
  w=${want[$name]:-}
  if [ -z "$w" ]; then check "$name" "no expected outcome in tests/interop/parquet_testing.sh"; continue; fi
  ours=$work/$name.jsonl
  if [[ $w == md5:* ]]; then
    if grep -qs '^MCDC_SANITIZE:BOOL=ON' "${MCDC_BUILD:-}/CMakeCache.txt"; then
      echo "SKIP $name: too slow under the sanitizers"; continue
    fi
    got=$("$BIN" parquet cat --format jsonl "$f" 2>"$work/$name.err" | md5sum) || true
    if [ "${got%% *}" = "${w#md5:}" ]; then check "$name" ok
    else check "$name" "jsonl MD5 ${got%% *}, expected ${w#md5:}: $(cat "$work/$name.err")"; fi
    continue
  fi
  set +e
  "$BIN" parquet cat --format jsonl "$f" >"$ours" 2>"$work/$name.err"
  rc=$?
  set -e
  case $w in
  error:*)
    text=${w#error:}
    if [ $rc -ne 3 ]; then check "$name" "exit $rc, expected 3"
    elif ! grep -qF -- "$text" "$work/$name.err"; then check "$name" "message $(cat "$work/$name.err") lacks '$text'"
    elif ! grep -qF -- "$(basename "$f")" "$work/$name.err"; then check "$name" "message does not name the file"
    else check "$name" ok; fi
    continue ;;
  esac
  if [ $rc -ne 0 ]; then check "$name" "exit $rc: $(cat "$work/$name.err")"; continue; fi
  case $w in
  duck | csv)
    if [ ! -f "$work/$name.duck" ]; then check "$name" "DuckDB: $(cat "$work/$name.duck.err")"; continue; fi
    printf '%s\t%s\t%s\n' "$name vs DuckDB" "$ours" "$work/$name.duck" >>"$work/compare.list"
    [ "$w" = csv ] && printf '%s\t%s\t%s\n' "$name vs _expect.csv" "$ours" "$T/${name}_expect.csv" >>"$work/compare.list"
    ;;
  same:*)
    other=${w#same:}
    "$BIN" parquet cat --format jsonl "$T/$other.parquet" >"$work/$other.same"
    if [ ! -s "$ours" ] || ! cmp -s "$ours" "$work/$other.same"; then check "$name" "differs from $other"; else check "$name" ok; fi ;;
  expect)
    printf '%s\t%s\t%s\n' "$name vs its .md" "$ours" "$work/$name.expect" >>"$work/compare.list" ;;
  twins)
    out=$(node -e '
      const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
      let pairs = 0;
      for (const r of rows) for (const k of Object.keys(r)) if (k.endsWith("_byte_stream_split")) {
        const p = k.replace(/_byte_stream_split$/, "_plain");
        if (!(p in r) || JSON.stringify(r[k]) !== JSON.stringify(r[p])) { console.log(`${k}: ${JSON.stringify(r[k])} vs ${JSON.stringify(r[p])}`); process.exit(1); }
        pairs++;
      }
      console.log(rows.length > 0 && pairs > 0 ? "ok" : "no pairs");' "$ours") || true
    check "$name" "$out" ;;
  esac
done

# row comparisons, in one node process
while IFS=$'\t' read -r label result; do
  if [[ $result == ok* ]]; then check "$label" ok; else check "$label" "$result"; fi
done < <(node "$NODE_DIR/jsonl_compare.mjs" --list "$work/compare.list")
[ "$(wc -l <"$work/compare.list")" -ge 60 ] || check "comparisons" "only $(wc -l <"$work/compare.list") ran"

# the metadata of every file prints in both formats; the JSON is one document
for f in "$T"/*.parquet; do
  "$BIN" parquet meta "$f" >/dev/null || check "meta $(basename "$f")" "parquet meta failed"
  "$BIN" parquet meta --format json "$f" >"$work/$(basename "$f").meta.json" ||
    check "meta --format json $(basename "$f")" "parquet meta failed"
done
node -e 'for (const f of process.argv.slice(1)) JSON.parse(require("fs").readFileSync(f, "utf8"))' "$work"/*.meta.json ||
  check "meta --format json" "not JSON"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
