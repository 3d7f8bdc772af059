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
const DEFAULT_SUMMARY_SHARE = 0.02;
const SUMMARY_MIN_TOKENS = 1000;
const SUMMARY_MAX_TOKENS = 8000;

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
function plannedSummaryRoom(removedTokens: number, reserve: number | SummaryBudgetRule, targetTokens: number): number {
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
  /**
   * Tokens it would count for if only its lines about the goal were kept (a large tool result's
   * excerpt, core/prune/excerpt.ts); undefined when it has none. Used by the relevance strategy.
   */
  readonly excerptTokens?: number;
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

type PlanOutcome = 'no-change' | 'prune' | 'impossible';

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
  /** The masked entries that keep their lines about the goal (an excerpt) rather than only a placeholder. */
  readonly excerpted: ReadonlySet<number>;
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
 * under hard urgency and never loses the latest turn. Recency masks tool results oldest first, then
 * drops whole candidate units oldest first. Relevance ranks masks and drops together by relevance to
 * the goal (`rankSteps`): tool output the goal does not need is masked and unrelated turns dropped
 * first; a large tool result the goal needs keeps its lines about the goal (an excerpt) before
 * anything relevant goes; the latest result of each tool is masked last. Either stops once the
 * window, with room for the summary, is at or under the target.
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
    excerpted: new Set(),
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

  const candidateUnits = units.filter((u) => u.role === 'candidate');
  const steps = policy.strategy === 'relevance' ? rankSteps(candidateUnits, entries) : recencySteps(candidateUnits, entries);
  const state = takeSteps(entries, totalBefore, policy.summaryReserveTokens, targetTokens, steps);
  // Hard urgency: the protected tail may shrink (oldest first, never the latest turn) to get below the hard limit.
  let tailEntriesDropped = 0;
  for (const unit of hard ? units.filter((u) => u.role === 'tail' && !u.containsLatest) : []) {
    if (!state.over(hardLimitTokens - 1)) break;
    state.drop(unit, 'hard limit: protected tail shrunk');
    tailEntriesDropped += unit.entries.length;
  }
  const plan: PrunePlan = { ...base, outcome: 'prune', ...state.result(), tailEntriesDropped };
  if (hard && plan.totalAfter >= hardLimitTokens)
    return { ...plan, outcome: 'impossible', note: impossibleNote(plan.tokensAfterActions, plan.totalAfter, hardLimitTokens) };
  return plan;
}

function impossibleNote(total: number, totalAfter: number, hardLimitTokens: number): string {
  return total >= hardLimitTokens
    ? `the pinned turns and the latest turn alone come to ${total} tokens, at or above the hard limit (${hardLimitTokens})`
    : `the pinned turns and the latest turn come to ${total} tokens; with room for the summary (${totalAfter - total}) that reaches the hard limit (${hardLimitTokens})`;
}

/**
 * The steps taken in order until the target is reached. A plan whose drops come to less than the
 * summary's least room (the rule's `min`, or a fixed reserve) cannot pay for a summary: the summary
 * would get fewer tokens than the turns it replaces, and a summarizer cannot write one that small
 * (the prune failed, exit 5). When the masks and excerpts alone reach the target, that plan is taken
 * instead; else the masks first and then the drops, as long as those drops are worth a summary.
 */
function takeSteps(
  entries: readonly PlanEntry[],
  totalBefore: number,
  reserve: number | SummaryBudgetRule,
  targetTokens: number,
  steps: readonly PlanStep[],
): PlanState {
  const run = (ordered: readonly PlanStep[]): PlanState => {
    const state = new PlanState(entries, totalBefore, reserve, targetTokens);
    for (const step of ordered) {
      if (!state.over(targetTokens)) break;
      state.take(step);
    }
    return state;
  };
  const least = typeof reserve === 'number' ? reserve : reserve.min;
  const worthASummary = (state: PlanState): boolean => state.droppedTotal() === 0 || state.droppedTotal() > least;
  const first = run(steps);
  if (worthASummary(first)) return first;
  const masksOnly = run(steps.filter((s) => s.kind !== 'drop'));
  if (!masksOnly.over(targetTokens)) return masksOnly;
  const masksFirst = run([...steps.filter((s) => s.kind !== 'drop'), ...steps.filter((s) => s.kind === 'drop')]);
  return worthASummary(masksFirst) ? masksFirst : first;
}

/** One thing a plan may do, in the order it is tried: keep a tool result's goal lines, mask it, or drop a unit. */
type PlanStep =
  | { readonly kind: 'excerpt' | 'mask'; readonly entry: number; readonly reason: string }
  | { readonly kind: 'drop'; readonly unit: UnitState; readonly reason: string };

/** What the plan has decided so far, and the window's size after it. */
class PlanState {
  total: number;
  private droppedTokens = 0;
  private actions: PruneAction[] = [];
  /** Tokens each masked (or excerpted) entry saves now. */
  private readonly masked = new Map<number, number>();
  private readonly excerpted = new Set<number>();
  private readonly dropped = new Set<number>();

  constructor(
    private readonly entries: readonly PlanEntry[],
    totalBefore: number,
    private readonly reserveRule: number | SummaryBudgetRule,
    private readonly targetTokens: number,
  ) {
    this.total = totalBefore;
  }

  /** The summary's room follows what is dropped (its rule), so it grows as more goes. */
  reserve(): number {
    return this.dropped.size > 0 ? plannedSummaryRoom(this.droppedTokens, this.reserveRule, this.targetTokens) : 0;
  }

  /** Tokens of every entry dropped so far (what the summary replaces). */
  droppedTotal(): number {
    return this.droppedTokens;
  }

  over(limit: number): boolean {
    return this.total + this.reserve() > limit;
  }

  take(step: PlanStep): void {
    if (step.kind === 'drop') {
      if (!step.unit.entries.some((i) => this.dropped.has(i))) this.drop(step.unit, step.reason);
      return;
    }
    const e = this.entries[step.entry];
    if (!e || this.dropped.has(step.entry) || (step.kind === 'mask' && this.masked.has(step.entry) && !this.excerpted.has(step.entry))) return;
    const after = step.kind === 'excerpt' ? e.excerptTokens : e.maskedTokens;
    if (after === undefined || (step.kind === 'excerpt' && this.masked.has(step.entry))) return;
    const saved = e.tokens - after - (this.masked.get(step.entry) ?? 0);
    if (saved <= 0) return;
    this.masked.set(step.entry, e.tokens - after);
    if (step.kind === 'excerpt') this.excerpted.add(step.entry);
    else this.excerpted.delete(step.entry);
    this.total -= saved;
    this.actions.push({ kind: 'mask', entries: [step.entry], tokensSaved: saved, reason: step.reason });
  }

  /**
   * A dropped unit replaces any mask of its results: the drop is credited with the unit's whole
   * size and the mask actions go (in `result`), so the actions always add up to what the plan saves.
   */
  drop(unit: UnitState, reason: string): void {
    let size = 0;
    let stillCounted = 0;
    for (const i of unit.entries) {
      const tokens = this.entries[i]?.tokens ?? 0;
      size += tokens;
      stillCounted += tokens - (this.masked.get(i) ?? 0);
      this.masked.delete(i);
      this.excerpted.delete(i);
      this.dropped.add(i);
      this.droppedTokens += tokens;
    }
    this.total -= stillCounted;
    this.actions.push({ kind: 'drop', entries: unit.entries, tokensSaved: size, reason });
  }

  result(): Pick<PrunePlan, 'actions' | 'dropped' | 'masked' | 'excerpted' | 'totalAfter' | 'tokensAfterActions' | 'reachedTarget'> {
    // Masks of dropped entries go, and an excerpt later masked whole is one action, where the whole
    // mask was decided (once, here: filtering at every step made large plans quadratic).
    const lastMask = new Map<number, number>();
    this.actions.forEach((a, k) => {
      if (a.kind === 'mask') lastMask.set(a.entries[0] ?? -1, k);
    });
    const savedBy = new Map<number, number>();
    for (const a of this.actions) if (a.kind === 'mask') savedBy.set(a.entries[0] ?? -1, (savedBy.get(a.entries[0] ?? -1) ?? 0) + a.tokensSaved);
    const actions = this.actions.flatMap((a, k): PruneAction[] => {
      const i = a.entries[0] ?? -1;
      if (a.kind !== 'mask') return [a];
      if (this.dropped.has(i) || lastMask.get(i) !== k) return [];
      return [{ ...a, tokensSaved: savedBy.get(i) ?? a.tokensSaved }];
    });
    const totalAfter = this.total + this.reserve();
    return {
      actions,
      dropped: this.dropped,
      masked: new Set(this.masked.keys()),
      excerpted: new Set(this.excerpted),
      totalAfter,
      tokensAfterActions: this.total,
      reachedTarget: totalAfter <= this.targetTokens,
    };
  }
}

/** Recency: every tool result masked, oldest first, then whole units dropped, oldest first. */
function recencySteps(units: readonly UnitState[], entries: readonly PlanEntry[]): PlanStep[] {
  const masks: PlanStep[] = units
    .flatMap((u) => u.entries)
    .filter((i) => entries[i]?.entry.turn.type === 'tool_result')
    .map((entry) => ({ kind: 'mask', entry, reason: 'old tool result' }));
  return [...masks, ...units.map((unit): PlanStep => ({ kind: 'drop', unit, reason: 'oldest' }))];
}

/** How much of its tool output's relevance a request lends it (below 1: the request's own text outranks its tool output). */
const REQUEST_SHARE = 0.6;
/** An excerpt is tried at this share of its tool result's relevance: what it masks are the lines the goal does not need. */
const EXCERPT_SHARE = 0.25;

/**
 * Relevance: masks, excerpts and drops in one order, by what each loses. A tool result's relevance
 * is its own or, if higher, a share of the request it serves (the user's request and the reasoning
 * before it since that request: a test run is as relevant as the question it answers, whatever
 * cosine its long output gets). A unit drops at its best entry's relevance; a tool result is masked
 * at its own; its excerpt comes at half of that; the latest result of each tool is masked after
 * every other tool result. Ties: excerpt, then mask, then drop; then the older first.
 */
function rankSteps(units: readonly UnitState[], entries: readonly PlanEntry[]): PlanStep[] {
  const toolRelevance = toolOutputRelevance(entries);
  const latest = latestResultOfEachTool(entries);
  const keyOf = (i: number): number => toolRelevance.get(i) ?? entries[i]?.relevance ?? 0;
  const ranked: { step: PlanStep; key: number; order: number; at: number }[] = [];
  const lastMaskKey = Math.max(0, ...units.flatMap((u) => u.entries).map(keyOf));
  for (const unit of units) {
    const score = Math.max(...unit.entries.map(keyOf));
    ranked.push({ step: { kind: 'drop', unit, reason: `least relevant to the goal (${score.toFixed(3)})` }, key: score, order: 2, at: unit.first });
    for (const i of unit.entries) {
      const e = entries[i];
      if (e?.entry.turn.type !== 'tool_result' || e.maskedTokens === undefined) continue;
      // The latest result of a tool: after every drop and every other mask (order 3 breaks a tie with a drop).
      const key = latest.has(i) ? lastMaskKey + keyOf(i) : keyOf(i);
      const why = latest.has(i) ? 'latest result of its tool' : 'tool output least relevant to the goal';
      ranked.push({ step: { kind: 'mask', entry: i, reason: `${why} (${keyOf(i).toFixed(3)})` }, key, order: latest.has(i) ? 3 : 1, at: i });
      if (e.excerptTokens !== undefined) {
        ranked.push({
          step: { kind: 'excerpt', entry: i, reason: `lines about the goal kept (${keyOf(i).toFixed(3)})` },
          key: key * EXCERPT_SHARE,
          order: 0,
          at: i,
        });
      }
    }
  }
  ranked.sort((a, b) => a.key - b.key || a.order - b.order || a.at - b.at);
  return ranked.map((r) => r.step);
}

/**
 * Each tool result's relevance: its own, or REQUEST_SHARE of the best user request or reasoning
 * since the latest user request before it, whichever is higher.
 */
function toolOutputRelevance(entries: readonly PlanEntry[]): Map<number, number> {
  const out = new Map<number, number>();
  let request = 0;
  entries.forEach((e, i) => {
    const { role, type } = e.entry.turn;
    if (role === 'user' && type === 'message') request = e.relevance ?? 0;
    else if (type === 'reasoning' || type === 'message') request = Math.max(request, e.relevance ?? 0);
    if (type === 'tool_result') out.set(i, Math.max(e.relevance ?? 0, REQUEST_SHARE * request));
  });
  return out;
}

/** The latest tool result answering each tool (named by the first word of the call before it). */
function latestResultOfEachTool(entries: readonly PlanEntry[]): Set<number> {
  const latest = new Map<string, number>();
  let tool = '';
  entries.forEach((e, i) => {
    const { type, content } = e.entry.turn;
    if (type === 'tool_call') tool = /^[\w.:-]+/.exec(content.trimStart())?.[0] ?? '';
    else if (type === 'tool_result') latest.set(tool, i);
  });
  return new Set(latest.values());
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
