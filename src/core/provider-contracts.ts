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
  /**
   * Optional: each text's cosine similarity to `goal`, exactly what `cosineSimilarity` gives for
   * their `embed` vectors, found without making every vector (the offline embedder's are sparse).
   * A ranking uses it when it is there.
   */
  similarities?(goal: string, texts: readonly string[]): number[];
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

/**
 * Prune's summarizer: turns being removed → the one `[Context Summary]` turn that replaces them.
 * Not to be confused with refresh's `SummaryProvider` (seed 004: the TAS and PRD texts a refresh
 * injects) or its `Condenser` (one document → a shorter one within a token budget).
 */
export interface Summarizer {
  readonly name: string;
  /** The summary text; must start with `[Context Summary]`. Throws when it cannot summarize. */
  summarize(request: SummaryRequest): Promise<string>;
}

/**
 * One request to a text model, as the summarizer needs it (SPEC §7). `GeminiClient` is the real
 * implementation; anything that answers the same shape (another provider, a recorded replay) fits.
 */
export interface GenerateRequest {
  readonly model: string;
  readonly systemInstruction: string;
  readonly prompt: string;
  readonly maxOutputTokens: number;
  readonly temperature: number;
  /**
   * How much the model may think first. On thinking models (Gemini 2.5 and 3) thinking tokens count
   * against `maxOutputTokens`, so a long think leaves the answer cut short: `low` (the default for
   * summaries) keeps it small, `model` leaves the model's default.
   */
  readonly thinking?: 'low' | 'model';
  readonly signal?: AbortSignal;
}

export interface GenerateResult {
  /** The answer's text; '' when the model gave none. */
  readonly text: string;
  /** The first candidate's finishReason (`STOP`, `MAX_TOKENS`, `SAFETY`, …), when given. */
  readonly finishReason?: string;
  /** Set when the prompt itself was blocked (`promptFeedback.blockReason`). */
  readonly blockReason?: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
}

export interface LLMClient {
  generate(request: GenerateRequest): Promise<GenerateResult>;
}

export interface EmbeddingClient {
  /** One vector per text, in order; batching and retries are the client's business. */
  embedTexts(model: string, texts: readonly string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

/** What a run asked of a remote provider, for the cost line and `--json`. */
export interface ProviderUsage {
  requests: number;
  retries: number;
  inputTokens: number;
  outputTokens: number;
  /** Tokens sent for embeddings (estimated locally when the API does not count them). */
  embeddingTokens: number;
  /** Texts whose vectors came from the archive's cache instead of a request. */
  embeddingsCached: number;
  /** Secrets masked before sending, by kind. */
  redactions: Record<string, number>;
}

export function emptyUsage(): ProviderUsage {
  return { requests: 0, retries: 0, inputTokens: 0, outputTokens: 0, embeddingTokens: 0, embeddingsCached: 0, redactions: {} };
}

/** `--fallback extractive` used: which provider failed, why, and what was used instead. */
export interface FallbackEvent {
  readonly provider: string;
  readonly reason: string;
  readonly usedInstead: string;
}
