import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffDelay, DEFAULT_RETRY_POLICY, parseRetryAfter, retryDelayFromBody, sleep } from '../src/providers/gemini/retry.js';

test('backoff doubles from the base, with jitter between half and all of it, and is capped', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 1000, maxDelayMs: 5000 };
  assert.equal(
    backoffDelay(1, policy, () => 1),
    1000,
  );
  assert.equal(
    backoffDelay(2, policy, () => 1),
    2000,
  );
  assert.equal(
    backoffDelay(3, policy, () => 1),
    4000,
  );
  assert.equal(
    backoffDelay(4, policy, () => 1),
    5000,
    'capped at maxDelayMs',
  );
  assert.equal(
    backoffDelay(2, policy, () => 0),
    1000,
    'jitter never goes below half',
  );
  const seen = new Set(Array.from({ length: 50 }, () => backoffDelay(3, policy)));
  assert.ok(seen.size > 1, 'real jitter varies');
  for (const d of seen) assert.ok(d >= 2000 && d <= 4000);
});

test('Retry-After: delta seconds and HTTP dates; junk is ignored', () => {
  assert.equal(parseRetryAfter('3'), 3000);
  assert.equal(parseRetryAfter(' 1.5 '), 1500);
  const now = Date.parse('2026-11-23T12:00:00Z');
  assert.equal(parseRetryAfter('Mon, 23 Nov 2026 12:00:07 GMT', now), 7000);
  assert.equal(parseRetryAfter('Mon, 23 Nov 2026 11:00:00 GMT', now), 0, 'a past date means now');
  assert.equal(parseRetryAfter('soon'), undefined);
  assert.equal(parseRetryAfter(undefined), undefined);
  assert.equal(parseRetryAfter(null), undefined);
});

test('RetryInfo in the Gemini error body gives the wait', () => {
  const body = {
    error: {
      code: 429,
      status: 'RESOURCE_EXHAUSTED',
      details: [
        { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '17s' },
      ],
    },
  };
  assert.equal(retryDelayFromBody(body), 17_000);
  assert.equal(retryDelayFromBody({ error: { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '0.25s' }] } }), 250);
  assert.equal(retryDelayFromBody({ error: { message: 'no details' } }), undefined);
  assert.equal(retryDelayFromBody('not json'), undefined);
});

test('sleep rejects at once when its signal aborts', async () => {
  // With the clock mocked, the 10 s timer can never fire: only the abort can settle the sleep, and
  // it must do so before anything queued after it (setImmediate is not mocked).
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const controller = new AbortController();
    const pending = sleep(10_000, controller.signal).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    controller.abort(new Error('stop'));
    const outcome = await Promise.race([pending, new Promise((r) => setImmediate(() => r('still sleeping')))]);
    assert.ok(outcome instanceof Error && /stop/.test(outcome.message), String(outcome));
  } finally {
    mock.timers.reset();
  }
});
