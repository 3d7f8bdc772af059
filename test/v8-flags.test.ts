import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { repoRoot } from './helpers/realdata.js';

/**
 * Whether V8 inlines a function of a few hundred bytes of bytecode into its caller when it is
 * optimized in a process that first ran `argv` through the built CLI's `main` (none: no command),
 * as V8's inlining trace says.
 */
function inlinesAfter(argv: readonly string[] | undefined): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-v8-flags-'));
  try {
    const script = `
      const { main } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'cli', 'main.js')).href)});
      const argv = ${JSON.stringify(argv ?? null)};
      if (argv !== null) {
        const code = await main(argv);
        if (code !== 0 && argv[0] === 'prune') throw new Error('the prune failed: exit ' + code);
      }
      // Between the default inlining budget (920 bytes of bytecode) and the prune's.
      function budgetProbe(a) {
        let s = 0;
        for (let i = 0; i < a.length; i++) {
          s += a[i] * 3 + (a[i] >> 1) - (a[i] & 7); if (s > 1e9) s = s % 1000; s ^= i; s += a[i] % 5;
          s -= (a[i] * 7) % 11; s += (s << 1) & 0xff; s = (s + a[i]) | 0; s = (s * 13) % 100003;
          s = s ^ (s >>> 3); s = (s + 17) | 0; s = (s * 31) % 1000003; s = s ^ (s << 2); s = (s - a[i]) | 0;
          s = (s + a[i] * a[i]) % 99991; s = s ^ (s >>> 5); s = (s * 3 + 1) % 77777; s = (s + (a[i] << 3)) | 0;
        }
        return s;
      }
      function budgetCaller(a) { return budgetProbe(a) + 1; }
      %PrepareFunctionForOptimization(budgetProbe);
      %PrepareFunctionForOptimization(budgetCaller);
      budgetCaller([1, 2, 3]);
      budgetCaller([4, 5, 6]);
      %OptimizeFunctionOnNextCall(budgetCaller);
      budgetCaller([7, 8, 9]);
    `;
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--trace-turbo-inlining', '--input-type=module', '-e', script], {
      cwd: dir,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: dir, DEVS_CTX_CACHE_DIR: join(dir, 'cache'), NO_COLOR: '1' },
    });
    assert.equal(run.status, 0, run.stderr);
    return /Inlining .*<SharedFunctionInfo budgetProbe>.* into .*<SharedFunctionInfo budgetCaller>/.test(run.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('V8 flags the CLI sets', () => {
  test('a prune compiles with a smaller inlining budget (its background compiles took the core its count worker counts on)', () => {
    const prune = [
      'prune',
      join(repoRoot, 'fixtures/devs/replay-webhook-session.jsonl'),
      '--force',
      '--target',
      '2000',
      '--no-archive',
      '-o',
      'out.jsonl',
      '--json',
    ];
    assert.equal(inlinesAfter(prune), false, 'after a prune, a function of a few hundred bytes was still inlined');
    // What the prune changes (the check would pass without it otherwise): the same function is
    // inlined in a process that ran no command, and one that ran an analyze.
    assert.equal(inlinesAfter(undefined), true);
    assert.equal(inlinesAfter(['analyze', join(repoRoot, 'fixtures/devs/basic-session.jsonl'), '--json', '--no-cache']), true);
  });
});
