// tests/integration/odbc_compare.mjs: two tables' rows (jsonl from `mssql-cdc table cat`) are
// the same set of rows (in any order: facts and control rows come in file order), leaving
// out the named keys (times of our own actions, lags measured
// against a clock). Used by the SQL Server source's tests to compare what a stream wrote
// through `--source odbc:` (over `mssql-cdc sim serve`) with what it wrote through `sim:`.
//   node odbc_compare.mjs A.jsonl B.jsonl [KEY,KEY...]
// Exit 0 when equal; 1 naming the first difference.
import { readFileSync } from 'node:fs';

const [a, b, drop = ''] = process.argv.slice(2);
const skip = new Set(drop.split(',').filter(Boolean));
const rows = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => {
  const o = JSON.parse(l);
  for (const k of skip) delete o[k];
  return JSON.stringify(o);
});
const ra = rows(a).sort(), rb = rows(b).sort();
for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
  if (ra[i] !== rb[i]) {
    console.error(`row ${i + 1} differs:\n  ${a}: ${ra[i] ?? '(none)'}\n  ${b}: ${rb[i] ?? '(none)'}`);
    process.exit(1);
  }
}
console.log(`${ra.length} rows equal`);
