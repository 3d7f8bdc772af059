import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEnv } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';

/**
 * The README's recipes, run exactly as written there [issue 6 §5]: each is read from the README
 * (the code block after its `<!-- recipe: NAME -->` marker), so editing a recipe re-tests it, and a
 * recipe that no longer works fails here.
 */

function recipe(name: string): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const marker = `<!-- recipe: ${name} -->`;
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `README has no recipe ${name}`);
  const block = /```(?:sh|js)\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block?.[1], `recipe ${name} has no code block`);
  return block[1];
}

/** A folder with `devs-ctx` (this checkout's binary) on the PATH, and `mail` recording what it was sent. */
function binFolder(): string {
  const bin = mkdtempSync(join(tmpdir(), 'devs-ctx-recipe-bin-'));
  writeFileSync(join(bin, 'devs-ctx'), `#!/bin/sh\nexec "${process.execPath}" "${join(repoRoot, 'bin', 'devs-ctx.js')}" "$@"\n`);
  writeFileSync(join(bin, 'mail'), `#!/bin/sh\n{ echo "mail $*"; cat; } >> "$HOME/mail.log"\n`);
  chmodSync(join(bin, 'devs-ctx'), 0o755);
  chmodSync(join(bin, 'mail'), 0o755);
  return bin;
}

function runSh(script: string, cwd: string, env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync('sh', ['-c', script], { cwd, env, encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A devs transcript of about `tokens` tokens (o200k: ~1 token per short word), turns dated `at`. */
function transcript(tokens: number, at: Date = new Date()): string {
  const words = 'reconcile ledger rows against bank statements and log every mismatch by account id'.split(' ');
  const lines = [
    JSON.stringify({ id: 'sys', role: 'system', type: 'system', content: 'You are a coding agent.', timestamp: at.toISOString() }),
    JSON.stringify({ id: 'prd', role: 'user', type: 'prd', content: 'PRD: REQ-1 nightly reconciliation.', timestamp: at.toISOString() }),
  ];
  const perTurn = 400;
  for (let i = 0; i * perTurn < tokens; i++) {
    const content = Array.from({ length: perTurn }, (_, k) => words[(i + k) % words.length]).join(' ');
    lines.push(
      JSON.stringify({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', type: 'message', content: `step ${i}: ${content}`, timestamp: at.toISOString() }),
    );
  }
  return `${lines.join('\n')}\n`;
}

function analyzeTokens(file: string, env: Record<string, string>): number {
  const result = spawnSync(process.execPath, [join(repoRoot, 'bin', 'devs-ctx.js'), 'analyze', file, '--json'], { env, encoding: 'utf8' });
  return (JSON.parse(result.stdout) as { totalTokens: number }).totalTokens;
}

describe('README recipes', () => {
  test('pre-commit hook: init, hook install, commit: the transcript at the soft limit is pruned in place and archived', () => {
    const repo = mkdtempSync(join(tmpdir(), 'devs-ctx-recipe-hook-'));
    const env = cliEnv({
      PATH: `${binFolder()}:${process.env['PATH'] ?? ''}`,
      HOME: repo,
      DEVS_CTX_ARCHIVE: join(repo, '.archive.sqlite'),
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'a@x',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'a@x',
    });
    assert.equal(spawnSync('git', ['init', '-q'], { cwd: repo }).status, 0);
    mkdirSync(join(repo, '.agent', 'sessions'), { recursive: true });
    const session = join(repo, '.agent', 'sessions', 's.jsonl');
    writeFileSync(session, transcript(110_000));
    const before = analyzeTokens(session, env);
    assert.ok(before >= 100_000, `the session is at the soft limit of a 200k window (${before})`);

    const result = runSh(recipe('pre-commit'), repo, env);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stderr, /devs-ctx: \.agent\/sessions\/s\.jsonl: pruned [\d,]+ → [\d,]+ tokens/);
    const after = analyzeTokens(session, env);
    assert.ok(after <= 50_000, `pruned to the target, half the soft limit (${after})`);
    assert.ok(existsSync(join(repo, '.archive.sqlite')), 'the removed turns are archived');
    assert.equal(
      spawnSync('git', ['log', '--oneline'], { cwd: repo, encoding: 'utf8' }).stdout.split('\n').filter(Boolean).length,
      1,
      'the commit went through',
    );
  });

  test('CI check: exit 1 at the hard limit, 0 at the soft limit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-recipe-ci-'));
    const env = cliEnv({ PATH: `${binFolder()}:${process.env['PATH'] ?? ''}`, HOME: dir });
    mkdirSync(join(dir, '.agent', 'sessions'), { recursive: true });
    writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ window: 10_000 }));
    writeFileSync(join(dir, '.agent', 'sessions', 'soft.jsonl'), transcript(6_000));
    const soft = runSh(recipe('ci-check'), dir, env);
    assert.equal(soft.status, 0, soft.stderr);
    assert.ok(existsSync(join(dir, 'devs-ctx-report.json')));
    writeFileSync(join(dir, '.agent', 'sessions', 'hard.jsonl'), transcript(9_000));
    const hard = runSh(recipe('ci-check'), dir, env);
    assert.equal(hard.status, 1, hard.stderr);
    assert.match(hard.stderr, /at the hard limit/);
    const report = JSON.parse(readFileSync(join(dir, 'devs-ctx-report.json'), 'utf8')) as { transcripts: { urgency: string }[] };
    assert.deepEqual(report.transcripts.map((t) => t.urgency).sort(), ['hard', 'soft']);
  });

  test('nightly batch report: the day’s sessions, the ones due mailed, totals per project', (t) => {
    if (spawnSync('jq', ['--version']).status !== 0) {
      t.skip('jq is not installed: the recipe uses it');
      return;
    }
    const home = mkdtempSync(join(tmpdir(), 'devs-ctx-recipe-nightly-'));
    const env = cliEnv({ PATH: `${binFolder()}:${process.env['PATH'] ?? ''}`, HOME: home });
    writeFileSync(join(home, 'devs-ctx.config.json'), JSON.stringify({ window: 10_000 }));
    const claude = join(home, '.claude', 'projects', '-home-me-app');
    mkdirSync(claude, { recursive: true });
    writeFileSync(join(claude, 'due.jsonl'), transcript(6_000));
    writeFileSync(join(claude, 'small.jsonl'), transcript(500));
    writeFileSync(join(claude, 'old.jsonl'), transcript(6_000, new Date(Date.now() - 5 * 86_400_000)));
    const codex = join(home, '.codex', 'sessions', '2026', '11', '23');
    mkdirSync(codex, { recursive: true });
    writeFileSync(join(codex, 'rollout.jsonl'), transcript(800));

    const result = runSh(recipe('nightly'), home, env);
    assert.equal(result.status, 0, result.stderr);
    const reports = join(home, 'devs-ctx-reports');
    const files = readdirSync(reports).sort();
    assert.equal(files.length, 3, files.join(', '));
    const due = readFileSync(join(reports, files.find((f) => f.endsWith('.due.tsv'))!), 'utf8');
    assert.match(due, /^soft\t\d+\t.*due\.jsonl$/m);
    assert.ok(!due.includes('old.jsonl'), 'a session older than a day is left out');
    const projects = readFileSync(join(reports, files.find((f) => f.endsWith('.projects.tsv'))!), 'utf8');
    assert.match(projects, /-home-me-app\t2 sessions/);
    const mail = readFileSync(join(home, 'mail.log'), 'utf8');
    assert.match(mail, /^mail -s devs-ctx: sessions due for a prune me@example\.com/m);
    assert.match(mail, /due\.jsonl/);
  });

  test('the library inside an orchestrator: prunes fire, the window stays under the hard limit, refreshes happen', () => {
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', recipe('orchestrator')], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    const lines = result.stdout.trim().split('\n');
    const events = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { event: string; newTotal?: number });
    const prunes = events.filter((e) => e.event === 'context_pruned');
    assert.ok(prunes.length >= 2, `prunes: ${prunes.length}`);
    assert.ok(prunes.every((e) => (e.newTotal ?? Infinity) < 10_000));
    assert.ok(events.some((e) => e.event === 'context_refreshed'));
    const final = /final window: (\d+) turns, (\d+) tokens/.exec(lines.at(-1) ?? '');
    assert.ok(final && Number(final[2]) < 10_000, lines.at(-1));
  });
});

test('every command’s --help ends with real examples of that command [issue 6 §5]', () => {
  for (const command of ['analyze', 'prune', 'restore', 'recall', 'refresh', 'replay', 'init', 'hook install', 'hook uninstall', 'hook status']) {
    const result = spawnSync(process.execPath, [join(repoRoot, 'bin', 'devs-ctx.js'), ...command.split(' '), '--help'], { encoding: 'utf8', env: cliEnv() });
    assert.equal(result.status, 0, command);
    const examples = result.stdout.slice(result.stdout.lastIndexOf('Examples:'));
    assert.ok(result.stdout.includes('Examples:'), `${command} --help has no examples`);
    const lines = examples.split('\n').filter((l) => l.startsWith(`  $ `));
    assert.ok(lines.length >= 2, `${command}: ${lines.length} examples`);
    const name = command.split(' ')[0]!;
    assert.ok(
      lines.some((l) => l.includes(`devs-ctx ${name}`)),
      `${command}: no example runs it`,
    );
  }
});
