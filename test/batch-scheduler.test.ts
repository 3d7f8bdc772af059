/**
 * The batch scheduler of `analyze <dir>` (src/cli/batch/scheduler.ts): when a transcript's row is
 * read, analysed and handed on, in what order, and what a full standard output or the test pause
 * holds back. Plain functions stand in for the row cache, the workers and the output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchScheduler } from '../src/cli/batch/scheduler.js';
import type { BatchItem } from '../src/cli/batch/scheduler.js';
import type { SessionOutcome } from '../src/cli/batch/session.js';

/** A scheduler that never ends fails its test instead of hanging the run. */
const ENDS = { timeout: 60_000 };

/** Until what the scheduler does on a settled analysis (promise reactions only) has run. */
const settle = (): Promise<unknown> => new Promise((resolve) => setImmediate(resolve));

const outcome = (path: string): SessionOutcome => ({ kind: 'outOfRange', file: path, project: 'p' });

/** A transcript whose report the cache kept: read (logged) when the scheduler starts it. */
function kept(path: string, log: string[]): BatchItem {
  const miss = { remember: () => {}, grown: false };
  return {
    path,
    cached: {
      kind: 'report',
      read: () => {
        log.push(`read ${path}`);
        return outcome(path);
      },
      miss,
    },
  };
}

/** A transcript to analyse: `analyze` is asked for it (logged), and its outcome comes when the test calls `pending.get(path)`. */
function toAnalyse(path: string): BatchItem {
  return { path, cached: { kind: 'miss', remember: () => {}, grown: false } };
}

/** A step of the scheduler's (waiting for the drain, the test pause) that only says it ran. */
function step(log: string[], name: string): () => Promise<void> {
  return () => {
    log.push(name);
    return Promise.resolve();
  };
}

/** An output whose buffer the row of `path` fills. */
function fullAfter(path: string): { out: { blocked: boolean }; onTake: (taken: string) => void } {
  const out = { blocked: false };
  return {
    out,
    onTake: (taken) => {
      if (taken === path) out.blocked = true;
    },
  };
}

function scheduler(
  items: BatchItem[],
  log: string[],
  more: {
    out?: { blocked: boolean };
    onTake?: (path: string) => void;
    drained?: () => Promise<unknown>;
    firstRows?: () => Promise<void>;
    pending?: Map<string, (outcome: SessionOutcome) => void>;
    inFlightLimit?: number;
    window?: number;
  } = {},
): BatchScheduler {
  return new BatchScheduler(items[Symbol.iterator](), {
    inFlightLimit: more.inFlightLimit ?? 8,
    window: more.window ?? 64,
    analyze: (path) => {
      log.push(`analyse ${path}`);
      return new Promise((resolve) => more.pending?.set(path, resolve));
    },
    spill: undefined,
    progress: { update: () => {} },
    out: more.out ?? { blocked: false },
    tokens: () => 0,
    take: (_index, taken) => {
      const path = taken.kind === 'session' ? taken.summary.file : taken.file;
      log.push(`take ${path}`);
      more.onTake?.(path);
    },
    drained: more.drained ?? (() => Promise.resolve()),
    ...(more.firstRows ? { firstRows: more.firstRows } : {}),
  });
}

test('kept reports: each is read and handed on before the next is read (a re-run holds one report at a time, not all of them)', ENDS, async () => {
  const log: string[] = [];
  await scheduler(
    ['a', 'b', 'c'].map((p) => kept(p, log)),
    log,
  ).all();
  assert.deepEqual(log, ['read a', 'take a', 'read b', 'take b', 'read c', 'take c']);
});

test('a full standard output: nothing more is started until it has drained', ENDS, async () => {
  const log: string[] = [];
  // The first row fills the output's buffer.
  await scheduler(
    ['a', 'b', 'c'].map((p) => kept(p, log)),
    log,
    { ...fullAfter('a'), drained: step(log, 'drained') },
  ).all();
  assert.deepEqual(log, ['read a', 'take a', 'drained', 'read b', 'take b', 'read c', 'take c']);
});

test("the test pause comes right after the first row, before the next transcript is started (what a test's Ctrl-C interrupts)", ENDS, async () => {
  const log: string[] = [];
  await scheduler(
    ['a', 'b'].map((p) => kept(p, log)),
    log,
    { firstRows: step(log, 'pause') },
  ).all();
  assert.deepEqual(log, ['read a', 'take a', 'pause', 'read b', 'take b']);
});

test('rows are handed on in discovery order: a kept report after a transcript still being analysed waits for it', ENDS, async () => {
  const log: string[] = [];
  const pending = new Map<string, (outcome: SessionOutcome) => void>();
  const run = scheduler([kept('a', log), toAnalyse('b'), kept('c', log), toAnalyse('d')], log, { pending }).all();
  // Every transcript is started at once (four in flight at most of eight); only `a` can be handed on.
  await settle();
  assert.deepEqual(log, ['read a', 'take a', 'analyse b', 'read c', 'analyse d']);
  pending.get('d')?.(outcome('d'));
  await settle();
  assert.deepEqual(log.slice(5), [], 'd is done, but b before it is not');
  pending.get('b')?.(outcome('b'));
  await run;
  assert.deepEqual(log.slice(5), ['take b', 'take c', 'take d']);
});

test('a full standard output at the test pause: the drain is waited for before the next transcript is started', ENDS, async () => {
  const log: string[] = [];
  await scheduler(
    ['a', 'b', 'c'].map((p) => kept(p, log)),
    log,
    { ...fullAfter('a'), drained: step(log, 'drained'), firstRows: step(log, 'pause') },
  ).all();
  assert.deepEqual(log, ['read a', 'take a', 'pause', 'drained', 'read b', 'take b', 'read c', 'take c']);
});

test('at most inFlightLimit transcripts are analysed at once: the next starts when one ends', ENDS, async () => {
  const log: string[] = [];
  const pending = new Map<string, (outcome: SessionOutcome) => void>();
  const run = scheduler(['a', 'b', 'c', 'd'].map(toAnalyse), log, { pending, inFlightLimit: 2 }).all();
  await settle();
  assert.deepEqual(log, ['analyse a', 'analyse b']);
  pending.get('b')?.(outcome('b'));
  await settle();
  assert.deepEqual(log.slice(2), ['analyse c'], 'b done (held for a): one more started');
  pending.get('a')?.(outcome('a'));
  await settle();
  assert.deepEqual(log.slice(3), ['take a', 'take b', 'analyse d']);
  pending.get('c')?.(outcome('c'));
  pending.get('d')?.(outcome('d'));
  await run;
  assert.deepEqual(log.slice(6), ['take c', 'take d']);
});

test('at most window transcripts are started past the first not yet handed on: rows done behind a slow one wait, and no more are read', ENDS, async () => {
  const log: string[] = [];
  const pending = new Map<string, (outcome: SessionOutcome) => void>();
  const items = [toAnalyse('a'), ...['b', 'c', 'd', 'e'].map((p) => kept(p, log))];
  const run = scheduler(items, log, { pending, window: 3 }).all();
  await settle();
  assert.deepEqual(log, ['analyse a', 'read b', 'read c']);
  pending.get('a')?.(outcome('a'));
  await run;
  assert.deepEqual(log.slice(3), ['take a', 'take b', 'take c', 'read d', 'take d', 'read e', 'take e']);
});
