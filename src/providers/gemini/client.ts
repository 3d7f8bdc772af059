import { InterruptedError, ProviderError } from '../../core/errors.js';
import type { EmbeddingClient, GenerateRequest, GenerateResult, LLMClient, ProviderUsage } from '../../core/provider-contracts.js';
import { emptyUsage } from '../../core/provider-contracts.js';
import { addRedactionCounts, redactSecrets } from '../../core/redact.js';
import { withResponseHeaders } from './response-headers.js';
import type { ResponseRecord } from './response-headers.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, parseRetryAfter, RETRYABLE_STATUSES, retryDelayFromBody, sleep } from './retry.js';
import type { RetryPolicy } from './retry.js';

/** The public Gemini API; `DEVS_CTX_GEMINI_BASE_URL` (or `baseUrl`) points elsewhere. */
const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';
/** One request may take this long before it is abandoned (`--timeout`). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** batchEmbedContents takes at most 100 texts per request. */
const EMBED_BATCH_SIZE = 100;

export interface GeminiClientOptions {
  readonly apiKey: string;
  readonly baseUrl?: string;
  /** Per request (per attempt), in milliseconds. */
  readonly timeoutMs?: number;
  readonly retry?: Partial<RetryPolicy>;
  /** Mask secret shapes in every text before it is sent (default true). */
  readonly redact?: boolean;
  /** Told before each retry, e.g. to update a spinner. */
  readonly onRetry?: (info: { attempt: number; maxAttempts: number; waitMs: number; reason: string }) => void;
  /** Estimates tokens of texts whose usage the API does not report (embeddings). */
  readonly countTokens?: (text: string) => number;
  /** For tests: a deterministic jitter source. */
  readonly random?: () => number;
}

interface GenAiModels {
  generateContent(params: unknown): Promise<GenAiResponse>;
  embedContent(params: unknown): Promise<{ embeddings?: { values?: number[] }[] }>;
}

interface GenAiResponse {
  readonly text?: string;
  readonly candidates?: { finishReason?: string; content?: { parts?: { text?: string; thought?: boolean }[] } }[];
  readonly promptFeedback?: { blockReason?: string };
  readonly usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; thoughtsTokenCount?: number };
}

/**
 * The Gemini API through `@google/genai`, with what a CLI that must fail closed needs around it:
 * a per-request timeout, retries with backoff on 429/5xx honouring the server's wait, a cap on
 * attempts and on total time, Ctrl-C that aborts the request in flight, secret masking before
 * anything is sent, usage counting, and errors that never contain the key.
 */
export class GeminiClient implements LLMClient, EmbeddingClient {
  readonly usage: ProviderUsage = emptyUsage();
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly policy: RetryPolicy;
  private models: Promise<GenAiModels> | undefined;
  /** When the current run of failing attempts began (reset by every answer): the cap on retry time. */
  private firstRequestAt: number | undefined;

  constructor(private readonly options: GeminiClientOptions) {
    if (!options.apiKey) throw new ProviderError('no Gemini API key', 'gemini', 'set GEMINI_API_KEY (or GOOGLE_API_KEY)');
    this.baseUrl = (options.baseUrl ?? GEMINI_DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const systemInstruction = this.outgoing(request.systemInstruction);
    const prompt = this.outgoing(request.prompt);
    const models = await this.sdk();
    const response = await this.withRetries(`${request.model} generateContent`, request.signal, (abortSignal) =>
      models.generateContent({
        model: request.model,
        contents: [{ role: 'user', parts: [{ text: prompt }] }],
        config: {
          systemInstruction,
          maxOutputTokens: request.maxOutputTokens,
          temperature: request.temperature,
          ...thinkingConfig(request.model, request.thinking ?? 'low'),
          abortSignal,
        },
      }),
    );
    const usage = response.usageMetadata ?? {};
    const inputTokens = usage.promptTokenCount ?? 0;
    const outputTokens = (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0);
    this.usage.inputTokens += inputTokens;
    this.usage.outputTokens += outputTokens;
    const candidate = response.candidates?.[0];
    const text = (candidate?.content?.parts ?? [])
      .filter((part) => part.thought !== true && typeof part.text === 'string')
      .map((part) => part.text)
      .join('');
    return {
      text,
      ...(candidate?.finishReason ? { finishReason: candidate.finishReason } : {}),
      ...(response.promptFeedback?.blockReason ? { blockReason: response.promptFeedback.blockReason } : {}),
      inputTokens,
      outputTokens,
    };
  }

  async embedTexts(model: string, texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const models = await this.sdk();
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += EMBED_BATCH_SIZE) {
      const batch = texts.slice(start, start + EMBED_BATCH_SIZE).map((t) => this.outgoing(t));
      for (const text of batch) this.usage.embeddingTokens += this.options.countTokens?.(text) ?? Math.ceil(text.length / 4);
      const response = await this.withRetries(`${model} batchEmbedContents`, options.signal, (abortSignal) =>
        models.embedContent({ model, contents: batch, config: { taskType: 'SEMANTIC_SIMILARITY', abortSignal } }),
      );
      const got = response.embeddings ?? [];
      if (got.length !== batch.length || got.some((e) => !Array.isArray(e.values) || e.values.length === 0)) {
        throw new ProviderError(
          `Gemini ${model} returned ${got.length} embeddings for ${batch.length} texts (or an empty vector); nothing was written`,
          'gemini',
          'check --embedding-model, or use --embedder local',
        );
      }
      for (const e of got) vectors.push(e.values as number[]);
    }
    return vectors;
  }

  /** What leaves the machine: masked unless redaction is off. */
  private outgoing(text: string): string {
    if (this.options.redact === false) return text;
    const { text: masked, counts } = redactSecrets(text);
    addRedactionCounts(this.usage.redactions, counts);
    return masked;
  }

  private sdk(): Promise<GenAiModels> {
    // Imported lazily: the SDK is heavy and most runs never call it.
    this.models ??= import('@google/genai').then(
      ({ GoogleGenAI }) =>
        // No httpOptions.retryOptions: the SDK then does not retry by itself; withRetries does.
        new GoogleGenAI({ apiKey: this.options.apiKey, httpOptions: { baseUrl: this.baseUrl } }).models as unknown as GenAiModels,
    );
    return this.models;
  }

  private async withRetries<T>(what: string, signal: AbortSignal | undefined, call: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    this.firstRequestAt ??= Date.now();
    const started = this.firstRequestAt;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw new InterruptedError();
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const abortSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
      const record: ResponseRecord = {};
      this.usage.requests++;
      try {
        const answer = await withResponseHeaders(record, () => call(abortSignal));
        // The cap is on time spent without an answer: a success starts it again.
        this.firstRequestAt = undefined;
        return answer;
      } catch (error) {
        if (signal?.aborted) throw new InterruptedError();
        const failure = this.describe(error, record, timeout.aborted);
        if (!failure.retryable || attempt >= this.policy.maxAttempts) {
          const tries = attempt > 1 ? ` (after ${attempt} attempts)` : '';
          throw new ProviderError(`Gemini ${what} failed: ${failure.reason}${tries}; nothing was written`, 'gemini', failure.hint);
        }
        const serverWait = failure.retryAfterMs;
        const waitMs = serverWait ?? backoffDelay(attempt, this.policy, this.options.random);
        const elapsed = Date.now() - started;
        if (elapsed + waitMs > this.policy.maxTotalMs) {
          const asked = serverWait !== undefined ? `the server asked to wait ${seconds(serverWait)}` : `the next wait is ${seconds(waitMs)}`;
          throw new ProviderError(
            `Gemini ${what} failed: ${failure.reason}; ${asked}, past the ${seconds(this.policy.maxTotalMs)} limit on waiting for an answer (after ${attempt} attempts); nothing was written`,
            'gemini',
            failure.hint,
          );
        }
        this.usage.retries++;
        this.options.onRetry?.({ attempt: attempt + 1, maxAttempts: this.policy.maxAttempts, waitMs, reason: failure.reason });
        try {
          await sleep(waitMs, signal);
        } catch {
          throw new InterruptedError();
        }
      }
    }
  }

  private describe(error: unknown, record: ResponseRecord, timedOut: boolean): { reason: string; retryable: boolean; retryAfterMs?: number; hint?: string } {
    if (timedOut) {
      // Not retried: a request that used the whole timeout is likely to do so again.
      return { reason: `no answer within ${seconds(this.timeoutMs)}`, retryable: false, hint: 'raise --timeout, or try again later' };
    }
    const message = this.scrub(error instanceof Error ? error.message : String(error));
    if (error instanceof SyntaxError) {
      return {
        reason: `the answer was not valid JSON (${message.slice(0, 200)})`,
        retryable: false,
        hint: 'check DEVS_CTX_GEMINI_BASE_URL points at the Gemini API',
      };
    }
    const status = statusOf(error) ?? (record.status !== undefined && record.status >= 400 ? record.status : undefined);
    if (status !== undefined) {
      const body = parseJson(message);
      const apiMessage = this.scrub(String((body as { error?: { message?: unknown } } | undefined)?.error?.message ?? message)).slice(0, 300);
      const retryAfterMs = parseRetryAfter(record.retryAfter) ?? retryDelayFromBody(body);
      const reason = `HTTP ${status}${apiMessage ? ` (${apiMessage})` : ''}`;
      if (RETRYABLE_STATUSES.has(status))
        return { reason, retryable: true, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}), hint: 'try again later, or pass --fallback extractive' };
      const hint =
        status === 401 || status === 403 || (status === 400 && /api key/i.test(apiMessage))
          ? 'check the API key (GEMINI_API_KEY, GOOGLE_API_KEY or the config file)'
          : status === 404
            ? 'check the model id (--model, --embedding-model)'
            : 'see the message above';
      return { reason, retryable: false, hint };
    }
    if (error instanceof SyntaxError || /JSON/.test(message)) {
      return {
        reason: `the answer was not valid JSON (${message.slice(0, 200)})`,
        retryable: false,
        hint: 'check DEVS_CTX_GEMINI_BASE_URL points at the Gemini API',
      };
    }
    const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const network = cause?.code ?? '';
    // Only a connection that dropped or timed out at the network level is worth another try; a bad
    // URL, an unknown host or a refused connection will fail the same way again.
    const transient = ['ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'].includes(network);
    return {
      reason: this.scrub(`could not reach ${displayUrl(this.baseUrl)} (${network || cause?.message || message})`),
      retryable: transient,
      hint: 'check the network, or DEVS_CTX_GEMINI_BASE_URL',
    };
  }

  /** Neither the key nor credentials in the base URL appear in a message, whatever was echoed. */
  private scrub(text: string): string {
    let out = this.options.apiKey.length > 0 ? text.split(this.options.apiKey).join('[REDACTED]') : text;
    out = out.split(this.baseUrl).join(displayUrl(this.baseUrl));
    return out.replace(/(\b[a-z][a-z0-9+.-]{0,31}:\/\/)[^\s/@"']+@/gi, '$1[REDACTED]@');
  }
}

/** A URL fit to print: no user, password or query (a key may ride in `?key=`). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(the configured base URL)';
  }
}

/**
 * The thinking setting for `model`: thinking tokens count against maxOutputTokens, so summaries ask
 * for little thinking. Gemini 3 models take a level; 2.5 Flash models a budget (0 turns it off);
 * other models are sent nothing.
 */
function thinkingConfig(model: string, thinking: 'low' | 'model'): { thinkingConfig?: { thinkingLevel?: string; thinkingBudget?: number } } {
  if (thinking === 'model') return {};
  const id = model.replace(/^models\//, '');
  if (/^gemini-[3-9]/.test(id)) return { thinkingConfig: { thinkingLevel: 'LOW' } };
  if (/^gemini-2\.5-flash/.test(id)) return { thinkingConfig: { thinkingBudget: 0 } };
  return {};
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
