# Data loss: cleanup past the checkpoint stops the stream with exit 4 and a message naming
# the capture instance, the lost range and the ways out; failOnDataLoss=false skips ahead
# and records a data_skipped facts row; a replay of a batch bronze already holds is not a
# data loss.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL)"
sim_capture 2026-10-01T14:00:01
stream dl >/dev/null
stream ok >/dev/null
stream skip >/dev/null
sim_exec 2026-10-02T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (2, 'b', 2.00, NULL)"
sim_capture 2026-10-02T14:00:01
# ok reads day 2 before the purge; then a crash after its bronze commit of day 3
stream ok >/dev/null
sim_exec 2026-10-03T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (3, 'c', 3.00, NULL)"
sim_capture 2026-10-03T14:00:01
set +e
MCDC_FAILPOINT=stream.after_bronze_commit stream ok >/dev/null 2>&1
[ $? = 137 ] || die "failpoint after_bronze_commit not reached"
set -e
sim_exec 2026-10-05T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (4, 'd', 4.00, NULL)"
sim_capture 2026-10-05T14:00:01
M sim cleanup "$DB" --retention 1d --at 2026-10-05T14:00:02 >/dev/null

set +e
err=$(stream dl 2>&1 >/dev/null)
rc=$?
set -e
[ $rc = 4 ] || die "data loss: exit $rc, want 4: $err"
grep -q <<<"$err" "dbo_orders: change data from 0x" || die "message: $err"
grep -q <<<"$err" "purged by CDC cleanup" || die "message: $err"
grep -q <<<"$err" -- "--bootstrap" || die "hint: $err"
grep -q <<<"$err" "failOnDataLoss=false" || die "hint: $err"
# nothing was recorded for the refused batch
[ ! -e "$T/ck/dl/offsets/1" ] || die "offsets/1 written for a data loss"

# the replay of a batch bronze holds is no loss, whatever cleanup did since
out=$(stream ok 2>&1) || die "replay after cleanup: $out"

# failOnDataLoss=false: skip ahead, with the gap in the facts
stream skip --option failOnDataLoss=false >/dev/null || die "skip run failed"
cat_table ops.facts "$T/f.jsonl"
[ "$($CHECK count "$T/f.jsonl" app_id=skip event=data_skipped)" = 1 ] || die "no data_skipped row"
detail=$($CHECK get "$T/f.jsonl" detail app_id=skip event=data_skipped)
grep -q <<<"$detail" '"certain":true' || die "data_skipped detail: $detail"
grep -q <<<"$detail" '"from":"0x' || die "data_skipped detail: $detail"
cat_table bronze.skip "$T/b.jsonl"
[ "$($CHECK count "$T/b.jsonl" order_id=4)" = 1 ] || die "skip did not read the changes after the gap"
[ "$($CHECK count "$T/b.jsonl" order_id=2)" = 0 ] || die "skip read purged changes"
# failOnDataLoss=false needs --facts
set +e
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.x --app-id x \
  --checkpoint "$T/ck/x" --option failOnDataLoss=false >/dev/null 2>&1
[ $? = 2 ] || die "failOnDataLoss=false without --facts accepted"
set -e
echo "ok"
