# Range deletes (rule W2 in mcdc/silver.h) for a composite key (date, int), planned by
# keyset bounds: a re-snapshot after a data loss whose gap held deletes. While the new
# snapshot is still open, silver still has the deleted keys from the older snapshot until
# the wave of their chunk arrives, which deletes them (silver's image is older than the
# chunk's stamp); a key deleted after its chunk's stamp, with silver applied before that
# wave arrived, stays deleted; a key inserted after its chunk was read stays; keys of
# chunks not read yet are untouched. At completion silver equals the source.
. "$(dirname "$0")/stream_lib.bash"
M sim init "$DB" --table dbo.orders --keys day,id --at 2026-10-01T07:00:00 \
  --schema 'day DATE NOT NULL, id INT NOT NULL, n INT NULL' >/dev/null
vals=""
for d in 01 02 03 04 05 06; do for i in 1 2 3 4 5; do vals+="('2026-09-$d', $i, $i),"; done; done
sim_exec 2026-10-01T08:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T08:00:01
RS() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.r --app-id r1 \
         --checkpoint "$T/ck" --facts ops.facts --control ops.control --on-data-loss resnapshot \
         --bootstrap --bootstrap-mode chunked; }
BR() { M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.r --app-id r1 \
         --facts ops.facts --chunk-rows 5 --target-wave-seconds 0 "$@"; }
SR() { M silver apply --bronze bronze.r --silver silver.r --capture-instance dbo_orders --keys day,id \
         --control ops.control --facts ops.facts; }
rows() { M table cat silver.r --format csv --columns day,id,n | tail -n +2 | sort; }
has() { rows | grep -q "^$1,$2,"; }
source_rows() { M sim query "$DB" "SELECT day, id, n FROM dbo.orders" --format csv | tail -n +2 | sort; }

RS >/dev/null 2>&1 || die "open"
BR >/dev/null 2>&1 || die "backfill"
RS >/dev/null 2>&1 && SR >/dev/null 2>&1 || die "silver after the bootstrap"
[ "$(rows)" = "$(source_rows)" ] || die "silver differs from the source after the bootstrap"

# the gap: deletes in the second and fifth days, purged before the stream read them
sim_exec 2026-10-02T10:00:00 "DELETE FROM dbo.orders WHERE (day = '2026-09-02' AND id IN (2, 4)) OR (day = '2026-09-05' AND id = 1)"
sim_exec 2026-10-02T10:00:01 "UPDATE dbo.orders SET n = 50 WHERE day = '2026-09-06' AND id = 5"
sim_exec 2026-10-04T10:00:00 "UPDATE dbo.orders SET n = 10 WHERE day = '2026-09-01' AND id = 1"
sim_capture 2026-10-04T10:00:01
M sim cleanup "$DB" --retention 1d --at 2026-10-04T11:00:00 >/dev/null
RS >/dev/null 2>&1 || die "the re-snapshot"
grep -q '"generation":1' "$T/ck/generation" || die "not generation 1"
SR >/dev/null 2>&1 || die "silver with the re-snapshot open"
has 2026-09-02 2 || die "key (09-02, 2) gone before its chunk arrived"

# wave 0: [open, (09-02, 1)); wave 1: [(09-02, 1), (09-03, 1)) holds the gap's deletes
BR --max-waves 1 >/dev/null 2>&1 || [ $? = 1 ] || die "wave 0"
SR >/dev/null 2>&1 || die "silver after wave 0"
has 2026-09-02 2 || die "key (09-02, 2) deleted before its chunk arrived"
# wave 1 read and held before its commit; meanwhile (09-02, 3), in it, is deleted and
# (09-02, 4) comes back, both streamed and applied by silver
MCDC_FAILPOINT=backfill.after_data_files=stop "$MCDC_BIN" backfill --source "sim:$DB" \
  --capture-instance dbo_orders --target bronze.r --app-id r1 --facts ops.facts --chunk-rows 5 \
  --target-wave-seconds 0 --max-waves 1 >"$T/bf.out" 2>&1 &
bf=$!
for ((i = 0; i < 500; i++)); do
  [ "$(awk '{print $3}' /proc/$bf/stat 2>/dev/null)" = T ] && break
  sleep 0.02
done
[ "$(awk '{print $3}' /proc/$bf/stat 2>/dev/null)" = T ] || die "the backfill never reached its failpoint: $(cat "$T/bf.out")"
sim_exec 2026-10-04T12:00:00 "DELETE FROM dbo.orders WHERE day = '2026-09-02' AND id = 3"
sim_exec 2026-10-04T12:00:01 "INSERT INTO dbo.orders VALUES ('2026-09-02', 4, 44)"
sim_capture 2026-10-04T12:00:05
RS >/dev/null 2>&1 || die "stream while wave 1 is held"
SR >/dev/null 2>&1 || die "silver while wave 1 is held"
kill -CONT $bf
rc=0; wait $bf || rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || die "the held backfill exited $rc: $(cat "$T/bf.out")"
out=$(SR 2>&1) || die "silver after wave 1: $out"
grep -q "finalized_until none" <<<"$out" || die "the verdict is not held while the snapshot is open: $out"
has 2026-09-02 2 && die "key (09-02, 2), deleted in the gap, still in silver after its chunk's wave (snapshot open)"
has 2026-09-02 3 && die "key (09-02, 3), deleted after its chunk's stamp, came back"
rows | grep -q '^2026-09-02,4,44$' || die "key (09-02, 4), inserted after its chunk was read: $(rows | grep '^2026-09-02,4,' || echo gone)"
has 2026-09-05 1 || die "key (09-05, 1), in a chunk not read yet, deleted before its wave"
rows | grep -q '^2026-09-06,5,5$' || die "key (09-06, 5), in a chunk not read yet, changed before its wave"

BR >/dev/null 2>&1 || die "backfill to completion"
RS >/dev/null 2>&1 && SR >/dev/null 2>&1 || die "silver at completion"
diff <(rows) <(source_rows) >&2 || die "silver differs from the source at completion"
echo ok
