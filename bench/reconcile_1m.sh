#!/usr/bin/env bash
# bench/reconcile_1m.sh [ROWS]: issue 19's first acceptance at full size. A simulator table of
# ROWS rows (default 1,000,000; inserts of 10 rows a transaction), streamed into bronze
# (--bootstrap) and applied to silver; reconcile --sample 1.0 must match (exit 0). Then five
# defects are planted on silver one after another by bench_reconcile_defects (a Delta commit
# that rewrites one file each): a changed value, a missing row, a duplicated key, an extra
# row, a NULL where the source has a value. After each, reconcile must exit 1 naming exactly
# the keys planted so far with their status (DIFFERENT, MISSING, DUPLICATE, EXTRA,
# DIFFERENT), nothing else. Prints each step's seconds; fails on any other answer.
set -euo pipefail
ROWS=${1:-1000000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$SRC/build}
M="$BUILD/mssql-cdc"
D=$(mktemp -d "${TMPDIR:-/tmp}/mcdc-bench-reconcile1m-XXXXXX")
trap 'rm -rf "$D"' EXIT
cd "$D"
# t WHAT CMD...: run CMD (its output to the caller's redirections), add WHAT's seconds
# to times.txt, return CMD's exit code
t() { local what=$1 s rc; shift; s=$(date +%s.%N); set +e; "$@"; rc=$?; set -e
  awk -v a="$s" -v b="$(date +%s.%N)" -v w="$what" 'BEGIN { printf "%8.3f s  %s\n", b - a, w }' >> times.txt; return $rc; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), CPUs: $(nproc)"
$M sim init db.sqlite --table dbo.orders --keys order_id --at 2026-10-01T00:00:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL' >/dev/null
t "sim workload: $ROWS inserts" $M sim workload db.sqlite --table dbo.orders --transactions $((ROWS / 10)) --rows-per-transaction 10 \
  --mix insert=100,update=0,delete=0 --seed 3 --start 2026-10-01T00:00:01 --interval 1ms >/dev/null
t "stream --bootstrap: bronze" $M stream --source sim:db.sqlite --capture-instance dbo_orders --target bronze.o --app-id o \
  --checkpoint ck --facts ops.facts --control ops.control --bootstrap >/dev/null 2>&1
t "silver apply" $M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys order_id \
  --control ops.control --facts ops.facts >/dev/null
rec() {
  local rc=0
  t "reconcile --sample 1.0 ($1)" $M reconcile --source sim:db.sqlite --capture-instance dbo_orders --silver silver.o \
    --bronze bronze.o --control ops.control --sample 1.0 --format json > rec.json || rc=$?
  echo $rc > rec.rc
}
rec clean
[ "$(cat rec.rc)" = 0 ] || { echo "FAIL: the clean table does not match: $(cat rec.json)" >&2; exit 1; }
echo "clean: $(sed -E 's/.*"buckets":([0-9]+),"matched":([0-9]+).*"source_rows":([0-9]+),"silver_rows":([0-9]+).*/buckets \1, matched \2, source rows \3, silver rows \4/' rec.json)"
want=()
i=0
for d in change:DIFFERENT drop:MISSING dup:DUPLICATE extra:EXTRA blank:DIFFERENT; do
  i=$((i + 1))
  k=$("$BUILD/bench/bench_reconcile_defects" lake/silver/o "${d%%:*}" $((ROWS * i / 6)))
  want+=("{\"key\":$k,\"status\":\"${d#*:}\"}")
  rec "${d%%:*}"
  [ "$(cat rec.rc)" = 1 ] || { echo "FAIL: after ${d%%:*}: exit $(cat rec.rc): $(cat rec.json)" >&2; exit 1; }
  for w in "${want[@]}"; do
    grep -qF "$w" rec.json || { echo "FAIL: after ${d%%:*}: $w not named: $(cat rec.json)" >&2; exit 1; }
  done
  n=$(grep -o '"status":"' rec.json | wc -l)
  [ "$n" = "${#want[@]}" ] || { echo "FAIL: after ${d%%:*}: $n keys named, want ${#want[@]}: $(cat rec.json)" >&2; exit 1; }
  echo "${d%%:*}: named ${want[-1]}; $n keys named in all, exit 1"
done
cat times.txt
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
