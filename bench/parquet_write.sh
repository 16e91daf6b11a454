#!/usr/bin/env bash
# bench/parquet_write.sh: write the same 10 million rows (id long, s ~20-char string with
# 1000 distinct values, amount decimal(12,2), ts timestamp_ntz, n nullable int) with our
# writer (bench_parquet_write) and with DuckDB single-threaded (COPY ... TO ... (FORMAT
# parquet)), same codec, and print rows/s for both, the ratio, the file sizes and our peak
# RSS. Usage: bench/parquet_write.sh [BUILD_DIR] [ROWS] [CODEC]   (CODEC snappy|zstd)
# Needs tests/node/node_modules (scripts/install-deps). Not run by the tests.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
rows=${2:-10000000}
codec=${3:-snappy}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$src/bench/lib.sh"
bench_refuse_memory_fs "$dir"

ours=$("$build/bench/bench_parquet_write" "$dir/mcdc.parquet" "$rows" "$codec")
sql="COPY (SELECT i::BIGINT AS id,
               'customer_name_' || lpad(((i * 7919) % 1000)::VARCHAR, 6, '0') AS s,
               (((i * 37) % 10000000) / 100.0)::DECIMAL(12,2) AS amount,
               TIMESTAMP '2024-01-01 00:00:00' + to_seconds(i) AS ts,
               CASE WHEN i % 10 = 0 THEN NULL ELSE (i % 1000)::INTEGER END AS n
        FROM range($rows) t(i))
      TO '$dir/duckdb.parquet' (FORMAT parquet, COMPRESSION $codec)"
duck=$(node "$src/bench/duck_copy.mjs" "$sql")

# The two files must hold the same rows.
same=$(node "$src/tests/node/duck.mjs" "SELECT count(*) AS diff FROM (
  (SELECT * FROM read_parquet('$dir/mcdc.parquet') EXCEPT ALL SELECT * FROM read_parquet('$dir/duckdb.parquet'))
  UNION ALL
  (SELECT * FROM read_parquet('$dir/duckdb.parquet') EXCEPT ALL SELECT * FROM read_parquet('$dir/mcdc.parquet')))")

our_s=$(echo "$ours" | sed 's/.*"seconds":\([0-9.]*\).*/\1/')
duck_s=$(echo "$duck" | sed 's/.*"seconds":\([0-9.]*\).*/\1/')
our_bytes=$(stat -c %s "$dir/mcdc.parquet")
duck_bytes=$(stat -c %s "$dir/duckdb.parquet")
rss=$(echo "$ours" | sed 's/.*"peak_rss_mib":\([0-9.]*\).*/\1/')
awk -v r="$rows" -v a="$our_s" -v b="$duck_s" -v ab="$our_bytes" -v bb="$duck_bytes" \
    -v rss="$rss" -v codec="$codec" -v same="$same" 'BEGIN {
  printf "codec %s, %d rows, identical rows: %s\n", codec, r, (same ~ /"diff":"0"/) ? "yes" : "NO " same
  printf "mcdc    %8.3f s  %12.0f rows/s  %11d bytes  peak RSS %.1f MiB\n", a, r / a, ab, rss
  printf "duckdb  %8.3f s  %12.0f rows/s  %11d bytes\n", b, r / b, bb
  printf "speed ratio mcdc/duckdb %.2f, size ratio %.3f\n", b / a, ab / bb
}'
