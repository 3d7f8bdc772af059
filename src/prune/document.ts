/*
 * The prune application service, one transcript at a time. What a prune does, in order:
 * 1. plan (core/prune/engine `startPlanning`): goal, masked sizes, ranking once, the plan;
 * 2. review (optional, `prune --interactive`): pins and target, re-planned without ranking again;
 * 3. summarize (core/prune/engine `summarizePlan`): the summary and the edit;
 * 4. write and verify (`writeAndVerify` here): the format's writer, its validator, the read-back check;
 * 5. archive, then write the file (`archiveThenWrite` in ./commit.ts; rows from archive/prune-event.ts).
 * The CLI's `prune` (cli/commands/prune.ts) parses, loads, runs this, writes and renders.
 */
import type { TextTokenCounter } from '../core/accounting.js';
import { countEntries } from '../core/accounting.js';
import { pacedMap } from '../core/pace.js';
import type { Pacer } from '../core/pace.js';
import { startPlanning, summarizePlan } from '../core/prune/engine.js';
import type { PreparedPrune, PrunePlanning, PruneRequest } from '../core/prune/engine.js';
import type { TranscriptEdit } from '../core/prune/edit.js';
import { verifyReadBack } from '../core/prune/verify.js';
import type { Transcript } from '../core/transcript.js';
import { InvalidOutputError, writeTranscript } from '../formats/write.js';
import type { WrittenTranscript } from '../formats/write.js';
import { writerFor } from '../formats/index.js';
import type { ParsedDocument } from '../io/jsonl.js';

export interface DocumentPrune {
  readonly prepared: PreparedPrune;
  /** Undefined when the plan changes nothing. */
  readonly written?: WrittenTranscript;
  /** Counted from the written output read back. */
  readonly after?: { readonly turns: number; readonly tokens: number };
}

/** What the user decided while reviewing the plan (`prune --interactive`): the target, and the turns to keep as pinned. */
export interface ReviewedPlan {
  readonly targetTokens: number;
  readonly pins: ReadonlySet<number>;
}

export type DocumentPruneRequest = Omit<PruneRequest, 'entries'> & {
  readonly counter: TextTokenCounter;
  /**
   * Entries to keep as if they were pinned, for this prune only (`prune --interactive`): they are
   * planned as pinned and checked byte for byte like pinned turns, but the file does not say so.
   */
  readonly pins?: ReadonlySet<number>;
  /**
   * Called between the plan step and the summary, with the planning (already-ranked plans for any
   * pins and target): its answer replaces the target and the pins. Ranking is never done twice.
   */
  readonly review?: (planning: PrunePlanning) => Promise<ReviewedPlan>;
};

/**
 * The whole prune of one parsed transcript, without touching any file: the plan step (goal,
 * ranking, plan), an optional review of it, the summary, the format's writer and the checks of what
 * it wrote. An output that fails a check is a bug (InvalidOutputError, exit 1) and is never returned.
 */
export async function pruneDocument(doc: ParsedDocument, transcript: Transcript, request: DocumentPruneRequest): Promise<DocumentPrune> {
  const planning = await startPlanning({ ...request, entries: transcript.entries });
  const reviewed = request.review ? await request.review(planning) : undefined;
  const policy = reviewed ? { ...request.policy, targetTokens: reviewed.targetTokens } : request.policy;
  const planned = await planning.plan(policy, reviewed?.pins ?? request.pins);
  const prepared = await summarizePlan(planned, request);
  if (prepared.plan.outcome !== 'prune' || !prepared.edit) return { prepared };
  return { prepared, ...(await writeAndVerify(doc, transcript, { edit: prepared.edit, pinned: prepared.plan.pinned }, request.counter, request.pacer)) };
}

/**
 * The write-and-verify step: the format's writer, its structural validator, and the check that the
 * output reads back as the kept turns plus one summary with every pinned turn unchanged; then the
 * output's turns counted as read back.
 */
async function writeAndVerify(
  doc: ParsedDocument,
  transcript: Transcript,
  change: { readonly edit: TranscriptEdit; readonly pinned: readonly number[] },
  counter: TextTokenCounter,
  pacer?: Pacer,
): Promise<Required<Omit<DocumentPrune, 'prepared'>>> {
  await pacer?.tick();
  const written = writeTranscript(doc, transcript, change.edit, writerFor(transcript.format));
  const problems = verifyReadBack(transcript.entries, change.edit, written.readBack.entries, change.pinned);
  if (problems.length > 0) throw new InvalidOutputError(transcript.format, problems);
  await pacer?.tick();
  const counts = await pacedMap(written.readBack.entries, (entry) => countEntries([entry], counter)[0]?.total ?? 0, pacer);
  const tokens = counts.reduce((sum, t) => sum + t, 0);
  return { written, after: { turns: written.readBack.entries.length, tokens } };
}
