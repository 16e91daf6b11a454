#!/usr/bin/env bash
# Every public header compiles alone, twice included, under strict C11 with each compiler
# present (gcc, clang): a header that leans on something its includer happens to pull in,
# or uses an extension without marking it, fails here. Style guide habit 13.
set -uo pipefail
src=${MCDC_SRC:?MCDC_SRC must point at the repository}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

compilers=()
for cc in gcc clang; do command -v "$cc" >/dev/null 2>&1 && compilers+=("$cc"); done
if [ ${#compilers[@]} -eq 0 ]; then echo "headers.sh: no C compiler found" >&2; exit 1; fi

n=0 fail=0
for h in "$src"/include/mcdc/*.h; do
  name=$(basename "$h")
  printf '#include "mcdc/%s"\n#include "mcdc/%s"\nint mcdc_header_test_anchor;\n' "$name" "$name" >"$work/t.c"
  for cc in "${compilers[@]}"; do
    n=$((n + 1))
    if ! "$cc" -std=c11 -pedantic -Wall -Wextra -Werror -I"$src/include" -fsyntax-only "$work/t.c" \
         2>"$work/err"; then
      echo "FAIL: $cc: include/mcdc/$name does not compile alone:" >&2
      sed 's/^/  /' "$work/err" >&2
      fail=$((fail + 1))
    fi
  done
done
echo "headers.sh: $((n - fail)) of $n header compilations passed (${compilers[*]})"
[ "$n" -gt 0 ] && [ "$fail" -eq 0 ]
