# mssql-cdc run --metrics-listen: /metrics parses with an independent Prometheus text
# parser and its counters agree with bronze and the facts table; /healthz answers while
# the process runs; /readyz names a table that has not had a successful round (its
# checkpoint held by another process, whose pid the error names) and turns ready when it
# has; --status shows the same error.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
sim_setup
M sim init "$DB" --table dbo.items --keys order_id --at 2026-10-01T13:59:40 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
unset MSSQL_CDC_WAREHOUSE
for i in 1 2 3; do
  sim_exec "2026-10-01T14:00:${i}0" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($i, 'c', 1.00, NULL)"
  sim_exec "2026-10-01T14:00:${i}5" "INSERT INTO dbo.items (order_id, customer, amount, placed_at) VALUES ($i, 'c', 1.00, NULL), ($i$i, 'd', 2.00, NULL)"
done
sim_capture 2026-10-01T14:00:50
cat > run.yaml <<YAML
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  trigger: interval:1s
tables:
  - source: shop
    include: ["dbo_*"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck/{ci}"
metrics:
  listen: 127.0.0.1:0
YAML
# another process holds the checkpoint of items
: > holder.out
"$MCDC_BIN" --warehouse lake stream --source sim:db.sqlite --capture-instance dbo_items --target bronze.items \
  --app-id dbo_items --checkpoint ck/dbo_items --trigger interval:1s >holder.out 2>&1 &
holder=$!
for _ in $(seq 1 50); do grep -q "batch 0" holder.out && break; sleep 0.1; done
"$MCDC_BIN" run --config run.yaml >run.out 2>&1 &
r=$!
url=$(metrics_url run.out)
ready() { curl -s -o "$T/ready.body" -w '%{http_code}' "$url/readyz"; }
for _ in $(seq 1 50); do grep -q "bronze.items: .*locked" run.out && break; sleep 0.1; done
[ "$(curl -s "$url/healthz")" = ok ] || die "/healthz: $(cat run.out)"
code=$(ready)
[ "$code" = 503 ] || die "/readyz with items locked: $code $(cat ready.body)"
grep -q "^bronze.items: no successful round yet: .*locked by pid $holder" ready.body || die "/readyz body: $(cat ready.body)"
grep -q "bronze.orders" ready.body && die "/readyz names a ready table: $(cat ready.body)"
M run --config run.yaml --status | grep -q "^bronze.items: backoff, .*locked by pid $holder" \
  || die "--status of the locked table: $(M run --config run.yaml --status)"
kill -TERM "$holder"; wait "$holder" || die "the holder exited $?"
for _ in $(seq 1 100); do [ "$(ready)" = 200 ] && break; sleep 0.1; done
[ "$(ready)" = 200 ] || die "/readyz after the lock is free: $(cat ready.body) $(cat run.out)"
sleep 1.2
node "$MCDC_SRC/tests/integration/run_metrics.mjs" "$url/metrics" > metrics.json || die "/metrics does not parse"
kill -TERM "$r"; wait "$r" || die "run exited $?: $(cat run.out)"
# the counters count this process's batches: orders all its rows, items what the holder left
M --warehouse lake table cat ops.facts --format jsonl > facts.jsonl
M --warehouse lake table cat bronze.orders --format jsonl > orders.jsonl
node -e '
const fs = require("fs");
const m = JSON.parse(fs.readFileSync("metrics.json", "utf8"));
const facts = fs.readFileSync("facts.jsonl", "utf8").trim().split("\n").map(JSON.parse);
const orders = fs.readFileSync("orders.jsonl", "utf8").trim().split("\n").length;
const fail = (s) => { console.error("FAIL: " + s); process.exit(1); };
if (m.mcdc_rows_total["bronze.orders"] !== orders) fail(`rows_total orders ${m.mcdc_rows_total["bronze.orders"]}, bronze has ${orders}`);
const byHolder = facts.filter((f) => f.app_id === "dbo_items" && f.batch_id === 0).reduce((a, f) => a + f.rows, 0);
const items = facts.filter((f) => f.app_id === "dbo_items").reduce((a, f) => a + f.rows, 0);
if (m.mcdc_rows_total["bronze.items"] !== items - byHolder) fail(`rows_total items ${m.mcdc_rows_total["bronze.items"]}, facts say ${items - byHolder}`);
if (m.mcdc_batches_total["bronze.orders"] !== facts.filter((f) => f.app_id === "dbo_orders").length) fail("batches_total orders");
if (m.mcdc_batch_duration_seconds["bronze.orders"] !== m.mcdc_batches_total["bronze.orders"]) fail("histogram count");
if (m.mcdc_table_state["bronze.orders/idle"] + m.mcdc_table_state["bronze.orders/running"] !== 1) fail("state of orders");
if (!(m.mcdc_table_failures_total["bronze.items"] >= 1)) fail("failures of items");
if (!(m.process_resident_memory_bytes[""] > 0)) fail("rss");
// bytes read and retention headroom: the facts rows of the batches this process wrote
const mine = facts.filter((f) => f.app_id === "dbo_orders" && f.event == null);
const readBytes = mine.reduce((a, f) => a + f.read_mb * 1e6, 0);
if (!(mine.length > 0 && Math.abs(m.mcdc_bytes_total["bronze.orders"] - readBytes) < mine.length)) fail(`bytes_total orders ${m.mcdc_bytes_total["bronze.orders"]}, facts read_mb say ${readBytes}`);
const last = mine.sort((a, b) => a.batch_id - b.batch_id).at(-1);
if (m.mcdc_retention_headroom_hours["bronze.orders"] !== last.retention_headroom_hours) fail(`headroom ${m.mcdc_retention_headroom_hours["bronze.orders"]}, facts ${last.retention_headroom_hours}`);
// per source: the queries asked of shop (max_lsn among them); none failed (a checkpoint
// held by another process is not an error of the source)
if (!(m.mcdc_source_queries_total["shop/max_lsn"] >= 1 && m.mcdc_source_queries_total["shop/read_changes"] >= 1)) fail("source queries");
if (m.mcdc_source_errors_total["shop"] !== 0) fail(`source errors ${m.mcdc_source_errors_total["shop"]}`);
' || die "metrics disagree with the tables: $(cat metrics.json)"
echo PASS
