# A chunked snapshot read beside a live workload and a stream, with kill -9s of both at
# random steps (seeded, so a failure reproduces): afterwards every key of the table's
# snapshot is in bronze exactly once, every planned chunk has exactly one snapshot_chunk
# row, and silver equals the source table (`sim query`). The small version of issue 17's
# acceptance runs; the 1,000,000-row one lives outside the test command.
source "$MCDC_SRC/tests/integration/stream_lib.bash"
RANDOM=17

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T07:00:00 \
  --schema 'order_id INT NOT NULL, amount DECIMAL(12,2) NULL' >/dev/null
M sim workload "$DB" --table dbo.orders --transactions 3000 --seed 3 --mix insert=100,update=0,delete=0 \
  --start 2026-10-01T08:00:00 >/dev/null
ST() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --checkpoint "$T/ck" --facts ops.facts --bootstrap --bootstrap-mode chunked "$@"; }
BF() { M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --facts ops.facts --chunk-rows 150 --target-wave-seconds 0 "$@"; }
stream_fps=(stream.after_offsets stream.mid_read stream.after_data_file stream.after_bronze_commit
            stream.after_facts stream.before_commit)
bf_fps=(backfill.after_plan backfill.mid_read backfill.read_ahead backfill.after_data_files backfill.after_bronze
        backfill.after_chunk_facts backfill.after_completion)
kills=0
ST >/dev/null 2>&1 || die "opening the snapshot failed"
for round in $(seq 1 16); do
  M sim workload "$DB" --table dbo.orders --transactions 60 --seed $((round + 10)) \
    --start "2026-10-01T09:$(printf %02d $round):00" >/dev/null
  fp=""; [ $((RANDOM % 2)) = 0 ] && fp="${stream_fps[RANDOM % ${#stream_fps[@]}]}"
  set +e; MCDC_FAILPOINT=$fp ST >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 0 ] || { [ $rc = 137 ] && [ -n "$fp" ]; } || die "round $round: stream exit $rc ($fp)"
  [ $rc = 137 ] && kills=$((kills + 1))
  fp=""; [ $((RANDOM % 3)) != 0 ] && fp="${bf_fps[RANDOM % ${#bf_fps[@]}]}@$((RANDOM % 2 + 1))"
  set +e; MCDC_FAILPOINT=$fp BF --max-waves 2 >/dev/null 2>&1; rc=$?; set -e
  case $rc in
    0|1) ;;
    137) [ -n "$fp" ] || die "round $round: backfill killed without a failpoint"; kills=$((kills + 1)) ;;
    *) die "round $round: backfill exit $rc ($fp)" ;;
  esac
done
[ $kills -ge 8 ] || die "only $kills kills: the seed does not exercise the crashes"
# finish: the backfill to completion, the stream to the head, then silver
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25; do
  set +e; BF >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 0 ] && break
  [ $rc = 1 ] || die "backfill to the end: exit $rc"
done
[ $rc = 0 ] || die "the backfill never completed"
ST >/dev/null 2>&1 || die "the last stream run failed"
M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys order_id \
  --control ops.control --facts ops.facts >/dev/null || die "silver apply failed"

# every key of the snapshot once; every chunk of the plan once
snap=$(M table cat bronze.o --format csv --columns _operation,order_id | grep '^0,' | cut -d, -f2 | sort -n)
[ -z "$(uniq -d <<<"$snap")" ] || die "keys with two snapshot rows: $(uniq -d <<<"$snap" | head -3)"
n_plan=$(M table cat ops.facts --format csv --columns event,detail | grep '^snapshot_plan,' | grep -o '\]\],\|\],\[' | wc -l)
chunks=$(M table cat ops.facts --format csv --columns event,detail | grep '^snapshot_chunk,' |
         grep -oE '""chunk"":[0-9]+' | sort | uniq -c | awk '$1 != 1' | wc -l)
[ "$chunks" = 0 ] || die "a chunk has more than one snapshot_chunk row"
[ "$(M table cat ops.facts --format csv --columns event | grep -c '^bootstrap$')" = 1 ] || die "not one bootstrap row"
n_chunk_rows=$(M table cat ops.facts --format csv --columns event | grep -c '^snapshot_chunk$')
out=$(BF --status)
grep -q "complete, $n_chunk_rows/$n_chunk_rows chunks" <<<"$out" || die "status: $out (chunk rows $n_chunk_rows, plan $n_plan)"
# silver is the source table
diff <(M sim query "$DB" 'SELECT order_id, amount FROM dbo.orders' --format csv | tail -n +2 | sort -t, -k1n) \
     <(M table cat silver.o --format csv --columns order_id,amount | tail -n +2 | sort -t, -k1n) >/dev/null ||
  die "silver differs from the source table"
echo "ok: $kills kills"
