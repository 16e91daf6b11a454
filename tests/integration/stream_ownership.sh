# A table knows its owner, and a refused stream writes nothing (issue 16, items 1, 2, 10):
# bronze commits record their batch's range; streams refuse targets of another kind,
# source table or owner; `stream --adopt` continues another stream's bronze with every
# change exactly once. Each refusal exits 2 and leaves every table and checkpoint as it
# was (the file tree is compared before and after).
. "$(dirname "$0")/stream_lib.bash"
sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL)"
sim_capture 2026-10-01T14:00:01

expect() { # expect CODE CMD...: run, check the exit code, keep stderr in $err
  local want=$1; shift
  set +e
  err=$("$@" 2>&1 >/dev/null)
  local rc=$?
  set -e
  [ $rc = "$want" ] || die "exit $rc, want $want: $* : $err"
}
# tree: every file under the temp dir with its hash, but the simulator's database, these
# lists and checkpoint lock files (which hold the pid of the last process that held them)
tree() { (cd "$T" && find . \( -name 'db.sqlite*' -o -name '*.tree' -o -name lock \) -prune -o -type f -print | LC_ALL=C sort |
          while read -r f; do printf '%s %s\n' "$f" "$(sha1sum < "$f" | cut -c1-12)"; done); }
unchanged() { # unchanged LABEL: the tree is as saved in $T/before
  tree > "$T/after.tree"
  diff "$T/before.tree" "$T/after.tree" >&2 || die "$1: the refused command changed files"
}

# ---- bronze commit N's userMetadata holds its range: start_lsn (after), end_lsn (upto)
stream one >/dev/null
M table history bronze.one --format jsonl | grep '"STREAMING UPDATE"' > "$T/h.jsonl"
node -e '
  const fs = require("fs");
  const h = JSON.parse(fs.readFileSync(process.argv[1], "utf8").split("\n")[0]);
  const um = JSON.parse(h.userMetadata);
  const o = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  if (um.start_lsn !== o.start.lsn || um.end_lsn !== o.end.lsn)
    throw new Error(`range ${um.start_lsn}..${um.end_lsn}, offsets/0 ${o.start.lsn}..${o.end.lsn}`);
' "$T/h.jsonl" "$T/ck/one/offsets/0" || die "bronze commit 0 does not record its range"


# ---- item 1: a refused stream writes nothing (no verdict row for the new --target)
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.one --app-id one \
  --checkpoint "$T/ck/one" --facts ops.facts --control ops.control >/dev/null
tree > "$T/before.tree"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.other \
  --app-id one --checkpoint "$T/ck/one" --facts ops.facts --control ops.control
grep -q <<<"$err" "belongs to target 'bronze.one'" || die "reuse message: $err"
unchanged "checkpoint of another target"
expect 2 M finalization is-final --control ops.control --table bronze.other --period-end 2026-10-01T14:00:00
# the checkpoint locked by a running stream: refused before the control table is touched
sim_exec 2026-10-01T14:00:05 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (2, 'b', 2.00, NULL)"
sim_capture 2026-10-01T14:00:06
"$MCDC_BIN" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.one --app-id one \
  --checkpoint "$T/ck/one" --facts ops.facts --trigger interval:100ms \
  --progress "$T/progress.jsonl" >"$T/interval.out" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$T/progress.jsonl" ] && break; sleep 0.05; done
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.locked \
  --app-id one --checkpoint "$T/ck/one" --control ops.control2
grep -q <<<"$err" "already locked" || die "lock message: $err"
[ -e "$T/lake/ops/control2" ] && die "a stream refused for the lock created its control table"
kill -TERM $pid; wait $pid || die "the interval stream did not exit 0: $(cat "$T/interval.out")"
rm -f "$T/progress.jsonl"
# finalization advance --checkpoint checks the checkpoint's recorded target
tree > "$T/before.tree"
expect 2 M finalization advance --control ops.control --table bronze.other --checkpoint "$T/ck/one"
grep -q <<<"$err" "belongs to target 'bronze.one', not 'bronze.other'" || die "advance message: $err"
unchanged "finalization advance with another table's checkpoint"
M finalization advance --control ops.control --table bronze.one --checkpoint "$T/ck/one" >/dev/null

# ---- item 10: a typo in --capture-instance is refused before the checkpoint exists
tree > "$T/before.tree"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_ordrs --target bronze.typo \
  --app-id typo --checkpoint "$T/ck/typo" --facts ops.facts --control ops.control
grep -q <<<"$err" "capture instance 'dbo_ordrs': not in sim:.* (it has dbo_orders)" || die "typo message: $err"
grep -q <<<"$err" "^hint: pass one of them to --capture-instance" || die "typo hint: $err"
unchanged "a capture instance typo"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.typo \
  --app-id typo --checkpoint "$T/ck/typo" --progress "$T/no/such/dir/p.jsonl"
grep -q <<<"$err" "progress .*: cannot write in" || die "progress message: $err"
unchanged "a --progress in a missing directory"
[ -e "$T/ck/typo" ] && die "the typo left a checkpoint"
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.typo \
  --app-id typo --checkpoint "$T/ck/typo" >/dev/null || die "the corrected command failed"

# ---- item 2: a table knows its owner
# kinds are recorded; bronze records its source table and owner
M table info bronze.one | grep -q "mcdc.owner = one" || die "bronze records no owner"
M table info bronze.one | grep -q "mcdc.source_table = dbo.orders" || die "bronze records no source table"
M table info ops.facts | grep -q "mcdc.kind = facts" || die "facts records no kind"
# a second app id on the same bronze is refused (it would double every change)
tree > "$T/before.tree"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.one \
  --app-id two --checkpoint "$T/ck/two" --facts ops.facts --control ops.control
grep -q <<<"$err" "bronze.one: belongs to stream 'one', not 'two'" || die "owner message: $err"
grep -q <<<"$err" "with --adopt and a new --checkpoint" || die "owner hint: $err"
unchanged "a second app id"
# a re-snapshot generation of the same stream family is the same owner; a new checkpoint
# of it must say where it starts (from the earliest change it would read them again)
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.one \
  --app-id one.g2 --checkpoint "$T/ck/one.g2"
grep -q <<<"$err" "holds batches of 'one', of this stream's family" || die "generation message: $err"
unchanged "a generation without --bootstrap"
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.one \
  --app-id one.g2 --checkpoint "$T/ck/one.g2" --bootstrap >/dev/null || die "generation one.g2 refused"
# --target of another kind, --facts of another kind
M silver apply --bronze bronze.typo --silver silver.x --capture-instance dbo_orders \
  --keys order_id --control ops.control >/dev/null
tree > "$T/before.tree"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target silver.x \
  --app-id sx --checkpoint "$T/ck/sx"
grep -q <<<"$err" "target silver.x: is a silver table, not a bronze table" || die "kind message: $err"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.fy \
  --app-id fy --checkpoint "$T/ck/fy" --facts bronze.one
grep -q <<<"$err" "facts bronze.one: is a bronze table, not a facts table" || die "facts kind message: $err"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.cy \
  --app-id cy --checkpoint "$T/ck/cy" --control ops.facts
grep -q <<<"$err" "is a facts table, not a control table" || die "control kind message: $err"
expect 2 M silver apply --bronze bronze.typo --silver ops.facts --capture-instance dbo_orders \
  --keys order_id --control ops.control
grep -q <<<"$err" "silver ops.facts: is a facts table, not a silver table" || die "silver kind message: $err"
unchanged "tables of another kind"
# a loop with the wrong --target: another source table's bronze is refused
M sim init "$DB" --table dbo.customers --keys customer_id --at 2026-10-01T14:00:10 \
  --schema 'customer_id INT NOT NULL, name NVARCHAR(40) NULL' >/dev/null
sim_exec 2026-10-01T14:00:20 "INSERT INTO dbo.customers (customer_id, name) VALUES (7, 'c')"
sim_capture 2026-10-01T14:00:21
M stream --source "sim:$DB" --capture-instance dbo_customers --target bronze.customers \
  --app-id customers --checkpoint "$T/ck/customers" >/dev/null
tree > "$T/before.tree"
for app in customers orders; do
  expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.customers \
    --app-id $app --checkpoint "$T/ck/loop-$app"
  grep -q <<<"$err" "bronze.customers: holds the changes of dbo.customers, not of dbo.orders" || die "source table message: $err"
done
unchanged "another source table's bronze"

# ---- item 10: silver keys must be columns of bronze (and the source's index when known)
tree > "$T/before.tree"
expect 2 M silver apply --bronze bronze.one --silver silver.k --capture-instance dbo_orders \
  --keys ordr_id --control ops.control
grep -q <<<"$err" "key ordr_id: not a captured column of bronze.one (it has order_id, customer, amount, placed_at)" || die "key message: $err"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.sk \
  --app-id sk --checkpoint "$T/ck/sk" --control ops.control --silver silver.sk --keys customer
grep -q <<<"$err" "keyed by its unique index (order_id)" || die "stream keys message: $err"
unchanged "a silver key typo"
M silver apply --bronze bronze.one --silver silver.k --capture-instance dbo_orders \
  --keys order_id --control ops.control >/dev/null || die "the corrected silver apply failed"
expect 2 M silver apply --bronze bronze.one --silver silver.k --capture-instance dbo_orders \
  --keys customer --control ops.control
grep -q <<<"$err" "to start over with other keys" || die "recorded keys hint: $err"

# ---- stream --adopt: another stream continues the table, every change exactly once
adopt_stream() { # adopt_stream APP CHECKPOINT [ARGS...]: a stream of bronze.ad
  local app=$1 ck=$2; shift 2
  M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.ad \
    --app-id "$app" --checkpoint "$T/ck/$ck" --facts ops.adfacts "$@"
}
once_vs_ct() { # [TABLE]: every change of the change table exactly once in bronze (row counts and keys)
  local t=${1:-bronze.ad}
  ct_rows "$T/ct.jsonl"
  cat_table "$t" "$T/bronze.jsonl"
  $CHECK once-vs-ct "$T/ct.jsonl" "$T/bronze.jsonl" >/dev/null || die "$t differs from the change table"
  [ "$(wc -l < "$T/ct.jsonl")" = "$(wc -l < "$T/bronze.jsonl")" ] || die "$t: row count"
}
txn_of() { M table info bronze.ad --format json | node -e '
  const j = JSON.parse(require("fs").readFileSync(0, "utf8"));
  console.log(j.txn[process.argv[1]] ?? "none");' "$1"; }
adopt_stream ad1 ad1 >/dev/null
sim_exec 2026-10-01T14:01:00 "UPDATE dbo.orders SET amount = 5.00 WHERE order_id = 1"
sim_capture 2026-10-01T14:01:01
adopt_stream ad1 ad1 >/dev/null
# refused: a checkpoint with batches, --bootstrap or --starting-lsn, a bronze that does not exist
tree > "$T/before.tree"
expect 2 adopt_stream ad1 ad1 --adopt
grep -q <<<"$err" "adopting needs a new or empty checkpoint" || die "adopt checkpoint message: $err"
expect 2 adopt_stream ad2 ad2 --adopt --bootstrap
expect 2 adopt_stream ad2 ad2 --adopt --starting-lsn latest
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.none \
  --app-id ad2 --checkpoint "$T/ck/ad2" --adopt
grep -q <<<"$err" "bronze.none does not exist" || die "adopt missing message: $err"
unchanged "refused adoptions"
# the old stream runs on (interval) while ad2 adopts the table
"$MCDC_BIN" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.ad \
  --app-id ad1 --checkpoint "$T/ck/ad1" --facts ops.adfacts --trigger interval:100ms \
  >"$T/old.out" 2>&1 &
old=$!
for _ in $(seq 1 100); do [ "$(cat "$T/ck/ad1/lock" 2>/dev/null)" = "$old" ] && break; sleep 0.05; done
sleep 0.3 # past its first poll
ad1_txn=$(txn_of ad1)
out=$(adopt_stream ad2 ad2 --adopt 2>&1) || die "adopt: $out"
M table info bronze.ad | grep -q "mcdc.owner = ad2" || die "adopt did not take ownership"
M table info bronze.ad | grep -q "mcdc.adopted_from = ad1" || die "adopt did not record where from"
# the old stream's next batch conflicts: exit 3, nothing written
sim_exec 2026-10-01T14:02:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (3, 'c', 3.00, NULL)"
sim_capture 2026-10-01T14:02:01
set +e; wait $old; rc=$?; set -e
[ $rc = 3 ] || die "the adopted stream exited $rc, want 3: $(cat "$T/old.out")"
grep -q "bronze.ad: now belongs to stream 'ad2', not 'ad1'" "$T/old.out" || die "old stream message: $(cat "$T/old.out")"
[ "$(txn_of ad1)" = "$ad1_txn" ] || die "the adopted stream wrote a batch after the adoption"
expect 2 adopt_stream ad1 ad1
grep -q <<<"$err" "belongs to stream 'ad2', not 'ad1'" || die "old stream restart: $err"
adopt_stream ad2 ad2 >/dev/null || die "the adopting stream's second run failed"
once_vs_ct
# where it resumed: offsets/0's start, the adopted file and the facts event agree
node -e '
  const fs = require("fs");
  const [ck, facts] = process.argv.slice(1);
  const ad = JSON.parse(fs.readFileSync(ck + "/adopted", "utf8"));
  const o = JSON.parse(fs.readFileSync(ck + "/offsets/0", "utf8"));
  if (ad.first_batch !== 0 || ad.from_owner !== "ad1" || o.start.lsn !== ad.after.lsn)
    throw new Error("adopted " + JSON.stringify(ad) + " offsets/0 " + JSON.stringify(o));
  const ev = fs.readFileSync(facts, "utf8").trim().split("\n").map(JSON.parse)
    .filter(r => r.event === "adopted");
  if (ev.length !== 1 || ev[0].end_lsn !== ad.after.lsn || ev[0].app_id !== "ad2" ||
      JSON.parse(ev[0].detail).from_owner !== "ad1")
    throw new Error("adopted events " + JSON.stringify(ev));
' "$T/ck/ad2" <(M table cat ops.adfacts --format jsonl) || die "where the adoption resumed"
# a lost checkpoint, same app id: batches go on after bronze's txn, nothing twice
rm -rf "$T/ck/ad2"
sim_exec 2026-10-01T14:03:00 "DELETE FROM dbo.orders WHERE order_id = 3"
sim_capture 2026-10-01T14:03:01
expect 2 adopt_stream ad2 ad2b
grep -q <<<"$err" "already holds batches of app_id 'ad2'" || die "lost checkpoint message: $err"
ad2_txn=$(txn_of ad2)
adopt_stream ad2 ad2b --adopt >/dev/null || die "adopting after a lost checkpoint failed"
[ -e "$T/ck/ad2b/offsets/$((ad2_txn + 1))" ] || die "the adopted checkpoint does not start after bronze's txn $ad2_txn"
once_vs_ct
# the owner's commits without their range (as after log cleanup): it resumes after the
# largest _start_lsn of bronze's rows, still every change once
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.sc --app-id sc1 \
  --checkpoint "$T/ck/sc1" >/dev/null
sed -i 's/,\\"start_lsn\\":\\"0x[0-9A-F]*\\",\\"end_lsn\\":\\"0x[0-9A-F]*\\"//' \
  "$T"/lake/bronze/sc/_delta_log/*.json
grep -q 'end_lsn' "$T"/lake/bronze/sc/_delta_log/*.json && die "the ranges were not removed"
sim_exec 2026-10-01T14:03:30 "UPDATE dbo.orders SET customer = 'z' WHERE order_id = 2"
sim_capture 2026-10-01T14:03:31
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.sc --app-id sc2 \
  --checkpoint "$T/ck/sc2" --adopt >/dev/null 2>"$T/sc2.err" || die "adopting a bronze without ranges failed"
grep -q "reading the largest _start_lsn of its rows" "$T/sc2.err" || die "no row scan: $(cat "$T/sc2.err")"
once_vs_ct bronze.sc
# changes after the owner's last batch purged: exit 4, nothing written
sim_exec 2026-10-01T14:04:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (4, 'd', 4.00, NULL)"
sim_capture 2026-10-01T14:04:01
sim_exec 2026-10-01T14:04:10 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (5, 'e', 5.00, NULL)"
sim_capture 2026-10-01T14:04:11
M sim cleanup "$DB" --retention 0s --at 2026-10-01T14:05:00 >/dev/null
tree > "$T/before.tree"
expect 4 adopt_stream ad3 ad3 --adopt
grep -q <<<"$err" "changes after 0x.* where its last batch ended, are purged" || die "adopt purge message: $err"
unchanged "an adoption past purged changes"

# ---- tables written before owners were recorded (legacy): inferred, recorded on the next write
legacy() { # legacy NAME: strip the source table and owner from bronze.NAME's creating commit
  sed -i 's/,"mcdc.source_table":"[^"]*","mcdc.owner":"[^"]*"//' "$T/lake/bronze/$1/_delta_log/00000000000000000000.json"
  M table info "bronze.$1" | grep -q "mcdc.owner" && die "legacy $1: still has an owner"
  return 0
}
sim_exec 2026-10-01T14:06:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (6, 'f', 6.00, NULL)"
sim_capture 2026-10-01T14:06:01
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.lg --app-id lg \
  --checkpoint "$T/ck/lg" >/dev/null
legacy lg
tree > "$T/before.tree"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.lg \
  --app-id other --checkpoint "$T/ck/lg-other"
grep -q <<<"$err" "belongs to stream 'lg', not 'other'" || die "legacy owner message: $err"
unchanged "a second app id on a legacy bronze"
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.lg --app-id lg \
  --checkpoint "$T/ck/lg" >/dev/null || die "the legacy owner's stream failed"
M table info bronze.lg | grep -q "mcdc.owner = lg" || die "the legacy bronze's owner was not recorded"
# a legacy bronze that already holds batches of two app ids is refused, --adopt too
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.tw --app-id tw \
  --checkpoint "$T/ck/tw" >/dev/null
legacy tw
printf '{"txn":{"appId":"tw2","version":0}}\n' >> "$T/lake/bronze/tw/_delta_log/00000000000000000001.json"
tree > "$T/before.tree"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.tw \
  --app-id tw --checkpoint "$T/ck/tw"
grep -q <<<"$err" "holds batches of two streams, 'tw' and 'tw2'" || die "two owners message: $err"
expect 2 M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.tw \
  --app-id tw3 --checkpoint "$T/ck/tw3" --adopt
grep -q <<<"$err" "holds batches of two streams" || die "two owners adopt message: $err"
unchanged "a bronze of two owners"

echo "stream_ownership: ok"
