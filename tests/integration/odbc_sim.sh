# The SQL Server source over the real protocol gives what the simulator's source gives: the
# same histories streamed through `--source odbc:` (unixODBC + FreeTDS + TDS 7.4 against
# `mssql-cdc sim serve`) and through `--source sim:` write the same bronze rows, facts (counts,
# LSN ranges, commit times), verdicts and silver. Histories: inserts, updates, key updates,
# deletes, several statements per transaction, interleaved transactions, idle entries,
# partial capture scans, --max-commits-per-batch 1 and unlimited, a bootstrap, a fall-back
# night in New York (the repeated hour), data loss with exit 4 and with failOnDataLoss=false;
# and small pages (pageRows=1) with a cleanup between two of them.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

M sim init "$DB" --table dbo.orders --keys order_id --time-zone America/New_York --at 2026-10-31T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL, note NVARCHAR(MAX) NULL, price MONEY NULL, at_off DATETIMEOFFSET(7) NULL, t TIME(7) NULL, tag VARCHAR(20) NULL, memo VARCHAR(MAX) NULL' >/dev/null
M sim capture "$DB" --at 2026-10-31T13:59:30 >/dev/null
serve_start
run_all() {
  both m1 --max-commits-per-batch 1
  both mu
}

# inserts, several per transaction, every type; a long text; non-Latin-1 text
sim_exec 2026-10-31T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at, note, price, at_off, t) VALUES (1, N'Zoë €', 10.50, '2026-10-31T13:00:00.123', N'$(printf 'long%.0s' $(seq 1 3000))', 12.3456, '2026-10-31 10:00:00.1234567 -04:00', '13:50:01.1234567')"
sim_exec 2026-10-31T14:00:01 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (2, N'日本', -0.05, NULL), (3, NULL, NULL, NULL)"
# characters past the BMP (UTF-16 pairs, decoded by the source, not the driver), one pair
# across two 32 KiB chunks of a long value (16,382 units, then the pair), the empty string
sim_exec 2026-10-31T14:00:02 "INSERT INTO dbo.orders (order_id, customer, note) VALUES (5, N'😀 𝄞 x', N'$(printf 'x%.0s' $(seq 1 16382))😀y'), (10, N'', N'')"
# varchar in the default collation (code page 1252, decoded by the source): Latin-1, the
# euro sign, a long value past one 32 KiB chunk
sim_exec 2026-10-31T14:00:03 "INSERT INTO dbo.orders (order_id, tag, memo) VALUES (11, 'Käthe € ÿ Œ', '$(printf 'é%.0s' $(seq 1 40000))€'), (12, '', NULL)"
sim_capture 2026-10-31T14:00:05
run_all
# bronze records the source's identity: through odbc: the database sim serve names (shop),
# with the same database_guid the simulator file gives sim:
ident() { M --warehouse "$T/lake_$1" table info bronze.m1 | sed -n "s/^ *mcdc\.source\.$2 = //p"; }
g=$(ident sim database_guid)
[ -n "$g" ] && [ "$(ident odbc database_guid)" = "$g" ] || die "database_guid: sim '$g', odbc '$(ident odbc database_guid)'"
[ "$(ident odbc server)" = mssql-cdc-sim ] && [ "$(ident odbc database)" = shop ] ||
  die "odbc identity: server '$(ident odbc server)', database '$(ident odbc database)'"
# updates, a key update, a delete, several statements in one transaction
sim_exec 2026-10-31T14:01:00 "UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = 1"
sim_exec 2026-10-31T14:01:01 "UPDATE dbo.orders SET order_id = 20 WHERE order_id = 2"
sim_exec 2026-10-31T14:01:02 "DELETE FROM dbo.orders WHERE order_id = 3"
sim_exec 2026-10-31T14:01:03 "INSERT INTO dbo.orders (order_id, customer, amount) VALUES (4, 'dee', 4.00); UPDATE dbo.orders SET customer = 'ann2' WHERE order_id = 1; DELETE FROM dbo.orders WHERE order_id = 20"
sim_capture 2026-10-31T14:01:10
# interleaved transactions, idle entries, partial capture scans
M sim exec "$DB" --begin-at 2026-10-31T14:02:00 --at 2026-10-31T14:02:04 "INSERT INTO dbo.orders (order_id, customer) VALUES (6, 'fay')" >/dev/null
sim_exec 2026-10-31T14:02:05 "UPDATE dbo.orders SET amount = 7.00 WHERE order_id = 6"
sim_capture 2026-10-31T14:02:10
M sim idle "$DB" --at 2026-10-31T14:07:10 >/dev/null
run_all
for i in 7 8 9; do sim_exec "2026-10-31T14:13:0$i" "INSERT INTO dbo.orders (order_id, customer) VALUES ($i, 'p$i')"; done
sim_capture 2026-10-31T14:13:10 --max-trans 1
run_all
sim_capture 2026-10-31T14:13:12
# a bootstrap from here
both bs --bootstrap
run_all

# the fall-back night: 01:00-02:00 New York time happens twice (05:00-06:00 UTC in EDT, then
# 06:00-07:00 UTC in EST); commit times must come back as the UTC of each pass
for at in 2026-11-01T05:30:00 2026-11-01T05:50:00 2026-11-01T06:10:00 2026-11-01T06:40:00 2026-11-01T07:05:00; do
  sim_exec "$at" "UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = 1"
done
sim_capture 2026-11-01T07:05:30
run_all
both bs
M --warehouse "$T/lake_odbc" table cat bronze.mu --format jsonl | grep -c "\"_commit_ts\":\"2026-11-01T06:10:00" | grep -qx 2 ||
  die "the second pass of the repeated hour is not 06:10 UTC"

# data loss: a stream that fell behind a cleanup exits 4 through both sources, and with
# failOnDataLoss=false both skip the same changes
both dl
both sk
sim_exec 2026-11-03T14:00:00 "INSERT INTO dbo.orders (order_id, customer) VALUES (29, 'lost')"
sim_capture 2026-11-03T14:00:01
run_all  # these read day 3 before the purge; dl and sk do not
both bs
sim_exec 2026-11-05T14:00:00 "INSERT INTO dbo.orders (order_id, customer) VALUES (30, 'late')"
sim_capture 2026-11-05T14:00:01
M sim cleanup "$DB" --retention 1d --at 2026-11-05T14:00:02 >/dev/null
sim_exec 2026-11-05T15:00:00 "INSERT INTO dbo.orders (order_id, customer) VALUES (31, 'later')"
sim_capture 2026-11-05T15:00:01
for kind in sim odbc; do
  spec="sim:$DB"; [ $kind = odbc ] && spec=$SRC
  set +e
  M --warehouse "$T/lake_$kind" stream --source "$spec" --capture-instance dbo_orders --target bronze.dl --app-id dl \
    --checkpoint "$T/ck_$kind/dl" --facts ops.facts --control ops.control >/dev/null 2>"$T/dl_$kind"
  rc=$?
  set -e
  [ $rc = 4 ] || die "$kind: data loss exit $rc, want 4: $(cat "$T/dl_$kind")"
done
diff <(sed 's/ (min_lsn.*//' "$T/dl_sim") <(sed 's/ (min_lsn.*//' "$T/dl_odbc") || die "the data-loss messages differ"
both sk --option failOnDataLoss=false
run_all
both bs

for app in m1 mu bs sk; do
  same "bronze.$app"
  same "silver.$app"
done
same ops.facts "$FACTS_OWN"
same ops.control updated_at
n=$(M --warehouse "$T/lake_odbc" table cat ops.facts --format jsonl | grep -c '"event":"data_skipped"')
[ "$n" -ge 1 ] || die "no data_skipped facts row"

# small pages with a cleanup between two of them: the guard sees it (exit 4, "while the
# batch was read") and nothing of the batch is committed
sim_exec 2026-11-09T14:00:00 "INSERT INTO dbo.orders (order_id, customer) VALUES (40, 'a')"
sim_exec 2026-11-09T14:00:01 "INSERT INTO dbo.orders (order_id, customer) VALUES (41, 'b')"
sim_exec 2026-11-09T14:00:02 "INSERT INTO dbo.orders (order_id, customer) VALUES (42, 'c')"
sim_capture 2026-11-09T14:00:03
before=$(M --warehouse "$T/lake_odbc" table cat bronze.mu --format jsonl | wc -l)
MCDC_FAILPOINT=source.mssql.between_pages=stop "$MCDC_BIN" --warehouse "$T/lake_odbc" stream --source "${SRC};pageRows=1" \
  --capture-instance dbo_orders --target bronze.mu --app-id mu --checkpoint "$T/ck_odbc/mu" --facts ops.facts \
  >/dev/null 2>"$T/page.err" &
pid=$!
for _ in $(seq 1 200); do [ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" = T ] && break; sleep 0.05; done
[ "$(awk '{print $3}' /proc/$pid/stat 2>/dev/null)" = T ] || die "the stream never stopped between two pages: $(cat "$T/page.err")"
M sim cleanup "$DB" --retention 1s --at 2026-11-09T14:00:05 >/dev/null
kill -CONT $pid
rc=0; wait $pid || rc=$?
[ $rc = 4 ] || die "cleanup between pages: exit $rc, want 4: $(cat "$T/page.err")"
grep -q "while the batch was read" "$T/page.err" || die "$(cat "$T/page.err")"
after=$(M --warehouse "$T/lake_odbc" table cat bronze.mu --format jsonl | wc -l)
[ "$before" = "$after" ] || die "the batch was committed ($before rows, then $after)"
serve_stop
echo "odbc_sim: ok"
