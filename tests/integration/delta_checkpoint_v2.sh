# V2 checkpoints (docs/decisions/0049-v2-checkpoints.md): `table set-property
# delta.checkpointPolicy=v2` adds the v2Checkpoint feature in the same commit (classic and
# bad values change nothing); the stream's 25 commits after it leave UUID-named V2
# checkpoints with sidecars and _last_checkpoint naming them; kill -9 between the sidecar
# and the top-level file, and between the top-level file and _last_checkpoint, leaves the
# table readable with _last_checkpoint naming a complete checkpoint; DuckDB reading the
# files `table files` lists equals `table cat`, and so does an independent replay through
# the V2 checkpoint and its sidecar.
. "$(dirname "$0")/stream_lib.bash"
NODE_DIR=$MCDC_SRC/tests/node
# JSON fields by node (jq is not among the packages scripts/install-deps installs)
lc_top() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).v2Checkpoint.path)' "$L/_last_checkpoint"; }
lc_side() { node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).v2Checkpoint.sidecarFiles[0].path)' "$L/_last_checkpoint"; }
sim_setup
sim_exec 2026-10-01T14:00:00 "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES (1, 'c1', 1.25, NULL)"
sim_capture 2026-10-01T14:00:30
stream o --max-commits-per-batch 1 >/dev/null || die "the first stream failed"
B=$MSSQL_CDC_WAREHOUSE/bronze/o
L=$B/_delta_log
version() { M table info bronze.o --format json | sed -E 's/^\{"path":"[^"]*","version":([0-9]+).*/\1/'; }
cp_version() { M table info bronze.o --format json | sed -n 's/.*"checkpointVersion":\([0-9-]*\).*/\1/p'; }
last_cp() { sed -E 's/^\{"version":([0-9]+).*/\1/' "$L/_last_checkpoint"; }
v0=$(version)

# refused values change nothing (exit 2)
set +e
M table set-property bronze.o delta.checkpointPolicy=v3 >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc = 2 ] || die "checkpointPolicy=v3: exit $rc, expected 2"
grep -q "the policy is v2 or classic" "$T/err" || die "checkpointPolicy=v3: $(cat "$T/err")"
out=$(M table set-property bronze.o delta.checkpointPolicy=classic)
[ "$out" = "bronze.o: delta.checkpointPolicy=classic (version $v0, unchanged)" ] || die "classic: $out"
[ "$(version)" = "$v0" ] || die "a refused or unchanged policy wrote a commit"

# the opt-in: one commit with the property and the feature
out=$(M table set-property bronze.o delta.checkpointPolicy=v2)
v1=$((v0 + 1))
[ "$out" = "bronze.o: delta.checkpointPolicy=v2 (version $v1, feature v2Checkpoint)" ] || die "v2: $out"
c=$L/$(printf %020d $v1).json
grep -q '"readerFeatures":\[[^]]*"v2Checkpoint"' "$c" || die "no v2Checkpoint reader feature in $c"
grep -q '"writerFeatures":\[[^]]*"v2Checkpoint"' "$c" || die "no v2Checkpoint writer feature in $c"
grep -q '"delta.checkpointPolicy":"v2"' "$c" || die "no delta.checkpointPolicy in $c"
grep -q '"minReaderVersion":3,"minWriterVersion":7' "$c" || die "protocol not 3/7 in $c"
out=$(M table set-property bronze.o delta.checkpointPolicy=v2)
[ "$out" = "bronze.o: delta.checkpointPolicy=v2 (version $v1, unchanged)" ] || die "v2 again: $out"
set +e
M table set-property bronze.o delta.checkpointPolicy=classic >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc = 2 ] && grep -q "is not removed" "$T/err" || die "classic on a V2 table: exit $rc $(cat "$T/err")"

# 25 commits: V2 checkpoints (the background writer's, at a due version or the newest one
# when it gets to the table), each with its sidecar; no classic one
for i in $(seq 10 34); do
  sim_exec "2026-10-01T14:$i:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($i, 'c$i', $i.25, NULL)"
done
sim_capture 2026-10-01T14:50:00
stream o --max-commits-per-batch 1 >/dev/null || die "the stream failed"
[ "$(version)" -ge 25 ] || die "fewer than 25 commits ($(version))"
! ls "$L"/*.checkpoint.parquet >/dev/null 2>&1 || die "a classic checkpoint was written"
tops=$(ls "$L" | grep -E '^[0-9]{20}\.checkpoint\.[0-9a-f-]{36}\.parquet$' || true)
[ "$(echo "$tops" | grep -c .)" -ge 1 ] || die "no V2 checkpoint"
for f in $tops; do
  n=$(ls "$L/_sidecars" | grep -c "^${f:0:20}\.checkpoint\.0000000001\.0000000001\." || true)
  [ "$n" = 1 ] || die "$f: $n sidecars"
done
lc=$(last_cp)
[ "$lc" -ge 20 ] || die "_last_checkpoint at $lc, expected 20 or later"
top=$(lc_top)
side=$(lc_side)
[ "${top:0:20}" = "$(printf %020d "$lc")" ] || die "_last_checkpoint: version $lc, path $top"
[ -f "$L/$top" ] && [ -f "$L/_sidecars/$side" ] || die "_last_checkpoint names missing files ($top, $side)"
[ "$(cp_version)" = "$lc" ] || die "the reader does not start from checkpoint $lc ($(cp_version))"

# a newest version without a checkpoint, for the crashes below
id=40
while ls "$L" | grep -q "^$(printf %020d "$(version)")\.checkpoint\."; do
  sim_exec "2026-10-01T15:$id:00" "INSERT INTO dbo.orders (order_id, customer, amount, placed_at) VALUES ($id, 'c$id', $id.25, NULL)"
  sim_capture "2026-10-01T15:$id:30"
  stream o --max-commits-per-batch 1 >/dev/null || die "the stream failed"
  id=$((id + 1))
  [ $id -lt 44 ] || die "every new version got a checkpoint"
done
lc=$(last_cp)
M table cat bronze.o --format jsonl > "$T/before.jsonl"

# kill -9 after the sidecar, before the top-level file: no checkpoint, an orphan sidecar
v=$(version)
vname=$(printf %020d "$v")
set +e
MCDC_FAILPOINT=delta.checkpoint.v2.after_sidecar M table checkpoint bronze.o >/dev/null 2>&1; rc=$?
set -e
[ $rc = 137 ] || die "after_sidecar: expected SIGKILL (137), got $rc"
ls "$L/_sidecars" | grep -q "^$vname\.checkpoint\." || die "after_sidecar: no sidecar written before the crash point"
! ls "$L" | grep -q "^$vname\.checkpoint\." || die "after_sidecar: a top-level checkpoint before the crash point"
[ "$(last_cp)" = "$lc" ] || die "after_sidecar: _last_checkpoint moved to $(last_cp)"
[ "$(cp_version)" = "$lc" ] || die "after_sidecar: the reader uses checkpoint $(cp_version)"
M table cat bronze.o --format jsonl > "$T/after1.jsonl" || die "after_sidecar: the table is unreadable"
cmp -s "$T/before.jsonl" "$T/after1.jsonl" || die "after_sidecar: the rows changed"

# kill -9 after the top-level file, before _last_checkpoint: the listing finds it complete
set +e
MCDC_FAILPOINT=delta.checkpoint.before_last_checkpoint M table checkpoint bronze.o >/dev/null 2>&1; rc=$?
set -e
[ $rc = 137 ] || die "before_last_checkpoint: expected SIGKILL (137), got $rc"
[ "$(ls "$L" | grep -c "^$vname\.checkpoint\.")" = 1 ] || die "before_last_checkpoint: no top-level checkpoint"
[ "$(last_cp)" = "$lc" ] || die "before_last_checkpoint: _last_checkpoint moved to $(last_cp)"
[ "$(cp_version)" = "$v" ] || die "before_last_checkpoint: the reader uses checkpoint $(cp_version), not $v"
M table cat bronze.o --format jsonl > "$T/after2.jsonl" || die "before_last_checkpoint: the table is unreadable"
cmp -s "$T/before.jsonl" "$T/after2.jsonl" || die "before_last_checkpoint: the rows changed"

# a checkpoint that completes: _last_checkpoint names it and its sidecar
M table checkpoint bronze.o >/dev/null || die "table checkpoint failed"
[ "$(last_cp)" = "$v" ] || die "_last_checkpoint at $(last_cp) after the checkpoint, expected $v"
top=$(lc_top)
side=$(lc_side)
[ -f "$L/$top" ] && [ -f "$L/_sidecars/$side" ] || die "_last_checkpoint names missing files ($top, $side)"
# vacuum leaves _delta_log/_sidecars alone
M table vacuum bronze.o --retention 0d --force >/dev/null || die "vacuum failed"
[ -f "$L/_sidecars/$side" ] || die "vacuum deleted a referenced sidecar"

# DuckDB on the files `table files` lists equals `table cat`; so does an independent replay
M table cat bronze.o --format jsonl > "$T/ours.unsorted"
node -e 'const r = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map((l) => JSON.parse(l));
  r.sort((a, b) => a.order_id - b.order_id).forEach((o) => console.log(JSON.stringify(o)));' "$T/ours.unsorted" > "$T/ours.jsonl"
[ "$(wc -l < "$T/ours.jsonl")" = $((26 + id - 40)) ] || die "bronze has $(wc -l < "$T/ours.jsonl") rows, expected $((26 + id - 40))"
M table files bronze.o --format json > "$T/files.json"
files=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).files.map((f) => "'"'"'" + f.path + "'"'"'").join(", "))' "$T/files.json")
node "$NODE_DIR/duck.mjs" "SELECT * FROM read_parquet([$files]) ORDER BY order_id" > "$T/duck.jsonl"
node "$NODE_DIR/jsonl_compare.mjs" "$T/ours.jsonl" "$T/duck.jsonl" >/dev/null || die "DuckDB reads the listed files differently"
M table cat bronze.o --format jsonl > "$T/ours.raw"
node "$NODE_DIR/delta_replay.mjs" "$B" "$T/ours.raw" "$T/o.sorted" "$T/r.sorted"
node "$NODE_DIR/jsonl_compare.mjs" "$T/o.sorted" "$T/r.sorted" >/dev/null || die "the replay through the V2 checkpoint reads it differently"
check_bronze bronze.o
echo "ok"
