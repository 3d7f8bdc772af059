import type { TextTokenCounter } from '../core/accounting.js';
import { countEntries } from '../core/accounting.js';
import { pacedMap } from '../core/pace.js';
import { preparePrune } from '../core/prune/engine.js';
import type { PreparedPrune, PruneRequest } from '../core/prune/engine.js';
import { verifyReadBack } from '../core/prune/verify.js';
import type { Transcript } from '../core/transcript.js';
import { InvalidOutputError, writeTranscript } from '../formats/write.js';
import type { WrittenTranscript } from '../formats/write.js';
import { writerFor } from '../formats/index.js';
import type { ParsedDocument } from './jsonl.js';

export interface DocumentPrune {
  readonly prepared: PreparedPrune;
  /** Undefined when the plan changes nothing. */
  readonly written?: WrittenTranscript;
  /** Counted from the written output read back. */
  readonly after?: { readonly turns: number; readonly tokens: number };
}

/**
 * The whole prune of one parsed transcript, without touching any file: plan and summary (core),
 * the format's writer, its structural validator, and the check that the output reads back as the
 * kept turns plus one summary with every pinned turn unchanged. An output that fails either check
 * is a bug (InvalidOutputError, exit 1) and is never returned.
 */
export async function pruneDocument(
  doc: ParsedDocument,
  transcript: Transcript,
  request: Omit<PruneRequest, 'entries'> & {
    readonly counter: TextTokenCounter;
    /**
     * Entries to keep as if they were pinned, for this prune only (`prune --interactive`): they are
     * planned as pinned and checked byte for byte like pinned turns, but the file does not say so.
     */
    readonly pins?: ReadonlySet<number>;
  },
): Promise<DocumentPrune> {
  const { pins } = request;
  const entries = pins && pins.size > 0 ? transcript.entries.map((e, i) => (pins.has(i) ? { ...e, turn: { ...e.turn, pinned: true } } : e)) : transcript.entries;
  const prepared = await preparePrune({ ...request, entries });
  if (prepared.plan.outcome !== 'prune' || !prepared.edit) return { prepared };
  await request.pacer?.tick();
  const written = writeTranscript(doc, transcript, prepared.edit, writerFor(transcript.format));
  const problems = verifyReadBack(transcript.entries, prepared.edit, written.readBack.entries, prepared.plan.pinned);
  if (problems.length > 0) throw new InvalidOutputError(transcript.format, problems);
  await request.pacer?.tick();
  const counts = await pacedMap(written.readBack.entries, (entry) => countEntries([entry], request.counter)[0]?.total ?? 0, request.pacer);
  const tokens = counts.reduce((sum, t) => sum + t, 0);
  return { prepared, written, after: { turns: written.readBack.entries.length, tokens } };
}
