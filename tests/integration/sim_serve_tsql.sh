#!/usr/bin/env bash
# sim serve through FreeTDS's tsql: it listens on the port it prints, answers SELECTs as
# `sim query` does, refuses a wrong password with 18456 and a close (the password never in
# its log), serves several connections at once and no more than --max-connections, stops
# with exit 0 on SIGTERM and on SIGINT, and refuses bad options with exit 2 before listening.
source "$(dirname "$0")/sim_serve_lib.bash"
command -v tsql >/dev/null || die "tsql (freetds-bin) is not installed: run scripts/install-deps"
serve_db

serve_start
out=$(tsql_run u "$PW" "SELECT order_id, customer, amount FROM dbo.orders ORDER BY order_id")
rows=$(sed 's/^\([0-9]*> \)*//' <<<"$out" | sed -n '/^order_id/,/rows affected/p' | sed '/rows affected/d')
want=$(M sim query "$DB" "SELECT order_id, customer, amount FROM dbo.orders ORDER BY order_id")
[ "$rows" = "$want" ] || die "tsql and sim query differ:
tsql:
$rows
sim query:
$want"

# a wrong password and an unknown login: 18456, and the connection is closed
for who in "u wrong-pw" "nobody $PW"; do
  set -- $who
  out=$(tsql_run "$1" "$2" "SELECT 1" || true)
  grep -q "Msg 18456" <<<"$out" || die "login as $1 with a wrong password: no 18456 in: $out"
  grep -q "Login failed for user '$1'" <<<"$out" || die "no 'Login failed for user' text: $out"
  grep -q "^1$" <<<"$out" && die "a batch ran after a failed login"
done
grep -qF -- "$PW" "$T/serve.log" && die "the password is in the server's log"
grep -q "wrong-pw" "$T/serve.log" && die "a wrong password is in the server's log"

# several connections at once
for i in 1 2 3 4; do tsql_run u "$PW" "SELECT order_id FROM dbo.orders" > "$T/par.$i" & done
wait %2 %3 %4 %5 2>/dev/null || true
for i in 1 2 3 4; do grep -q "(3 rows affected)" "$T/par.$i" || die "parallel client $i: $(cat "$T/par.$i")"; done
serve_stop

# SIGINT stops it too, with exit 0
serve_start
kill -INT "$SERVE_PID"
rc=0; wait "$SERVE_PID" || rc=$?; SERVE_PID=
[ "$rc" = 0 ] || die "sim serve exited $rc after SIGINT"

# --max-connections 1: a second connection while one is open is closed at once
# (the holder says when it is connected and holds the connection until told to let go, so
# the check does not depend on how fast a loaded machine starts Python)
serve_start --max-connections 1
rm -f "$T/held" "$T/release"
/usr/bin/python3 -c "
import os, pytds, time, sys
c = pytds.connect(server='127.0.0.1', port=$PORT, user='u', password=sys.argv[1], database='shop')
open(sys.argv[2], 'w').close()
for _ in range(600):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.1)" "$PW" "$T/held" "$T/release" &
holder=$!
for _ in $(seq 600); do [ -e "$T/held" ] && break; kill -0 "$holder" 2>/dev/null || break; sleep 0.1; done
[ -e "$T/held" ] || die "the first connection was not served with --max-connections 1"
out=$(tsql_run u "$PW" "SELECT 1" || true)
touch "$T/release"
grep -q "^1$" <<<"$out" && die "a second connection was served with --max-connections 1"
wait "$holder" || die "the first connection failed while the second was refused"
out=$(tsql_run u "$PW" "SELECT 1")
grep -q "(1 row affected)" <<<"$out" || die "no connection served once the first closed: $out"
grep -q "refusing a connection" "$T/serve.log" || die "no log line for the refused connection"
serve_stop

# bad options: exit 2 and a hint, nothing served
expect2() {
  local rc=0
  M sim serve "$@" > "$T/err.out" 2>&1 || rc=$?
  [ "$rc" = 2 ] || die "sim serve $* exited $rc, expected 2: $(cat "$T/err.out")"
  grep -q "^mssql-cdc: error: " "$T/err.out" || die "sim serve $*: no error line: $(cat "$T/err.out")"
  grep -q "listening" "$T/err.out" && die "sim serve $* listened"
  return 0
}
expect2 "$DB"
expect2 "$DB" --listen nowhere
expect2 "$DB" --listen 127.0.0.1:0 --fault explode
expect2 "$DB" --listen 127.0.0.1:0 --fault error:1204@1
expect2 "$DB" --listen 127.0.0.1:0 --encryption required
expect2 "$DB" --listen 127.0.0.1:0 --encryption sometimes
expect2 "$DB" --listen 127.0.0.1:0 --tls-cert "$T/none.pem" --tls-key "$T/none.key"
expect2 "$DB" --listen 127.0.0.1:0 --user u
expect2 "$T/missing.db" --listen 127.0.0.1:0
grep -q "drop-after-rows:N" <(M sim serve "$DB" --listen 127.0.0.1:0 --fault explode 2>&1) || die "no hint for a bad --fault"
echo "ok"
