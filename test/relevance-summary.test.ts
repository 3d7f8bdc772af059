import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ProviderError } from '../src/core/errors.js';
import { cosineSimilarity, findActiveTask, scoreRelevance } from '../src/core/prune/relevance.js';
import type { Embedder, Embedding } from '../src/core/provider-contracts.js';
import { loadCounter } from '../src/core/tokens/encodings.js';
import type { ConversationTurn } from '../src/core/turn.js';
import { ExtractiveSummarizer, extractFacts, linesAboutGoal } from '../src/providers/extractive-summarizer.js';
import { LocalEmbedder } from '../src/providers/local-embedder.js';
import { terms } from '../src/core/terms.js';
import { readTranscript } from '../src/formats/index.js';
import { parseDocument } from '../src/io/jsonl.js';
import { filesUnder, realdataFiles, realdataSkip, repoRoot } from './helpers/realdata.js';

const counter = loadCounter('o200k_base');
const t = (id: string, role: ConversationTurn['role'], type: ConversationTurn['type'], content: string): ConversationTurn => ({ id, role, type, content });

describe('relevance', () => {
  test('cosine similarity: zero vectors and mismatched lengths score 0, never NaN', () => {
    assert.equal(cosineSimilarity([0, 0, 0], [1, 2, 3]), 0);
    assert.equal(cosineSimilarity([], []), 0);
    assert.equal(cosineSimilarity([1, 2], [1, 2, 3]), 0);
    assert.ok(Math.abs(cosineSimilarity([1, 2, 3], [2, 4, 6]) - 1) < 1e-12);
    assert.ok(Math.abs(cosineSimilarity([1, 0], [-1, 0]) + 1) < 1e-12);
  });

  test('terms split identifiers at camelCase and snake_case and keep them whole', () => {
    const words = terms('parseConfigFile reads MAX_RETRY_COUNT from devs-ctx.config.json');
    for (const w of ['parseconfigfile', 'parse', 'config', 'file', 'max_retry_count', 'retry', 'dev', 'ctx', 'json']) assert.ok(words.includes(w), w);
    assert.ok(!words.includes('from'), 'stop words are dropped');
  });

  test('the local embedder is deterministic and ranks on-topic text above off-topic text', async () => {
    const corpus = [
      'the payment webhook retries with exponential backoff in src/payments/webhook.ts',
      'updated the README badges and fixed a typo in the footer',
      'webhook signature verification failed: invalid HMAC for payment event',
      'bumped eslint and prettier, reformatted the css',
    ];
    const a = new LocalEmbedder(corpus);
    const b = new LocalEmbedder(corpus);
    assert.deepEqual([...a.embedOne(corpus[0] ?? '')], [...b.embedOne(corpus[0] ?? '')]);
    const scores = await scoreRelevance('fix the payment webhook retry', corpus, a);
    assert.ok((scores[0] ?? 0) > (scores[1] ?? 0) && (scores[0] ?? 0) > (scores[3] ?? 0));
    assert.ok((scores[2] ?? 0) > (scores[1] ?? 0));
    assert.ok(Math.abs(scores[1] ?? 1) < 0.1, `no shared words: about 0 (only hash collisions), got ${scores[1]}`);
    assert.deepEqual(await scoreRelevance('', ['x'], new LocalEmbedder()), [0], 'an empty goal scores 0');
  });

  test('texts are embedded in batches, all requested at once', async () => {
    const calls: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const embedder: Embedder = {
      name: 'counting',
      async embed(texts) {
        calls.push(texts.length);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return texts.map((): Embedding => [1, 0]);
      },
    };
    const scores = await scoreRelevance(
      'goal',
      Array.from({ length: 150 }, (_, i) => `text ${i}`),
      embedder,
      { batchSize: 64 },
    );
    assert.equal(scores.length, 150);
    assert.deepEqual(calls, [1, 64, 64, 22]);
    assert.equal(maxInFlight, 3, 'the three batches run concurrently');
  });

  test('the active task is the latest user request or task turn, not a tool result or summary', () => {
    assert.equal(
      findActiveTask([
        t('1', 'system', 'system', 'sys'),
        t('2', 'user', 'message', 'first request'),
        t('3', 'user', 'spec', 'SPEC: retries'),
        t('4', 'user', 'message', 'now fix the webhook'),
        t('5', 'tool', 'tool_result', 'output'),
        t('6', 'system', 'summary', '[Context Summary] …'),
      ]),
      'now fix the webhook',
    );
    assert.equal(findActiveTask([t('1', 'user', 'message', 'a'), t('2', 'user', 'plan', 'PLAN: step 2')]), 'PLAN: step 2');
    assert.equal(findActiveTask([t('1', 'assistant', 'message', 'hi')]), undefined);
  });
});

describe('extractive summarizer', () => {
  const removed: ConversationTurn[] = [
    t('u1', 'user', 'message', 'Please make the webhook retry idempotent.'),
    t('a1', 'assistant', 'message', "I'll use an idempotency key stored in `payment_events` instead of a lock.\nTODO: add a migration for the unique index."),
    t('c1', 'assistant', 'tool_call', 'shell {"command":["bash","-lc","npm test -- webhook"]}'),
    t(
      'r1',
      'tool',
      'tool_result',
      'FAIL src/payments/webhook.test.ts\nError: duplicate key value violates unique constraint "payment_events_pkey"\n  at handleRetry (src/payments/webhook.ts:42:7)',
    ),
    t('a2', 'assistant', 'message', 'The retry reused the event id; fixed by deriving the key from deliveryId in handleRetry.'),
    t('c2', 'assistant', 'tool_call', 'Bash {"command":"git diff --stat"}'),
    t('r2', 'tool', 'tool_result', ' src/payments/webhook.ts | 12 ++++++---'),
  ];

  test('its lines are counted ahead in one batch when the counter can; a batch that fails fails nothing: the same summary, counted here', async () => {
    const request = { turns: removed, activeTask: 'make the webhook retry idempotent', budgetTokens: 2000, archive: { eventId: 'e1' } };
    const plain = await new ExtractiveSummarizer(counter).summarize(request);
    const batches: (readonly string[])[] = [];
    const ahead = { count: (text: string) => counter.count(text), countAlongside: async (texts: readonly string[]) => void batches.push(texts) };
    assert.equal(await new ExtractiveSummarizer(ahead).summarize(request), plain);
    assert.equal(batches.length, 1);
    assert.ok(batches[0]?.some((line) => line.startsWith('\n## Files touched\n- ')));
    let counted = 0;
    const failing = {
      count: (text: string) => {
        counted++;
        return counter.count(text);
      },
      countAlongside: async () => {
        throw new Error('a count worker ran out of memory');
      },
    };
    assert.equal(await new ExtractiveSummarizer(failing).summarize(request), plain);
    assert.ok(counted > 2, 'each line counted here');
  });

  test('keeps paths, identifiers, commands, errors with what followed, decisions and open work, verbatim', async () => {
    const text = await new ExtractiveSummarizer(counter).summarize({
      turns: removed,
      activeTask: 'make the webhook retry idempotent',
      budgetTokens: 2000,
      archive: { eventId: '3f2a9c1e-0000-4000-8000-000000000000' },
    });
    assert.ok(text.startsWith('[Context Summary]\n'));
    for (const kept of [
      'src/payments/webhook.ts',
      'handleRetry',
      'payment_events',
      'npm test -- webhook',
      'git diff --stat',
      'Error: duplicate key value violates unique constraint "payment_events_pkey"',
      'then: The retry reused the event id',
      "I'll use an idempotency key",
      'TODO: add a migration for the unique index.',
      'u1 … r2',
      'devs-ctx recall',
    ]) {
      assert.ok(text.includes(kept), `summary keeps ${kept}:\n${text}`);
    }
  });

  test('fits the budget by keeping the most important items of every section', async () => {
    const many = Array.from({ length: 200 }, (_, i) => t(`r${i}`, 'tool', 'tool_result', `Error: step ${i} failed in src/module${i}/file${i}.ts`));
    const summarizer = new ExtractiveSummarizer(counter);
    for (const budget of [150, 300, 1200]) {
      const text = await summarizer.summarize({ turns: many, activeTask: 'goal', budgetTokens: budget });
      assert.ok(counter.count(text) <= budget, `${counter.count(text)} <= ${budget}`);
      assert.ok(text.includes('## Lookup hints'));
    }
    const small = await summarizer.summarize({ turns: many, activeTask: 'goal', budgetTokens: 300 });
    assert.ok(small.includes('## Errors') && small.includes('## Files'), 'round-robin: each section gets its first items');
  });

  test('fails closed when even the header does not fit', async () => {
    await assert.rejects(
      new ExtractiveSummarizer(counter).summarize({ turns: removed, activeTask: 'x', budgetTokens: 20 }),
      (error: unknown) => error instanceof ProviderError && error.exitCode === 5,
    );
  });

  test('code that mentions Error is not an error; ANSI colours are not part of paths', () => {
    const facts = extractFacts([
      t(
        'r',
        'tool',
        'tool_result',
        '{"output":"  onError: (error: Error) => {\\n  throw new Error(\\"x\\");\\n\\u001b[31mError: connect ECONNREFUSED\\u001b[39m\\n at /app/\\u001b[2msrc/db.ts\\u001b[22m"}',
      ),
    ]);
    assert.equal(facts.errors.length, 1);
    assert.match(facts.errors[0] ?? '', /^Error: connect ECONNREFUSED/);
  });

  test('facts asked for by kind are those kinds of all the facts, whatever the errors fill (fixtures and real transcripts)', () => {
    // More error lines than the summary lists, then a decision, a todo and a done line: with the
    // errors full, a caller that wants only them skips the lines, one that wants the rest does not.
    const errors = Array.from({ length: 30 }, (_, i) => `Error: connect ECONNREFUSED 127.0.0.1:${5000 + i}`).join('\n');
    const made = [
      t('r1', 'tool', 'tool_result', `see src/db.ts\n${errors}`),
      t(
        'a1',
        'assistant',
        'message',
        'We decided to use `retryPolicy` instead of polling.\nTODO: wire the webhook timeout.\nFixed the flaky test in src/db.test.ts.',
      ),
      t('c1', 'assistant', 'tool_call', 'Bash {"command":"npm test -- src/db.test.ts"}'),
    ];
    const spans: [string, ConversationTurn[]][] = [['made', made]];
    for (const path of [...filesUnder(`${repoRoot}fixtures`), ...(realdataSkip ? [] : realdataFiles())]) {
      let turns: ConversationTurn[];
      try {
        turns = readTranscript(parseDocument(readFileSync(path), { path })).entries.map((e) => e.turn);
      } catch {
        continue; // a fixture of a broken file
      }
      if (turns.length > 0) spans.push([path, turns]);
    }
    assert.ok(spans.length > 20, `${spans.length} transcripts`);
    const kinds = [['files', 'errors'], ['files', 'identifiers'], ['errors'], ['decisions', 'todos', 'done'], ['commands']] as const;
    for (const [label, turns] of spans) {
      const all = extractFacts(turns);
      for (const asked of kinds) {
        const expected = Object.fromEntries(asked.map((kind) => [kind, all[kind]]));
        assert.deepEqual(extractFacts(turns, asked), expected, `${label}: ${asked.join(', ')}`);
      }
    }
    const all = extractFacts(made);
    assert.equal(all.errors.length, 20);
    assert.deepEqual(all.decisions, ['We decided to use `retryPolicy` instead of polling.']);
    assert.deepEqual(all.todos, ['TODO: wire the webhook timeout.']);
    assert.deepEqual(all.done, ['Fixed the flaky test in src/db.test.ts.']);
  });

  test('the lines that speak most about the goal come first, rarer goal words weighing more', () => {
    const lines = linesAboutGoal(
      [
        t('a', 'assistant', 'message', 'Fixing the flaky test in the report module now.\nThe fix for the report totals is done.'),
        t('b', 'tool', 'tool_result', 'webhook retry counter lives in PAYMENT_RETRY_LIMIT (src/payments/webhook.ts)'),
        t('c', 'assistant', 'message', 'const x = webhook(retry, {'),
      ],
      'fix the payment webhook retry',
    );
    assert.equal(lines[0], 'webhook retry counter lives in PAYMENT_RETRY_LIMIT (src/payments/webhook.ts)');
    assert.ok(!lines.some((l) => l.startsWith('const')), 'code is not a fact line');
    assert.deepEqual(linesAboutGoal([t('a', 'user', 'message', 'anything at all here')], ''), []);
  });
});

test('scoreRelevance: a few batches in flight, and the first failure aborts the others', async () => {
  const { scoreRelevance } = await import('../src/core/prune/relevance.js');
  let inFlight = 0;
  let most = 0;
  const aborted: number[] = [];
  let call = 0;
  const embedder = {
    name: 'flaky',
    embed(texts: readonly string[], options: { signal?: AbortSignal } = {}): Promise<number[][]> {
      const n = call++;
      if (n === 0) return Promise.resolve(texts.map(() => [1, 0]));
      inFlight++;
      most = Math.max(most, inFlight);
      return new Promise((_resolve, reject) => {
        if (n === 2) {
          setTimeout(() => {
            inFlight--;
            reject(new Error('batch 2 failed'));
          }, 20);
          return;
        }
        // The others never answer on their own: only an abort ends them.
        options.signal?.addEventListener('abort', () => {
          inFlight--;
          aborted.push(n);
          reject(new Error('aborted'));
        });
      });
    },
  };
  const texts = Array.from({ length: 64 * 10 }, (_, i) => `text ${i}`);
  await assert.rejects(scoreRelevance('goal', texts, embedder, { batchSize: 64 }), /batch 2 failed/);
  assert.ok(most <= 4, `at most 4 batches at once, saw ${most}`);
  assert.ok(aborted.length >= 1, 'the batches still running were aborted');
  assert.ok(call < 11, `no new batches after the failure (${call - 1} started)`);
});
