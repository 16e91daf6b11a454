#!/usr/bin/env bash
# bench/run_acceptance.sh: issue #20's acceptance run of `mssql-cdc run` (docs/benchmarks.md).
#   bench/run_acceptance.sh [BUILD_DIR] [N_TABLES] [SECONDS] [N_KILLS]
# N_TABLES (default 50) tables of one simulated database in one `run` process (facts,
# control and silver for each, trigger interval:2s), a realtime workload on every table for
# SECONDS (default 240: one transaction a table every 2 s, captured every second), and
# N_KILLS (default 10) kill -9s of the process at random moments, each followed by a
# restart. Then the workload ends, the run catches up and gets SIGTERM, and every table is
# checked: bronze equals its change table exactly once (stream_check.mjs bronze-vs-ct),
# its verdict covers the minute before its last commit (finalization is-final), silver
# equals its source table (silver_check.mjs silver-vs-source), and SIGTERM exited 0. Prints
# one line per failure and a summary; exits 1 when anything failed. The suite keeps a small
# version of it: tests/integration/run_config.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
tables=${2:-50}
seconds=${3:-240}
kills=${4:-10}
bin=$build/mssql-cdc
CHECK="node $here/tests/integration/stream_check.mjs"
SCHECK="node $here/tests/integration/silver_check.mjs"
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$dir"' EXIT
cd "$dir"
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL'
for i in $(seq 1 "$tables"); do
  "$bin" sim init db.sqlite --table "dbo.t$i" --keys order_id --at 2026-10-01T13:59:00 --schema "$schema" >/dev/null
done
"$bin" sim capture db.sqlite --at 2026-10-01T13:59:30 >/dev/null
cat > run.yaml <<'YAML'
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  trigger: interval:2s
  granularity: minute
tables:
  - source: shop
    include: ["dbo_t*"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck/{ci}"
    silver: "silver.{table}"
YAML

echo "== $tables tables, a realtime workload for ${seconds}s, $kills kill -9s"
wls=()
for i in $(seq 1 "$tables"); do
  "$bin" sim workload db.sqlite --table "dbo.t$i" --transactions $((seconds / 2)) --interval 2s \
    --realtime --capture-every never --seed "$i" >/dev/null 2>"wl-$i.err" &
  wls+=($!)
  pids+=($!)
done
( while :; do "$bin" sim capture db.sqlite >/dev/null 2>&1 || true; sleep 1; done ) &
capturer=$!
pids+=("$capturer")

start_run() {
  "$bin" run --config run.yaml >>run.out 2>>run.err &
  r=$!
  pids+=("$r")
}
start_run
t_end=$(( $(date +%s) + seconds ))
for k in $(seq 1 "$kills"); do
  left=$(( t_end - $(date +%s) ))
  [ "$left" -gt 2 ] || break
  gap=$(( left / (kills - k + 1) ))
  sleep $(( 1 + RANDOM % (gap > 1 ? gap : 1) ))
  kill -9 "$r" 2>/dev/null || true
  wait "$r" 2>/dev/null || true
  echo "   kill -9 $k at $(date -u +%H:%M:%S) ($(grep -c ': batch ' run.out) batch lines so far)"
  start_run
done
fail=0
for p in "${wls[@]}"; do wait "$p" || { echo "FAIL: a workload failed: $(cat wl-*.err | head -3)"; fail=1; }; done
kill "$capturer"; wait "$capturer" 2>/dev/null || true
"$bin" sim capture db.sqlite >/dev/null

n_ct() { "$bin" sim query db.sqlite "SELECT COUNT(*) AS n FROM cdc.dbo_t$1_CT" --format jsonl | sed -E 's/.*:([0-9]+).*/\1/'; }
n_bronze() { "$bin" --warehouse lake table cat "bronze.t$1" --format jsonl 2>/dev/null | wc -l; }
for _ in $(seq 1 120); do
  caught=1
  for i in $(seq 1 "$tables"); do [ "$(n_ct "$i")" = "$(n_bronze "$i")" ] || { caught=0; break; }; done
  [ "$caught" = 1 ] && break
  sleep 1
done
[ "$caught" = 1 ] || { echo "FAIL: bronze did not catch up"; fail=1; }
sleep 6 # rounds after the last batch, so verdicts and silver follow it
t0=$(date +%s%N)
kill -TERM "$r"
rc=0; wait "$r" || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$rc" = 0 ] || { echo "FAIL: SIGTERM: exit $rc"; fail=1; }
echo "== SIGTERM: exit $rc after $ms ms"

rows=0
for i in $(seq 1 "$tables"); do
  t=t$i
  "$bin" sim query db.sqlite "SELECT * FROM cdc.dbo_${t}_CT" --format jsonl > ct.jsonl
  "$bin" --warehouse lake table cat "bronze.$t" --format jsonl > bronze.jsonl
  rows=$((rows + $(wc -l < bronze.jsonl)))
  $CHECK bronze-vs-ct ct.jsonl bronze.jsonl >/dev/null || { echo "FAIL: bronze.$t differs from its change table"; fail=1; }
  last=$(sed -E 's/.*"_commit_ts":"([^"]*)".*/\1/' bronze.jsonl | sort | tail -1)
  want=$(date -u -d "${last%.*}" +%Y-%m-%dT%H:%M:00)
  "$bin" --warehouse lake finalization is-final --control ops.control --table "bronze.$t" \
    --period-end "$want" >/dev/null 2>&1 || { echo "FAIL: bronze.$t: the verdict does not reach $want"; fail=1; }
  "$bin" sim query db.sqlite "SELECT * FROM dbo.$t" --format jsonl > src.jsonl
  "$bin" --warehouse lake table cat "silver.$t" --format jsonl > silver.jsonl
  $SCHECK silver-vs-source silver.jsonl src.jsonl >/dev/null || { echo "FAIL: silver.$t differs from dbo.$t"; fail=1; }
done
echo "== $tables tables, $rows change rows in bronze, $(grep -c ': batch ' run.out) batch lines, $(grep -c 'replayed' run.out || true) replays, $(grep -c 'warning' run.err || true) warnings"
[ "$fail" = 0 ] && echo "== acceptance: every bronze equals its change table, every verdict holds, every silver equals its source"
exit "$fail"
