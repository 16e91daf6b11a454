# Automatic compaction under a stream that commits once per source commit: after a small
# bootstrap and hundreds of one-commit batches bronze and facts hold a bounded number of files, every
# compaction is a dataChange=false OPTIMIZE, bronze's live files keep disjoint _start_lsn
# ranges, `table cat` and an independent reader (log replay + DuckDB) agree, bronze equals
# the change table, facts match bronze and silver equals the source. A crash between
# writing a compacted file and its commit (failpoint delta.compact.files_written) leaves
# the tables consistent; the restarted stream finishes exactly once, and vacuum removes
# the orphan.
. "$(dirname "$0")/stream_lib.bash"
NODE_DIR=$MCDC_SRC/tests/node
sim_setup

n_files() { M table info "$1" --format json | sed -n 's/.*"numFiles":\([0-9]*\).*/\1/p'; }
# an independent reader agrees with table cat (checkpoint + JSON replay, DuckDB's Parquet)
check_replay() {
  M table cat "$1" --format jsonl > "$T/ours.raw"
  node "$NODE_DIR/delta_replay.mjs" "$2" "$T/ours.raw" "$T/ours.jsonl" "$T/theirs.jsonl"
  [ -s "$T/ours.jsonl" ] || die "$1: no rows"
  node "$NODE_DIR/jsonl_compare.mjs" "$T/ours.jsonl" "$T/theirs.jsonl" >/dev/null || die "$1: the replay reads it differently"
}
# bronze's live files (from the JSON log) have pairwise disjoint _start_lsn ranges, and
# every add and remove of an OPTIMIZE commit has dataChange false; prints the OPTIMIZE count
check_log() {
  node -e '
    const fs = require("fs"), path = require("path");
    const log = path.join(process.argv[1], "_delta_log"), live = new Map();
    let optimize = 0;
    for (const f of fs.readdirSync(log).filter((n) => /^\d{20}\.json$/.test(n)).sort()) {
      const acts = fs.readFileSync(path.join(log, f), "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
      const opt = acts.some((a) => a.commitInfo && a.commitInfo.operation === "OPTIMIZE");
      optimize += opt;
      for (const a of acts) {
        const fa = a.add || a.remove;
        if (opt && fa && fa.dataChange !== false) { console.error(`${f}: OPTIMIZE with dataChange`); process.exit(1); }
        if (opt && a.txn) { console.error(`${f}: OPTIMIZE with a txn`); process.exit(1); }
        if (a.add) live.set(a.add.path, a.add);
        if (a.remove) live.delete(a.remove.path);
      }
    }
    const r = [...live.values()].map((a) => JSON.parse(a.stats)).filter((s) => s.numRecords > 0)
      .map((s) => [s.minValues._start_lsn, s.maxValues._start_lsn]).sort();
    for (let i = 1; i < r.length; i++)
      if (r[i][0] <= r[i - 1][1]) { console.error(`overlapping _start_lsn ranges ${r[i - 1]} and ${r[i]}`); process.exit(1); }
    console.log(optimize);
  ' "$1"
}

# a small bootstrap snapshot first: its file (operation 0 only) is small too and gets
# combined with the change files after it; silver must still come out right
M sim workload "$DB" --table dbo.orders --transactions 20 --seed 4 --rows-per-transaction 2 \
  --start 2026-10-01T13:59:40 --interval 100ms --capture-every never >/dev/null
sim_capture 2026-10-01T13:59:50
out=$(stream c --bootstrap --control ops.control --silver silver.c --keys order_id) || die "bootstrap: $out"
silver_vs_source silver.c bootstrap
M sim workload "$DB" --table dbo.orders --transactions 220 --seed 5 --rows-per-transaction 2 \
  --start 2026-10-01T14:00:00 --interval 1s --capture-every 30s >/dev/null
sim_capture 2026-10-01T14:06:00
start=$(date +%s%N)
out=$(stream c --control ops.control --silver silver.c --max-commits-per-batch 1) || die "stream: $out"
ms=$((($(date +%s%N) - start) / 1000000))
batches=$(echo "$out" | sed -n 's/^stream c: \([0-9]*\) batches.*/\1/p')
[ "${batches:-0}" -ge 220 ] || die "expected at least 220 batches: $out"

bronze=$T/lake/bronze/c facts=$T/lake/ops/facts
nb=$(n_files bronze.c) nf=$(n_files ops.facts)
# 220 one-file commits each; without compaction 220 files. 50 small files of one size
# tier in a row are combined: under 50 per tier, and these files span two tiers at most.
[ "$nb" -le 100 ] || die "bronze holds $nb files after $batches batches"
[ "$nf" -le 100 ] || die "facts holds $nf files after $batches batches"
ob=$(check_log "$bronze") || die "bronze log"
of=$(check_log "$facts") || die "facts log"
# the stream's compactions run on the background writer (ADR 0046): one that starts a few
# batches late takes the files committed meanwhile too, so 220 files may take fewer than
# 220 / 50 runs; an append left 50 requests unanswered compacts itself, hence at least two
[ "$ob" -ge 2 ] || die "bronze: $ob OPTIMIZE commits"
[ "$of" -ge 2 ] || die "facts: $of OPTIMIZE commits"
echo "$batches batches in $ms ms: bronze $nb files ($ob compactions), facts $nf files ($of compactions)"
[ "$(n_files ops.control)" -le 3 ] || die "control table: one file per row expected"

check_bronze bronze.c ops.facts c
check_replay bronze.c "$bronze"
check_replay ops.facts "$facts"
silver_vs_source silver.c "after $batches batches"

# a crash between writing a compacted file and committing it
M sim workload "$DB" --table dbo.orders --transactions 80 --seed 6 --rows-per-transaction 2 \
  --start 2026-10-01T14:10:00 --interval 1s --capture-every 30s >/dev/null
sim_capture 2026-10-01T14:13:00
orphans() { find "$1" -maxdepth 1 -name '*.parquet' | wc -l; }
# data files on disk that no JSON commit ever added
unreferenced() {
  node -e '
    const fs = require("fs"), path = require("path");
    const dir = process.argv[1], log = path.join(dir, "_delta_log"), seen = new Set();
    for (const f of fs.readdirSync(log).filter((n) => /^\d{20}\.json$/.test(n)))
      for (const l of fs.readFileSync(path.join(log, f), "utf8").split("\n"))
        if (l.trim()) { const a = JSON.parse(l); if (a.add) seen.add(decodeURIComponent(a.add.path)); }
    console.log(fs.readdirSync(dir).filter((n) => n.endsWith(".parquet") && !seen.has(n)).length);
  ' "$1"
}
set +e
MCDC_FAILPOINT=delta.compact.files_written stream c --control ops.control --silver silver.c \
  --max-commits-per-batch 1 >/dev/null 2>&1
rc=$?
set -e
[ $rc -eq 137 ] || die "expected the failpoint to kill the stream (137), got $rc"
M table info bronze.c >/dev/null || die "bronze unreadable after the crash"
M table info ops.facts >/dev/null || die "facts unreadable after the crash"
n_orphans=$(( $(unreferenced "$bronze") + $(unreferenced "$facts") ))
# the compacted file; and, the compaction running beside the batches (ADR 0046), the data
# file of a batch the kill caught between publishing it and committing it
[ "$n_orphans" -ge 1 ] && [ "$n_orphans" -le 2 ] || die "expected the compacted file (and at most one batch's data file) as orphans, found $n_orphans"
out=$(stream c --control ops.control --silver silver.c --max-commits-per-batch 1) || die "restart: $out"
check_log "$bronze" >/dev/null || die "bronze log after the crash"
check_log "$facts" >/dev/null || die "facts log after the crash"
check_bronze bronze.c ops.facts c
check_replay bronze.c "$bronze"
check_replay ops.facts "$facts"
silver_vs_source silver.c "after the crash"
# the orphan is harmless; a forced zero-retention vacuum removes it and every file only
# old versions reference, and the rows stay
M table vacuum bronze.c --retention 0s --force >/dev/null
M table vacuum ops.facts --retention 0s --force >/dev/null
[ "$(orphans "$bronze")" -eq "$(n_files bronze.c)" ] || die "bronze: files beyond the live ones after vacuum"
[ "$(orphans "$facts")" -eq "$(n_files ops.facts)" ] || die "facts: files beyond the live ones after vacuum"
check_bronze bronze.c ops.facts c
check_replay bronze.c "$bronze"
echo ok
