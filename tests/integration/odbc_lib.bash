# tests/integration/odbc_lib.bash: `mssql-cdc sim serve` for the SQL Server source's tests
# (sourced after stream_lib.bash, not a test itself). serve_start runs a server for $DB on a
# free port (or the one given) with the login u and the password in $T/pw; $SRC is then the
# odbc: source for it. both KIND... runs a stream through sim: and through odbc: into two
# warehouses, $T/lake_sim and $T/lake_odbc, so that what they wrote can be compared.
PW='Pw;with}brace'
printf '%s\n' "$PW" > "$T/pw"
SERVE_PID=
export MSSQL_CDC_RETRY_BASE_MS=${MSSQL_CDC_RETRY_BASE_MS:-100}
trap 'for p in $(jobs -p); do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT

# serve_start [--listen HOST:PORT] [OPTIONS...]
serve_start() {
  local listen=127.0.0.1:0
  if [ "${1:-}" = --listen ]; then listen=$2; shift 2; fi
  : > "$T/serve.log"
  "$MCDC_BIN" ${SERVE_LOG_LEVEL:+--log-level "$SERVE_LOG_LEVEL"} sim serve "$DB" --listen "$listen" --database shop --user u --password-file "$T/pw" "$@" \
    2>> "$T/serve.log" &
  SERVE_PID=$!
  for _ in $(seq 1 100); do
    grep -q '^listening on ' "$T/serve.log" && break
    kill -0 "$SERVE_PID" 2>/dev/null || die "sim serve exited: $(cat "$T/serve.log")"
    sleep 0.05
  done
  PORT=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' "$T/serve.log" | tail -1)
  [ -n "$PORT" ] || die "sim serve: no 'listening on' line: $(cat "$T/serve.log")"
  # the password holds ';' and '}': braced, with '}' doubled
  SRC="odbc:Server=127.0.0.1;Port=$PORT;Database=shop;UID=u;PWD={${PW//\}/\}\}}};connectTimeout=5;queryTimeout=20"
}
serve_stop() {
  [ -n "$SERVE_PID" ] || return 0
  kill -TERM "$SERVE_PID"
  wait "$SERVE_PID" || die "sim serve exited $? after SIGTERM"
  SERVE_PID=
}

# both APP [STREAM ARGS...]: stream APP through sim: and odbc:, each into its own warehouse
both() {
  local app=$1; shift
  local kind spec
  for kind in sim odbc; do
    spec="sim:$DB"
    [ $kind = odbc ] && spec=$SRC
    M --warehouse "$T/lake_$kind" stream --source "$spec" --capture-instance dbo_orders --target "bronze.$app" \
      --app-id "$app" --checkpoint "$T/ck_$kind/$app" --facts ops.facts --control ops.control \
      --silver "silver.$app" "$@" >"$T/out_$kind" 2>"$T/err_$kind" || die "$kind stream $app: $(cat "$T/err_$kind")"
  done
}

# same TABLE [KEYS TO LEAVE OUT]: the table holds the same rows in both warehouses
same() {
  M --warehouse "$T/lake_sim" table cat "$1" --format jsonl > "$T/a.jsonl"
  M --warehouse "$T/lake_odbc" table cat "$1" --format jsonl > "$T/b.jsonl"
  node "$MCDC_SRC/tests/integration/odbc_compare.mjs" "$T/a.jsonl" "$T/b.jsonl" "${2:-}" >/dev/null ||
    die "$1 differs between sim: and odbc:: $(node "$MCDC_SRC/tests/integration/odbc_compare.mjs" "$T/a.jsonl" "$T/b.jsonl" "${2:-}" 2>&1)"
}
# facts columns of our own actions, and lags against the server's clock (the simulator's
# virtual clock through sim:, the host's through sim serve)
FACTS_OWN=started_at,duration_ms,read_seconds,read_mb,written_at,source_rtt_ms,network_wait_ms,capture_lag_seconds
