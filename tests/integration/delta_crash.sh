#!/usr/bin/env bash
# Crash tests for Delta commits: a process killed (MCDC_FAILPOINT, SIGKILL) after writing
# its data files, after a compaction wrote its files (delta.compact.files_written), after
# writing the temp commit but before linking it, right after
# linking, before writing a checkpoint and before updating _last_checkpoint leaves a
# table that reads the same rows as before (or as after, once the commit is linked), and
# the next writer succeeds. Orphan data files of a crashed writer are kept by a vacuum
# with the default retention (a writer may still commit them) and removed once old enough
# (here: a forced zero retention), without changing the rows.
set -uo pipefail
BIN=$MCDC_BIN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

rows() { "$BIN" table cat "$1" --format jsonl | sort; }
orphans() { find "$1" -name '*.parquet' -not -path '*/_delta_log/*' | wc -l; }

n=0
for fp in delta.writer.file_closed delta.compact.files_written delta.commit.before_link delta.commit.after_link; do
  n=$((n + 1))
  t=$work/t$n
  cp -r "$MCDC_SRC/tests/data/delta/dat/basic_append/delta" "$t"
  want=$(rows "$t")
  MCDC_FAILPOINT=$fp "$BIN" table optimize "$t" --target-size 1M >/dev/null 2>&1
  rc=$?
  [ $rc -eq 137 ] || fail "$fp: expected SIGKILL (137), got $rc"
  [ "$(rows "$t")" = "$want" ] || fail "$fp: rows changed after the crash"
  "$BIN" table info "$t" >/dev/null || fail "$fp: table unreadable after the crash"
  files_before=$(orphans "$t")
  "$BIN" table vacuum "$t" >/dev/null || fail "$fp: vacuum"
  [ "$(orphans "$t")" = "$files_before" ] || fail "$fp: default-retention vacuum deleted fresh files"
  "$BIN" table optimize "$t" --target-size 1M >/dev/null || fail "$fp: optimize after the crash"
  [ "$(rows "$t")" = "$want" ] || fail "$fp: rows changed after recovery"
  "$BIN" table vacuum "$t" --retention 0s --force >/dev/null || fail "$fp: forced vacuum"
  [ "$(rows "$t")" = "$want" ] || fail "$fp: rows changed after vacuum"
  echo "ok $fp"
done

for fp in delta.checkpoint.before_write delta.checkpoint.before_last_checkpoint; do
  n=$((n + 1))
  t=$work/t$n
  cp -r "$MCDC_SRC/tests/data/delta/dat/basic_append/delta" "$t"
  want=$(rows "$t")
  MCDC_FAILPOINT=$fp "$BIN" table checkpoint "$t" >/dev/null 2>&1
  rc=$?
  [ $rc -eq 137 ] || fail "$fp: expected SIGKILL (137), got $rc"
  [ "$(rows "$t")" = "$want" ] || fail "$fp: rows changed after the crash"
  "$BIN" table checkpoint "$t" >/dev/null || fail "$fp: checkpoint after the crash"
  [ "$(rows "$t")" = "$want" ] || fail "$fp: rows changed after recovery"
  "$BIN" table info "$t" --format json | grep -q '"checkpointVersion":[0-9]' || fail "$fp: no checkpoint used"
  echo "ok $fp"
done
