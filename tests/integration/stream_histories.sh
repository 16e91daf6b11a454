# Scripted histories on the simulator through `mssql-cdc stream`: inserts, updates, key
# updates, deletes, several statements per transaction, interleaved transactions, idle
# entries, quiet periods and partial capture scans, read with --max-commits-per-batch 1, 2
# and unlimited, runs interleaved with the history. Bronze must hold exactly the change
# rows of the change table, once, in order; the facts must match bronze batch by batch.
. "$(dirname "$0")/stream_lib.bash"
sim_setup

run_all() {
  stream l1 --max-commits-per-batch 1 >/dev/null
  stream l2 --max-commits-per-batch 2 >/dev/null
  stream lu >/dev/null
}

# part 1: inserts, one row and several rows per transaction
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'ann', 10.50, '2026-10-01T13:00:00')"
sim_exec 2026-10-01T14:00:01 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (2, 'bob', 20.00, NULL), (3, 'cy', NULL, NULL)"
sim_capture 2026-10-01T14:00:05
run_all

# part 2: updates, a key update, a delete, several statements in one transaction
sim_exec 2026-10-01T14:01:00 "UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = 1"
sim_exec 2026-10-01T14:01:01 "UPDATE dbo.orders SET order_id = 20 WHERE order_id = 2"
sim_exec 2026-10-01T14:01:02 "DELETE FROM dbo.orders WHERE order_id = 3"
sim_exec 2026-10-01T14:01:03 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (4, 'dee', 4.00, NULL); UPDATE dbo.orders SET customer = 'ann2' WHERE order_id = 1; DELETE FROM dbo.orders WHERE order_id = 20; INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (5, 'eve', 5.55, '2026-10-01T14:01:03.123')"
sim_capture 2026-10-01T14:01:10
run_all

# part 3: interleaved transactions (begun before another commits, committed after it)
M sim exec "$DB" --begin-at 2026-10-01T14:02:00 --at 2026-10-01T14:02:04 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (6, 'fay', 6.00, NULL)" >/dev/null
sim_exec 2026-10-01T14:02:05 "UPDATE dbo.orders SET amount = 7.00 WHERE order_id = 6"
sim_capture 2026-10-01T14:02:10

# part 4: a quiet period with idle entries, then partial capture scans
M sim idle "$DB" --at 2026-10-01T14:07:10 >/dev/null
M sim idle "$DB" --at 2026-10-01T14:12:10 >/dev/null
run_all
for i in 7 8 9 10; do
  sim_exec "2026-10-01T14:13:0$((i - 6))" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($i, 'p$i', $i.00, NULL)"
done
sim_capture 2026-10-01T14:13:10 --max-trans 1
run_all
sim_capture 2026-10-01T14:13:11 --max-trans 2
run_all
sim_capture 2026-10-01T14:13:12
sim_exec 2026-10-01T15:00:00 "UPDATE dbo.orders SET amount = 0 WHERE order_id >= 7"
sim_capture 2026-10-01T15:00:01
run_all

for app in l1 l2 lu; do
  check_bronze "bronze.$app" ops.facts "$app"
done
# the limits shaped the batches: one commit per batch gives the most batches
n1=$($CHECK count <(M table cat ops.facts --format jsonl) app_id=l1)
nu=$($CHECK count <(M table cat ops.facts --format jsonl) app_id=lu)
[ "$n1" -gt "$nu" ] || die "max-commits-per-batch 1 made $n1 batches, unlimited $nu"
# nothing new: a rerun writes no batch
before=$($CHECK count <(M table cat ops.facts --format jsonl))
out=$(stream lu)
after=$($CHECK count <(M table cat ops.facts --format jsonl))
[ "$before" = "$after" ] || die "an idle run wrote facts rows"
grep -q <<<"$out" "0 batches" || die "idle run: $out"
echo "ok"
