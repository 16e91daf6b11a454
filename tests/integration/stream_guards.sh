# What the stream refuses or records where it used to carry on silently (issue 16):
#   bronze behind its checkpoint (item 4) exits 3 and writes nothing;
#   --starting-lsn latest is recorded at once as offsets/0 = (L, L] with a stream_started
#     facts row (item 6), so a later run reads what committed in between;
#   one gap, one data_skipped row inside its batch, with both times (item 8);
#   a source that went backwards (sim rewind: a restore, a failover to a lagging replica)
#     stops the stream with exit 3 naming both positions, nothing written (item 13);
#   --bootstrap and --starting-lsn latest before capture has run start just before the
#     instance's start LSN, not at 0x00.. (a false data loss at every later run) (item 7).
. "$(dirname "$0")/stream_lib.bash"
sim_setup
ins() { sim_exec "$1" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($2, 'c$2', $2.00, NULL)"; }

# tree DIR...: every file under the given dirs with its hash (the lock file, which holds
# the pid of its last holder, aside), to compare before and after
tree() { find "$@" -type f ! -name lock -print0 2>/dev/null | LC_ALL=C sort -z | xargs -0 sha1sum; }
lake=$MSSQL_CDC_WAREHOUSE

# ---- item 4: bronze restored from an older backup ------------------------------------------
ins 2026-10-01T14:00:00 1
sim_capture 2026-10-01T14:00:01
ins 2026-10-01T14:01:00 2
sim_capture 2026-10-01T14:01:01
stream bh --max-commits-per-batch 1 --trigger once >/dev/null   # batch 0 (the enable entry)
stream bh --max-commits-per-batch 1 --trigger once >/dev/null   # batch 1: order 1
cp -a "$lake/bronze/bh" "$T/bh.backup"
stream bh --max-commits-per-batch 1 >/dev/null                  # ...: order 2
rm -rf "$lake/bronze/bh" && cp -a "$T/bh.backup" "$lake/bronze/bh"
ins 2026-10-01T14:02:00 3
sim_capture 2026-10-01T14:02:01
tree "$lake" "$T/ck/bh" > "$T/before.tree"
set +e
err=$(stream bh --max-commits-per-batch 1 2>&1 >/dev/null); rc=$?
set -e
# before: exit 0, order 3 written as the next batch and order 2 lost for good
[ $rc = 3 ] || die "bronze behind: exit $rc, want 3: $err"
grep -q "bronze.bh: holds batches up to 1 of app_id 'bh' but checkpoint .* recorded batch [0-9]* in its version [0-9]*: bronze is behind its checkpoint" <<<"$err" \
  || die "bronze behind: message: $err"
grep -q "hint: nothing was written" <<<"$err" || die "bronze behind: hint: $err"
tree "$lake" "$T/ck/bh" > "$T/after.tree"
diff "$T/before.tree" "$T/after.tree" >&2 || die "bronze behind: the refused stream changed files"

# ---- item 6: --starting-lsn latest is recorded at once -------------------------------------
out=$(stream lat --starting-lsn latest) || die "latest: $out"
grep -q "1 batch, 0 rows" <<<"$out" || die "latest: $out"
max=$(M sim query "$DB" 'SELECT max(start_lsn) AS m FROM cdc.lsn_time_mapping' --format jsonl | sed 's/.*"m":"\([^"]*\)".*/\1/')
grep -q "\"start\":{\"lsn\":\"$max\"" "$T/ck/lat/offsets/0" || die "offsets/0 does not start at max_lsn $max: $(cat "$T/ck/lat/offsets/0")"
grep -q "\"end\":{\"lsn\":\"$max\"" "$T/ck/lat/offsets/0" || die "offsets/0 is not (L, L]: $(cat "$T/ck/lat/offsets/0")"
cat_table ops.facts "$T/f.jsonl"
[ "$($CHECK count "$T/f.jsonl" app_id=lat event=stream_started)" = 1 ] || die "no stream_started row"
[ "$($CHECK get "$T/f.jsonl" min_lsn app_id=lat event=stream_started)" = "$max" ] || die "stream_started min_lsn"
detail=$($CHECK get "$T/f.jsonl" detail app_id=lat event=stream_started)
grep -q "\"starting\":\"latest\",\"lsn\":\"$max\"" <<<"$detail" || die "stream_started detail: $detail"
# what commits between two runs is read by the second (before: "latest" was resolved again)
ins 2026-10-01T14:03:00 4
sim_capture 2026-10-01T14:03:01
out=$(stream lat --starting-lsn latest) || die "latest, second run: $out"
grep -q "1 batch, 1 rows" <<<"$out" || die "latest, second run: $out"
cat_table bronze.lat "$T/b.jsonl"
[ "$($CHECK count "$T/b.jsonl" order_id=4)" = 1 ] || die "the row committed between the runs is missing"
[ "$($CHECK count "$T/b.jsonl")" = 1 ] || die "latest read the past"
# and the verdict claims only what was read: every change after L is in bronze
ct_rows "$T/ct.jsonl"
node -e 'const fs = require("fs");
  fs.writeFileSync(process.argv[2], fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean)
    .filter((l) => JSON.parse(l)["__$start_lsn"] > process.argv[3]).join("\n") + "\n");' \
  "$T/ct.jsonl" "$T/ct_after.jsonl" "$max"
$CHECK bronze-vs-ct "$T/ct_after.jsonl" "$T/b.jsonl" >/dev/null || die "bronze.lat is not the changes after L"
cat_table ops.facts "$T/f.jsonl"
$CHECK facts-vs-bronze "$T/f.jsonl" "$T/b.jsonl" lat >/dev/null || die "facts of lat differ from bronze"

# ---- item 8: one gap, one data_skipped row -------------------------------------------------
stream skp --option failOnDataLoss=false >/dev/null              # batch 0: orders 1-4
ins 2026-10-02T14:00:00 5
sim_capture 2026-10-02T14:00:01
M sim idle "$DB" --at 2026-10-02T14:10:00 >/dev/null
ins 2026-10-02T15:00:00 6
sim_capture 2026-10-02T15:00:01
M sim cleanup "$DB" --retention 30m --at 2026-10-02T15:00:02 >/dev/null   # order 5 purged
set +e
MCDC_FAILPOINT=stream.after_offsets stream skp --option failOnDataLoss=false >/dev/null 2>&1
[ $? = 137 ] || die "failpoint after_offsets not reached"
set -e
grep -q '"skipped"' "$T/ck/skp/offsets/1" || die "batch 1 planned no skip: $(cat "$T/ck/skp/offsets/1")"
end1=$(sed 's/.*"end":{"lsn":"\([^"]*\)".*/\1/' "$T/ck/skp/offsets/1")
# a second cleanup, past the end of batch 1, before its replay
M sim idle "$DB" --at 2026-10-02T15:10:00 >/dev/null
ins 2026-10-02T16:00:00 7
sim_capture 2026-10-02T16:00:01
M sim cleanup "$DB" --retention 30m --at 2026-10-02T16:00:02 >/dev/null   # order 6 purged too
stream skp --option failOnDataLoss=false >/dev/null 2>&1 || die "replay with a second cleanup failed"
cat_table ops.facts "$T/f.jsonl"
# before: two rows for batch 1, the second running past its end to the new min_lsn
[ "$($CHECK count "$T/f.jsonl" app_id=skp event=data_skipped batch_id=1)" = 1 ] || die "batch 1 has $($CHECK count "$T/f.jsonl" app_id=skp event=data_skipped batch_id=1) data_skipped rows"
to=$($CHECK get "$T/f.jsonl" end_lsn app_id=skp event=data_skipped batch_id=1)
[ "$to" = "$end1" ] || [[ "$to" < "$end1" ]] || die "the gap of batch 1 runs to $to, past its end $end1"
[ "$($CHECK get "$T/f.jsonl" lost_from_ts app_id=skp event=data_skipped batch_id=1)" != null ] || die "lost_from_ts is null"
[ "$($CHECK get "$T/f.jsonl" lost_to_ts app_id=skp event=data_skipped batch_id=1)" != null ] || die "lost_to_ts is null"
# every gap is recorded once, in its own batch, and never overlaps another
node -e '
  const rows = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse)
    .filter((r) => r.app_id === "skp" && r.event === "data_skipped")
    .map((r) => ({ b: r.batch_id, ...JSON.parse(r.detail) })).sort((a, b) => a.b - b.b);
  const ids = rows.map((r) => r.b);
  if (new Set(ids).size !== ids.length) throw new Error(`a batch with two gaps: ${ids}`);
  for (let i = 1; i < rows.length; i++)
    if (rows[i].from < rows[i - 1].to) throw new Error(`gaps overlap: ${JSON.stringify(rows)}`);
' "$T/f.jsonl" || die "data_skipped rows overlap"
cat_table bronze.skp "$T/b.jsonl"
[ "$($CHECK count "$T/b.jsonl" order_id=7)" = 1 ] || die "skp did not read the changes after the gaps"
[ "$($CHECK count "$T/b.jsonl" order_id=6)" = 0 ] || die "skp read a purged change"
# ---- item 13: the source going backwards ---------------------------------------------------
ins 2026-10-03T14:00:00 8
sim_capture 2026-10-03T14:00:01
l8=$(M sim query "$DB" 'SELECT max(start_lsn) AS m FROM cdc.lsn_time_mapping' --format jsonl | sed 's/.*"m":"\([^"]*\)".*/\1/')
ins 2026-10-03T14:01:00 9
sim_capture 2026-10-03T14:01:01
stream back >/dev/null                                           # reads up to order 9
pos=$(sed 's/.*"end":{"lsn":"\([^"]*\)".*/\1/' "$T/ck/back/offsets/0")
out=$(M sim rewind "$DB" --to "$l8") || die "sim rewind: $out"
grep -q "rewound to $l8: 1 change rows, 1 log entries dropped, 1 source row changes undone" <<<"$out" || die "sim rewind: $out"
[ "$(M sim query "$DB" 'SELECT order_id FROM dbo.orders WHERE order_id = 9' --format jsonl)" = "" ] || die "order 9 still in dbo.orders"
tree "$lake" "$T/ck/back" > "$T/before.tree"
set +e
err=$(stream back 2>&1 >/dev/null); rc=$?
set -e
# before: exit 0, an idle poll (max_lsn below the position is "nothing new")
[ $rc = 3 ] || die "source behind: exit $rc, want 3: $err"
grep -q "dbo_orders: the source went backwards: max_lsn is $l8, below $pos (committed 2026-10-03T14:01:00.000) that the stream already read up to" <<<"$err" \
  || die "source behind: message: $err"
grep -q "hint: nothing was written" <<<"$err" || die "source behind: hint: $err"
tree "$lake" "$T/ck/back" > "$T/after.tree"
diff "$T/before.tree" "$T/after.tree" >&2 || die "source behind: the refused stream changed files"
# new commits after the restore pass the position again, but its commit is gone
ins 2026-10-03T14:05:00 10
sim_capture 2026-10-03T14:05:01
set +e
err=$(stream back 2>&1 >/dev/null); rc=$?
set -e
# before: exit 0, order 10 read after order 9, which the source no longer has
[ $rc = 3 ] || die "source rewound: exit $rc, want 3: $err"
grep -q "dbo_orders: the source went backwards: no commit has LSN $pos any more, which the stream read as committed 2026-10-03T14:01:00.000" <<<"$err" \
  || die "source rewound: message: $err"
tree "$lake" "$T/ck/back" > "$T/after.tree"
diff "$T/before.tree" "$T/after.tree" >&2 || die "source rewound: the refused stream changed files"
# ---- item 7: --bootstrap (and latest) before capture has run ------------------------------
D2=$T/fresh.sqlite
M sim init "$D2" --table dbo.orders --keys order_id --at 2026-10-04T09:00:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
M sim exec "$D2" --at 2026-10-04T09:01:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL)" >/dev/null
run2() { local app=$1; shift; M stream --source "sim:$D2" --capture-instance dbo_orders --target "bronze.$app" \
  --app-id "$app" --checkpoint "$T/ck/$app" --facts ops.facts2 "$@"; }
out=$(run2 boot --bootstrap 2>&1) || die "bootstrap before capture: $out"
run2 late --starting-lsn latest >/dev/null || die "latest before capture"
M sim capture "$D2" --at 2026-10-04T09:02:00 >/dev/null
M sim exec "$D2" --at 2026-10-04T09:03:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (2, 'b', 2.00, NULL)" >/dev/null
M sim capture "$D2" --at 2026-10-04T09:03:01 >/dev/null
start=$(M sim query "$D2" 'SELECT start_lsn FROM cdc.change_tables' --format jsonl | sed 's/.*"start_lsn":"\([^"]*\)".*/\1/')
before=$(node -e 'const h = (BigInt(process.argv[1]) - 1n).toString(16).toUpperCase().padStart(20, "0"); console.log("0x" + h)' "$start")
grep -q "\"lsn\":\"$before\"" "$T/ck/boot/bootstrap" || die "bootstrap S is not start_lsn - 1 ($before): $(cat "$T/ck/boot/bootstrap")"
grep -q "as of 0x00000000000000000000" <<<"$out" && die "bootstrap as of 0x00: $out"
grep -q "\"start\":{\"lsn\":\"$before\"" "$T/ck/late/offsets/0" || die "latest before capture: $(cat "$T/ck/late/offsets/0")"
# before: both exited 4 here, "change data ... is gone" although nothing was purged
for app in boot late; do
  out=$(run2 $app 2>&1) || die "$app after capture: $out"
  M sim query "$D2" 'SELECT * FROM cdc.dbo_orders_CT' --format jsonl > "$T/ct2.jsonl"
  cat_table "bronze.$app" "$T/b2.jsonl"
  $CHECK bronze-vs-ct "$T/ct2.jsonl" "$T/b2.jsonl" >/dev/null || die "bronze.$app is not every change from the instance's start"
done
cat_table bronze.boot "$T/b2.jsonl"
[ "$($CHECK count "$T/b2.jsonl" _operation=0)" = 1 ] || die "bronze.boot has no snapshot row"

# sim rewind refuses what it cannot be: before the enable (here: below what cleanup kept), or not an LSN
set +e
err=$(M sim rewind "$DB" --to 0x00000000000000000001 2>&1); rc=$?
set -e
[ $rc = 2 ] && grep -Eq "cannot take the catalog back|cleanup removed what a restore" <<<"$err" || die "rewind before the enable: exit $rc: $err"
set +e
err=$(M sim rewind "$DB" --to nope 2>&1); rc=$?
set -e
[ $rc = 2 ] || die "rewind --to nope: exit $rc: $err"
echo "ok"
