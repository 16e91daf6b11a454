# tests/integration/checkpoint_lost_metadata.sh: a checkpoint whose metadata file was
# deleted still holds offsets and commits; the stream refuses it (exit 3, nothing written)
# instead of making up a new metadata with a new stream id and carrying on.
source "$(dirname "$0")/stream_lib.bash"

sim_setup
sim_exec 2026-10-01T14:00:00 'INSERT INTO dbo.orders VALUES (1, N'"'"'ann'"'"', 10.00, NULL)'
sim_capture 2026-10-01T14:00:10
stream a >/dev/null
sim_exec 2026-10-01T14:10:00 'INSERT INTO dbo.orders VALUES (2, N'"'"'bob'"'"', 20.00, NULL)'
sim_capture 2026-10-01T14:10:10
rm "$T/ck/a/metadata"
tree() { (cd "$1" && find . -type f ! -name lock -print0 | sort -z | xargs -0 sha256sum); }
tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.before"; tree "$T/ck" >"$T/ck.before"
rc=0; stream a >"$T/out" 2>"$T/err" || rc=$?
[ $rc = 3 ] || { cat "$T/err" >&2; die "stream over a checkpoint without metadata: exit $rc, want 3"; }
grep -q "^mssql-cdc: error: checkpoint $T/ck/a: metadata is missing, but offsets/ holds batches 0 to 0: the checkpoint is damaged" "$T/err" \
  || { cat "$T/err" >&2; die "the error does not say the metadata is missing"; }
grep -q "^hint: restore $T/ck/a/metadata from a backup" "$T/err" || die "no hint"
[ ! -e "$T/ck/a/metadata" ] || die "a new metadata was made up"
tree "$MSSQL_CDC_WAREHOUSE" >"$T/lake.after"; tree "$T/ck" >"$T/ck.after"
cmp -s "$T/lake.before" "$T/lake.after" || die "the refused stream changed the lake"
cmp -s "$T/ck.before" "$T/ck.after" || die "the refused stream changed the checkpoint"
echo ok
