// tests/node/duck.mjs: run SQL in DuckDB (in memory) and print the rows as JSON lines.
// Usage: node duck.mjs 'SELECT ...'   (the independent reader of the interop tests)
// Values are printed as DuckDB converts them to JSON: decimals and big integers as
// strings, timestamps as ISO text.
import { DuckDBInstance } from '@duckdb/node-api';

const sql = process.argv[2];
if (!sql) {
  console.error('usage: node duck.mjs SQL');
  process.exit(2);
}
const db = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await db.connect();
const statements = sql.split(/;\s*\n/).filter((s) => s.trim());
let reader;
for (const s of statements) reader = await con.runAndReadAll(s);
if (reader) {
  for (const row of reader.getRowObjectsJson()) process.stdout.write(JSON.stringify(row) + '\n');
}
