#!/usr/bin/env bash
# bench/backfill.sh: rows/s of a chunked snapshot's backfill against the simulator's bare
# read of the same table (`sim query`), and the backfill's peak RSS at N rows and at N/10
# rows (it must not grow with the table); each rate is the best of 3 runs, alternating, and
# the RSS the largest (a loaded machine makes one wall time noisy). Figures: docs/benchmarks.md.
#   bench/backfill.sh [BUILD_DIR] [N_ROWS] [CHUNK_ROWS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
n=${2:-1000000}
chunk=${3:-50000}
bin=$build/mssql-cdc
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$here/bench/lib.sh"
bench_refuse_memory_fs "$dir"

run() { # N: make a table of N rows, open a chunked snapshot, time sim query and backfill
  local rows=$1 d=$dir/$1
  mkdir -p "$d"
  "$bin" sim init "$d/db" --table dbo.orders --keys order_id --at 2026-10-01T00:00:00 \
    --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
  "$bin" sim workload "$d/db" --table dbo.orders --transactions $((rows / 100)) --rows-per-transaction 100 \
    --mix insert=100,update=0,delete=0 --seed 1 --start 2026-10-01T00:00:01 --capture-every never >/dev/null
  "$bin" sim capture "$d/db" --at 2030-01-01T00:00:00 >/dev/null
  "$bin" --warehouse "$d/lake" stream --source "sim:$d/db" --capture-instance dbo_orders --target bronze.o \
    --app-id o1 --checkpoint "$d/ck" --facts ops.facts --bootstrap --bootstrap-mode chunked >/dev/null 2>&1
  # best of 3 of each, alternating (a loaded machine makes single wall times noisy); each
  # backfill starts from the warehouse as the open left it
  cp -r "$d/lake" "$d/lake0"
  local qs=0 bs=0 bkb=0 rep t kb
  for rep in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$d/q.time" "$bin" sim query "$d/db" 'SELECT * FROM dbo.orders' --format csv >/dev/null
    rm -rf "$d/lake"; cp -r "$d/lake0" "$d/lake"
    /usr/bin/time -f "%e %M" -o "$d/b.time" "$bin" --warehouse "$d/lake" --log-level warn backfill \
      --source "sim:$d/db" --capture-instance dbo_orders --target bronze.o --app-id o1 --facts ops.facts \
      --chunk-rows "$chunk" 2>/dev/null >/dev/null
    read -r t kb <"$d/q.time"
    awk -v a="$t" -v b="$qs" 'BEGIN { exit !(b == 0 || a < b) }' && qs=$t
    read -r t kb <"$d/b.time"
    awk -v a="$t" -v b="$bs" 'BEGIN { exit !(b == 0 || a < b) }' && bs=$t
    [ "$kb" -gt "$bkb" ] && bkb=$kb
  done
  awk -v n="$rows" -v qs="$qs" -v bs="$bs" -v bkb="$bkb" 'BEGIN {
    printf "%d rows: sim query %.0f rows/s, backfill %.0f rows/s (%.2fx), backfill peak RSS %d KB\n",
           n, n / qs, n / bs, qs / bs, bkb }'
  echo "$bkb" >"$dir/rss.$rows"
}
run $((n / 10))
run "$n"
awk -v a="$(cat "$dir/rss.$((n / 10))")" -v b="$(cat "$dir/rss.$n")" \
  'BEGIN { printf "peak RSS at %s rows / at a tenth: %.2fx\n", "'"$n"'", b / a }'
