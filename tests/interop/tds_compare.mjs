// tests/interop/tds_compare.mjs: compare the rows a TDS client printed (JSON lines) with the
// rows `sim query --format jsonl` printed, row for row and column for column.
//   node tds_compare.mjs EXPECTED GOT [--ms KEY,...] [--rounding] [--tsv]
// Values compare equal when they are the same JSON value, or both decimal texts (or numbers)
// of the same exact value ("0" and "0.0000"), or, for the keys given to --ms, timestamps
// within a millisecond (datetime's 1/300 s shown to the ms). --rounding (tedious: decimals
// as JavaScript numbers, datetime2 to the ms): decimals within 1e-12 relative and every
// timestamp within a millisecond. --tsv: GOT is tsql's output (a tab-separated header and
// rows, NULL for NULL, bits as 1/0, binary as lower-case hex), read as text.
import { readFileSync } from 'node:fs';

const [expFile, gotFile, ...opts] = process.argv.slice(2);
const msKeys = new Set();
let rounding = false, tsv = false;
for (let i = 0; i < opts.length; i++) {
  if (opts[i] === '--ms') for (const k of opts[++i].split(',')) msKeys.add(k);
  else if (opts[i] === '--rounding') rounding = true;
  else if (opts[i] === '--tsv') tsv = true;
}
const lines = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
function tsvLines(f) {
  const rows = readFileSync(f, 'utf8').split('\n').filter((l) => l !== '');
  const head = rows.shift().split('\t');
  return rows.map((l) => Object.fromEntries(l.split('\t').map((v, i) => [head[i], v === 'NULL' ? null : v])));
}
const exp = lines(expFile), got = tsv ? tsvLines(gotFile) : lines(gotFile);
if (tsv) { // tsql's spellings of bits and binaries
  for (let r = 0; r < Math.min(exp.length, got.length); r++) {
    for (const k of Object.keys(exp[r])) {
      const e = exp[r][k], g = got[r][k];
      if (typeof e === 'boolean' && (g === '1' || g === '0')) got[r][k] = g === '1';
      else if (typeof e === 'string' && /^0x/.test(e) && typeof g === 'string') got[r][k] = '0x' + g.toUpperCase();
    }
  }
}

const DEC = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
const TS = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{6})(Z?)$/;
function exactDec(s) { // normalized exact decimal text
  let [i, f = ''] = String(s).split('.');
  const neg = i.startsWith('-');
  i = i.replace('-', '').replace(/^0+(?=\d)/, '');
  f = f.replace(/0+$/, '');
  const t = f ? `${i}.${f}` : i;
  return neg && t !== '0' ? '-' + t : t;
}
function tsMicros(s) {
  const m = TS.exec(s);
  if (!m) return null;
  const d = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
  const dt = new Date(d); dt.setUTCFullYear(+m[1]); // years below 100
  return [BigInt(dt.getTime()) * 1000n + BigInt(m[7]), m[8]];
}
function same(k, a, b) {
  if (JSON.stringify(a) === JSON.stringify(b)) return true;
  if (a === null || b === null) return false;
  const numeric = (v) => typeof v === 'number' || (typeof v === 'string' && DEC.test(v) && !/^0x/.test(v));
  if (numeric(a) && numeric(b)) {
    if (typeof a === 'number' || typeof b === 'number' || rounding) {
      const x = Number(a), y = Number(b);
      return x === y || Math.abs(x - y) <= 1e-12 * Math.max(Math.abs(x), Math.abs(y));
    }
    return exactDec(a) === exactDec(b);
  }
  const ta = typeof a === 'string' && tsMicros(a), tb = typeof b === 'string' && tsMicros(b);
  if (ta && tb && ta[1] === tb[1] && (rounding || msKeys.has(k))) {
    const d = ta[0] > tb[0] ? ta[0] - tb[0] : tb[0] - ta[0];
    return d <= 1000n;
  }
  return false;
}
let bad = 0;
if (exp.length !== got.length) { console.error(`rows: expected ${exp.length}, got ${got.length}`); bad++; }
for (let r = 0; r < Math.min(exp.length, got.length); r++) {
  const ke = Object.keys(exp[r]), kg = Object.keys(got[r]);
  if (ke.join(',') !== kg.join(',')) { console.error(`row ${r + 1}: columns ${kg} instead of ${ke}`); bad++; continue; }
  for (const k of ke) {
    if (!same(k, exp[r][k], got[r][k])) {
      console.error(`row ${r + 1} column ${k}: expected ${JSON.stringify(exp[r][k]).slice(0, 80)}, got ${JSON.stringify(got[r][k]).slice(0, 80)}`);
      bad++;
    }
  }
}
process.exit(bad ? 1 : 0);
