/**
 * The fake Gemini server (test/helpers/fake-gemini.ts) driven by the real `@google/genai` client.
 *
 * No client here sets `httpOptions.retryOptions`: @google/genai only retries (through p-retry)
 * when `retryOptions` is set, so without it every fault reaches the caller after exactly one
 * request, which the tests check through `fake.requests`.
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, GoogleGenAI } from '@google/genai';
import type { HttpOptions } from '@google/genai';
import { MAX_BATCH_EMBED_REQUESTS, defaultSummary, estimateTokens, extractIdentifiers, fakeEmbedding, startFakeGemini } from './helpers/fake-gemini.js';
import type { FakeGemini } from './helpers/fake-gemini.js';

const API_KEY = 'test-key-123';
const MODEL = 'gemini-2.5-flash';
const EMBED_MODEL = 'gemini-embedding-001';

let fake: FakeGemini;

function client(httpOptions: Omit<HttpOptions, 'baseUrl'> = {}, apiKey = API_KEY): GoogleGenAI {
  // vertexai: false so GOOGLE_GENAI_USE_VERTEXAI in the environment cannot redirect the client.
  return new GoogleGenAI({ apiKey, vertexai: false, httpOptions: { ...httpOptions, baseUrl: fake.url } });
}

/** Awaits a rejection and returns the error, failing if the promise resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected a rejection');
}

async function apiError(promise: Promise<unknown>): Promise<ApiError> {
  const error = await rejection(promise);
  assert.ok(error instanceof ApiError, `expected ApiError, got ${String(error)}`);
  return error;
}

interface ErrorBody {
  error: { code: number; status: string; message: string; details?: Array<Record<string, unknown>> };
}

/** The SDK's ApiError message is the JSON error body, verbatim. */
function errorBody(error: ApiError): ErrorBody {
  return JSON.parse(error.message) as ErrorBody;
}

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] ?? 0) * (b[i] ?? 0);
  return dot; // both are L2-normalized
}

before(async () => {
  fake = await startFakeGemini({ apiKey: API_KEY });
});
afterEach(() => fake.reset());
after(() => fake.close());

describe('generateContent', () => {
  test('returns text, usage and modelVersion; the request carries model, config, system instruction and contents', async () => {
    const transcript =
      'Fix the bug in src/config/load.ts where parseConfig drops MAX_RETRIES.\n' +
      'Tool call toolu_01AbCdEf read src/config/load.ts; call_xyz789 ran npm test; see read_file_lines.';
    const response = await client().models.generateContent({
      model: MODEL,
      contents: transcript,
      config: { systemInstruction: 'You summarize transcripts.', maxOutputTokens: 512, temperature: 0.2 },
    });

    assert.equal(response.text, defaultSummary(transcript));
    assert.match(response.text ?? '', /^## Goal\n/);
    for (const id of ['src/config/load.ts', 'parseConfig', 'MAX_RETRIES', 'toolu_01AbCdEf', 'call_xyz789', 'read_file_lines']) {
      assert.ok(response.text?.includes(`- ${id}\n`), `summary repeats ${id}`);
    }
    assert.equal(response.candidates?.[0]?.finishReason, 'STOP');
    assert.equal(response.modelVersion, MODEL);
    assert.match(response.responseId ?? '', /^fake-\d+$/);
    const usage = response.usageMetadata;
    assert.equal(usage?.promptTokenCount, estimateTokens(`You summarize transcripts.${transcript}`));
    assert.equal(usage?.candidatesTokenCount, estimateTokens(response.text ?? ''));
    assert.equal(usage?.totalTokenCount, (usage?.promptTokenCount ?? 0) + (usage?.candidatesTokenCount ?? 0));

    assert.equal(fake.requests.length, 1);
    const request = fake.requests[0]!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, `/v1beta/models/${MODEL}:generateContent`);
    assert.equal(request.model, MODEL);
    assert.equal(request.action, 'generateContent');
    // config.systemInstruction goes top level as a Content; sampling fields under generationConfig.
    assert.deepEqual(request.body, {
      contents: [{ role: 'user', parts: [{ text: transcript }] }],
      systemInstruction: { role: 'user', parts: [{ text: 'You summarize transcripts.' }] },
      generationConfig: { maxOutputTokens: 512, temperature: 0.2 },
    });
  });

  test('the key is sent in the x-goog-api-key header, never in the URL or body', async () => {
    await client().models.generateContent({ model: MODEL, contents: 'hello' });
    const request = fake.requests[0]!;
    assert.equal(request.headers['x-goog-api-key'], API_KEY);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.match(request.headers['x-goog-api-client'] ?? '', /google-genai-sdk\//);
    assert.deepEqual(request.query, {});
    assert.ok(!request.rawBody.includes(API_KEY));
  });

  test('a wrong key is 400 API_KEY_INVALID, a missing key 403, and ?key= is accepted', async () => {
    const wrong = await apiError(client({}, 'wrong-key').models.generateContent({ model: MODEL, contents: 'x' }));
    assert.equal(wrong.status, 400);
    assert.equal(errorBody(wrong).error.status, 'INVALID_ARGUMENT');
    assert.equal(errorBody(wrong).error.details?.[0]?.['reason'], 'API_KEY_INVALID');

    const url = `${fake.url}/v1beta/models/${MODEL}:generateContent`;
    const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'x' }] }] }) };
    const missing = await fetch(url, init);
    assert.equal(missing.status, 403);
    assert.equal(((await missing.json()) as ErrorBody).error.status, 'PERMISSION_DENIED');
    const viaQuery = await fetch(`${url}?key=${API_KEY}`, init);
    assert.equal(viaQuery.status, 200);
  });

  test('a custom respond() and a reply fault set the answer', async () => {
    const own = await startFakeGemini({ respond: ({ model, text }) => `${model} saw ${text.length} chars` });
    try {
      const ai = new GoogleGenAI({ apiKey: 'k', vertexai: false, httpOptions: { baseUrl: own.url } });
      const response = await ai.models.generateContent({ model: MODEL, contents: 'abcd' });
      assert.equal(response.text, `${MODEL} saw 4 chars`);
      own.fail({ kind: 'reply', text: 'exactly this' });
      assert.equal((await ai.models.generateContent({ model: MODEL, contents: 'abcd' })).text, 'exactly this');
    } finally {
      await own.close();
    }
  });

  test('thoughtsTokenCount is reported when configured', async () => {
    const own = await startFakeGemini({ thoughtsTokenCount: 100 });
    try {
      const ai = new GoogleGenAI({ apiKey: 'k', vertexai: false, httpOptions: { baseUrl: own.url } });
      const usage = (await ai.models.generateContent({ model: MODEL, contents: 'abcd' })).usageMetadata;
      assert.equal(usage?.thoughtsTokenCount, 100);
      assert.equal(usage?.totalTokenCount, (usage?.promptTokenCount ?? 0) + (usage?.candidatesTokenCount ?? 0) + 100);
    } finally {
      await own.close();
    }
  });

  test('the answer also exposes the response headers (sdkHttpResponse.headers)', async () => {
    const response = await client().models.generateContent({ model: MODEL, contents: 'hi' });
    assert.match(response.sdkHttpResponse?.headers?.['content-type'] ?? '', /application\/json/);
  });
});

describe('faults', () => {
  test('429 is an ApiError with status 429, RESOURCE_EXHAUSTED and RetryInfo; Retry-After is on the wire only', async () => {
    fake.fail({ kind: 'status', status: 429, retryAfterSeconds: 3, retryDelayInBody: '2s' });
    const error = await apiError(client().models.generateContent({ model: MODEL, contents: 'x' }));
    assert.equal(error.status, 429);
    assert.equal(error.name, 'ApiError');
    const body = errorBody(error);
    assert.equal(body.error.code, 429);
    assert.equal(body.error.status, 'RESOURCE_EXHAUSTED');
    const retryInfo = body.error.details?.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.RetryInfo');
    assert.deepEqual(retryInfo, { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' });
    // ApiError has only name, message and status: the SDK drops the response headers on errors.
    assert.deepEqual(Object.keys(error).sort(), ['name', 'status']);
    assert.equal(fake.requests.length, 1, 'no retry without retryOptions');

    fake.fail({ kind: 'status', status: 429, retryAfterSeconds: 3 });
    const raw = await fetch(`${fake.url}/v1beta/models/${MODEL}:generateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': API_KEY },
      body: '{}',
    });
    assert.equal(raw.status, 429);
    assert.equal(raw.headers.get('retry-after'), '3');
    const rawBody = (await raw.json()) as ErrorBody;
    assert.ok(!rawBody.error.details?.some((d) => d['@type'] === 'type.googleapis.com/google.rpc.RetryInfo'), 'RetryInfo is opt-in');
  });

  for (const [status, name] of [
    [500, 'INTERNAL'],
    [503, 'UNAVAILABLE'],
    [400, 'INVALID_ARGUMENT'],
    [403, 'PERMISSION_DENIED'],
    [404, 'NOT_FOUND'],
  ] as const) {
    test(`${status} is an ApiError with status ${status} and ${name}`, async () => {
      fake.fail({ kind: 'status', status });
      const error = await apiError(client().models.generateContent({ model: MODEL, contents: 'x' }));
      assert.equal(error.status, status);
      assert.equal(errorBody(error).error.status, name);
      assert.equal(errorBody(error).error.code, status);
      assert.equal(fake.requests.length, 1);
    });
  }

  test('malformed JSON makes the SDK throw a SyntaxError', async () => {
    fake.fail({ kind: 'malformed' });
    const error = await rejection(client().models.generateContent({ model: MODEL, contents: 'x' }));
    assert.ok(error instanceof SyntaxError, String(error));
    assert.ok(!(error instanceof ApiError));
  });

  test('empty candidates: response.text is undefined', async () => {
    fake.fail({ kind: 'empty-candidates' });
    const response = await client().models.generateContent({ model: MODEL, contents: 'x' });
    assert.deepEqual(response.candidates, []);
    assert.equal(response.text, undefined);
    assert.equal(response.promptFeedback, undefined);
  });

  test("empty text: response.text is ''", async () => {
    fake.fail({ kind: 'empty-text' });
    const response = await client().models.generateContent({ model: MODEL, contents: 'x' });
    assert.equal(response.text, '');
    assert.equal(response.candidates?.[0]?.finishReason, 'STOP');
  });

  test('finishReason SAFETY / MAX_TOKENS shows on candidates[0]; text is undefined unless given', async () => {
    fake.fail({ kind: 'finish', finishReason: 'SAFETY' });
    const safety = await client().models.generateContent({ model: MODEL, contents: 'x' });
    assert.equal(safety.candidates?.[0]?.finishReason, 'SAFETY');
    assert.equal(safety.candidates?.[0]?.content, undefined);
    assert.ok(safety.candidates?.[0]?.safetyRatings?.some((r) => r.blocked === true));
    assert.equal(safety.text, undefined);

    fake.fail({ kind: 'finish', finishReason: 'MAX_TOKENS' });
    const spent = await client().models.generateContent({ model: MODEL, contents: 'x' });
    assert.equal(spent.candidates?.[0]?.finishReason, 'MAX_TOKENS');
    assert.deepEqual(spent.candidates?.[0]?.content, { role: 'model' });
    assert.equal(spent.text, undefined);

    fake.fail({ kind: 'finish', finishReason: 'MAX_TOKENS', text: '## Goal\nhalf a summ' });
    const truncated = await client().models.generateContent({ model: MODEL, contents: 'x' });
    assert.equal(truncated.candidates?.[0]?.finishReason, 'MAX_TOKENS');
    assert.equal(truncated.text, '## Goal\nhalf a summ');
  });

  test('prompt-blocked: promptFeedback.blockReason, no candidates, text undefined', async () => {
    fake.fail({ kind: 'prompt-blocked', blockReason: 'SAFETY' });
    const response = await client().models.generateContent({ model: MODEL, contents: 'x' });
    assert.equal(response.promptFeedback?.blockReason, 'SAFETY');
    assert.equal(response.candidates, undefined);
    assert.equal(response.text, undefined);
  });

  // The server never answers a hang: only the SDK's timeout ends the first call, and only close()
  // ends the second. A close() that waited for it would never return; the test's timeout guards that.
  test('hang + httpOptions.timeout: the SDK rejects with an AbortError, and close() does not wait for a hung request', { timeout: 60_000 }, async () => {
    const own = await startFakeGemini();
    own.failAlways({ kind: 'hang' });
    const ai = new GoogleGenAI({ apiKey: 'k', vertexai: false, httpOptions: { baseUrl: own.url, timeout: 150 } });
    const error = await rejection(ai.models.generateContent({ model: MODEL, contents: 'x' }));
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'AbortError');

    // A second request still hangs on the server when close() is called: close() must not wait.
    const pending = rejection(
      new GoogleGenAI({ apiKey: 'k', vertexai: false, httpOptions: { baseUrl: own.url } }).models.generateContent({
        model: MODEL,
        contents: 'x',
      }),
    );
    await own.received(2);
    await own.close();
    // The client whose socket was destroyed sees undici's "fetch failed".
    const dropped = await pending;
    assert.ok(dropped instanceof TypeError);
    assert.equal(dropped.message, 'fetch failed');
  });

  test('config.abortSignal cancels a hanging request', async () => {
    fake.fail({ kind: 'hang' });
    const controller = new AbortController();
    const call = client().models.generateContent({ model: MODEL, contents: 'x', config: { abortSignal: controller.signal } });
    await fake.received(1);
    controller.abort();
    const error = await rejection(call);
    assert.ok(error instanceof Error);
    assert.equal(error.name, 'AbortError');
  });

  test('slow answers normally after the delay, or times out first', async () => {
    fake.fail({ kind: 'slow', delayMs: 100 });
    const started = Date.now();
    const response = await client().models.generateContent({ model: MODEL, contents: 'src/a.ts' });
    assert.ok(Date.now() - started >= 90);
    assert.match(response.text ?? '', /## Goal/);

    fake.fail({ kind: 'slow', delayMs: 1000 });
    const error = await rejection(client({ timeout: 50 }).models.generateContent({ model: MODEL, contents: 'x' }));
    assert.equal((error as Error).name, 'AbortError');
  });

  test('fail() is consumed in order, times and action filter apply; failAlways lasts until cleared', async () => {
    const ai = client();
    fake.fail({ kind: 'status', status: 503 }, { times: 2 });
    fake.fail({ kind: 'status', status: 500 }, { action: 'countTokens' });
    assert.equal((await apiError(ai.models.generateContent({ model: MODEL, contents: 'x' }))).status, 503);
    assert.equal((await apiError(ai.models.generateContent({ model: MODEL, contents: 'x' }))).status, 503);
    assert.equal((await ai.models.generateContent({ model: MODEL, contents: 'x' })).candidates?.[0]?.finishReason, 'STOP');
    assert.equal((await apiError(ai.models.countTokens({ model: MODEL, contents: 'x' }))).status, 500);

    // Answer-shaped faults without an action only apply to generate calls.
    fake.fail({ kind: 'empty-candidates' });
    const embedded = await ai.models.embedContent({ model: EMBED_MODEL, contents: ['a'] });
    assert.equal(embedded.embeddings?.length, 1);
    assert.deepEqual((await ai.models.generateContent({ model: MODEL, contents: 'x' })).candidates, []);

    fake.failAlways({ kind: 'status', status: 429 }, { action: 'batchEmbedContents' });
    for (let i = 0; i < 3; i++) {
      assert.equal((await apiError(ai.models.embedContent({ model: EMBED_MODEL, contents: ['a'] }))).status, 429);
    }
    assert.ok((await ai.models.generateContent({ model: MODEL, contents: 'x' })).text);
    fake.clearFaults();
    assert.equal((await ai.models.embedContent({ model: EMBED_MODEL, contents: ['a'] })).embeddings?.length, 1);
  });

  test('unknown paths are 404 in the Google error shape', async () => {
    const response = await fetch(`${fake.url}/v1beta/nothing-here`, { headers: { 'x-goog-api-key': API_KEY } });
    assert.equal(response.status, 404);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    const body = (await response.json()) as ErrorBody;
    assert.equal(body.error.code, 404);
    assert.equal(body.error.status, 'NOT_FOUND');
  });
});

describe('embeddings', () => {
  test('embedContent with many contents uses batchEmbedContents and returns vectors in order', async () => {
    const texts = ['parse the config file', 'parse config files quickly', 'the weather in Lisbon'];
    const response = await client().models.embedContent({
      model: EMBED_MODEL,
      contents: texts,
      config: { taskType: 'RETRIEVAL_DOCUMENT', outputDimensionality: 32 },
    });
    const vectors = response.embeddings?.map((e) => e.values ?? []) ?? [];
    assert.deepEqual(
      vectors,
      texts.map((t) => fakeEmbedding(t, 32)),
    );
    assert.ok(vectors.every((v) => v.length === 32));
    assert.ok(cosine(vectors[0]!, vectors[1]!) > cosine(vectors[0]!, vectors[2]!), 'similar texts, similar vectors');

    const request = fake.requests[0]!;
    assert.equal(request.path, `/v1beta/models/${EMBED_MODEL}:batchEmbedContents`);
    assert.equal(request.action, 'batchEmbedContents');
    assert.equal(request.headers['x-goog-api-key'], API_KEY);
    assert.deepEqual(request.body, {
      requests: texts.map((text) => ({
        content: { role: 'user', parts: [{ text }] },
        taskType: 'RETRIEVAL_DOCUMENT',
        outputDimensionality: 32,
        model: `models/${EMBED_MODEL}`,
      })),
    });

    const again = await client().models.embedContent({ model: EMBED_MODEL, contents: texts, config: { outputDimensionality: 32 } });
    assert.deepEqual(
      again.embeddings?.map((e) => e.values),
      vectors,
      'deterministic',
    );
    const defaultDims = await client().models.embedContent({ model: EMBED_MODEL, contents: 'one text' });
    assert.equal(defaultDims.embeddings?.[0]?.values?.length, 16);
  });

  test(`more than ${MAX_BATCH_EMBED_REQUESTS} requests in one batch is 400 INVALID_ARGUMENT`, async () => {
    const ok = await client().models.embedContent({
      model: EMBED_MODEL,
      contents: Array.from({ length: MAX_BATCH_EMBED_REQUESTS }, (_, i) => `text ${i}`),
    });
    assert.equal(ok.embeddings?.length, MAX_BATCH_EMBED_REQUESTS);
    const error = await apiError(
      client().models.embedContent({
        model: EMBED_MODEL,
        contents: Array.from({ length: MAX_BATCH_EMBED_REQUESTS + 1 }, (_, i) => `text ${i}`),
      }),
    );
    assert.equal(error.status, 400);
    assert.equal(errorBody(error).error.status, 'INVALID_ARGUMENT');
    assert.match(errorBody(error).error.message, /at most 100 requests can be in one batch/);
  });

  test('the single embedContent endpoint answers { embedding: { values } }', async () => {
    const response = await fetch(`${fake.url}/v1beta/models/${EMBED_MODEL}:embedContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 8 }),
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { embedding: { values: fakeEmbedding('hello world', 8) } });
  });
});

describe('countTokens and streaming', () => {
  test('countTokens returns totalTokens ≈ chars/4', async () => {
    const text = 'x'.repeat(400);
    const response = await client().models.countTokens({ model: MODEL, contents: text });
    assert.equal(response.totalTokens, 100);
    const request = fake.requests[0]!;
    assert.equal(request.path, `/v1beta/models/${MODEL}:countTokens`);
    assert.deepEqual(request.body, { contents: [{ role: 'user', parts: [{ text }] }] });
  });

  test('generateContentStream yields chunks that add up to the answer', async () => {
    const transcript = 'Edit src/core/prune.ts and keep pruneTurns intact.';
    const stream = await client().models.generateContentStream({ model: MODEL, contents: transcript });
    let text = '';
    let finishReason: string | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.text ?? '';
      finishReason = chunk.candidates?.[0]?.finishReason ?? finishReason;
    }
    assert.ok(chunks > 1);
    assert.equal(text, defaultSummary(transcript));
    assert.equal(finishReason, 'STOP');
    assert.equal(fake.requests[0]?.path, `/v1beta/models/${MODEL}:streamGenerateContent`);
    assert.deepEqual(fake.requests[0]?.query, { alt: 'sse' });
  });

  test('a streaming 429 is an ApiError before the first chunk', async () => {
    fake.fail({ kind: 'status', status: 429, retryDelayInBody: '1s' });
    const error = await apiError(client().models.generateContentStream({ model: MODEL, contents: 'x' }));
    assert.equal(error.status, 429);
  });
});

describe('identifier extraction', () => {
  test('finds paths, ids, camelCase and snake_case once each, in order, and caps at 60', () => {
    assert.deepEqual(extractIdentifiers('see src/a/b.ts then loadConfig, call_abc and toolu_9; src/a/b.ts again; user_id GoogleGenAI'), [
      'src/a/b.ts',
      'loadConfig',
      'call_abc',
      'toolu_9',
      'user_id',
      'GoogleGenAI',
    ]);
    assert.deepEqual(extractIdentifiers('edit package.json and ./docs/README.md, not response.text'), ['package.json', './docs/README.md']);
    const many = Array.from({ length: 100 }, (_, i) => `someName${String.fromCharCode(65 + (i % 26))}x${i}`).join(' ');
    assert.equal(extractIdentifiers(many).length, 60);
  });
});
