# mssql-cdc run, as a service: idle tables of one source cost one max_lsn query per poll
# between them (counted by the simulator, which logs each max_lsn it answers at debug
# level, and by /metrics); every log line of a table's work carries the table (text and
# --log-format json); SIGHUP reloads the config: a table it adds starts, a table it drops
# stops, the others run on untouched (their counters go on, no new round); an invalid
# config on SIGHUP is refused and changes nothing; SIGTERM under a realtime workload exits
# 0 within the drain timeout and each table's verdict covers its last committed batch.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL'
sim_tables "$schema" "1, 'a', 1.00, NULL" t1 t2 t3 t4 t5
config() { # config EXCLUDED-INSTANCE
  cat > run.yaml <<YAML
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
    include: ["dbo_*"]
    exclude: ["$1"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck/{ci}"
metrics:
  listen: 127.0.0.1:0
YAML
}
config dbo_t5
metric() { curl -s "$url/metrics" | sed -n "s/^$1 //p"; }
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz")" = 200 ]; }

"$MCDC_BIN" --log-level debug run --config run.yaml --workers 2 >run.out 2>run.err &
r=$!
url=$(metrics_url run.err)
for _ in $(seq 1 100); do ready && break; sleep 0.1; done
ready || die "not ready: $(cat run.out run.err | tail -20)"
for t in t1 t2 t3 t4; do # every table has had its round
  for _ in $(seq 1 100); do grep -q "^bronze.$t: batch 0" run.out && break; sleep 0.1; done
  grep -q "^bronze.$t: batch 0" run.out || die "bronze.$t had no round: $(tail -20 run.err)"
done

# --- idle: one max_lsn per source per poll, whatever the number of tables -------------------
n_sim() { grep -c " sim .*query: max_lsn" run.err || true; }
n_metric() { metric 'mcdc_source_queries_total{source="shop",query="max_lsn"}'; }
# between_polls: sets L and Q to the simulator's max_lsn lines and /metrics' count, read
# between two polls: just after the count moved (a poll ended; the next is a poll interval
# away) and checked unmoved after the lines were counted. Read at any moment, a poll can
# fall between the two reads, or be logged (before it asks) and not yet counted (after).
between_polls() {
  local m0 m1 l
  m0=$(n_metric)
  for _ in $(seq 1 200); do
    m1=$(n_metric)
    if [ "$m1" != "$m0" ]; then
      l=$(n_sim)
      m0=$(n_metric)
      if [ "$m0" = "$m1" ]; then L=$l Q=$m1; return 0; fi
    fi
    sleep 0.05
  done
  die "idle: no max_lsn poll ended in 10 s"
}
between_polls; a=$L ma=$Q
ba=$(metric 'mcdc_batches_total{table="bronze.t1"}')
sleep 5
between_polls; b=$L mb=$Q
polls=$((b - a))
# 4 idle tables for 5 to 6 s at 1 s: 5 or 6 polls (one per source); one query per table: 20
[ "$polls" -ge 4 ] && [ "$polls" -le 7 ] || die "idle: $polls max_lsn queries in 5 s of 4 tables (want about 5)"
[ $((mb - ma)) = "$polls" ] || die "idle: /metrics counted $((mb - ma)) max_lsn queries, the simulator $polls"
[ "$(metric 'mcdc_batches_total{table="bronze.t1"}')" = "$ba" ] || die "idle: a round ran"

# --- every line of a table's work names the table -----------------------------------------
# (the lines of the run itself, logger "run", speak of no one table)
bad=$(grep -E '^[^ ]+ [A-Z]+ +[a-z]+' run.err | grep -vE '^[^ ]+ [A-Z]+ +[a-z]+ \[bronze\.t[1-4]\]: ' \
      | grep -vE '^[^ ]+ [A-Z]+ +run: ' | head -3 || true)
[ -z "$bad" ] || die "log lines without their table: $bad"
[ "$(grep -c ' sim \[bronze\.t[1-4]\]: query: max_lsn' run.err)" -gt 0 ] || die "no table on the simulator's lines"

# --- SIGHUP: t5 added, t4 dropped, t1..t3 untouched -----------------------------------------
st1=$(sed -n 's/.*"updated_at":"\([^"]*\)".*/\1/p' run-state/*t1*.json 2>/dev/null || true)
config dbo_t4
kill -HUP "$r"
for _ in $(seq 1 100); do grep -q "^bronze.t5: batch 0" run.out && break; sleep 0.1; done
grep -q "^bronze.t5: batch 0" run.out || die "reload: t5 did not start: $(tail -20 run.err)"
grep -q "reloaded: 3 tables kept, 1 started, 1 stopped" run.err || die "reload log: $(grep reload run.err)"
for _ in $(seq 1 30); do M run --config run.yaml --status | grep -q "^bronze.t4: stopped" && break; sleep 0.1; done
M run --config run.yaml --status > status.out
grep -q "^bronze.t4: stopped" status.out || die "reload: t4 not stopped: $(cat status.out)"
grep -q "removed from the config" status.out || die "reload: t4's line says nothing: $(cat status.out)"
curl -s "$url/metrics" > m.txt
grep -q 'table="bronze.t4"' m.txt && die "reload: t4 still in /metrics"
grep -q '^mcdc_batches_total{table="bronze.t5"} 1$' m.txt || die "reload: t5 not in /metrics: $(grep batches_total m.txt)"
grep -q "^mcdc_batches_total{table=\"bronze.t1\"} $ba\$" m.txt || die "reload: t1's counter restarted: $(grep batches_total m.txt)"
st1b=$(sed -n 's/.*"updated_at":"\([^"]*\)".*/\1/p' run-state/*t1*.json 2>/dev/null || true)
[ "$st1" = "$st1b" ] || die "reload: t1 had a round (its state was rewritten)"
# an invalid config is refused; the tables run on
printf 'sources: [\n' > run.yaml
kill -HUP "$r"
for _ in $(seq 1 50); do grep -q "reload refused" run.err && break; sleep 0.1; done
grep -q "reload refused, the tables run on as they were: .*run.yaml" run.err || die "bad reload: $(tail -5 run.err)"
kill -0 "$r" || die "a bad reload ended the run"
ready || die "a bad reload made the run unready"
config dbo_t4

# --- SIGTERM under a realtime workload -------------------------------------------------------
wls=()
for t in t1 t2 t3 t5; do
  "$MCDC_BIN" sim workload "$DB" --table "dbo.$t" --transactions 200 --interval 50ms --realtime \
    --capture-every 300ms --seed "${t#t}" >/dev/null &
  wls+=($!)
done
sleep 2.5
t0=$(date +%s%N)
kill -TERM "$r"
rc=0; wait "$r" || rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
for p in "${wls[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
[ "$rc" = 0 ] || die "run exited $rc after SIGTERM under load: $(tail -5 run.out)"
[ "$ms" -lt 30000 ] || die "SIGTERM took $ms ms"
M run --config run.yaml --status > status.out
for t in t1 t2 t3 t5; do
  line=$(grep "^bronze.$t: " status.out) || die "no status of $t: $(cat status.out)"
  # the last committed batch's end commit time, and the verdict reaching its minute
  end=$(sed -nE 's/.* ending 0x[0-9A-Fa-f]* \(([^)]*)\).*/\1/p' <<<"$line")
  [ -n "$end" ] || die "$t: no batch: $line"
  want=$(date -u -d "${end%.*}" +%Y-%m-%dT%H:%M:00)
  M --warehouse lake finalization is-final --control ops.control --table "bronze.$t" \
    --period-end "$want" >/dev/null 2>&1 || die "bronze.$t: the verdict does not cover its last batch ($end): $line"
done

# --- --log-format json: each line of a table carries "table" ---------------------------------
config dbo_t4
sed -i 's/interval:1s/available-now/' run.yaml
M --log-level debug --log-format json run --config run.yaml >json.out 2>json.err || die "json run: $(tail -3 json.err)"
n=$(grep -c '"logger":"sim"' json.err || true)
[ "$n" -gt 0 ] || die "json: no lines of the simulator"
node -e '
const lines = require("fs").readFileSync("json.err", "utf8").trim().split("\n").map(JSON.parse);
const work = lines.filter((l) => ["sim", "stream", "finalize", "silver"].includes(l.logger) && /max_lsn/.test(l.msg));
const bare = work.filter((l) => !/^bronze\.t[1-5]$/.test(l.table || ""));
if (!work.length || bare.length) { console.error("lines without a table:", JSON.stringify(bare.slice(0, 3))); process.exit(1); }
' || die "json log lines without their table"
echo PASS
