#!/usr/bin/env bash
# scripts/sqlserver-smoke.sh: mssql-cdc end to end against a SQL Server, for users and releases.
#
#   scripts/sqlserver-smoke.sh [--keep] [--timeout SECONDS] [--record DIR] CONNECTION-STRING
#
# CONNECTION-STRING is an mssql-cdc source: odbc:KEY=VALUE;... or @FILE (its first line).
# The login must be allowed to create a table and enable CDC on it (db_owner), and SQL
# Server Agent must run (the capture job). The script:
#   1. creates the scratch table dbo.mcdc_smoke (when it is not there) and enables CDC on it
#      as capture instance dbo_mcdc_smoke, then waits for capture to process the enable;
#   2. makes changes: inserts (one transaction of three rows), an update, a key update, a
#      delete, and waits until capture has them;
#   3. runs `mssql-cdc source check`, then `mssql-cdc stream` with facts and a verdict into a
#      scratch warehouse;
#   4. checks bronze against the change table on the server (operation, key and values of
#      every change row, in order), the facts against bronze, and that a verdict was set;
#   5. disables CDC on the table again (with --keep, leaves it and the warehouse).
# Statements go to the server through FreeTDS's tsql (package freetds-bin), with a private
# freetds.conf (mode 0600) holding the host, port, encryption and CA file. The password is
# never printed, but tsql takes it on its command line: on a shared machine, other users
# can see it in ps while tsql runs. mssql-cdc itself reads it from the connection string.
# With --record DIR, mssql-cdc's own connections (source check and the stream) keep a
# transcript of every statement and response in DIR/transcript.jsonl (record=DIR, no password
# in it), which `mssql-cdc sim serve --replay DIR` answers from (docs/guides/sqlserver.md).
# Exit 0 when every check holds; 1 naming the first that does not; 2 for bad usage.
set -euo pipefail
keep=false
timeout=120
record=
while [ $# -gt 1 ]; do
  case $1 in
    --keep) keep=true; shift ;;
    --record) record=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# = 1 ] || { echo "usage: $0 [--keep] [--timeout SECONDS] [--record DIR] odbc:CONNECTION-STRING|@FILE" >&2; exit 2; }
rec=
if [ -n "$record" ]; then
  mkdir -p "$record" || { echo "sqlserver-smoke: --record $record: cannot create the directory" >&2; exit 2; }
  record=$(cd "$record" && pwd)
  rec=";record={${record//\}/\}\}}}" # braced: the path may hold ';'
fi
spec=$1
if [ "${spec:0:1}" = @ ]; then
  [ -r "${spec:1}" ] || { echo "sqlserver-smoke: cannot read ${spec:1}" >&2; exit 2; }
  spec=$(head -n 1 "${spec:1}")
fi
[ "${spec:0:5}" = odbc: ] || { echo "sqlserver-smoke: the source must be odbc:... (or @FILE holding one)" >&2; exit 2; }
mcdc=${MSSQL_CDC:-mssql-cdc}
command -v "$mcdc" >/dev/null || { echo "sqlserver-smoke: $mcdc is not on the PATH (or set MSSQL_CDC)" >&2; exit 2; }
command -v tsql >/dev/null || { echo "sqlserver-smoke: tsql is missing (Debian: apt-get install freetds-bin)" >&2; exit 2; }

# ---- the connection string: KEY=VALUE;..., braced values with '}}' for '}' ----
declare -A kv
s=${spec:5}
while [ -n "$s" ]; do
  s=${s#;}
  [ -n "$s" ] || break
  key=${s%%=*}
  [ "$key" != "$s" ] || { echo "sqlserver-smoke: an attribute without '=' in the connection string" >&2; exit 2; }
  s=${s#*=}
  if [ "${s:0:1}" = "{" ]; then
    s=${s:1}
    val=
    while :; do
      part=${s%%\}*}
      [ "$part" != "$s" ] || { echo "sqlserver-smoke: a braced value has no closing '}'" >&2; exit 2; }
      val+=$part
      s=${s:${#part}+1}
      if [ "${s:0:1}" = "}" ]; then val+="}"; s=${s:1}; else break; fi
    done
  else
    val=${s%%;*}
    s=${s:${#val}}
  fi
  key=$(printf '%s' "$key" | tr '[:upper:]' '[:lower:]' | tr -d ' ')
  kv[$key]=$val
done
host=${kv[server]:-}
host=${host#tcp:}
port=${kv[port]:-1433}
case $host in *,*) port=${host#*,}; host=${host%%,*} ;; esac
db=${kv[database]:-}
user=${kv[uid]:-}
[ -n "$host" ] && [ -n "$db" ] && [ -n "$user" ] ||
  { echo "sqlserver-smoke: the connection string needs Server=, Database= and UID=" >&2; exit 2; }
enc=off
case "${kv[encrypt]:-}${kv[encryption]:-}" in yes|true|mandatory|require) enc=require ;; request) enc=request ;; esac
[ -n "${kv[cafile]:-}" ] && enc=require

work=$(mktemp -d "${TMPDIR:-/tmp}/mcdc-smoke-XXXXXX")
chmod 700 "$work"
$keep || trap 'rm -rf "$work"' EXIT
{
  printf '[smoke]\n\thost = %s\n\tport = %s\n\ttds version = 7.4\n\tclient charset = UTF-8\n\tencryption = %s\n' \
    "$host" "$port" "$enc"
  [ -n "${kv[cafile]:-}" ] && printf '\tca file = %s\n' "${kv[cafile]}"
} > "$work/freetds.conf"
fail() { echo "sqlserver-smoke: FAIL: $*" >&2; exit 1; }
# sql 'BATCH': run it, rows on stdout ('|' between columns); an error (severity > 10) fails
sql() {
  local out err
  out=$(printf '%s\ngo\nexit\n' "$1" | FREETDSCONF=$work/freetds.conf tsql -S smoke -U "$user" -P "${kv[pwd]:-}" \
    -D "$db" -o fhq -t '|' 2>"$work/tsql.err") || true
  err=$(grep -A1 -E '^Msg [0-9]+ \(severity (1[1-9]|2[0-9])' "$work/tsql.err" || true)
  [ -z "$err" ] || fail "the server refused: $1: $err"
  grep -qiE 'unable to connect|login failed' "$work/tsql.err" && fail "cannot connect: $(head -3 "$work/tsql.err")"
  printf '%s\n' "$out" | sed '/^$/d'
}
wait_for() { # wait_for 'SQL' WANT: until the query answers WANT
  local i got
  for ((i = 0; i < timeout * 2; i++)); do
    got=$(sql "$1")
    [ "$got" = "$2" ] && return 0
    sleep 0.5
  done
  fail "waited ${timeout}s for '$1' to answer '$2' (it answers '$got'): is SQL Server Agent running?"
}

ci=dbo_mcdc_smoke
echo "sqlserver-smoke: $host:$port database $db as $user"
# 1. the scratch table and its capture instance
if [ "$(sql "SELECT CASE WHEN OBJECT_ID(N'dbo.mcdc_smoke') IS NULL THEN 0 ELSE 1 END")" != 1 ]; then
  sql "CREATE TABLE dbo.mcdc_smoke (id int NOT NULL PRIMARY KEY, name nvarchar(40) NULL, amount decimal(12,2) NULL)" >/dev/null
fi
if [ "$(sql "SELECT COUNT(*) FROM cdc.change_tables WHERE capture_instance = N'$ci'" 2>/dev/null || echo 0)" = 1 ]; then
  sql "EXEC sys.sp_cdc_disable_table @source_schema = N'dbo', @source_name = N'mcdc_smoke', @capture_instance = N'$ci'" >/dev/null
fi
sql "DELETE FROM dbo.mcdc_smoke" >/dev/null
sql "EXEC sys.sp_cdc_enable_table @source_schema = N'dbo', @source_name = N'mcdc_smoke', @role_name = NULL, @capture_instance = N'$ci'" >/dev/null
wait_for "SELECT CASE WHEN sys.fn_cdc_get_min_lsn(N'$ci') > 0x00000000000000000000 THEN 1 ELSE 0 END" 1
echo "sqlserver-smoke: CDC enabled on dbo.mcdc_smoke ($ci)"
# 2. changes
sql "INSERT INTO dbo.mcdc_smoke (id, name, amount) VALUES (1, N'Ada', 12.50), (2, N'Zoë €', -3.00), (3, NULL, NULL)" >/dev/null
sql "UPDATE dbo.mcdc_smoke SET amount = 13.75 WHERE id = 1" >/dev/null
sql "UPDATE dbo.mcdc_smoke SET id = 20 WHERE id = 2" >/dev/null
sql "DELETE FROM dbo.mcdc_smoke WHERE id = 3" >/dev/null
# 3 inserts, update before and after (2), key update as delete and insert (2), delete (1)
wait_for "SELECT COUNT(*) FROM cdc.[${ci}_CT]" 8
echo "sqlserver-smoke: 8 change rows captured"
# 3. check, then stream
"$mcdc" source check --source "${spec%;}$rec" --capture-instance "$ci" > "$work/check.txt" ||
  fail "source check: $(grep -A1 '^FAIL' "$work/check.txt")"
export MSSQL_CDC_WAREHOUSE=$work/lake
"$mcdc" stream --source "${spec%;}$rec" --capture-instance "$ci" --target bronze.mcdc_smoke --app-id mcdc_smoke \
  --checkpoint "$work/checkpoint" --facts ops.facts --control ops.control > "$work/stream.txt" 2>&1 ||
  fail "stream: $(tail -5 "$work/stream.txt")"
# 4. bronze against the change table; facts against bronze; the verdict
sql "SELECT __\$operation, id, name, amount FROM cdc.[${ci}_CT] ORDER BY __\$start_lsn, __\$command_id, __\$seqval, __\$operation" |
  sed 's/NULL//g' > "$work/ct.txt"
"$mcdc" table cat bronze.mcdc_smoke --columns _operation,id,name,amount --format csv | tail -n +2 | tr , '|' \
  > "$work/bronze.txt"
diff "$work/ct.txt" "$work/bronze.txt" > "$work/diff.txt" || fail "bronze differs from the change table: $(cat "$work/diff.txt")"
rows=$("$mcdc" table cat ops.facts --format jsonl | sed -n 's/.*"rows":\([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
[ "$rows" = 8 ] || fail "the facts count $rows rows, bronze has 8"
"$mcdc" finalization show --control ops.control --table bronze.mcdc_smoke --format jsonl > "$work/verdict.txt" 2>&1 ||
  fail "no verdict: $(cat "$work/verdict.txt")"
until=$(sed -n 's/.*"finalized_until":"\([^"]*\)".*/\1/p' "$work/verdict.txt")
[ -n "$until" ] || fail "no verdict: $(cat "$work/verdict.txt")"
echo "sqlserver-smoke: bronze holds the 8 change rows in order; facts count 8; finalized_until $until"
# 5. clean up
if ! $keep; then
  sql "EXEC sys.sp_cdc_disable_table @source_schema = N'dbo', @source_name = N'mcdc_smoke', @capture_instance = N'$ci'" >/dev/null
else
  echo "sqlserver-smoke: kept dbo.mcdc_smoke with CDC on, and the warehouse in $work/lake"
fi
echo "sqlserver-smoke: ok"
