# mssql-cdc stream --silver: silver applied after the stream's batches, keys from --keys or
# from the capture instance's unique index; silver equals the source after each run and
# its verdict never passes bronze's. Usage errors: --silver without --control, --keys
# without --silver.
. "$(dirname "$0")/stream_lib.bash"
SCHECK="node $MCDC_SRC/tests/integration/silver_check.mjs"
sim_setup
field() { # field TABLE KEY: of its control row
  M finalization show --control ops.control --table "$1" --format json > "$T/v.json"
  $SCHECK json "$T/v.json" "$2"
}

sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL), (2, 'b', 2.00, NULL)"
sim_capture 2026-10-01T14:00:30
out=$(stream f --bootstrap --control ops.control --silver silver.f --keys order_id) || die "stream --silver: $out"
grep -q <<<"$out" "^silver silver.f: " || die "no silver line: $out"
silver_vs_source silver.f bootstrap

for i in 1 2 3; do
  sim_exec "2026-10-01T14:0$i:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($((i + 10)), 'n$i', $i.00, NULL); UPDATE dbo.orders SET amount = amount + 1 WHERE order_id = 1"
  sim_exec "2026-10-01T14:0$i:30" "DELETE FROM dbo.orders WHERE order_id = $((i + 10 - 1))"
done
sim_capture 2026-10-01T14:05:00
M sim idle "$DB" --at 2026-10-01T15:20:00 >/dev/null
# keys from the source this time; one commit per batch, so several batches
stream f --control ops.control --silver silver.f --max-commits-per-batch 1 >/dev/null || die "stream --silver (keys from the source)"
silver_vs_source silver.f "after changes"
b=$(field bronze.f finalized_until); s=$(field silver.f finalized_until)
[ "$s" != null ] || die "silver has no verdict"
[ "$s" = "$b" ] || die "silver's verdict $s is not bronze's $b after the last apply"
[ "$(field silver.f applied_lsn)" != null ] || die "no applied_lsn"

set +e
stream g --silver silver.g >/dev/null 2>&1; rc1=$?
stream g --keys order_id >/dev/null 2>&1; rc2=$?
set -e
[ $rc1 = 2 ] || die "--silver without --control: exit $rc1"
[ $rc2 = 2 ] || die "--keys without --silver: exit $rc2"
echo ok
