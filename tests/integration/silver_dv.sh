# Silver in write mode deletion-vectors beside the same silver in rewrite mode: one bronze,
# two silver tables, scripted histories (inserts, updates, deletes, key updates,
# re-inserts, many changes of one key, interleaved transactions); after every apply both
# equal `SELECT * FROM dbo.orders` row for row, the deletion-vector table has files with
# deletion vectors and the feature (reader 3, writer 7), the rewrite table none; the
# small appended files are folded, a file past the fold share is rewritten; an apply
# killed at every silver failpoint, then run again, gives the same table; scd2 and soft
# deletes with deletion vectors are refused (exit 2, nothing written).
. "$(dirname "$0")/stream_lib.bash"
SCHECK="node $MCDC_SRC/tests/integration/silver_check.mjs"
sstream() {
  local app=$1
  stream "$@" || return 1
  M finalization advance --control ops.control --table "bronze.$app" --checkpoint "$T/ck/$app" >/dev/null 2>&1 || true
}
sim_setup

apply() { # apply SILVER [ARGS...]
  local s=$1; shift
  M silver apply --bronze bronze.h --silver "$s" --capture-instance dbo_orders --keys order_id \
    --control ops.control --facts ops.facts --target-file-rows 4 --format json "$@" > "$T/apply.json"
}
field() { $SCHECK json "$T/apply.json" "$1"; }
dv_files() { M table files "$1" --force --format json 2>/dev/null | grep -o '"deletion_vector":true' | wc -l; }
marked=0
run_step() { # run_step WHAT [stream args...]
  local what=$1; shift
  sstream h "$@" >/dev/null || die "$what: stream failed"
  apply silver.rw --write-mode rewrite || die "$what: rewrite apply failed"
  silver_vs_source silver.rw "$what (rewrite)"
  apply silver.dv --write-mode deletion-vectors || die "$what: deletion-vector apply failed"
  marked=$((marked + $(field silver_files_marked)))
  silver_vs_source silver.dv "$what (deletion vectors)"
  # a rerun with nothing new changes nothing
  apply silver.dv
  [ "$(field changed_keys)" = 0 ] || die "$what: the rerun found changes"
}

# bootstrap: 40 rows, so that silver has files of 4 rows to mark
vals=""
for i in $(seq 1 40); do vals="$vals${vals:+, }($i, 'c$i', $i.00, NULL)"; done
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES $vals"
sim_capture 2026-10-01T14:00:30
run_step bootstrap --bootstrap
# the files keep a low share of deleted rows only with a fold share that lets them
M table set-property silver.dv mcdc.silver.dv_fold_share=0.5 >/dev/null

sim_exec 2026-10-01T14:01:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (60, 'new', 6.00, NULL), (61, 'new2', 7.00, NULL)"
sim_exec 2026-10-01T14:01:10 "UPDATE dbo.orders SET amount = 11.75 WHERE order_id = 1"
sim_exec 2026-10-01T14:01:20 "DELETE FROM dbo.orders WHERE order_id = 22"
sim_capture 2026-10-01T14:01:30
run_step "inserts, update, delete"
[ "$(dv_files silver.dv)" -ge 1 ] || die "no file of silver.dv has a deletion vector"
[ "$(dv_files silver.rw)" = 0 ] || die "silver.rw has deletion vectors"
M table info silver.dv --format json > "$T/info.json"
grep -q '"deletionVectors"' "$T/info.json" || die "silver.dv lacks the deletionVectors feature: $(cat "$T/info.json")"
grep -q '"mcdc.silver.write_mode": *"deletion-vectors"' "$T/info.json" || die "write mode not recorded: $(cat "$T/info.json")"

sim_exec 2026-10-01T14:02:00 "UPDATE dbo.orders SET order_id = 30000 WHERE order_id = 3"
sim_exec 2026-10-01T14:02:10 "UPDATE dbo.orders SET order_id = 3 WHERE order_id = 4"
sim_capture 2026-10-01T14:02:30
run_step "key updates"
mid_lsn=$(field applied_lsn)

sim_exec 2026-10-01T14:03:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (22, 'again', 2.00, NULL)"
sim_exec 2026-10-01T14:03:10 "DELETE FROM dbo.orders WHERE order_id = 6; INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (6, 'eve 2', 66.00, NULL)"
sim_capture 2026-10-01T14:03:30
run_step "re-inserts"

# the same keys again and again: their files' vectors grow (merged), small files fold
for round in 1 2 3; do
  sim_exec "2026-10-01T14:0$((3 + round)):00" "UPDATE dbo.orders SET amount = amount + 1 WHERE order_id IN (9, 13, 17, 25, 33); UPDATE dbo.orders SET customer = 'r$round' WHERE order_id = 1"
  sim_exec "2026-10-01T14:0$((3 + round)):10" "UPDATE dbo.orders SET amount = amount * 2 WHERE order_id = 7; DELETE FROM dbo.orders WHERE order_id = $((34 + round))"
  sim_capture "2026-10-01T14:0$((3 + round)):30"
  run_step "round $round"
done

# interleaved transactions: T1 begins first and commits last, both touch key 1
sim_exec 2026-10-01T14:08:10 "UPDATE dbo.orders SET amount = 100.00 WHERE order_id = 1; INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (80, 'gus', 8.00, NULL)"
M sim exec "$DB" --begin-at 2026-10-01T14:08:00 --at 2026-10-01T14:08:20 "UPDATE dbo.orders SET customer = 'late' WHERE order_id = 1; DELETE FROM dbo.orders WHERE order_id = 80" >/dev/null
sim_capture 2026-10-01T14:08:30
run_step "interleaved transactions"
[ "$marked" -ge 4 ] || die "only $marked files were marked over the history"

# a low fold share: a touched file is rewritten, its vector folded back
M table set-property silver.dv mcdc.silver.dv_fold_share=0 >/dev/null
sim_exec 2026-10-01T14:09:00 "UPDATE dbo.orders SET amount = 0.01 WHERE order_id IN (9, 13)"
sim_capture 2026-10-01T14:09:30
run_step "fold share 0"
[ "$(field silver_files_marked)" = 0 ] || die "fold share 0: files were marked"
M table set-property silver.dv mcdc.silver.dv_fold_share=0.5 >/dev/null

# crashes: killed at every failpoint, then run again; the table equals rewrite mode's
minute=10
for fp in silver.before_merge_commit silver.after_merge silver.after_position; do
  minute=$((minute + 1))
  t="2026-10-01T14:$minute"
  k=$((500 + minute))
  sim_exec "$t:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($k, 'doomed', 9.00, NULL); UPDATE dbo.orders SET amount = amount + 1 WHERE order_id IN (10, 18, 26)"
  sim_exec "$t:10" "DELETE FROM dbo.orders WHERE order_id = $k; UPDATE dbo.orders SET customer = 'x$minute' WHERE order_id = 2"
  sim_capture "$t:30"
  sstream h >/dev/null
  set +e
  MCDC_FAILPOINT="$fp" apply silver.dv >/dev/null 2>&1
  rc=$?
  set -e
  [ $rc = 137 ] || die "$fp: exit $rc, want 137"
  apply silver.dv || die "$fp: the rerun failed"
  silver_vs_source silver.dv "$fp"
  grep -q "\"order_id\":$k," "$T/silver.jsonl" && die "$fp: key $k came back"
  apply silver.dv
  [ "$(field changed_keys)" = 0 ] || die "$fp: the second rerun found changes"
  apply silver.rw
  silver_vs_source silver.rw "$fp (rewrite)"
done
cat_table silver.dv "$T/a.jsonl"; cat_table silver.rw "$T/b.jsonl"
sort "$T/a.jsonl" > "$T/a.s"; sort "$T/b.jsonl" > "$T/b.s"
cmp -s "$T/a.s" "$T/b.s" || die "the two write modes disagree"

# as of an LSN in the middle of the history, both tables read the same
M table cat silver.dv --as-of-lsn "$mid_lsn" --format jsonl | sort > "$T/a.s" || die "as-of read of silver.dv failed"
M table cat silver.rw --as-of-lsn "$mid_lsn" --format jsonl | sort > "$T/b.s"
[ -s "$T/a.s" ] || die "the as-of read gave no rows"
cmp -s "$T/a.s" "$T/b.s" || die "as of $mid_lsn the two write modes disagree"

# back to rewrite mode: recorded, vectors dropped from the files it rewrites
sim_exec 2026-10-01T14:20:00 "UPDATE dbo.orders SET amount = amount + 3 WHERE order_id IN (1, 9, 17)"
sim_capture 2026-10-01T14:20:30
sstream h >/dev/null
apply silver.dv --write-mode rewrite
[ "$(field silver_files_marked)" = 0 ] || die "rewrite mode marked files"
silver_vs_source silver.dv "back to rewrite mode"
M table info silver.dv --format json | grep -q '"mcdc.silver.write_mode": *"rewrite"' || die "rewrite mode not recorded"

# deletion vectors with scd2 or soft deletes: refused, nothing written
for extra in "--mode scd2" "--soft-deletes"; do
  set +e
  # shellcheck disable=SC2086
  M silver apply --bronze bronze.h --silver silver.refused --capture-instance dbo_orders \
    --keys order_id --control ops.control $extra --write-mode deletion-vectors >/dev/null 2>"$T/err"
  rc=$?
  set -e
  [ $rc = 2 ] || die "$extra with deletion vectors: exit $rc"
  grep -q "is for scd1 with hard deletes" "$T/err" || die "$extra: $(cat "$T/err")"
  [ ! -e "$T/lake/silver/refused" ] || die "$extra: a refused apply created the table"
done
set +e
M silver apply --bronze bronze.h --silver silver.dv --capture-instance dbo_orders --keys order_id \
  --control ops.control --write-mode sideways >/dev/null 2>"$T/err"
rc=$?
set -e
[ $rc = 2 ] || die "a bad --write-mode: exit $rc"
echo ok
