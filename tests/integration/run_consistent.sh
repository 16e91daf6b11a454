#!/usr/bin/env bash
# run --config with `consistent:`: after each round of a set's table, the control row
# consistent:NAME moves to the set's cut (the newest LSN at which every table of the set is
# complete, as `finalization cut` computes it), never back; a set naming no table's target,
# or tables with other control or facts tables, is refused at --check with exit 2 and the
# line.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T09:00:00 \
  --schema 'order_id INT NOT NULL, total INT NULL' >/dev/null
M sim init "$DB" --table dbo.lines --keys line_id --at 2026-10-01T09:00:01 \
  --schema 'line_id INT NOT NULL, order_id INT NOT NULL, qty INT NULL' >/dev/null
sim_capture 2026-10-01T09:00:30
txs() { # txs FROM TO MINUTE: orders FROM..TO, each with two lines
  for o in $(seq "$1" "$2"); do
    M sim exec "$DB" --at "2026-10-01T09:$3:$(printf %02d "$o")" "INSERT INTO dbo.orders VALUES ($o, 3); INSERT INTO dbo.lines VALUES (${o}1, $o, 1); INSERT INTO dbo.lines VALUES (${o}2, $o, 2)" >/dev/null
  done
  sim_capture "2026-10-01T09:$3:59"
}
txs 1 10 01
cat > run.yaml <<'YAML'
warehouse: lake
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  trigger: available-now
  granularity: minute
tables:
  - {source: shop, capture_instance: dbo_orders, target: bronze.orders, app_id: orders, checkpoint: ck/orders}
  - {source: shop, capture_instance: dbo_lines, target: bronze.lines, app_id: lines, checkpoint: ck/lines}
consistent:
  shop: [bronze.orders, bronze.lines]
YAML
row() { # row FIELD: the consistent:shop control row's field
  M finalization show --control ops.control --table consistent:shop --format json |
    node -e 'const r = JSON.parse(require("fs").readFileSync(0, "utf8")); const x = Array.isArray(r) ? r[0] : r; console.log(x[process.argv[1]])' "$1"
}
cut_lsn() {
  M finalization cut --control ops.control --facts ops.facts --tables bronze.orders,bronze.lines --format json |
    node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).lsn)'
}
M run --config run.yaml >/dev/null 2>"$T/err" || die "run: $(cat "$T/err")"
first=$(row end_lsn)
[ "$first" = "$(cut_lsn)" ] || die "consistent:shop ends at $first, the cut is $(cut_lsn)"
[ "$(row finalized_until)" != null ] || die "consistent:shop has no finalized_until"
# more transactions: the row moves forward to the new cut
txs 11 20 02
M run --config run.yaml >/dev/null 2>"$T/err" || die "run: $(cat "$T/err")"
second=$(row end_lsn)
[ "$second" = "$(cut_lsn)" ] || die "consistent:shop ends at $second, the cut is $(cut_lsn)"
[[ "$second" > "$first" ]] || die "consistent:shop did not move: $first, then $second"
# never back: a run over a set whose newest cut is older (a table added behind) leaves it
M finalization advance --control ops.control --table consistent:shop --end-lsn 0xFFFFFFFFFFFFFFFFFFFF \
  --end-commit-ts 2026-10-01T23:00:00 >/dev/null
M run --config run.yaml >/dev/null 2>"$T/err" || die "run: $(cat "$T/err")"
[ "$(row end_lsn)" = 0xFFFFFFFFFFFFFFFFFFFF ] || die "consistent:shop moved back to $(row end_lsn)"

# refused at --check: exit 2 naming the line; nothing written
expect_usage() { # expect_usage FILE PATTERN
  local out rc=0
  out=$(M run --config "$1" --check 2>&1) || rc=$?
  [ "$rc" = 2 ] || die "$1: exit $rc, want 2: $out"
  grep -q -- "$2" <<<"$out" || die "$1: '$2' not in: $out"
}
sed 's/shop: \[bronze.orders, bronze.lines\]/shop: [bronze.orders, bronze.nope]/' run.yaml > bad1.yaml
expect_usage bad1.yaml "bad1.yaml line 13: consistent set 'shop' names bronze.nope, which is no table's target"
sed 's/target: bronze.lines, app_id: lines, checkpoint: ck\/lines}/target: bronze.lines, app_id: lines, checkpoint: ck\/lines, facts: ops.other}/' run.yaml > bad2.yaml
expect_usage bad2.yaml "have other control or facts tables"
sed 's/shop: \[bronze.orders, bronze.lines\]/shop: [bronze.orders]/' run.yaml > bad3.yaml
expect_usage bad3.yaml "fewer than two tables"
# tables of two sources: their LSNs are unrelated, so the set is refused, naming both
M sim init "$T/other.sqlite" --table dbo.lines --keys line_id --at 2026-10-01T09:00:01 \
  --schema 'line_id INT NOT NULL, order_id INT NOT NULL, qty INT NULL' >/dev/null
sed -e 's/^  shop: {source: "sim:db.sqlite"}/&\n  other: {source: "sim:other.sqlite"}/' \
  -e 's/{source: shop, capture_instance: dbo_lines/{source: other, capture_instance: dbo_lines/' run.yaml > bad4.yaml
expect_usage bad4.yaml "bad4.yaml line 14: consistent set 'shop': bronze.orders comes from source shop and bronze.lines from source other"
expect_usage bad4.yaml "one database's tables"
echo "run_consistent: ok ($first, then $second)"
