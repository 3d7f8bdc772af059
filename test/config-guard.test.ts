import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveGeminiBaseUrl } from '../src/core/config.js';
import { UsageError } from '../src/core/errors.js';
import { loadUserConfig, userConfigPath } from '../src/io/config.js';
import { runCliAsync } from './helpers/cli.js';
import { fakeGeminiForFile } from './helpers/fake-gemini.js';
import { repoRoot } from './helpers/realdata.js';

/**
 * Issue 13, item 2: a project's devs-ctx.config.json (which arrives with a clone or a pull) cannot
 * send the user's Gemini key anywhere; only the environment or the user's own config can, or a
 * project's https URL the user's own config allows.
 */

const KEY = 'test-key-guard-51c0';
const project = (url: string) => ({ path: '/repo/devs-ctx.config.json', config: { geminiBaseUrl: url } });
const user = (config: { geminiBaseUrl?: string; allowProjectGeminiBaseUrl?: boolean }) => ({ path: '/home/u/.config/devs-ctx/config.json', config });

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-guard-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("a project's geminiBaseUrl is ignored, with a reason, unless https and allowed by the user's own config", () => {
  const plain = resolveGeminiBaseUrl({ project: project('http://attacker.example/') });
  assert.equal(plain.baseUrl, undefined);
  assert.match(plain.ignored ?? '', /ignoring "geminiBaseUrl" "http:\/\/attacker\.example\/" in \/repo\/devs-ctx\.config\.json: it is not https/);
  const https = resolveGeminiBaseUrl({ project: project('https://gateway.example/') });
  assert.equal(https.baseUrl, undefined);
  assert.match(https.ignored ?? '', /"allowProjectGeminiBaseUrl": true/);
  // Allowed: https only, never plain http, not even to loopback.
  assert.deepEqual(resolveGeminiBaseUrl({ project: project('https://gateway.example/'), user: user({ allowProjectGeminiBaseUrl: true }) }), {
    baseUrl: 'https://gateway.example/',
  });
  assert.equal(resolveGeminiBaseUrl({ project: project('http://127.0.0.1:9/'), user: user({ allowProjectGeminiBaseUrl: true }) }).baseUrl, undefined);
  assert.equal(resolveGeminiBaseUrl({ project: project('http://gateway.example/'), user: user({ allowProjectGeminiBaseUrl: true }) }).baseUrl, undefined);
});

test('the environment and the user config win; plain http only to this machine', () => {
  assert.deepEqual(resolveGeminiBaseUrl({ env: 'http://127.0.0.1:8080', project: project('https://p.example/') }), { baseUrl: 'http://127.0.0.1:8080' });
  assert.deepEqual(resolveGeminiBaseUrl({ env: 'http://[::1]:8080' }), { baseUrl: 'http://[::1]:8080' });
  assert.deepEqual(resolveGeminiBaseUrl({ env: 'http://localhost:1' }), { baseUrl: 'http://localhost:1' });
  assert.deepEqual(resolveGeminiBaseUrl({ env: 'https://gw.example' }), { baseUrl: 'https://gw.example' });
  assert.deepEqual(resolveGeminiBaseUrl({ env: '  ', user: user({ geminiBaseUrl: 'https://mine.example' }), project: project('https://p.example/') }), {
    baseUrl: 'https://mine.example',
  });
  for (const bad of ['http://gw.example', 'http://10.0.0.1', 'ftp://x', 'not a url', 'http://127.0.0.1.evil.example']) {
    assert.throws(
      () => resolveGeminiBaseUrl({ env: bad }),
      (e: unknown) => e instanceof UsageError && /DEVS_CTX_GEMINI_BASE_URL/.test(e.message),
      bad,
    );
    assert.throws(
      () => resolveGeminiBaseUrl({ user: user({ geminiBaseUrl: bad }) }),
      (e: unknown) => e instanceof UsageError && /config\.json: key "geminiBaseUrl"/.test(e.message),
      bad,
    );
  }
});

test("the user's own config is $XDG_CONFIG_HOME/devs-ctx/config.json, else ~/.config/devs-ctx/config.json, and is validated", (t) => {
  assert.equal(userConfigPath({ XDG_CONFIG_HOME: '/x' }, '/home/u'), '/x/devs-ctx/config.json');
  assert.equal(userConfigPath({ XDG_CONFIG_HOME: 'relative' }, '/home/u'), '/home/u/.config/devs-ctx/config.json');
  assert.equal(userConfigPath({}, '/home/u'), '/home/u/.config/devs-ctx/config.json');
  const home = tempDir(t);
  assert.equal(loadUserConfig({ HOME: home }), undefined);
  mkdirSync(join(home, '.config', 'devs-ctx'), { recursive: true });
  writeFileSync(join(home, '.config', 'devs-ctx', 'config.json'), JSON.stringify({ allowProjectGeminiBaseUrl: true }));
  assert.deepEqual(loadUserConfig({ HOME: home })?.config, { allowProjectGeminiBaseUrl: true });
  writeFileSync(join(home, '.config', 'devs-ctx', 'config.json'), JSON.stringify({ softLimit: 5 }));
  assert.throws(() => loadUserConfig({ HOME: home }), /unknown key "softLimit"; allowed keys: .*allowProjectGeminiBaseUrl/);
});

const ours = fakeGeminiForFile({ apiKey: KEY });
const theirs = fakeGeminiForFile({ apiKey: KEY });

test("prune: a cloned project's geminiBaseUrl never receives the key; the user's own config decides", async (t) => {
  const dir = tempDir(t);
  copyFileSync(join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl'), join(dir, 's.jsonl'));
  writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ geminiBaseUrl: theirs.url }));
  const xdg = join(dir, 'xdg');
  mkdirSync(join(xdg, 'devs-ctx'), { recursive: true });
  writeFileSync(join(xdg, 'devs-ctx', 'config.json'), JSON.stringify({ geminiBaseUrl: ours.url }));
  const env = { GEMINI_API_KEY: KEY, XDG_CONFIG_HOME: xdg, DEVS_CTX_ARCHIVE: join(dir, 'archive.sqlite'), DEVS_CTX_CACHE_DIR: join(dir, 'cache') };
  const result = await runCliAsync(['prune', 's.jsonl', '-o', 'out.jsonl', '--summarizer', 'gemini', '--embedder', 'local', '--window', '4000'], {
    cwd: dir,
    env,
  });
  assert.equal(result.exitCode, 0, result.stderr);
  assert.equal(theirs.requests.length, 0, "the project's URL got no request");
  assert.ok(ours.requests.length > 0, "the user's URL got the summary request");
});

test('prune: a plain-http DEVS_CTX_GEMINI_BASE_URL off this machine is a usage error before any request', async (t) => {
  const dir = tempDir(t);
  copyFileSync(join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl'), join(dir, 's.jsonl'));
  const env = {
    GEMINI_API_KEY: KEY,
    XDG_CONFIG_HOME: join(dir, 'xdg'),
    DEVS_CTX_GEMINI_BASE_URL: 'http://gateway.invalid',
    DEVS_CTX_ARCHIVE: join(dir, 'archive.sqlite'),
  };
  const result = await runCliAsync(['prune', 's.jsonl', '-o', 'out.jsonl', '--summarizer', 'gemini', '--window', '4000'], { cwd: dir, env });
  assert.equal(result.exitCode, 2, result.stderr);
  assert.match(result.stderr, /DEVS_CTX_GEMINI_BASE_URL="http:\/\/gateway\.invalid" cannot be used: plain http is allowed only to this machine/);
});

/**
 * Found by the hostile review: a cloned project's "archive" could send every pruned turn (and
 * PGPASSWORD) to a server of its choosing, or write a database anywhere on the disk. It is used only
 * when it is a SQLite file inside the project's own folder, unless the user's own config allows more.
 */
test("prune: a cloned project's archive URL or outside path is ignored, with a warning; inside the project, or allowed by the user, it is used", async (t) => {
  const { createServer } = await import('node:net');
  const connections: number[] = [];
  const server = createServer((socket) => {
    connections.push(1);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = (server.address() as { port: number }).port;

  const root = tempDir(t);
  const dir = join(root, 'repo');
  const outside = join(root, 'elsewhere');
  mkdirSync(dir);
  mkdirSync(outside);
  const home = join(root, 'home');
  mkdirSync(home);
  copyFileSync(join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl'), join(dir, 's.jsonl'));
  const { symlinkSync, existsSync } = await import('node:fs');
  symlinkSync(outside, join(dir, 'link'));
  // A link to a file that does not exist yet: SQLite would create it where the link points.
  symlinkSync(join(outside, 'd.sqlite'), join(dir, 'dangling.sqlite'));
  // The same, relative, through a symlinked folder: a/b → ../c, and c/db → ../../elsewhere/e.sqlite
  // (from a/b it would read as inside the project; from c, where it is, it is not).
  mkdirSync(join(dir, 'a'));
  mkdirSync(join(dir, 'c'));
  symlinkSync('../c', join(dir, 'a', 'b'));
  symlinkSync('../../elsewhere/e.sqlite', join(dir, 'c', 'db'));
  const env = { HOME: home };
  const defaultArchive = join(home, '.local', 'share', 'devs-ctx', 'archive.sqlite');
  const prune = (archive: string) => {
    writeFileSync(join(dir, 'devs-ctx.config.json'), JSON.stringify({ archive }));
    rmSync(join(dir, 'out.jsonl'), { force: true });
    return runCliAsync(['prune', 's.jsonl', '-o', 'out.jsonl', '--window', '4000'], { cwd: dir, env });
  };

  for (const archive of [
    `postgres://attacker:pw@127.0.0.1:${port}/loot`,
    '../elsewhere/a.sqlite',
    join(outside, 'b.sqlite'),
    'link/c.sqlite',
    'dangling.sqlite',
    'a/b/db',
  ]) {
    rmSync(defaultArchive, { force: true });
    const result = await prune(archive);
    assert.equal(result.exitCode, 0, `${archive}: ${result.stderr}`);
    assert.match(result.stderr, /outside its project: ignored[\s\S]*"allowProjectArchive": true/, archive);
    assert.ok(!result.stderr.includes(':pw@'), 'the password is never printed');
    assert.ok(existsSync(defaultArchive), `${archive}: the prune went to the user's default archive`);
  }
  assert.deepEqual(connections, [], 'no connection was made to the project-chosen server');
  assert.deepEqual((await import('node:fs')).readdirSync(outside), [], 'no database was created outside the project');

  // A SQLite file inside the project's own folder is the project's business.
  const inside = await prune('archive/inside.sqlite');
  assert.equal(inside.exitCode, 0, inside.stderr);
  assert.equal(inside.stderr.includes('ignored'), false, inside.stderr);
  assert.ok(existsSync(join(dir, 'archive', 'inside.sqlite')));

  // The user's own config may allow more.
  mkdirSync(join(home, '.config', 'devs-ctx'), { recursive: true });
  writeFileSync(join(home, '.config', 'devs-ctx', 'config.json'), JSON.stringify({ allowProjectArchive: true }));
  const allowed = await prune('../elsewhere/a.sqlite');
  assert.equal(allowed.exitCode, 0, allowed.stderr);
  assert.ok(existsSync(join(outside, 'a.sqlite')), 'allowed by the user: the project archive is used');
});

test('a blank DEVS_CTX_ARCHIVE is unset: the default archive, not a file named " "', async () => {
  const root = mkdtempSync(join(tmpdir(), 'devs-ctx-blank-archive-'));
  const home = join(root, 'home');
  mkdirSync(home);
  copyFileSync(join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl'), join(root, 's.jsonl'));
  const result = await runCliAsync(['prune', 's.jsonl', '-o', 'out.jsonl', '--window', '4000'], { cwd: root, env: { HOME: home, DEVS_CTX_ARCHIVE: ' ' } });
  assert.equal(result.exitCode, 0, result.stderr);
  assert.ok(existsSync(join(home, '.local', 'share', 'devs-ctx', 'archive.sqlite')));
  assert.deepEqual(readdirSync(root).sort(), ['home', 'out.jsonl', 's.jsonl']);
});
