#!/usr/bin/env bash
# silver apply --mode scd2: one row per version of a key; and --soft-deletes: scd1 where a
# deleted key stays, flagged. After every apply of a scripted
# history (updates, a key update, a delete and re-insert of one key, several changes to one
# key in one transaction, a transaction leaving a key as it was, a key inserted and deleted
# in one transaction) and a workload, streamed in small batches, the table equals the history
# computed from the change table alone (scd2_check.mjs: every version with its validity
# range). An apply changing one key rewrites at most the files holding its current version;
# kill -9 at every silver failpoint, then a rerun, gives the same table; modes never mix.
# The soft-delete table is checked the same way against its own oracle (scd2_check.mjs soft).
. "$MCDC_SRC/tests/integration/stream_lib.bash"
SCD2="node $MCDC_SRC/tests/integration/scd2_check.mjs"
sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'a', 1.00, NULL); INSERT INTO dbo.orders VALUES (2, N'b', 2.00, NULL); INSERT INTO dbo.orders VALUES (3, N'c', 3.00, NULL)"
sim_exec 2026-10-01T14:00:01 "UPDATE dbo.orders SET amount = 1.10 WHERE order_id = 1; UPDATE dbo.orders SET amount = 1.20 WHERE order_id = 1"
# a transaction that leaves key 2 as it was (changed and changed back): no new version
sim_exec 2026-10-01T14:00:02 "UPDATE dbo.orders SET amount = 9.00 WHERE order_id = 2; UPDATE dbo.orders SET amount = 2.00 WHERE order_id = 2"
sim_exec 2026-10-01T14:00:03 "DELETE FROM dbo.orders WHERE order_id = 3"
sim_exec 2026-10-01T14:00:04 "INSERT INTO dbo.orders VALUES (3, N'c again', 3.30, NULL)"
sim_exec 2026-10-01T14:00:05 "INSERT INTO dbo.orders VALUES (7777, N'gone', 4.00, NULL); DELETE FROM dbo.orders WHERE order_id = 7777"
sim_exec 2026-10-01T14:00:06 "UPDATE dbo.orders SET order_id = 50 WHERE order_id = 2"
sim_exec 2026-10-01T14:00:07 "DELETE FROM dbo.orders WHERE order_id = 1; INSERT INTO dbo.orders VALUES (1, N'a2', 1.50, NULL)"
M sim workload "$DB" --table dbo.orders --transactions 120 --rows-per-transaction 3 --seed 5 \
  --start 2026-10-01T14:01:00 --interval 1s --capture-every 10s >/dev/null
sim_capture 2026-10-01T14:05:00
M sim query "$DB" 'SELECT * FROM cdc.lsn_time_mapping' --format jsonl >"$T/map.jsonl"
ct_rows "$T/ct.jsonl"
apply() { # apply NAME [ARGS...]
  local n=$1; shift
  M silver apply --bronze bronze.h --silver "$n" --capture-instance dbo_orders --keys order_id \
    --control ops.control --mode scd2 --target-file-rows 40 --format json "$@" >"$T/apply.json"
}
field() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1]))[process.argv[2]])' "$T/apply.json" "$1"; }
bronze_end() { M table cat bronze.h --columns _start_lsn --format csv | tail -n +2 | sort | tail -1; }
check() { # check NAME WHAT [soft]
  cat_table "$1" "$T/s.jsonl"
  $SCD2 "$T/ct.jsonl" "$T/map.jsonl" order_id "$T/s.jsonl" "$(bronze_end)" ${3:-} >/dev/null \
    || { $SCD2 "$T/ct.jsonl" "$T/map.jsonl" order_id "$T/s.jsonl" "$(bronze_end)" ${3:-} >&2 || true; die "$2: $1 is not the history"; }
}
soft() { # soft NAME [ARGS...]: the soft-delete apply
  local n=$1; shift
  M silver apply --bronze bronze.h --silver "$n" --capture-instance dbo_orders --keys order_id \
    --control ops.control --soft-deletes --target-file-rows 40 --format json "$@" >"$T/apply.json"
}
n=0
while :; do
  out=$(stream h --trigger once --max-commits-per-batch 15 2>&1) || die "stream: $out"
  apply silver.h
  n=$((n + 1))
  check silver.h "after apply $n"
  soft silver.soft
  check silver.soft "soft deletes after apply $n" soft
  grep -q " 0 rows\|, 0 rows" <<<"$out" && break
  [ $n -lt 40 ] || die "the stream did not catch up"
done
[ "$(field changed_keys)" = 0 ] || die "an apply with nothing new found changes"
# the scripted keys, exactly
cat_table silver.h "$T/s.jsonl"
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
  const of = (k) => rows.filter((r) => r.order_id === k).sort((a, b) => a._valid_from_lsn < b._valid_from_lsn ? -1 : 1);
  const say = (k) => of(k).map((r) => `${r.customer}/${r.amount}/${r._is_current}`).join(" ");
  const want = { 1: "a/1.00/false a/1.20/false a2/1.50/false", 3: "c/3.00/false c again/3.30/false", 50: "b/2.00/false" };
  if (of(7777).length) { console.error("key 7777 (inserted and deleted in one transaction) has versions"); process.exit(1); }
  for (const [k, w] of Object.entries(want)) {
    const got = say(Number(k));
    if (!got.startsWith(w)) { console.error(`key ${k}: ${got}, want ${w}...`); process.exit(1); }
  }
  const two = of(2);
  if (two.length !== 1 || two[0]._is_current) { console.error(`key 2: ${JSON.stringify(two)}`); process.exit(1); }' "$T/s.jsonl" \
  || die "the scripted keys' versions are wrong"

# one changed key rewrites at most the files holding its current version
sim_exec 2026-10-01T14:06:00 "UPDATE dbo.orders SET amount = 77.00 WHERE order_id = 50"
sim_capture 2026-10-01T14:06:10
ct_rows "$T/ct.jsonl"
M sim query "$DB" 'SELECT * FROM cdc.lsn_time_mapping' --format jsonl >"$T/map.jsonl"
stream h --trigger once >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
apply silver.h
[ "$(field silver_files_before)" -gt 5 ] || die "too few files to show an incremental apply ($(field silver_files_before))"
[ "$(field silver_files_rewritten)" -le 1 ] || die "one changed key rewrote $(field silver_files_rewritten) files"
check silver.h "one key"

# kill -9 at every failpoint, then a rerun: the same table as an apply without a crash
minute=7
for fp in silver.before_merge_commit silver.after_merge silver.after_position; do
  minute=$((minute + 1))
  sim_exec "2026-10-01T14:$(printf %02d $minute):00" "UPDATE dbo.orders SET amount = amount + 1 WHERE order_id IN (1, 3, 50); INSERT INTO dbo.orders VALUES ($((1000 + minute)), N'k', 1.00, NULL)"
  sim_exec "2026-10-01T14:$(printf %02d $minute):05" "DELETE FROM dbo.orders WHERE order_id = $((1000 + minute))"
  sim_capture "2026-10-01T14:$(printf %02d $minute):10"
  stream h --trigger once >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
  rc=0; MCDC_FAILPOINT="$fp" apply silver.h >/dev/null 2>&1 || rc=$?
  [ $rc = 137 ] || die "$fp: exit $rc, want 137"
  apply silver.h || die "$fp: the rerun failed"
  rc=0; MCDC_FAILPOINT="$fp" soft silver.soft >/dev/null 2>&1 || rc=$?
  [ $rc = 137 ] || die "$fp (soft deletes): exit $rc, want 137"
  soft silver.soft || die "$fp (soft deletes): the rerun failed"
  ct_rows "$T/ct.jsonl"
  M sim query "$DB" 'SELECT * FROM cdc.lsn_time_mapping' --format jsonl >"$T/map.jsonl"
  check silver.h "$fp"
  check silver.soft "$fp (soft deletes)" soft
  apply silver.h
  [ "$(field changed_keys)" = 0 ] || die "$fp: the second rerun found changes"
done
# soft deletes, a later apply than the states it repeats: an update to the values the row
# holds keeps its _start_lsn, a key deleted before and inserted and deleted in one
# transaction now stays as it was deleted (as one apply of the whole history has it)
sim_exec 2026-10-01T14:20:00 "UPDATE dbo.orders SET amount = amount WHERE order_id = 50"
sim_exec 2026-10-01T14:20:01 "INSERT INTO dbo.orders VALUES (1009, N'back', 9.00, NULL); DELETE FROM dbo.orders WHERE order_id = 1009"
sim_capture 2026-10-01T14:20:10
stream h --trigger once >/dev/null 2>"$T/err" || die "failed: $(cat "$T/err")"
soft silver.soft
ct_rows "$T/ct.jsonl"
M sim query "$DB" 'SELECT * FROM cdc.lsn_time_mapping' --format jsonl >"$T/map.jsonl"
check silver.soft "soft deletes over states equal to silver's" soft
apply silver.h
# a fresh table built in one apply equals the one built batch by batch
apply silver.once
cat_table silver.h "$T/a.jsonl"
cat_table silver.once "$T/b.jsonl"
cmp -s "$T/a.jsonl" "$T/b.jsonl" || die "scd2 built in one apply differs from scd2 built batch by batch"

# as of an LSN, scd2 gives the rows valid then: the same as scd1's as-of read
M silver apply --bronze bronze.h --silver silver.s1 --capture-instance dbo_orders --keys order_id \
  --control ops.control >/dev/null
mapfile -t lsns < <(M table cat bronze.h --columns _start_lsn --format csv | tail -n +2 | sort -u)
RANDOM=9
for _ in 1 2 3 4 5 6 7 8; do
  L=${lsns[$((RANDOM % ${#lsns[@]}))]}
  M table cat silver.h --as-of-lsn "$L" --columns order_id,customer,amount,placed_at >"$T/h.txt"
  M table cat silver.s1 --as-of-lsn "$L" --columns order_id,customer,amount,placed_at >"$T/s.txt"
  cmp -s "$T/h.txt" "$T/s.txt" || die "scd2 as of $L differs from scd1 as of $L"
done
# modes never mix: exit 2 naming the mode, nothing written
rc=0; M silver apply --bronze bronze.h --silver silver.h --capture-instance dbo_orders --keys order_id \
  --control ops.control 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "built with mode scd2, not scd1" "$T/err" || die "scd1 on an scd2 table: exit $rc: $(cat "$T/err")"
M silver apply --bronze bronze.h --silver silver.one1 --capture-instance dbo_orders --keys order_id \
  --control ops.control >/dev/null
rc=0; M silver apply --bronze bronze.h --silver silver.one1 --capture-instance dbo_orders --keys order_id \
  --control ops.control --mode scd2 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "built with mode scd1, not scd2" "$T/err" || die "scd2 on an scd1 table: exit $rc: $(cat "$T/err")"
rc=0; M silver apply --bronze bronze.h --silver silver.soft --capture-instance dbo_orders --keys order_id \
  --control ops.control 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "built with soft deletes" "$T/err" || die "hard deletes on a soft-delete table: exit $rc: $(cat "$T/err")"
rc=0; M silver apply --bronze bronze.h --silver silver.one1 --capture-instance dbo_orders --keys order_id \
  --control ops.control --soft-deletes 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "built with hard deletes" "$T/err" || die "soft deletes on a hard-delete table: exit $rc: $(cat "$T/err")"
rc=0; M silver apply --bronze bronze.h --silver silver.x --capture-instance dbo_orders --keys order_id \
  --control ops.control --mode scd2 --soft-deletes 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "soft-deletes is for --mode scd1" "$T/err" || die "--mode scd2 --soft-deletes: exit $rc"
# the scripted keys of the soft-delete table: 7777 never existed outside a transaction, 2 was
# moved to 50 (2 deleted, flagged, with its last values), 3 deleted and re-inserted (live)
cat_table silver.soft "$T/soft.jsonl"
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
  const by = new Map(rows.map((r) => [r.order_id, r]));
  const bad = (m) => { console.error(m); process.exit(1); };
  if (by.has(7777)) bad("key 7777 (inserted and deleted in one transaction) is in the table");
  const two = by.get(2);
  if (!two || two._deleted !== true || two.customer !== "b" || !two._deleted_lsn || !two._deleted_ts) bad(`key 2: ${JSON.stringify(two)}`);
  if (by.get(3)._deleted !== false || by.get(3)._deleted_lsn !== null) bad(`key 3: ${JSON.stringify(by.get(3))}`);
  if (rows.filter((r) => r._deleted).length < 5) bad("fewer than 5 deleted keys kept");' "$T/soft.jsonl" \
  || die "the soft-delete table's scripted keys are wrong"
# the silver verdict means the same in every mode: bronze's, once everything bronze holds is
# applied (scd1, scd2 and soft deletes each advance to it)
M finalization advance --control ops.control --table bronze.h --checkpoint "$T/ck/h" >/dev/null
verdict() { M finalization show --control ops.control --table "$1" --format json |
  node -e 'const r = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log((Array.isArray(r) ? r[0] : r).finalized_until)'; }
for how in "silver.v1" "silver.v2 --mode scd2" "silver.v3 --soft-deletes"; do
  set -- $how
  name=$1; shift
  M silver apply --bronze bronze.h --silver "$name" --capture-instance dbo_orders --keys order_id \
    --control ops.control --facts ops.facts "$@" >/dev/null
  [ "$(verdict "$name")" = "$(verdict bronze.h)" ] && [ "$(verdict bronze.h)" != null ] ||
    die "$name ($*): verdict $(verdict "$name"), bronze's $(verdict bronze.h)"
done
rc=0; M silver apply --bronze bronze.h --silver silver.x --capture-instance dbo_orders --keys order_id \
  --control ops.control --mode scd3 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "scd1 or scd2" "$T/err" || die "--mode scd3: exit $rc"
echo "silver_scd2: ok ($n applies)"
