# Silver applies partial backfills (`backfill --range LO..HI`, rule W3 in mcdc/silver.h):
# a key range of bronze and silver damaged by a data loss skipped with --on-data-loss skip
# (deletes and updates purged before the stream read them) is repaired by a partial
# backfill of the range, and silver then equals the source inside [LO, HI) while the keys
# outside it keep their (damaged) rows: no rebuild, no delete outside the range. A change
# after the range's stamp wins (a key inserted after its chunk was read, applied by silver
# before the wave arrived, is not deleted; a key deleted after the stamp stays deleted).
# Each wave is applied once (silver's txn marks it in the merge commit), also across kills
# of the apply at each of its steps. An integer key, then a composite key (date, int).
. "$(dirname "$0")/stream_lib.bash"

setup() { # $1 keys, $2 schema, $3 values
  rm -rf "$T/lake" "$T/ck" "$DB"
  M sim init "$DB" --table dbo.orders --keys "$1" --at 2026-10-01T07:00:00 --schema "$2" >/dev/null
  sim_exec 2026-10-01T08:00:00 "INSERT INTO dbo.orders VALUES $3"
  sim_capture 2026-10-01T08:00:01
}
ST() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --checkpoint "$T/ck" --facts ops.facts --control ops.control --bootstrap --bootstrap-mode chunked \
         --on-data-loss skip; }
BF() { M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --facts ops.facts --target-wave-seconds 0 "$@"; }
SA() { M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys "$KEYS" \
         --control ops.control --facts ops.facts; }
silver_rows() { M table cat silver.o --format csv --columns "$COLS" | tail -n +2 | sort; }
source_rows() { M sim query "$DB" "SELECT $COLS FROM dbo.orders" --format csv | tail -n +2 | sort; }
# rows of silver and of the source whose key passes the awk filter $1 (fields: the columns)
part() { awk -F, "$1"; }
hold_backfill() { # run BF "$@" stopped after its data files, before the commit; pid in $bf
  MCDC_FAILPOINT=backfill.after_data_files=stop "$MCDC_BIN" backfill --source "sim:$DB" \
    --capture-instance dbo_orders --target bronze.o --app-id o1 --facts ops.facts \
    --target-wave-seconds 0 "$@" >"$T/bf.out" 2>&1 &
  bf=$!
  for ((i = 0; i < 500; i++)); do
    [ "$(awk '{print $3}' /proc/$bf/stat 2>/dev/null)" = T ] && return 0
    sleep 0.02
  done
  die "the backfill never reached its failpoint: $(cat "$T/bf.out")"
}

# ---- an integer key -------------------------------------------------------------------------
KEYS=order_id COLS=order_id,amount
setup order_id 'order_id INT NOT NULL, amount DECIMAL(12,2) NULL' "$(seq 1 60 | sed 's/.*/(&, &.00)/' | paste -sd, -)"
ST >/dev/null 2>&1 || die "opening the snapshot"
BF --chunk-rows 20 >/dev/null 2>&1 || die "the snapshot's backfill"
ST >/dev/null 2>&1 || die "stream after the snapshot"
SA >/dev/null 2>&1 || die "silver after the snapshot"
[ "$(silver_rows)" = "$(source_rows)" ] || die "silver differs from the source after the snapshot"

# the damage: changes inside [10, 30) and outside it, purged before the stream read them
sim_exec 2026-10-02T08:00:00 "DELETE FROM dbo.orders WHERE order_id IN (15, 16, 45); UPDATE dbo.orders SET amount = 170.00 WHERE order_id IN (17, 50)"
sim_exec 2026-10-02T08:00:01 "INSERT INTO dbo.orders VALUES (61, 61.00)" # the low water mark
sim_exec 2026-10-04T10:00:00 "UPDATE dbo.orders SET amount = 3.50 WHERE order_id = 3"
sim_capture 2026-10-04T10:00:05
M sim cleanup "$DB" --retention 1d --at 2026-10-04T11:00:00 >/dev/null
ST >/dev/null 2>&1 || die "stream over the gap (skip)"
SA >/dev/null 2>&1 || die "silver after the gap"
[ "$(silver_rows)" != "$(source_rows)" ] || die "the gap damaged nothing: the test proves nothing"
damaged_outside=$(silver_rows | part '$1 < 10 || $1 >= 30')

# the repair, its first wave ([10, 14)) committed; the second read and held; meanwhile key
# 16 comes back (inserted after the held chunk's read, applied by silver first) and key 22
# is deleted; both are in the held chunk [14, 18) or later ones
BF --range 10..30 --chunk-rows 4 --max-waves 1 >/dev/null 2>&1 || [ $? = 1 ] || die "range wave 0"
hold_backfill --range 10..30 --chunk-rows 4
sim_exec 2026-10-04T12:00:00 "INSERT INTO dbo.orders VALUES (16, 16.50)"
sim_exec 2026-10-04T12:00:01 "DELETE FROM dbo.orders WHERE order_id = 22"
sim_capture 2026-10-04T12:00:05
ST >/dev/null 2>&1 || die "stream while the range wave is held"
SA >/dev/null 2>&1 || die "silver while the range wave is held"
kill -CONT $bf
rc=0; wait $bf || rc=$?
[ $rc = 0 ] || [ $rc = 1 ] || die "the held range backfill exited $rc: $(cat "$T/bf.out")"
out=$(SA 2>&1) || die "silver after the range: $out"
grep -q "rebuilt" <<<"$out" && die "a partial backfill rebuilt silver: $out"
inside() { part '$1 >= 10 && $1 < 30'; }
diff <(silver_rows | inside) <(source_rows | inside) >&2 || die "silver differs from the source inside [10, 30) after the repair"
[ "$(silver_rows | part '$1 < 10 || $1 >= 30')" = "$damaged_outside" ] || die "keys outside [10, 30) were touched"
silver_rows | grep -q '^16,16.50$' || die "key 16, inserted after its chunk was read, lost: $(silver_rows | grep '^16,')"
silver_rows | grep -q '^22,' && die "key 22, deleted after its chunk's stamp, came back"

# each wave once: a second apply has nothing to do; kills at each step converge
v=$(M table info silver.o --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
SA >/dev/null 2>&1 || die "silver again"
[ "$(M table info silver.o --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')" = "$v" ] ||
  die "a second apply after the range committed again"
n=0
for fp in silver.before_merge_commit silver.after_merge silver.after_position; do
  n=$((n + 1))
  sim_exec "2026-10-04T13:0$n:00" "DELETE FROM dbo.orders WHERE order_id = $((30 + n)); UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = $((40 + n))"
  sim_capture "2026-10-04T13:0$n:05"
  ST >/dev/null 2>&1 || die "stream before the kill at $fp"
  BF --range 30..40 --chunk-rows 5 >/dev/null 2>&1 || die "range 30..40 before the kill at $fp"
  set +e; MCDC_FAILPOINT=$fp SA >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 137 ] || die "silver apply not killed at $fp (exit $rc)"
  SA >/dev/null 2>&1 || die "silver apply after the kill at $fp"
  diff <(silver_rows | inside) <(source_rows | inside) >&2 || die "silver inside [10, 30) after the kill at $fp"
  diff <(silver_rows | part '$1 >= 30 && $1 < 40') <(source_rows | part '$1 >= 30 && $1 < 40') >&2 ||
    die "silver inside [30, 40) after the kill at $fp"
done
[ "$(silver_rows | part '$1 == 45')" = "45,45.00" ] || die "key 45 (outside every range) was deleted"

# ---- a composite key (date, int) ------------------------------------------------------------
KEYS=day,id COLS=day,id,n
vals=""
for d in 01 02 03 04; do for i in 1 2 3 4 5; do vals+="('2026-09-$d', $i, $i),"; done; done
setup day,id 'day DATE NOT NULL, id INT NOT NULL, n INT NULL' "${vals%,}"
ST >/dev/null 2>&1 || die "c: opening the snapshot"
BF --chunk-rows 6 >/dev/null 2>&1 || die "c: the snapshot's backfill"
ST >/dev/null 2>&1 && SA >/dev/null 2>&1 || die "c: silver after the snapshot"
[ "$(silver_rows)" = "$(source_rows)" ] || die "c: silver differs from the source after the snapshot"
sim_exec 2026-10-02T08:00:00 "DELETE FROM dbo.orders WHERE (day = '2026-09-02' AND id IN (2, 5)) OR (day = '2026-09-04' AND id = 1); UPDATE dbo.orders SET n = 99 WHERE id = 3"
sim_exec 2026-10-02T08:00:01 "INSERT INTO dbo.orders VALUES ('2026-09-05', 1, 1)" # the low water mark
sim_exec 2026-10-04T10:00:00 "UPDATE dbo.orders SET n = 7 WHERE day = '2026-09-01' AND id = 1"
sim_capture 2026-10-04T10:00:05
M sim cleanup "$DB" --retention 1d --at 2026-10-04T11:00:00 >/dev/null
ST >/dev/null 2>&1 && SA >/dev/null 2>&1 || die "c: silver after the gap"
[ "$(silver_rows)" != "$(source_rows)" ] || die "c: the gap damaged nothing: the test proves nothing"
cin() { part '$1 >= "2026-09-02" && ($1 < "2026-09-03" || ($1 == "2026-09-03" && $2 < 4))'; }
cout() { part '!($1 >= "2026-09-02" && ($1 < "2026-09-03" || ($1 == "2026-09-03" && $2 < 4)))'; }
damaged_outside=$(silver_rows | cout)
BF --range '["2026-09-02",1]..["2026-09-03",4]' --chunk-rows 3 >/dev/null 2>&1 || die "c: the range"
out=$(SA 2>&1) || die "c: silver after the range: $out"
grep -q "rebuilt" <<<"$out" && die "c: a partial backfill rebuilt silver: $out"
diff <(silver_rows | cin) <(source_rows | cin) >&2 || die "c: silver differs from the source inside the range: $out"
[ "$(silver_rows | cout)" = "$damaged_outside" ] || die "c: keys outside the range were touched"
silver_rows | grep -q '^2026-09-04,1,' || die "c: key (09-04, 1), outside the range, was deleted"
# ---- a text key in mixed case: the source's order (case-insensitive) is not byte order -----
KEYS=code COLS=code,n
vals=""
for c in a B c D e F g H; do for i in 1 2; do vals+="(N'$c$i', $i),"; done; done
setup code 'code NVARCHAR(10) NOT NULL, n INT NULL' "${vals%,}"
ST >/dev/null 2>&1 || die "t: opening the snapshot"
BF --chunk-rows 5 >/dev/null 2>&1 || die "t: the snapshot's backfill"
ST >/dev/null 2>&1 && SA >/dev/null 2>&1 || die "t: silver after the snapshot"
[ "$(silver_rows)" = "$(source_rows)" ] || die "t: silver differs from the source after the snapshot"
sim_exec 2026-10-02T08:00:00 "DELETE FROM dbo.orders WHERE code IN (N'c2', N'e1', N'B2', N'g1'); UPDATE dbo.orders SET n = 9 WHERE code IN (N'D1', N'H2')"
sim_exec 2026-10-02T08:00:01 "INSERT INTO dbo.orders VALUES (N'z1', 1)" # the low water mark
sim_exec 2026-10-04T10:00:00 "UPDATE dbo.orders SET n = 7 WHERE code = N'a1'"
sim_capture 2026-10-04T10:00:05
M sim cleanup "$DB" --retention 1d --at 2026-10-04T11:00:00 >/dev/null
ST >/dev/null 2>&1 && SA >/dev/null 2>&1 || die "t: silver after the gap"
# [c1, F1) holds c1 c2 D1 D2 e1 e2 in the source's order (in byte order it holds nothing)
tin() { grep -iE '^(c|d|e)[12],'; }
tout() { grep -viE '^(c|d|e)[12],'; }
damaged_outside=$(silver_rows | tout)
BF --range '"c1".."F1"' --chunk-rows 2 >/dev/null 2>&1 || die "t: the range"
out=$(SA 2>&1) || die "t: silver after the range: $out"
diff <(silver_rows | tin) <(source_rows | tin) >&2 || die "t: silver differs from the source inside the range: $out"
[ "$(silver_rows | tout)" = "$damaged_outside" ] || die "t: keys outside the range were touched"
silver_rows | grep -q '^B2,' || die "t: key B2, outside the range, was deleted"
echo ok
