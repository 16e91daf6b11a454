#!/usr/bin/env bash
# tests/interop/finalization_gate.sh: the SQL gate of docs/guides/finalization.md run by
# DuckDB on the control table we write. The live files are found by replaying the Delta
# log independently (python3, no code of ours); DuckDB reads them, sees one row per
# table with finalized_until as a zone-less TIMESTAMP in UTC, and the gate query answers
# as is-final does.
set -euo pipefail
: "${MCDC_BIN:?}" "${MCDC_SRC:?}"
duck() { node "$MCDC_SRC/tests/node/duck.mjs" "$1"; }
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d /tmp/mcdc-fin-gate-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export MSSQL_CDC_WAREHOUSE=$dir/lake
C=(--control ops.table_finalization)
"$MCDC_BIN" finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x10 --end-commit-ts 2026-10-01T14:10:00 >/dev/null
"$MCDC_BIN" finalization advance "${C[@]}" --table bronze.orders --end-lsn 0x20 --end-commit-ts 2026-10-01T15:10:00.123 >/dev/null
"$MCDC_BIN" finalization advance "${C[@]}" --table bronze.items --end-lsn 0x21 --end-commit-ts 2026-10-01T15:59:59 --granularity minute >/dev/null

files=$(python3 - "$dir/lake/ops/table_finalization" <<'PY'
import json, os, sys, urllib.parse
root = sys.argv[1]
log = os.path.join(root, "_delta_log")
live = {}
for name in sorted(n for n in os.listdir(log) if n.endswith(".json")):
    for line in open(os.path.join(log, name)):
        a = json.loads(line)
        if "add" in a:
            live[a["add"]["path"]] = True
        elif "remove" in a:
            live.pop(a["remove"]["path"], None)
print(",".join("'%s'" % os.path.join(root, urllib.parse.unquote(p)) for p in sorted(live)))
PY
)
n_files=$(echo "$files" | tr ',' '\n' | grep -c parquet)
[ "$n_files" -eq 2 ] || fail "$n_files live files, want one per row (2)"

rows=$(duck "SELECT table_name, finalized_until, end_lsn, end_commit_ts, typeof(finalized_until) AS t
             FROM read_parquet([$files]) ORDER BY table_name")
echo "$rows"
[ "$(echo "$rows" | wc -l)" -eq 2 ] || fail "DuckDB sees $(echo "$rows" | wc -l) rows"
grep -q <<<"$rows" '"table_name":"bronze.items","finalized_until":"2026-10-01 15:59:00","end_lsn":"0x00000000000000000021"' \
  || fail "bronze.items row"
grep -q <<<"$rows" '"table_name":"bronze.orders","finalized_until":"2026-10-01 15:00:00","end_lsn":"0x00000000000000000020","end_commit_ts":"2026-10-01 15:10:00.123","t":"TIMESTAMP"' \
  || fail "bronze.orders row"

gate() { # period end -> number of rows the gate query returns
  duck "SELECT count(*) AS n FROM read_parquet([$files])
        WHERE table_name = 'bronze.orders' AND finalized_until >= TIMESTAMP '$1'" | sed -E 's/.*"n":"?([0-9]+)"?.*/\1/'
}
[ "$(gate '2026-10-01 15:00:00')" = 1 ] || fail "gate 15:00 should pass"
[ "$(gate '2026-10-01 16:00:00')" = 0 ] || fail "gate 16:00 should not pass"
"$MCDC_BIN" finalization is-final "${C[@]}" --table bronze.orders --period-end 2026-10-01T15:00:00 >/dev/null || fail "is-final 15:00"
echo PASS
