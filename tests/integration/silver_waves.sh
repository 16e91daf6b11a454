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
vals=$(seq 1 60 | sed 's/.*/(&, &.00)/' | paste -sd, -)
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
sim_exec 2026-10-01T08:30:00 "INSERT INTO dbo.orders VALUES (100, 100.00)"
sim_capture 2026-10-01T08:30:01
ST >/dev/null 2>&1 || die "stream before any wave"
out=$(SA 2>&1) || die "silver apply with no wave: $out"
grep -q "finalized_until none" <<<"$out" || die "verdict not held while open: $out"
[ "$(silver_keys)" = "100" ] || die "silver before any wave: keys $(silver_keys)"

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
[ "$(silver_keys)" = "0 1 2 3 4 6 7 8 9 10 25 100" ] || die "silver after wave 0: keys $(silver_keys)"
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

# kills of the apply at each step while waves keep arriving: the next apply converges
# (a wave applied twice changes nothing, a wave not recorded is applied again)
n=0
for fp in silver.before_merge_commit silver.after_merge silver.after_position; do
  n=$((n + 1))
  sim_exec "2026-10-01T09:2$n:00" "UPDATE dbo.orders SET amount = amount + 1 WHERE order_id IN (2, 22, 29)"
  sim_capture "2026-10-01T09:2$n:05"
  ST >/dev/null 2>&1 || die "stream before the kill at $fp"
  set +e; BF --max-waves 1 >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 1 ] || die "backfill before the kill at $fp: exit $rc, want 1 (chunks left: still open)"
  set +e; MCDC_FAILPOINT=$fp SA >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 137 ] || die "silver apply not killed at $fp (exit $rc)"
  SA >/dev/null 2>&1 || die "silver apply after the kill at $fp"
  case " $(silver_keys) " in *" 15 "*|*" 5 "*) die "a deleted key came back after the kill at $fp" ;; esac
  [ "$(amount_of 2)" = "$(M sim query "$DB" "SELECT amount FROM dbo.orders WHERE order_id = 2" --format csv | tail -1)" ] ||
    die "key 2 after the kill at $fp: $(amount_of 2)"
done

# the rest, then completion: silver equals the source, the verdict moves
BF >/dev/null 2>&1 || die "backfill to completion"
ST >/dev/null 2>&1 || die "stream after completion"
out=$(SA 2>&1) || die "silver apply at completion: $out"
[ "$(silver_rows)" = "$(source_rows)" ] || { diff <(silver_rows) <(source_rows) >&2; die "silver differs from the source at completion"; }
case " $(silver_keys) " in *" 0 "*) ;; *) die "key 0, inserted after its chunk's read, deleted at completion" ;; esac
grep -q "finalized_until none" <<<"$out" && die "verdict still held after completion: $out"

# range deletes (rule W2): a re-snapshot after data loss whose gap held deletes; silver
# still has the deleted keys from the older snapshot until the wave of their chunk
# arrives, which deletes them (silver's image is older than the chunk's stamp), while a
# key inserted after its chunk was read stays
RS() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.r --app-id r1 \
         --checkpoint "$T/ckr" --facts ops.facts --control ops.control --on-data-loss resnapshot \
         --bootstrap --bootstrap-mode chunked; }
BR() { M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.r --app-id r1 \
         --facts ops.facts --chunk-rows 10 --target-wave-seconds 0 "$@"; }
SR() { M silver apply --bronze bronze.r --silver silver.r --capture-instance dbo_orders --keys order_id \
         --control ops.control --facts ops.facts; }
r_keys() { M table cat silver.r --format csv --columns order_id | tail -n +2 | sort -n | paste -sd' ' -; }
r_amount() { M table cat silver.r --format csv --columns order_id,amount | grep "^$1," | cut -d, -f2; }
r_rows() { M table cat silver.r --format csv --columns order_id,amount | tail -n +2 | sort; }
RS >/dev/null 2>&1 || die "r: open"
sim_exec 2026-10-01T10:00:00 "UPDATE dbo.orders SET amount = 1.50 WHERE order_id = 1"
sim_capture 2026-10-01T10:00:01
RS >/dev/null 2>&1 || die "r: stream"
BR >/dev/null 2>&1 || die "r: backfill"
RS >/dev/null 2>&1 || die "r: stream after the backfill"
SR >/dev/null 2>&1 || die "r: silver"
[ "$(r_rows)" = "$(source_rows)" ] || die "r: silver differs from the source after the bootstrap"
sim_exec 2026-10-02T10:00:00 "DELETE FROM dbo.orders WHERE order_id IN (40, 41); UPDATE dbo.orders SET amount = 420.00 WHERE order_id = 42"
sim_exec 2026-10-04T10:00:00 "UPDATE dbo.orders SET amount = 430.00 WHERE order_id = 43"
sim_capture 2026-10-04T10:00:01
M sim cleanup "$DB" --retention 1d --at 2026-10-04T11:00:00 >/dev/null
RS >/dev/null 2>&1 || die "r: the re-snapshot"
grep -q '"generation":1' "$T/ckr/generation" || die "r: not generation 1"
SR >/dev/null 2>&1 || die "r: silver with the re-snapshot open"
case " $(r_keys) " in *" 40 "*) ;; *) die "r: key 40 gone before its chunk arrived" ;; esac
for w in $(seq 1 12); do
  set +e; BR --max-waves 1 >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 1 ] || die "r: wave $w: exit $rc (want chunks left)"
  if [ $w = 2 ]; then # chunk [11, 21) is read: 15 (deleted earlier) comes back after it
    sim_exec 2026-10-04T12:00:00 "INSERT INTO dbo.orders VALUES (15, 15.50)"
    sim_capture 2026-10-04T12:00:01
    RS >/dev/null 2>&1 || die "r: stream of the insert"
  fi
  SR >/dev/null 2>&1 || die "r: silver after wave $w"
  st=$(BR --status 2>&1 || true)
  done_=$(grep -oE '[0-9]+/[0-9]+ chunks' <<<"$st" | head -1); done_=${done_% chunks}
  [ "${done_%%/*}" -ge $(( ${done_#*/} - 1 )) ] 2>/dev/null && break
done
case " $(r_keys) " in *" 40 "*|*" 41 "*) die "r: keys deleted in the gap still in silver after their wave: $(r_keys)" ;; esac
case " $(r_keys) " in *" 15 "*) ;; *) die "r: key 15, inserted after its chunk was read, deleted: $(r_keys)" ;; esac
[ "$(r_amount 42)" = 420.00 ] || die "r: key 42 after its wave: $(r_amount 42)"
[ "$(r_amount 43)" = 430.00 ] || die "r: key 43: $(r_amount 43)"
BR >/dev/null 2>&1 || die "r: backfill to completion"
RS >/dev/null 2>&1 || die "r: stream after completion"
SR >/dev/null 2>&1 || die "r: silver at completion"
[ "$(r_rows)" = "$(source_rows)" ] || { diff <(r_rows) <(source_rows) >&2; die "r: silver differs from the source at completion"; }
echo "ok"
