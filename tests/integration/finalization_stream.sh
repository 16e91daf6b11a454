#!/usr/bin/env bash
# Finalization through the stream (architecture §3 invariant 3, data first, verdict after):
# 1. a stream killed after its bronze commit, or while its tracker writes the verdict,
#    never leaves a verdict ahead of the data, and the next run, with nothing new to
#    read, catches the verdict up from the checkpoint;
# 2. a continuous stream (interval:1s) following a --realtime workload moves the verdict
#    while it runs, with at most one control commit per period crossed, plus one.
set -euo pipefail
: "${MCDC_SRC:?set by ctest}"
source "$MCDC_SRC/tests/integration/stream_lib.bash"
sim_setup
C=(--control ops.table_finalization --table bronze.orders)
final() { M finalization is-final "${C[@]}" --period-end "$1" >/dev/null 2>&1; echo $?; }
run() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders \
          --app-id orders --checkpoint "$T/ck/orders" --facts ops.facts \
          --control ops.table_finalization "$@"; }

sim_exec 2026-10-01T14:10:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL)"
sim_capture 2026-10-01T14:10:01
run >/dev/null || die "first run"
[ "$(final 2026-10-01T14:00:00)" = 0 ] || die "14:00 not final after the first run"
[ "$(final 2026-10-01T15:00:00)" = 1 ] || die "15:00 final too early"

sim_exec 2026-10-01T15:10:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (2, 'b', 2.00, NULL)"
sim_capture 2026-10-01T15:10:01
for fp in stream.after_bronze_commit stream.after_facts stream.before_commit finalize.control.file_written; do
  { MCDC_FAILPOINT=$fp run; rc=$?; } >/dev/null 2>&1 || true
  [ "$rc" -eq 137 ] || die "failpoint $fp: exit $rc, want 137"
  [ "$(final 2026-10-01T15:00:00)" = 1 ] || die "verdict ahead of the checkpoint after a kill at $fp"
done
# bronze holds the 15:10 change now, and the checkpoint has committed its batch: nothing
# new to read, and the verdict still catches up
out=$(run) || die "catch-up run: $out"
[ "$(final 2026-10-01T15:00:00)" = 0 ] || die "the run with nothing new did not catch the verdict up: $out"
[ "$(final 2026-10-01T16:00:00)" = 1 ] || die "16:00 final too early"
check_bronze bronze.orders ops.facts orders

# continuous: a realtime workload of about 6 s, a stream polling every second
v0=$(M table info ops.table_finalization --format json | sed -E 's/.*"version":([0-9]+).*/\1/')
start=$(date -u +%s)
"$MCDC_BIN" sim workload "$DB" --table dbo.orders --transactions 30 --interval 200ms --realtime \
  --capture-every 500ms --seed 3 >/dev/null &
wl=$!
"$MCDC_BIN" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.live \
  --app-id live --checkpoint "$T/ck/live" --control ops.table_finalization \
  --granularity minute --trigger interval:1s >"$T/live.out" 2>&1 &
st=$!
moved_while_running=0
for _ in $(seq 1 40); do
  sleep 0.5
  if M finalization show --control ops.table_finalization --table bronze.live >/dev/null 2>&1; then
    kill -0 "$st" 2>/dev/null && moved_while_running=1
    break
  fi
done
wait "$wl" || die "workload failed"
sleep 2
M sim capture "$DB" >/dev/null 2>&1 || true
sleep 2
kill -TERM "$st"
wait "$st" || die "continuous stream exited $?: $(cat "$T/live.out")"
end=$(date -u +%s)
[ "$moved_while_running" = 1 ] || die "the verdict did not move while the stream ran: $(cat "$T/live.out")"
v1=$(M table info ops.table_finalization --format json | sed -E 's/.*"version":([0-9]+).*/\1/')
minutes=$(( end / 60 - start / 60 + 1 ))
commits=$(( v1 - v0 ))
echo "continuous: $commits control commits over $minutes minute period(s)"
[ "$commits" -le $(( minutes + 1 )) ] || die "$commits control commits for $minutes periods"
last=$(M table cat bronze.live --format jsonl | sed -E 's/.*"_commit_ts":"([^"]*)".*/\1/' | sort | tail -1)
want=$(date -u -d "${last%.*}" +%Y-%m-%dT%H:%M:00)
[ "$(M finalization is-final --control ops.table_finalization --table bronze.live --period-end "$want" >/dev/null 2>&1; echo $?)" = 0 ] \
  || die "the last verdict ($want) was not written at exit"
echo PASS
