#!/usr/bin/env bash
# bench/s3_race.sh: P processes committing to one Delta table on S3 at once, C commits each
# (default 10 x 200, the acceptance figure of issue 21; too long for the test command,
# whose tests/s3/lake_s3.sh races 4 x 5). Each commit is the first advance of a new row of
# one control table on a scratch radosgw (tests/s3/start-radosgw), so every commit adds
# exactly one row. Checks: P x C rows, none doubled, versions 0..N contiguous, every
# process done. Prints the time and the commits per second.
#   bench/s3_race.sh [BUILD_DIR] [PROCESSES] [COMMITS]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
procs=${2:-10}
commits=${3:-200}
bin=$build/mssql-cdc
tmp=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
dir=$(mktemp -d "$tmp/mcdc-s3-race-XXXXXX")
trap '"$here/tests/s3/stop-radosgw" "$dir/gw" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$here/tests/s3/start-radosgw" "$dir/gw" >"$dir/env"
# shellcheck disable=SC1091
. "$dir/env"
export HOME=$dir AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_REGION=$S3_REGION AWS_ENDPOINT_URL=$S3_ENDPOINT
wh=s3://$S3_BUCKET/race
start=$(date +%s.%N)
pids=()
for p in $(seq 1 "$procs"); do
  ( for i in $(seq 1 "$commits"); do
      "$bin" --warehouse "$wh" finalization advance --control ops.race --table "t$p.$i" \
        --end-lsn 0x00000000000000000001 --end-commit-ts 2026-10-01T14:00:00 >/dev/null 2>>"$dir/err.$p" || exit 1
    done ) &
  pids+=($!)
done
fails=0
for pid in "${pids[@]}"; do wait "$pid" || fails=$((fails + 1)); done
secs=$(echo "$(date +%s.%N) - $start" | bc)
[ "$fails" = 0 ] || { cat "$dir"/err.* >&2; echo "s3_race: $fails processes failed" >&2; exit 1; }
"$bin" --warehouse "$wh" table cat ops.race --format jsonl >"$dir/rows"
"$bin" --warehouse "$wh" table history ops.race --format jsonl >"$dir/hist"
rows=$(grep -c . "$dir/rows")
distinct=$(grep -oE '"table_name":"[^"]*"' "$dir/rows" | sort -u | wc -l)
node -e '
  const v = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(l => JSON.parse(l).version).sort((a, b) => a - b);
  v.forEach((x, i) => { if (x !== i) { console.error("version " + i + " missing"); process.exit(1); } });
  console.log("versions 0.." + (v.length - 1) + " contiguous");
' "$dir/hist"
echo "$procs processes x $commits commits: $rows rows ($distinct distinct, want $((procs * commits))) in $secs s"
[ "$rows" = $((procs * commits)) ] && [ "$distinct" = "$rows" ]
