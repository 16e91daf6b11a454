#!/usr/bin/env bash
# scd2 history across a re-snapshot (stream --on-data-loss resnapshot, ADR 0040): cleanup
# purges changes before the stream reads them; the stream re-snapshots at S. The scd2
# apply then takes every key's state at S from the snapshot: a current version the
# snapshot disagrees with is closed at S and the snapshot's opens there, one the snapshot
# lacks is closed at S, one it agrees with stays open, a key new in it opens at S; changes
# after S go on as before. The table equals the history computed from the change table
# alone (scd2_check.mjs resnap, with the source's state at S replayed from the change
# table saved before the purge); the commit records the gap (lost_after, S), and an as-of
# read inside it is refused while reads before and after it are exact. A table built in
# one apply over the whole bronze is the same.
. "$MCDC_SRC/tests/integration/stream_lib.bash"
SCD2="node $MCDC_SRC/tests/integration/scd2_check.mjs"
AS_OF="node $MCDC_SRC/tests/integration/as_of_check.mjs"
sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'a', 1.00, NULL); INSERT INTO dbo.orders VALUES (2, N'b', 2.00, NULL); INSERT INTO dbo.orders VALUES (3, N'c', 3.00, NULL); INSERT INTO dbo.orders VALUES (4, N'd', 4.00, NULL); INSERT INTO dbo.orders VALUES (5, N'e', 5.00, NULL)"
sim_exec 2026-10-01T14:00:01 "UPDATE dbo.orders SET amount = 1.50 WHERE order_id = 1"
sim_exec 2026-10-01T14:00:02 "UPDATE dbo.orders SET amount = 3.50 WHERE order_id = 3"
sim_capture 2026-10-01T14:00:05
RS() { stream r --on-data-loss resnapshot --trigger available-now >/dev/null 2>"$T/err" || die "stream: $(cat "$T/err")"; }
apply() { # apply NAME
  M silver apply --bronze bronze.r --silver "$1" --capture-instance dbo_orders --keys order_id \
    --control ops.control --mode scd2 --target-file-rows 2 --format json >"$T/apply.json" 2>"$T/err" ||
    die "apply $1: $(cat "$T/err")"
}
RS
apply silver.h
# day 2, lost: key 2 deleted, key 4 updated, key 5 changed and changed back, key 7 inserted,
# key 8 inserted and deleted; day 3 (before the re-snapshot, in it): key 1 updated
sim_exec 2026-10-02T14:00:00 "DELETE FROM dbo.orders WHERE order_id = 2; UPDATE dbo.orders SET amount = 4.40 WHERE order_id = 4"
sim_exec 2026-10-02T14:00:01 "UPDATE dbo.orders SET amount = 9.99 WHERE order_id = 5; INSERT INTO dbo.orders VALUES (7, N'g', 7.00, NULL); INSERT INTO dbo.orders VALUES (8, N'h', 8.00, NULL)"
sim_exec 2026-10-02T14:00:02 "UPDATE dbo.orders SET amount = 5.00 WHERE order_id = 5; DELETE FROM dbo.orders WHERE order_id = 8"
sim_exec 2026-10-03T14:00:00 "UPDATE dbo.orders SET amount = 1.90 WHERE order_id = 1"
sim_capture 2026-10-03T14:00:01
ct_rows "$T/ct_before.jsonl"
M sim query "$DB" 'SELECT * FROM cdc.lsn_time_mapping' --format jsonl >"$T/map_before.jsonl"
M sim cleanup "$DB" --retention 1d --at 2026-10-03T14:00:02 >/dev/null
RS
# after S: ordinary changes, one to a key the snapshot closed
sim_exec 2026-10-03T15:00:00 "UPDATE dbo.orders SET amount = 7.70 WHERE order_id = 7; INSERT INTO dbo.orders VALUES (2, N'b again', 2.20, NULL)"
sim_exec 2026-10-03T15:00:01 "DELETE FROM dbo.orders WHERE order_id = 3"
sim_capture 2026-10-03T15:00:05
RS
facts() { M table cat ops.facts --format jsonl --columns app_id,event,end_lsn,detail; }
S=$(facts | node -e '
  for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)) {
    const r = JSON.parse(l); if (r.event === "resnapshot") console.log(r.end_lsn); }')
LOST=$(facts | node -e '
  for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)) {
    const r = JSON.parse(l); if (r.event === "resnapshot") console.log(JSON.parse(r.detail).lost_after); }')
[ -n "$S" ] && [ -n "$LOST" ] || die "no resnapshot row with lost_after: $(facts)"
apply silver.h
ct_rows "$T/ct.jsonl"
{ cat "$T/map_before.jsonl"; M sim query "$DB" 'SELECT * FROM cdc.lsn_time_mapping' --format jsonl; } >"$T/map.jsonl"
end=$(M table cat bronze.r --columns _start_lsn --format csv | tail -n +2 | sort | tail -1)
check() { # check NAME
  cat_table "$1" "$T/s.jsonl"
  $SCD2 "$T/ct.jsonl" "$T/map.jsonl" order_id "$T/s.jsonl" "$end" resnap "$S" "$LOST" "$T/ct_before.jsonl" >/dev/null ||
    { $SCD2 "$T/ct.jsonl" "$T/map.jsonl" order_id "$T/s.jsonl" "$end" resnap "$S" "$LOST" "$T/ct_before.jsonl" >&2 || true
      die "$1 is not the history across the re-snapshot"; }
}
check silver.h
# the scripted keys, exactly (customer/amount/current, by _valid_from_lsn)
cat_table silver.h "$T/s.jsonl"
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
  const S = process.argv[2];
  const of = (k) => rows.filter((r) => r.order_id === k).sort((a, b) => a._valid_from_lsn < b._valid_from_lsn ? -1 : 1);
  const say = (k) => of(k).map((r) => `${r.customer}/${r.amount}/${r._valid_to_lsn === S ? "toS" : r._valid_from_lsn === S ? "fromS" : "-"}/${r._is_current}`).join(" ");
  const want = {
    1: "a/1.00/-/false a/1.50/toS/false a/1.90/fromS/true",   // updated in the snapshot
    2: "b/2.00/toS/false b again/2.20/-/true",                // missing from it, re-inserted after
    3: "c/3.00/-/false c/3.50/-/false",                       // agreed with it, deleted after
    4: "d/4.00/toS/false d/4.40/fromS/true",                  // updated in the gap
    5: "e/5.00/-/true",                                       // changed and changed back: open
    7: "g/7.00/fromS/false g/7.70/-/true",                    // new in the snapshot
  };
  let bad = of(8).length ? "key 8 (inserted and deleted in the gap) has versions" : "";
  for (const [k, w] of Object.entries(want)) if (say(Number(k)) !== w) bad += `\nkey ${k}: ${say(Number(k))}, want ${w}`;
  if (bad) { console.error(bad); process.exit(1); }' "$T/s.jsonl" "$S" || die "the scripted keys' versions are wrong"
# the merge commit records the gap
M table history silver.h --format jsonl | grep -q "\"resnapshot\\\\\":{\\\\\"lsn\\\\\":\\\\\"$S\\\\\",\\\\\"lost_after\\\\\":\\\\\"$LOST\\\\\"}" ||
  die "no commit records the gap ($LOST, $S): $(M table history silver.h --format jsonl | tail -3)"
# one apply over the whole bronze builds the same table
apply silver.once
cat_table silver.h "$T/a.jsonl"
cat_table silver.once "$T/b.jsonl"
cmp -s "$T/a.jsonl" "$T/b.jsonl" || die "scd2 built in one apply differs from the one built across the re-snapshot"
# as of an LSN: exact before the gap and from S on, refused inside it
M sim query "$DB" 'SELECT * FROM cdc.dbo_orders_CT' --format jsonl >"$T/ct_now.jsonl"
node -e '
  const fs = require("fs"), seen = new Set();
  for (const f of process.argv.slice(1)) for (const l of fs.readFileSync(f, "utf8").split("\n").filter(Boolean)) {
    const r = JSON.parse(l), id = `${r["__$start_lsn"]}/${r["__$seqval"]}/${r["__$operation"]}`;
    if (!seen.has(id)) { seen.add(id); console.log(l); } }' "$T/ct_before.jsonl" "$T/ct_now.jsonl" >"$T/ct_full.jsonl"
for L in "$LOST" "$S" "$end"; do
  M table cat silver.h --as-of-lsn "$L" --format jsonl --columns order_id,customer,amount,placed_at >"$T/at.jsonl"
  # the source at L from every change (state), compared on the captured columns
  node -e '
    const fs = require("fs");
    const L = process.argv[2];
    const ct = fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse)
      .filter((r) => r["__$start_lsn"] <= L).sort((a, b) => a["__$start_lsn"] < b["__$start_lsn"] ? -1 : a["__$start_lsn"] > b["__$start_lsn"] ? 1
        : a["__$seqval"] < b["__$seqval"] ? -1 : a["__$seqval"] > b["__$seqval"] ? 1 : a["__$operation"] - b["__$operation"]);
    const st = new Map();
    for (const r of ct) { const op = r["__$operation"];
      if (op === 1 || op === 3) st.delete(r.order_id);
      else st.set(r.order_id, JSON.stringify({ order_id: r.order_id, customer: r.customer, amount: r.amount, placed_at: r.placed_at })); }
    const got = fs.readFileSync(process.argv[3], "utf8").split("\n").filter(Boolean).map(JSON.parse)
      .map((r) => JSON.stringify({ order_id: r.order_id, customer: r.customer, amount: r.amount, placed_at: r.placed_at })).sort();
    const want = [...st.values()].sort();
    if (JSON.stringify(got) !== JSON.stringify(want)) { console.error(`as of ${L}: ${got.join(" ")}\nwant ${want.join(" ")}`); process.exit(1); }' \
    "$T/ct_full.jsonl" "$L" "$T/at.jsonl" || die "silver.h as of $L is not the source at $L"
done
inside=$(node -e 'const l = BigInt(process.argv[1]) + 1n; console.log("0x" + l.toString(16).toUpperCase().padStart(20, "0"))' "$LOST")
rc=0; M table cat silver.h --as-of-lsn "$inside" >"$T/out" 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "lies in a gap of the source's history" "$T/err" && [ ! -s "$T/out" ] ||
  die "as of $inside (inside the gap): exit $rc: $(cat "$T/err")"
# scd1 silver (rebuilt from the re-snapshot) cannot say what the source held inside the gap
# either: refused there, exact at its edges
M silver apply --bronze bronze.r --silver silver.s1 --capture-instance dbo_orders --keys order_id \
  --control ops.control >/dev/null
rc=0; M table cat silver.s1 --as-of-lsn "$inside" >"$T/out" 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "lies in a gap of the source's history" "$T/err" && [ ! -s "$T/out" ] ||
  die "scd1 as of $inside (inside the gap): exit $rc: $(cat "$T/err")"
M table cat silver.s1 --as-of-lsn "$end" --format jsonl --columns order_id,customer,amount,placed_at >"$T/s1.jsonl"
M table cat silver.h --as-of-lsn "$end" --format jsonl --columns order_id,customer,amount,placed_at >"$T/h.jsonl"
[ "$(sort "$T/s1.jsonl")" = "$(sort "$T/h.jsonl")" ] || die "scd1 and scd2 as of $end differ"
echo "silver_scd2_resnapshot: ok (gap $LOST .. $S)"
