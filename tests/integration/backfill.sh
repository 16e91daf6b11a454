# Chunked snapshots: `stream --bootstrap --bootstrap-mode chunked` opens one, `backfill`
# reads its chunks in waves beside the stream. Checks the exact facts rows (open, plan,
# one per chunk, the closing bootstrap row) and bronze rows (every key once, stamped with
# its wave's LSN, _snapshot = S, _chunk), the exit codes (0 complete, also on a rerun; 1
# chunks left; 2 no snapshot or bad usage), --status, an integer key (grid plan) and a
# composite key of a string, a date and a uniqueidentifier (keyset plan), a kill -9 at
# every step of a wave (the rerun resumes without reading a chunk twice into bronze), and
# silver: held while the snapshot is open, then equal to the source table after deletes,
# updates and inserts before and after each chunk's read.
source "$MCDC_SRC/tests/integration/stream_lib.bash"

BF() { M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 --facts ops.facts "$@"; }
ST() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --checkpoint "$T/ck" --facts ops.facts "$@"; }
facts_rows() { # event, app_id, rows, min_lsn, max_lsn, detail of the snapshot rows, sorted
  M table cat ops.facts --format csv --columns event,app_id,rows,min_lsn,max_lsn,detail |
    grep -E '^(snapshot_|bootstrap)' | sort
}
bronze_snap() { # the snapshot rows of bronze, sorted
  M table cat bronze.o --format csv --columns _operation,_start_lsn,_snapshot,_chunk,order_id,customer |
    grep '^0,' | sort -t, -k5n
}

setup_int() {
  rm -rf "$T/lake" "$T/ck" "$DB"
  M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
    --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null
  local vals i
  vals=$(for i in $(seq 1 25); do printf "(%d, N'c%d')," $((i * 3)) "$i"; done)
  sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
  sim_capture 2026-10-01T14:00:30
}

S=0x00E31CC6D40C5800001B   # the insert's commit: max_lsn when the snapshot is opened
L=0x00E31CC6D79FDF000005   # the update's commit: max_lsn when the waves read
PLAN='{"snapshot":"'$S'","kind":"int","keys":["order_id"],"chunk_rows":10,"chunks":[[null,33],[33,63],[63,76]],"rows":25,"key_order":["value"]}'
expect_facts() {
  cat <<EOT | sort
bootstrap,o1,24,$S,$S,"{""snapshot"":""$S"",""chunks"":3,""rows"":24,""last_lsn"":""$L"",""consistent_lsn"":""$L""}"
snapshot_chunk,o1,10,$L,$L,"{""snapshot"":""$S"",""chunk"":0,""wave"":0,""lo"":null,""hi"":33,""last"":false,""consistent_lsn"":""$L""}"
snapshot_chunk,o1,10,$L,$L,"{""snapshot"":""$S"",""chunk"":1,""wave"":$1,""lo"":33,""hi"":63,""last"":false,""consistent_lsn"":""$L""}"
snapshot_chunk,o1,4,$L,$L,"{""snapshot"":""$S"",""chunk"":2,""wave"":$2,""lo"":63,""hi"":76,""last"":true,""consistent_lsn"":""$L""}"
snapshot_open,o1,0,$S,$S,"{""mode"":""chunked"",""kind"":""bootstrap"",""generation"":0,""lost_from_ts"":null,""lost_to_ts"":null,""keys"":[""order_id""],""plan"":{""kind"":""int"",""lo"":3,""hi"":75,""rows"":25}}"
snapshot_plan,o1,0,$S,$S,"${PLAN//\"/\"\"}"
EOT
}
expect_bronze() { # keys 3..75 step 3 without 72 (deleted before the waves), 3 updated
  local i k c
  for i in $(seq 1 25); do
    k=$((i * 3)); [ $k = 72 ] && continue
    c=0; [ $k -ge 33 ] && c=1; [ $k -ge 63 ] && c=2
    if [ $k = 3 ]; then echo "0,$L,$S,$c,$k,x"; else echo "0,$L,$S,$c,$k,c$i"; fi
  done
}
changes_after_open() { # an update and a delete after S, and a key above MAX
  sim_exec 2026-10-01T14:01:00 "UPDATE dbo.orders SET customer = N'x' WHERE order_id = 3; DELETE FROM dbo.orders WHERE order_id = 72; INSERT INTO dbo.orders VALUES (100, N'new')"
  sim_capture 2026-10-01T14:01:30
}

# ---- usage errors change nothing ------------------------------------------------------------
setup_int
set +e
out=$(BF 2>&1); rc=$?
set -e
[ $rc = 2 ] || die "backfill without an open snapshot: exit $rc, want 2"
grep -q "no chunked snapshot was ever opened" <<<"$out" || die "no-open message: $out"
grep -q "bootstrap-mode chunked" <<<"$out" || die "no-open hint: $out"
[ ! -e "$T/lake/bronze/o" ] || die "a refused backfill created bronze"
for bad in "--chunk-rows 0" "--max-waves -1" "--max-seconds x" "--target-wave-seconds -2"; do
  set +e; out=$(BF $bad 2>&1); rc=$?; set -e
  [ $rc = 2 ] || die "backfill $bad: exit $rc, want 2"
done
set +e; out=$(M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q -- "--facts is required" <<<"$out" || die "backfill without --facts: $rc $out"
set +e; out=$(ST --bootstrap --bootstrap-mode chunked --facts "" 2>&1); rc=$?; set -e
set +e; out=$(M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
  --checkpoint "$T/ck" --bootstrap --bootstrap-mode chunked 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "needs --facts" <<<"$out" || die "chunked without --facts: $rc $out"
set +e; out=$(ST --bootstrap-mode chunked 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "needs --bootstrap" <<<"$out" || die "--bootstrap-mode alone: $rc $out"
set +e; out=$(ST --bootstrap --bootstrap-mode half 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "expected full or chunked" <<<"$out" || die "--bootstrap-mode half: $rc $out"
[ ! -e "$T/ck" ] && [ ! -e "$T/lake" ] || die "a refused command wrote something"

# ---- open, stream, backfill in waves ---------------------------------------------------------
ST --bootstrap --bootstrap-mode chunked >/dev/null 2>&1
ST --bootstrap --bootstrap-mode chunked >/dev/null 2>&1 # opens nothing new
[ "$(facts_rows | grep -c '^snapshot_open,')" = 1 ] || die "two snapshot_open rows"
# a full bootstrap is refused while the chunked one is open (the checkpoint has no batch yet)
set +e; out=$(ST --bootstrap 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "a chunked snapshot at $S is open" <<<"$out" || die "full while chunked open: $rc $out"
changes_after_open
ST --bootstrap --bootstrap-mode chunked >/dev/null 2>&1 # streams the changes after S
# --min-headroom: the stream's newest batch has 0.03 h of headroom, less its age: paused
# until --max-seconds is spent, no wave read
set +e; out=$(BF --chunk-rows 10 --min-headroom 1h --max-seconds 1 2>"$T/err"); rc=$?; set -e
[ $rc = 1 ] && grep -q "0 waves, 0 chunks, 0 rows this run" <<<"$out" || die "--min-headroom: $rc $out"
grep -q "paused: the stream's retention headroom is -\?[0-9]*s, below --min-headroom 3600s" "$T/err" ||
  die "--min-headroom message: $(cat "$T/err")"
set +e; out=$(BF --min-headroom 0s 2>&1); rc=$?; set -e
[ $rc = 2 ] || die "--min-headroom 0s: exit $rc, want 2"
set +e; out=$(BF --chunk-rows 10 --max-waves 1 --target-wave-seconds 0 2>"$T/err"); rc=$?; set -e
[ $rc = 1 ] || die "backfill --max-waves 1: exit $rc, want 1 (chunks left)"
grep -q "^backfill: wave 0: 1/3 chunks, 10 rows of about 25, " "$T/err" || die "progress line: $(cat "$T/err")"
set +e; out=$(BF --status); rc=$?; set -e
[ $rc = 1 ] || die "--status while open: exit $rc, want 1"
[ "$out" = "snapshot $S (generation 0, app_id o1): open, 1/3 chunks, 10 rows of about 25, 1 waves" ] ||
  die "--status: $out"
set +e; out=$(BF --progress "$T/no/such/dir/p.jsonl" 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q -- "--progress $T/no/such/dir/p.jsonl: cannot be opened" <<<"$out" || die "bad --progress: $rc $out"
BF --target-wave-seconds 0 --progress "$T/progress.jsonl" >/dev/null 2>"$T/err" || die "backfill to the end failed: $(cat "$T/err")"
[ "$(wc -l <"$T/progress.jsonl")" = 2 ] || die "--progress: $(cat "$T/progress.jsonl")"
grep -q '^{"event":"wave","snapshot":"'$S'","wave":2,"chunks":3,"chunks_total":3,"rows":24,"rows_estimate":25,"rows_per_second":' "$T/progress.jsonl" ||
  die "--progress line: $(cat "$T/progress.jsonl")"
grep -q "ignored" "$T/err" && die "no --chunk-rows given, yet a warning: $(cat "$T/err")"
diff <(expect_facts 1 2) <(facts_rows) || die "facts rows differ"
diff <(expect_bronze) <(bronze_snap) || die "bronze snapshot rows differ"
# a rerun after completion reads and writes nothing
v=$(M table info bronze.o --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
out=$(BF --chunk-rows 5) || die "rerun after completion: exit $?"
grep -q "0 waves, 0 chunks, 0 rows this run; snapshot $S (generation 0, app_id o1): complete, 3/3 chunks, 24 rows of about 25, 3 waves" <<<"$out" || die "rerun: $out"
v2=$(M table info bronze.o --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
[ "$v" = "$v2" ] || die "a rerun after completion wrote bronze ($v -> $v2)"
out=$(BF --status) || die "--status after completion: exit $?"
[ "$out" = "snapshot $S (generation 0, app_id o1): complete, 3/3 chunks, 24 rows of about 25, 3 waves" ] || die "--status: $out"
# the stream's own changes are in bronze beside the snapshot rows
[ "$(M table cat bronze.o --format csv --columns _operation,order_id | grep -c '^[1-4],')" = 4 ] ||
  die "the stream's changes after S are not in bronze"

# ---- a stale max_lsn below S (a readable secondary behind the primary) is refused ------------
setup_int
changes_after_open
ST --bootstrap --bootstrap-mode chunked >/dev/null 2>&1 # S is now the changes' commit, $L
cp "$DB" "$T/secondary.sqlite"
M sim rewind "$T/secondary.sqlite" --to "$S" >/dev/null
set +e
out=$(M backfill --source "sim:$T/secondary.sqlite" --capture-instance dbo_orders --target bronze.o \
        --app-id o1 --facts ops.facts 2>&1); rc=$?
set -e
[ $rc = 3 ] || die "stale max_lsn: exit $rc, want 3: $out"
grep -q "max_lsn $S is below the snapshot's LSN $L" <<<"$out" || die "stale max_lsn message: $out"
[ ! -e "$T/lake/bronze/o/_delta_log" ] || die "a refused wave wrote bronze"
# --max-seconds: no wave starts after the limit (exit 1)
set +e; out=$(BF --max-seconds 0.000001 2>/dev/null); rc=$?; set -e
[ $rc = 1 ] && grep -q "0 waves, 0 chunks, 0 rows this run" <<<"$out" || die "--max-seconds: $rc $out"

# ---- kill -9 at every step of a wave: the rerun resumes where it stopped ---------------------
for fp in backfill.after_plan backfill.mid_read@2 backfill.read_ahead backfill.read_ahead@2 backfill.after_data_files@2 \
          backfill.after_bronze@2 backfill.after_chunk_facts@2 backfill.after_completion; do
  setup_int
  ST --bootstrap --bootstrap-mode chunked >/dev/null 2>&1
  changes_after_open
  ST >/dev/null 2>&1
  set +e
  MCDC_FAILPOINT=$fp BF --chunk-rows 10 --target-wave-seconds 0 >/dev/null 2>&1; rc=$?
  set -e
  [ $rc = 137 ] || die "$fp: the backfill was not killed (exit $rc)"
  BF --target-wave-seconds 0 >/dev/null 2>"$T/err" || die "$fp: the rerun failed: $(cat "$T/err")"
  diff <(expect_facts 1 2) <(facts_rows) || die "$fp: facts rows differ after the rerun"
  diff <(expect_bronze) <(bronze_snap) || die "$fp: bronze snapshot rows differ after the rerun"
done

# ---- silver: held while the snapshot is open, then equal to the source ------------------------
SA() { M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys order_id \
         --control ops.control --facts ops.facts "$@"; }
setup_int
ST --bootstrap --bootstrap-mode chunked >/dev/null 2>&1
set +e; BF --chunk-rows 10 --max-waves 1 --target-wave-seconds 0 >/dev/null 2>&1; rc=$?; set -e
[ $rc = 1 ] || die "silver case: first wave exit $rc"
# after chunk 0 was read: a delete and an update of its keys, a new key inside its range;
# before chunks 1 and 2 are read: an update (45) and a delete (66) of theirs, and a key
# inserted and deleted again
sim_exec 2026-10-01T14:02:00 "DELETE FROM dbo.orders WHERE order_id = 6; UPDATE dbo.orders SET customer = N'u' WHERE order_id = 9; INSERT INTO dbo.orders VALUES (4, N'four'), (200, N'late')"
sim_exec 2026-10-01T14:02:10 "UPDATE dbo.orders SET customer = N'v' WHERE order_id = 45; DELETE FROM dbo.orders WHERE order_id = 66; INSERT INTO dbo.orders VALUES (50, N'gone')"
sim_exec 2026-10-01T14:02:20 "DELETE FROM dbo.orders WHERE order_id = 50"
sim_capture 2026-10-01T14:02:30
ST >/dev/null 2>&1
out=$(SA) || die "silver apply while open: exit $?"
# the waves so far are applied as they arrive (the verdict held): see silver_waves.sh
grep -q "^applied silver.o from bronze.o version [0-9]* while its chunked snapshot is open .*; the verdict is held until its backfill completes; applied_lsn 0x[0-9A-F]*, finalized_until none" <<<"$out" ||
  die "silver while open: $out"
set +e; BF --max-waves 1 >/dev/null 2>&1; rc=$?; set -e
[ $rc = 1 ] || die "silver case: second wave exit $rc"
sim_exec 2026-10-01T14:03:00 "DELETE FROM dbo.orders WHERE order_id = 36; UPDATE dbo.orders SET customer = N'w' WHERE order_id = 39"
sim_capture 2026-10-01T14:03:30
ST >/dev/null 2>&1
BF >/dev/null 2>&1 || die "silver case: last wave failed"
sim_exec 2026-10-01T14:04:00 "DELETE FROM dbo.orders WHERE order_id = 75; INSERT INTO dbo.orders VALUES (6, N'six again')"
sim_capture 2026-10-01T14:04:30
ST >/dev/null 2>&1
out=$(SA) || die "silver apply after completion: exit $?"
grep -q "^rebuilt silver.o from bronze.o" <<<"$out" || die "silver after completion: $out"
diff <(M sim query "$DB" 'SELECT order_id, customer FROM dbo.orders' --format csv | tail -n +2 | sort -t, -k1n) \
     <(M table cat silver.o --format csv --columns order_id,customer | tail -n +2 | sort -t, -k1n) ||
  die "silver differs from the source table"
[ "$(bronze_snap | wc -l)" = "$(sort -u -t, -k5,5 <(bronze_snap) | wc -l)" ] || die "a key's snapshot row is in bronze twice"

# ---- a composite key: string, date, uniqueidentifier (keyset bounds) -------------------------
rm -rf "$T/lake" "$T/ck" "$DB"
M sim init "$DB" --table dbo.orders --keys region,day,id --at 2026-10-01T13:59:00 \
  --schema 'region NVARCHAR(10) NOT NULL, day DATE NOT NULL, id UNIQUEIDENTIFIER NOT NULL, n INT NULL' >/dev/null
vals=""
for r in east north west; do for d in 01 02; do for g in 1 2 3; do
  vals+="(N'$r', '2026-09-$d', '0000000$g-0000-0000-0000-00000000000$g', $g),"
done; done; done
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T14:00:30
ST --bootstrap --bootstrap-mode chunked >/dev/null 2>&1
BF --chunk-rows 7 --target-wave-seconds 0 >/dev/null 2>&1 || die "composite backfill failed"
plan=$(M table cat ops.facts --format csv --columns event,detail | grep '^snapshot_plan,')
grep -qF '""kind"":""keyset"",""keys"":[""region"",""day"",""id""],""chunk_rows"":7,""chunks"":[[null,[""north"",""2026-09-01"",""00000002-0000-0000-0000-000000000002""]],[[""north"",""2026-09-01"",""00000002-0000-0000-0000-000000000002""],[""west"",""2026-09-01"",""00000003-0000-0000-0000-000000000003""]],[[""west"",""2026-09-01"",""00000003-0000-0000-0000-000000000003""],null]],""rows"":18,""key_order"":[""text_ci"",""value"",""guid""]}' <<<"$plan" ||
  die "composite plan: $plan"
got=$(M table cat bronze.o --format csv --columns _operation,_chunk,region,day,id | grep '^0,' | sort)
want=$(M sim query "$DB" 'SELECT region, day, id FROM dbo.orders' --format csv | tail -n +2 | sort)
[ "$(cut -d, -f3- <<<"$got" | sort)" = "$want" ] || die "composite: bronze is not the table, each key once"
[ "$(cut -d, -f2 <<<"$got" | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')" = "7 7 4 " ] ||
  die "composite: chunk sizes $(cut -d, -f2 <<<"$got" | sort | uniq -c)"
echo ok
