import type { TextTokenCounter } from '../core/accounting.js';
import { DEFAULT_HARD_LIMIT_TOKENS, DEFAULT_PINNED_PREFIX_TURNS, DEFAULT_SOFT_LIMIT_TOKENS } from '../core/policy.js';
import { ContextPruner } from '../core/prune/context-pruner.js';
import type { ContextPrunerOptions } from '../core/prune/context-pruner.js';
import type { LLMClient, Summarizer } from '../core/provider-contracts.js';
import { loadCounter } from '../core/tokens/encodings.js';
import { ExtractiveSummarizer } from './extractive-summarizer.js';
import { FlashSummarizer } from './gemini/flash-summarizer.js';
import type { FlashSummarizerConfig } from './gemini/flash-summarizer.js';
import { DEFAULT_SUMMARY_MODEL } from './gemini/pricing.js';
import { LocalEmbedder } from './local-embedder.js';

export interface DefaultPrunerOptions extends ContextPrunerOptions {
  /** A summarizer of your own; wins over the one built from `llmClient`. */
  readonly summarizer?: Summarizer;
  /** Settings for the Flash summarizer built from `llmClient` (the seed's values by default). */
  readonly flash?: FlashSummarizerConfig;
}

/** [seed 000] The Flash summarizer's settings: maxOutputTokens 4096, temperature 0.1. */
export const DEFAULT_FLASH_CONFIG = { model: DEFAULT_SUMMARY_MODEL, maxOutputTokens: 4096, temperature: 0.1 } as const;

/**
 * [seed 000] [TAS-105] A `ContextPruner` with the seed's limits (soft 500k, hard 800k, two pinned
 * prefix turns), js-tiktoken counts (o200k_base) and relevance ranking by the offline local
 * embedder. Given an `LLMClient` (a `GeminiClient`), summaries come from a Gemini Flash model with
 * the seed's settings; without one, from the offline extractive summarizer, with no network and
 * no key. `createDefaultContextPruner(options)` (no client) also works.
 */
export function createDefaultContextPruner(llmClient?: LLMClient | DefaultPrunerOptions, options: DefaultPrunerOptions = {}): ContextPruner {
  const client = isClient(llmClient) ? llmClient : undefined;
  const opts = isClient(llmClient) ? options : { ...(llmClient ?? {}), ...options };
  const counter: TextTokenCounter = opts.counter ?? loadCounter('o200k_base');
  const summarizer =
    opts.summarizer ?? (client ? new FlashSummarizer(client, { ...DEFAULT_FLASH_CONFIG, counter, ...opts.flash }) : new ExtractiveSummarizer(counter));
  return new ContextPruner(summarizer, {
    softLimitTokens: DEFAULT_SOFT_LIMIT_TOKENS,
    hardLimitTokens: DEFAULT_HARD_LIMIT_TOKENS,
    pinnedPrefixTurns: DEFAULT_PINNED_PREFIX_TURNS,
    embedder: new LocalEmbedder(),
    strategy: 'relevance',
    ...opts,
    counter,
  });
}

function isClient(value: unknown): value is LLMClient {
  return typeof (value as { generate?: unknown } | undefined)?.generate === 'function';
}
