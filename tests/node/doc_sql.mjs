// tests/node/doc_sql.mjs: runs a documentation SQL example in DuckDB over the Delta tables
// the examples before it wrote (tests/integration/doc_examples.mjs calls it).
// Usage: node doc_sql.mjs WAREHOUSE FILE.sql
// DuckDB has no Delta extension here, so each table's live files are found by replaying
// its log independently (the checkpoint named by _last_checkpoint, read with DuckDB's
// Parquet reader, then the JSON commits after it) and read with read_parquet:
// `delta_scan('PATH')` in the SQL becomes `read_parquet([live files of PATH])`, and every
// table of the warehouse at `<warehouse>/a/b` is also a view `a.b`. Every statement runs;
// the last one's rows are printed as JSON lines. Exit 1 on any error.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { join, resolve, relative, sep } from 'node:path';

const [, , warehouse, sqlFile] = process.argv;
if (!warehouse || !sqlFile) {
  console.error('usage: node doc_sql.mjs WAREHOUSE FILE.sql');
  process.exit(2);
}
const db = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await db.connect();
const q = (s) => `'${s.replace(/'/g, "''")}'`;

async function liveFiles(table) {
  const log = join(table, '_delta_log');
  const files = new Set();
  let start = -1;
  if (existsSync(join(log, '_last_checkpoint'))) {
    const lc = JSON.parse(readFileSync(join(log, '_last_checkpoint'), 'utf8'));
    const cp = join(log, `${String(lc.version).padStart(20, '0')}.checkpoint.parquet`);
    const r = await con.runAndReadAll(`SELECT add.path AS p FROM read_parquet(${q(cp)}) WHERE add IS NOT NULL`);
    for (const row of r.getRowObjectsJson()) files.add(row.p);
    start = lc.version;
  }
  const versions = readdirSync(log).filter((f) => /^\d{20}\.json$/.test(f)).map((f) => Number(f.slice(0, 20)))
    .filter((v) => v > start).sort((a, b) => a - b);
  for (const v of versions) {
    for (const line of readFileSync(join(log, `${String(v).padStart(20, '0')}.json`), 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const a = JSON.parse(line);
      if (a.add) files.add(a.add.path);
      else if (a.remove) files.delete(a.remove.path);
    }
  }
  if (files.size === 0) throw new Error(`${table}: the table has no live data files`);
  return `read_parquet([${[...files].sort().map((p) => q(join(table, decodeURIComponent(p)))).join(', ')}], union_by_name = true)`;
}

function tables(dir, out) {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return out;
  if (existsSync(join(dir, '_delta_log'))) { out.push(dir); return out; }
  for (const e of readdirSync(dir)) if (!e.startsWith('_') && !e.startsWith('.')) tables(join(dir, e), out);
  return out;
}

try {
  let sql = readFileSync(sqlFile, 'utf8');
  const scans = [...sql.matchAll(/delta_scan\(\s*'([^']*)'\s*\)/g)];
  for (const m of scans) sql = sql.replace(m[0], await liveFiles(resolve(m[1])));
  for (const t of tables(resolve(warehouse), [])) {
    const parts = relative(resolve(warehouse), t).split(sep);
    if (parts.length > 2) continue;
    if (parts.length === 2) await con.run(`CREATE SCHEMA IF NOT EXISTS "${parts[0]}"`);
    const name = parts.map((p) => `"${p}"`).join('.');
    let from;
    try { from = await liveFiles(t); } catch { continue; }
    await con.run(`CREATE VIEW ${name} AS SELECT * FROM ${from}`);
  }
  const st = await con.extractStatements(sql);
  let reader = null;
  for (let i = 0; i < st.count; i++) reader = await (await st.prepare(i)).runAndReadAll();
  if (reader) for (const row of reader.getRowObjectsJson()) process.stdout.write(JSON.stringify(row) + '\n');
} catch (e) {
  console.error(`doc_sql: ${e.message}`);
  process.exit(1);
}
