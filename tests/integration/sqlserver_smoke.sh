# scripts/sqlserver-smoke.sh against `mssql-cdc sim serve` with TLS on (a test CA made here),
# as a release runs it against a real server: it enables CDC on the scratch table, makes
# changes, streams them and checks bronze, facts and the verdict against the server. A
# background loop plays SQL Server Agent's capture job. (sim serve's T-SQL has no CREATE
# TABLE, so the scratch table is made here beforehand; the script creates it only when
# missing.) Then the script's refusals: bad usage exits 2, a wrong password fails naming it.
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
M sim init "$DB" --table dbo.orders --keys order_id --schema 'order_id INT NOT NULL' >/dev/null
M sim init "$DB" --table dbo.mcdc_smoke --keys id \
  --schema 'id INT NOT NULL, name NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL' >/dev/null
M sim disable "$DB" --capture-instance dbo_mcdc_smoke >/dev/null
serve_start --tls-cert "$ca/server.pem" --tls-key "$ca/server.key" --encryption required
( while sleep 0.3; do "$MCDC_BIN" sim capture "$DB" >/dev/null 2>&1 || true; done ) &
smoke=$MCDC_SRC/scripts/sqlserver-smoke.sh
conn="odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=u;PWD={${PW//\}/\}\}}};Encrypt=yes;CAFile=$ca/ca.pem"
MSSQL_CDC=$MCDC_BIN bash "$smoke" --timeout 30 "$conn" > "$T/smoke.out" 2>&1 || die "the smoke script failed: $(cat "$T/smoke.out")"
grep -q "^sqlserver-smoke: bronze holds the 8 change rows in order; facts count 8; finalized_until" "$T/smoke.out" ||
  die "$(cat "$T/smoke.out")"
grep -q "^sqlserver-smoke: ok$" "$T/smoke.out" || die "$(cat "$T/smoke.out")"
# again, from a file, with a transcript (recorded through TLS): the capture instance is made anew
printf '%s\n' "$conn" > "$T/conn.txt"
MSSQL_CDC=$MCDC_BIN bash "$smoke" --timeout 30 --record "$T/rec;x" "@$T/conn.txt" > "$T/smoke2.out" 2>&1 || die "the second run failed: $(cat "$T/smoke2.out")"
case "$(cat "$T/smoke.out" "$T/smoke2.out")" in *"$PW"*) die "the password is shown" ;; esac
grep -qF '"text":"SELECT sys.fn_cdc_get_max_lsn(), SYSUTCDATETIME(), DATEPART(TZOFFSET, SYSDATETIMEOFFSET())"' "$T/rec;x/transcript.jsonl" || die "transcript: $(head -c 1000 "$T/rec;x/transcript.jsonl")"
grep -q 'dbo_mcdc_smoke' "$T/rec;x/transcript.jsonl" || die "the transcript does not name the capture instance"
grep -rqF -- "$PW" "$T/rec;x" && die "the password is in the transcript"
[ "$(ls -A "$T/rec;x")" = transcript.jsonl ] || die "the record directory holds $(ls -A "$T/rec;x")"
# refusals
rc=0; MSSQL_CDC=$MCDC_BIN bash "$smoke" > "$T/u.out" 2>&1 || rc=$?
[ $rc = 2 ] || die "no argument: exit $rc, want 2"
rc=0; MSSQL_CDC=$MCDC_BIN bash "$smoke" "sim:$DB" > "$T/u.out" 2>&1 || rc=$?
[ $rc = 2 ] || die "a sim: source: exit $rc, want 2"
rc=0; MSSQL_CDC=$MCDC_BIN bash "$smoke" --timeout 5 "odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=u;PWD=nope;Encrypt=yes;CAFile=$ca/ca.pem" \
  > "$T/pw.out" 2>&1 || rc=$?
[ $rc = 1 ] || die "a wrong password: exit $rc, want 1: $(cat "$T/pw.out")"
grep -q "FAIL: cannot connect\|Login failed" "$T/pw.out" || die "$(cat "$T/pw.out")"
serve_stop
echo "sqlserver_smoke: ok"
