#!/usr/bin/env bash
# Run one libFuzzer target: replay its committed corpus, then fuzz for MCDC_FUZZ_SECONDS
# (default 15) into a scratch copy so the committed corpus is never changed by a test run.
set -euo pipefail
bin=$1 corpus=$2
secs=${MCDC_FUZZ_SECONDS:-15}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
[ -d "$corpus" ] && cp -r "$corpus"/. "$work/corpus/" 2>/dev/null || true
cd "$work"
"$bin" -runs=0 "$work/corpus"
"$bin" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 "$work/corpus"
