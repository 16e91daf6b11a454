// tests/integration/run_metrics.mjs: fetch a run's /metrics and parse it with an
// independent Prometheus text-format parser (parse-prometheus-text-format); prints one
// JSON object {family: {key: value}} (key: the table, table/state, source or
// source/query; histograms: their count), exit 1 when it does not parse or a pinned
// family is missing.
//   node run_metrics.mjs URL
import { createRequire } from 'node:module';
const require = createRequire(new URL('../node/package.json', import.meta.url));
const parse = require('parse-prometheus-text-format');

const res = await fetch(process.argv[2]);
if (res.status !== 200) { console.error(`status ${res.status}`); process.exit(1); }
if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') || '')) {
  console.error(`content-type ${res.headers.get('content-type')}`); process.exit(1);
}
const text = await res.text();
const families = parse(text); // throws on a line that is not the text format
const out = {};
for (const f of families) {
  const m = (out[f.name] = {});
  if (f.type === 'HISTOGRAM') {
    // the parser folds a histogram's label sets into one; its _count lines give each table's
    for (const [, table, n] of text.matchAll(new RegExp(`^${f.name}_count\\{table="([^"]*)"\\} (\\S+)$`, 'gm'))) m[table] = Number(n);
    continue;
  }
  for (const s of f.metrics) {
    const l = s.labels || {};
    const key = l.table ? l.table + (l.state ? `/${l.state}` : '')
      : l.source ? l.source + (l.query ? `/${l.query}` : '') : '';
    m[key] = Number(s.value);
  }
}
for (const want of ['mcdc_rows_total', 'mcdc_batches_total', 'mcdc_bytes_total', 'mcdc_batch_duration_seconds',
  'mcdc_ingestion_lag_seconds', 'mcdc_capture_lag_seconds', 'mcdc_verdict_age_seconds',
  'mcdc_retention_headroom_hours', 'mcdc_consecutive_failures', 'mcdc_table_state',
  'mcdc_source_queries_total', 'mcdc_source_errors_total', 'process_resident_memory_bytes',
  'mcdc_uptime_seconds']) {
  if (!out[want]) { console.error(`no family ${want}`); process.exit(1); }
}
console.log(JSON.stringify(out));
