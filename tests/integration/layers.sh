#!/usr/bin/env bash
# Layer check: every #include "mcdc/X.h" in src/<folder>/ names a header of its own layer or
# of one above it in docs/layers.md; every public header and every src/ folder is in the
# table; src/cli/cmd_stream.c is a thin client of the run layer (mcdc/run.h and the CLI's
# own headers only); the layers routed through the storage seam (mcdc/storage.h) call no
# POSIX file function directly.
set -euo pipefail
src=${MCDC_SRC:?}
map=$src/docs/layers.md
fail=0

declare -A layer_of_header=() rank_of_folder=()
rank=0
while IFS='|' read -r _ layer folder headers _; do
  folder=$(sed -E 's/[` ]//g' <<<"$folder")
  [[ $folder == src/* ]] || continue
  rank=$((rank + 1))
  rank_of_folder[$folder]=$rank
  for h in $(grep -oE '`[a-z_]+\.h`' <<<"$headers" | tr -d '`'); do
    layer_of_header[$h]=$rank
  done
done <"$map"
[ "$rank" -ge 9 ] || { echo "FAIL: no layer table in $map"; exit 1; }

for h in "$src"/include/mcdc/*.h; do
  b=$(basename "$h")
  [ -n "${layer_of_header[$b]:-}" ] || { echo "FAIL: include/mcdc/$b is in no layer of docs/layers.md"; fail=1; }
done
for d in "$src"/src/*/; do
  f="src/$(basename "$d")/"
  [ -n "${rank_of_folder[$f]:-}" ] || { echo "FAIL: $f is in no layer of docs/layers.md"; fail=1; }
done

for f in "${!rank_of_folder[@]}"; do
  r=${rank_of_folder[$f]}
  [ -d "$src/$f" ] || continue
  while IFS=: read -r file inc; do
    h=$(sed -E 's/.*"mcdc\/([a-z_]+\.h)".*/\1/' <<<"$inc")
    hr=${layer_of_header[$h]:-}
    if [ -z "$hr" ] || [ "$hr" -gt "$r" ]; then
      echo "FAIL: ${file#"$src"/} includes mcdc/$h, a layer below $f"
      fail=1
    fi
  done < <(grep -rHE '^#include "mcdc/' "$src/$f" --include='*.c' --include='*.h' || true)
done

others=$(grep -E '^#include "' "$src/src/cli/cmd_stream.c" | grep -vE '^#include "(mcdc/run\.h|cli\.h)"' || true)
if [ -n "$others" ]; then
  echo "FAIL: src/cli/cmd_stream.c includes more than mcdc/run.h and cli.h:"
  echo "$others"
  fail=1
fi
# the checkpoint directory's files are read by its own module only (src/pipeline/checkpoint.c):
# the finalization job's reader that used to live in src/finalize/checkpoint.c is gone
if [ -e "$src/src/finalize/checkpoint.c" ]; then
  echo "FAIL: src/finalize/checkpoint.c reads checkpoints beside src/pipeline/checkpoint.c"
  fail=1
fi
readers=$(grep -rlE '"(offsets|commits)(/|")' "$src/src" --include='*.c' | grep -v '/src/pipeline/checkpoint\.c$' || true)
if [ -n "$readers" ]; then
  echo "FAIL: these files open a checkpoint's offsets/ or commits/ themselves (use mcdc_checkpoint_*):"
  echo "$readers"
  fail=1
fi
# POSIX file calls above core: none in the layers that go through the storage seam, which
# is every folder of the lake's layers (parquet to run) and the CLI's demo and report
# commands. A local file by nature (a --progress log, the run's config, /proc) goes through
# core's fs helpers; the checkpoint's flock and lease live in core and pipeline/lease.c
# (ADR 0027, 0044). In the CLI files, printing to stdout and stderr is no file call.
posix='\b(open|openat|creat|fopen|fdopen|close|fclose|read|pread|write|pwrite|fread|fwrite|fputs|fputc|fprintf|rename|renameat2?|link|linkat|unlink|unlinkat|remove|opendir|fdopendir|readdir|closedir|scandir|stat|fstat|lstat|fstatat|fsync|fdatasync|ftruncate|truncate|mkdir|rmdir|access|realpath|readlink|mkstemp|flock|pipe|pipe2|posix_spawn)[[:space:]]*\('
for d in src/parquet src/delta src/pipeline src/finalize src/silver src/reconcile src/report src/run \
  src/cli/cmd_demo.c src/cli/cmd_report.c; do
  while IFS= read -r file; do
    std='^$' # in the CLI's files, lines printing to stdout or stderr are let through
    [[ $file == */src/cli/* ]] && std='\b(stdout|stderr)\b'
    # string literals, comments (one-line /* */ and //, and the lines of block comments) out,
    # then the calls
    while IFS= read -r hit; do
      echo "FAIL: ${file#"$src"/}:$hit: a POSIX file call above core (use mcdc/storage.h, or core's fs helpers for a local file)"
      fail=1
    done < <(sed -E 's/"([^"\\]|\\.)*"/""/g; s:/\*.*\*/::g; s:/\*.*$::; s://.*$::; s:^[[:space:]]*(/?\*).*$::' "$file" |
             grep -nE "$posix" | grep -vE "$std" || true)
  done < <(find "$src/$d" -name '*.[ch]' | sort)
done

[ "$fail" -eq 0 ] && echo "layers: ok ($rank layers)"
exit "$fail"
