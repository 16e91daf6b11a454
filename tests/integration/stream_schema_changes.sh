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
# the same setting in a run config: a bad value is refused before anything runs
cat > "$T/run.yaml" <<YAML
sources:
  shop: {source: "sim:$DB"}
tables:
  - source: shop
    capture_instance: dbo_orders
    target: bronze.r
    app_id: r
    checkpoint: $T/ck/r
    options: {schemaChangePolicy: "sometimes"}
YAML
set +e
M run --config "$T/run.yaml" >/dev/null 2>"$T/err"; rc=$?
set -e
[ $rc = 2 ] || die "run config schemaChangePolicy=sometimes: exit $rc"
grep -q "schemaChangePolicy=sometimes: expected classify or fail" "$T/err" || die "run config: $(cat "$T/err")"
[ ! -e "$MSSQL_CDC_WAREHOUSE/bronze/r" ] || die "run config: bronze.r written"
echo ok
