# tests/integration/stream_lib.bash: shared set-up for the stream's integration tests
# (sourced, not a test itself). Gives a temp dir $T, a simulator database $DB with table
# dbo.orders captured as dbo_orders, a warehouse, and helpers that run the CLI and check
# bronze and facts with stream_check.mjs.
set -euo pipefail
: "${MCDC_BIN:?set by ctest}" "${MCDC_SRC:?set by ctest}"
# on tmpfs when there is one: the runs fsync every state file, which a disk makes slow
tmp=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
T=$(mktemp -d "$tmp/mcdc-stream-it-XXXXXX")
trap 'rm -rf "$T"' EXIT
export MSSQL_CDC_WAREHOUSE=$T/lake
DB=$T/db.sqlite
CHECK="node $MCDC_SRC/tests/integration/stream_check.mjs"
M() { "$MCDC_BIN" "$@"; }
die() { echo "FAIL: $*" >&2; exit 1; }

sim_setup() {
  M sim init "$DB" --table dbo.orders --keys order_id --at 2026-10-01T13:59:00 \
    --schema 'order_id INT NOT NULL, customer NVARCHAR(40) NULL, amount DECIMAL(12,2) NULL, placed_at DATETIME2(3) NULL' >/dev/null
  M sim capture "$DB" --at 2026-10-01T13:59:30 >/dev/null
}
# sim_exec AT 'STATEMENTS'
sim_exec() { M sim exec "$DB" --at "$1" "$2" >/dev/null; }
sim_capture() { M sim capture "$DB" --at "$1" "${@:2}" >/dev/null; }

ct_rows() { M sim query "$DB" 'SELECT * FROM cdc.dbo_orders_CT' --format jsonl > "$1"; }
cat_table() { M table cat "$1" --format jsonl > "$2"; }
# run_refused FILE PATTERN: `run --config FILE`, with --check and without, exits 2 with
# PATTERN and a hint, and writes nothing (no lake/ or ck/ in the current directory)
run_refused() {
  local out rc
  for flag in --check ""; do
    rc=0
    # shellcheck disable=SC2086
    out=$(M run --config "$1" $flag 2>&1) || rc=$?
    [ "$rc" = 2 ] || die "$1 $flag: exit $rc, want 2: $out"
    grep -q -- "$2" <<<"$out" || die "$1 $flag: '$2' not in: $out"
    grep -q "^hint: " <<<"$out" || die "$1 $flag: no hint: $out"
  done
  [ ! -e lake ] && [ ! -e ck ] || die "$1: a refused config wrote something"
}
# metrics_url LOGFILE: the http://HOST:PORT a `run` with `listen: ...:0` logged to LOGFILE
# (waits up to 10 s for the line)
metrics_url() {
  local u
  for _ in $(seq 1 100); do
    u=$(sed -n 's|.*metrics: listening on \(http://[0-9.]*:[0-9]*\) .*|\1|p' "$1" | sed -n 1p)
    [ -n "$u" ] && { echo "$u"; return 0; }
    sleep 0.1
  done
  die "no 'metrics: listening on' line in $1: $(cat "$1")"
}

# sim_tables SCHEMA ROW TABLE...: tables dbo.TABLE of SCHEMA (key order_id) in $DB, made
# at 13:59:00, each given the one row ROW (values in SCHEMA's column order) at 13:59:10,
# then captured at 13:59:30 (the start of the run tests' histories)
sim_tables() {
  local schema=$1 row=$2 t
  shift 2
  for t in "$@"; do
    M sim init "$DB" --table "dbo.$t" --keys order_id --at 2026-10-01T13:59:00 --schema "$schema" >/dev/null
  done
  for t in "$@"; do sim_exec 2026-10-01T13:59:10 "INSERT INTO dbo.$t VALUES ($row)"; done
  sim_capture 2026-10-01T13:59:30
}
# silver_vs_source TABLE WHAT: silver TABLE holds exactly the rows of dbo.orders at the
# source; else it fails naming WHAT (and shows $T/apply.json, an apply's output, if there)
silver_vs_source() {
  M sim query "$DB" 'SELECT * FROM dbo.orders' --format jsonl > "$T/src.jsonl"
  cat_table "$1" "$T/silver.jsonl"
  node "$MCDC_SRC/tests/integration/silver_check.mjs" silver-vs-source "$T/silver.jsonl" "$T/src.jsonl" >/dev/null || {
    [ ! -s "$T/apply.json" ] || cat "$T/apply.json" >&2
    die "$2: $1 differs from the source"; }
}
# check_bronze TARGET FACTS APP_ID: bronze holds exactly the change table, facts match
check_bronze() {
  ct_rows "$T/ct.jsonl"
  cat_table "$1" "$T/bronze.jsonl"
  $CHECK bronze-vs-ct "$T/ct.jsonl" "$T/bronze.jsonl" >/dev/null || die "bronze $1 differs from the change table"
  if [ -n "${2:-}" ]; then
    cat_table "$2" "$T/facts.jsonl"
    $CHECK facts-vs-bronze "$T/facts.jsonl" "$T/bronze.jsonl" "$3" >/dev/null || die "facts $2 differ from bronze $1"
  fi
}

# stream APP [ARGS...]: run a stream into bronze.$APP with checkpoint $T/ck/$APP
stream() {
  local app=$1; shift
  M stream --source "sim:$DB" --capture-instance dbo_orders --target "bronze.$app" \
    --app-id "$app" --checkpoint "$T/ck/$app" --facts ops.facts "$@"
}
