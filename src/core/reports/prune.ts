import type { PruneUrgency } from '../policy.js';
import type { FormatName, TranscriptEntry } from '../transcript.js';
import type { ContextPrunedEvent } from '../prune/context-pruner.js';
import type { PreparedPrune } from '../prune/engine.js';
import type { FallbackEvent } from '../provider-contracts.js';
import type { PruneActionKind, PruneStrategy } from '../prune/plan.js';
import { toModelTokens } from '../context-size.js';
import type { Calibration, ContextBasis } from '../context-size.js';
import { clip } from '../text-cut.js';
import type { ReadIssue } from '../issues.js';

export const PRUNE_SCHEMA_VERSION = 1;

/** What `devs-ctx prune --json` prints (schemaVersion 1). */
export interface PruneReport {
  readonly schemaVersion: typeof PRUNE_SCHEMA_VERSION;
  readonly file: string;
  readonly format: FormatName;
  readonly dryRun: boolean;
  /** `pruned`: the transcript changed; `no-change`: it is written back as it was. */
  readonly outcome: 'pruned' | 'no-change';
  /** Why nothing changed, when it did not. */
  readonly reason?: string;
  readonly urgency: PruneUrgency;
  readonly strategy: PruneStrategy;
  readonly goal: { readonly source: 'flag' | 'transcript' | 'none'; readonly text: string };
  /** In the model's tokens (see `context`), like `before`, `after` and the event's totals. */
  readonly limits: { readonly soft: number; readonly hard: number; readonly target: number };
  /**
   * How the model's tokens were found: model = overhead + scale × estimate, calibrated on the
   * session's recorded API calls; `estimate` holds the planner's figures (our tokenizer, the turns only).
   */
  readonly context?: {
    readonly basis: ContextBasis;
    readonly overhead: number;
    readonly scale: number;
    readonly estimate: { readonly before: number; readonly after: number; readonly target: number };
  };
  readonly before: { readonly turns: number; readonly tokens: number };
  readonly after: { readonly turns: number; readonly tokens: number };
  readonly reachedTarget: boolean;
  /** [SPEC §6] The event; null when nothing was pruned. */
  readonly event: ContextPrunedEvent | null;
  readonly dropped: { readonly turns: number; readonly tokens: number; readonly fromProtectedTail: number };
  readonly masked: { readonly turns: number; readonly tokensSaved: number };
  readonly summary: { readonly tokens: number; readonly text: string } | null;
  readonly archive: { readonly path: string; readonly eventId: string } | null;
  /** Where the pruned transcript went: a path, `-` for stdout, or null (dry run, or nothing written). */
  readonly output: string | null;
  /** Who summarized and ranked, and what remote calls cost (absent before issue 4's fields existed: additive). */
  readonly providers?: ProvidersReport;
  /** [SPEC §4] Lines the transcript's reader skipped or found odd, with their line numbers, as `analyze` reports them (additive). */
  readonly issues: readonly ReadIssue[];
  readonly actions: readonly {
    readonly kind: PruneActionKind;
    readonly turns: readonly { readonly id: string; readonly type: string; readonly tokens: number }[];
    readonly tokensSaved: number;
    readonly reason: string;
  }[];
}

/** The report's `providers` block (SPEC §7, issue 4): who summarized and ranked, at what cost. */
export interface ProvidersReport {
  readonly summarizer: string;
  readonly embedder: string;
  readonly fallback: readonly FallbackEvent[];
  readonly requests: number;
  readonly retries: number;
  readonly tokensSent: number;
  readonly tokensReceived: number;
  readonly embeddingTokens: number;
  readonly embeddingsCached: number;
  /** US dollars, estimated from list prices; null for a model without a known price. */
  readonly estimatedCostUsd: number | null;
  readonly pricesAsOf: string;
  readonly redacted: { readonly total: number; readonly byKind: Readonly<Record<string, number>> } | null;
}

export interface PruneReportInput {
  readonly file: string;
  readonly format: FormatName;
  readonly dryRun: boolean;
  readonly prepared: PreparedPrune;
  readonly entries: readonly TranscriptEntry[];
  readonly tokens: readonly number[];
  readonly softLimit: number;
  /** Counted from the written output read back (the estimate when not written). */
  readonly after?: { readonly turns: number; readonly tokens: number };
  readonly archive?: { readonly path: string; readonly eventId: string };
  readonly output: string | null;
  readonly providers?: ProvidersReport;
  /** The session's calibration (estimate → model tokens) and hard limit in model tokens; identity when absent. */
  readonly calibration?: Calibration;
  readonly modelLimits?: { readonly soft: number; readonly hard: number; readonly target: number };
  /** Lines the reader skipped or found odd (the document's and the format's). */
  readonly issues?: readonly ReadIssue[];
}

export function buildPruneReport(input: PruneReportInput): PruneReport {
  const { prepared, entries, tokens } = input;
  const { plan } = prepared;
  const changed = plan.outcome === 'prune' && prepared.edit !== undefined;
  const estimateBefore = { turns: entries.length, tokens: plan.totalBefore };
  const estimatedAfter = {
    turns: entries.length - plan.dropped.size + (prepared.summaryText !== undefined ? 1 : 0),
    tokens: changed ? plan.tokensAfterActions + prepared.summaryTokens : plan.totalBefore,
  };
  const estimateAfter = input.after ?? estimatedAfter;
  const cal = input.calibration;
  const m = (tokens: number): number => (cal ? toModelTokens(cal, tokens) : tokens);
  const before = { turns: estimateBefore.turns, tokens: m(estimateBefore.tokens) };
  const after = { turns: estimateAfter.turns, tokens: m(estimateAfter.tokens) };
  const limits = input.modelLimits ?? { soft: input.softLimit, hard: plan.hardLimitTokens, target: plan.targetTokens };
  let droppedTokens = 0;
  for (const i of plan.dropped) droppedTokens += tokens[i] ?? 0;
  const maskSaved = plan.actions.filter((a) => a.kind === 'mask').reduce((sum, a) => sum + a.tokensSaved, 0);
  return {
    schemaVersion: PRUNE_SCHEMA_VERSION,
    file: input.file,
    format: input.format,
    dryRun: input.dryRun,
    outcome: changed ? 'pruned' : 'no-change',
    ...(plan.note !== undefined && !changed ? { reason: plan.note } : {}),
    urgency: plan.urgency,
    strategy: plan.strategy,
    goal: { source: prepared.goalSource, text: clip(prepared.goal, 500) },
    limits,
    ...(cal
      ? {
          context: {
            basis: cal.basis,
            overhead: cal.overhead,
            scale: cal.scale,
            estimate: { before: estimateBefore.tokens, after: estimateAfter.tokens, target: plan.targetTokens },
          },
        }
      : {}),
    before,
    after,
    reachedTarget: estimateAfter.tokens <= plan.targetTokens,
    event: changed ? { event: 'context_pruned', removedTurnCount: plan.dropped.size, tokensSaved: before.tokens - after.tokens, newTotal: after.tokens } : null,
    dropped: { turns: plan.dropped.size, tokens: droppedTokens, fromProtectedTail: plan.tailEntriesDropped },
    masked: { turns: plan.masked.size, tokensSaved: maskSaved },
    summary: prepared.summaryText !== undefined ? { tokens: prepared.summaryTokens, text: prepared.summaryText } : null,
    archive: input.archive ?? null,
    output: input.output,
    ...(input.providers ? { providers: input.providers } : {}),
    issues: input.issues ?? [],
    actions: plan.actions.map((action) => ({
      kind: action.kind,
      turns: action.entries.map((i) => ({ id: entries[i]?.turn.id ?? `#${i}`, type: entries[i]?.turn.type ?? 'message', tokens: tokens[i] ?? 0 })),
      tokensSaved: action.tokensSaved,
      reason: action.reason,
    })),
  };
}
