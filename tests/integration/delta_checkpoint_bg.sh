# Background checkpoints (docs/decisions/0016-background-checkpoints.md): a stream killed
# inside the background checkpoint writer (before it reads the table, and between the
# checkpoint file and _last_checkpoint) leaves bronze and facts readable with
# _last_checkpoint absent or naming a complete checkpoint; the next writer, another
# process, writes the checkpoint that was due; nothing lost, nothing doubled.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
orders() { # FIRST LAST: one source commit per order, a minute apart, captured
  for i in $(seq "$1" "$2"); do
    sim_exec "2026-10-01T14:$i:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($i, 'c$i', $i.25, NULL)"
  done
  sim_capture "2026-10-01T14:$2:30"
}
orders 10 21

last_cp() { # TABLE-DIR: the version in _last_checkpoint, or "none"
  local f=$1/_delta_log/_last_checkpoint
  if [ -f "$f" ]; then sed -E 's/.*"version":([0-9]+).*/\1/' "$f"; else echo none; fi
}

apps=() next=22
for fp in delta.checkpoint.background delta.checkpoint.before_last_checkpoint; do
  app="k${fp//./_}"
  set +e
  MCDC_FAILPOINT="$fp" stream "$app" --max-commits-per-batch 1 >/dev/null 2>&1
  rc=$?
  set -e
  [ $rc = 137 ] || die "$fp: expected SIGKILL (137) in the background writer, got $rc"
  b=$MSSQL_CDC_WAREHOUSE/bronze/$app
  [ "$(last_cp "$b")" = none ] || die "$fp: _last_checkpoint written before the crash point"
  if [ $fp = delta.checkpoint.background ]; then
    ! ls "$b"/_delta_log/*.checkpoint.parquet >/dev/null 2>&1 || die "$fp: a checkpoint file before the crash point"
  fi
  M table info "bronze.$app" >/dev/null || die "$fp: bronze unreadable after the crash"
  M table info ops.facts >/dev/null || die "$fp: facts unreadable after the crash"
  # Two more source commits, so that the rerun has batches to commit: the worker runs at
  # nice 10 and may reach its failpoint only at exit, after the run's last batch, and a
  # rerun with nothing to commit asks for no checkpoint (ADR 0016: the next commit asks).
  orders $next $((next + 1))
  next=$((next + 2))
  # the next writer, in another process, writes the checkpoint that was due
  stream "$app" --max-commits-per-batch 1 >/dev/null || die "$fp: the rerun failed"
  v=$(last_cp "$b")
  [ "$v" != none ] && [ "$v" -ge 10 ] || die "$fp: no checkpoint at or after version 10 after the rerun ($v)"
  [ -f "$b/_delta_log/$(printf %020d "$v").checkpoint.parquet" ] || die "$fp: _last_checkpoint names a missing file"
  M table info "bronze.$app" --format json | grep -q "\"checkpointVersion\":$v" || die "$fp: the reader does not use checkpoint $v"
  apps+=("$app")
done
checks=()
for app in "${apps[@]}"; do # each stream catches up with the commits added after its rerun
  stream "$app" >/dev/null || die "$app: the last run failed"
  cat_table "bronze.$app" "$T/$app.jsonl"
  checks+=("$app=$T/$app.jsonl")
done
ct_rows "$T/ct.jsonl"
cat_table ops.facts "$T/facts.jsonl"
$CHECK many "$T/ct.jsonl" "$T/facts.jsonl" "${checks[@]}" >/dev/null || die "a crash lost or doubled changes"
echo "ok"
