# Crash tests: the stream killed (SIGKILL, through MCDC_FAILPOINT) at every step of a batch,
# each at two hit counts, then run again: nothing lost, nothing doubled, facts consistent.
# Then the bootstrap's steps: a rerun never takes a second snapshot.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
for i in $(seq 1 6); do
  sim_exec "2026-10-01T14:0$i:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($i, 'c$i', $i.25, NULL), ($((i + 100)), 'd$i', NULL, NULL); UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = $i"
  if [ $i = 3 ]; then
    sim_capture 2026-10-01T14:03:01
    M sim idle "$DB" --at 2026-10-01T14:03:20 >/dev/null
  fi
  sim_exec "2026-10-01T14:0$i:30" "DELETE FROM dbo.orders WHERE order_id = $((i + 100))"
done
sim_capture 2026-10-01T14:10:00

n=0
checks=()
for fp in after_offsets mid_read after_data_file after_bronze_commit after_facts before_commit; do
  for hit in 1 3; do
    n=$((n + 1))
    app="c$n"
    set +e
    MCDC_FAILPOINT="stream.$fp@$hit" stream "$app" --max-commits-per-batch 2 >/dev/null 2>&1
    rc=$?
    set -e
    [ $rc = 137 ] || [ $rc = 0 ] || die "$fp@$hit: exit $rc"
    [ $hit != 1 ] || [ $rc = 137 ] || die "$fp@1 was never reached"
    stream "$app" --max-commits-per-batch 2 >/dev/null || die "$fp@$hit: the rerun failed"
    cat_table "bronze.$app" "$T/$app.jsonl"
    checks+=("$app=$T/$app.jsonl")
  done
done
ct_rows "$T/ct.jsonl"
cat_table ops.facts "$T/facts.jsonl"
$CHECK many "$T/ct.jsonl" "$T/facts.jsonl" "${checks[@]}" >/dev/null || die "a crash lost or doubled changes"

# bootstrap: a crash at any step resumes without a second snapshot
rows=$(M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl | wc -l)
for fp in bootstrap.mid_read bootstrap.after_data_file bootstrap.after_snapshot bootstrap.after_event; do
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

echo "ok"
