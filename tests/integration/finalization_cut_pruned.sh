#!/usr/bin/env bash
# `finalization cut` (and run's consistent: sets, which call it after every round) reads
# only the facts files that may change the cut: files of other tables are pruned by their
# target stats, and batch-only files by their newest end_lsn. Counted from the cut's debug
# line: more batches of another table, or of the listed tables, leave the files read as
# they were while the facts table grows; the cut equals the one computed from every facts
# row (node over `table cat ops.facts`).
. "$MCDC_SRC/tests/integration/stream_lib.bash"
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T09:00:00 \
  --schema 'order_id INT NOT NULL, total INT NULL' >/dev/null
M sim init "$DB" --table dbo.lines --keys line_id --at 2026-10-01T09:00:01 \
  --schema 'line_id INT NOT NULL, order_id INT NOT NULL, qty INT NULL' >/dev/null
M sim init "$DB" --table dbo.noise --keys id --at 2026-10-01T09:00:02 \
  --schema 'id INT NOT NULL, v INT NULL' >/dev/null
sim_capture 2026-10-01T09:00:30
txs() { # txs FROM TO MINUTE: an order with its line and a noise row per transaction
  for o in $(seq "$1" "$2"); do
    sim_exec "2026-10-01T09:$3:$(printf %02d "$o")" "INSERT INTO dbo.orders VALUES ($o, 1); INSERT INTO dbo.lines VALUES (${o}1, $o, 1); INSERT INTO dbo.noise VALUES ($o, $o)"
  done
  sim_capture "2026-10-01T09:$3:59"
}
s() { # s TABLE [ARGS...]
  local tbl=$1; shift
  M stream --source "sim:$DB" --capture-instance "dbo_$tbl" --target "bronze.$tbl" --app-id "$tbl" \
    --checkpoint "$T/ck/$tbl" --facts ops.facts "$@" >/dev/null 2>"$T/err" || die "stream $tbl: $(cat "$T/err")"
  M finalization advance --control ops.control --table "bronze.$tbl" --checkpoint "$T/ck/$tbl" >/dev/null
}
read_files() { # read_files: "READ TOTAL" of the cut's debug line; the cut into $T/cut.json
  M --log-level debug finalization cut --control ops.control --facts ops.facts \
    --tables bronze.orders,bronze.lines --format json >"$T/cut.json" 2>"$T/log" || die "cut: $(cat "$T/log")"
  sed -n 's/.*read \([0-9]*\) of \([0-9]*\) facts files.*/\1 \2/p' "$T/log" | head -1
}
independent() { # the cut from every facts row: the smallest of the tables' newest batch end
  M table cat ops.facts --format jsonl --columns target,event,end_lsn | node -e '
    const best = {};
    for (const l of require("fs").readFileSync(0, "utf8").split("\n").filter(Boolean)) {
      const r = JSON.parse(l);
      if (r.event !== null || !["bronze.orders", "bronze.lines"].includes(r.target)) continue;
      if (!best[r.target] || r.end_lsn > best[r.target]) best[r.target] = r.end_lsn;
    }
    console.log([best["bronze.orders"], best["bronze.lines"]].sort()[0]);'
}
cut_lsn() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1])).lsn)' "$T/cut.json"; }
txs 1 10 01
s orders --trigger once --max-commits-per-batch 3
s orders --trigger once --max-commits-per-batch 3
s lines --trigger once --max-commits-per-batch 2
s noise --trigger once --max-commits-per-batch 2
counts=$(read_files)
read -r r0 n0 <<<"$counts" || true
[ -n "$r0" ] || die "no debug line: $(cat "$T/log")"
[ "$(cut_lsn)" = "$(independent)" ] || die "cut $(cut_lsn), from every row $(independent)"
# another table's batches: the facts table grows, the files read stay
for _ in $(seq 8); do s noise --trigger once --max-commits-per-batch 1; done
counts=$(read_files)
read -r r1 n1 <<<"$counts" || true
[ "$n1" -ge $((n0 + 8)) ] || die "the facts table did not grow: $n0 then $n1 files"
[ "$r1" = "$r0" ] || die "8 batches of another table: $r0 files read, then $r1 (of $n0, then $n1)"
[ "$(cut_lsn)" = "$(independent)" ] || die "cut $(cut_lsn), from every row $(independent)"
# the listed tables' own batches: still the newest batch files only
txs 11 20 02
for _ in $(seq 6); do s orders --trigger once --max-commits-per-batch 2; s lines --trigger once --max-commits-per-batch 2; done
counts=$(read_files)
read -r r2 n2 <<<"$counts" || true
[ "$n2" -ge $((n1 + 12)) ] || die "the facts table did not grow: $n1 then $n2 files"
[ "$r2" -le "$r0" ] || die "12 more batches of the listed tables: $r0 files read, then $r2 (of $n1, then $n2)"
[ "$(cut_lsn)" = "$(independent)" ] || die "cut $(cut_lsn), from every row $(independent)"
echo "finalization_cut_pruned: ok (files read $r0 of $n0, $r1 of $n1, $r2 of $n2)"
