// tests/integration/as_of_check.mjs: the oracle of the as-of tests, computed from the
// simulator's change table alone (not from mssql-cdc's code).
//   node as_of_check.mjs state CT.jsonl LSN OURS.jsonl
//     the source table as it was at LSN (the commit at LSN included): every change with
//     __$start_lsn <= LSN replayed in log order (__$start_lsn, __$seqval, __$operation) on
//     the empty table (a delete or an update's before image removes the key, an insert or
//     an after image sets it), compared with OURS (`table cat --as-of-lsn --format jsonl`
//     of silver): the captured columns and _start_lsn of every row.
//   node as_of_check.mjs changes CT.jsonl LSN OURS.jsonl
//     bronze as of LSN: exactly the change rows with __$start_lsn <= LSN.
//   node as_of_check.mjs soft CT.jsonl LSN OURS.jsonl MAP.jsonl
//     silver with soft deletes as of LSN: per key, each transaction up to LSN gives the
//     key's state after it (a delete or before image: absent, an insert or after image: its
//     values); a state equal to the one before is no change (the first is compared with
//     absent). One row per key that had a present state: a live key with its values,
//     _start_lsn and _commit_ts (from MAP, cdc.lsn_time_mapping) of its last present state
//     and _deleted false; a deleted key with the values its delete removed, the same
//     _start_lsn/_commit_ts, _deleted true and the delete's LSN and commit time. Every
//     column is compared.
// Exit 0 when equal, 1 with the first differences.
import { readFileSync } from 'node:fs';

const lines = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const [cmd, ctFile, lsnArg, oursFile, mapFile] = process.argv.slice(2);
const norm = (l) => '0x' + l.replace(/^0x/i, '').toUpperCase().padStart(20, '0');
const L = norm(lsnArg);
const ct = lines(ctFile).sort((a, b) =>
  a['__$start_lsn'] < b['__$start_lsn'] ? -1 : a['__$start_lsn'] > b['__$start_lsn'] ? 1
    : a['__$seqval'] < b['__$seqval'] ? -1 : a['__$seqval'] > b['__$seqval'] ? 1
    : a['__$operation'] - b['__$operation']);
const ours = lines(oursFile);
const captured = Object.keys(ct[0] || {}).filter((k) => !k.startsWith('__$'));
const keyOf = (r) => JSON.stringify(r[captured[0]]);
let want;
let got;
if (cmd === 'state') {
  const state = new Map();
  for (const r of ct) {
    if (r['__$start_lsn'] > L) break;
    const op = r['__$operation'];
    if (op === 1 || op === 3) state.delete(keyOf(r));
    else {
      const row = {};
      for (const c of captured) row[c] = r[c];
      row._start_lsn = r['__$start_lsn'];
      state.set(keyOf(r), row);
    }
  }
  want = [...state.values()].map((r) => JSON.stringify(r)).sort();
  got = ours.map((r) => {
    const row = {};
    for (const c of captured) row[c] = r[c];
    row._start_lsn = r._start_lsn;
    return JSON.stringify(row);
  }).sort();
} else if (cmd === 'soft') {
  const commitTs = new Map(lines(mapFile).map((r) => [r.start_lsn, r.tran_end_time]));
  const ts = (lsn) => {
    const t = commitTs.get(lsn);
    if (!t) throw new Error(`no commit time for ${lsn}`);
    return new Date(t.replace(' ', 'T') + (/[zZ+]/.test(t.slice(19)) ? '' : 'Z')).getTime();
  };
  const last = new Map(); // key -> {vals|null, gone, lsn, live}
  const tx = new Map();   // key -> {vals|null, gone} within the transaction
  let txLsn = null;
  const flush = () => {
    for (const [k, t] of tx) {
      const p = last.get(k);
      const prev = p ? p.vals : null;
      if (JSON.stringify(prev) === JSON.stringify(t.vals)) continue;
      last.set(k, { vals: t.vals, gone: t.gone, lsn: txLsn, live: t.vals ? txLsn : p && p.live });
    }
    tx.clear();
  };
  for (const r of ct) {
    if (r['__$start_lsn'] > L) break;
    if (r['__$start_lsn'] !== txLsn) { flush(); txLsn = r['__$start_lsn']; }
    const vals = Object.fromEntries(captured.map((c) => [c, r[c]]));
    const op = r['__$operation'];
    tx.set(keyOf(r), op === 1 || op === 3 ? { vals: null, gone: vals } : { vals, gone: null });
  }
  flush();
  want = [];
  for (const s of last.values()) {
    if (!s.live) continue;
    want.push(JSON.stringify({ ...(s.vals || s.gone), _start_lsn: s.live, _commit_ts: ts(s.live),
      _deleted: !s.vals, _deleted_lsn: s.vals ? null : s.lsn, _deleted_ts: s.vals ? null : ts(s.lsn) }));
  }
  want.sort();
  const tsOf = (v) => (v === null ? null : new Date(v + 'Z').getTime());
  got = ours.map((r) => JSON.stringify({ ...Object.fromEntries(captured.map((c) => [c, r[c]])),
    _start_lsn: r._start_lsn, _commit_ts: tsOf(r._commit_ts), _deleted: r._deleted,
    _deleted_lsn: r._deleted_lsn, _deleted_ts: tsOf(r._deleted_ts) })).sort();
} else if (cmd === 'changes') {
  const pick = (r, lsn, op, seq) => JSON.stringify([lsn, seq, op, ...captured.map((c) => r[c])]);
  want = ct.filter((r) => r['__$start_lsn'] <= L)
    .map((r) => pick(r, r['__$start_lsn'], r['__$operation'], r['__$seqval'])).sort();
  got = ours.map((r) => pick(r, r._start_lsn, r._operation, r._seqval)).sort();
} else {
  console.error(`usage: as_of_check.mjs state|changes|soft CT.jsonl LSN OURS.jsonl [MAP.jsonl] (not '${cmd}')`);
  process.exit(2);
}
const w = new Set(want);
const g = new Set(got);
const missing = want.filter((x) => !g.has(x));
const extra = got.filter((x) => !w.has(x));
if (missing.length || extra.length || want.length !== got.length) {
  console.error(`as of ${L}: ${want.length} rows expected, ${got.length} read`);
  for (const m of missing.slice(0, 5)) console.error(`  missing ${m}`);
  for (const e of extra.slice(0, 5)) console.error(`  extra   ${e}`);
  process.exit(1);
}
console.log(`as of ${L}: ${got.length} rows, equal`);
