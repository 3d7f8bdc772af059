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

test('measureInTurns: every case warms up with its own set-up first (not only the first case); the peak RSS is the largest, the CPU median only when every run had one', () => {
  const events: string[] = [];
  let dir = '';
  let rss = [3000, 9000, 1000];
  let cpu: (number | undefined)[] = [5, undefined, 7];
  const stats = measureInTurns(
    [
      { name: 'floor', run: () => ({ ms: 1 }) },
      {
        // As the bench's warm cases: the set-up makes the folder the run uses, also for the warm-up.
        name: 'warm',
        warmup: 1,
        before: () => {
          dir = `cache-${events.length}`;
          events.push(`set-up ${dir}`);
        },
        run: () => {
          events.push(`run in ${dir}`);
          return { ms: 2 };
        },
      },
      {
        name: 'cold',
        run: () => {
          const maxRssKb = rss.shift() as number;
          const cpuMs = cpu.shift();
          return { ms: 3, maxRssKb, ...(cpuMs === undefined ? {} : { cpuMs }) };
        },
      },
    ],
    3,
  );
  assert.deepEqual(events.slice(0, 2), ['set-up cache-0', 'run in cache-0'], 'the warm-up ran in a folder its set-up made');
  assert.ok(events.every((e, i) => (i % 2 === 0 ? e.startsWith('set-up') : e === `run in ${events[i - 1]?.slice('set-up '.length)}`)));
  assert.equal(events.length, 8);
  assert.equal(stats.get('cold')?.maxRssKb, 9000);
  assert.equal(stats.get('cold')?.medianCpuMs, undefined, 'one run had no CPU time');
  rss = [1, 2, 3];
  cpu = [5, 9, 7];
  const again = measureInTurns([{ name: 'cold', run: () => ({ ms: 3, maxRssKb: rss.shift() as number, cpuMs: cpu.shift() as number }) }], 3);
  assert.deepEqual(again.get('cold'), { name: 'cold', runs: 3, medianMs: 3, medianCpuMs: 7, maxRssKb: 3 });
});
