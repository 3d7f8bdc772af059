import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * A local server that speaks the Gemini REST API (v1beta, the Gemini Developer API) the way
 * `@google/genai` calls it — `models/{model}:generateContent`, `:batchEmbedContents`,
 * `:embedContent`, `:countTokens` — with the real response and error shapes, recording every
 * request, and able to inject the faults a real API shows: 429 with `Retry-After` and `RetryInfo`,
 * 500, 503, slow and hung answers, malformed JSON, empty candidates, blocked prompts, and
 * `SAFETY` / `MAX_TOKENS` finish reasons. Listens on 127.0.0.1 on a random port.
 */

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly model: string;
  readonly action: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly rawBody: string;
  readonly receivedAt: number;
}

export type Fault =
  | { kind: 'status'; status: 400 | 401 | 403 | 404 | 429 | 500 | 502 | 503 | 504; retryAfterSeconds?: number; retryDelayInBody?: string; message?: string }
  | { kind: 'slow'; delayMs: number }
  | { kind: 'hang' }
  | { kind: 'malformed' }
  | { kind: 'empty-candidates' }
  | { kind: 'empty-text' }
  | { kind: 'finish'; finishReason: 'SAFETY' | 'MAX_TOKENS' | 'RECITATION' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT'; text?: string }
  | { kind: 'prompt-blocked'; blockReason: 'SAFETY' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT' }
  | { kind: 'reply'; text: string };

export interface FakeGeminiOptions {
  /** The answer to generateContent when no fault applies (default: `defaultSummary`). */
  readonly respond?: (request: { model: string; body: unknown; text: string }) => string;
  /** Dimensions of the fake embeddings (default 16). */
  readonly dimensions?: number;
  /** When set, a request without this key (header or `?key=`) gets the API's 400. */
  readonly apiKey?: string;
}

export interface FakeGemini {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** The next `times` (default 1) requests (of `action`, when given) get this fault. */
  fail(fault: Fault, options?: { action?: string; times?: number }): void;
  /** Every request (of `action`) gets this fault until cleared. */
  failAlways(fault: Fault, options?: { action?: string }): void;
  clearFaults(): void;
  /** Clears the recorded requests and the faults. */
  reset(): void;
  close(): Promise<void>;
}

interface QueuedFault {
  readonly fault: Fault;
  readonly action: string | undefined;
  remaining: number;
}

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Paths, ids and code identifiers in `text`, in first-seen order. */
export function identifiersIn(text: string): string[] {
  const found = new Set<string>();
  const patterns = [
    /(?:[\w@.+-]+\/)+[\w@.+-]+\.[A-Za-z0-9]{1,8}\b/g,
    /\b[\w-]+\.(?:ts|tsx|js|json|jsonl|md|py|rs|go|sql|yaml|yml|toml|sh)\b/g,
    /\b(?:[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g,
    /\b(?:REQ|TAS|PRD)-\d+\b/g,
    /`([^`\n]{2,60})`/g,
  ];
  for (const pattern of patterns) for (const m of text.matchAll(pattern)) found.add(m[1] ?? m[0]);
  return [...found];
}

/** A short deterministic "summary": the sections, and the identifiers of the request verbatim. */
export function defaultSummary(text: string): string {
  const ids = identifiersIn(text.replace(/^[\s\S]*?<<<TRANSCRIPT-[0-9a-f]+\n/, '')).slice(0, 60);
  return [
    '## Goal',
    'Continue the task named in the request.',
    '## Decisions',
    'none',
    '## Done',
    'none',
    '## Failed approaches',
    'none',
    '## Open work',
    'none',
    '## Files and identifiers',
    ...ids.map((id) => `- ${id}`),
    '## Lookup hints',
    'devs-ctx recall',
  ].join('\n');
}

/** A deterministic unit vector: hashed bag of words, so similar texts get similar vectors. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const v = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 16777619);
    const index = (h >>> 0) % dimensions;
    v[index] = (v[index] ?? 0) + 1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

function textOf(body: unknown): string {
  const parts: string[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (k === 'text' && typeof v === 'string') parts.push(v);
        else visit(v);
      }
    }
  };
  visit((body as { contents?: unknown } | undefined)?.contents ?? body);
  return parts.join('\n');
}

export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const requests: RecordedRequest[] = [];
  let queue: QueuedFault[] = [];
  let always: QueuedFault[] = [];
  const sockets = new Set<Socket>();
  const dimensions = options.dimensions ?? 16;

  const takeFault = (action: string): Fault | undefined => {
    const queued = queue.find((q) => q.remaining > 0 && (q.action === undefined || q.action === action));
    if (queued) {
      queued.remaining--;
      queue = queue.filter((q) => q.remaining > 0);
      return queued.fault;
    }
    return always.find((q) => q.action === undefined || q.action === action)?.fault;
  };

  const sendJson = (res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void => {
    const text = JSON.stringify(payload);
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  };
  const sendError = (res: ServerResponse, status: number, message: string, details?: unknown[], headers: Record<string, string> = {}): void =>
    sendJson(res, status, { error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN', ...(details ? { details } : {}) } }, headers);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = /^\/v1beta\/models\/([^:/]+):([A-Za-z]+)$/.exec(url.pathname);
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : (v ?? '');
    const model = match?.[1] ?? '';
    const action = match?.[2] ?? '';
    requests.push({ method: req.method ?? '', path: url.pathname + url.search, model, action, headers, body, rawBody, receivedAt: Date.now() });

    if (!match || req.method !== 'POST') {
      sendError(res, 404, `Method not found: ${url.pathname}`);
      return;
    }
    if (options.apiKey !== undefined && headers['x-goog-api-key'] !== options.apiKey && url.searchParams.get('key') !== options.apiKey) {
      sendError(res, 400, 'API key not valid. Please pass a valid API key.', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }]);
      return;
    }
    if (body === undefined) {
      sendError(res, 400, 'Invalid JSON payload received.');
      return;
    }

    const fault = takeFault(action);
    if (fault?.kind === 'hang') return; // never answers; close() destroys the socket
    if (fault?.kind === 'slow') await new Promise((r) => setTimeout(r, fault.delayMs));
    if (fault?.kind === 'status') {
      const details = fault.retryDelayInBody
        ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: fault.retryDelayInBody }]
        : fault.status === 429
          ? [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_requests' }] }]
          : undefined;
      const message = fault.message ?? (fault.status === 429 ? 'You exceeded your current quota, please check your plan and billing details.' : `The service is currently unavailable (${fault.status}).`);
      sendError(res, fault.status, message, details, fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {});
      return;
    }
    if (fault?.kind === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
      res.end('{"candidates": [{"content": {"parts": [{"text": "cut');
      return;
    }

    if (action === 'generateContent') {
      const text = textOf(body);
      const usage = (answer: string) => ({
        promptTokenCount: Math.ceil(text.length / 4),
        candidatesTokenCount: Math.ceil(answer.length / 4),
        totalTokenCount: Math.ceil(text.length / 4) + Math.ceil(answer.length / 4),
      });
      const base = { modelVersion: model, responseId: `resp-${requests.length}` };
      if (fault?.kind === 'empty-candidates') {
        sendJson(res, 200, { candidates: [], usageMetadata: usage(''), ...base });
        return;
      }
      if (fault?.kind === 'prompt-blocked') {
        sendJson(res, 200, { promptFeedback: { blockReason: fault.blockReason, safetyRatings: [] }, usageMetadata: usage(''), ...base });
        return;
      }
      const answer =
        fault?.kind === 'reply' ? fault.text
        : fault?.kind === 'empty-text' ? ''
        : fault?.kind === 'finish' ? (fault.text ?? '')
        : (options.respond ?? ((r) => defaultSummary(r.text)))({ model, body, text });
      const finishReason = fault?.kind === 'finish' ? fault.finishReason : 'STOP';
      const content = answer || fault?.kind === 'empty-text' ? { parts: [{ text: answer }], role: 'model' } : { role: 'model' };
      sendJson(res, 200, { candidates: [{ content, finishReason, index: 0 }], usageMetadata: usage(answer), ...base });
      return;
    }
    if (action === 'batchEmbedContents') {
      const list = (body as { requests?: { content?: { parts?: { text?: string }[] } }[] }).requests ?? [];
      if (list.length > 100) {
        sendError(res, 400, '* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch');
        return;
      }
      sendJson(res, 200, { embeddings: list.map((r) => ({ values: fakeEmbedding((r.content?.parts ?? []).map((p) => p.text ?? '').join(' '), dimensions) })) });
      return;
    }
    if (action === 'embedContent') {
      const content = (body as { content?: { parts?: { text?: string }[] } }).content;
      sendJson(res, 200, { embedding: { values: fakeEmbedding((content?.parts ?? []).map((p) => p.text ?? '').join(' '), dimensions) } });
      return;
    }
    if (action === 'countTokens') {
      sendJson(res, 200, { totalTokens: Math.ceil(textOf(body).length / 4) });
      return;
    }
    sendError(res, 404, `Method not found: ${action}`);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => sendError(res, 500, String(error)));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no address');

  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    fail(fault, opts = {}) {
      queue.push({ fault, action: opts.action, remaining: opts.times ?? 1 });
    },
    failAlways(fault, opts = {}) {
      always.push({ fault, action: opts.action, remaining: Infinity });
    },
    clearFaults() {
      queue = [];
      always = [];
    },
    reset() {
      requests.length = 0;
      queue = [];
      always = [];
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
