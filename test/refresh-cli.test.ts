import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, test } from 'node:test';
import type { RefreshReport } from '../src/core/reports/refresh.js';
import { assertGolden, runCli, runInProcess } from './helpers/cli.js';
import type { CliResult } from './helpers/cli.js';
import { filesUnder, realdataFiles, realdataName, realdataSkip, repoRoot } from './helpers/realdata.js';

const fixture = (path: string): string => join('fixtures', path);
const bytesOf = (path: string): Buffer => readFileSync(join(repoRoot, path));
const lines = (text: string | Buffer): string[] =>
  text
    .toString()
    .split('\n')
    .filter((l) => l !== '');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Golden-stable: generated ids and temp folders replaced. */
function normalised(result: CliResult, dir?: string): CliResult {
  const today = new RegExp(`${new Date().toISOString().slice(0, 10)}T[0-9:.]+Z`, 'g');
  const clean = (s: string): string => {
    let out = s.replace(UUID, '<uuid>').replace(today, '<now>');
    if (dir) out = out.split(dir).join('<tmp>');
    return out;
  };
  return { exitCode: result.exitCode, stdout: clean(result.stdout), stderr: clean(result.stderr) };
}

function workspace(name: string): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), `devs-ctx-refresh-${name}-`));
  return { dir, env: { DEVS_CTX_CACHE_DIR: join(dir, 'cache') } };
}

function copyIn(dir: string, from: string, name = basename(from)): string {
  const path = join(dir, name);
  copyFileSync(join(repoRoot, from), path);
  return path;
}

const report = (result: CliResult): RefreshReport => JSON.parse(result.stdout) as RefreshReport;

describe('refresh --check', () => {
  test('exit 12 when due, with the reason', () => {
    const result = runCli(['refresh', fixture('devs/basic-session.jsonl'), '--check']);
    assert.equal(result.exitCode, 12, result.stderr);
    assertGolden('refresh-check-due', result);
  });

  test('exit 0 when not due: a new node started the count again', () => {
    const result = runCli(['refresh', fixture('devs/node-change-resets-refresh.jsonl'), '--check']);
    assert.equal(result.exitCode, 0, result.stderr);
    assertGolden('refresh-check-not-due', result);
  });

  test('--json: one document, nothing on stderr; a refresh already there and a pending tool call are not due', () => {
    const due = runCli(['refresh', fixture('devs/basic-session.jsonl'), '--check', '--json']);
    assert.equal(due.exitCode, 12);
    assert.equal(due.stderr, '');
    const r = report(due);
    assert.equal(r.schemaVersion, 1);
    assert.deepEqual(
      { outcome: r.outcome, due: r.due, node: r.node, turnsSinceRefresh: r.turnsSinceRefresh, threshold: r.threshold, output: r.output, injected: r.injected },
      { outcome: 'due', due: true, node: 'implement', turnsSinceRefresh: 9, threshold: 5, output: null, injected: null },
    );

    const since = report(runCli(['refresh', fixture('devs/refresh-already-injected.jsonl'), '--check', '--json']));
    assert.deepEqual([since.outcome, since.turnsSinceRefresh, since.lastRefresh?.turnId], ['not-due', 2, 'r1']);
    const waiting = runCli(['refresh', fixture('devs/tool-call-pending.jsonl'), '--check', '--json', '--threshold', '2']);
    assert.equal(waiting.exitCode, 0);
    assert.equal(report(waiting).outcome, 'waiting-for-tool');
  });

  test('--check says not due (exit 0, outcome unavailable) when refresh could not write one: no TAS or PRD', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-refresh-nodocs-'));
    const lines = Array.from({ length: 8 }, (_, i) =>
      JSON.stringify({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', type: 'message', content: `turn ${i}` }),
    );
    writeFileSync(join(dir, 's.jsonl'), `${lines.join('\n')}\n`);
    const check = runCli(['refresh', 's.jsonl', '--check', '--json'], { cwd: dir });
    assert.equal(check.exitCode, 0, check.stdout);
    const report = JSON.parse(check.stdout) as { outcome: string; due: boolean; reason: string };
    assert.equal(report.outcome, 'unavailable');
    assert.equal(report.due, false);
    assert.match(report.reason, /no TAS or PRD/);
    // With a TAS given, the same transcript is due.
    writeFileSync(join(dir, 'tas.md'), '# TAS\n- [TAS-1] Postgres only');
    assert.equal(runCli(['refresh', 's.jsonl', '--check', '--tas', 'tas.md'], { cwd: dir }).exitCode, 12);
  });

  test('the config file sets the threshold; the flag wins over it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-refresh-config-'));
    copyFileSync(join(repoRoot, fixture('devs/basic-session.jsonl')), join(dir, 's.jsonl'));
    writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ refreshThreshold: 10 }));
    assert.equal(runCli(['refresh', 's.jsonl', '--check'], { cwd: dir }).exitCode, 0, 'not due at 10');
    assert.equal(runCli(['refresh', 's.jsonl', '--check', '--threshold', '9'], { cwd: dir }).exitCode, 12);
    writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ refreshThreshold: 0 }));
    const bad = runCli(['refresh', 's.jsonl', '--check'], { cwd: dir });
    assert.equal(bad.exitCode, 2, bad.stderr);
    assert.match(bad.stderr, /refreshThreshold/);
  });

  test('--threshold moves the point where it is due', () => {
    assert.equal(runCli(['refresh', fixture('devs/basic-session.jsonl'), '--check', '--threshold', '10']).exitCode, 0);
    assert.equal(runCli(['refresh', fixture('devs/basic-session.jsonl'), '--check', '--threshold', '9']).exitCode, 12);
  });
});

describe('refresh writes', () => {
  test('appends one refresh turn, in the node, after the input’s exact bytes; the report goes to stderr', () => {
    const input = bytesOf(fixture('devs/basic-session.jsonl'));
    const result = runCli(['refresh', fixture('devs/basic-session.jsonl')]);
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(Buffer.from(result.stdout).subarray(0, input.length).equals(input), 'every input line byte-identical');
    const added = lines(Buffer.from(result.stdout).subarray(input.length));
    assert.equal(added.length, 1);
    const turn = JSON.parse(added[0]!) as Record<string, string>;
    assert.deepEqual([turn['role'], turn['type'], turn['node']], ['system', 'refresh', 'implement']);
    assert.match(
      turn['content']!,
      /^\[CONTEXT REFRESH\]\n## TAS Summary\n# TAS\n[\s\S]*\[TAS-024\][\s\S]*\n\n## PRD Summary\n# PRD: Invoice export\n[\s\S]*REQ-103/,
    );
    assertGolden('refresh-basic-session', normalised(result));
  });

  test('run twice in a row, it injects once; --force does not inject again either', () => {
    const { dir, env } = workspace('twice');
    const first = runCli(['refresh', fixture('devs/basic-session.jsonl'), '-o', join(dir, 'once.jsonl')], { env });
    assert.equal(first.exitCode, 0, first.stderr);
    const once = readFileSync(join(dir, 'once.jsonl'));
    for (const flags of [[], ['--force']]) {
      const again = runCli(['refresh', join(dir, 'once.jsonl'), ...flags], { env });
      assert.equal(again.exitCode, 0, again.stderr);
      assert.ok(Buffer.from(again.stdout).equals(once), `${flags.join(' ')}: unchanged`);
      assert.match(again.stderr, /already a refresh/);
    }
    assert.equal(lines(once).filter((l) => l.includes('[CONTEXT REFRESH]')).length, 1);
  });

  test('-o with --json: the report names what was injected and where', () => {
    const { dir, env } = workspace('json');
    const out = join(dir, 'out.jsonl');
    const result = runCli(['refresh', fixture('devs/basic-session.jsonl'), '-o', out, '--json'], { env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stderr, '');
    const r = report(result);
    assert.equal(r.outcome, 'refreshed');
    assert.equal(r.output, out);
    assert.equal(r.injected?.placement, 'appended');
    assert.deepEqual(r.injected?.sources, { tas: 'turn t3', prd: 'turn t2' });
    assert.equal(r.injected?.condensed, false);
    const last = JSON.parse(lines(readFileSync(out)).at(-1)!) as { id: string; content: string };
    assert.equal(r.injected?.turnId, last.id);
    assert.equal(r.injected?.text, last.content);
    assert.ok((r.injected?.tokens ?? 0) > 50);
  });

  test('below the threshold the output is the input, byte for byte', () => {
    const result = runCli(['refresh', fixture('devs/node-change-resets-refresh.jsonl')]);
    assert.equal(result.exitCode, 0);
    assert.ok(Buffer.from(result.stdout).equals(bytesOf(fixture('devs/node-change-resets-refresh.jsonl'))));
    assert.match(result.stderr, /no refresh due; 3 turns since node implement began/);
  });

  test('SAOP envelopes: the last envelope is written anew with the refresh prepended to its reasoning', () => {
    const { dir, env } = workspace('saop');
    const out = join(dir, 'out.jsonl');
    const input = lines(bytesOf(fixture('devs/saop-refresh-due.jsonl')));
    const result = runCli(['refresh', fixture('devs/saop-refresh-due.jsonl'), '-o', out, '--json'], { env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(report(result).injected?.placement, 'envelope-rewritten');
    assert.equal(report(result).injected?.turnId, 'e5');
    const written = lines(readFileSync(out));
    assert.equal(written.length, input.length, 'no line added');
    assert.deepEqual(written.slice(0, -1), input.slice(0, -1), 'the other lines byte-identical');
    const before = JSON.parse(input.at(-1)!) as { thought: { reasoning: string } };
    const after = JSON.parse(written.at(-1)!) as { thought: { reasoning: string } };
    assert.deepEqual(Object.keys(after), Object.keys(before), 'key order kept');
    assert.ok(after.thought.reasoning.startsWith('[CONTEXT REFRESH]\n## TAS Summary\n'));
    assert.ok(after.thought.reasoning.endsWith(`\n\n${before.thought.reasoning}`));
    assert.deepEqual({ ...after, thought: before.thought }, before, 'only the reasoning changed');
    assert.equal(runCli(['refresh', out, '--check'], { env }).exitCode, 0, 'and it is not due again');
  });

  test('--tas/--prd files and --refresh-tokens: long documents condensed to the budget, once (cached by content)', () => {
    const { dir, env } = workspace('condense');
    const tas = [
      '# TAS',
      ...Array.from({ length: 200 }, (_, i) => `- [TAS-${100 + i}] Rule ${i}: every webhook attempt is recorded with its status and latency in milliseconds.`),
    ].join('\n');
    writeFileSync(join(dir, 'tas.md'), tas);
    writeFileSync(join(dir, 'prd.md'), '# PRD\n- REQ-1: deliver events.');
    const args = [
      'refresh',
      fixture('devs/basic-session.jsonl'),
      '--tas',
      join(dir, 'tas.md'),
      '--prd',
      join(dir, 'prd.md'),
      '--refresh-tokens',
      '600',
      '-o',
      join(dir, 'out.jsonl'),
      '--json',
    ];
    const first = runCli(args, { env });
    assert.equal(first.exitCode, 0, first.stderr);
    const r = report(first);
    assert.equal(r.injected?.condensed, true);
    assert.ok((r.injected?.tokens ?? 0) <= 600, `${r.injected?.tokens} tokens`);
    assert.deepEqual(r.injected?.sources, { tas: `file ${join(dir, 'tas.md')}`, prd: `file ${join(dir, 'prd.md')}` });
    assert.match(r.injected?.text ?? '', /## PRD Summary\n# PRD\n- REQ-1: deliver events\.$/);
    const cacheFile = join(dir, 'cache', 'refresh-summaries.json');
    assert.ok(existsSync(cacheFile), 'the condensation is cached');
    const cachedAt = statSync(cacheFile).mtimeMs;
    const second = runCli(args, { env });
    assert.equal(report(second).injected?.text, r.injected?.text);
    assert.equal(statSync(cacheFile).mtimeMs, cachedAt, 'an unchanged TAS is not condensed (nor the cache written) again');
  });
});

describe('refresh --in-place', () => {
  test('replaces the file, keeps its mode, leaves no temp file and no lock', () => {
    const { dir, env } = workspace('inplace');
    const path = copyIn(dir, fixture('devs/basic-session.jsonl'), 's.jsonl');
    chmodSync(path, 0o640);
    const before = readFileSync(path);
    const result = runCli(['refresh', path, '--in-place'], { env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.equal(result.stderr, '');
    assert.match(result.stdout, /refreshed; 9 turns since node implement began[\s\S]*written to /);
    const after = readFileSync(path);
    assert.ok(after.subarray(0, before.length).equals(before));
    assert.equal(lines(after.subarray(before.length)).length, 1);
    assert.equal(statSync(path).mode & 0o777, 0o640);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n !== 's.jsonl' && n !== 'cache'),
      [],
    );
    const again = runCli(['refresh', path, '--in-place', '--json'], { env });
    assert.equal(report(again).outcome, 'just-refreshed');
    assert.ok(readFileSync(path).equals(after), 'the second run changes nothing');
  });

  test('a lock held by a live process is exit 7; the file and the lock stay', () => {
    const { dir, env } = workspace('locked');
    const path = copyIn(dir, fixture('devs/basic-session.jsonl'), 's.jsonl');
    const lock = `${path}.devs-ctx.lock`;
    writeFileSync(lock, `${process.pid}\n`);
    const result = runCli(['refresh', path, '--in-place'], { env });
    assert.equal(result.exitCode, 7);
    assert.match(result.stderr, /locked by another devs-ctx/);
    assert.ok(readFileSync(path).equals(bytesOf(fixture('devs/basic-session.jsonl'))));
    assert.equal(readFileSync(lock, 'utf8'), `${process.pid}\n`);
  });

  test('--check never takes the lock or writes', () => {
    const { dir, env } = workspace('check-locked');
    const path = copyIn(dir, fixture('devs/basic-session.jsonl'), 's.jsonl');
    writeFileSync(`${path}.devs-ctx.lock`, `${process.pid}\n`);
    assert.equal(runCli(['refresh', path, '--check'], { env }).exitCode, 12);
  });
});

describe('refresh: bad input and usage', () => {
  const cases: [string, string[], number, RegExp][] = [
    ['a missing file', ['refresh', 'no-such-file.jsonl'], 3, /no-such-file/],
    ['an empty file', ['refresh', fixture('devs/empty.jsonl')], 4, /empty/],
    ['a bad threshold', ['refresh', fixture('devs/basic-session.jsonl'), '--threshold', '0'], 2, /--threshold 0/],
    ['--check with -o', ['refresh', fixture('devs/basic-session.jsonl'), '--check', '-o', 'x.jsonl'], 2, /--check writes nothing/],
    ['--check with --force', ['refresh', fixture('devs/basic-session.jsonl'), '--check', '--force'], 2, /--force/],
    ['--in-place on stdin', ['refresh', '-', '--in-place'], 2, /--in-place needs a file/],
    ['-o naming the input', ['refresh', fixture('devs/basic-session.jsonl'), '-o', fixture('devs/basic-session.jsonl')], 2, /-o names the input/],
    ['no TAS or PRD to refresh with', ['refresh', fixture('claude-code/glued-summary-line.jsonl')], 2, /no TAS or PRD/],
    ['an unreadable --tas', ['refresh', fixture('devs/basic-session.jsonl'), '--tas', 'missing-tas.md'], 3, /missing-tas\.md: cannot read/],
    ['an OpenHands run', ['refresh', fixture('openhands/several-runs-reads-last.jsonl'), '--force'], 2, /OpenHands/],
    ['a bad line under --strict', ['refresh', fixture('devs/malformed-lines.jsonl'), '--strict'], 4, /line \d+/],
  ];
  for (const [name, args, exitCode, message] of cases) {
    test(`${name}: exit ${exitCode}, nothing on stdout`, () => {
      const result = runCli(args);
      assert.equal(result.exitCode, exitCode, result.stderr);
      assert.equal(result.stdout, '');
      assert.match(result.stderr, message);
    });
  }

  test('errors in --json mode are JSON on stdout', () => {
    const result = runCli(['refresh', 'no-such-file.jsonl', '--check', '--json']);
    assert.equal(result.exitCode, 3);
    assert.equal(result.stderr, '');
    assert.equal((JSON.parse(result.stdout) as { error: { exitCode: number } }).error.exitCode, 3);
    const usage = runCli(['refresh', fixture('devs/basic-session.jsonl'), '--json']);
    assert.equal(usage.exitCode, 2);
    assert.match((JSON.parse(usage.stdout) as { error: { message: string } }).error.message, /needs somewhere else to go/);
  });

  test('stdin works', () => {
    const result = runCli(['refresh', '-', '--check'], { input: bytesOf(fixture('devs/basic-session.jsonl')) });
    assert.equal(result.exitCode, 12);
    assert.match(result.stdout, /\(stdin\) \(devs, node implement\): refresh due/);
  });
});

describe('refresh in every format', () => {
  const tasFile = join(repoRoot, 'fixtures', 'devs', 'saop-refresh-due.jsonl');

  /** --force --tas: a refresh is written wherever one may be; the result reads back with it as the latest turn. */
  async function refreshOnce(path: string, dir: string): Promise<{ result: CliResult; out: string }> {
    const out = join(dir, `${basename(path)}.out`);
    const result = await runInProcess(['refresh', path, '--force', '--tas', tasFile, '-o', out, '--json', '--no-cache']);
    return { result, out };
  }

  /** Refreshes each file, checks it, and returns one outcome line per file (for a golden). */
  async function refreshAll(paths: readonly string[]): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-refresh-all-'));
    const outcomes: string[] = [];
    for (const path of paths) {
      const name = path.startsWith(repoRoot) ? path.slice(repoRoot.length) : realdataName(path);
      const { result, out } = await refreshOnce(path, dir);
      if (result.exitCode !== 0) {
        outcomes.push(`${name}: exit ${result.exitCode}`);
        continue;
      }
      const r = report(result);
      outcomes.push(`${name}: ${r.outcome}${r.injected ? ` (${r.injected.placement})` : ''}`);
      if (r.outcome !== 'refreshed') continue;
      const input = readFileSync(path);
      const output = readFileSync(out);
      const rewritesDocument =
        r.format === 'gemini'
          ? lines(input).length === 1 || input.toString().trimStart().startsWith('{\n')
          : r.format === 'openai-chat' && !/messages-per-line|content-parts|swe-agent|tool-calls/.test(name);
      if (r.injected?.placement === 'envelope-rewritten') {
        assert.deepEqual(lines(output).slice(0, -1), lines(input).slice(0, -1), `${name}: the lines before the envelope are byte-identical`);
      } else if (!rewritesDocument) {
        const body = input.at(-1) === 0x0a ? input : Buffer.concat([input, Buffer.from('\n')]);
        assert.ok(output.subarray(0, body.length).equals(body), `${name}: the input lines are byte-identical`);
      }
      const check = await runInProcess(['refresh', out, '--check', '--json', '--no-cache']);
      assert.equal(check.exitCode, 0, `${name}: ${check.stdout}`);
      assert.equal(report(check).outcome, 'just-refreshed', name);
      const analyzed = await runInProcess(['analyze', out, '--json', '--no-cache']);
      assert.ok([0, 10, 11].includes(analyzed.exitCode), `${name}: the output reads back: ${analyzed.stdout.slice(0, 300)}`);
    }
    return outcomes;
  }

  test('every fixture: written, valid for its tool, and not due again', async () => {
    const outcomes = await refreshAll(filesUnder(join(repoRoot, 'fixtures')).filter((p) => !p.endsWith('empty.jsonl')));
    assertGolden('refresh-every-fixture', { exitCode: 0, stdout: `${outcomes.join('\n')}\n`, stderr: '' });
  });

  test('every real transcript: written, valid for its tool, and not due again', { skip: realdataSkip }, async () => {
    const outcomes = await refreshAll(realdataFiles());
    assertGolden('refresh-realdata-every-file', { exitCode: 0, stdout: `${outcomes.join('\n')}\n`, stderr: '' });
  });

  test('Claude Code: one isMeta user line, chained to the last chain line, with its neighbours’ session fields', { skip: realdataSkip }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-refresh-claude-'));
    const path = realdataFiles('claude-code').find((p) => p.endsWith('short.jsonl'))!;
    const { result, out } = await refreshOnce(path, dir);
    assert.equal(result.exitCode, 0, result.stdout);
    const values = lines(readFileSync(out)).map((l) => JSON.parse(l) as Record<string, unknown>);
    const added = values.at(-1)!;
    const byUuid = new Map(values.map((v) => [v['uuid'], v]));
    const parent = byUuid.get(added['parentUuid']);
    assert.ok(parent, 'the parent exists');
    assert.equal(added['isMeta'], true);
    assert.equal(added['type'], 'user');
    assert.equal(added['isSidechain'], false);
    for (const key of ['sessionId', 'cwd', 'version', 'gitBranch']) assert.equal(added[key], parent[key], key);
    assert.match(JSON.stringify(added['message']), /\[CONTEXT REFRESH\]/);
    // The parent is the leaf Claude Code resumes from, or a system line it wrote after it.
    const chainTypes = new Set(['user', 'assistant', 'attachment', 'system']);
    assert.ok(chainTypes.has(String(parent['type'])));
    assert.equal(report(result).injected?.turnId, added['uuid']);
  });

  test('golden: --check on a real Claude Code session', { skip: realdataSkip }, () => {
    const path = realdataFiles('claude-code').find((p) => p.includes('01-'))!;
    assertGolden('refresh-realdata-claude-check', runCli(['refresh', join('..', 'shared', 'realdata', realdataName(path)), '--check']));
  });
});

test('lines refresh cannot read (a truncated last line) are reported with their line number, in the text and in --json', () => {
  const { dir, env } = workspace('malformed');
  const path = copyIn(dir, fixture('devs/over-soft-limit.jsonl'), 's.jsonl');
  writeFileSync(path, `${readFileSync(path, 'utf8')}{"id":"cut","role":"user","type":"mess`);
  const text = runCli(['refresh', 's.jsonl', '--check'], { cwd: dir, env });
  assert.match(text.stdout + text.stderr, /skipped or odd lines \(1\): line 18: /);
  const json = report(runCli(['refresh', 's.jsonl', '--check', '--json'], { cwd: dir, env }));
  assert.deepEqual(
    json.issues.map((i) => i.line),
    [18],
  );
});
