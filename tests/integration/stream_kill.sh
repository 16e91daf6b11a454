# 20 random kill -9 of an interval stream following a --realtime simulator workload, then
# one last run: bronze holds every change of the change table once, facts match bronze.
. "$(dirname "$0")/stream_lib.bash"
RT=$T/rt.sqlite
M sim init "$RT" --table dbo.orders --keys order_id --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
M sim workload "$RT" --table dbo.orders --transactions 300 --seed 7 --interval 10ms --rows-per-transaction 3 --capture-every 50ms --realtime >/dev/null 2>&1 &
wl=$!
DB=$RT
for k in $(seq 1 20); do
  "$MCDC_BIN" stream --source "sim:$RT" --capture-instance dbo_orders --target bronze.rt \
    --app-id rt --checkpoint "$T/ck/rt" --facts ops.facts --trigger interval:50ms >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 3 + 1))"
  kill -9 $pid 2>/dev/null || true
  wait $pid 2>/dev/null || true
done
wait $wl
M sim capture "$RT" >/dev/null
stream rt >/dev/null || die "the final run after 20 kills failed"
check_bronze bronze.rt ops.facts rt
echo "ok"
