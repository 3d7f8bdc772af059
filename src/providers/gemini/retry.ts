/**
 * When to try a failed Gemini request again, and how long to wait first: exponential backoff with
 * jitter on 429/5xx, the server's own wait (`Retry-After`, or the API's `RetryInfo.retryDelay`)
 * when it gives one, a cap on attempts and a cap on the total time.
 */

export interface RetryPolicy {
  /** Attempts in all, the first included (default 4). */
  readonly maxAttempts: number;
  /** First backoff; doubles each retry (default 1 s). */
  readonly baseDelayMs: number;
  /** No single wait is longer than this, unless the server asks for it (default 30 s). */
  readonly maxDelayMs: number;
  /** Give up rather than wait past this much time without an answer (default 5 min). */
  readonly maxTotalMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 30_000, maxTotalMs: 300_000 };

/** HTTP statuses worth another try: rate limited, or a server-side failure. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** The wait before retry `retry` (1 = the first retry): base · 2^(retry-1), ±50 % jitter, capped. */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(exponential * (0.5 + random() * 0.5));
}

/**
 * Milliseconds from a `Retry-After` header: delta-seconds or an HTTP date [RFC 9110 §10.2.3].
 * Undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * Milliseconds from the Gemini API's error body: `error.details[]` with
 * `@type: type.googleapis.com/google.rpc.RetryInfo` and `retryDelay: "17s"` (a protobuf Duration).
 */
export function retryDelayFromBody(body: unknown): number | undefined {
  const details = (body as { error?: { details?: unknown } } | undefined)?.error?.details;
  if (!Array.isArray(details)) return undefined;
  for (const detail of details) {
    if (typeof detail !== 'object' || detail === null) continue;
    const type = (detail as Record<string, unknown>)['@type'];
    const delay = (detail as Record<string, unknown>)['retryDelay'];
    if (typeof type === 'string' && type.endsWith('google.rpc.RetryInfo') && typeof delay === 'string') {
      const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
      if (match) return Math.round(Number(match[1]) * 1000);
    }
  }
  return undefined;
}

/** Resolves after `ms`, or rejects at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
