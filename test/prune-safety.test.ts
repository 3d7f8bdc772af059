import assert from 'node:assert/strict';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { assertUnchangedOrAppended, replaceKeepingAppends } from '../src/io/atomic.js';
import { spawnChild } from './helpers/child.js';
import { cliEnv, runCli } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';
import { canRunAsAnotherUser, runAs } from './helpers/other-user.js';
import { loadSqlite } from '../src/archive/sqlite.js';

/** What a prune must never do to the user's files, found by a review of the first version. */

const OVER_SOFT = join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl');
const WINDOW = ['--window', '4000'];

function workspace(prefix: string): { dir: string; archive: string; env: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), `devs-ctx-${prefix}-`));
  const archive = join(mkdtempSync(join(tmpdir(), `devs-ctx-${prefix}-archive-`)), 'archive.sqlite');
  return { dir, archive, env: { DEVS_CTX_ARCHIVE: archive } };
}

describe('prune safety', () => {
  test('--in-place on a symlink prunes the real file and leaves the link a link', () => {
    const { dir, env } = workspace('symlink');
    const real = join(dir, 'real.jsonl');
    copyFileSync(OVER_SOFT, real);
    symlinkSync(real, join(dir, 'link.jsonl'));
    const result = runCli(['prune', 'link.jsonl', '--in-place', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.ok(lstatSync(join(dir, 'link.jsonl')).isSymbolicLink());
    assert.ok(!readFileSync(real).equals(readFileSync(OVER_SOFT)), 'the real file was pruned');
    assert.match(readFileSync(real, 'utf8'), /\[Context Summary\]/);
  });

  test('-o naming a folder is exit 3 before anything is archived', () => {
    const { dir, archive, env } = workspace('outdir');
    copyFileSync(OVER_SOFT, join(dir, 's.jsonl'));
    mkdirSync(join(dir, 'outdir'));
    const result = runCli(['prune', 's.jsonl', '-o', 'outdir', ...WINDOW], { cwd: dir, env });
    assert.equal(result.exitCode, 3, result.stderr);
    assert.match(result.stderr, /outdir: cannot write: it is a folder/);
    assert.equal(existsSync(archive), false);
  });

  test('an archive that cannot be opened is exit 3 naming it, for prune, restore and recall', () => {
    const { dir } = workspace('badarchive');
    copyFileSync(OVER_SOFT, join(dir, 's.jsonl'));
    writeFileSync(join(dir, 'not-sqlite.sqlite'), 'this is not a database, just text that is long enough to look like a header\n'.repeat(20));
    writeFileSync(join(dir, 'a-file'), 'x');
    for (const archive of ['not-sqlite.sqlite', 'a-file/archive.sqlite']) {
      const env = { DEVS_CTX_ARCHIVE: join(dir, archive) };
      const prune = runCli(['prune', 's.jsonl', '-o', 'out.jsonl', ...WINDOW], { cwd: dir, env });
      assert.equal(prune.exitCode, 3, `${archive}: ${prune.stderr}`);
      assert.match(prune.stderr, /archive/);
      assert.equal(existsSync(join(dir, 'out.jsonl')), false, 'nothing written when the archive fails');
    }
    const env = { DEVS_CTX_ARCHIVE: join(dir, 'not-sqlite.sqlite') };
    assert.equal(runCli(['restore', 's.jsonl'], { cwd: dir, env }).exitCode, 3);
    assert.equal(runCli(['recall', 'word'], { cwd: dir, env }).exitCode, 3);
  });

  test('lines an agent appends during --in-place are all kept, and the result restores to the original plus them', async () => {
    const { dir, env } = workspace('appender');
    // A transcript big enough that the prune takes a while: the fixture's middle repeated.
    const lines = readFileSync(OVER_SOFT, 'utf8').trimEnd().split('\n');
    const head = lines.slice(0, 2);
    const middle = lines.slice(2, -5);
    const tail = lines.slice(-5);
    const body: string[] = [];
    for (let k = 0; k < 300; k++)
      for (const line of middle) body.push(line.replace(/"id":"([^"]+)"/, `"id":"$1-${k}"`).replace(/"callId":"([^"]+)"/, `"callId":"$1-${k}"`));
    const path = join(dir, 's.jsonl');
    writeFileSync(path, `${[...head, ...body, ...tail].join('\n')}\n`);
    const original = readFileSync(path);

    // Both exits are promised at spawn time: whichever child ends first, neither end is missed.
    const appender = spawnChild(process.execPath, [
      '-e',
      `const fs=require('fs');let i=0;const t=setInterval(()=>{fs.appendFileSync(${JSON.stringify(path)},JSON.stringify({id:'ap'+i,role:'user',type:'message',content:'appended '+i})+'\\n');if(++i>=400)clearInterval(t)},2);`,
    ]);
    const prune = spawnChild(process.execPath, [join(repoRoot, 'bin/devs-ctx.js'), 'prune', path, '--in-place', '--window', '40000', '--force', '--json'], {
      env: cliEnv(env),
    });
    const [{ code, stderr, stdout }, appenderExit] = await Promise.all([prune.exited, appender.exited]);
    assert.equal(appenderExit.code, 0, appenderExit.stderr);
    assert.ok(code === 0 || code === 7, stderr);
    const text = readFileSync(path, 'utf8');
    const appended = text.split('\n').filter((l) => l.includes('"content":"appended '));
    // Lines appended before the prune read the file are part of the transcript it prunes (it may
    // drop them, and says so); every line appended after is kept, once, in order.
    const report = code === 0 ? (JSON.parse(stdout) as { actions: { kind: string; turns: { id: string }[] }[] }) : undefined;
    const dropped = new Set(report?.actions.filter((a) => a.kind === 'drop').flatMap((a) => a.turns.map((t) => t.id)) ?? []);
    const expected = Array.from({ length: 400 }, (_, i) => `ap${i}`).filter((id) => !dropped.has(id));
    assert.deepEqual(
      appended.map((l) => (JSON.parse(l) as { id: string }).id),
      expected,
      'every appended line the prune did not drop is in the file, once, in order',
    );
    if (code === 0) {
      const restored = runCli(['restore', path, '-o', join(dir, 'r.jsonl')], { env });
      assert.equal(restored.exitCode, 0, restored.stderr);
      const r = readFileSync(join(dir, 'r.jsonl'));
      assert.ok(r.subarray(0, original.length).equals(original), 'the original bytes come back first');
      assert.equal(r.subarray(original.length).toString().split('\n').filter(Boolean).length, 400);
    }
  });

  test('replaceKeepingAppends refuses a file changed other than by appending, and writes nothing', () => {
    const { dir } = workspace('changed');
    const path = join(dir, 'f.jsonl');
    writeFileSync(path, 'a\nb\n');
    const original = readFileSync(path);
    writeFileSync(path, 'a\nX\n');
    assert.throws(() => assertUnchangedOrAppended(path, original), { exitCode: 7 });
    assert.throws(() => replaceKeepingAppends(path, original, Buffer.from('new\n')), { exitCode: 7 });
    assert.equal(readFileSync(path, 'utf8'), 'a\nX\n');
    writeFileSync(path, 'a\nb\n');
    appendFileSync(path, 'c\n');
    replaceKeepingAppends(path, original, Buffer.from('new\n'));
    assert.equal(readFileSync(path, 'utf8'), 'new\nc\n');
  });
});

describe('Claude Code tool-result lines that hold more than one tool output', () => {
  test('are marked unmaskable (only dropped whole); a line with one tool output alone stays maskable', async () => {
    const { claudeCodeAdapter } = await import('../src/formats/claude-code/read.js');
    const { parseDocument } = await import('../src/io/jsonl.js');
    const lines = readFileSync(join(repoRoot, 'fixtures/claude-code/multi-block-response.jsonl'), 'utf8').trimEnd().split('\n');
    // Add a typed prompt beside the tool_result, as Claude Code writes when the user types while a tool runs.
    const withText = lines.map((line) => {
      const value = JSON.parse(line) as { message?: { content?: unknown } };
      const content = value.message?.content;
      if (Array.isArray(content) && content.some((b: { type?: string }) => b.type === 'tool_result')) {
        content.push({ type: 'text', text: 'also check the docs folder' });
      }
      return JSON.stringify(value);
    });
    const doc = parseDocument(Buffer.from(`${withText.join('\n')}\n`), { path: 'x.jsonl', keepRaw: true });
    const transcript = claudeCodeAdapter.read(doc);
    const results = transcript.entries.filter((e) => e.turn.type === 'tool_result');
    assert.ok(results.length > 0);
    for (const e of results) assert.equal(e.maskable, false, e.turn.content);
    const plain = claudeCodeAdapter.read(parseDocument(Buffer.from(`${lines.join('\n')}\n`), { path: 'y.jsonl', keepRaw: true }));
    assert.ok(
      plain.entries.filter((e) => e.turn.type === 'tool_result').every((e) => e.maskable !== false),
      'a plain result line can be masked',
    );
  });
});

describe('glued lines', () => {
  test('a pinned value glued to a dropped one keeps its exact text (big numbers, 1.50, spacing)', async () => {
    const { parseDocument } = await import('../src/io/jsonl.js');
    const { devsAdapter } = await import('../src/formats/devs/read.js');
    const { devsWriter } = await import('../src/formats/devs/write.js');
    const { writeTranscript } = await import('../src/formats/write.js');
    const { editOf } = await import('./helpers/edits.js');
    const pinned = '{"id":"spec1","role":"user","type":"spec","content":"SPEC","seq":12345678901234567890, "x" : 1.50}';
    const lines = [
      '{"id":"s","role":"system","type":"system","content":"sys"}',
      '{"id":"p","role":"user","type":"prd","content":"prd"}',
      `${pinned}{"id":"m1","role":"assistant","type":"message","content":"drop me"}`,
      '{"id":"m2","role":"assistant","type":"message","content":"keep"}',
    ];
    const doc = parseDocument(Buffer.from(`${lines.join('\n')}\n`), { path: 'g.jsonl', keepRaw: true });
    const transcript = devsAdapter.read(doc);
    const dropIndex = transcript.entries.findIndex((e) => e.turn.id === 'm1');
    const written = writeTranscript(doc, transcript, editOf({ dropped: [dropIndex], summaryText: '[Context Summary]\nx' }), devsWriter);
    assert.ok(written.bytes.toString().split('\n').includes(pinned), written.bytes.toString());
  });
});

describe('read-back verification', () => {
  test('a pinned turn whose other fields change is caught, not only one whose text changes', async () => {
    const { verifyReadBack } = await import('../src/core/prune/verify.js');
    const { editOf } = await import('./helpers/edits.js');
    const entry = (turn: Record<string, unknown>) => ({
      turn: { role: 'user', type: 'message', content: '', ...turn } as never,
      source: { records: [0] },
      blobs: [],
    });
    const before = [entry({ id: 's', type: 'spec', content: 'SPEC', seq: 1 }), entry({ id: 'm', content: 'm' })];
    const edit = editOf({ masked: [[1, 'masked']], summaryText: '[Context Summary]\nx' });
    assert.deepEqual(verifyReadBack(before, edit, [before[0]!, entry({ id: 'm', content: 'masked' })], [0]), []);
    const altered = [entry({ id: 's', type: 'spec', content: 'SPEC', seq: 2 }), entry({ id: 'm', content: 'masked' })];
    assert.deepEqual(verifyReadBack(before, edit, altered, [0]), ['pinned turn s is missing or altered']);
    // Its text on another turn (one with other fields) does not stand in for it; no turn with its text is no turn at all.
    const moved = [entry({ id: 's', type: 'message', content: 'SPEC', seq: 1 }), entry({ id: 'm', content: 'masked' })];
    assert.deepEqual(verifyReadBack(before, edit, moved, [0]), ['pinned turn s is missing or altered']);
    const gone = [entry({ id: 's', type: 'spec', content: 'SPEC!', seq: 1 }), entry({ id: 'm', content: 'masked' })];
    assert.ok(verifyReadBack(before, edit, gone, [0]).includes('pinned turn s is missing or altered'));
  });
});

test('--in-place on a transcript its owner made read-only (0444): exit 3, the file and the archive as they were (prune, refresh, restore)', (t) => {
  if (!canRunAsAnotherUser(t)) return;
  const uid = 65534;
  const home = mkdtempSync(join(tmpdir(), 'devs-ctx-readonly-'));
  chmodSync(home, 0o777);
  const path = join(home, 's.jsonl');
  copyFileSync(join(repoRoot, 'fixtures', 'devs', 'over-soft-limit.jsonl'), path);
  const env = { DEVS_CTX_ARCHIVE: join(home, 'a.sqlite') };
  // A pruned copy to restore from, archived as that user.
  copyFileSync(path, join(home, 'p.jsonl'));
  chownSync(join(home, 'p.jsonl'), uid, uid);
  assert.equal(runAs(uid, home, ['prune', 'p.jsonl', '--in-place', '--force', '--window', '4000'], env).status, 0);
  for (const [file, args] of [
    ['s.jsonl', ['prune', 's.jsonl', '--in-place', '--force', '--window', '4000']],
    ['s.jsonl', ['refresh', 's.jsonl', '--in-place', '--force']],
    ['p.jsonl', ['restore', 'p.jsonl', '--in-place']],
  ] as const) {
    const target = join(home, file);
    chownSync(target, uid, uid);
    chmodSync(target, 0o444);
    const before = readFileSync(target);
    const events = archiveEvents(env.DEVS_CTX_ARCHIVE);
    const result = runAs(uid, home, [...args], env);
    assert.equal(result.status, 3, `${args[0]}: ${result.stderr}`);
    assert.match(result.stderr, /permission denied|read-only|may not write/i, args[0]);
    assert.ok(readFileSync(target).equals(before), `${args[0]}: the file is as it was`);
    assert.equal(statSync(target).mode & 0o777, 0o444);
    assert.equal(archiveEvents(env.DEVS_CTX_ARCHIVE), events, `${args[0]}: the archive is as it was`);
    chmodSync(target, 0o644);
  }
});

/** How many prune events the SQLite archive holds. */
function archiveEvents(path: string): number {
  const db = new (loadSqlite())(path, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM prune_events').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

test('a line the agent appends to the new file by name right after the rename is kept, after the late bytes of the old file (nothing overwritten)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-race-'));
  const path = join(dir, 's.jsonl');
  const original = Buffer.from('{"a":1}\n{"a":2}\n{"a":3}\n');
  writeFileSync(path, original);
  const realRename = fs.renameSync;
  // The moment of the rename, as an agent appending meanwhile makes it: a line reaches the old file
  // just before it, another reaches the new file by name just after it.
  fs.renameSync = ((from: string, to: string) => {
    appendFileSync(path, '{"late":"old file, before the rename"}\n');
    realRename(from, to);
    fs.appendFileSync(to, '{"new":"new file, after the rename"}\n');
  }) as typeof fs.renameSync;
  syncBuiltinESMExports();
  try {
    replaceKeepingAppends(path, original, Buffer.from('{"pruned":true}\n'));
  } finally {
    fs.renameSync = realRename;
    syncBuiltinESMExports();
  }
  const lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  assert.deepEqual(lines.map((l) => Object.keys(JSON.parse(l) as object)[0]).sort(), ['late', 'new', 'pruned'], lines.join('\n'));
});
