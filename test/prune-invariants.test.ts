import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ArchiveStore } from '../src/archive/store.js';
import { countEntries } from '../src/core/accounting.js';
import { DEFAULT_PRUNER_CONFIG } from '../src/core/policy.js';
import { summaryReserveFor } from '../src/core/prune/engine.js';
import type { PruneStrategy } from '../src/core/prune/plan.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import type { Transcript } from '../src/core/transcript.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument, serializeDocument } from '../src/io/jsonl.js';
import type { ParsedDocument } from '../src/io/jsonl.js';
import { pruneDocument } from '../src/prune/document.js';
import { ExtractiveSummarizer } from '../src/providers/extractive-summarizer.js';
import { LocalEmbedder } from '../src/providers/local-embedder.js';
import { sequentialIds } from './helpers/edits.js';
import { seeded } from './helpers/prng.js';

/**
 * The prune guarantees, checked on many generated transcripts in two formats: pinned turns
 * byte-identical, no orphaned tool calls, the target (or the hard limit) met, the input not
 * mutated, a second prune a no-op, and the archive restoring the original bytes.
 */

const counter = loadCounter('o200k_base');
const WORDS = (
  'payment webhook retry backoff database migration schema index query cache test fixture build deploy ' +
  'config parser token window summary archive restore handler request response error timeout queue worker ' +
  'src/app.ts src/db/schema.ts lib/retry.ts README.md parseConfig handleRetry MAX_ATTEMPTS user_id'
).split(' ');

function words(rand: () => number, n: number): string {
  return Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
}

type Line = Record<string, unknown>;

/** A session: system + prd, then user requests, reasoning, (parallel) tool calls with results, a TAS mid-way. */
function generateTurns(seed: number): Line[] {
  const rand = seeded(seed);
  const lines: Line[] = [
    { id: 'sys', role: 'system', type: 'system', content: `You are the agent. ${words(rand, 30)}` },
    { id: 'prd', role: 'user', type: 'prd', content: `PRD: ${words(rand, 80)}` },
  ];
  const n = 25 + Math.floor(rand() * 50);
  let call = 0;
  for (let i = 0; i < n; i++) {
    const r = rand();
    if (r < 0.15) lines.push({ id: `u${i}`, role: 'user', type: 'message', content: `Please ${words(rand, 10 + Math.floor(rand() * 30))}` });
    else if (r < 0.3) lines.push({ id: `a${i}`, role: 'assistant', type: 'reasoning', content: words(rand, 20 + Math.floor(rand() * 200)) });
    else if (r < 0.35) lines.push({ id: `tas${i}`, role: 'user', type: 'tas', content: `TAS: ${words(rand, 60)}` });
    else if (r < 0.4) lines.push({ id: `pin${i}`, role: 'assistant', type: 'message', pinned: true, content: `Decision: ${words(rand, 20)}` });
    else {
      const parallel = 1 + Math.floor(rand() * 3);
      const ids = Array.from({ length: parallel }, () => `call${call++}`);
      for (const id of ids)
        lines.push({ id: `${id}-c`, role: 'assistant', type: 'tool_call', callId: id, content: `shell {"command":"grep ${words(rand, 2)}"}` });
      for (const id of ids) lines.push({ id: `${id}-r`, role: 'tool', type: 'tool_result', callId: id, content: words(rand, 50 + Math.floor(rand() * 900)) });
    }
  }
  lines.push({ id: 'last', role: 'user', type: 'message', content: `Now ${words(rand, 12)}` });
  return lines;
}

/** The same session as OpenAI chat messages, one per line. */
function asOpenAiChat(turns: Line[]): Line[] {
  const out: Line[] = [];
  for (let i = 0; i < turns.length; i++) {
    const t = turns[i] as Line;
    if (t['type'] === 'tool_call') {
      const calls: Line[] = [];
      while (i < turns.length && (turns[i] as Line)['type'] === 'tool_call') {
        const c = turns[i] as Line;
        calls.push({ id: c['callId'], type: 'function', function: { name: 'shell', arguments: JSON.stringify({ command: c['content'] }) } });
        i++;
      }
      i--;
      out.push({ role: 'assistant', content: null, tool_calls: calls });
    } else if (t['type'] === 'tool_result') out.push({ role: 'tool', tool_call_id: t['callId'], content: t['content'] });
    else if (t['role'] === 'system') out.push({ role: 'system', content: t['content'] });
    else out.push({ role: t['role'] === 'tool' ? 'user' : t['role'], content: t['content'] });
  }
  return out;
}

const toDoc = (lines: Line[], path: string): ParsedDocument =>
  parseDocument(Buffer.from(`${lines.map((l) => JSON.stringify(l)).join('\n')}\n`), { path, keepRaw: true });

const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-invariants-'));
const store = ArchiveStore.open(join(dir, 'archive.sqlite'));
after(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function total(transcript: Transcript): number {
  return countEntries(transcript.entries, counter).reduce((s, t) => s + t.total, 0);
}

async function pruneOnce(
  doc: ParsedDocument,
  transcript: Transcript,
  limits: { soft: number; hard: number; target: number; strategy: PruneStrategy; force?: boolean },
  eventId: string,
) {
  return pruneDocument(doc, transcript, {
    tokens: countEntries(transcript.entries, counter).map((t) => t.total),
    counter,
    policy: {
      ...DEFAULT_PRUNER_CONFIG,
      softLimitTokens: limits.soft,
      hardLimitTokens: limits.hard,
      targetTokens: limits.target,
      strategy: limits.strategy,
      force: limits.force === true,
      summaryReserveTokens: summaryReserveFor(),
    },
    embedder: new LocalEmbedder(transcript.entries.map((e) => e.turn.content)),
    summarizer: new ExtractiveSummarizer(counter),
    eventId,
    now: '2026-11-23T12:00:00.000Z',
    newId: sequentialIds(),
  });
}

for (const format of ['devs', 'openai-chat'] as const) {
  describe(`prune invariants on generated ${format} transcripts`, () => {
    const tally = { pruned: 0, dropped: 0, masked: 0, hard: 0, failedClosed: 0, other: 0 };
    for (let seed = 1; seed <= 20; seed++) {
      test(`seed ${seed}`, async () => {
        const rand = seeded(seed * 7919);
        const turns = generateTurns(seed);
        const doc = toDoc(format === 'devs' ? turns : asOpenAiChat(turns), `gen-${format}-${seed}.jsonl`);
        const originalBytes = serializeDocument(doc);
        const transcript = readTranscript(doc, format);
        const frozen = JSON.stringify(transcript.entries);
        const before = total(transcript);
        // Limits around the transcript's size: sometimes soft, sometimes hard urgency.
        const hard = Math.floor(before * (0.7 + rand() * 0.6));
        const soft = Math.floor(hard * 0.6);
        const target = Math.max(Math.floor(soft * (0.02 + rand() * 0.3)), 800);
        const strategy: PruneStrategy = rand() < 0.5 ? 'relevance' : 'recency';
        const eventId = `00000000-0000-4000-8000-${String(seed).padStart(6, '0')}${format === 'devs' ? '000001' : '000002'}`;
        const limits = { soft, hard, target, strategy };

        let result: Awaited<ReturnType<typeof pruneOnce>>;
        try {
          result = await pruneOnce(doc, transcript, limits, eventId);
        } catch (error) {
          // Failing closed is allowed only for the documented reason: a summary that cannot be smaller.
          assert.match(String(error), /summary/);
          tally.failedClosed++;
          return;
        }
        const { prepared, written } = result;
        assert.equal(serializeDocument(doc).equals(originalBytes), true, 'input bytes not mutated');
        assert.equal(JSON.stringify(transcript.entries), frozen, 'input entries not mutated');
        if (prepared.plan.outcome === 'impossible') {
          assert.ok(prepared.plan.urgency === 'hard');
          tally.other++;
          return;
        }
        if (!written || !result.after) {
          assert.equal(prepared.plan.outcome, 'no-change');
          tally.other++;
          return;
        }
        tally.pruned++;
        if (prepared.plan.dropped.size > 0) tally.dropped++;
        if (prepared.plan.masked.size > 0) tally.masked++;
        if (prepared.plan.urgency === 'hard') tally.hard++;

        // Pinned turns: their lines come through byte for byte.
        const reused = new Set(written.records.flatMap((r) => ('from' in r ? [r.from] : [])));
        for (const i of prepared.plan.pinned) {
          for (const record of transcript.entries[i]?.source.records ?? [])
            assert.ok(reused.has(record), `pinned entry ${i} (line ${record + 1}) is byte-identical`);
        }
        // No tool call without its result, or result without its call.
        const calls = new Set<string>();
        const answered = new Set<string>();
        for (const e of written.readBack.entries) {
          for (const id of e.links?.calls ?? (e.turn.type === 'tool_call' && typeof e.turn['callId'] === 'string' ? [e.turn['callId']] : [])) calls.add(id);
          for (const id of e.links?.answers ?? (e.turn.type === 'tool_result' && typeof e.turn['callId'] === 'string' ? [e.turn['callId']] : [])) {
            assert.ok(calls.has(id), `result for ${id} has its call`);
            answered.add(id);
          }
        }
        assert.deepEqual(
          [...calls].filter((id) => !answered.has(id)),
          [],
          'every call is answered',
        );
        // The budget: the estimate is exact, the target is met unless the pinned turns and tail hold more.
        assert.equal(result.after.tokens, prepared.plan.tokensAfterActions + prepared.summaryTokens);
        const credited = prepared.plan.actions.reduce((sum, a) => sum + a.tokensSaved, 0);
        assert.equal(credited, before - prepared.plan.tokensAfterActions, 'the actions add up to what the plan saves');
        if (prepared.plan.reachedTarget) assert.ok(result.after.tokens <= target, `${result.after.tokens} <= ${target}`);
        if (prepared.plan.urgency === 'hard') assert.ok(result.after.tokens < hard);
        assert.equal(written.readBack.entries.filter((e) => e.turn.content.startsWith('[Context Summary]')).length, prepared.plan.dropped.size > 0 ? 1 : 0);

        // A second prune of the pruned transcript changes nothing.
        const again = await pruneOnce(written.document, written.readBack, limits, `${eventId}-again`);
        assert.equal(again.prepared.plan.outcome, 'no-change');
        if (prepared.plan.reachedTarget) {
          const forced = await pruneOnce(written.document, written.readBack, { ...limits, force: true }, `${eventId}-forced`);
          assert.equal(forced.prepared.plan.outcome, 'no-change');
        }

        // The archive brings back the original bytes.
        store.recordPrune({
          id: eventId,
          createdAt: '2026-11-23T12:00:00.000Z',
          sourcePath: doc.path,
          format,
          strategy,
          targetTokens: target,
          urgency: prepared.plan.urgency,
          tokensBefore: before,
          tokensAfter: result.after.tokens,
          removedTurnCount: prepared.plan.dropped.size,
          maskedTurnCount: prepared.plan.masked.size,
          tokensSaved: before - result.after.tokens,
          input: doc,
          output: { records: written.records, bytes: written.bytes },
          turns: [...prepared.plan.dropped, ...prepared.plan.masked].map((i) => {
            const e = transcript.entries[i];
            assert.ok(e);
            return {
              entryIndex: i,
              turnId: e.turn.id,
              role: e.turn.role,
              type: e.turn.type,
              action: prepared.plan.dropped.has(i) ? ('dropped' as const) : ('masked' as const),
              tokens: 0,
              content: e.turn.content,
              records: e.source.records,
            };
          }),
        });
        assert.ok(store.restore(eventId, written.bytes).equals(originalBytes), 'restore gives the original bytes');
      });
    }
    test('the generated cases exercise drops, masks and hard urgency', () => {
      assert.ok(tally.pruned >= 15, JSON.stringify(tally));
      console.log(`tally ${JSON.stringify(tally)}`);
      assert.ok(tally.dropped >= 10 && tally.masked >= 10 && tally.hard >= 3, JSON.stringify(tally));
    });
  });
}
