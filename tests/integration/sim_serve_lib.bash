# tests/integration/sim_serve_lib.bash: shared set-up for the tests of `sim serve` (sourced,
# not a test itself): a temp dir $T, a simulator database $DB (dbo.orders, captured), a
# login u / $PW, and serve_start / serve_stop to run a server on a free port ($PORT, its log
# in $T/serve.log), and capture_start / capture_stop for a loopback capture by tshark.
set -euo pipefail
: "${MCDC_BIN:?set by ctest}" "${MCDC_SRC:?set by ctest}"
T=$(mktemp -d /tmp/mcdc-serve-it-XXXXXX)
SERVE_PID= TSHARK=
cleanup() {
  [ -n "$TSHARK" ] && capture_end
  [ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
DB=$T/shop.db
PW='S3cret-pw;x'
printf '%s\n' "$PW" > "$T/pw"
M() { "$MCDC_BIN" "$@"; }
die() { echo "FAIL: $*" >&2; [ -f "$T/serve.log" ] && sed 's/^/  serve.log: /' "$T/serve.log" >&2; exit 1; }

serve_db() {
  M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
    --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
  M sim exec "$DB" --at 2026-10-01T14:00:00 "INSERT INTO dbo.orders VALUES (1, N'Ada', 12.50, '2026-10-01 13:59:59.123'), (2, N'Zoë €', -3.00, NULL), (3, NULL, NULL, '2026-10-01 14:00:00')" >/dev/null
  M sim capture "$DB" --at 2026-10-01T14:00:01 >/dev/null
}

# serve_start [OPTIONS...]: start `sim serve $DB` with the login u and wait until it listens
serve_start() {
  : > "$T/serve.log"
  "$MCDC_BIN" sim serve "$DB" --listen 127.0.0.1:0 --user u --password-file "$T/pw" "$@" 2> "$T/serve.log" &
  SERVE_PID=$!
  for _ in $(seq 1 100); do
    grep -q '^listening on ' "$T/serve.log" && break
    kill -0 "$SERVE_PID" 2>/dev/null || die "sim serve exited before listening"
    sleep 0.1
  done
  PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$T/serve.log")
  [ -n "$PORT" ] || die "no 'listening on 127.0.0.1:PORT' line"
}

# serve_stop: SIGTERM, which must end the server with exit 0
serve_stop() {
  kill -TERM "$SERVE_PID"
  local rc=0
  wait "$SERVE_PID" || rc=$?
  SERVE_PID=
  [ "$rc" = 0 ] || die "sim serve exited $rc after SIGTERM"
}

# tsql_run USER PASSWORD 'SQL': run batches through FreeTDS's tsql (output on stdout).
# tsql writes text in the locale's charset: C.UTF-8, whatever the caller's locale (a fresh
# machine may have none), so that text compares with sim query's UTF-8.
tsql_run() {
  printf '%s\ngo\nexit\n' "$3" | LC_ALL=C.UTF-8 timeout 20 tsql -H 127.0.0.1 -p "$PORT" -U "$1" -P "$2" -D shop 2>&1
}

# capture_start FILE: capture the server's port on loopback into FILE (tshark), until
# capture_stop. Both wait for a mark of their own (a UDP datagram to $PORT, where no one
# listens) to be in FILE: capture_start so that the capture is live before the traffic (on
# a loaded machine it came up late and missed the login), capture_stop so that every packet
# sent before is written (dumpcap writes them about half a second after they pass).
CAP_FILE= CAP_N=0
capture_mark_wait() { # capture_mark_wait NAME: send mark NAME until it is in $CAP_FILE
  local mark="mcdc-capture-mark-$$-$1."
  for _ in $(seq 1 120); do
    printf '%s' "$mark" 2>/dev/null > "/dev/udp/127.0.0.1/$PORT" || true
    sleep 0.5
    grep -qaF "$mark" "$CAP_FILE" 2>/dev/null && return 0
    kill -0 "$TSHARK" 2>/dev/null || die "tshark ended: $(cat "$T/tshark.log")"
  done
  die "tshark did not capture its mark $1 in 60 s: $(cat "$T/tshark.log")"
}
capture_start() {
  CAP_FILE=$1 CAP_N=$((CAP_N + 1))
  tshark -q -i lo -f "port $PORT" -w "$1" 2> "$T/tshark.log" &
  TSHARK=$!
  capture_mark_wait "start$CAP_N"
}
capture_stop() {
  capture_mark_wait "end$CAP_N"
  capture_end
}
capture_end() { # end tshark (cleanup calls it too)
  kill -INT "$TSHARK" 2>/dev/null || true
  for _ in $(seq 1 30); do kill -0 "$TSHARK" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$TSHARK" 2>/dev/null; then # it missed the signal: end it and its dumpcap
    pkill -TERM -P "$TSHARK" 2>/dev/null || true
    kill -TERM "$TSHARK" 2>/dev/null || true
  fi
  wait "$TSHARK" 2>/dev/null || true
  TSHARK=
}
