#!/usr/bin/env bash
# `cmake --install` (the README's install step) installs the binary, libmcdc.a, the headers, mcdc.pc and the man
# page, and a program built against the installed library with pkg-config runs.
set -euo pipefail
build=${MCDC_BUILD:?}
p=$(mktemp -d)
trap 'rm -rf "$p"' EXIT
cmake --install "$build" --prefix "$p" >/dev/null
for f in bin/mssql-cdc lib/libmcdc.a include/mcdc/delta.h include/mcdc/finalize.h lib/pkgconfig/mcdc.pc share/man/man1/mssql-cdc.1; do
  [ -e "$p/$f" ] || { echo "install: $f missing" >&2; exit 1; }
done
"$p/bin/mssql-cdc" --version | grep -q '^mssql-cdc ' || { echo "install: the installed binary does not run" >&2; exit 1; }
grep -q '^.TH MSSQL-CDC 1' "$p/share/man/man1/mssql-cdc.1" || { echo "install: the man page is not a man page" >&2; exit 1; }
cat >"$p/t.c" <<'C'
#include <stdio.h>
#include <mcdc/lsn.h>
int main(void)
{
    mcdc_lsn l, n;
    char s[MCDC_LSN_STRLEN];
    if (mcdc_lsn_parse(&l, "0xff") || mcdc_lsn_increment(&n, &l))
        return 1;
    puts(mcdc_lsn_format(s, &n));
    return 0;
}
C
flags=$(PKG_CONFIG_PATH="$p/lib/pkgconfig" pkg-config --define-variable=prefix="$p" --cflags --libs --static mcdc)
# shellcheck disable=SC2086
cc -std=c11 -o "$p/t" "$p/t.c" $flags
[ "$("$p/t")" = "0x00000000000000000100" ] || { echo "install: linked program gave a wrong answer" >&2; exit 1; }
echo "install: ok"
