#!/usr/bin/env bash
# `cmake --install` (the README's install step) installs the binary, libmcdc.a, the headers, mcdc.pc and the man
# page, and a program built against the installed library with pkg-config runs (it calls code that needs
# nettle and GnuTLS, so a dependency missing from mcdc.pc fails to link).
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
#include <stdint.h>
#include <mcdc/keyhash.h>
#include <mcdc/lsn.h>
#include <mcdc/tds.h>
int main(void)
{
    mcdc_lsn l, n;
    char s[MCDC_LSN_STRLEN];
    int64_t h;
    if (mcdc_lsn_parse(&l, "0xff") || mcdc_lsn_increment(&n, &l))
        return 1;
    /* These two pull in nettle (SHA-256) and GnuTLS (PBKDF2): the .pc must name both. */
    if (mcdc_keyhash_of_text(&h, "1", 1))
        return 1;
    mcdc_tds_server_options o = MCDC_TDS_SERVER_OPTIONS_INIT;
    o.db_path = "/nonexistent/sim.db";
    o.listen = "127.0.0.1:0";
    if (mcdc_tds_serve(&o) == 0) /* refused: the database does not exist */
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
