import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, sep } from 'node:path';
import { test } from 'node:test';
import { fileIdentity, ReportCache, RowCache, rowSchemaKey } from '../src/io/row-cache.js';
import { writeBatch } from './helpers/batch-sessions.js';
import { cliEnv, runBuiltInProcess, runCli } from './helpers/cli.js';
import { packageCopy } from './helpers/package-copy.js';
import { tempFolders } from './helpers/temp.js';
import { filesUnder, realdataDir, realdataFiles, realdataSkip, repoRoot } from './helpers/realdata.js';
import { TokenCountCache } from '../src/io/count-cache.js';
import { sealed, sealedJson, unsealed, unsealedBytes } from '../src/io/sealed.js';

// Finished rows of `analyze DIR` (and the report of `analyze FILE`) are cached per file identity: a re-run over unchanged files gives the
// rows a cold run gives, without reading the files; any change to a file, the settings or the build
// and it is analysed again.

const { fresh: freshDir } = tempFolders('devs-ctx-rows-');

function run(args: readonly string[], cache: string | undefined, cwd = repoRoot): { stdout: string; stderr: string; exitCode: number } {
  const result = runCli(['analyze', ...args, ...(cache === undefined ? ['--no-cache'] : [])], {
    cwd,
    env: cache === undefined ? {} : { DEVS_CTX_CACHE_DIR: cache },
  });
  assert.ok([0, 10, 11, 3, 4].includes(result.exitCode), result.stderr);
  return result;
}

/** The cached rows file of a cache dir, read as devs-ctx reads it. */
function rowsFile(cache: string): { schema: string; files: Record<string, { id: string[]; row: Record<string, unknown> }> } {
  return unsealed(readFileSync(join(cache, 'analyze-rows.json'))) as ReturnType<typeof rowsFile>;
}

for (const [name, dir, skip] of [
  ['every fixture', join(repoRoot, 'fixtures'), false],
  ['every real transcript', realdataDir, realdataSkip],
] as const) {
  test(`row cache: ${name}: a first run, and a re-run from the cache, give exactly the rows of a cold run (ndjson, text and --json)`, { skip }, () => {
    const cache = freshDir('cache');
    for (const output of [['--ndjson'], [], ['--json']]) {
      const cold = run(['.', ...output], undefined, dir);
      const first = run(['.', ...output], cache, dir);
      const again = run(['.', ...output], cache, dir);
      assert.equal(first.stdout, cold.stdout);
      assert.equal(again.stdout, cold.stdout);
      assert.equal(again.stderr, cold.stderr);
      assert.equal(again.exitCode, cold.exitCode);
    }
    // Every transcript that could be read has its row kept.
    const sessions = run(['.', '--ndjson'], undefined, dir)
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; error?: unknown });
    const readable = sessions.filter((r) => r.type === 'session' && r.error === undefined).length;
    assert.equal(Object.keys(rowsFile(cache).files).length, readable);
    // And its full report, which the --json re-run printed without reading it.
    assert.equal(readdirSync(join(cache, 'reports')).length, readable);
  });
}

test('row cache: a hit is served without reading the file (a planted row shows), and any change to the file is analysed again', () => {
  const dir = freshDir('project');
  const file = join(dir, 'session.jsonl');
  copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), file);
  const cache = freshDir('cache');
  const cold = run(['.', '--ndjson'], undefined, dir).stdout;
  assert.equal(run(['.', '--ndjson'], cache, dir).stdout, cold);

  // Plant a different turn count in the kept row: the next run prints it, so it did not read the file.
  const planted = rowsFile(cache);
  const entry = Object.values(planted.files)[0];
  assert.ok(entry);
  entry.row['turns'] = 424242;
  writeFileSync(join(cache, 'analyze-rows.json'), Buffer.concat(sealed(planted)));
  assert.match(run(['.', '--ndjson'], cache, dir).stdout, /"turns":424242/);

  // Touched (same bytes, another mtime): analysed again, the real row is back.
  const { mtime } = statSync(file);
  utimesSync(file, mtime, new Date(mtime.getTime() + 5_000));
  assert.equal(run(['.', '--ndjson'], cache, dir).stdout, cold);

  // Grown by a line: analysed again, equal to a cold run of the grown file.
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
  appendFileSync(file, `${lines[lines.length - 1]}\n`);
  const grownCold = run(['.', '--ndjson'], undefined, dir).stdout;
  assert.notEqual(grownCold, cold);
  assert.equal(run(['.', '--ndjson'], cache, dir).stdout, grownCold);
  assert.equal(run(['.', '--ndjson'], cache, dir).stdout, grownCold);
});

test('row cache: other settings (limits, --encoding, --strict) are other rows; --since on a cached row is judged as on a cold one', () => {
  const dir = join(repoRoot, 'fixtures');
  const cache = freshDir('cache');
  run(['.', '--ndjson'], cache, dir);
  const plain = run(['.', '--ndjson'], undefined, dir).stdout;
  for (const args of [
    ['--soft-limit', '100', '--hard-limit', '200'],
    ['--encoding', 'cl100k_base'],
    ['--strict'],
    ['--since', '2026-01-01'],
    ['--until', '2025-06-01'],
  ]) {
    const cold = run(['.', '--ndjson', ...args], undefined, dir);
    assert.notEqual(cold.stdout, plain, `${args.join(' ')} changes the rows`);
    assert.equal(run(['.', '--ndjson', ...args], cache, dir).stdout, cold.stdout, args.join(' '));
    assert.equal(run(['.', '--ndjson', ...args], cache, dir).stdout, cold.stdout, args.join(' '));
  }
});

test('row and report caches: times written without a zone are read in the local zone, so a run under another TZ is not answered from rows or reports kept under this one', () => {
  // Some agents write local times without a zone (OpenHands: `2025-04-30T16:32:54.707474`).
  const dir = freshDir('zoneless');
  const lines = readFileSync(join(repoRoot, 'fixtures', 'claude-code', 'parallel-tool-calls-2.1.jsonl'), 'utf8');
  writeFileSync(join(dir, 'local.jsonl'), lines.replace(/("timestamp":"[^"]*?)Z"/g, '$1"'));
  const cache = freshDir('cache');
  const inZone = (zone: string, args: readonly string[], cached: boolean): string => {
    const result = runCli(['analyze', ...args, ...(cached ? [] : ['--no-cache'])], { cwd: dir, env: { TZ: zone, DEVS_CTX_CACHE_DIR: cache } });
    assert.ok([0, 10, 11].includes(result.exitCode), result.stderr);
    return result.stdout;
  };
  for (const args of [
    ['.', '--ndjson'],
    ['.', '--json'],
    ['local.jsonl', '--json'],
  ])
    inZone('UTC', args, true);
  // The zones read the file differently, and each run under Tokyo prints what a cold one does.
  assert.notEqual(inZone('Asia/Tokyo', ['.', '--ndjson'], false), inZone('UTC', ['.', '--ndjson'], false));
  const since = ['--since', '2026-01-01T00:00Z', '--until', '2027-01-01T00:00Z'];
  for (const args of [
    ['.', '--ndjson'],
    ['.', '--json'],
    ['local.jsonl', '--json'],
    ['.', '--ndjson', ...since],
  ]) {
    assert.equal(inZone('Asia/Tokyo', args, true), inZone('Asia/Tokyo', args, false), args.join(' '));
  }
});

test('row cache: a file of another schema (another build or settings) is never used', () => {
  const dir = freshDir('cache');
  const path = join(dir, 'x.jsonl');
  writeFileSync(path, '{"a":1}\n');
  const identity = fileIdentity(path);
  assert.ok(identity);
  const a = rowSchemaKey('build-a', { window: 200_000 });
  assert.notEqual(rowSchemaKey('build-b', { window: 200_000 }), a);
  assert.notEqual(rowSchemaKey('build-a', { window: 100_000 }), a);
  const cache = RowCache.open<{ turns: number }>(dir, a);
  cache.set(path, identity, { turns: 3 });
  cache.save();
  assert.deepEqual(RowCache.open<{ turns: number }>(dir, a).get(path, identity), { turns: 3 });
  assert.equal(RowCache.open<{ turns: number }>(dir, rowSchemaKey('build-b', { window: 200_000 })).get(path, identity), undefined);
  // Same size, other bytes at an end: another identity, whatever the clock did.
  writeFileSync(path, '{"a":2}\n');
  const changed = fileIdentity(path);
  assert.ok(changed);
  assert.notEqual(changed.edges, identity.edges);
  assert.equal(RowCache.open<{ turns: number }>(dir, a).get(path, changed), undefined);
  // No directory (--no-cache) or no build id: off.
  assert.equal(RowCache.open(undefined, a).enabled, false);
  assert.equal(RowCache.open(dir, undefined).enabled, false);
});

test('row and report caches: a file of another layout version, kept for another path, or whose row or report is no object, is never used', () => {
  const dir = freshDir('layout');
  const path = join(dir, 'x.jsonl');
  const other = join(dir, 'y.jsonl');
  writeFileSync(path, '{"a":1}\n');
  writeFileSync(other, '{"a":1}\n');
  const identity = fileIdentity(path);
  assert.ok(identity);
  const schema = rowSchemaKey('build-a', {});
  // Rows: as saved, then with another version, then with a row that is no object.
  const rows = RowCache.open<{ turns: number }>(dir, schema);
  rows.set(path, identity, { turns: 3 });
  rows.save();
  const rowsFile = join(dir, 'analyze-rows.json');
  assert.deepEqual(RowCache.open<{ turns: number }>(dir, schema).get(path, identity), { turns: 3 });
  const saved = unsealed(readFileSync(rowsFile)) as { version: number; files: Record<string, { row: unknown }> };
  writeFileSync(rowsFile, Buffer.concat(sealed({ ...saved, version: saved.version - 1 })));
  assert.equal(RowCache.open<{ turns: number }>(dir, schema).get(path, identity), undefined, 'another version');
  const entry = saved.files[path];
  assert.ok(entry);
  for (const row of [null, 5, 'row']) {
    writeFileSync(rowsFile, Buffer.concat(sealed({ ...saved, files: { [path]: { ...entry, row } } })));
    assert.equal(RowCache.open<{ turns: number }>(dir, schema).get(path, identity), undefined, `row ${JSON.stringify(row)}`);
  }
  // Reports: one file per transcript, named by a hash of its path.
  const reports = ReportCache.open<{ turns: number }>(dir, schema);
  reports.set(path, identity, { turns: 4 });
  assert.deepEqual(reports.get(path, identity), { turns: 4 });
  const [name] = readdirSync(join(dir, 'reports'));
  assert.ok(name);
  const reportFile = join(dir, 'reports', name);
  const kept = unsealed(readFileSync(reportFile)) as { version: number; path: string; report: unknown };
  writeFileSync(reportFile, Buffer.concat(sealed({ ...kept, version: kept.version + 1 })));
  assert.equal(ReportCache.open<{ turns: number }>(dir, schema).get(path, identity), undefined, 'another version');
  for (const report of [null, 5, 'report']) {
    writeFileSync(reportFile, Buffer.concat(sealed({ ...kept, report })));
    assert.equal(ReportCache.open<{ turns: number }>(dir, schema).get(path, identity), undefined, `report ${JSON.stringify(report)}`);
  }
  // The file of one path put where another's belongs (as a hash collision would): not that path's.
  writeFileSync(reportFile, Buffer.concat(sealed(kept)));
  reports.set(other, identity, { turns: 5 });
  const otherName = readdirSync(join(dir, 'reports')).find((n) => n !== name);
  assert.ok(otherName);
  copyFileSync(reportFile, join(dir, 'reports', otherName));
  assert.equal(ReportCache.open<{ turns: number }>(dir, schema).get(other, identity), undefined, 'kept for another path');
  assert.deepEqual(ReportCache.open<{ turns: number }>(dir, schema).get(path, identity), { turns: 4 });
});

const singleFiles = [...filesUnder(join(repoRoot, 'fixtures')), ...(realdataSkip ? [] : realdataFiles())].filter((f) => /\.jsonl?$/.test(f));

/** `run`, in this process on the built code (the caches are keyed on its build id): for the many-file test. */
async function runBuilt(args: readonly string[], cache: string | undefined): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const result = await runBuiltInProcess(['analyze', ...args, ...(cache === undefined ? ['--no-cache'] : [])], {
    env: cache === undefined ? {} : { DEVS_CTX_CACHE_DIR: cache },
  });
  assert.ok([0, 10, 11, 3, 4].includes(result.exitCode), result.stderr);
  return result;
}

test('report cache: analyze FILE --json of every fixture and real transcript: a first run and a re-run from the cache print exactly what a cold run prints', async () => {
  const cache = freshDir('cache');
  assert.ok(singleFiles.length > 50);
  // The same code the binary runs, so the cache is really in use: the first run fills it.
  await runBuilt([singleFiles[0]!, '--json'], cache);
  assert.ok(readdirSync(join(cache, 'reports')).length > 0, 'the built code caches reports');
  for (const file of singleFiles) {
    const cold = await runBuilt([file, '--json'], undefined);
    const first = await runBuilt([file, '--json'], cache);
    const again = await runBuilt([file, '--json'], cache);
    assert.deepEqual([first.stdout, first.exitCode], [cold.stdout, cold.exitCode], file);
    assert.deepEqual([again.stdout, again.stderr, again.exitCode], [cold.stdout, cold.stderr, cold.exitCode], file);
  }
});

test('report cache: a hit is served without reading the file (a planted report shows), a changed file is analysed again, text output too', () => {
  const dir = freshDir('single');
  const file = join(dir, 'session.jsonl');
  copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), file);
  const cache = freshDir('cache');
  const cold = run(['session.jsonl'], undefined, dir);
  assert.equal(run(['session.jsonl'], cache, dir).stdout, cold.stdout);
  assert.equal(run(['session.jsonl'], cache, dir).stdout, cold.stdout);
  const [reportFile] = readdirSync(join(cache, 'reports'));
  assert.ok(reportFile);
  const stored = unsealed(readFileSync(join(cache, 'reports', reportFile))) as { report: { turns: number } };
  stored.report.turns = 424242;
  writeFileSync(join(cache, 'reports', reportFile), Buffer.concat(sealed(stored)));
  assert.match(run(['session.jsonl', '--json'], cache, dir).stdout, /"turns": 424242/);
  appendFileSync(file, `${readFileSync(file, 'utf8').trimEnd().split('\n').pop()}\n`);
  const grown = run(['session.jsonl', '--json'], undefined, dir).stdout;
  assert.doesNotMatch(grown, /424242/);
  assert.equal(run(['session.jsonl', '--json'], cache, dir).stdout, grown);
  // Other settings: another report.
  assert.equal(
    run(['session.jsonl', '--json', '--window', '50k'], cache, dir).stdout,
    run(['session.jsonl', '--json', '--window', '50k'], undefined, dir).stdout,
  );
});

test("batch --json: a re-run prints each unchanged transcript's kept report without reading it, under the path it is given; analyze FILE shares the reports", () => {
  const dir = freshDir('json-batch');
  copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), join(dir, 'session.jsonl'));
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), join(dir, 'other.jsonl'));
  const cache = freshDir('cache');
  const cold = run(['.', '--json'], undefined, dir);
  assert.equal(run(['.', '--json'], cache, dir).stdout, cold.stdout);
  assert.equal(readdirSync(join(cache, 'reports')).length, 2);

  // Plant a count in session.jsonl's kept report: the next run prints it, so it did not read the file.
  const reportOf = (name: string): string => {
    for (const file of readdirSync(join(cache, 'reports'))) {
      const kept = unsealed(readFileSync(join(cache, 'reports', file))) as { path: string };
      if (kept.path === join(dir, name)) return join(cache, 'reports', file);
    }
    assert.fail(`no report kept for ${name}`);
  };
  const reportFile = reportOf('session.jsonl');
  const stored = unsealed(readFileSync(reportFile)) as { report: Record<string, unknown> };
  stored.report['turns'] = 424242;
  writeFileSync(reportFile, Buffer.concat(sealed(stored)));
  type Batch = { transcripts: { file: string; project: string; turns: number }[] };
  const planted = (stdout: string): Batch => {
    const batch = JSON.parse(stdout) as Batch;
    const session = batch.transcripts.find((t) => t.file.endsWith('session.jsonl'));
    assert.ok(session);
    session.turns = 424242;
    return batch;
  };
  assert.deepEqual(JSON.parse(run(['.', '--json'], cache, dir).stdout), planted(cold.stdout));
  // Named another way (its absolute path, from another folder): the report says so, as a cold run's does.
  const elsewhere = run([dir, '--json'], undefined, repoRoot).stdout;
  assert.ok(elsewhere.includes(JSON.stringify(join(dir, 'session.jsonl'))));
  assert.deepEqual(JSON.parse(run([dir, '--json'], cache, repoRoot).stdout), planted(elsewhere));
  // analyze FILE --json reads the same kept report.
  assert.match(run(['session.jsonl', '--json'], cache, dir).stdout, /"turns": 424242/);

  // The report gone (the row still kept): analysed again, and kept again.
  rmSync(reportFile);
  assert.equal(run(['.', '--json'], cache, dir).stdout, cold.stdout);
  assert.equal(readdirSync(join(cache, 'reports')).length, 2);
  // Kept by analyze FILE instead (as it writes reports): the batch prints it as a cold run does, byte for byte.
  rmSync(reportFile);
  run(['session.jsonl', '--json'], cache, dir);
  assert.ok(existsSync(reportFile));
  assert.equal(run(['.', '--json'], cache, dir).stdout, cold.stdout);
  assert.equal(run(['.', '--json', '--sort', 'tokens'], cache, dir).stdout, run(['.', '--json', '--sort', 'tokens'], undefined, dir).stdout);
  // Grown by a line: analysed again, as a cold run of the grown file.
  const file = join(dir, 'session.jsonl');
  appendFileSync(file, `${readFileSync(file, 'utf8').trimEnd().split('\n').pop()}\n`);
  const grown = run(['.', '--json'], undefined, dir).stdout;
  assert.notEqual(grown, cold.stdout);
  assert.equal(run(['.', '--json'], cache, dir).stdout, grown);
  assert.equal(run(['.', '--json'], cache, dir).stdout, grown);
  // Other settings: other reports.
  assert.equal(run(['.', '--json', '--window', '50k'], cache, dir).stdout, run(['.', '--json', '--window', '50k'], undefined, dir).stdout);
});

test('batch --json: a report is kept as the batch prints it (its lines indented for the array), and a re-run writes the bytes kept as they are, sorted too', () => {
  const dir = freshDir('json-bytes');
  copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), join(dir, 'session.jsonl'));
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), join(dir, 'other.jsonl'));
  const cache = freshDir('cache');
  const first = run(['.', '--json'], cache, dir).stdout;
  const name = readdirSync(join(cache, 'reports')).find(
    (file) => (unsealed(readFileSync(join(cache, 'reports', file))) as { path: string }).path === join(dir, 'session.jsonl'),
  );
  assert.ok(name);
  const reportFile = join(cache, 'reports', name);
  const text = unsealedBytes(readFileSync(reportFile)).toString('utf8');
  const element = text.slice(text.indexOf(',"report":') + ',"report":'.length, -1);
  // The element without its last line (the batch's fields go there): in the output as it was kept.
  const end = '\n    }';
  assert.ok(element.endsWith(end), element.slice(-40));
  assert.ok(first.includes(`\n    ${element.slice(0, -end.length)},\n      "project": `));

  // The kept bytes changed where a parse and a new indentation would undo it: printed as they are.
  const turns = /\n {6}"turns": (\d+),/.exec(element);
  assert.ok(turns);
  const odd = element.replace(turns[0], `\n      "turns":   ${turns[1]} ,`);
  writeFileSync(reportFile, Buffer.concat(sealedJson(`${text.slice(0, text.length - element.length - 1)}${odd}}`)));
  for (const sort of [[], ['--sort', 'tokens']]) {
    const again = run(['.', '--json', ...sort], cache, dir).stdout;
    assert.ok(again.includes(`"turns":   ${turns[1]} ,`), again.slice(0, 400));
    assert.deepEqual(JSON.parse(again), JSON.parse(run(['.', '--json', ...sort], undefined, dir).stdout));
  }
});

/**
 * The JSON of a sealed cache file changed as a hand or another program would change it: `edit` gets
 * the parsed value and changes it. The result is written twice over: plain JSON (no seal), and the
 * new JSON under the file's old seal. Either way devs-ctx must not use it.
 */
function tamperedCopies(file: string, edit: (value: Record<string, unknown>) => void): Buffer[] {
  const bytes = readFileSync(file);
  const value = unsealed(bytes) as Record<string, unknown>;
  edit(value);
  const seal = bytes.subarray(0, bytes.indexOf(10) + 1);
  return [Buffer.from(JSON.stringify(value)), Buffer.concat([seal, Buffer.from(JSON.stringify(value))])];
}

test('row and report caches: a row or report changed since devs-ctx wrote it (JSON that parses: `{}`, another count) is not used', () => {
  const dir = freshDir('tampered');
  // Two sessions, so that `analyze .` is a batch (its table) as well as `--ndjson`.
  copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), join(dir, 'session.jsonl'));
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), join(dir, 'other.jsonl'));
  const cache = freshDir('cache');
  const batch = { ndjson: run(['.', '--ndjson'], undefined, dir), text: run(['.'], undefined, dir) };
  const single = { json: run(['session.jsonl', '--json'], undefined, dir), text: run(['session.jsonl'], undefined, dir) };
  run(['.', '--ndjson'], cache, dir);
  run(['session.jsonl', '--json'], cache, dir);
  const rows = join(cache, 'analyze-rows.json');
  const [reportName] = readdirSync(join(cache, 'reports'));
  assert.ok(reportName);
  const report = join(cache, 'reports', reportName);
  const kept = { rows: readFileSync(rows), report: readFileSync(report) };
  type Files = Record<string, { row: Record<string, unknown> }>;
  const tampered = [
    ...tamperedCopies(rows, (v) => {
      for (const f of Object.values(v['files'] as Files)) f.row = {};
    }).map((bytes) => ({ path: rows, bytes })),
    ...tamperedCopies(rows, (v) => {
      for (const f of Object.values(v['files'] as Files)) f.row['totalTokens'] = 7;
    }).map((bytes) => ({ path: rows, bytes })),
    ...tamperedCopies(report, (v) => {
      v['report'] = {};
    }).map((bytes) => ({ path: report, bytes })),
    ...tamperedCopies(report, (v) => {
      (v['report'] as Record<string, unknown>)['totalTokens'] = 7;
    }).map((bytes) => ({ path: report, bytes })),
  ];
  for (const [i, { path, bytes }] of tampered.entries()) {
    for (const [args, cold] of [
      [['.', '--ndjson'], batch.ndjson],
      [['.'], batch.text],
      [['session.jsonl', '--json'], single.json],
      [['session.jsonl'], single.text],
    ] as const) {
      // Each run meets the tampered file (a run that ignores it writes a good one back).
      writeFileSync(path, bytes);
      const again = run(args, cache, dir);
      assert.equal(again.stdout, cold.stdout, `tampered copy ${i}: analyze ${args.join(' ')}`);
      assert.equal(again.exitCode, cold.exitCode, `tampered copy ${i}: analyze ${args.join(' ')}`);
    }
    writeFileSync(rows, kept.rows);
    writeFileSync(report, kept.report);
  }
  // As written, the cache is used (a planted count shows), so the runs above did not simply miss.
  const planted = unsealed(kept.rows) as { files: Files };
  for (const f of Object.values(planted.files)) f.row['turns'] = 424242;
  writeFileSync(rows, Buffer.concat(sealed(planted)));
  assert.match(run(['.', '--ndjson'], cache, dir).stdout, /"turns":424242/);
});

/** A modification time a test can put back exactly (whole seconds). */
const STAMP = 1_700_000_000;

/**
 * Rewrites `file` in place, same size, outside its first and last 8 KiB (so neither end's hash
 * sees it), then puts its modification time (STAMP) back, as `cp -p`, `rsync -t` or `touch -r` would.
 * Only the change time still tells: a write always sets it, and no call can set it back.
 */
function rewriteMiddleKeepingMtime(file: string, from: string, to: string): void {
  assert.equal(Buffer.byteLength(from), Buffer.byteLength(to));
  const before = statSync(file, { bigint: true });
  assert.equal(before.mtimeNs, BigInt(STAMP) * 1_000_000_000n);
  const bytes = readFileSync(file);
  const middle = bytes
    .subarray(8192, bytes.length - 8192)
    .toString('latin1')
    .split(from)
    .join(to);
  assert.notEqual(middle, bytes.subarray(8192, bytes.length - 8192).toString('latin1'));
  writeFileSync(file, Buffer.concat([bytes.subarray(0, 8192), Buffer.from(middle, 'latin1'), bytes.subarray(bytes.length - 8192)]));
  utimesSync(file, STAMP, STAMP);
  const after = statSync(file, { bigint: true });
  assert.equal(after.size, before.size);
  assert.equal(after.mtimeNs, before.mtimeNs);
  // The clock the kernel stamps files with may tick coarsely: stamp again until the change time moved.
  while (statSync(file, { bigint: true }).ctimeNs === before.ctimeNs) utimesSync(file, STAMP, STAMP);
}

test('row and report caches: a same-size rewrite in the middle of a file, with its modification time put back, is analysed again', () => {
  const dir = freshDir('same-size');
  const file = join(dir, 's.jsonl');
  const turns = Array.from({ length: 60 }, (_, i) =>
    JSON.stringify({ id: `t${i}`, role: i % 2 ? 'user' : 'assistant', type: 'message', content: `hello world number ${i} ${'lorem ipsum '.repeat(20)}` }),
  );
  writeFileSync(file, `${turns.join('\n')}\n`);
  utimesSync(file, STAMP, STAMP);
  const cache = freshDir('cache');
  run(['.', '--ndjson'], cache, dir);
  run(['s.jsonl', '--json'], cache, dir);

  rewriteMiddleKeepingMtime(file, 'lorem ipsum ', 'zq9xk#w@v!j ');
  const batchCold = run(['.', '--ndjson'], undefined, dir).stdout;
  const singleCold = run(['s.jsonl', '--json'], undefined, dir).stdout;
  assert.notEqual(JSON.parse(singleCold).totalTokens, undefined);
  assert.equal(run(['.', '--ndjson'], cache, dir).stdout, batchCold);
  assert.equal(run(['s.jsonl', '--json'], cache, dir).stdout, singleCold);
});

/** Every file under `dir`, recursively. */
function filesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesIn(join(dir, e.name)) : [join(dir, e.name)]));
}

test('a FIFO in place of any cache file is not waited on: analyze prints what a cold run prints', { skip: process.platform === 'win32' }, () => {
  const dir = freshDir('fifo-project');
  const file = join(dir, 'session.jsonl');
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), file);
  const cache = freshDir('cache');
  // Rows, token counts and a report; then the file grows, and the next batch run keeps a state to read
  // on from (a format given: a file this small does not settle its format's detection).
  const batch = ['.', '--ndjson', '--format', 'devs'];
  const single = ['session.jsonl', '--json'];
  run(batch, cache, dir);
  run(single, cache, dir);
  appendFileSync(file, `${readFileSync(file, 'utf8').trimEnd().split('\n').pop()}\n`);
  run(batch, cache, dir);
  const cached = filesIn(cache);
  const names = cached.map((f) => f.slice(cache.length + 1).replace(/[0-9a-f]{40}|[\w-]{27}/, '<hash>'));
  for (const kind of ['analyze-rows.json', 'token-counts-o200k_base.bin', `reports${sep}<hash>.json`, `resume${sep}<hash>.json`]) {
    assert.ok(names.includes(kind), `${kind} among ${names.join(', ')}`);
  }
  const cold = { batch: run(batch, undefined, dir).stdout, single: run(single, undefined, dir).stdout };
  for (const path of cached) {
    const bytes = readFileSync(path);
    rmSync(path);
    assert.equal(spawnSync('mkfifo', [path]).status, 0);
    for (const [args, expected] of [
      [batch, cold.batch],
      [single, cold.single],
    ] as const) {
      // A guard, not a measure: without it a blocked open would hang the suite instead of failing it.
      const result = spawnSync(process.execPath, [join(repoRoot, 'bin', 'devs-ctx.js'), 'analyze', ...args], {
        cwd: dir,
        env: cliEnv({ DEVS_CTX_CACHE_DIR: cache }),
        encoding: 'utf8',
        timeout: 120_000,
      });
      assert.equal(result.signal, null, `${path} as a FIFO: analyze ${args.join(' ')} was still waiting after 2 minutes`);
      assert.equal(result.stdout, expected, `${path} as a FIFO: analyze ${args.join(' ')}`);
    }
    assert.ok(lstatSync(path).isFIFO(), 'the FIFO is left as it is');
    rmSync(path);
    writeFileSync(path, bytes);
  }
});

test('a symlink in place of any cache file is neither read nor written through: the file it points to is left as it is, the link replaced', {
  skip: process.platform === 'win32',
}, () => {
  const dir = freshDir('symlink-project');
  const file = join(dir, 'session.jsonl');
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), file);
  const line = `${readFileSync(file, 'utf8').trimEnd().split('\n').pop()}\n`;
  const cache = freshDir('cache');
  const batch = ['.', '--ndjson', '--format', 'devs'];
  const single = ['session.jsonl', '--json'];
  run(batch, cache, dir);
  run(single, cache, dir);
  appendFileSync(file, line);
  run(batch, cache, dir);
  run(single, cache, dir); // the report of the file as it is now
  const cached = filesIn(cache);
  assert.equal(cached.length, 4, cached.join(', '));
  for (const path of cached) {
    // Every cache file of the file as it is now (it grew in the rounds before).
    run(batch, cache, dir);
    run(single, cache, dir);
    // Another program's file, holding what the cache held (a planted count in a report: read through, it would show).
    const outside = join(freshDir('outside'), 'file');
    const kept = readFileSync(path);
    const value = path.endsWith('.json') ? (unsealed(kept) as { report?: Record<string, unknown> } | null) : null;
    const bytes = value?.report ? Buffer.concat(sealed({ ...value, report: { ...value.report, turns: 424242 } })) : kept;
    writeFileSync(outside, bytes);
    rmSync(path);
    symlinkSync(outside, path);
    // The single file first, while the planted report is of the file as it is.
    for (const args of [single, batch]) {
      assert.equal(run(args, cache, dir).stdout, run(args, undefined, dir).stdout, `${path} a symlink: analyze ${args.join(' ')}`);
      // Grown: every cache file is written anew (a state kept to read on from, rows, counts, a report).
      appendFileSync(file, line);
      assert.equal(run(args, cache, dir).stdout, run(args, undefined, dir).stdout, `${path} a symlink, the file grown: analyze ${args.join(' ')}`);
    }
    assert.deepEqual(readFileSync(outside), bytes, `${path}: the file it points to is left as it is`);
    // Written anew where it is named: the cache is a regular file again.
    assert.ok(lstatSync(path).isFile(), `${path}: the link is replaced by the cache's own file`);
    rmSync(path);
    writeFileSync(path, kept);
  }
});

test('report cache: what is not a report in its folder (a folder named *.json) neither counts nor stops the trim', () => {
  // Newer than every report (counted, it would leave a report fewer), then older (removed first, it would stop the trim).
  for (const year of [2030, 2020]) {
    const dir = freshDir('reports-odd');
    mkdirSync(join(dir, 'reports', '0-folder.json'), { recursive: true });
    utimesSync(join(dir, 'reports', '0-folder.json'), new Date(Date.UTC(year, 0, 1)), new Date(Date.UTC(year, 0, 1)));
    const cache = ReportCache.open<{ n: number }>(dir, 'schema', { maxReports: 2 });
    for (const n of [1, 2, 3, 4]) {
      const path = join(dir, `t${n}.jsonl`);
      writeFileSync(path, `{"n":${n}}\n`);
      const identity = fileIdentity(path);
      assert.ok(identity);
      cache.set(path, identity, { n });
      for (const entry of readdirSync(join(dir, 'reports'), { withFileTypes: true })) {
        if (!entry.isFile()) continue;
        const at = statSync(join(dir, 'reports', entry.name)).mtime;
        if (Date.now() - at.getTime() < 60_000) utimesSync(join(dir, 'reports', entry.name), at, new Date(Date.UTC(2026, 0, 1, n)));
      }
    }
    const names = readdirSync(join(dir, 'reports'), { withFileTypes: true });
    assert.equal(names.filter((e) => e.isFile()).length, 2, `the folder from ${year}`);
    assert.ok(
      names.some((e) => e.isDirectory() && e.name === '0-folder.json'),
      'the folder is left as it is',
    );
  }
});

test('batch --json: past the 50,000 reports kept, the least recently written go once the batch is done, down to 45,000', () => {
  const dir = freshDir('json-trim');
  copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), join(dir, 'session.jsonl'));
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), join(dir, 'other.jsonl'));
  const cache = freshDir('cache');
  const reports = join(cache, 'reports');
  mkdirSync(reports, { recursive: true });
  // Other transcripts' reports, written long ago (named as reports are, by a path's hash; what they hold does not matter: they are only counted and dated).
  const long = new Date(Date.UTC(2020, 0, 1));
  const old = new Set<string>();
  for (let i = 0; i < 50_000; i++) {
    const name = `${createHash('sha1').update(`old-${i}`).digest('base64url')}.json`;
    old.add(name);
    const file = join(reports, name);
    writeFileSync(file, '{}');
    utimesSync(file, long, long);
  }
  const cold = run(['.', '--json'], undefined, dir);
  assert.equal(run(['.', '--json'], cache, dir).stdout, cold.stdout);
  const names = readdirSync(reports);
  assert.equal(names.length, 45_000);
  assert.equal(names.filter((name) => !old.has(name)).length, 2, "this batch's two reports are kept");
  assert.equal(run(['.', '--json'], cache, dir).stdout, cold.stdout);
});

test('report cache: a report written again (a live session analysed again) does not trim: only a new one can put the folder past the most kept', () => {
  const dir = freshDir('reports-again');
  const files = [1, 2, 3].map((n) => {
    const path = join(dir, `t${n}.jsonl`);
    writeFileSync(path, `{"n":${n}}\n`);
    const identity = fileIdentity(path);
    assert.ok(identity);
    return { path, identity };
  });
  // Three reports, kept by a run that allowed more.
  const roomy = ReportCache.open<{ n: number }>(dir, 'schema', { maxReports: 10 });
  for (const [i, { path, identity }] of files.entries()) roomy.set(path, identity, { n: i + 1 });
  const [first] = files;
  assert.ok(first);
  // Rewritten by one that keeps two: nothing new, so no listing of the folder and nothing removed.
  ReportCache.open<{ n: number }>(dir, 'schema', { maxReports: 2 }).set(first.path, first.identity, { n: 10 });
  assert.equal(readdirSync(join(dir, 'reports')).length, 3);
  // A new one: trimmed to two.
  const path = join(dir, 't4.jsonl');
  writeFileSync(path, '{"n":4}\n');
  const identity = fileIdentity(path);
  assert.ok(identity);
  ReportCache.open<{ n: number }>(dir, 'schema', { maxReports: 2 }).set(path, identity, { n: 4 });
  assert.equal(readdirSync(join(dir, 'reports')).length, 2);
});

test('report cache: the trim removes only its own files (not notes.json), and never a report this run wrote, whatever the dates of the others', () => {
  const dir = freshDir('reports-own');
  const reports = join(dir, 'reports');
  mkdirSync(reports, { recursive: true });
  // Someone's note, long ago; and two reports dated in the future (a clock set wrong, a backup put back).
  writeFileSync(join(reports, 'notes.json'), '{"mine":true}');
  utimesSync(join(reports, 'notes.json'), new Date(Date.UTC(2020, 0, 1)), new Date(Date.UTC(2020, 0, 1)));
  const cache = ReportCache.open<{ n: number }>(dir, 'schema', { maxReports: 2 });
  const future = new Date(Date.UTC(2100, 0, 1));
  const identities = [1, 2, 3].map((n) => {
    const path = join(dir, `t${n}.jsonl`);
    writeFileSync(path, `{"n":${n}}\n`);
    const identity = fileIdentity(path);
    assert.ok(identity);
    return { path, identity };
  });
  for (const [i, { path, identity }] of identities.slice(0, 2).entries()) {
    ReportCache.open<{ n: number }>(dir, 'schema', { maxReports: 10 }).set(path, identity, { n: i + 1 });
  }
  for (const name of readdirSync(reports)) if (name !== 'notes.json') utimesSync(join(reports, name), future, future);
  const [, , third] = identities;
  assert.ok(third);
  cache.set(third.path, third.identity, { n: 3 });
  assert.deepEqual(cache.get(third.path, third.identity), { n: 3 }, 'the report just written is kept');
  assert.equal(readFileSync(join(reports, 'notes.json'), 'utf8'), '{"mine":true}', 'not a report: left as it is');
  assert.equal(readdirSync(reports).filter((name) => name !== 'notes.json').length, 2);
});

test('batch --json: a symlink in place of the reports folder is not followed: nothing is written or removed where it points', {
  skip: process.platform === 'win32',
}, () => {
  const dir = freshDir('reports-link');
  copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), join(dir, 'session.jsonl'));
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), join(dir, 'other.jsonl'));
  const cache = freshDir('cache');
  const elsewhere = freshDir('elsewhere');
  writeFileSync(join(elsewhere, 'notes.json'), '{"mine":true}');
  symlinkSync(elsewhere, join(cache, 'reports'));
  const cold = run(['.', '--json'], undefined, dir).stdout;
  for (const args of [
    ['.', '--json'],
    ['session.jsonl', '--json'],
  ]) {
    assert.equal(run(args, cache, dir).stdout, run(args, undefined, dir).stdout, `analyze ${args.join(' ')}`);
  }
  assert.equal(run(['.', '--json'], cache, dir).stdout, cold);
  assert.deepEqual(readdirSync(elsewhere), ['notes.json']);
  assert.ok(lstatSync(join(cache, 'reports')).isSymbolicLink(), 'the link is left as it is');
});

for (const deferTrim of [false, true]) {
  test(`report cache: only the most recently written reports are kept (${deferTrim ? 'a batch: trimmed once, when it is done' : 'trimmed as each is written'})`, () => {
    const dir = freshDir('reports');
    const cache = ReportCache.open<{ n: number }>(dir, 'schema', { maxReports: 3, deferTrim });
    const files = [1, 2, 3, 4].map((n) => {
      const path = join(dir, `t${n}.jsonl`);
      writeFileSync(path, `{"n":${n}}\n`);
      return path;
    });
    for (const [i, path] of files.entries()) {
      const identity = fileIdentity(path);
      assert.ok(identity);
      cache.set(path, identity, { n: i + 1 });
      // Written in this order, an hour apart (so the order does not hang on the clock's resolution).
      for (const name of readdirSync(join(dir, 'reports'))) {
        const at = statSync(join(dir, 'reports', name)).mtime;
        if (Date.now() - at.getTime() < 60_000) utimesSync(join(dir, 'reports', name), at, new Date(Date.UTC(2026, 0, 1, i)));
      }
    }
    if (deferTrim) {
      // Not one listing of the folder per report written: all four are there until the batch is done.
      assert.equal(readdirSync(join(dir, 'reports')).length, 4);
      cache.trim();
    }
    assert.equal(readdirSync(join(dir, 'reports')).length, 3);
    const kept = files.map((path) => {
      const identity = fileIdentity(path);
      return identity ? cache.get(path, identity)?.n : undefined;
    });
    assert.deepEqual(kept, [undefined, 2, 3, 4]);
  });
}

test('report cache: once full, a trim drops the oldest down to 90 % of the most kept, so the next new reports do not each list the folder again', () => {
  const dir = freshDir('reports-trim');
  const cache = ReportCache.open<{ n: number }>(dir, 'schema', { maxReports: 20 });
  const count = (): number => readdirSync(join(dir, 'reports')).length;
  const write = (n: number): void => {
    const path = join(dir, `t${n}.jsonl`);
    writeFileSync(path, `{"n":${n}}\n`);
    const identity = fileIdentity(path);
    assert.ok(identity);
    cache.set(path, identity, { n });
    // Each an hour after the one before (the order does not hang on the clock's resolution).
    utimesSync(
      join(dir, 'reports', readdirSync(join(dir, 'reports')).find((f) => statSync(join(dir, 'reports', f)).mtimeMs > Date.now() - 60_000) ?? ''),
      new Date(Date.UTC(2026, 0, 1, n)),
      new Date(Date.UTC(2026, 0, 1, n)),
    );
  };
  for (let n = 1; n <= 20; n++) write(n);
  assert.equal(count(), 20);
  write(21);
  assert.equal(count(), 18, 'down to 90 %');
  write(22);
  write(23);
  assert.equal(count(), 20, 'no trim until it is full again');
  const kept = (n: number) => {
    const identity = fileIdentity(join(dir, `t${n}.jsonl`));
    return identity ? cache.get(join(dir, `t${n}.jsonl`), identity)?.n : undefined;
  };
  assert.deepEqual([kept(1), kept(3), kept(4), kept(23)], [undefined, undefined, 4, 23], 'the oldest went');
});

test('a first batch run (empty token cache) asks the main thread for nothing, yet fills the token cache for the next run', () => {
  const { dir } = writeBatch({ sessions: 40, projects: ['a', 'b'], seed: 0xf1a7, start: Date.UTC(2026, 0, 1), stepMs: 3_600_000, dir: freshDir('batch') });
  const cache = freshDir('cache');
  const cold = run(['.', '--ndjson', '--jobs', '2'], undefined, dir).stdout;
  assert.equal(run(['.', '--ndjson', '--jobs', '2'], cache, dir).stdout, cold);
  assert.ok(TokenCountCache.open(cache, 'o200k_base').size > 40, 'the workers returned their counts');
  // Without the rows, the files are read again and counted from the token cache: the same rows.
  rmSync(join(cache, 'analyze-rows.json'));
  assert.equal(run(['.', '--ndjson', '--jobs', '2'], cache, dir).stdout, cold);
});

test('batch --json after runs that kept only rows: the transcripts are read on the workers, as on a first run; once their reports are kept, none starts', () => {
  const { dir } = writeBatch({ sessions: 40, projects: ['a', 'b'], seed: 0x7e5, start: Date.UTC(2026, 0, 1), stepMs: 3_600_000, dir: freshDir('rows-only') });
  // A copy of the build whose analyze workers say so as they start.
  const copy = freshDir('marked-build');
  const bin = packageCopy(copy);
  const marks = join(copy, 'workers-started');
  writeFileSync(
    join(copy, 'dist', 'cli-bundle', 'analyze-worker.cjs'),
    `'use strict';\nrequire('node:fs').appendFileSync(${JSON.stringify(marks)}, 'started\\n');\nmodule.exports = require('./loader.cjs').load('analyze-worker');\n`,
  );
  const cache = freshDir('cache');
  const analyze = (args: readonly string[]): string => {
    const result = spawnSync(process.execPath, [bin, 'analyze', ...args, '--jobs', '2'], {
      cwd: dir,
      env: cliEnv({ DEVS_CTX_CACHE_DIR: cache }),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    assert.ok([0, 10, 11].includes(result.status ?? -1), result.stderr);
    return result.stdout;
  };
  const started = (): number => (existsSync(marks) ? readFileSync(marks, 'utf8').split('\n').length - 1 : 0);
  const cold = run(['.', '--json', '--jobs', '2'], undefined, dir).stdout;
  analyze(['.', '--ndjson']);
  assert.ok(started() > 0, 'a first run reads on the workers');
  rmSync(marks);
  assert.equal(analyze(['.', '--json']), cold);
  assert.ok(started() > 0, 'rows kept but no reports: read on the workers, not one by one on the main thread');
  rmSync(marks);
  assert.equal(analyze(['.', '--json']), cold);
  assert.equal(started(), 0, 'every report kept: nothing to read, no worker');
});

test("devs-ctx's own cache folder inside the folder analysed is not read as transcripts: each run prints the rows of the same sessions without it", () => {
  const dir = freshDir('home');
  const sessions = { sessions: 6, projects: ['alpha', 'beta'], seed: 0x18c, start: Date.UTC(2026, 0, 1), stepMs: 60_000 } as const;
  writeBatch({ ...sessions, dir });
  // The same sessions where no cache is: what every run must print.
  const reference = freshDir('reference');
  writeBatch({ ...sessions, dir: reference });
  // Inside the folder, and not hidden, so a quoted glob reaches it too. Its files are `.json`.
  const cache = join(dir, 'cache');
  const grow = (root: string, line: string): void => appendFileSync(join(root, 'alpha', 'session-0000.jsonl'), line);
  const last = `${readFileSync(join(dir, 'alpha', 'session-0000.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .pop()}\n`;
  // Three runs: the row cache written; the session grown (its state kept); grown again (read on from it).
  for (let step = 0; step < 3; step++) {
    if (step > 0) {
      grow(dir, last);
      grow(reference, last);
    }
    // --format: a session this small is kept for reading on only when its format is not left to detection.
    for (const args of [['.', '--ndjson'], ['.'], ['**/*.json*', '--ndjson']].map((a) => [...a, '--format', 'devs'])) {
      const expected = run(args, undefined, reference);
      // With the cache, and with --no-cache: the folder is devs-ctx's cache all the same.
      for (const flags of [[], ['--no-cache']]) {
        const got = runCli(['analyze', ...args, ...flags], { cwd: dir, env: { DEVS_CTX_CACHE_DIR: cache } });
        assert.equal(got.stdout, expected.stdout, `step ${step}: analyze ${[...args, ...flags].join(' ')}`);
        assert.equal(got.exitCode, expected.exitCode);
      }
    }
    assert.ok(readdirSync(cache).includes('analyze-rows.json'), 'the cache is in the folder analysed');
  }
  assert.ok(readdirSync(join(cache, 'resume')).length > 0, 'a grown session left its state there');
  // Reached through a symlink to the folder, it is still the cache.
  const link = join(freshDir('link'), 'home');
  symlinkSync(dir, link);
  const viaLink = runCli(['analyze', link, '--ndjson', '--format', 'devs'], { env: { DEVS_CTX_CACHE_DIR: cache } });
  assert.equal(viaLink.exitCode, 0, viaLink.stdout);
  assert.doesNotMatch(viaLink.stdout, /analyze-rows|resume/);
  // The cache named through a symlink of another name (DEVS_CTX_CACHE_DIR=~/cache-link, its folder in the walk as `cache`).
  const cacheLink = join(freshDir('cache-link'), 'devs-ctx-cache');
  symlinkSync(cache, cacheLink);
  for (const args of [
    ['.', '--json'],
    ['.', '--ndjson'],
    ['**/*.json*', '--ndjson'],
  ]) {
    const expected = run([...args, '--format', 'devs'], undefined, reference);
    for (let again = 0; again < 2; again++) {
      const got = runCli(['analyze', ...args, '--format', 'devs'], { cwd: dir, env: { DEVS_CTX_CACHE_DIR: cacheLink } });
      assert.equal(got.stdout, expected.stdout, `through a link of another name: analyze ${args.join(' ')}`);
      assert.equal(got.exitCode, expected.exitCode);
    }
  }
  assert.ok(readdirSync(join(cache, 'reports')).length > 0, 'the --json runs kept their reports there');
  // Named on its own, a cache file is read as asked (and is no transcript).
  const named = runCli(['analyze', join('cache', 'analyze-rows.json'), '--ndjson'], { cwd: dir, env: { DEVS_CTX_CACHE_DIR: cache } });
  assert.equal(named.exitCode, 4);
  assert.match(named.stdout, /cache\/analyze-rows\.json: not a transcript format devs-ctx knows/);
});

test('the caches are private: what devs-ctx writes there (excerpts of transcripts in the reports) is 0600, the folders it makes 0700, whatever the umask', () => {
  const dir = freshDir('private');
  for (const name of ['a', 'b']) copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), join(dir, `${name}.jsonl`));
  const cache = join(freshDir('private-cache'), 'devs-ctx');
  const analyze = (args: readonly string[]): void => {
    // A permissive umask, as most users have: the modes below are devs-ctx's own choice.
    const result = spawnSync('/bin/sh', ['-c', 'umask 022 && exec "$0" "$@"', process.execPath, join(repoRoot, 'bin', 'devs-ctx.js'), 'analyze', ...args], {
      cwd: dir,
      env: cliEnv({ DEVS_CTX_CACHE_DIR: cache }),
      encoding: 'utf8',
    });
    assert.ok([0, 10, 11].includes(result.status ?? -1), result.stderr);
  };
  analyze(['.', '--json']);
  analyze(['a.jsonl']);
  // A cache file an older version left readable by all is private once written again.
  chmodSync(join(cache, 'analyze-rows.json'), 0o644);
  appendFileSync(join(dir, 'b.jsonl'), `${readFileSync(join(dir, 'b.jsonl'), 'utf8').trimEnd().split('\n').at(-1)}\n`);
  analyze(['.', '--ndjson']);
  // And so is what an older version left readable by all and a run only reads (unchanged transcripts' reports).
  analyze(['.', '--json']);
  const loosen = (path: string): void => {
    chmodSync(path, statSync(path).isDirectory() ? 0o755 : 0o644);
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) loosen(join(path, entry));
  };
  loosen(join(cache, 'reports'));
  analyze(['.', '--json']);
  const seen: string[] = [];
  const walk = (path: string): void => {
    const mode = statSync(path).mode & 0o777;
    const name = path.slice(cache.length) || '/';
    seen.push(name);
    assert.equal(mode & 0o077, 0, `${name}: mode ${mode.toString(8)}, readable by others`);
    if (statSync(path).isDirectory()) for (const entry of readdirSync(path)) walk(join(path, entry));
  };
  walk(cache);
  for (const expected of ['/analyze-rows.json', '/reports', '/token-counts-o200k_base.bin'])
    assert.ok(seen.includes(expected), `${expected} written (${seen.join(', ')})`);
});

test('a newer model catalog under the same build (a reinstall) is not answered from reports and rows kept under the old one', () => {
  const copy = freshDir('catalog-build');
  const bin = packageCopy(copy, ['@pydantic/genai-prices']);
  const dir = freshDir('catalog-sessions');
  copyFileSync(join(repoRoot, 'fixtures/gemini/legacy-document.json'), join(dir, 'session.json'));
  const cache = freshDir('catalog-cache');
  const analyze = (args: readonly string[], withCache = true): string => {
    const result = spawnSync(process.execPath, [bin, 'analyze', ...args, ...(withCache ? [] : ['--no-cache'])], {
      cwd: dir,
      env: cliEnv({ DEVS_CTX_CACHE_DIR: cache }),
      encoding: 'utf8',
    });
    assert.ok([0, 10, 11].includes(result.status ?? -1), result.stderr);
    return result.stdout;
  };
  const window = (report: string): unknown => (JSON.parse(report) as { context: { window: unknown } }).context.window;
  const row = (ndjson: string): string => ndjson.split('\n')[0] ?? '';
  assert.equal(window(analyze(['session.json', '--json'])), 1_048_576);
  analyze(['.', '--ndjson']);
  // The catalog as a later release might give it: Gemini 2.5 Flash with another window.
  const catalog = join(copy, 'node_modules', '@pydantic', 'genai-prices', 'dist', 'index.cjs');
  const text = readFileSync(catalog, 'utf8');
  const entry = text.indexOf('{id:"gemini-2.5-flash",');
  const field = text.indexOf('context_window:', entry);
  assert.ok(entry >= 0 && field > entry, 'the catalog names gemini-2.5-flash and its window as this test expects');
  writeFileSync(catalog, `${text.slice(0, field)}context_window:400000${text.slice(text.indexOf(',', field))}`);
  const cold = analyze(['session.json', '--json'], false);
  assert.equal(window(cold), 400_000);
  assert.equal(analyze(['session.json', '--json']), cold, 'analyze FILE');
  assert.equal(row(analyze(['.', '--ndjson'])), row(analyze(['.', '--ndjson'], false)), 'analyze DIR');
});
