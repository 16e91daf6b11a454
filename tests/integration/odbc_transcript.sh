# Transcripts: the SQL Server source's record=DIR keeps every statement it sent and every
# response (FreeTDS's packet dump turned into JSONL, no password in it), and `sim serve
# --replay DIR` over an empty simulator database answers the same source from it: the same
# stream writes the same bronze rows and facts counts, and source check says the same. A
# statement the transcript does not hold gets error 50000 naming it; bad record= and --replay
# values exit 2 and change nothing.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-31T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
M sim capture "$DB" --at 2026-10-31T13:59:30 >/dev/null
sim_exec 2026-10-31T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, N'Zoë €', 10.50, '2026-10-31T13:00:00.123')"
sim_exec 2026-10-31T14:00:01 "INSERT INTO dbo.orders (order_id, customer, amount) VALUES (2, N'日本', -0.05), (3, NULL, NULL)"
sim_exec 2026-10-31T14:01:00 "UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = 1"
sim_exec 2026-10-31T14:01:01 "UPDATE dbo.orders SET order_id = 20 WHERE order_id = 2"
sim_exec 2026-10-31T14:01:02 "DELETE FROM dbo.orders WHERE order_id = 3"
sim_capture 2026-10-31T14:01:10
serve_start

stream() { # stream WAREHOUSE: the stream of this test, into WAREHOUSE
  M --warehouse "$1" stream --source "$SRC_REC" --capture-instance dbo_orders --target bronze.t --app-id t \
    --checkpoint "$1.ck" --facts ops.facts --control ops.control --max-commits-per-batch 2 \
    >"$T/out" 2>"$T/err" || die "stream into $1: $(cat "$T/err")"
}

# bad usage: exit 2, nothing written
rc=0; M source check --source "$SRC;record=$T/nowhere" >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] || die "record= of a missing directory: exit $rc: $(cat "$T/err")"
grep -q "record=$T/nowhere: not a writable directory" "$T/err" || die "message: $(cat "$T/err")"
grep -q "hint: create the directory first" "$T/err" || die "hint: $(cat "$T/err")"
mkdir "$T/rec"
rc=0; M source check --source "$SRC;record=$T/rec;DumpFile=$T/d" >/dev/null 2>"$T/err" || rc=$?
[ $rc = 2 ] || die "record= with DumpFile=: exit $rc"
[ -z "$(ls -A "$T/rec")" ] || die "a refused source wrote into the record directory"

# record: source check, then the stream
SRC_REC="$SRC;record=$T/rec"
# (the history is dated October 2026, so the check finds max_lsn stale: exit 3, on replay too)
rc_rec=0; M source check --source "$SRC_REC" --capture-instance dbo_orders >"$T/check_rec" 2>&1 || rc_rec=$?
grep -q "^ok   capture instance dbo_orders: 4 captured columns" "$T/check_rec" || die "check: $(cat "$T/check_rec")"
stream "$T/lake_rec"
[ -s "$T/rec/transcript.jsonl" ] || die "no transcript"
ls -A "$T/rec" | grep -qv '^transcript.jsonl$' && die "the record directory keeps more than the transcript: $(ls -A "$T/rec")"
grep -rqF -- "$PW" "$T/rec" && die "the password is in the transcript"
grep -rqiF -- "PWD=" "$T/rec" && die "a connection string is in the transcript"
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l));
const need = (c, m) => { if (!c) { console.error(m); process.exit(1); } };
need(lines.length > 10, "only " + lines.length + " entries");
lines.forEach((e, i) => {
  need(e.n === i + 1, "entry " + i + " is numbered " + e.n);
  need(["batch", "rpc", "tm"].includes(e.kind), "kind " + e.kind);
  need(/^[0-9a-f]+$/.test(e.request) && /^[0-9a-f]*$/.test(e.response), "hex of entry " + e.n);
  need(e.decoded && !("undecoded_from" in e.decoded), "entry " + e.n + " is not decoded whole: " + JSON.stringify(e.decoded));
});
// the change rows as people read them: a decimal exactly, text in UTF-8, a datetime2(3)
const rows = lines.flatMap((e) => e.decoded.results.flatMap((r) => r.rows.map((row) => JSON.stringify(row))));
need(rows.some((r) => r.includes("\"Zoë €\"") && r.includes("\"11.50\"")), "no decoded change row with Zoë € and 11.50");
need(rows.some((r) => r.includes("\"2026-10-31 13:00:00.123\"")), "no decoded datetime2(3)");
need(lines.some((e) => e.kind === "batch" && /sys\.fn_cdc_get_max_lsn\(\)/.test(e.text)), "no max_lsn batch");
const rpc = lines.find((e) => e.kind === "rpc" && e.calls[0].params.some((p) => p.value === "dbo_orders"));
need(rpc && rpc.text && rpc.calls[0].procedure_id === 10, "no sp_executesql with the capture instance as a parameter");
' "$T/rec/transcript.jsonl" || die "transcript: $(head -c 2000 "$T/rec/transcript.jsonl")"
serve_stop

# replay over an empty database (its own table, no CDC): the same check, the same stream
EMPTY=$T/empty.sqlite
M sim init "$EMPTY" --table dbo.other --keys id --schema 'id INT NOT NULL' >/dev/null
saved_db=$DB; DB=$EMPTY
serve_start --replay "$T/rec"
DB=$saved_db
SRC_REC=$SRC
rc_rep=0; M source check --source "$SRC" --capture-instance dbo_orders >"$T/check_rep" 2>&1 || rc_rep=$?
[ $rc_rec = $rc_rep ] || die "source check exits $rc_rep on replay, $rc_rec when recorded: $(cat "$T/check_rep")"
diff <(sed 's/Port=[0-9]*/Port=P/; s/;record=[^;]*//' "$T/check_rec") <(sed 's/Port=[0-9]*/Port=P/; s/;record=[^;]*//' "$T/check_rep") >/dev/null ||
  die "source check differs on replay: $(diff <(sed 's/Port=[0-9]*/Port=P/; s/;record=[^;]*//' "$T/check_rec") <(sed 's/Port=[0-9]*/Port=P/; s/;record=[^;]*//' "$T/check_rep"))"
stream "$T/lake_rep"
for w in rec rep; do
  M --warehouse "$T/lake_$w" table cat bronze.t --format jsonl > "$T/bronze_$w"
  M --warehouse "$T/lake_$w" table cat ops.facts --format jsonl |
    node -e 'for (const l of require("fs").readFileSync(0, "utf8").trim().split("\n")) { const f = JSON.parse(l);
      console.log([f.batch_id, f.event, f.rows, f.inserts, f.updates, f.deletes, f.min_lsn, f.max_lsn, f.min_commit_ts,
        f.max_commit_ts, f.end_lsn, f.end_commit_ts].join(" ")); }' | sort > "$T/facts_$w"
done
[ "$(wc -l < "$T/bronze_rec")" -ge 5 ] || die "recorded stream wrote $(wc -l < "$T/bronze_rec") rows"
[ "$(wc -l < "$T/facts_rec")" -ge 2 ] || die "recorded stream wrote $(wc -l < "$T/facts_rec") facts rows"
node "$MCDC_SRC/tests/integration/odbc_compare.mjs" "$T/bronze_rec" "$T/bronze_rep" "" >/dev/null ||
  die "bronze differs on replay: $(node "$MCDC_SRC/tests/integration/odbc_compare.mjs" "$T/bronze_rec" "$T/bronze_rep" "" 2>&1)"
diff "$T/facts_rec" "$T/facts_rep" >/dev/null || die "facts differ on replay: $(diff "$T/facts_rec" "$T/facts_rep")"

# a statement the transcript does not hold: error 50000 naming it
rc=0; M source check --source "$SRC" --capture-instance dbo_nothing >"$T/out" 2>&1 || rc=$?
printf 'SELECT 41 + 1\ngo\n' | tsql -H 127.0.0.1 -p "$PORT" -U u -P "$PW" -D shop >"$T/tsql" 2>&1 || true
grep -q "50000" "$T/tsql" && grep -q "not in the transcript being replayed: SELECT 41 + 1" "$T/tsql" || die "tsql: $(cat "$T/tsql")"
serve_stop

# --replay of a directory that holds no transcript: exit 2 before listening
mkdir "$T/none"
rc=0; M sim serve "$EMPTY" --listen 127.0.0.1:0 --replay "$T/none" 2>"$T/err" || rc=$?
[ $rc = 2 ] || die "--replay of an empty directory: exit $rc: $(cat "$T/err")"
grep -q "no recorded statement" "$T/err" || die "message: $(cat "$T/err")"
echo 'not json' > "$T/none/x.jsonl"
rc=0; M sim serve "$EMPTY" --listen 127.0.0.1:0 --replay "$T/none" 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "x.jsonl:1: not a transcript entry" "$T/err" || die "bad entry: exit $rc: $(cat "$T/err")"
echo ok
