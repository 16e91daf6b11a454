# `mssql-cdc source check` against `sim serve`, and the source over TLS: a healthy server
# checks out (exit 0, text and json); a capture instance that does not exist, a login
# without SELECT on the change table and a stale max_lsn exit 3, each named with its fix.
# With --encryption required and the suite's test CA, Encrypt=yes;CAFile= connects and
# streams (FreeTDS checks the certificate), and a certificate of another CA is refused.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"
command -v openssl >/dev/null || die "openssl is missing"
# a server whose capture ran just now
M sim init "$DB" --table dbo.orders --keys order_id \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL' >/dev/null
M sim exec "$DB" "INSERT INTO dbo.orders (order_id, customer, amount) VALUES (1, N'a', 1.00), (2, N'b', 2.00)" >/dev/null
M sim capture "$DB" >/dev/null
serve_start
check() { # check CODE ARGS...: source check, exit CODE expected, output in $out
  local want=$1 rc=0; shift
  out=$(M source check "$@" 2>&1) || rc=$?
  [ $rc = "$want" ] || die "source check $*: exit $rc, want $want: $out"
  case "$out" in *"$PW"*|*r-secret*) die "a password is shown: $out" ;; esac
}
check 0 --source "$SRC" --capture-instance dbo_orders
for line in "ok   server: SQL Server 16." "ok   database: CDC is enabled" "ok   max_lsn: 0x" \
            "ok   capture instance dbo_orders: key columns [order_id]" \
            "ok   capture instance dbo_orders: 3 captured columns: order_id int, customer nvarchar(40), amount decimal(12,2)" \
            "ok   capture instance dbo_orders: SELECT on [cdc].[dbo_orders_CT] (every read): granted" \
            "a stream can run"; do
  grep -qF -- "$line" <<<"$out" || die "no line '$line': $out"
done
grep -q "^source odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=u;PWD=\*\*\*;" <<<"$out" || die "source line: $out"
check 0 --source "$SRC" --format json
node -e 'const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
  if (d.ok !== true || !d.items.length || d.items.some((i) => !i.ok) || !d.items.every((i) => "what" in i && "found" in i && "fix" in i)) process.exit(1);' <<<"$out" ||
  die "json: $out"
# through $MSSQL_CDC_SOURCE
MSSQL_CDC_SOURCE=$SRC check 0 --capture-instance dbo_orders

# a capture instance that does not exist
check 3 --source "$SRC" --capture-instance dbo_nothing
grep -q "^FAIL capture instance dbo_nothing: capture instance 'dbo_nothing' does not exist in database shop" <<<"$out" || die "$out"
grep -q "fix: the capture instances this login can read: dbo_orders" <<<"$out" || die "$out"
# a login without SELECT on the change table
printf 'r-secret\n' > "$T/rpw"
M sim login add "$DB" --user r --password-file "$T/rpw" >/dev/null
M sim grant "$DB" --user r --on dbo.orders >/dev/null
M sim grant "$DB" --user r --on cdc.lsn_time_mapping >/dev/null  # the simulator asks for it
check 3 --source "odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=r;PWD=r-secret" --capture-instance dbo_orders
grep -q "^FAIL capture instance dbo_orders: SELECT on \[cdc\].\[dbo_orders_CT\] (every read): missing" <<<"$out" || die "$out"
grep -q "fix: a DBA grants it: GRANT SELECT ON \[cdc\].\[dbo_orders_CT\] TO \[r\];" <<<"$out" || die "$out"
# a login with SELECT on the change table only: the instance is hidden from it (SQL Server's CDC
# security model), a permission to fix
printf 'c-secret\n' > "$T/cpw"
M sim login add "$DB" --user c --password-file "$T/cpw" >/dev/null
M sim grant "$DB" --user c --on cdc.dbo_orders_CT >/dev/null
M sim grant "$DB" --user c --on cdc.lsn_time_mapping >/dev/null
check 3 --source "odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=c;PWD=c-secret" --capture-instance dbo_orders
grep -q "^FAIL capture instance dbo_orders: capture instance 'dbo_orders' is hidden from login 'c'" <<<"$out" || die "$out"
grep -q "fix: a DBA grants SELECT on the source table of dbo_orders to \[c\]" <<<"$out" || die "$out"
serve_stop

# a stale max_lsn: capture last ran long ago
rm -f "$DB"
sim_setup
serve_start
check 3 --source "$SRC"
grep -q "^FAIL max_lsn: 0x.* behind the server's clock (stale)" <<<"$out" || die "$out"
grep -q "fix: SQL Server Agent or the capture job is not running" <<<"$out" || die "$out"
serve_stop

# TLS with the test CA: the certificate is checked against CAFile
mkcert() { # mkcert DIR CN: a CA in DIR and a server certificate for 127.0.0.1 signed by it
  mkdir -p "$1"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$1/ca.key" -out "$1/ca.pem" -days 2 -subj "/CN=$2" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -keyout "$1/server.key" -out "$1/server.csr" -subj "/CN=localhost" 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$1/ext"
  openssl x509 -req -in "$1/server.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial -out "$1/server.pem" \
    -days 2 -extfile "$1/ext" 2>/dev/null
}
mkcert "$T/ca" "mcdc test CA"
mkcert "$T/other" "another CA"
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'a', 1.00, NULL)"
sim_capture 2026-10-01T14:00:01
serve_start --tls-cert "$T/ca/server.pem" --tls-key "$T/ca/server.key" --encryption required
M stream --source "$SRC;Encrypt=yes;CAFile=$T/ca/ca.pem" --capture-instance dbo_orders --target bronze.tls \
  --app-id tls --checkpoint "$T/ck/tls" --facts ops.facts >"$T/tls.out" 2>&1 || die "stream over TLS: $(cat "$T/tls.out")"
check_bronze bronze.tls ops.facts tls
rc=0
M stream --source "$SRC;Encrypt=yes;CAFile=$T/other/ca.pem" --capture-instance dbo_orders --target bronze.bad \
  --app-id bad --checkpoint "$T/ck/bad" >"$T/bad.out" 2>&1 || rc=$?
[ $rc = 3 ] || die "a certificate of another CA: exit $rc, want 3: $(cat "$T/bad.out")"
grep -q "^hint: .*its certificate is signed by the CA in CAFile=$T/other/ca.pem and names the host 127.0.0.1" "$T/bad.out" ||
  die "no certificate hint: $(cat "$T/bad.out")"
[ ! -e "$MSSQL_CDC_WAREHOUSE/bronze/bad" ] || die "bronze was written over an unchecked connection"
# without a CA file, only an explicit TrustServerCertificate=yes connects
rc=0
M source check --source "$SRC;Encrypt=yes" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || die "Encrypt=yes without CAFile: exit $rc, want 2"
M source check --source "$SRC;Encrypt=yes;TrustServerCertificate=yes" >/dev/null 2>&1 || rc=$?
[ $rc = 3 ] || die "TrustServerCertificate=yes: exit $rc, want 3 (the stale max_lsn)"
serve_stop
echo "odbc_check: ok"
