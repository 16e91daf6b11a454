#!/usr/bin/env bash
# bench/s3.sh: what the lake costs on S3. Starts a scratch radosgw (tests/s3/start-radosgw)
# and runs bench_s3_commit there: N one-row Delta commits, p50 and p99, beside a bare
# conditional PUT of a commit's size, and the requests per commit. Then counts a stream
# batch's requests by kind (PUT, GET, HEAD, LIST, DELETE) over a loopback fake's request
# log (tests/s3/fake_s3.py: the counts do not depend on the store), for batches into
# bronze, facts and the control table. Figures: docs/benchmarks.md.
#   bench/s3.sh [BUILD_DIR] [N_COMMITS] [N_BATCHES]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
n=${2:-100}
batches=${3:-10}
tmp=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
dir=$(mktemp -d "$tmp/mcdc-bench-s3-XXXXXX")
fake_pid=
trap '"$here/tests/s3/stop-radosgw" "$dir/gw" >/dev/null 2>&1 || true; [ -n "$fake_pid" ] && kill "$fake_pid"; rm -rf "$dir"' EXIT
"$here/tests/s3/start-radosgw" "$dir/gw" >"$dir/env"
# shellcheck disable=SC1091
. "$dir/env"
export HOME=$dir AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION=$S3_REGION AWS_ENDPOINT_URL=$S3_ENDPOINT
echo "radosgw 16.2 on loopback, started in ${S3_START_SECONDS}s"
"$build/bench/bench_s3_commit" "s3://$S3_BUCKET/bench" "$n"

# a stream's batches against the fake: requests per batch, by kind
python3 "$here/tests/s3/fake_s3.py" --log "$dir/fake.log" >"$dir/fake.port" &
fake_pid=$!
for _ in $(seq 100); do [ -s "$dir/fake.port" ] && break; sleep 0.05; done
export AWS_ENDPOINT_URL=http://127.0.0.1:$(cut -d' ' -f2 "$dir/fake.port")
bin=$build/mssql-cdc
db=$dir/db.sqlite
"$bin" sim init "$db" --table dbo.orders --keys order_id --at 2026-10-01T00:00:00 \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL' >/dev/null
"$bin" sim capture "$db" --at 2026-10-01T00:00:30 >/dev/null
st() { "$bin" --warehouse s3://mcdc-fake/lake stream --source "sim:$db" --capture-instance dbo_orders \
  --target bronze.orders --app-id orders --checkpoint "$dir/ck" --facts ops.facts --control ops.control "$@" >/dev/null; }
"$bin" sim exec "$db" --at 2026-10-01T00:01:00 "INSERT INTO dbo.orders VALUES (0, N'first', 1.00)" >/dev/null
"$bin" sim capture "$db" --at 2026-10-01T00:01:30 >/dev/null
st # the first batch creates the tables: not counted
: >"$dir/fake.log"
for i in $(seq 1 "$batches"); do
  "$bin" sim exec "$db" --at "2026-10-01T01:$(printf %02d "$i"):00" \
    "INSERT INTO dbo.orders VALUES ($i, N'c$i', $i.00)" >/dev/null
done
"$bin" sim capture "$db" --at 2026-10-01T02:00:00 >/dev/null
st --max-commits-per-batch 1 # one source commit per batch: $batches batches
got=$(find "$dir/ck/commits" -type f | wc -l)
[ "$got" = $((batches + 1)) ] || { echo "bench/s3.sh: $got batches committed, expected $((batches + 1))" >&2; exit 1; }
awk -v b="$batches" '
  { m = $1; if (m == "GET" && $2 ~ /\?list-type=2/) m = "LIST"; if (m == "GET" && $2 ~ /^\/mcdc-fake\/\?/) m = "LIST"; c[m]++; t++ }
  END { printf "stream batches into bronze, facts and control (one run of %d batches, process start included):\n", b;
        printf "  per batch: %.1f PUT, %.1f GET, %.1f HEAD, %.1f LIST, %.1f DELETE, %.1f POST; %.1f requests\n",
               c["PUT"]/b, c["GET"]/b, c["HEAD"]/b, c["LIST"]/b, c["DELETE"]/b, c["POST"]/b, t/b }' "$dir/fake.log"
