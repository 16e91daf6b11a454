// tests/integration/stream_check.mjs: checks for the stream's integration tests, on JSON
// lines as `mssql-cdc sim query --format jsonl` and `mssql-cdc table cat --format jsonl`
// print them. Exit 0 when the check holds, 1 with a message naming the first difference.
//
//   node stream_check.mjs bronze-vs-ct CT.jsonl BRONZE.jsonl
//       bronze's change rows (operation 1-4) are exactly the change table's rows, each once
//       (multiset equality on LSNs, operation, command id and every captured column);
//       within a batch in the order (_start_lsn, _command_id, _seqval, _operation), and
//       each batch after the one before it.
//   node stream_check.mjs once-vs-ct CT.jsonl BRONZE.jsonl
//       only the first part: each change row exactly once (for a bronze written by
//       several app ids, whose batch ids start again at 0).
//   node stream_check.mjs facts-vs-bronze FACTS.jsonl BRONZE.jsonl APP_ID
//       one micro-batch facts row per batch id 0..K of APP_ID (no gaps, no repeats), and
//       each row's rows, per-operation counts, LSN and commit-time ranges match bronze's
//       rows of that _batch_id; bronze has no batch without a facts row.
//   node stream_check.mjs many CT.jsonl FACTS.jsonl APP=BRONZE.jsonl...
//       both checks above for several streams at once.
//   node stream_check.mjs count FILE.jsonl [KEY=VALUE]...
//       prints the number of rows matching every KEY=VALUE (null matches "null").
//   node stream_check.mjs get FILE.jsonl FIELD [KEY=VALUE]...
//       prints FIELD of the first matching row.
import { readFileSync } from 'node:fs';

const rows = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
let prefix = '';
const fail = (msg) => { console.error(`stream_check: ${prefix}${msg}`); process.exit(1); };
const meta = new Set(['_capture_instance', '_start_lsn', '_seqval', '_operation', '_command_id',
  '_commit_ts', '_batch_id', '_snapshot', '_chunk']);

function ctKey(r, cols) {
  return JSON.stringify([r['__$start_lsn'], r['__$seqval'], Number(r['__$operation']),
    Number(r['__$command_id']), ...cols.map((c) => r[c])]);
}
function bronzeKey(r, cols) {
  return JSON.stringify([r._start_lsn, r._seqval, Number(r._operation), Number(r._command_id),
    ...cols.map((c) => r[c])]);
}
function cmpOrder(a, b) {
  const k = (r) => [r._start_lsn, Number(r._command_id), r._seqval, Number(r._operation)];
  const x = k(a), y = k(b);
  for (let i = 0; i < 4; i++) if (x[i] < y[i]) return -1; else if (x[i] > y[i]) return 1;
  return 0;
}

function bronzeVsCt(ct, bronzeAll, onceOnly = false) {
  const bronze = bronzeAll.filter((r) => Number(r._operation) !== 0);
  const cols = bronze.length ? Object.keys(bronze[0]).filter((c) => !meta.has(c))
    : ct.length ? Object.keys(ct[0]).filter((c) => !c.startsWith('__$')) : [];
  const want = new Map();
  for (const r of ct) { const k = ctKey(r, cols); want.set(k, (want.get(k) || 0) + 1); }
  for (const r of bronze) {
    const k = bronzeKey(r, cols);
    const n = want.get(k) || 0;
    if (n === 0) fail(`bronze row not in the change table (or doubled): ${k}`);
    want.set(k, n - 1);
  }
  for (const [k, n] of want) if (n > 0) fail(`change row missing from bronze: ${k}`);
  if (onceOnly) return `${bronze.length} change rows, each once`;
  // a reader lists files in any order: rows are ordered within a batch (one file), and
  // batch after batch by _batch_id
  const byBatch = new Map();
  for (const r of bronze) {
    const b = Number(r._batch_id);
    if (!byBatch.has(b)) byBatch.set(b, []);
    byBatch.get(b).push(r);
  }
  let prevMax = null;
  for (const b of [...byBatch.keys()].sort((x, y) => x - y)) {
    const rs = byBatch.get(b);
    for (let i = 1; i < rs.length; i++)
      if (cmpOrder(rs[i - 1], rs[i]) > 0)
        fail(`batch ${b} out of order at row ${i}: ${rs[i - 1]._start_lsn} before ${rs[i]._start_lsn}`);
    if (prevMax !== null && rs[0]._start_lsn <= prevMax)
      fail(`batch ${b} starts at ${rs[0]._start_lsn}, not after the batch before it (${prevMax})`);
    prevMax = rs[rs.length - 1]._start_lsn;
  }
  return `${bronze.length} change rows, each once, in order`;
}

function factsVsBronze(factsAll, bronzeAll, app) {
  const facts = factsAll.filter((r) => r.app_id === app && r.event === null);
  const bronze = bronzeAll.filter((r) => Number(r._operation) !== 0);
  const byBatch = new Map();
  for (const r of bronze) {
    const b = Number(r._batch_id);
    if (!byBatch.has(b)) byBatch.set(b, []);
    byBatch.get(b).push(r);
  }
  const ids = facts.map((f) => Number(f.batch_id)).sort((a, b) => a - b);
  ids.forEach((id, i) => { if (id !== i) fail(`facts batch ids not 0..K once each: ${ids.join(',')}`); });
  for (const f of facts) {
    const b = byBatch.get(Number(f.batch_id)) || [];
    const n = (op) => b.filter((r) => Number(r._operation) === op).length;
    const lsns = b.map((r) => r._start_lsn).sort();
    const ts = b.map((r) => r._commit_ts).sort();
    const want = { rows: b.length, deletes: n(1), inserts: n(2), updates: n(4),
      min_lsn: lsns[0] ?? null, max_lsn: lsns[lsns.length - 1] ?? null,
      min_commit_ts: ts[0] ?? null, max_commit_ts: ts[ts.length - 1] ?? null };
    for (const [k, v] of Object.entries(want)) {
      let got = f[k];
      if (typeof v === 'number') got = Number(got);
      if (got !== v) fail(`batch ${f.batch_id}: facts ${k}=${JSON.stringify(f[k])}, bronze ${JSON.stringify(v)}`);
    }
    if (f.end_lsn === null || f.end_lsn < (want.max_lsn ?? '')) fail(`batch ${f.batch_id}: end_lsn ${f.end_lsn} below its rows`);
  }
  for (const b of byBatch.keys()) if (!facts.some((f) => Number(f.batch_id) === b)) fail(`bronze batch ${b} has no facts row`);
  return `${facts.length} batches, facts match bronze`;
}

const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'bronze-vs-ct' || cmd === 'once-vs-ct') {
  console.log(`ok: ${bronzeVsCt(rows(args[0]), rows(args[1]), cmd === 'once-vs-ct')}`);
} else if (cmd === 'facts-vs-bronze') {
  console.log(`ok: ${factsVsBronze(rows(args[0]), rows(args[1]), args[2])}`);
} else if (cmd === 'many') {
  // many CT.jsonl FACTS.jsonl APP=BRONZE.jsonl...: both checks for every stream
  const ct = rows(args[0]), facts = rows(args[1]);
  for (const a of args.slice(2)) {
    const i = a.indexOf('=');
    const app = a.slice(0, i), bronze = rows(a.slice(i + 1));
    prefix = `${app}: `;
    bronzeVsCt(ct, bronze);
    factsVsBronze(facts, bronze, app);
  }
  console.log(`ok: ${args.length - 2} streams`);
} else if (cmd === 'count' || cmd === 'get') {
  // count FILE [KEY=VALUE...] | get FILE FIELD [KEY=VALUE...]: rows matching every filter
  const file = args.shift();
  const field = cmd === 'get' ? args.shift() : null;
  let r = rows(file);
  for (const f of args) {
    const i = f.indexOf('=');
    const k = f.slice(0, i), v = f.slice(i + 1);
    r = r.filter((x) => String(x[k]) === v);
  }
  if (cmd === 'count') console.log(r.length);
  else if (!r.length) fail(`no row matches ${args.join(' ')}`);
  else console.log(typeof r[0][field] === 'string' ? r[0][field] : JSON.stringify(r[0][field]));
} else {
  fail(`unknown command ${cmd}`);
}
