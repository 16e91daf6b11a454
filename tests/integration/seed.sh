# `mssql-cdc seed`: a stream's first snapshot from an existing copy of the table. The copy
# is a Delta table written elsewhere (here: silver of another stream, and one whose column
# names differ in case); seed appends its rows to bronze stamped with the commit LSN of
# --as-of (a time mapped with 'largest less than or equal', or an LSN), writes the bootstrap
# row, and `stream --bootstrap` afterwards starts after it: silver then equals the source.
# Bad input exits 2 and writes nothing; an --as-of older than what CDC holds exits 4; a
# rerun of the same seed writes nothing new.
source "$MCDC_SRC/tests/integration/stream_lib.bash"

SEED() { M seed --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 --facts ops.facts "$@"; }
version() { M table info "$1" --format json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))'; }
src_rows() { M sim query "$1" 'SELECT order_id, customer, amount FROM dbo.orders' --format csv | tail -n +2 | sort -t, -k1n; }

M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL' >/dev/null
vals=$(for i in $(seq 1 20); do printf "(%d, N'c%d', %d.50)," "$i" "$i" "$i"; done)
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES ${vals%,}"
sim_capture 2026-10-01T14:00:30
# the copy: another stream's silver, current as of now (14:00:30)
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.c --app-id c1 --checkpoint "$T/ck_c" \
  --bootstrap >/dev/null 2>&1
M silver apply --bronze bronze.c --silver copy.orders --capture-instance dbo_orders --keys order_id --control ops.control >/dev/null
INS=$(M sim query "$DB" "SELECT MAX(start_lsn) AS l FROM cdc.lsn_time_mapping WHERE tran_end_time <= '2026-10-01T14:00:00.500'" --format csv | tail -1)
# a copy that lacks a captured column
M sim init "$T/other.db" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL' >/dev/null
M sim exec "$T/other.db" --at 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'x')" >/dev/null
M sim capture "$T/other.db" --at 2026-10-01T14:00:30 >/dev/null
M stream --source "sim:$T/other.db" --capture-instance dbo_orders --target bronze.x --app-id x1 --checkpoint "$T/ck_x" \
  --bootstrap >/dev/null 2>&1
M silver apply --bronze bronze.x --silver copy.narrow --capture-instance dbo_orders --keys order_id --control ops.control >/dev/null
# after the copy: an update, a delete and an insert
sim_exec 2026-10-01T14:01:00 "UPDATE dbo.orders SET customer = N'u' WHERE order_id = 3; DELETE FROM dbo.orders WHERE order_id = 5; INSERT INTO dbo.orders VALUES (100, N'new', 1.00)"
sim_capture 2026-10-01T14:01:30

# ---- bad input: exit 2, nothing written -------------------------------------------------------
for bad in "--as-of soon" "--as-of 0xZZ" "--as-of 2030-01-01T00:00:00" "--as-of 0x00FFFFFFFFFFFFFF0001"; do
  # shellcheck disable=SC2086
  set +e; out=$(SEED --from copy.orders $bad 2>&1); rc=$?; set -e
  [ $rc = 2 ] && grep -q "^mssql-cdc: error: --as-of" <<<"$out" || die "seed $bad: $rc $out"
done
set +e; out=$(SEED --from copy.none --as-of 2026-10-01T14:00:45 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "copy.none: not a Delta table" <<<"$out" || die "seed from nothing: $rc $out"
set +e; out=$(SEED --from copy.narrow --as-of 2026-10-01T14:00:45 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "copy.narrow: no column amount (captured by the capture instance)" <<<"$out" || die "seed narrow: $rc $out"
set +e; out=$(SEED --as-of 2026-10-01T14:00:45 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q -- "--from is required" <<<"$out" || die "seed without --from: $rc $out"
[ ! -e "$T/lake/bronze/o" ] && [ ! -e "$T/lake/ops/facts" ] || die "a refused seed wrote something"

# ---- seed as of a time, then the stream starts after it ---------------------------------------
out=$(SEED --from copy.orders --as-of 2026-10-01T14:00:45) || die "seed: exit $?"
[ "$out" = "seed bronze.o: 20 rows of copy.orders as of $INS (2026-10-01T14:00:00.000Z); run the stream with --bootstrap: it starts after it" ] ||
  die "seed: $out (want $INS)"
[ "$(M table cat bronze.o --format csv --columns _operation,_start_lsn,_snapshot,_chunk | tail -n +2 | sort -u)" = "0,$INS,$INS," ] ||
  die "seeded rows: $(M table cat bronze.o --format csv --columns _operation,_start_lsn,_snapshot,_chunk | sort -u)"
[ "$(M table cat bronze.o --format csv --columns order_id,customer,amount | tail -n +2 | sort -t, -k1n)" = \
  "$(for i in $(seq 1 20); do echo "$i,c$i,$i.50"; done)" ] || die "seeded values"
[ "$(M table cat ops.facts --format csv --columns event,rows,min_lsn,max_lsn | grep '^bootstrap,')" = "bootstrap,20,$INS,$INS" ] ||
  die "bootstrap row: $(M table cat ops.facts --format csv --columns event,rows,min_lsn,max_lsn)"
v=$(version bronze.o)
out=$(SEED --from copy.orders --as-of 2026-10-01T14:00:45) || die "seed rerun: exit $?"
grep -q "already holds this seed" <<<"$out" || die "seed rerun: $out"
[ "$(version bronze.o)" = "$v" ] || die "a seed rerun wrote bronze"
set +e; out=$(SEED --from copy.orders --as-of "$(M sim query "$DB" 'SELECT MAX(start_lsn) AS l FROM cdc.lsn_time_mapping' --format csv | tail -1)" 2>&1); rc=$?; set -e
[ $rc = 2 ] && grep -q "already holds the first snapshot of app_id o1 (a seed at $INS)" <<<"$out" || die "second seed: $rc $out"
M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o1 --checkpoint "$T/ck" \
  --facts ops.facts --bootstrap >/dev/null 2>"$T/err" || die "stream after the seed: $(cat "$T/err")"
[ "$(M table cat ops.facts --format csv --columns event | grep -c '^bootstrap$')" = 1 ] || die "two bootstrap rows"
[ "$(M table cat bronze.o --format csv --columns _operation | grep -c '^0$')" = 20 ] || die "the stream read the table again"
M silver apply --bronze bronze.o --silver silver.o --capture-instance dbo_orders --keys order_id --control ops.control >/dev/null
diff <(src_rows "$DB") <(M table cat silver.o --format csv --columns order_id,customer,amount | tail -n +2 | sort -t, -k1n) ||
  die "silver after the seed differs from the source"

# ---- column names matched ignoring case; an --as-of given as an LSN ---------------------------
M sim init "$T/upper.db" --table dbo.orders --keys ORDER_ID --at 2026-10-01T13:59:00 \
  --schema 'ORDER_ID INT NOT NULL, Customer NVARCHAR(40) NULL, AMOUNT DECIMAL(12,2) NULL' >/dev/null
M sim exec "$T/upper.db" --at 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (7, N'seven', 7.00)" >/dev/null
M sim capture "$T/upper.db" --at 2026-10-01T14:00:30 >/dev/null
M stream --source "sim:$T/upper.db" --capture-instance dbo_orders --target bronze.up --app-id up1 --checkpoint "$T/ck_up" \
  --bootstrap >/dev/null 2>&1
M silver apply --bronze bronze.up --silver copy.upper --capture-instance dbo_orders --keys ORDER_ID --control ops.control >/dev/null
out=$(M seed --source "sim:$DB" --capture-instance dbo_orders --target bronze.u --app-id u1 --facts ops.facts \
        --from copy.upper --as-of "$INS") || die "seed from copy.upper: exit $?"
grep -q "^seed bronze.u: 1 rows of copy.upper as of $INS" <<<"$out" || die "seed from copy.upper: $out"
[ "$(M table cat bronze.u --format csv --columns order_id,customer,amount | tail -n +2)" = "7,seven,7.00" ] || die "case-insensitive columns"

# ---- an --as-of older than what CDC still holds: exit 4 ---------------------------------------
# cleanup's low water moves to the last commit at or before 14:01:50 (the update at 14:01:00),
# so the changes right after the copy's commit (the insert) may be gone
sim_exec 2026-10-01T14:02:00 "UPDATE dbo.orders SET customer = N'v' WHERE order_id = 4"
sim_capture 2026-10-01T14:02:30
M sim cleanup "$DB" --retention 10s --at 2026-10-01T14:02:40 >/dev/null
set +e; out=$(M seed --source "sim:$DB" --capture-instance dbo_orders --target bronze.late --app-id l1 --facts ops.facts \
                --from copy.orders --as-of 2026-10-01T14:00:45 2>&1); rc=$?; set -e
[ $rc = 4 ] && grep -q "older than any commit CDC still maps" <<<"$out" || die "--as-of before min_lsn: $rc $out"
[ ! -e "$T/lake/bronze/late" ] || die "a refused seed wrote bronze"
# as an LSN: the copy's commit, below min_lsn now
set +e; out=$(M seed --source "sim:$DB" --capture-instance dbo_orders --target bronze.late --app-id l1 --facts ops.facts \
                --from copy.orders --as-of "$INS" 2>&1); rc=$?; set -e
[ $rc = 4 ] && grep -q "is older than what CDC still holds for dbo_orders (min_lsn 0x" <<<"$out" || die "--as-of LSN before min_lsn: $rc $out"
[ ! -e "$T/lake/bronze/late" ] || die "a refused seed wrote bronze"
echo ok
