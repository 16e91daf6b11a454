# The stream's command line and checkpoint safety: two streams on one checkpoint (the
# second fails at once), a checkpoint reused with another target or capture instance,
# --bootstrap with --starting-lsn, options that contradict flags, unknown options and
# sources, --progress events, SIGTERM of an interval stream.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL)"
sim_capture 2026-10-01T14:00:01

expect() { # expect CODE CMD...: run, check the exit code, keep stderr in $err
  local want=$1; shift
  set +e
  err=$("$@" 2>&1 >/dev/null)
  local rc=$?
  set -e
  [ $rc = "$want" ] || die "exit $rc, want $want: $* : $err"
}

# an interval stream holds the checkpoint; a second one fails at once
"$MCDC_BIN" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.one \
  --app-id one --checkpoint "$T/ck/one" --facts ops.facts --trigger interval:100ms \
  --progress "$T/progress.jsonl" >"$T/one.out" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do [ -s "$T/progress.jsonl" ] && break; sleep 0.05; done
[ -s "$T/progress.jsonl" ] || die "no progress event from the interval stream"
start=$(date +%s%N)
expect 2 stream one
grep -q <<<"$err" "already locked by pid $pid" || die "lock message: $err"
[ $(( ($(date +%s%N) - start) / 1000000 )) -lt 15000 ] || die "the second stream waited for the lock (a held lock fails at once)"
kill -TERM $pid
wait $pid || die "SIGTERM: the interval stream did not exit 0"
grep -q "batch 0: 1 rows" "$T/one.out" || die "no batch line: $(cat "$T/one.out")"
head -1 "$T/progress.jsonl" | grep -q '"batchId":0,"numInputRows":1' || die "progress: $(head -1 "$T/progress.jsonl")"
head -1 "$T/progress.jsonl" | grep -q '"sources":\[{"description":"mssql-cdc\[dbo_orders\]","startOffset":{"lsn":"0x' || die "progress sources"

# a checkpoint is one stream's
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.other \
  --app-id one --checkpoint "$T/ck/one"
grep -q <<<"$err" "belongs to target 'bronze.one'" || die "reuse message: $err"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_other --target bronze.one \
  --app-id one --checkpoint "$T/ck/one"
# a deleted checkpoint under the same app id is refused, not silently skipped
rm -rf "$T/ck/one"
expect 2 stream one
grep -q <<<"$err" "already holds batches of app_id 'one'" || die "rewind message: $err"

# usage errors
expect 2 stream two --bootstrap --starting-lsn latest
expect 2 stream two --option maxCommitsPerBatch=3 --max-commits-per-batch 2
grep -q <<<"$err" "disagree" || die "contradiction message: $err"
expect 2 stream two --trigger sometimes
expect 2 stream two --starting-lsn 0xZZ
expect 2 M stream --source "nope:x;PWD=secret" --capture-instance dbo_orders --target bronze.two \
  --app-id two --checkpoint "$T/ck/two"
grep -q <<<"$err" "secret" && die "password shown: $err"
expect 2 M stream --capture-instance dbo_orders --target bronze.two --app-id two --checkpoint "$T/ck/two"
# an option alone sets the setting; the same value twice is fine; unknown ones are named
out=$(MSSQL_CDC_SOURCE="sim:$DB" M stream --target bronze.three --app-id three --checkpoint "$T/ck/three" \
  --option captureInstance=dbo_orders --option maxCommitsPerBatch=1 --max-commits-per-batch 1 \
  --option frobnicate=1 2>&1) || die "options: $out"
grep -q <<<"$out" "frobnicate" || die "unknown option not named: $out"
grep -q <<<"$out" "2 batches, 1 rows" || die "summary: $out"
# includeCommandId=false leaves the column out
stream four --option includeCommandId=false >/dev/null
four=$(M table cat bronze.four --format jsonl)
[ -n "$four" ] || die "bronze.four is empty"
if grep -q '_command_id' <<<"$four"; then die "_command_id present"; fi
# starting at latest reads nothing of the past: batch 0 is (L, L], recorded at once
stream five --starting-lsn latest | grep -q "1 batch, 0 rows" || die "latest read the past"
# --control: the verdict follows the committed batches; a run with nothing new catches up
sim_exec 2026-10-01T15:10:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (2, 'b', 2.00, NULL)"
sim_capture 2026-10-01T15:10:01
out=$(stream six --control ops.control) || die "--control: $out"
grep -q <<<"$out" "finalized_until 2026-10-01T15:00:00 for bronze.six" || die "verdict: $out"
out=$(stream six --control ops.control --granularity minute) || die "--control: $out"
grep -q <<<"$out" "finalized_until 2026-10-01T15:10:00 for bronze.six" || die "catch-up: $out"
expect 2 stream seven --granularity hour
expect 2 stream seven --control ops.control --granularity week
echo "ok"
