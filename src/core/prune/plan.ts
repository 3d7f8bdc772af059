import { classifyPruneUrgency, isPinnedTurn, DEFAULT_PROTECTED_TAIL_TURNS, MIN_SUMMARIZATION_CANDIDATES } from '../policy.js';
import type { PruneUrgency, PrunerConfig } from '../policy.js';
import type { TranscriptEntry } from '../transcript.js';
import { buildUnits } from './units.js';
import { PRUNE_STRATEGIES } from '../names.js';

/** How candidates are ranked for dropping [SPEC §6 Selection]. */
export { PRUNE_STRATEGIES };
export type PruneStrategy = (typeof PRUNE_STRATEGIES)[number];

export interface PrunePolicy extends PrunerConfig {
  /** Tokens to bring the window to; default half the soft limit. */
  readonly targetTokens?: number;
  readonly strategy: PruneStrategy;
  /** Prune even when the urgency is `none`. */
  readonly force?: boolean;
  /**
   * Tokens kept free for the summary turn when anything is dropped: a fixed number, or a rule that
   * follows what is removed (`summaryBudgetFor`).
   */
  readonly summaryReserveTokens: number | SummaryBudgetRule;
}

/** The summary may use `share` of the removed tokens, at least `min` and at most `max` (never as many as it replaces). */
export interface SummaryBudgetRule {
  readonly share: number;
  readonly min: number;
  readonly max: number;
}

/** [issue 15] 2 % of what a prune removes, between 1,000 and 8,000 tokens. */
export const DEFAULT_SUMMARY_SHARE = 0.02;
export const SUMMARY_MIN_TOKENS = 1000;
export const SUMMARY_MAX_TOKENS = 8000;

export function summaryRule(share = DEFAULT_SUMMARY_SHARE): SummaryBudgetRule {
  return { share, min: SUMMARY_MIN_TOKENS, max: SUMMARY_MAX_TOKENS };
}

/**
 * The summary's budget for `removedTokens` removed: a fixed reserve as given, or the rule's share of
 * them clamped to [min, max]; always less than what it replaces (a summary as large fails closed).
 */
/**
 * The room a plan keeps for the summary: the budget for what it drops, but never more than a tenth of
 * the target (at least 300), so a small target is not spent on the summary. The summary may then use
 * all the room left under the target (`summaryBudgetFor` capped by it), or its whole budget when the
 * target cannot be reached anyway.
 */
export function plannedSummaryRoom(removedTokens: number, reserve: number | SummaryBudgetRule, targetTokens: number): number {
  const budget = summaryBudgetFor(removedTokens, reserve);
  return typeof reserve === 'number' ? budget : Math.min(budget, Math.max(300, Math.floor(targetTokens / 10)));
}

export function summaryBudgetFor(removedTokens: number, reserve: number | SummaryBudgetRule): number {
  const budget = typeof reserve === 'number' ? reserve : Math.min(reserve.max, Math.max(reserve.min, Math.floor(removedTokens * reserve.share)));
  return Math.max(0, Math.min(budget, removedTokens - 1));
}

/** What the plan knows about each entry (same order as the transcript's entries). */
export interface PlanEntry {
  readonly entry: TranscriptEntry;
  /** Tokens this entry counts for now. */
  readonly tokens: number;
  /** Tokens it would count for if its body were masked; undefined when it cannot be masked. */
  readonly maskedTokens?: number;
  /** Cosine similarity to the goal (relevance strategy); higher is kept longer. */
  readonly relevance?: number;
}

export type PruneActionKind = 'mask' | 'drop';

export interface PruneAction {
  readonly kind: PruneActionKind;
  /** Entry indexes (a whole unit for `drop`, one tool result for `mask`). */
  readonly entries: readonly number[];
  readonly tokensSaved: number;
  /** Why this one, in words: "old tool result", "least relevant (0.02)", "oldest", "hard limit: tail shrunk". */
  readonly reason: string;
}

export type PlanOutcome = 'no-change' | 'prune' | 'impossible';

export interface PrunePlan {
  readonly outcome: PlanOutcome;
  /** Why there is nothing to do, or why it is impossible. */
  readonly note?: string;
  readonly urgency: PruneUrgency;
  readonly strategy: PruneStrategy;
  readonly totalBefore: number;
  readonly targetTokens: number;
  readonly hardLimitTokens: number;
  /** In the order they were decided; a mask later superseded by a drop of its unit is removed. */
  readonly actions: readonly PruneAction[];
  readonly dropped: ReadonlySet<number>;
  readonly masked: ReadonlySet<number>;
  /** Estimated total after the prune, the summary reserve included when something is dropped. */
  readonly totalAfter: number;
  /** Total after the masks and drops, before the summary is added. */
  readonly tokensAfterActions: number;
  readonly reachedTarget: boolean;
  /** Protected-tail entries dropped under hard urgency. */
  readonly tailEntriesDropped: number;
  readonly pinned: readonly number[];
  readonly protectedTail: readonly number[];
  readonly candidates: readonly number[];
}

export function defaultTargetTokens(config: PrunerConfig): number {
  return Math.floor(config.softLimitTokens / 2);
}

interface UnitState {
  readonly entries: readonly number[];
  readonly first: number;
  readonly role: 'pinned' | 'tail' | 'candidate';
  readonly containsLatest: boolean;
}

/**
 * Pure: decides what a prune does. Pinned units are never touched; the protected tail only shrinks
 * under hard urgency and never loses the latest turn. Tool results are masked first (oldest
 * first, or least relevant first with the relevance strategy), then whole candidate units are dropped in strategy order until the window, with room
 * for the summary, is at or under the target.
 */
export function planPrune(entries: readonly PlanEntry[], policy: PrunePolicy): PrunePlan {
  const totalBefore = entries.reduce((sum, e) => sum + e.tokens, 0);
  const urgency = classifyPruneUrgency({ turns: [], totalTokenEstimate: totalBefore }, policy);
  const targetTokens = policy.targetTokens ?? defaultTargetTokens(policy);
  const hardLimitTokens = policy.hardLimitTokens;
  const units = classifyUnits(entries, policy);
  const pinned = units.filter((u) => u.role === 'pinned').flatMap((u) => u.entries);
  const protectedTail = units.filter((u) => u.role === 'tail').flatMap((u) => u.entries);
  const candidates = units.filter((u) => u.role === 'candidate').flatMap((u) => u.entries);
  const base = { urgency, strategy: policy.strategy, totalBefore, targetTokens, hardLimitTokens, pinned, protectedTail, candidates };
  const nothing = (outcome: PlanOutcome, note: string): PrunePlan => ({
    ...base,
    outcome,
    note,
    actions: [],
    dropped: new Set(),
    masked: new Set(),
    totalAfter: totalBefore,
    tokensAfterActions: totalBefore,
    reachedTarget: totalBefore <= targetTokens,
    tailEntriesDropped: 0,
  });

  if (urgency === 'none' && !policy.force) return nothing('no-change', `urgency none: ${totalBefore} tokens is below the soft limit`);
  if (totalBefore <= targetTokens) return nothing('no-change', `already at or under the target (${totalBefore} ≤ ${targetTokens} tokens)`);
  const hard = urgency === 'hard';
  if (candidates.length < MIN_SUMMARIZATION_CANDIDATES && !hard) {
    return nothing('no-change', `only ${candidates.length} candidate turn(s) between the pinned turns and the protected tail: nothing to summarize`);
  }

  const tokensOf = (i: number): number => entries[i]?.tokens ?? 0;
  const masked = new Map<number, number>();
  const dropped = new Set<number>();
  let actions: PruneAction[] = [];
  let total = totalBefore;
  // The summary's room follows what is dropped (its rule), so it grows as more goes.
  let droppedTokens = 0;
  const reserve = (): number => (dropped.size > 0 ? plannedSummaryRoom(droppedTokens, policy.summaryReserveTokens, targetTokens) : 0);
  const over = (limit: number): boolean => total + reserve() > limit;

  // 1. Mask tool results (recency: oldest first; relevance: least relevant to the goal first, so the
  //    output the goal needs is masked last): the call stays answered, the bulk goes to the archive.
  const candidateUnits = units.filter((u) => u.role === 'candidate');
  const maskOrder = candidateUnits.flatMap((u) => u.entries);
  if (policy.strategy === 'relevance') maskOrder.sort((a, b) => (entries[a]?.relevance ?? 0) - (entries[b]?.relevance ?? 0) || a - b);
  {
    for (const i of maskOrder) {
      if (!over(targetTokens)) break;
      const e = entries[i];
      if (e?.maskedTokens === undefined || e.entry.turn.type !== 'tool_result') continue;
      const saved = e.tokens - e.maskedTokens;
      if (saved <= 0) continue;
      masked.set(i, saved);
      total -= saved;
      actions.push({ kind: 'mask', entries: [i], tokensSaved: saved, reason: 'old tool result' });
    }
  }

  // 2. Drop whole candidate units in strategy order.
  // A dropped unit replaces any mask of its results: the drop is credited with the unit's whole
  // size and the mask action goes, so the actions always add up to what the plan saves.
  const drop = (unit: UnitState, reason: string): void => {
    let size = 0;
    let stillCounted = 0;
    for (const i of unit.entries) {
      const maskSaved = masked.get(i);
      size += tokensOf(i);
      stillCounted += tokensOf(i) - (maskSaved ?? 0);
      if (maskSaved !== undefined) masked.delete(i);
      dropped.add(i);
      droppedTokens += tokensOf(i);
    }
    total -= stillCounted;
    actions.push({ kind: 'drop', entries: unit.entries, tokensSaved: size, reason });
  };
  for (const { unit, reason } of rankCandidates(candidateUnits, entries, policy.strategy)) {
    if (!over(targetTokens)) break;
    drop(unit, reason);
  }

  // 3. Hard urgency: the protected tail may shrink (oldest first, never the latest turn) to get
  //    below the hard limit.
  let tailEntriesDropped = 0;
  if (hard && over(hardLimitTokens - 1)) {
    for (const unit of units.filter((u) => u.role === 'tail' && !u.containsLatest)) {
      if (!over(hardLimitTokens - 1)) break;
      drop(unit, 'hard limit: protected tail shrunk');
      tailEntriesDropped += unit.entries.length;
    }
  }

  // Masks of dropped entries go (once, here: filtering at every drop made large plans quadratic).
  actions = actions.filter((a) => a.kind !== 'mask' || !dropped.has(a.entries[0] ?? -1));
  const totalAfter = total + reserve();
  const plan: PrunePlan = {
    ...base,
    outcome: 'prune',
    actions,
    dropped,
    masked: new Set(masked.keys()),
    totalAfter,
    tokensAfterActions: total,
    reachedTarget: totalAfter <= targetTokens,
    tailEntriesDropped,
  };
  if (hard && totalAfter >= hardLimitTokens) {
    return {
      ...plan,
      outcome: 'impossible',
      note:
        total >= hardLimitTokens
          ? `the pinned turns and the latest turn alone come to ${total} tokens, at or above the hard limit (${hardLimitTokens})`
          : `the pinned turns and the latest turn come to ${total} tokens; with room for the summary (${totalAfter - total}) that reaches the hard limit (${hardLimitTokens})`,
    };
  }
  return plan;
}

function classifyUnits(entries: readonly PlanEntry[], policy: PrunePolicy): UnitState[] {
  const tailSize = policy.protectedTailTurns ?? DEFAULT_PROTECTED_TAIL_TURNS;
  const tailStart = Math.max(0, entries.length - tailSize);
  const latest = entries.length - 1;
  return buildUnits(entries.map((e) => e.entry)).map((unit) => {
    const isPinned = unit.entries.some((i) => {
      const e = entries[i];
      return e !== undefined && isPinnedTurn(e.entry.turn, i, policy);
    });
    const inTail = unit.entries.some((i) => i >= tailStart);
    return {
      entries: unit.entries,
      first: unit.entries[0] ?? 0,
      role: isPinned ? 'pinned' : inTail ? 'tail' : 'candidate',
      containsLatest: unit.entries.includes(latest),
    };
  });
}

/** Candidate units in the order they are dropped, with the reason. Ties: the older unit first. */
function rankCandidates(
  units: readonly UnitState[],
  entries: readonly PlanEntry[],
  strategy: PruneStrategy,
): { unit: UnitState; reason: string }[] {
  if (strategy === 'recency') return units.map((unit) => ({ unit, reason: 'oldest' }));
  const scored = units.map((unit) => ({
    unit,
    score: Math.max(...unit.entries.map((i) => entries[i]?.relevance ?? 0)),
  }));
  scored.sort((a, b) => a.score - b.score || a.unit.first - b.unit.first);
  return scored.map(({ unit, score }) => ({ unit, reason: `least relevant to the goal (${score.toFixed(3)})` }));
}
