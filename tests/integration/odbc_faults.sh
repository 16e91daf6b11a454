# The SQL Server source's failures over the real protocol (against `mssql-cdc sim serve`):
# one fault (the server dropping the connection mid-read, a deadlock victim, a stall past
# queryTimeout) is retried on a new connection: exit 0, every change once. A fault on every
# attempt: exit 3 after three retries, nothing committed for the batch, and a rerun once the
# server is well leaves bronze with every change exactly once. The server killed under an
# interval stream and restarted: the stream warns, retries and catches up. A wrong password,
# a login without SELECT on the change table, an unknown capture instance: their exit codes
# and messages, and the password in nothing printed or written.
. "$(dirname "$0")/stream_lib.bash"
. "$(dirname "$0")/odbc_lib.bash"
sim_setup
ins() { # ins AT ID...: one transaction inserting each id
  local v="" id
  for id in "${@:2}"; do v="$v${v:+, }($id, N'c$id', $id.25, NULL)"; done
  sim_exec "$1" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES $v"
}
ins 2026-10-01T14:00:00 1 2 3
ins 2026-10-01T14:00:01 4 5 6
sim_capture 2026-10-01T14:00:05
odbc() { # odbc APP [ARGS...]: stream APP through $SRC (stdout and stderr in $T/APP.out)
  local app=$1; shift
  M stream --source "$SRC" --capture-instance dbo_orders --target "bronze.$app" --app-id "$app" \
    --checkpoint "$T/ck/$app" --facts ops.facts "$@" >"$T/$app.out" 2>&1
}
expect_exit() { # expect_exit CODE APP [ARGS...]
  local want=$1 rc=0; shift
  odbc "$@" || rc=$?
  [ $rc = "$want" ] || die "$*: exit $rc, want $want: $(cat "$T/$1.out")"
}
retried() { grep -q "retrying on a new connection in .* (retry 1 of 3)" "$T/$1.out" || die "$1: no retry warning: $(cat "$T/$1.out")"; }

# one dropped connection in the middle of the change rows
serve_start --fault drop-after-rows:5
expect_exit 0 drop
retried drop
check_bronze bronze.drop ops.facts drop
serve_stop

# a deadlock victim (1205) and a lock timeout (1222) on the 6th statement, a stall past queryTimeout
serve_start --fault error:1205@6
expect_exit 0 deadlock
retried deadlock
grep -q "error 1205" "$T/deadlock.out" || die "no error 1205 in the warning: $(cat "$T/deadlock.out")"
check_bronze bronze.deadlock ops.facts deadlock
serve_stop
serve_start --fault error:1222@7
expect_exit 0 locked
retried locked
check_bronze bronze.locked ops.facts locked
serve_stop
serve_start --fault stall:4s
SRC_T=$SRC
SRC="${SRC_T/connectTimeout=5;queryTimeout=20/connectTimeout=1;queryTimeout=1}" # the stall holds the first response
expect_exit 0 stall
SRC=$SRC_T
retried stall
grep -q "HYT00\|HYT01\|SQLSTATE 08\|error 2000[23]" "$T/stall.out" || die "the stall is not a timeout: $(cat "$T/stall.out")"
check_bronze bronze.stall ops.facts stall
serve_stop

# a dropped connection on every attempt: exit 3 after 3 retries, nothing committed
serve_start --fault drop-after-rows:2 --fault-repeat
expect_exit 3 always
[ "$(grep -c 'retrying on a new connection' "$T/always.out")" = 3 ] || die "want 3 retries: $(cat "$T/always.out")"
grep -q "gave up after 3 retries" "$T/always.out" || die "$(cat "$T/always.out")"
[ ! -e "$T/ck/always/commits/0" ] || die "a commit was recorded for the failed batch"
[ ! -e "$MSSQL_CDC_WAREHOUSE/bronze/always/_delta_log" ] || die "bronze was written for the failed batch"
serve_stop
serve_start
expect_exit 0 always
check_bronze bronze.always ops.facts always

# the server killed under an interval stream and restarted on the same port: it catches up
"$MCDC_BIN" stream --source "$SRC" --capture-instance dbo_orders --target bronze.live --app-id live --checkpoint "$T/ck/live" \
  --facts ops.facts --trigger interval:200ms --progress "$T/live.progress" >"$T/live.out" 2>&1 &
live=$!
for _ in $(seq 1 100); do [ -s "$T/live.progress" ] && break; sleep 0.05; done
[ -s "$T/live.progress" ] || die "no progress from the interval stream: $(cat "$T/live.out")"
kill -KILL "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; SERVE_PID=
ins 2026-10-01T14:01:00 7 8
sim_capture 2026-10-01T14:01:05
sleep 0.3
serve_start --listen "127.0.0.1:$PORT"
for _ in $(seq 1 100); do
  [ "$(M table cat bronze.live --format jsonl 2>/dev/null | grep -c '"order_id":[78],')" = 2 ] && break
  sleep 0.1
done
kill -TERM $live 2>/dev/null || die "the interval stream ended by itself: $(cat "$T/live.out")"
wait $live || die "the interval stream exited $? after SIGTERM: $(cat "$T/live.out")"
grep -q "retrying on a new connection" "$T/live.out" || die "no retry warning: $(cat "$T/live.out")"
check_bronze bronze.live ops.facts live

# refusals that are never retried
good=$SRC
SRC="odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=u;PWD=wrong-hunter2"
expect_exit 3 badpw
grep -q "mssql-cdc: error: 127.0.0.1: login failed for user 'u'" "$T/badpw.out" || die "$(cat "$T/badpw.out")"
grep -q "^hint: check UID= and PWD=" "$T/badpw.out" || die "no hint: $(cat "$T/badpw.out")"
! grep -q "retrying" "$T/badpw.out" || die "a login failure was retried"
printf 'r-secret\n' > "$T/rpw"
M sim login add "$DB" --user r --password-file "$T/rpw" >/dev/null
M sim grant "$DB" --user r --on dbo.orders >/dev/null
M sim grant "$DB" --user r --on cdc.lsn_time_mapping >/dev/null  # the simulator asks for it
SRC="odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=r;PWD=r-secret"
expect_exit 3 nogrant
grep -q "no SELECT permission on \[cdc\].\[dbo_orders_CT\]" "$T/nogrant.out" || die "$(cat "$T/nogrant.out")"
grep -q "^hint: a DBA grants it: GRANT SELECT ON \[cdc\].\[dbo_orders_CT\] TO \[r\];" "$T/nogrant.out" || die "$(cat "$T/nogrant.out")"
# a login with SELECT on the change table but not on the source table: SQL Server hides the
# capture instance from it (and answers zero for its min_lsn), so the stream refuses: exit 3
# naming the grant on the source table, not exit 2 for a misspelt name
printf 'c-secret\n' > "$T/cpw"
M sim login add "$DB" --user c --password-file "$T/cpw" >/dev/null
M sim grant "$DB" --user c --on cdc.dbo_orders_CT >/dev/null
M sim grant "$DB" --user c --on cdc.lsn_time_mapping >/dev/null
SRC="odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=c;PWD=c-secret"
expect_exit 3 ctonly
grep -q "capture instance 'dbo_orders' is hidden from login 'c': its change table \[cdc\].\[dbo_orders_CT\] is readable" \
  "$T/ctonly.out" || die "$(cat "$T/ctonly.out")"
grep -q "^hint: a DBA grants SELECT on the source table of dbo_orders to \[c\]" "$T/ctonly.out" || die "$(cat "$T/ctonly.out")"
# the same through a run config: run --check exits 3 (a permission), not 2 (a wrong name)
printf '%s\n' "$SRC" > "$T/c.conn"
printf 'sources:\n  s: {source: "@%s"}\ntables:\n  - {source: s, capture_instance: dbo_orders, target: bronze.c, app_id: c, checkpoint: ck-c}\n' \
  "$T/c.conn" > "$T/ctonly.yaml"
rc=0
M run --config "$T/ctonly.yaml" --check >"$T/ctonly_run.out" 2>&1 || rc=$?
[ $rc = 3 ] || die "run --check with a change-table-only login: exit $rc, want 3: $(cat "$T/ctonly_run.out")"
grep -q "source s: capture instance 'dbo_orders' is hidden from login 'c'" "$T/ctonly_run.out" || die "$(cat "$T/ctonly_run.out")"
SRC=$good
rc=0
M stream --source "$SRC" --capture-instance dbo_nothing --target bronze.x --app-id x --checkpoint "$T/ck/x" \
  >"$T/x.out" 2>&1 || rc=$?
[ $rc = 2 ] || die "unknown capture instance: exit $rc, want 2: $(cat "$T/x.out")"
grep -q "capture instance 'dbo_nothing'" "$T/x.out" || die "$(cat "$T/x.out")"

# the passwords appear in nothing printed or written
for pw in "$PW" wrong-hunter2 r-secret c-secret; do
  found=$(grep -rlaF --exclude=pw --exclude=rpw --exclude=cpw --exclude=c.conn -e "$pw" "$T" || true)
  [ -z "$found" ] || die "a password is in $found"
done
serve_stop
echo "odbc_faults: ok"
