import type { TextTokenCounter } from '../core/accounting.js';
import { DEFAULT_HARD_LIMIT_TOKENS, DEFAULT_PINNED_PREFIX_TURNS, DEFAULT_SOFT_LIMIT_TOKENS } from '../core/policy.js';
import { ContextPruner } from '../core/prune/context-pruner.js';
import type { ContextPrunerOptions } from '../core/prune/context-pruner.js';
import type { Summarizer } from '../core/providers.js';
import { loadCounter } from '../core/tokens/encodings.js';
import { ExtractiveSummarizer } from './extractive-summarizer.js';
import { LocalEmbedder } from './local-embedder.js';

export interface DefaultPrunerOptions extends ContextPrunerOptions {
  /** Defaults to the offline extractive summarizer (a Gemini Flash summarizer plugs in here). */
  readonly summarizer?: Summarizer;
}

/**
 * [seed 000] [TAS-105] A `ContextPruner` with the seed's limits (soft 500k, hard 800k, two pinned
 * prefix turns), js-tiktoken counts (o200k_base), relevance ranking by the offline local embedder,
 * and the offline extractive summarizer unless another is given. Works with no network and no key.
 */
export function createDefaultContextPruner(options: DefaultPrunerOptions = {}): ContextPruner {
  const counter: TextTokenCounter = options.counter ?? loadCounter('o200k_base');
  const summarizer = options.summarizer ?? new ExtractiveSummarizer(counter);
  return new ContextPruner(summarizer, {
    softLimitTokens: DEFAULT_SOFT_LIMIT_TOKENS,
    hardLimitTokens: DEFAULT_HARD_LIMIT_TOKENS,
    pinnedPrefixTurns: DEFAULT_PINNED_PREFIX_TURNS,
    embedder: new LocalEmbedder(),
    strategy: 'relevance',
    ...options,
    counter,
  });
}
