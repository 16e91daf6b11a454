#!/usr/bin/env bash
# bench/tds_serve.sh: make a simulator database with N change rows (default 1,000,000) of an
# 8-column table and run bench_tds_serve on it: rows/s through `sim serve` and ODBC against
# the same rows read in process, and the server's and the client's CPU per row.
# Figures: docs/benchmarks.md.
#   bench/tds_serve.sh [BUILD_DIR] [N_CHANGES]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
n=${2:-1000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
db=$dir/bench.db
bin=$build/mssql-cdc
"$bin" sim init "$db" --table dbo.orders --keys order_id --at 2026-10-01T00:00:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL, status VARCHAR(16) NULL, qty INT NULL, price FLOAT NULL, note NVARCHAR(100) NULL' >/dev/null
# about 4.32 change rows per transaction of 4 statements with the default mix (bench/stream.sh)
tx=$((n * 100 / 432))
"$bin" sim workload "$db" --table dbo.orders --transactions "$tx" --rows-per-transaction 4 \
  --seed 1 --start 2026-10-01T00:00:01 --interval 10ms --capture-every 1m >/dev/null
"$bin" sim capture "$db" --at 2030-01-01T00:00:00 >/dev/null
"$build/bench/bench_tds_serve" "$db" dbo_orders
