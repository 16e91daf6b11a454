# Backfill over the SQL Server source: `backfill --source odbc:` (the key_at and key_count
# statements through unixODBC + FreeTDS against `mssql-cdc sim serve`) plans the same chunks
# and writes the same bronze snapshot rows and facts as `backfill --source sim:` on the same
# table: an integer key (grid plan: key_count per cell), a composite key of a string, a date
# and a uniqueidentifier (keyset plan: key_at's OFFSET n ROWS), and one-row chunks over a bigint key with gaps.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

# bf KIND CHUNK_ROWS: open a chunked snapshot and backfill it through KIND into $T/lake_KIND
bf() {
  local spec="sim:$DB"
  [ "$1" = odbc ] && spec=$SRC
  M --warehouse "$T/lake_$1" stream --source "$spec" --capture-instance dbo_orders --target bronze.o --app-id o1 \
    --checkpoint "$T/ck_$1" --facts ops.facts --bootstrap --bootstrap-mode chunked >/dev/null 2>"$T/err" ||
    die "$1: stream --bootstrap-mode chunked: $(cat "$T/err")"
  M --warehouse "$T/lake_$1" backfill --source "$spec" --capture-instance dbo_orders --target bronze.o --app-id o1 \
    --facts ops.facts --chunk-rows "$2" --target-wave-seconds 0 >"$T/out_$1" 2>"$T/err" ||
    die "$1: backfill exit $?: $(cat "$T/err")"
}
facts_of() { # the simulator says how it orders its keys (the plan's key_order), SQL Server not yet
  M --warehouse "$T/lake_$1" table cat ops.facts --format csv --columns event,app_id,rows,min_lsn,max_lsn,detail |
    grep -E '^(snapshot_|bootstrap)' | sed 's/,""key_order"":\[[^]]*\]//' | sort
}
bronze_of() {
  M --warehouse "$T/lake_$1" table cat bronze.o --format csv --columns "_operation,_start_lsn,_snapshot,_chunk,$2" |
    grep '^0,' | sort
}
compare() { # KEY COLUMNS: both runs wrote the same facts and bronze snapshot rows
  diff <(facts_of sim) <(facts_of odbc) || die "$1: the facts differ between sim: and odbc:"
  diff <(bronze_of sim "$2") <(bronze_of odbc "$2") || die "$1: the bronze snapshot rows differ"
  [ -n "$(bronze_of odbc "$2")" ] || die "$1: no snapshot rows"
  diff <(sed 's/[0-9.]* s\b.*//' "$T/out_sim") <(sed 's/[0-9.]* s\b.*//' "$T/out_odbc") >/dev/null ||
    die "$1: the summaries differ: $(cat "$T/out_sim") / $(cat "$T/out_odbc")"
}
fresh() { serve_stop; rm -rf "$T/lake_sim" "$T/lake_odbc" "$T/ck_sim" "$T/ck_odbc" "$DB"; }

# ---- an integer key: the grid plan (key_at for MIN and MAX, key_count per cell) --------------
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, note NVARCHAR(MAX) NULL' >/dev/null
vals=$(for i in $(seq 1 25); do printf "(%d, N'c%d', N'n%d')," $((i * 3)) "$i" "$i"; done)
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T14:00:30
serve_start
bf sim 10
bf odbc 10
compare int order_id,customer,note
# --isolation and --lock-timeout reach SQL Server as SET statements around each read; a
# contradiction with the connection string, or a lock timeout on the simulator, is refused
mkdir -p "$T/rec"
M --warehouse "$T/lake_iso" stream --source "$SRC" --capture-instance dbo_orders --target bronze.o --app-id o1 \
  --checkpoint "$T/ck_iso" --facts ops.facts --bootstrap --bootstrap-mode chunked >/dev/null 2>&1 || die "iso: open"
for bad in "--isolation dirty" "--lock-timeout soon"; do
  # shellcheck disable=SC2086
  rc=0; M --warehouse "$T/lake_iso" backfill --source "$SRC" --capture-instance dbo_orders --target bronze.o --app-id o1 \
    --facts ops.facts $bad >/dev/null 2>"$T/err" || rc=$?
  [ $rc = 2 ] || die "backfill $bad: exit $rc: $(cat "$T/err")"
done
rc=0; M --warehouse "$T/lake_iso" backfill --source "$SRC;isolationLevel=readCommitted" --capture-instance dbo_orders \
  --target bronze.o --app-id o1 --facts ops.facts --isolation snapshot >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "isolationLevel=readCommitted in the connection string, but snapshot asked for" "$T/err" ||
  die "isolation contradiction: $rc $(cat "$T/err")"
rc=0; M --warehouse "$T/lake_iso" backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.o \
  --app-id o1 --facts ops.facts --lock-timeout 2s >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "a lock timeout cannot apply to the simulator: its reads take no locks" "$T/err" ||
  die "sim --lock-timeout: $rc $(cat "$T/err")"
[ ! -e "$T/lake_iso/bronze/o/_delta_log" ] || die "a refused backfill wrote bronze"
M --warehouse "$T/lake_iso" backfill --source "$SRC;record=$T/rec" --capture-instance dbo_orders --target bronze.o \
  --app-id o1 --facts ops.facts --chunk-rows 10 --target-wave-seconds 0 --isolation snapshot --lock-timeout 2s \
  >/dev/null 2>"$T/err" || die "backfill --isolation snapshot: $(cat "$T/err")"
sql=$(node -e '
for (const l of require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")) {
  const e = JSON.parse(l);
  const t = e.text || "";
  for (const m of t.matchAll(/SET (TRANSACTION ISOLATION LEVEL [A-Z ]+|LOCK_TIMEOUT -?[0-9]+)/g)) console.log(m[0]);
}' "$T/rec/transcript.jsonl" | sort | uniq -c | awk '{$1=$1; print}')
# every read of the source table (planning's key_at and key_count, the 3 chunks) is wrapped:
# the same number of each, in pairs
n=$(head -1 <<<"$sql" | cut -d' ' -f1)
[ "$n" -ge 3 ] && [ "$sql" = "$(printf "$n SET LOCK_TIMEOUT -1\n$n SET LOCK_TIMEOUT 2000\n$n SET TRANSACTION ISOLATION LEVEL READ COMMITTED\n$n SET TRANSACTION ISOLATION LEVEL SNAPSHOT")" ] ||
  die "the reads' SET statements: $sql"
M --warehouse "$T/lake_iso" backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.o \
  --app-id o1 --facts ops.facts --isolation read-committed --status >/dev/null || die "sim --isolation read-committed"
grep -q '^snapshot_plan,.*""kind"":""int""' <<<"$(M --warehouse "$T/lake_odbc" table cat ops.facts --format csv --columns event,detail)" ||
  die "int: not a grid plan: $(facts_of odbc)"
[ "$(bronze_of odbc order_id | wc -l)" = 25 ] || die "int: $(bronze_of odbc order_id | wc -l) snapshot rows, want 25"

# ---- a composite key: string, date, uniqueidentifier (keyset plan) ---------------------------
fresh
M sim init "$DB" --table dbo.orders --keys region,day,id --at 2026-10-01T13:59:00 \
  --schema 'region NVARCHAR(10) NOT NULL, day DATE NOT NULL, id UNIQUEIDENTIFIER NOT NULL, n INT NULL' >/dev/null
vals=""
for r in east north west; do for d in 01 02; do for g in 1 2 3; do
  vals+="(N'$r', '2026-09-$d', '0000000$g-0000-0000-0000-00000000000$g', $g),"
done; done; done
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T14:00:30
serve_start
bf sim 7
bf odbc 7
compare composite region,day,id,n
M --warehouse "$T/lake_odbc" table cat ops.facts --format csv --columns event,detail |
  grep -qF '""kind"":""keyset"",""keys"":[""region"",""day"",""id""],""chunk_rows"":7,""chunks"":[[null,[""north"",""2026-09-01"",""00000002-0000-0000-0000-000000000002""]],' ||
  die "composite: odbc plan: $(facts_of odbc)"

# ---- chunks of one row over a bigint key with gaps and negatives ------------------------------
fresh
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id BIGINT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (-5, N'a'), (0, N'b'), (7, N'c'), (1000000, N'd')"
sim_capture 2026-10-01T14:00:30
serve_start
bf sim 1
bf odbc 1
compare gaps order_id,customer
echo ok
