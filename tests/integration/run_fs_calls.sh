# The file-system calls a table's round pays in mssql-cdc run once its directories exist
# (counted with strace over a second run of the same tables): the checkpoint's, bronze's
# and the state directory's directories are found with one stat each, so the round makes
# no mkdir at all (it made 12 a table before, every one failing with EEXIST, each with its
# stat), and every table still commits its batch.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
command -v strace >/dev/null || die "strace is needed (scripts/install-deps installs it)"
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL'
sim_tables "$schema" "1, 'a', 1.00" t1 t2 t3
cat > run.yaml <<YAML
warehouse: lake
state_dir: st
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
M run --config run.yaml --workers 2 >run1.out 2>&1 || die "first run: $(tail -5 run1.out)"
for t in t1 t2 t3; do
  sim_exec 2026-10-01T14:00:10 "INSERT INTO dbo.$t (order_id, customer, amount) VALUES (2, 'b', 2.00)"
done
sim_capture 2026-10-01T14:00:30
strace -f -qq -e trace=mkdir,mkdirat,renameat2,rename -o trace.txt "$MCDC_BIN" run --config run.yaml --workers 2 >run2.out 2>&1 ||
  die "second run: $(tail -5 run2.out)"
grep -q "^run: 3 tables, 0 stopped in error" run2.out || die "second run: $(cat run2.out)"
# the round did commit: a bronze commit a table
commits=$(grep -cE 'rename.*"lake/bronze/t[0-9]/_delta_log/0+2\.json"' trace.txt || true)
[ "$commits" = 3 ] || die "$commits bronze commits in the second run (want 3): $(grep rename trace.txt | head -5)"
mk=$(grep -cE '^[0-9]+ +mkdir(at)?\(' trace.txt || true)
[ "$mk" = 0 ] || die "$mk mkdir calls in a run whose directories all exist (want 0): $(grep mkdir trace.txt | head -6)"
for t in t1 t2 t3; do
  n=$(M --warehouse lake table cat "bronze.$t" --format jsonl | wc -l)
  [ "$n" = 2 ] || die "bronze.$t has $n rows after two rounds (want 2)"
done
echo PASS
