import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEnv, runCliAsync, runInProcess } from './helpers/cli.js';
import { spawnChild } from './helpers/child.js';
import type { CliResult } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';
import { startPostgres } from './helpers/postgres.js';
import { startFakeGemini } from './helpers/fake-gemini.js';

/**
 * The CLI against a PostgreSQL archive, over the wire: the built binary with the production `pg`
 * client, a real PostgreSQL engine (PGlite) on a loopback port. Every CLI run is async: the
 * server lives in this process and must keep answering while the children run.
 */

const OVER_SOFT = 'fixtures/devs/over-soft-limit.jsonl';
const WINDOW = ['--window', '4000'];
const fixtureBytes = readFileSync(join(repoRoot, OVER_SOFT));

type T = { after(fn: () => Promise<void> | void): void };

/** A temp "machine": its own folder and HOME (so no SQLite archive is ever found by default). */
function machine(t: T, name: string): { dir: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), `devs-ctx-pg-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'home'));
  return { dir, env: { HOME: join(dir, 'home') } };
}

function session(dir: string, name = 's.jsonl'): string {
  const path = join(dir, name);
  copyFileSync(join(repoRoot, OVER_SOFT), path);
  return path;
}

function assertNoSecret(result: CliResult, password: string): void {
  assert.ok(!result.stdout.includes(password) && !result.stderr.includes(password), `the password leaked: ${result.stdout}${result.stderr}`);
}

describe('devs-ctx with a PostgreSQL archive', () => {
  test('DEVS_CTX_ARCHIVE_URL: prune --in-place on one machine, recall and restore on another, byte for byte, no password printed', async (t) => {
    const { url, password } = await startPostgres(t);
    const one = machine(t, 'one');
    const path = session(one.dir);
    const pruned = await runCliAsync(['prune', 's.jsonl', '--in-place', '--json', ...WINDOW], { cwd: one.dir, env: { ...one.env, DEVS_CTX_ARCHIVE_URL: url } });
    assert.equal(pruned.exitCode, 0, pruned.stdout + pruned.stderr);
    assertNoSecret(pruned, password);
    const report = JSON.parse(pruned.stdout) as { archive: { path: string; eventId: string } };
    assert.equal(report.archive.path, url.replace(password, '***'), 'the report names the archive without its password');
    const prunedBytes = readFileSync(path);
    assert.ok(!prunedBytes.equals(fixtureBytes), 'the transcript was pruned');
    assert.ok(!prunedBytes.toString().includes(password), 'the summary turn does not carry the password');

    // Another machine: the pruned file travels, the archive is the shared server.
    const two = machine(t, 'two');
    const moved = join(two.dir, 's.jsonl');
    writeFileSync(moved, prunedBytes);
    const env2 = { ...two.env, DEVS_CTX_ARCHIVE_URL: url };
    const recall = await runCliAsync(['recall', 'reconcile', '--json'], { cwd: two.dir, env: env2 });
    assert.equal(recall.exitCode, 0, recall.stderr);
    assertNoSecret(recall, password);
    const hits = JSON.parse(recall.stdout) as { archive: string; hits: Array<{ eventId: string; turnId: string; snippet: string; score: number }> };
    assert.ok(hits.hits.length > 0);
    assert.ok(hits.hits.every((h) => h.eventId === report.archive.eventId));
    assert.equal(hits.archive, report.archive.path);
    const turn = await runCliAsync(['recall', '--turn', hits.hits[0]!.turnId], { cwd: two.dir, env: env2 });
    assert.equal(turn.exitCode, 0, turn.stderr);
    assert.ok(fixtureBytes.toString().includes(JSON.stringify(turn.stdout.trimEnd()).slice(1, 30)), 'the full archived text comes back');

    const restored = await runCliAsync(['restore', 's.jsonl', '--in-place', '--json'], { cwd: two.dir, env: env2 });
    assert.equal(restored.exitCode, 0, restored.stdout + restored.stderr);
    assertNoSecret(restored, password);
    assert.ok(readFileSync(moved).equals(fixtureBytes), 'restored byte for byte on the other machine');
  });

  test('--archive URL and a config file "archive" URL work the same (once the user allows a project archive URL)', async (t) => {
    const { url, password } = await startPostgres(t);
    const m = machine(t, 'flag');
    session(m.dir);
    const pruned = await runCliAsync(['prune', 's.jsonl', '--in-place', '--archive', url, ...WINDOW], { cwd: m.dir, env: m.env });
    assert.equal(pruned.exitCode, 0, pruned.stderr);
    assertNoSecret(pruned, password);
    writeFileSync(join(m.dir, 'devs-ctx.config.json'), JSON.stringify({ archive: url }));
    // A project's URL is the project's wish, not the user's: ignored until the user's own config allows it.
    const ignored = await runCliAsync(['restore', 's.jsonl', '-o', 'back.jsonl'], { cwd: m.dir, env: m.env });
    assert.equal(ignored.exitCode, 3, ignored.stderr);
    assert.match(ignored.stderr, /outside its project: ignored/);
    assertNoSecret(ignored, password);
    mkdirSync(join(m.env['HOME']!, '.config', 'devs-ctx'), { recursive: true });
    writeFileSync(join(m.env['HOME']!, '.config', 'devs-ctx', 'config.json'), JSON.stringify({ allowProjectArchive: true }));
    const restored = await runCliAsync(['restore', 's.jsonl', '-o', 'back.jsonl'], { cwd: m.dir, env: m.env });
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.ok(readFileSync(join(m.dir, 'back.jsonl')).equals(fixtureBytes));
  });

  test('8 processes pruning 8 sessions into one database at once lose nothing; 2 on one session: one prunes, the other is refused (exit 7) or finds it pruned', async (t) => {
    const { url, password } = await startPostgres(t);
    const m = machine(t, 'many');
    const env = { ...m.env, DEVS_CTX_ARCHIVE_URL: url };
    const names = Array.from({ length: 8 }, (_, i) => `s${i}.jsonl`);
    for (const name of names) session(m.dir, name);
    // All spawned before any is awaited: they start, connect and migrate a fresh database together.
    const runs = await Promise.all(names.map((name) => runCliAsync(['prune', name, '--in-place', '--json', ...WINDOW], { cwd: m.dir, env })));
    const eventIds = new Set<string>();
    for (const [i, run] of runs.entries()) {
      assert.equal(run.exitCode, 0, `${names[i]}: ${run.stdout}${run.stderr}`);
      assertNoSecret(run, password);
      eventIds.add((JSON.parse(run.stdout) as { archive: { eventId: string } }).archive.eventId);
    }
    assert.equal(eventIds.size, 8);
    const restores = await Promise.all(names.map((name) => runCliAsync(['restore', name, '-o', `${name}.orig`], { cwd: m.dir, env })));
    for (const [i, run] of restores.entries()) {
      assert.equal(run.exitCode, 0, `${names[i]}: ${run.stderr}`);
      assert.ok(readFileSync(join(m.dir, `${names[i]}.orig`)).equals(fixtureBytes), `${names[i]} restores byte for byte`);
    }

    // Two on the same session at once.
    const same = session(m.dir, 'same.jsonl');
    const pair = await Promise.all([0, 1].map(() => runCliAsync(['prune', 'same.jsonl', '--in-place', '--json', ...WINDOW], { cwd: m.dir, env })));
    const codes = pair.map((r) => r.exitCode).sort();
    t.diagnostic(`same-session exit codes: ${codes.join(', ')}`);
    assert.ok(
      codes.every((c) => c === 0 || c === 7),
      pair.map((r) => r.stdout + r.stderr).join('\n'),
    );
    assert.ok(codes.includes(0));
    for (const r of pair.filter((p) => p.exitCode === 7)) assert.match(r.stdout, /locked/);
    // However they interleaved, restoring undoes every prune back to the original.
    for (let i = 0; i < 3 && !readFileSync(same).equals(fixtureBytes); i++) {
      const back = await runCliAsync(['restore', 'same.jsonl', '--in-place'], { cwd: m.dir, env });
      assert.equal(back.exitCode, 0, back.stderr);
    }
    assert.ok(readFileSync(same).equals(fixtureBytes), 'the same session restores to its original');
  });

  test('archive copy: SQLite up to PostgreSQL and back, idempotent, verified', async (t) => {
    const { url, password } = await startPostgres(t);
    const m = machine(t, 'copy');
    const local = join(m.dir, 'local.sqlite');
    session(m.dir);
    const pruned = await runCliAsync(['prune', 's.jsonl', '--in-place', '--archive', local, ...WINDOW], { cwd: m.dir, env: m.env });
    assert.equal(pruned.exitCode, 0, pruned.stderr);
    const up = await runCliAsync(['archive', 'copy', '--from', local, '--to', url, '--json'], { cwd: m.dir, env: m.env });
    assert.equal(up.exitCode, 0, up.stdout + up.stderr);
    assertNoSecret(up, password);
    const report = JSON.parse(up.stdout) as { copied: number; alreadyThere: number; verified: { events: number; turns: number }; to: string };
    assert.equal(report.copied, 1);
    assert.equal(report.verified.events, 1);
    assert.ok(report.verified.turns > 0);
    assert.match(report.to, /\*\*\*/);
    const again = await runCliAsync(['archive', 'copy', '--from', local, '--to', url], { cwd: m.dir, env: m.env });
    assert.equal(again.exitCode, 0, again.stderr);
    assert.match(again.stdout, /copied 0 prune event\(s\).*\(1 already there\); verified 1 event/);

    // The shared archive restores the file; and back down to a new SQLite file.
    const restored = await runCliAsync(['restore', 's.jsonl', '-o', 'orig.jsonl', '--archive', url], { cwd: m.dir, env: m.env });
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.ok(readFileSync(join(m.dir, 'orig.jsonl')).equals(fixtureBytes));
    const down = await runCliAsync(['archive', 'copy', '--from', url, '--to', 'down.sqlite', '--json'], { cwd: m.dir, env: m.env });
    assert.equal(down.exitCode, 0, down.stderr);
    assert.equal((JSON.parse(down.stdout) as { copied: number }).copied, 1);
    const fromDown = await runCliAsync(['restore', 's.jsonl', '-o', 'orig2.jsonl', '--archive', 'down.sqlite'], { cwd: m.dir, env: m.env });
    assert.equal(fromDown.exitCode, 0, fromDown.stderr);
    assert.ok(readFileSync(join(m.dir, 'orig2.jsonl')).equals(fixtureBytes));

    const missing = await runCliAsync(['archive', 'copy', '--to', url], { cwd: m.dir, env: m.env });
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderr, /--from is required/);
  });

  test('a server that never answers is exit 3 after connect_timeout, a refused one at once; sslmode is passed to the client; no password printed, the input untouched', async (t) => {
    const password = 'pw-Zq7-never-print-me';
    // Accepts connections and says nothing: a firewall black hole, as a client sees it.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      for (const s of sockets) s.destroy();
      silent.close();
    });
    const { port } = silent.address() as { port: number };
    const m = machine(t, 'down');
    const path = session(m.dir);
    const hung = await runCliAsync(['prune', 's.jsonl', '--in-place', '--json', ...WINDOW], {
      cwd: m.dir,
      env: { ...m.env, DEVS_CTX_ARCHIVE_URL: `postgres://devs_ctx:${password}@127.0.0.1:${port}/team?connect_timeout=1` },
    });
    assert.equal(hung.exitCode, 3, hung.stdout + hung.stderr);
    assertNoSecret(hung, password);
    const error = (JSON.parse(hung.stdout) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'archive_connect');
    assert.match(error.message, /cannot open the PostgreSQL archive at postgres:\/\/devs_ctx:\*\*\*@127\.0\.0\.1:\d+\/team.*timeout/i);
    assert.ok(readFileSync(path).equals(fixtureBytes), 'nothing archived, nothing written');

    // A port nobody listens on (the silent server's, once closed, is free again).
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const refused = await runCliAsync(['recall', 'anything'], {
      cwd: m.dir,
      env: { ...m.env, DEVS_CTX_ARCHIVE_URL: `postgres://devs_ctx:${password}@127.0.0.1:${closedPort}/team` },
    });
    assert.equal(refused.exitCode, 3, refused.stderr);
    assertNoSecret(refused, password);
    assert.match(refused.stderr, /cannot open the PostgreSQL archive at .*ECONNREFUSED/);

    // sslmode=require reaches the client: this server has no TLS, so the connection is refused as such.
    const { url } = await startPostgres(t);
    const tls = await runCliAsync(['recall', 'anything'], {
      cwd: m.dir,
      env: { ...m.env, DEVS_CTX_ARCHIVE_URL: url.replace('sslmode=disable', 'sslmode=require') },
    });
    assert.equal(tls.exitCode, 3, tls.stderr);
    assertNoSecret(tls, password);
    assert.match(tls.stderr, /SSL/i);

    const bad = await runCliAsync(['recall', 'x'], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: `/not/a/url:${password}` } });
    assert.equal(bad.exitCode, 2, bad.stderr);
  });

  test('init takes a postgres:// URL for the config, but never one holding a password', async (t) => {
    const m = machine(t, 'init');
    const refused = await runInProcess(['init', '--yes', '--archive', 'postgres://devs_ctx:pw-Zq7-never-print-me@db.internal/team'], { cwd: m.dir });
    assert.equal(refused.exitCode, 2, refused.stderr);
    assert.doesNotMatch(refused.stdout + refused.stderr, /pw-Zq7/);
    assert.match(refused.stderr, /would hold the database password/);
    assert.equal(existsSync(join(m.dir, 'devs-ctx.config.json')), false);
    const written = await runInProcess(['init', '--yes', '--archive', 'postgres://devs_ctx@db.internal/team?sslmode=verify-full'], { cwd: m.dir });
    assert.equal(written.exitCode, 0, written.stderr);
    const config = JSON.parse(readFileSync(join(m.dir, 'devs-ctx.config.json'), 'utf8')) as { archive: string };
    assert.equal(config.archive, 'postgres://devs_ctx@db.internal/team?sslmode=verify-full');
  });

  test('a prune interrupted after archiving (exit 130, nothing written) leaves no event in the database', async (t) => {
    const { url } = await startPostgres(t);
    const m = machine(t, 'interrupted');
    const path = session(m.dir);
    const run = spawnChild(process.execPath, [join(repoRoot, 'bin/devs-ctx.js'), 'prune', 's.jsonl', '--in-place', ...WINDOW], {
      cwd: m.dir,
      env: cliEnv({ ...m.env, DEVS_CTX_ARCHIVE_URL: url, DEVS_CTX_TEST_PAUSE: 'archived' }),
    });
    await run.printed(/test pause at archived/);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.after(() => client.end());
    assert.equal(Number((await client.query('SELECT count(*) AS n FROM prune_events')).rows[0].n), 1, 'archived before the write');
    run.child.kill('SIGINT');
    const { code, stderr } = await run.exited;
    assert.equal(code, 130, stderr);
    assert.ok(readFileSync(path).equals(fixtureBytes), 'nothing written');
    const left = await client.query(
      'SELECT (SELECT count(*) FROM prune_events) AS e, (SELECT count(*) FROM archived_records) AS r, (SELECT count(*) FROM archived_turns) AS t',
    );
    assert.deepEqual(left.rows[0], { e: '0', r: '0', t: '0' }, 'the event and its rows are gone');
  });

  test('--embedder gemini caches vectors in the database: a second prune and a dry run embed nothing, the dry run stores nothing', async (t) => {
    const { url, password } = await startPostgres(t);
    const gemini = await startFakeGemini({ apiKey: 'test-key-pg-embed' });
    t.after(() => gemini.close());
    const m = machine(t, 'embed');
    session(m.dir);
    const env = { ...m.env, DEVS_CTX_ARCHIVE_URL: url, GEMINI_API_KEY: 'test-key-pg-embed', DEVS_CTX_GEMINI_BASE_URL: gemini.url };
    const args = ['--json', '--embedder', 'gemini', '--summarizer', 'extractive', ...WINDOW];
    type Providers = { providers: { embedder: string; embeddingTokens: number; embeddingsCached: number } };
    const embedded = (): number => gemini.requests.filter((r) => r.action === 'batchEmbedContents').length;

    const first = await runCliAsync(['prune', 's.jsonl', '-o', 'one.jsonl', ...args], { cwd: m.dir, env });
    assert.equal(first.exitCode, 0, first.stdout + first.stderr);
    assertNoSecret(first, password);
    assert.equal((JSON.parse(first.stdout) as Providers).providers.embedder, 'gemini:gemini-embedding-001');
    assert.ok(embedded() >= 1, 'the first prune embeds');
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.after(() => client.end());
    const cachedRows = async (): Promise<number> => Number((await client.query('SELECT count(*) AS n FROM embedding_cache')).rows[0].n);
    const rows = await cachedRows();
    assert.ok(rows > 0, 'vectors are stored in the database');

    gemini.reset();
    const second = await runCliAsync(['prune', 's.jsonl', '-o', 'two.jsonl', ...args], { cwd: m.dir, env });
    assert.equal(second.exitCode, 0, second.stdout + second.stderr);
    assert.equal(embedded(), 0, 'nothing was embedded twice');
    const report = JSON.parse(second.stdout) as Providers;
    assert.ok(report.providers.embeddingsCached > 0);
    assert.equal(report.providers.embeddingTokens, 0);

    const dry = await runCliAsync(['prune', 's.jsonl', '--dry-run', ...args], { cwd: m.dir, env });
    assert.equal(dry.exitCode, 0, dry.stdout + dry.stderr);
    assert.equal(embedded(), 0, 'the dry run embeds nothing either');
    assert.ok((JSON.parse(dry.stdout) as Providers).providers.embeddingsCached > 0);
    assert.equal(await cachedRows(), rows, 'no vector added by the second prune or the dry run');
  });
});

describe('a PostgreSQL URL whose password is not percent-encoded, or that is mistyped', () => {
  const SECRET = 'SECRET-9f2';
  test('prune, recall and archive copy never print the password, whatever the URL holds', async (t) => {
    const { dir, env } = machine(t, 'odd-url');
    const path = session(dir);
    // Port 9 (discard): nothing answers there, and the URL fails before any connection anyway.
    for (const url of [`postgres://devs_ctx:hunter2/${SECRET}@127.0.0.1:9/team`, `postgres://devs_ctx:p@ss/${SECRET}@127.0.0.1:9/team`]) {
      for (const args of [
        ['prune', path, '--force', ...WINDOW, '-o', join(dir, 'out.jsonl'), '--archive', url],
        ['prune', path, '--force', ...WINDOW, '-o', join(dir, 'out.jsonl'), '--archive', url, '--json'],
        ['recall', 'anything', '--archive', url],
        ['archive', 'copy', '--from', join(dir, 'none.sqlite'), '--to', url],
      ]) {
        const result = await runCliAsync(args, { cwd: dir, env });
        assert.notEqual(result.exitCode, 0, args.join(' '));
        assertNoSecret(result, SECRET);
        assertNoSecret(result, 'hunter2');
      }
    }
  });

  test('postgres:/ with one slash is a usage error (exit 2), not a SQLite file in a folder named after the URL', async (t) => {
    const { dir, env } = machine(t, 'typo-url');
    const path = session(dir);
    const url = `postgres:/devs_ctx:hunter2-${SECRET}@db.internal:5432/team`;
    const result = await runCliAsync(['prune', path, '--force', ...WINDOW, '-o', join(dir, 'out.jsonl'), '--archive', url, '--json'], { cwd: dir, env });
    assert.equal(result.exitCode, 2, result.stderr);
    assert.match(result.stdout, /is not a PostgreSQL URL: one starts with postgres:\/\//);
    assertNoSecret(result, SECRET);
    assert.ok(!existsSync(join(dir, 'postgres:')), 'no folder named after the URL');
    assert.ok(!existsSync(join(dir, 'out.jsonl')), 'nothing written');
    const fromEnv = await runCliAsync(['recall', 'anything'], { cwd: dir, env: { ...env, DEVS_CTX_ARCHIVE: url } });
    assert.equal(fromEnv.exitCode, 2);
    assertNoSecret(fromEnv, SECRET);
  });

  test('init --archive with a password written without percent-encoding: exit 2, nothing written, the password not shown', async (t) => {
    const { dir, env } = machine(t, 'init-url');
    for (const url of [`postgres://devs_ctx:hunter2/${SECRET}@db:5432/team`, `postgres:/devs_ctx:${SECRET}@db/team`]) {
      const result = await runInProcess(['init', '--yes', '--archive', url], { cwd: dir, env });
      assert.equal(result.exitCode, 2, result.stderr);
      assertNoSecret(result, SECRET);
      assert.ok(!existsSync(join(dir, 'devs-ctx.config.json')));
    }
  });
});

/**
 * A TCP proxy to `port` that cuts the connection (both ways, at once) when the client sends a
 * message holding `pattern`: the server goes away at that moment, as the client sees it. With
 * `afterServerGotIt`, the message reaches the server and its answer is what is lost.
 */
async function cuttingProxy(t: T, port: number, pattern: string, options: { afterServerGotIt?: boolean } = {}): Promise<number> {
  const sockets: Socket[] = [];
  const proxy = createServer((client) => {
    const server = connect(port, '127.0.0.1');
    sockets.push(client, server);
    client.on('error', () => {});
    server.on('error', () => {});
    let answerLost = false;
    const cut = (): void => {
      client.destroy();
      server.destroy();
    };
    client.on('data', (data: Buffer) => {
      if (!data.includes(pattern)) server.write(data);
      else if (options.afterServerGotIt) {
        answerLost = true;
        server.write(data);
      } else cut();
    });
    server.on('data', (data: Buffer) => (answerLost ? cut() : client.write(data)));
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    proxy.close();
  });
  return (proxy.address() as { port: number }).port;
}

describe('the PostgreSQL server going away in the middle of a command', () => {
  test("during the prune's archive transaction: exit 3 with the reason, no crash, the input untouched, no lock left, nothing in the archive", async (t) => {
    const { url, port } = await startPostgres(t);
    const m = machine(t, 'cut-prune');
    const path = session(m.dir);
    // The schema first (another transcript pruned), through the real port: the cut then falls on the prune's own inserts.
    session(m.dir, 'first.jsonl');
    const first = await runCliAsync(['prune', 'first.jsonl', '--in-place', '--force', ...WINDOW], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: url } });
    assert.equal(first.exitCode, 0, first.stderr);
    const cut = url.replace(`:${port}/`, `:${await cuttingProxy(t, port, 'INSERT INTO archived_turns')}/`);
    const result = await runCliAsync(['prune', 's.jsonl', '--in-place', '--force', ...WINDOW], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: cut } });
    assert.equal(result.exitCode, 3, result.stderr);
    assert.match(result.stderr, /could not archive the prune/);
    assert.doesNotMatch(result.stderr, /Unhandled|at .*node_modules/);
    assert.ok(readFileSync(path).equals(fixtureBytes), 'the input untouched');
    assert.ok(!existsSync(`${path}.devs-ctx.lock`), 'no lock left behind');
    const recall = (file: string) => runCliAsync(['recall', 'test', '--file', file, '--json'], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: url } });
    assert.ok((JSON.parse((await recall('first.jsonl')).stdout) as { hits: unknown[] }).hits.length > 0, 'the query finds what a prune archived');
    assert.equal((JSON.parse((await recall('s.jsonl')).stdout) as { hits: unknown[] }).hits.length, 0, 'no turn of a prune that did not happen');
  });

  test('after the commit reached the server, its answer lost: exit 3, and the event taken out again (recall shows no prune that did not happen)', async (t) => {
    const { url, port } = await startPostgres(t);
    const m = machine(t, 'cut-commit');
    const path = session(m.dir);
    session(m.dir, 'first.jsonl');
    assert.equal(
      (await runCliAsync(['prune', 'first.jsonl', '--in-place', '--force', ...WINDOW], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: url } })).exitCode,
      0,
    );
    const cut = url.replace(`:${port}/`, `:${await cuttingProxy(t, port, 'COMMIT', { afterServerGotIt: true })}/`);
    const result = await runCliAsync(['prune', 's.jsonl', '--in-place', '--force', ...WINDOW], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: cut } });
    assert.equal(result.exitCode, 3, result.stderr);
    assert.ok(readFileSync(path).equals(fixtureBytes), 'the input untouched');
    const hits = await runCliAsync(['recall', 'test', '--file', 's.jsonl', '--json'], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: url } });
    assert.equal((JSON.parse(hits.stdout) as { hits: unknown[] }).hits.length, 0, `a prune that did not happen is listed: ${hits.stdout}`);
  });

  test('during a recall or a restore: exit 3 with the reason, not an internal error', async (t) => {
    const { url, port } = await startPostgres(t);
    const m = machine(t, 'cut-read');
    const path = session(m.dir);
    const env = { ...m.env, DEVS_CTX_ARCHIVE_URL: url };
    assert.equal((await runCliAsync(['prune', 's.jsonl', '--in-place', '--force', ...WINDOW], { cwd: m.dir, env })).exitCode, 0);
    for (const [args, pattern] of [
      [['recall', 'architecture'], 'ts_rank'],
      [['restore', path, '-o', join(m.dir, 'r.jsonl')], 'FROM archived_records'],
    ] as const) {
      const cut = url.replace(`:${port}/`, `:${await cuttingProxy(t, port, pattern)}/`);
      const result = await runCliAsync([...args], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: cut } });
      assert.equal(result.exitCode, 3, `${args[0]}: ${result.stderr}`);
      assert.match(result.stderr, /PostgreSQL archive/, args[0]);
      assert.doesNotMatch(result.stderr, /this is a bug|Unhandled/, args[0]);
    }
  });
});

describe('what PostgreSQL text cannot hold (U+0000) in a turn', () => {
  /** The fixture with NUL in a dropped turn's content, id and timestamp (JSON allows it: \u0000). */
  function nulSession(dir: string): string {
    const lines = fixtureBytes.toString('utf8').split('\n');
    // Line 9 (a1), a turn the prune drops.
    const before = lines[8] as string;
    lines[8] = before
      .replace('"id":"a1"', '"id":"a\\u00001"')
      .replace('the matching by account exists', 'the matching\\u0000by account exists')
      .replace('"timestamp":"2026-11-20T10:08:00.000Z"', '"timestamp":"2026-11-20T10:08:00\\u0000Z"');
    assert.notEqual(lines[8], before);
    const path = join(dir, 'nul.jsonl');
    writeFileSync(path, lines.join('\n'));
    return path;
  }

  test('a prune into PostgreSQL keeps it (as U+FFFD in searchable text) and restores the bytes exactly', async (t) => {
    const { url } = await startPostgres(t);
    const m = machine(t, 'nul-prune');
    const path = nulSession(m.dir);
    const original = readFileSync(path);
    const env = { ...m.env, DEVS_CTX_ARCHIVE_URL: url };
    const pruned = await runCliAsync(['prune', 'nul.jsonl', '--in-place', '--force', ...WINDOW], { cwd: m.dir, env });
    assert.equal(pruned.exitCode, 0, pruned.stderr);
    const restored = await runCliAsync(['restore', 'nul.jsonl', '-o', join(m.dir, 'back.jsonl')], { cwd: m.dir, env });
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.ok(readFileSync(join(m.dir, 'back.jsonl')).equals(original), 'byte for byte');
  });

  test('archive copy SQLite -> PostgreSQL -> SQLite of such a prune: done, verified, twice over (nothing "differs")', async (t) => {
    const { url } = await startPostgres(t);
    const m = machine(t, 'nul-copy');
    const path = nulSession(m.dir);
    const original = readFileSync(path);
    const sqlite = join(m.dir, 'a.sqlite');
    assert.equal((await runCliAsync(['prune', 'nul.jsonl', '--in-place', '--force', ...WINDOW, '--archive', sqlite], { cwd: m.dir, env: m.env })).exitCode, 0);
    session(m.dir, 'plain.jsonl');
    assert.equal(
      (await runCliAsync(['prune', 'plain.jsonl', '--in-place', '--force', ...WINDOW, '--archive', sqlite], { cwd: m.dir, env: m.env })).exitCode,
      0,
    );
    for (let round = 0; round < 2; round++) {
      const copy = await runCliAsync(['archive', 'copy', '--from', sqlite, '--to', url, '--json'], { cwd: m.dir, env: m.env });
      assert.equal(copy.exitCode, 0, `round ${round}: ${copy.stdout}${copy.stderr}`);
      assert.equal((JSON.parse(copy.stdout) as { verified: { events: number } }).verified.events, 2);
    }
    const back = join(m.dir, 'b.sqlite');
    assert.equal((await runCliAsync(['archive', 'copy', '--from', url, '--to', back], { cwd: m.dir, env: m.env })).exitCode, 0);
    const restored = await runCliAsync(['restore', 'nul.jsonl', '-o', join(m.dir, 'back.jsonl'), '--archive', back], { cwd: m.dir, env: m.env });
    assert.equal(restored.exitCode, 0, restored.stderr);
    assert.ok(readFileSync(join(m.dir, 'back.jsonl')).equals(original));
  });

  test('archive copy: one agent window archived into both archives (at other times) is the same event, not a conflict', async (t) => {
    const { url } = await startPostgres(t);
    const m = machine(t, 'compaction-copy');
    const transcript = join(m.dir, 'session.jsonl');
    copyFileSync(join(repoRoot, 'fixtures', 'claude-code', 'parallel-tool-calls-2.1.jsonl'), transcript);
    const sqlite = join(m.dir, 'a.sqlite');
    const hookInput = (trigger: string): string =>
      JSON.stringify({ session_id: 's', transcript_path: transcript, cwd: m.dir, hook_event_name: 'PreCompact', trigger });
    for (const [archive, trigger] of [
      [sqlite, 'manual'],
      [url, 'auto'],
    ] as const) {
      const hook = await runCliAsync(['agent-hook', 'pre-compact', '--agent', 'claude-code'], {
        cwd: m.dir,
        env: { ...m.env, DEVS_CTX_ARCHIVE: archive.startsWith('postgres') ? '' : archive, DEVS_CTX_ARCHIVE_URL: archive.startsWith('postgres') ? archive : '' },
        input: hookInput(trigger),
      });
      assert.match(hook.stderr, /archived \d+ turn/, hook.stderr);
    }
    const copy = await runCliAsync(['archive', 'copy', '--from', sqlite, '--to', url, '--json'], { cwd: m.dir, env: m.env });
    assert.equal(copy.exitCode, 0, copy.stdout + copy.stderr);
    assert.equal((JSON.parse(copy.stdout) as { alreadyThere: number }).alreadyThere, 1);
  });
});

/**
 * TLS in front of the PostgreSQL engine, as a server with a self-signed certificate (test/tls,
 * CN devs-ctx-test-server) does it: it answers the client's SSLRequest with 'S', then speaks TLS
 * and passes the plain protocol on to `port`.
 */
async function tlsFront(t: T, port: number): Promise<number> {
  const key = readFileSync(join(repoRoot, 'test', 'tls', 'server.key'));
  const cert = readFileSync(join(repoRoot, 'test', 'tls', 'server.crt'));
  const sockets: Socket[] = [];
  const front = createServer((raw) => {
    sockets.push(raw);
    raw.on('error', () => {});
    raw.once('data', (first: Buffer) => {
      // SSLRequest: length 8, code 80877103.
      if (first.length !== 8 || first.readInt32BE(4) !== 80877103) return void raw.destroy();
      raw.write('S');
      const secure = new TLSSocket(raw, { isServer: true, key, cert });
      const backend = connect(port, '127.0.0.1');
      sockets.push(secure, backend);
      secure.on('error', () => backend.destroy());
      backend.on('error', () => secure.destroy());
      secure.pipe(backend).pipe(secure);
    });
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    front.close();
  });
  return (front.address() as { port: number }).port;
}

test('sslmode as libpq reads it: require encrypts without checking the certificate, verify-ca checks the chain not the name, verify-full both', async (t) => {
  const { url, port } = await startPostgres(t);
  const m = machine(t, 'tls');
  session(m.dir);
  assert.equal(
    (await runCliAsync(['prune', 's.jsonl', '--in-place', '--force', ...WINDOW], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: url } })).exitCode,
    0,
  );
  const tls = url.replace(`:${port}/`, `:${await tlsFront(t, port)}/`).replace('?sslmode=disable', '');
  const ca = join(repoRoot, 'test', 'tls', 'server.crt');
  const recall = (query: string) => runCliAsync(['recall', 'test'], { cwd: m.dir, env: { ...m.env, DEVS_CTX_ARCHIVE_URL: `${tls}?${query}` } });
  for (const query of ['sslmode=require', 'sslmode=no-verify', `sslmode=verify-ca&sslrootcert=${ca}`, `sslmode=require&sslrootcert=${ca}`]) {
    const result = await recall(query);
    assert.equal(result.exitCode, 0, `${query}: ${result.stderr}`);
    assert.doesNotMatch(result.stderr, /SECURITY WARNING/, query);
  }
  for (const query of ['sslmode=verify-full', `sslmode=verify-full&sslrootcert=${ca}`, 'sslmode=verify-ca']) {
    const result = await recall(query);
    assert.equal(result.exitCode, 3, `${query}: ${result.stderr}`);
  }
});

test('mcp with a PostgreSQL archive: a client that closes standard input right after its last request still gets every answer', async (t) => {
  const { url } = await startPostgres(t);
  const m = machine(t, 'mcp-eof');
  session(m.dir);
  const env = { ...m.env, DEVS_CTX_ARCHIVE_URL: url };
  assert.equal((await runCliAsync(['prune', 's.jsonl', '--in-place', '--force', ...WINDOW], { cwd: m.dir, env })).exitCode, 0);
  const requests = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'eof', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'recall', arguments: { query: 'test' } } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'get_turn', arguments: { turnId: 'o1' } } },
  ];
  const result = await runCliAsync(['mcp'], { cwd: m.dir, env, input: `${requests.map((r) => JSON.stringify(r)).join('\n')}\n` });
  assert.equal(result.exitCode, 0, result.stderr);
  const answered = result.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => (JSON.parse(l) as { id?: number }).id);
  assert.deepEqual(answered.sort(), [1, 2, 3], result.stdout);
});
