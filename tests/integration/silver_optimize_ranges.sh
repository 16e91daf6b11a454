# table optimize on a silver table keeps the key range of what it compacts: the new file's
# mcdc.silver.key_min / key_max tags are the smallest min and the largest max of its inputs
# (range tags, delta/compact.h), and bound its rows, so the next apply still prunes by key:
# an update of one key rewrites only the compacted files whose range holds it. Silver
# equals the source throughout.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
# live: silver's live files after replaying its JSON commits, one line each:
# path key_min key_max ("-" for an absent tag)
live() {
  node -e '
    const fs = require("fs"), dir = process.argv[1] + "/_delta_log";
    const live = new Map();
    for (const f of fs.readdirSync(dir).filter((n) => /^\d{20}\.json$/.test(n)).sort())
      for (const l of fs.readFileSync(dir + "/" + f, "utf8").split("\n").filter((x) => x)) {
        const a = JSON.parse(l);
        if (a.add) live.set(a.add.path, a.add.tags || {});
        if (a.remove) live.delete(a.remove.path);
      }
    for (const [p, t] of live) console.log(p, t["mcdc.silver.key_min"] || "-", t["mcdc.silver.key_max"] || "-");
  ' "$MSSQL_CDC_WAREHOUSE/silver/f"
}
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL), (2, 'b', 2.00, NULL)"
sim_capture 2026-10-01T14:00:30
# apply: silver.f from bronze.f, files of 2 rows
apply() {
  M silver apply --bronze bronze.f --silver silver.f --capture-instance dbo_orders --keys order_id \
    --control ops.control --facts ops.facts --target-file-rows 2 >/dev/null || die "silver apply: $1"
}
stream f --bootstrap --control ops.control >/dev/null || die "the bootstrap failed"
apply bootstrap
# three applies of keys in three ranges: files of a few rows, each with its range
for i in 1 2 3; do
  sim_exec "2026-10-01T14:0$i:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($((i * 100)), 'n$i', $i.00, NULL), ($((i * 100 + 1)), 'm$i', $i.50, NULL), ($((i * 100 + 2)), 'o$i', $i.75, NULL)"
  sim_capture "2026-10-01T14:0$i:30"
  stream f --control ops.control >/dev/null || die "stream $i failed"
  apply "apply $i"
done
silver_vs_source silver.f "before optimize"
live > "$T/before"
[ "$(wc -l < "$T/before")" -ge 4 ] || die "silver has $(wc -l < "$T/before") file(s), too few to compact in groups"
! grep -q ' -' "$T/before" || die "a silver file without its key range: $(cat "$T/before")"
lo=$(awk '{print $2}' "$T/before" | LC_ALL=C sort | head -1)
hi=$(awk '{print $3}' "$T/before" | LC_ALL=C sort | tail -1)

# groups of about two files (~1 KB each): several compacted files
M table optimize silver.f --target-size 2500 >/dev/null || die "table optimize silver.f failed"
live > "$T/after"
n_after=$(wc -l < "$T/after")
[ "$n_after" -ge 2 ] && [ "$n_after" -lt "$(wc -l < "$T/before")" ] || die "optimize left $n_after files of $(wc -l < "$T/before")"
! grep -q ' -' "$T/after" || die "a compacted file lost its key range: $(cat "$T/after")"
[ "$(awk '{print $2}' "$T/after" | LC_ALL=C sort | head -1)" = "$lo" ] || die "the smallest key_min changed"
[ "$(awk '{print $3}' "$T/after" | LC_ALL=C sort | tail -1)" = "$hi" ] || die "the largest key_max changed"
# each file's range bounds its rows (an int key encodes as 01 and its sign-flipped 8 bytes)
while read -r path tlo thi; do
  M parquet cat "$MSSQL_CDC_WAREHOUSE/silver/f/$path" --format jsonl > "$T/rows.jsonl"
  node -e '
    const [rows, lo, hi] = process.argv.slice(1);
    const enc = (k) => "01" + (BigInt(k) ^ (1n << 63n)).toString(16).toUpperCase().padStart(16, "0");
    for (const l of require("fs").readFileSync(rows, "utf8").split("\n").filter((x) => x)) {
      const e = enc(JSON.parse(l).order_id);
      if (e < lo || e > hi) { console.error("key " + JSON.parse(l).order_id + " outside " + lo + ".." + hi); process.exit(1); }
    }' "$T/rows.jsonl" "$tlo" "$thi" || die "$path: a row outside its key range tags"
done < "$T/after"
silver_vs_source silver.f "after optimize"

# an update of key 1: only the compacted files whose range holds it are rewritten (files
# without a range may hold any key, and every one would be)
holding=$(awk -v k=018000000000000001 '$2 <= k && k <= $3' "$T/after" | wc -l)
sim_exec 2026-10-01T14:10:00 "UPDATE dbo.orders SET amount = 7.00 WHERE order_id = 1"
sim_capture 2026-10-01T14:10:30
stream f --control ops.control >/dev/null || die "the stream after optimize failed"
M silver apply --bronze bronze.f --silver silver.f --capture-instance dbo_orders --keys order_id \
  --control ops.control --facts ops.facts --target-file-rows 2 --format json > "$T/apply.json" || die "the apply after optimize failed"
rewritten=$(node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(j.silver_files_rewritten + j.silver_files_marked)' "$T/apply.json")
[ "$rewritten" -le "$holding" ] || die "the apply rewrote $rewritten files, only $holding hold key 1 (of $n_after): $(cat "$T/apply.json")"
silver_vs_source silver.f "after the next apply"
echo "ok ($n_after compacted files, $rewritten rewritten for one key)"
