// tests/node/duck_many.mjs: run many DuckDB queries in one process (DuckDB takes seconds
// to start) and write each one's rows as JSON lines to its own file.
// Usage: node duck_many.mjs LISTFILE   where each line of LISTFILE is "OUTFILE<TAB>SQL".
// A query that fails writes its error message to OUTFILE.err instead.
import { readFileSync, writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

const list = readFileSync(process.argv[2], 'utf8').split('\n').filter((l) => l.includes('\t'));
const db = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await db.connect();
for (const line of list) {
  const tab = line.indexOf('\t');
  const out = line.slice(0, tab), sql = line.slice(tab + 1);
  try {
    const reader = await con.runAndReadAll(sql);
    writeFileSync(out, reader.getRowObjectsJson().map((r) => JSON.stringify(r) + '\n').join(''));
  } catch (e) {
    writeFileSync(out + '.err', String(e.message ?? e) + '\n');
  }
}
