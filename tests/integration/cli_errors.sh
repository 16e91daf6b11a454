#!/usr/bin/env bash
# The errors of a first hour with the tool, shared by every command (src/cli/args.c,
# main.c): each is exit 2, names what is wrong, says how to fix it, and runs nothing:
# - an unknown option suggests the nearest one ("did you mean --app-id?");
# - a global option after the command says it goes before it;
# - a command's option before the command says it goes after it;
# - an unknown command or subcommand suggests the nearest one;
# - a missing required option names which one;
# - a bad time shows the accepted form;
# - an unknown control row lists the rows that exist (is-final, freshness, show --table);
# - with --log-format json every error is one JSON object on stderr.
set -uo pipefail
: "${MCDC_BIN:?}"
dir=$(mktemp -d /tmp/mcdc-cli-errors-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }
# expect CODE PATTERN COMMAND...: exit CODE and stderr matching PATTERN (grep -E).
expect() {
  local want=$1 pat=$2; shift 2
  "$MCDC_BIN" "$@" >"$dir/out" 2>"$dir/err"; local got=$?
  [ "$got" -eq "$want" ] || { cat "$dir/out" "$dir/err"; fail "exit $got, want $want: $*"; }
  grep -qE -- "$pat" "$dir/err" || fail "stderr of '$*' does not match '$pat': $(cat "$dir/err")"
}

# Unknown option: the nearest one, with a typo, a swap, an underscore or a prefix.
expect 2 "^mssql-cdc: error: unknown option '--appid' for 'stream'\$" stream --appid x
grep -qx "hint: did you mean --app-id? (see 'mssql-cdc stream --help')" err || fail "appid hint: $(cat err)"
expect 2 "did you mean --capture-instance\?" stream --capture_instance dbo_orders
expect 2 "did you mean --period-end\?" finalization is-final --period-edn 2026-10-01
expect 2 "did you mean --checkpoint\?" stream --checkp ck
expect 2 "did you mean --format\?" table cat bronze.orders --fromat jsonl
# ...and none when nothing is near.
expect 2 "^hint: see 'mssql-cdc table cat --help'\$" table cat bronze.orders --frobnicate
grep -q "did you mean" err && fail "a suggestion for --frobnicate: $(cat err)"

# A global option after the command: where it goes.
expect 2 "^mssql-cdc: error: '--warehouse' is a global option: it goes before the command 'table cat', not after it\$" \
  table cat bronze.orders --warehouse /data/lake
grep -qx "hint: write it before the command: mssql-cdc --warehouse DIR table cat ..." err || fail "warehouse hint: $(cat err)"
expect 2 "'--log-format' is a global option" finalization show --control ops.c --log-format=json
expect 2 "'--log-level' is a global option" stream --log-level debug
expect 2 "'--version' is a global option" table cat bronze.orders --version
grep -qx "hint: run it alone: mssql-cdc --version" err || fail "version hint: $(cat err)"
# A command's option before the command, and a typo of a global option.
expect 2 "'--app-id' is an option of a command, not a global option" --app-id x stream
expect 2 "did you mean --warehouse\?" --warehose /data stream
# Unknown command and subcommand.
expect 2 "^hint: did you mean 'stream'\?" strem
expect 2 "^hint: did you mean 'finalization is-final'\?" finalization is-fnal

# A missing required option names which one, and the parser answers before anything runs.
expect 2 "^mssql-cdc: error: missing required option --period-end for 'finalization is-final'\$" \
  finalization is-final --control ops.c --table bronze.orders
expect 2 "missing required options --control, --table for 'finalization freshness'" finalization freshness
expect 2 "missing required option --control for 'finalization show'" finalization show
expect 2 "missing required option --table for 'finalization advance'" finalization advance --control ops.c --checkpoint ck
expect 2 "missing required options --silver, --control for 'silver apply'" \
  silver apply --bronze bronze.orders --capture-instance dbo_orders --keys id
"$MCDC_BIN" finalization is-final --help | grep -qE -- "--period-end T .*\(required\)" || fail "--help does not mark --period-end required"
[ ! -e lake ] || fail "a refused command wrote into the warehouse"

# A bad time shows the accepted form.
expect 2 "^mssql-cdc: error: bad time 'yesterday': expected YYYY-MM-DD\$" \
  finalization is-final --control ops.c --table bronze.orders --period-end yesterday
grep -qx "hint: a time is ISO-8601 YYYY-MM-DDTHH:MM:SS\[.fffffff\]\[Z|+HH:MM|-HH:MM\], UTC without a zone, e.g. 2026-10-01T15:00:00 or 2026-10-01T17:00:00+02:00" err ||
  fail "bad time hint: $(cat err)"
expect 2 "^hint: a time is ISO-8601" finalization advance --control ops.c --table t --end-lsn 0x1 --end-commit-ts 2026-10-01T25:00

# An unknown control row lists the rows there are.
"$MCDC_BIN" finalization advance --control ops.c --table bronze.orders --end-lsn 0x1 --end-commit-ts 2026-10-01T15:10:00 >/dev/null || fail "advance"
"$MCDC_BIN" finalization advance --control ops.c --table silver.orders --end-lsn 0x1 --end-commit-ts 2026-10-01T15:10:00 >/dev/null || fail "advance"
for c in "is-final --period-end 2026-10-01T15:00:00" "freshness" "show"; do
  # shellcheck disable=SC2086
  expect 2 "^mssql-cdc: error: control table ./lake/ops/c has no row for 'bronze.order'\$" finalization $c --control ops.c --table bronze.order
  grep -qE "^hint: .*the rows: bronze.orders, silver.orders\$" err || fail "$c: rows not listed: $(cat err)"
done

# --log-format json: errors are JSON objects, one per error, one line each; stdout stays empty.
json_ok() { # FILE: every line is an object with level ERROR, msg, hint and exit_code 2
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
    for (const l of lines) { const o = JSON.parse(l);
      if (o.level !== "ERROR" || typeof o.msg !== "string" || !("hint" in o) || o.exit_code !== Number(process.argv[2])) process.exit(1); }
    if (lines.length !== 1) process.exit(1);' "$1" "$2"
}
expect 2 '^\{"ts":"[^"]*","level":"ERROR","logger":"cli","msg":"unknown option ' --log-format json stream --appid x
json_ok err 2 || fail "unknown option as JSON: $(cat err)"
grep -q '"hint":"did you mean --app-id? (see' err || fail "JSON hint: $(cat err)"
expect 2 '"msg":"missing required option --period-end' --log-format=json finalization is-final --control ops.c --table t
json_ok err 2 || fail "missing option as JSON: $(cat err)"
expect 2 '"msg":"control table ./lake/ops/c has no row for' --log-format json finalization is-final --control ops.c --table x --period-end 2026-10-01
json_ok err 2 || fail "library error as JSON: $(cat err)"
# ...even for an error in a global option written before --log-format.
expect 2 '"msg":"bad log level' --log-level loud --log-format json stream
json_ok err 2 || fail "global option error as JSON: $(cat err)"
expect 2 '"msg":"unknown command' --log-format json strem
json_ok err 2 || fail "unknown command as JSON: $(cat err)"
[ ! -s out ] || fail "an error printed on stdout: $(cat out)"
echo PASS
