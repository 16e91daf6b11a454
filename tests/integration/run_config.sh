# mssql-cdc run --config: several tables of one simulated database in one process (an
# explicit table with silver, the others from an include pattern; the heartbeat's instance
# left out), under a realtime workload on all of them, one kill -9 and a restart, then
# SIGTERM: exit 0 within the drain timeout, every bronze equals its change table, every
# table has a verdict, silver equals its source. Config errors exit 2 naming the key and
# its line and write nothing; --check prints the plan and writes nothing.
. "$(dirname "$0")/stream_lib.bash"
SCHECK="node $MCDC_SRC/tests/integration/silver_check.mjs"
cd "$T"
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL'
for t in orders items users cdc_heartbeat; do
  M sim init "$DB" --table "dbo.$t" --keys order_id --at 2026-10-01T13:59:00 --schema "$schema" >/dev/null
done
sim_capture 2026-10-01T13:59:30
unset MSSQL_CDC_WAREHOUSE

cat > run.yaml <<'YAML'
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  trigger: interval:1s
  granularity: minute
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.orders
    app_id: orders-v1
    checkpoint: ck/orders
    silver: silver.orders
  - source: shop
    include: ["dbo_*"]
    exclude: ["dbo_users_old"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck/{ci}"
YAML

# --- config errors: exit 2, naming the key and its line; nothing written -------------------
expect_usage() { # expect_usage FILE PATTERN
  local out rc=0
  out=$(M run --config "$1" 2>&1) || rc=$?
  [ "$rc" = 2 ] || die "$1: exit $rc, want 2: $out"
  grep -q -- "$2" <<<"$out" || die "$1: '$2' not in: $out"
  [ ! -e lake ] && [ ! -e ck ] || die "$1: a refused config wrote something"
}
sed 's/^    silver: silver.orders/    silvr: silver.orders/' run.yaml > bad1.yaml
expect_usage bad1.yaml "bad1.yaml line 15: unknown key 'silvr' in a table"
sed 's/^defaults:/defaultz:/' run.yaml > bad2.yaml
expect_usage bad2.yaml "bad2.yaml line 4: unknown key 'defaultz'"
sed 's/"bronze.{table}"/bronze.orders/' run.yaml > bad3.yaml
expect_usage bad3.yaml "target bronze.orders is also the target of the table at line 10"
sed 's/trigger: interval:1s/trigger: sometimes/' run.yaml > bad4.yaml
expect_usage bad4.yaml "bad4.yaml line 7: trigger"
sed 's/capture_instance: dbo_orders/capture_instance: dbo_nope/' run.yaml > bad5.yaml
expect_usage bad5.yaml "line 11: capture_instance: dbo_nope is not a capture instance of source shop"
sed 's/"{ci}"/"{cii}"/' run.yaml > bad6.yaml
expect_usage bad6.yaml "line 20: app_id: unknown template '{cii}'"
printf 'sources:\n  shop: {source: "sim:db.sqlite"\ntables: []\n' > bad7.yaml
expect_usage bad7.yaml "bad7.yaml line 3"
rc=0; out=$(M run --config nothere.yaml 2>&1) || rc=$?
[ "$rc" = 2 ] && grep -q "nothere.yaml" <<<"$out" || die "missing config: exit $rc: $out"
sed 's/sim:db.sqlite/odbc:Driver=FreeTDS;Server=127.0.0.1;Port=1;Database=x;UID=u;PWD=p;Encrypt=no/' run.yaml > unreachable.yaml
rc=0; out=$(M run --config unreachable.yaml --check 2>&1) || rc=$?
[ "$rc" = 3 ] || die "unreachable source: exit $rc, want 3: $out"
grep -q "source shop" <<<"$out" || die "unreachable source not named: $out"
grep -q "PWD=p" <<<"$out" && die "a password was printed: $out"

# --- --check: the plan, nothing written ----------------------------------------------------
out=$(M run --config run.yaml --check) || die "--check: $out"
grep -q "^table bronze.orders: source shop, capture instance dbo_orders, app_id orders-v1, checkpoint ck/orders, .*silver silver.orders" <<<"$out" || die "--check plan: $out"
grep -q "^table bronze.items: .*capture instance dbo_items, app_id dbo_items, checkpoint ck/dbo_items" <<<"$out" || die "--check include: $out"
grep -q "heartbeat" <<<"$out" && die "the heartbeat's instance was included: $out"
[ "$(grep -c '^table ' <<<"$out")" = 3 ] || die "--check: want 3 tables: $out"
grep -q "3 tables from 1 source, warehouse lake: ok" <<<"$out" || die "--check summary: $out"
[ ! -e lake ] && [ ! -e ck ] || die "--check wrote something"

# --- a realtime workload on every table, one kill -9, a restart, SIGTERM ----------------------
wls=()
for t in orders items users; do
  "$MCDC_BIN" sim workload "$DB" --table "dbo.$t" --transactions 25 --interval 200ms --realtime \
    --capture-every 500ms --seed "${#t}" >/dev/null &
  wls+=($!)
done
"$MCDC_BIN" run --config run.yaml --workers 2 >run1.out 2>&1 &
r=$!
sleep 2.5
kill -9 "$r"; wait "$r" 2>/dev/null || true
grep -q "batch" run1.out || die "no batch before the kill: $(cat run1.out)"
"$MCDC_BIN" run --config run.yaml --workers 2 --drain-timeout 20s >run2.out 2>&1 &
r=$!
for p in "${wls[@]}"; do wait "$p" || die "a workload failed"; done
M sim capture "$DB" >/dev/null 2>&1 || true
n_ct() { M sim query "$DB" "SELECT COUNT(*) AS n FROM cdc.dbo_$1_CT" --format jsonl | sed -E 's/.*:([0-9]+).*/\1/'; }
n_bronze() { M --warehouse lake table cat "bronze.$1" --format jsonl 2>/dev/null | wc -l; }
for _ in $(seq 1 60); do
  caught=1
  for t in orders items users; do [ "$(n_ct $t)" = "$(n_bronze $t)" ] || caught=0; done
  [ "$caught" = 1 ] && break
  sleep 0.5
done
[ "$caught" = 1 ] || die "bronze did not catch up: $(cat run2.out)"
sleep 1.5 # a round after the last batch, so the verdicts follow it
t0=$(date +%s%N)
kill -TERM "$r"
rc=0; wait "$r" || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$rc" = 0 ] || die "run exited $rc after SIGTERM: $(cat run2.out)"
[ "$ms" -lt 20000 ] || die "SIGTERM took $ms ms"
grep -q "^run: 3 tables, 0 stopped in error" run2.out || die "run summary: $(cat run2.out)"

for t in orders items users; do
  M sim query "$DB" "SELECT * FROM cdc.dbo_${t}_CT" --format jsonl > ct.jsonl
  M --warehouse lake table cat "bronze.$t" --format jsonl > bronze.jsonl
  $CHECK bronze-vs-ct ct.jsonl bronze.jsonl >/dev/null || die "bronze.$t differs from its change table"
  M --warehouse lake table cat ops.facts --format jsonl > facts.jsonl
  app=$([ $t = orders ] && echo orders-v1 || echo "dbo_$t")
  M --warehouse lake finalization show --control ops.control --table "bronze.$t" >/dev/null \
    || die "no verdict for bronze.$t"
  last=$(sed -E 's/.*"_commit_ts":"([^"]*)".*/\1/' bronze.jsonl | sort | tail -1)
  want=$(date -u -d "${last%.*}" +%Y-%m-%dT%H:%M:00)
  M --warehouse lake finalization is-final --control ops.control --table "bronze.$t" \
    --period-end "$want" >/dev/null 2>&1 || die "bronze.$t: the verdict does not reach $want"
done
M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl > src.jsonl
M --warehouse lake table cat silver.orders --format jsonl > silver.jsonl
$SCHECK silver-vs-source silver.jsonl src.jsonl >/dev/null || die "silver.orders differs from dbo.orders"
echo PASS
