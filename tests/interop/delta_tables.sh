#!/usr/bin/env bash
# Delta tables we write are read back identically by an independent reader: a log replay
# with plain JSON parsing plus DuckDB's Parquet reader for our checkpoint (with the
# protocol's checkpoint schema) and our data files (tests/node/delta_replay.mjs), compared
# with `mssql-cdc table cat`. Tables: Spark-written DAT tables (partitioned and not)
# compacted by `table optimize` (every file then written by us) and checkpointed by
# `table checkpoint`; and the same after vacuum removed the files no longer referenced.
set -euo pipefail
BIN=$MCDC_BIN
NODE_DIR=$MCDC_SRC/tests/node
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() { # table label
  "$BIN" table cat "$1" --format jsonl > "$work/ours.raw"
  node "$NODE_DIR/delta_replay.mjs" "$1" "$work/ours.raw" "$work/ours.jsonl" "$work/theirs.jsonl"
  [ -s "$work/ours.jsonl" ] || { echo "$2: no rows"; exit 1; }
  node "$NODE_DIR/jsonl_compare.mjs" "$work/ours.jsonl" "$work/theirs.jsonl" | sed "s/^/$2: /"
}

for case in basic_append basic_partitioned multi_partitioned with_schema_change; do
  t=$work/$case
  cp -r "$MCDC_SRC/tests/data/delta/dat/$case/delta" "$t"
  before=$("$BIN" table cat "$t" --format jsonl | sort)
  "$BIN" table optimize "$t" --target-size 1M > /dev/null
  "$BIN" table checkpoint "$t" > /dev/null
  after=$("$BIN" table cat "$t" --format jsonl | sort)
  [ "$before" = "$after" ] || { echo "$case: optimize changed the rows"; exit 1; }
  # every live file is ours now, and the checkpoint lists them
  "$BIN" table info "$t" --format json | grep -q '"checkpointVersion":' 
  check "$t" "$case"
  # files only older versions reference go away with a forced zero retention; rows stay
  "$BIN" table vacuum "$t" --retention 0s --force > /dev/null
  check "$t" "$case after vacuum"
done
echo "ok"
