// tests/integration/silver_check.mjs: checks for silver's integration tests, on JSON lines
// as `mssql-cdc table cat --format jsonl` and `mssql-cdc sim query --format jsonl` print
// them. Exit 0 when the check holds, 1 with a message naming the first difference.
//
//   node silver_check.mjs silver-vs-source SILVER.jsonl SOURCE.jsonl
//       silver's rows without _start_lsn and _commit_ts equal the source's rows as a
//       multiset (same columns, same values); every silver row has a _start_lsn.
//   node silver_check.mjs json FILE KEY
//       prints KEY of the JSON document in FILE (of its first element when it is an array;
//       null when absent).
import { readFileSync } from 'node:fs';

const rows = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const fail = (msg) => { console.error(`silver_check: ${msg}`); process.exit(1); };
const canon = (r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, r[k]]));

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'silver-vs-source') {
  const silver = rows(args[0]);
  const source = rows(args[1]);
  const want = new Map();
  for (const r of source) { const k = canon(r); want.set(k, (want.get(k) || 0) + 1); }
  for (const r of silver) {
    if (typeof r._start_lsn !== 'string' || !/^0x[0-9A-F]{20}$/.test(r._start_lsn)) fail(`silver row without a _start_lsn: ${JSON.stringify(r)}`);
    if (!('_commit_ts' in r)) fail(`silver row without _commit_ts: ${JSON.stringify(r)}`);
    const c = { ...r };
    delete c._start_lsn;
    delete c._commit_ts;
    const k = canon(c);
    const n = want.get(k) || 0;
    if (n === 0) fail(`silver row not in the source (or doubled): ${k}`);
    want.set(k, n - 1);
  }
  for (const [k, n] of want) if (n > 0) fail(`source row missing from silver: ${k}`);
  console.log(`${silver.length} rows equal`);
} else if (cmd === 'json') {
  let doc = JSON.parse(readFileSync(args[0], 'utf8'));
  if (Array.isArray(doc)) doc = doc[0] || {};
  const v = doc[args[1]];
  console.log(v === null || v === undefined ? 'null' : typeof v === 'object' ? JSON.stringify(v) : String(v));
} else {
  fail(`unknown check ${cmd}`);
}
