/**
 * The bench's groups of cases measured in turns (bench/measure.ts `measureInTurns`): who runs when,
 * what is timed, and what each case's figure is.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { measureInTurns } from '../bench/measure.js';
import type { Sample } from '../bench/measure.js';

test('measureInTurns: warm-ups first, then rounds of every case once, each round starting one further along; a set-up before each run', () => {
  const events: string[] = [];
  // Each case's samples, in the order it runs: the times say which run of the case it was.
  const next = new Map<string, number>();
  const timed =
    (name: string, extra: Partial<Sample> = {}) =>
    (): Sample => {
      const n = next.get(name) ?? 0;
      next.set(name, n + 1);
      events.push(`${name}#${n}`);
      return { ms: 100 * (name.charCodeAt(0) - 96) + n, ...extra };
    };
  const stats = measureInTurns(
    [
      { name: 'a', run: timed('a'), warmup: 1 },
      { name: 'b', run: timed('b', { maxRssKb: 2048 }), before: () => events.push('b:set-up') },
      { name: 'c', run: timed('c', { cpuMs: 7 }) },
    ],
    3,
  );
  assert.deepEqual(events, [
    // a's warm-up, untimed
    'a#0',
    // round 0: a, b, c
    'a#1',
    'b:set-up',
    'b#0',
    'c#0',
    // round 1: b, c, a
    'b:set-up',
    'b#1',
    'c#1',
    'a#2',
    // round 2: c, a, b
    'c#2',
    'a#3',
    'b:set-up',
    'b#2',
  ]);
  // The medians of the timed runs only (a's warm-up, 100, is not among them).
  assert.deepEqual(stats.get('a'), { name: 'a', runs: 3, medianMs: 102 });
  assert.deepEqual(stats.get('b'), { name: 'b', runs: 3, medianMs: 201, maxRssKb: 2048 });
  assert.deepEqual(stats.get('c'), { name: 'c', runs: 3, medianMs: 301, medianCpuMs: 7 });
});

test('measureInTurns: a case whose runs give no sample (a peer tool skipped) has no figure; one skipped part-way keeps the samples it gave', () => {
  let ran = 0;
  const stats = measureInTurns(
    [
      { name: 'peer', run: () => undefined },
      { name: 'ours', run: () => ({ ms: 10 + ran++ }) },
      { name: 'late', run: () => (ran > 1 ? undefined : { ms: 5 }) },
    ],
    3,
  );
  assert.equal(stats.has('peer'), false);
  assert.deepEqual(stats.get('ours'), { name: 'ours', runs: 3, medianMs: 11 });
  assert.deepEqual(stats.get('late'), { name: 'late', runs: 1, medianMs: 5 });
});
