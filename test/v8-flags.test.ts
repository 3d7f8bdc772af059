import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';
import { flagsForGroup, loadedInGroup } from '../src/cli/v8-flags.js';
import { repoRoot } from './helpers/realdata.js';
import { wordTranscript } from './helpers/transcripts.js';

/** A large transcript (`large.jsonl`) and a folder of 24 small ones (`sessions/`: enough for `analyze DIR` to start its workers) in `dir`. */
function inputs(dir: string): { readonly large: string; readonly sessions: string } {
  const sessions = join(dir, 'sessions');
  mkdirSync(sessions);
  for (let n = 0; n < 24; n++) wordTranscript(join(sessions, `s${n}.jsonl`), 20);
  return { large: wordTranscript(join(dir, 'large.jsonl'), 400), sessions };
}

/**
 * Whether V8 inlines a function of a few hundred bytes of bytecode into its caller when it is
 * optimized in a process that first ran a command (`command`, given the inputs) through the built
 * CLI's `main` (none: no command), as V8's inlining trace says.
 */
function inlinesAfter(command: ((given: ReturnType<typeof inputs>) => string[]) | undefined): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-v8-flags-'));
  try {
    const argv = command?.(inputs(dir));
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
    // A file, not --input-type=module -e: worker threads inherit the flags, and a count worker refuses that one.
    const file = join(dir, 'probe.mjs');
    writeFileSync(file, script);
    const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--trace-turbo-inlining', file], {
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
  // Workers are started only with a core to spare for them.
  const workers = availableParallelism() > 1;

  test("a large prune's count workers and a batch's workers have V8 inline less, once they have loaded (their compiles took time from the threads that count)", () => {
    const prune = ({ large }: ReturnType<typeof inputs>): string[] => ['prune', large, '--force', '-o', 'out.jsonl', '--no-archive', '--json'];
    assert.equal(inlinesAfter(prune), !workers, workers ? 'after a prune, a function of a few hundred bytes was still inlined' : 'without count workers');
    const batch = ({ sessions }: ReturnType<typeof inputs>): string[] => ['analyze', sessions, '--ndjson', '--no-cache'];
    assert.equal(inlinesAfter(batch), !workers, workers ? 'after analyze DIR, a function of a few hundred bytes was still inlined' : 'without workers');
  });

  test("a process that ran no command, or analyzed one large transcript (on count workers too), keeps V8's inlining", () => {
    // What the commands above change (their checks would pass without them otherwise).
    assert.equal(inlinesAfter(undefined), true);
    assert.equal(
      inlinesAfter(({ large }) => ['analyze', large, '--json', '--no-cache']),
      true,
    );
  });
});

describe('workers that set V8 flags', () => {
  test('the last of a group to load sets the flags: none before (a sibling still loading would have its code cache refused)', () => {
    const set: string[] = [];
    const group = flagsForGroup('--some-flag', 3);
    loadedInGroup(group, (flags) => set.push(flags));
    loadedInGroup(group, (flags) => set.push(flags));
    assert.equal(set.length, 0);
    loadedInGroup(group, (flags) => set.push(flags));
    assert.deepEqual(set, ['--some-flag']);
    // No group: nothing to set.
    loadedInGroup(undefined, (flags) => set.push(flags));
    assert.equal(set.length, 1);
  });

  test('a batch of many workers: every worker compiles its bundle with its code cache (none refused for flags a sibling set)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-v8-cache-'));
    try {
      const { sessions } = inputs(dir);
      // Records, per thread, each bundle compiled with a code cache and whether V8 refused it.
      const preload = join(dir, 'caches.cjs');
      writeFileSync(
        preload,
        `const vm = require('node:vm'); const fs = require('node:fs'); const { threadId } = require('node:worker_threads');
        const Script = vm.Script;
        vm.Script = function (code, options) {
          const script = new Script(code, options);
          if (options && options.cachedData) fs.appendFileSync(${JSON.stringify(join(dir, 'caches.log'))}, threadId + ' ' + options.filename + ' ' + script.cachedDataRejected + '\\n');
          return script;
        };`,
      );
      // More workers than cores: many load at once, the first of them done while others still load.
      const run = spawnSync(
        process.execPath,
        ['--require', preload, join(repoRoot, 'bin', 'devs-ctx.js'), 'analyze', sessions, '--ndjson', '--no-cache', '--jobs', '8'],
        {
          cwd: dir,
          encoding: 'utf8',
          env: { ...process.env, HOME: dir, XDG_CONFIG_HOME: dir, DEVS_CTX_CACHE_DIR: join(dir, 'cache'), NO_COLOR: '1' },
        },
      );
      assert.equal(run.status, 0, run.stderr);
      const loads = readFileSync(join(dir, 'caches.log'), 'utf8').trim().split('\n');
      const workers = loads.filter((line) => line.includes('analyze-worker.bundle.cjs'));
      assert.equal(workers.length, 8, loads.join('\n'));
      assert.deepEqual(
        loads.filter((line) => !line.endsWith(' false')),
        [],
        'a code cache was refused',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
