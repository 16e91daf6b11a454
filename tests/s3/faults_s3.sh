#!/usr/bin/env bash
# tests/s3/faults_s3.sh: the S3 client under faults, against tests/s3/fake_s3.py (a
# loopback fake of our own; the real gateway is tests/s3/lake_s3.sh's). A stream history
# of three batches with finalization, written to the fake while it answers 503 SlowDown to
# every 5th request, resets the connection in the middle of every 3rd upload, or stores
# every 2nd conditional PUT and then answers 500: bronze equals the change table, facts
# match bronze, one control row, nothing lost or doubled, every file a commit names is
# there (table cat reads them all). A store that ignores If-None-Match is refused at first
# use, naming --allow-unsafe-single-writer, and writes no table; with that flag it is used.
# A checkpoint on a store that answers 500 after storing every conditional PUT: its creates and the lease's
# swaps (If-Match) are recognised as the writes they were; two streams in a row succeed
# and leave the lease released.
set -euo pipefail
# shellcheck source=tests/integration/stream_lib.bash
. "$MCDC_SRC/tests/integration/stream_lib.bash"
FAKE_PIDS=()
trap 'for p in "${FAKE_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"' EXIT
export HOME=$T/home AWS_ACCESS_KEY_ID=fakekey AWS_SECRET_ACCESS_KEY=fakesecret AWS_REGION=us-east-1
export MCDC_S3_MAX_ATTEMPTS=10
unset AWS_PROFILE AWS_SESSION_TOKEN 2>/dev/null || true

# fake NAME FLAGS...: start a fake, set AWS_ENDPOINT_URL to it
fake() {
  local name=$1; shift
  python3 "$MCDC_SRC/tests/s3/fake_s3.py" --log "$T/$name.log" "$@" >"$T/$name.port" &
  FAKE_PIDS+=($!)
  for _ in $(seq 100); do [ -s "$T/$name.port" ] && break; sleep 0.05; done
  AWS_ENDPOINT_URL=http://127.0.0.1:$(cut -d' ' -f2 "$T/$name.port")
  export AWS_ENDPOINT_URL
}

sim_setup
batch() { # batch N: one more batch of changes in the source
  case $1 in
    1) sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'ann', 10.00, NULL), (2, N'bob', 20.00, NULL)" ;;
    2) sim_exec 2026-10-01T14:01:00 "UPDATE dbo.orders SET amount = 11.00 WHERE order_id = 1; DELETE FROM dbo.orders WHERE order_id = 2" ;;
    3) sim_exec 2026-10-01T14:02:00 "INSERT INTO dbo.orders VALUES (3, N'cy', 30.00, NULL), (4, N'di', 40.00, NULL)" ;;
  esac
  sim_capture "2026-10-01T14:0$(($1 - 1)):30"
}
run() { # run NAME: stream bronze.orders, ops.facts, ops.control under s3://mcdc-fake/NAME
  M --warehouse "s3://mcdc-fake/$1" stream --source "sim:$DB" --capture-instance dbo_orders \
    --target bronze.orders --app-id orders --checkpoint "$T/ck/$1" --facts ops.facts --control ops.control \
    >/dev/null 2>>"$T/$1.err" || { cat "$T/$1.err" >&2; die "$1: the stream failed"; }
}
check() { # check NAME: bronze, facts and control under s3://mcdc-fake/NAME are right
  MSSQL_CDC_WAREHOUSE="s3://mcdc-fake/$1" check_bronze bronze.orders ops.facts orders
  [ "$(M --warehouse "s3://mcdc-fake/$1" table cat ops.control --format jsonl | grep -c .)" = 1 ] \
    || die "$1: not one control row"
}

# the three faults, each over the whole history
names=(slowdown reset error500)
flags=("--slowdown-every 5" "--reset-every 3" "--error-after-store 2")
for b in 1 2 3; do
  batch $b
  for i in 0 1 2; do
    # shellcheck disable=SC2086
    [ $b = 1 ] && { fake "${names[i]}" ${flags[i]}; eval "EP_${names[i]}=\$AWS_ENDPOINT_URL"; }
    ep=EP_${names[i]}
    AWS_ENDPOINT_URL=${!ep} run "${names[i]}"
  done
done
for n in "${names[@]}"; do
  ep=EP_$n
  AWS_ENDPOINT_URL=${!ep} check "$n"
done
grep -q ' 503$' "$T/slowdown.log" || die "the fake answered no 503"
grep -q '^RESET' "$T/reset.log" || die "the fake reset no upload"
grep -q ' 500$' "$T/error500.log" || die "the fake answered no 500 after storing"

# a checkpoint on a store that answers 500 after storing every conditional PUT: its
# creates (If-None-Match) and the lease's swaps (If-Match) are taken for the writes they
# were (the bytes read back are ours), so two streams in a row succeed, each taking and
# releasing the lease
fake lease --error-after-store 1
EP_lease=$AWS_ENDPOINT_URL
run_ck() { # run_ck: the stream with its checkpoint under s3://mcdc-fake/lease/ck
  AWS_ENDPOINT_URL=$EP_lease M --warehouse s3://mcdc-fake/lease stream --source "sim:$DB" \
    --capture-instance dbo_orders --target bronze.orders --app-id orders --checkpoint s3://mcdc-fake/lease/ck \
    --facts ops.facts --control ops.control >/dev/null 2>>"$T/lease.err" || { cat "$T/lease.err" >&2; die "lease: the stream failed"; }
}
run_ck
run_ck
AWS_ENDPOINT_URL=$EP_lease check lease
curl -s "$EP_lease/mcdc-fake/lease/ck/lease" >"$T/lease.json"
grep -q '"released":true' "$T/lease.json" || die "the lease was not released: $(cat "$T/lease.json")"
grep -q '^if-match /mcdc-fake/lease/ck/lease$' "$T/lease.log" || die "no swap of the lease reached the fake"
grep -A1 '^if-match /mcdc-fake/lease/ck/lease$' "$T/lease.log" | grep -q ' 500$' ||
  die "no swap of the lease was answered 500 after storing"

# a store that ignores If-None-Match: refused at first use, nothing written
fake ignoring --ignore-if-none-match
rc=0
M --warehouse s3://mcdc-fake/ign stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders \
  --app-id orders --checkpoint "$T/ck/ign" --facts ops.facts >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] || { cat "$T/err" >&2; die "an ignoring store: exit $rc, want 2"; }
grep -q "ignores If-None-Match" "$T/err" && grep -q -- "--allow-unsafe-single-writer" "$T/err" \
  || { cat "$T/err" >&2; die "the refusal does not explain itself"; }
[ ! -e "$T/ck/ign" ] || die "the refused stream made its checkpoint"
! grep '^PUT /mcdc-fake/ign/' "$T/ignoring.log" | grep -vq '/\.mcdc-probe-' || die "the refused stream wrote more than its probe"
M --allow-unsafe-single-writer --warehouse s3://mcdc-fake/ign stream --source "sim:$DB" \
  --capture-instance dbo_orders --target bronze.orders --app-id orders --checkpoint "$T/ck/ign" \
  --facts ops.facts >/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "--allow-unsafe-single-writer: refused"; }
grep -q "ignores If-None-Match" "$T/err" || die "no warning with --allow-unsafe-single-writer"
MSSQL_CDC_WAREHOUSE=s3://mcdc-fake/ign M --allow-unsafe-single-writer table cat bronze.orders --format jsonl \
  >"$T/ign.jsonl" 2>/dev/null
[ "$(grep -c . "$T/ign.jsonl")" -gt 0 ] || die "nothing streamed with --allow-unsafe-single-writer"
echo "faults: ok"
