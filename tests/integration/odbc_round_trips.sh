# Round trips of a stream batch over the SQL Server source (issue 22), counted at `sim
# serve` as the requests of the source's transcript (record=DIR: one entry per batch, RPC
# or transaction request the server received): a run that finds one new commit sends, on
# top of what an idle run sends, the batch's questions less the idle poll's max_lsn: 9
# (max_lsn, capture_instances_of, positions, ddl_history, the read's has_select, page_end,
# mapping_range and changes, positions again; 14 before positions). The statements of each
# are printed (ctest -V) for docs/benchmarks.md.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-31T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null
M sim capture "$DB" --at 2026-10-31T13:59:30 >/dev/null
sim_exec 2026-10-31T14:00:00 "INSERT INTO dbo.orders (order_id, customer) VALUES (1, N'a'), (2, N'b')"
sim_capture 2026-10-31T14:00:10
serve_start

run() { # run NAME: one run of the stream (--trigger once), its requests in $T/NAME.jsonl
  rm -rf "$T/rec" && mkdir "$T/rec"
  M --warehouse "$T/lake" stream --source "$SRC;record=$T/rec" --capture-instance dbo_orders --target bronze.t \
    --app-id t --checkpoint "$T/ck" --facts ops.facts --trigger once "${@:2}" >"$T/out" 2>"$T/err" ||
    die "stream $1: $(cat "$T/err")"
  cp "$T/rec/transcript.jsonl" "$T/$1.jsonl"
}
texts() { # texts NAME: the statement of each request, one a line
  node -e '
for (const l of require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")) {
  const e = JSON.parse(l);
  console.log(e.kind + ": " + String(e.text || "").replace(/\s+/g, " ").slice(0, 150));
}' "$T/$1.jsonl"
}
run first
run idle
sim_exec 2026-10-31T14:01:00 "INSERT INTO dbo.orders (order_id, customer) VALUES (3, N'c')"
sim_capture 2026-10-31T14:01:10
run batch
idle=$(wc -l < "$T/idle.jsonl"); batch=$(wc -l < "$T/batch.jsonl")
echo "# idle run: $idle requests"; texts idle | sed 's/^/#   /'
echo "# run with one batch: $batch requests"; texts batch | sed 's/^/#   /'
trips=$((batch - idle + 1))
echo "# the batch: $trips round trips"
[ "$trips" -le 9 ] || die "a batch of one commit sent $trips requests (at most 9)"
# positions came twice, and max_lsn, min_lsn, commit_time and server_now not on their own
n_pos=$(texts batch | grep -c 'SELECT x.max_lsn, mx.tran_end_time')
[ "$n_pos" = 2 ] || die "positions sent $n_pos times"
texts batch | tail -n +"$idle" | grep -qE 'fn_cdc_get_min_lsn\(@P1\)$|WHERE start_lsn = @P1$|^batch: SELECT SYSUTCDATETIME' &&
  die "a question positions answers was sent on its own: $(texts batch | tail -n +"$idle")"
# the stream read the change
M --warehouse "$T/lake" table cat bronze.t --format jsonl | grep -q '"customer":"c"' || die "bronze lacks the new row"
