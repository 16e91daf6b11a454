// tests/integration/scd2_check.mjs: the oracle of the scd2 tests, computed from the
// simulator's change table and lsn_time_mapping alone (not from mssql-cdc's code).
//   node scd2_check.mjs CT.jsonl MAP.jsonl KEY OURS.jsonl [UPTO_LSN] [soft]
// Per key, the changes of one transaction (one __$start_lsn) in log order (__$seqval,
// __$operation) give the key's state after it: a delete or an update's before image
// removes it, an insert or an after image sets it. A state equal to the one before opens
// no version; every other present state is a version valid from its LSN until the next
// state's LSN (NULL: current), with the commit times of those LSNs. Compared with OURS
// (`table cat --format jsonl` of the scd2 silver table), every column. With UPTO_LSN
// only the changes up to it count (what bronze holds). With `soft`, the table is scd1 with
// soft deletes instead: one row per key that ever existed, its last state: a live one with
// _start_lsn/_commit_ts of its last image and _deleted false, a deleted one with the values
// its delete removed, _deleted true and the delete's LSN and commit time.
//   node scd2_check.mjs CT.jsonl MAP.jsonl KEY OURS.jsonl UPTO resnap S LOST_AFTER FULL_CT.jsonl
// Across a re-snapshot at S after a loss (ADR 0040): the changes bronze could read are
// those (of FULL_CT and CT) up to LOST_AFTER and after S; at S every key takes the source table's state
// there (FULL_CT, the change table saved before cleanup purged it plus CT, replayed up to
// S): present with those values or absent, as one more state, so a version the snapshot
// disagrees with (or that it lacks) is closed at S and the snapshot's opens there.
import { readFileSync } from 'node:fs';

const lines = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const [ctFile, mapFile, key, oursFile, upto, how, resS, lostAfter, fullFile] = process.argv.slice(2);
const order = (a, b) =>
  a['__$start_lsn'] < b['__$start_lsn'] ? -1 : a['__$start_lsn'] > b['__$start_lsn'] ? 1
    : a['__$seqval'] < b['__$seqval'] ? -1 : a['__$seqval'] > b['__$seqval'] ? 1
    : a['__$operation'] - b['__$operation'];
// every change: with resnap, those saved before cleanup purged them too
const every = () => {
  const seen = new Set();
  return [...(how === 'resnap' ? lines(fullFile) : []), ...lines(ctFile)].filter((r) => {
    const id = `${r['__$start_lsn']}/${r['__$seqval']}/${r['__$operation']}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
};
const ct = every().filter((r) => !upto || r['__$start_lsn'] <= upto)
  .filter((r) => how !== 'resnap' || r['__$start_lsn'] <= lostAfter || r['__$start_lsn'] > resS)
  .sort(order);
const commitTs = new Map(lines(mapFile).map((r) => [r.start_lsn, r.tran_end_time]));
const captured = Object.keys(ct[0] || {}).filter((k) => !k.startsWith('__$'));
const ts = (lsn) => {
  const t = commitTs.get(lsn);
  if (!t) throw new Error(`no commit time for ${lsn}`);
  return new Date(t.replace(' ', 'T') + (/[zZ+]/.test(t.slice(19)) ? '' : 'Z')).getTime();
};
const states = new Map(); // key -> [{lsn, vals|null}]
const cur = new Map();    // key -> state within the current transaction
const gone = new Map();   // key@lsn -> the values a delete in that transaction removed
let txLsn = null;
const flush = () => {
  for (const [k, v] of cur) {
    const seq = states.get(k) || [];
    const prev = seq.length ? seq[seq.length - 1].vals : null;
    if (JSON.stringify(prev) !== JSON.stringify(v)) seq.push({ lsn: txLsn, vals: v });
    states.set(k, seq);
  }
  cur.clear();
};
// the source table at S, from every change (saved before cleanup, and after)
let snap = null;
if (how === 'resnap') {
  const full = every().filter((r) => r['__$start_lsn'] <= resS).sort(order);
  snap = new Map();
  for (const r of full) {
    const op = r['__$operation'];
    if (op === 1 || op === 3) snap.delete(JSON.stringify(r[key]));
    else snap.set(JSON.stringify(r[key]), Object.fromEntries(captured.map((c) => [c, r[c]])));
  }
}
const atSnapshot = () => { // every key's state at S: one more transaction
  flush();
  txLsn = resS;
  for (const k of new Set([...states.keys(), ...snap.keys()])) cur.set(k, snap.get(k) || null);
  flush();
  snap = null;
};
for (const r of ct) {
  if (snap && r['__$start_lsn'] > resS) atSnapshot();
  if (r['__$start_lsn'] !== txLsn) { flush(); txLsn = r['__$start_lsn']; }
  const k = JSON.stringify(r[key]);
  const op = r['__$operation'];
  const vals = Object.fromEntries(captured.map((c) => [c, r[c]]));
  if (op === 1 || op === 3) { cur.set(k, null); gone.set(`${k}@${txLsn}`, vals); }
  else cur.set(k, vals);
}
flush();
if (snap) atSnapshot();
const want = [];
const got = [];
const tsOf = (v) => (v === null ? null : new Date(v + 'Z').getTime());
if (how === 'soft') {
  for (const [k, seq] of states) {
    const fin = seq[seq.length - 1];
    const live = [...seq].reverse().find((s) => s.vals);
    if (!live) continue;
    want.push(JSON.stringify({ ...(fin.vals || gone.get(`${k}@${fin.lsn}`)), _start_lsn: live.lsn,
      _commit_ts: ts(live.lsn), _deleted: !fin.vals, _deleted_lsn: fin.vals ? null : fin.lsn,
      _deleted_ts: fin.vals ? null : ts(fin.lsn) }));
  }
  for (const r of lines(oursFile)) got.push(JSON.stringify({ ...Object.fromEntries(captured.map((c) => [c, r[c]])),
    _start_lsn: r._start_lsn, _commit_ts: tsOf(r._commit_ts), _deleted: r._deleted,
    _deleted_lsn: r._deleted_lsn, _deleted_ts: tsOf(r._deleted_ts) }));
} else {
  for (const seq of states.values()) {
    for (let i = 0; i < seq.length; i++) {
      if (!seq[i].vals) continue;
      const next = seq[i + 1];
      want.push(JSON.stringify({ ...seq[i].vals, _valid_from_lsn: seq[i].lsn, _valid_to_lsn: next ? next.lsn : null,
        _valid_from_ts: ts(seq[i].lsn), _valid_to_ts: next ? ts(next.lsn) : null, _is_current: !next }));
    }
  }
  for (const r of lines(oursFile)) got.push(JSON.stringify({
    ...Object.fromEntries(captured.map((c) => [c, r[c]])),
    _valid_from_lsn: r._valid_from_lsn, _valid_to_lsn: r._valid_to_lsn,
    _valid_from_ts: tsOf(r._valid_from_ts), _valid_to_ts: tsOf(r._valid_to_ts), _is_current: r._is_current }));
}
want.sort();
got.sort();
const w = new Set(want);
const g = new Set(got);
const missing = want.filter((x) => !g.has(x));
const extra = got.filter((x) => !w.has(x));
if (missing.length || extra.length || want.length !== got.length) {
  console.error(`${want.length} rows expected, ${got.length} in the table`);
  for (const m of missing.slice(0, 5)) console.error(`  missing ${m}`);
  for (const e of extra.slice(0, 5)) console.error(`  extra   ${e}`);
  process.exit(1);
}
console.log(`${got.length} rows, equal`);
