#!/usr/bin/env bash
# bench/silver.sh [ROWS] [BIG] [SMALL] [FILE_ROWS] [THREADS]: silver apply beside DuckDB
# (scd1, and scd2's close-and-insert).
# Runs bench_silver (build dir $BUILD, default ./build) in a fresh temp dir, then DuckDB
# (tests/node's package) computing the same latest image per key of the BIG batch and
# writing the full new table, once with one thread and once with one per CPU, each timed
# with GNU time (wall seconds, CPU seconds user + system, peak RSS). THREADS is silver
# apply's (0: one per CPU, at most 8).
set -euo pipefail
ROWS=${1:-10000000} BIG=${2:-1000000} SMALL=${3:-1000} FILE_ROWS=${4:-262144} THREADS=${5:-0}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
D=$(mktemp -d "${TMPDIR:-/tmp}/mcdc-bench-silver-XXXXXX")
trap 'rm -rf "$D"' EXIT
. "$SRC/bench/lib.sh"
bench_refuse_memory_fs "$D"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), CPUs: $(nproc)"
"$BUILD/bench/bench_silver" "$D/run" "$ROWS" "$BIG" "$SMALL" "$FILE_ROWS" "$THREADS"
for t in 1 "$(nproc)"; do
  rm -f "$D/run/duck_out.parquet"
  /usr/bin/time -f "duckdb-big     %e s (CPU %U + %S s) with $t thread(s), peak RSS %M KB" \
    node "$SRC/bench/duck_threads.mjs" "$t" "$(cat "$D/run/duck_big.sql")" > "$D/duck.out"
done
echo "duckdb wrote $(grep -o '[0-9]*' "$D/duck.out" | head -1) rows (latest image per key of $BIG changes, full table rewrite)"
for t in 1 "$(nproc)"; do
  rm -f "$D/run/duck_scd2.parquet"
  /usr/bin/time -f "duckdb-scd2    %e s (CPU %U + %S s) with $t thread(s), peak RSS %M KB" \
    node "$SRC/bench/duck_threads.mjs" "$t" "$(cat "$D/run/duck_scd2.sql")" > "$D/duck.out"
done
echo "duckdb wrote $(grep -o '[0-9]*' "$D/duck.out" | head -1) scd2 rows (each changed key's current version closed, a new one opened, the table rewritten)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
