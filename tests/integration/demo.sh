#!/usr/bin/env bash
# The demo (the README's main job) runs to its summary, reruns by resuming with the same
# tables, and writes a report that headless Chromium renders without console errors and
# with charts that have data.
set -euo pipefail
bin=${MCDC_BIN:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "demo: $*" >&2; exit 1; }

"$bin" demo --dir "$work/d" >"$work/run1.txt" || { cat "$work/run1.txt"; tail -20 "$work/d/demo.log"; fail "first run exited $?"; }
cat "$work/run1.txt"
grep -q 'is-final bronze.orders for \[09:00, 10:00): yes (exit 0)' "$work/run1.txt" || fail "09:00-10:00 should be final"
grep -q 'is-final bronze.orders for \[17:00, 18:00): not yet (exit 1)' "$work/run1.txt" || fail "17:00-18:00 should not be final"
grep -qE '^12:00-13:00 \* +0 ' "$work/run1.txt" || fail "the quiet hour should have no changes"
[ "$(grep -c '^[01][0-9]:00-' "$work/run1.txt")" -eq 10 ] || fail "a line per hour expected"
counts1=$(grep -E '^dbo\.(customers|orders) ' "$work/run1.txt")
[ -s "$work/d/report.html" ] || fail "no report.html"
[ -s "$work/d/commands.sh" ] || fail "no commands.sh"

# Silver equals the source table.
wh="$work/d/lake"
for t in customers orders; do
  key=$([ $t = customers ] && echo customer_id || echo order_id)
  "$bin" sim query "$work/d/source.sqlite" "SELECT $key FROM dbo.$t ORDER BY $key" --format csv | tail -n +2 >"$work/src_$t"
  "$bin" --warehouse "$wh" table cat silver.$t --format csv | awk -F, -v k=1 'NR>1 {print $k}' | sort -n >"$work/silver_$t"
  diff "$work/src_$t" "$work/silver_$t" >/dev/null || fail "silver.$t keys differ from dbo.$t"
done

# A rerun resumes: same tables, nothing written twice.
"$bin" demo --dir "$work/d" >"$work/run2.txt" || fail "rerun exited $?"
grep -q 'made by an earlier run' "$work/run2.txt" || fail "rerun did not say it resumed"
counts2=$(grep -E '^dbo\.(customers|orders) ' "$work/run2.txt")
[ "$counts1" = "$counts2" ] || fail "rerun changed the tables: '$counts1' vs '$counts2'"

# The report in headless Chromium: no console errors, charts with data.
chromium=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || fail "chromium is not installed (scripts/install-deps installs it)"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir="$work/profile" --enable-logging=stderr --v=0)
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$work/d/report.html" >"$work/dom.html" 2>"$work/chromium.log" ||
  { tail -5 "$work/chromium.log"; fail "chromium could not render the report"; }
if grep -E ':CONSOLE\(|Uncaught|Failed to load resource' "$work/chromium.log"; then fail "console errors in the report"; fi
n_svg=$(grep -o '<svg ' "$work/dom.html" | wc -l)
[ "$n_svg" -ge 6 ] || fail "expected at least 6 charts in the rendered page, found $n_svg"
grep -qE "data-points=\"[1-9][0-9]*\"" "$work/dom.html" || fail "the charts have no data"
grep -q 'bronze.orders' "$work/dom.html" || fail "the report does not show bronze.orders"
timeout 120 "$chromium" "${flags[@]}" --window-size=850,1600 --screenshot="$work/report.png" "file://$work/d/report.html" 2>/dev/null >/dev/null
[ "$(stat -c %s "$work/report.png")" -gt 20000 ] || fail "the screenshot is blank"
echo "demo: ok ($n_svg charts rendered)"
