import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { after, test } from 'node:test';
import { packageCopy } from './helpers/package-copy.js';
import { repoRoot } from './helpers/realdata.js';

/** dist/cli-bundle/loader.cjs (scripts/bundle-loader.cjs): `npm test` builds first. */
interface Compiled {
  readonly cached: boolean;
  readonly bytes: Buffer;
  readonly script: { readonly cachedDataRejected?: boolean };
}
interface Loader {
  compile(name: string, options?: { cache?: boolean }): Compiled;
  load(name: string): unknown;
}
/** What the loader signs a cache with besides its bytes: the Node that made it. */
const thisNode = `${process.version} ${process.versions.v8} ${process.arch}`;
const signed = (bundle: Buffer, payload: Buffer, node = thisNode): Buffer =>
  Buffer.concat([createHash('sha256').update(bundle).update(payload).update(node).digest(), payload]);
const bundleDir = join(repoRoot, 'dist', 'cli-bundle');
const requireHere = createRequire(import.meta.url);
const loaderAt = (dir: string): Loader => requireHere(join(dir, 'loader.cjs')) as Loader;

const scratch = mkdtempSync(join(tmpdir(), 'devs-ctx-code-cache-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** A folder holding the loader and the count worker's bundle, with `cache` as its code cache (or none). */
function workerBundleWith(name: string, cache: Uint8Array | undefined): Loader {
  const dir = join(scratch, name);
  mkdirSync(dir);
  copyFileSync(join(bundleDir, 'loader.cjs'), join(dir, 'loader.cjs'));
  copyFileSync(join(bundleDir, 'count-worker.bundle.cjs'), join(dir, 'count-worker.bundle.cjs'));
  if (cache !== undefined) writeFileSync(join(dir, 'count-worker.v8cache'), cache);
  return loaderAt(dir);
}

test('the build compiles each bundle of the CLI from its own code cache', () => {
  const loader = loaderAt(bundleDir);
  for (const name of ['main', 'analyze-worker', 'count-worker']) assert.equal(loader.compile(name).cached, true, name);
  assert.equal(loader.compile('main', { cache: false }).cached, false);
});

test('a code cache is used only when it is of these very bytes and V8 takes it', () => {
  const own = readFileSync(join(bundleDir, 'count-worker.v8cache'));
  assert.equal(workerBundleWith('own', own).compile('count-worker').cached, true, 'a copy of its own cache');
  assert.equal(workerBundleWith('none', undefined).compile('count-worker').cached, false, 'no cache');
  const other = readFileSync(join(bundleDir, 'analyze-worker.v8cache'));
  assert.equal(workerBundleWith('other', other).compile('count-worker').cached, false, "another bundle's cache");
  assert.equal(workerBundleWith('short', own.subarray(0, 10)).compile('count-worker').cached, false, 'a cut cache');
  // Damaged bytes under the digest of the undamaged ones: not given to V8 (V8 does not check a
  // cache's contents; this one aborted the process with "unreachable code").
  const damaged = Buffer.from(own);
  for (let i = 32 + 64; i < damaged.length; i += 97) damaged[i] = (damaged[i] as number) ^ 0x5a;
  assert.equal(workerBundleWith('damaged', damaged).compile('count-worker').cached, false, 'a damaged cache');
  // A well-formed cache of other code, under a digest that holds: V8 rejects it, the bundle is compiled.
  const foreign = new Script('1 + 1').createCachedData();
  const bundle = readFileSync(join(bundleDir, 'count-worker.bundle.cjs'));
  const compiled = workerBundleWith('foreign', signed(bundle, foreign)).compile('count-worker');
  assert.equal(compiled.cached, false, "V8 refuses another script's cache");
  assert.equal(compiled.script.cachedDataRejected, true);
  // Its own cache, signed as made by another Node (V8 checks its own version, not Node's patches to it).
  const payload = own.subarray(32);
  assert.equal(workerBundleWith('re-signed', signed(bundle, payload)).compile('count-worker').cached, true, 'the signature as the loader makes it');
  const otherNode = signed(bundle, payload, `v20.0.0 ${process.versions.v8} ${process.arch}`);
  assert.equal(workerBundleWith('other-node', otherNode).compile('count-worker').cached, false, 'a cache made by another Node');
  // The same length, one byte changed: V8's own check (the source's length) cannot tell; the digest does.
  const dir = join(scratch, 'edited');
  mkdirSync(dir);
  copyFileSync(join(bundleDir, 'loader.cjs'), join(dir, 'loader.cjs'));
  writeFileSync(
    join(dir, 'count-worker.bundle.cjs'),
    readFileSync(join(bundleDir, 'count-worker.bundle.cjs'), 'latin1').replace('dist/cli/count-worker.js', 'dist/cli/count-workeR.js'),
    'latin1',
  );
  writeFileSync(join(dir, 'count-worker.v8cache'), own);
  assert.equal(loaderAt(dir).compile('count-worker').cached, false, 'the cache of other bytes of the same length');
});

test('a bundle is read as UTF-8: characters esbuild leaves as they are (in regular expressions, comments) are kept', () => {
  const dir = join(scratch, 'utf8');
  mkdirSync(dir);
  copyFileSync(join(bundleDir, 'loader.cjs'), join(dir, 'loader.cjs'));
  writeFileSync(join(dir, 'probe.bundle.cjs'), "// → ✗\nmodule.exports = { arrow: /^\\d+→/.test('155→x'), length: '✗'.length };\n");
  assert.deepEqual(loaderAt(dir).load('probe'), { arrow: true, length: 1 });
  // The CLI's bundle has such characters (a Read tool's line numbers, error marks in tool output).
  assert.ok(readFileSync(join(bundleDir, 'main.bundle.cjs'), 'utf8').includes('→'));
});

test('with a damaged code cache the CLI still runs, with the same output', () => {
  // A copy of the package: the bin, the build and the manifest, dependencies linked.
  const pkg = join(scratch, 'package');
  const pkgBin = packageCopy(pkg);
  const cacheFile = join(pkg, 'dist', 'cli-bundle', 'main.v8cache');
  const cache = readFileSync(cacheFile);
  writeFileSync(cacheFile, Buffer.concat([cache.subarray(0, 32 + 1000), Buffer.alloc(cache.length - 32 - 1000, 7)]));
  const args = ['analyze', join(repoRoot, 'fixtures', 'devs', 'basic-session.jsonl'), '--json', '--no-cache'];
  const run = (bin: string) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const expected = run(join(repoRoot, 'bin', 'devs-ctx.js'));
  const damaged = run(pkgBin);
  assert.equal(damaged.stderr, '');
  assert.equal(damaged.status, expected.status);
  assert.equal(damaged.stdout, expected.stdout);
  assert.ok(damaged.stdout.includes('"schemaVersion"'));
});
