# Schema changes on the source (docs/guides/schema-changes.md): ADD COLUMN, DROP COLUMN,
# ALTER COLUMN int -> bigint and decimal(10,2) -> decimal(18,2), each first under
# --schema-change fail (exit 5, nothing read or written), then under classify (goes on,
# bronze evolves in the batch's commit, one schema_change facts row per DDL); a widening
# without delta.enableTypeWidening on bronze exits 5 naming the command; varchar -> int
# exits 5 before reading under both policies. After each step bronze holds every change
# exactly once, silver equals the source on the columns both have, and an independent
# reader (the JSON log replayed, DuckDB's Parquet reader) reads the widened bronze.
. "$(dirname "$0")/stream_lib.bash"
start_source() { STREAM_SRC="sim:$DB"; }
. "$(dirname "$0")/schema_changes_body.bash"
