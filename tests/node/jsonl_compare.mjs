// tests/node/jsonl_compare.mjs: compare two files of JSON lines row by row after
// normalising both sides the same way, for the Parquet interop tests.
// Usage: node jsonl_compare.mjs OURS.jsonl THEIRS.jsonl   (or THEIRS.csv: an _expect.csv
// of parquet-testing, header row then values; empty field = null)
// Prints "ok N rows" and exits 0, or the first difference and exits 1.
// node jsonl_compare.mjs --list FILE: each line "LABEL<TAB>OURS<TAB>THEIRS"; prints
// "LABEL<TAB>ok N rows" or "LABEL<TAB>difference" per line (node starts slowly).
//
// Normalisation: integers (numbers or digit strings) compare as BigInt text; floats within
// a relative 1e-6 (a FLOAT column printed as a double by one side); decimal strings
// without trailing zeros; timestamps with ' ' for 'T', no "Z"/"+00", no trailing zeros in
// the fraction; times likewise; binary "0x…" against DuckDB's "\xNN" escaped text as hex;
// NaN and infinities as their names; objects by key, arrays element by element.
import { readFileSync } from 'node:fs';

const [oursPath, theirsPath] = process.argv.slice(2);
if (!oursPath || (!theirsPath && oursPath !== '--list')) {
  console.error('usage: node jsonl_compare.mjs OURS.jsonl THEIRS.jsonl|THEIRS.csv');
  process.exit(2);
}

function lines(path) {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l.length > 0);
}

function parseCsvLine(line) {
  const out = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let s = '';
      i++;
      for (;;) {
        if (line[i] === '"' && line[i + 1] === '"') { s += '"'; i += 2; }
        else if (line[i] === '"') { i++; break; }
        else { s += line[i++]; }
      }
      out.push(s);
      i++; // comma
    } else {
      let j = line.indexOf(',', i);
      if (j < 0) j = line.length;
      const s = line.slice(i, j);
      out.push(s === '' ? null : s);
      i = j + 1;
    }
  }
  return out;
}

function loadTheirs(path) {
  if (path.endsWith('.csv')) {
    const ls = lines(path);
    const header = parseCsvLine(ls[0]);
    return ls.slice(1).map((l) => {
      const v = parseCsvLine(l);
      const o = {};
      header.forEach((h, k) => { o[h.trim()] = v[k] === undefined ? null : v[k]; });
      return o;
    });
  }
  return lines(path).map((l) => JSON.parse(l));
}

function duckBlobToHex(s) {
  let hex = '';
  for (let i = 0; i < s.length;) {
    if (s[i] === '\\' && s[i + 1] === 'x' && /^[0-9A-Fa-f]{2}$/.test(s.slice(i + 2, i + 4))) {
      hex += s.slice(i + 2, i + 4).toUpperCase();
      i += 4;
    } else {
      const b = Buffer.from(s[i], 'utf8');
      hex += b.toString('hex').toUpperCase();
      i++;
    }
  }
  return hex;
}

function stripFrac(s) {
  return s.replace(/\.(\d*?)0+$/, (m, d) => (d.length ? '.' + d : ''));
}

function norm(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (Number.isInteger(v) && Math.abs(v) < 2 ** 53) return { int: BigInt(v).toString() };
    return { float: v };
  }
  if (typeof v === 'string') {
    if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return { special: v };
    if (/^-?\d+$/.test(v)) return { int: BigInt(v).toString() };
    if (/^-?\d+\.\d+$/.test(v)) return { dec: stripFrac(v).replace(/^-0$/, '0') };
    let m = /^(-?\d{4,})(-\d\d-\d\d)( \(BC\))?[T ](\d\d:\d\d:\d\d(?:\.\d+)?)(Z|[+-]00(?::?00)?)?$/.exec(v);
    if (m) {
      // DuckDB writes year -Y as "Y+1 ... (BC)"; use astronomical years
      const year = m[3] ? 1 - Number(m[1]) : Number(m[1]);
      return { ts: `${year}${m[2]} ${stripFrac(m[4])}` };
    }
    m = /^(\d\d:\d\d:\d\d(?:\.\d+)?)$/.exec(v);
    if (m) return { time: stripFrac(m[1]) };
    if (/^0x[0-9A-F]*$/.test(v)) return { hex: v.slice(2), text: v };
    return { str: v };
  }
  if (Array.isArray(v)) return v.map(norm);
  const o = {};
  for (const k of Object.keys(v)) o[k] = norm(v[k]);
  return o;
}

function same(a, b, path) {
  if (a === null || b === null) return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  if (typeof a !== 'object' || typeof b !== 'object')
    return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length)
      return `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
    for (let i = 0; i < a.length; i++) {
      const d = same(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  // scalars in wrappers
  if ('float' in a || 'float' in b) {
    const x = Number(a.float ?? a.int ?? a.dec), y = Number(b.float ?? b.int ?? b.dec);
    if (Math.abs(x - y) <= 1e-6 * Math.max(1, Math.abs(x), Math.abs(y))) return null;
    return `${path}: ${x} vs ${y}`;
  }
  if ('int' in a && 'dec' in b) return a.int === b.dec ? null : `${path}: ${a.int} vs ${b.dec}`;
  if ('dec' in a && 'int' in b) return a.dec === b.int ? null : `${path}: ${a.dec} vs ${b.int}`;
  if ('hex' in a && 'str' in b) return a.hex === duckBlobToHex(b.str) ? null : `${path}: ${a.text} vs ${JSON.stringify(b.str)}`;
  if ('hex' in a && 'hex' in b) return a.hex === b.hex ? null : `${path}: ${a.text} vs ${b.text}`;
  if ('hex' in a && ('int' in b || 'dec' in b || 'ts' in b || 'time' in b)) {
    // a blob whose text looks like a number or a time on the other side
    const t = b.int ?? b.dec ?? b.ts ?? b.time;
    return a.hex === Buffer.from(t, 'utf8').toString('hex').toUpperCase() ? null : `${path}: ${a.text} vs ${t}`;
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return `${path}: keys ${ka} vs ${kb}`;
  for (const k of ka) {
    if (!(k in b)) return `${path}: key ${k} missing on the right (${kb})`;
    const d = same(a[k], b[k], `${path}.${k}`);
    if (d) return d;
  }
  return null;
}

function compare(oursPath, theirsPath) {
  let ours = lines(oursPath).map((l) => JSON.parse(l));
  const theirs = loadTheirs(theirsPath);
  if (theirsPath.endsWith('.csv') && theirs.length > 0) {
    // an _expect.csv names columns its own way: match them by position
    const names = Object.keys(theirs[0]);
    ours = ours.map((r) => {
      const o = {};
      Object.values(r).forEach((v, k) => { o[names[k] ?? `#${k}`] = v; });
      return o;
    });
  }
  if (ours.length !== theirs.length) return `row count differs: ${ours.length} vs ${theirs.length}`;
  for (let i = 0; i < ours.length; i++) {
    const d = same(norm(ours[i]), norm(theirs[i]), `row ${i}`);
    if (d) return d;
  }
  return `ok ${ours.length} rows`;
}

if (oursPath === '--list') {
  for (const line of lines(theirsPath)) {
    const [label, a, b] = line.split('\t');
    let r;
    try { r = compare(a, b); } catch (e) { r = `error: ${e.message}`; }
    console.log(`${label}\t${r}`);
  }
} else {
  const r = compare(oursPath, theirsPath);
  console.log(r);
  process.exit(r.startsWith('ok') ? 0 : 1);
}
