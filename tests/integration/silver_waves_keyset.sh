# Range deletes (rule W2 in mcdc/silver.h) for composite keys planned by keyset bounds,
# (date, int) and (nvarchar, uniqueidentifier) whose source order (case-insensitive text,
# a uniqueidentifier's byte groups) is not their byte order: a re-snapshot after a data
# loss whose gap held deletes. While the new snapshot is still open, silver still has the deleted keys from the older snapshot until
# the wave of their chunk arrives, which deletes them (silver's image is older than the
# chunk's stamp); a key deleted after its chunk's stamp, with silver applied before that
# wave arrived, stays deleted; a key inserted after its chunk was read stays; keys of
# chunks not read yet are untouched. At completion silver equals the source.
. "$(dirname "$0")/stream_lib.bash"
scenario() {
rm -rf "$T/lake" "$T/ck" "$DB"
M sim init "$DB" --table dbo.orders --keys day,id --at 2026-10-01T07:00:00 \
  --schema "day $DAY_TYPE NOT NULL, id $ID_TYPE NOT NULL, n INT NULL" >/dev/null
vals=""
for d in 1 2 3 4 5 6; do for i in 1 2 3 4 5; do vals+="($(D $d), $(I $i), $i),"; done; done
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
has() { rows | grep -qi "^$1,$2,"; }
source_rows() { M sim query "$DB" "SELECT day, id, n FROM dbo.orders" --format csv | tail -n +2 | sort; }

RS >/dev/null 2>&1 || die "$KIND: open"
BR >/dev/null 2>&1 || die "$KIND: backfill"
RS >/dev/null 2>&1 && SR >/dev/null 2>&1 || die "$KIND: silver after the bootstrap"
[ "$(rows)" = "$(source_rows)" ] || die "$KIND: silver differs from the source after the bootstrap"

# the gap: deletes in the second and fifth days, purged before the stream read them
sim_exec 2026-10-02T10:00:00 "DELETE FROM dbo.orders WHERE (day = $(D 2) AND id IN ($(I 2), $(I 4))) OR (day = $(D 5) AND id = $(I 1))"
sim_exec 2026-10-02T10:00:01 "UPDATE dbo.orders SET n = 50 WHERE day = $(D 6) AND id = $(I 5)"
sim_exec 2026-10-04T10:00:00 "UPDATE dbo.orders SET n = 10 WHERE day = $(D 1) AND id = $(I 1)"
sim_capture 2026-10-04T10:00:01
M sim cleanup "$DB" --retention 1d --at 2026-10-04T11:00:00 >/dev/null
RS >/dev/null 2>&1 || die "$KIND: the re-snapshot"
grep -q '"generation":1' "$T/ck/generation" || die "$KIND: not generation 1"
SR >/dev/null 2>&1 || die "$KIND: silver with the re-snapshot open"
has "$(V 2)" "$(W 2)" || die "$KIND: key (09-02, 2) gone before its chunk arrived"

# wave 0: [open, (09-02, 1)); wave 1: [(09-02, 1), (09-03, 1)) holds the gap's deletes
BR --max-waves 1 >/dev/null 2>&1 || [ $? = 1 ] || die "$KIND: wave 0"
SR >/dev/null 2>&1 || die "$KIND: silver after wave 0"
has "$(V 2)" "$(W 2)" || die "$KIND: key (09-02, 2) deleted before its chunk arrived"
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
[ "$(awk '{print $3}' /proc/$bf/stat 2>/dev/null)" = T ] || die "$KIND: the backfill never reached its failpoint: $(cat "$T/bf.out")"
sim_exec 2026-10-04T12:00:00 "DELETE FROM dbo.orders WHERE day = $(D 2) AND id = $(I 3)"
sim_exec 2026-10-04T12:00:01 "INSERT INTO dbo.orders VALUES ($(D 2), $(I 4), 44)"
sim_capture 2026-10-04T12:00:05
RS >/dev/null 2>&1 || die "$KIND: stream while wave 1 is held"
SR >/dev/null 2>&1 || die "$KIND: silver while wave 1 is held"
kill -CONT $bf
rc=0; wait $bf || rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || die "$KIND: the held backfill exited $rc: $(cat "$T/bf.out")"
out=$(SR 2>&1) || die "$KIND: silver after wave 1: $out"
grep -q "finalized_until none" <<<"$out" || die "$KIND: the verdict is not held while the snapshot is open: $out"
has "$(V 2)" "$(W 2)" && die "$KIND: key (09-02, 2), deleted in the gap, still in silver after its chunk's wave (snapshot open)"
has "$(V 2)" "$(W 3)" && die "$KIND: key (09-02, 3), deleted after its chunk's stamp, came back"
rows | grep -qi "^$(V 2),$(W 4),44\$" || die "$KIND: key (09-02, 4), inserted after its chunk was read: $(rows | grep "^$(V 2),$(W 4)," || echo gone)"
has "$(V 5)" "$(W 1)" || die "$KIND: key (09-05, 1), in a chunk not read yet, deleted before its wave"
rows | grep -qi "^$(V 6),$(W 5),5\$" || die "$KIND: key (09-06, 5), in a chunk not read yet, changed before its wave"

BR >/dev/null 2>&1 || die "$KIND: backfill to completion"
RS >/dev/null 2>&1 && SR >/dev/null 2>&1 || die "$KIND: silver at completion"
diff <(rows) <(source_rows) >&2 || die "$KIND: silver differs from the source at completion"
}

KIND=date-int DAY_TYPE=DATE ID_TYPE=INT
D() { echo "'2026-09-0$1'"; }; I() { echo "$1"; }
V() { echo "2026-09-0$1"; }; W() { echo "$1"; }
scenario
# text keys in mixed case (a B c D e F: not their byte order) and uniqueidentifiers whose
# text order is the reverse of their byte-group order
KIND=text-guid DAY_TYPE="NVARCHAR(10)" ID_TYPE=UNIQUEIDENTIFIER
letters=(x a B c D e F)
D() { echo "N'${letters[$1]}'"; }; V() { echo "${letters[$1]}"; }
I() { echo "'0000000$((6 - $1))-0000-0000-0000-00000000000$1'"; }
W() { echo "0000000$((6 - $1))-0000-0000-0000-00000000000$1"; }
scenario
echo ok
