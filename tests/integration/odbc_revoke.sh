# A login's SELECT on the source table revoked while a batch is read (over `sim serve`, which
# applies a revoke at the session's next request, as SQL Server does): SQL Server then answers
# sys.fn_cdc_get_min_lsn with 0x00, which would leave the data-loss guard nothing to compare,
# so a cleanup in the same minutes would go unseen. The stream stops between two pages of a
# read (pageRows=1); CDC cleanup purges the rest of the batch and the grant is revoked; the
# stream goes on: exit 3 naming min_lsn's 0x00 and the GRANT that fixes it, nothing of the
# batch committed. Then `sim grant --revoke` of a grant the login does not have changes
# nothing, and after the grant is given back a new stream reports the purge (exit 4).
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer) VALUES (1, 'a')"
sim_capture 2026-10-01T14:00:01
printf 'r-secret\n' > "$T/rpw"
M sim login add "$DB" --user r --password-file "$T/rpw" >/dev/null
for o in dbo.orders cdc.dbo_orders_CT cdc.lsn_time_mapping; do
  M sim grant "$DB" --user r --on "$o" >/dev/null
done
serve_start
RSRC="odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=r;PWD=r-secret;connectTimeout=5;queryTimeout=20"
stream() { M stream --source "$RSRC" --capture-instance dbo_orders --target bronze.orders --app-id orders \
  --checkpoint "$T/ck" --facts ops.facts "$@"; }
stream >/dev/null 2>"$T/err1" || die "first stream as r: $(cat "$T/err1")"
n_bronze() { M table cat bronze.orders --format jsonl | wc -l; }
[ "$(n_bronze)" = 1 ] || die "first batch: $(n_bronze) rows"

for i in 2 3 4; do
  sim_exec "2026-10-01T14:00:0$i" "INSERT INTO dbo.orders (order_id, customer) VALUES ($i, 'b')"
done
sim_capture 2026-10-01T14:00:05
MCDC_FAILPOINT=source.mssql.between_pages=stop "$MCDC_BIN" stream --source "$RSRC;pageRows=1" \
  --capture-instance dbo_orders --target bronze.orders --app-id orders --checkpoint "$T/ck" --facts ops.facts \
  >/dev/null 2>"$T/err2" &
pid=$!
for _ in $(seq 1 200); do [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" = T ] && break; sleep 0.05; done
[ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" = T ] || die "the stream never stopped between two pages: $(cat "$T/err2")"
M sim cleanup "$DB" --retention 1s --at 2026-10-01T14:00:10 >/dev/null
out=$(M sim grant "$DB" --user r --on dbo.orders --revoke) || die "revoke: $out"
[ "$out" = "SELECT on dbo.orders revoked from r" ] || die "revoke said: $out"
kill -CONT $pid
rc=0; wait $pid || rc=$?
[ $rc = 3 ] || die "revoked during the read: exit $rc, want 3: $(cat "$T/err2")"
grep -q "sys.fn_cdc_get_min_lsn answered 0x00000000000000000000" "$T/err2" || die "$(cat "$T/err2")"
grep -q "GRANT SELECT ON dbo.orders" "$T/err2" || die "no GRANT in the hint: $(cat "$T/err2")"
[ "$(n_bronze)" = 1 ] || die "the batch was committed: $(n_bronze) rows"

out=$(M sim grant "$DB" --user r --on dbo.orders --revoke) || die "second revoke: $out"
[ "$out" = "r had no SELECT on dbo.orders: nothing revoked" ] || die "second revoke said: $out"
M sim grant "$DB" --user r --on dbo.orders >/dev/null
rc=0; stream >/dev/null 2>"$T/err3" || rc=$?
[ $rc = 4 ] || die "after the grant is back: exit $rc, want 4 (the purge): $(cat "$T/err3")"
[ "$(n_bronze)" = 1 ] || die "a batch over the purge was committed: $(n_bronze) rows"
serve_stop
echo PASS
