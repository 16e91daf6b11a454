#!/usr/bin/env bash
# tests/s3/checkpoint_v2_s3.sh: V2 checkpoints (docs/decisions/0049-v2-checkpoints.md) on a
# table in an S3 warehouse, against a real gateway (a scratch radosgw): `table set-property
# delta.checkpointPolicy=v2` adds the feature; the stream's commits after it leave
# UUID-named V2 checkpoints with their sidecars under _delta_log/_sidecars/ and a
# _last_checkpoint naming them, as objects; the reader starts from that checkpoint; a
# kill -9 between the sidecar and the top-level object leaves the table readable with
# _last_checkpoint unchanged; vacuum keeps the referenced sidecar. Fetched back object by
# object, the table reads the same through `table cat` and through an independent replay
# of its V2 checkpoint and sidecar. Keys are never printed. Label s3.
set -euo pipefail
# shellcheck source=tests/integration/stream_lib.bash
. "$MCDC_SRC/tests/integration/stream_lib.bash"
# shellcheck source=tests/s3/radosgw_lib.bash
. "$MCDC_SRC/tests/s3/radosgw_lib.bash"
s3_stream_test
export MSSQL_CDC_WAREHOUSE=s3://$S3_BUCKET/lake
NODE_DIR=$MCDC_SRC/tests/node
started=$SECONDS
S() { M stream --source "sim:$DB" --capture-instance dbo_orders --target bronze.o --app-id o \
        --checkpoint "$T/ck" --max-commits-per-batch 1 >/dev/null 2>>"$T/stream.err"; }
info() { M table info bronze.o --format json; }
version() { info | sed -E 's/^\{"path":"[^"]*","version":([0-9]+).*/\1/'; }
cp_version() { info | sed -n 's/.*"checkpointVersion":\([0-9-]*\).*/\1/p'; }
lc_field() { # lc_field DIR version|top|side: from the fetched _last_checkpoint
  node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const f = process.argv[2];
    console.log(f === "version" ? j.version : f === "top" ? j.v2Checkpoint.path : j.v2Checkpoint.sidecarFiles[0].path);' \
    "$1/_delta_log/_last_checkpoint" "$2"
}

sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'c1', 1.25, NULL)"
sim_capture 2026-10-01T14:00:30
S || die "the first stream failed: $(cat "$T/stream.err")"
v0=$(version)
out=$(M table set-property bronze.o delta.checkpointPolicy=v2)
[ "$out" = "bronze.o: delta.checkpointPolicy=v2 (version $((v0 + 1)), feature v2Checkpoint)" ] || die "v2: $out"

# 25 commits: V2 checkpoints with their sidecars, no classic one
for i in $(seq 10 34); do
  sim_exec "2026-10-01T14:$i:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($i, 'c$i', $i.25, NULL)"
done
sim_capture 2026-10-01T14:50:00
S || die "the stream failed: $(cat "$T/stream.err")"
[ "$(version)" -ge 25 ] || die "fewer than 25 commits ($(version))"
# the background checkpoint writer ends with the process; a checkpoint of the newest
# version, written now, is the one _last_checkpoint must name
M table checkpoint bronze.o >/dev/null || die "table checkpoint on S3 failed"
v=$(version)
fetch lake/bronze/o "$T/back"
L=$T/back/_delta_log
! ls "$L" | grep -qE '^[0-9]{20}\.checkpoint\.parquet$' || die "a classic checkpoint was written"
tops=$(ls "$L" | grep -E '^[0-9]{20}\.checkpoint\.[0-9a-f-]{36}\.parquet$' || true)
[ "$(echo "$tops" | grep -c .)" -ge 2 ] || die "fewer than two V2 checkpoints: $tops"
for f in $tops; do
  n=$(ls "$L/_sidecars" | grep -c "^${f:0:20}\.checkpoint\.0000000001\.0000000001\." || true)
  [ "$n" = 1 ] || die "$f: $n sidecars"
done
[ "$(lc_field "$T/back" version)" = "$v" ] || die "_last_checkpoint at $(lc_field "$T/back" version), expected $v"
top=$(lc_field "$T/back" top)
side=$(lc_field "$T/back" side)
[ "${top:0:20}" = "$(printf %020d "$v")" ] || die "_last_checkpoint: version $v, path $top"
[ -f "$L/$top" ] && [ -f "$L/_sidecars/$side" ] || die "_last_checkpoint names missing objects ($top, $side)"
[ "$(cp_version)" = "$v" ] || die "the reader does not start from checkpoint $v ($(cp_version))"

# kill -9 after the sidecar, before the top-level object: _last_checkpoint unchanged, the
# table reads the same
sim_exec 2026-10-01T15:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (40, 'c40', 40.25, NULL)"
sim_capture 2026-10-01T15:00:30
S || die "the stream failed: $(cat "$T/stream.err")"
M table cat bronze.o --format jsonl >"$T/before.jsonl"
set +e
MCDC_FAILPOINT=delta.checkpoint.v2.after_sidecar M table checkpoint bronze.o >/dev/null 2>&1; rc=$?
set -e
[ $rc = 137 ] || die "after_sidecar: expected SIGKILL (137), got $rc"
fetch lake/bronze/o "$T/back"
vname=$(printf %020d "$(version)")
ls "$T/back/_delta_log/_sidecars" | grep -q "^$vname\.checkpoint\." || die "after_sidecar: no sidecar before the crash point"
! ls "$T/back/_delta_log" | grep -q "^$vname\.checkpoint\." || die "after_sidecar: a top-level checkpoint before the crash point"
[ "$(lc_field "$T/back" version)" = "$v" ] || die "after_sidecar: _last_checkpoint moved to $(lc_field "$T/back" version)"
M table cat bronze.o --format jsonl >"$T/after.jsonl" || die "after_sidecar: the table is unreadable"
cmp -s "$T/before.jsonl" "$T/after.jsonl" || die "after_sidecar: the rows changed"

# vacuum on S3 keeps the referenced sidecar
M table vacuum bronze.o --retention 0d --force >/dev/null || die "vacuum on S3 failed"
fetch lake/bronze/o "$T/back"
[ -f "$T/back/_delta_log/_sidecars/$side" ] || die "vacuum deleted the referenced sidecar $side"

# fetched back, the table reads the same, through table cat and an independent replay
M table cat "$T/back" --format jsonl >"$T/back.jsonl" || die "the fetched table is unreadable"
M table cat bronze.o --format jsonl >"$T/ours.jsonl"
cmp -s "$T/ours.jsonl" "$T/back.jsonl" || die "the fetched table reads differently"
[ "$(grep -c . "$T/ours.jsonl")" = 27 ] || die "bronze holds $(grep -c . "$T/ours.jsonl") rows, expected 27"
node "$NODE_DIR/delta_replay.mjs" "$T/back" "$T/ours.jsonl" "$T/o.sorted" "$T/r.sorted"
node "$NODE_DIR/jsonl_compare.mjs" "$T/o.sorted" "$T/r.sorted" >/dev/null ||
  die "the replay through the V2 checkpoint reads it differently"
! grep -rq -- "$AWS_SECRET_ACCESS_KEY" "$T/stream.err" "$T/back" || die "a secret key was written"
echo "V2 checkpoints on S3: ok ($(echo "$tops" | grep -c .) V2 checkpoints, _last_checkpoint at $v naming $top and its sidecar; $((SECONDS - started)) s after the gateway started)"
