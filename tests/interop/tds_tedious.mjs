// tests/interop/tds_tedious.mjs: run SELECTs through Node's tedious (npm, tests/node) against
// `sim serve` and print each result's rows as JSON lines in the encoding of `sim query
// --format jsonl` (architecture §7). tedious reads decimals as JavaScript numbers and
// datetime2 to the millisecond: tds_compare.mjs --rounding allows for that.
//   node tds_tedious.mjs PORT USER PASSWORD DATABASE [--ca FILE] [--params JSON] SQL...
// --ca: encrypt the connection (TLS) and validate the server's certificate against FILE.
// --params gives the next SQL's parameters (a JSON object, "@name" in the SQL), sent as
// sp_executesql's typed parameters: ints as int, "dec:TEXT" as decimal(p,s), "ts:TEXT" as
// datetime2, other strings as nvarchar.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), '../node/package.json'));
const { Connection, Request, TYPES } = require('tedious');
const [port, user, password, database, ...rest] = process.argv.slice(2);
let sqls = rest, ca = null;
if (sqls[0] === '--ca') { ca = require('node:fs').readFileSync(sqls[1]); sqls = sqls.slice(2); }

const pad = (n, w = 2) => String(n).padStart(w, '0');
function ts(d, zulu) {
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:` +
    `${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}000${zulu ? 'Z' : ''}`;
}
function enc(col, v) {
  if (v === null || v === undefined) return null;
  const t = col.type.name;
  if (Buffer.isBuffer(v)) return '0x' + v.toString('hex').toUpperCase();
  if (v instanceof Date) {
    if (t === 'Date') return ts(v, false).slice(0, 10);
    if (t === 'Time') return ts(v, false).slice(11, 26);
    return ts(v, t === 'DateTimeOffset');
  }
  if (t === 'Decimal' || t === 'Numeric' || t === 'Money' || t === 'SmallMoney') return String(v);
  if (t === 'UniqueIdentifier') return String(v).toUpperCase();
  return v;
}

const conn = new Connection({
  server: '127.0.0.1',
  authentication: { type: 'default', options: { userName: user, password } },
  options: ca
    ? { port: +port, database, encrypt: true, trustServerCertificate: false, serverName: 'localhost',
        cryptoCredentialsDetails: { ca }, useUTC: true }
    : { port: +port, database, encrypt: false, trustServerCertificate: true, useUTC: true, rowCollectionOnDone: false },
});
function run(i) {
  if (i >= sqls.length) { conn.close(); return; }
  let params = null;
  if (sqls[i] === '--params') { params = JSON.parse(sqls[i + 1]); i += 2; }
  const req = new Request(sqls[i], (err) => {
    if (err) { console.error(`tedious: ${err.message}`); process.exitCode = 1; conn.close(); return; }
    run(i + 1);
  });
  for (const [k, v] of Object.entries(params || {})) {
    if (typeof v === 'number') req.addParameter(k, TYPES.Int, v);
    else if (v.startsWith('dec:')) {
      const t = v.slice(4), scale = (t.split('.')[1] || '').length;
      req.addParameter(k, TYPES.Decimal, Number(t), { precision: 20, scale });
    } else if (v.startsWith('ts:')) req.addParameter(k, TYPES.DateTime2, new Date(v.slice(3) + 'Z'), { scale: 6 });
    else req.addParameter(k, TYPES.NVarChar, v);
  }
  req.on('row', (cols) => {
    const o = {};
    for (const c of cols) o[c.metadata.colName] = enc(c.metadata, c.value);
    process.stdout.write(JSON.stringify(o) + '\n');
  });
  conn.execSql(req);
}
conn.on('connect', (err) => {
  if (err) { console.error(`tedious: ${err.message}`); process.exitCode = 1; return; }
  run(0);
});
conn.connect();
