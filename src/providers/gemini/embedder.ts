import { createHash } from 'node:crypto';
import type { Embedder, Embedding, EmbeddingClient } from '../../core/provider-contracts.js';
import { addRedactionCounts, redactSecrets } from '../../core/redact.js';
import { DEFAULT_EMBEDDING_MODEL } from './pricing.js';
import { headOf, tailOf } from '../../core/text-cut.js';

/**
 * Vectors kept between runs, keyed by model and a hash of the text, so an unchanged turn is never
 * embedded twice. The archive implements it: `ArchiveStore` (SQLite) at once, `PostgresArchive`
 * asynchronously.
 */
export interface EmbeddingCache {
  getEmbeddings(model: string, hashes: readonly string[]): Map<string, Float32Array> | Promise<Map<string, Float32Array>>;
  putEmbeddings(model: string, entries: readonly { readonly hash: string; readonly vector: ArrayLike<number> }[]): void | Promise<void>;
}

/** What of a long turn is embedded: its head and tail (the model reads about 2,048 tokens). */
const HEAD_CHARS = 6_000;
const TAIL_CHARS = 2_000;

function embeddingText(text: string): string {
  return text.length > HEAD_CHARS + TAIL_CHARS ? `${headOf(text, HEAD_CHARS)}\n…\n${tailOf(text, TAIL_CHARS)}` : text;
}

function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Relevance embeddings from a Gemini embedding model (`--embedder gemini`): batched requests,
 * a configurable model, and vectors cached by content hash when a cache is given.
 */
export class GeminiEmbedder implements Embedder {
  readonly name: string;
  /** Texts whose vectors came from the cache in this embedder's lifetime. */
  cached = 0;
  /** Secrets masked in the texts this embedder sent, by kind. */
  readonly redactions: Record<string, number> = {};

  constructor(
    private readonly client: EmbeddingClient,
    private readonly options: {
      readonly model?: string;
      readonly cache?: EmbeddingCache;
      /** Part of the cache key: where the vectors come from (another endpoint, another vector). */
      readonly cacheKey?: string;
      /** Mask secrets before texts go to the client (default true), whatever client it is. */
      readonly redact?: boolean;
    } = {},
  ) {
    this.name = `gemini:${this.model}`;
  }

  get model(): string {
    return this.options.model ?? DEFAULT_EMBEDDING_MODEL;
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Embedding[]> {
    const sent = texts.map((text) => this.mask(embeddingText(text)));
    // The key includes how the text was prepared for sending (redaction on or off), so a vector of
    // masked text is never reused for unmasked text or the other way round.
    const cacheModel = `${this.model}|${this.options.redact === false ? 'raw' : 'redacted'}${this.options.cacheKey ? `|${this.options.cacheKey}` : ''}`;
    const hashes = sent.map(contentHash);
    const found = (await this.options.cache?.getEmbeddings(cacheModel, hashes)) ?? new Map<string, Float32Array>();
    const missing: number[] = [];
    const seen = new Set<string>();
    hashes.forEach((hash, i) => {
      if (found.has(hash) || seen.has(hash)) return;
      seen.add(hash);
      missing.push(i);
    });
    this.cached += hashes.filter((hash) => found.has(hash)).length;
    if (missing.length > 0) {
      const vectors = await this.client.embedTexts(
        this.model,
        missing.map((i) => sent[i] ?? ''),
        options,
      );
      const entries = missing.map((i, k) => ({ hash: hashes[i] ?? '', vector: Float32Array.from(vectors[k] ?? []) }));
      for (const entry of entries) found.set(entry.hash, entry.vector);
      await this.options.cache?.putEmbeddings(cacheModel, entries);
    }
    return hashes.map((hash) => found.get(hash) ?? new Float32Array(0));
  }

  private mask(text: string): string {
    if (this.options.redact === false) return text;
    const { text: masked, counts } = redactSecrets(text);
    addRedactionCounts(this.redactions, counts);
    return masked;
  }
}
