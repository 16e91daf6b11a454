# --option numPartitions=N: the SQL Server source reads one batch over N connections in LSN
# ranges that end on commits (its pages), and hands the rows out in LSN order. Against `sim
# serve`, with pages of 5 rows (pageRows=5), N = 1, 2 and 4 write the same bronze as sim: (the
# same rows in the same order, the same batches and facts counts), also in batches of three
# commits, with the connection of a range dropped mid-read (the range is retried on a new
# connection, every change once), and for a table with an nvarchar(max) column, fetched a
# row at a time, so that every row is a block of its own handed from a reader to the caller.
# The log says how many ranges a batch was read in, one page each, over N connections. A bad
# N exits 2 before anything is written.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-31T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL' >/dev/null
M sim capture "$DB" --at 2026-10-31T13:59:30 >/dev/null
# transactions of 1 to 12 rows: inserts, updates of many rows, key updates, deletes
id=0 sec=0
for t in 1 7 12 3 9 1 11 4; do
  sec=$((sec + 1))
  vals=
  for _ in $(seq 1 "$t"); do id=$((id + 1)); vals="$vals${vals:+, }($id, N'c$id €', $id.25)"; done
  sim_exec "2026-10-31T14:00:$(printf %02d "$sec")" "INSERT INTO dbo.orders VALUES $vals"
done
sim_exec 2026-10-31T14:01:00 "UPDATE dbo.orders SET amount = amount * 2 WHERE order_id % 3 = 0"
sim_exec 2026-10-31T14:01:01 "UPDATE dbo.orders SET order_id = order_id + 100 WHERE order_id < 4"
sim_exec 2026-10-31T14:01:02 "DELETE FROM dbo.orders WHERE order_id % 5 = 0; INSERT INTO dbo.orders VALUES (999, NULL, NULL)"
sim_capture 2026-10-31T14:01:10

rows() { # rows WAREHOUSE [sort]: bronze's rows as jsonl, in file order or sorted by change order
  M --warehouse "$1" table cat bronze.b --format jsonl | node -e '
    const rows = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l);
    if (process.argv[1] === "sort") rows.sort((a, b) => { const x = JSON.parse(a), y = JSON.parse(b);
      return x._start_lsn < y._start_lsn ? -1 : x._start_lsn > y._start_lsn ? 1 : x._command_id - y._command_id ||
        (x._seqval < y._seqval ? -1 : x._seqval > y._seqval ? 1 : x._operation - y._operation); });
    console.log(rows.join("\n"));
  ' "${2:-}"
}
in_change_order() { # in_change_order WAREHOUSE: every bronze file holds its rows as they were read, in change order
  local f
  for f in $(M --warehouse "$1" table files bronze.b --format json | node -e '
      for (const f of JSON.parse(require("fs").readFileSync(0, "utf8")).files) console.log(f.path)'); do
    node "$MCDC_SRC/tests/node/duck.mjs" "SELECT _start_lsn, _command_id, _seqval, _operation FROM read_parquet('$f')" |
      node -e '
        const r = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
        const key = (x) => [x._start_lsn, String(x._command_id).padStart(12, "0"), x._seqval, x._operation].join(" ");
        for (let i = 1; i < r.length; i++) if (key(r[i - 1]) > key(r[i])) {
          console.error("row " + i + " of " + process.argv[1] + " is out of change order: " + key(r[i - 1]) + " then " + key(r[i]));
          process.exit(1);
        }' "$f" || return 1
  done
}
facts() { M --warehouse "$1" table cat ops.facts --format jsonl | node -e '
    for (const l of require("fs").readFileSync(0, "utf8").split("\n")) if (l) { const r = JSON.parse(l);
      if (r.event === null) console.log(r.batch_id, r.rows, r.inserts, r.updates, r.deletes, r.min_lsn, r.max_lsn, r.end_lsn); }
  ' | sort -n; }
stream_into() { # stream_into SOURCE WAREHOUSE [ARGS...]
  local src=$1 lake=$2; shift 2
  M --log-level debug --warehouse "$lake" stream --source "$src" --capture-instance "${STREAM_CI:-dbo_orders}" --target bronze.b \
    --app-id b --checkpoint "$lake.ck" --facts ops.facts "$@" >"$T/out" 2>"$T/err" ||
    die "stream into $lake: $(grep -v DEBUG "$T/err")"
}

serve_start
SRC="$SRC;pageRows=5"
stream_into "sim:$DB" "$T/lake_sim"
rows "$T/lake_sim" > "$T/want"
[ "$(wc -l < "$T/want")" -gt 60 ] || die "the history has only $(wc -l < "$T/want") change rows"
for n in 1 2 4; do
  stream_into "$SRC" "$T/lake_$n" --option "numPartitions=$n"
  if [ "$n" = 1 ]; then
    ! grep -q "ranges over" "$T/err" || die "numPartitions=1 read in ranges"
  else
    # ranges of a page (5 rows, or a larger commit whole), read by N connections as a pipeline
    grep -Eq "DEBUG source: read dbo_orders in ([3-9]|[1-9][0-9]) ranges of a page over $n connections" "$T/err" ||
      die "numPartitions=$n: not read in 3 or more ranges over $n connections: $(grep ranges "$T/err")"
  fi
  in_change_order "$T/lake_$n" || die "numPartitions=$n: bronze was written out of change order"
  rows "$T/lake_$n" > "$T/got"
  diff "$T/want" "$T/got" >/dev/null || die "numPartitions=$n: bronze differs from sim:'s: $(diff "$T/want" "$T/got" | head -5)"
  [ "$(facts "$T/lake_$n")" = "$(facts "$T/lake_sim")" ] || die "numPartitions=$n: facts differ: $(facts "$T/lake_$n")"
done

# batches of three commits: the same rows, batches and facts
stream_into "sim:$DB" "$T/lake_sim3" --max-commits-per-batch 3
rows "$T/lake_sim3" sort > "$T/want3"
stream_into "$SRC" "$T/lake_43" --max-commits-per-batch 3 --option numPartitions=4
rows "$T/lake_43" sort > "$T/got3"
diff "$T/want3" "$T/got3" >/dev/null || die "numPartitions=4, 3 commits per batch: bronze differs"
in_change_order "$T/lake_43" || die "numPartitions=4, 3 commits per batch: bronze was written out of change order"
[ "$(facts "$T/lake_43")" = "$(facts "$T/lake_sim3")" ] || die "numPartitions=4, 3 commits per batch: facts differ"
serve_stop

# a range's connection dropped mid-read: retried on a new one, every change once
serve_start --fault drop-after-rows:4
SRC="$SRC;pageRows=5"
stream_into "$SRC" "$T/lake_fault" --option numPartitions=4
grep -q "retry 1 of 3" "$T/err" || die "no retry after the dropped connection: $(grep -v DEBUG "$T/err")"
rows "$T/lake_fault" > "$T/got"
in_change_order "$T/lake_fault" || die "numPartitions=4 with a dropped connection: bronze was written out of change order"
diff "$T/want" "$T/got" >/dev/null || die "numPartitions=4 with a dropped connection: bronze differs: $(diff "$T/want" "$T/got" | head -5)"
serve_stop

# a table with an nvarchar(max) column is fetched a row at a time: each row is a block handed
# from its reader to the caller, many blocks to a range, in the order they were fetched
ORDERS_DB=$DB DB=$T/notes.db
M sim init "$DB" --table dbo.notes --keys note_id --at 2026-10-31T13:59:00 \
  --schema 'note_id INT NOT NULL, body NVARCHAR(MAX) NULL' >/dev/null
M sim capture "$DB" --at 2026-10-31T13:59:30 >/dev/null
id=0 sec=0
for t in 3 8 1 6 2 9 4; do
  sec=$((sec + 1))
  vals=
  for _ in $(seq 1 "$t"); do id=$((id + 1)); vals="$vals${vals:+, }($id, N'note $id $(printf 'x%.0s' $(seq 1 $((id * 7))))')"; done
  sim_exec "2026-10-31T14:00:$(printf %02d "$sec")" "INSERT INTO dbo.notes VALUES $vals"
done
sim_exec 2026-10-31T14:01:00 "UPDATE dbo.notes SET body = body + N' edited' WHERE note_id % 2 = 0"
sim_capture 2026-10-31T14:01:10
serve_start
STREAM_CI=dbo_notes stream_into "sim:$DB" "$T/lake_notes_sim"
rows "$T/lake_notes_sim" > "$T/want"
[ "$(wc -l < "$T/want")" -gt 40 ] || die "the notes history has only $(wc -l < "$T/want") change rows"
STREAM_CI=dbo_notes stream_into "$SRC;pageRows=5" "$T/lake_notes_4" --option numPartitions=4
grep -Eq "DEBUG source: read dbo_notes in ([3-9]|[1-9][0-9]) ranges of a page over 4 connections" "$T/err" ||
  die "nvarchar(max), numPartitions=4: not read in 3 or more ranges: $(grep ranges "$T/err")"
in_change_order "$T/lake_notes_4" || die "nvarchar(max), numPartitions=4: bronze was written out of change order"
rows "$T/lake_notes_4" > "$T/got"
diff "$T/want" "$T/got" >/dev/null || die "nvarchar(max), numPartitions=4: bronze differs from sim:'s: $(diff "$T/want" "$T/got" | head -5)"
serve_stop

# a page costs its three statements and no cancel: FreeTDS cancels a statement closed before
# its answer was read to the end (a round trip more), so page_end's one row is read to the
# end. The server logs each late cancel with the start of the statement it followed: none
# follows page_end, mapping_range or changes, for pages of 5 rows and of 10 (about 14 pages
# and 7), over one connection and over two. (Whether FreeTDS cancels a statement read to its
# last row but not its last DONE depends on timing; such cancels of the short statements are
# counted, but not held to a number.)
DB=$ORDERS_DB
SERVE_LOG_LEVEL=debug serve_start --latency 2ms
for pr in 5 10; do
  for n in 1 2; do
    : > "$T/serve.log"
    STREAM_CI=dbo_orders stream_into "$SRC;pageRows=$pr" "$T/lake_cancel_${pr}_$n" --option "numPartitions=$n"
    grep -q 'DEBUG sim: query: max_lsn' "$T/serve.log" ||
      die "pageRows=$pr, numPartitions=$n: the server logged nothing at debug: $(head -3 "$T/serve.log")"
    grep 'a cancel after the request had ended' "$T/serve.log" > "$T/late" || true
    if grep -E 'SELECT ISNULL\(\(SELECT __\$start_lsn|SELECT start_lsn, tran_end_time|SELECT c\.__\$start_lsn' "$T/late" > "$T/late_page"; then
      die "pageRows=$pr, numPartitions=$n: a page's statement cost a cancel: $(head -3 "$T/late_page")"
    fi
    echo "pageRows=$pr numPartitions=$n: $(wc -l < "$T/late") late cancels of short statements"
  done
done
serve_stop

# a bad N: exit 2, nothing written
for bad in 0 65 two; do
  rc=0; M --warehouse "$T/lake_bad" stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.b \
    --app-id b --checkpoint "$T/ck_bad" --option "numPartitions=$bad" >/dev/null 2>"$T/err" || rc=$?
  [ $rc = 2 ] || die "numPartitions=$bad: exit $rc, not 2"
  grep -q "error: numPartitions=$bad: expected an integer from 1 to 64" "$T/err" || die "numPartitions=$bad: $(cat "$T/err")"
  [ ! -e "$T/ck_bad" ] && [ ! -e "$T/lake_bad" ] || die "numPartitions=$bad: something was written"
done
echo "ok: numPartitions=1, 2 and 4 read the same bronze over 1, 2 and 4 connections, also across a dropped connection and a row at a time"
