# mssql-cdc run: one table's capture instance disabled while it runs: that table is in
# state error in /metrics and on its --status line (with the reason), /readyz fails and
# names it, the other tables keep going (their bronze equals their change table), and
# SIGTERM still exits 0. (--status of tables without a control table: their state records
# hold control: null.)
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL'
sim_tables "$schema" "1, 'a', 1.00, NULL" t1 t2 t3
cat > run.yaml <<YAML
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  trigger: interval:500ms
tables:
  - source: shop
    include: ["dbo_*"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck/{ci}"
metrics:
  listen: 127.0.0.1:0
YAML
code() { curl -s -o "$T/ready.body" -w '%{http_code}' "$url/readyz"; }
"$MCDC_BIN" run --config run.yaml --workers 2 >run.out 2>&1 &
r=$!
url=$(metrics_url run.out)
for _ in $(seq 1 100); do [ "$(code)" = 200 ] && break; sleep 0.1; done
[ "$(code)" = 200 ] || die "not ready: $(cat ready.body run.out)"

M sim disable "$DB" --capture-instance dbo_t2 >/dev/null
for i in 2 3 4; do
  for t in t1 t3; do
    M sim exec "$DB" "INSERT INTO dbo.$t (order_id, customer, amount, placed_at) VALUES ($i, 'b', 2.00, NULL)" >/dev/null
  done
  M sim capture "$DB" >/dev/null
  sleep 0.4
done
for _ in $(seq 1 50); do [ "$(code)" = 503 ] && break; sleep 0.1; done
[ "$(code)" = 503 ] || die "/readyz with t2 disabled: $(cat ready.body)"
grep -q "^bronze.t2: error: capture instance 'dbo_t2': not in" ready.body || die "/readyz body: $(cat ready.body)"
grep -q "bronze.t[13]" ready.body && die "/readyz names a table that runs: $(cat ready.body)"
curl -s "$url/metrics" > m.txt
grep -q '^mcdc_table_state{table="bronze.t2",state="error"} 1$' m.txt || die "/metrics state of t2: $(grep table_state m.txt)"
grep -q '^mcdc_table_state{table="bronze.t1",state="error"} 0$' m.txt || die "/metrics state of t1: $(grep table_state m.txt)"
f=$(sed -n 's/^mcdc_consecutive_failures{table="bronze.t2"} //p' m.txt)
[ "${f:-0}" -ge 1 ] || die "/metrics failures of t2: $f"
M run --config run.yaml --status > status.out
grep -q "^bronze.t2: error, .*capture instance 'dbo_t2': not in" status.out || die "--status: $(cat status.out)"
for _ in $(seq 1 50); do
  [ "$(M --warehouse lake table cat bronze.t1 --format jsonl | wc -l)" = 4 ] &&
    [ "$(M --warehouse lake table cat bronze.t3 --format jsonl | wc -l)" = 4 ] && break
  sleep 0.2
done
for t in t1 t3; do
  M sim query "$DB" "SELECT * FROM cdc.dbo_${t}_CT" --format jsonl > ct.jsonl
  M --warehouse lake table cat "bronze.$t" --format jsonl > bronze.jsonl
  $CHECK bronze-vs-ct ct.jsonl bronze.jsonl >/dev/null || die "bronze.$t did not keep going"
done
kill -TERM "$r"; rc=0; wait "$r" || rc=$?
[ "$rc" = 0 ] || die "run exited $rc: $(tail -5 run.out)"
echo PASS
