/**
 * A local stand-in for the Gemini Developer API (`generativelanguage.googleapis.com`, v1beta) that
 * the real `@google/genai` client can talk to:
 *
 *   new GoogleGenAI({ apiKey, vertexai: false, httpOptions: { baseUrl: fake.url } })
 *
 * What the SDK (1.52) sends, and what this server answers (paths are relative to `baseUrl`):
 *
 * - `ai.models.generateContent` → `POST /v1beta/models/{model}:generateContent`
 *   body `{ contents, systemInstruction?, generationConfig?: { maxOutputTokens, temperature, … },
 *   safetySettings?, tools?, toolConfig? }` (`config.systemInstruction` moves to the top level,
 *   the sampling fields go under `generationConfig`);
 *   answer `{ candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason, index }],
 *   usageMetadata, modelVersion, responseId }`.
 * - `ai.models.generateContentStream` → `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`,
 *   answered as server-sent events, one `data: {GenerateContentResponse}` per chunk.
 * - `ai.models.embedContent` (Gemini API, any number of contents) →
 *   `POST /v1beta/models/{model}:batchEmbedContents` with
 *   `{ requests: [{ model: 'models/{model}', content: { role: 'user', parts: [{ text }] },
 *   taskType?, title?, outputDimensionality? }] }`; answer `{ embeddings: [{ values }] }`.
 *   The single `:embedContent` endpoint (`{ content, … }` → `{ embedding: { values } }`) is served
 *   too, though the SDK never calls it for the Gemini API.
 * - `ai.models.countTokens` → `POST /v1beta/models/{model}:countTokens` with `{ contents }`;
 *   answer `{ totalTokens }`.
 * - The key travels in the `x-goog-api-key` header; `?key=` is accepted as the real API does.
 *
 * Errors use Google's shape `{ error: { code, message, status, details? } }` with
 * `content-type: application/json; charset=UTF-8`, which the SDK turns into an `ApiError` whose
 * `status` is the HTTP status and whose `message` is the JSON body.
 */
import { createServer } from 'node:http';
import { after, before, beforeEach } from 'node:test';
import type { ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type GeminiAction = 'generateContent' | 'streamGenerateContent' | 'embedContent' | 'batchEmbedContents' | 'countTokens';

export interface RecordedRequest {
  method: string;
  /** The URL path without the query, e.g. `/v1beta/models/gemini-2.5-flash:generateContent`. */
  path: string;
  /** Query parameters (e.g. `{ alt: 'sse' }` for streaming, `{ key }` if the key was sent that way). */
  query: Record<string, string>;
  /** The model id without the `models/` prefix (e.g. `gemini-2.5-flash`); '' for unknown paths. */
  model: string;
  /** The method after the colon (`generateContent`, …); '' for unknown paths. */
  action: GeminiAction | (string & {});
  /** Lower-cased header names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  /** The parsed JSON body, or undefined when the body was empty or not JSON. */
  body: unknown;
  rawBody: string;
  receivedAt: number;
}

export type FinishReason = 'SAFETY' | 'MAX_TOKENS' | 'RECITATION' | 'OTHER' | 'BLOCKLIST' | 'PROHIBITED_CONTENT';
export type BlockReason = 'SAFETY' | 'OTHER' | 'BLOCKLIST';
export type FaultStatus = 429 | 500 | 503 | 400 | 403 | 404;

export type Fault =
  /**
   * An error answer in Google's shape. `retryAfterSeconds` adds a `Retry-After` header (the real
   * Gemini API does not normally send one, a gateway in front of it may); `retryDelayInBody` (e.g.
   * "2s") adds a `google.rpc.RetryInfo` detail, as the real API does on per-minute quota 429s.
   */
  | { kind: 'status'; status: FaultStatus; retryAfterSeconds?: number; retryDelayInBody?: string; message?: string }
  /** Answers normally after a delay. */
  | { kind: 'slow'; delayMs: number }
  /** Never answers, until the client aborts or the server closes. */
  | { kind: 'hang' }
  /** 200 with `content-type: application/json` and a truncated, unparseable body. */
  | { kind: 'malformed' }
  /** 200, `candidates: []`. */
  | { kind: 'empty-candidates' }
  /** 200, one candidate whose only part is `{ text: '' }`, finishReason STOP. */
  | { kind: 'empty-text' }
  /**
   * 200, one candidate with this finishReason. With `text`, the candidate carries it; without,
   * MAX_TOKENS/OTHER answer `content: { role: 'model' }` with no parts (what a thinking model that
   * spent its budget returns) and the others answer no content at all (blocked output).
   */
  | { kind: 'finish'; finishReason: FinishReason; text?: string }
  /** 200, `promptFeedback.blockReason` and no candidates. */
  | { kind: 'prompt-blocked'; blockReason: BlockReason }
  /** 200, this exact text as the answer. */
  | { kind: 'reply'; text: string };

export interface FakeGeminiOptions {
  /**
   * What generateContent answers when no fault applies; default: `defaultSummary(text)`.
   * `text` is the text of `contents` (see `requestText`), without the system instruction.
   */
  respond?: (request: { model: string; body: unknown; text: string }) => string;
  /** Dimensions of fake embeddings when a request sets no `outputDimensionality` (default 16). */
  dimensions?: number;
  /**
   * Required API key. A request without a key gets 403 PERMISSION_DENIED, one with another key
   * gets 400 INVALID_ARGUMENT / API_KEY_INVALID, like the real API. Unset: any key (or none) is fine.
   */
  apiKey?: string;
  /** Adds `thoughtsTokenCount` to generateContent usage (and to the total), as thinking models do. */
  thoughtsTokenCount?: number;
  /**
   * Simulates a thinking model (Gemini 2.5 / 3): unless `generationConfig.thinkingConfig` asks for
   * little (`thinkingLevel` LOW/MINIMAL → `low` tokens, `thinkingBudget: 0` → none), the model
   * thinks `default` tokens, and thinking counts against `maxOutputTokens`: when thoughts and the
   * answer do not fit, the answer is `finishReason: MAX_TOKENS` with no text, as the real API does.
   */
  thinking?: { readonly default: number; readonly low: number };
}

export interface FakeGemini {
  /** `http://127.0.0.1:PORT`, to pass as `httpOptions.baseUrl`. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /**
   * Queue a fault, consumed by the next matching request (`times` requests, default 1). Without
   * `action`, status/slow/hang/malformed match any request, and the answer-shaped faults
   * (empty-*, finish, prompt-blocked, reply) match generateContent and streamGenerateContent.
   */
  fail(fault: Fault, options?: { action?: string; times?: number }): void;
  /** Applies a fault to every matching request until cleared; queued faults win over it. */
  failAlways(fault: Fault, options?: { action?: string }): void;
  clearFaults(): void;
  /** Clears recorded requests and faults. */
  reset(): void;
  /** Resolves once `count` requests have arrived (since the last reset): an event, not a poll. */
  received(count: number): Promise<void>;
  /** Stops listening and destroys every open socket, including hung ones. */
  close(): Promise<void>;
}

/** The real API's limit on `requests` in one batchEmbedContents call. */
export const MAX_BATCH_EMBED_REQUESTS = 100;
const MAX_IDENTIFIERS = 60;

interface Part {
  text?: unknown;
  [key: string]: unknown;
}
interface Content {
  role?: unknown;
  parts?: unknown;
}

const generateActions: ReadonlySet<string> = new Set(['generateContent', 'streamGenerateContent']);
const knownActions: ReadonlySet<string> = new Set(['generateContent', 'streamGenerateContent', 'embedContent', 'batchEmbedContents', 'countTokens']);

// ---------------------------------------------------------------------------------------------
// Deterministic content helpers (exported so tests can compute expectations)
// ---------------------------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function partsText(content: unknown): string[] {
  if (!isRecord(content) || !Array.isArray((content as Content).parts)) return [];
  const out: string[] = [];
  for (const part of (content as Content).parts as unknown[]) {
    if (!isRecord(part)) continue;
    const p = part as Part;
    if (typeof p.text === 'string') out.push(p.text);
    else if (p['functionCall'] !== undefined) out.push(JSON.stringify(p['functionCall']));
    else if (p['functionResponse'] !== undefined) out.push(JSON.stringify(p['functionResponse']));
  }
  return out;
}

/**
 * The text of a generateContent/countTokens body's `contents` (text parts, plus function calls and
 * responses as JSON), joined with blank lines. The system instruction is not included.
 */
export function requestText(body: unknown): string {
  if (!isRecord(body) || !Array.isArray(body['contents'])) return '';
  return (body['contents'] as unknown[]).flatMap(partsText).join('\n\n');
}

function systemText(body: unknown): string {
  return isRecord(body) ? partsText(body['systemInstruction']).join('\n\n') : '';
}

/** ≈ chars/4, at least 1 for non-empty text; what this server reports as token counts. */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : Math.max(1, Math.ceil(text.length / 4));
}

const identifierPatterns: readonly RegExp[] = [
  // Tool-call ids: toolu_01ABC…, call_abc123, tool_… (before snake_case, which would also match).
  /\b(?:toolu|call|tool)_[A-Za-z0-9_-]+/g,
  // File paths with at least one directory and an extension: src/a/b.ts, ./x/y.json, /etc/z.conf.
  /(?:\.{0,2}\/)?(?:[\w@.-]+\/)+[\w@-][\w@.-]*\.[A-Za-z0-9]+\b/g,
  // Bare file names with a common source/config extension: README.md, package.json.
  /\b[\w-]+(?:\.[\w-]+)*\.(?:ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|py|go|rs|java|rb|sh|ya?ml|toml|css|html|txt|lock)\b/g,
  // camelCase and PascalCase with at least two humps.
  /\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b/g,
  /\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\b/g,
  // snake_case and SCREAMING_SNAKE_CASE.
  /\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b/g,
  /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g,
];

/**
 * Identifiers found in `text` (tool-call ids, file paths and names, camelCase, PascalCase, snake_case),
 * in order of first appearance, without duplicates or identifiers contained in an earlier one
 * (`src/a/parseConfig.ts` swallows `parseConfig`), at most `limit`.
 */
export function extractIdentifiers(text: string, limit = MAX_IDENTIFIERS): string[] {
  const found: Array<{ index: number; value: string }> = [];
  for (const pattern of identifierPatterns) {
    for (const match of text.matchAll(pattern)) found.push({ index: match.index ?? 0, value: match[0] });
  }
  // Earlier first; at the same position the longer match (the path over its first segment).
  found.sort((a, b) => a.index - b.index || b.value.length - a.value.length);
  const out: string[] = [];
  const seen = new Set<string>();
  let coveredUntil = -1;
  for (const { index, value } of found) {
    if (index < coveredUntil) continue; // inside a longer identifier already taken
    coveredUntil = index + value.length;
    if (seen.has(value)) continue;
    seen.add(value);
    out.push(value);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * The default generateContent answer: section headers a summary would have, and every identifier
 * of the request text repeated verbatim (up to 60). When the system instruction asks for sections
 * ("Answer with exactly these Markdown sections, …: A, B, C."), it answers with those, as a model
 * that follows its instructions would: the goal under the first, the identifiers under the one named
 * Identifiers (else the last), "none" under the others.
 */
export function defaultSummary(text: string, system = ''): string {
  const firstLine =
    text
      .split('\n')
      .find((line) => line.trim() !== '')
      ?.trim() ?? '';
  const goal = firstLine.length > 160 ? `${firstLine.slice(0, 157)}...` : firstLine;
  const identifiers = extractIdentifiers(text);
  const asked = /Answer with exactly these Markdown sections[^:]*: ([^\n]+)\./
    .exec(system)?.[1]
    ?.split(', ')
    .filter((s) => s.trim());
  if (asked && asked.length > 0) {
    const idsAt = asked.findIndex((s) => /identifiers/i.test(s));
    const at = idsAt >= 0 ? idsAt : asked.length - 1;
    return asked
      .flatMap((section, i) => [
        `## ${section}`,
        ...(i === 0
          ? [goal === '' ? '(no request text)' : goal]
          : i === at
            ? identifiers.length === 0
              ? ['none']
              : identifiers.map((id) => `- ${id}`)
            : ['none']),
      ])
      .join('\n');
  }
  return [
    '## Goal',
    goal === '' ? '(no request text)' : goal,
    '',
    '## Progress',
    `Condensed ${text.length} characters of conversation.`,
    '',
    '## Files and identifiers',
    ...(identifiers.length === 0 ? ['(none)'] : identifiers.map((id) => `- ${id}`)),
    '',
  ].join('\n');
}

function fnv1a(text: string, seed: number): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * A deterministic embedding: a hashed bag of lower-cased words (camelCase and snake_case split into
 * words), L2-normalized, so texts sharing words have a higher cosine similarity. Empty text maps to
 * the unit vector on the first axis.
 */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const values = new Array<number>(dimensions).fill(0);
  const words = text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
  for (const word of words) {
    const h = fnv1a(word, 0);
    const sign = fnv1a(word, 0x9e3779b9) & 1 ? 1 : -1;
    values[h % dimensions] = (values[h % dimensions] ?? 0) + sign;
  }
  const norm = Math.sqrt(values.reduce((sum, v) => sum + v * v, 0));
  if (norm === 0) {
    values[0] = 1;
    return values;
  }
  return values.map((v) => v / norm);
}

// ---------------------------------------------------------------------------------------------
// Error bodies
// ---------------------------------------------------------------------------------------------

interface GoogleError {
  error: { code: number; message: string; status: string; details?: unknown[] };
}

function googleError(code: number, status: string, message: string, details?: unknown[]): GoogleError {
  return { error: { code, message, status, ...(details ? { details } : {}) } };
}

function statusFaultBody(fault: Extract<Fault, { kind: 'status' }>, model: string, action: string): GoogleError {
  // A message of the test's choosing (e.g. one that echoes the key, as some gateways do).
  if (fault.message !== undefined) return googleError(fault.status, fault.status === 429 ? 'RESOURCE_EXHAUSTED' : 'INVALID_ARGUMENT', fault.message);
  switch (fault.status) {
    case 400:
      return googleError(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.');
    case 403:
      return googleError(403, 'PERMISSION_DENIED', 'The caller does not have permission');
    case 404:
      return googleError(
        404,
        'NOT_FOUND',
        `models/${model} is not found for API version v1beta, or is not supported for ${action}. ` +
          'Call ListModels to see the list of available models and their supported methods.',
      );
    case 429: {
      const details: unknown[] = [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
              quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
              quotaDimensions: { location: 'global', model },
              quotaValue: '10',
            },
          ],
        },
        {
          '@type': 'type.googleapis.com/google.rpc.Help',
          links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }],
        },
      ];
      if (fault.retryDelayInBody !== undefined) {
        details.push({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: fault.retryDelayInBody });
      }
      return googleError(
        429,
        'RESOURCE_EXHAUSTED',
        'You exceeded your current quota, please check your plan and billing details. For more information ' +
          'on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.',
        details,
      );
    }
    case 500:
      return googleError(
        500,
        'INTERNAL',
        'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
      );
    case 503:
      return googleError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.');
  }
}

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

const contentFaultKinds: ReadonlySet<Fault['kind']> = new Set(['empty-candidates', 'empty-text', 'finish', 'prompt-blocked', 'reply']);

type AnswerFault = Extract<Fault, { kind: 'empty-candidates' | 'empty-text' | 'finish' | 'prompt-blocked' | 'reply' }>;

function blockedSafetyRatings(): unknown[] {
  return [
    { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', probability: 'NEGLIGIBLE' },
    { category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'NEGLIGIBLE' },
    { category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' },
    { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH', blocked: true },
  ];
}

interface Usage {
  promptTokenCount: number;
  candidatesTokenCount?: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
  promptTokensDetails: Array<{ modality: 'TEXT'; tokenCount: number }>;
}

function usage(promptTokens: number, answerTokens: number | undefined, thoughts: number): Usage {
  return {
    promptTokenCount: promptTokens,
    ...(answerTokens !== undefined ? { candidatesTokenCount: answerTokens } : {}),
    totalTokenCount: promptTokens + (answerTokens ?? 0) + thoughts,
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }],
  };
}

interface GenerateAnswer {
  candidates?: unknown[];
  promptFeedback?: unknown;
  usageMetadata: Usage;
  modelVersion: string;
  responseId: string;
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

interface Rule {
  fault: Fault;
  action: string | undefined;
}

function ruleMatches(rule: Rule, action: string): boolean {
  if (rule.action !== undefined) return rule.action === action;
  return contentFaultKinds.has(rule.fault.kind) ? generateActions.has(action) : true;
}

const JSON_TYPE = 'application/json; charset=UTF-8';

export async function startFakeGemini(options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const defaultDimensions = options.dimensions ?? 16;
  const requests: RecordedRequest[] = [];
  const arrivals = new Set<() => void>();
  let queued: Rule[] = [];
  let always: Rule[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let responseCounter = 0;

  function takeFault(action: string): Fault | undefined {
    const index = queued.findIndex((rule) => ruleMatches(rule, action));
    if (index >= 0) {
      const [rule] = queued.splice(index, 1);
      return rule?.fault;
    }
    return always.find((rule) => ruleMatches(rule, action))?.fault;
  }

  function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body, null, 2);
    res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }

  function buildAnswer(model: string, body: unknown, fault: AnswerFault | undefined): GenerateAnswer {
    const text = requestText(body);
    const promptTokens = estimateTokens(systemText(body) + text);
    const thinkingConfig =
      isRecord(body) && isRecord(body['generationConfig']) && isRecord(body['generationConfig']['thinkingConfig'])
        ? body['generationConfig']['thinkingConfig']
        : undefined;
    const maxOutput =
      isRecord(body) && isRecord(body['generationConfig']) && typeof body['generationConfig']['maxOutputTokens'] === 'number'
        ? body['generationConfig']['maxOutputTokens']
        : Infinity;
    const thoughts = options.thinking
      ? thinkingConfig?.['thinkingBudget'] === 0
        ? 0
        : thinkingConfig?.['thinkingLevel'] === 'LOW' || thinkingConfig?.['thinkingLevel'] === 'MINIMAL'
          ? options.thinking.low
          : options.thinking.default
      : (options.thoughtsTokenCount ?? 0);
    responseCounter += 1;
    const common = { modelVersion: model, responseId: `fake-${String(responseCounter).padStart(6, '0')}` };
    const withText = (answer: string, finishReason: string): GenerateAnswer => {
      if (thoughts + estimateTokens(answer) > maxOutput) {
        // The budget went on thinking: no text, MAX_TOKENS.
        return {
          candidates: [{ content: { role: 'model' }, finishReason: 'MAX_TOKENS', index: 0 }],
          usageMetadata: usage(promptTokens, undefined, Math.min(thoughts, maxOutput)),
          ...common,
        };
      }
      return {
        candidates: [{ content: { role: 'model', parts: [{ text: answer }] }, finishReason, index: 0 }],
        usageMetadata: usage(promptTokens, estimateTokens(answer), thoughts),
        ...common,
      };
    };
    switch (fault?.kind) {
      case undefined: {
        const answer = options.respond ? options.respond({ model, body, text }) : defaultSummary(text, systemText(body));
        return withText(answer, 'STOP');
      }
      case 'reply':
        return withText(fault.text, 'STOP');
      case 'empty-text':
        return withText('', 'STOP');
      case 'empty-candidates':
        return { candidates: [], usageMetadata: usage(promptTokens, undefined, 0), ...common };
      case 'prompt-blocked':
        return {
          promptFeedback: {
            blockReason: fault.blockReason,
            ...(fault.blockReason === 'SAFETY' ? { safetyRatings: blockedSafetyRatings() } : {}),
          },
          usageMetadata: usage(promptTokens, undefined, 0),
          ...common,
        };
      case 'finish': {
        if (fault.text !== undefined) {
          const answer = withText(fault.text, fault.finishReason);
          return answer;
        }
        const spentBudget = fault.finishReason === 'MAX_TOKENS' || fault.finishReason === 'OTHER';
        const candidate: Record<string, unknown> = { finishReason: fault.finishReason, index: 0 };
        if (spentBudget) candidate['content'] = { role: 'model' };
        if (fault.finishReason === 'SAFETY') candidate['safetyRatings'] = blockedSafetyRatings();
        return { candidates: [candidate], usageMetadata: usage(promptTokens, undefined, thoughts), ...common };
      }
    }
  }

  /** Splits an answer into up to three stream chunks, the last carrying finishReason and full usage. */
  function streamChunks(answer: GenerateAnswer): GenerateAnswer[] {
    const candidate = answer.candidates?.[0];
    if (!isRecord(candidate)) return [answer];
    const text = partsText(candidate['content']).join('');
    if (text.length < 3) return [answer];
    const size = Math.ceil(text.length / 3);
    const pieces = [text.slice(0, size), text.slice(size, 2 * size), text.slice(2 * size)].filter((p) => p !== '');
    return pieces.map((piece, i) => {
      const last = i === pieces.length - 1;
      const { finishReason, ...rest } = candidate;
      return {
        ...answer,
        candidates: [{ ...rest, content: { role: 'model', parts: [{ text: piece }] }, ...(last ? { finishReason } : {}) }],
        usageMetadata: last ? answer.usageMetadata : usage(answer.usageMetadata.promptTokenCount, undefined, 0),
      };
    });
  }

  function handleGenerate(
    res: ServerResponse,
    model: string,
    action: 'generateContent' | 'streamGenerateContent',
    query: Record<string, string>,
    body: unknown,
    fault: AnswerFault | { kind: 'malformed' } | undefined,
  ): void {
    if (!isRecord(body) || !Array.isArray(body['contents']) || body['contents'].length === 0) {
      sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', '* GenerateContentRequest.contents: contents is not specified\n'));
      return;
    }
    const sse = action === 'streamGenerateContent' && query['alt'] === 'sse';
    if (fault?.kind === 'malformed') {
      const truncated = '{"candidates": [{"content": {"parts": [{"text": "the answer was cut';
      if (sse) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`data: ${truncated}\r\n\r\n`);
      } else {
        res.writeHead(200, { 'content-type': JSON_TYPE });
        res.end(truncated);
      }
      return;
    }
    const answer = buildAnswer(model, body, fault);
    if (action === 'generateContent') {
      sendJson(res, 200, answer);
      return;
    }
    const chunks = streamChunks(answer);
    if (!sse) {
      // Without alt=sse the real API answers the stream as one JSON array.
      sendJson(res, 200, chunks);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    res.end();
  }

  function embeddingFor(request: unknown, index: number | undefined, urlModel: string): number[] | GoogleError {
    const where = index === undefined ? 'EmbedContentRequest' : `BatchEmbedContentsRequest.requests[${index}]`;
    if (!isRecord(request) || !isRecord(request['content'])) {
      return googleError(400, 'INVALID_ARGUMENT', `* ${where}.content: contents is not specified\n`);
    }
    const requestModel = request['model'];
    if (index !== undefined && requestModel !== undefined && requestModel !== `models/${urlModel}`) {
      return googleError(
        400,
        'INVALID_ARGUMENT',
        `* BatchEmbedContentsRequest.model: Model names in the requests (${String(requestModel)}) must match models/${urlModel}\n`,
      );
    }
    const dims = request['outputDimensionality'];
    const dimensions = typeof dims === 'number' && Number.isInteger(dims) && dims > 0 ? dims : defaultDimensions;
    return fakeEmbedding(partsText(request['content']).join('\n'), dimensions);
  }

  function handleEmbed(res: ServerResponse, model: string, action: string, body: unknown): void {
    if (action === 'embedContent') {
      const result = embeddingFor(body, undefined, model);
      if (Array.isArray(result)) sendJson(res, 200, { embedding: { values: result } });
      else sendJson(res, 400, result);
      return;
    }
    const list = isRecord(body) ? body['requests'] : undefined;
    if (!Array.isArray(list) || list.length === 0) {
      sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', '* BatchEmbedContentsRequest.requests: requests is not specified\n'));
      return;
    }
    if (list.length > MAX_BATCH_EMBED_REQUESTS) {
      sendJson(
        res,
        400,
        googleError(400, 'INVALID_ARGUMENT', `* BatchEmbedContentsRequest.requests: at most ${MAX_BATCH_EMBED_REQUESTS} requests can be in one batch\n`),
      );
      return;
    }
    const embeddings: Array<{ values: number[] }> = [];
    for (const [i, request] of list.entries()) {
      const result = embeddingFor(request, i, model);
      if (!Array.isArray(result)) {
        sendJson(res, 400, result);
        return;
      }
      embeddings.push({ values: result });
    }
    sendJson(res, 200, { embeddings });
  }

  function handleCountTokens(res: ServerResponse, body: unknown): void {
    // The API also accepts { generateContentRequest: { contents, systemInstruction, … } }.
    const inner = isRecord(body) && isRecord(body['generateContentRequest']) ? body['generateContentRequest'] : body;
    const totalTokens = estimateTokens(systemText(inner) + requestText(inner));
    sendJson(res, 200, { totalTokens, promptTokensDetails: [{ modality: 'TEXT', tokenCount: totalTokens }] });
  }

  function respond(res: ServerResponse, recorded: RecordedRequest, fault: Fault | undefined): void {
    const { model, body, query } = recorded;
    const action: string = recorded.action;
    if (fault?.kind === 'status') {
      const headers: Record<string, string> = fault.retryAfterSeconds !== undefined ? { 'retry-after': String(fault.retryAfterSeconds) } : {};
      sendJson(res, fault.status, statusFaultBody(fault, model, action), headers);
      return;
    }
    if (fault?.kind === 'hang') return; // the socket stays open until the client aborts or close()
    if (fault?.kind === 'slow') {
      const timer = setTimeout(() => {
        timers.delete(timer);
        // (req.destroyed is already true here: a fully read request body auto-destroys.)
        if (!res.destroyed && !res.writableEnded) respond(res, recorded, undefined);
      }, fault.delayMs);
      timers.add(timer);
      res.on('close', () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
      return;
    }
    if (recorded.rawBody !== '' && body === undefined) {
      sendJson(res, 400, googleError(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received. Unexpected token.'));
      return;
    }
    switch (action) {
      case 'generateContent':
      case 'streamGenerateContent':
        handleGenerate(res, model, action, query, body, fault);
        return;
      case 'embedContent':
      case 'batchEmbedContents':
        if (fault?.kind === 'malformed') {
          res.writeHead(200, { 'content-type': JSON_TYPE });
          res.end('{"embeddings": [{"values": [0.1, 0.2');
          return;
        }
        handleEmbed(res, model, action, body);
        return;
      case 'countTokens':
        if (fault?.kind === 'malformed') {
          res.writeHead(200, { 'content-type': JSON_TYPE });
          res.end('{"totalTokens": ');
          return;
        }
        handleCountTokens(res, body);
        return;
    }
  }

  function checkKey(recorded: RecordedRequest): GoogleError | undefined {
    if (options.apiKey === undefined) return undefined;
    const key = recorded.headers['x-goog-api-key'] ?? recorded.query['key'];
    if (key === undefined || key === '') {
      return googleError(
        403,
        'PERMISSION_DENIED',
        "Method doesn't allow unregistered callers (callers without established identity). " +
          'Please use API Key or other form of API consumer identity to call this API.',
      );
    }
    if (key !== options.apiKey) {
      return googleError(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'API_KEY_INVALID',
          domain: 'googleapis.com',
          metadata: { service: 'generativelanguage.googleapis.com' },
        },
      ]);
    }
    return undefined;
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = rawBody === '' ? undefined : JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const match = /^\/v1beta\/(?:models|tunedModels)\/([^/:]+):([A-Za-z]+)$/.exec(url.pathname);
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        model: match?.[1] ?? '',
        action: match?.[2] ?? '',
        headers,
        body,
        rawBody,
        receivedAt: Date.now(),
      };
      requests.push(recorded);
      for (const wake of [...arrivals]) wake();

      if (!match || req.method !== 'POST' || !knownActions.has(recorded.action)) {
        sendJson(res, 404, googleError(404, 'NOT_FOUND', `Requested entity was not found. (${req.method} ${url.pathname})`));
        return;
      }
      const keyError = checkKey(recorded);
      if (keyError) {
        sendJson(res, keyError.error.code, keyError);
        return;
      }
      respond(res, recorded, takeFault(recorded.action));
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    fail(fault, opts = {}) {
      const times = opts.times ?? 1;
      for (let i = 0; i < times; i++) queued.push({ fault, action: opts.action });
    },
    failAlways(fault, opts = {}) {
      always.push({ fault, action: opts.action });
    },
    clearFaults() {
      queued = [];
      always = [];
    },
    reset() {
      requests.length = 0;
      queued = [];
      always = [];
    },
    received(count) {
      return new Promise<void>((resolve) => {
        const wake = (): void => {
          if (requests.length < count) return;
          arrivals.delete(wake);
          resolve();
        };
        arrivals.add(wake);
        wake();
      });
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        sockets.clear();
      });
    },
  };
}

/**
 * One fake server for a whole test file: started before its tests, reset before each (requests and
 * faults cleared), closed after. The object stands for the running server.
 */
export function fakeGeminiForFile(options: FakeGeminiOptions = {}): FakeGemini {
  let live: FakeGemini | undefined;
  const get = (): FakeGemini => {
    if (!live) throw new Error('the fake Gemini server is used before it has started (use it inside a test)');
    return live;
  };
  before(async () => {
    live = await startFakeGemini(options);
  });
  after(async () => {
    await live?.close();
  });
  beforeEach(() => live?.reset());
  return {
    get url() {
      return get().url;
    },
    get requests() {
      return get().requests;
    },
    fail: (fault, opts) => get().fail(fault, opts),
    failAlways: (fault, opts) => get().failAlways(fault, opts),
    clearFaults: () => get().clearFaults(),
    reset: () => get().reset(),
    received: (count) => get().received(count),
    close: () => get().close(),
  };
}
