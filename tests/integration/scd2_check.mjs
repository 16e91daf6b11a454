// tests/integration/scd2_check.mjs: the oracle of the scd2 tests, computed from the
// simulator's change table and lsn_time_mapping alone (not from mssql-cdc's code).
//   node scd2_check.mjs CT.jsonl MAP.jsonl KEY OURS.jsonl [UPTO_LSN]
// Per key, the changes of one transaction (one __$start_lsn) in log order (__$seqval,
// __$operation) give the key's state after it: a delete or an update's before image
// removes it, an insert or an after image sets it. A state equal to the one before opens
// no version; every other present state is a version valid from its LSN until the next
// state's LSN (NULL: current), with the commit times of those LSNs. Compared with OURS
// (`table cat --format jsonl` of the scd2 silver table), every column. With UPTO_LSN
// only the changes up to it count (what bronze holds).
import { readFileSync } from 'node:fs';

const lines = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const [ctFile, mapFile, key, oursFile, upto] = process.argv.slice(2);
const ct = lines(ctFile).filter((r) => !upto || r['__$start_lsn'] <= upto).sort((a, b) =>
  a['__$start_lsn'] < b['__$start_lsn'] ? -1 : a['__$start_lsn'] > b['__$start_lsn'] ? 1
    : a['__$seqval'] < b['__$seqval'] ? -1 : a['__$seqval'] > b['__$seqval'] ? 1
    : a['__$operation'] - b['__$operation']);
const commitTs = new Map(lines(mapFile).map((r) => [r.start_lsn, r.tran_end_time]));
const captured = Object.keys(ct[0] || {}).filter((k) => !k.startsWith('__$'));
const ts = (lsn) => {
  const t = commitTs.get(lsn);
  if (!t) throw new Error(`no commit time for ${lsn}`);
  return new Date(t.replace(' ', 'T') + (/[zZ+]/.test(t.slice(19)) ? '' : 'Z')).getTime();
};
const states = new Map(); // key -> [{lsn, vals|null}]
const cur = new Map();    // key -> state within the current transaction
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
for (const r of ct) {
  if (r['__$start_lsn'] !== txLsn) { flush(); txLsn = r['__$start_lsn']; }
  const k = JSON.stringify(r[key]);
  const op = r['__$operation'];
  if (op === 1 || op === 3) cur.set(k, null);
  else cur.set(k, Object.fromEntries(captured.map((c) => [c, r[c]])));
}
flush();
const want = [];
for (const seq of states.values()) {
  for (let i = 0; i < seq.length; i++) {
    if (!seq[i].vals) continue;
    const next = seq[i + 1];
    want.push(JSON.stringify({ ...seq[i].vals, _valid_from_lsn: seq[i].lsn, _valid_to_lsn: next ? next.lsn : null,
      _valid_from_ts: ts(seq[i].lsn), _valid_to_ts: next ? ts(next.lsn) : null, _is_current: !next }));
  }
}
const got = lines(oursFile).map((r) => JSON.stringify({
  ...Object.fromEntries(captured.map((c) => [c, r[c]])),
  _valid_from_lsn: r._valid_from_lsn, _valid_to_lsn: r._valid_to_lsn,
  _valid_from_ts: r._valid_from_ts === null ? null : new Date(r._valid_from_ts + 'Z').getTime(),
  _valid_to_ts: r._valid_to_ts === null ? null : new Date(r._valid_to_ts + 'Z').getTime(),
  _is_current: r._is_current }));
want.sort();
got.sort();
const w = new Set(want);
const g = new Set(got);
const missing = want.filter((x) => !g.has(x));
const extra = got.filter((x) => !w.has(x));
if (missing.length || extra.length || want.length !== got.length) {
  console.error(`${want.length} versions expected, ${got.length} in the table`);
  for (const m of missing.slice(0, 5)) console.error(`  missing ${m}`);
  for (const e of extra.slice(0, 5)) console.error(`  extra   ${e}`);
  process.exit(1);
}
console.log(`${got.length} versions, equal`);
