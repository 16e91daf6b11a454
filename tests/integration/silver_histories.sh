# Silver against the simulator: scripted histories (bootstrap plus changes, inserts,
# updates, deletes, key updates, re-insert of a deleted key, many changes of one key in
# one batch and across batches, interleaved transactions), each step captured, streamed
# and applied; after every apply silver equals `SELECT * FROM dbo.orders` row for row.
# Silver's verdict never exceeds bronze's, is-final works on the silver name, and a rerun
# changes nothing.
. "$(dirname "$0")/stream_lib.bash"
SCHECK="node $MCDC_SRC/tests/integration/silver_check.mjs"
sstream() { # sstream APP [ARGS...]: stream, then advance bronze's verdict from the checkpoint
  local app=$1
  stream "$@" || return 1
  M finalization advance --control ops.control --table "bronze.$app" --checkpoint "$T/ck/$app" >/dev/null 2>&1 || true
}
sim_setup

apply() { # apply NAME [ARGS...]: silver.NAME from bronze.NAME, result in $T/apply.json
  local n=$1; shift
  M silver apply --bronze "bronze.$n" --silver "silver.$n" --capture-instance dbo_orders \
    --control ops.control --format json "$@" > "$T/apply.json"
}
field() { $SCHECK json "$T/apply.json" "$1"; }
verdict() { # verdict NAME: finalized_until of a control row, or null
  M finalization show --control ops.control --table "$1" --format json > "$T/v.json" 2>/dev/null || { echo null; return; }
  $SCHECK json "$T/v.json" finalized_until
}
run_step() { # run_step WHAT [stream args...]: stream bronze.h, apply, check
  local what=$1; shift
  sstream h "$@" >/dev/null || die "$what: stream failed"
  apply h --keys order_id --facts ops.facts || die "$what: apply failed"
  silver_vs_source silver.h "$what"
  local b s
  b=$(verdict bronze.h); s=$(verdict silver.h)
  [ "$s" = null ] || [ "$b" != null ] || die "$what: silver has a verdict, bronze none"
  [ "$s" = null ] || [[ ! "$s" > "$b" ]] || die "$what: silver's verdict $s is past bronze's $b"
}

# bootstrap plus changes
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'ann', 10.50, '2026-09-30T10:00:00.123'), (2, 'bob', 20.00, NULL), (3, 'cy', NULL, NULL), (4, 'dee', 0.01, NULL), (5, NULL, 5.55, NULL)"
sim_capture 2026-10-01T14:00:30
run_step bootstrap --bootstrap
[ "$(field rebuilt)" = true ] || die "bootstrap: not rebuilt"
[ "$(field bronze_found)" = true ] || die "bootstrap: bronze not found"

sim_exec 2026-10-01T14:01:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (6, 'eve', 6.00, NULL), (7, 'fay', 7.00, NULL)"
sim_exec 2026-10-01T14:01:10 "UPDATE dbo.orders SET amount = 11.75 WHERE order_id = 1"
sim_exec 2026-10-01T14:01:20 "DELETE FROM dbo.orders WHERE order_id = 2"
sim_capture 2026-10-01T14:01:30
run_step "inserts, update, delete"
[ "$(field rebuilt)" = false ] || die "a plain apply rebuilt"
[ "$(field changed_keys)" = 4 ] || die "changed keys: $(cat "$T/apply.json")"

# a key update (SQL Server: a delete and an insert), and one moving a row onto a freed key
sim_exec 2026-10-01T14:02:00 "UPDATE dbo.orders SET order_id = 30 WHERE order_id = 3"
sim_exec 2026-10-01T14:02:10 "UPDATE dbo.orders SET order_id = 3 WHERE order_id = 4"
sim_capture 2026-10-01T14:02:30
run_step "key updates"

# re-insert of a deleted key, deleted and re-inserted within one transaction too
sim_exec 2026-10-01T14:03:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (2, 'bob again', 2.00, NULL)"
sim_exec 2026-10-01T14:03:10 "DELETE FROM dbo.orders WHERE order_id = 6; INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (6, 'eve 2', 66.00, NULL)"
sim_capture 2026-10-01T14:03:30
run_step "re-inserts"

# many changes of one key in one transaction, in one batch, and across batches
sim_exec 2026-10-01T14:04:00 "UPDATE dbo.orders SET amount = 1.00 WHERE order_id = 1; UPDATE dbo.orders SET amount = 2.00 WHERE order_id = 1; UPDATE dbo.orders SET customer = 'ANN' WHERE order_id = 1"
for i in 1 2 3 4 5 6; do
  sim_exec "2026-10-01T14:04:1$i" "UPDATE dbo.orders SET amount = amount + $i WHERE order_id = 7"
done
sim_exec 2026-10-01T14:04:20 "DELETE FROM dbo.orders WHERE order_id = 7"
sim_exec 2026-10-01T14:04:21 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (7, 'fay 2', 0.70, NULL)"
sim_capture 2026-10-01T14:04:30
run_step "many changes of one key in one batch"
for i in 1 2 3 4; do
  sim_exec "2026-10-01T14:05:1$i" "UPDATE dbo.orders SET amount = amount * 2 WHERE order_id = 5; UPDATE dbo.orders SET customer = 'k$i' WHERE order_id = 30"
done
sim_capture 2026-10-01T14:05:30
sstream h --max-commits-per-batch 1 --trigger once >/dev/null || die "one batch"
apply h --keys order_id --facts ops.facts || die "apply after one batch"
M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl > "$T/src.jsonl"
run_step "changes of one key across batches" --max-commits-per-batch 1

# interleaved transactions: T1 begins first and commits last, both touch key 1
sim_exec 2026-10-01T14:06:10 "UPDATE dbo.orders SET amount = 100.00 WHERE order_id = 1; INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (8, 'gus', 8.00, NULL)"
M sim exec "$DB" --begin-at 2026-10-01T14:06:00 --at 2026-10-01T14:06:20 "UPDATE dbo.orders SET customer = 'late' WHERE order_id = 1; DELETE FROM dbo.orders WHERE order_id = 8" >/dev/null
sim_capture 2026-10-01T14:06:30
run_step "interleaved transactions"

# a rerun with nothing new changes nothing
cp "$T/silver.jsonl" "$T/before.jsonl"
apply h --keys order_id --facts ops.facts
[ "$(field changed_keys)" = 0 ] || die "rerun: $(cat "$T/apply.json")"
[ "$(field silver_files_rewritten)" = 0 ] || die "rerun rewrote files"
silver_vs_source silver.h "rerun"

# keys from the source, the same silver
apply h --source "sim:$DB" --facts ops.facts || die "apply with --source"
silver_vs_source silver.h "keys from the source"
# other keys than silver was built with are refused
set +e
M silver apply --bronze bronze.h --silver silver.h --capture-instance dbo_orders --keys customer \
  --control ops.control >/dev/null 2>"$T/err"
rc=$?
set -e
[ $rc = 2 ] || die "other keys: exit $rc"
grep -q "built with keys" "$T/err" || die "other keys: $(cat "$T/err")"

# is-final on the silver name
s=$(verdict silver.h)
[ "$s" != null ] || die "silver has no verdict"
M finalization is-final --control ops.control --table silver.h --period-end "${s%.*}" >/dev/null || die "is-final at the verdict"
set +e
M finalization is-final --control ops.control --table silver.h --period-end 2099-01-01T00:00:00 >/dev/null
rc=$?
set -e
[ $rc = 1 ] || die "is-final in the future: exit $rc"

# without --facts the verdict is held
apply nf --keys order_id 2>/dev/null || true
sstream nf >/dev/null
apply nf --keys order_id
silver_vs_source silver.nf "without facts"
[ "$(verdict silver.nf)" = null ] || die "silver.nf got a verdict without --facts"

# bronze that does not exist: exit 2 naming it, and nothing written (no silver, no row);
# with --allow-missing-bronze, nothing applied and exit 0.
rc=0; M silver apply --bronze bronze.none --silver silver.none --capture-instance dbo_orders \
  --keys order_id --control ops.control --format json >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" -eq 2 ] || die "silver apply from a missing bronze: exit $rc, want 2"
grep -q "bronze table .*/bronze/none does not exist" "$T/err" || die "missing bronze message: $(cat "$T/err")"
grep -q "allow-missing-bronze" "$T/err" || die "missing bronze hint: $(cat "$T/err")"
[ ! -e "$T/lake/silver/none" ] || die "a refused silver apply created silver.none"
M finalization show --control ops.control --table silver.none >/dev/null 2>&1 && die "a refused silver apply wrote a control row"
apply none --keys order_id --allow-missing-bronze
[ "$(field bronze_found)" = false ] || die "a missing bronze was found"
echo ok
