# --columns 'name [TYPE], ...' (and --option columns=): the same history streamed through
# `--source sim:` and `--source odbc:` (unixODBC + FreeTDS against `sim serve`) with a selection
# of the captured columns, in the listed order, retyped where a TYPE is given, writes the same
# bronze and silver, with the exact converted values (decimal rescaled, date to timestamp_ntz,
# smallint to string); a bootstrap snapshot is projected the same way. Over ODBC a column left
# out is never fetched: no statement the source sent names it (its transcript). An unknown
# column, a lossy or key retype, a malformed list and two disagreeing spellings exit 2 naming
# the fix, and leave no checkpoint and no table behind.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-31T13:59:00 \
  --schema 'order_id INT NOT NULL, amount DECIMAL(12,2) NULL, secret_note NVARCHAR(40) NULL, d DATE NULL, q SMALLINT NULL' >/dev/null
M sim capture "$DB" --at 2026-10-31T13:59:30 >/dev/null
sim_exec 2026-10-31T13:59:40 "INSERT INTO dbo.orders VALUES (1, 12.50, N'one', '2026-01-02', 7)"
sim_capture 2026-10-31T13:59:50
serve_start
COLS='amount decimal(20,3), `order_id`, d timestamp_ntz, Q string'
mkdir "$T/rec"
SRC="$SRC;record=$T/rec"
both b --bootstrap --columns "$COLS"
sim_exec 2026-10-31T14:00:00 "INSERT INTO dbo.orders VALUES (2, -0.05, N'two', NULL, -3), (3, NULL, NULL, '2026-12-31', NULL)"
sim_exec 2026-10-31T14:00:01 "UPDATE dbo.orders SET amount = amount + 1, secret_note = N'uno' WHERE order_id = 1"
sim_exec 2026-10-31T14:00:02 "DELETE FROM dbo.orders WHERE order_id = 2"
sim_capture 2026-10-31T14:00:05
both b --columns "$COLS"

for kind in sim odbc; do
  lake=$T/lake_$kind
  for table in bronze.b silver.b; do
    fields=$(cat "$lake/${table/./\/}/_delta_log/"*.json | node -e '
      let schema;
      for (const l of require("fs").readFileSync(0, "utf8").split("\n"))
        if (l.trim() && JSON.parse(l).metaData) schema = JSON.parse(JSON.parse(l).metaData.schemaString);
      console.log(schema.fields.filter((f) => !f.name.startsWith("_")).map((f) => f.name + ":" + f.type).join(" "));
    ')
    [ "$fields" = "amount:decimal(20,3) order_id:integer d:timestamp_ntz q:string" ] ||
      die "$kind $table: the captured columns are '$fields'"
  done
  M --warehouse "$lake" table cat bronze.b --format jsonl | node -e '
      const rows = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
      for (const r of rows) console.log([r._operation, r.order_id, r.amount, r.d, r.q].join(" "));
    ' | sort > "$T/got_$kind"
  printf '%s\n' "0 1 12.500 2026-01-02T00:00:00.000000 7" "2 1 12.500 2026-01-02T00:00:00.000000 7" \
    "2 2 -0.050  -3" "2 3  2026-12-31T00:00:00.000000 " \
    "3 1 12.500 2026-01-02T00:00:00.000000 7" "4 1 13.500 2026-01-02T00:00:00.000000 7" \
    "1 2 -0.050  -3" | sort > "$T/want"
  diff "$T/want" "$T/got_$kind" >&2 || die "$kind: bronze rows are not the selection's converted values"
  M --warehouse "$lake" table cat silver.b --format jsonl | node -e '
      const rows = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
      for (const r of rows) console.log(Object.keys(r).filter((k) => !k.startsWith("_")).join(",") + " " + [r.order_id, r.amount, r.q].join(" "));
    ' | sort > "$T/silver_$kind"
  printf '%s\n' "amount,order_id,d,q 1 13.500 7" "amount,order_id,d,q 3  " > "$T/want_silver"
  diff "$T/want_silver" "$T/silver_$kind" >&2 || die "$kind: silver is not the selection"
done
same bronze.b
same silver.b

# over ODBC, the column left out is never read: no statement names it
cat "$T/rec/"*.jsonl | node -e '
    for (const l of require("fs").readFileSync(0, "utf8").split("\n"))
      if (l.trim()) { const e = JSON.parse(l); console.log(e.text || "", JSON.stringify(e.calls || [])); }
  ' > "$T/statements"
grep -q 'sp_cdc_get_captured_columns' "$T/statements" || die "the transcript holds no statement"
grep -q '__\$start_lsn' "$T/statements" || die "the transcript holds no change read"
! grep -q 'secret_note' "$T/statements" || die "a statement the source sent names the column --columns left out"
SRC=${SRC%;record=*}

# --option columns= is the same setting
M --warehouse "$T/lake_opt" stream --source "$SRC" --capture-instance dbo_orders --target bronze.o --app-id o \
  --checkpoint "$T/ck_opt" --option "columns=$COLS" >"$T/out" 2>"$T/err" || die "--option columns=: $(cat "$T/err")"
M --warehouse "$T/lake_opt" table cat bronze.o --format jsonl | node -e '
    const rows = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
    for (const r of rows) console.log(Object.keys(r).filter((k) => !k.startsWith("_")).join(","));
  ' | sort -u > "$T/opt_cols"
[ "$(cat "$T/opt_cols")" = "amount,order_id,d,q" ] || die "--option columns=: columns $(cat "$T/opt_cols")"

# refusals: exit 2, the fix named, nothing written
refuse() { # refuse SOURCE WANT-MESSAGE WANT-HINT ARGS...
  local spec=$1 msg=$2 hint=$3 rc=0; shift 3
  M --warehouse "$T/lake_bad" stream --source "$spec" --capture-instance dbo_orders --target bronze.bad --app-id bad \
    --checkpoint "$T/ck_bad" --facts ops.facts "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ $rc = 2 ] || die "$* through ${spec%%:*}: exit $rc, not 2: $(cat "$T/err")"
  grep -qF "$msg" "$T/err" || die "$* through ${spec%%:*}: message: $(cat "$T/err")"
  grep -qF "hint: $hint" "$T/err" || die "$* through ${spec%%:*}: hint: $(cat "$T/err")"
  [ ! -e "$T/ck_bad" ] && [ ! -e "$T/lake_bad" ] || die "$* through ${spec%%:*}: a refused stream wrote something"
}
for spec in "sim:$DB" "$SRC"; do
  refuse "$spec" "error: --columns: column nope is not a captured column of dbo_orders" \
    "the captured columns of dbo_orders: order_id, amount, secret_note, d, q" --columns 'order_id, nope int'
  refuse "$spec" "error: --columns: column amount of dbo_orders is decimal(12,2) and cannot be read as decimal(5,2)" \
    "give its own type (decimal(12,2))" --columns 'order_id, amount decimal(5,2)'
  refuse "$spec" "cannot be read as long (a key column keeps its type)" "give its own type (integer)" \
    --columns 'order_id bigint'
done
refuse "sim:$DB" "error: --columns: column amount: unknown type 'money'" "types: boolean, tinyint" --columns 'amount money'
refuse "sim:$DB" "error: --columns: column AMOUNT is listed twice" "list each column once" --columns 'amount, AMOUNT'
refuse "sim:$DB" "error: --columns amount and --option columns=d disagree" "give the setting once" \
  --columns amount --option columns=d
serve_stop
echo "ok: --columns selects and retypes the captured columns through sim: and odbc:, and refuses bad lists before writing"
