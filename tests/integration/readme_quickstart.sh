#!/usr/bin/env bash
# The README's "Quick start on the simulator" runs as written: the `$ ` commands of that
# section's console blocks are extracted and run in order in an empty directory with
# mssql-cdc on the PATH (a command followed by `echo $?` may exit non-zero), and the
# tables they write then hold what the source holds: silver.orders has dbo.orders's rows,
# and the verdict the section shows is in the control table for bronze and silver.
# (doc_examples.sh checks what each command prints.)
set -euo pipefail
bin=${MCDC_BIN:?} src=${MCDC_SRC:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
ln -s "$bin" "$work/bin/mssql-cdc"
awk '
  /^## / { on = ($0 ~ /^## Quick start on the simulator/) }
  on && /^```console$/ { code = 1; next }
  code && /^```$/ { code = 0; cont = 0; next }
  code && cont { cmd = cmd "\n" $0; cont = /\\$/; next }
  code && /^\$ / {
    line = substr($0, 3)
    if (line == "echo $?") { if (cmd != "") print cmd " || true"; cmd = ""; next }
    if (cmd != "") print cmd
    cmd = line; cont = /\\$/; next
  }
  END { if (cmd != "") print cmd }
' "$src/README.md" >"$work/quickstart.sh"
[ "$(grep -c '^mssql-cdc' "$work/quickstart.sh")" -ge 8 ] || { cat "$work/quickstart.sh"; echo "quickstart: commands not found" >&2; exit 1; }
(cd "$work" && PATH="$work/bin:$PATH" bash -euo pipefail quickstart.sh >"$work/out.txt" 2>"$work/err.txt") ||
  { tail -20 "$work/err.txt"; echo "quickstart: the README's commands failed" >&2; exit 1; }
[ -s "$work/report.html" ] || { echo "quickstart: no report.html" >&2; exit 1; }
n_src=$("$bin" sim query "$work/shop.db" 'SELECT COUNT(*) AS n FROM dbo.orders' --format csv | tail -1)
n_silver=$("$bin" --warehouse "$work/lake" table cat silver.orders --format csv | tail -n +2 | wc -l)
[ "$n_src" = "$n_silver" ] || { echo "quickstart: silver.orders has $n_silver rows, dbo.orders $n_src" >&2; exit 1; }
for t in bronze.orders silver.orders; do
  "$bin" --warehouse "$work/lake" finalization show --control ops.table_finalization --table "$t" --format jsonl |
    grep -q '"finalized_until":"2026-10-01T10:00:00' || { echo "quickstart: $t has no verdict of 10:00" >&2; exit 1; }
done
grep -q "The change log of a stream" "$work/report.html" || { echo "quickstart: the report does not call bronze the change log" >&2; exit 1; }
echo "quickstart: ok ($n_silver rows in silver.orders; bronze and silver final up to 10:00)"
