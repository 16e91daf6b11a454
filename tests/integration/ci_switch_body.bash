# tests/integration/ci_switch_body.bash: the capture-instance switch history of
# stream_ci_switch.sh (sim:) and odbc_ci_switch.sh (odbc: over sim serve), sourced after
# stream_lib.bash by both; start_source sets STREAM_SRC once the database exists.
SCHECK="node $MCDC_SRC/tests/integration/silver_check.mjs"
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, qty INT NULL' >/dev/null
sim_capture 2026-10-01T13:59:30
start_source
sw() {
  M stream --source "$STREAM_SRC" --capture-instance dbo_orders --target bronze.s --app-id s \
    --checkpoint "$T/ck/s" --facts ops.facts --control ops.control --silver silver.s "$@"
}

sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'Ada', 5), (2, N'Bo', 6)"
sim_capture 2026-10-01T14:00:05
sw >/dev/null || die "first run"
# finalization show --facts: which streams have switched (none yet; its newest batch 0)
fs() { M finalization show --control ops.control --table bronze.s --facts ops.facts --format jsonl; }
fs | grep -qF '"switched_from":null,"switched_to":null,"switched_at_lsn":null,"switched_in_batch":null,"last_batch":0}' \
  || die "finalization show --facts before the switch: $(fs)"

M sim ddl "$DB" --at 2026-10-01T14:00:30 "ALTER TABLE dbo.orders ADD note NVARCHAR(20) NULL" >/dev/null
sim_exec 2026-10-01T14:00:40 "INSERT INTO dbo.orders VALUES (3, N'Cy', 7, N'c')"
# in flight while the DBA enables: begun before, committed just before the enable
M sim exec "$DB" --begin-at 2026-10-01T14:00:50 --at 2026-10-01T14:00:59 \
  "UPDATE dbo.orders SET qty = 60, note = N'b' WHERE order_id = 2" >/dev/null
M sim enable "$DB" --table dbo.orders --capture-instance dbo_orders_v2 --at 2026-10-01T14:01:00 >/dev/null
sim_exec 2026-10-01T14:01:10 "UPDATE dbo.orders SET note = N'a' WHERE order_id = 1; INSERT INTO dbo.orders VALUES (4, N'Di', 8, N'd')"
sim_exec 2026-10-01T14:01:20 "DELETE FROM dbo.orders WHERE order_id = 3"
sim_capture 2026-10-01T14:01:30
S=$(M sim query "$DB" "SELECT start_lsn FROM cdc.change_tables WHERE capture_instance = 'dbo_orders_v2'" --format csv | tail -1)

# bronze = dbo_orders below S + dbo_orders_v2 from S, each change once
check_switch() {
  [ -n "${1:-}" ] || M sim query "$DB" 'SELECT * FROM cdc.dbo_orders_CT' --format jsonl > "$T/ct1.jsonl"
  M sim query "$DB" 'SELECT * FROM cdc.dbo_orders_v2_CT' --format jsonl > "$T/ct2.jsonl"
  node -e 'const fs = require("fs"), [a, b, S] = process.argv.slice(1);
    const rows = (f) => fs.readFileSync(f, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
    for (const r of rows(a)) if (r["__$start_lsn"] < S) console.log(JSON.stringify(r));
    for (const r of rows(b)) if (r["__$start_lsn"] >= S) console.log(JSON.stringify(r));' \
    "${1:-$T/ct1.jsonl}" "$T/ct2.jsonl" "$S" > "$T/ct.jsonl"
  cat_table bronze.s "$T/bronze.jsonl"
  $CHECK bronze-vs-ct "$T/ct.jsonl" "$T/bronze.jsonl" >/dev/null || die "$2: bronze is not v1 below S and v2 from S: $($CHECK bronze-vs-ct "$T/ct.jsonl" "$T/bronze.jsonl" 2>&1)"
  cat_table ops.facts "$T/facts.jsonl"
  $CHECK facts-vs-bronze "$T/facts.jsonl" "$T/bronze.jsonl" s >/dev/null || die "$2: facts differ from bronze"
  [ "$($CHECK count "$T/facts.jsonl" event=capture_instance_switched)" = 1 ] || die "$2: not one switch row"
  M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl > "$T/src.jsonl"
  cat_table silver.s "$T/silver.jsonl"
  $SCHECK silver-vs-source "$T/silver.jsonl" "$T/src.jsonl" >/dev/null 2>&1 ||
    node -e 'const fs = require("fs");
      const rows = (f) => fs.readFileSync(f, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
      const src = new Map(rows(process.argv[1]).map((r) => [r.order_id, r]));
      const sil = rows(process.argv[2]);
      if (sil.length !== src.size) { console.error("rows"); process.exit(1); }
      for (const r of sil) { const s = src.get(r.order_id); if (!s) process.exit(1);
        for (const k of Object.keys(s)) if (k !== "note" && JSON.stringify(s[k]) !== JSON.stringify(r[k])) { console.error(k); process.exit(1); }
        if (r.note !== null && r.note !== s.note) { console.error("note"); process.exit(1); } }' \
      "$T/src.jsonl" "$T/silver.jsonl" || die "$2: silver differs from the source"
}

# kill -9 right after the bronze commit of the batch cut at S-1, then inside the first v2 batch
set +e
MCDC_FAILPOINT=stream.after_bronze_commit@1 sw >/dev/null 2>&1; rc=$?
set -e
[ $rc -eq 137 ] || die "no kill at the cut (exit $rc)"
[ "$(ls "$T/ck/s/commits" | wc -l)" = 1 ] || die "the cut batch was committed before the kill"
end=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).end.lsn)' "$T/ck/s/offsets/1")
want=$(node -e 'const s = BigInt(process.argv[1]) - 1n; console.log("0x" + s.toString(16).toUpperCase().padStart(20, "0"))' "$S")
[ "$end" = "$want" ] || die "batch 1 ends at $end, not at S-1 = $want"
set +e
MCDC_FAILPOINT=stream.after_facts@2 sw >/dev/null 2>&1; rc=$?
set -e
[ $rc -eq 137 ] || die "no kill in the first v2 batch (exit $rc)"
out=$(sw 2>"$T/err") || die "rerun: $(cat "$T/err")"
grep -q "replayed" <<<"$out" || die "nothing replayed: $out"
check_switch "" "after the switch"
grep -q '"event":"capture_instance_switched".*"detail":"dbo_orders -> dbo_orders_v2"' "$T/facts.jsonl" || die "switch row detail"
M table cat bronze.s --format jsonl | grep '"_start_lsn":"'"$S" >/dev/null && die "a row at S itself (the enable writes none)"
[ "$(M table cat bronze.s --format jsonl | grep -c '"_capture_instance":"dbo_orders_v2"')" -gt 0 ] || die "no v2 rows"
# the switch as the DBA waits for it: v1 -> v2 at S, in batch 2, and no batch after it yet
fs | grep -qF "\"switched_from\":\"dbo_orders\",\"switched_to\":\"dbo_orders_v2\",\"switched_at_lsn\":\"$S\",\"switched_in_batch\":2,\"last_batch\":2}" \
  || die "finalization show --facts after the switch: $(fs)"
M finalization show --control ops.control --facts ops.facts | head -1 | grep -q $'snapshot_wave\tswitched_from\tswitched_to\tswitched_at_lsn\tswitched_in_batch\tlast_batch$' \
  || die "finalization show --facts: text header $(M finalization show --control ops.control --facts ops.facts | head -1)"

# the old instance disabled: the configured name resolves to the table's newest instance
cp "$T/ct1.jsonl" "$T/ct1_saved.jsonl"
M sim disable "$DB" --capture-instance dbo_orders --at 2026-10-01T14:02:00 >/dev/null
sim_exec 2026-10-01T14:02:10 "UPDATE dbo.orders SET note = N'bb' WHERE order_id = 2"
sim_capture 2026-10-01T14:02:20
sw >/dev/null 2>"$T/err" || die "after the disable: $(cat "$T/err")"
grep -q "following the instances of dbo.orders, from dbo_orders_v2" "$T/err" || die "no word of the resolution: $(cat "$T/err")"
check_switch "$T/ct1_saved.jsonl" "after the disable"
fs | grep -qF '"switched_in_batch":2,"last_batch":3}' || die "finalization show --facts: one more batch: $(fs)"

# a newer instance without the key column: exit 5 at S, nothing past it read
M sim enable "$DB" --table dbo.orders --capture-instance dbo_orders_v3 --columns customer,qty,note --at 2026-10-01T14:03:00 >/dev/null
sim_exec 2026-10-01T14:03:10 "UPDATE dbo.orders SET qty = 99 WHERE order_id = 1"
sim_capture 2026-10-01T14:03:20
v0=$(ls "$T/ck/s/offsets" | wc -l)
set +e
sw >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc -eq 5 ] || die "a v3 without the key: exit $rc: $(cat "$T/err")"
grep -q "does not capture the key column order_id" "$T/err" || die "the message: $(cat "$T/err")"
[ "$(ls "$T/ck/s/offsets" | wc -l)" = $((v0 + 1)) ] || die "more than the cut batch was planned"
cat_table bronze.s "$T/bronze.jsonl"
[ "$(M table cat bronze.s --format jsonl | grep -c '"_capture_instance":"dbo_orders_v3"')" = 0 ] || die "v3 rows read"
echo ok
