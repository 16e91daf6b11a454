# mssql-cdc run checks every table before anything is written, on several threads at once
# (the start-up checks of a plan of many tables): 8 tables with --workers 4 (8 check
# threads), then the same plan with two tables refused by their checks (their targets are
# the facts and the control table). Each time: exit 2 naming the first refused table in the
# plan's order (its line), never the second, and nothing written for any table (no new
# checkpoint, no bronze version). The accepted plan logs that its 8 tables were checked.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
schema='order_id INT NOT NULL, amount DECIMAL(12,2) NULL'
tables="1 2 3 4 5 6 7 8"
for i in $tables; do
  M sim init "$DB" --table "dbo.t$i" --keys order_id --at 2026-10-01T13:59:00 --schema "$schema" >/dev/null
done
for i in $tables; do
  M sim exec "$DB" --at "2026-10-01T13:59:1$i" "INSERT INTO dbo.t$i VALUES (1, 1.00)" >/dev/null
done
M sim capture "$DB" --at 2026-10-01T13:59:30 >/dev/null
config() { # config: run.yaml, table I's target and app id from target_I / app_I when set
  {
    echo "warehouse: lake"
    echo "sources:"
    echo "  s: {source: \"sim:db.sqlite\"}"
    echo "defaults: {trigger: available-now, facts: ops.facts, control: ops.control}"
    echo "tables:"
    local i tv av
    for i in $tables; do
      tv="target_$i"; av="app_$i"
      echo "  - {source: s, capture_instance: dbo_t$i, target: ${!tv:-bronze.t$i}, app_id: ${!av:-t$i}, checkpoint: ck/${!av:-t$i}}"
    done
  } > run.yaml
}
config
M --log-level debug run --config run.yaml --workers 4 >run.out 2>run.err || die "run: $(cat run.err)"
grep -q "^run: 8 tables, 0 stopped in error" run.out || die "run: $(cat run.out)"
grep -q "8 tables checked in [0-9]* ms" run.err || die "no check line: $(grep -v 'query:' run.err | head -5)"

state() { # what the run wrote: the checkpoints and the bronze versions
  ls ck
  for i in $tables; do ls "lake/bronze/t$i/_delta_log"; done
}
before=$(state)
# table 2 (line 7) and table 3 (line 8) are refused by their checks: both are handed out
# before either fails
target_2=ops.facts app_2=x2 target_3=ops.control app_3=x3 config
for k in 1 2 3 4 5; do
  rc=0
  M run --config run.yaml --workers 4 >out 2>err || rc=$?
  [ "$rc" = 2 ] || die "try $k: exit $rc, want 2: $(cat err)"
  grep -q "table ops.facts (line 7): .*is a facts table, not a bronze table" err || die "try $k: $(cat err)"
  grep -q "ops.control" err && die "try $k: named the second refused table: $(cat err)"
  [ "$(state)" = "$before" ] || die "try $k: a refused plan wrote something"
done
echo PASS
