// Writes dist/cli-bundle/<name>.v8cache: V8's code cache of each bundle (see scripts/bundle-loader.cjs),
// run by `npm run build` after scripts/bundle.mjs. The CLI's cache is made after a few commands ran
// in a child process, so it holds the functions a command compiles on the way (analyze and prune on
// fixtures, JSON and text); the workers' caches hold what compiling their bundle compiles. A cache is only
// ever a start-up saving, for the Node that built it: with any other the loader compiles the bundle
// as it would without one.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const dir = 'dist/cli-bundle';
const loader = require(`../${dir}/loader.cjs`);

/**
 * The commands the CLI's cache is warmed with, in one process (their output is dropped): analyze,
 * and a relevance prune with its offline summary and archive (JSON and text), written into `home`.
 */
function warmUp(home) {
  // Offline whatever the environment holds (a Gemini key), into this folder's own archive and file.
  const prune = (out) => [
    'prune',
    'fixtures/devs/replay-webhook-session.jsonl',
    '--force',
    '--target',
    '2000',
    '--summarizer',
    'extractive',
    '--embedder',
    'local',
    '--no-cache',
    '--archive',
    join(home, 'archive.sqlite'),
    '-o',
    join(home, out),
  ];
  return [
    ['analyze', 'fixtures/devs/basic-session.jsonl', '--json', '--no-cache'],
    ['analyze', 'fixtures/claude-code/parallel-tool-calls-2.1.jsonl', '--no-cache'],
    [...prune('pruned.jsonl'), '--json'],
    prune('pruned-text.jsonl'),
    ['--version'],
  ];
}

function write(name, compiled) {
  writeFileSync(join(dir, `${name}.v8cache`), loader.cacheFile(compiled));
}

if (process.argv[2] === '--warm-main') {
  const compiled = loader.compile('main', { cache: false });
  const { main } = loader.run(compiled);
  for (const argv of warmUp(process.env.HOME)) await main(argv);
  write('main', compiled);
  process.exit(0);
}

for (const name of ['analyze-worker', 'count-worker']) write(name, loader.compile(name, { cache: false }));
const home = mkdtempSync(join(tmpdir(), 'devs-ctx-build-'));
try {
  const warm = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--warm-main'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    // Nothing of the user's is read or written: a config, a cache, an archive.
    env: { ...process.env, HOME: home, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home, DEVS_CTX_CACHE_DIR: join(home, 'cache'), NO_COLOR: '1' },
  });
  // Without the CLI's cache the build still works; the CLI only starts slower.
  if (warm.status !== 0) process.stderr.write(`build-code-cache: warming the CLI's code cache failed (exit ${warm.status}); it has none\n`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
