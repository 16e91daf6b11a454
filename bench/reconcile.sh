#!/usr/bin/env bash
# bench/reconcile.sh [ROWS] [FILE_ROWS] [REPEAT]: silver's side of reconcile's tier 1 beside
# DuckDB. Builds a silver table of ROWS rows (default 10,000,000) with bench_reconcile
# (build dir $BUILD, default ./build) in a fresh temp dir and times its passes (rows and key
# sums per fine bucket from silver's key column); then DuckDB (tests/node's package)
# computes the same buckets with read_parquet over the files `mssql-cdc table files` lists,
# with one thread and with one per CPU. Every pass prints its seconds (in the process: the
# startup of node and of the build are left out) and a check line; the check lines must
# all be equal, or the script fails.
set -euo pipefail
ROWS=${1:-10000000} FILE_ROWS=${2:-262144} REPEAT=${3:-3}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
D=$(mktemp -d "${TMPDIR:-/tmp}/mcdc-bench-reconcile-XXXXXX")
trap 'rm -rf "$D"' EXIT
. "$SRC/bench/lib.sh"
bench_refuse_memory_fs "$D"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), CPUs: $(nproc)"
"$BUILD/bench/bench_reconcile" "$D/run" "$ROWS" "$FILE_ROWS" 0 "$REPEAT" | tee "$D/ours.out"
mapfile -t files < <("$BUILD/mssql-cdc" table files "$D/run/silver")
for t in 1 "$(nproc)"; do
  node "$SRC/bench/duck_reconcile.mjs" "$t" "$REPEAT" "${files[@]}" | tee -a "$D/duck.out"
done
if [ "$(grep '^check' "$D/ours.out" "$D/duck.out" | cut -d: -f2 | sort -u | wc -l)" != 1 ]; then
  echo "bench/reconcile.sh: the check lines differ: mssql-cdc and DuckDB computed different buckets" >&2
  exit 1
fi
echo "check lines equal ($(grep -c '^check' "$D/ours.out") + $(grep -c '^check' "$D/duck.out") passes)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
