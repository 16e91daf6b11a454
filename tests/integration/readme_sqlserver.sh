# The README's "Quick start against SQL Server" runs as written against `mssql-cdc sim serve`
# with TLS on (the server's certificate signed by a test CA made here), changing only the
# connection string: the section's sh blocks are extracted and run in order in an empty
# directory with mssql-cdc on the PATH, the `echo 'odbc:...' > shop.odbc` line given this
# server's string. Then bronze.orders holds the change table's rows and the verdict is set.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"
command -v openssl >/dev/null || die "openssl is missing"
ca=$T/ca
mkdir -p "$ca"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$ca/ca.key" -out "$ca/ca.pem" -days 2 -subj "/CN=mcdc test CA" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout "$ca/server.key" -out "$ca/server.csr" -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$ca/ext"
openssl x509 -req -in "$ca/server.csr" -CA "$ca/ca.pem" -CAkey "$ca/ca.key" -CAcreateserial -out "$ca/server.pem" \
  -days 2 -extfile "$ca/ext" 2>/dev/null
# a shop whose capture runs now, and a reader login as the guide grants it
M sim init "$DB" --table dbo.orders --keys order_id \
  --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL' >/dev/null
M sim exec "$DB" "INSERT INTO dbo.orders (order_id, customer, amount) VALUES (1, N'Ada', 12.50), (2, N'Zoë', 3.00)" >/dev/null
M sim exec "$DB" "UPDATE dbo.orders SET amount = 13.00 WHERE order_id = 1" >/dev/null
M sim capture "$DB" >/dev/null
printf 'r{e;ader}\n' > "$T/reader.pw"
M sim login add "$DB" --user cdc_reader --password-file "$T/reader.pw" >/dev/null
for o in cdc.dbo_orders_CT dbo.orders cdc.lsn_time_mapping; do M sim grant "$DB" --user cdc_reader --on "$o" >/dev/null; done
serve_start --tls-cert "$ca/server.pem" --tls-key "$ca/server.key" --encryption required
conn="odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=cdc_reader;PWD={r{e;ader}}};Encrypt=yes;CAFile=$ca/ca.pem"

work=$T/work
mkdir -p "$work/bin"
ln -s "$MCDC_BIN" "$work/bin/mssql-cdc"
awk '
  /^## / { on = ($0 ~ /^## Quick start against SQL Server/) }
  on && /^```sh$/ { code = 1; next }
  code && /^```$/ { code = 0; next }
  code { print }
' "$MCDC_SRC/README.md" > "$work/quickstart.sh"
grep -q "^echo 'odbc:.*' > shop.odbc$" "$work/quickstart.sh" || die "no echo 'odbc:...' > shop.odbc line: $(cat "$work/quickstart.sh")"
[ "$(grep -c '^mssql-cdc' "$work/quickstart.sh")" -ge 3 ] || die "commands not found: $(cat "$work/quickstart.sh")"
CONN=$conn awk '/^echo .odbc:.*> shop.odbc$/ { print "printf \"%s\\n\" \"$CONN\" > shop.odbc"; next } { print }' \
  "$work/quickstart.sh" > "$work/run.sh"
(cd "$work" && CONN=$conn PATH="$work/bin:$PATH" MSSQL_CDC_WAREHOUSE= bash -euo pipefail run.sh >"$work/out.txt" 2>"$work/err.txt") ||
  die "the README's commands failed: $(tail -20 "$work/err.txt"; tail -20 "$work/out.txt")"
grep -q "^a stream can run$" "$work/out.txt" || die "source check: $(cat "$work/out.txt")"
MSSQL_CDC_WAREHOUSE=$work/lake check_bronze bronze.orders ops.ingestion_facts orders
grep -q "finalized_until" "$work/out.txt" || die "no verdict shown: $(cat "$work/out.txt")"
found=$(grep -rlaF --exclude=shop.odbc -e 'r{e;ader}' "$work" || true)
[ -z "$found" ] || die "the password is in $found"
serve_stop
echo "readme_sqlserver: ok"
