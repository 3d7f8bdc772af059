import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { mock, test } from 'node:test';
import type { CliContext } from '../src/cli/context.js';
import { startProgress } from '../src/cli/render/progress.js';

function context(isTTY: boolean, env: Record<string, string> = {}): { ctx: CliContext; written: () => string } {
  let out = '';
  const stderr = Object.assign(new PassThrough(), { isTTY });
  stderr.on('data', (d: Buffer) => (out += d.toString()));
  const stdout = Object.assign(new PassThrough(), { isTTY: false });
  return { ctx: { stdout, stderr, stdin: new PassThrough(), env, cwd: '/' }, written: () => out };
}

test('progress: a spinner on a TTY stderr once the work takes a while, cleared when it stops', async () => {
  mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  try {
    const { ctx, written } = context(true);
    const progress = startProgress(ctx, 'pruning s.jsonl');
    mock.timers.tick(100);
    await new Promise((r) => setImmediate(r));
    assert.equal(written(), '', 'nothing for quick work');
    progress.update('summarizing');
    mock.timers.tick(400);
    await new Promise((r) => setImmediate(r));
    assert.match(written(), /pruning s\.jsonl: summarizing/);
    progress.stop();
    await new Promise((r) => setImmediate(r));
    assert.ok(written().endsWith('\r\x1b[2K'), 'the line is cleared');
  } finally {
    mock.timers.reset();
  }
});

test('progress: nothing when stderr is not a TTY, or in CI', async () => {
  mock.timers.enable({ apis: ['setTimeout', 'setInterval'] });
  try {
    for (const { ctx, written } of [context(false), context(true, { CI: 'true' })]) {
      const progress = startProgress(ctx, 'pruning');
      mock.timers.tick(2000);
      progress.stop();
      await new Promise((r) => setImmediate(r));
      assert.equal(written(), '');
    }
  } finally {
    mock.timers.reset();
  }
});
