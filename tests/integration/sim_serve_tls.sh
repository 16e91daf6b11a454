#!/usr/bin/env bash
# sim serve with TLS (GnuTLS, the handshake inside PRELOGIN packets): a test CA made here
# signs the server's certificate; FreeTDS's tsql connects with each of its encryption
# settings against --encryption login and required (a client that cannot encrypt is refused
# by required); python-tds and tedious validate the certificate against the CA and fail against
# another CA; with full encryption the query's text never crosses the wire in the clear, with
# login-only encryption LOGIN7 does not and the query does.
source "$(dirname "$0")/sim_serve_lib.bash"
command -v openssl >/dev/null || die "openssl is missing"
serve_db
ca=$T/ca
mkdir -p "$ca"
mkcert() { # mkcert DIR CN: a CA in DIR and a server certificate for 127.0.0.1 signed by it
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/ca.key" -out "$1/ca.pem" -days 2 -subj "/CN=$2" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$1/server.key" -out "$1/server.csr" -subj "/CN=localhost" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$1/ext"
  openssl x509 -req -in "$1/server.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial -out "$1/server.pem" \
    -days 2 -extfile "$1/ext" 2>/dev/null
}
mkcert "$ca" "mcdc test CA"
mkdir -p "$T/other" && mkcert "$T/other" "another CA"

tsql_enc() { # tsql_enc ENCRYPTION: one query through tsql with freetds.conf's encryption setting
  printf '[s]\n host = 127.0.0.1\n port = %s\n tds version = 7.4\n encryption = %s\n' "$PORT" "$1" > "$T/freetds.conf"
  printf 'SELECT order_id FROM dbo.orders\ngo\nexit\n' | FREETDSCONF=$T/freetds.conf timeout 20 tsql -S s -U u -P "$PW" -D shop 2>&1
}
for mode in login required; do
  serve_start --tls-cert "$ca/server.pem" --tls-key "$ca/server.key" --encryption "$mode"
  for enc in off request require; do
    out=$(tsql_enc "$enc" || true)
    if [ "$mode" = required ] && [ "$enc" = off ]; then
      grep -q "(3 rows affected)" <<<"$out" && die "--encryption required served a client that cannot encrypt"
    else
      grep -q "(3 rows affected)" <<<"$out" || die "--encryption $mode, client encryption=$enc: $out"
    fi
  done
  serve_stop
done

# login-only (FreeTDS's encryption=request against --encryption login): LOGIN7 travels in TLS,
# the requests after it in the clear
serve_start --tls-cert "$ca/server.pem" --tls-key "$ca/server.key" --encryption login
capture_start "$T/login.pcapng"
out=$(tsql_enc request)
grep -q "(3 rows affected)" <<<"$out" || die "login-only: $out"
capture_stop
serve_stop
/usr/bin/python3 - "$T/login.pcapng" <<'PY' || die "login-only TLS: LOGIN7 in the clear, or the query encrypted"
import sys
data = open(sys.argv[1], 'rb').read()
query = 'SELECT order_id FROM dbo.orders'.encode('utf-16-le')
app = 'TSQL'.encode('utf-16-le')  # tsql's AppName in LOGIN7
sys.exit(0 if query in data and app not in data else 1)
PY

# python-tds and tedious: full TLS, the certificate validated against the CA (and refused with another)
serve_start --tls-cert "$ca/server.pem" --tls-key "$ca/server.key" --encryption required
capture_start "$T/tls.pcapng"
here=$(cd "$(dirname "$0")/../interop" && pwd)
/usr/bin/python3 "$here/tds_pytds.py" "$PORT" u "$PW" shop --cafile "$ca/ca.pem" "SELECT customer FROM dbo.orders WHERE order_id = 2" \
  > "$T/py.jsonl" || die "python-tds over TLS failed"
grep -q '"customer":"Zoë €"' "$T/py.jsonl" || die "python-tds over TLS read: $(cat "$T/py.jsonl")"
/usr/bin/python3 "$here/tds_pytds.py" "$PORT" u "$PW" shop --cafile "$T/other/ca.pem" "SELECT 1 AS x" > /dev/null 2>&1 \
  && die "python-tds accepted a certificate of another CA"
# tedious too (Node's TLS, the certificate validated against the CA)
timeout 30 node "$here/tds_tedious.mjs" "$PORT" u "$PW" shop --ca "$ca/ca.pem" "SELECT customer FROM dbo.orders WHERE order_id = 2" \
  > "$T/td.jsonl" || die "tedious over TLS failed"
grep -q '"customer":"Zoë €"' "$T/td.jsonl" || die "tedious over TLS read: $(cat "$T/td.jsonl")"
timeout 30 node "$here/tds_tedious.mjs" "$PORT" u "$PW" shop --ca "$T/other/ca.pem" "SELECT 1 AS x" > /dev/null 2>&1 \
  && die "tedious accepted a certificate of another CA"
capture_stop
serve_stop
/usr/bin/python3 - "$T/tls.pcapng" <<'PY' || die "the query's text crossed the wire in the clear"
import sys
data = open(sys.argv[1], 'rb').read()
needle = 'WHERE order_id = 2'.encode('utf-16-le')
sys.exit(1 if needle in data else 0)
PY
echo "ok"
