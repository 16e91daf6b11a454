# Crash tests: the stream killed (SIGKILL, through MCDC_FAILPOINT) at every step of a batch,
# each at several hit counts, then run again: nothing lost, nothing doubled, facts
# consistent. Then the bootstrap's steps, and 20 random kill -9 of an interval stream
# following a --realtime workload.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
for i in $(seq 1 6); do
  sim_exec "2026-10-01T14:0$i:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($i, 'c$i', $i.25, NULL), ($((i + 100)), 'd$i', NULL, NULL); UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = $i"
  [ $i = 3 ] && M sim idle "$DB" --at 2026-10-01T14:03:30 >/dev/null
  sim_exec "2026-10-01T14:0$i:30" "DELETE FROM dbo.orders WHERE order_id = $((i + 100))"
done
sim_capture 2026-10-01T14:10:00

n=0
for fp in after_offsets mid_read after_data_file after_bronze_commit after_facts before_commit; do
  for hit in 1 2 5; do
    n=$((n + 1))
    app="c$n"
    set +e
    MCDC_FAILPOINT="stream.$fp@$hit" stream "$app" --max-commits-per-batch 2 >/dev/null 2>&1
    rc=$?
    set -e
    [ $rc = 137 ] || [ $rc = 0 ] || die "$fp@$hit: exit $rc"
    [ $hit != 1 ] || [ $rc = 137 ] || die "$fp@1 was never reached"
    stream "$app" --max-commits-per-batch 2 >/dev/null || die "$fp@$hit: the rerun failed"
    check_bronze "bronze.$app" ops.facts "$app"
  done
done

# bootstrap: a crash at any step resumes without a second snapshot
rows=$(M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl | wc -l)
for fp in bootstrap.mid_read bootstrap.after_data_file bootstrap.after_snapshot bootstrap.after_event after_offsets; do
  app="b${fp//./_}"
  set +e
  MCDC_FAILPOINT="stream.$fp" stream "$app" --bootstrap >/dev/null 2>&1
  rc=$?
  set -e
  [ $rc = 137 ] || die "$fp: exit $rc"
  stream "$app" --bootstrap >/dev/null || die "$fp: the rerun failed"
  cat_table "bronze.$app" "$T/b.jsonl"
  got=$($CHECK count "$T/b.jsonl" _operation=0)
  [ "$got" = "$rows" ] || die "$fp: $got snapshot rows, the table has $rows"
  cat_table ops.facts "$T/f.jsonl"
  ev=$($CHECK count "$T/f.jsonl" app_id="$app" event=bootstrap)
  [ "$ev" = 1 ] || die "$fp: $ev bootstrap rows"
done

# 20 random kill -9 of an interval stream following a realtime workload
RT=$T/rt.sqlite
M sim init "$RT" --table dbo.orders --keys order_id --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
M sim workload "$RT" --table dbo.orders --transactions 400 --seed 7 --interval 10ms --capture-every 50ms --realtime >/dev/null 2>&1 &
wl=$!
DB=$RT
for k in $(seq 1 20); do
  stream rt --trigger interval:50ms >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 3 + 1))"
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
done
wait $wl
M sim capture "$RT" >/dev/null
stream rt >/dev/null || die "the final run after 20 kills failed"
check_bronze bronze.rt ops.facts rt
echo "ok"
