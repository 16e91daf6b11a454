#!/usr/bin/env bash
# tests/data/protocol/make.sh: (re)make this project's hand-written protocol tables (not
# Spark's; see README.md). The logs are written here as text, field by field after the
# protocol's own examples; the data files by DuckDB (tests/node), so no file of ours
# writes what our reader reads. Run from anywhere; it rewrites the two tables.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
duck() { node "$here/../../node/duck.mjs" "$1" >/dev/null; }
tw=$here/type-widening-preview
va=$here/variant-type-preview
rm -rf "$tw" "$va"
mkdir -p "$tw/_delta_log" "$va/_delta_log"

# ---- typeWidening-preview: the three examples of the type-widening RFC as Delta 3.2 had it
# (with tableVersion): e short -> integer (version 1) -> long (version 5); m's map key
# float -> double and a's array element's map value decimal(6, 2) -> decimal(10, 4)
# (version 2). Each data file is written in the types of the version that added it.
part() { # part N E_TYPE M_KEY_TYPE A_VALUE_TYPE 'ROWS (e, m, a)'
  duck "COPY (SELECT e::$2 AS e, MAP(mk::$3[], mv::INTEGER[]) AS m, [MAP(ak::VARCHAR[], av::$4[])] AS a
        FROM (VALUES $5) AS t(e, mk, mv, ak, av)) TO '$tw/part-0000$1.parquet' (FORMAT parquet)"
}
part 0 SMALLINT FLOAT 'DECIMAL(6,2)' "(1, [1.5], [10], ['x'], [12.34]), (NULL, [], [], [], [])"
part 1 INTEGER FLOAT 'DECIMAL(6,2)' "(70000, [2.25], [20], ['y'], [-0.5])"
part 2 INTEGER DOUBLE 'DECIMAL(10,4)' "(3, [0.75], [30], ['z'], [123456.7891])"
part 5 BIGINT DOUBLE 'DECIMAL(10,4)' "(5000000000, [4.0], [50], ['w'], [1.0001])"
size() { stat -c %s "$tw/part-0000$1.parquet"; }
add() { # add N VERSION: the add action of part N, committed at VERSION
  printf '{"add":{"path":"part-0000%s.parquet","partitionValues":{},"size":%s,"modificationTime":%s000,"dataChange":true}}\n' "$1" "$(size "$1")" "$((1700000000 + $2))"
}
info() { printf '{"commitInfo":{"timestamp":%s000,"operation":"%s"}}\n' "$((1700000000 + $1))" "$2"; }
e_short='{"name":"e","type":"short","nullable":true,"metadata":{}}'
e_int='{"name":"e","type":"integer","nullable":true,"metadata":{"delta.typeChanges":[{"tableVersion":1,"fromType":"short","toType":"integer"}]}}'
e_long='{"name":"e","type":"long","nullable":true,"metadata":{"delta.typeChanges":[{"tableVersion":1,"fromType":"short","toType":"integer"},{"tableVersion":5,"fromType":"integer","toType":"long"}]}}'
m_float='{"name":"m","type":{"type":"map","keyType":"float","valueType":"integer","valueContainsNull":true},"nullable":true,"metadata":{}}'
m_double='{"name":"m","type":{"type":"map","keyType":"double","valueType":"integer","valueContainsNull":true},"nullable":true,"metadata":{"delta.typeChanges":[{"tableVersion":2,"fromType":"float","toType":"double","fieldPath":"key"}]}}'
a_62='{"name":"a","type":{"type":"array","elementType":{"type":"map","keyType":"string","valueType":"decimal(6, 2)","valueContainsNull":true},"containsNull":true},"nullable":true,"metadata":{}}'
a_104='{"name":"a","type":{"type":"array","elementType":{"type":"map","keyType":"string","valueType":"decimal(10, 4)","valueContainsNull":true},"containsNull":true},"nullable":true,"metadata":{"delta.typeChanges":[{"tableVersion":2,"fromType":"decimal(6, 2)","toType":"decimal(10, 4)","fieldPath":"element.value"}]}}'
meta() { # meta SCHEMA-FIELDS...: a metaData action (schemaString is the schema as a JSON string)
  local fields; fields=$(IFS=,; echo "$*")
  node -e 'const s = JSON.stringify({type: "struct", fields: JSON.parse("[" + process.argv[1] + "]")});
    console.log(JSON.stringify({metaData: {id: "5f3d2c1e-0a4b-4c6d-8e9f-112233445566", format: {provider: "parquet", options: {}},
      schemaString: s, partitionColumns: [], configuration: {"delta.enableTypeWidening": "true"}, createdTime: 1700000000000}}));' "$fields"
}
{
  info 0 "CREATE TABLE"
  echo '{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["typeWidening-preview"],"writerFeatures":["typeWidening-preview"]}}'
  meta "$e_short" "$m_float" "$a_62"
  add 0 0
} > "$tw/_delta_log/00000000000000000000.json"
{ info 1 "CHANGE COLUMN"; meta "$e_int" "$m_float" "$a_62"; add 1 1; } > "$tw/_delta_log/00000000000000000001.json"
{ info 2 "CHANGE COLUMN"; meta "$e_int" "$m_double" "$a_104"; add 2 2; } > "$tw/_delta_log/00000000000000000002.json"
{ info 3 "SET TBLPROPERTIES"; } > "$tw/_delta_log/00000000000000000003.json"
{ info 4 "SET TBLPROPERTIES"; } > "$tw/_delta_log/00000000000000000004.json"
{ info 5 "CHANGE COLUMN"; meta "$e_long" "$m_double" "$a_104"; add 5 5; } > "$tw/_delta_log/00000000000000000005.json"

# ---- variantType-preview: the RFC's example schema (raw_data variant; variant_array, an
# array of variants, not null), each variant the struct of value and metadata binaries.
# Values (Spark's variant binary encoding): {"a":1}, 12.30 (a decimal4 of scale 2), "hi"
# (a short string), [1,"hi"] (an array), a variant null, and a SQL NULL raw_data.
m0=010000        # metadata: version 1, an empty dictionary
ma=0101000161    # metadata: version 1, the dictionary ["a"]
duck "COPY (SELECT CASE WHEN rv IS NULL THEN NULL ELSE {'value': from_hex(rv), 'metadata': from_hex(rm)} END AS raw_data,
      [{'value': from_hex(x), 'metadata': from_hex('$m0')} FOR x IN xs] AS variant_array
      FROM (VALUES (1, '0201000002' || '0C01', '$ma', ['0C01', '096869']),
                   (2, '2002CE040000', '$m0', ['03020002050C01096869']),
                   (3, '096869', '$m0', []),
                   (4, '00', '$m0', ['00']),
                   (5, NULL, NULL, ['0C07'])) AS t(id, rv, rm, xs) ORDER BY id)
      TO '$va/part-00000.parquet' (FORMAT parquet)"
schema='{"type":"struct","fields":[{"name":"raw_data","type":"variant","nullable":true,"metadata":{}},{"name":"variant_array","type":{"type":"array","elementType":{"type":"variant"},"containsNull":false},"nullable":false,"metadata":{}}]}'
{
  info 0 "CREATE TABLE"
  echo '{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["variantType-preview"],"writerFeatures":["variantType-preview"]}}'
  node -e 'console.log(JSON.stringify({metaData: {id: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f11223344", format: {provider: "parquet", options: {}},
    schemaString: process.argv[1], partitionColumns: [], configuration: {}, createdTime: 1700000000000}}))' "$schema"
  printf '{"add":{"path":"part-00000.parquet","partitionValues":{},"size":%s,"modificationTime":1700000000000,"dataChange":true}}\n' "$(stat -c %s "$va/part-00000.parquet")"
} > "$va/_delta_log/00000000000000000000.json"
# ---- the same table with a variant in variant_array that does not decode (an object header
# claiming nine fields of a one-byte value): a reader must refuse the cell, not drop it
vb=$here/variant-type-preview-bad
rm -rf "$vb"
mkdir -p "$vb/_delta_log"
duck "COPY (SELECT {'value': from_hex('0C01'), 'metadata': from_hex('$m0')} AS raw_data,
      [{'value': from_hex(x), 'metadata': from_hex('$m0')} FOR x IN ['0C01', '02096869']] AS variant_array)
      TO '$vb/part-00000.parquet' (FORMAT parquet)"
sed "s/\"size\":[0-9]*/\"size\":$(stat -c %s "$vb/part-00000.parquet")/" "$va/_delta_log/00000000000000000000.json" \
  > "$vb/_delta_log/00000000000000000000.json"
echo "made $tw, $va and $vb"
