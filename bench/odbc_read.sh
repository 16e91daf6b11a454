#!/usr/bin/env bash
# bench/odbc_read.sh: the SQL Server source's read speed over `sim serve`: N change rows
# (default 1,000,000) of an 8-column table, read by the source, by a plain ODBC fetch loop
# (bench_odbc_read), by freebcp queryout where the server takes it, and streamed into bronze
# through odbc: (mssql-cdc stream), whose time must stay within 1.3 times the source's read.
# Figures: docs/benchmarks.md.
# Then, against a second server with --latency 1ms (PART_LATENCY: a round trip, each
# request's answer waits that long), the source alone with numPartitions = 1, 2 and 4, then
# again in the same order (PARTITIONS): one batch of every change over that many connections,
# as a catch-up reads it. Its pages are PAGE_ROWS rows, 10,000 by default, the source's own
# default, which is what a catch-up reads with: each page waits three round trips (page_end,
# mapping_range, changes), 0.3 us a row at 1 ms, whatever N. Smaller pages would make the
# latency, and so the gain, larger than a stream left at its defaults sees.
#   bench/odbc_read.sh [BUILD_DIR] [N_CHANGES] [LATENCY] [PAGE_ROWS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
n=${2:-1000000}
latency=${3:-}
page_rows=${4:-10000}
status=0
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
db=$dir/bench.db
bin=$build/mssql-cdc
"$bin" sim init "$db" --table dbo.orders --keys order_id --at 2026-10-01T00:00:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL, status VARCHAR(16) NULL, qty INT NULL, price FLOAT NULL, note NVARCHAR(100) NULL' >/dev/null
tx=$((n * 100 / 432)) # about 4.32 change rows per transaction (bench/stream.sh)
"$bin" sim workload "$db" --table dbo.orders --transactions "$tx" --rows-per-transaction 4 \
  --seed 1 --start 2026-10-01T00:00:01 --interval 10ms --capture-every 1m >/dev/null
"$bin" sim capture "$db" --at 2030-01-01T00:00:00 >/dev/null
printf 'bench-pw\n' > "$dir/pw"
"$bin" sim serve "$db" --listen 127.0.0.1:0 --database bench --user bench --password-file "$dir/pw" \
  ${latency:+--latency "$latency"} 2> "$dir/serve.log" &
pid=$!
for _ in $(seq 1 100); do grep -q '^listening on ' "$dir/serve.log" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/serve.log")
echo "$(uptime | sed 's/.*load/load/')"
MCDC_BENCH_SERVER_PID=$pid "$build/bench/bench_odbc_read" "$port" dbo_orders "$page_rows" > "$dir/read.txt" || status=1
cat "$dir/read.txt"
src_s=$(sed -n 's/^source_seconds //p' "$dir/read.txt")
# freebcp, where the server answers BCP
if command -v freebcp >/dev/null; then
  t0=$(date +%s.%N)
  if timeout 60 freebcp "SELECT * FROM cdc.dbo_orders_CT" queryout "$dir/bcp.out" -c -S "127.0.0.1:$port" -U bench -P bench-pw \
       -D bench > "$dir/bcp.log" 2>&1; then
    t1=$(date +%s.%N)
    echo "freebcp     $(wc -l < "$dir/bcp.out") rows  $(echo "$t1 - $t0" | bc) s"
  else
    echo "freebcp     n/a (exit $?): $(grep -m1 -iE "error|msg|unable" "$dir/bcp.log" || head -1 "$dir/bcp.log")"
  fi
fi
# the stream over ODBC, against the source's read alone
t0=$(date +%s%N)
"$bin" --warehouse "$dir/lake" stream --source "odbc:Server=127.0.0.1;Port=$port;Database=bench;UID=bench;PWD=bench-pw;pageRows=$page_rows" \
  --capture-instance dbo_orders --target bronze.orders --app-id bench --checkpoint "$dir/ck" --facts ops.facts >/dev/null
t1=$(date +%s%N)
awk -v s="$src_s" -v ns="$((t1 - t0))" 'BEGIN {
  st = ns / 1e9; r = st / s
  printf "stream      %.2f s, %.2f times the source read alone (%s)\n", st, r, r <= 1.3 ? "ok: within 1.3" : "FAIL: over 1.3"
  exit r <= 1.3 ? 0 : 1 }' || status=1
# numPartitions over a server with a network's latency
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
: > "$dir/serve.log"
"$bin" sim serve "$db" --listen 127.0.0.1:0 --database bench --user bench --password-file "$dir/pw" \
  --latency "${PART_LATENCY:-1ms}" 2> "$dir/serve.log" &
pid=$!
for _ in $(seq 1 100); do grep -q '^listening on ' "$dir/serve.log" && break; sleep 0.1; done
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$dir/serve.log")
echo "sim serve --latency ${PART_LATENCY:-1ms}, pageRows=$page_rows, $(uptime | sed 's/.*load/load/'):"
MCDC_BENCH_SERVER_PID=$pid "$build/bench/bench_odbc_read" "$port" dbo_orders "$page_rows" "${PARTITIONS:-1,2,4,1,2,4}" || status=1
echo "after: $(uptime | sed 's/.*load/load/')"
exit $status
