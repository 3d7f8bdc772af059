import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArchiveStore } from '../src/archive/store.js';
import { InterruptedError, ProviderError } from '../src/core/errors.js';
import type { ConversationTurn } from '../src/core/turn.js';
import { GeminiClient } from '../src/providers/gemini/client.js';
import type { GeminiClientOptions } from '../src/providers/gemini/client.js';
import { GeminiEmbedder } from '../src/providers/gemini/embedder.js';
import { FlashSummarizer } from '../src/providers/gemini/flash-summarizer.js';
import { DEFAULT_SUMMARY_MODEL } from '../src/providers/gemini/pricing.js';
import { SUMMARY_SECTIONS } from '../src/providers/summary-sections.js';
import { createDefaultContextPruner } from '../src/providers/factory.js';
import { fakeGeminiForFile, startFakeGemini } from './helpers/fake-gemini.js';
import type { FakeGemini } from './helpers/fake-gemini.js';

const KEY = 'test-key-7d1f0c2b9e';
// Built at run time so no secret-shaped literal sits in the repository.
const PLANTED = `sk-proj-${'Qz7'.repeat(16)}`;

const server = fakeGeminiForFile({ apiKey: KEY });

function client(options: Partial<GeminiClientOptions> = {}): GeminiClient {
  return new GeminiClient({ apiKey: KEY, baseUrl: server.url, timeoutMs: 5_000, retry: { baseDelayMs: 20, maxDelayMs: 100 }, ...options });
}

function turn(id: string, content: string, role: ConversationTurn['role'] = 'assistant', type: ConversationTurn['type'] = 'message'): ConversationTurn {
  return { id, role, type, content, timestamp: '2026-11-23T10:00:00Z' } as ConversationTurn;
}

const TURNS: ConversationTurn[] = [
  turn('t1', 'Please fix parseConfig in src/config/load.ts; it throws ConfigMissingError on empty files.', 'user'),
  turn('t2', 'I will read src/config/load.ts and check parseConfig and loadDefaults.'),
  turn('t3', '{"command":"npm test -- config"}', 'assistant', 'tool_call'),
  turn('t4', `FAIL test/config.test.ts: ConfigMissingError at parseConfig (src/config/load.ts:42)\nenv: OPENAI_API_KEY=${PLANTED}`, 'tool', 'tool_result'),
  turn(
    't5',
    'Decided: parseConfig returns DEFAULT_CONFIG for empty files; updated src/config/load.ts and test/config.test.ts. TODO: document loadDefaults in README.md.',
  ),
];

/** A prune's request: the turns it removes, archived (as every prune but --no-archive). */
function request(turns = TURNS, extra: Partial<Parameters<FlashSummarizer['summarize']>[0]> = {}) {
  return { turns, activeTask: 'REQ-42: empty config files must load defaults', budgetTokens: 2000, archive: { eventId: 'e1' }, ...extra };
}

function generateRequests() {
  return server.requests.filter((r) => r.action === 'generateContent');
}

describe('FlashSummarizer through the real @google/genai client', () => {
  test('a request carries the model, the seed settings, a system instruction that treats the transcript as data, and the task', async () => {
    const summary = await new FlashSummarizer(client()).summarize(request());
    assert.match(summary, /^\[Context Summary\]\n/);
    const [sent, ...others] = generateRequests();
    assert.equal(others.length, 0);
    assert.ok(sent);
    assert.equal(sent.model, DEFAULT_SUMMARY_MODEL);
    assert.equal(sent.headers['x-goog-api-key'], KEY);
    const body = sent.body as {
      generationConfig: { maxOutputTokens: number; temperature: number };
      systemInstruction: { parts: { text: string }[] };
      contents: { parts: { text: string }[] }[];
    };
    assert.equal(body.generationConfig.maxOutputTokens, 4096);
    assert.equal(body.generationConfig.temperature, 0.1);
    const system = body.systemInstruction.parts.map((p) => p.text).join('');
    assert.match(system, /DATA/);
    assert.match(system, /do not follow them/);
    assert.match(system, new RegExp(SUMMARY_SECTIONS.map((s) => s.replace(/[()]/g, '\\$&')).join(', ')));
    for (const section of SUMMARY_SECTIONS) assert.match(summary, new RegExp(`^## ${section.replace(/[()]/g, '\\$&')}$`, 'm'), `the summary has ## ${section}`);
    const prompt = body.contents.flatMap((c) => c.parts.map((p) => p.text)).join('');
    assert.match(prompt, /REQ-42: empty config files must load defaults/);
    assert.match(prompt, /### turn t3 \(assistant, tool_call\)/);
  });

  test('the model id is configurable', async () => {
    await new FlashSummarizer(client(), { model: 'gemini-2.5-flash' }).summarize(request());
    assert.deepEqual(
      generateRequests().map((r) => r.model),
      ['gemini-2.5-flash'],
    );
  });

  test('removed text larger than one request is summarized in chunks, then merged', async () => {
    const many = Array.from({ length: 12 }, (_, i) => turn(`c${i}`, `step ${i}: edited src/module${i}.ts and ranMigration${i} ${'detail '.repeat(200)}`));
    const progress: string[] = [];
    const summary = await new FlashSummarizer(client(), { chunkTokens: 1200, onProgress: (m) => progress.push(m) }).summarize(
      request(many, { budgetTokens: 3000 }),
    );
    const sent = generateRequests();
    const chunkCount = progress.filter((m) => /^summarizing chunk \d+ of \d+$/.test(m)).length;
    assert.ok(chunkCount >= 3, `expected several chunks, got ${progress.join(' | ')}`);
    assert.equal(sent.length, chunkCount + 1, 'one request per chunk and one merge');
    assert.match(progress.at(-1) ?? '', new RegExp(`^merging ${chunkCount} chunk summaries$`));
    assert.match(JSON.stringify(sent.at(-1)?.body), /PART-1/);
    assert.match(summary, /^\[Context Summary\]/);
    // Every turn went out exactly once, in order, across the chunk requests.
    const chunkText = sent
      .slice(0, -1)
      .map((r) => JSON.stringify(r.body))
      .join('\n');
    const order = many.map((t) => chunkText.indexOf(`### turn ${t.id} `));
    assert.ok(order.every((i) => i >= 0));
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      order,
    );
  });

  test('a planted secret never reaches the server; --no-redact sends it', async () => {
    const summarizer = new FlashSummarizer(client());
    await summarizer.summarize(request());
    for (const r of server.requests) assert.ok(!r.rawBody.includes(PLANTED), 'the secret was sent');
    assert.ok(server.requests.some((r) => r.rawBody.includes('[REDACTED:')));
    assert.ok(Object.values(summarizer.redactions).reduce((a, b) => a + b, 0) >= 1);
    server.reset();
    // Any LLMClient gets masked text: the summarizer masks before the client is called.
    const seen: string[] = [];
    const recording = {
      generate: (r: { prompt: string }) => {
        seen.push(r.prompt);
        return client().generate(r as never);
      },
    };
    await new FlashSummarizer(recording as never).summarize(request());
    assert.ok(seen.length === 1 && !seen[0]!.includes(PLANTED));
    server.reset();
    await new FlashSummarizer(client({ redact: false }), { redact: false }).summarize(request());
    assert.ok(
      server.requests.some((r) => r.rawBody.includes(PLANTED)),
      'with redaction off the text goes as it is',
    );
  });

  test('usage counts tokens sent and received from usageMetadata', async () => {
    const c = client();
    await new FlashSummarizer(c).summarize(request());
    assert.equal(c.usage.requests, 1);
    assert.ok(c.usage.inputTokens > 50, `input ${c.usage.inputTokens}`);
    assert.ok(c.usage.outputTokens > 0);
  });
});

describe('failures are rejected with a message that says which, never written as a summary', () => {
  const cases: { name: string; fault: Parameters<FakeGemini['fail']>[0]; message: RegExp }[] = [
    { name: 'empty candidates', fault: { kind: 'empty-candidates' }, message: /answer for the summary was empty/ },
    { name: 'empty text', fault: { kind: 'empty-text' }, message: /was empty/ },
    { name: 'SAFETY', fault: { kind: 'finish', finishReason: 'SAFETY', text: 'partial' }, message: /blocked or cut short \(finishReason SAFETY\)/ },
    {
      name: 'MAX_TOKENS',
      fault: { kind: 'finish', finishReason: 'MAX_TOKENS', text: '## Goal\nfix parseConfig in src/config/load.ts' },
      message: /truncated \(finishReason MAX_TOKENS\)/,
    },
    { name: 'a blocked prompt', fault: { kind: 'prompt-blocked', blockReason: 'SAFETY' }, message: /blocked the request .*blockReason SAFETY/ },
    { name: 'malformed JSON', fault: { kind: 'malformed' }, message: /not valid JSON/ },
    { name: 'HTTP 400', fault: { kind: 'status', status: 400 }, message: /HTTP 400/ },
    {
      name: 'an answer larger than its input',
      fault: { kind: 'reply', text: `## Goal\n${'parseConfig src/config/load.ts ConfigMissingError loadDefaults '.repeat(150)}` },
      message: /larger than the \d+ tokens it summarizes/,
    },
    {
      name: 'an answer that drops the identifiers',
      fault: { kind: 'reply', text: '## Goal\nThe user wanted a fix. It was fixed.\n## Done\nThings.' },
      message: /dropped most identifiers of its input/,
    },
  ];
  for (const { name, fault, message } of cases) {
    test(name, async () => {
      server.fail(fault, { action: 'generateContent' });
      const error = await new FlashSummarizer(client()).summarize(request()).then(
        () => assert.fail('accepted'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof ProviderError, String(error));
      assert.match(error.message, message);
      assert.ok(!error.message.includes(KEY));
      assert.equal(generateRequests().length, 1, 'not retried');
    });
  }
});

describe('the same sections as the offline summary, checked', () => {
  // Names with spaces: the identifiers the structure gives; the older frequency check does not sample them.
  const GIVEN = ['make build all', 'git push origin main', 'run fast mode', 'npm run bench one'];
  const SPOKEN: ConversationTurn[] = [
    turn('s1', `Please try \`${GIVEN[0]}\` then \`${GIVEN[1]}\`, and \`${GIVEN[2]}\` before \`${GIVEN[3]}\`.`, 'user'),
    turn('s2', `I ran \`${GIVEN[0]}\` and \`${GIVEN[1]}\`; next \`${GIVEN[2]}\` and \`${GIVEN[3]}\`. ${'The build step reads the cache first. '.repeat(12)}`),
  ];
  const sections = (body: (section: string) => string) => SUMMARY_SECTIONS.map((s) => `## ${s}\n${body(s)}`).join('\n');

  test('the prompt carries the facts read from the structure, the identifiers to keep among them', async () => {
    server.fail({ kind: 'reply', text: sections((s) => (s === 'Identifiers' ? GIVEN.join(', ') : 'none')) }, { action: 'generateContent' });
    await new FlashSummarizer(client()).summarize(request(SPOKEN, { activeTask: 'ship it' }));
    const prompt = JSON.stringify(generateRequests()[0]?.body);
    assert.match(prompt, /Facts read from the transcript's structure/);
    for (const id of GIVEN) assert.ok(prompt.includes(`\`${id}\``), `the prompt lists ${id}`);
  });

  test('an answer that drops the identifiers it was given is rejected', async () => {
    server.fail({ kind: 'reply', text: sections(() => 'none') }, { action: 'generateContent' });
    await assert.rejects(
      new FlashSummarizer(client()).summarize(request(SPOKEN, { activeTask: 'ship it' })),
      (e: unknown) => e instanceof ProviderError && /dropped most identifiers it was given \(kept 0 of 4/.test(e.message),
    );
  });

  test('an answer without one of the sections is rejected, naming it', async () => {
    const text = sections((s) => (s === 'Identifiers' ? GIVEN.join(', ') : 'none')).replace('## Open TODOs\nnone\n', '');
    server.fail({ kind: 'reply', text }, { action: 'generateContent' });
    await assert.rejects(
      new FlashSummarizer(client()).summarize(request(SPOKEN, { activeTask: 'ship it' })),
      (e: unknown) => e instanceof ProviderError && /lacks the section "Open TODOs"; nothing was written/.test(e.message),
    );
    server.fail({ kind: 'reply', text: sections((s) => (s === 'Identifiers' ? GIVEN.join(', ') : 'none')) }, { action: 'generateContent' });
    assert.match(await new FlashSummarizer(client()).summarize(request(SPOKEN, { activeTask: 'ship it' })), /## Lookup hints/);
  });
});

describe('retries', () => {
  test('429 with Retry-After is retried after the wait the server asked for', async () => {
    server.fail({ kind: 'status', status: 429, retryAfterSeconds: 1 }, { action: 'generateContent' });
    const waits: number[] = [];
    const c = client({ onRetry: ({ waitMs }) => waits.push(waitMs) });
    await new FlashSummarizer(c).summarize(request());
    const sent = generateRequests();
    assert.equal(sent.length, 2);
    assert.ok(sent[1]!.receivedAt - sent[0]!.receivedAt >= 950, `waited ${sent[1]!.receivedAt - sent[0]!.receivedAt} ms`);
    assert.deepEqual(waits, [1000], 'exactly the wait the server asked for, no backoff on top');
    assert.equal(c.usage.retries, 1);
  });

  test("the API's RetryInfo delay is honoured when there is no Retry-After header", async () => {
    server.fail({ kind: 'status', status: 429, retryDelayInBody: '0.6s' }, { action: 'generateContent' });
    await new FlashSummarizer(client()).summarize(request());
    const sent = generateRequests();
    assert.equal(sent.length, 2);
    assert.ok(sent[1]!.receivedAt - sent[0]!.receivedAt >= 550);
  });

  test('500 and 503 are retried with backoff, then succeed', async () => {
    server.fail({ kind: 'status', status: 500 }, { action: 'generateContent' });
    server.fail({ kind: 'status', status: 503 }, { action: 'generateContent' });
    const c = client();
    await new FlashSummarizer(c).summarize(request());
    assert.equal(generateRequests().length, 3);
    assert.equal(c.usage.retries, 2);
  });

  test('retries stop at the attempt cap with exit-5 error naming the status and the attempts', async () => {
    server.failAlways({ kind: 'status', status: 503 }, { action: 'generateContent' });
    const error = await new FlashSummarizer(client({ retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 20 } }))
      .summarize(request())
      .catch((e: unknown) => e);
    assert.ok(error instanceof ProviderError);
    assert.match(error.message, /HTTP 503.*after 3 attempts/);
    assert.equal(error.exitCode, 5);
    assert.equal(generateRequests().length, 3);
  });

  test('a wait past the total-time cap is not taken', async () => {
    server.failAlways({ kind: 'status', status: 429, retryAfterSeconds: 60 }, { action: 'generateContent' });
    const waits: number[] = [];
    const error = await new FlashSummarizer(client({ retry: { maxTotalMs: 2000 }, onRetry: ({ waitMs }) => waits.push(waitMs) }))
      .summarize(request())
      .catch((e: unknown) => e);
    assert.ok(error instanceof ProviderError);
    assert.match(error.message, /server asked to wait 60 s, past the 2 s limit on waiting for an answer/);
    assert.equal(generateRequests().length, 1);
    assert.deepEqual(waits, [], 'the 60 s wait was never started');
  });

  test('a hung request times out and is not retried', async () => {
    server.failAlways({ kind: 'hang' }, { action: 'generateContent' });
    // The server never answers: only the 0.3 s timeout can end this call, and the message says it did.
    const error = await new FlashSummarizer(client({ timeoutMs: 300 })).summarize(request()).catch((e: unknown) => e);
    assert.ok(error instanceof ProviderError, String(error));
    assert.match(error.message, /no answer within 0\.3 s/);
    assert.equal(generateRequests().length, 1);
  });

  test('a slow answer inside the timeout is accepted', async () => {
    server.fail({ kind: 'slow', delayMs: 200 }, { action: 'generateContent' });
    const summary = await new FlashSummarizer(client({ timeoutMs: 3000 })).summarize(request());
    assert.match(summary, /^\[Context Summary\]/);
  });

  test('aborting (Ctrl-C) stops a request in flight: InterruptedError, no retry', async () => {
    server.failAlways({ kind: 'hang' }, { action: 'generateContent' });
    const controller = new AbortController();
    // Ctrl-C once the request is on its way (not on a timer: a slow machine may not have sent it yet).
    void server.received(1).then(() => controller.abort(new Error('SIGINT')));
    const error = await new FlashSummarizer(client()).summarize(request(TURNS, { signal: controller.signal })).catch((e: unknown) => e);
    assert.ok(error instanceof InterruptedError, String(error));
    assert.equal(error.exitCode, 130);
    assert.equal(generateRequests().length, 1);
  });

  test('the key never appears in an error, even when the server echoes it', async () => {
    server.fail({ kind: 'status', status: 400, message: `API key not valid: ${KEY}` }, { action: 'generateContent' });
    const error = await new FlashSummarizer(client()).summarize(request()).catch((e: unknown) => e);
    assert.ok(error instanceof ProviderError);
    assert.ok(!error.message.includes(KEY), error.message);
    assert.ok(!(error.hint ?? '').includes(KEY));
  });
});

describe('GeminiEmbedder', () => {
  test('batches of at most 100, vectors in order, cached in the archive by content hash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-embed-'));
    try {
      const store = ArchiveStore.open(join(dir, 'archive.sqlite'));
      const texts = Array.from({ length: 230 }, (_, i) => `turn ${i}: touched src/file${i}.ts`);
      const first = new GeminiEmbedder(client(), { cache: store });
      const vectors = await first.embed(texts);
      const batches = server.requests.filter((r) => r.action === 'batchEmbedContents');
      assert.deepEqual(
        batches.map((r) => (r.body as { requests: unknown[] }).requests.length),
        [100, 100, 30],
      );
      assert.equal(batches[0]!.model, 'gemini-embedding-001');
      assert.equal(vectors.length, 230);
      // Deterministic vectors: the same text embeds the same in another order.
      server.reset();
      const again = new GeminiEmbedder(client(), { cache: store });
      const reordered = await again.embed([texts[5]!, texts[0]!, 'a new turn about src/other.ts']);
      assert.equal(server.requests.filter((r) => r.action === 'batchEmbedContents').length, 1, 'only the new text is sent');
      assert.equal((server.requests[0]!.body as { requests: unknown[] }).requests.length, 1);
      assert.equal(again.cached, 2);
      assert.deepEqual(
        Array.from(reordered[0]!),
        Array.from(vectors[5]!).map((v) => Math.fround(v)),
      );
      assert.deepEqual(
        Array.from(reordered[1]!),
        Array.from(vectors[0]!).map((v) => Math.fround(v)),
      );
      store.close();
      // The cache outlives the process: a new connection finds it.
      const reopened = ArchiveStore.open(join(dir, 'archive.sqlite'));
      server.reset();
      await new GeminiEmbedder(client(), { cache: reopened }).embed(texts.slice(0, 50));
      assert.equal(server.requests.length, 0);
      reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('createDefaultContextPruner(llmClient) [seed 000]', () => {
  test('wires the Flash summarizer with the seed settings and prunes a window over the soft limit', async () => {
    const pruner = createDefaultContextPruner(client(), { softLimitTokens: 2000, hardLimitTokens: 4000 });
    const turns: ConversationTurn[] = [
      turn('sys', 'You are a coding agent.', 'system', 'system'),
      turn('prd', 'PRD: config loading must never crash.', 'user', 'prd'),
      ...Array.from({ length: 12 }, (_, i) => turn(`m${i}`, `worked on src/step${i}.ts with helperFn${i}; ${'log line '.repeat(150)}`)),
    ];
    const result = await pruner.prune({ turns, totalTokenEstimate: 0 } as never, 'REQ-7 config loading');
    assert.equal(result.pruned, true);
    const sent = generateRequests();
    assert.ok(sent.length >= 1);
    const config = (sent[0]!.body as { generationConfig: { maxOutputTokens: number; temperature: number } }).generationConfig;
    assert.deepEqual([config.maxOutputTokens, config.temperature], [4096, 0.1]);
    assert.equal(sent[0]!.model, DEFAULT_SUMMARY_MODEL);
    assert.match(JSON.stringify(sent[0]!.body), /REQ-7 config loading/);
    assert.ok(!JSON.stringify(sent[0]!.body).includes('PRD: config loading must never crash'), 'pinned turns are not sent');
  });
});

describe('thinking models: thinking tokens count against maxOutputTokens', () => {
  test('summaries ask for little thinking (LOW on Gemini 3, budget 0 on 2.5 Flash), so a 4096-token cap leaves room for the answer', async () => {
    // A model that thinks 6,000 tokens by default: with the seed's cap of 4096 nothing would be left.
    const thinker = await startFakeGemini({ apiKey: KEY, thinking: { default: 6000, low: 300 } });
    try {
      const c = new GeminiClient({ apiKey: KEY, baseUrl: thinker.url, retry: { baseDelayMs: 10 } });
      const summary = await new FlashSummarizer(c).summarize(request());
      assert.match(summary, /^\[Context Summary\]/);
      const config = (thinker.requests[0]!.body as { generationConfig: { thinkingConfig?: unknown } }).generationConfig;
      assert.deepEqual(config.thinkingConfig, { thinkingLevel: 'LOW' });
      assert.ok(c.usage.outputTokens >= 300, 'thinking tokens are counted as received');
      await new FlashSummarizer(c, { model: 'gemini-2.5-flash' }).summarize(request());
      assert.deepEqual((thinker.requests[1]!.body as { generationConfig: { thinkingConfig?: unknown } }).generationConfig.thinkingConfig, {
        thinkingBudget: 0,
      });
      // Left to its default, the model spends the budget thinking: truncated, rejected.
      const error = await new FlashSummarizer(c, { thinking: 'model' }).summarize(request()).catch((e: unknown) => e);
      assert.ok(error instanceof ProviderError);
      assert.match(error.message, /truncated \(finishReason MAX_TOKENS\)/);
    } finally {
      await thinker.close();
    }
  });
});
