/**
 * The bench's peer (bench/peer.ts): ccusage is installed by real npm and run as a real process.
 * Installing it needs the registry, which tests never reach: the install's failures are npm's own
 * (offline, a refused registry), and the runs are of small stand-in programs, each behaving as a
 * broken ccusage might (the bench runs the real one).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Interrupted } from '../bench/measure.js';
import { ccusageRun, installCcusage, npmFailure, sessionsProblem } from '../bench/peer.js';
import { tempFolders } from './helpers/temp.js';

const temp = tempFolders('devs-ctx-peer-');

/** No proxy, whatever the environment says: the registry below is the one npm must try. */
const NO_PROXY = { HTTP_PROXY: '', HTTPS_PROXY: '', http_proxy: '', https_proxy: '', npm_config_proxy: '', npm_config_https_proxy: '' };

test("an install npm cannot make says why, not where its log is, and leaves npm's logs", () => {
  // npm's cache (and its logs in it) as a user has them: an earlier command's log must stay.
  const cache = temp.fresh('npm-cache');
  const earlierLog = join(cache, '_logs', '2026-11-01T10_00_00_000Z-debug-0.log');
  mkdirSync(join(cache, '_logs'));
  writeFileSync(earlierLog, 'an earlier npm command\n');
  const offline = installCcusage(temp.fresh('offline'), { ...NO_PROXY, npm_config_offline: 'true', npm_config_cache: cache });
  assert.ok('skip' in offline);
  assert.match(offline.skip, /^ccusage@20\.0\.24 did not install \(ENOTCACHED\b/);
  assert.ok(existsSync(earlierLog), "npm's earlier log is still there");
  const refused = installCcusage(temp.fresh('refused'), {
    ...NO_PROXY,
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_fetch_retries: '0',
    npm_config_cache: temp.fresh('npm-cache'),
  });
  assert.ok('skip' in refused);
  assert.match(refused.skip, /^ccusage@20\.0\.24 did not install \(.*127\.0\.0\.1:9/);
  for (const said of [offline.skip, refused.skip]) assert.doesNotMatch(said, /complete log|\(\)/);
});

test("npm's failure in one line: a time-out, an empty standard error, a code alone", () => {
  const timedOut = Object.assign(new Error('spawnSync npm ETIMEDOUT'), { code: 'ETIMEDOUT' });
  assert.equal(npmFailure({ error: timedOut, status: null, signal: 'SIGTERM', stderr: '' }, 180_000), 'npm did not finish within 180 s');
  assert.equal(npmFailure({ status: 1, signal: null, stderr: '' }, 1000), 'npm exited 1');
  assert.equal(npmFailure({ status: 1, signal: null, stderr: 'npm error code E404\n' }, 1000), 'E404');
  assert.equal(npmFailure({ status: 1, signal: null, stderr: 'npm ERR! code E404\nnpm ERR! 404 Not Found - GET x\n' }, 1000), 'E404: 404 Not Found - GET x');
});

test("ccusage's output stands beside devs-ctx's only when it lists the folder's sessions", () => {
  assert.equal(sessionsProblem(JSON.stringify({ sessions: [{}, {}, {}], totals: {} }), 3), undefined);
  assert.equal(sessionsProblem(JSON.stringify({ sessions: [], totals: {} }), 3), "it reported 0 sessions, not the folder's 3");
  // `ccusage session` (every agent's history) lists them under another name.
  assert.equal(sessionsProblem(JSON.stringify({ session: [{}, {}, {}] }), 3), 'its output lists no sessions (no "sessions" array)');
  assert.equal(sessionsProblem('WARN: no data directory\n', 3), 'its output is not JSON (WARN: no data directory)');
  assert.equal(sessionsProblem('', 3), 'its output is not JSON (nothing)');
});

/** A stand-in for ccusage's cli.js: `body` runs with `seen` (a file it may write what it was given to). */
function standIn(name: string, body: string): { bin: string; home: string; seen: string } {
  const dir = temp.fresh(name);
  const bin = join(dir, 'cli.js');
  const seen = join(dir, 'seen.json');
  writeFileSync(bin, `const seen = ${JSON.stringify(seen)};\nconst fs = require('node:fs');\n${body}\n`);
  return { bin, home: temp.fresh(`${name}-home`), seen };
}

test('ccusage runs on the Claude Code sessions of the given folder, with an empty home', () => {
  const peer = standIn(
    'good',
    `fs.writeFileSync(seen, JSON.stringify({ argv: process.argv.slice(2), env: process.env }));
     process.stdout.write(JSON.stringify({ sessions: [1, 2], totals: {} }));`,
  );
  const run = ccusageRun(peer, '/claude/config', 2);
  assert.ok(!('skip' in run), JSON.stringify(run));
  assert.ok(run.ms > 0);
  const { argv, env } = JSON.parse(readFileSync(peer.seen, 'utf8')) as { argv: string[]; env: Record<string, string> };
  assert.deepEqual(argv, ['claude', 'session', '--json', '--offline']);
  assert.equal(env['CLAUDE_CONFIG_DIR'], '/claude/config');
  assert.equal(env['HOME'], peer.home);
  assert.equal(env['USERPROFILE'], peer.home);
  for (const xdg of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_CACHE_HOME']) assert.ok(env[xdg]?.startsWith(peer.home), xdg);
});

test('a ccusage that fails, reads nothing or never ends is skipped with the reason', () => {
  const failing = standIn('failing', "process.stderr.write('Error: native crash in session loader\\n'); process.exit(1);");
  const failed = ccusageRun(failing, '/claude/config', 2);
  assert.ok('skip' in failed);
  assert.match(failed.skip, /^ccusage claude session --json --offline exited 1 \(Error: native crash in session loader\)$/);

  const empty = standIn('empty', 'process.stdout.write(JSON.stringify({ sessions: [], totals: {} }));');
  assert.deepEqual(ccusageRun(empty, '/claude/config', 2), { skip: "ccusage claude session --json --offline: it reported 0 sessions, not the folder's 2" });

  // One that never ends, and one that does not even end at SIGTERM: each killed, not left running
  // behind the bench. (Its id is known only if it started within the limit: on a starved machine
  // it may be killed before.)
  for (const [name, body] of [
    ['hanging', 'setInterval(() => {}, 1000);'],
    ['stubborn', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);"],
  ] as const) {
    const peer = standIn(name, `fs.writeFileSync(seen, String(process.pid)); ${body}`);
    const hung = ccusageRun(peer, '/claude/config', 2, 1000);
    assert.ok('skip' in hung);
    assert.match(hung.skip, /^ccusage claude session --json --offline did not finish within 1 s/);
    if (existsSync(peer.seen)) assert.throws(() => process.kill(Number(readFileSync(peer.seen, 'utf8')), 0), { code: 'ESRCH' }, name);
  }

  // A ccusage that crashes (killed, or exiting 124 as timeout(1) would) before the limit did not time out.
  const killed = standIn('killed', "process.kill(process.pid, 'SIGKILL');");
  assert.doesNotMatch((ccusageRun(killed, '/claude/config', 2, 30_000) as { skip: string }).skip, /did not finish/);
  const exits124 = standIn('exits124', 'process.exit(124);');
  assert.match((ccusageRun(exits124, '/claude/config', 2, 30_000) as { skip: string }).skip, /exited 124/);
});

test("what ccusage says is its own, not /usr/bin/time's report, and only a failure can be Ctrl-C", () => {
  // Its last line unfinished: /usr/bin/time's report starts on the same line.
  const unfinished = standIn('unfinished', "process.stderr.write('boom: config unreadable'); process.exitCode = 1;");
  assert.deepEqual(ccusageRun(unfinished, '/claude/config', 2), { skip: 'ccusage claude session --json --offline exited 1 (boom: config unreadable)' });
  // A run that succeeds is measured, whatever its standard error says.
  const chatty = standIn(
    'chatty',
    "process.stderr.write('Command terminated by signal 2\\n'); process.stdout.write(JSON.stringify({ sessions: [1, 2], totals: {} }));",
  );
  const run = ccusageRun(chatty, '/claude/config', 2);
  assert.ok(!('skip' in run), JSON.stringify(run));
});

test('Ctrl-C that ends ccusage ends the bench', () => {
  for (const [name, body] of [
    ['sigint', "process.kill(process.pid, 'SIGINT');"],
    ['exit130', 'process.exit(130);'],
  ] as const) {
    assert.throws(() => ccusageRun(standIn(name, body), '/claude/config', 2), Interrupted, name);
  }
});
