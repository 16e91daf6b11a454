// bench/duck_threads.mjs: run SQL statements in DuckDB (in memory) with a given number of
// threads and print the last statement's rows as JSON lines.
// Usage: node bench/duck_threads.mjs THREADS 'SQL; SQL'. Uses the DuckDB package installed
// for the tests (tests/node/node_modules).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', 'tests', 'node', 'package.json'));
const { DuckDBInstance } = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
const threads = process.argv[2];
const sql = process.argv[3];
if (!/^[0-9]+$/.test(threads ?? '') || !sql) {
  console.error('usage: node duck_threads.mjs THREADS SQL');
  process.exit(2);
}
const db = await DuckDBInstance.create(':memory:', { threads });
const con = await db.connect();
let reader;
for (const s of sql.split(/;\s*\n/).filter((x) => x.trim())) reader = await con.runAndReadAll(s);
if (reader) {
  for (const row of reader.getRowObjectsJson()) process.stdout.write(JSON.stringify(row) + '\n');
}
