import type { TextTokenCounter } from '../core/accounting.js';
import type { ConfigFile } from '../core/config.js';
import { resolveGeminiBaseUrl } from '../core/config.js';
import { keyFileProblem, loadUserConfig } from '../io/config.js';
import { UsageError } from '../core/errors.js';
import type { ProvidersReport } from '../core/reports/prune.js';
import type { Embedder, FallbackEvent, ProviderUsage, Summarizer } from '../core/provider-contracts.js';
import { emptyUsage } from '../core/provider-contracts.js';
import { addRedactionCounts, redactionTotal } from '../core/redact.js';
import type { InjectedRefresh } from '../core/reports/refresh.js';
import { ExtractiveSummarizer } from '../providers/extractive-summarizer.js';
import { FallbackSummarizer } from '../providers/fallback.js';
import type { EmbeddingCache } from '../providers/gemini/embedder.js';
import type { LocalEmbedder } from '../providers/local-embedder.js';
import { OutlineCondenser } from '../providers/summary-providers.js';
import type { Condenser } from '../providers/summary-providers.js';
import type { CliContext } from './context.js';
import type { PruneOptions } from './flags/prune.js';
import type { EMBEDDER_NAMES, SUMMARIZER_NAMES } from '../core/names.js';

/** A project's config file and where it was found. */
export interface ConfigSource {
  readonly path: string;
  readonly config: ConfigFile;
}

/** What the prune command's flags say about providers (only what they said; `redact` is false with --no-redact). */
type ProviderFlags = Partial<Pick<PruneOptions, 'summarizer' | 'embedder' | 'model' | 'embeddingModel' | 'timeout' | 'fallback' | 'redact'>>;

export interface ProviderChoice {
  readonly summarizer: (typeof SUMMARIZER_NAMES)[number];
  readonly embedder: (typeof EMBEDDER_NAMES)[number];
  readonly summaryModel: string;
  readonly embeddingModel: string;
  readonly timeoutMs: number;
  readonly fallback: boolean;
  readonly redact: boolean;
  readonly apiKey?: string;
  /** Where the key came from, for messages (never the key itself). */
  readonly keySource?: string;
  readonly baseUrl?: string;
}

const KEY_HINT =
  'set GEMINI_API_KEY (or GOOGLE_API_KEY) in the environment, or "geminiApiKey" in a devs-ctx.config.json only you can read (chmod 600) and git does not track';

/**
 * [SPEC §7] Which summarizer and embedder a prune uses: flag, then environment, then config file;
 * Gemini by default only when a key is set, so with no key everything stays on this machine.
 */
export async function chooseProviders(flags: ProviderFlags, ctx: CliContext, file: ConfigSource | undefined): Promise<ProviderChoice> {
  const config = file?.config;
  const { DEFAULT_EMBEDDING_MODEL, DEFAULT_SUMMARY_MODEL } = await import('../providers/gemini/pricing.js');
  const { DEFAULT_REQUEST_TIMEOUT_MS } = await import('../providers/gemini/client.js');
  const envKey = nonEmpty(ctx.env['GEMINI_API_KEY']) ? 'GEMINI_API_KEY' : nonEmpty(ctx.env['GOOGLE_API_KEY']) ? 'GOOGLE_API_KEY' : undefined;
  const fileKey = envKey === undefined && file && config?.geminiApiKey ? ownKey(file, ctx) : undefined;
  const apiKey = envKey ? ctx.env[envKey] : fileKey;
  const keySource = envKey ?? (fileKey ? 'the config file' : undefined);
  const summarizer = flags.summarizer ?? config?.summarizer ?? (apiKey ? 'gemini' : 'extractive');
  const embedder = flags.embedder ?? config?.embedder ?? (apiKey ? 'gemini' : 'local');
  if ((summarizer === 'gemini' || embedder === 'gemini') && !apiKey) {
    const which = summarizer === 'gemini' ? `--summarizer gemini` : `--embedder gemini`;
    throw new UsageError(`${which} needs a Gemini API key, and none is set`, KEY_HINT);
  }
  const timeout = flags.timeout ?? config?.timeout;
  // A project's config arrives with a clone: it may not send the key elsewhere unless the user says
  // so. Only decided when a request will be made, so an offline run never reads the user's config.
  let baseUrl: string | undefined;
  if (summarizer === 'gemini' || embedder === 'gemini') {
    const user = loadUserConfig(ctx.env);
    const resolved = resolveGeminiBaseUrl({
      ...(ctx.env['DEVS_CTX_GEMINI_BASE_URL'] !== undefined ? { env: ctx.env['DEVS_CTX_GEMINI_BASE_URL'] } : {}),
      ...(user ? { user } : {}),
      ...(file ? { project: file } : {}),
    });
    if (resolved.ignored) ctx.stderr.write(`devs-ctx: warning: ${resolved.ignored}\n`);
    baseUrl = resolved.baseUrl;
  }
  return {
    summarizer,
    embedder,
    summaryModel: flags.model ?? nonEmpty(ctx.env['DEVS_CTX_MODEL']) ?? config?.model ?? DEFAULT_SUMMARY_MODEL,
    embeddingModel: flags.embeddingModel ?? nonEmpty(ctx.env['DEVS_CTX_EMBEDDING_MODEL']) ?? config?.embeddingModel ?? DEFAULT_EMBEDDING_MODEL,
    timeoutMs: timeout !== undefined ? Math.round(timeout * 1000) : DEFAULT_REQUEST_TIMEOUT_MS,
    fallback: (flags.fallback ?? config?.fallback) === 'extractive',
    redact: flags.redact ?? config?.redact ?? true,
    ...(apiKey ? { apiKey } : {}),
    ...(keySource ? { keySource } : {}),
    ...(baseUrl ? { baseUrl } : {}),
  };
}

/** The config file's key, when it is the user's own secret (`keyFileProblem`); else none, with a warning. */
function ownKey(file: ConfigSource, ctx: CliContext): string | undefined {
  const problem = keyFileProblem(file.path);
  if (problem === undefined) return file.config.geminiApiKey;
  ctx.stderr.write(
    `devs-ctx: warning: ignoring "geminiApiKey" in ${file.path}: ${problem}; a key is read only from a config file only you can read (chmod 600 it if the key is yours)\n`,
  );
  return undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== '' ? value : undefined;
}

/** The providers of one prune, and what they cost and did, for the report. */
export interface ProviderSet {
  readonly summarizer: Summarizer;
  readonly embedder: Embedder;
  /** `--fallback extractive` with a remote embedder: the offline one, to rank every turn again with if the remote one fails. */
  readonly fallbackEmbedder?: Embedder;
  /** Fallbacks the summarizer took (a ranking's is in its result). */
  readonly fallbacks: FallbackEvent[];
  readonly usage: () => ProviderUsage;
}

export async function buildProviders(
  choice: ProviderChoice,
  options: {
    readonly counter: TextTokenCounter;
    /** The offline embedder, fitted to the transcript's turns (its BM25 weights): used for ranking, or as the fallback. */
    readonly local: LocalEmbedder;
    readonly cache?: EmbeddingCache;
    /** Summaries are estimated offline (a dry run does not pay for a summary it will not write). */
    readonly offlineSummary?: boolean;
    readonly onProgress: (message: string) => void;
  },
): Promise<ProviderSet> {
  const fallbacks: FallbackEvent[] = [];
  const extractive = new ExtractiveSummarizer(options.counter);
  const { local } = options;
  if (choice.summarizer === 'extractive' && choice.embedder === 'local') {
    return { summarizer: extractive, embedder: local, fallbacks, usage: emptyUsage };
  }
  const { GeminiClient, displayUrl } = await import('../providers/gemini/client.js');
  const { FlashSummarizer } = await import('../providers/gemini/flash-summarizer.js');
  const { GeminiEmbedder } = await import('../providers/gemini/embedder.js');
  const client = new GeminiClient({
    apiKey: choice.apiKey ?? '',
    ...(choice.baseUrl ? { baseUrl: choice.baseUrl } : {}),
    timeoutMs: choice.timeoutMs,
    redact: choice.redact,
    countTokens: (text) => options.counter.count(text),
    onRetry: ({ attempt, maxAttempts, waitMs, reason }) =>
      options.onProgress(`Gemini: ${reason.slice(0, 60)}; attempt ${attempt} of ${maxAttempts} in ${Math.ceil(waitMs / 1000)} s`),
  });
  let summarizer: Summarizer = extractive;
  let flash: InstanceType<typeof FlashSummarizer> | undefined;
  if (choice.summarizer === 'gemini' && !options.offlineSummary) {
    flash = new FlashSummarizer(client, { model: choice.summaryModel, counter: options.counter, onProgress: options.onProgress, redact: choice.redact });
    summarizer = choice.fallback ? new FallbackSummarizer(flash, extractive, (e) => fallbacks.push(e)) : flash;
  }
  let embedder: Embedder = local;
  let geminiEmbedder: InstanceType<typeof GeminiEmbedder> | undefined;
  if (choice.embedder === 'gemini') {
    geminiEmbedder = new GeminiEmbedder(client, {
      model: choice.embeddingModel,
      ...(options.cache ? { cache: options.cache } : {}),
      cacheKey: displayUrl(client.baseUrl),
      redact: choice.redact,
    });
    embedder = geminiEmbedder;
  }
  return {
    summarizer,
    embedder,
    ...(choice.fallback && embedder !== local ? { fallbackEmbedder: local } : {}),
    fallbacks,
    usage: () => {
      const redactions: Record<string, number> = {};
      for (const counts of [client.usage.redactions, flash?.redactions ?? {}, geminiEmbedder?.redactions ?? {}]) addRedactionCounts(redactions, counts);
      return { ...client.usage, embeddingsCached: geminiEmbedder?.cached ?? 0, redactions };
    },
  };
}

/** `rankingFallback`: the ranking's fallback, when its embedder failed (a value of the prune's result). */
export async function providersReport(
  choice: ProviderChoice,
  set: ProviderSet,
  offlineSummary: boolean,
  summaryWritten = true,
  rankingFallback?: FallbackEvent,
): Promise<ProvidersReport> {
  const { estimateCost } = await import('../providers/gemini/pricing.js');
  const usage = set.usage();
  // The ranking comes before the summary: its fallback is listed first.
  const fallbacks = rankingFallback ? [rankingFallback, ...set.fallbacks] : set.fallbacks;
  const summaryModel = choice.summarizer === 'gemini' && !offlineSummary ? choice.summaryModel : undefined;
  const embeddingModel = choice.embedder === 'gemini' ? choice.embeddingModel : undefined;
  const cost = estimateCost(usage, { ...(summaryModel ? { summaryModel } : {}), ...(embeddingModel ? { embeddingModel } : {}) });
  const remote = choice.summarizer === 'gemini' || choice.embedder === 'gemini';
  // Name who actually wrote the summary: never credit Gemini for a fallback's text.
  const summarizerLabel = (): string => {
    if (!summaryWritten) return 'none (no summary needed)';
    if (offlineSummary && choice.summarizer === 'gemini') return 'extractive (dry-run estimate)';
    if (fallbacks.some((f) => f.usedInstead === 'extractive')) return 'extractive (fallback)';
    return summaryModel ? `gemini:${summaryModel}` : 'extractive';
  };
  return {
    summarizer: summarizerLabel(),
    embedder: fallbacks.some((f) => f.usedInstead === 'local-bm25') ? 'local (fallback)' : embeddingModel ? `gemini:${embeddingModel}` : 'local',
    fallback: fallbacks,
    requests: usage.requests,
    retries: usage.retries,
    tokensSent: usage.inputTokens,
    tokensReceived: usage.outputTokens,
    embeddingTokens: usage.embeddingTokens,
    embeddingsCached: usage.embeddingsCached,
    estimatedCostUsd: cost.usd,
    pricesAsOf: cost.pricesAsOf,
    redacted: remote && choice.redact ? { total: redactionTotal(usage.redactions), byKind: usage.redactions } : null,
  };
}

/**
 * The condenser of `refresh`: the offline outline unless the summarizer resolves to gemini (a flag,
 * the config file, or a key in the environment, as for prune); with `--fallback extractive` a failed
 * Gemini condensation falls back to the outline.
 */
export async function refreshCondenser(
  flags: ProviderFlags,
  ctx: CliContext,
  file: ConfigSource | undefined,
  counter: TextTokenCounter,
  signal?: AbortSignal,
): Promise<{ condenser?: Condenser; fallbacks: FallbackEvent[]; report: () => NonNullable<InjectedRefresh['condenser']> }> {
  const fallbacks: FallbackEvent[] = [];
  const choice = await chooseProviders({ ...flags, embedder: 'local' }, ctx, file);
  if (choice.summarizer !== 'gemini') {
    return { fallbacks, report: () => ({ name: 'outline', requests: 0, tokensSent: 0, tokensReceived: 0, fallback: fallbacks }) };
  }
  const { GeminiClient } = await import('../providers/gemini/client.js');
  const { GeminiCondenser, FallbackCondenser } = await import('../providers/gemini/condenser.js');
  const client = new GeminiClient({
    apiKey: choice.apiKey ?? '',
    ...(choice.baseUrl ? { baseUrl: choice.baseUrl } : {}),
    timeoutMs: choice.timeoutMs,
    redact: choice.redact,
  });
  const gemini = new GeminiCondenser(client, { model: choice.summaryModel, counter, redact: choice.redact, ...(signal ? { signal } : {}) });
  const condenser = choice.fallback ? new FallbackCondenser(gemini, new OutlineCondenser(counter), (e) => fallbacks.push(e)) : gemini;
  return {
    condenser,
    fallbacks,
    report: () => ({
      name: gemini.name,
      requests: client.usage.requests,
      tokensSent: client.usage.inputTokens,
      tokensReceived: client.usage.outputTokens,
      fallback: fallbacks,
    }),
  };
}
