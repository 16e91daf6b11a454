// bench/duck_reconcile.mjs: DuckDB's side of bench/reconcile.sh: the rows and key sums per
// fine bucket of width ceil(span / 100,000) over silver's Parquet files, as reconcile's
// tier 1 computes them, timed inside the process (startup left out) REPEAT times.
// Usage: node bench/duck_reconcile.mjs THREADS REPEAT FILE.parquet... Prints per pass
// "duckdb         S s, CPU C s (T threads)" and the check line bench_reconcile prints.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', 'tests', 'node', 'package.json'));
const { DuckDBInstance } = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
const [threads, repeat, ...files] = process.argv.slice(2);
if (!/^[0-9]+$/.test(threads ?? '') || !/^[0-9]+$/.test(repeat ?? '') || files.length === 0) {
  console.error('usage: node duck_reconcile.mjs THREADS REPEAT FILE.parquet...');
  process.exit(2);
}
const list = '[' + files.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ') + ']';
const sql = `WITH k AS (SELECT order_id FROM read_parquet(${list})),
  m AS (SELECT min(order_id) AS lo, (max(order_id) - min(order_id) + 1 + 99999) // 100000 AS width FROM k),
  b AS (SELECT (order_id - lo) // width AS b, count(*) AS n, sum(order_id::HUGEINT) AS s FROM k, m GROUP BY 1)
SELECT count(*) AS buckets, sum(n)::BIGINT AS n, sum(b::HUGEINT * n)::VARCHAR AS bx, sum(s)::VARCHAR AS s FROM b`;
const db = await DuckDBInstance.create(':memory:', { threads });
const con = await db.connect();
for (let i = 0; i < Number(repeat); i++) {
  const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
  const reader = await con.runAndReadAll(sql);
  const s = Number(process.hrtime.bigint() - t0) / 1e9, c = process.cpuUsage(c0);
  const [r] = reader.getRowObjectsJson();
  console.log(`duckdb         ${s.toFixed(3)} s, CPU ${((c.user + c.system) / 1e6).toFixed(3)} s (${threads} thread${threads === '1' ? '' : 's'})`);
  console.log(`check buckets ${r.buckets} rows ${r.n} bucket_x_rows ${r.bx} key_sum ${r.s}`);
}
