# The SQL Server source's refusals that need no server: a bad connection string is exit 2
# before anything is sent or written; a server that cannot be reached is retried three times
# on a new connection, a warning each, then exit 3 with nothing written; $MSSQL_CDC_SOURCE
# and @FILE reach the same source; the password appears in no output. (The source against
# a server: odbc_sim.sh, over `mssql-cdc sim serve`.)
. "$(dirname "$0")/stream_lib.bash"
export MSSQL_CDC_RETRY_BASE_MS=50

expect() { # expect CODE CMD...: run, check the exit code, keep stdout+stderr in $out
  local want=$1; shift
  set +e
  out=$("$@" 2>&1)
  local rc=$?
  set -e
  [ $rc = "$want" ] || die "exit $rc, want $want: $* : $out"
  case "$out" in *hunter2*) die "the password is shown: $out" ;; esac
}
S() { M stream --capture-instance dbo_orders --target bronze.o --app-id o --checkpoint "$T/ck" "$@"; }
nothing_written() { [ ! -e "$T/ck" ] && [ ! -e "$T/lake" ] || die "something was written: $(ls -R "$T")"; }

# unknown keywords (FreeTDS would ignore them) are named, exit 2
expect 2 S --source 'odbc:Server=127.0.0.1;UID=u;PWD=hunter2;Encryp=yes;Colour=blue'
grep -q <<<"$out" "unknown keywords for FreeTDS's driver: Encryp, Colour" || die "$out"
grep -q <<<"$out" "PWD=\*\*\*" || die "no masked string: $out"
nothing_written
# encryption that would check no certificate
expect 2 S --source 'odbc:Server=127.0.0.1;UID=u;PWD=hunter2;Encrypt=yes'
grep -q <<<"$out" "encryption without CAFile= would not check the server's certificate" || die "$out"
grep -q <<<"$out" "TrustServerCertificate=yes" || die "no hint: $out"
# a braced password holding ';' and '}' stays hidden, and so does an unterminated one
expect 2 S --source 'odbc:Server=127.0.0.1;UID=u;PWD={hunter2;x}}y};Colour=1'
expect 2 S --source 'odbc:Server=127.0.0.1;UID=u;PWD={hunter2'
grep -q <<<"$out" "no closing '}'" || die "$out"
nothing_written

# nothing listens on port 1: three retries on a new connection, each warned, then exit 3
start=$(date +%s%N)
expect 3 S --source 'odbc:Server=127.0.0.1;Port=1;UID=u;PWD=hunter2;connectTimeout=2'
[ "$(echo "$out" | grep -c 'WARN  source: connecting: .*retrying on a new connection')" = 3 ] || die "want 3 warnings: $out"
grep -q <<<"$out" "retry 3 of 3" || die "$out"
grep -q <<<"$out" "mssql-cdc: error: connecting: gave up after 3 retries: 127.0.0.1: .*SQLSTATE 08" || die "$out"
grep -q <<<"$out" "^hint: check that the server is up and reachable" || die "no hint: $out"
nothing_written

# the same through $MSSQL_CDC_SOURCE and through @FILE (the password is not on the command line)
MSSQL_CDC_SOURCE='odbc:Server=127.0.0.1;Port=1;UID=u;PWD=hunter2;connectTimeout=1' expect 3 S
grep -q <<<"$out" "gave up after 3 retries" || die "$out"
printf 'odbc:Server=127.0.0.1;Port=1;UID=u;PWD=hunter2;Colour=1\n' > "$T/src.txt"
expect 2 S --source "@$T/src.txt"
grep -q <<<"$out" "unknown keyword for FreeTDS's driver: Colour" || die "$out"
nothing_written
# with no driver to be found, exit 2 naming the package
MSSQL_CDC_FREETDS_DRIVER=$T/none.so expect 2 S --source 'odbc:Server=127.0.0.1;UID=u;PWD=hunter2'
grep -q <<<"$out" "MSSQL_CDC_FREETDS_DRIVER=.*no such file" || die "$out"
echo "odbc_cli: ok"
