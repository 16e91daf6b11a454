#!/usr/bin/env bash
# bench/backfill_acceptance.sh: issue 17's acceptance runs at full size (not in the test
# command; tests/integration/backfill_kill.sh is the small version). For an integer key and
# a composite key (nvarchar, date, int): a table of N rows is backfilled in chunks of
# CHUNK_ROWS while a realtime workload updates, inserts and deletes rows and a continuous
# stream (--trigger interval:1s) runs; with KILLS > 0, kill -9s hit the backfill and the
# stream at random moments (seeded) and each is started again. Afterwards:
#   - silver (applied once the snapshot completed) equals the source table (`sim query`);
#   - every key of the snapshot is in bronze exactly once (operation 0, _snapshot = S), and
#     the snapshot rows are the plan's: each chunk's rows within its bounds;
#   - the facts rows agree: one snapshot_open, one snapshot_plan, one snapshot_chunk per
#     planned chunk whose rows add up to bronze's snapshot rows, one bootstrap row.
# Prints one line per run with its figures (docs/benchmarks.md). The test command runs a small
# version (tests/integration/backfill_acceptance_small.sh: tens of thousands of rows, a few
# kills, with ACCEPTANCE_ANY_FS=1 to allow a memory file system, which a figure may not use).
#   bench/backfill_acceptance.sh [BUILD_DIR] [N_ROWS] [CHUNK_ROWS] [KILLS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
n=${2:-1000000}
chunk=${3:-50000}
kills=${4:-0}
bin=$build/mssql-cdc
dir=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$dir"' EXIT
. "$here/bench/lib.sh"
[ "${ACCEPTANCE_ANY_FS:-}" = 1 ] || bench_refuse_memory_fs "$dir"
RANDOM=${ACCEPTANCE_SEED:-17}
die() { echo "backfill_acceptance: FAIL: $*" >&2; exit 1; }

run() { # KIND: int or composite
  local kind=$1 d=$dir/$1 schema keys cols
  mkdir -p "$d"
  if [ "$kind" = int ]; then
    schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL'
    keys=order_id; cols=order_id,customer,amount,placed_at
  else
    schema='region NVARCHAR(10) NOT NULL, day DATE NOT NULL, id INT NOT NULL, amount DECIMAL(12,2) NULL, note NVARCHAR(40) NULL'
    keys=region,day,id; cols=region,day,id,amount,note
  fi
  local M=("$bin" --warehouse "$d/lake" --log-level warn)
  "${M[@]}" sim init "$d/db" --table dbo.t --keys "$keys" --at 2026-10-01T00:00:00 --schema "$schema" >/dev/null
  "${M[@]}" sim workload "$d/db" --table dbo.t --transactions $((n / 1000)) --rows-per-transaction 1000 \
    --mix insert=100,update=0,delete=0 --seed 1 --start 2026-10-01T00:00:01 --capture-every never >/dev/null
  "${M[@]}" sim capture "$d/db" >/dev/null
  local ST=("${M[@]}" stream --source "sim:$d/db" --capture-instance dbo_t --target bronze.t --app-id t1
            --checkpoint "$d/ck" --facts ops.facts --bootstrap --bootstrap-mode chunked)
  local BF=("${M[@]}" backfill --source "sim:$d/db" --capture-instance dbo_t --target bronze.t --app-id t1
            --facts ops.facts --chunk-rows "$chunk" --target-wave-seconds 0)
  "${ST[@]}" >/dev/null 2>"$d/err" || die "$kind: opening the snapshot: $(cat "$d/err")"
  local t0=$SECONDS
  # the realtime workload and the continuous stream, beside the backfill
  # (from the host's clock now: the simulator's clock jumps forward to it, then the commits
  # come at the pace of the host's clock)
  "${M[@]}" sim workload "$d/db" --table dbo.t --transactions 1000000 --realtime --interval 5ms \
    --start "$(date -u +%Y-%m-%dT%H:%M:%S)" --mix insert=30,update=50,delete=20 --rows-per-transaction 5 \
    --seed 2 --capture-every 1s >/dev/null 2>&1 &
  local wl=$!; pids+=("$wl")
  "${ST[@]}" --trigger interval:1s >/dev/null 2>>"$d/stream.err" &
  local sp=$!; pids+=("$sp")
  local killed_bf=0 killed_st=0 bf_runs=1 bf_failed=0 rc bp
  "${BF[@]}" >/dev/null 2>>"$d/bf.err" &
  bp=$!; pids+=("$bp")
  while :; do
    if [ $((killed_bf + killed_st)) -lt "$kills" ] && kill -0 "$bp" 2>/dev/null; then
      sleep "0.$((RANDOM % 45 + 5))"
      kill -0 "$bp" 2>/dev/null || continue # it ended meanwhile: see how below
      if [ $((RANDOM % 2)) = 0 ]; then
        kill -9 "$bp" 2>/dev/null || true
        wait "$bp" 2>/dev/null || true
        killed_bf=$((killed_bf + 1))
        bf_runs=$((bf_runs + 1))
        "${BF[@]}" >/dev/null 2>>"$d/bf.err" &
        bp=$!; pids+=("$bp")
      else
        kill -9 "$sp" 2>/dev/null || true
        wait "$sp" 2>/dev/null || true
        killed_st=$((killed_st + 1))
        "${ST[@]}" --trigger interval:1s >/dev/null 2>>"$d/stream.err" &
        sp=$!; pids+=("$sp")
      fi
      continue
    fi
    rc=0; wait "$bp" || rc=$?
    [ $rc = 0 ] && break
    # a runtime failure (logged in bf.err) is run again, a few times at most
    [ $rc = 3 ] || die "$kind: backfill exit $rc: $(tail -3 "$d/bf.err")"
    bf_failed=$((bf_failed + 1))
    [ "$bf_failed" -le 5 ] || die "$kind: the backfill failed $bf_failed times: $(tail -3 "$d/bf.err")"
    bf_runs=$((bf_runs + 1))
    "${BF[@]}" >/dev/null 2>>"$d/bf.err" &
    bp=$!; pids+=("$bp")
  done
  local bf_secs=$((SECONDS - t0))
  kill -TERM "$wl" 2>/dev/null || true; wait "$wl" 2>/dev/null || true
  kill -TERM "$sp" 2>/dev/null || true; wait "$sp" 2>/dev/null || true
  "${M[@]}" sim capture "$d/db" >/dev/null
  "${ST[@]}" >/dev/null 2>"$d/err" || die "$kind: the last stream run: $(cat "$d/err")"
  "${M[@]}" silver apply --bronze bronze.t --silver silver.t --capture-instance dbo_t --keys "$keys" \
    --control ops.control --facts ops.facts >"$d/silver.out" 2>"$d/err" || die "$kind: silver apply: $(cat "$d/err")"
  # silver equals the source table
  "${M[@]}" sim query "$d/db" "SELECT $cols FROM dbo.t" --format csv | tail -n +2 | LC_ALL=C sort >"$d/src.csv"
  "${M[@]}" table cat silver.t --format csv --columns "$cols" | tail -n +2 | LC_ALL=C sort >"$d/silver.csv"
  cmp -s "$d/src.csv" "$d/silver.csv" || die "$kind: silver differs from the source table: $(diff "$d/src.csv" "$d/silver.csv" | head -5)"
  # bronze's snapshot rows: each key once
  "${M[@]}" table cat bronze.t --format csv --columns "_operation,_snapshot,_chunk,$keys" | tail -n +2 |
    awk -F, '$1 == 0 && $2 != ""' >"$d/snap.csv"
  local snap_rows dup
  snap_rows=$(wc -l <"$d/snap.csv")
  dup=$(cut -d, -f4- "$d/snap.csv" | LC_ALL=C sort | uniq -d | wc -l)
  [ "$dup" = 0 ] || die "$kind: $dup keys have two snapshot rows in bronze"
  # the facts rows
  "${M[@]}" table cat ops.facts --format jsonl --columns event,rows,detail >"$d/facts.jsonl"
  node -e '
    const fs = require("fs");
    const rows = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const snapRows = +process.argv[2];
    const by = (e) => rows.filter((r) => r.event === e);
    const need = (c, m) => { if (!c) { console.error(m); process.exit(1); } };
    need(by("snapshot_open").length === 1, "snapshot_open rows: " + by("snapshot_open").length);
    need(by("snapshot_plan").length === 1, "snapshot_plan rows: " + by("snapshot_plan").length);
    need(by("bootstrap").length === 1, "bootstrap rows: " + by("bootstrap").length);
    const plan = JSON.parse(by("snapshot_plan")[0].detail);
    const chunks = by("snapshot_chunk").map((r) => ({ rows: r.rows, d: JSON.parse(r.detail) }));
    need(chunks.length === plan.chunks.length, chunks.length + " snapshot_chunk rows for " + plan.chunks.length + " chunks");
    const seen = new Set(chunks.map((c) => c.d.chunk));
    need(seen.size === plan.chunks.length, "a chunk has two snapshot_chunk rows");
    const sum = chunks.reduce((a, c) => a + c.rows, 0);
    need(sum === snapRows, "snapshot_chunk rows add up to " + sum + ", bronze holds " + snapRows);
    const boot = JSON.parse(by("bootstrap")[0].detail);
    need(boot.rows === snapRows && boot.chunks === plan.chunks.length, "bootstrap row " + JSON.stringify(boot));
    need(chunks.every((c) => typeof c.d.consistent_lsn === "string"), "a chunk without consistent_lsn");
    console.log(plan.chunks.length);
  ' "$d/facts.jsonl" "$snap_rows" >"$d/n_chunks" || die "$kind: facts rows: $(cat "$d/n_chunks")"
  local changes src_rows
  changes=$("${M[@]}" table cat bronze.t --format csv --columns _operation | tail -n +2 | grep -vc '^0$' || true)
  src_rows=$(wc -l <"$d/src.csv")
  echo "$kind key, $n rows in chunks of $chunk: backfill done in ${bf_secs}s over $bf_runs runs" \
       "($killed_bf kill -9s of the backfill, $killed_st of the stream, $bf_failed failed runs), $(cat "$d/n_chunks") chunks," \
       "$snap_rows snapshot rows each once, $changes change rows streamed meanwhile;" \
       "silver = source ($src_rows rows), facts agree with bronze"
  rm -rf "$d"
}
for kind in ${KINDS:-int composite}; do run "$kind"; done
