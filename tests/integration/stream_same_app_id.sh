# Two streams with one app id on two checkpoints, started together (architecture §3.10):
# bronze commit N records its range (start_lsn, end_lsn), and a batch N found already in
# bronze counts as the stream's own only when that range is the one its offsets/N
# recorded. Twenty trials of each race: exactly one stream exits 0, the other exits 3
# having written nothing (no bronze or facts commit, no commits/0), and bronze holds every
# change exactly once. Before, each took the other's txn version 0 as "already committed"
# and skipped its own, different range: rows doubled and rows missing, both exit 0.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
for i in 1 2 3; do
  sim_exec "2026-10-01T14:00:0$i" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($i, 'c$i', $i.00, NULL); UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = $i"
done
sim_capture 2026-10-01T14:00:05

# run APP CK [ARGS...]: a stream of app id APP into bronze.APP with checkpoint CK
run() {
  local app=$1 ck=$2; shift 2
  M stream --source "sim:$DB" --capture-instance dbo_orders --target "bronze.$app" \
    --app-id "$app" --checkpoint "$ck" --facts ops.facts "$@"
}
versions() { ls "$MSSQL_CDC_WAREHOUSE/$1/_delta_log" 2>/dev/null | grep -c '\.json$' || true; }

# trial KIND APP: A reads (earliest, max_lsn] as batch 0, B with two commits per batch
# (earliest, second commit]; "replay" records both ranges first (a crash after offsets/0),
# "fresh" starts both from nothing.
trial() {
  local kind=$1 app=$2 a="$T/ck/$2.a" b="$T/ck/$2.b"
  if [ "$kind" = replay ]; then
    set +e
    MCDC_FAILPOINT=stream.after_offsets run "$app" "$a" >/dev/null 2>&1
    MCDC_FAILPOINT=stream.after_offsets run "$app" "$b" --max-commits-per-batch 2 >/dev/null 2>&1
    set -e
    [ -e "$a/offsets/0" ] && [ -e "$b/offsets/0" ] || die "$app: offsets/0 not recorded"
  fi
  set +e
  run "$app" "$a" --trigger once >"$T/$app.a.out" 2>&1 &
  local pa=$!
  run "$app" "$b" --trigger once --max-commits-per-batch 2 >"$T/$app.b.out" 2>&1 &
  local pb=$!
  wait $pa; local ra=$?
  wait $pb; local rb=$?
  set -e
  local win loser rl
  if [ $ra = 0 ] && [ $rb != 0 ]; then win=a loser=b rl=$rb
  elif [ $rb = 0 ] && [ $ra != 0 ]; then win=b loser=a rl=$ra
  else die "$app ($kind): exits $ra and $rb, want one 0 and one 3: $(cat "$T/$app.a.out" "$T/$app.b.out")"
  fi
  local msg; msg=$(cat "$T/$app.$loser.out")
  if [ $rl = 3 ]; then
    grep -q "another stream with the same app_id writes to this table" <<<"$msg" || die "$app ($kind, exit $rl): message: $msg"
    grep -q "hint: nothing of this batch was written" <<<"$msg" || die "$app ($kind, exit $rl): hint: $msg"
    n3=$((n3 + 1))
  elif [ "$kind" = fresh ] && [ $rl = 2 ]; then
    # started only after the winner's commit: refused at start, before any read
    grep -Eq "already holds batches of app_id '$app'|holds facts of batch 0 of app_id '$app'" <<<"$msg" \
      || die "$app ($kind, exit $rl): message: $msg"
    n2=$((n2 + 1))
  else
    die "$app ($kind): the loser exited $rl: $msg"
  fi
  [ ! -e "$T/ck/$app.$loser/commits/0" ] || die "$app: the refused stream recorded commits/0"
  # bronze: one commit (the winner's batch 0), every row once; facts: one row of app
  [ "$(versions "bronze/$app")" = 2 ] || die "$app: bronze has $(versions "bronze/$app") versions"
  cat_table ops.facts "$T/f.jsonl"
  [ "$($CHECK count "$T/f.jsonl" app_id="$app")" = 1 ] || die "$app: facts rows of the refused stream"
  # the winner goes on to the end: bronze is the change table, each change once
  if [ $win = b ]; then run "$app" "$b" --max-commits-per-batch 2 >/dev/null; fi
  check_bronze "bronze.$app" ops.facts "$app"
  # the refused one stays refused, and still writes nothing
  set +e
  if [ $loser = a ]; then run "$app" "$a" >/dev/null 2>&1; else run "$app" "$b" --max-commits-per-batch 2 >/dev/null 2>&1; fi
  local again=$?
  set -e
  [ $again = 2 ] || [ $again = 3 ] || die "$app: the refused stream's rerun exited $again"
  [ ! -e "$T/ck/$app.$loser/commits/0" ] || die "$app: the rerun recorded commits/0"
}

n3=0 n2=0
for i in $(seq 1 20); do trial replay "r$i"; done
[ $n3 = 20 ] || die "replay race: $n3 of 20 losers exited 3"
for i in $(seq 1 20); do trial fresh "f$i"; done
echo "ok (fresh race: $((n3 - 20)) refused at the commit, $n2 at start)"
