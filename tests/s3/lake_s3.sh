#!/usr/bin/env bash
# tests/s3/lake_s3.sh: the lake on S3 against a real gateway (a scratch radosgw, started
# once): a small stream history with finalization, silver apply, optimize and vacuum, run
# with --warehouse s3://... and again with a local warehouse, gives the same tables
# (table cat compared row for row; bronze and facts also checked against the change table,
# silver against the source); the S3 tables fetched back object by object read the same.
# Four processes advancing four control rows of one S3 control table at once lose no
# commit (versions contiguous, every row there); two first advances of one new row end
# with one row. A stream killed (SIGKILL, by failpoints) before and after its commit PUT and
# after offsets/N restarts with nothing lost or doubled. Keys are never printed. Label s3.
set -euo pipefail
# shellcheck source=tests/integration/stream_lib.bash
. "$MCDC_SRC/tests/integration/stream_lib.bash"
# shellcheck source=tests/s3/radosgw_lib.bash
. "$MCDC_SRC/tests/s3/radosgw_lib.bash"
s3_stream_test
SCHECK="node $MCDC_SRC/tests/integration/silver_check.mjs"
S3W=s3://$S3_BUCKET/lake
LOCAL=$T/lake
started=$SECONDS

# the same history, run against WAREHOUSE with checkpoints under CKDIR
history() {
  local wh=$1 ck=$2
  W_() { M --warehouse "$wh" "$@"; }
  W_ stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders --app-id orders \
    --checkpoint "$ck" --facts ops.facts --control ops.control >/dev/null
  W_ silver apply --bronze bronze.orders --silver silver.orders --capture-instance dbo_orders \
    --control ops.control --keys order_id >/dev/null
}

sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'ann', 10.00, NULL), (2, N'bob', 20.00, NULL)"
sim_capture 2026-10-01T14:00:10
history "$S3W" "$T/ck/s3"
history "$LOCAL" "$T/ck/local"
sim_exec 2026-10-01T14:01:00 "UPDATE dbo.orders SET amount = 11.00 WHERE order_id = 1; DELETE FROM dbo.orders WHERE order_id = 2"
sim_exec 2026-10-01T14:01:30 "INSERT INTO dbo.orders VALUES (3, N'cy', 30.00, '2026-10-01T14:01:30')"
sim_capture 2026-10-01T14:02:00
history "$S3W" "$T/ck/s3"
history "$LOCAL" "$T/ck/local"

# same_table NAME [WHAT]: table cat of NAME on S3 equals the local one (rows in order)
same_table() {
  M --warehouse "$S3W" table cat "$1" --format jsonl >"$T/s3.jsonl" || die "table cat $1 on S3"
  M --warehouse "$LOCAL" table cat "$1" --format jsonl >"$T/local.jsonl"
  [ -s "$T/s3.jsonl" ] || die "$1 on S3 is empty"
  cmp -s "$T/s3.jsonl" "$T/local.jsonl" || { diff "$T/s3.jsonl" "$T/local.jsonl" | head >&2; die "$1${2:+ $2}: S3 and local differ"; }
}
same_table bronze.orders
same_table silver.orders
# facts and control carry host times (written_at, updated_at): compare without them
M --warehouse "$S3W" table cat ops.control --format jsonl | grep -c '"table_name":"bronze.orders"' | grep -qx 1 \
  || die "control on S3: not one row for bronze.orders"
export MSSQL_CDC_WAREHOUSE=$S3W
check_bronze bronze.orders ops.facts orders
M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl >"$T/src.jsonl"
M table cat silver.orders --format jsonl >"$T/silver.jsonl"
$SCHECK silver-vs-source "$T/silver.jsonl" "$T/src.jsonl" >/dev/null || die "silver on S3 differs from the source"

# kill -9 of a stream writing to the gateway, at each step of a commit: after a restart
# nothing is lost or doubled, and every file a commit names is there (table cat reads all)
at=3
for fp in delta.commit.before_link delta.commit.after_link@2 stream.after_offsets; do
  sim_exec "2026-10-01T14:0$at:00" "INSERT INTO dbo.orders VALUES ($((at + 10)), N'k$at', $at.00, NULL)"
  sim_capture "2026-10-01T14:0$at:30"
  rc=0
  MCDC_FAILPOINT=$fp M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders \
    --app-id orders --checkpoint "$T/ck/s3" --facts ops.facts --control ops.control >/dev/null 2>&1 || rc=$?
  [ $rc = 137 ] || die "$fp: the stream was not killed (exit $rc)"
  M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders --app-id orders \
    --checkpoint "$T/ck/s3" --facts ops.facts --control ops.control >/dev/null 2>"$T/restart.err" \
    || { cat "$T/restart.err" >&2; die "$fp: restart failed"; }
  M --warehouse "$LOCAL" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.orders \
    --app-id orders --checkpoint "$T/ck/local" --facts ops.facts --control ops.control >/dev/null
  at=$((at + 1))
done
check_bronze bronze.orders ops.facts orders
same_table bronze.orders "after the kills"

# optimize and vacuum on S3: the same rows after each
M table optimize bronze.orders --target-size 1M >/dev/null || die "optimize on S3"
M --warehouse "$LOCAL" table optimize bronze.orders --target-size 1M >/dev/null
same_table bronze.orders "after optimize"
M table vacuum bronze.orders --retention 0s --force >"$T/vac.txt" || die "vacuum on S3"
M --warehouse "$LOCAL" table vacuum bronze.orders --retention 0s --force >/dev/null
same_table bronze.orders "after vacuum"
M table files bronze.orders >"$T/files.jsonl" || die "table files on S3"
[ "$(wc -l <"$T/files.jsonl")" = 1 ] || die "bronze on S3 holds $(wc -l <"$T/files.jsonl") files after optimize and vacuum, want 1"

# fetched back object by object, the S3 table is a Delta table that reads the same
fetch lake/silver/orders "$T/back/silver"
M table cat "$T/back/silver" --format jsonl >"$T/back.jsonl"
cmp -s "$T/back.jsonl" "$T/silver.jsonl" || die "silver fetched back reads differently"
if ls "$T/back/silver" | grep -q '^\.mcdc-probe'; then die "a probe object was left behind"; fi

# concurrent committers: 4 processes x 5 first advances of distinct rows of one control table
adv() { # adv TABLE: the first advance of TABLE's row in ops.race
  M finalization advance --control ops.race --table "$1" --end-lsn 0x00000000000000000001 \
    --end-commit-ts 2026-10-01T14:00:00 >/dev/null 2>>"$T/race.err"
}
pids=()
for p in 1 2 3 4; do
  ( for i in 1 2 3 4 5; do adv "t$p.$i" || exit 1; done ) &
  pids+=($!)
done
fails=0
for pid in "${pids[@]}"; do wait "$pid" || fails=$((fails + 1)); done
[ "$fails" = 0 ] || { cat "$T/race.err" >&2; die "$fails racing advancers failed"; }
M table cat ops.race --format jsonl >"$T/race.jsonl"
[ "$(grep -c . "$T/race.jsonl")" = 20 ] || die "ops.race holds $(grep -c . "$T/race.jsonl") rows, want 20"
[ "$(grep -oE '"table_name":"[^"]*"' "$T/race.jsonl" | sort -u | wc -l)" = 20 ] || die "ops.race: a row doubled"
M table history ops.race --format jsonl >"$T/hist.jsonl"
node -e '
  const v = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(l => JSON.parse(l).version).sort((a, b) => a - b);
  v.forEach((x, i) => { if (x !== i) { console.error("version " + i + " missing"); process.exit(1); } });
' "$T/hist.jsonl" || die "ops.race: versions not contiguous"
# two first advances of one new row, at once: one row
adv2() { M finalization advance --control ops.two --table bronze.same --end-lsn 0x00000000000000000001 \
  --end-commit-ts 2026-10-01T14:00:00 >/dev/null 2>>"$T/race.err"; }
adv2 & a=$!; adv2 & b=$!
wait $a || die "first advance failed"; wait $b || die "second advance failed"
[ "$(M table cat ops.two --format jsonl | grep -c .)" = 1 ] || die "two first advances of one row left more than one row"

echo "lake on S3: ok ($((SECONDS - started)) s after the gateway started)"
