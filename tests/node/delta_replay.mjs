// tests/node/delta_replay.mjs: an independent Delta reader for the interop tests.
// Usage: node delta_replay.mjs TABLE [OURS.jsonl OURS.sorted THEIRS.sorted]
// Without files: prints the latest version's rows as JSON lines. With them: writes our
// rows (OURS.jsonl, from `table cat`) and the replay's rows, each sorted by their values.
// The log is replayed with plain JSON parsing: the checkpoint named by _last_checkpoint
// (read by DuckDB's Parquet reader with the protocol's checkpoint schema; a V2 one with its
// sidecars), then the JSON
// commits after it, which must be contiguous. Files are keyed by path and DV id; partition values
// come from add.partitionValues; data files are read with DuckDB's read_parquet, columns by
// their physical names under column mapping and cast to the table's type when widened.
// Deletion vectors (PROTOCOL "Deletion Vector Format") are decoded here, independently of
// the tool: the 'u' file named by the Z85 form of its UUID (or an inline 'i' bitmap), its
// size and CRC-32 checked, the portable RoaringBitmapArray (array, bitset and run
// containers) parsed; rows at those positions (DuckDB's file_row_number) are left out.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';

// CRC-32 (IEEE 802.3, reflected, as zlib's), by table: node:zlib has crc32 only from Node 20.15,
// and Debian 12 ships Node 18.
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32(buf) {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const z85 = (s) => {
  const out = Buffer.alloc((s.length / 5) * 4);
  for (let i = 0; i < s.length; i += 5) {
    let v = 0;
    for (let k = 0; k < 5; k++) {
      const d = Z85.indexOf(s[i + k]);
      if (d < 0) throw new Error(`bad Z85 character ${s[i + k]}`);
      v = v * 85 + d;
    }
    out.writeUInt32BE(v, (i / 5) * 4);
  }
  return out;
};
// The deleted row positions of a DV descriptor, as a Set of BigInt.
const dvRows = (table, dv) => {
  let bitmap;
  if (dv.storageType === 'i') {
    bitmap = z85(dv.pathOrInlineDv).subarray(0, dv.sizeInBytes);
  } else {
    let file;
    if (dv.storageType === 'u') {
      const p = dv.pathOrInlineDv;
      const u = z85(p.slice(-20)).toString('hex');
      const uuid = `${u.slice(0, 8)}-${u.slice(8, 12)}-${u.slice(12, 16)}-${u.slice(16, 20)}-${u.slice(20)}`;
      const prefix = p.slice(0, -20);
      file = `${table}/${prefix ? prefix + '/' : ''}deletion_vector_${uuid}.bin`;
    } else {
      file = decodeURIComponent(dv.pathOrInlineDv.replace(/^file:(\/\/)?/, ''));
    }
    const bytes = readFileSync(file);
    if (bytes[0] !== 1) throw new Error(`${file}: version ${bytes[0]}`);
    const off = dv.offset ?? 1;
    const size = bytes.readUInt32BE(off);
    if (size !== dv.sizeInBytes) throw new Error(`${file}: size ${size}, log says ${dv.sizeInBytes}`);
    bitmap = bytes.subarray(off + 4, off + 4 + size);
    const crc = bytes.readUInt32BE(off + 4 + size);
    if (crc32(bitmap) !== crc) throw new Error(`${file}: CRC mismatch`);
  }
  if (bitmap.readUInt32LE(0) !== 1681511377) throw new Error('not a portable RoaringBitmapArray');
  const rows = new Set();
  let at = 4;
  const buckets = Number(bitmap.readBigUInt64LE(at));
  at += 8;
  for (let b = 0; b < buckets; b++) {
    const high = BigInt(bitmap.readUInt32LE(at)) << 32n;
    at += 4;
    const cookie = bitmap.readUInt32LE(at);
    let n;
    let runFlags = null;
    if ((cookie & 0xffff) === 12347) {
      n = (cookie >>> 16) + 1;
      at += 4;
      runFlags = bitmap.subarray(at, at + Math.ceil(n / 8));
      at += Math.ceil(n / 8);
    } else if (cookie === 12346) {
      n = bitmap.readUInt32LE(at + 4);
      at += 8;
    } else throw new Error(`bad roaring cookie ${cookie}`);
    const hdr = [];
    for (let i = 0; i < n; i++) hdr.push([bitmap.readUInt16LE(at + 4 * i), bitmap.readUInt16LE(at + 4 * i + 2) + 1]);
    at += 4 * n;
    if (!runFlags || n >= 4) at += 4 * n; // offsets
    for (let i = 0; i < n; i++) {
      const base = high | (BigInt(hdr[i][0]) << 16n);
      if (runFlags && (runFlags[i >> 3] >> (i & 7)) & 1) {
        const nr = bitmap.readUInt16LE(at);
        at += 2;
        for (let r = 0; r < nr; r++) {
          const start = bitmap.readUInt16LE(at + 4 * r), len = bitmap.readUInt16LE(at + 4 * r + 2) + 1;
          for (let x = 0; x < len; x++) rows.add(base + BigInt(start + x));
        }
        at += 4 * nr;
      } else if (hdr[i][1] > 4096) {
        for (let x = 0; x < 65536; x++) if ((bitmap[at + (x >> 3)] >> (x & 7)) & 1) rows.add(base + BigInt(x));
        at += 8192;
      } else {
        for (let k = 0; k < hdr[i][1]; k++) rows.add(base + BigInt(bitmap.readUInt16LE(at + 2 * k)));
        at += 2 * hdr[i][1];
      }
    }
  }
  if (rows.size !== dv.cardinality) throw new Error(`DV has ${rows.size} rows, log says ${dv.cardinality}`);
  return rows;
};

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
// a file is its path and its deletion vector's id (PROTOCOL "Deletion Vectors")
const fileKey = (f) => {
  const dv = f.deletionVector;
  return dv ? `${f.path}\u0001${dv.storageType}${dv.pathOrInlineDv}@${dv.offset ?? ''}` : f.path;
};
const apply = (a) => {
  if (a.add) files.set(fileKey(a.add), a.add);
  else if (a.remove) files.delete(fileKey(a.remove));
  else if (a.metaData) metadata = a.metaData;
};
let lc = null;
try { lc = JSON.parse(readFileSync(`${log}/_last_checkpoint`, 'utf8')); } catch { lc = null; }
if (lc) {
  // a classic checkpoint, or a V2 one (PROTOCOL "V2 Spec"): the UUID-named file that
  // _last_checkpoint's v2Checkpoint names, then the sidecars its sidecar rows name
  const v2 = lc.v2Checkpoint;
  const rows = async (p) => (await con.runAndReadAll(
    `SELECT to_json(t) AS j FROM read_parquet('${p}') t`)).getRowObjectsJson().map((r) => JSON.parse(r.j));
  const cpRows = await rows(v2 ? `${log}/${v2.path}` : `${log}/${String(lc.version).padStart(20, '0')}.checkpoint.parquet`);
  const sidecars = cpRows.filter((a) => a.sidecar).map((a) => a.sidecar.path);
  if (v2 && cpRows.filter((a) => a.checkpointMetadata).length !== 1) throw new Error('V2 checkpoint without one checkpointMetadata');
  let n = cpRows.length;
  for (const a of cpRows) {
    if (a.add) apply({ add: a.add });
    if (a.remove) apply({ remove: a.remove });
    if (a.metaData) apply({ metaData: a.metaData });
  }
  for (const sc of sidecars) {
    const scRows = await rows(`${log}/_sidecars/${sc}`);
    n += scRows.length;
    for (const a of scRows) {
      if (a.add) apply({ add: a.add });
      if (a.remove) apply({ remove: a.remove });
    }
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
  const deleted = f.deletionVector ? dvRows(table, f.deletionVector) : null;
  const r = await con.runAndReadAll(
    `SELECT ${cols.length ? cols.join(', ') : '1 AS "_no_columns"'}, file_row_number AS "__row" FROM read_parquet('${path.replace(/'/g, "''")}', file_row_number = true)`);
  const pv = f.partitionValues || {};
  for (const row of r.getRowObjectsJson()) {
    if (deleted && deleted.has(BigInt(row.__row))) continue;
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
