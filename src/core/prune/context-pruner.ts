import type { TextTokenCounter } from '../accounting.js';
import { BudgetImpossibleError } from '../errors.js';
import {
  DEFAULT_HARD_LIMIT_TOKENS,
  DEFAULT_PINNED_PREFIX_TURNS,
  DEFAULT_PROTECTED_TAIL_TURNS,
  DEFAULT_SOFT_LIMIT_TOKENS,
  PINNED_TURN_TYPES,
} from '../policy.js';
import type { PrunerConfig } from '../policy.js';
import type { Embedder, Summarizer } from '../provider-contracts.js';
import type { TranscriptEntry } from '../transcript.js';
import type { ContextWindow, ConversationTurn } from '../turn.js';
import { applyEdit } from './apply.js';
import { DRIFT_GUARD_PINNED_TYPES } from './context-entry.js';
import type { BudgetPruner, ContextEntry } from './context-entry.js';
import { preparePrune, summaryReserveFor } from './engine.js';
import { defaultTargetTokens } from './plan.js';
import type { PruneStrategy } from './plan.js';

/** [seed 000] What `prune(window, task)` answers. */
export interface PruneResult {
  readonly pruned: boolean;
  readonly window: ContextWindow;
  readonly removedTurnCount: number;
  readonly tokensSaved: number;
}

/** [SPEC §6, REQ-SYS-001] The event every prune emits. */
export interface ContextPrunedEvent {
  readonly event: 'context_pruned';
  readonly removedTurnCount: number;
  readonly tokensSaved: number;
  readonly newTotal: number;
}

export interface ContextPrunerOptions extends Partial<PrunerConfig> {
  /** Seed 000 names the summarization model here; kept for the summarizer's benefit, unused by the pruner. */
  readonly model?: string;
  readonly targetTokens?: number;
  readonly strategy?: PruneStrategy;
  /** The summary's share of the removed tokens (default 0.02; kept between 1,000 and 8,000 tokens). */
  readonly summaryShare?: number;
  /** Needed for `relevance`; without one, `recency` is used. */
  readonly embedder?: Embedder;
  /** Ranks every turn again with this one when `embedder` fails with a ProviderError (e.g. a local embedder behind a remote one). */
  readonly fallbackEmbedder?: Embedder;
  /** Counts text the pruner creates (summaries, placeholders) and turns without `tokenCount`. */
  readonly counter?: TextTokenCounter;
  readonly onEvent?: (event: ContextPrunedEvent) => void;
  readonly now?: () => Date;
  readonly newId?: () => string;
}

/** Rough count (4 characters a token) used only when no counter is given, so the library never loads a tokenizer by surprise. */
const roughCounter: TextTokenCounter = { count: (text) => Math.ceil(text.length / 4) };

/**
 * [TAS-024] [3_MCP-RISK-303] The library's pruner, with two named forms:
 * - `pruneWindow(window, activeTaskContext)` (async, seed 000): plan, summarize, one
 *   `[Context Summary]` turn where the removed turns were, pinned turns untouched;
 * - `pruneToBudget(entries, tokenBudget)` (sync, seed 002): a pure drift guard that never drops
 *   TAS, requirements or spec entries.
 * `prune(…)` is the seeds' single name for both and picks the form by its first argument (an array
 * of entries: the budget form, returning entries; a window: the window form, returning a promise).
 * The CLI runs the same engine.
 */
export class ContextPruner implements BudgetPruner {
  private readonly config: PrunerConfig;
  private readonly counter: TextTokenCounter;
  private eventCount = 0;

  constructor(
    private readonly summarizer: Summarizer,
    private readonly options: ContextPrunerOptions = {},
  ) {
    this.config = {
      softLimitTokens: options.softLimitTokens ?? DEFAULT_SOFT_LIMIT_TOKENS,
      hardLimitTokens: options.hardLimitTokens ?? DEFAULT_HARD_LIMIT_TOKENS,
      pinnedPrefixTurns: options.pinnedPrefixTurns ?? DEFAULT_PINNED_PREFIX_TURNS,
      pinnedTypes: options.pinnedTypes ?? PINNED_TURN_TYPES,
      protectedTailTurns: options.protectedTailTurns ?? DEFAULT_PROTECTED_TAIL_TURNS,
    };
    this.counter = options.counter ?? roughCounter;
  }

  /** The seeds' name for both forms: entries and a budget → `pruneToBudget`; a window (and task) → `pruneWindow`. */
  prune(entries: readonly ContextEntry[], tokenBudget: number): ContextEntry[];
  prune(window: ContextWindow, activeTaskContext?: string): Promise<PruneResult>;
  prune(input: ContextWindow | readonly ContextEntry[], second?: number | string): ContextEntry[] | Promise<PruneResult> {
    if (Array.isArray(input)) return this.pruneToBudget(input as readonly ContextEntry[], typeof second === 'number' ? second : 0);
    return this.pruneWindow(input as ContextWindow, typeof second === 'string' ? second : undefined);
  }

  /**
   * [3_MCP-RISK-303] Seed 002: pinned entries (TAS, requirements, spec, and the other pinned types)
   * are always kept, even above the budget; the rest is kept newest first while it fits, and the
   * result is in timestamp order. Pure and synchronous: the input is not mutated.
   */
  pruneToBudget(entries: readonly ContextEntry[], tokenBudget: number): ContextEntry[] {
    return keepWithinBudget(entries, tokenBudget);
  }

  /**
   * Seed 000: below the soft limit the window comes back as it is; above it, the candidates are
   * dropped (or their tool results masked) down to the target and replaced by one summary turn.
   * Throws BudgetImpossibleError when the pinned and protected turns alone exceed the hard limit.
   */
  async pruneWindow(window: ContextWindow, activeTaskContext?: string): Promise<PruneResult> {
    const turns = window.turns;
    const tokens = turns.map((t) => t.tokenCount ?? this.counter.count(t.content));
    // Below the soft limit nothing is pruned: answer before ranking the window (an orchestrator
    // calls this after every turn).
    if (tokens.reduce((a, b) => a + b, 0) < this.config.softLimitTokens) return { pruned: false, window, removedTurnCount: 0, tokensSaved: 0 };
    const entries: TranscriptEntry[] = turns.map((turn, i) => ({ turn, source: { records: [i] }, blobs: [] }));
    const targetTokens = this.options.targetTokens ?? defaultTargetTokens(this.config);
    const strategy = this.options.embedder ? (this.options.strategy ?? 'relevance') : 'recency';
    const now = (this.options.now ?? (() => new Date()))().toISOString();
    const event = ++this.eventCount;
    // Counters, not clocks: the same loop gives the same ids, so token counts repeat run to run.
    let summaries = 0;
    const eventId = this.options.newId?.() ?? `prune-${event}`;
    const prepared = await preparePrune({
      entries,
      tokens,
      counter: this.counter,
      policy: { ...this.config, targetTokens, strategy, summaryReserveTokens: summaryReserveFor(this.options.summaryShare) },
      ...(activeTaskContext?.trim() ? { goal: activeTaskContext } : {}),
      embedder: this.options.embedder ?? nullEmbedder,
      ...(this.options.fallbackEmbedder ? { fallbackEmbedder: this.options.fallbackEmbedder } : {}),
      summarizer: this.summarizer,
      eventId,
      now,
      newId: this.options.newId ?? (() => `summary-${event}${++summaries > 1 ? `-${summaries}` : ''}`),
    });
    const before = tokens.reduce((a, b) => a + b, 0);
    // [SPEC §6] Like the CLI's exit 6: a window that cannot get below the hard limit is an error, not a quiet no-op.
    if (prepared.plan.outcome === 'impossible') throw new BudgetImpossibleError(prepared.plan.note ?? 'the budget cannot be met');
    if (!prepared.edit) return { pruned: false, window, removedTurnCount: 0, tokensSaved: 0 };
    const next = applyEdit(turns, prepared.edit).map(
      (turn): ConversationTurn => (turn.tokenCount !== undefined ? turn : { ...turn, tokenCount: this.counter.count(turn.content) }),
    );
    const newTotal = next.reduce((sum, t) => sum + (t.tokenCount ?? 0), 0);
    const result: PruneResult = {
      pruned: true,
      window: { turns: next, totalTokenEstimate: newTotal },
      removedTurnCount: prepared.plan.dropped.size,
      tokensSaved: before - newTotal,
    };
    this.options.onEvent?.({ event: 'context_pruned', removedTurnCount: result.removedTurnCount, tokensSaved: result.tokensSaved, newTotal });
    return result;
  }
}

const nullEmbedder: Embedder = { name: 'none', embed: (texts) => Promise.resolve(texts.map(() => [])) };

function keepWithinBudget(entries: readonly ContextEntry[], tokenBudget: number): ContextEntry[] {
  const isPinned = (e: ContextEntry): boolean => DRIFT_GUARD_PINNED_TYPES.has(e.type) || (PINNED_TURN_TYPES as readonly string[]).includes(e.type);
  const pinned = entries.filter(isPinned);
  const prunable = entries.filter((e) => !isPinned(e));
  const pinnedTokens = pinned.reduce((sum, e) => sum + e.tokenCount, 0);
  const selected: ContextEntry[] = [];
  let used = pinnedTokens;
  const newestFirst = [...prunable].sort((a, b) => b.timestamp - a.timestamp);
  for (const entry of newestFirst) {
    if (used + entry.tokenCount > tokenBudget) break;
    selected.push(entry);
    used += entry.tokenCount;
  }
  return [...pinned, ...selected].sort((a, b) => a.timestamp - b.timestamp);
}
