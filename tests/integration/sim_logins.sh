#!/usr/bin/env bash
# sim login add and sim grant as the reference spells them: the password comes from a file's
# first line and is never stored (only a salted hash), bad input exits 2 naming the fix and
# changes nothing (the logins and grants read before and after are equal).
set -euo pipefail
bin=${MCDC_BIN:?MCDC_BIN must point at mssql-cdc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_exit() { # CODE CMD...: run, check the exit code, keep stderr in $work/err
  local want=$1; shift
  set +e; "$@" >"$work/out" 2>"$work/err"; local got=$?; set -e
  [ "$got" -eq "$want" ] || { cat "$work/err" >&2; fail "exit $got, expected $want: $*"; }
}
state() { sqlite3 "$db" "SELECT name, hex(salt), hex(hash) FROM sim_logins ORDER BY name; SELECT * FROM sim_grants ORDER BY 1, 2, 3;" 2>/dev/null || true; }

db=$work/d.db
"$bin" sim init "$db" --table dbo.orders --schema 'order_id INT NOT NULL, amount DECIMAL(12,2) NULL' --keys order_id \
  --at 2026-10-01T00:00:00 >/dev/null
printf 'pässw0rd with spaces \n' >"$work/pw"
"$bin" sim login add "$db" --user cdc_reader --password-file "$work/pw" >"$work/out"
grep -qx "login cdc_reader added to $db" "$work/out" || fail "login add printed: $(cat "$work/out")"
# the password is in no file of the database, the hash is there
! grep -qa 'pässw0rd' "$db"* || fail "the password is stored in the database"
[ "$(sqlite3 "$db" 'SELECT length(salt), length(hash) FROM sim_logins')" = "16|32" ] || fail "no salted hash stored"
before=$(state)

expect_exit 2 "$bin" sim login add "$db" --user CDC_READER --password-file "$work/pw"
grep -q "login 'CDC_READER' exists" "$work/err" || fail "duplicate login: $(cat "$work/err")"
expect_exit 2 "$bin" sim login add "$db" --user other --password-file "$work/nothere"
grep -q "password file .*nothere does not exist" "$work/err" || fail "missing file: $(cat "$work/err")"
grep -q '^hint: ' "$work/err" || fail "no hint for a missing password file"
: >"$work/empty"
expect_exit 2 "$bin" sim login add "$db" --user other --password-file "$work/empty"
grep -q "first line is empty" "$work/err" || fail "empty file: $(cat "$work/err")"
expect_exit 2 "$bin" sim login remove "$db" --user other --password-file "$work/pw"
grep -q "knows the action 'add'" "$work/err" || fail "unknown action: $(cat "$work/err")"
expect_exit 2 "$bin" sim login add "$db" --password-file "$work/pw"
expect_exit 2 "$bin" sim grant "$db" --user nobody --on dbo.orders
grep -q "login 'nobody' does not exist" "$work/err" || fail "unknown login: $(cat "$work/err")"
expect_exit 2 "$bin" sim grant "$db" --user cdc_reader --on dbo.nothing
grep -q "object dbo.nothing does not exist" "$work/err" || fail "unknown object: $(cat "$work/err")"
[ "$(state)" = "$before" ] || fail "a refused command changed the logins or grants"

"$bin" sim grant "$db" --user cdc_reader --on '[cdc].[dbo_orders_CT]' >"$work/out"
grep -qx "SELECT on \[cdc\].\[dbo_orders_CT\] granted to cdc_reader" "$work/out" || fail "grant printed: $(cat "$work/out")"
[ "$(sqlite3 "$db" 'SELECT login, schema_name, object_name FROM sim_grants')" = "cdc_reader|cdc|dbo_orders_CT" ] ||
  fail "grant not stored"
echo "ok"
