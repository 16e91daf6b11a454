#!/usr/bin/env bash
# The README's two set-up commands need nothing a fresh Debian 12 lacks, and the tests
# need nothing beside the clone (scripts/check-fresh-machine runs the commands on such a
# machine; this test keeps the promises it relies on):
# - the README's first sh block is commands ./scripts/NAME, each an executable bash script;
# - no script they run calls make (a fresh Debian 12 has none before build-essential);
# - .ci/run runs exactly the README's test command;
# - no test reads files from outside the repository (the conformance files are in
#   tests/data/, each set with its license notice), and no test overrides an expected file.
set -euo pipefail
src=${MCDC_SRC:?}
fail() { echo "readme_setup: $*" >&2; exit 1; }

block=$(awk '/^```sh$/ {on=1; next} on && /^```$/ {exit} on' "$src/README.md" | sed 's/[[:space:]]*#.*//; /^$/d')
[ "$(printf '%s\n' "$block" | wc -l)" -eq 2 ] || fail "the README's first sh block should hold its two commands, has: $block"
cmds=()
while read -r cmd rest; do
  [ -z "$rest" ] || fail "README command '$cmd $rest': a script and no arguments expected"
  case $cmd in ./scripts/*) ;; *) fail "README command '$cmd' is not a ./scripts/ script (a fresh machine has only bash)" ;; esac
  f="$src/${cmd#./}"
  [ -x "$f" ] || fail "$cmd is not an executable file"
  [ "$(head -1 "$f")" = '#!/usr/bin/env bash' ] || fail "$cmd does not start with #!/usr/bin/env bash"
  cmds+=("$cmd")
done <<<"$block"
[ "${cmds[1]}" = ./scripts/test ] || fail "the README's second command should be the test command ./scripts/test, is ${cmds[1]}"

# What the commands run: the scripts they name and the scripts those name, transitively.
todo=("${cmds[@]#./}") seen=()
while [ ${#todo[@]} -gt 0 ]; do
  f=${todo[0]}; todo=("${todo[@]:1}")
  [[ " ${seen[*]} " == *" $f "* ]] && continue
  seen+=("$f")
  if grep -nE '(^|[;&|({`[:space:]])make([[:space:]]|$)' "$src/$f" | grep -vE '^[0-9]+:[[:space:]]*#'; then
    fail "$f calls make, which a fresh Debian 12 does not have"
  fi
  for s in $(grep -oE 'scripts/[a-z-]+' "$src/$f" | sort -u); do
    [ -f "$src/$s" ] && todo+=("$s")
  done
done
[[ " ${seen[*]} " == *" scripts/install-deps "* ]] || fail "neither README command runs scripts/install-deps"

last=$(grep -vE '^[[:space:]]*(#|$|set |cd )' "$src/.ci/run" | tail -1)
[ "$last" = "${cmds[1]}" ] || fail ".ci/run runs '$last', the README's test command is '${cmds[1]}'"

cd "$src"
if grep -rnE 'MCDC_SHARED|\.\./shared|/shared/testdata' tests bench scripts CMakeLists.txt docs --include='*.c' --include='*.h' \
     --include='*.sh' --include='*.bash' --include='*.mjs' --include='*.txt' --include='*.md' --exclude-dir=node_modules --exclude-dir=data |
   grep -v '^tests/integration/readme_setup.sh:'; then
  fail "the lines above read test data from outside the repository: use tests/data/"
fi
for d in tests/data/parquet-testing tests/data/delta; do
  [ -s "$d/NOTICE" ] || fail "$d has no NOTICE"
done
[ -s tests/data/LICENSE-2.0.txt ] && [ -s tests/data/README.md ] || fail "tests/data has no LICENSE-2.0.txt or README.md"
if grep -nE 'strcmp\(name, "(dv-partitioned-with-checkpoint|table-with-columnmapping-mode-name|data-reader-array-primitives)"\)' tests/unit/delta/*.c; then
  fail "a test treats a golden case specially: the expected files are taken as they are"
fi
echo "readme_setup: ok (${cmds[*]}; scripts run: ${seen[*]})"
