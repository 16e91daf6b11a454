# `run --config` tables take the stream's data loss and snapshot settings as keys
# (on_data_loss, resnapshot_interval, bootstrap_mode; in a table or in defaults): bad values
# and contradictions are refused by `run --check` and `run` (exit 2, naming the file, line
# and key, nothing written); a run-managed table with on_data_loss: resnapshot re-snapshots
# into generation 1 after a cleanup purged unread changes (the facts rows record the gap)
# and its silver equals the source; a second purge inside resnapshot_interval stops the
# table with exit 4 naming the interval; bootstrap_mode: chunked opens a chunked snapshot.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, amount DECIMAL(12,2) NULL' >/dev/null
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, 1.00), (2, 2.00), (3, 3.00)"
sim_capture 2026-10-01T14:00:01

cat > run.yaml <<'YAML'
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  on_data_loss: resnapshot
  resnapshot_interval: 3d
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.orders
    app_id: orders
    checkpoint: ck/orders
    silver: silver.orders
    bootstrap: true
YAML

sed 's/on_data_loss: resnapshot/on_data_loss: sometimes/' run.yaml > bad1.yaml
run_refused bad1.yaml "bad1.yaml line 7: on_data_loss: 'sometimes': expected fail, skip or resnapshot"
sed 's/resnapshot_interval: 3d/resnapshot_interval: soon/' run.yaml > bad2.yaml
run_refused bad2.yaml "bad2.yaml line 8: resnapshot_interval"
sed 's/on_data_loss: resnapshot/on_data_loss: fail/' run.yaml > bad3.yaml
run_refused bad3.yaml "resnapshot_interval needs on_data_loss: resnapshot"
sed '/  facts: ops.facts/d; /resnapshot_interval/d' run.yaml > bad4.yaml
run_refused bad4.yaml "on_data_loss resnapshot needs facts"
sed 's/    bootstrap: true/    bootstrap: true\n    bootstrap_mode: later/' run.yaml > bad5.yaml
run_refused bad5.yaml "bad5.yaml line 17: bootstrap_mode: 'later': expected full or chunked"
sed 's/on_data_loss: resnapshot/on_data_loss: skip/; /resnapshot_interval/d; s/    bootstrap: true/    bootstrap_mode: chunked/' run.yaml > bad6.yaml
run_refused bad6.yaml "bootstrap_mode needs bootstrap: true"
sed 's/on_data_loss: resnapshot/on_data_loss: fail/; /resnapshot_interval/d; s/    bootstrap: true/    bootstrap: true\n    options: {failOnDataLoss: "false"}/' run.yaml > bad7.yaml
run_refused bad7.yaml "on_data_loss and options: failOnDataLoss disagree"

out=$(M run --config run.yaml --check 2>&1) || die "--check: $out"
[ ! -e lake ] || die "--check wrote something"
silver_equals_source() {
  M table cat lake/silver/orders --format csv --columns order_id,amount | tail -n +2 | sort > s.csv
  M sim query "$DB" "SELECT order_id, amount FROM dbo.orders" --format csv | tail -n +2 | sort > src.csv
  cmp -s s.csv src.csv || { diff s.csv src.csv >&2; die "silver differs from the source ($1)"; }
}
facts() { M table cat lake/ops/facts --format csv --columns "$1" | tail -n +2; }
M run --config run.yaml --workers 1 >/dev/null 2>&1 || die "first run"
silver_equals_source "first run"

# changes that cleanup purges before the table reads them
sim_exec 2026-10-02T14:00:00 "DELETE FROM dbo.orders WHERE order_id = 2; INSERT INTO dbo.orders VALUES (4, 4.00)"
sim_exec 2026-10-03T14:00:00 "UPDATE dbo.orders SET amount = 9.00 WHERE order_id = 1"
sim_capture 2026-10-03T14:00:01
M sim cleanup "$DB" --retention 1d --at 2026-10-03T14:00:02 >/dev/null
M run --config run.yaml --workers 1 >/dev/null 2>"$T/err" || die "the re-snapshot run: $(cat "$T/err")"
grep -q "re-snapshotting into generation 1" "$T/err" || die "no re-snapshot: $(cat "$T/err")"
grep -q '"generation":1' ck/orders/generation || die "not generation 1: $(cat ck/orders/generation 2>&1)"
gap=$(facts app_id,event,lost_from_ts,lost_to_ts | grep '^orders.g1,resnapshot,')
[ "$gap" = "orders.g1,resnapshot,2026-10-01T14:00:00.000000,2026-10-02T14:00:00.000000" ] || die "resnapshot gap: $gap"
silver_equals_source "after the re-snapshot"

# a second purge inside resnapshot_interval (3d): the table stops, exit 4, naming it
sim_exec 2026-10-04T14:00:00 "UPDATE dbo.orders SET amount = 5.00 WHERE order_id = 3"
sim_exec 2026-10-05T14:00:00 "UPDATE dbo.orders SET amount = 6.00 WHERE order_id = 3"
sim_capture 2026-10-05T14:00:01
M sim cleanup "$DB" --retention 1d --at 2026-10-05T14:00:02 >/dev/null
set +e; M run --config run.yaml --workers 1 >/dev/null 2>"$T/err"; rc=$?; set -e
[ $rc = 4 ] || die "second loss: exit $rc, want 4: $(cat "$T/err")"
grep -q -- "less than --resnapshot-interval 3d ago" "$T/err" || die "second loss message: $(cat "$T/err")"
grep -q '"generation":1' ck/orders/generation || die "the second loss moved the generation"

# bootstrap_mode: chunked opens a chunked snapshot for `backfill`
cat > chunked.yaml <<'YAML'
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.chunked
    app_id: chunked
    checkpoint: ck/chunked
    facts: ops.facts
    bootstrap: true
    bootstrap_mode: chunked
YAML
M run --config chunked.yaml --workers 1 >/dev/null 2>&1 || die "chunked run"
[ "$(facts app_id,event | grep -c '^chunked,snapshot_open$')" = 1 ] || die "no chunked snapshot_open row"
out=$(M --warehouse lake backfill --source "sim:db.sqlite" --capture-instance dbo_orders --target bronze.chunked \
  --app-id chunked --facts ops.facts 2>&1) || die "backfill of the run's chunked snapshot: $out"
grep -q "complete" <<<"$out" || die "backfill of the run's chunked snapshot: $out"
echo ok
