#!/usr/bin/env bash
# The command line and its reference agree (style guide habit 15, architecture §7):
# - `mssql-cdc --help` lists commands, and each one's `--help` exits 0 and shows an example
#   that uses only the command's options;
# - each command has a section "## <command>" in docs/reference/cli-<group>.md naming every
#   option its --help lists, and every option row of that section is an option it has;
# - docs/reference/cli.md links every group page, holds exactly the exit codes of cli.h and
#   the global options of `mssql-cdc --help`;
# - the man page docs/mssql-cdc.1 names every command.
set -uo pipefail
bin=${MCDC_BIN:?} src=${MCDC_SRC:?}
ref=$src/docs/reference
fail=0 n=0
bad() { echo "FAIL: $*" >&2; fail=$((fail + 1)); }

mapfile -t cmds < <("$bin" --help | sed -n '/^commands:/,/^$/p' | sed -E -n 's/^  ([a-z][a-z-]*( [a-z][a-z-]*)?)  .*/\1/p')
[ ${#cmds[@]} -gt 0 ] || bad "mssql-cdc --help lists no commands"

for cmd in "${cmds[@]}"; do
  n=$((n + 1))
  group=${cmd%% *}
  page=$ref/cli-$group.md
  # shellcheck disable=SC2086
  if ! help=$("$bin" $cmd --help 2>&1); then bad "'$cmd --help' does not exit 0"; continue; fi
  grep -q '^example' <<<"$help" || bad "'$cmd --help' shows no example"
  # ...whose options are the command's (global options, before the command, aside).
  for o in $(sed -n '/^example/,/^$/p' <<<"$help" | sed -E "s/^.*mssql-cdc( --?[a-z-]+( [^ -][^ ]*)?)* $cmd//" | grep -oE -- ' --[a-z][a-z0-9-]*' | sort -u); do
    sed -n '/^options:/,/^$/p' <<<"$help" | grep -qE -- "$o( |,|\$)" || bad "'$cmd --help': its example uses $o, which it does not have"
  done
  if [ ! -f "$page" ]; then bad "'$cmd': no reference page docs/reference/cli-$group.md"; continue; fi
  grep -q "cli-$group.md" "$ref/cli.md" || bad "docs/reference/cli.md does not link cli-$group.md"
  # The section: from its heading to the next heading of level 2.
  section=$(awk -v c="$cmd" '
    /^## / { on = 0; h = $0; gsub(/`/, "", h); sub(/^## +(mssql-cdc +)?/, "", h); sub(/ *[:(].*$/, "", h); if (h == c) on = 1; next }
    on { print }' "$page")
  if [ -z "$section" ]; then bad "'$cmd': no section '## $cmd' in docs/reference/cli-$group.md"; continue; fi
  while read -r opt; do
    [ "$opt" = "--help" ] && continue
    grep -q -- "$opt\b" <<<"$section" || bad "'$cmd': option $opt is not in its section of cli-$group.md"
  done < <(sed -n '/^options:/,/^$/p' <<<"$help" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
  # The reverse: every option row of the section (a table row that starts with a flag)
  # names an option the command has.
  while read -r opt; do
    sed -n '/^options:/,/^$/p' <<<"$help" | grep -qE -- "$opt( |,|$)" ||
      bad "'$cmd': docs list option $opt, which '$cmd --help' does not have"
  done < <(grep -E '^\| *`(-[a-zA-Z], )?--[a-z]' <<<"$section" | sed -E 's/^\| *`(-[a-zA-Z], )?(--[a-z][a-z0-9-]*).*/\2/' | sort -u)
done

# Exit codes: every MCDC_EXIT_* value of cli.h appears as a row of the table in cli.md.
while read -r code; do
  grep -qE "^\| $code \|" "$ref/cli.md" || bad "exit code $code of src/cli/cli.h is not in docs/reference/cli.md"
done < <(sed -n 's/.*MCDC_EXIT_[A-Z]* *= *\([0-9]*\).*/\1/p' "$src/src/cli/cli.h")

# ...and every row of that table is a code of cli.h.
while read -r code; do
  grep -qE "MCDC_EXIT_[A-Z]+ *= *$code\b" "$src/src/cli/cli.h" || bad "docs/reference/cli.md lists exit code $code, which src/cli/cli.h does not have"
done < <(awk '/^## Exit codes/ {on=1; next} /^## / {on=0} on' "$ref/cli.md" | sed -n -E 's/^\| ([0-9]+) \|.*/\1/p')

# Global options, both ways: `mssql-cdc --help` and the table of "## Global options" in cli.md.
globals=$(awk '/^## Global options/ {on=1; next} /^## / {on=0} on' "$ref/cli.md" | grep -E '^\| *`-' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
help_globals=$("$bin" --help | sed -n '/^global options:/,/^$/p' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
[ -n "$help_globals" ] || bad "mssql-cdc --help lists no global options"
for o in $help_globals; do grep -qx -- "$o" <<<"$globals" || bad "global option $o is not in docs/reference/cli.md"; done
for o in $globals; do grep -qx -- "$o" <<<"$help_globals" || bad "docs/reference/cli.md lists global option $o, which mssql-cdc --help does not have"; done

# The man page names every command (a group's subcommands as `group a|b|c`).
man=$src/docs/mssql-cdc.1
for cmd in "${cmds[@]}"; do
  g=${cmd%% *} w=${cmd##* }
  line=$(grep -E "^\.B $g( |\$)" "$man" | sed 's/\\-/-/g')
  if [ "$g" = "$w" ]; then [ -n "$line" ]; else grep -qE "[ |]$w([ |]|\$)" <<<"$line"; fi ||
    bad "'$cmd' is not in the COMMANDS of docs/mssql-cdc.1"
done

echo "cli_reference.sh: ${#cmds[@]} commands checked, $fail problems"
[ "$fail" -eq 0 ]
