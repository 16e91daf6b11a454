// tests/node/delta_replay.mjs: an independent Delta reader for the interop tests.
// Usage: node delta_replay.mjs TABLE      prints the latest version's rows as JSON lines
//        node delta_replay.mjs --sort F   prints the JSON lines of F sorted by their values
// The log is replayed with plain JSON parsing: the checkpoint named by _last_checkpoint
// (read by DuckDB's Parquet reader with the protocol's checkpoint schema), then the JSON
// commits after it, which must be contiguous. Files are keyed by path; partition values
// come from add.partitionValues; data files are read with DuckDB's read_parquet.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync, readdirSync } from 'node:fs';

const canon = (v) => (v === null || v === undefined ? '\u0000' : typeof v === 'object' ? JSON.stringify(v) : String(v));
const sortKey = (row) => Object.values(row).map(canon).join('\u0001');

if (process.argv[2] === '--sort') {
  const rows = readFileSync(process.argv[3], 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
  rows.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  for (const r of rows) process.stdout.write(JSON.stringify(r) + '\n');
  process.exit(0);
}

const table = process.argv[2];
const log = `${table}/_delta_log`;
const db = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await db.connect();
const files = new Map();
let metadata = null;
let start = -1;
const apply = (a) => {
  if (a.add) files.set(a.add.path, a.add);
  else if (a.remove) files.delete(a.remove.path);
  else if (a.metaData) metadata = a.metaData;
};
let lc = null;
try { lc = JSON.parse(readFileSync(`${log}/_last_checkpoint`, 'utf8')); } catch { lc = null; }
if (lc) {
  const cp = `${log}/${String(lc.version).padStart(20, '0')}.checkpoint.parquet`;
  const r = await con.runAndReadAll(
    `SELECT to_json(add) AS a, to_json(remove) AS r, to_json(metaData) AS m FROM read_parquet('${cp}')`);
  let n = 0;
  for (const row of r.getRowObjectsJson()) {
    n++;
    if (row.a && row.a !== 'null') apply({ add: JSON.parse(row.a) });
    if (row.r && row.r !== 'null') apply({ remove: JSON.parse(row.r) });
    if (row.m && row.m !== 'null') apply({ metaData: JSON.parse(row.m) });
  }
  if (n !== lc.size) throw new Error(`checkpoint has ${n} rows, _last_checkpoint says ${lc.size}`);
  start = lc.version;
}
const commits = readdirSync(log).filter((f) => /^\d{20}\.json$/.test(f)).map((f) => Number(f.slice(0, 20)))
  .filter((v) => v > start).sort((a, b) => a - b);
commits.forEach((v, i) => { if (v !== start + 1 + i) throw new Error(`version ${start + 1 + i} missing`); });
for (const v of commits) {
  for (const line of readFileSync(`${log}/${String(v).padStart(20, '0')}.json`, 'utf8').split('\n')) {
    if (line.trim()) apply(JSON.parse(line));
  }
}
const schema = JSON.parse(metadata.schemaString).fields;
const parts = metadata.partitionColumns;
for (const f of files.values()) {
  const path = `${table}/${decodeURIComponent(f.path)}`;
  const r = await con.runAndReadAll(`SELECT * FROM read_parquet('${path.replace(/'/g, "''")}')`);
  const pv = f.partitionValues || {};
  for (const row of r.getRowObjectsJson()) {
    const out = {};
    for (const c of schema) {
      if (parts.includes(c.name)) out[c.name] = pv[c.name] === undefined || pv[c.name] === '' ? null : pv[c.name];
      else out[c.name] = row[c.name] === undefined ? null : row[c.name];
    }
    process.stdout.write(JSON.stringify(out) + '\n');
  }
}
