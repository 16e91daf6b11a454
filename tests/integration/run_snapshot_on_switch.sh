# `run --config` tables take snapshot_on_switch and lease as keys, as `stream` takes
# --snapshot-on-switch and --lease: bad values and snapshot_on_switch without facts are
# refused by `run --check` and `run` (exit 2, naming the file, line and key; nothing
# written). A run-managed table with snapshot_on_switch: true reads its table again after
# following a newer capture instance, so its silver equals the source, the column added
# before the switch included; the same table without the key keeps NULL there. (The lease
# key's effect on an s3:// checkpoint is checked in tests/s3/checkpoint_s3.sh.)
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, qty INT NULL' >/dev/null
sim_capture 2026-10-01T13:59:30
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, 5), (2, 6), (3, 7)"
sim_capture 2026-10-01T14:00:05

cat > run.yaml <<'YAML'
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  lease: 20s
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.s
    app_id: s
    checkpoint: ck/s
    silver: silver.s
    snapshot_on_switch: true
  - source: shop
    capture_instance: dbo_orders
    target: bronze.n
    app_id: n
    checkpoint: ck/n
    silver: silver.n
YAML

sed 's/snapshot_on_switch: true/snapshot_on_switch: often/' run.yaml > bad1.yaml
run_refused bad1.yaml "bad1.yaml line 15: snapshot_on_switch"
sed 's/lease: 20s/lease: 500ms/' run.yaml > bad2.yaml
run_refused bad2.yaml "bad2.yaml line 7: lease: '500ms' is too short"
sed 's/lease: 20s/lease: forever/' run.yaml > bad3.yaml
run_refused bad3.yaml "bad3.yaml line 7: lease"
sed '/  facts: ops.facts/d' run.yaml > bad4.yaml
run_refused bad4.yaml "snapshot_on_switch needs facts"
sed 's/lease: 20s/lease: off/' run.yaml > off.yaml
M run --config off.yaml --check >/dev/null 2>&1 || die "lease: off refused"
[ ! -e lake ] || die "--check wrote something"

M run --config run.yaml --workers 1 >/dev/null 2>&1 || die "first run"
# a column added and filled before the new instance captures it: no change row anywhere
M sim ddl "$DB" --at 2026-10-01T14:01:00 "ALTER TABLE dbo.orders ADD note NVARCHAR(20) NULL" >/dev/null
sim_exec 2026-10-01T14:01:30 "UPDATE dbo.orders SET note = N'n1' WHERE order_id = 1; UPDATE dbo.orders SET note = N'n2' WHERE order_id = 2; UPDATE dbo.orders SET note = N'n3' WHERE order_id = 3"
M sim enable "$DB" --table dbo.orders --capture-instance dbo_orders_v2 --columns order_id,qty,note \
  --at 2026-10-01T14:02:00 >/dev/null
sim_exec 2026-10-01T14:03:00 "INSERT INTO dbo.orders VALUES (4, 8, N'four'); UPDATE dbo.orders SET qty = 70 WHERE order_id = 3"
sim_capture 2026-10-01T14:03:05
M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl > src.jsonl
M run --config run.yaml --workers 1 >/dev/null 2>err || die "the run across the switch: $(cat err)"
grep -q "snapshot-on-switch: 4 rows of dbo_orders_v2 read into bronze.s" err || die "no snapshot of bronze.s: $(cat err)"
grep -q "read into bronze.n" err && die "bronze.n (no snapshot_on_switch) read the table again: $(cat err)"
for app in s n; do
  M table cat "lake/silver/$app" --format jsonl > "silver_$app.jsonl"
done
node "$MCDC_SRC/tests/integration/silver_check.mjs" silver-vs-source silver_s.jsonl src.jsonl >/dev/null 2>&1 \
  || die "with snapshot_on_switch silver differs from the source: $(cat silver_s.jsonl)"
node "$MCDC_SRC/tests/integration/silver_check.mjs" silver-vs-source silver_n.jsonl src.jsonl >/dev/null 2>&1 \
  && die "without snapshot_on_switch silver already equals the source (the test proves nothing)"
grep -q '"order_id":1,.*"note":null' silver_n.jsonl || die "without the key: $(cat silver_n.jsonl)"
echo ok
