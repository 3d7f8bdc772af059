import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { after, mock, test } from 'node:test';
import { parseTimeBound, parseTimeRange, spanInRange } from '../src/cli/batch/range.js';
import { inputRoot } from '../src/cli/batch/discover.js';
import { Spill } from '../src/cli/batch/spill.js';
import { byCodeUnits } from '../src/core/compare.js';
import { projectOf } from '../src/cli/batch/session.js';
import { progressLine, startBatchProgress } from '../src/cli/render/analyze-batch-progress.js';
import { ALIGN_BLOCK, shortModel, shortSize, truncateMiddle } from '../src/cli/render/analyze-batch.js';
import { assertGolden, cliEnv, runCli, runInProcess } from './helpers/cli.js';
import { spawnChild } from './helpers/child.js';
import { writeBatch } from './helpers/batch-sessions.js';
import type { GeneratedSession } from './helpers/batch-sessions.js';
import { realdataDir, realdataSkip, repoRoot } from './helpers/realdata.js';
import { subagentLines } from './helpers/transcripts.js';

// A few hundred small sessions over several projects, one every 3 hours from 2026-03-01 (UTC).
const START = Date.UTC(2026, 2, 1);
const STEP = 3 * 3_600_000;
const PROJECTS = ['alpha', 'beta', 'gamma/nested', '-home-dev-app'];
const batch = writeBatch({ sessions: 240, projects: PROJECTS, seed: 0xba7c4, start: START, stepMs: STEP });
// Claude Code keeps subagents under <project>/<sessionId>/subagents/: they count for <project>.
mkdirSync(join(batch.dir, '-home-dev-app', 'abc', 'subagents'), { recursive: true });
copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), join(batch.dir, '-home-dev-app', 'abc', 'subagents', 'agent-1.jsonl'));
after(() => rmSync(batch.dir, { recursive: true, force: true }));

const LIMITS = ['--soft-limit', '1500', '--hard-limit', '3000'];

interface NdRow {
  schemaVersion: number;
  type: 'session' | 'total';
  file: string;
  project: string;
  format?: string;
  turns?: number;
  totalTokens?: number;
  contextTokens?: number;
  urgency?: 'none' | 'soft' | 'hard';
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  error?: { code: string; exitCode: number; message: string };
}
interface NdTotal {
  type: 'total';
  total: { transcripts: number; failed: number; turns: number; totalTokens: number; urgency: string; outOfRange: number };
  projects: { project: string; transcripts: number; failed: number; turns: number; totalTokens: number; urgency: string; subagents: number }[];
  range: { since: string | null; until: string | null } | null;
}

function ndjson(args: readonly string[], cwd = batch.dir): { rows: NdRow[]; total: NdTotal; exitCode: number; stderr: string } {
  const result = runCli(['analyze', ...args, '--ndjson'], { cwd });
  assert.ok(result.stdout.endsWith('\n'), result.stderr);
  const lines = result.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as NdRow | NdTotal);
  const total = lines.pop() as NdTotal;
  assert.equal(total.type, 'total');
  return { rows: lines as NdRow[], total, exitCode: result.exitCode, stderr: result.stderr };
}

const RANK = { none: 0, soft: 1, hard: 2 } as const;

test('batch --ndjson: one parseable line per session in discovery order, then a totals line; equal to analysing each file alone', async () => {
  const { rows, total, stderr } = ndjson(['.', ...LIMITS]);
  assert.equal(stderr, '', 'data modes keep stderr quiet');
  assert.equal(rows.length, batch.sessions.length + 1);
  assert.ok(rows.every((r) => r.schemaVersion === 1 && r.type === 'session'));
  // Discovery order: the walk of sorted names, depth first (as a directory always listed).
  const files = rows.map((r) => r.file);
  const expected = [...files].sort((a, b) => {
    const pa = a.split('/');
    const pb = b.split('/');
    for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
      const c = byCodeUnits(pa[i] ?? '', pb[i] ?? '');
      if (c !== 0) return c;
    }
    return pa.length - pb.length;
  });
  assert.deepEqual(files, expected);
  // The same numbers as the single-file analyze of every file.
  for (const row of rows) {
    // `--`: Claude Code's project folders start with '-'.
    const single = await runInProcess(['analyze', '--json', ...LIMITS, '--', row.file], { cwd: batch.dir });
    const report = JSON.parse(single.stdout) as {
      totalTokens: number;
      turns: number;
      urgency: string;
      format: string;
      context: { tokens: number; basis: string; model: string | null; window: number | null };
      lifetime: { peak: number; compactions: number };
      recorded: { contextTokens: number } | null;
      issues: { line: number }[];
    };
    const r = row as unknown as Record<string, unknown>;
    assert.deepEqual(
      [
        row.totalTokens,
        row.turns,
        row.urgency,
        row.format,
        r['contextTokens'],
        r['contextBasis'],
        r['model'],
        r['window'],
        r['peakTokens'],
        r['compactions'],
        r['recordedTokens'],
        r['issues'],
      ],
      [
        report.totalTokens,
        report.turns,
        report.urgency,
        report.format,
        report.context.tokens,
        report.context.basis,
        report.context.model,
        report.context.window,
        report.lifetime.peak,
        report.lifetime.compactions,
        report.recorded?.contextTokens ?? null,
        report.issues.length,
      ],
      row.file,
    );
  }
  assert.equal(total.total.transcripts, rows.length);
  assert.equal(
    total.total.totalTokens,
    rows.reduce((s, r) => s + (r.totalTokens ?? 0), 0),
  );
  // With no workers (--jobs 1) the lines are the same, byte for byte.
  const inline = runCli(['analyze', '.', ...LIMITS, '--ndjson', '--jobs', '1'], { cwd: batch.dir });
  assert.equal(inline.stdout, runCli(['analyze', '.', ...LIMITS, '--ndjson', '--jobs', '3'], { cwd: batch.dir }).stdout);
});

test('batch: the same file reached twice (its path again, a symlink to it, a hard link) is read once, under the name it was first reached by', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-same-file-'));
  const session = readFileSync(join(batch.dir, batch.sessions[0]?.file ?? ''));
  writeFileSync(join(dir, 'a.jsonl'), session);
  symlinkSync('a.jsonl', join(dir, 'b.jsonl'));
  linkSync(join(dir, 'a.jsonl'), join(dir, 'c.jsonl'));
  // The same bytes in a file of its own: another transcript.
  writeFileSync(join(dir, 'd.jsonl'), session);
  for (const cache of [[], ['--no-cache']]) {
    const walked = ndjson(['.', ...cache], dir);
    assert.deepEqual(
      walked.rows.map((r) => r.file),
      ['a.jsonl', 'd.jsonl'],
    );
    assert.equal(walked.total.total.transcripts, 2);
    const named = ndjson(['c.jsonl', '.', 'b.jsonl', 'a.jsonl', ...cache], dir);
    assert.deepEqual(
      named.rows.map((r) => r.file),
      ['c.jsonl', 'd.jsonl'],
    );
    assert.equal(named.total.total.turns, walked.total.total.turns);
  }
});

test('batch: names are ordered by code units, the same whatever the locale (Zeta before alpha, as `LC_ALL=C ls` lists them)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-order-'));
  try {
    for (const name of ['alpha.jsonl', 'Zeta.jsonl', 'beta.jsonl', '_under.jsonl', 'Alpha.jsonl']) {
      copyFileSync(join(repoRoot, 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl'), join(dir, name));
    }
    for (const env of [
      { LANG: 'en_US.UTF-8', LC_ALL: 'en_US.UTF-8' },
      { LANG: 'C', LC_ALL: 'C' },
    ]) {
      const result = runCli(['analyze', '.', '--ndjson'], { cwd: dir, env });
      const files = result.stdout
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as NdRow).file)
        .filter((f) => f !== undefined);
      assert.deepEqual(files, ['Alpha.jsonl', 'Zeta.jsonl', '_under.jsonl', 'alpha.jsonl', 'beta.jsonl'], JSON.stringify(env));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('batch: per-project totals add up the rows; a subagent transcript counts for its project', () => {
  const { rows, total } = ndjson(['.', ...LIMITS]);
  const sums = new Map<string, { transcripts: number; turns: number; totalTokens: number; urgency: number }>();
  for (const r of rows) {
    const p = sums.get(r.project) ?? { transcripts: 0, turns: 0, totalTokens: 0, urgency: 0 };
    p.transcripts++;
    p.turns += r.turns ?? 0;
    p.totalTokens += r.totalTokens ?? 0;
    p.urgency = Math.max(p.urgency, RANK[r.urgency ?? 'none']);
    sums.set(r.project, p);
  }
  assert.deepEqual(
    total.projects.map((p) => p.project),
    ['-home-dev-app', 'alpha', 'beta', 'gamma/nested'],
  );
  for (const p of total.projects) {
    const s = sums.get(p.project);
    assert.deepEqual(
      [p.transcripts, p.turns, p.totalTokens, RANK[p.urgency as keyof typeof RANK], p.failed],
      [s?.transcripts, s?.turns, s?.totalTokens, s?.urgency, 0],
      p.project,
    );
  }
  assert.equal(rows.find((r) => r.file.endsWith('agent-1.jsonl'))?.project, '-home-dev-app');
  assert.equal(projectOf('a.jsonl'), '.');
  assert.equal(projectOf('/x/.claude/projects/-x-app/1234/subagents/agent-9.jsonl'), '/x/.claude/projects/-x-app');
  // For a person: a table of projects after the total.
  const human = runCli(['analyze', '.', ...LIMITS], { cwd: batch.dir });
  // Its subagent transcript is counted beside its sessions, not as one.
  assert.match(human.stdout, /\nBy project\nproject +sessions +turns +tokens +worst\n-home-dev-app +60 \(\+1 subagent\) /);
  assert.equal(total.projects.find((p) => p.project === '-home-dev-app')?.subagents, 1);
});

test('batch --sort tokens|urgency: rows largest first, ties in discovery order, printed at the end', () => {
  const plain = ndjson(['.', ...LIMITS]).rows;
  const byTokens = ndjson(['.', ...LIMITS, '--sort', 'tokens']).rows;
  assert.deepEqual([...byTokens].map((r) => r.file).sort(), [...plain].map((r) => r.file).sort());
  const index = new Map(plain.map((r, i) => [r.file, i]));
  for (let i = 1; i < byTokens.length; i++) {
    const [a, b] = [byTokens[i - 1], byTokens[i]];
    assert.ok(a && b);
    assert.ok((a.contextTokens ?? 0) > (b.contextTokens ?? 0) || (a.contextTokens === b.contextTokens && (index.get(a.file) ?? 0) < (index.get(b.file) ?? 0)));
  }
  const byUrgency = ndjson(['.', ...LIMITS, '--sort', 'urgency']).rows;
  const urgencies = byUrgency.map((r) => RANK[r.urgency ?? 'none']);
  assert.deepEqual(
    urgencies,
    [...urgencies].sort((a, b) => b - a),
  );
  assert.ok(urgencies.includes(2) && urgencies.includes(1) && urgencies.includes(0), 'the batch has all three urgencies');
  for (let i = 1; i < byUrgency.length; i++) {
    const [a, b] = [byUrgency[i - 1], byUrgency[i]];
    if (a?.urgency === b?.urgency) assert.ok((a?.contextTokens ?? 0) >= (b?.contextTokens ?? 0));
  }
  // The text table too.
  const human = runCli(['analyze', '.', ...LIMITS, '--sort', 'tokens'], { cwd: batch.dir });
  const firstRow = human.stdout.split('\n')[1] ?? '';
  // A subagent's row goes under its session's (this one's session is not in the batch: at the end).
  assert.equal(firstRow.split(/\s+/)[0], byTokens.find((r) => !r.file.includes('/subagents/'))?.file);
});

test('batch --sort tokens orders by the size the model sees (the context column, contextTokens), not the plain estimate', () => {
  // Claude Code sessions record their context: it differs from the estimate of the turns in the file.
  const rows = ndjson([join(repoRoot, 'fixtures/claude-code'), '--sort', 'tokens', '--no-cache']).rows.filter((r) => !r.error);
  const context = rows.map((r) => r.contextTokens ?? 0);
  assert.deepEqual(
    context,
    [...context].sort((a, b) => b - a),
  );
  const estimates = rows.map((r) => r.totalTokens ?? 0);
  assert.notDeepEqual(
    estimates,
    [...estimates].sort((a, b) => b - a),
    'the fixtures tell the two orders apart',
  );
  const human = runCli(['analyze', join(repoRoot, 'fixtures/claude-code'), '--sort', 'tokens', '--no-cache']);
  assert.match(human.stdout.split('\n')[1] ?? '', /^multi-blo/);
});

test('analyze stopped by Ctrl-C or SIGTERM: exit 130, and --json / --ndjson still print valid JSON that says so', async () => {
  const bin = join(repoRoot, 'bin/devs-ctx.js');
  const stop = async (args: readonly string[], phase: string, signal: NodeJS.Signals) => {
    const run = spawnChild(process.execPath, [bin, 'analyze', ...args], { cwd: batch.dir, env: cliEnv({ DEVS_CTX_TEST_PAUSE: phase }) });
    await run.printed(new RegExp(`test pause at ${phase}`));
    run.child.kill(signal);
    return run.exited;
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    // A batch, stopped after its first rows: the document is closed with the error instead of the totals.
    const json = await stop(['.', '--json', '--no-cache', '--jobs', '2'], 'batch', signal);
    assert.equal(json.signal, null, `${signal}: killed`);
    assert.equal(json.code, 130, `${signal}: ${json.stderr}`);
    const doc = JSON.parse(json.stdout) as { transcripts: unknown[]; error: { code: string; exitCode: number }; total?: unknown };
    assert.ok(doc.transcripts.length > 0 && doc.transcripts.length < 241, `${doc.transcripts.length} transcripts`);
    assert.deepEqual([doc.error.code, doc.error.exitCode, doc.total], ['interrupted', 130, undefined]);
    const nd = await stop(['.', '--ndjson', '--no-cache'], 'batch', signal);
    assert.equal(nd.code, 130, nd.stderr);
    const lines = nd.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; error?: { code: string } });
    assert.ok(lines.length > 1);
    assert.deepEqual(lines.at(-1), { schemaVersion: 1, type: 'error', error: { code: 'interrupted', exitCode: 130, message: 'interrupted' } });
    assert.ok(lines.slice(0, -1).every((l) => l.type === 'session'));
    const text = await stop(['.', '--no-cache'], 'batch', signal);
    assert.equal(text.code, 130);
    assert.match(text.stderr, /^devs-ctx: interrupted$/m);
    // Sorted, the rows done so far are printed, in order, before the error.
    const sorted = await stop(['.', '--json', '--no-cache', '--sort', 'tokens'], 'batch', signal);
    assert.equal(sorted.code, 130, sorted.stderr);
    const sortedDoc = JSON.parse(sorted.stdout) as { transcripts: { context: { tokens: number } }[]; error: { code: string } };
    assert.ok(sortedDoc.transcripts.length > 0, 'the reports done so far');
    const sizes = sortedDoc.transcripts.map((t) => t.context.tokens);
    assert.deepEqual(
      sizes,
      [...sizes].sort((a, b) => b - a),
    );
    assert.equal(sortedDoc.error.code, 'interrupted');
    const sortedText = await stop(['.', '--no-cache', '--sort', 'tokens'], 'batch', signal);
    assert.equal(sortedText.code, 130);
    assert.ok(sortedText.stdout.split('\n').filter((l) => l.includes('.jsonl')).length > 0, 'the table has the rows done so far');
    // One file: nothing printed yet, so the error document alone.
    const one = await stop([join(repoRoot, 'fixtures/devs/basic-session.jsonl'), '--json', '--no-cache'], 'read', signal);
    assert.equal(one.code, 130, one.stderr);
    assert.equal((JSON.parse(one.stdout) as { error: { code: string } }).error.code, 'interrupted');
  }
});

test('analyze waiting for input (a FIFO with no writer, standard input that stays open) ends at the first Ctrl-C or SIGTERM: exit 130', {
  skip: process.platform === 'win32',
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-wait-'));
  try {
    assert.equal(spawnSync('mkfifo', [join(dir, 'pipe.jsonl')]).status, 0);
    copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), join(dir, 'a.jsonl'));
    const bin = join(repoRoot, 'bin/devs-ctx.js');
    for (const [args, signal] of [
      [['pipe.jsonl'], 'SIGTERM'],
      [['pipe.jsonl', '--json'], 'SIGINT'],
      [['pipe.jsonl', 'a.jsonl', '--ndjson'], 'SIGINT'],
      [['-', '--json'], 'SIGTERM'],
      [['a.jsonl', '-', '--ndjson', '--jobs', '1'], 'SIGTERM'],
    ] as const) {
      // Nobody writes the FIFO; standard input is a pipe the test keeps open without writing.
      const run = spawnChild(process.execPath, [bin, 'analyze', ...args, '--no-cache'], { cwd: dir, env: cliEnv({ DEVS_CTX_TEST_PAUSE: 'reading' }) });
      await run.printed(/test pause at reading/);
      run.child.kill(signal);
      const exit = await run.exited;
      assert.equal(exit.signal, null, `${args.join(' ')}: ended by ${exit.signal}`);
      assert.equal(exit.code, 130, `${args.join(' ')}: ${exit.stderr}`);
      if ((args as readonly string[]).includes('--json')) assert.equal((JSON.parse(exit.stdout) as { error: { code: string } }).error.code, 'interrupted');
      if ((args as readonly string[]).includes('--ndjson'))
        assert.equal((JSON.parse(exit.stdout.trimEnd().split('\n').at(-1) ?? '') as { type: string }).type, 'error');
      run.child.stdin?.end();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the --sort spill file closes once: a second close (a failure and an interrupt together) is no internal error', () => {
  const spill = new Spill();
  const ref = spill.write('{"a":1}');
  assert.equal(spill.read(ref).toString('utf8'), '{"a":1}');
  spill.close();
  assert.doesNotThrow(() => spill.close());
});

test('batch --json --sort with no usable temporary folder (TMPDIR missing, or a file) is exit 3 naming TMPDIR, not an internal error', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'devs-ctx-tmpdir-')), 'not-a-folder');
  writeFileSync(file, '');
  for (const tmp of ['/nonexistent-devs-ctx-tmp', file]) {
    const result = runCli(['analyze', '.', '--json', '--sort', 'tokens'], { cwd: batch.dir, env: { TMPDIR: tmp } });
    assert.equal(result.exitCode, 3, result.stdout);
    const { error } = JSON.parse(result.stdout) as { error: { code: string; message: string; hint?: string } };
    assert.equal(error.code, 'input');
    assert.match(error.message, new RegExp(`^cannot make the temporary file --sort keeps the reports in, in ${tmp} \\(TMPDIR\\): E(NOENT|NOTDIR)`));
    assert.match(error.hint ?? '', /TMPDIR/);
  }
});

test('batch --json --sort whose temporary file cannot grow (a full disk: a file size limit here) is exit 3 naming TMPDIR, not a crash', () => {
  // SIGXFSZ ignored, a write past the limit fails (EFBIG) as one on a full disk does (ENOSPC); --no-cache: no other file grows.
  const result = spawnSync(
    '/bin/sh',
    [
      '-c',
      'trap "" XFSZ; ulimit -f 64; exec "$0" "$@"',
      process.execPath,
      join(repoRoot, 'bin', 'devs-ctx.js'),
      'analyze',
      '.',
      '--json',
      '--sort',
      'tokens',
      '--no-cache',
    ],
    {
      cwd: batch.dir,
      env: cliEnv(),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  assert.equal(result.status, 3, result.stderr);
  assert.equal(result.stderr, '');
  // The error alone: the document's head waits for its first row.
  const { error } = JSON.parse(result.stdout) as { error: { code: string; message: string } };
  assert.equal(error.code, 'input');
  assert.match(error.message, /^cannot write the temporary file --sort keeps the reports in, in [^ ]+ \(TMPDIR\): EFBIG/);
});

test('batch --since/--until: a session is in when its span of turn timestamps overlaps the range', () => {
  const since = new Date(START + 100 * STEP + 20 * 60_000); // inside session 100's span for sessions with over 20 turns
  const until = new Date(START + 150 * STEP);
  const { rows, total } = ndjson(['.', ...LIMITS, '--since', since.toISOString(), '--until', until.toISOString()]);
  // --until is inclusive of its instant: session 150 starts exactly at it.
  const inRange = (s: GeneratedSession): boolean => s.last >= since.getTime() && s.first <= until.getTime();
  const expected = batch.sessions
    .filter(inRange)
    .map((s) => s.file)
    .sort();
  assert.ok(expected.length > 10);
  // The subagent fixture carries 2025 timestamps: out of range.
  assert.deepEqual(rows.map((r) => r.file).sort(), expected);
  assert.equal(total.total.outOfRange, batch.sessions.length + 1 - expected.length);
  assert.deepEqual(total.range, { since: since.toISOString(), until: until.toISOString() });
  for (const r of rows) assert.ok(r.firstTimestamp && r.lastTimestamp && r.firstTimestamp <= r.lastTimestamp);

  // A date alone is a whole (local, here UTC) day for --until.
  const day = ndjson(['.', '--since', '2026-03-02', '--until', '2026-03-02']).rows;
  const dayStart = Date.UTC(2026, 2, 2);
  assert.deepEqual(
    day.map((r) => r.file).sort(),
    batch.sessions
      .filter((s) => s.last >= dayStart && s.first < dayStart + 86_400_000)
      .map((s) => s.file)
      .sort(),
  );
});

test('batch --since with an age counts back from now', () => {
  const recent = writeBatch({ sessions: 20, projects: ['p'], seed: 7, start: Date.now() - 20 * 3_600_000, stepMs: 3_600_000, maxTurns: 5 });
  try {
    const { rows, total } = ndjson(['.', '--since', '6h'], recent.dir);
    const cut = Date.now() - 6 * 3_600_000;
    const expected = recent.sessions.filter((s) => s.last >= cut).length;
    // The clock moves between here and the run: allow one session at the edge.
    assert.ok(Math.abs(rows.length - expected) <= 1, `${rows.length} vs ${expected}`);
    assert.equal(total.total.outOfRange + rows.length, 20);
  } finally {
    rmSync(recent.dir, { recursive: true, force: true });
  }
});

test('batch --json: one document, the multi-file shape with additions, reports equal to single-file --json', async () => {
  const result = runCli(['analyze', 'alpha', 'beta', ...LIMITS, '--json'], { cwd: batch.dir });
  assert.equal(result.stderr, '');
  const doc = JSON.parse(result.stdout) as {
    schemaVersion: number;
    transcripts: Record<string, unknown>[];
    total: Record<string, unknown>;
    projects: { project: string }[];
    range: unknown;
  };
  assert.deepEqual(Object.keys(doc), ['schemaVersion', 'transcripts', 'total', 'projects', 'range']);
  assert.equal(doc.schemaVersion, 1);
  assert.equal(doc.transcripts.length, 120);
  assert.deepEqual(Object.keys(doc.total), ['transcripts', 'failed', 'turns', 'totalTokens', 'urgency', 'outOfRange', 'subagents', 'notTranscripts']);
  assert.deepEqual(
    doc.projects.map((p) => p.project),
    ['alpha', 'beta'],
  );
  assert.equal(doc.range, null);
  const first = doc.transcripts[0] ?? {};
  const single = JSON.parse((await runInProcess(['analyze', String(first['file']), '--json', ...LIMITS], { cwd: batch.dir })).stdout) as Record<
    string,
    unknown
  >;
  const { project, firstTimestamp, lastTimestamp, ...rest } = first;
  assert.deepEqual(rest, single, 'each transcript is the single-file report');
  assert.equal(project, 'alpha');
  assert.equal(typeof firstTimestamp, 'string');
  assert.equal(typeof lastTimestamp, 'string');
  // Sorted --json gives the same documents in another order.
  const sorted = JSON.parse(runCli(['analyze', 'alpha', 'beta', ...LIMITS, '--json', '--sort', 'tokens'], { cwd: batch.dir }).stdout) as typeof doc;
  const key = (t: Record<string, unknown>): string => JSON.stringify(t);
  assert.deepEqual(sorted.transcripts.map(key).sort(), doc.transcripts.map(key).sort());
  const tokens = sorted.transcripts.map((t) => Number(t['totalTokens']));
  assert.deepEqual(
    tokens,
    [...tokens].sort((a, b) => b - a),
  );
  assert.deepEqual(sorted.total, doc.total);
});

test('batch: unreadable transcripts are rows, the batch goes on, and the first one decides the exit code', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-batch-bad-'));
  try {
    const some = writeBatch({ sessions: 30, projects: ['a', 'b'], seed: 3, start: START, stepMs: STEP, dir, maxTurns: 6 });
    writeFileSync(join(dir, 'a', 'empty.jsonl'), '');
    writeFileSync(join(dir, 'b', 'junk.jsonl'), 'not json at all\n{{{\n');
    const nd = ndjson(['.'], dir);
    assert.equal(nd.exitCode, 4);
    assert.equal(nd.rows.length, 32);
    const bad = nd.rows.filter((r) => r.error);
    assert.deepEqual(
      bad.map((r) => [r.file, r.error?.exitCode, r.project]),
      [
        ['a/empty.jsonl', 4, 'a'],
        ['b/junk.jsonl', 4, 'b'],
      ],
    );
    assert.equal(nd.total.total.failed, 2);
    assert.equal(nd.total.total.transcripts, 32);
    const human = runCli(['analyze', '.'], { cwd: dir });
    assert.equal(human.exitCode, 4);
    assert.match(human.stdout, /^a\/empty\.jsonl +(- +){6}error \(exit 4\)$/m);
    assert.match(human.stdout, /^total {2}30 sessions: \d+ hard · \d+ soft · \d+ none · 2 unreadable$/m);
    assert.match(human.stderr, /^devs-ctx: a\/empty\.jsonl: the transcript is empty$/m);
    assert.equal(human.stdout.split('\n').filter((l) => l.startsWith('a/') || l.startsWith('b/')).length, 32);
    // A subdirectory that cannot be listed is a row too, where it was found (exit 3 as an input error).
    if (process.getuid?.() !== 0) {
      mkdirSync(join(dir, 'b', 'locked'));
      chmodSync(join(dir, 'b', 'locked'), 0);
      const locked = ndjson(['b'], dir);
      assert.equal(locked.exitCode, 4, 'b/junk.jsonl comes first');
      assert.ok(locked.rows.some((r) => r.file === 'b/locked' && r.error?.exitCode === 3));
    }
    assert.equal(some.sessions.length, 30);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('batch: a .json or .jsonl file found by a walk or a glob that is JSON but no transcript (Gemini CLI logs.json, a saved report) is left out and counted, not an error; named, it is one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-batch-other-'));
  try {
    // ~/.gemini/tmp/<hash>: a session, and Gemini CLI's own files beside it (FORMATS §3.4).
    const project = join(dir, '.gemini', 'tmp', '0b7dfb12');
    mkdirSync(join(project, 'chats'), { recursive: true });
    mkdirSync(join(project, 'checkpoints'));
    copyFileSync(join(repoRoot, 'fixtures/gemini/rewind-to.jsonl'), join(project, 'chats', 'session-2026-04-29T21-39-gemini_s.jsonl'));
    writeFileSync(join(project, 'logs.json'), '[{"sessionId":"s","messageId":0,"type":"user","message":"hi","timestamp":"2026-01-01T00:00:00Z"}]');
    writeFileSync(join(project, 'checkpoint-mytag.json'), '[{"role":"user","parts":[{"text":"hello"}]}]');
    writeFileSync(join(project, 'checkpoints', 'restore.json'), JSON.stringify({ history: [], clientHistory: [], commitHash: 'abc' }, null, 2));
    // A report saved where the next run walks, and another tool's JSONL log.
    writeFileSync(join(dir, 'report.json'), JSON.stringify({ schemaVersion: 1, transcripts: [], total: { transcripts: 0 } }, null, 2));
    writeFileSync(join(dir, 'events.jsonl'), '{"event":"start","at":1}\n{"event":"stop","at":2}\n');
    // Damaged files stay errors: nothing in them is JSON.
    writeFileSync(join(dir, 'junk.jsonl'), 'not json at all\n');
    // Enough sessions for the worker threads (more than 16 files to read), and --jobs 1: the same.
    writeBatch({ sessions: 20, projects: ['many'], seed: 5, start: START, stepMs: STEP, dir, maxTurns: 4 });
    const cache = join(dir, 'cache');
    for (const [run, jobs] of [
      ['cold', '2'],
      ['warm', '2'],
      ['no cache, one thread', '1'],
    ] as const) {
      const nd = runCli(['analyze', '.', '--ndjson', '--jobs', jobs, ...(run.startsWith('no cache') ? ['--no-cache'] : [])], {
        cwd: dir,
        env: { DEVS_CTX_CACHE_DIR: cache },
      });
      const lines = nd.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as NdRow | (NdTotal & { total: { notTranscripts: number } }));
      const sessions = lines.filter((l): l is NdRow => l.type === 'session');
      assert.deepEqual(
        sessions.filter((l) => !l.file.startsWith('many/')).map((l) => [l.file, l.error?.exitCode ?? l.format]),
        [
          ['.gemini/tmp/0b7dfb12/chats/session-2026-04-29T21-39-gemini_s.jsonl', 'gemini'],
          ['junk.jsonl', 4],
        ],
        run,
      );
      assert.equal(sessions.length, 22, run);
      const total = (lines.at(-1) as NdTotal & { total: { notTranscripts: number } }).total;
      assert.equal(total.notTranscripts, 5, run);
      assert.equal(total.transcripts, 22, run);
      assert.equal(nd.exitCode, 4, `${run}: junk.jsonl`);
    }
    rmSync(join(dir, 'junk.jsonl'));
    const human = runCli(['analyze', '.gemini/tmp'], { cwd: dir, env: { DEVS_CTX_CACHE_DIR: cache } });
    assert.equal(human.exitCode, 0, human.stderr);
    assert.match(human.stdout, /^total {2}1 session: 0 hard · 0 soft · 1 none$/m);
    assert.match(human.stdout, /^3 other \.json\/\.jsonl files left out: JSON, but no transcript format devs-ctx knows$/m);
    // A folder holding one such file alone (a Gemini CLI project with no chat saved): left out too.
    const alone = runCli(['analyze', '.gemini/tmp/0b7dfb12/checkpoints'], { cwd: dir, env: { DEVS_CTX_CACHE_DIR: cache } });
    assert.equal(alone.exitCode, 0, alone.stdout + alone.stderr);
    assert.match(alone.stdout, /^1 other \.json\/\.jsonl file left out: JSON, but no transcript format devs-ctx knows$/m);
    // A quoted glob finds them as a walk does.
    const glob = runCli(['analyze', '.gemini/tmp/*/*.json', '--ndjson'], { cwd: dir, env: { DEVS_CTX_CACHE_DIR: cache } });
    assert.equal(glob.exitCode, 0, glob.stdout);
    assert.match(glob.stdout, /"notTranscripts":2/);
    // Named, a file is read as asked: not a transcript is exit 4, from the cache too.
    for (const args of [['report.json'], ['report.json', 'events.jsonl']]) {
      const named = runCli(['analyze', ...args, '--json'], { cwd: dir, env: { DEVS_CTX_CACHE_DIR: cache } });
      assert.equal(named.exitCode, 4, args.join(' '));
      assert.match(named.stdout, /not a transcript format devs-ctx knows/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('batch: a file name with shell or control characters is quoted in the hint to paste, and stays on its row in the table', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-batch-names-'));
  try {
    const lines = readFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), 'utf8');
    // A skipped line gets a note that names the file, to paste into a shell.
    writeFileSync(join(dir, 'a;touch PWNED;.jsonl'), `${lines}not json\n`);
    writeFileSync(join(dir, "it's.jsonl"), `${lines}not json\n`);
    writeFileSync(join(dir, 'new\nline.jsonl'), lines);
    writeFileSync(join(dir, 'plain-name.jsonl'), `${lines}not json\n`);
    writeFileSync(join(dir, '-dash.jsonl'), `${lines}not json\n`);
    mkdirSync(join(dir, 'new\ndir'));
    writeFileSync(join(dir, 'new\ndir', 's1.jsonl'), lines);
    writeFileSync(join(dir, 'new\ndir', 's2.jsonl'), lines);
    const human = runCli(['analyze', '.', '--no-cache'], { cwd: dir });
    assert.equal(human.exitCode, 0, human.stderr);
    assert.match(human.stderr, /; run devs-ctx analyze 'a;touch PWNED;\.jsonl' for the reasons$/m);
    assert.match(human.stderr, /; run devs-ctx analyze 'it'\\''s\.jsonl' for the reasons$/m);
    assert.match(human.stderr, /; run devs-ctx analyze plain-name\.jsonl for the reasons$/m);
    assert.match(human.stderr, /; run devs-ctx analyze \.\/-dash\.jsonl for the reasons$/m, 'not taken for an option');
    // The table: one line per row, the control character shown as `?` (as ls shows it).
    assert.match(human.stdout, /^new\?line\.jsonl +\S/m);
    assert.equal(human.stdout.split('\n').filter((l) => /\.jsonl/.test(l)).length, 7);
    assert.doesNotMatch(human.stdout, /^line\.jsonl/m);
    // The project table too.
    assert.match(human.stdout, /^new\?dir +2 /m);
    assert.doesNotMatch(human.stdout, /^dir/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('batch: a file whose name is not valid UTF-8 is a row that says so (Node cannot open it by the name it lists), found by a walk and by a glob', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-batch-name-'));
  try {
    const session = readFileSync(join(repoRoot, 'fixtures', 'devs', 'basic-session.jsonl'));
    mkdirSync(join(dir, 'p'));
    // A byte 0xff in the name: Node lists it as U+FFFD, a name no file has.
    writeFileSync(Buffer.concat([Buffer.from(join(dir, 'p', 'bad')), Buffer.from([0xff]), Buffer.from('.jsonl')]), session);
    writeFileSync(join(dir, 'p', 'good.jsonl'), session);
    // A name that really holds U+FFFD (valid UTF-8) is read as any other.
    writeFileSync(join(dir, 'p', 'odd\ufffd.jsonl'), session);
    for (const input of ['p', 'p/*.jsonl']) {
      const nd = ndjson([input], dir);
      assert.deepEqual(
        nd.rows.map((r) => [r.file, r.error?.exitCode ?? null]),
        [
          ['p/bad\ufffd.jsonl', 3],
          ['p/good.jsonl', null],
          ['p/odd\ufffd.jsonl', null],
        ],
        input,
      );
      assert.match(nd.rows[0]?.error?.message ?? '', /^p\/bad\ufffd\.jsonl: its name is not valid UTF-8/);
      assert.equal(nd.exitCode, 3);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('batch exit codes: the worst urgency, as for one file', () => {
  assert.equal(runCli(['analyze', '.', '--ndjson'], { cwd: batch.dir }).exitCode, 0);
  assert.equal(runCli(['analyze', '.', '--ndjson', '--soft-limit', '1500', '--hard-limit', '1M'], { cwd: batch.dir }).exitCode, 10);
  const missing = runCli(['analyze', '.', 'no/such/dir', '--ndjson'], { cwd: batch.dir });
  assert.equal(missing.exitCode, 3, 'a path that does not exist is still fatal up front');
  assert.equal(missing.stdout.split('\n').length, 2, 'one JSON error line and nothing else');
  assert.equal(runCli(['analyze', '.', '--ndjson', ...LIMITS], { cwd: batch.dir }).exitCode, 11);
});

test('batch: a quoted glob is expanded by devs-ctx, ** at any depth; no match is an input error', () => {
  const all = ndjson(['**/*.jsonl']).rows.length;
  assert.equal(all, batch.sessions.length + 1);
  assert.equal(ndjson(['*/session-000?.jsonl']).rows.length, 8, 'gamma/nested is two levels down');
  const some = ndjson(['alpha/session-00[0-3]?.jsonl']).rows.map((r) => r.file);
  assert.deepEqual(
    some,
    batch.sessions.filter((s) => /^alpha\/session-00[0-3]\d\.jsonl$/.test(s.file)).map((s) => s.file),
  );
  const none = runCli(['analyze', 'nothing/*.jsonl'], { cwd: batch.dir });
  assert.equal(none.exitCode, 3);
  assert.match(none.stderr, /nothing\/\*\.jsonl: no \.jsonl or \.json file matches this pattern/);
});

test('batch usage errors: bad --since, --json with --ndjson, bad --jobs (exit 2, JSON in data modes)', () => {
  for (const [args, pattern] of [
    [['--since', 'yesterday'], /--since yesterday: expected a date/],
    [['--since', '2026-03-05', '--until', '2026-03-01'], /is not before --until/],
    [['--json', '--ndjson'], /cannot be used together/],
    [['--jobs', '0'], /--jobs 0/],
    [['--sort', 'size'], /size/],
  ] as const) {
    const result = runCli(['analyze', '.', ...args], { cwd: batch.dir });
    assert.equal(result.exitCode, 2, args.join(' '));
    assert.match(result.stderr + result.stdout, pattern);
  }
  const json = runCli(['analyze', '.', '--ndjson', '--until', 'soon'], { cwd: batch.dir });
  assert.equal((JSON.parse(json.stdout) as { error: { exitCode: number } }).error.exitCode, 2);
});

test('--ndjson: every line has a type, a fatal error too; a symlink loop says so; standard input is (stdin) in an error row as in a row', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-batch-nd-'));
  try {
    symlinkSync('loop', join(dir, 'loop'));
    const lines = (args: readonly string[], input?: string) => {
      const result = runCli(['analyze', ...args, '--ndjson', '--no-cache'], { cwd: dir, ...(input !== undefined ? { input } : {}) });
      return {
        ...result,
        lines: result.stdout
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown> & { error?: { message: string; hint?: string } }),
      };
    };
    for (const args of [['missing.jsonl'], ['loop'], ['--until', 'soon', '.'], ['.', '--jobs', 'x'], ['.', '--bogus'], ['.', '--sort', 'nope']]) {
      const run = lines(args);
      assert.equal(run.lines.length, 1, args.join(' '));
      assert.deepEqual(Object.keys(run.lines[0] ?? {}), ['schemaVersion', 'type', 'error'], args.join(' '));
      assert.equal(run.lines[0]?.['type'], 'error');
    }
    const loop = lines(['loop']).lines[0]?.error;
    assert.match(loop?.message ?? '', /^loop: too many levels of symbolic links \(a loop\?\)$/);
    assert.ok(loop?.hint);
    const empty = lines(['-'], '');
    assert.equal(empty.lines[0]?.['file'], '(stdin)');
    const read = lines(['-'], readFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), 'utf8'));
    assert.equal(read.lines[0]?.['file'], '(stdin)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('batch: the text table for a person, sorted, with projects (golden)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-batch-golden-'));
  try {
    writeBatch({ sessions: 24, projects: ['api', 'web', 'cli'], seed: 0x601d, start: START, stepMs: STEP, dir, maxTurns: 12 });
    writeFileSync(join(dir, 'web', 'broken.jsonl'), '');
    assertGolden('analyze-batch-sorted', runCli(['analyze', '.', '--sort', 'urgency', '--soft-limit', '400', '--hard-limit', '1500'], { cwd: dir }));
    assertGolden('analyze-batch-range', runCli(['analyze', 'api', 'cli', '--since', '2026-03-02', '--until', '2026-03-03T12:00Z'], { cwd: dir }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('batch: more rows than the alignment block stream with fixed columns; the total counts sessions per urgency', () => {
  // Wide enough for every name; at the default width, names are cut and every line fits.
  const human = runCli(['analyze', '.'], { cwd: batch.dir, env: { COLUMNS: '200' } });
  assert.equal(human.exitCode, 0, human.stderr);
  const narrow = runCli(['analyze', '.'], { cwd: batch.dir });
  for (const l of narrow.stdout.split('\n')) assert.ok(l.length <= 100, l);
  const lines = human.stdout.split('\n');
  const header = lines[0] ?? '';
  const rows = lines.filter((l) => l.includes('session-'));
  assert.equal(rows.length, batch.sessions.length);
  assert.ok(rows.length > ALIGN_BLOCK, 'the batch streams past the alignment block');
  // Every row, held or streamed, ends its urgency cell where the header's starts it (left-aligned, the last column).
  const at = header.indexOf('urgency');
  for (const row of rows) assert.match(row.slice(at), /^(none|soft|hard)$/, row);
  // The total counts sessions per urgency; it never adds up sizes.
  const total = lines.find((l) => l.startsWith('total')) ?? '';
  // The one subagent transcript is a row under its session, not a session.
  const [, all, hard, soft, none] = /^total {2}(\d+) sessions \(\+1 subagent\): (\d+) hard · (\d+) soft · (\d+) none$/.exec(total) ?? [];
  const tableRows = lines.indexOf(total) - 1;
  assert.ok(tableRows >= batch.sessions.length);
  assert.equal(Number(all), tableRows - 1, total);
  assert.equal(Number(hard) + Number(soft) + Number(none), tableRows - 1);
});

test('batch time range: parsing and overlap', () => {
  const now = Date.UTC(2026, 4, 10, 12);
  assert.equal(parseTimeBound('7d', '--since', now), now - 7 * 86_400_000);
  assert.equal(parseTimeBound('12h', '--since', now), now - 12 * 3_600_000);
  assert.equal(parseTimeBound('30m', '--since', now), now - 30 * 60_000);
  assert.equal(parseTimeBound('2w', '--since', now), now - 14 * 86_400_000);
  assert.equal(parseTimeBound('2026-05-01T09:30Z', '--since', now), Date.UTC(2026, 4, 1, 9, 30));
  assert.equal(parseTimeBound('2026-05-01T09:30Z', '--until', now), Date.UTC(2026, 4, 1, 9, 30));
  assert.equal(parseTimeBound('2026-05-01', '--until', now), Date.UTC(2026, 4, 2) - 1, 'a date is the whole day (TZ=UTC here)');
  assert.throws(() => parseTimeBound('last tuesday', '--since', now), /expected a date/);
  assert.throws(() => parseTimeBound('2026-13-01', '--since', now), /expected a date/);
  assert.equal(parseTimeRange({}, now), undefined);
  const range = parseTimeRange({ since: '2026-05-01T00:00Z', until: '2026-05-02T00:00Z' }, now);
  assert.ok(range);
  const at = (iso: string): number => Date.parse(iso);
  assert.equal(spanInRange({ first: at('2026-04-30T23:00Z'), last: at('2026-05-01T00:00Z') }, range), true, 'ends at since');
  assert.equal(spanInRange({ first: at('2026-04-30T00:00Z'), last: at('2026-04-30T23:59Z') }, range), false);
  assert.equal(spanInRange({ first: at('2026-05-02T00:00Z'), last: at('2026-05-02T01:00Z') }, range), true, '--until is inclusive of its instant');
  assert.equal(spanInRange({ first: at('2026-05-02T00:00:00.001Z'), last: at('2026-05-03T00:00Z') }, range), false);
});

test('batch progress: a bar on a TTY stderr only, cleared at the end', async () => {
  assert.equal(
    progressLine({ done: 6, found: 12, discovering: true, tokens: 1_234_567 }),
    `analyzing [${'█'.repeat(12)}${'░'.repeat(12)}] 6/12+ sessions · 1.2M tokens`,
  );
  // The bar's own clock, mocked: the test moves time on instead of sleeping.
  mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  try {
    let out = '';
    const stderr = Object.assign(new PassThrough(), { isTTY: true });
    stderr.on('data', (d: Buffer) => (out += d.toString()));
    const ctx = { stdout: new PassThrough(), stderr, stdin: new PassThrough(), env: {}, cwd: '/' };
    const progress = startBatchProgress(ctx);
    progress.update({ done: 1, found: 2, discovering: false, tokens: 10 });
    mock.timers.tick(450);
    progress.stop();
    await new Promise((r) => setImmediate(r));
    assert.match(out, /analyzing \[.*\] 1\/2 sessions · 10 tokens/);
    assert.ok(out.endsWith('\r\x1b[2K'));
    let quiet = '';
    const pipe = Object.assign(new PassThrough(), { isTTY: false });
    pipe.on('data', (d: Buffer) => (quiet += d.toString()));
    const silent = startBatchProgress({ ...ctx, stderr: pipe });
    mock.timers.tick(400);
    silent.stop();
    await new Promise((r) => setImmediate(r));
    assert.equal(quiet, '');
  } finally {
    mock.timers.reset();
  }
});

test('a quoted glob starting with ~ is expanded from HOME, as the help example does', () => {
  const home = mkdtempSync(join(tmpdir(), 'devs-ctx-home-'));
  const day = join(home, '.codex', 'sessions', '2026', '11', '23');
  mkdirSync(day, { recursive: true });
  copyFileSync(join(repoRoot, 'fixtures/devs/basic-session.jsonl'), join(day, 'a.jsonl'));
  copyFileSync(join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl'), join(day, 'b.jsonl'));
  const result = runCli(['analyze', '~/.codex/sessions/**/*.jsonl', '--ndjson'], { env: { HOME: home } });
  assert.equal(result.exitCode, 0, result.stdout + result.stderr);
  const sessions = result.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string })
    .filter((l) => l.type === 'session');
  assert.equal(sessions.length, 2);
});

test('batch table: names relative to the common root of the inputs, cut in the middle to fit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-batch-root-'));
  try {
    mkdirSync(join(dir, 'a', 'deep'), { recursive: true });
    mkdirSync(join(dir, 'b'));
    writeFileSync(join(dir, 'a', 'deep', 'one.jsonl'), '');
    assert.equal(inputRoot([dir], '/'), dir);
    assert.equal(inputRoot([join(dir, 'a'), join(dir, 'b')], '/'), dir);
    assert.equal(inputRoot(['a/deep/one.jsonl'], dir), join(dir, 'a', 'deep'), 'a file: its directory');
    assert.equal(inputRoot(['a/deep/one.jsonl', 'b'], dir), dir);
    assert.equal(inputRoot(['a/**/*.jsonl'], dir), join(dir, 'a'), 'a glob: its literal leading part');
    assert.equal(inputRoot(['-'], dir), undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(truncateMiddle('short', 10), 'short');
  assert.equal(truncateMiddle('-home-user-project/0123456789.jsonl', 15), '-home-u…9.jsonl');
  assert.equal(truncateMiddle('-home-user-project/0123456789.jsonl', 15).length, 15);
  assert.equal(shortModel('claude-opus-4-5-20251101'), 'claude-opus-4-5');
  assert.equal(shortModel('gpt-5.3-codex'), 'gpt-5.3-codex');
  assert.equal(shortModel(null), '-');
  assert.deepEqual([144, 9292, 106_307, 200_000, 1_000_000, 1_500_000].map(shortSize), ['144', '9.3k', '106k', '200k', '1M', '1.5M']);
});

test('batch table on real transcripts: model, context and % of window, peak, compactions, last active; rows fit COLUMNS', { skip: realdataSkip }, () => {
  for (const columns of [80, 100, 140]) {
    const result = runCli(['analyze', join(realdataDir, 'claude-code'), '--no-cache'], { env: { COLUMNS: String(columns) } });
    assert.equal(result.exitCode, 10, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.deepEqual(lines[0]?.split(/ {2,}/), ['file', 'model', 'context', 'window', 'peak', 'compact', 'last active', 'urgency']);
    for (const l of lines) assert.ok(l.length <= columns, `${l.length} > ${columns}: ${l}`);
    assert.ok(!result.stdout.includes(realdataDir), 'no absolute paths');
    // 01 compacted twice (its compact_boundary lines record 176.7k and 173.6k) and runs in a 200k window.
    const row = lines.find((l) => l.startsWith('01-')) ?? '';
    if (columns >= 100) assert.match(row, / claude-opus-4-5 +\d+k +\d+% of 200k +177k +2 +2026-01-29 03:37 +soft$/, row);
    // Narrow: the day only, the share only, the model cut in the middle.
    else assert.match(row, / claud…[\w-]+ +\d+k +\d+% +177k +2 +2026-01-29 +soft$/, row);
    assert.match(lines.at(-1) ?? '', /^total {2}6 sessions: 0 hard · 1 soft · 5 none$/);
  }
  // Wide enough, the whole relative name shows.
  const wide = runCli(['analyze', join(realdataDir, 'claude-code'), '--no-cache'], { env: { COLUMNS: '200' } });
  assert.match(wide.stdout, /^01-entire-v2\.1\.20-compaction\+microcompact\/[0-9a-f-]+\.jsonl /m);
});

test('batch table: a row from the row cache shows the same model, sizes, compactions and last activity', { skip: realdataSkip }, () => {
  const cache = mkdtempSync(join(tmpdir(), 'devs-ctx-batch-rowcache-'));
  try {
    const env = { DEVS_CTX_CACHE_DIR: cache, COLUMNS: '200' };
    const first = runCli(['analyze', join(realdataDir, 'claude-code')], { env });
    const again = runCli(['analyze', join(realdataDir, 'claude-code')], { env });
    assert.equal(first.exitCode, 10, first.stderr);
    assert.ok(readdirSync(cache).includes('analyze-rows.json'), 'the rows were cached');
    assert.equal(again.stdout, first.stdout);
    assert.match(again.stdout, / 177k +2 +2026-01-29 03:37 +soft$/m);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('batch: a Claude Code subagent transcript is listed under its session and counted in its project, not as a session', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-subagents-'));
  const project = join(dir, 'projects', '-home-me-app');
  mkdirSync(join(project, 's1', 'subagents'), { recursive: true });
  copyFileSync(join(repoRoot, 'fixtures', 'claude-code', 'multi-block-response.jsonl'), join(project, 's1.jsonl'));
  copyFileSync(join(repoRoot, 'fixtures', 'claude-code', 'compact-boundary.jsonl'), join(project, 's2.jsonl'));
  const sub = subagentLines('s1', 'Three callers.');
  writeFileSync(join(project, 's1', 'subagents', 'agent-a1.jsonl'), `${sub.map((l) => JSON.stringify(l)).join('\n')}\n`);

  const text = runCli(['analyze', join(dir, 'projects')], { env: { COLUMNS: '120' } });
  const lines = text.stdout.split('\n');
  const parentRow = lines.findIndex((l) => l.startsWith('-home-me-app/s1.jsonl'));
  assert.ok(parentRow > 0, text.stdout);
  assert.match(lines[parentRow + 1] ?? '', /^ {2}↳ agent-a1\.jsonl\s+claude-haiku-4-5\s+13k/, 'the subagent right under its session, with its own window');
  assert.match(text.stdout, /total {2}2 sessions \(\+1 subagent\): /);

  const json = JSON.parse(runCli(['analyze', join(dir, 'projects'), '--json']).stdout) as {
    total: { transcripts: number; subagents: number };
    projects: { project: string; transcripts: number; subagents: number; turns: number }[];
    transcripts: { file: string; turns: number }[];
  };
  assert.equal(json.total.transcripts, 3);
  assert.equal(json.total.subagents, 1);
  assert.equal(json.projects.length, 1, "the subagent belongs to its session's project");
  assert.equal(json.projects[0]?.subagents, 1);
  assert.equal(
    json.projects[0]?.turns,
    json.transcripts.reduce((sum, t) => sum + t.turns, 0),
    "every transcript's turns once",
  );
});
