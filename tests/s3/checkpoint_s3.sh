#!/usr/bin/env bash
# tests/s3/checkpoint_s3.sh: the stream's checkpoint on S3 against a real gateway (a
# scratch radosgw): offsets/N, commits/N and metadata are objects under the s3:// prefix and
# the one-writer rule is the lease object. A second stream meeting a live lease exits 3
# naming its owner and the seconds until it expires; a stream stopped cleanly releases it,
# so the next starts at once; a stream killed (SIGKILL, by failpoints) is waited for until
# its lease expires, saying how long, then resumed with bronze exactly once. Two writers
# with --lease off on one checkpoint and table, round after round, lose and double nothing
# (create-if-absent offsets/N, commits/N and Delta commits). Bad --lease values and other
# URI schemes exit 2 and write nothing. Keys are never printed. Label s3.
set -euo pipefail
# shellcheck source=tests/integration/stream_lib.bash
. "$MCDC_SRC/tests/integration/stream_lib.bash"
# shellcheck source=tests/s3/radosgw_lib.bash
. "$MCDC_SRC/tests/s3/radosgw_lib.bash"
s3_stream_test
export MSSQL_CDC_WAREHOUSE=s3://$S3_BUCKET/lake
CK=s3://$S3_BUCKET/ck/orders
started=$SECONDS
S() { # S [ARGS...]: the stream of dbo_orders on the S3 checkpoint
  M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders --app-id orders \
    --checkpoint "$CK" --facts ops.facts "$@"
}
S_bg() { # S_bg ERRFILE [ARGS...]: S in the background, $! its own pid
  local err=$1; shift
  ( exec "$MCDC_BIN" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders \
      --app-id orders --checkpoint "$CK" --facts ops.facts "$@" >/dev/null 2>"$err" ) &
}
mark() { echo "  $1: $((SECONDS - started)) s"; }
lease() { expect 200 "$(req GET ck/orders/lease)" "GET the lease"; cat "$W/out"; }

sim_setup
# refused before the first write: a lease too short, another object store
rc=0; S --lease 500ms >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q -- "--lease 500ms is too short" "$T/err" || { cat "$T/err" >&2; die "--lease 500ms: exit $rc"; }
rc=0; M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders --app-id orders \
  --checkpoint gs://b/ck --facts ops.facts >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "this object store is not supported" "$T/err" || { cat "$T/err" >&2; die "gs:// checkpoint: exit $rc"; }
[ "$(req GET "?list-type=2&prefix=ck%2F")" = 200 ] && ! grep -q '<Key>' "$W/out" || die "a refused stream wrote to the bucket"

mark "the first batches"
# the first batches: the checkpoint's files are objects, the lease released at the end
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'ann', 10.00, NULL), (2, N'bob', 20.00, NULL)"
sim_capture 2026-10-01T14:00:10
S >/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "the first stream on the S3 checkpoint failed"; }
for k in metadata offsets/0 commits/0; do expect 200 "$(req GET "ck/orders/$k")" "GET ck/orders/$k"; done
lease | grep -q '"released":true' || die "the lease was not released at a clean end: $(lease)"
check_bronze bronze.orders ops.facts orders

mark "a live lease"
# a live lease: a second stream exits 3 naming the owner and the time left
S_bg "$T/first.err" --trigger interval:200ms --lease 20s; first=$!
for _ in $(seq 1 100); do lease 2>/dev/null | grep -q "\"pid\":$first," && break; sleep 0.1; done
lease | grep -q "\"pid\":$first," || die "the running stream's lease does not name pid $first"
rc=0; S >/dev/null 2>"$T/err" || rc=$?
[ $rc = 3 ] || { cat "$T/err" >&2; die "a second stream on a live lease: exit $rc, want 3"; }
grep -qE "another stream holds its lease: owner [^ ]+:$first:[0-9a-f]+ \(pid $first on [^)]+\), for another (1[0-9]|20)\.[0-9] s" "$T/err" \
  || { cat "$T/err" >&2; die "the refusal does not name the owner and the time left"; }
kill -TERM $first
wait $first || { cat "$T/first.err" >&2; die "the interval stream did not stop cleanly on SIGTERM"; }
t0=$(date +%s%N)
S --lease 20s >/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "the stream after a clean stop failed"; }
[ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 10000 ] || die "a released lease was waited for"

mark "a run config's lease"
# `run --config` with lease: 12s on the same checkpoint: a second stream is refused naming
# the run's pid and at most 12 s left (the default lease would leave up to 30)
cat > "$T/run.yaml" <<YAML
warehouse: $MSSQL_CDC_WAREHOUSE
sources:
  shop: {source: "sim:$DB"}
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.orders
    app_id: orders
    checkpoint: $CK
    facts: ops.facts
    trigger: interval:200ms
    lease: 12s
YAML
( exec "$MCDC_BIN" run --config "$T/run.yaml" >/dev/null 2>"$T/run.err" ) & runner=$!
for _ in $(seq 1 100); do lease 2>/dev/null | grep -q "\"pid\":$runner," && break; sleep 0.1; done
lease | grep -q "\"pid\":$runner," || { cat "$T/run.err" >&2; die "the run's lease does not name pid $runner"; }
rc=0; S >/dev/null 2>"$T/err" || rc=$?
[ $rc = 3 ] || { cat "$T/err" >&2; die "a stream beside the run's live lease: exit $rc, want 3"; }
grep -qE "another stream holds its lease: owner [^ ]+:$runner:[0-9a-f]+ \(pid $runner on [^)]+\), for another ([0-9]|1[0-2])\.[0-9] s" "$T/err" \
  || { cat "$T/err" >&2; die "the refusal does not show the run's 12 s lease"; }
kill -TERM $runner
wait $runner || { cat "$T/run.err" >&2; die "the run did not stop cleanly on SIGTERM"; }
lease | grep -q '"released":true' || die "the run did not release its lease: $(lease)"

mark "kill -9"
# kill -9 at each step of a batch: the restart waits for the dead stream's lease, then
# resumes; bronze holds every change once
at=1
for fp in stream.after_offsets delta.commit.before_link delta.commit.after_link@2; do
  sim_exec "2026-10-01T14:0$at:00" "INSERT INTO dbo.orders VALUES ($((at + 10)), N'k$at', $at.00, NULL)"
  sim_capture "2026-10-01T14:0$at:30"
  rc=0
  MCDC_FAILPOINT=$fp S --lease 3s >/dev/null 2>&1 || rc=$?
  [ $rc = 137 ] || die "$fp: the stream was not killed (exit $rc)"
  lease | grep -q '"released":false' || die "$fp: the killed stream's lease is not live"
  t0=$(date +%s%N)
  S --lease 3s >/dev/null 2>"$T/restart.err" || { cat "$T/restart.err" >&2; die "$fp: restart failed"; }
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  grep -qE "the lease of [^ ]+ \(pid [0-9]+, no longer running\) expires in [0-9.]+ s; waiting for it" "$T/restart.err" \
    || { cat "$T/restart.err" >&2; die "$fp: the restart did not say how long it waits"; }
  [ "$ms" -ge 1000 ] || die "$fp: the restart took the live lease after $ms ms"
  at=$((at + 1))
done
check_bronze bronze.orders ops.facts orders

mark "two writers with the lease off"
# two writers with the lease off, on one checkpoint and one table: each round both run at
# once; one may find the other's batch taken (exit 3), none loses or doubles a change
for r in 1 2 3 4 5; do
  for i in 1 2 3; do
    sim_exec "2026-10-01T14:1$r:0$i" "INSERT INTO dbo.orders VALUES ($((100 * r + i)), N'w', $i.00, NULL)"
  done
  sim_capture "2026-10-01T14:1$r:30"
  S --lease off --max-commits-per-batch 1 >/dev/null 2>"$T/a.err" & a=$!
  S --lease off --max-commits-per-batch 1 >/dev/null 2>"$T/b.err" & b=$!
  ra=0; wait $a || ra=$?
  rb=0; wait $b || rb=$?
  for x in "$ra:a" "$rb:b"; do
    case ${x%%:*} in 0|3) ;; *) cat "$T/${x#*:}.err" >&2; die "round $r: a writer exited ${x%%:*}" ;; esac
  done
  [ "$ra" = 0 ] || [ "$rb" = 0 ] || { cat "$T/a.err" "$T/b.err" >&2; die "round $r: neither writer finished"; }
done
S --lease off >/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "the last stream after the race failed"; }
check_bronze bronze.orders ops.facts orders
M table history bronze.orders --format jsonl >"$T/hist.jsonl"
node -e '
  const v = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(l => JSON.parse(l).version).sort((a, b) => a - b);
  v.forEach((x, i) => { if (x !== i) { console.error("version " + i + " missing"); process.exit(1); } });
' "$T/hist.jsonl" || die "bronze versions not contiguous"

# a bootstrap (its state in the S3 checkpoint) gives the table a local checkpoint gives;
# finalization advance reads the S3 checkpoint's last batch
mark "bootstrap, finalization"
boot() { # boot WAREHOUSE CHECKPOINT: bootstrap (a no-op after the first run) and stream
  M --warehouse "$1" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.boot \
    --app-id boot --checkpoint "$2" --facts ops.bootfacts --bootstrap >/dev/null 2>"$T/err" \
    || { cat "$T/err" >&2; die "bootstrap into $1 failed"; }
}
boot "s3://$S3_BUCKET/lake" "s3://$S3_BUCKET/ck/boot"
boot "$T/lake" "$T/ck/boot"
sim_exec 2026-10-01T15:00:00 "UPDATE dbo.orders SET amount = 99.00 WHERE order_id = 1"
sim_capture 2026-10-01T15:00:30
for wh in "s3://$S3_BUCKET/lake" "$T/lake"; do
  ck=s3://$S3_BUCKET/ck/boot; [ "${wh#s3:}" = "$wh" ] && ck=$T/ck/boot
  boot "$wh" "$ck"
  M --warehouse "$wh" finalization advance --control ops.control --table bronze.boot --checkpoint "$ck" \
    >/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "finalization advance --checkpoint $ck failed"; }
  M --warehouse "$wh" table cat bronze.boot --format jsonl >"$T/boot.${wh//[^a-z0-9]/_}.jsonl"
  M --warehouse "$wh" finalization show --control ops.control --format jsonl | grep '"bronze.boot"' \
    | sed -E 's/"updated_at":"[^"]*"//' >"$T/fin.${wh//[^a-z0-9]/_}.jsonl"
done
expect 200 "$(req GET ck/boot/bootstrap)" "GET ck/boot/bootstrap"
cmp -s "$T/boot.s3___${S3_BUCKET//[^a-z0-9]/_}_lake.jsonl" "$T/boot.${T//[^a-z0-9]/_}_lake.jsonl" \
  || die "bronze.boot bootstrapped with an S3 checkpoint differs from the local one"
[ -s "$T/boot.${T//[^a-z0-9]/_}_lake.jsonl" ] && [ -s "$T/fin.${T//[^a-z0-9]/_}_lake.jsonl" ] || die "bronze.boot or its verdict is empty"
cmp -s "$T/fin.s3___${S3_BUCKET//[^a-z0-9]/_}_lake.jsonl" "$T/fin.${T//[^a-z0-9]/_}_lake.jsonl" \
  || die "the verdict from the S3 checkpoint differs from the local one"

# run --config with its checkpoint and its state directory on S3 (the config in a folder
# of its own, so relative paths would be joined to it): run --status reads the state back
mark "run --config"
mkdir -p "$T/conf"
cat >"$T/conf/run.yaml" <<YAML
warehouse: s3://$S3_BUCKET/runlake
state_dir: s3://$S3_BUCKET/run-state
sources:
  shop: {source: "sim:$DB"}
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.orders
    app_id: run-orders
    checkpoint: s3://$S3_BUCKET/ck/run-orders
    facts: ops.facts
YAML
M run --config "$T/conf/run.yaml" >/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "run --config with an S3 checkpoint failed"; }
expect 200 "$(req GET ck/run-orders/commits/0)" "GET ck/run-orders/commits/0"
[ ! -e "$T/conf/s3:" ] || die "run --config joined an s3:// location to its folder"
out=$(M run --config "$T/conf/run.yaml" --status) || die "run --status on S3: $out"
grep -q "^bronze.orders: stopped, batch [0-9]* ending 0x" <<<"$out" || die "run --status on S3: $out"
MSSQL_CDC_WAREHOUSE=s3://$S3_BUCKET/runlake check_bronze bronze.orders ops.facts run-orders

echo "checkpoint on S3: ok ($((SECONDS - started)) s after the gateway started)"
