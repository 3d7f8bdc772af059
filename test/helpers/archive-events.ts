import type { ArchivedTurnInput, PruneEventInput } from '../../src/archive/records.js';
import type { OutputRecord } from '../../src/formats/types.js';
import { renderOutput } from '../../src/formats/write.js';
import { parseDocument } from '../../src/io/jsonl.js';
import type { ParsedDocument } from '../../src/io/jsonl.js';

/** A prune event of `input` whose output is `records` rendered, with fixed metadata (archive tests). */
export function pruneEvent(id: string, input: ParsedDocument, records: readonly OutputRecord[], overrides: Partial<PruneEventInput> = {}): PruneEventInput {
  return {
    id,
    createdAt: '2026-11-23T12:00:00.000Z',
    sourcePath: '/tmp/session.jsonl',
    format: 'devs',
    strategy: 'budget',
    targetTokens: 1000,
    urgency: 'soft',
    tokensBefore: 5000,
    tokensAfter: 900,
    removedTurnCount: 0,
    maskedTurnCount: 0,
    tokensSaved: 4100,
    input,
    output: { records, bytes: renderOutput(input, records) },
    turns: [],
    ...overrides,
  };
}

/** An archived turn `turn-N` at entry N, dropped, from record N. */
export function archivedTurn(entryIndex: number, content: string, extra: Partial<ArchivedTurnInput> = {}): ArchivedTurnInput {
  return {
    entryIndex,
    turnId: `turn-${entryIndex}`,
    role: 'assistant',
    type: 'message',
    action: 'dropped',
    tokens: 10,
    content,
    records: [entryIndex],
    ...extra,
  };
}

/**
 * The two prunes every store's recall tests search: r1 of /p/one.jsonl (five turns: two about a
 * database lock, a masked tool result about cats, accents and CJK, query-syntax lookalikes and a
 * path) and r2 of /p/two.jsonl (one more database turn).
 */
export function recallEvents(): PruneEventInput[] {
  const input = parseDocument(Buffer.from('{"a":1}\n{"b":2}\n'), { path: 'inline', keepRaw: true });
  return [
    pruneEvent('r1', input, [{ from: 0 }], {
      sourcePath: '/p/one.jsonl',
      turns: [
        archivedTurn(0, 'The database migration failed with a lock timeout after the deploy.'),
        archivedTurn(1, 'database lock, database lock, database lock'),
        archivedTurn(2, 'Cats sleep most of the day.', { type: 'tool_result', role: 'tool', action: 'masked' }),
        archivedTurn(3, 'A naïve café in München serves Grüße and 日本語 text.'),
        archivedTurn(4, 'Quote "NEAR" AND OR NOT col:value (paren) * star - minus ^caret in src/archive/store.ts'),
      ],
    }),
    pruneEvent('r2', input, [{ from: 1 }], { sourcePath: '/p/two.jsonl', turns: [archivedTurn(0, 'another database story from a second session')] }),
  ];
}
