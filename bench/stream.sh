#!/usr/bin/env bash
# bench/stream.sh: make a simulator database with N changes (default 2,000,000) on an
# 8-column table and run bench_stream on it (changes/s of the whole stream, of reading the
# simulator alone and of writing bronze alone, and peak RSS). Figures: docs/benchmarks.md.
#   bench/stream.sh [BUILD_DIR] [N_CHANGES]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
n=${2:-2000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
. "$here/bench/lib.sh"
bench_refuse_memory_fs "$dir"
db=$dir/bench.sqlite
bin=$build/mssql-cdc
"$bin" sim init "$db" --table dbo.orders --keys order_id --at 2026-10-01T00:00:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL, status VARCHAR(16) NULL, qty INT NULL, price FLOAT NULL, note NVARCHAR(100) NULL' >/dev/null
# 4 statements per transaction, an update writes two change rows: about 4.32 change rows
# per transaction with the default mix (measured)
tx=$((n * 100 / 432))
start=$(date +%s.%N)
"$bin" sim workload "$db" --table dbo.orders --transactions "$tx" --rows-per-transaction 4 \
  --seed 1 --start 2026-10-01T00:00:01 --interval 10ms --capture-every 1m >/dev/null
"$bin" sim capture "$db" --at 2030-01-01T00:00:00 >/dev/null
echo "workload: $tx transactions in $(echo "$(date +%s.%N) - $start" | bc) s"
"$build/bench/bench_stream" "$db" dbo_orders 1000
