#!/usr/bin/env bash
# bench/silver.sh [ROWS] [BIG] [SMALL] [FILE_ROWS]: silver apply beside DuckDB.
# Runs bench_silver (build dir $BUILD, default ./build) in a fresh temp dir, then DuckDB
# (tests/node, one thread) computing the same latest image per key of the BIG batch and
# writing the full new table, timed with GNU time (seconds, peak RSS).
set -euo pipefail
ROWS=${1:-10000000} BIG=${2:-1000000} SMALL=${3:-1000} FILE_ROWS=${4:-262144}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
D=$(mktemp -d /tmp/mcdc-bench-silver-XXXXXX)
trap 'rm -rf "$D"' EXIT
"$BUILD/bench/bench_silver" "$D/run" "$ROWS" "$BIG" "$SMALL" "$FILE_ROWS"
/usr/bin/time -f "duckdb-big     %e s  peak RSS %M KB" \
  node "$SRC/tests/node/duck.mjs" "$(cat "$D/run/duck_big.sql")" > "$D/duck.out"
echo "duckdb wrote $(grep -o '[0-9]*' "$D/duck.out" | head -1) rows (latest image per key of $BIG changes, full table rewrite)"
