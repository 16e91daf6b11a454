#!/usr/bin/env bash
# `finalization cut` across a re-snapshot's gap (stream --on-data-loss resnapshot): orders
# lost the changes committed after its last read (lost_after) and re-snapshotted at S. A
# cut at or below lost_after holds every change (lossless: true); a cut inside the gap
# (above lost_after, below S) or above S crosses it (lossless: false), whatever S is.
. "$MCDC_SRC/tests/integration/stream_lib.bash"
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T09:00:00 \
  --schema 'order_id INT NOT NULL, total INT NULL' >/dev/null
M sim init "$DB" --table dbo.lines --keys line_id --at 2026-10-01T09:00:01 \
  --schema 'line_id INT NOT NULL, order_id INT NOT NULL, qty INT NULL' >/dev/null
sim_capture 2026-10-01T09:00:30
tx() { # tx AT ORDER: an order with its line, in one transaction
  sim_exec "$1" "INSERT INTO dbo.orders VALUES ($2, 1); INSERT INTO dbo.lines VALUES (${2}1, $2, 1)"
}
s() { # s TABLE APP [ARGS...]: stream, then advance (a new generation without a batch: not yet)
  local tbl=$1 app=$2; shift 2
  M stream --source "sim:$DB" --capture-instance "dbo_$tbl" --target "bronze.$app" --app-id "$app" \
    --checkpoint "$T/ck/$app" --facts ops.facts "$@" >/dev/null 2>"$T/err" || die "stream $app: $(cat "$T/err")"
  M finalization advance --control ops.control --table "bronze.$app" --checkpoint "$T/ck/$app" >/dev/null 2>&1 || true
}
cut() { # cut TABLES: the cut's JSON into $T/cut.json
  M finalization cut --control ops.control --facts ops.facts --tables "$1" --format json >"$T/cut.json" 2>"$T/err" ||
    die "cut $1: $(cat "$T/err")"
}
field() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1]))[process.argv[2]])' "$T/cut.json" "$1"; }
tx 2026-10-01T14:00:00 1
tx 2026-10-01T14:00:01 2
sim_capture 2026-10-01T14:00:05
s orders o --on-data-loss resnapshot --trigger available-now
# lines: one stream that stops at the first transaction, one that reads everything it can
s lines early --trigger once --max-commits-per-batch 1
s lines late --trigger available-now
# day 2: changes cleanup purges before orders' stream reads them (lines.late reads them)
tx 2026-10-02T14:00:00 3
tx 2026-10-03T14:00:00 4
sim_capture 2026-10-03T14:00:01
s lines late --trigger available-now
M sim cleanup "$DB" --retention 1d --at 2026-10-03T14:00:02 >/dev/null
tx 2026-10-03T15:00:00 5
sim_capture 2026-10-03T15:00:01
s orders o --on-data-loss resnapshot --trigger available-now
[ "$(M table cat ops.facts --format csv --columns app_id,event | grep -c '^o.g1,resnapshot$')" = 1 ] ||
  die "orders did not re-snapshot"
# generation 1 streams on: orders' end is above S
tx 2026-10-03T16:00:00 6
sim_capture 2026-10-03T16:00:01
s orders o --on-data-loss resnapshot --trigger available-now
# at or below lost_after (orders' last read, the second transaction): lossless
cut bronze.o,bronze.early
[ "$(field lossless)" = true ] || die "a cut below the gap is not lossless: $(cat "$T/cut.json")"
[ "$(field lsn)" = "$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).tables["bronze.early"])' "$T/cut.json")" ] ||
  die "the cut is not bronze.early's end: $(cat "$T/cut.json")"
# inside the gap (lines.late ends at the day-3 transaction, before S): not lossless
cut bronze.o,bronze.late
[ "$(field lossless)" = false ] || die "a cut inside the re-snapshot's gap says lossless: $(cat "$T/cut.json")"
# above S: not lossless either
s lines late --trigger available-now
cut bronze.o,bronze.late
[ "$(field lossless)" = false ] || die "a cut above the re-snapshot says lossless: $(cat "$T/cut.json")"
echo "finalization_cut_gap: ok"
