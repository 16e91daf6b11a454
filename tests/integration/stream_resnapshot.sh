# Recovery from data loss (--on-data-loss resnapshot): after CDC cleanup purged unread
# changes the stream re-snapshots into generation 1 (its own checkpoint and app id, in
# the generation file), records the gap in the generation's snapshot_open and resnapshot
# rows, and silver rebuilt from the newest snapshot equals the source; a second purge
# inside --resnapshot-interval exits 4 naming it; a kill -9 at each step of the
# re-snapshot resumes it (one open row, one resnapshot row); the chunked mode completes
# through backfill; finalization --checkpoint follows the generation; skip is
# failOnDataLoss=false.
. "$(dirname "$0")/stream_lib.bash"
sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount) VALUES (1, 'a', 1.00), (2, 'b', 2.00), (3, 'c', 3.00)"
sim_capture 2026-10-01T14:00:01
RS() { local app=$1; shift; stream "$app" --on-data-loss resnapshot "$@"; }
silver_equals_source() { # APP
  M silver apply --bronze "bronze.$1" --silver "silver.$1" --capture-instance dbo_orders \
    --keys order_id --control ops.control --facts ops.facts >/dev/null || die "silver apply $1"
  M table cat "silver.$1" --format csv --columns order_id,customer,amount | tail -n +2 | sort > "$T/s.csv"
  M sim query "$DB" "SELECT order_id, customer, amount FROM dbo.orders" --format csv | tail -n +2 | sort > "$T/src.csv"
  cmp -s "$T/s.csv" "$T/src.csv" || { diff "$T/s.csv" "$T/src.csv" >&2; die "silver.$1 differs from the source"; }
}
facts() { M table cat ops.facts --format csv --columns "$1" | tail -n +2; }

# usage: checked before anything is written
set +e
out=$(M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.u --app-id u \
  --checkpoint "$T/ck/u" --on-data-loss resnapshot 2>&1); rc=$?
[ $rc = 2 ] && grep -q "needs --facts" <<<"$out" || die "resnapshot without --facts: $rc $out"
out=$(stream u --on-data-loss sometimes 2>&1); rc=$?
[ $rc = 2 ] && grep -q "expected fail, skip or resnapshot" <<<"$out" || die "bad --on-data-loss: $rc $out"
out=$(stream u --on-data-loss fail --option failOnDataLoss=false 2>&1); rc=$?
[ $rc = 2 ] && grep -q "disagree" <<<"$out" || die "fail and failOnDataLoss=false: $rc $out"
out=$(stream u --resnapshot-interval 1d 2>&1); rc=$?
[ $rc = 2 ] || die "--resnapshot-interval without resnapshot: $rc $out"
set -e
[ ! -e "$T/ck/u" ] || die "a refused stream left a checkpoint"

RS full >/dev/null || die "first run"
stream skip --on-data-loss skip >/dev/null || die "skip: first run"
RS kill >/dev/null || die "kill: first run"
RS chunk --bootstrap-mode chunked >/dev/null || die "chunked: first run"
# day 2: changes that cleanup purges before anyone reads them
sim_exec 2026-10-02T14:00:00 "DELETE FROM dbo.orders WHERE order_id = 2; INSERT INTO dbo.orders (order_id, customer, amount) VALUES (4, 'd', 4.00)"
sim_exec 2026-10-03T14:00:00 "UPDATE dbo.orders SET amount = 9.00 WHERE order_id = 1"
sim_capture 2026-10-03T14:00:01
M sim cleanup "$DB" --retention 1d --at 2026-10-03T14:00:02 >/dev/null

# full: generation 1 with the gap, silver equals the source
RS full >/dev/null 2>"$T/err" || die "resnapshot run: $(cat "$T/err")"
grep -q "re-snapshotting into generation 1" "$T/err" || die "no warning: $(cat "$T/err")"
grep -q '"generation":1' "$T/ck/full/generation" || die "generation file: $(cat "$T/ck/full/generation")"
[ -e "$T/ck/full/_generations/1/metadata" ] || die "no checkpoint of generation 1"
[ "$(facts app_id,event | grep -c '^full.g1,snapshot_open$')" = 1 ] || die "not one snapshot_open of full.g1"
[ "$(facts app_id,event | grep -c '^full.g1,resnapshot$')" = 1 ] || die "not one resnapshot row of full.g1"
gap=$(facts app_id,event,lost_from_ts,lost_to_ts,retention_watermark_ts | grep '^full.g1,resnapshot,')
[ "$gap" = "full.g1,resnapshot,2026-10-01T14:00:00.000000,2026-10-02T14:00:00.000000,2026-10-02T14:00:00.000000" ] ||
  die "resnapshot gap: $gap"
gap=$(facts app_id,event,lost_from_ts,lost_to_ts | grep '^full.g1,snapshot_open,')
[ "$gap" = "full.g1,snapshot_open,2026-10-01T14:00:00.000000,2026-10-02T14:00:00.000000" ] || die "open gap: $gap"
facts app_id,event,detail | grep '^full.g1,snapshot_open,' | grep -q '""kind"":""resnapshot""' ||
  die "open detail: $(facts app_id,event,detail | grep '^full.g1,snapshot_open,')"
silver_equals_source full
# streams on in generation 1, and the verdict follows it from the base checkpoint
sim_exec 2026-10-03T15:00:00 "UPDATE dbo.orders SET customer = 'cc' WHERE order_id = 3"
sim_capture 2026-10-03T15:00:01
RS full >/dev/null || die "generation 1 run"
silver_equals_source full
out=$(M finalization advance --control ops.control --table bronze.full --checkpoint "$T/ck/full")
grep -q "2026-10-03T15:00:00" <<<"$out" || die "finalization --checkpoint does not follow generation 1: $out"

# skip: failOnDataLoss=false, the gap as a data_skipped row
stream skip --on-data-loss skip >/dev/null || die "skip run"
[ "$(facts app_id,event | grep -c '^skip,data_skipped$')" = 1 ] || die "skip: no data_skipped row"

# a kill -9 at each step of the re-snapshot resumes it
for fp in stream.resnapshot.after_open stream.bootstrap.mid_read stream.bootstrap.after_data_file \
          stream.bootstrap.after_snapshot; do
  set +e; MCDC_FAILPOINT=$fp RS kill >/dev/null 2>&1; rc=$?; set -e
  [ $rc = 137 ] || die "kill at $fp: exit $rc (failpoint not reached)"
done
RS kill >/dev/null 2>&1 || die "kill: the resumed run failed"
grep -q '"generation":1' "$T/ck/kill/generation" || die "kill: not generation 1"
[ "$(facts app_id,event | grep -c '^kill.g1,snapshot_open$')" = 1 ] || die "kill: not one open row"
[ "$(facts app_id,event | grep -c '^kill.g1,resnapshot$')" = 1 ] || die "kill: not one resnapshot row"
silver_equals_source kill

# chunked: the stream opens generation 1's snapshot at once, backfill (killed once) reads it
RS chunk --bootstrap-mode chunked >/dev/null 2>&1 || die "chunked resnapshot run"
grep -q '"generation":1' "$T/ck/chunk/generation" || die "chunked: not generation 1"
BF() { M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.chunk --app-id chunk \
         --facts ops.facts --chunk-rows 1 --target-wave-seconds 0 "$@"; }
set +e; MCDC_FAILPOINT=backfill.after_bronze BF >/dev/null 2>&1; rc=$?; set -e
[ $rc = 137 ] || die "chunked: backfill failpoint not reached ($rc)"
sim_exec 2026-10-03T16:00:00 "DELETE FROM dbo.orders WHERE order_id = 4"
sim_capture 2026-10-03T16:00:01
BF >/dev/null 2>&1 || die "chunked: backfill"
RS chunk --bootstrap-mode chunked >/dev/null 2>&1 || die "chunked: stream after the backfill"
gap=$(facts app_id,event,lost_from_ts,lost_to_ts | grep '^chunk.g1,resnapshot,')
[ "$gap" = "chunk.g1,resnapshot,2026-10-01T14:00:00.000000,2026-10-02T14:00:00.000000" ] || die "chunked gap: $gap"
facts app_id,event,detail | grep '^chunk.g1,snapshot_open,' | grep -q '""kind"":""resnapshot""' || die "chunked open kind"
silver_equals_source chunk

# a second purge inside the interval: exit 4 naming it; nothing moves to generation 2
sim_exec 2026-10-04T14:00:00 "UPDATE dbo.orders SET amount = 5.00 WHERE order_id = 3"
sim_exec 2026-10-06T14:00:00 "UPDATE dbo.orders SET amount = 6.00 WHERE order_id = 3"
sim_capture 2026-10-06T14:00:01
M sim cleanup "$DB" --retention 1d --at 2026-10-06T14:00:02 >/dev/null
set +e; err=$(RS full 2>&1 >/dev/null); rc=$?; set -e
[ $rc = 4 ] || die "second loss: exit $rc, want 4: $err"
grep -q -- "less than --resnapshot-interval 7d ago" <<<"$err" || die "second loss message: $err"
grep -q '"generation":1' "$T/ck/full/generation" || die "second loss moved the generation"
# with no limit it recovers again, into generation 2
RS full --resnapshot-interval 0 >/dev/null 2>&1 || die "resnapshot-interval 0"
grep -q '"generation":2' "$T/ck/full/generation" || die "not generation 2"
silver_equals_source full
echo "ok"
