#!/usr/bin/env bash
# `table cat --as-of-lsn` / `--as-of-time` on bronze and silver: at 20 random LSNs of a
# workload (inserts, updates, deletes, several changes per transaction, a key update, a
# delete and re-insert of one key in one transaction), silver read as of L equals the
# source table as it was at L and bronze as of L holds exactly the changes up to L, both
# computed from the change table alone (as_of_check.mjs). Silver is read forward from an
# older version (silver.o, applied after every batch) and backward from a newer one
# (silver.one, applied once at the end). A read that cannot be exact is refused with exit
# 2 and a reason. Silver with soft deletes (silver.soft applied after every batch, silver.soft1
# once at the end) read as of L equals the soft-delete table the change table gives at L
# (as_of_check.mjs soft: deleted keys kept with _deleted, _deleted_lsn, _deleted_ts and
# their last values).
. "$MCDC_SRC/tests/integration/stream_lib.bash"
AS_OF="node $MCDC_SRC/tests/integration/as_of_check.mjs"
sim_setup
M sim workload "$DB" --table dbo.orders --transactions 150 --rows-per-transaction 3 --seed 11 \
  --start 2026-10-01T14:00:00 --interval 1s --capture-every 10s >/dev/null
sim_capture 2026-10-01T14:09:00
# a stream started at latest here holds nothing of the keys before it
stream late --starting-lsn latest --trigger once >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
sim_exec 2026-10-01T14:10:00 "UPDATE dbo.orders SET order_id = 900001 WHERE order_id = 3"
sim_exec 2026-10-01T14:10:01 "DELETE FROM dbo.orders WHERE order_id = 7; INSERT INTO dbo.orders VALUES (7, N'again', 1.00, '2026-10-01 14:10:01'); UPDATE dbo.orders SET amount = 2.00 WHERE order_id = 7"
M sim workload "$DB" --table dbo.orders --transactions 100 --rows-per-transaction 2 --seed 12 \
  --start 2026-10-01T14:10:02 --interval 1s --capture-every 10s >/dev/null
apply() {
  M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys order_id \
    --control ops.control >/dev/null
  M silver apply --bronze bronze.o --silver silver.soft --capture-instance dbo_orders --keys order_id \
    --control ops.control --soft-deletes >/dev/null
}
# silver is applied after every batch of 40 commits: many silver versions
for _ in 1 2 3 4 5; do
  stream o --trigger once --max-commits-per-batch 40 >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
  apply
done
M silver apply --bronze bronze.o --silver silver.one --capture-instance dbo_orders --keys order_id \
  --control ops.control >/dev/null
M silver apply --bronze bronze.o --silver silver.soft1 --capture-instance dbo_orders --keys order_id \
  --control ops.control --soft-deletes >/dev/null
stream late --trigger available-now >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
M silver apply --bronze bronze.late --silver silver.late --capture-instance dbo_orders --keys order_id \
  --control ops.control >/dev/null
ct_rows "$T/ct.jsonl"
M sim query "$DB" 'SELECT * FROM cdc.lsn_time_mapping' --format jsonl >"$T/map.jsonl"
# the LSNs of the change table, and the first silver version's position
mapfile -t lsns < <(node -e '
  const fs = require("fs");
  const s = new Set(fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)
    .map((l) => JSON.parse(l)["__$start_lsn"]));
  console.log([...s].sort().join("\n"));' "$T/ct.jsonl")
end=$(M table cat bronze.o --columns _start_lsn --format csv | tail -n +2 | sort | tail -1)
first=$(M table history silver.o --format jsonl | node -e '
  const rows = require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean).map(JSON.parse);
  for (const r of rows) { const m = r.userMetadata || r.user_metadata;
    if (!m) continue; const a = JSON.parse(m).silver_apply; if (a && a.applied_lsn) { console.log(a.applied_lsn); break; } }')
[ -n "$first" ] || die "silver's first merge commit records no applied_lsn"
[ "${#lsns[@]}" -gt 200 ] || die "only ${#lsns[@]} commits in the change table"

# 20 random commits between silver's first position and bronze's end, the two ends, and
# the first commit (below every silver.o version: read backward)
RANDOM=23
picked=("${lsns[0]}" "$first" "$end")
candidates=()
for l in "${lsns[@]}"; do [[ "$l" > "$first" && ! "$l" > "$end" ]] && candidates+=("$l"); done
[ "${#candidates[@]}" -gt 100 ] || die "too few commits after silver's first version (${#candidates[@]})"
for _ in $(seq 17); do picked+=("${candidates[$((RANDOM % ${#candidates[@]}))]}"); done
for L in "${picked[@]}"; do
  M table cat silver.o --as-of-lsn "$L" --format jsonl >"$T/s.jsonl"
  $AS_OF state "$T/ct.jsonl" "$L" "$T/s.jsonl" >/dev/null || die "silver as of $L is not the source table at $L"
  M table cat silver.one --as-of-lsn "$L" --format jsonl >"$T/s1.jsonl"
  $AS_OF state "$T/ct.jsonl" "$L" "$T/s1.jsonl" >/dev/null || die "silver.one (read backward) as of $L is not the source table at $L"
  M table cat silver.soft --as-of-lsn "$L" --format jsonl >"$T/d.jsonl"
  $AS_OF soft "$T/ct.jsonl" "$L" "$T/d.jsonl" "$T/map.jsonl" >/dev/null || die "silver.soft as of $L is not the soft-delete table at $L"
  M table cat silver.soft1 --as-of-lsn "$L" --format jsonl >"$T/d1.jsonl"
  $AS_OF soft "$T/ct.jsonl" "$L" "$T/d1.jsonl" "$T/map.jsonl" >/dev/null || die "silver.soft1 (read backward) as of $L is not the soft-delete table at $L"
  M table cat bronze.o --as-of-lsn "$L" --format jsonl >"$T/b.jsonl"
  $AS_OF changes "$T/ct.jsonl" "$L" "$T/b.jsonl" >/dev/null || die "bronze as of $L is not the changes up to $L"
done
# an LSN between two commits reads the state of the earlier one
L=${candidates[50]}
between=$(node -e 'const l = BigInt(process.argv[1]) + 1n; console.log("0x" + l.toString(16).toUpperCase().padStart(20, "0"))' "$L")
M table cat silver.o --as-of-lsn "$between" --format jsonl >"$T/s2.jsonl"
$AS_OF state "$T/ct.jsonl" "$L" "$T/s2.jsonl" >/dev/null || die "silver as of $between (just after $L) differs from the state at $L"

# --as-of-time T: the last commit before T, so half a second after L's commit it is L
ts=$(M table cat bronze.o --format jsonl --columns _start_lsn,_commit_ts | node -e '
  const L = process.argv[1];
  for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)) {
    const r = JSON.parse(l); if (r._start_lsn === L) { console.log(r._commit_ts); break; } }' "$L")
[ -n "$ts" ] || die "no commit time for $L"
at=$(node -e 'const d = new Date(process.argv[1] + "Z"); d.setUTCMilliseconds(d.getUTCMilliseconds() + 500); console.log(d.toISOString())' "$ts")
M table cat silver.o --as-of-time "$at" --format jsonl >"$T/t.jsonl"
$AS_OF state "$T/ct.jsonl" "$L" "$T/t.jsonl" >/dev/null || die "silver as of time $at is not the state at $L"
M table cat bronze.o --as-of-time "$at" --format jsonl >"$T/bt.jsonl"
$AS_OF changes "$T/ct.jsonl" "$L" "$T/bt.jsonl" >/dev/null || die "bronze as of time $at is not the changes up to $L"
# silver names its bronze with --bronze as well as by what it records
M table cat silver.o --as-of-lsn "$L" --bronze bronze.o --format jsonl >"$T/s3.jsonl"
cmp -s "$T/s2.jsonl" "$T/s3.jsonl" || die "--bronze bronze.o reads differently from the recorded bronze"

# refusals: exit 2, a reason, nothing printed on stdout
refused() {
  local why=$1; shift
  local rc=0
  M table cat "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || die "table cat $*: exit $rc, want 2 ($(cat "$T/err"))"
  grep -q -- "$why" "$T/err" || die "table cat $*: the error does not say '$why': $(cat "$T/err")"
  [ ! -s "$T/out" ] || die "table cat $*: printed rows although refused"
}
# (sed reads to the end: head would close the pipe early and sort could die of SIGPIPE)
late_l=$(M table cat bronze.late --columns _start_lsn --format csv | tail -n +2 | sort | sed -n 1p)
refused "bronze holds no row at or before" silver.late --as-of-lsn "$late_l"
beyond=${lsns[${#lsns[@]}-1]}
[[ "$beyond" > "$end" ]] || die "the workload's last commit $beyond should be beyond bronze's end $end"
refused "beyond what bronze holds" silver.o --as-of-lsn "$beyond"
refused "beyond what bronze holds" bronze.o --as-of-lsn "$beyond"
refused "commits before that time may still be unread" silver.o --as-of-time 2026-10-01T16:00:00Z
refused "not an LSN" silver.o --as-of-lsn 0xZZ
refused "not both" silver.o --as-of-lsn "$L" --as-of-time "$at"
refused "does not go with" silver.o --as-of-lsn "$L" --as-of-version 1
refused "for bronze and silver tables" ops.facts --as-of-lsn "$L"
refused "for silver tables" bronze.o --as-of-lsn "$L" --bronze bronze.o
refused "is not a bronze table" silver.o --as-of-lsn "$L" --bronze ops.facts
echo "table_as_of: ok (${#picked[@]} LSNs, bronze end $end)"
