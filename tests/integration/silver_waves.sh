# Silver applies a chunked snapshot's waves as they arrive (rule W1 in mcdc/silver.h): each
# wave's rows are ranked with every bronze change after S to the same keys, so a row
# updated after its chunk was read keeps the newer value, a key deleted after its chunk's
# stamp stays deleted even when silver applied the delete before that wave arrived (the
# backfill held between its read and its commit), and a key inserted after its chunk was
# read is there, also at completion; the verdict is held while the snapshot is open and
# moves once it is complete, when silver equals the source.
. "$(dirname "$0")/stream_lib.bash"
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T07:00:00 \
  --schema 'order_id INT NOT NULL, amount DECIMAL(12,2) NULL' >/dev/null
vals=$(seq 1 30 | sed 's/.*/(&, &.00)/' | paste -sd, -)
M sim exec "$DB" --at 2026-10-01T08:00:00 "INSERT INTO dbo.orders VALUES $vals" >/dev/null
sim_capture 2026-10-01T08:00:01
ST() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --checkpoint "$T/ck" --facts ops.facts --control ops.control --bootstrap --bootstrap-mode chunked; }
BF() { M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --facts ops.facts --chunk-rows 10 --target-wave-seconds 0 "$@"; }
SA() { M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys order_id \
         --control ops.control --facts ops.facts; }
silver_keys() { M table cat silver.o --format csv --columns order_id | tail -n +2 | sort -n | paste -sd' ' -; }
amount_of() { M table cat silver.o --format csv --columns order_id,amount | grep "^$1," | cut -d, -f2; }
source_rows() { M sim query "$DB" "SELECT order_id, amount FROM dbo.orders" --format csv | tail -n +2 | sort; }
silver_rows() { M table cat silver.o --format csv --columns order_id,amount | tail -n +2 | sort; }

ST >/dev/null 2>&1 || die "opening the snapshot"
sim_exec 2026-10-01T08:30:00 "INSERT INTO dbo.orders VALUES (31, 31.00)"
sim_capture 2026-10-01T08:30:01
ST >/dev/null 2>&1 || die "stream before any wave"
out=$(SA 2>&1) || die "silver apply with no wave: $out"
grep -q "finalized_until none" <<<"$out" || die "verdict not held while open: $out"
[ "$(silver_keys)" = "31" ] || die "silver before any wave: keys $(silver_keys)"

# wave 0 (the chunk below 11); then, after its read: an update, a delete and an insert in it
BF --max-waves 1 >/dev/null 2>&1 || [ $? = 1 ] || die "backfill wave 0"
sim_exec 2026-10-01T09:00:00 "UPDATE dbo.orders SET amount = 99.00 WHERE order_id = 3"
sim_exec 2026-10-01T09:00:01 "DELETE FROM dbo.orders WHERE order_id = 5"
sim_exec 2026-10-01T09:00:02 "INSERT INTO dbo.orders VALUES (0, 0.50)"
sim_exec 2026-10-01T09:00:03 "UPDATE dbo.orders SET amount = 77.00 WHERE order_id = 25"
sim_capture 2026-10-01T09:00:05
ST >/dev/null 2>&1 || die "stream after wave 0"
out=$(SA 2>&1) || die "silver apply after wave 0: $out"
grep -q "finalized_until none" <<<"$out" || die "verdict not held while open: $out"
[ "$(silver_keys)" = "0 1 2 3 4 6 7 8 9 10 25 31" ] || die "silver after wave 0: keys $(silver_keys)"
[ "$(amount_of 3)" = 99.00 ] || die "an update after its chunk's read lost: $(amount_of 3)"
[ "$(amount_of 25)" = 77.00 ] || die "a change before its chunk arrived not applied: $(amount_of 25)"

# wave 1 read and held before its commit; meanwhile key 15 (in it) is deleted, streamed and
# applied to silver; then the wave commits with 15's row stamped before the delete
MCDC_FAILPOINT=backfill.after_data_files=stop "$MCDC_BIN" backfill --source "sim:$DB" \
  --capture-instance dbo_orders --target bronze.o --app-id o1 --facts ops.facts --chunk-rows 10 \
  --target-wave-seconds 0 --max-waves 1 >"$T/bf.out" 2>&1 &
bf=$!
for ((i = 0; i < 500; i++)); do
  [ "$(awk '{print $3}' /proc/$bf/stat 2>/dev/null)" = T ] && break
  sleep 0.02
done
[ "$(awk '{print $3}' /proc/$bf/stat 2>/dev/null)" = T ] || die "the backfill never reached its failpoint: $(cat $T/bf.out)"
sim_exec 2026-10-01T09:10:00 "DELETE FROM dbo.orders WHERE order_id = 15"
sim_exec 2026-10-01T09:10:01 "UPDATE dbo.orders SET amount = 66.00 WHERE order_id = 12"
sim_capture 2026-10-01T09:10:05
ST >/dev/null 2>&1 || die "stream while the wave is held"
SA >/dev/null 2>&1 || die "silver apply while the wave is held"
kill -CONT $bf
rc=0; wait $bf || rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || die "the held backfill exited $rc"
out=$(SA 2>&1) || die "silver apply after wave 1: $out"
keys=" $(silver_keys) "
case "$keys" in *" 15 "*) die "key 15, deleted after its chunk's stamp, came back: $keys" ;; esac
case "$keys" in *" 11 "*) ;; *) die "wave 1 not applied: $keys" ;; esac
[ "$(amount_of 12)" = 66.00 ] || die "an update after its chunk's read lost: $(amount_of 12)"
[ "$(amount_of 3)" = 99.00 ] || die "wave 1 undid an update of wave 0's chunk: $(amount_of 3)"

# the rest, then completion: silver equals the source, the verdict moves
BF >/dev/null 2>&1 || die "backfill to completion"
ST >/dev/null 2>&1 || die "stream after completion"
out=$(SA 2>&1) || die "silver apply at completion: $out"
[ "$(silver_rows)" = "$(source_rows)" ] || { diff <(silver_rows) <(source_rows) >&2; die "silver differs from the source at completion"; }
case " $(silver_keys) " in *" 0 "*) ;; *) die "key 0, inserted after its chunk's read, deleted at completion" ;; esac
grep -q "finalized_until none" <<<"$out" && die "verdict still held after completion: $out"
echo "ok"
