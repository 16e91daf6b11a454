#!/usr/bin/env bash
# tests/interop/parquet_write.sh: DuckDB reads the Parquet files we write, with identical
# values for every type and codec (and dictionary on, off and falling back; nullable and
# required columns; small and default page sizes), trusts our statistics for filters, and
# reads a nested checkpoint-shaped file. The files and their expected CSV come from
# test_parquet_writer run with MCDC_PARQUET_INTEROP_DIR.
set -euo pipefail
: "${MCDC_SRC:?}" "${MCDC_BUILD:?}"
duck() { node "$MCDC_SRC/tests/node/duck.mjs" "$1"; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
MCDC_PARQUET_INTEROP_DIR=$dir "$MCDC_BUILD/tests/test_parquet_writer"

fail=0
csv_cols=""; proj=""; types=""
while IFS=$'\t' read -r name type; do
  t=$type; p=$name
  case $name in
    bin) t=VARCHAR; p="hex(bin) AS bin" ;;
    ts|ntz) t=BIGINT; p="epoch_us($name) AS $name" ;;
  esac
  csv_cols+="${csv_cols:+, }'$name': '$t'"
  proj+="${proj:+, }$p"
  types+="${types:+,}$type"
done < "$dir/columns.tsv"

# Filters on the extremes of the data: DuckDB skips row groups by our statistics, so a
# wrong bound loses rows.
filters=""
for cond in "i32 = -2147483648" "i32 = 2147483647" "i64 = -9223372036854775808" \
            "i64 = 9223372036854775807" "dec38 = -9999999999999999999999999999.9999999999" \
            "dec38 = 9999999999999999999999999999.9999999999" "dec20 = 99999999999999999999" \
            "s = ''" "s = '😀 emoji'" "s = 'zeta'" "dt = DATE '0001-01-01'" "dt = DATE '9999-12-31'" \
            "d = -1.7976931348623157e308" "dec9 = -0.08"; do
  filters+=" AND (SELECT count(*) FROM read_parquet('FILE') WHERE $cond) = (SELECT count(*) FROM e WHERE $cond)"
  filters+=" AND (SELECT count(*) FROM e WHERE $cond) > 0"
done

for name in snappy zstd gzip uncompressed nodict fallback required bigpages; do
  f=$dir/$name.parquet
  out=$(duck "CREATE TABLE p AS SELECT file_row_number AS rn, $proj FROM read_parquet('$f', file_row_number=true);
CREATE TABLE e AS SELECT row_number() OVER () - 1 AS rn, * FROM read_csv('$dir/$name.csv', header=false, delim=',', quote='\"', escape='\"', allow_quoted_nulls=false, auto_detect=false, columns={$csv_cols});
SELECT (SELECT string_agg(column_type, ',') FROM (DESCRIBE SELECT * FROM read_parquet('$f'))) = '$types' AS types_ok,
       (SELECT count(*) FROM p) AS n,
       (SELECT count(*) FROM (SELECT * FROM p EXCEPT ALL SELECT * FROM e)) AS only_parquet,
       (SELECT count(*) FROM (SELECT * FROM e EXCEPT ALL SELECT * FROM p)) AS only_expected,
       true ${filters//FILE/$f} AS filters_ok")
  if [ "$out" != '{"types_ok":true,"n":"5000","only_parquet":"0","only_expected":"0","filters_ok":true}' ]; then
    echo "FAIL $name: $out"; fail=1
  fi
done

# Statistics as DuckDB reads them from the footer, against the data.
out=$(duck "SELECT min(stats_min_value::BIGINT) = (SELECT min(i64) FROM read_parquet('$dir/snappy.parquet'))
              AND max(stats_max_value::BIGINT) = (SELECT max(i64) FROM read_parquet('$dir/snappy.parquet')) AS ok,
              sum(stats_null_count) = (SELECT count(*) - count(i64) FROM read_parquet('$dir/snappy.parquet')) AS nulls_ok
            FROM parquet_metadata('$dir/snappy.parquet') WHERE path_in_schema = 'i64'")
[ "$out" = '{"ok":true,"nulls_ok":true}' ] || { echo "FAIL stats: $out"; fail=1; }
meta=$(duck "SELECT DISTINCT created_by FROM parquet_file_metadata('$dir/zstd.parquet')")
case $meta in *'mssql-cdc version'*'(build mcdc)'*) ;; *) echo "FAIL created_by: $meta"; fail=1 ;; esac

# Nested: a checkpoint-shaped file (structs, maps given as objects and as entry arrays,
# lists with nulls, empty maps and lists, missing parents).
got=$(duck "SELECT to_json(t) AS j FROM read_parquet('$dir/checkpoint.parquet') t")
want='{"j":"{\"txn\":{\"appId\":\"app\",\"version\":3},\"add\":null,\"metaData\":null}"}
{"j":"{\"txn\":null,\"add\":{\"path\":\"a.parquet\",\"partitionValues\":{},\"size\":10,\"dataChange\":false,\"stats\":\"{\\\"numRecords\\\":1}\"},\"metaData\":null}"}
{"j":"{\"txn\":null,\"add\":{\"path\":\"b.parquet\",\"partitionValues\":{\"a\":\"x\",\"b\":null},\"size\":20,\"dataChange\":true,\"stats\":null},\"metaData\":null}"}
{"j":"{\"txn\":null,\"add\":{\"path\":\"c.parquet\",\"partitionValues\":null,\"size\":30,\"dataChange\":null,\"stats\":null},\"metaData\":null}"}
{"j":"{\"txn\":null,\"add\":null,\"metaData\":{\"id\":\"m1\",\"partitionColumns\":[],\"configuration\":{\"delta.appendOnly\":\"true\"}}}"}
{"j":"{\"txn\":null,\"add\":null,\"metaData\":{\"id\":\"m2\",\"partitionColumns\":[\"a\",null,\"b\"],\"configuration\":null}}"}
{"j":"{\"txn\":null,\"add\":null,\"metaData\":null}"}'
if [ "$got" != "$want" ]; then echo "FAIL nested:"; echo "$got"; fail=1; fi

[ $fail = 0 ] && echo "parquet_write: DuckDB read every file identically"
exit $fail
