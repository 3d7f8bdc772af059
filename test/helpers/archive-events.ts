import type { ArchivedTurnInput, PruneEventInput } from '../../src/archive/store.js';
import type { OutputRecord } from '../../src/formats/types.js';
import { renderOutput } from '../../src/formats/write.js';
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
  return { entryIndex, turnId: `turn-${entryIndex}`, role: 'assistant', type: 'message', action: 'dropped', tokens: 10, content, records: [entryIndex], ...extra };
}
