# mssql-cdc run keeps each interval table's job open across its rounds: the start-up checks
# run once per table (captured_columns, asked by the check, counted once per table in
# /metrics however many rounds read data), and the checkpoint stays locked between rounds,
# so a `stream` on it is refused while the table idles, naming the run's pid. Every bronze
# equals its change table, and the lock is free once the run has exited.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL'
for t in t1 t2 t3; do
  M sim init "$DB" --table "dbo.$t" --keys order_id --at 2026-10-01T13:59:00 --schema "$schema" >/dev/null
done
sim_capture 2026-10-01T13:59:30
cat > run.yaml <<YAML
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  trigger: interval:300ms
tables:
  - source: shop
    include: ["dbo_*"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck/{ci}"
metrics:
  listen: 127.0.0.1:0
YAML
"$MCDC_BIN" run --config run.yaml --workers 2 >run.out 2>&1 &
r=$!
url=$(metrics_url run.out)
ready() { curl -s -o "$T/ready.body" -w '%{http_code}' "$url/readyz"; }
for _ in $(seq 1 100); do [ "$(ready)" = 200 ] && break; sleep 0.1; done
[ "$(ready)" = 200 ] || die "not ready: $(cat ready.body run.out)"
rows() { M --warehouse lake table cat "bronze.$1" --format jsonl | wc -l; }
# four rounds with data for every table
for i in 1 2 3 4; do
  for t in t1 t2 t3; do
    M sim exec "$DB" "INSERT INTO dbo.$t (order_id, customer, amount, placed_at) VALUES ($i, 'c', 1.00, NULL)" >/dev/null
  done
  M sim capture "$DB" >/dev/null
  for _ in $(seq 1 100); do
    [ "$(rows t1)" = "$i" ] && [ "$(rows t2)" = "$i" ] && [ "$(rows t3)" = "$i" ] && break
    sleep 0.1
  done
  [ "$(rows t3)" = "$i" ] || die "round $i not read: $(tail -5 run.out)"
done
metric() { curl -s "$url/metrics" | sed -n "s/^mcdc_source_queries_total{source=\"shop\",query=\"$1\"} //p"; }
cols=$(metric captured_columns)
[ "$cols" = 3 ] || die "captured_columns asked $cols times for 3 tables over 4 rounds (the checks ran again)"
batches=$(curl -s "$url/metrics" | sed -n 's/^mcdc_batches_total{table="bronze.t1"} //p')
[ "${batches:-0}" -ge 4 ] || die "bronze.t1: $batches batches"
# between rounds the checkpoint is the run's
rc=0
M --warehouse lake stream --source sim:db.sqlite --capture-instance dbo_t1 --target bronze.t1 \
  --app-id dbo_t1 --checkpoint ck/dbo_t1 --trigger available-now >stream.out 2>&1 || rc=$?
[ "$rc" = 2 ] || die "a stream on a checkpoint of the run exited $rc: $(cat stream.out)"
grep -q "already locked by pid $r" stream.out || die "the refusal does not name the run: $(cat stream.out)"
for t in t1 t2 t3; do
  M sim query "$DB" "SELECT * FROM cdc.dbo_${t}_CT" --format jsonl > ct.jsonl
  M --warehouse lake table cat "bronze.$t" --format jsonl > bronze.jsonl
  $CHECK bronze-vs-ct ct.jsonl bronze.jsonl >/dev/null || die "bronze.$t differs from its change table"
done
kill -TERM "$r"; rc=0; wait "$r" || rc=$?
[ "$rc" = 0 ] || die "run exited $rc: $(tail -5 run.out)"
# after the run, the lock is free
M --warehouse lake stream --source sim:db.sqlite --capture-instance dbo_t1 --target bronze.t1 \
  --app-id dbo_t1 --checkpoint ck/dbo_t1 --trigger available-now >stream.out 2>&1 || die "stream after the run: $(cat stream.out)"
echo PASS
