# mssql-cdc run: a table whose changes were purged before they were read stops alone
# (state error, exit 4) while the others go on, unless on_error: stop-all; run --status
# prints each table's state, last batch, verdict and error from disk, with no server.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
sim_setup
M sim init "$DB" --table dbo.items --keys order_id --at 2026-10-01T13:59:40 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
unset MSSQL_CDC_WAREHOUSE
ins() { sim_exec "$1" "INSERT INTO dbo.$2 (order_id, customer, amount, placed_at) VALUES ($3, 'c', 1.00, NULL)"; }
cat > run.yaml <<'YAML'
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  granularity: day
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.orders
    app_id: orders
    checkpoint: ck/orders
  - source: shop
    capture_instance: dbo_items
    target: bronze.items
    app_id: items
    checkpoint: ck/items
YAML

out=$(M run --config run.yaml --status) || die "--status before any run: $out"
grep -q "no table of run.yaml has run yet" <<<"$out" || die "--status before any run: $out"

ins 2026-10-01T14:00:00 orders 1
ins 2026-10-01T14:00:01 items 1
sim_capture 2026-10-01T14:00:30
out=$(M run --config run.yaml --workers 1) || die "first run: $out"
out=$(M run --config run.yaml --status) || die "--status: $out"
grep -q "^bronze.orders: stopped, batch 0 ending 0x.*(2026-10-01T14:00:01.000), finalized_until 2026-10-01T00:00:00, updated .* by pid [0-9]* (exited)$" <<<"$out" \
  || die "--status after the first run: $out"

# day 2 for both, read for items only; day 5 for both; cleanup keeps one day
ins 2026-10-02T14:00:00 orders 2
ins 2026-10-02T14:00:01 items 2
sim_capture 2026-10-02T14:00:30
M --warehouse lake stream --source sim:db.sqlite --capture-instance dbo_items --target bronze.items \
  --app-id items --checkpoint ck/items --facts ops.facts --control ops.control --granularity day >/dev/null
ins 2026-10-05T14:00:00 orders 3
ins 2026-10-05T14:00:01 items 3
sim_capture 2026-10-05T14:00:30
M sim cleanup "$DB" --retention 1d --at 2026-10-05T14:00:40 >/dev/null

# on_error: stop-all: the data loss of orders (run first with one worker) stops items too
sed 's/^tables:/on_error: stop-all\ntables:/' run.yaml > all.yaml
rc=0; out=$(M run --config all.yaml --workers 1 2>&1) || rc=$?
[ "$rc" = 4 ] || die "stop-all: exit $rc, want 4: $out"
grep -q "bronze.items: batch" <<<"$out" && die "stop-all: items ran after orders' data loss: $out"

# stop-table (the default): orders stops, items goes on
rc=0; out=$(M run --config run.yaml --workers 1 2>&1) || rc=$?
[ "$rc" = 4 ] || die "data loss: exit $rc, want 4: $out"
grep -q "mssql-cdc: error: bronze.orders: stopped: dbo_orders: change data from 0x" <<<"$out" || die "error line: $out"
grep -q "^bronze.items: batch 2: 1 rows" <<<"$out" || die "items did not go on: $out"
grep -q "^run: 2 tables, 1 stopped in error" <<<"$out" || die "summary: $out"
out=$(M run --config run.yaml --status) || die "--status: $out"
grep -q "^bronze.orders: error, batch 0 ending .*: dbo_orders: change data from 0x.*purged by CDC cleanup" <<<"$out" \
  || die "--status of the table in error: $out"
grep -q "^bronze.items: stopped, batch 2 ending .*(2026-10-05T14:00:01.000), finalized_until 2026-10-05T00:00:00, updated .* (exited)$" <<<"$out" \
  || die "--status of the table that went on: $out"
# a state record that is not one is named
echo '{}' > run-state/bronze.bad.json
rc=0; out=$(M run --config run.yaml --status 2>&1) || rc=$?
[ "$rc" = 3 ] && grep -q "run-state/bronze.bad.json: not a state record" <<<"$out" || die "corrupt state: exit $rc: $out"
echo PASS
