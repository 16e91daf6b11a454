# image and rowversion from SQL Server's change tables to Delta: the same history streamed
# through `--source sim:` and through `--source odbc:` (unixODBC + FreeTDS against `sim serve`)
# writes bronze and silver columns of type binary holding the exact bytes: image values, an
# empty image, NULLs, image NULL in before images and deletes, and the database's rowversion
# stamps (0x...07D1 for the first row, a new stamp on every update).
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-31T13:59:00 \
  --schema 'order_id INT NOT NULL, pic IMAGE NULL, ver ROWVERSION NOT NULL' >/dev/null
M sim capture "$DB" --at 2026-10-31T13:59:30 >/dev/null
serve_start
sim_exec 2026-10-31T14:00:00 "INSERT INTO dbo.orders (order_id, pic) VALUES (1, 0x00CAFE00), (2, 0x), (3, NULL)"
sim_exec 2026-10-31T14:00:01 "UPDATE dbo.orders SET pic = 0xBEEF WHERE order_id = 1"
sim_exec 2026-10-31T14:00:02 "DELETE FROM dbo.orders WHERE order_id = 2"
sim_capture 2026-10-31T14:00:05
both b

for kind in sim odbc; do
  lake=$T/lake_$kind
  for table in bronze.b silver.b; do
    # the column types in the table's schema (its latest metaData action)
    types=$(cat "$lake/${table/./\/}/_delta_log/"*.json | node -e '
      let schema;
      for (const l of require("fs").readFileSync(0, "utf8").split("\n"))
        if (l.trim() && JSON.parse(l).metaData) schema = JSON.parse(JSON.parse(l).metaData.schemaString);
      console.log(schema.fields.filter((f) => f.name === "pic" || f.name === "ver").map((f) => f.name + ":" + f.type).join(" "));
    ')
    [ "$types" = "pic:binary ver:binary" ] || die "$kind $table: the columns are $types, not binary"
  done
  M --warehouse "$lake" table cat bronze.b --format jsonl |
    node -e '
      const rows = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
      for (const r of rows) console.log([r._operation, r.order_id, r.pic, r.ver].join(" "));
    ' | sort > "$T/got_$kind"
  printf '%s\n' "1 2 null 0x00000000000007D2" "2 1 0x00CAFE00 0x00000000000007D1" "2 2 0x 0x00000000000007D2" \
    "2 3 null 0x00000000000007D3" "3 1 null 0x00000000000007D1" "4 1 0xBEEF 0x00000000000007D4" | sort > "$T/want"
  sed -i 's/  / null /g' "$T/got_$kind"
  diff "$T/want" "$T/got_$kind" >&2 || die "$kind: bronze rows are not the exact bytes"
  M --warehouse "$lake" table cat silver.b --format jsonl | node -e '
      const rows = require("fs").readFileSync(0, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
      for (const r of rows) console.log([r.order_id, r.pic, r.ver].join(" "));
    ' | sort > "$T/silver_$kind"
  printf '%s\n' "1 0xBEEF 0x00000000000007D4" "3 null 0x00000000000007D3" > "$T/want_silver"
  sed -i 's/  / null /g' "$T/silver_$kind"
  diff "$T/want_silver" "$T/silver_$kind" >&2 || die "$kind: silver rows are not the exact bytes"
done
same bronze.b
serve_stop
echo "ok: image and rowversion land as binary with their exact bytes through sim: and odbc:"
