import { ProviderError } from '../core/errors.js';
import type { Embedder, Embedding, FallbackEvent, Summarizer, SummaryRequest } from '../core/provider-contracts.js';

/**
 * `--fallback extractive`: when the primary summarizer fails (a `ProviderError`; Ctrl-C is not a
 * failure), the offline one writes the summary and the caller is told why.
 */
export class FallbackSummarizer implements Summarizer {
  readonly name: string;

  constructor(
    private readonly primary: Summarizer,
    private readonly fallback: Summarizer,
    private readonly onFallback: (event: FallbackEvent) => void,
  ) {
    this.name = primary.name;
  }

  async summarize(request: SummaryRequest): Promise<string> {
    try {
      return await this.primary.summarize(request);
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      this.onFallback({ provider: this.primary.name, reason: error.message, usedInstead: this.fallback.name });
      return this.fallback.summarize(request);
    }
  }
}

/**
 * The same for embeddings: once the primary fails (a `ProviderError`), this and every later batch
 * is embedded by the fallback, and the caller is told once. Vectors of two embedders cannot be
 * compared, so a ranking should not mix them: a prune given `embedder` and `fallbackEmbedder`
 * (PruneRequest, ContextPrunerOptions) ranks every turn again with the fallback instead, and says
 * so in its result.
 */
export class FallbackEmbedder implements Embedder {
  readonly name: string;
  private failed = false;

  constructor(
    private readonly primary: Embedder,
    private readonly fallback: Embedder,
    private readonly onFallback: (event: FallbackEvent) => void,
  ) {
    this.name = primary.name;
  }

  async embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<Embedding[]> {
    if (this.failed) return this.fallback.embed(texts, options);
    try {
      return await this.primary.embed(texts, options);
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      if (!this.failed) this.onFallback({ provider: this.primary.name, reason: error.message, usedInstead: this.fallback.name });
      this.failed = true;
      return this.fallback.embed(texts, options);
    }
  }
}
