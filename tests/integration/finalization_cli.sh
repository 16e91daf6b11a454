#!/usr/bin/env bash
# The finalization commands end to end: advance from an offset and from a checkpoint,
# show in every format, is-final's exit codes (0 final, 1 not yet, 2 missing), with --wait,
# refusals that write nothing, freshness and its --max-age check.
set -uo pipefail
: "${MCDC_BIN:?}"
dir=$(mktemp -d /tmp/mcdc-fin-cli-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export MSSQL_CDC_WAREHOUSE=$dir/lake
fail() { echo "FAIL: $*"; exit 1; }
run() { "$MCDC_BIN" "$@"; }
expect_exit() { # code, command...
  local want=$1; shift
  "$@" >"$dir/out" 2>"$dir/err"; local got=$?
  [ "$got" -eq "$want" ] || { cat "$dir/out" "$dir/err"; fail "exit $got, want $want: $*"; }
}
C=(--control ops.table_finalization)

# A bad granularity, a bad LSN, a bad time, a missing offset: refused, nothing created.
expect_exit 2 run finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x1 --end-commit-ts 2026-10-01T15:10:00 --granularity week
grep -q "granularity 'week'" "$dir/err" || fail "granularity message: $(cat "$dir/err")"
expect_exit 2 run finalization advance "${C[@]}" --table bronze.orders --end-lsn 12 --end-commit-ts 2026-10-01T15:10:00
expect_exit 2 run finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x1 --end-commit-ts yesterday
expect_exit 2 run finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x1
expect_exit 2 run finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x1 --end-commit-ts 2026-10-01T15:10:00 --checkpoint "$dir/ck"
[ ! -e "$dir/lake/ops/table_finalization" ] || fail "a refused advance created the control table"

# is-final before the control table exists: 2, not 1.
expect_exit 2 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T15:00:00
grep -q "does not exist" "$dir/err" || fail "missing table message: $(cat "$dir/err")"

# 15:10 at hour -> 15:00
expect_exit 0 run finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x2D000001A00003 --end-commit-ts 2026-10-01T15:10:00
grep -q "finalized_until 2026-10-01T15:00:00 (moved" "$dir/out" || fail "advance output: $(cat "$dir/out")"
# older: unchanged
expect_exit 0 run finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x2D000001A00001 --end-commit-ts 2026-10-01T14:10:00 --format json
grep -q '"finalized_until":"2026-10-01T15:00:00","moved":false' "$dir/out" || fail "older offset: $(cat "$dir/out")"

expect_exit 0 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T15:00:00
expect_exit 1 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T16:00:00
expect_exit 0 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T17:00:00+02:00
expect_exit 2 run finalization is-final "${C[@]}" --table bronze.order --period-end 2026-10-01T15:00:00
grep -q "no row for 'bronze.order'" "$dir/err" || fail "missing row message: $(cat "$dir/err")"
expect_exit 1 run finalization is-final -q "${C[@]}" --table bronze.orders --period-end 2026-10-01T16:00:00
[ ! -s "$dir/out" ] || fail "--quiet printed something"

# From a checkpoint: the newest committed batch only.
mkdir -p "$dir/ck/offsets" "$dir/ck/commits"
for n in 0 1 2; do
  printf '{"batch_id":%d,"start":{"lsn":"0x00000000000000000001","commit_ts":""},"end":{"lsn":"0x0000002E00000000000%d","commit_ts":"2026-10-01T1%d:20:00.000"}}' \
    "$n" "$n" "$((6 + n))" >"$dir/ck/offsets/$n"
done
echo '{}' >"$dir/ck/commits/0"; echo '{}' >"$dir/ck/commits/1"
# the checkpoint's metadata names the table it serves: without it the checkpoint is
# damaged (exit 3), with another target it is another table's (exit 2), nothing written
expect_exit 3 run finalization advance "${C[@]}" --table bronze.orders --checkpoint "$dir/ck"
printf '{"version":1,"id":"x","app_id":"orders","capture_instance":"dbo_orders","target":"bronze.orders"}' >"$dir/ck/metadata"
expect_exit 2 run finalization advance "${C[@]}" --table bronze.items --checkpoint "$dir/ck"
expect_exit 2 run finalization is-final "${C[@]}" --table bronze.items --period-end 2026-10-01T16:00:00
expect_exit 0 run finalization advance "${C[@]}" --table bronze.orders --checkpoint "$dir/ck"
grep -q "finalized_until 2026-10-01T17:00:00 (moved" "$dir/out" || fail "checkpoint advance: $(cat "$dir/out")"
expect_exit 2 run finalization advance "${C[@]}" --table bronze.orders --checkpoint "$dir/nock"

# show
expect_exit 0 run finalization advance "${C[@]}" --table bronze.items --end-lsn 0x5 --end-commit-ts 2026-10-01T09:59:59.999 --granularity day
expect_exit 0 run finalization show "${C[@]}" --format jsonl
[ "$(wc -l <"$dir/out")" -eq 2 ] || fail "show jsonl: $(cat "$dir/out")"
head -1 "$dir/out" | grep -q '^{"table_name":"bronze.items","finalized_until":"2026-10-01T00:00:00.000000","end_lsn":"0x00000000000000000005","end_commit_ts":"2026-10-01T09:59:59.999000"' \
  || fail "show jsonl row: $(head -1 "$dir/out")"
expect_exit 0 run finalization show "${C[@]}" --format json
node -e 'const a=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")); if(a.length!==2||a[1].table_name!=="bronze.orders") process.exit(1)' "$dir/out" 2>/dev/null \
  || python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); sys.exit(0 if len(a)==2 and a[1]["table_name"]=="bronze.orders" else 1)' "$dir/out" \
  || fail "show json: $(cat "$dir/out")"
expect_exit 0 run finalization show "${C[@]}" --table bronze.orders
head -1 "$dir/out" | grep -q "^table_name	finalized_until	end_lsn" || fail "show text header: $(cat "$dir/out")"
grep -q "^bronze.orders	2026-10-01T17:00:00.000000	0x0000002E000000000001" "$dir/out" || fail "show text row: $(cat "$dir/out")"
expect_exit 2 run finalization show "${C[@]}" --table nope
expect_exit 2 run finalization show "${C[@]}" --format csv

# freshness: against the host clock, without facts.
expect_exit 0 run finalization freshness "${C[@]}" --table bronze.orders --format json
grep -q '"clock":"host","finalized_until":"2026-10-01T17:00:00.000000","verdict_age_seconds":[0-9]' "$dir/out" \
  || fail "freshness: $(cat "$dir/out")"
expect_exit 2 run finalization freshness "${C[@]}" --table bronze.orders --facts ops.nofacts
expect_exit 0 run finalization freshness "${C[@]}" --table bronze.orders
grep -q "^finalized_until" "$dir/out" || fail "freshness text: $(cat "$dir/out")"

# freshness --max-age: exit 1 when the verdict is older than the limit, 0 otherwise.
expect_exit 1 run finalization freshness "${C[@]}" --table bronze.orders --max-age 1h
grep -q "^verdict  *stale (max age 3600.0 s)" "$dir/out" || fail "freshness --max-age stale: $(cat "$dir/out")"
expect_exit 0 run finalization freshness "${C[@]}" --table bronze.orders --max-age 100000d --format json
grep -q '"max_age_seconds":8640000000.000,"stale":false}' "$dir/out" || fail "freshness --max-age json: $(cat "$dir/out")"
expect_exit 2 run finalization freshness "${C[@]}" --table bronze.orders --max-age 2hours
grep -q "bad duration '2hours'" "$dir/err" || fail "bad --max-age: $(cat "$dir/err")"
expect_exit 2 run finalization freshness "${C[@]}" --table bronze.order --max-age 1h

# is-final --wait: 0 at once when final; 1 at the timeout; 2 at once for a missing row or
# table; 0 as soon as an advance makes the period final while it waits.
expect_exit 0 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T15:00:00 --wait
t0=$(date +%s%N)
expect_exit 1 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T19:00:00 --wait --timeout 700ms --poll 100ms
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -ge 650 ] && [ "$ms" -lt 5000 ] || fail "is-final --wait --timeout 700ms took ${ms}ms"
grep -q "not final at the timeout" "$dir/out" || fail "is-final --wait timeout output: $(cat "$dir/out")"
t0=$(date +%s%N)
expect_exit 2 run finalization is-final "${C[@]}" --table bronze.order --period-end 2026-10-01T15:00:00 --wait --timeout 1h
expect_exit 2 run finalization is-final --control ops.nope --table bronze.orders --period-end 2026-10-01T15:00:00 --wait
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$ms" -lt 5000 ] || fail "is-final --wait on a missing row waited ${ms}ms"
expect_exit 2 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T15:00:00 --timeout 1s
grep -q -- "--timeout needs --wait" "$dir/err" || fail "--timeout without --wait: $(cat "$dir/err")"
expect_exit 2 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T15:00:00 --wait --poll 0s
(sleep 0.5; run finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x0000002E000000000009 --end-commit-ts 2026-10-01T19:30:00 >/dev/null) &
adv=$!
expect_exit 0 run finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T19:00:00 --wait --timeout 60s --poll 100ms
wait "$adv" || fail "the advance during --wait failed"
grep -q "final (period end 2026-10-01T19:00:00, finalized_until 2026-10-01T19:00:00)" "$dir/out" || fail "is-final --wait output: $(cat "$dir/out")"

# a path that is not a control table
mkdir -p "$dir/plain"
expect_exit 0 run finalization advance --control "$dir/ctl2" --table t --end-lsn 0x1 --end-commit-ts 2026-10-01T15:10:00
[ -d "$dir/ctl2/_delta_log" ] || fail "a path control table was not created where given"
echo PASS
