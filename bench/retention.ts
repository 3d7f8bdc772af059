/**
 * The retention benchmark's transcript: a long native `devs` session that ends with one clear request
 * (the goal), with facts that matter to that goal planted across its middle.
 *
 * The session is realistic on purpose, and fair to every strategy:
 * - most of it is other work (reports, auth, search, i18n, CI, e-mail, inventory), written with the
 *   same generic words a coding session uses everywhere: fix, flaky, retry, test, timeout, src, ts;
 * - the goal's subject (the payment webhook) comes up in several stretches before the final request,
 *   as it would when a problem comes back; a few of those stretches hold no fact at all;
 * - each fact is one distinctive token (an error code, a constant, a path, a metric, a function) in
 *   one turn of such a stretch, and nowhere else; the turn around it is ordinary on-topic text, so a
 *   fact turn looks like any other turn about the webhook. The fact tokens share no word with the goal.
 * - facts sit in user messages, reasoning, assistant messages and tool output alike.
 *
 * Same seed → the same bytes (the bench's seeded PRNG, never Math.random).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { countEntries } from '../src/core/accounting.js';
import { DEFAULT_PRUNER_CONFIG, isPinnedTurn, loadCounter, parseDocument, readTranscript, SUMMARY_PREFIX } from '../src/index.js';
import { createRng } from './generate.js';
import type { Rng } from './generate.js';

export const RETENTION_SEED = 0x5eed_7e7a;

/** The final user request: what `prune` finds as the active task. */
export const RETENTION_GOAL =
  'The payment webhook retry test is failing again in CI, and yesterday a customer was charged twice. ' +
  'Please fix the flaky payment webhook retry in src/payments/webhook.ts so a redelivered event is processed exactly once.';

type FactTurn = 'user' | 'reasoning' | 'assistant' | 'tool_result';

/** A planted fact: its token, the kind of turn it sits in, and the sentence that carries it. */
export interface PlantedFact {
  readonly token: string;
  readonly turn: FactTurn;
  readonly sentence: string;
  /** For a fact in tool output: the output it reads naturally in. */
  readonly output?: 'tests' | 'logs' | 'listing';
}

export const PLANTED_FACTS: readonly PlantedFact[] = [
  {
    token: 'PAY-E4117',
    turn: 'tool_result',
    output: 'logs',
    sentence: 'ERROR PAY-E4117 webhook delivery rejected: signature timestamp outside tolerance (attempt 3 of 5)',
  },
  {
    token: 'WEBHOOK_RETRY_JITTER_MS',
    turn: 'assistant',
    sentence: 'I added `WEBHOOK_RETRY_JITTER_MS` (default 250) so two retries of the same payment event no longer fire in the same tick.',
  },
  {
    token: 'src/payments/idempotency-ledger.ts',
    turn: 'reasoning',
    sentence:
      'The dedupe of webhook deliveries really happens in src/payments/idempotency-ledger.ts, not in the handler, and the retry path calls the handler directly, so it skips the ledger.',
  },
  {
    token: 'stripeSignatureToleranceSec',
    turn: 'user',
    sentence:
      'Heads up: ops set `stripeSignatureToleranceSec` to 300 in production but staging still has 60, which is probably why the webhook retries fail there.',
  },
  {
    token: 'dlq-payments-webhook-v2',
    turn: 'assistant',
    sentence: 'Payment events that run out of retries now go to the `dlq-payments-webhook-v2` queue; nothing drains the old v1 queue any more.',
  },
  {
    token: 'evt_1NQx7fKb2LmZ',
    turn: 'tool_result',
    output: 'logs',
    sentence: '2026-03-14T09:12:44.118Z info  webhook received id=evt_1NQx7fKb2LmZ type=payment_intent.succeeded attempt=2 (already seen at 09:12:41.902Z)',
  },
  {
    token: 'retryBudgetExhausted',
    turn: 'reasoning',
    sentence:
      'When the webhook handler sees `retryBudgetExhausted` it returns 200 to the provider, so the payment event is acknowledged even though we never processed it.',
  },
  {
    token: 'X-Webhook-Attempt',
    turn: 'user',
    sentence: 'The provider sends the attempt number in the `X-Webhook-Attempt` header; can we log it with every payment webhook we receive?',
  },
  {
    token: 'PaymentIntentRaceError',
    turn: 'tool_result',
    output: 'tests',
    sentence: 'PaymentIntentRaceError: payment intent pi_3Kd9 already captured by a concurrent webhook delivery',
  },
  {
    token: 'migrations/0042_webhook_attempts.sql',
    turn: 'assistant',
    sentence: 'The attempts table for webhook deliveries is created in migrations/0042_webhook_attempts.sql; it has a unique index on (event_id, attempt).',
  },
  {
    token: 'WEBHOOK_MAX_ATTEMPTS',
    turn: 'user',
    sentence: 'For the record, production runs with WEBHOOK_MAX_ATTEMPTS=7 for payment webhooks, not the 5 in the example config.',
  },
  {
    token: 'onDeliveryTimeout',
    turn: 'reasoning',
    sentence:
      'The retry is scheduled from `onDeliveryTimeout` as well as from the error branch, so a slow payment webhook can be retried twice for one failure.',
  },
  {
    token: 'clockSkewGuard',
    turn: 'assistant',
    sentence: 'I wrapped the signature check in `clockSkewGuard()` so a webhook retried minutes later is not rejected for its old timestamp.',
  },
  {
    token: 'test/payments/fixtures/replay-burst.json',
    turn: 'tool_result',
    output: 'listing',
    sentence: 'test/payments/fixtures/replay-burst.json  14 webhook events, 3 duplicate deliveries of the same payment intent',
  },
  {
    token: 'ERR_LEDGER_LOCK_TIMEOUT',
    turn: 'tool_result',
    output: 'tests',
    sentence: 'Error: ERR_LEDGER_LOCK_TIMEOUT while recording webhook event for payment pi_7Hq2 (waited 5000 ms)',
  },
  {
    token: 'computeBackoffMs',
    turn: 'reasoning',
    sentence:
      'The webhook retry delay comes from `computeBackoffMs(attempt)`, which returns 0 for attempt 0, so the first retry of a payment event is immediate.',
  },
  {
    token: 'payments.webhook.retry.scheduled',
    turn: 'user',
    sentence: 'On the dashboard the payments.webhook.retry.scheduled counter doubled after Tuesday, right when the duplicate payment charges started.',
  },
  {
    token: 'src/payments/provider-clock.ts',
    turn: 'assistant',
    sentence:
      'The provider timestamp used by the webhook signature check is parsed in src/payments/provider-clock.ts, which assumes seconds, not milliseconds.',
  },
  {
    token: 'HMAC_SHA256_V1',
    turn: 'reasoning',
    sentence: 'The provider signs each payment webhook with `HMAC_SHA256_V1`, and our retry path re-signs the stored body with a different scheme.',
  },
  {
    token: 'acquireDeliveryLease',
    turn: 'assistant',
    sentence:
      'Each webhook worker now calls `acquireDeliveryLease(eventId)` before touching the payment, so a retry and the original delivery cannot both run.',
  },
];

// ---------------------------------------------------------------------------------------------
// Topics: the goal's subject and the unrelated work around it

interface Topic {
  readonly name: string;
  readonly files: readonly string[];
  readonly tests: readonly string[];
  readonly functions: readonly string[];
  /** Variable names for code listings. */
  readonly locals: readonly string[];
  /** What the work is about, as noun phrases. */
  readonly nouns: readonly string[];
  /** Sentences only this topic says. */
  readonly specific: readonly string[];
  readonly asks: readonly string[];
}

const PAYMENTS: Topic = {
  name: 'payments',
  files: ['src/payments/webhook.ts', 'src/payments/retry.ts', 'src/payments/signature.ts', 'src/payments/events.ts'],
  tests: ['test/payments/webhook.test.ts', 'test/payments/retry.test.ts'],
  functions: ['handleWebhookEvent', 'scheduleRetry', 'verifySignature', 'markEventProcessed', 'loadPaymentIntent', 'enqueueDelivery'],
  locals: ['event', 'delivery', 'intent', 'attempt', 'signature', 'retryAt', 'payload', 'eventId'],
  nouns: [
    'payment webhook',
    'webhook delivery',
    'webhook retry',
    'payment intent',
    'signature check',
    'duplicate delivery',
    'provider event',
    'charge capture',
  ],
  specific: [
    'The provider redelivers a payment webhook when we answer slower than ten seconds, so a slow handler sees the same event twice.',
    'A duplicate delivery of the payment event reaches the handler before the first one has marked it processed.',
    'The webhook retry runs in the worker, outside the request, so its errors never reach the provider.',
    'The charge capture is not idempotent: calling it twice for one payment intent charges the card twice.',
    'The webhook test uses fake timers, and the retry fires between two awaits, which makes it flaky under load.',
    'Signature verification reads the raw body; after a retry we only have the parsed JSON, so the check can fail.',
  ],
  asks: [
    'Customers reported a double charge again. Can you look at how the payment webhook handles redelivered events?',
    'The webhook retry test failed twice on main this morning. Can you see what is going on?',
    'Please add logging to the payment webhook so we can see each delivery and retry.',
    'Can you check whether the webhook signature check still works for retried deliveries?',
    'Support says some payments stay pending forever. Could the webhook retry be giving up early?',
  ],
};

const FILLER: readonly Topic[] = [
  {
    name: 'reports',
    files: ['src/reports/csv-export.ts', 'src/reports/paginate.ts', 'src/reports/columns.ts'],
    tests: ['test/reports/csv-export.test.ts'],
    functions: ['buildCsvRows', 'paginateCursor', 'formatCell', 'streamExport', 'quoteField'],
    locals: ['row', 'cursor', 'page', 'columns', 'cell', 'header', 'stream'],
    nouns: ['CSV export', 'page cursor', 'column header', 'report row', 'export stream', 'quoted field'],
    specific: [
      'The export drops the last row of every page because the cursor is advanced before the row is written.',
      'Fields with a comma and a quote are escaped twice, so the CSV opens with broken columns in Excel.',
      'A report with 200k rows holds every page in memory; it should stream rows as they are read.',
      'The column header order depends on object key order, which changes when a field is optional.',
    ],
    asks: [
      'The monthly CSV export is missing rows for big accounts. Can you fix the pagination?',
      'Please make the report export stream instead of building the whole file in memory.',
      'Excel shows broken columns for exports with quotes in the names. Can you look?',
    ],
  },
  {
    name: 'auth',
    files: ['src/auth/session.ts', 'src/auth/refresh-token.ts', 'src/auth/cookies.ts'],
    tests: ['test/auth/session.test.ts'],
    functions: ['refreshSession', 'rotateToken', 'readCookie', 'revokeSession', 'issueAccessToken'],
    locals: ['session', 'token', 'cookie', 'expiresAt', 'userId', 'claims'],
    nouns: ['session cookie', 'refresh token', 'access token', 'login redirect', 'token rotation', 'session store'],
    specific: [
      'Two tabs refresh the session at the same moment; the second uses a rotated refresh token and gets logged out.',
      'The session cookie is set without SameSite, so the login redirect loses it in Safari.',
      'Access tokens are issued with the server clock, and the test machine is two minutes ahead.',
      'Revoking a session leaves its refresh token valid until the nightly cleanup runs.',
    ],
    asks: [
      'Users get logged out randomly when they have two tabs open. Can you investigate the session refresh?',
      'Please make revokeSession invalidate the refresh token immediately.',
      'The login redirect loses the session in Safari. Can you fix the cookie flags?',
    ],
  },
  {
    name: 'search',
    files: ['src/search/indexer.ts', 'src/search/query-parser.ts', 'src/search/rank.ts'],
    tests: ['test/search/indexer.test.ts', 'test/search/query-parser.test.ts'],
    functions: ['reindexProducts', 'tokenizeQuery', 'rankResults', 'applyFacets', 'flushIndex'],
    locals: ['query', 'terms', 'score', 'doc', 'facets', 'batch', 'hits'],
    nouns: ['search index', 'product document', 'query parser', 'ranking score', 'stale index', 'facet filter'],
    specific: [
      'The indexer flushes every 500 documents, so the last partial batch is only written by the next run.',
      'Queries with a hyphen are split into two terms, and the ranking score favours the wrong product.',
      'Facet counts are computed before the price filter, so they do not match the results shown.',
      'The reindex job holds a lock for its whole run, and product updates time out while it runs.',
    ],
    asks: [
      'New products do not show up in search until the next day. Can you look at the indexer?',
      'Search for "usb-c cable" returns chargers first. Can you check the query parser?',
      'The facet counts are wrong when a price filter is set. Please fix.',
    ],
  },
  {
    name: 'i18n',
    files: ['src/i18n/format-date.ts', 'src/i18n/messages.ts', 'src/i18n/plural.ts'],
    tests: ['test/i18n/format-date.test.ts'],
    functions: ['formatDate', 'loadLocale', 'pluralize', 'resolveMessage', 'detectLocale'],
    locals: ['locale', 'date', 'zone', 'bundle', 'count', 'key'],
    nouns: ['locale bundle', 'date format', 'time zone', 'plural rule', 'translation key', 'fallback locale'],
    specific: [
      'Dates are formatted in the server time zone, so orders placed after 23:00 show the next day.',
      'The Polish plural rule has three forms and our helper only knows two.',
      'A missing translation key falls back to the key itself instead of the English message.',
      'Locale bundles are loaded on every request; they should be cached per locale.',
    ],
    asks: [
      'Order dates are off by one day for customers in Asia. Can you fix the date formatting?',
      'The Polish translation shows the wrong plural for 5 items. Please look.',
      'Missing translations show raw keys. Can you make them fall back to English?',
    ],
  },
  {
    name: 'ci',
    files: ['.github/workflows/ci.yml', 'scripts/build.mjs', 'scripts/check-size.mjs'],
    tests: ['test/build/bundle.test.ts'],
    functions: ['buildBundle', 'restoreCache', 'checkBundleSize', 'collectArtifacts'],
    locals: ['cacheKey', 'artifact', 'bundle', 'size', 'step', 'job'],
    nouns: ['build cache', 'CI job', 'lint step', 'type check', 'bundle size', 'test shard'],
    specific: [
      'The cache key hashes the lockfile but not the Node version, so a Node upgrade restores a broken cache.',
      'Test shards are split by file count, and one shard gets all the slow integration tests.',
      'The bundle size check compares against main, which already grew past the budget last week.',
      'The lint step runs on generated files because the ignore pattern is relative to the wrong folder.',
    ],
    asks: [
      'CI takes 25 minutes now. Can you look at the cache and the test shards?',
      'The bundle size check fails on every PR. Please see why.',
      'Lint fails on generated files in CI but not locally. Can you fix it?',
    ],
  },
  {
    name: 'notifications',
    files: ['src/notifications/email.ts', 'src/notifications/templates.ts', 'src/notifications/queue.ts'],
    tests: ['test/notifications/email.test.ts'],
    functions: ['renderTemplate', 'sendEmail', 'queueNotification', 'buildUnsubscribeLink', 'retrySend'],
    locals: ['template', 'message', 'recipient', 'job', 'transport', 'link'],
    nouns: ['email template', 'notification queue', 'unsubscribe link', 'SMTP transport', 'send retry', 'digest email'],
    specific: [
      'The SMTP transport times out under load and the send retry reuses the same closed connection.',
      'The unsubscribe link is built with the staging host in production e-mails.',
      'Digest e-mails are queued twice when the scheduler restarts during a run.',
      'Templates are compiled on every send; compiling once at start-up halves the time.',
    ],
    asks: [
      'Some users get the weekly digest twice. Can you look at the notification queue?',
      'The unsubscribe link in e-mails points to staging. Please fix.',
      'E-mail sending fails with timeouts at peak hours. Can you make the retries sane?',
    ],
  },
  {
    name: 'inventory',
    files: ['src/inventory/sync.ts', 'src/inventory/stock.ts', 'src/inventory/warehouse-feed.ts'],
    tests: ['test/inventory/sync.test.ts'],
    functions: ['syncStock', 'reconcileSku', 'applyAdjustment', 'parseWarehouseFeed', 'reserveStock'],
    locals: ['sku', 'stock', 'feed', 'adjustment', 'reservation', 'warehouse'],
    nouns: ['stock level', 'SKU', 'warehouse feed', 'inventory sync', 'stock reservation', 'stock adjustment'],
    specific: [
      'The warehouse feed sends absolute stock levels, and we apply them as adjustments, so stock doubles.',
      'Reservations are released by a cron job that skips SKUs with a slash in the name.',
      'The sync reads the feed in one request, and the warehouse API times out for large catalogs.',
      'Two syncs can overlap when one runs longer than its interval.',
    ],
    asks: [
      'Stock levels for some SKUs are doubled after the nightly sync. Can you check?',
      'Reservations never get released for a few products. Please investigate.',
      'The inventory sync times out for the big warehouse. Can you page the feed?',
    ],
  },
];

/** Sentences any topic says, with its nouns, files and functions filled in. */
const GENERIC = [
  'Let me look at `{file}` first to see how the {noun} is handled.',
  'The {noun} test is flaky: it passes locally but fails in CI about one run in five.',
  'I will fix `{fn}` so the {noun} path returns early instead of throwing.',
  'There is a retry around `{fn}` that hides the real error; I will remove it and let the failure surface.',
  'The error comes from `{fn}` in `{file}` when the {noun} is undefined.',
  'Type check passes; two tests in `{test}` still fail.',
  'I raised the timeout for the {noun} step from 5 s to 10 s, but that only hides the flaky failure.',
  'Next step: add a regression test in `{test}` for the {noun} case.',
  'This looks like an async race: `{fn}` awaits the {noun} after the caller has already returned.',
  'Refactored `{fn}` to take an options object and updated the call sites in `{file}`.',
  'The lint step complains about an unused import in `{file}`.',
  'I ran the whole suite: 412 passed, 1 failed, 3 skipped. The failure is the {noun} case.',
  'The fix is small, but I want a test that fails without it before I change `{fn}`.',
  'Reading `{file}` again, the {noun} is mutated in place, which explains the flaky behaviour.',
  'I will keep the old behaviour behind a flag until the {noun} change is verified in staging.',
  'The stack trace points at `{fn}`, line 88, where the {noun} is read without a null check.',
  'Retrying the failed step makes it pass, so this is timing, not logic.',
  'I checked git blame: the {noun} handling in `{file}` changed three weeks ago.',
  'Done: `{fn}` now validates its input, and the error message names the {noun}.',
  'We should not swallow this error; the caller needs to know the {noun} failed.',
];

const REASONING_OPENERS = [
  'Thinking about where this can go wrong.',
  'Before changing anything, let me work out the order of events.',
  'Two explanations fit what we see.',
  'Let me reason about this from the test output.',
  'The simplest explanation first.',
];

const ANSWER_OPENERS = ['Here is what I found.', 'Summary of the change:', 'I found the cause.', 'Status update:', 'Done, with one caveat.'];

const CONDITIONS = [
  'the input is empty',
  'the cache is cold',
  'it is called twice',
  'the timeout elapses',
  'the retry is disabled',
  'the clock moves backwards',
  'two requests race',
  'the record is missing',
];

function fill(rng: Rng, template: string, topic: Topic): string {
  return template
    .replaceAll('{file}', () => rng.pick(topic.files))
    .replaceAll('{test}', () => rng.pick(topic.tests))
    .replaceAll('{fn}', () => rng.pick(topic.functions))
    .replaceAll('{noun}', () => rng.pick(topic.nouns));
}

function sentence(rng: Rng, topic: Topic): string {
  return rng.chance(0.35) ? rng.pick(topic.specific) : fill(rng, rng.pick(GENERIC), topic);
}

/** Prose about `topic` of about `chars` characters, in short paragraphs. */
function prose(rng: Rng, topic: Topic, chars: number, opener?: string): string {
  const paragraphs: string[] = [];
  let length = 0;
  let paragraph: string[] = opener ? [opener] : [];
  while (length < chars) {
    const s = sentence(rng, topic);
    paragraph.push(s);
    length += s.length + 1;
    if (paragraph.length >= rng.int(2, 5)) {
      paragraphs.push(rng.chance(0.25) ? paragraph.map((p) => `- ${p}`).join('\n') : paragraph.join(' '));
      paragraph = [];
    }
  }
  if (paragraph.length) paragraphs.push(paragraph.join(' '));
  return paragraphs.join('\n\n');
}

/** A TypeScript listing in the topic's vocabulary. */
function codeListing(rng: Rng, topic: Topic, chars: number): string {
  const lines: string[] = [`import { logger } from '../logger.js';`, ''];
  let length = 0;
  while (length < chars) {
    const fn = rng.pick(topic.functions);
    const [a, b] = [rng.pick(topic.locals), rng.pick(topic.locals)];
    const body = [`export async function ${fn}(${a}: ${cap(a)}, options: ${cap(fn)}Options = {}): Promise<${cap(b)} | undefined> {`];
    const statements = rng.int(4, 14);
    for (let i = 0; i < statements; i++) {
      const x = rng.pick(topic.locals);
      const y = rng.pick(topic.locals);
      switch (rng.int(0, 5)) {
        case 0:
          body.push(`  const ${x}Next = await ${rng.pick(topic.functions)}(${y}, { timeoutMs: ${rng.int(1, 30) * 500} });`);
          break;
        case 1:
          body.push(`  if (!${x}) throw new Error('${rng.pick(topic.nouns)} missing for ${y}');`);
          break;
        case 2:
          body.push(
            `  for (const item of ${x}.items ?? []) {`,
            `    if (item.${y}Id === ${y}.id) continue;`,
            `    await ${rng.pick(topic.functions)}(item);`,
            '  }',
          );
          break;
        case 3:
          body.push(`  // ${fill(rng, rng.pick(GENERIC), topic).replace(/`/g, '')}`);
          break;
        case 4:
          body.push(`  logger.info('${rng.pick(topic.nouns)}', { ${x}: ${x}.id, attempt: options.attempt ?? 0 });`);
          break;
        default:
          body.push(
            `  try {`,
            `    return await ${rng.pick(topic.functions)}(${x});`,
            `  } catch (error) {`,
            `    logger.warn('retry ${rng.pick(topic.nouns)}', { error });`,
            '  }',
          );
      }
    }
    body.push(`  return undefined;`, '}', '');
    lines.push(...body);
    length += body.join('\n').length;
  }
  return lines.join('\n');
}

function cap(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** Test-runner output: passes, a few failures with stack traces, a summary. */
function testOutput(rng: Rng, topic: Topic, chars: number, fact?: string): string {
  const file = rng.pick(topic.tests);
  const lines = [`> vitest run ${file}`, '', ` ${file}`];
  let length = 0;
  let passed = 0;
  let failed = 0;
  const factAt = fact ? rng.int(2, 6) : -1;
  for (let i = 0; length < chars || i <= factAt; i++) {
    const name = `${rng.pick(topic.functions)} handles the ${rng.pick(topic.nouns)} when ${rng.pick(CONDITIONS)}`;
    if (i === factAt || rng.chance(0.12)) {
      failed++;
      const block = [
        `   × ${name} ${rng.int(5, 4000)}ms`,
        i === factAt && fact ? `     ${fact}` : `     AssertionError: expected ${rng.int(0, 3)} to equal ${rng.int(0, 3)}`,
        `      at ${rng.pick(topic.functions)} (${rng.pick(topic.files)}:${rng.int(10, 400)}:${rng.int(3, 40)})`,
        `      at processTicksAndRejections (node:internal/process/task_queues:95:5)`,
        `      at ${file}:${rng.int(10, 300)}:${rng.int(3, 30)}`,
      ];
      lines.push(...block);
      length += block.join('\n').length;
    } else {
      passed++;
      const line = `   ✓ ${name} ${rng.int(1, 300)}ms`;
      lines.push(line);
      length += line.length;
    }
  }
  lines.push(
    '',
    ` Test Files  ${failed ? 1 : 0} failed | ${failed ? 0 : 1} passed (1)`,
    `      Tests  ${failed} failed | ${passed} passed (${passed + failed})`,
  );
  return lines.join('\n');
}

/** Service logs around the topic's work, one line per event. */
function logOutput(rng: Rng, topic: Topic, chars: number, fact?: string): string {
  const lines: string[] = [];
  let length = 0;
  let time = Date.UTC(2026, 2, 14, 9, rng.int(0, 50), 0);
  const factAt = fact ? rng.int(3, 12) : -1;
  for (let i = 0; length < chars || i <= factAt; i++) {
    time += rng.int(5, 4000);
    const line =
      i === factAt && fact
        ? fact
        : `${new Date(time).toISOString()} ${rng.pick(['info ', 'info ', 'debug', 'warn '])} ${rng.pick(topic.nouns).replace(/ /g, '_')} ${rng.pick(topic.locals)}=${rng.int(1000, 99999)} took=${rng.int(1, 900)}ms${rng.chance(0.1) ? ' retrying' : ''}`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join('\n');
}

/** grep / ls style output: one path per line with a match or a size. */
function listingOutput(rng: Rng, topic: Topic, chars: number, fact?: string): string {
  const lines: string[] = [];
  let length = 0;
  const factAt = fact ? rng.int(1, 8) : -1;
  for (let i = 0; length < chars || i <= factAt; i++) {
    const line =
      i === factAt && fact
        ? fact
        : `${rng.pick([...topic.files, ...topic.tests])}:${rng.int(1, 500)}:  ${rng.chance(0.5) ? `await ${rng.pick(topic.functions)}(${rng.pick(topic.locals)});` : `// ${rng.pick(topic.nouns)}`}`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join('\n');
}

/** Sizes in characters (about 4 per token); tool output is heavy-tailed like real sessions. */
const size = {
  user: (rng: Rng): number => rng.int(160, 1000),
  reasoning: (rng: Rng): number => rng.int(320, 2000),
  assistant: (rng: Rng): number => rng.int(600, 3600),
  toolResult: (rng: Rng): number => Math.round(400 + 16_000 * rng.next() ** 3),
};

// ---------------------------------------------------------------------------------------------
// The session

interface Line {
  id: string;
  role: 'system' | 'user' | 'assistant' | 'tool';
  type: 'system' | 'prd' | 'message' | 'reasoning' | 'tool_call' | 'tool_result';
  content: string;
  timestamp: string;
  callId?: string;
}

/** One episode: a request, some steps (reasoning, tool call, tool result), an answer. */
function episode(rng: Rng, topic: Topic, facts: readonly PlantedFact[], push: (line: Omit<Line, 'id' | 'timestamp'>) => void): void {
  const factFor = (turn: FactTurn): PlantedFact | undefined => facts.find((f) => f.turn === turn);
  const withFact = (text: string, fact: PlantedFact | undefined): string => {
    if (!fact) return text;
    // The fact goes into the middle of the turn, not its first or last line.
    const paragraphs = text.split('\n\n');
    paragraphs.splice(Math.max(1, Math.floor(paragraphs.length / 2)), 0, fact.sentence);
    return paragraphs.join('\n\n');
  };

  const ask = rng.pick(topic.asks);
  push({ role: 'user', type: 'message', content: withFact(`${ask}\n\n${prose(rng, topic, size.user(rng))}`, factFor('user')) });

  const steps = rng.int(1, 4);
  // A fact in reasoning or tool output needs a step that has one.
  const reasoningStep = factFor('reasoning') ? rng.int(0, steps - 1) : -1;
  const toolFactStep = factFor('tool_result') ? rng.int(0, steps - 1) : -1;
  for (let s = 0; s < steps; s++) {
    if (s === reasoningStep || rng.chance(0.5)) {
      const text = prose(rng, topic, size.reasoning(rng), rng.pick(REASONING_OPENERS));
      push({ role: 'assistant', type: 'reasoning', content: withFact(text, s === reasoningStep ? factFor('reasoning') : undefined) });
    }
    const callId = `call_${rng.int(0, 2 ** 30).toString(36)}`;
    const planted = s === toolFactStep ? factFor('tool_result') : undefined;
    const fact = planted?.sentence;
    const kindRoll = rng.int(0, 3);
    const kind = planted?.output === 'tests' ? 1 : planted?.output === 'logs' ? 2 : planted?.output === 'listing' ? 3 : kindRoll;
    const chars = size.toolResult(rng);
    let call: string;
    let result: string;
    if (kind === 0) {
      const file = rng.pick(topic.files);
      call = `read_file ${JSON.stringify({ path: file })}`;
      result = codeListing(rng, topic, chars);
    } else if (kind === 1) {
      call = `run_tests ${JSON.stringify({ path: rng.pick(topic.tests) })}`;
      result = testOutput(rng, topic, chars, fact);
    } else if (kind === 2) {
      call = `run_shell ${JSON.stringify({ command: `kubectl logs deploy/${topic.name}-worker --since=2h | tail -n 400` })}`;
      result = logOutput(rng, topic, chars, fact);
    } else {
      call = `grep ${JSON.stringify({ pattern: rng.pick(topic.functions), path: rng.pick(topic.files).replace(/\/[^/]+$/, '') })}`;
      result = listingOutput(rng, topic, chars, fact);
    }
    push({ role: 'assistant', type: 'tool_call', content: call, callId });
    push({ role: 'tool', type: 'tool_result', content: result, callId });
  }

  const answer = prose(rng, topic, size.assistant(rng), rng.pick(ANSWER_OPENERS));
  push({ role: 'assistant', type: 'message', content: withFact(answer, factFor('assistant')) });
}

export interface RetentionTranscript {
  readonly file: string;
  readonly turns: number;
  readonly facts: readonly PlantedFact[];
  readonly goal: string;
  /** Where the first and the last fact turn sit, as shares of the session's turns. */
  readonly factSpan: readonly [number, number];
}

/**
 * Writes the session to `file`: a system prompt and a product brief (pinned), 70 episodes, then the
 * goal. Of those, 24 are about the payment webhook, in six stretches of four across 10–90 % of the
 * session; 20 of them hold one planted fact each, in the order of PLANTED_FACTS.
 */
export function writeRetentionTranscript(file: string): RetentionTranscript {
  const rng = createRng(RETENTION_SEED);
  const lines: Line[] = [];
  let time = Date.UTC(2026, 2, 1, 8, 0, 0);
  const push = (line: Omit<Line, 'id' | 'timestamp'>): void => {
    time += rng.int(2_000, 90_000);
    lines.push({ id: `r${lines.length + 1}`, timestamp: new Date(time).toISOString(), ...line });
  };

  const allTopics = [PAYMENTS, ...FILLER];
  push({
    role: 'system',
    type: 'system',
    content:
      'You are a coding agent working in a TypeScript monorepo for an online shop. Read files before editing them, ' +
      'run the tests after every change, keep changes small, and explain what you changed and why. Never commit secrets.',
  });
  push({
    role: 'user',
    type: 'prd',
    content:
      'Product brief. The shop sells electronics in 14 countries. Areas: checkout and payments (card payments through an ' +
      'external provider that notifies us by webhook), accounts and sessions, product search, reports for merchants, ' +
      'notifications by e-mail, inventory synchronised from three warehouses, and localisation.\n\n' +
      allTopics.map((t) => `- ${t.name}: ${t.nouns.slice(0, 3).join(', ')}`).join('\n'),
  });

  const EPISODES = 70;
  const STRETCHES = 6;
  const PER_STRETCH = 4;
  // Where each on-topic stretch starts: evenly over 10–90 % of the session.
  const stretchStarts = Array.from({ length: STRETCHES }, (_, s) => Math.round(EPISODES * (0.1 + (0.8 * s) / (STRETCHES - 1 + 0.5))));
  const onTopic = new Set(stretchStarts.flatMap((start) => Array.from({ length: PER_STRETCH }, (_, k) => start + k)));
  // Facts in order; four on-topic episodes (one per stretch, except the first two) hold none.
  const factless = new Set(stretchStarts.slice(2).map((start) => start + rng.int(0, PER_STRETCH - 1)));
  const queue = [...PLANTED_FACTS];
  let filler = rng.pick(FILLER);
  let fillerLeft = 0;
  for (let e = 0; e < EPISODES; e++) {
    if (onTopic.has(e)) {
      const fact = factless.has(e) ? undefined : queue.shift();
      episode(rng, PAYMENTS, fact ? [fact] : [], push);
      continue;
    }
    // Unrelated work comes in stretches of 2–6 episodes on one subject.
    if (fillerLeft === 0) {
      filler = rng.pick(FILLER.filter((t) => t !== filler));
      fillerLeft = rng.int(2, 6);
    }
    fillerLeft--;
    episode(rng, filler, [], push);
  }
  if (queue.length > 0) throw new Error(`retention generator: ${queue.length} facts were not planted`);
  push({ role: 'user', type: 'message', content: RETENTION_GOAL });

  const factTurns = lines.flatMap((l, i) => (PLANTED_FACTS.some((f) => l.content.includes(f.token)) ? [i] : []));
  const factSpan = [(factTurns[0] ?? 0) / lines.length, (factTurns[factTurns.length - 1] ?? 0) / lines.length] as const;
  const text = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
  // Each fact must occur exactly once, or "survived" would mean nothing.
  for (const fact of PLANTED_FACTS) {
    const count = text.split(fact.token).length - 1;
    if (count !== 1) throw new Error(`retention generator: fact ${fact.token} occurs ${count} times`);
  }
  writeFileSync(file, text);
  return { file, turns: lines.length, facts: PLANTED_FACTS, goal: RETENTION_GOAL, factSpan };
}

// ---------------------------------------------------------------------------------------------
// Measuring what survives

/** Which planted facts a transcript still holds: in its kept turns, or only in its summary turn. */
export interface Survival {
  readonly inTurns: readonly PlantedFact[];
  readonly onlyInSummary: readonly PlantedFact[];
  readonly total: number;
}

export function survival(contents: readonly string[], facts: readonly PlantedFact[] = PLANTED_FACTS): Survival {
  const summaries = contents.filter((c) => c.startsWith(SUMMARY_PREFIX));
  const turns = contents.filter((c) => !c.startsWith(SUMMARY_PREFIX));
  const inTurns = facts.filter((f) => turns.some((c) => c.includes(f.token)));
  const onlyInSummary = facts.filter((f) => !inTurns.includes(f) && summaries.some((c) => c.includes(f.token)));
  return { inTurns, onlyInSummary, total: inTurns.length + onlyInSummary.length };
}

/** The turn contents of a transcript file, read back the way devs-ctx reads it. */
export function turnContents(file: string): string[] {
  const doc = parseDocument(readFileSync(file), { path: file });
  return readTranscript(doc).entries.map((e) => e.turn.content);
}

/**
 * The plain baseline: keep the pinned turns and as many of the last turns as fit in `budget`
 * tokens (counted as devs-ctx counts them), drop everything before; no summary, no masking.
 */
export function keepLastTurns(file: string, budget: number): { contents: string[]; tokens: number } {
  const doc = parseDocument(readFileSync(file), { path: file });
  const { entries } = readTranscript(doc);
  const tokens = countEntries(entries, loadCounter('o200k_base')).map((t) => t.total);
  const kept = new Set<number>();
  let used = 0;
  entries.forEach((entry, i) => {
    if (!isPinnedTurn(entry.turn, i, DEFAULT_PRUNER_CONFIG)) return;
    kept.add(i);
    used += tokens[i] ?? 0;
  });
  for (let i = entries.length - 1; i >= 0; i--) {
    if (kept.has(i)) continue;
    const t = tokens[i] ?? 0;
    if (used + t > budget) break;
    kept.add(i);
    used += t;
  }
  return { contents: entries.filter((_, i) => kept.has(i)).map((e) => e.turn.content), tokens: used };
}
