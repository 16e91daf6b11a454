#!/usr/bin/env bash
# The README's "Quick start on the simulator" runs as written: the first sh block of that
# section is extracted and run in an empty directory with mssql-cdc on the PATH, and the
# tables it names then hold what the source holds.
set -euo pipefail
bin=${MCDC_BIN:?} src=${MCDC_SRC:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
ln -s "$bin" "$work/bin/mssql-cdc"
awk '/^## Quick start on the simulator/ {on=1} on && /^```sh/ {code=1; next} code && /^```/ {exit} code' \
  "$src/README.md" >"$work/quickstart.sh"
[ "$(grep -c '^mssql-cdc' "$work/quickstart.sh")" -ge 8 ] || { echo "quickstart: block not found" >&2; exit 1; }
(cd "$work" && PATH="$work/bin:$PATH" bash -euo pipefail quickstart.sh >"$work/out.txt" 2>"$work/err.txt") ||
  { tail -20 "$work/err.txt"; echo "quickstart: the README's commands failed" >&2; exit 1; }
[ -s "$work/report.html" ] || { echo "quickstart: no report.html" >&2; exit 1; }
n_src=$("$bin" sim query "$work/shop.db" 'SELECT COUNT(*) AS n FROM dbo.orders' --format csv | tail -1)
n_silver=$("$bin" --warehouse "$work/lake" table cat silver.orders --format csv | tail -n +2 | wc -l)
[ "$n_src" = "$n_silver" ] || { echo "quickstart: silver.orders has $n_silver rows, dbo.orders $n_src" >&2; exit 1; }
echo "quickstart: ok ($n_silver rows in silver.orders)"
