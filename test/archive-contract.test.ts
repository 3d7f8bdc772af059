import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Archive } from '../src/archive/archive.js';
import { rawEventHash, redactUrl } from '../src/archive/archive.js';
import { copyArchive } from '../src/archive/copy.js';
import { ArchiveCorruptError, ArchiveSchemaError, ArchiveWriteError, TranscriptChangedError, UnknownPruneEventError } from '../src/archive/errors.js';
import { tsQueries } from '../src/archive/fts-query.js';
import { openArchiveAt } from '../src/archive/open.js';
import { PG_SCHEMA_VERSION, postgresEmbeddingCache, PostgresArchive } from '../src/archive/postgres.js';
import { loadSqlite } from '../src/archive/sqlite.js';
import type { ArchivedTurnInput, PruneEventInput } from '../src/archive/records.js';
import { readTranscript } from '../src/formats/index.js';
import { renderOutput, writeTranscript } from '../src/formats/write.js';
import { writerFor } from '../src/formats/index.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { archivedTurn as turn, pruneEvent as event, recallEvents } from './helpers/archive-events.js';
import { dropMiddleEdit } from './helpers/edits.js';
import { startPostgres } from './helpers/postgres.js';
import { GeminiEmbedder } from '../src/providers/gemini/embedder.js';
import { InputError } from '../src/core/errors.js';
import { fixtureDoc, inlineDoc } from './helpers/transcripts.js';

/**
 * The archive contract: every store (SQLite file, PostgreSQL over the wire) behaves the same
 * through the Archive interface. Each test gets its own empty archive.
 */

type T = { after(fn: () => Promise<void> | void): void };

const stores: Record<string, (t: T) => Promise<Archive>> = {
  sqlite: async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-contract-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const archive = await openArchiveAt(join(dir, 'archive.sqlite'));
    t.after(() => archive.close());
    return archive;
  },
  postgres: async (t) => {
    const { url } = await startPostgres(t);
    const archive = await openArchiveAt(url);
    t.after(() => archive.close());
    return archive;
  },
};

/** A real prune of a fixture with its format's writer: the event and the bytes it wrote. */
function realPrune(id: string, doc: ParsedDocument): { event: PruneEventInput; output: Buffer } {
  const transcript = readTranscript(doc);
  const edit = dropMiddleEdit(transcript, { keepHead: 2, keepTail: 3 });
  const written = writeTranscript(doc, transcript, edit, writerFor(transcript.format));
  const turns: ArchivedTurnInput[] = [...edit.dropped]
    .sort((a, b) => a - b)
    .map((i) => {
      const entry = transcript.entries[i]!;
      return {
        entryIndex: i,
        turnId: entry.turn.id,
        role: entry.turn.role,
        type: entry.turn.type,
        action: 'dropped',
        tokens: 1,
        content: entry.turn.content,
        records: entry.source.records,
      };
    });
  return {
    event: {
      ...event(id, doc, written.records, { format: transcript.format, sourcePath: doc.path, turns, removedTurnCount: turns.length }),
      output: { records: written.records, bytes: written.bytes },
    },
    output: written.bytes,
  };
}

async function recallArchive(t: T, open: (t: T) => Promise<Archive>): Promise<Archive> {
  const archive = await open(t);
  for (const e of recallEvents()) await archive.recordPrune(e);
  return archive;
}

const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

for (const [kind, open] of Object.entries(stores)) {
  describe(`archive contract: ${kind}`, () => {
    test('a real prune restores byte for byte, with appended bytes kept; a changed file is refused', async (t) => {
      const archive = await open(t);
      assert.equal(archive.kind, kind);
      for (const [format, name] of [
        ['devs', 'basic-session.jsonl'],
        ['devs', 'bom-crlf-no-final-newline.jsonl'],
        ['codex', 'basic-session.jsonl'],
      ] as const) {
        const doc = fixtureDoc(format, name);
        const { event: e, output } = realPrune(`${format}-${name}`, doc);
        await archive.recordPrune(e);
        const found = await archive.findRestorable(output);
        assert.equal(found?.id, e.id);
        assert.ok((await archive.restore(e.id, output)).equals(serializeDocument(doc)), `${format}/${name} restores byte for byte`);
        const appended = Buffer.concat([output, Buffer.from('{"id":"later","content":"after"}\n')]);
        assert.equal((await archive.findRestorable(appended))?.id, e.id);
        assert.ok((await archive.restore(e.id, appended)).equals(Buffer.concat([serializeDocument(doc), Buffer.from('{"id":"later","content":"after"}\n')])));
        const changed = Buffer.from(output);
        changed[changed.length - 3] = (changed[changed.length - 3] ?? 0) ^ 1;
        await assert.rejects(archive.restore(e.id, changed), TranscriptChangedError);
        const listed = await archive.listTurns(e.id);
        assert.deepEqual(
          listed.map((x) => x.entryIndex),
          e.turns.map((x) => x.entryIndex),
        );
        assert.equal(listed[0]?.content, e.turns[0]?.content);
      }
      await assert.rejects(archive.restore('nope', Buffer.from('')), UnknownPruneEventError);
      const events = await archive.listEvents();
      assert.equal(events.length, 3);
      assert.equal(events[0]?.id, 'codex-basic-session.jsonl', 'newest first');
      assert.equal((await archive.listEvents({ limit: 1 })).length, 1);
    });

    test('findRestorable picks the latest matching event among many, and checks a named one', async (t) => {
      const archive = await open(t);
      const input = inlineDoc({ a: 1 }, { b: 2 }, { c: 3 });
      await archive.recordPrune(event('older', input, [{ from: 0 }, { from: 2 }]));
      await archive.recordPrune(event('other', input, [{ from: 1 }]));
      await archive.recordPrune(event('newer', input, [{ from: 0 }, { from: 2 }]));
      const output = renderOutput(input, [{ from: 0 }, { from: 2 }]);
      assert.equal((await archive.findRestorable(output))?.id, 'newer');
      assert.equal((await archive.findRestorable(output, { eventId: 'older' }))?.id, 'older');
      assert.equal(await archive.findRestorable(output, { eventId: 'other' }), undefined);
      assert.equal((await archive.findRestorable(Buffer.from('{"b":2}\n{"tail":1}\n')))?.id, 'other');
      const abc = renderOutput(input, [{ from: 0 }, { from: 1 }, { from: 2 }]);
      await archive.recordPrune(event('shorter-later', input, [{ from: 0 }]));
      assert.equal((await archive.findRestorable(abc))?.id, 'shorter-later');
      await archive.recordPrune(event('longer-latest', input, [{ from: 0 }, { from: 1 }]));
      assert.equal((await archive.findRestorable(abc))?.id, 'longer-latest');
      assert.equal(await archive.findRestorable(Buffer.from('nothing like it\n')), undefined);
    });

    test('a row failing half-way stores nothing of the event; a retried event id is refused, not duplicated', async (t) => {
      const archive = await open(t);
      const input = inlineDoc({ a: 1 }, { b: 2 }, { c: 3 });
      // Two turns with the same entry index: the second insert fails after the event and lines went in.
      const broken = event('half', input, [{ from: 0 }], { turns: [turn(1, 'one'), turn(1, 'again')] });
      await assert.rejects(archive.recordPrune(broken), ArchiveWriteError);
      assert.equal(await archive.getEvent('half'), undefined);
      assert.deepEqual(await archive.counts(), { events: 0, records: 0, turns: 0 });

      const good = event('once', input, [{ from: 0 }], { turns: [turn(1, 'the only copy')] });
      await archive.recordPrune(good);
      await assert.rejects(archive.recordPrune(good), ArchiveWriteError, 'the same event recorded again is refused');
      assert.deepEqual(await archive.counts(), { events: 1, records: 2, turns: 1 });
      assert.equal((await archive.recall('only copy')).length, 1);

      // A prune whose transcript could not be written is forgotten whole.
      assert.equal(await archive.forgetPrune('once'), true);
      assert.equal(await archive.forgetPrune('once'), false);
      assert.deepEqual(await archive.counts(), { events: 0, records: 0, turns: 0 });
      assert.deepEqual(await archive.recall('only copy'), []);
    });

    test('the input bytes a prune hands over are checked against what the archive rebuilds: others store nothing', async (t) => {
      const archive = await open(t);
      const input = inlineDoc({ a: 1 }, { b: 2 }, { c: 3 });
      const bytes = serializeDocument(input);
      const changed = Buffer.from(bytes.toString('utf8').replace('"b":2', '"b":3'));
      for (const inputBytes of [changed, bytes.subarray(0, bytes.length - 1), Buffer.concat([bytes, Buffer.from('{"d":4}\n')])]) {
        await assert.rejects(archive.recordPrune(event('lying', input, [{ from: 0 }, { from: 2 }], { inputBytes })), ArchiveWriteError);
      }
      assert.deepEqual(await archive.counts(), { events: 0, records: 0, turns: 0 });
      const given = event('given', input, [{ from: 0 }, { from: 2 }], { inputBytes: bytes });
      await archive.recordPrune(given);
      assert.deepEqual(await archive.restore('given', given.output.bytes), bytes);
    });

    test('recall: ranking, snippets, filters, a limit, prefixes, diacritics, turn ids', async (t) => {
      const archive = await recallArchive(t, open);
      const hits = await archive.recall('database lock');
      assert.deepEqual(
        hits.map((h) => `${h.eventId}/${h.entryIndex}`),
        ['r1/1', 'r1/0'],
        'both turns with both words; r2 lacks "lock"',
      );
      assert.ok(hits[0]!.score > hits[1]!.score);
      assert.match(hits[1]!.snippet, /«database» migration failed with a «lock» timeout/);
      assert.equal(hits[0]!.sourcePath, '/p/one.jsonl');
      assert.equal(hits[0]!.prunedAt, '2026-11-23T12:00:00.000Z');
      assert.deepEqual(Object.keys(hits[0]!).sort(), [
        'action',
        'entryIndex',
        'eventId',
        'prunedAt',
        'role',
        'score',
        'snippet',
        'sourcePath',
        'strategy',
        'tokens',
        'turnId',
        'type',
      ]);

      const found = async (q: string, options = {}): Promise<string[]> => (await archive.recall(q, options)).map((h) => `${h.eventId}/${h.entryIndex}`);
      assert.deepEqual(new Set(await found('cats database')), new Set(['r1/0', 'r1/1', 'r1/2', 'r2/0']), 'no turn has all the words: any will do');
      const cats = await archive.recall('cats');
      assert.equal(cats[0]?.action, 'masked');
      assert.equal(cats[0]?.type, 'tool_result');
      assert.deepEqual(await found('database', { eventId: 'r2' }), ['r2/0']);
      assert.deepEqual(
        (await archive.recall('database', { sourcePath: '/p/one.jsonl' })).map((h) => h.eventId),
        ['r1', 'r1'],
      );
      assert.equal((await archive.recall('database', { limit: 1 })).length, 1);
      assert.match((await archive.recall('migration', { highlight: ['<b>', '</b>'] }))[0]?.snippet ?? '', /<b>migration<\/b>/);
      assert.deepEqual(await found('turn-3'), ['r1/3'], 'a turn id is searchable');
      assert.deepEqual(new Set(await found('datab*')), new Set(['r1/0', 'r1/1', 'r2/0']), 'a trailing * is a prefix search');
      assert.deepEqual(await found('datab'), [], 'without * a word must match whole');
      assert.deepEqual(await found('naive cafe'), ['r1/3'], 'diacritics are folded');
      assert.deepEqual(await found('Grüße MÜNCHEN'), ['r1/3'], 'case-insensitive beyond ASCII');
      assert.deepEqual(await found('日本語'), ['r1/3']);
      assert.deepEqual(await found('store'), ['r1/4'], 'a word inside a path is found');

      assert.equal((await archive.getTurn('r1', 'turn-2'))?.content, 'Cats sleep most of the day.');
      assert.equal((await archive.getTurn('r1', 2))?.turnId, 'turn-2');
      assert.deepEqual((await archive.getTurn('r1', 2))?.records, [2]);
      assert.equal(await archive.getTurn('r1', 'missing'), undefined);
      assert.equal((await archive.findTurn('turn-0'))?.eventId, 'r2', 'without an event, the latest one that archived it');
      assert.equal((await archive.findTurn('turn-0', { eventId: 'r1' }))?.content, 'The database migration failed with a lock timeout after the deploy.');
      assert.equal(await archive.findTurn('nope'), undefined);
    });

    test('findTurn gives the whole text of a turn a later prune archived as its placeholder (masked, then dropped)', async (t) => {
      const archive = await recallArchive(t, open);
      const input = parseDocument(Buffer.from('{"a":1}\n{"b":2}\n'), { path: 'inline', keepRaw: true });
      const placeholder = '[devs-ctx: 9 tokens of tool output archived; full text: devs-ctx recall --turn turn-2]';
      await archive.recordPrune(event('r3', input, [{ from: 0 }], { sourcePath: '/p/one.jsonl', turns: [turn(2, placeholder)] }));
      assert.equal((await archive.findTurn('turn-2'))?.content, 'Cats sleep most of the day.');
      assert.equal((await archive.findTurn('turn-2', { eventId: 'r3' }))?.content, placeholder, 'in the later event, what it archived');
      // Another transcript with a turn of the same id (positional ids, line-N): its text is not this one's.
      const elsewhere = '[devs-ctx: 9 tokens of tool output archived; full text: devs-ctx recall --turn turn-0]';
      await archive.recordPrune(event('r4', input, [{ from: 0 }], { sourcePath: '/p/three.jsonl', turns: [turn(0, elsewhere)] }));
      assert.equal((await archive.findTurn('turn-0'))?.content, elsewhere, "no other transcript's text for it");
    });

    test('recall takes any text as search terms, never as query syntax', async (t) => {
      const archive = await recallArchive(t, open);
      const queries = [
        '"unbalanced',
        'foo"bar',
        '""',
        '*',
        '**',
        'NEAR',
        'NEAR(database lock)',
        'AND',
        'OR NOT',
        '-database',
        'col:value',
        '(',
        ')',
        '^caret',
        '{a b}',
        '',
        '   ',
        '🙂',
        "'; DROP TABLE prune_events; --",
        '\u0000',
        "it's",
        'a & b | !c',
        'x:* <-> y',
        "'quoted'",
        '\\',
      ];
      for (const q of queries) await assert.doesNotReject(archive.recall(q), `query ${JSON.stringify(q)}`);
      const found = async (q: string): Promise<string[]> => (await archive.recall(q)).map((h) => `${h.eventId}/${h.entryIndex}`);
      assert.deepEqual(await found('NEAR'), ['r1/4']);
      assert.deepEqual(await found('"NEAR" AND'), ['r1/4']);
      assert.deepEqual(await found('col:value'), ['r1/4']);
      assert.deepEqual(await found('(paren)'), ['r1/4']);
      assert.deepEqual(await found('*'), []);
      assert.equal((await archive.listEvents()).length, 2, 'the SQL-looking query did nothing');
    });

    test('export and import: idempotent, the same content hash in every store', async (t) => {
      const archive = await open(t);
      const { event: e } = realPrune('exp', fixtureDoc('devs', 'basic-session.jsonl'));
      await archive.recordPrune(e);
      const raw = await archive.exportEvent('exp');
      assert.ok(raw);
      assert.equal(await archive.importEvent(raw), false, 'already there: nothing written');
      assert.deepEqual(await archive.eventIds(), ['exp']);
      const other = await stores.sqlite!(t);
      assert.equal(await other.importEvent(raw), true);
      assert.equal(await other.importEvent(raw), false);
      const back = await other.exportEvent('exp');
      assert.ok(back);
      assert.equal(rawEventHash(back, sha), rawEventHash(raw, sha));
      assert.equal(await archive.exportEvent('missing'), undefined);
    });

    test('embedding cache: vectors by model and content hash, float32 exact, empty ones skipped', async (t) => {
      const archive = await open(t);
      assert.deepEqual(await archive.getEmbeddings('m', []), new Map());
      assert.deepEqual(await archive.getEmbeddings('m', ['a']), new Map(), 'nothing cached yet');
      const a = [0.1, -2.5, 3e-8, 1e30];
      await archive.putEmbeddings('m|redacted|https://x', [
        { hash: 'a', vector: a },
        { hash: 'b', vector: Float32Array.from([1, 2]) },
        { hash: 'empty', vector: [] },
      ]);
      const got = await archive.getEmbeddings('m|redacted|https://x', ['a', 'b', 'a', 'empty', 'missing']);
      assert.deepEqual([...got.keys()].sort(), ['a', 'b']);
      assert.deepEqual(got.get('a'), Float32Array.from(a), 'the float32 values, as SQLite stores them');
      assert.deepEqual(got.get('b'), Float32Array.from([1, 2]));
      assert.deepEqual(await archive.getEmbeddings('m|redacted|https://y', ['a']), new Map(), 'another endpoint is another key');
      assert.deepEqual(await archive.getEmbeddings('m|raw|https://x', ['a']), new Map(), 'unredacted text is another key');
      // Stored again (another machine, the same text): no error, one vector.
      await archive.putEmbeddings('m|redacted|https://x', [{ hash: 'a', vector: a }]);
      assert.deepEqual((await archive.getEmbeddings('m|redacted|https://x', ['a'])).get('a'), Float32Array.from(a));
    });

    test('embedding cache: the Gemini embedder on this archive embeds an unchanged text once', async (t) => {
      const archive = await open(t);
      const sent: string[][] = [];
      const client = {
        async embedTexts(_model: string, texts: readonly string[]): Promise<number[][]> {
          sent.push([...texts]);
          return texts.map((text) => [text.length, 0.5, -1]);
        },
      };
      const options = { cache: archive, cacheKey: 'http://127.0.0.1:1' };
      const first = await new GeminiEmbedder(client, options).embed(['alpha', 'beta', 'alpha']);
      assert.deepEqual(sent, [['alpha', 'beta']], 'a repeated text is sent once');
      const again = new GeminiEmbedder(client, options);
      const second = await again.embed(['beta', 'alpha', 'gamma']);
      assert.deepEqual(sent, [['alpha', 'beta'], ['gamma']], 'cached texts are not sent again');
      assert.equal(again.cached, 2);
      assert.deepEqual(second, [first[1], first[0], Float32Array.from([5, 0.5, -1])]);
    });
  });
}

describe('PostgreSQL store', () => {
  test('copy SQLite → PostgreSQL → SQLite: every event, identical, and a second copy changes nothing', async (t) => {
    const local = await stores.sqlite!(t);
    for (const name of ['basic-session.jsonl', 'bom-crlf-no-final-newline.jsonl']) await local.recordPrune(realPrune(name, fixtureDoc('devs', name)).event);
    const { url } = await startPostgres(t);
    const remote = await openArchiveAt(url);
    t.after(() => remote.close());
    const first = await copyArchive(local, remote);
    assert.equal(first.copied, 2);
    assert.equal(first.alreadyThere, 0);
    assert.deepEqual(first.verified, { events: 2, ...(({ records, turns }) => ({ records, turns }))(await local.counts()) });
    const again = await copyArchive(local, remote);
    assert.equal(again.copied, 0);
    assert.equal(again.alreadyThere, 2);
    assert.deepEqual(await remote.counts(), await local.counts());

    const back = await stores.sqlite!(t);
    assert.equal((await copyArchive(remote, back)).copied, 2);
    for (const id of await local.eventIds()) {
      assert.equal(rawEventHash((await back.exportEvent(id))!, sha), rawEventHash((await local.exportEvent(id))!, sha));
    }
    const { output } = realPrune('basic-session.jsonl', fixtureDoc('devs', 'basic-session.jsonl'));
    assert.ok((await back.restore('basic-session.jsonl', output)).equals(serializeDocument(fixtureDoc('devs', 'basic-session.jsonl'))));
  });

  test('migrations: a version table, two machines starting at once migrate once, a newer schema is refused', async (t) => {
    const { url } = await startPostgres(t);
    const [a, b, c] = await Promise.all([PostgresArchive.open(url), PostgresArchive.open(url), PostgresArchive.open(url)]);
    t.after(async () => {
      await a.close();
      await b.close();
      await c.close();
    });
    assert.equal(await a.schemaVersion(), PG_SCHEMA_VERSION);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.after(() => client.end());
    const versions = (await client.query('SELECT version FROM devs_ctx_schema_migrations ORDER BY version')).rows.map((r: { version: number }) => r.version);
    assert.deepEqual(
      versions,
      Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1),
      'each migration recorded once',
    );
    await client.query('INSERT INTO devs_ctx_schema_migrations (version) VALUES ($1)', [PG_SCHEMA_VERSION + 1]);
    await assert.rejects(PostgresArchive.open(url), (error: unknown) => {
      assert.ok(error instanceof ArchiveSchemaError);
      assert.doesNotMatch(error.message, /pw-Zq7/);
      return true;
    });
  });

  test("the README's least privileges are enough: a writer prunes, restores and recalls, a reader restores and recalls but cannot write", async (t) => {
    const { url } = await startPostgres(t);
    const owner = await PostgresArchive.open(url); // the first run, as the schema's owner, migrates
    await owner.close();
    const pg = (await import('pg')).default;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    t.after(() => admin.end());
    // The grants README.md documents, word for word in effect.
    await admin.query(`CREATE ROLE devs_ctx_writer; CREATE ROLE devs_ctx_reader;
      GRANT USAGE ON SCHEMA public TO devs_ctx_writer, devs_ctx_reader;
      GRANT SELECT, INSERT, DELETE ON prune_events, archived_records, archived_turns TO devs_ctx_writer;
      GRANT SELECT ON devs_ctx_schema_migrations TO devs_ctx_writer, devs_ctx_reader;
      GRANT USAGE ON SEQUENCE prune_events_seq_seq, archived_turns_id_seq TO devs_ctx_writer;
      GRANT SELECT ON prune_events, archived_records, archived_turns TO devs_ctx_reader;
      GRANT SELECT, INSERT ON embedding_cache TO devs_ctx_writer;
      GRANT SELECT ON embedding_cache TO devs_ctx_reader;
      CREATE ROLE devs_ctx_no_cache; GRANT USAGE ON SCHEMA public TO devs_ctx_no_cache;
      GRANT SELECT ON devs_ctx_schema_migrations TO devs_ctx_no_cache;`);
    // PGlite is one backend that every connection shares: SET ROLE here is the role the archive's queries run as.
    const as = async (role: string): Promise<void> => {
      await admin.query(`SET ROLE ${role}`);
    };
    const doc = fixtureDoc('devs', 'basic-session.jsonl');
    const { event: e, output } = realPrune('least', doc);

    await as('devs_ctx_writer');
    assert.equal((await admin.query('SELECT current_user AS u')).rows[0].u, 'devs_ctx_writer');
    const writer = await PostgresArchive.open(url);
    await writer.recordPrune(e);
    assert.ok((await writer.restore('least', output)).equals(serializeDocument(doc)));
    assert.ok((await writer.recall(e.turns[0]!.content.split(/\s+/u).slice(0, 2).join(' '))).length > 0);
    await writer.recordPrune({ ...e, id: 'not-written' });
    assert.equal(await writer.forgetPrune('not-written'), true, 'a prune whose transcript was not written is removed');
    await writer.putEmbeddings('m', [{ hash: 'h', vector: [1, 2] }]);
    await writer.putEmbeddings('m', [{ hash: 'h', vector: [1, 2] }]); // cached again by another machine: no UPDATE needed
    await writer.close();

    await as('devs_ctx_reader');
    const reader = await PostgresArchive.open(url);
    t.after(() => reader.close());
    assert.ok((await reader.restore('least', output)).equals(serializeDocument(doc)));
    assert.equal((await reader.findRestorable(output))?.id, 'least');
    assert.deepEqual(await reader.getEmbeddings('m', ['h']), new Map([['h', Float32Array.from([1, 2])]]), 'a dry run reads cached vectors');
    await as('devs_ctx_no_cache');
    await assert.rejects(postgresEmbeddingCache(url, { readOnly: false }).cache.getEmbeddings('m', ['h']), (error: unknown) => {
      assert.ok(error instanceof InputError, String(error));
      assert.match(error.message, /could not use its cache of Gemini vectors: permission denied for table embedding_cache/);
      assert.match(error.hint ?? '', /SELECT, INSERT on embedding_cache/);
      assert.doesNotMatch(error.message, /pw-Zq7/);
      return true;
    });
    await assert.rejects(
      reader.recordPrune({ ...e, id: 'not-allowed' }),
      (error: unknown) => error instanceof ArchiveWriteError && /permission denied/.test(error.message),
    );
  });

  test('embedding cache: the same bytes as SQLite stores (float32, little-endian), so a copy can carry them', async (t) => {
    const { url } = await startPostgres(t);
    const archive = await PostgresArchive.open(url);
    t.after(() => archive.close());
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-contract-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const sqlite = await openArchiveAt(join(dir, 'archive.sqlite'));
    const vector = [0.1, -2.5, 3e-8, 1e30, 0];
    await archive.putEmbeddings('m', [{ hash: 'h', vector }]);
    await sqlite.putEmbeddings('m', [{ hash: 'h', vector }]);
    await sqlite.close();
    const db = new (loadSqlite())(join(dir, 'archive.sqlite'), { readonly: true });
    const fromSqlite = db.prepare('SELECT dims, vector FROM embedding_cache').get() as { dims: number; vector: Buffer };
    db.close();
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.after(() => client.end());
    const fromPg = (await client.query('SELECT dims, vector FROM embedding_cache')).rows[0] as { dims: number; vector: Buffer };
    assert.equal(fromPg.dims, 5);
    assert.equal(fromPg.dims, fromSqlite.dims);
    assert.ok(fromPg.vector.equals(fromSqlite.vector), 'identical bytes in both stores');
    assert.equal(fromPg.vector.readFloatLE(4), Math.fround(-2.5));
    await assert.rejects(
      client.query("INSERT INTO embedding_cache VALUES ('m', 'bad', 2, '\\x00'::bytea, 'now')"),
      /check constraint/,
      'dims and bytes must agree',
    );
  });

  test("a dry run's vector cache never writes: no schema in an empty database, nothing stored in a set-up one", async (t) => {
    const { url } = await startPostgres(t);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.after(() => client.end());
    const dry = postgresEmbeddingCache(url, { readOnly: true });
    assert.deepEqual(await dry.cache.getEmbeddings('m', ['h']), new Map());
    await dry.cache.putEmbeddings('m', [{ hash: 'h', vector: [1] }]);
    assert.equal((await client.query("SELECT to_regclass('devs_ctx_schema_migrations') IS NULL AS absent")).rows[0].absent, true, 'not migrated');
    const wet = postgresEmbeddingCache(url, { readOnly: false });
    await wet.cache.putEmbeddings('m', [{ hash: 'h', vector: [1] }]);
    assert.deepEqual(await dry.cache.getEmbeddings('m', ['h']), new Map([['h', Float32Array.from([1])]]), 'the dry run reads what a prune cached');
    await dry.cache.putEmbeddings('m', [{ hash: 'h2', vector: [2] }]);
    assert.equal((await client.query('SELECT count(*)::int AS n FROM embedding_cache')).rows[0].n, 1, 'the dry run stored nothing');
  });

  test('a damaged PostgreSQL archive: restore is refused with a hint for PostgreSQL, not sqlite3', async (t) => {
    const { url } = await startPostgres(t);
    const archive = await PostgresArchive.open(url);
    t.after(() => archive.close());
    const doc = fixtureDoc('devs', 'basic-session.jsonl');
    const { event: e, output } = realPrune('dmg', doc);
    await archive.recordPrune(e);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.after(() => client.end());
    const refused =
      (detail: RegExp) =>
      (error: unknown): boolean => {
        assert.ok(error instanceof ArchiveCorruptError);
        assert.match(error.message, detail);
        assert.match(error.hint ?? '', /PostgreSQL archive may be damaged.*pg_amcheck/);
        assert.doesNotMatch(error.hint ?? '', /sqlite3|integrity_check/);
        return true;
      };
    // A record the layout needs is gone (the check shared with SQLite), then the layout itself.
    await client.query(
      "DELETE FROM archived_records WHERE event_id = 'dmg' AND record_index = (SELECT min(record_index) FROM archived_records WHERE event_id = 'dmg')",
    );
    await assert.rejects(archive.restore('dmg', output), refused(/archived record \d+ is missing/));
    await client.query("UPDATE prune_events SET layout = 'not json' WHERE id = 'dmg'");
    await assert.rejects(archive.restore('dmg', output), refused(/restore layout is not readable/));
  });

  test('an archive that must exist is not created in an empty database', async (t) => {
    const { url } = await startPostgres(t);
    await assert.rejects(PostgresArchive.open(url, { mustExist: true }), /no devs-ctx archive in this database/);
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.after(() => client.end());
    assert.equal((await client.query("SELECT to_regclass('prune_events') IS NULL AS absent")).rows[0].absent, true);
  });

  test('tsQueries quotes every word, so nothing typed is tsquery syntax', () => {
    assert.deepEqual(tsQueries("a-b c* it's"), { allTerms: "('a' <-> 'b') & ('c':*) & ('it' <-> 's')", anyTerm: "('a' <-> 'b') | ('c':*) | ('it' <-> 's')" });
    assert.deepEqual(tsQueries('Café'), { allTerms: "('cafe')", anyTerm: "('cafe')" });
    assert.equal(tsQueries(' * ** '), undefined);
  });

  test('redactUrl hides the password and password-like parameters', () => {
    assert.equal(redactUrl('postgres://u:secret@h:5432/db?sslmode=require'), 'postgres://u:***@h:5432/db?sslmode=require');
    assert.equal(redactUrl('postgres://u@h/db?password=secret'), 'postgres://u@h/db?password=***');
    assert.doesNotMatch(redactUrl('postgres://u:se cret@h/db%'), /se cret/);
    // A password written without percent-encoding: every character of it stays hidden, however the URL parses.
    for (const url of [
      'postgres://devs_ctx:hunter2/SECRET@127.0.0.1:5432/team',
      'postgres://devs_ctx:p@ss/SECRET@127.0.0.1:5432/team',
      'postgres:/devs_ctx:hunter2-SECRET@db.internal:5432/team',
      'postgresql://u:a:b?c#SECRET@h/db',
      'postgres://u@h/db?sslmode=require&password=SECRET&x=1',
    ]) {
      const shown = redactUrl(url);
      assert.doesNotMatch(shown, /SECRET|hunter2|ss\//, `${url} -> ${shown}`);
      assert.match(shown, /@/, `${url}: the host stays readable (${shown})`);
    }
    // An `@` in a parameter may hide more than the password (the host and port here), never less.
    assert.doesNotMatch(redactUrl('postgres://devs_ctx@db.internal:5432/team?application_name=ci@laptop'), /laptop.*laptop/);
  });
});
