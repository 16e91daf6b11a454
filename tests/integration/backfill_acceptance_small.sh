# Issue 17's acceptance at a small size: bench/backfill_acceptance.sh with 30,000 rows in
# chunks of 2,000, an integer and a composite key, a realtime workload and a continuous
# stream beside the backfill, and 6 kill -9s of the backfill and the stream: silver equals
# the source, each key's snapshot row is in bronze once, the facts rows agree with bronze.
# The 1,000,000-row runs are in docs/benchmarks.md.
source "$MCDC_SRC/tests/integration/stream_lib.bash"
TMPDIR=$T ACCEPTANCE_ANY_FS=1 bash "$MCDC_SRC/bench/backfill_acceptance.sh" "$(dirname "$MCDC_BIN")" 30000 2000 6 >"$T/out" 2>&1 ||
  die "$(cat "$T/out")"
[ "$(grep -c 'silver = source .* facts agree with bronze$' "$T/out")" = 2 ] || die "$(cat "$T/out")"
echo ok
