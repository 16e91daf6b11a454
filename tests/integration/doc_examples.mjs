// tests/integration/doc_examples.mjs: every example in the documentation runs, and prints
// what the documentation says it prints. Called by doc_examples.sh with MCDC_BIN, MCDC_SRC.
//
//   node doc_examples.mjs [FILE.md ...]     (default: README.md, docs/guides/*.md,
//                                            docs/reference/cli.md and cli-*.md)
//
// The convention for code blocks in these files (a block's kind is its fence's language):
//   ```sh       shell commands, run in order with `bash -euo pipefail`; a failing command
//               fails the test, named by file and line.
//   ```console  a transcript: a line starting with `$ ` is a command (a line ending in `\`
//               continues on the next one); the lines up to the next `$ ` are what it prints:
//               its stdout, or its stdout followed by its stderr (logs may be left out). In them `...` matches any text within a line, a
//               line of only `...` any number of lines, and any run of blanks any run of
//               blanks. A command must exit 0 unless the next command is `echo $?`.
//   ```sql      DuckDB SQL over the tables the examples before it wrote: `delta_scan('PATH')`
//               reads the Delta table at PATH and a dotted name `a.b` the warehouse's table
//               a.b (node tests/node/doc_sql.mjs); it must run without error.
//   any other language (`text`, `c`, `json`, ...) is not run: synopses, output samples,
//   file layouts. A fence without a language is an error, so nothing is left out by
//   accident.
//   <!-- example: skip REASON -->   on the line before a sh/console/sql block: not run; the
//               reason is printed in the summary.
//   <!-- example: rows N -->        on the line before a sql block: its last statement returns
//               N rows (what the text around it says the query answers).
//   <!-- example: setup             hidden shell lines up to `-->`, run at that point: what a
//   ...                             reader already has (a simulator database, a file).
//   -->
// The blocks of one file run in one bash session in a fresh scratch directory, with
// `mssql-cdc` on the PATH and MSSQL_CDC_WAREHOUSE unset (the default `./lake`); a path
// starting with `/data/` means `<scratch>/data/`. README.md, every guide and cli.md must
// have at least one block that runs; in docs/reference/cli-*.md every `## command` section
// (a lower-case heading such as `## sim init`) must have one that runs or is skipped with
// a reason.
// Exit 0 when everything holds, 1 listing each failure. DOC_EXAMPLES_KEEP=1 keeps the
// scratch directories (they are kept anyway for a file that failed).
import { readFileSync, writeFileSync, mkdtempSync, mkdirSync, symlinkSync, rmSync, existsSync, readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';

const src = process.env.MCDC_SRC;
const bin = process.env.MCDC_BIN;
if (!src || !bin) {
  console.error('doc_examples: MCDC_SRC and MCDC_BIN must be set');
  process.exit(2);
}
const RUN = new Set(['sh', 'console', 'sql']);
const docSql = join(src, 'tests/node/doc_sql.mjs');

function defaultFiles() {
  const ls = (d, re) => readdirSync(join(src, d)).filter((f) => re.test(f)).sort().map((f) => join(src, d, f));
  return [join(src, 'README.md'), ...ls('docs/guides', /\.md$/), ...ls('docs/reference', /^cli(-.*)?\.md$/)];
}

// Parses one markdown file into its blocks: {kind, lang, line (1-based, of the fence),
// body: [lines], bodyLine (first body line), skip (reason or null), section}.
function parse(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks = [];
  const errors = [];
  let section = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (/^## /.test(l)) section = l.slice(3).trim();
    const setup = /^<!-- example: setup\s*$/.exec(l);
    if (setup) {
      const start = i;
      const body = [];
      for (i++; i < lines.length && lines[i].trim() !== '-->'; i++) body.push(lines[i]);
      if (i >= lines.length) errors.push(`${relative(src, file)}:${start + 1}: setup comment without a closing -->`);
      blocks.push({ kind: 'setup', line: start + 1, bodyLine: start + 2, body, skip: null, section });
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(l);
    if (!fence) {
      if (/<!-- example:/.test(l) && !/^<!-- example: (skip \S.*|rows \d+) -->$/.test(l)) {
        errors.push(`${relative(src, file)}:${i + 1}: malformed example comment (want "<!-- example: skip REASON -->", "<!-- example: rows N -->" or "<!-- example: setup")`);
      }
      continue;
    }
    const indent = fence[1].length;
    const lang = fence[3].trim().split(/\s+/)[0] || '';
    const start = i;
    const body = [];
    for (i++; i < lines.length; i++) {
      const c = /^(\s*)(`{3,}|~{3,})\s*$/.exec(lines[i]);
      if (c && c[2][0] === fence[2][0] && c[2].length >= fence[2].length) break;
      body.push(lines[i].slice(Math.min(indent, /^\s*/.exec(lines[i])[0].length)));
    }
    if (i >= lines.length) errors.push(`${relative(src, file)}:${start + 1}: code block is never closed`);
    if (!lang) errors.push(`${relative(src, file)}:${start + 1}: code block without a language (use sh, console or sql to run it, text or another language not to)`);
    let k = start - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const m = k >= 0 ? /^<!-- example: skip (\S.*) -->$/.exec(lines[k].trim()) : null;
    const skip = m ? m[1] : null;
    const rm = k >= 0 ? /^<!-- example: rows (\d+) -->$/.exec(lines[k].trim()) : null;
    const rows = rm ? Number(rm[1]) : null;
    if (rm && lang !== 'sql') errors.push(`${relative(src, file)}:${start + 1}: "example: rows" before a ${lang || 'bare'} block; it is for sql blocks`);
    if (skip && !RUN.has(lang)) errors.push(`${relative(src, file)}:${start + 1}: "example: skip" before a ${lang || 'bare'} block, which never runs`);
    blocks.push({ kind: RUN.has(lang) ? lang : 'other', lang, line: start + 1, bodyLine: start + 2, body, skip, rows, section });
  }
  return { blocks, errors };
}

const shq = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
const dataPaths = (s, scratch) => s.replace(/(^|[\s'"=:(`])\/data\//g, `$1${scratch}/data/`);

// Splits a console block into commands: {text, line, expected: [lines], expectedLine}.
function transcript(block, file, errors) {
  const cmds = [];
  let cur = null;
  for (let j = 0; j < block.body.length; j++) {
    const l = block.body[j];
    if (l.startsWith('$ ')) {
      cur = { text: l.slice(2), line: block.bodyLine + j, expected: [] };
      while (/\\$/.test(cur.text.split('\n').pop()) && j + 1 < block.body.length) cur.text += '\n' + block.body[++j];
      cmds.push(cur);
    } else if (cur) {
      cur.expected.push(l);
    } else if (l.trim() !== '') {
      errors.push(`${relative(src, file)}:${block.bodyLine + j}: console block has output before its first "$ " command`);
    }
  }
  for (const c of cmds) while (c.expected.length && c.expected[c.expected.length - 1].trim() === '') c.expected.pop();
  if (!cmds.length) errors.push(`${relative(src, file)}:${block.line}: console block without a "$ " command`);
  return cmds;
}

const lineRe = (p) => new RegExp('^' + p.trim().split('...').map((part) =>
  part.split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('\\s+')).join('.*') + '$');

// Whether the actual lines match the expected pattern lines (see the header).
function matches(expected, actual) {
  const memo = new Map();
  const go = (e, a) => {
    const key = e * 100003 + a;
    if (memo.has(key)) return memo.get(key);
    let r;
    if (e === expected.length) r = a === actual.length;
    else if (expected[e].trim() === '...') r = go(e + 1, a) || (a < actual.length && go(e, a + 1));
    else r = a < actual.length && lineRe(expected[e]).test(actual[a].trim()) && go(e + 1, a + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

async function runFile(file) {
  const rel = relative(src, file);
  const { blocks, errors } = parse(file);
  const failures = errors.slice();
  const scratch = mkdtempSync(join(tmpdir(), 'mcdc-docex-'));
  const st = join(scratch, '.doc');
  mkdirSync(join(scratch, 'bin'), { recursive: true });
  mkdirSync(join(scratch, 'data'));
  mkdirSync(st);
  symlinkSync(bin, join(scratch, 'bin', 'mssql-cdc'));
  const script = [];
  const map = []; // script line (1-based) -> markdown line
  const emit = (text, mdLine) => { for (const t of text.split('\n')) { script.push(t); map.push(mdLine); } };
  emit('set -euo pipefail', 0);
  emit(`cd ${shq(scratch)}; export PATH=${shq(join(scratch, 'bin'))}:"$PATH"; unset MSSQL_CDC_WAREHOUSE MSSQL_CDC_SOURCE MCDC_FAILPOINT`, 0);
  emit(`__st=${shq(st)}; __rc=0`, 0);
  emit(`trap 'echo $LINENO >"$__st/errline"' ERR`, 0);
  const consoles = [];
  const sqls = [];
  let ran = 0;
  const skipped = [];
  const sections = new Map();
  for (const b of blocks) {
    if (b.section && !sections.has(b.section)) sections.set(b.section, 0);
    if (b.kind === 'other') continue;
    if (b.skip) { skipped.push(`${rel}:${b.line}: ${b.skip}`); if (b.section) sections.set(b.section, 1); continue; }
    if (b.kind !== 'setup') { ran++; if (b.section) sections.set(b.section, 1); }
    emit(`echo ${b.line} >"$__st/block"`, b.line);
    if (b.kind === 'setup' || b.kind === 'sh') {
      b.body.forEach((l, j) => emit(dataPaths(l, scratch), b.bodyLine + j));
    } else if (b.kind === 'sql') {
      const f = join(st, `sql.${b.line}`);
      writeFileSync(f, dataPaths(b.body.join('\n'), scratch) + '\n');
      emit(`node ${shq(docSql)} "\${MSSQL_CDC_WAREHOUSE:-lake}" ${shq(f)} >"$__st/sqlout.${b.line}"`, b.bodyLine);
      if (b.rows !== null) sqls.push(b);
    } else {
      const cmds = transcript(b, rel, failures);
      cmds.forEach((c, j) => {
        const id = `${b.line}.${j}`;
        emit(`trap - ERR; set +e; (exit $__rc)`, c.line);
        emit('{ ' + dataPaths(c.text, scratch), c.line);
        emit(`} >"$__st/out.${id}" 2>"$__st/err.${id}"; __rc=$?; set -e; echo $__rc >"$__st/rc.${id}"`, c.line);
        emit(`trap 'echo $LINENO >"$__st/errline"' ERR`, c.line);
        consoles.push({ id, c, next: cmds[j + 1] });
      });
    }
  }
  emit('echo done >"$__st/block"', 0);
  writeFileSync(join(st, 'run.sh'), script.join('\n') + '\n');
  const t0 = Date.now();
  const r = await new Promise((done) => {
    const child = spawn('bash', [join(st, 'run.sh')], { env: process.env });
    const res = { stdout: '', stderr: '', status: null, signal: null };
    child.stdout.on('data', (d) => { if (res.stdout.length < (1 << 20)) res.stdout += d; });
    child.stderr.on('data', (d) => { if (res.stderr.length < (1 << 20)) res.stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120000);
    child.on('close', (status, signal) => { clearTimeout(timer); res.status = status; res.signal = signal; done(res); });
  });
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  const tail = (s) => s.split('\n').filter((x) => x.trim()).slice(-12).map((x) => '    | ' + x).join('\n');
  const read = (f) => (existsSync(join(st, f)) ? readFileSync(join(st, f), 'utf8') : null);
  if (r.status !== 0) {
    const el = read('errline');
    const md = el ? map[Number(el) - 1] : Number(read('block'));
    failures.push(`${rel}:${md || '?'}: example failed (exit ${r.status ?? r.signal})\n${tail((r.stdout || '') + (r.stderr || ''))}`);
  }
  for (const { id, c, next } of consoles) {
    const rc = read(`rc.${id}`);
    if (rc === null) break; // not reached: the failure above says where it stopped
    const lines = (f) => { const t = read(f).replace(/\n$/, ''); return t === '' ? [] : t.split('\n'); };
    const actual = lines(`out.${id}`);
    const both = actual.concat(lines(`err.${id}`));
    const out = both.join('\n');
    if (Number(rc) !== 0 && !(next && next.text.trim() === 'echo $?')) {
      failures.push(`${rel}:${c.line}: \`${c.text.split('\n')[0]}\` exited ${rc.trim()}\n${tail(out)}`);
    } else if (!matches(c.expected, actual) && !matches(c.expected, both)) {
      failures.push(`${rel}:${c.line}: \`${c.text.split('\n')[0]}\` printed something else than the example shows.\n  shown:\n${c.expected.map((x) => '    | ' + x).join('\n')}\n  printed (stdout, then stderr):\n${both.slice(0, 30).map((x) => '    | ' + x).join('\n')}${both.length > 30 ? `\n    (${both.length - 30} more lines)` : ''}`);
    }
  }
  const cliPage = /\/cli-[^/]*\.md$/.test(file);
  for (const b of sqls) {
    const out = read(`sqlout.${b.line}`);
    if (out === null) break;
    const n = out.split('\n').filter((x) => x.trim()).length;
    if (n !== b.rows) failures.push(`${rel}:${b.line}: the query returned ${n} rows, the example says ${b.rows}\n${tail(out)}`);
  }
  if (ran === 0 && !cliPage) failures.push(`${rel}: no example that runs (mark runnable blocks sh, console or sql)`);
  if (cliPage) {
    for (const [s, n] of sections) if (!n && /^[a-z][a-z-]*( [a-z][a-z-]*)?$/.test(s)) failures.push(`${rel}: section "## ${s}" has no example that runs (or is skipped with a reason)`);
  }
  if (failures.length === 0 && !process.env.DOC_EXAMPLES_KEEP) rmSync(scratch, { recursive: true, force: true });
  const kept = existsSync(scratch) ? scratch : null;
  return { rel, ran, skipped, failures, secs, kept };
}

const files = process.argv.length > 2 ? process.argv.slice(2) : defaultFiles();
let bad = 0;
let nRun = 0;
let nSkip = 0;
// Files run in parallel (DOC_EXAMPLES_JOBS, default 3: each spends much of its time
// starting processes); results print in file order.
const jobs = Math.max(1, Number(process.env.DOC_EXAMPLES_JOBS) || 3);
const results = new Array(files.length);
let next = 0;
await Promise.all(Array.from({ length: Math.min(jobs, files.length) }, async () => {
  while (next < files.length) { const i = next++; results[i] = await runFile(files[i]); }
}));
for (const res of results) {
  nRun += res.ran;
  nSkip += res.skipped.length;
  console.log(`${res.failures.length ? 'FAIL' : 'ok  '} ${res.rel}: ${res.ran} examples run, ${res.skipped.length} skipped (${res.secs} s)`);
  for (const s of res.skipped) console.log(`     skipped ${s}`);
  for (const x of res.failures) console.log(`  ${x}`);
  if (res.kept) console.log(`     scratch directory kept: ${res.kept}`);
  if (res.failures.length) bad++;
}
console.log(`doc_examples: ${nRun} examples run, ${nSkip} skipped, in ${files.length} files; ${bad} files failing`);
process.exit(bad ? 1 : 0);
