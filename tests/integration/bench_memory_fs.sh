#!/usr/bin/env bash
# The benchmarks refuse to measure on a memory file system (tmpfs/ramfs), where fsync costs
# nothing: each exits 2 naming the directory and TMPDIR, and leaves nothing behind.
set -euo pipefail
src=${MCDC_SRC:?}
build=${MCDC_BUILD:?}
shm=
while read -r _ mnt fs opts _; do
  if [ "$fs" = tmpfs ] && [[ ",$opts," == *,rw,* ]] && [ -w "$mnt" ]; then shm=$mnt; break; fi
done </proc/mounts
if [ -z "$shm" ]; then
  echo "bench_memory_fs: no writable tmpfs on this machine; nothing to check"
  exit 0
fi
mem=$(mktemp -d "$shm/mcdc-bench-mem-XXXXXX")
trap 'rm -rf "$mem"' EXIT
expect_refusal() {
  local what=$1; shift
  local out rc=0
  out=$(TMPDIR=$mem BUILD=$build "$@" 2>&1) || rc=$?
  [ "$rc" = 2 ] || { echo "$what: exit $rc on tmpfs, expected 2: $out" >&2; exit 1; }
  grep -q 'memory file system' <<<"$out" || { echo "$what: no reason given: $out" >&2; exit 1; }
  grep -q 'TMPDIR' <<<"$out" || { echo "$what: the hint does not name TMPDIR: $out" >&2; exit 1; }
}
expect_refusal stream.sh bash "$src/bench/stream.sh" "$build" 10
expect_refusal backfill.sh bash "$src/bench/backfill.sh" "$build" 10 5
expect_refusal parquet_write.sh bash "$src/bench/parquet_write.sh" "$build" 10
expect_refusal silver.sh bash "$src/bench/silver.sh" 10 5 1
expect_refusal bench_stream "$build/bench/bench_stream" x y
expect_refusal bench_delta_commit "$build/bench/bench_delta_commit" "$mem/delta" 5
left=$(find "$mem" -mindepth 1 | sed -n 1,5p)
[ -z "$left" ] || { echo "a refused benchmark left files behind: $left" >&2; exit 1; }
# On a disk the same check lets the benchmark go on.
disk=$(mktemp -d)
trap 'rm -rf "$mem" "$disk"' EXIT
( . "$src/bench/lib.sh"; bench_refuse_memory_fs "$disk" ) || { echo "refused on a disk ($disk)" >&2; exit 1; }
echo "bench_memory_fs: ok (refused on $shm)"
