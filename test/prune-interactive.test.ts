import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, runInProcess } from './helpers/cli.js';
import { realdataFiles, realdataSkip, repoRoot } from './helpers/realdata.js';
import { hasScript, keys, runInPty, runInTerminal } from './helpers/tty-session.js';
import type { Terminal } from './helpers/tty-session.js';

/**
 * `devs-ctx prune --interactive` [issue 6, item 3], through its real prompts: the plan table, pins,
 * the target, cancel, and a confirmed prune that writes, archives and locks like any other.
 */

// 17 turns, ~2.2k tokens: over the soft limit of --window 4000 (2,000); the plan drops r2 (a
// reasoning turn) among others. s1 (system) and s2 (prd) are pinned by the policy.
const FIXTURE = join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl');
const WINDOW = ['--window', '4000'];

interface Line {
  readonly id: string;
  readonly type: string;
  readonly content: string;
}

interface Report {
  readonly outcome: string;
  readonly limits: { readonly target: number };
  readonly before: { readonly tokens: number };
  readonly after: { readonly tokens: number; readonly turns: number };
  readonly archive: { readonly path: string; readonly eventId: string } | null;
  readonly actions: readonly { readonly kind: string; readonly turns: readonly { readonly id: string }[] }[];
}

function workspace(): { dir: string; file: string; archive: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-prune-i-'));
  const file = join(dir, 'session.jsonl');
  copyFileSync(FIXTURE, file);
  const archive = join(dir, 'archive.sqlite');
  return { dir, file, archive, env: { DEVS_CTX_ARCHIVE: archive } };
}

function lines(path: string): Line[] {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
}

const original = readFileSync(FIXTURE);
/** Where a turn is in the "Pin or unpin turns" list: every turn but the two the policy pins. */
const pinRow = (id: string): number => lines(FIXTURE).findIndex((l) => l.id === id) - 2;

/** Chooses a menu item under "What now?": prune, pins, target, cancel (in that order). */
async function menu(t: Terminal, item: 'prune' | 'pins' | 'target' | 'cancel'): Promise<void> {
  await t.waitFor('What now?');
  const downs = { prune: 0, pins: 1, target: 2, cancel: 3 }[item];
  t.press(...Array<string>(downs).fill(keys.down), keys.enter);
}

async function pin(t: Terminal, id: string): Promise<void> {
  await menu(t, 'pins');
  await t.waitFor('Pin the turns to keep');
  t.press(...Array<string>(pinRow(id)).fill(keys.down), keys.space, keys.enter);
}

describe('devs-ctx prune --interactive', () => {
  test('no terminal: a usage error naming --dry-run and --yes; nothing read, written or archived', async () => {
    const w = workspace();
    const result = await runInProcess(['prune', w.file, '--interactive', '--in-place', ...WINDOW], { cwd: w.dir });
    assert.equal(result.exitCode, 2);
    assert.match(result.stderr, /--interactive needs a terminal/);
    assert.match(result.stderr, /--dry-run/);
    assert.match(result.stderr, /--yes/);
    assert.deepEqual(readFileSync(w.file), original);
    assert.equal(existsSync(w.archive), false);
  });

  test('with --dry-run, or a transcript on standard input: usage errors', async () => {
    const w = workspace();
    const dry = await runInTerminal(['prune', w.file, '--interactive', '--dry-run', ...WINDOW], { cwd: w.dir, env: w.env }, async () => {});
    assert.equal(dry.exitCode, 2);
    assert.match(dry.stderr, /--interactive and --dry-run cannot be used together/);
    const piped = await runInTerminal(['prune', '-', '--interactive', '-o', join(w.dir, 'out.jsonl'), ...WINDOW], { cwd: w.dir, env: w.env }, async () => {});
    assert.equal(piped.exitCode, 2);
    assert.match(piped.stderr, /must be a file, not standard input/);
  });

  test('shows the plan: candidate turns with type, tokens, relevance score and action, and the totals', async () => {
    const w = workspace();
    const run = await runInTerminal(['prune', w.file, '--interactive', '--in-place', ...WINDOW], { cwd: w.dir, env: w.env }, async (t) => {
      await t.waitFor('What now?');
      t.press(keys.ctrlC);
    });
    assert.match(run.screen, /#\s+turn\s+type\s+tokens\s+score\s+action\s+text/);
    assert.match(run.screen, /#10 r2\s+reasoning\s+284\s+0\.\d{3} drop\s+Key the index/);
    assert.match(run.screen, /#17 a3\s+message\s+21\s+0\.\d{3} keep \(tail\)/);
    assert.ok(!/#1 s1 /.test(run.screen), 'turns the policy pins are not listed');
    assert.match(run.screen, /before 2,211 tokens \(17 turns\)\s+→\s+after ≈ [\d,]+ tokens \(10 turns\)/);
  });

  test('a pinned turn is kept in the output; the rest is pruned, archived and written in place', async () => {
    const w = workspace();
    const run = await runInTerminal(['prune', w.file, '--interactive', '--in-place', ...WINDOW], { cwd: w.dir, env: w.env }, async (t) => {
      await pin(t, 'r2');
      await t.waitFor(/#10 r2\s+reasoning\s+284\s+0\.\d{3} pinned/);
      await t.waitFor('1 pinned by you');
      await menu(t, 'prune');
    });
    assert.equal(run.exitCode, 0, run.screen);
    const after = lines(w.file);
    const r2 = lines(FIXTURE).find((l) => l.id === 'r2');
    assert.deepEqual(
      after.find((l) => l.id === 'r2'),
      r2,
    );
    assert.ok(readFileSync(w.file, 'utf8').includes(JSON.stringify(r2?.content)), 'the pinned line is byte for byte the same');
    assert.equal(after.filter((l) => l.content.startsWith('[Context Summary]')).length, 1);
    assert.ok(after.length < 17);
    assert.ok(existsSync(w.archive), 'archived');
    assert.match(run.screen, /pruned 2,211 → [\d,]+ tokens/);
    // A normal prune drops r2.
    const plain = await runInProcess(['prune', FIXTURE, '--dry-run', '--json', ...WINDOW], { cwd: w.dir });
    assert.ok((JSON.parse(plain.stdout) as Report).actions.some((a) => a.turns.some((turn) => turn.id === 'r2')));
  });

  test('unpinning gives the plan back; changing the target re-plans', async () => {
    const w = workspace();
    const out = join(w.dir, 'out.jsonl');
    const run = await runInTerminal(
      ['prune', w.file, '--interactive', '-o', out, '--json', ...WINDOW],
      { cwd: w.dir, env: w.env, stdoutIsTTY: false },
      async (t) => {
        await pin(t, 'r2');
        await t.waitFor('1 pinned by you');
        await pin(t, 'r2'); // the same row again: unpinned
        await t.waitFor(/#10 r2\s+reasoning\s+284\s+0\.\d{3} drop/);
        await menu(t, 'target');
        await t.waitFor('Target: bring the window down');
        t.press(keys.clearLine, '5k', keys.enter);
        await t.waitFor('must be below the hard limit');
        t.press(keys.clearLine, '1.5k', keys.enter);
        await t.waitFor('target 1,500 tokens');
        await menu(t, 'prune');
      },
    );
    assert.equal(run.exitCode, 0, run.screen);
    // --json: the report alone on stdout, the prompts on stderr.
    const report = JSON.parse(run.stdout) as Report;
    assert.equal(report.limits.target, 1_500);
    assert.equal(report.outcome, 'pruned');
    assert.ok(report.after.tokens <= 1_500);
    assert.match(run.stderr, /What now\?/);
  });

  test('cancel (Ctrl-C, or the menu): exit 130, the file untouched, nothing archived', async () => {
    for (const how of ['ctrl-c', 'menu', 'in the pin list'] as const) {
      const w = workspace();
      const run = await runInTerminal(['prune', w.file, '--interactive', '--in-place', ...WINDOW], { cwd: w.dir, env: w.env }, async (t) => {
        if (how === 'menu') return menu(t, 'cancel');
        if (how === 'in the pin list') {
          await menu(t, 'pins');
          await t.waitFor('Pin the turns to keep');
        } else await t.waitFor('What now?');
        t.press(keys.ctrlC);
      });
      assert.equal(run.exitCode, 130, `${how}: ${run.screen}`);
      assert.match(run.stderr, /cancelled; nothing was written/);
      assert.deepEqual(readFileSync(w.file), original, how);
      assert.equal(existsSync(w.archive), false, how);
      assert.equal(existsSync(`${w.file}.devs-ctx.lock`), false, 'the lock is released');
    }
  });

  test('confirming with no change prunes exactly as a normal prune does', async () => {
    const w = workspace();
    const interactiveOut = join(w.dir, 'interactive.jsonl');
    const plainOut = join(w.dir, 'plain.jsonl');
    const run = await runInTerminal(
      ['prune', w.file, '--interactive', '-o', interactiveOut, '--json', ...WINDOW],
      { cwd: w.dir, env: w.env, stdoutIsTTY: false },
      async (t) => {
        await menu(t, 'prune');
      },
    );
    assert.equal(run.exitCode, 0, run.screen);
    const plain = await runInProcess(['prune', w.file, '-o', plainOut, '--json', '--archive', w.archive, ...WINDOW], { cwd: w.dir });
    assert.equal(plain.exitCode, 0, plain.stderr);
    const a = JSON.parse(run.stdout) as Report;
    const b = JSON.parse(plain.stdout) as Report;
    assert.deepEqual(a.actions, b.actions);
    assert.deepEqual(a.after, b.after);
    assert.equal(a.archive?.path, w.archive);
    // Same kept lines; the summaries differ only by the prune's own id.
    const kept = (path: string): string[] =>
      lines(path)
        .filter((l) => l.type !== 'summary')
        .map((l) => JSON.stringify(l));
    assert.deepEqual(kept(interactiveOut), kept(plainOut));
    assert.deepEqual(readFileSync(w.file), original, '-o leaves the input alone');
  });

  test('--yes: shows the plan and prunes without asking, also without a terminal', async () => {
    const w = workspace();
    const out = join(w.dir, 'out.jsonl');
    const result = await runInProcess(['prune', w.file, '--interactive', '--yes', '-o', out, ...WINDOW], { cwd: w.dir });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, /#10 r2\s+reasoning\s+284\s+0\.\d{3} drop/);
    assert.match(result.stdout, /before 2,211 tokens/);
    assert.match(result.stdout, /pruned 2,211 →/);
    assert.ok(existsSync(out));
    const onTty = await runInTerminal(
      ['prune', w.file, '--interactive', '--yes', '-o', join(w.dir, 'out2.jsonl'), ...WINDOW],
      { cwd: w.dir, env: w.env },
      async (t) => {
        await t.waitFor('before 2,211 tokens');
      },
    );
    assert.equal(onTty.exitCode, 0, onTty.screen);
    assert.ok(!onTty.screen.includes('What now?'));
  });
});

describe('devs-ctx prune --interactive in a real pseudo-terminal', { skip: hasScript() ? false : 'needs `script` (util-linux) for a pseudo-terminal' }, () => {
  test('pin a turn with the keyboard, confirm: pruned in place with the turn kept', async () => {
    const w = workspace();
    const run = await runInPty(['prune', w.file, '--interactive', '--in-place', ...WINDOW], { cwd: w.dir, env: w.env }, async (t) => {
      await pin(t, 'r2');
      await t.waitFor('1 pinned by you');
      await menu(t, 'prune');
      await t.waitFor('written to');
    });
    assert.equal(run.exitCode, 0, run.screen);
    assert.ok(lines(w.file).some((l) => l.id === 'r2'));
    assert.ok(lines(w.file).some((l) => l.content.startsWith('[Context Summary]')));
    assert.ok(existsSync(w.archive));
  });

  test('Ctrl-C at the menu: exit 130, nothing written', async () => {
    const w = workspace();
    const run = await runInPty(['prune', w.file, '--interactive', '--in-place', ...WINDOW], { cwd: w.dir, env: w.env }, async (t) => {
      await t.waitFor('What now?');
      t.press(keys.ctrlC);
    });
    assert.equal(run.exitCode, 130, run.screen);
    assert.deepEqual(readFileSync(w.file), original);
    assert.equal(existsSync(w.archive), false);
  });
});

test('--interactive shows the plan the prune then carries out, on a Codex rollout with unsent reasoning', (t) => {
  const codex = realdataFiles('codex').find((f) => f.endsWith('.jsonl'));
  if (!codex) {
    t.skip(realdataSkip || 'no Codex rollout in ../shared/realdata');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-interactive-codex-'));
  const file = join(dir, 'c.jsonl');
  copyFileSync(codex, file);
  const result = runCli(['prune', file, '-o', join(dir, 'out.jsonl'), '--interactive', '--yes', '--window', '120k', '--json', '--no-archive'], {
    env: { COLUMNS: '200' },
  });
  assert.equal(result.exitCode, 0, result.stderr);
  const shown = /drop (\d+) turn\(s\)/.exec(result.stderr);
  assert.ok(shown, result.stderr.slice(-500));
  const report = JSON.parse(result.stdout) as { dropped: { turns: number } };
  assert.equal(report.dropped.turns, Number(shown[1]), 'the confirmed plan and the written prune drop the same turns');
});
