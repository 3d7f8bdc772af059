import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pruneEvent } from '../src/archive/prune-event.js';
import { SqliteArchive } from '../src/archive/sqlite-archive.js';
import { ArchiveStore } from '../src/archive/store.js';
import { countEntries } from '../src/core/accounting.js';
import { ExitCode, ProviderError, ReplacedThenFailedError } from '../src/core/errors.js';
import { DEFAULT_PRUNER_CONFIG } from '../src/core/policy.js';
import { summaryReserveFor } from '../src/core/prune/engine.js';
import type { PrunePlan, PrunePolicy } from '../src/core/prune/plan.js';
import type { Embedder } from '../src/core/provider-contracts.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';
import { archiveThenWrite } from '../src/prune/commit.js';
import { pruneDocument } from '../src/prune/document.js';
import type { DocumentPrune, DocumentPruneRequest } from '../src/prune/document.js';
import { ExtractiveSummarizer } from '../src/providers/extractive-summarizer.js';
import { LocalEmbedder } from '../src/providers/local-embedder.js';
import { sequentialIds, TEST_NOW } from './helpers/edits.js';
import { repoRoot } from './helpers/realdata.js';

/** The prune service's steps on their own: plan (ranked once, reviewed or not) → summarize → write and verify → archive. */

const FILE = join(repoRoot, 'fixtures/devs/over-soft-limit.jsonl');
const doc = parseDocument(readFileSync(FILE), { path: FILE, keepRaw: true });
const transcript = readTranscript(doc, 'devs');
const counter = loadCounter('o200k_base');
const tokens = countEntries(transcript.entries, counter).map((t) => t.total);
const local = new LocalEmbedder(transcript.entries.map((e) => e.turn.content));
const policy: PrunePolicy & { targetTokens: number } = {
  ...DEFAULT_PRUNER_CONFIG,
  softLimitTokens: 2000,
  hardLimitTokens: 3000,
  targetTokens: 1000,
  strategy: 'relevance',
  force: false,
  summaryReserveTokens: summaryReserveFor(),
};

/** An embedder that counts the texts it is asked to embed. */
function counting(inner: Embedder): { embedder: Embedder; texts: () => number } {
  let texts = 0;
  return {
    embedder: {
      name: inner.name,
      embed: (batch, options) => {
        texts += batch.length;
        return inner.embed(batch, options);
      },
    },
    texts: () => texts,
  };
}

function request(embedder: Embedder, extra: Partial<DocumentPruneRequest> = {}): DocumentPruneRequest {
  return {
    tokens,
    counter,
    policy,
    embedder,
    summarizer: new ExtractiveSummarizer(counter),
    eventId: 'event-1',
    now: TEST_NOW,
    newId: sequentialIds(),
    ...extra,
  };
}

function written(result: DocumentPrune): Buffer {
  assert.ok(result.written, 'the prune wrote an output');
  return result.written.bytes;
}

describe('the plan step', () => {
  test('a review that confirms the plan: the same plan and bytes as a prune without one, the turns ranked once', async () => {
    const plain = counting(local);
    const without = await pruneDocument(doc, transcript, request(plain.embedder));
    assert.equal(without.prepared.plan.outcome, 'prune');
    assert.ok(plain.texts() > 0, 'the plain prune ranked the turns');

    const reviewed = counting(local);
    let shown: PrunePlan | undefined;
    const withReview = await pruneDocument(
      doc,
      transcript,
      request(reviewed.embedder, {
        review: async (planning) => {
          shown = (await planning.plan(policy)).plan;
          // The user tries pins and another target before confirming: no ranking again.
          await planning.plan(policy, new Set([without.prepared.plan.candidates[0] ?? 0]));
          await planning.plan({ ...policy, targetTokens: 800 });
          return { targetTokens: policy.targetTokens, pins: new Set() };
        },
      }),
    );
    assert.equal(reviewed.texts(), plain.texts(), 'ranked once, as many texts as the prune without a review');
    assert.deepEqual(shown?.dropped, without.prepared.plan.dropped);
    assert.deepEqual(withReview.prepared.plan.dropped, without.prepared.plan.dropped);
    assert.deepEqual(withReview.prepared.plan.masked, without.prepared.plan.masked);
    assert.ok(written(withReview).equals(written(without)));
  });

  test("a review's pins and target are what the prune carries out", async () => {
    const without = await pruneDocument(doc, transcript, request(local));
    const keep = [...without.prepared.plan.dropped].find(
      (i) => transcript.entries[i]?.turn.type !== 'tool_call' && transcript.entries[i]?.turn.type !== 'tool_result',
    );
    assert.ok(keep !== undefined, 'the plain prune drops a plain turn');
    const result = await pruneDocument(doc, transcript, request(local, { review: async () => ({ targetTokens: 1200, pins: new Set([keep]) }) }));
    assert.equal(result.prepared.plan.targetTokens, 1200);
    assert.ok(!result.prepared.plan.dropped.has(keep), 'the pinned turn is not dropped');
    assert.ok(result.prepared.plan.pinned.includes(keep));
    const id = transcript.entries[keep]?.turn.id;
    assert.ok(
      result.written?.readBack.entries.some((e) => e.turn.id === id),
      'the pinned turn is in the output',
    );
  });

  test('nothing to prune: nothing is ranked, and the result names no ranking', async () => {
    const quiet = counting(local);
    const result = await pruneDocument(
      doc,
      transcript,
      request(quiet.embedder, { policy: { ...policy, softLimitTokens: 500_000, hardLimitTokens: 800_000, targetTokens: 250_000 } }),
    );
    assert.equal(result.prepared.plan.outcome, 'no-change');
    assert.equal(quiet.texts(), 0);
    assert.equal(result.prepared.ranking, undefined);
    assert.equal(result.written, undefined);
  });
});

describe('the embedder fallback is a value', () => {
  const failing: Embedder = {
    name: 'remote',
    embed: () => Promise.reject(new ProviderError('HTTP 500 from the embedding service', 'remote')),
  };

  test('the embedder that ranked is named, with no fallback', async () => {
    const result = await pruneDocument(doc, transcript, request(local));
    assert.deepEqual(result.prepared.ranking && { embedder: result.prepared.ranking.embedder, fallback: result.prepared.ranking.fallback }, {
      embedder: 'local-bm25',
      fallback: undefined,
    });
  });

  test('the remote embedder fails: every turn is ranked with the fallback, and the result says so', async () => {
    const result = await pruneDocument(doc, transcript, request(failing, { fallbackEmbedder: local }));
    const ranking = result.prepared.ranking;
    assert.equal(ranking?.embedder, 'local-bm25');
    assert.deepEqual(ranking?.fallback, { provider: 'remote', reason: 'HTTP 500 from the embedding service', usedInstead: 'local-bm25' });
    // The same plan as ranking with the local embedder from the start.
    const direct = await pruneDocument(doc, transcript, request(local));
    assert.deepEqual(result.prepared.plan.dropped, direct.prepared.plan.dropped);
    assert.deepEqual(ranking?.relevance, direct.prepared.ranking?.relevance);
  });

  test('a review ranked with the fallback, then confirmed a target that prunes nothing: the result still says the fallback was used', async () => {
    const total = tokens.reduce((sum, t) => sum + t, 0);
    const result = await pruneDocument(
      doc,
      transcript,
      request(failing, {
        fallbackEmbedder: local,
        review: async (planning) => {
          assert.equal((await planning.plan(policy)).ranking?.fallback?.usedInstead, 'local-bm25');
          return { targetTokens: total, pins: new Set() };
        },
      }),
    );
    assert.equal(result.prepared.plan.outcome, 'no-change');
    assert.equal(result.prepared.ranking?.fallback?.provider, 'remote');
  });

  test('without a fallback the failure is the error', async () => {
    await assert.rejects(
      pruneDocument(doc, transcript, request(failing)),
      (error: unknown) => error instanceof ProviderError && /HTTP 500/.test(error.message),
    );
  });
});

describe('the archive step', () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-service-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function outcome(id: string) {
    const result = await pruneDocument(doc, transcript, request(local, { eventId: id }));
    const { prepared } = result;
    assert.ok(result.written && result.after);
    return pruneEvent({
      id,
      createdAt: TEST_NOW,
      sourcePath: FILE,
      format: transcript.format,
      strategy: policy.strategy,
      targetTokens: policy.targetTokens,
      plan: prepared.plan,
      goal: prepared.goal,
      ...(prepared.summaryText !== undefined ? { summaryText: prepared.summaryText } : {}),
      entries: transcript.entries,
      tokens,
      input: doc,
      output: result.written,
      tokensAfter: result.after.tokens,
    });
  }

  test('the event: one row per dropped or masked turn in entry order, with what the prune saved', async () => {
    const event = await outcome('event-rows');
    const result = await pruneDocument(doc, transcript, request(local));
    const { plan } = result.prepared;
    assert.deepEqual(
      event.turns.map((t) => t.entryIndex),
      [...plan.dropped, ...plan.masked].sort((a, b) => a - b),
    );
    for (const turn of event.turns) {
      assert.equal(turn.action, plan.dropped.has(turn.entryIndex) ? 'dropped' : 'masked');
      assert.equal(turn.content, transcript.entries[turn.entryIndex]?.turn.content);
      assert.equal(turn.tokens, tokens[turn.entryIndex]);
    }
    assert.equal(event.removedTurnCount, plan.dropped.size);
    assert.equal(event.maskedTurnCount, plan.masked.size);
    assert.equal(event.tokensSaved, plan.totalBefore - (result.after?.tokens ?? 0));
  });

  test('archived, then written; a write that fails takes the event back out', async () => {
    const archive = new SqliteArchive(ArchiveStore.open(join(dir, 'a.sqlite')));
    try {
      const kept = await outcome('event-kept');
      let wrote = false;
      await archiveThenWrite(
        { store: archive, event: kept },
        async () => {
          assert.equal((await archive.listEvents()).length, 1, 'archived before the write');
          wrote = true;
        },
        () => assert.fail('nothing to forget'),
      );
      assert.ok(wrote);

      const lost = await outcome('event-lost');
      await assert.rejects(
        archiveThenWrite(
          { store: archive, event: lost },
          () => Promise.reject(new Error('disk full')),
          () => assert.fail('forgetting works'),
        ),
        /disk full/,
      );
      assert.deepEqual(
        (await archive.listEvents()).map((e) => e.id),
        ['event-kept'],
      );
    } finally {
      await archive.close();
    }
  });

  test('a write that fails after the file was replaced keeps the event: the prune happened, and restore undoes it', async () => {
    const archive = new SqliteArchive(ArchiveStore.open(join(dir, 'replaced.sqlite')));
    try {
      const event = await outcome('event-replaced');
      await assert.rejects(
        archiveThenWrite(
          { store: archive, event },
          () => Promise.reject(new ReplacedThenFailedError('s.jsonl: replaced with the new version, but then: EIO')),
          () => assert.fail('nothing is taken out'),
        ),
        (error: unknown) =>
          error instanceof ReplacedThenFailedError && /but then: EIO; the prune is archived$/.test(error.message) && error.exitCode === ExitCode.input,
      );
      assert.deepEqual(
        (await archive.listEvents()).map((e) => e.id),
        ['event-replaced'],
      );
    } finally {
      await archive.close();
    }
  });

  test('when even taking the event out fails, the caller is told which event the archive still lists', async () => {
    const archive = new SqliteArchive(ArchiveStore.open(join(dir, 'b.sqlite')));
    const event = await outcome('event-stuck');
    const told: string[] = [];
    // The archive goes away while the transcript is written (closed here): the write fails, and so does forgetting.
    await assert.rejects(
      archiveThenWrite(
        { store: archive, event },
        async () => {
          await archive.close();
          throw new Error('disk full');
        },
        (id) => told.push(id),
      ),
      /disk full/,
    );
    assert.deepEqual(told, ['event-stuck']);
  });
});
