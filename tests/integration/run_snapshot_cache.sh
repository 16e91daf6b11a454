# mssql-cdc run sizes the process's snapshot cache to the tables it commits to: 12 tables
# (more than the cache's default of 8) with shared facts and control tables, one
# available-now run: each bronze table's log is read once (by its check), its round and its
# verdict take the cached snapshot (counted with strace: the opens of each table's first
# commit). With the default of 8 the tables evicted each other between a table's check and
# its round, and every open read the log again; MCDC_SNAPSHOT_CACHE still wins.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE MCDC_SNAPSHOT_CACHE
command -v strace >/dev/null || die "strace is needed (scripts/install-deps installs it)"
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL'
n=12
for i in $(seq 1 $n); do
  M sim init "$DB" --table "dbo.t$i" --keys order_id --at 2026-10-01T13:59:00 --schema "$schema" >/dev/null
done
for i in $(seq 1 $n); do
  sim_exec 2026-10-01T13:59:10 "INSERT INTO dbo.t$i (order_id, customer) VALUES ($i, 'c$i')"
done
sim_capture 2026-10-01T13:59:15
cat > run.yaml <<YAML
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
tables:
  - source: shop
    include: ["dbo_*"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck/{ci}"
YAML
opens() { # opens TRACE TABLE: how often the table's first commit was opened for reading
  grep -c "bronze/$2/_delta_log/00000000000000000000.json\", O_RDONLY" "$1" || true
}
M run --config run.yaml --workers 2 >run0.out 2>&1 || die "first run: $(tail -5 run0.out)"
# the tables exist now: a new process opens each of them from its log
for i in $(seq 1 $n); do sim_exec 2026-10-01T13:59:20 "INSERT INTO dbo.t$i (order_id, customer) VALUES ($((i + 50)), 'b')"; done
sim_capture 2026-10-01T13:59:25
strace -f -qq -e trace=openat -o trace.txt "$MCDC_BIN" run --config run.yaml --workers 2 >run.out 2>&1 ||
  die "run: $(tail -5 run.out)"
grep -q "^run: $n tables, 0 stopped in error" run.out || die "run: $(cat run.out)"
for i in $(seq 1 $n); do
  k=$(opens trace.txt "t$i")
  [ "$k" = 1 ] || die "bronze.t$i's log read $k times in one run (want 1: the cache holds all $n tables)"
done
# the operator's setting wins: a cache of 2 reads the logs again
for i in $(seq 1 $n); do sim_exec 2026-10-01T13:59:40 "INSERT INTO dbo.t$i (order_id, customer) VALUES ($((i + 100)), 'd')"; done
sim_capture 2026-10-01T13:59:50
MCDC_SNAPSHOT_CACHE=2 strace -f -qq -e trace=openat -o trace2.txt "$MCDC_BIN" run --config run.yaml --workers 2 >run2.out 2>&1 ||
  die "run with MCDC_SNAPSHOT_CACHE=2: $(tail -5 run2.out)"
again=0
for i in $(seq 1 $n); do [ "$(opens trace2.txt "t$i")" -ge 2 ] && again=$((again + 1)); done
[ "$again" -ge $((n / 2)) ] || die "with MCDC_SNAPSHOT_CACHE=2 only $again of $n logs were read again"
echo PASS
