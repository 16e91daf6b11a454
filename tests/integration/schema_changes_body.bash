# tests/integration/schema_changes_body.bash: the schema-change history of
# stream_schema_changes.sh (sim:) and odbc_schema_changes.sh (odbc: over sim serve), sourced
# after stream_lib.bash by both; start_source sets STREAM_SRC once the database exists.
SCHECK="node $MCDC_SRC/tests/integration/silver_check.mjs"
NODE_DIR=$MCDC_SRC/tests/node
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, qty INT NULL, amount DECIMAL(10,2) NULL, code VARCHAR(10) NULL' >/dev/null
sim_capture 2026-10-01T13:59:30
start_source

run() { # run POLICY: one stream run with silver; prints its exit code
  local rc=0
  M stream --source "$STREAM_SRC" --capture-instance dbo_orders --target bronze.s --app-id s \
    --checkpoint "$T/ck/s" --facts ops.facts --schema-change "$1" --control ops.control \
    --silver silver.s >"$T/out" 2>"$T/err" || rc=$?
  echo $rc
}
version() { M table info "$1" --format json | sed -n 's/.*"version":\([0-9]*\).*/\1/p'; }
# project JSON lines to the columns not listed
drop_cols() {
  node -e 'const drop = process.argv[1].split(",");
    for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter((x) => x)) {
      const r = JSON.parse(l); for (const c of drop) delete r[c]; console.log(JSON.stringify(r)); }' "$1"
}
# check STEP SRC_DROP SILVER_DROP: bronze = change table, facts = bronze, silver = source
check() {
  check_bronze bronze.s ops.facts s
  M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl | drop_cols "$2" > "$T/src.jsonl"
  cat_table silver.s /dev/stdout | drop_cols "$3" > "$T/silver.jsonl"
  $SCHECK silver-vs-source "$T/silver.jsonl" "$T/src.jsonl" >/dev/null || die "$1: silver differs from the source"
  M table cat bronze.s --format jsonl > "$T/ours.raw"
  node "$NODE_DIR/delta_replay.mjs" "$MSSQL_CDC_WAREHOUSE/bronze/s" "$T/ours.raw" "$T/ours.jsonl" "$T/theirs.jsonl"
  node "$NODE_DIR/jsonl_compare.mjs" "$T/ours.jsonl" "$T/theirs.jsonl" >/dev/null || die "$1: the independent reader reads bronze differently"
}
n_events() { M table cat ops.facts --format jsonl | grep -c '"event":"schema_change"' || true; }
# ddl STEP AT 'DDL' 'DML': the DDL, then changes after it, captured
ddl() {
  M sim ddl "$DB" --at "$2" "$3" >/dev/null
  sim_exec "${2%:*}:20" "$4"
  sim_capture "${2%:*}:40"
}
# refused STEP POLICY: exit 5 and nothing written
silver_row() { M finalization show --control ops.control --table silver.s --format json; }
refused() {
  local v0 v1 rc s0
  v0=$(version bronze.s)
  s0=$(silver_row)
  rc=$(run "$2")
  [ "$rc" = 5 ] || die "$1 under $2: exit $rc, expected 5: $(cat "$T/err")"
  v1=$(version bronze.s)
  [ "$v0" = "$v1" ] || die "$1 under $2: bronze moved from version $v0 to $v1"
  [ "$s0" = "$(silver_row)" ] || die "$1 under $2: silver's verdict moved: $s0 -> $(silver_row)"
  grep -q "^hint: " "$T/err" || die "$1 under $2: no hint: $(cat "$T/err")"
}
goes_on() { # goes_on STEP EVENTS_EXPECTED SRC_DROP SILVER_DROP
  local rc
  rc=$(run classify)
  [ "$rc" = 0 ] || die "$1 under classify: exit $rc: $(cat "$T/err")"
  [ "$(n_events)" = "$2" ] || die "$1: $(n_events) schema_change rows, expected $2"
  check "$1" "$3" "$4"
}

sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'Ada', 5, 12.50, '11'), (2, N'Bo', 7, 3.00, '22')"
sim_capture 2026-10-01T14:00:30
[ "$(run classify)" = 0 ] || die "first run: $(cat "$T/err")"
check start "" ""

# ADD COLUMN: not captured; the event says so and names the switch procedure
ddl add 2026-10-01T14:01:00 "ALTER TABLE dbo.orders ADD note NVARCHAR(20) NULL" \
  "INSERT INTO dbo.orders VALUES (3, N'Cy', 1, 1.00, '33', N'x'); UPDATE dbo.orders SET note = N'y' WHERE order_id = 1"
refused add fail
grep -q "schema-change classify" "$T/err" || die "add under fail: the hint does not name classify"
goes_on add 1 note ""
M table cat ops.facts --format jsonl | grep '"event":"schema_change"' | grep -q 'column note is not captured by dbo_orders.*switch_capture_instance.sql' \
  || die "add: the event does not say the column is not captured"

# DROP COLUMN: still captured, NULL from then on; bronze and silver keep it
ddl drop 2026-10-01T14:02:00 "ALTER TABLE dbo.orders DROP COLUMN customer" \
  "INSERT INTO dbo.orders VALUES (4, 2, 4.00, '44', N'z'); UPDATE dbo.orders SET qty = 9 WHERE order_id = 2"
refused drop fail
goes_on drop 2 note customer
M table cat silver.s --format jsonl | grep '"order_id":4' | grep -q '"customer":null' || die "drop: silver's new row has a customer"

# ALTER COLUMN int -> bigint: exit 5 until bronze may widen, then bronze widens
ddl int 2026-10-01T14:03:00 "ALTER TABLE dbo.orders ALTER COLUMN qty BIGINT NULL" \
  "INSERT INTO dbo.orders VALUES (5, 5000000000, 5.00, '55', NULL)"
refused int fail
refused int classify
grep -q "table set-property bronze.s delta.enableTypeWidening=true" "$T/err" || die "int: the hint does not give the command: $(cat "$T/err")"
M table set-property bronze.s delta.enableTypeWidening=true >/dev/null
refused int-enabled fail
goes_on int 3 note customer
M table info bronze.s --format json | grep -q typeWidening || die "int: bronze lacks the typeWidening feature"
cat "$MSSQL_CDC_WAREHOUSE"/bronze/s/_delta_log/*.json | grep -q '\\"qty\\",\\"type\\":\\"long\\".*delta.typeChanges.*fromType.*integer.*toType.*long' \
  || die "int: bronze's schema does not record the widening"
M table cat silver.s --format jsonl | grep -q '"qty":5000000000' || die "int: silver lacks the wide value"

# ALTER COLUMN decimal(10,2) -> decimal(18,2)
ddl dec 2026-10-01T14:04:00 "ALTER TABLE dbo.orders ALTER COLUMN amount DECIMAL(18,2) NULL" \
  "INSERT INTO dbo.orders VALUES (6, 6, 1234567890123.45, '66', NULL)"
refused dec fail
goes_on dec 4 note customer
M table cat silver.s --format jsonl | grep -q '"amount":"1234567890123.45"' || die "dec: silver lacks the wide value"

# varchar -> int: the stream's string cannot hold it: exit 5 before reading, both policies
ddl narrow 2026-10-01T14:05:00 "ALTER TABLE dbo.orders ALTER COLUMN code INT NULL" \
  "INSERT INTO dbo.orders VALUES (7, 7, 7.00, 77, NULL)"
n_ck=$(ls "$T/ck/s/offsets" | wc -l)
refused narrow fail
refused narrow classify
grep -q "code is string in bronze.*integer" "$T/err" || die "narrow: the message does not name the column: $(cat "$T/err")"
grep -q "new --target" "$T/err" || die "narrow: the hint does not say what to do"
[ "$(ls "$T/ck/s/offsets" | wc -l)" = "$n_ck" ] || die "narrow: a batch was recorded"
[ "$(n_events)" = 4 ] || die "narrow: facts changed"

# each schema_change row is timed by the last commit at or before its DDL LSN (a DDL LSN is
# no commit's): min, max and end commit times all that commit's, never NULL
M table cat ops.facts --format csv --columns event,min_lsn,min_commit_ts,max_commit_ts,end_commit_ts \
  | grep '^schema_change,' > "$T/ddl_times"
[ "$(wc -l < "$T/ddl_times")" = 4 ] || die "ddl times: $(cat "$T/ddl_times")"
while IFS=, read -r _ lsn t1 t2 t3; do
  want=$(M sim query "$DB" "SELECT tran_end_time FROM cdc.lsn_time_mapping WHERE start_lsn <= X'${lsn#0x}' ORDER BY start_lsn DESC LIMIT 1" --format csv | tail -n 1)
  [ -n "$t1" ] && [ "$t1" = "$want" ] && [ "$t2" = "$want" ] && [ "$t3" = "$want" ] \
    || die "schema_change at $lsn: commit times $t1,$t2,$t3, expected $want"
done < "$T/ddl_times"

