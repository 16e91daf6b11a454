# tests/integration/delta_corrupt_log.sh: a zero-byte (or blank) commit file in _delta_log
# is corruption, never an empty commit: every reader exits 3 naming the file, no writer
# commits past it, and the verdict stays where it was. A zero-byte or garbled
# _last_checkpoint is only a hint: readers warn and list the log.
source "$(dirname "$0")/stream_lib.bash"

sim_setup
sim_exec 2026-10-01T14:00:00 'INSERT INTO dbo.orders VALUES (1, N'"'"'ann'"'"', 10.00, NULL)'
sim_capture 2026-10-01T14:00:10
stream a --control ops.control --granularity minute >/dev/null
[ "$(ls "$MSSQL_CDC_WAREHOUSE/bronze/a/_delta_log")" = "$(printf '%s\n' 00000000000000000000.json 00000000000000000001.json)" ] \
  || die "bronze should hold versions 0 and 1"
verdict_before=$(M finalization show --control ops.control --format jsonl)
sim_exec 2026-10-01T14:10:00 'INSERT INTO dbo.orders VALUES (2, N'"'"'bob'"'"', 20.00, NULL)'
sim_capture 2026-10-01T14:10:10
cp -a "$MSSQL_CDC_WAREHOUSE" "$T/lake.good"
cp -a "$T/ck" "$T/ck.good"

# tree DIR: every file under DIR with its size and content hash, for "nothing changed"
tree() { (cd "$1" && find . -type f ! -name lock -print0 | sort -z | xargs -0 sha256sum); }
restore() { rm -rf "$MSSQL_CDC_WAREHOUSE" "$T/ck"; cp -a "$T/lake.good" "$MSSQL_CDC_WAREHOUSE"; cp -a "$T/ck.good" "$T/ck"; }

# expect_corrupt FILE CMD...: CMD exits 3 naming FILE as corrupt
expect_corrupt() {
  local file=$1; shift
  local rc=0
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 3 ] || { cat "$T/err" >&2; die "$*: exit $rc, want 3"; }
  grep -q "^mssql-cdc: error: .*/_delta_log/$file: the file \(is empty\|holds no action\)" "$T/err" \
    || { cat "$T/err" >&2; die "$*: the error does not name $file as corrupt"; }
  grep -q '^hint: restore this file' "$T/err" || die "$*: no hint"
}

for content in zero blank; do
  # --- bronze's last commit zeroed: today the batch it held was silently lost --------
  restore
  B1=$MSSQL_CDC_WAREHOUSE/bronze/a/_delta_log/00000000000000000001.json
  if [ $content = zero ]; then : >"$B1"; else printf '\n\n' >"$B1"; fi
  tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.before"; tree "$T/ck" >"$T/ck.before"
  expect_corrupt 00000000000000000001.json M table cat bronze.a
  expect_corrupt 00000000000000000001.json M table history bronze.a
  expect_corrupt 00000000000000000001.json M table info bronze.a
  expect_corrupt 00000000000000000001.json stream a --control ops.control --granularity minute
  tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.after"; tree "$T/ck" >"$T/ck.after"
  cmp -s "$T/lake.before" "$T/lake.after" || die "bronze $content: the refused stream changed the lake"
  cmp -s "$T/ck.before" "$T/ck.after" || die "bronze $content: the refused stream changed the checkpoint"
  [ ! -e "$MSSQL_CDC_WAREHOUSE/bronze/a/_delta_log/00000000000000000002.json" ] || die "a commit past the corrupt one"
  [ "$(M finalization show --control ops.control --format jsonl)" = "$verdict_before" ] || die "verdict moved"

  # --- the control table's last commit zeroed: today finalized_until went backwards ---
  restore
  C1=$MSSQL_CDC_WAREHOUSE/ops/control/_delta_log/00000000000000000001.json
  [ -f "$C1" ] || die "control should hold version 1"
  if [ $content = zero ]; then : >"$C1"; else printf '\n' >"$C1"; fi
  tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.before"; tree "$T/ck" >"$T/ck.before"
  expect_corrupt 00000000000000000001.json M finalization show --control ops.control
  expect_corrupt 00000000000000000001.json M finalization is-final --control ops.control \
    --table bronze.a --period-end 2026-10-01T14:00:00
  expect_corrupt 00000000000000000001.json M finalization advance --control ops.control \
    --table bronze.a --checkpoint "$T/ck/a"
  expect_corrupt 00000000000000000001.json M finalization advance --control ops.control \
    --table bronze.a --end-lsn 0x00000000000000000001 --end-commit-ts 2026-10-01T13:00:00
  expect_corrupt 00000000000000000001.json stream a --control ops.control --granularity minute
  tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.after"; tree "$T/ck" >"$T/ck.after"
  cmp -s "$T/lake.before" "$T/lake.after" || die "control $content: a refused command changed the lake"
  cmp -s "$T/ck.before" "$T/ck.after" || die "control $content: a refused command changed the checkpoint"
  [ ! -e "$MSSQL_CDC_WAREHOUSE/ops/control/_delta_log/00000000000000000002.json" ] || die "a control commit past the corrupt one"
done

# --- with the files good again, the stream carries on and the verdict moves -------------
restore
stream a --control ops.control --granularity minute >/dev/null
check_bronze bronze.a ops.facts a
M finalization is-final --control ops.control --table bronze.a --period-end 2026-10-01T14:10:00 -q \
  || die "the period up to 14:10 should be final once the second batch is in"
M finalization show --control ops.control --format jsonl | grep -q '"finalized_until":"2026-10-01T14:10:00' \
  || { M finalization show --control ops.control --format jsonl; die "the verdict did not move to the second batch"; }

# --- a version missing between two commits: table history exits 3 as table cat does -----
# (it listed the versions around the hole and exited 0)
BL=$MSSQL_CDC_WAREHOUSE/bronze/a/_delta_log
mv "$BL/00000000000000000001.json" "$T/v1.json"
for cmd in history cat; do
  rc=0; M table $cmd bronze.a >"$T/out" 2>"$T/err" || rc=$?
  [ $rc = 3 ] || { cat "$T/err" >&2; die "table $cmd over a hole: exit $rc, want 3"; }
  grep -q "_delta_log: version 1 is missing" "$T/err" || { cat "$T/err" >&2; die "table $cmd: the error does not name version 1"; }
  [ ! -s "$T/out" ] || die "table $cmd printed versions around the hole"
done
mv "$T/v1.json" "$BL/00000000000000000001.json"
M table history bronze.a >/dev/null || die "table history fails on a whole log"

# --- _last_checkpoint: zero-byte or garbled is a hint to ignore, with a warning ----------
M table checkpoint bronze.a >/dev/null
LC=$MSSQL_CDC_WAREHOUSE/bronze/a/_delta_log/_last_checkpoint
[ -s "$LC" ] || die "table checkpoint wrote no _last_checkpoint"
M table cat bronze.a --format jsonl >"$T/rows.good" 2>"$T/err"
[ ! -s "$T/err" ] || { cat "$T/err" >&2; die "a good _last_checkpoint gave a warning"; }
for bad in '' '{"version":' 'not json' '{"size":3}'; do
  printf '%s' "$bad" >"$LC"
  M table cat bronze.a --format jsonl >"$T/rows" 2>"$T/err" || die "_last_checkpoint '$bad': table cat failed"
  cmp -s "$T/rows" "$T/rows.good" || die "_last_checkpoint '$bad': other rows"
  grep -q "_delta_log/_last_checkpoint: ignored, .*listing _delta_log" "$T/err" \
    || { cat "$T/err" >&2; die "_last_checkpoint '$bad': no warning"; }
  [ "$(grep -c _last_checkpoint "$T/err")" = 1 ] || { cat "$T/err" >&2; die "_last_checkpoint '$bad': more than one warning"; }
done
grep -q "ignored, no \"version\"" "$T/err" || die "the warning does not say what is wrong"
# a missing one is the normal state of a young table: no warning
rm "$LC"
M table cat bronze.a --format jsonl >"$T/rows" 2>"$T/err"
[ ! -s "$T/err" ] || { cat "$T/err" >&2; die "a missing _last_checkpoint gave a warning"; }

echo "ok"
