import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { ArchiveSchemaError, ArchiveUnavailableError, ArchiveWriteError, TranscriptChangedError, UnknownPruneEventError } from '../src/archive/errors.js';
import { EXCERPT_AFTER, EXCERPT_BEFORE } from '../src/archive/excerpt.js';
import { ftsQueries } from '../src/archive/fts-query.js';
import { buildExcerpt, termPattern } from '../src/archive/excerpt.js';
import { computeLayout, recordBytes, restoreBytes, sha256 } from '../src/archive/layout.js';
import { defaultArchivePath } from '../src/archive/paths.js';
import { MIGRATIONS, NEW_ARCHIVE_PAGE_SIZE, prepareDatabase, SCHEMA_VERSION, schemaVersion } from '../src/archive/schema.js';
import { loadSqlite } from '../src/archive/sqlite.js';
import { ArchiveStore } from '../src/archive/store.js';
import type { ArchivedTurnInput, PruneEventInput } from '../src/archive/records.js';
import type { TranscriptEdit } from '../src/core/prune/edit.js';
import { readTranscript } from '../src/formats/index.js';
import type { OutputRecord, Transcript } from '../src/formats/types.js';
import { renderOutput, writeTranscript } from '../src/formats/write.js';
import { writerFor } from '../src/formats/index.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { archivedTurn as turn, pruneEvent as event, recallEvents } from './helpers/archive-events.js';
import { spawnChild } from './helpers/child.js';
import { dropMiddleEdit } from './helpers/edits.js';
import { realdataFiles, realdataName, realdataSkip, repoRoot } from './helpers/realdata.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

// ---------------------------------------------------------------------------------------------
// Helpers

/** A fresh directory for one test, removed when it ends. */
function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-archive-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function openTemp(t: { after(fn: () => void): void }): ArchiveStore {
  const store = ArchiveStore.open(join(tempDir(t), 'nested', 'dir', 'archive.sqlite'));
  t.after(() => store.close());
  return store;
}

/** A raw connection to an archive file, to look at what is really stored. */
function rawCount(path: string, sql: string, ...params: unknown[]): number {
  const Database = loadSqlite();
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(sql)
      .pluck()
      .get(...params) as number;
  } finally {
    db.close();
  }
}

/** The archived turns of an edit, as a prune would archive them. */
function turnsOf(transcript: Transcript, edit: TranscriptEdit): ArchivedTurnInput[] {
  const turns: ArchivedTurnInput[] = [];
  for (const [i, entry] of transcript.entries.entries()) {
    const action = edit.dropped.has(i) ? 'dropped' : edit.masked.has(i) ? 'masked' : undefined;
    if (!action) continue;
    turns.push({
      entryIndex: i,
      turnId: entry.turn.id,
      role: entry.turn.role,
      type: entry.turn.type,
      action,
      tokens: entry.turn.content.length,
      content: entry.turn.content,
      ...(entry.turn.timestamp !== undefined ? { timestamp: entry.turn.timestamp } : {}),
      records: entry.source.records,
    });
  }
  return turns;
}

/** Prunes a document with its format's real writer, like `devs-ctx prune` would, masking kept tool results too. */
function realPrune(id: string, doc: ParsedDocument, options: { keepHead?: number; keepTail?: number } = {}): { event: PruneEventInput; output: Buffer } {
  const transcript = readTranscript(doc);
  const keepHead = options.keepHead ?? 2;
  const keepTail = options.keepTail ?? 5;
  const plain = dropMiddleEdit(transcript, { keepHead, keepTail });
  const mask = transcript.entries.flatMap((e, i) => (e.turn.type === 'tool_result' && !plain.dropped.has(i) ? [i] : [])).slice(-2);
  const edit = dropMiddleEdit(transcript, { keepHead, keepTail, mask });
  const written = writeTranscript(doc, transcript, edit, writerFor(transcript.format));
  const turns = turnsOf(transcript, edit);
  return {
    event: {
      ...event(id, doc, written.records, { format: transcript.format, sourcePath: doc.path, turns }),
      output: { records: written.records, bytes: written.bytes },
      removedTurnCount: edit.dropped.size,
      maskedTurnCount: edit.masked.size,
      ...(edit.summary ? { summaryText: edit.summary.text } : {}),
    },
    output: written.bytes,
  };
}

const APPENDED = Buffer.from('{"id":"after","role":"user","type":"message","content":"written after the prune"}\n');

// ---------------------------------------------------------------------------------------------
// Schema and opening

test('a prune is on disk when recordPrune returns (and gone when forgetPrune returns): checkpointed into the archive file, or, while a reader holds an older state, in its synced WAL', (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'archive.sqlite');
  const store = ArchiveStore.open(path);
  const Database = loadSqlite();
  /** Whether a copy of the archive file alone (as a backup takes it) holds the event. */
  const fileHolds = (id: string): boolean => {
    const copy = join(dir, `copy-${id}.sqlite`);
    copyFileSync(path, copy);
    const db = new Database(copy);
    try {
      return db.prepare('SELECT count(*) FROM prune_events WHERE id = ?').pluck().get(id) === 1;
    } finally {
      db.close();
    }
  };
  const input = inlineDoc({ a: 1 }, { b: 2 });
  store.recordPrune(event('e1', input, [{ from: 0 }], { turns: [turn(1, 'copied into the file')] }));
  assert.equal(fileHolds('e1'), true, 'checkpointed into the archive file before recordPrune returned');
  store.recordPrune(event('gone', input, [{ from: 0 }], { turns: [turn(1, 'taken out again')] }));
  assert.equal(store.forgetPrune('gone'), true);
  assert.equal(fileHolds('gone'), false, 'taking a prune out is on disk too when forgetPrune returns');
  // A reader in a transaction reads the file as it was: the commit cannot be copied in under it.
  const reader = new Database(path, { readonly: true });
  reader.prepare('BEGIN').run();
  reader.prepare('SELECT count(*) FROM prune_events').get();
  store.recordPrune(event('e2', input, [{ from: 0 }], { turns: [turn(1, 'kept in the WAL')] }));
  assert.equal(fileHolds('e2'), false, 'not copied in while the reader reads (its WAL was synced instead)');
  assert.equal(store.getEvent('e2')?.id, 'e2');
  reader.prepare('COMMIT').run();
  reader.close();
  store.close();
  assert.equal(fileHolds('e2'), true, 'copied in once the archive is closed');
});

test('an archive opened through a symlink syncs the WAL beside its target; a WAL that cannot be synced fails the prune and says what the archive still lists', (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'real'));
  mkdirSync(join(dir, 'link'));
  const real = join(dir, 'real', 'archive.sqlite');
  ArchiveStore.open(real).close();
  const link = join(dir, 'link', 'archive.sqlite');
  symlinkSync(join('..', 'real', 'archive.sqlite'), link);
  const store = ArchiveStore.open(link);
  const Database = loadSqlite();
  const reader = new Database(real, { readonly: true });
  t.after(() => reader.close());
  reader.prepare('BEGIN').run();
  reader.prepare('SELECT count(*) FROM prune_events').get();
  const input = inlineDoc({ a: 1 }, { b: 2 });
  // The reader keeps the commit out of the file: the WAL is synced, the one beside the target.
  store.recordPrune(event('e1', input, [{ from: 0 }], { turns: [turn(1, 'through the link')] }));
  assert.equal(store.getEvent('e1')?.id, 'e1');
  // The archive will not let go of one prune (for the last case below).
  const writer = new Database(real);
  writer.exec("CREATE TRIGGER keep_e3 BEFORE DELETE ON prune_events WHEN old.id = 'e3' BEGIN SELECT RAISE(ABORT, 'kept by a test'); END");
  writer.close();
  // A WAL that is not where it should be cannot be synced: the prune is taken out again and not
  // archived (its removal's sync fails too, but the removal stands).
  renameSync(`${real}-wal`, `${real}-wal.moved`);
  assert.throws(
    () => store.recordPrune(event('e2', input, [{ from: 0 }], { turns: [turn(1, 'not synced')] })),
    (error: unknown) =>
      error instanceof ArchiveWriteError &&
      error.stillListed === undefined &&
      /nothing was archived, the transcript was not written/.test(error.message) &&
      /ENOENT/.test(error.message),
  );
  assert.equal(store.getEvent('e2'), undefined, 'taken out again');
  // When it cannot be taken out either, the error says the archive may still list it.
  assert.throws(
    () => store.recordPrune(event('e3', input, [{ from: 0 }], { turns: [turn(1, 'stays listed')] })),
    (error: unknown) =>
      error instanceof ArchiveWriteError &&
      error.stillListed === 'e3' &&
      /transcript was not written, but the archive may still list prune e3/.test(error.message),
  );
  assert.equal(store.getEvent('e3')?.id, 'e3');
  // What overwrites nothing (an agent hook's window) keeps a commit it cannot sync.
  store.recordPrune(event('window', input, [{ from: 0 }], { turns: [turn(1, 'a compacted window')] }), { keepUnsynced: true });
  assert.equal(store.getEvent('window')?.id, 'window');
  // After a transcript write failed, taking its (synced) prune out must be on disk too: when that
  // cannot be synced, forgetPrune says so (its caller warns that the archive may still list it).
  assert.throws(() => store.forgetPrune('e1'), /ENOENT/);
  assert.equal(store.getEvent('e1'), undefined, 'taken out, only not synced');
  renameSync(`${real}-wal.moved`, `${real}-wal`);
  store.close();
});

test('open creates the directory and a private file, migrates an empty archive, and reopening is idempotent', (t) => {
  const path = join(tempDir(t), 'a', 'b', 'archive.sqlite');
  const store = ArchiveStore.open(path);
  const input = inlineDoc({ a: 1 }, { b: 2 });
  store.recordPrune(event('e1', input, [{ from: 0 }], { turns: [turn(1, 'kept across reopen')] }));
  store.close();
  assert.equal(statSync(path).mode & 0o777, 0o600, 'the archive holds transcript text: owner only');

  const Database = loadSqlite();
  const db = new Database(path);
  assert.equal(schemaVersion(db), SCHEMA_VERSION);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table') ORDER BY name").pluck().all() as string[];
  for (const name of ['prune_events', 'archived_records', 'archived_turns', 'archived_turns_fts', 'memory_entries', 'memory_entries_fts']) {
    assert.ok(tables.includes(name), `table ${name} exists`);
  }
  db.close();

  for (let i = 0; i < 2; i++) {
    const again = ArchiveStore.open(path);
    assert.deepEqual(
      again.listEvents().map((e) => e.id),
      ['e1'],
      'data survives reopening',
    );
    assert.equal(again.recall('reopen').length, 1);
    again.close();
  }
  assert.equal(rawCount(path, 'PRAGMA user_version'), SCHEMA_VERSION);
});

test('a new archive gets large pages (a prune writes megabytes at once); an existing archive keeps its own', (t) => {
  const dir = tempDir(t);
  const pageSize = (path: string): number => rawCount(path, 'PRAGMA page_size');
  const fresh = join(dir, 'new.sqlite');
  const store = ArchiveStore.open(fresh);
  store.recordPrune(event('e1', inlineDoc({ a: 1 }, { b: 2 }), [{ from: 0 }], { turns: [turn(1, 'x'.repeat(200_000))] }));
  store.close();
  assert.equal(pageSize(fresh), NEW_ARCHIVE_PAGE_SIZE);
  assert.ok(NEW_ARCHIVE_PAGE_SIZE > 4096, "larger than SQLite's default");
  assert.equal(readFileSync(fresh).readUInt16BE(16), NEW_ARCHIVE_PAGE_SIZE, 'in the file header');

  // An archive an older devs-ctx made (SQLite's 4 KiB pages, WAL): opened, written and read as before,
  // and not converted (SQLite keeps a WAL database's page size; converting would take a VACUUM).
  const old = join(dir, 'old.sqlite');
  const Database = loadSqlite();
  const db = new Database(old);
  db.pragma('page_size = 4096');
  db.pragma('journal_mode = WAL');
  for (const migration of MIGRATIONS) db.exec(migration);
  db.pragma(`user_version = ${SCHEMA_VERSION}`);
  db.close();
  const reopened = ArchiveStore.open(old);
  reopened.recordPrune(event('e2', inlineDoc({ a: 1 }, { b: 2 }), [{ from: 0 }], { turns: [turn(1, 'kept in an old archive')] }));
  assert.equal(reopened.recall('old archive').length, 1);
  reopened.close();
  assert.equal(pageSize(old), 4096);
});

test("a prune loads the archive's SQLite module ahead (while its workers count): nothing is opened or created; a URL, or no archive, loads nothing", (t) => {
  const path = join(tempDir(t), 'not', 'yet', 'archive.sqlite');
  // In a fresh process each: whether better-sqlite3 is among the modules loaded afterwards.
  const loadedAfter = (location: string | undefined): boolean => {
    const script = [
      `const { preloadArchiveModule } = await import(${JSON.stringify(pathToFileURL(join(repoRoot, 'dist', 'cli', 'archive.js')).href)});`,
      `await preloadArchiveModule(${location === undefined ? 'undefined' : JSON.stringify(location)});`,
      "const { createRequire } = await import('node:module');",
      "process.stdout.write(String(Object.keys(createRequire(import.meta.url).cache).some((id) => id.includes('better-sqlite3'))));",
    ].join('\n');
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    return run.stdout === 'true';
  };
  assert.equal(loadedAfter(path), true);
  assert.equal(existsSync(join(path, '..', '..')), false, 'not even its folder');
  assert.equal(loadedAfter('postgres://u@127.0.0.1:1/none'), false);
  assert.equal(loadedAfter(undefined), false);
  // And the archive opens as usual afterwards.
  const store = ArchiveStore.open(path);
  assert.equal(store.listEvents().length, 0);
  store.close();
});

test('pending migrations run in order in one transaction; a failing one leaves the old version intact', (t) => {
  const path = join(tempDir(t), 'archive.sqlite');
  ArchiveStore.open(path).close();
  const Database = loadSqlite();

  const broken = [...MIGRATIONS, 'CREATE TABLE extra_a (x INTEGER);', 'CREATE TABLE extra_b (x INTEGER); SELECT * FROM no_such_table;'];
  const db = new Database(path);
  assert.throws(() => prepareDatabase(db, path, broken), /no such table/);
  assert.equal(schemaVersion(db), SCHEMA_VERSION, 'version unchanged');
  const extra = db.prepare("SELECT count(*) FROM sqlite_master WHERE name LIKE 'extra_%'").pluck().get();
  assert.equal(extra, 0, 'the first of the two new migrations was rolled back with the second');

  const good = [...MIGRATIONS, 'CREATE TABLE extra_a (x INTEGER);', 'INSERT INTO extra_a VALUES (42);'];
  prepareDatabase(db, path, good);
  assert.equal(schemaVersion(db), SCHEMA_VERSION + 2);
  assert.equal(db.prepare('SELECT x FROM extra_a').pluck().get(), 42, 'migrations ran in order');
  prepareDatabase(db, path, good); // already there: nothing runs again
  assert.equal(db.prepare('SELECT count(*) FROM extra_a').pluck().get(), 1);
  db.close();

  // This code knows SCHEMA_VERSION only: the archive is now newer than it.
  assert.throws(
    () => ArchiveStore.open(path),
    (error: unknown) => {
      assert.ok(error instanceof ArchiveSchemaError);
      assert.match(error.message, new RegExp(`schema version ${SCHEMA_VERSION + 2}, newer than this devs-ctx knows \\(${SCHEMA_VERSION}\\)`));
      assert.equal(error.exitCode, 3);
      return true;
    },
  );
});

test('an archive from a newer devs-ctx is refused, and left untouched', (t) => {
  const path = join(tempDir(t), 'archive.sqlite');
  const Database = loadSqlite();
  const db = new Database(path);
  db.pragma(`user_version = ${SCHEMA_VERSION + 5}`);
  db.close();
  assert.throws(() => ArchiveStore.open(path), ArchiveSchemaError);
  assert.equal(rawCount(path, 'PRAGMA user_version'), SCHEMA_VERSION + 5);
  assert.equal(rawCount(path, "SELECT count(*) FROM sqlite_master WHERE name = 'prune_events'"), 0, 'no table was created');
});

test('a missing native module is reported as ArchiveUnavailableError with the way out', () => {
  assert.throws(
    () => loadSqlite('better-sqlite3-that-does-not-exist'),
    (error: unknown) => {
      assert.ok(error instanceof ArchiveUnavailableError);
      assert.match(error.message, /better-sqlite3's native build is missing/);
      assert.match(error.message, /npm rebuild better-sqlite3/);
      assert.match(error.message, /--no-archive/);
      return true;
    },
  );
  assert.equal(typeof loadSqlite(), 'function', 'the real module loads');
});

test('defaultArchivePath: DEVS_CTX_ARCHIVE, then XDG_DATA_HOME (absolute only), then ~/.local/share', () => {
  const cases: Array<[Record<string, string | undefined>, string]> = [
    [{ DEVS_CTX_ARCHIVE: '/x/a.sqlite', XDG_DATA_HOME: '/data' }, '/x/a.sqlite'],
    [{ DEVS_CTX_ARCHIVE: '', XDG_DATA_HOME: '/data' }, '/data/devs-ctx/archive.sqlite'],
    [{ XDG_DATA_HOME: 'relative/data' }, '/home/u/.local/share/devs-ctx/archive.sqlite'],
    [{}, '/home/u/.local/share/devs-ctx/archive.sqlite'],
  ];
  for (const [env, expected] of cases) assert.equal(defaultArchivePath(env, '/home/u'), expected, JSON.stringify(env));
});

// ---------------------------------------------------------------------------------------------
// Recording is atomic

test('recordPrune stores nothing of an event when a row fails half-way', (t) => {
  const store = openTemp(t);
  const input = inlineDoc({ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 });
  const records = [{ from: 0 }, { text: '{"n":"changed"}', replaces: 2 }, { from: 3 }];
  // Two turns with the same entry index: the second insert violates UNIQUE (event_id, entry_index),
  // after the event row, its archived records and the first turn were written.
  const bad = event('atomic', input, records, { turns: [turn(1, 'zebrafish alpha'), turn(1, 'zebrafish beta')] });
  assert.throws(
    () => store.recordPrune(bad),
    (error: unknown) => error instanceof ArchiveWriteError && /UNIQUE/.test(error.message),
  );

  assert.equal(store.getEvent('atomic'), undefined);
  assert.equal(rawCount(store.path, 'SELECT count(*) FROM prune_events'), 0);
  assert.equal(rawCount(store.path, 'SELECT count(*) FROM archived_records'), 0);
  assert.equal(rawCount(store.path, 'SELECT count(*) FROM archived_turns'), 0);
  assert.equal(rawCount(store.path, "SELECT count(*) FROM archived_turns_fts WHERE archived_turns_fts MATCH 'zebrafish'"), 0);
  assert.deepEqual(store.recall('zebrafish'), []);

  // Nothing was left behind: the same id records cleanly once the turns are right.
  store.recordPrune({ ...bad, turns: [turn(1, 'zebrafish alpha'), turn(2, 'zebrafish beta')] });
  assert.equal(store.recall('zebrafish').length, 2);
  assert.equal(rawCount(store.path, 'SELECT count(*) FROM archived_records'), 2, 'records 1 and 2 are not in the output as they were');

  // A second event with the same id is refused without touching the first.
  assert.throws(() => store.recordPrune({ ...bad, turns: [turn(3, 'other')] }), ArchiveWriteError);
  assert.deepEqual(
    store.listTurns('atomic').map((x) => x.content),
    ['zebrafish alpha', 'zebrafish beta'],
  );
});

// ---------------------------------------------------------------------------------------------
// Layout and restore

test('layout: dropped, changed and new lines; unchanged lines come from the output, the rest from the archive', (t) => {
  const input = inlineDoc(...Array.from({ length: 8 }, (_, n) => ({ n, text: `line ${n}` })));
  const records: OutputRecord[] = [
    { from: 0 },
    { text: '{"summary":"[Context Summary] lines 1 and 4"}' },
    { from: 2 },
    { text: '{"n":3,"text":"masked"}', replaces: 3 },
    { from: 5 },
    { from: 6 },
    { from: 7 },
  ];
  const bytes = renderOutput(input, records);
  const { layout, archivedRecords } = computeLayout(input, { records, bytes });

  assert.deepEqual([...archivedRecords.keys()], [1, 3, 4]);
  for (const [i, b] of archivedRecords) assert.ok(b.equals(recordBytes(input.records[i]!)), `record ${i} archived with its terminator`);
  assert.deepEqual(
    layout.segments.map((s) => ('output' in s ? `out×${s.records}` : `arc${s.archived[0]}-${s.archived[1]}`)),
    ['out×1', 'arc1-2', 'out×1', 'arc3-5', 'out×3'],
  );
  // Every output range really holds the input records it stands for.
  const original = serializeDocument(input);
  let inputRecord = 0;
  for (const segment of layout.segments) {
    if ('output' in segment) {
      const expected = Buffer.concat(input.records.slice(inputRecord, inputRecord + segment.records).map((record) => recordBytes(record)));
      assert.ok(bytes.subarray(segment.output[0], segment.output[1]).equals(expected));
      inputRecord += segment.records;
    } else {
      inputRecord = segment.archived[1];
    }
  }

  const restored = restoreBytes({
    eventId: 'e',
    layout,
    archived: archivedRecords,
    current: bytes,
    output: { sha256: sha256(bytes), length: bytes.length },
    original: { sha256: sha256(original), length: original.length },
  });
  assert.ok(restored.equals(original));

  // Through the store, from a real file's bytes.
  const store = openTemp(t);
  store.recordPrune(event('plain', input, records));
  assert.ok(store.restore('plain', bytes).equals(original));
});

test('layout: a document read whole has its archived lines taken as views of its bytes (no copy), the same bytes as a copy', () => {
  // Whether `bytes` lie in `whole`'s own memory (small buffers share Node's pool: the same ArrayBuffer is not enough).
  const inside = (bytes: Buffer, whole: Buffer): boolean =>
    bytes.buffer === whole.buffer && bytes.byteOffset >= whole.byteOffset && bytes.byteOffset + bytes.length <= whole.byteOffset + whole.length;
  for (const input of [inlineDoc({ a: 1 }, { b: 2 }, { c: 3 }), fixtureDoc('devs', 'bom-crlf-no-final-newline.jsonl')]) {
    const whole = input.bytes as Buffer;
    const last = input.records.length - 1;
    const records: OutputRecord[] = [{ text: '{"summary":"[Context Summary] x"}' }, { from: last }];
    const { archivedRecords } = computeLayout(input, { records, bytes: renderOutput(input, records) });
    assert.ok(archivedRecords.size >= 2);
    for (const [i, archived] of archivedRecords) {
      const record = input.records[i]!;
      assert.ok(record.eol.length > 0, `record ${i} is terminated`);
      assert.ok(archived.equals(Buffer.concat([record.raw!, Buffer.from(record.eol)])), `record ${i}: its line and terminator`);
      assert.ok(inside(archived, whole), `record ${i}: a view of the document's bytes`);
      // Without the document's bytes, a copy of the same bytes.
      assert.ok(recordBytes(record).equals(archived));
      assert.ok(!inside(recordBytes(record), whole));
    }
  }
  // Bytes that are not the document's own are not taken for it: a copy.
  const doc = inlineDoc({ a: 1 });
  const elsewhere = Buffer.from('{"a":1}\n');
  assert.ok(recordBytes(doc.records[0]!, elsewhere).equals(elsewhere));
  assert.ok(!inside(recordBytes(doc.records[0]!, elsewhere), doc.bytes as Buffer));
  assert.ok(!inside(recordBytes(doc.records[0]!, elsewhere), elsewhere));
});

test('layout rejects output bytes that were not rendered from the records', () => {
  const input = inlineDoc({ a: 1 }, { b: 2 });
  const records: OutputRecord[] = [{ from: 0 }, { text: '{"c":3}' }];
  const bytes = renderOutput(input, records);
  assert.throws(() => computeLayout(input, { records, bytes: Buffer.concat([bytes, Buffer.from('x')]) }), /account for/);
  assert.throws(() => computeLayout(input, { records: [{ from: 1 }, { text: '{"c":3}' }], bytes }), /do not match output record 0/);
});

test('BOM + CRLF + no final newline: the unterminated last line is reused only while it stays last', (t) => {
  const input = fixtureDoc('devs', 'bom-crlf-no-final-newline.jsonl');
  assert.ok(input.bom, 'fixture has a BOM');
  const last = input.records.length - 1;
  assert.equal(input.records[last]?.eol, '');
  assert.equal(input.records.length, 6);
  const original = serializeDocument(input);
  const store = openTemp(t);

  // Last line still last: byte-identical, taken from the output; 1 changed, 2 and 4 dropped.
  const stillLast: OutputRecord[] = [
    { from: 0 },
    { text: '{"id":"s","role":"user","type":"summary","content":"[Context Summary] x"}', replaces: 1 },
    { from: 3 },
    { from: last },
  ];
  const a = computeLayout(input, { records: stillLast, bytes: renderOutput(input, stillLast) });
  assert.deepEqual([...a.archivedRecords.keys()], [1, 2, 4]);
  store.recordPrune(event('still-last', input, stillLast));
  assert.ok(store.restore('still-last', renderOutput(input, stillLast)).equals(original));

  // A line written after it gives it a CRLF: no longer the input's bytes, so it is archived.
  const notLast: OutputRecord[] = [{ from: 0 }, { from: last }, { text: '{"id":"s","role":"user","type":"summary","content":"[Context Summary] y"}' }];
  const outputBytes = renderOutput(input, notLast);
  assert.ok(outputBytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])), 'output keeps the BOM');
  const b = computeLayout(input, { records: notLast, bytes: outputBytes });
  assert.ok(b.archivedRecords.has(last), 'the last line gained a terminator, so it is archived');
  assert.ok(b.archivedRecords.get(last)?.equals(input.records[last]!.raw!), 'archived without a terminator, as it was');
  store.recordPrune(event('not-last', input, notLast));
  const restored = store.restore('not-last', outputBytes);
  assert.ok(restored.equals(original), 'BOM, CRLFs and the missing final newline all come back');
});

for (const [format, name, keepTail] of [
  ['gemini', 'legacy-document.json', 2],
  ['openai-chat', 'conversation-document.json', 1],
] as const) {
  test(`a json-document input rewritten as one text restores byte for byte: ${format}/${name}`, (t) => {
    const doc = fixtureDoc(format, name);
    assert.equal(doc.kind, 'json-document');
    const { event: pruneEvent, output } = realPrune(`doc-${format}`, doc, { keepHead: 1, keepTail });
    assert.ok(pruneEvent.removedTurnCount > 0, 'the prune removes turns');
    assert.ok(
      pruneEvent.output.records.some((r) => 'text' in r && r.text.includes('\n')),
      'the document is one text spanning lines',
    );
    const store = openTemp(t);
    store.recordPrune(pruneEvent);
    assert.equal(store.findRestorable(output)?.id, `doc-${format}`);
    assert.ok(store.restore(`doc-${format}`, output).equals(serializeDocument(doc)));
  });
}

test('bytes appended after the prune stay at the end of the restored transcript', (t) => {
  const doc = fixtureDoc('devs', 'basic-session.jsonl');
  const { event: pruneEvent, output } = realPrune('append', doc);
  const store = openTemp(t);
  store.recordPrune(pruneEvent);
  const grown = Buffer.concat([output, APPENDED, APPENDED]);
  assert.equal(store.findRestorable(grown)?.id, 'append');
  const restored = store.restore('append', grown);
  assert.ok(restored.equals(Buffer.concat([serializeDocument(doc), APPENDED, APPENDED])));
});

test('a transcript modified (not appended to) since the prune is refused', (t) => {
  const doc = fixtureDoc('devs', 'basic-session.jsonl');
  const { event: pruneEvent, output } = realPrune('modified', doc);
  const store = openTemp(t);
  store.recordPrune(pruneEvent);

  const edited = Buffer.from(output);
  edited[10] = edited[10] === 0x41 ? 0x42 : 0x41;
  const truncated = output.subarray(0, output.length - 5);
  const rewritten = Buffer.concat([output.subarray(0, output.length - 2), Buffer.from('X\n'), APPENDED]);
  for (const [what, bytes] of [
    ['one byte changed', edited],
    ['truncated', truncated],
    ['last line changed, then appended to', rewritten],
  ] as const) {
    assert.equal(store.findRestorable(bytes), undefined, what);
    assert.equal(store.findRestorable(bytes, { eventId: 'modified' }), undefined, what);
    assert.throws(
      () => store.restore('modified', bytes),
      (error: unknown) => {
        assert.ok(error instanceof TranscriptChangedError, what);
        assert.match(error.message, /changed since prune modified in a way restore cannot undo/);
        return true;
      },
    );
  }
  assert.throws(() => store.restore('no-such-event', output), UnknownPruneEventError);
});

test('two prunes in a row restore one after the other back to the first original', (t) => {
  const doc0 = fixtureDoc('devs', 'basic-session.jsonl');
  const original = serializeDocument(doc0);
  const store = openTemp(t);
  const first = realPrune('first', doc0, { keepHead: 3, keepTail: 6 });
  store.recordPrune(first.event);

  // The agent goes on (a turn is appended), then a second prune runs on the grown file.
  const grown = Buffer.concat([first.output, APPENDED]);
  const doc1 = parseDocument(grown, { path: doc0.path, keepRaw: true });
  const second = realPrune('second', doc1, { keepHead: 2, keepTail: 2 });
  assert.ok(second.event.removedTurnCount > 0, 'the second prune removes turns too');
  store.recordPrune({ ...second.event, createdAt: '2026-11-23T13:00:00.000Z' });
  const now = Buffer.concat([second.output, APPENDED]);

  assert.equal(store.findRestorable(now)?.id, 'second', 'the latest prune the file still starts with');
  const back1 = store.restore('second', now);
  assert.ok(back1.equals(Buffer.concat([grown, APPENDED])));
  assert.equal(store.findRestorable(back1)?.id, 'first');
  const back0 = store.restore('first', back1);
  assert.ok(back0.equals(Buffer.concat([original, APPENDED, APPENDED])));
  assert.equal(store.findRestorable(back0), undefined, 'nothing left to undo');
  assert.deepEqual(
    store.listEvents({ sourcePath: doc0.path }).map((e) => e.id),
    ['second', 'first'],
  );
  assert.deepEqual(
    store.listEvents({ limit: 1 }).map((e) => e.id),
    ['second'],
  );
});

test('findRestorable picks the latest matching event among many, and checks a named one', (t) => {
  const store = openTemp(t);
  const input = inlineDoc({ a: 1 }, { b: 2 }, { c: 3 });
  // Several events with the same output (the same prune recorded twice) and one with another.
  store.recordPrune(event('older', input, [{ from: 0 }, { from: 2 }]));
  store.recordPrune(event('other', input, [{ from: 1 }]));
  store.recordPrune(event('newer', input, [{ from: 0 }, { from: 2 }]));
  const output = renderOutput(input, [{ from: 0 }, { from: 2 }]);
  assert.equal(store.findRestorable(output)?.id, 'newer');
  assert.equal(store.findRestorable(output, { eventId: 'older' })?.id, 'older');
  assert.equal(store.findRestorable(output, { eventId: 'other' }), undefined);
  // `other` wrote only `{"b":2}\n`, which `output` does not start with; a file that does is found.
  assert.equal(store.findRestorable(Buffer.from('{"b":2}\n{"tail":1}\n'))?.id, 'other');
  // Outputs of different sizes that the file both starts with: the one recorded last wins.
  const abc = renderOutput(input, [{ from: 0 }, { from: 1 }, { from: 2 }]);
  store.recordPrune(event('shorter-later', input, [{ from: 0 }]));
  assert.equal(store.findRestorable(abc)?.id, 'shorter-later');
  store.recordPrune(event('longer-latest', input, [{ from: 0 }, { from: 1 }]));
  assert.equal(store.findRestorable(abc)?.id, 'longer-latest');
  const summary = store.getEvent('newer');
  assert.equal(summary?.output.length, output.length);
  assert.equal(summary?.original.sha256, sha256(serializeDocument(input)));
});

for (const path of realdataFiles()) {
  test(`realdata prune archived and restored byte for byte: ${realdataName(path)}`, { skip: realdataSkip }, (t) => {
    const bytes = readFileSync(path);
    const doc = parseDocument(bytes, { path, keepRaw: true });
    const { event: pruneEvent, output } = realPrune('real', doc);
    const store = openTemp(t);
    store.recordPrune(pruneEvent);
    assert.equal(store.findRestorable(Buffer.concat([output, APPENDED]))?.id, 'real');
    assert.ok(store.restore('real', output).equals(bytes), 'original bytes back');
    assert.ok(store.restore('real', Buffer.concat([output, APPENDED])).equals(Buffer.concat([bytes, APPENDED])));

    // Only what the output does not reproduce is archived.
    const { archivedRecords } = computeLayout(doc, pruneEvent.output);
    const reused = new Set(pruneEvent.output.records.flatMap((r) => ('from' in r ? [r.from] : [])));
    for (const i of archivedRecords.keys()) {
      if (reused.has(i)) assert.equal(doc.records[i]?.eol, '', `record ${i} is archived although reused: only an unterminated last line may be`);
    }

    // An archived turn is found again by a word of its own text.
    const dropped = pruneEvent.turns.find((x) => x.action === 'dropped' && /[\p{L}]{6,}/u.test(x.content));
    if (dropped) {
      const word = /[\p{L}]{6,}/u.exec(dropped.content)?.[0] ?? '';
      const hits = store.recall(word, { limit: 1000 });
      assert.ok(
        hits.some((h) => h.turnId === dropped.turnId && h.entryIndex === dropped.entryIndex),
        `recall "${word}" finds turn ${dropped.turnId}`,
      );
      assert.equal(store.getTurn('real', dropped.turnId)?.content, dropped.content);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Recall

function recallStore(t: { after(fn: () => void): void }): ArchiveStore {
  const store = openTemp(t);
  for (const e of recallEvents()) store.recordPrune(e);
  return store;
}

test('a prune does not pay for full-text indexing: the first recall indexes what is pending, once', (t) => {
  const store = recallStore(t);
  const indexedRows = (): number => rawCount(store.path, 'SELECT count(*) FROM archived_turns_fts WHERE archived_turns_fts MATCH ?', 'database');
  assert.equal(indexedRows(), 0, 'nothing indexed at prune time');
  assert.ok(store.recall('database').length > 0);
  assert.equal(store.indexPending(), 0, 'already indexed by the recall');
  const input = inlineDoc({ c: 3 });
  store.recordPrune(event('r3', input, [{ from: 0 }], { turns: [turn(0, 'a third database note')] }));
  assert.equal(store.recall('third database').length, 1, 'a later prune is found by the next recall');
  assert.equal(store.indexPending(), 0);
});

test('recall ranks by bm25, with snippets, filters and a limit', (t) => {
  const store = recallStore(t);
  const hits = store.recall('database lock');
  assert.deepEqual(
    hits.map((h) => `${h.eventId}/${h.entryIndex}`),
    ['r1/1', 'r1/0'],
    'both turns with both words, the one about nothing else first; r2 lacks "lock"',
  );
  assert.ok(hits[0]!.score > hits[1]!.score);
  assert.match(hits[1]!.snippet, /«database» migration failed with a «lock» timeout/);
  assert.equal(hits[0]!.sourcePath, '/p/one.jsonl');
  assert.equal(hits[0]!.prunedAt, '2026-11-23T12:00:00.000Z');

  // No turn has all the words: any of them will do.
  assert.deepEqual(new Set(store.recall('cats database').map((h) => `${h.eventId}/${h.entryIndex}`)), new Set(['r1/0', 'r1/1', 'r1/2', 'r2/0']));
  const cats = store.recall('cats');
  assert.equal(cats.length, 1);
  assert.equal(cats[0]?.action, 'masked');
  assert.equal(cats[0]?.type, 'tool_result');

  assert.deepEqual(
    store.recall('database', { eventId: 'r2' }).map((h) => h.eventId),
    ['r2'],
  );
  assert.deepEqual(
    store.recall('database', { sourcePath: '/p/one.jsonl' }).map((h) => h.eventId),
    ['r1', 'r1'],
  );
  assert.equal(store.recall('database', { limit: 1 }).length, 1);
  assert.match(store.recall('migration', { highlight: ['<b>', '</b>'] })[0]?.snippet ?? '', /<b>migration<\/b>/);

  // A turn id is searchable too, and a turn can be fetched by id or entry index.
  assert.deepEqual(
    store.recall('turn-3').map((h) => `${h.eventId}/${h.entryIndex}`),
    ['r1/3'],
  );
  assert.equal(store.getTurn('r1', 'turn-2')?.content, 'Cats sleep most of the day.');
  assert.equal(store.getTurn('r1', 2)?.turnId, 'turn-2');
  assert.deepEqual(store.getTurn('r1', 2)?.records, [2]);
  assert.equal(store.getTurn('r1', 'missing'), undefined);
  // Both events archived a turn-0: without an event, the latest one's.
  assert.equal(store.findTurn('turn-0')?.eventId, 'r2');
  assert.equal(store.findTurn('turn-0', { eventId: 'r1' })?.content, 'The database migration failed with a lock timeout after the deploy.');
  assert.equal(store.findTurn('turn-3')?.eventId, 'r1');
  assert.equal(store.findTurn('nope'), undefined);
});

test('recall takes any text as search terms, never as FTS syntax', (t) => {
  const store = recallStore(t);
  const queries = [
    '"unbalanced',
    'foo"bar',
    '""',
    '*',
    '**',
    'NEAR',
    'NEAR(database lock)',
    'database NEAR lock',
    'AND',
    'OR NOT',
    '-database',
    'col:value',
    'content:cats',
    '(',
    ')',
    '^caret',
    '{a b}',
    '',
    '   ',
    '🙂',
    "'; DROP TABLE prune_events; --",
    '\u0000',
  ];
  for (const q of queries) assert.doesNotThrow(() => store.recall(q), `query ${JSON.stringify(q)}`);

  const found = (q: string): string[] => store.recall(q).map((h) => `${h.eventId}/${h.entryIndex}`);
  assert.deepEqual(found('NEAR'), ['r1/4'], 'NEAR is a word, found where it is written');
  assert.deepEqual(found('"NEAR" AND'), ['r1/4']);
  assert.deepEqual(found('col:value'), ['r1/4'], 'a column filter is searched as the text col value');
  assert.deepEqual(found('(paren)'), ['r1/4']);
  assert.deepEqual(new Set(found('datab*')), new Set(['r1/0', 'r1/1', 'r2/0']), 'a trailing * is a prefix search');
  assert.deepEqual(found('datab'), [], 'without * a word must match whole');
  assert.deepEqual(found('*'), []);
  assert.deepEqual(found(''), []);
  assert.deepEqual(found('naive cafe'), ['r1/3'], 'diacritics are folded');
  assert.deepEqual(found('Grüße MÜNCHEN'), ['r1/3'], 'case-insensitive beyond ASCII');
  assert.deepEqual(found('日本語'), ['r1/3']);
  assert.equal(store.listEvents().length, 2, 'the SQL-looking query did nothing');

  assert.deepEqual(ftsQueries('a "b" c*'), { allTerms: '"a" """b""" "c"*', anyTerm: '"a" OR """b""" OR "c"*' });
  assert.equal(ftsQueries(' * ** '), undefined);
  // The excerpt's pattern too: a term again (in any case) is one alternative, and the excerpt is the same.
  assert.equal(termPattern(`${'error '.repeat(8000)}Error`)?.source, termPattern('error')?.source);
  const marks = { open: '[', close: ']' };
  assert.equal(buildExcerpt('an Error, then error', `${'error '.repeat(50)}ERROR`, marks), 'an [Error], then [error]');
  // A term said again adds nothing but work: 8,000 of one word took a minute to search.
  assert.deepEqual(ftsQueries(`${'error '.repeat(8000)}Error ÉRROR error*`), { allTerms: '"error" "error"*', anyTerm: '"error" OR "error"*' });
});

// ---------------------------------------------------------------------------------------------
// Concurrency

const WRITER = `
const { ArchiveStore } = await import(process.env.STORE_URL);
const { parseDocument } = await import(process.env.JSONL_URL);
const { renderOutput } = await import(process.env.WRITE_URL);
const worker = process.env.WORKER;
const count = Number(process.env.EVENTS);
const store = ArchiveStore.open(process.env.ARCHIVE);
process.stdout.write('ready\\n');
await new Promise((r) => process.stdin.once('data', r));
for (let i = 0; i < count; i++) {
  const lines = Array.from({ length: 60 }, (_, j) => JSON.stringify({ id: worker + '-' + i + '-' + j, content: 'x'.repeat(300) + ' ' + worker + ' word' + j }));
  const input = parseDocument(Buffer.from(lines.join('\\n') + '\\n'), { path: worker, keepRaw: true });
  const records = input.records.filter((r) => r.index % 2 === 0).map((r) => ({ from: r.index }));
  const turns = input.records.filter((r) => r.index % 2 === 1).map((r) => ({
    entryIndex: r.index, turnId: worker + '-' + i + '-' + r.index, role: 'user', type: 'message', action: 'dropped',
    tokens: 80, content: r.raw.toString('utf8'), records: [r.index],
  }));
  store.recordPrune({
    id: worker + '-' + i, createdAt: new Date().toISOString(), sourcePath: '/w/' + worker, format: 'devs', strategy: 'budget',
    targetTokens: 100, urgency: 'hard', tokensBefore: 1, tokensAfter: 1, removedTurnCount: turns.length, maskedTurnCount: 0, tokensSaved: 0,
    input, output: { records, bytes: renderOutput(input, records) }, turns,
  });
}
store.close();
process.stdout.write('done\\n');
`;

// A thread that opens a new archive each round, all of them at the same moment: they wait on shared
// memory until the test bumps the round, then open `<dir>/<round>/archive.sqlite` and say how it went.
const OPENER = `
const { workerData, parentPort } = require('node:worker_threads');
import(workerData.store).then(({ ArchiveStore }) => {
  let round = 0;
  parentPort.postMessage({ ready: true });
  for (;;) {
    Atomics.wait(workerData.signal, 0, round);
    round = Atomics.load(workerData.signal, 0);
    if (round < 0) return;
    try {
      ArchiveStore.open(workerData.dir + '/' + round + '/archive.sqlite').close();
      parentPort.postMessage({ round, ok: true });
    } catch (error) {
      parentPort.postMessage({ round, ok: false, error: error.code + ': ' + error.message });
    }
  }
});
`;

test('four threads creating the same new archive at the same moment all open it (200 rounds)', async (t) => {
  // Two races of creating an archive, each seen in 1 to 6 rounds of 100 before they were fixed: the
  // switch to WAL said "database is locked" at once, and a check read the schema version before the
  // other's commit and its tables after ("a SQLite database of another application").
  const store = join(repoRoot, 'dist', 'archive', 'store.js');
  assert.ok(existsSync(store), 'run `npm run build` first (npm test does): worker threads load the built archive');
  const dir = tempDir(t);
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const threads = Array.from({ length: 4 }, () => new Worker(OPENER, { eval: true, workerData: { signal, dir, store: pathToFileURL(store).href } }));
  const ended = threads.map((thread) => once(thread, 'exit'));
  t.after(async () => {
    Atomics.store(signal, 0, -1);
    Atomics.notify(signal, 0);
    await Promise.all(ended);
  });
  const reply = (thread: Worker): Promise<{ ok: boolean; error?: string }> => once(thread, 'message').then(([message]) => message);
  await Promise.all(threads.map(reply));
  for (let round = 1; round <= 200; round++) {
    const replies = threads.map(reply);
    Atomics.store(signal, 0, round);
    Atomics.notify(signal, 0);
    for (const result of await Promise.all(replies)) assert.ok(result.ok, `round ${round}: ${result.error}`);
  }
});

test('two processes recording prunes into one archive at once both succeed', async (t) => {
  const dir = tempDir(t);
  const archive = join(dir, 'shared', 'archive.sqlite');
  const events = 40;
  const url = (p: string): string => pathToFileURL(join(repoRoot, p)).href;
  const workers = ['alpha', 'beta'].map((worker) => {
    const run = spawnChild(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', WRITER], {
      cwd: repoRoot,
      env: {
        ...process.env,
        STORE_URL: url('src/archive/store.ts'),
        JSONL_URL: url('src/io/jsonl.ts'),
        WRITE_URL: url('src/formats/write.ts'),
        WORKER: worker,
        EVENTS: String(events),
        ARCHIVE: archive,
      },
    });
    return { worker, run, ready: run.printed(/ready/), exit: run.exited };
  });
  // Both have opened (and raced to create and migrate) the archive; now write at the same moment.
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.run.child.stdin?.end('go\n');
  for (const w of workers) {
    const result = await w.exit;
    assert.equal(result.code, 0, `${w.worker} failed: ${result.stderr}`);
    assert.match(result.stdout, /done/);
  }

  const store = ArchiveStore.open(archive);
  t.after(() => store.close());
  const ids = new Set(store.listEvents().map((e) => e.id));
  assert.equal(ids.size, 2 * events);
  for (const w of ['alpha', 'beta']) for (let i = 0; i < events; i++) assert.ok(ids.has(`${w}-${i}`), `${w}-${i} recorded`);
  assert.equal(rawCount(archive, 'SELECT count(*) FROM archived_turns'), 2 * events * 30);
  // Interleaved, not one after the other: both were writing during the same stretch.
  const order = store
    .listEvents()
    .reverse()
    .map((e) => e.id.split('-')[0]);
  const switches = order.filter((w, i) => i > 0 && w !== order[i - 1]).length;
  t.diagnostic(`writer switches in commit order: ${switches}`);
  assert.equal(store.recall('beta word7', { sourcePath: '/w/beta', limit: 1000 }).length, events);
  const alpha = store.listEvents({ sourcePath: '/w/alpha', limit: 1 })[0];
  assert.ok(alpha);
  // Each archived event still restores: rebuild its output from the event, then restore.
  const lines = Array.from({ length: 60 }, (_, j) => JSON.stringify({ id: `alpha-${events - 1}-${j}`, content: `${'x'.repeat(300)} alpha word${j}` }));
  const input = parseDocument(Buffer.from(`${lines.join('\n')}\n`), { path: 'alpha', keepRaw: true });
  const output = renderOutput(
    input,
    input.records.filter((r) => r.index % 2 === 0).map((r) => ({ from: r.index })),
  );
  assert.ok(store.restore(alpha.id, output).equals(serializeDocument(input)));
});

test('recall on a multi-megabyte archived turn finds it, with an excerpt of bounded size around the match', (t) => {
  const store = openTemp(t);
  const filler = 'lorem ipsum dolor sit amet '.repeat(150_000); // ~4 MB each side
  const content = `${filler}the needle-word sits here ${filler}`;
  store.recordPrune(event('big', inlineDoc({ a: 1 }), [{ from: 0 }], { turns: [turn(0, content, { type: 'tool_result', role: 'tool' })] }));
  const hits = store.recall('needle-word');
  assert.equal(hits.length, 1);
  const snippet = hits[0]!.snippet;
  assert.match(snippet, /«needle-word» sits here/);
  assert.ok(snippet.length <= EXCERPT_BEFORE + EXCERPT_AFTER + 10, `an excerpt of ${snippet.length} characters`);
  assert.ok(snippet.startsWith('…') && snippet.endsWith('…'), 'cut on both sides');
  // A prefix search on one huge token marks a bounded part of it.
  store.recordPrune(event('huge', inlineDoc({ b: 2 }), [{ from: 0 }], { turns: [turn(0, `x${'y'.repeat(2_000_000)}`)] }));
  const prefix = store.recall('xy*', { eventId: 'huge' });
  assert.equal(prefix.length, 1);
  assert.ok(prefix[0]!.snippet.length <= EXCERPT_BEFORE + EXCERPT_AFTER + 10, `an excerpt of ${prefix[0]!.snippet.length} characters`);
});
