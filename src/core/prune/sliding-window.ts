import type { TextTokenCounter } from '../accounting.js';
import type { Embedding } from '../provider-contracts.js';
import type { ConversationTurn, TurnType } from '../turn.js';
import { cosineSimilarity } from './relevance.js';

/** [seed 003] [1_PRD-REQ-PERF-001] Options of the sliding relevance window. */
export interface RelevanceWindowOptions {
  /** Default 800,000. */
  tokenBudget?: number;
  /** Default `['plan', 'spec']`. */
  pinnedTypes?: TurnType[];
  embedGoal: (goal: string) => Promise<Embedding>;
  embedTurn: (turn: ConversationTurn) => Promise<Embedding>;
  /** Counts turns without `tokenCount` (default: 4 characters a token). */
  counter?: TextTokenCounter;
}

const tokensOf = (turn: ConversationTurn, counter: TextTokenCounter | undefined): number =>
  turn.tokenCount ?? (counter ? counter.count(turn.content) : Math.ceil(turn.content.length / 4));

/**
 * [seed 003] Keeps the turns most relevant to the current goal within a token budget. Pinned turns
 * (by type) always stay; the rest are ranked by cosine similarity to the goal's embedding (ties:
 * the earlier turn first) and taken greedily while they fit. The result is in chronological order.
 * Pure: the input array is not mutated.
 */
export class SlidingRelevanceWindow {
  private readonly pinnedTypes: ReadonlySet<TurnType>;
  private readonly tokenBudget: number;

  constructor(
    private readonly options: RelevanceWindowOptions,
    private readonly currentGoal: string,
  ) {
    this.pinnedTypes = new Set(options.pinnedTypes ?? ['plan', 'spec']);
    this.tokenBudget = options.tokenBudget ?? 800_000;
  }

  /** Cosine similarity; 0 for a zero vector. */
  static cosineSimilarity(a: Embedding, b: Embedding): number {
    return cosineSimilarity(a, b);
  }

  async prune(turns: readonly ConversationTurn[]): Promise<ConversationTurn[]> {
    const counter = this.options.counter;
    const total = turns.reduce((sum, t) => sum + tokensOf(t, counter), 0);
    if (total < this.tokenBudget) return [...turns];

    const pinned: number[] = [];
    const candidates: number[] = [];
    for (const [i, turn] of turns.entries()) (this.pinnedTypes.has(turn.type) ? pinned : candidates).push(i);
    const [goal, ...vectors] = await Promise.all([
      this.options.embedGoal(this.currentGoal),
      ...candidates.map((i) => this.options.embedTurn(turns[i] as ConversationTurn)),
    ]);
    const scored = candidates.map((index, k) => ({ index, score: goal && vectors[k] ? cosineSimilarity(goal, vectors[k]) : 0 }));
    scored.sort((a, b) => b.score - a.score || a.index - b.index);

    let remaining = this.tokenBudget - pinned.reduce((sum, i) => sum + tokensOf(turns[i] as ConversationTurn, counter), 0);
    const keep = new Set(pinned);
    for (const { index } of scored) {
      const cost = tokensOf(turns[index] as ConversationTurn, counter);
      if (cost > remaining) continue;
      keep.add(index);
      remaining -= cost;
    }
    return turns.filter((_, i) => keep.has(i));
  }
}

export interface ContextCompressorOptions {
  /** Tool results longer than this are masked. Default 2,000 tokens. */
  maxToolResultTokens?: number;
  /** The most recent tool results are left whole. Default 3. */
  keepRecentToolResults?: number;
  counter?: TextTokenCounter;
  /** The text that replaces a masked result; gets the turn and its token count. */
  placeholder?: (turn: ConversationTurn, tokens: number) => string;
}

/**
 * [seed 003] Observation masking: replaces the bodies of old, long tool results with a short
 * placeholder (the call stays answered), which is where most of an agent's tokens go. Used with
 * `SlidingRelevanceWindow`, it brings long sessions under budget with fewer whole turns dropped.
 */
export class ContextCompressor {
  constructor(private readonly options: ContextCompressorOptions = {}) {}

  compress(turns: readonly ConversationTurn[]): ConversationTurn[] {
    const max = this.options.maxToolResultTokens ?? 2000;
    const keepRecent = this.options.keepRecentToolResults ?? 3;
    const counter = this.options.counter;
    const resultIndexes = turns.flatMap((t, i) => (t.type === 'tool_result' ? [i] : []));
    const recent = new Set(resultIndexes.slice(Math.max(0, resultIndexes.length - keepRecent)));
    return turns.map((turn, i) => {
      if (turn.type !== 'tool_result' || recent.has(i)) return turn;
      const tokens = tokensOf(turn, counter);
      if (tokens <= max) return turn;
      const content = this.options.placeholder?.(turn, tokens) ?? `[tool output masked: ${tokens} tokens]`;
      return { ...turn, content, tokenCount: counter ? counter.count(content) : Math.ceil(content.length / 4) };
    });
  }
}
