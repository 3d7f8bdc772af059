import type { ConversationTurn } from './turn.js';

/**
 * The two things a prune may ask a model for, behind interfaces: the offline implementations live
 * in src/providers, and a Gemini one plugs in beside them (SPEC §7).
 */

/** A vector for a text; dense (`number[]`, `Float32Array`) so any provider's answer fits. */
export type Embedding = ArrayLike<number>;

export interface Embedder {
  /** For reports and errors, e.g. `local-bm25` or `gemini:text-embedding-004`. */
  readonly name: string;
  /** Vectors for many texts at once (one request per batch for remote providers). */
  embed(texts: readonly string[], options?: { signal?: AbortSignal }): Promise<Embedding[]>;
}

export interface SummaryRequest {
  /** The turns being removed, in order; never includes pinned turns. */
  readonly turns: readonly ConversationTurn[];
  /** The current task (goal), so the summary keeps what it needs. */
  readonly activeTask: string;
  /** The summary must not be longer than this many tokens. */
  readonly budgetTokens: number;
  /** Where the removed turns are archived, for lookup hints. */
  readonly archive?: { readonly eventId: string; readonly location?: string };
  readonly signal?: AbortSignal;
}

export interface Summarizer {
  readonly name: string;
  /** The summary text; must start with `[Context Summary]`. Throws when it cannot summarize. */
  summarize(request: SummaryRequest): Promise<string>;
}

export { ProviderError } from './errors.js';
