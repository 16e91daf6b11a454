# Partial backfills: `backfill --range LO..HI` after a complete snapshot reads only
# LO <= key < HI again into bronze (operation 0, _snapshot NULL, _chunk, stamped L), in
# chunks that never reach outside the range, writes snapshot_range_chunk rows and one
# snapshot_range row, and never a bootstrap or resnapshot row: the stream's snapshot (facts,
# the control table's snapshot_lsn) stays and silver is not rebuilt. An integer key and a
# composite key (string, date, uniqueidentifier); bad ranges and an open snapshot are refused
# (exit 2) before anything is written.
source "$MCDC_SRC/tests/integration/stream_lib.bash"

BF() { M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 --facts ops.facts "$@"; }
ST() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --checkpoint "$T/ck" --facts ops.facts --bootstrap --bootstrap-mode chunked "$@"; }
SA() { M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys "$1" \
         --control ops.control --facts ops.facts; }
events() { M table cat ops.facts --format csv --columns event | tail -n +2 | sort | uniq -c | awk '{print $2 "=" $1}' | tr '\n' ' '; }
version() { M table info "$1" --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))'; }
range_rows() { # the partial backfill's bronze rows: _snapshot NULL, _chunk set
  M table cat bronze.o --format csv --columns "_operation,_snapshot,_chunk,_start_lsn,$1" | tail -n +2 | grep "^0,,[0-9]"
}

# ---- an integer key ---------------------------------------------------------------------------
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null
vals=$(for i in $(seq 1 30); do printf "(%d, N'c%d')," "$i" "$i"; done)
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T14:00:30
ST >/dev/null 2>&1
# refused while the chunked snapshot is open: it reads every key anyway
set +e; out=$(BF --range 5..9 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "a snapshot at 0x[0-9A-F]* is open: a partial backfill repairs a complete one" <<<"$out" ||
  die "--range while open: $rc $out"
[ ! -e "$T/lake/bronze/o/_delta_log" ] || die "a refused --range wrote bronze"
BF --chunk-rows 10 --target-wave-seconds 0 >/dev/null 2>&1 || die "the backfill failed"
out=$(SA order_id) || die "silver apply: $out"
grep -q "^rebuilt silver.o" <<<"$out" || die "silver not built from the snapshot: $out"
sim_exec 2026-10-01T14:01:00 "UPDATE dbo.orders SET customer = N'u' WHERE order_id = 12; DELETE FROM dbo.orders WHERE order_id = 15"
sim_capture 2026-10-01T14:01:30
ST >/dev/null 2>&1
SA order_id >/dev/null
before_events=$(events)
snap_lsn() { M table cat ops.control --format jsonl | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{for(const l of s.trim().split("\n")){const r=JSON.parse(l);if(r.snapshot_lsn)console.log(r.table_name+"="+r.snapshot_lsn)}})'; }
S0=$(snap_lsn)
grep -q "^silver.o=0x" <<<"$S0" || die "no snapshot_lsn in the control table: $S0"
v0=$(version bronze.o)

# bad ranges change nothing (exit 2)
for bad in "5" "20..10" "7..7" "null..null" '"a"..9' '[1,2]..9' '{..9' "1..2 --status"; do
  # shellcheck disable=SC2086
  set +e; out=$(BF --range $bad 2>&1); rc=$?; set -e
  [ $rc = 2 ] || die "--range $bad: exit $rc, want 2: $out"
  grep -q "^mssql-cdc: error: " <<<"$out" || die "--range $bad: no error line: $out"
done
set +e; out=$(BF --range '"a"..9' 2>&1); set -e
grep -q 'does not fit the key \["order_id"\]' <<<"$out" || die "key type message: $out"
set +e; out=$(BF --range 20..10 2>&1); set -e
grep -q "empty (the range is LO <= key < HI)" <<<"$out" || die "empty range message: $out"
[ "$(version bronze.o)" = "$v0" ] || die "a refused --range wrote bronze"
[ "$(events)" = "$before_events" ] || die "a refused --range wrote facts: $(events)"

out=$(BF --range 10..20 --chunk-rows 4 --target-wave-seconds 0 2>"$T/err") || die "--range 10..20: exit $?: $(cat "$T/err")"
grep -q "^backfill bronze.o --range 10..20: 3 waves, 3/3 chunks, 9 rows at 0x[0-9A-F]*; complete (the stream's snapshot is unchanged)$" <<<"$out" ||
  die "--range summary: $out"
grep -q "^backfill: wave 2: 3/3 chunks, 9 rows of about 9, " "$T/err" || die "--range progress: $(cat "$T/err")"
# bronze: keys 10..19 read again (15 was deleted), the update's value, three chunks
[ "$(range_rows order_id,customer | cut -d, -f3,5,6 | sort -t, -k2n | tr '\n' ' ')" = \
  "0,10,c10 0,11,c11 0,12,u 0,13,c13 1,14,c14 1,16,c16 1,17,c17 1,18,c18 2,19,c19 " ] ||
  die "--range bronze rows: $(range_rows order_id,customer | tr "\n" " ")"
# facts: chunks inside [10, 20), the first at LO, the last at HI; one closing row; no bootstrap
chunks=$(M table cat ops.facts --format csv --columns event,rows,detail | grep '^snapshot_range_chunk,' |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const o=[];for(const l of s.trim().split("\n")){const d=JSON.parse(l.slice(l.indexOf(",\"")+1).replace(/^"|"$/g,"").replace(/""/g,"\""));o.push([d.chunk,d.lo,d.hi,d.last,JSON.stringify(d.range),typeof d.consistent_lsn].join(":"))}console.log(o.sort().join(" "))})')
[ "$chunks" = "0:10:14:false:[10,20]:string 1:14:19:false:[10,20]:string 2:19:20:true:[10,20]:string" ] ||
  die "snapshot_range_chunk rows: $chunks"
closing=$(M table cat ops.facts --format csv --columns event,rows,detail | grep '^snapshot_range,')
[ "$(wc -l <<<"$closing")" = 1 ] || die "snapshot_range rows: $closing"
grep -q '^snapshot_range,9,"{""range_id"":""[0-9a-f-]*"",""range"":\[10,20\],""keys"":\[""order_id""\],""chunks"":3,""rows"":9,""first_lsn"":' <<<"$closing" ||
  die "snapshot_range row: $closing"
after=$(events)
for e in bootstrap resnapshot snapshot_open snapshot_plan snapshot_chunk; do
  [ "$(grep -o "\b$e=[0-9]*" <<<"$before_events" || true)" = "$(grep -o "\b$e=[0-9]*" <<<"$after" || true)" ] ||
    die "--range wrote a $e row: $before_events -> $after"
done
# the snapshot is the one it was: --status, the control table, and silver applies no rebuild
out=$(BF --status) || die "--status after --range: exit $?"
grep -q "complete, 3/3 chunks, 30 rows of about 30, 3 waves" <<<"$out" || die "--status after --range: $out"
out=$(SA order_id) || die "silver apply after --range: $out"
grep -q "rebuilt" <<<"$out" && die "--range made silver rebuild: $out"
[ "$(snap_lsn)" = "$S0" ] || die "--range changed the snapshot_lsn: $S0 -> $(snap_lsn)"
diff <(M sim query "$DB" 'SELECT order_id, customer FROM dbo.orders' --format csv | tail -n +2 | sort -t, -k1n) \
     <(M table cat silver.o --format csv --columns order_id,customer | tail -n +2 | sort -t, -k1n) ||
  die "silver differs from the source after --range"
# an open end, and a second run at the same max_lsn is a run of its own (txns of its own)
out=$(BF --range 27..null --chunk-rows 100 --target-wave-seconds 0 2>/dev/null) || die "--range 27..null: $?"
grep -q "1 waves, 1/1 chunks, 4 rows" <<<"$out" || die "--range 27..null: $out"
out=$(BF --range 27..null --chunk-rows 100 2>/dev/null) || die "--range 27..null again: $?"
grep -q "1 waves, 1/1 chunks, 4 rows" <<<"$out" || die "--range 27..null again: $out"
[ "$(M table cat ops.facts --format csv --columns event | grep -c '^snapshot_range$')" = 3 ] || die "three partial runs, not three closing rows"
# --max-waves stops a partial backfill (exit 1)
set +e; out=$(BF --range null..10 --chunk-rows 3 --max-waves 1 --target-wave-seconds 0 2>/dev/null); rc=$?; set -e
[ $rc = 1 ] && grep -q "1 waves, 1/3 chunks, 3 rows at 0x[0-9A-F]*; stopped: chunks left" <<<"$out" || die "--range --max-waves: $rc $out"

# ---- a composite key: string, date, uniqueidentifier ---------------------------------------
rm -rf "$T/lake" "$T/ck" "$DB"
M sim init "$DB" --table dbo.orders --keys region,day,id --at 2026-10-01T13:59:00 \
  --schema 'region NVARCHAR(10) NOT NULL, day DATE NOT NULL, id UNIQUEIDENTIFIER NOT NULL, n INT NULL' >/dev/null
vals=""
for r in east north west; do for d in 01 02; do for g in 1 2 3; do
  vals+="(N'$r', '2026-09-$d', '0000000$g-0000-0000-0000-00000000000$g', $g),"
done; done; done
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T14:00:30
ST >/dev/null 2>&1
BF --chunk-rows 7 --target-wave-seconds 0 >/dev/null 2>&1 || die "composite backfill failed"
set +e; out=$(BF --range '"east"..["west","2026-09-01","00000002-0000-0000-0000-000000000002"]' 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "a key bound of 3 columns must be a list of 3 values" <<<"$out" || die "composite scalar bound: $rc $out"
LO='["east","2026-09-02","00000002-0000-0000-0000-000000000002"]'
HI='["west","2026-09-01","00000002-0000-0000-0000-000000000002"]'
out=$(BF --range "$LO..$HI" --chunk-rows 2 --target-wave-seconds 0 2>"$T/err") || die "composite --range: $(cat "$T/err")"
grep -q "5 waves, 5/5 chunks, 9 rows at 0x[0-9A-F]*; complete" <<<"$out" || die "composite --range: $out"
# east/09-02 ids 2 and 3, all of north, west/09-01 id 1: each once, chunks of 2, 2, 2, 2, 1
want=$( (for g in 2 3; do echo "east,2026-09-02,0000000$g-0000-0000-0000-00000000000$g"; done
         for d in 01 02; do for g in 1 2 3; do echo "north,2026-09-$d,0000000$g-0000-0000-0000-00000000000$g"; done; done
         echo "west,2026-09-01,00000001-0000-0000-0000-000000000001") | sort)
got=$(range_rows region,day,id | cut -d, -f5- | sort)
[ "$got" = "$want" ] || die "composite --range rows: $got"
[ "$(range_rows region,day,id | cut -d, -f3 | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')" = "2 2 2 2 1 " ] ||
  die "composite chunk sizes: $(range_rows region,day,id | cut -d, -f3 | sort | uniq -c)"
M table cat ops.facts --format csv --columns event,detail | grep '^snapshot_range_chunk,' | grep -qF '""chunk"":0,""wave"":0,""lo"":[""east"",""2026-09-02"",""00000002-0000-0000-0000-000000000002""]' ||
  die "composite: the first chunk does not start at LO"
M table cat ops.facts --format csv --columns event,detail | grep '^snapshot_range_chunk,' | grep -qF '""hi"":[""west"",""2026-09-01"",""00000002-0000-0000-0000-000000000002""],""last"":true' ||
  die "composite: the last chunk does not end at HI"
[ "$(M table cat ops.facts --format csv --columns event | grep -c '^bootstrap$')" = 1 ] || die "composite --range wrote a bootstrap row"
echo ok
