#!/usr/bin/env bash
# Crashes during an advance (failpoints): killed after the new row's file is written but
# before the commit, the verdict stays where it was and the table stays readable; killed
# right after the commit, the new verdict stands. A rerun catches up either way.
set -uo pipefail
: "${MCDC_BIN:?}"
dir=$(mktemp -d /tmp/mcdc-fin-crash-XXXXXX)
trap 'rm -rf "$dir"' EXIT
export MSSQL_CDC_WAREHOUSE=$dir/lake
fail() { echo "FAIL: $*"; exit 1; }
C=(--control ops.table_finalization --table bronze.orders)
verdict() { "$MCDC_BIN" finalization show "${C[@]}" --format jsonl | sed -E 's/.*"finalized_until":"([^"]*)".*/\1/'; }

"$MCDC_BIN" finalization advance "${C[@]}" --end-lsn 0x10 --end-commit-ts 2026-10-01T15:10:00 >/dev/null || fail "first advance"
[ "$(verdict)" = 2026-10-01T15:00:00.000000 ] || fail "first verdict $(verdict)"

{ MCDC_FAILPOINT=finalize.control.file_written "$MCDC_BIN" finalization advance "${C[@]}" \
  --end-lsn 0x20 --end-commit-ts 2026-10-01T16:10:00; rc=$?; } >/dev/null 2>&1
[ "$rc" -eq 137 ] || fail "failpoint before the commit: exit $rc, want 137 (SIGKILL)"
[ "$(verdict)" = 2026-10-01T15:00:00.000000 ] || fail "verdict moved without a commit: $(verdict)"
"$MCDC_BIN" finalization is-final "${C[@]}" --period-end 2026-10-01T16:00:00 >/dev/null
[ $? -eq 1 ] || fail "16:00 final after a crash before the commit"

{ MCDC_FAILPOINT=finalize.control.committed "$MCDC_BIN" finalization advance "${C[@]}" \
  --end-lsn 0x30 --end-commit-ts 2026-10-01T17:10:00; rc=$?; } >/dev/null 2>&1
[ "$rc" -eq 137 ] || fail "failpoint after the commit: exit $rc, want 137"
[ "$(verdict)" = 2026-10-01T17:00:00.000000 ] || fail "committed verdict lost: $(verdict)"

# the rerun of the interrupted advance: nothing to do (it is behind), still one row
"$MCDC_BIN" finalization advance "${C[@]}" --end-lsn 0x20 --end-commit-ts 2026-10-01T16:10:00 >/dev/null || fail "rerun"
[ "$(verdict)" = 2026-10-01T17:00:00.000000 ] || fail "rerun moved the verdict back: $(verdict)"
n=$("$MCDC_BIN" finalization show --control ops.table_finalization --format jsonl | wc -l)
[ "$n" -eq 1 ] || fail "$n rows after crashes, want 1"
echo PASS
