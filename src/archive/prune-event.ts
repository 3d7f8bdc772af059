import type { PrunePlan } from '../core/prune/plan.js';
import type { TranscriptEntry } from '../core/transcript.js';
import type { ArchivedTurnInput, PruneEventInput } from './records.js';

/** A prune as it will be written, told in what the archive keeps of it. */
interface PruneOutcome
  extends Pick<
    PruneEventInput,
    'id' | 'createdAt' | 'sourcePath' | 'format' | 'strategy' | 'targetTokens' | 'goal' | 'summaryText' | 'input' | 'inputBytes' | 'output'
  > {
  readonly plan: PrunePlan;
  readonly entries: readonly TranscriptEntry[];
  /** Tokens each entry counted before the prune (same order). */
  readonly tokens: readonly number[];
  /** Tokens of the output, counted as read back. */
  readonly tokensAfter: number;
}

/** The event a prune is archived as: its numbers, the input and output, and one row per dropped or masked turn. */
export function pruneEvent(outcome: PruneOutcome): PruneEventInput {
  const { plan } = outcome;
  return {
    id: outcome.id,
    createdAt: outcome.createdAt,
    sourcePath: outcome.sourcePath,
    format: outcome.format,
    strategy: outcome.strategy,
    targetTokens: outcome.targetTokens,
    urgency: plan.urgency,
    ...(outcome.goal ? { goal: outcome.goal } : {}),
    tokensBefore: plan.totalBefore,
    tokensAfter: outcome.tokensAfter,
    removedTurnCount: plan.dropped.size,
    maskedTurnCount: plan.masked.size,
    tokensSaved: plan.totalBefore - outcome.tokensAfter,
    ...(outcome.summaryText !== undefined ? { summaryText: outcome.summaryText } : {}),
    input: outcome.input,
    ...(outcome.inputBytes ? { inputBytes: outcome.inputBytes } : {}),
    output: { records: outcome.output.records, bytes: outcome.output.bytes },
    turns: archivedTurns(
      outcome.entries,
      outcome.tokens,
      [...plan.dropped, ...plan.masked].sort((a, b) => a - b),
      (i) => (plan.dropped.has(i) ? 'dropped' : 'masked'),
    ),
  };
}

/** One archived row per entry index: the turn's whole text, its tokens and the input records it came from. */
export function archivedTurns(
  entries: readonly TranscriptEntry[],
  tokens: readonly number[],
  indexes: readonly number[],
  action: (index: number) => ArchivedTurnInput['action'],
): ArchivedTurnInput[] {
  return indexes.map((i) => {
    const entry = entries[i];
    if (!entry) throw new Error(`entry ${i} missing`);
    return {
      entryIndex: i,
      turnId: entry.turn.id,
      role: entry.turn.role,
      type: entry.turn.type,
      action: action(i),
      tokens: tokens[i] ?? 0,
      content: entry.turn.content,
      ...(entry.turn.timestamp !== undefined ? { timestamp: entry.turn.timestamp } : {}),
      records: entry.source.records,
    };
  });
}
