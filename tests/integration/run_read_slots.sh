# mssql-cdc run --workers N reads at most N tables at once (ADR 0063): a round gives its
# read slot back once its batch is read, and that batch's file, commits and verdict run
# beside another table's read. With 6 tables and --workers 1, then 2: the slots in use,
# as the debug log counts them, never pass N, every slot taken is given back, some table
# took a slot while another one's batch was still to be committed (its "batch" line came
# later), and every bronze equals its change table with its verdict written.
. "$(dirname "$0")/stream_lib.bash"
cd "$T"
unset MSSQL_CDC_WAREHOUSE
schema='order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL'
tables="t1 t2 t3 t4 t5 t6"
for t in $tables; do
  M sim init "$DB" --table "dbo.$t" --keys order_id --at 2026-10-01T13:59:00 --schema "$schema" >/dev/null
done
for t in $tables; do
  M sim workload "$DB" --table "dbo.$t" --transactions 40 --rows-per-transaction 4 --seed 7 \
    --interval 10ms --capture-every 1m >/dev/null
done
M sim capture "$DB" >/dev/null
for n in 1 2; do
  cat > "run$n.yaml" <<YAML
warehouse: lake$n
sources:
  shop: {source: "sim:db.sqlite"}
defaults:
  facts: ops.facts
  control: ops.control
  trigger: available-now
tables:
  - source: shop
    include: ["dbo_*"]
    target: "bronze.{table}"
    app_id: "{ci}"
    checkpoint: "ck$n/{ci}"
YAML
  rc=0
  M --log-level debug run --config "run$n.yaml" --workers "$n" >"run$n.out" 2>"run$n.err" || rc=$?
  [ "$rc" = 0 ] || die "--workers $n: run exited $rc: $(tail -5 "run$n.err")"
  grep -q "^run: 6 tables, 0 stopped in error" "run$n.out" || die "--workers $n: $(tail -3 "run$n.out")"
  taken=$(grep -c 'read slot taken' "run$n.err" || true)
  given=$(grep -c 'read slot given back' "run$n.err" || true)
  [ "$taken" -ge 6 ] && [ "$taken" = "$given" ] || die "--workers $n: $taken slots taken, $given given back"
  most=$(sed -n "s/.*read slot taken (\([0-9]*\) of $n in use).*/\1/p" "run$n.err" | sort -n | tail -1)
  [ -n "$most" ] && [ "$most" -le "$n" ] || die "--workers $n: $most read slots in use at once"
  ! grep -q "read slot taken ([0-9]* of [^$n]" "run$n.err" || die "--workers $n: slots not counted of $n"
  # a table A gave its slot back, another took one, and only then was A's verdict written:
  # A committed while the other read
  overlap=$(awk '
    match($0, /\[bronze\.[a-z0-9]+\]/) { t = substr($0, RSTART + 1, RLENGTH - 2) }
    /read slot given back/ { back[t] = 1 }
    /read slot taken/ { for (a in back) if (a != t && !(a in done)) seen[a] = 1 }
    /verdict of/ { done[t] = 1; if (t in seen) n++ }
    END { print n + 0 }' "run$n.err")
  [ "$overlap" -ge 1 ] || die "--workers $n: no table committed while another read: $(grep -v query: "run$n.err" | head -20)"
  for t in $tables; do
    M sim query "$DB" "SELECT * FROM cdc.dbo_${t}_CT" --format jsonl > ct.jsonl
    M --warehouse "lake$n" table cat "bronze.$t" --format jsonl > bronze.jsonl
    $CHECK bronze-vs-ct ct.jsonl bronze.jsonl >/dev/null || die "--workers $n: bronze.$t differs from its change table"
    M --warehouse "lake$n" finalization show --control ops.control --format jsonl | grep -q "\"bronze.$t\"" ||
      die "--workers $n: no verdict for bronze.$t"
  done
done
echo PASS
