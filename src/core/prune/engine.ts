import type { TextTokenCounter } from '../accounting.js';
import { ProviderError } from '../errors.js';
import type { Embedder, FallbackEvent, Summarizer } from '../provider-contracts.js';
import type { TranscriptEntry } from '../transcript.js';
import type { ConversationTurn } from '../turn.js';
import { planToEdit } from './apply.js';
import { SUMMARY_PREFIX } from './edit.js';
import type { TranscriptEdit } from './edit.js';
import { defaultTargetTokens, planPrune, summaryBudgetFor, summaryRule } from './plan.js';
import type { PlanEntry, PrunePlan, PrunePolicy, SummaryBudgetRule } from './plan.js';
import { findActiveTask, scoreRelevance } from './relevance.js';
import { GoalExcerpts } from './excerpt.js';
import type { LineTerms, TermIndex } from '../terms.js';
import type { GoalExcerpt } from './excerpt.js';
import { isPinnedTurn } from '../policy.js';
import { pacedMap } from '../pace.js';
import type { Pacer } from '../pace.js';
import type { PrunerConfig } from '../policy.js';
import { thousands } from '../numbers.js';

/*
 * The two steps of a prune that decide what it does, from counted entries to an edit:
 * - the plan step (`startPlanning` → `PrunePlanning.plan`): goal, each entry's masked size, a
 *   relevance ranking (once, only when something is pruned; a failed embedder's fallback is in the
 *   result, not an exception), the plan;
 * - the summarize step (`summarizePlan`): the dropped turns summarized within their room, checked,
 *   and the plan turned into an edit.
 * They stay in core: they do no I/O (embedder and summarizer are injected interfaces) and the
 * library's `ContextPruner` runs them as the CLI does. The application service around them (a
 * transcript file's review, write and verify, archive) is `src/prune/`.
 */

/** One prune, from counted entries to an edit (`preparePrune`: the plan step, then the summarize step). */
export interface PruneRequest {
  readonly entries: readonly TranscriptEntry[];
  /** Tokens each entry counts for now (same order). */
  readonly tokens: readonly number[];
  readonly counter: TextTokenCounter;
  readonly policy: PrunePolicy;
  /** `--goal`; otherwise the active task found in the transcript. */
  readonly goal?: string;
  readonly embedder: Embedder;
  readonly summarizer: Summarizer;
  /** Id of the prune event (archive reference in placeholders and the summary). */
  readonly eventId: string;
  readonly archiveLocation?: string;
  /**
   * `--no-archive`: nothing is archived, so the placeholders and the summary say the text was
   * removed and not archived, and give no way to recall or restore it (there is none).
   */
  readonly notArchived?: boolean;
  readonly now: string;
  readonly newId: () => string;
  /** The session's calibration (when it is not the plain estimate), recorded where the format allows. */
  readonly calibration?: { readonly overhead: number; readonly scale: number };
  readonly signal?: AbortSignal;
  /** Gives the event loop a turn between steps (so a signal is seen) and stops once `signal` is aborted. */
  readonly pacer?: Pacer;
  /** Called as the long steps start, for a progress display. */
  readonly onProgress?: (step: 'relevance' | 'plan' | 'summary') => void;
  /** `--fallback`: when `embedder` fails, every turn is ranked again with this one (the result's `ranking` says so). */
  readonly fallbackEmbedder?: Embedder;
  /** The tool results' goal excerpts, when found ahead (`findGoalExcerpts`, for this request's goal). */
  readonly goalExcerpts?: GoalExcerptsFound;
}

/** Each tool result's excerpt for `goal` by entry index (undefined: none), as `findGoalExcerpts` finds them. */
export interface GoalExcerptsFound {
  readonly goal: string;
  readonly excerpts: ReadonlyMap<number, GoalExcerpt | undefined>;
}

export interface PreparedPrune {
  readonly plan: PrunePlan;
  readonly goal: string;
  readonly goalSource: GoalSource;
  /** Undefined when the plan changes nothing. */
  readonly edit?: TranscriptEdit;
  readonly summaryText?: string;
  readonly summaryTokens: number;
  /** Tokens of everything dropped (what the summary replaces). */
  readonly droppedTokens: number;
  /** How the turns were ranked, when they were. */
  readonly ranking?: Ranking;
}

/**
 * The summary's room: a share of what the prune removes (2 % by default, `summaryShare` /
 * `--summary-share`), between 1,000 and 8,000 tokens, never as many as it replaces. The plan keeps
 * that room inside the target (it used to be 5 % of the target, so the more a prune removed, the
 * less its summary could say).
 */
export function summaryReserveFor(share?: number): SummaryBudgetRule {
  return summaryRule(share);
}

/**
 * The text a masked tool result keeps: how much was archived and how to get it back (no random ids,
 * so a dry run repeats exactly); or, when nothing is archived, that it was removed.
 */
function maskPlaceholder(tokens: number, turnId: string, archived: boolean): string {
  if (!archived) return `[devs-ctx: ${thousands(tokens)} tokens of tool output removed, not archived]`;
  return `[devs-ctx: ${thousands(tokens)} tokens of tool output archived; full text: devs-ctx recall --turn ${turnId}]`;
}

/**
 * A large tool result's partial mask: the same placeholder (so the archived size is read back the
 * same way, core/context-size.ts), saying how many lines it keeps, then those lines.
 */
function excerptPlaceholder(tokens: number, turnId: string, excerpt: GoalExcerpt, archived: boolean): string {
  const kept = `kept below: ${excerpt.keptLines} of its ${excerpt.totalLines} lines, those about the goal`;
  if (!archived) return `[devs-ctx: ${thousands(tokens)} tokens of tool output removed, not archived; ${kept}]\n${excerpt.text}`;
  return `[devs-ctx: ${thousands(tokens)} tokens of tool output archived; ${kept}; full text: devs-ctx recall --turn ${turnId}]\n${excerpt.text}`;
}

/**
 * Each entry's relevance to the goal, as a prune ranks them. Only turns a prune may drop are
 * ranked (and so sent to a remote embedder): never the pinned project knowledge, nor what the
 * agent's provider is not sent anyway (those score 0). `prune --interactive` shows the same scores.
 */
async function rankRelevance(
  entries: readonly TranscriptEntry[],
  goal: string,
  embedder: Embedder,
  policy: PrunerConfig,
  signal?: AbortSignal,
  pacer?: Pacer,
): Promise<number[]> {
  const relevance = new Array<number>(entries.length).fill(0);
  if (!goal) return relevance;
  const indexes = entries.flatMap((e, i) => (!isPinnedTurn(e.turn, i, policy) && e.notSent === undefined ? [i] : []));
  const scores = await scoreRelevance(
    goal,
    indexes.map((i) => entries[i]?.turn.content ?? ''),
    embedder,
    { ...(signal ? { signal } : {}), ...(pacer ? { pacer } : {}) },
  );
  for (const [k, i] of indexes.entries()) relevance[i] = scores[k] ?? 0;
  return relevance;
}

/** How the turns were ranked: the scores, which embedder gave them, and the fallback if the first one failed. */
interface Ranking {
  readonly relevance: readonly number[];
  /** The embedder every score came from. */
  readonly embedder: string;
  /** Set when `embedder` failed (a ProviderError) and every turn was ranked again with the fallback. */
  readonly fallback?: FallbackEvent;
}

/**
 * `rankRelevance` with `--fallback`: when the embedder fails, every turn is ranked again with the
 * fallback (vectors of two embedders cannot be compared), and the result says so.
 */
async function rankWithFallback(
  entries: readonly TranscriptEntry[],
  goal: string,
  embedders: { readonly embedder: Embedder; readonly fallback?: Embedder | undefined },
  policy: PrunerConfig,
  signal?: AbortSignal,
  pacer?: Pacer,
): Promise<Ranking> {
  const { embedder, fallback } = embedders;
  try {
    return { relevance: await rankRelevance(entries, goal, embedder, policy, signal, pacer), embedder: embedder.name };
  } catch (error) {
    if (!fallback || !(error instanceof ProviderError)) throw error;
    const relevance = await rankRelevance(entries, goal, fallback, policy, signal, pacer);
    return { relevance, embedder: fallback.name, fallback: { provider: embedder.name, reason: error.message, usedInstead: fallback.name } };
  }
}

/** What the plan step needs: the entries, their counts, the goal and the embedder (the summary comes later). */
type PlanRequest = Pick<
  PruneRequest,
  'entries' | 'tokens' | 'counter' | 'goal' | 'embedder' | 'fallbackEmbedder' | 'signal' | 'pacer' | 'onProgress' | 'goalExcerpts' | 'notArchived'
>;

/** One plan: what it was made from (each entry's tokens, masked size and relevance once ranked) and what it decided. */
interface PlannedPrune {
  readonly plan: PrunePlan;
  readonly goal: string;
  readonly goalSource: GoalSource;
  readonly entries: readonly PlanEntry[];
  /** The text each maskable tool result keeps when masked. */
  readonly placeholders: ReadonlyMap<number, string>;
  /** The text a large tool result keeps when only its lines about the goal stay (relevance strategy). */
  readonly excerpts: ReadonlyMap<number, string>;
  /** Set once the turns were ranked (relevance strategy, only when a plan prunes), by this plan or an earlier one. */
  readonly ranking?: Ranking;
}

type GoalSource = 'flag' | 'transcript' | 'none';

/**
 * The plan step of a prune, for one transcript: the goal and each entry's planned sizes are found
 * once; `plan` can then be asked again with other pins or another target (`prune --interactive`)
 * and ranks relevance only the first time a plan needs it, never twice.
 */
export interface PrunePlanning {
  readonly goal: string;
  readonly goalSource: GoalSource;
  /**
   * Plans with this policy. `pins`: entries kept as if they were pinned, for this prune only: they
   * are planned as pinned (and a writer checks them byte for byte), but the file does not say so.
   */
  plan(policy: PrunePolicy, pins?: ReadonlySet<number>): Promise<PlannedPrune>;
}

/** The goal a prune ranks by: `--goal`, else the active task found in the transcript, else none (''). */
export function planningGoal(entries: readonly TranscriptEntry[], given: string | undefined): { goal: string; goalSource: GoalSource } {
  const found = given === undefined ? findActiveTask(entries.map((e) => e.turn)) : undefined;
  return { goal: given ?? found ?? '', goalSource: given !== undefined ? 'flag' : found !== undefined ? 'transcript' : 'none' };
}

/**
 * The goal excerpts of every tool result a prune may mask (`excerptAll` takes those it plans with),
 * found ahead of the plan: they need the goal and the texts, not the counts, so a caller can find
 * them while the counting runs elsewhere. `index`: terms already read (the BM25 fit's), shared.
 */
export async function findGoalExcerpts(
  entries: readonly TranscriptEntry[],
  goal: string,
  options: {
    readonly index?: TermIndex;
    readonly pacer?: Pacer | undefined;
    /** Entry i's lines' ids, when read already with `index` (a prune's BM25 fit: LineKeepingReader). */
    readonly lines?: (i: number) => LineTerms | undefined;
  } = {},
): Promise<GoalExcerptsFound> {
  const found = new Map<number, GoalExcerpt | undefined>();
  if (!goal) return { goal, excerpts: found };
  const excerpts = new GoalExcerpts(goal, options.index);
  await pacedMap(
    entries,
    (entry, i) => {
      if (excerptable(entry)) found.set(i, excerpts.of(entry.turn.content, options.lines?.(i)));
    },
    options.pacer,
  );
  return { goal, excerpts: found };
}

/** A tool result a prune may mask, and so excerpt (not one that is a placeholder already: an excerpt is never excerpted). */
export function excerptable(entry: TranscriptEntry): boolean {
  return entry.turn.type === 'tool_result' && entry.notSent === undefined && entry.maskable !== false && !entry.turn.content.startsWith('[devs-ctx:');
}

export async function startPlanning(request: PlanRequest): Promise<PrunePlanning> {
  const { entries, tokens, counter, pacer } = request;
  const { goal, goalSource } = planningGoal(entries, request.goal);

  request.onProgress?.('plan');
  const placeholders = new Map<number, string>();
  for (const [i, entry] of entries.entries()) {
    const now = tokens[i] ?? 0;
    if (entry.turn.type === 'tool_result' && entry.notSent === undefined && entry.maskable !== false && now > 0) {
      placeholders.set(i, maskPlaceholder(now, entry.turn.id, request.notArchived !== true));
    }
  }
  // Counted ahead, all at once (on a count worker in the CLI: see TextTokenCounter.countAlongside).
  await counter.countAlongside?.([...placeholders.values()], async () => {});
  const excerpts = new Map<number, string>();
  let excerptTokens: Promise<(number | undefined)[]> | undefined;
  const base: PlanEntry[] = await pacedMap(
    entries,
    (entry, i) => {
      const placeholder = placeholders.get(i);
      const maskedTokens = placeholder === undefined ? undefined : counter.count(placeholder);
      return { entry, tokens: tokens[i] ?? 0, ...(maskedTokens !== undefined ? { maskedTokens } : {}) };
    },
    pacer,
  );
  // Ranked once, over the entries the policy lets a prune drop (a user's pins do not change a score).
  let ranking: Promise<Ranking> | undefined;
  const rank = (policy: PrunerConfig): Promise<Ranking> => {
    if (ranking) return ranking;
    request.onProgress?.('relevance');
    ranking = rankWithFallback(entries, goal, { embedder: request.embedder, fallback: request.fallbackEmbedder }, policy, request.signal, pacer);
    return ranking;
  };

  const plan = async (policy: PrunePolicy, pins?: ReadonlySet<number>): Promise<PlannedPrune> => {
    const pinned =
      pins && pins.size > 0 ? base.map((e, i) => (pins.has(i) ? { ...e, entry: { ...e.entry, turn: { ...e.entry.turn, pinned: true } } } : e)) : base;
    const targetTokens = policy.targetTokens ?? defaultTargetTokens(policy);
    // Whether anything is pruned does not depend on the ranking: decide that first, so a transcript
    // with nothing to do is never sent to an embedding provider.
    const probe = planPrune(pinned, { ...policy, targetTokens, strategy: 'recency' });
    await pacer?.tick();
    let planEntries = pinned;
    let ranked: Ranking | undefined;
    // A ranking an earlier plan made (a review at another target) is used and reported again.
    if (policy.strategy === 'relevance' && (probe.outcome === 'prune' || ranking)) {
      // The excerpts' placeholders are counted (on another thread when the counter has one) while the turns are ranked here.
      excerptTokens ??= excerptAll(base, { goal, found: request.goalExcerpts, archived: request.notArchived !== true }, counter, excerpts, pacer, async () => {
        await rank(policy);
      });
      const excerptSizes = await excerptTokens;
      ranked = await rank(policy);
      const { relevance } = ranked;
      planEntries = pinned.map((e, i) => {
        const excerpt = excerptSizes[i];
        return { ...e, relevance: relevance[i] ?? 0, ...(excerpt !== undefined ? { excerptTokens: excerpt } : {}) };
      });
      await pacer?.tick();
    }
    const planned = policy.strategy === 'relevance' ? planPrune(planEntries, { ...policy, targetTokens }) : probe;
    await pacer?.tick();
    return { plan: planned, goal, goalSource, entries: planEntries, placeholders, excerpts, ...(ranked ? { ranking: ranked } : {}) };
  };
  return { goal, goalSource, plan };
}

/** What the summarize step needs besides the plan. */
type SummarizeRequest = Pick<
  PruneRequest,
  'counter' | 'summarizer' | 'eventId' | 'archiveLocation' | 'notArchived' | 'now' | 'newId' | 'calibration' | 'signal' | 'pacer' | 'onProgress'
> & {
  readonly policy: Pick<PrunePolicy, 'summaryReserveTokens'>;
};

/** The summarize step: the dropped turns summarized in their share of the room, checked, and the plan turned into an edit. */
export async function summarizePlan(planned: PlannedPrune, request: SummarizeRequest): Promise<PreparedPrune> {
  const { plan, goal, goalSource, entries } = planned;
  const ranking = planned.ranking ? { ranking: planned.ranking } : {};
  if (plan.outcome !== 'prune') return { plan, goal, goalSource, summaryTokens: 0, droppedTokens: 0, ...ranking };
  const { counter, pacer } = request;
  let summaryText: string | undefined;
  let summaryTokens = 0;
  let droppedTokens = 0;
  for (const i of plan.dropped) droppedTokens += entries[i]?.tokens ?? 0;
  if (plan.dropped.size > 0) {
    request.onProgress?.('summary');
    const removed: ConversationTurn[] = [...plan.dropped]
      .sort((a, b) => a - b)
      .map((i) => entries[i]?.entry.turn)
      .filter((t): t is ConversationTurn => t !== undefined);
    // [issue 15] A share of what is removed; inside the target when the plan reaches it.
    const rule = summaryBudgetFor(droppedTokens, request.policy.summaryReserveTokens);
    const budgetTokens = plan.reachedTarget ? Math.min(rule, Math.max(0, plan.targetTokens - plan.tokensAfterActions)) : rule;
    const raw = await request.summarizer.summarize({
      turns: removed,
      activeTask: goal,
      budgetTokens,
      ...(request.notArchived ? {} : { archive: { eventId: request.eventId, ...(request.archiveLocation ? { location: request.archiveLocation } : {}) } }),
      ...(request.signal ? { signal: request.signal } : {}),
    });
    await pacer?.tick();
    summaryText = checkSummary(raw, request.summarizer.name);
    await counter.countAlongside?.([summaryText], async () => {});
    summaryTokens = counter.count(summaryText);
    // [SPEC §6] A summary larger than what it replaces is never written: fail closed.
    if (summaryTokens >= droppedTokens) {
      throw new ProviderError(
        `the ${request.summarizer.name} summary (${summaryTokens} tokens) is not smaller than the ${droppedTokens} tokens it replaces; nothing was written`,
        request.summarizer.name,
        'prune more at once (a lower --target) or use another summarizer',
      );
    }
  }
  const edit = planToEdit(plan, {
    ...(summaryText !== undefined ? { summary: summaryText } : {}),
    placeholders: planned.placeholders,
    excerpts: planned.excerpts,
    ...(request.calibration ? { calibration: request.calibration } : {}),
    now: request.now,
    newId: request.newId,
  });
  return { plan, goal, goalSource, edit, ...(summaryText !== undefined ? { summaryText } : {}), summaryTokens, droppedTokens, ...ranking };
}

/** One prune from counted entries to an edit: the plan step, then the summarize step. */
export async function preparePrune(request: PruneRequest): Promise<PreparedPrune> {
  const planning = await startPlanning(request);
  return summarizePlan(await planning.plan(request.policy), request);
}

/**
 * Each maskable tool result's excerpt for the goal (its text into `texts`) and its tokens; undefined
 * where there is none, where it would not save a third, or where the result is a placeholder already
 * (a pruned transcript is pruned again without excerpting an excerpt). The placeholders are counted
 * all at once, while `alongside` runs (TextTokenCounter.countAlongside).
 */
async function excerptAll(
  planEntries: readonly PlanEntry[],
  goal: { readonly goal: string; readonly found: GoalExcerptsFound | undefined; readonly archived: boolean },
  counter: TextTokenCounter,
  texts: Map<number, string>,
  pacer: Pacer | undefined,
  alongside: () => Promise<void>,
): Promise<(number | undefined)[]> {
  let excerpts: GoalExcerpts | undefined;
  // Found ahead for this goal, or here (one GoalExcerpts for all: see its comment).
  const found = goal.found?.goal === goal.goal ? goal.found.excerpts : undefined;
  const placeholders = await pacedMap(
    planEntries,
    (e, i) => {
      const { content, id } = e.entry.turn;
      if (e.maskedTokens === undefined || !goal.goal || content.startsWith('[devs-ctx:')) return undefined;
      let excerpt: GoalExcerpt | undefined;
      if (found?.has(i)) excerpt = found.get(i);
      else {
        excerpts ??= new GoalExcerpts(goal.goal);
        excerpt = excerpts.of(content);
      }
      return excerpt ? excerptPlaceholder(e.tokens, id, excerpt, goal.archived) : undefined;
    },
    pacer,
  );
  const toCount = placeholders.filter((text): text is string => text !== undefined);
  if (counter.countAlongside) await counter.countAlongside(toCount, alongside);
  else await alongside();
  return pacedMap(
    planEntries,
    (e, i) => {
      const text = placeholders[i];
      if (text === undefined) return undefined;
      const tokens = counter.count(text);
      if (tokens > (e.tokens * 2) / 3) return undefined;
      texts.set(i, text);
      return tokens;
    },
    pacer,
  );
}

/** An empty or failed summary is never written; one without the marker gets it. */
function checkSummary(raw: unknown, provider: string): string {
  if (typeof raw !== 'string') throw new ProviderError(`the ${provider} summarizer returned no text; nothing was written`, provider);
  const text = raw.trim();
  const body = text.startsWith(SUMMARY_PREFIX) ? text.slice(SUMMARY_PREFIX.length).trim() : text;
  if (body.length === 0) throw new ProviderError(`the ${provider} summarizer returned an empty summary; nothing was written`, provider);
  return text.startsWith(SUMMARY_PREFIX) ? text : `${SUMMARY_PREFIX}\n${text}`;
}
