// tests/node/delta_replay.mjs: an independent Delta reader for the interop tests.
// Usage: node delta_replay.mjs TABLE [OURS.jsonl OURS.sorted THEIRS.sorted]
// Without files: prints the latest version's rows as JSON lines. With them: writes our
// rows (OURS.jsonl, from `table cat`) and the replay's rows, each sorted by their values.
// The log is replayed with plain JSON parsing: the checkpoint named by _last_checkpoint
// (read by DuckDB's Parquet reader with the protocol's checkpoint schema), then the JSON
// commits after it, which must be contiguous. Files are keyed by path; partition values
// come from add.partitionValues; data files are read with DuckDB's read_parquet, columns by
// their physical names under column mapping and cast to the table's type when widened.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';

const canon = (v) => (v === null || v === undefined ? '\u0000' : typeof v === 'object' ? JSON.stringify(v) : String(v));
const sortKey = (row) => Object.values(row).map(canon).join('\u0001');

const sorted = (rows) => rows.map((r) => [sortKey(r), JSON.stringify(r)])
  .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((x) => x[1] + '\n').join('');
const [, , , oursIn, oursOut, theirsOut] = process.argv;
const result = [];

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
// Column mapping (PROTOCOL "Column Mapping", name mode): a column's values are under its
// physical name in the data files and in partitionValues.
const mapped = ['name', 'id'].includes((metadata.configuration || {})['delta.columnMapping.mode']);
const phys = (c) => (mapped && c.metadata && c.metadata['delta.columnMapping.physicalName']) || c.name;
// Type widening (PROTOCOL "Type Widening"): a file written before a column was widened
// holds the older type; read it as the table's type.
const duckType = (t) => ({ byte: 'TINYINT', short: 'SMALLINT', integer: 'INTEGER', long: 'BIGINT',
  float: 'FLOAT', double: 'DOUBLE', date: 'DATE', timestamp_ntz: 'TIMESTAMP' }[t]
  || (/^decimal\(\s*\d+\s*,\s*\d+\s*\)$/.test(t) ? t.toUpperCase() : null));
const quote = (n) => '"' + n.replace(/"/g, '""') + '"';
for (const f of files.values()) {
  const path = `${table}/${decodeURIComponent(f.path)}`;
  const desc = await con.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${path.replace(/'/g, "''")}')`);
  const have = new Set(desc.getRowObjectsJson().map((d) => d.column_name));
  const cols = schema.filter((c) => !parts.includes(c.name) && have.has(phys(c))).map((c) => {
    const widened = c.metadata && c.metadata['delta.typeChanges'] && duckType(c.type);
    const v = widened ? `CAST(${quote(phys(c))} AS ${duckType(c.type)})` : quote(phys(c));
    return `${v} AS ${quote(c.name)}`;
  });
  const r = await con.runAndReadAll(
    `SELECT ${cols.length ? cols.join(', ') : '1 AS "_no_columns"'} FROM read_parquet('${path.replace(/'/g, "''")}')`);
  const pv = f.partitionValues || {};
  for (const row of r.getRowObjectsJson()) {
    const out = {};
    for (const c of schema) {
      if (parts.includes(c.name)) {
        const key = pv[phys(c)] !== undefined ? phys(c) : c.name;
        const v = pv[key] === undefined || pv[key] === '' ? null : pv[key];
        // a binary partition value is the bytes of its text
        out[c.name] = v !== null && c.type === 'binary'
          ? '0x' + Buffer.from(v, 'utf8').toString('hex').toUpperCase() : v;
      }
      else out[c.name] = row[c.name] === undefined ? null : row[c.name];
    }
    result.push(out);
  }
}
if (oursIn) {
  const ours = readFileSync(oursIn, 'utf8').split('\n').filter((l) => l).map((l) => JSON.parse(l));
  writeFileSync(oursOut, sorted(ours));
  writeFileSync(theirsOut, sorted(result));
} else {
  for (const r of result) process.stdout.write(JSON.stringify(r) + '\n');
}
