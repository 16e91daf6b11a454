# tests/integration/sim_first_hour.sh: the simulator has no traps for a new user.
# - a failed `sim init` of a new file leaves no file (a retry with another zone worked only
#   after deleting it by hand), and a failed init on an existing database changes nothing;
# - `sim capture` without --at scans at the simulator's clock (it jumped the clock to the
#   host's date, and every scripted --at after it was refused as going backwards);
# - a workload's last commits are captured when it returns (they waited for a scan), and
#   without capture cycles it says how many wait;
# - a workload on a table whose low keys were deleted finds free keys (it failed "no free
#   key found after 1000 tries");
# - two --realtime workloads on one database share the clock (one failed "time would go
#   backwards").
set -euo pipefail
: "${MCDC_BIN:?set by ctest}"
tmp=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
T=$(mktemp -d "$tmp/mcdc-sim-first-XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T"
M() { "$MCDC_BIN" "$@"; }
die() { echo "FAIL: $*" >&2; exit 1; }
status() { M sim status "$1" --format json; }
field() { node -e 'const j = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(eval("j." + process.argv[1]))' "$1"; }
SCHEMA='id INT NOT NULL, v INT NULL'

# --- a failed init leaves nothing behind ------------------------------------------------
# each case: one bad value, the others good (zone Europe/Paris, keys id, the schema)
for bad in zone keys schema ci; do
  zone=Europe/Paris keys=id schema=$SCHEMA ci=dbo_t
  case $bad in
    zone) zone=Mars/Olympus ;;
    keys) keys=nope ;;
    schema) schema='id INT NOT NULL, v FOO NULL' ;;
    ci) ci='bad!name' ;;
  esac
  rc=0
  M sim init new.db --table dbo.t --keys "$keys" --schema "$schema" --time-zone "$zone" \
    --capture-instance "$ci" >out 2>err || rc=$?
  [ $rc = 2 ] || { cat err >&2; die "init with a bad $bad: exit $rc, want 2"; }
  grep -q "option .* given twice" err && die "the $bad case is a usage error of the test"
  [ -z "$(ls -A | grep '^new\.db' || true)" ] || die "init with a bad $bad left $(ls new.db*)"
done
M sim init new.db --table dbo.t --keys id --schema "$SCHEMA" --time-zone America/New_York >/dev/null \
  || die "the retry with another zone failed"
[ "$(status new.db | field time_zone)" = America/New_York ] || die "the retry did not take its zone"
# on an existing database a failed init changes nothing (and the file stays)
before=$(M sim query new.db 'SELECT * FROM cdc.change_tables' --format csv)
rc=0; M sim init new.db --table dbo.u --keys nope --schema "$SCHEMA" 2>err || rc=$?
[ $rc = 2 ] || die "a bad second table: exit $rc, want 2"
[ -f new.db ] || die "a failed init removed an existing database"
[ "$(M sim query new.db 'SELECT * FROM cdc.change_tables' --format csv)" = "$before" ] || die "a failed init changed the database"

# --- sim capture without --at keeps the virtual clock ------------------------------------
M sim init c.db --table dbo.t --keys id --schema "$SCHEMA" --at 2026-10-01T10:00:00 >/dev/null
M sim exec c.db --at 2026-10-01T10:00:01 'INSERT INTO dbo.t VALUES (1, 1)' >/dev/null
M sim capture c.db >/dev/null
[ "$(status c.db | field clock)" = 2026-10-01T10:00:01.000Z ] || die "capture moved the clock to $(status c.db | field clock)"
[ "$(status c.db | field waiting_for_capture)" = 0 ] || die "capture without --at left commits waiting"
M sim exec c.db --at 2026-10-01T10:00:05 'INSERT INTO dbo.t VALUES (2, 1)' >/dev/null 2>err \
  || { cat err >&2; die "a scripted --at after a capture without --at was refused"; }

# --- a workload's last commits are captured before it returns ------------------------------
M sim init w.db --table dbo.t --keys id --schema "$SCHEMA" --at 2026-10-01T10:00:00 >/dev/null
M sim workload w.db --table dbo.t --transactions 100 --capture-every 300ms >out
[ "$(status w.db | field waiting_for_capture)" = 0 ] || die "the workload's last commits wait for a scan"
[ "$(status w.db | field max_lsn_commit_ts)" = 2026-10-01T10:00:01.000Z ] || die "max_lsn is not the last commit"
M sim workload w.db --table dbo.t --transactions 5 --mix insert=100,update=0,delete=0 --capture-every never >out
grep -q "^5 commits wait for a capture scan: run 'mssql-cdc sim capture w.db'" out || { cat out >&2; die "no word on waiting commits"; }
[ "$(status w.db | field waiting_for_capture)" = 5 ] || die "capture-every never captured"

# --- free keys on a large table -------------------------------------------------------------
M sim init k.db --table dbo.t --keys id --schema "$SCHEMA" --at 2026-10-01T10:00:00 >/dev/null
M sim workload k.db --table dbo.t --transactions 10000 --mix insert=100,update=0,delete=0 >/dev/null
M sim exec k.db --at 2026-10-01T11:00:00 'DELETE FROM dbo.t WHERE id <= 5000' >/dev/null
M sim workload k.db --table dbo.t --transactions 20 --mix insert=100,update=0,delete=0 >out 2>err \
  || { cat err >&2; die "a workload on a table whose low keys are free found no key"; }
[ "$(M sim query k.db 'SELECT count(*) AS n FROM dbo.t' --format csv | tail -1)" = 5020 ] || die "not 20 new rows"

# --- two realtime workloads on one database share the clock ---------------------------------
M sim init r.db --table dbo.t --keys id --schema "$SCHEMA" >/dev/null
M sim workload r.db --table dbo.t --transactions 150 --realtime --interval 3ms --seed 1 \
  --mix insert=40,update=20,delete=40 >out.1 2>err.1 &
p1=$!
M sim workload r.db --table dbo.t --transactions 150 --realtime --interval 3ms --seed 2 \
  --mix insert=40,update=20,delete=40 >out.2 2>err.2 || { cat err.2 >&2; die "the second realtime workload failed"; }
wait $p1 || { cat err.1 >&2; die "the first realtime workload failed"; }
M sim capture r.db >/dev/null
n1=$(sed -E 's/.*, ([0-9]+) change rows,.*/\1/' out.1)
n2=$(sed -E 's/.*, ([0-9]+) change rows,.*/\1/' out.2)
ct=$(M sim query r.db 'SELECT count(*) AS n FROM cdc.dbo_t_CT' --format csv | tail -1)
[ "$ct" = $((n1 + n2)) ] || die "the change table holds $ct rows, the workloads reported $n1 + $n2"
echo ok
