# tests/integration/misuse_locations.sh: what is not supported is refused, and no secret
# is shown in clear. An s3:// table or warehouse without S3 credentials exits 2 saying so
# and writes nothing; any other scheme:// table location (or warehouse) exits 2 naming it
# and writes nothing (it wrote into a local directory named "s3:" and reported success);
# an unknown source given as a URL shows its userinfo masked (it printed
# "sqlserver://sa:secret@host" in clear).
source "$(dirname "$0")/stream_lib.bash"

sim_setup
sim_exec 2026-10-01T14:00:00 'INSERT INTO dbo.orders VALUES (1, N'"'"'ann'"'"', 10.00, NULL)'
sim_capture 2026-10-01T14:00:10
stream a --control ops.control >/dev/null
cd "$T"
tree() { (cd "$1" && find . -type f ! -name lock -print0 | sort -z | xargs -0 sha256sum); }
tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.before"

# refused URI CMD...: CMD exits 2 naming URI as unsupported, and nothing was written
refused() {
  local uri=$1; shift
  local rc=0
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || { cat "$T/err" >&2; die "$*: exit $rc, want 2"; }
  grep -qF "location '$uri': object storage (${uri%%://*}://) is not supported yet" "$T/err" \
    || { cat "$T/err" >&2; die "$*: the error does not name $uri"; }
  grep -q "^hint: give a local directory" "$T/err" || die "$*: no hint"
  [ -z "$(ls -A "$T" | grep ':$' || true)" ] || die "$*: created a local directory named like a scheme: $(ls "$T")"
  tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.after"
  cmp -s "$T/lake.before" "$T/lake.after" || die "$*: the lake changed"
}
# s3:// is an object store location: without credentials every table flag (and an s3://
# warehouse) exits 2 naming what is missing, before anything is written
export HOME=$T/home AWS_CONFIG_FILE=$T/home/none AWS_SHARED_CREDENTIALS_FILE=$T/home/none
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_WEB_IDENTITY_TOKEN_FILE \
  AWS_CONTAINER_CREDENTIALS_RELATIVE_URI AWS_CONTAINER_CREDENTIALS_FULL_URI 2>/dev/null || true
# nocreds CMD...: CMD exits 2 saying no S3 credentials were found, and nothing was written
nocreds() {
  local rc=0
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || { cat "$T/err" >&2; die "$*: exit $rc, want 2"; }
  grep -qF "S3 credentials: none found" "$T/err" || { cat "$T/err" >&2; die "$*: no credentials message"; }
  grep -q "^hint: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" "$T/err" || die "$*: no hint"
  [ -z "$(ls -A "$T" | grep ':$' || true)" ] || die "$*: created a local directory named like a scheme: $(ls "$T")"
  tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.after"
  cmp -s "$T/lake.before" "$T/lake.after" || die "$*: the lake changed"
}
S3=s3://bucket/bronze/orders
nocreds M stream --source "sim:$DB" --capture-instance dbo_orders --target $S3 \
  --app-id u --checkpoint "$T/ck/u" --facts ops.facts
[ ! -e "$T/ck/u" ] || die "the refused stream made its checkpoint"
nocreds M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.a \
  --app-id a --checkpoint "$T/ck/a" --facts $S3
nocreds M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.a \
  --app-id a --checkpoint "$T/ck/a" --facts ops.facts --control $S3
for flag in bronze silver control facts; do
  args=(--bronze bronze.a --silver silver.a --control ops.control --facts ops.facts)
  for ((i = 0; i < ${#args[@]}; i += 2)); do [ "${args[i]}" = "--$flag" ] && args[i+1]=$S3; done
  nocreds M silver apply "${args[@]}" --capture-instance dbo_orders --keys order_id
done
nocreds M finalization show --control $S3
nocreds M report --facts $S3 --control ops.control
for cmd in cat history info vacuum optimize; do
  nocreds M table $cmd $S3
done
nocreds env MSSQL_CDC_WAREHOUSE=s3://bucket/lake "$MCDC_BIN" stream \
  --source "sim:$DB" --capture-instance dbo_orders --target bronze.z --app-id z --checkpoint "$T/ck/z"
[ ! -e "$T/ck/z" ] || die "the refused stream made its checkpoint"
# unsupported credential sources are named, not silently skipped
rc=0; AWS_WEB_IDENTITY_TOKEN_FILE=$T/token M table cat $S3 >"$T/out" 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -qF "a web-identity token (AWS_WEB_IDENTITY_TOKEN_FILE) is not supported yet" "$T/err" \
  || { cat "$T/err" >&2; die "web identity: exit $rc"; }

# other schemes stay refused: S CMD... exits 2 naming URI as unsupported, nothing written
refused() {
  local uri=$1; shift
  local rc=0
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || { cat "$T/err" >&2; die "$*: exit $rc, want 2"; }
  grep -qF "location '$uri': object storage (${uri%%://*}://) is not supported yet" "$T/err" \
    || { cat "$T/err" >&2; die "$*: the error does not name $uri"; }
  grep -q "^hint: give a local directory" "$T/err" || die "$*: no hint"
  [ -z "$(ls -A "$T" | grep ':$' || true)" ] || die "$*: created a local directory named like a scheme: $(ls "$T")"
  tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.after"
  cmp -s "$T/lake.before" "$T/lake.after" || die "$*: the lake changed"
}
# (a lone userinfo is masked: it may be a token)
refused 'abfss://***@acct.dfs.core.windows.net/t' M table cat abfss://c@acct.dfs.core.windows.net/t
refused file:///tmp/t M table cat file:///tmp/t
refused gs://bucket/t M finalization advance --control gs://bucket/t --table bronze.a --end-lsn 0x1 \
  --end-commit-ts 2026-10-01T14:00:00
refused 'abfss://acct/lake' M --warehouse 'abfss://acct/lake' table cat bronze.a
# credentials in an s3:// URL: refused as no bucket name, the secret masked
rc=0; M --warehouse 's3://key:SECRET@bucket/lake' table cat bronze.a >"$T/out" 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -qF "warehouse location 's3://key:***@bucket/lake': not s3://BUCKET/PREFIX" "$T/err" \
  || { cat "$T/err" >&2; die "s3 userinfo: exit $rc"; }
grep -q ':SECRET@' "$T/err" && die "the warehouse's secret was shown"
# a checkpoint on another object store is refused; one on s3:// is checked before the first
# write (credentials, the bucket name with its secret masked)
rc=0; M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.a --app-id a \
  --checkpoint gs://bucket/ck/a >"$T/out" 2>"$T/err" || rc=$?
[ $rc = 2 ] || { cat "$T/err" >&2; die "a gs:// checkpoint: exit $rc, want 2"; }
grep -q "checkpoint 'gs://bucket/ck/a': this object store is not supported" "$T/err" || { cat "$T/err" >&2; die "no checkpoint message"; }
rc=0; env -u AWS_ACCESS_KEY_ID -u AWS_PROFILE HOME="$T/nohome" "$MCDC_BIN" stream --source "sim:$DB" --capture-instance dbo_orders \
  --target bronze.a --app-id a --checkpoint s3://bucket/ck/a >"$T/out" 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -q "S3 credentials: none found" "$T/err" || { cat "$T/err" >&2; die "an s3:// checkpoint without credentials: exit $rc"; }
rc=0; M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.a --app-id a \
  --checkpoint 's3://key:SECRET@bucket/ck/a' >"$T/out" 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -qF "bad S3 location 's3://key:***@bucket/ck/a'" "$T/err" || { cat "$T/err" >&2; die "s3 userinfo checkpoint: exit $rc"; }
grep -q ':SECRET@' "$T/err" && die "the checkpoint's secret was shown"
[ ! -e "$T/s3:" ] && [ ! -e "$T/gs:" ] || die "a local directory s3: or gs: was made"

# --- options that take a local file or directory, never a table location ------------
# local FLAG CMD...: exit 2 saying FLAG takes a local path, and no local "s3:" directory
local_only() {
  local flag=$1; shift
  local rc=0
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ "$rc" = 2 ] || { cat "$T/err" >&2; die "$*: exit $rc, want 2"; }
  grep -qF -- "$flag s3://bucket/x: a local file or directory is expected here, not a URI" "$T/err" \
    || { cat "$T/err" >&2; die "$*: the error does not say $flag takes a local path"; }
  [ ! -e "$T/s3:" ] || die "$*: a local directory s3: was made"
}
local_only --dir M demo --dir s3://bucket/x
local_only --out M report --facts ops.facts --control ops.control --out s3://bucket/x
local_only --progress M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.a \
  --app-id a --checkpoint "$T/ck/a" --facts ops.facts --progress s3://bucket/x
local_only --progress M backfill --source "sim:$DB" --capture-instance dbo_orders --target bronze.a \
  --app-id a --facts ops.facts --progress s3://bucket/x

# --- secrets in the unknown-source error: URL userinfo and braced values ----------------
# unknown SRC SHOWN: an unknown source exits 2 and shows SHOWN, never the secret
unknown() {
  local rc=0
  M stream --source "$1" --capture-instance dbo_orders --target bronze.a --app-id a \
    --checkpoint "$T/ck/a" >"$T/out" 2>"$T/err" || rc=$?
  [ $rc = 2 ] || { cat "$T/err" >&2; die "source $2: exit $rc, want 2"; }
  grep -qF "unknown source '$2'" "$T/err" || { cat "$T/err" >&2; die "source $2: not shown masked"; }
  if grep -q "secret\|b}}c" "$T/err"; then cat "$T/err" >&2; die "source $2: a secret in clear"; fi
}
unknown 'sqlserver://sa:secret@host' 'sqlserver://sa:***@host'
unknown 'mssql+pyodbc://user:secret@dsn' 'mssql+pyodbc://user:***@dsn'
unknown 'mssql://sa:se@cret@db:1433/shop' 'mssql://sa:***@db:1433/shop'
unknown 'mssql:Server=h;PWD={a;b}}c};UID=sa' 'mssql:Server=h;PWD=***;UID=sa'
unknown 'mssql:Server=h;{PWD}={a;b}}c}' 'mssql:Server=h;{PWD}=***'
unknown 'mssql:Server=h;Password="secret;x"' 'mssql:Server=h;Password=***'
# from $MSSQL_CDC_SOURCE and from @FILE too
rc=0; MSSQL_CDC_SOURCE='sqlserver://sa:secret@host' "$MCDC_BIN" stream --capture-instance dbo_orders \
  --target bronze.a --app-id a --checkpoint "$T/ck/a" 2>"$T/err" || rc=$?
[ $rc = 2 ] && grep -qF "'sqlserver://sa:***@host'" "$T/err" && ! grep -q secret "$T/err" || die "\$MSSQL_CDC_SOURCE shown in clear"
echo 'mssql+pyodbc://user:secret@dsn' >"$T/src"
unknown "@$T/src" 'mssql+pyodbc://user:***@dsn'
tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.after"
cmp -s "$T/lake.before" "$T/lake.after" || die "the lake changed"
echo ok
