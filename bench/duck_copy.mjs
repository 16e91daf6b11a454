// bench/duck_copy.mjs: time one SQL statement in DuckDB (single thread) and print
// {"seconds": ...}. Usage: node bench/duck_copy.mjs 'COPY ...'. Uses the DuckDB package
// installed for the tests (tests/node/node_modules).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const require = createRequire(path.join(here, '..', 'tests', 'node', 'package.json'));
const { DuckDBInstance } = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);
const db = await DuckDBInstance.create(':memory:', { threads: '1' });
const con = await db.connect();
const t0 = performance.now();
await con.run(process.argv[2]);
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ seconds: Number(seconds.toFixed(3)) }) + '\n');
