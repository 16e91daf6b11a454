# `stream --backfill`: the open chunked snapshot's waves run in the stream's own process,
# one after each batch and the rest when the stream ends, on a connection of their own.
# One command then opens the snapshot, streams the changes after S and completes the
# snapshot: the facts rows are those of a separate backfill (open, plan, chunks, the
# bootstrap row) and silver equals the source. A kill -9 inside a wave resumes on the next
# run; --backfill without --facts exits 2.
source "$MCDC_SRC/tests/integration/stream_lib.bash"

ST() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
         --checkpoint "$T/ck" --facts ops.facts --control ops.control --silver silver.o "$@"; }
M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null
vals=$(for i in $(seq 1 40); do printf "(%d, N'c%d')," "$i" "$i"; done)
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T14:00:30

set +e; out=$(M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
  --checkpoint "$T/ck" --backfill 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q -- "--backfill needs --facts" <<<"$out" || die "--backfill without --facts: $rc $out"
set +e; out=$(M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 \
  --checkpoint "$T/ck" --facts ops.facts --backfill 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q -- "--backfill: no chunked snapshot of bronze.o was ever opened" <<<"$out" || die "--backfill without a snapshot: $rc $out"
[ ! -e "$T/ck" ] && [ ! -e "$T/lake" ] || die "a refused stream wrote something"

# the first run opens the snapshot and is killed inside its first wave (after bronze)
set +e; MCDC_FAILPOINT=backfill.after_bronze ST --bootstrap --bootstrap-mode chunked --backfill >/dev/null 2>&1; rc=$?; set -e
[ $rc = 137 ] || die "the stream was not killed inside its wave (exit $rc)"
sim_exec 2026-10-01T14:01:00 "UPDATE dbo.orders SET customer = N'u' WHERE order_id = 3; DELETE FROM dbo.orders WHERE order_id = 7; INSERT INTO dbo.orders VALUES (100, N'new')"
sim_capture 2026-10-01T14:01:30
out=$(ST --bootstrap --bootstrap-mode chunked --backfill 2>"$T/err") || die "stream --backfill: $(cat "$T/err")"
grep -q "^backfill bronze.o: [0-9]* waves in this process; snapshot 0x[0-9A-F]*: complete, 1/1 chunks, 40 rows$" <<<"$out" ||
  die "stream --backfill summary: $out"
grep -q "^silver silver.o: " <<<"$out" || die "no silver line: $out"
facts=$(M table cat ops.facts --format csv --columns event | grep -E '^(snapshot_|bootstrap)' | sort | uniq -c | awk '{print $2 "=" $1}' | tr '\n' ' ')
[ "$facts" = "bootstrap=1 snapshot_chunk=1 snapshot_open=1 snapshot_plan=1 " ] || die "facts rows: $facts"
[ "$(M table cat bronze.o --format csv --columns _operation,order_id | grep -c '^0,')" = 40 ] ||
  die "the wave's rows are not in bronze once: $(M table cat bronze.o --format csv --columns _operation | sort | uniq -c)"
diff <(M sim query "$DB" 'SELECT order_id, customer FROM dbo.orders' --format csv | tail -n +2 | sort -t, -k1n) \
     <(M table cat silver.o --format csv --columns order_id,customer | tail -n +2 | sort -t, -k1n) ||
  die "silver differs from the source"
# a later run: the snapshot is complete, no wave reads anything
out=$(ST --backfill 2>"$T/err") || die "rerun: $(cat "$T/err")"
grep -q "^backfill bronze.o: 0 waves in this process; snapshot 0x[0-9A-F]*: complete" <<<"$out" || die "rerun: $out"
echo ok
