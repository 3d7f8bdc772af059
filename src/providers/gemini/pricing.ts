import type { ProviderUsage } from '../../core/provider-contracts.js';

/** Flash summaries: the stable Gemini 3 generation Flash (the seed's `gemini-3-flash` is not an API id). */
export const DEFAULT_SUMMARY_MODEL = 'gemini-3.5-flash';
/** Text embeddings: Google's text embedding model on the Gemini API. */
export const DEFAULT_EMBEDDING_MODEL = 'gemini-embedding-001';

/**
 * Standard (paid tier, pay-as-you-go) prices in US dollars per million tokens, from
 * ai.google.dev/gemini-api/docs/pricing as listed in November 2026. Output prices include
 * thinking tokens. A model not listed gets no cost estimate rather than a wrong one.
 */
const PRICES_PER_MILLION: Readonly<Record<string, { readonly input: number; readonly output: number }>> = {
  'gemini-3.5-flash': { input: 1.5, output: 9 },
  'gemini-3-flash-preview': { input: 0.5, output: 3 },
  'gemini-3.1-flash-lite': { input: 0.25, output: 1.5 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'gemini-2.5-flash-lite': { input: 0.1, output: 0.4 },
  'gemini-embedding-001': { input: 0.15, output: 0 },
};
const PRICES_AS_OF = '2026-11';

export interface CostEstimate {
  /** US dollars; null when a model in use has no known price. */
  readonly usd: number | null;
  readonly pricesAsOf: string;
}

/** Estimated cost of `usage`, summaries at `summaryModel`'s price and embeddings at `embeddingModel`'s. */
export function estimateCost(usage: ProviderUsage, models: { summaryModel?: string; embeddingModel?: string }): CostEstimate {
  let usd = 0;
  if (usage.inputTokens > 0 || usage.outputTokens > 0) {
    const price = models.summaryModel ? PRICES_PER_MILLION[models.summaryModel] : undefined;
    if (!price) return { usd: null, pricesAsOf: PRICES_AS_OF };
    usd += (usage.inputTokens * price.input + usage.outputTokens * price.output) / 1e6;
  }
  if (usage.embeddingTokens > 0) {
    const price = models.embeddingModel ? PRICES_PER_MILLION[models.embeddingModel] : undefined;
    if (!price) return { usd: null, pricesAsOf: PRICES_AS_OF };
    usd += (usage.embeddingTokens * price.input) / 1e6;
  }
  return { usd, pricesAsOf: PRICES_AS_OF };
}
