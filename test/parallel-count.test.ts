import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadCounter } from '../src/core/tokens/encodings.js';
import type { countAcrossThreads as CountAcrossThreads, CountWorkers as CountWorkersClass } from '../src/cli/parallel-count.js';
import { runCli } from './helpers/cli.js';
import { repoRoot } from './helpers/realdata.js';
import { seeded } from './helpers/prng.js';

// A large transcript counted cold is counted across the cores by small count workers: the same
// counts as on one thread, text by text.

// The built module: its workers are built JavaScript (a worker thread does not get tsx's loader).
const built = (await import(join(repoRoot, 'dist', 'cli', 'parallel-count.js'))) as {
  countAcrossThreads: typeof CountAcrossThreads;
  CountWorkers: typeof CountWorkersClass;
  PARALLEL_MIN_CHARS: number;
};
const { countAcrossThreads, CountWorkers, PARALLEL_MIN_CHARS } = built;

const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-parallel-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const WORDS = ['invoice', 'export', 'stream', ' ', '\n', '{"rows": [1, 2, 3]}', 'const x = await load();', '中文字符', 'ünïcödé', '🚀', '=====', '    '];
function texts(count: number, size: number, seed: number): string[] {
  const next = seeded(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = '';
    const target = Math.floor(size * (0.2 + next() * 1.6));
    while (text.length < target) text += `${WORDS[Math.floor(next() * WORDS.length)] ?? ''} `;
    out.push(text);
  }
  return out;
}

/** A devs turn line: user and assistant in turn, a minute apart. */
function devsLine(content: string, i: number): string {
  return JSON.stringify({
    id: `t${i + 1}`,
    role: i % 2 ? 'assistant' : 'user',
    type: 'message',
    content,
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
  });
}

test('countAcrossThreads: a few MB across 1, 2 and 3 threads: every text counted as one thread counts it', async () => {
  const counter = loadCounter('o200k_base');
  const many = texts(600, Math.ceil((1.5 * PARALLEL_MIN_CHARS) / 600), 0x5eed);
  const expected = many.map((t) => counter.count(t));
  for (const jobs of [1, 2, 3]) assert.deepEqual(await countAcrossThreads(many, counter, 'o200k_base', jobs), expected, `jobs ${jobs}`);
  // Little text stays on this thread, and nothing is no work.
  assert.deepEqual(await countAcrossThreads(many.slice(0, 3), counter, 'o200k_base', 4), expected.slice(0, 3));
  assert.deepEqual(await countAcrossThreads([], counter, 'o200k_base', 4), []);
});

test('countAcrossThreads with work alongside: the work runs while the workers count, then this thread waits for them; the same counts', async () => {
  const counter = loadCounter('o200k_base');
  const many = texts(600, Math.ceil((1.5 * PARALLEL_MIN_CHARS) / 600), 0xa1);
  const expected = many.map((t) => counter.count(t));
  for (const jobs of [1, 2, 3]) {
    const order: string[] = [];
    const counting = countAcrossThreads(many, counter, 'o200k_base', jobs, async () => {
      order.push('alongside started');
      await new Promise((resolve) => setImmediate(resolve));
      order.push('alongside done');
    });
    order.push('called');
    assert.deepEqual(await counting, expected, `jobs ${jobs}`);
    // Started at once (before the call returned), and awaited before the counts are given.
    assert.deepEqual(order, ['alongside started', 'called', 'alongside done'], `jobs ${jobs}`);
  }
  // Little text, or nothing to count: the work alongside still runs.
  let ran = 0;
  assert.deepEqual(
    await countAcrossThreads(many.slice(0, 3), counter, 'o200k_base', 4, async () => {
      ran++;
    }),
    expected.slice(0, 3),
  );
  assert.deepEqual(
    await countAcrossThreads([], counter, 'o200k_base', 4, async () => {
      ran++;
    }),
    [],
  );
  assert.equal(ran, 2);
});

test('regions: without other work each thread has an equal share; with work alongside this thread has none, so no counted region waits for it', async () => {
  const { regionStarts } = await import('../src/cli/parallel-count.js');
  assert.deepEqual(regionStarts(64, 2, false), [0, 32, 64]);
  assert.deepEqual(regionStarts(96, 3, false), [0, 32, 64, 96]);
  // With work alongside, region 0 (this thread's) is empty: the workers hold every piece and count
  // them from their front (this thread, its work done, leaves the rest to them).
  assert.deepEqual(regionStarts(64, 2, true), [0, 0, 64]);
  assert.deepEqual(regionStarts(96, 3, true), [0, 0, 48, 96]);
  for (const [pieces, parts] of [
    [7, 2],
    [65535, 4],
    [3, 3],
  ] as const) {
    for (const alongside of [false, true]) {
      const starts = regionStarts(pieces, parts, alongside);
      assert.equal(starts.length, parts + 1);
      assert.equal(starts[parts], pieces, 'every piece is in a region');
      for (let r = 0; r < parts; r++) assert.ok((starts[r] as number) <= (starts[r + 1] as number));
      // Every worker has a piece to start on.
      for (let r = 1; r < parts; r++) assert.ok((starts[r + 1] as number) > (starts[r] as number), `${pieces}/${parts}/${alongside}: worker ${r}`);
    }
  }
});

test('countAcrossThreads: work alongside that fails is the error, and the workers are ended (the process is not kept alive)', async () => {
  const counter = loadCounter('o200k_base');
  const many = texts(300, Math.ceil((1.5 * PARALLEL_MIN_CHARS) / 300), 0xbad);
  await assert.rejects(
    countAcrossThreads(many, counter, 'o200k_base', 3, async () => {
      throw new Error('stopped alongside');
    }),
    /stopped alongside/,
  );
  // Workers started ahead that a failed count took are ended, not given back.
  const ahead = new CountWorkers('o200k_base', 3);
  await assert.rejects(
    countAcrossThreads(
      many,
      counter,
      'o200k_base',
      3,
      async () => {
        throw new Error('stopped alongside');
      },
      ahead,
    ),
    /stopped alongside/,
  );
  assert.equal(ahead.waiting, 1, 'the two taken are not back');
  // A count that ends after `end` was called ends its workers instead of giving them back.
  const counting = countAcrossThreads(many, counter, 'o200k_base', 2, undefined, ahead);
  assert.equal(ahead.waiting, 0);
  await ahead.end();
  assert.deepEqual(
    await counting,
    many.map((t) => counter.count(t)),
  );
  assert.equal(ahead.waiting, 0, 'not given back after end');
});

test('count workers started ahead (while a transcript is read): used by a count and given back for the next, the same counts; they end when asked', async () => {
  const counter = loadCounter('o200k_base');
  const many = texts(600, Math.ceil((1.5 * PARALLEL_MIN_CHARS) / 600), 0xa5);
  const expected = many.map((t) => counter.count(t));
  // More started than the count uses (3 threads at most: 2 workers), and some for little text (none used).
  const ahead = new CountWorkers('o200k_base', 4);
  assert.equal(ahead.waiting, 4);
  for (const round of [1, 2]) {
    assert.deepEqual(await countAcrossThreads(many, counter, 'o200k_base', 3, undefined, ahead), expected, `round ${round}`);
    assert.equal(ahead.waiting, 4, `round ${round}: the two taken were given back`);
  }
  // Less than would be worth starting a worker for, but enough for one already started (a prune's
  // excerpts), with work alongside: the same counts, and the worker back again.
  const some = many.slice(0, 60);
  let ran = false;
  const counting = countAcrossThreads(
    some,
    counter,
    'o200k_base',
    3,
    async () => {
      ran = true;
    },
    ahead,
  );
  assert.equal(ahead.waiting, 2, 'taken for a count well under PARALLEL_MIN_CHARS');
  assert.deepEqual(await counting, expected.slice(0, 60));
  assert.ok(ran);
  assert.equal(ahead.waiting, 4);
  assert.deepEqual(await countAcrossThreads(many.slice(0, 3), counter, 'o200k_base', 3, undefined, ahead), expected.slice(0, 3));
  assert.equal(ahead.waiting, 4, 'none taken for little text');
  await ahead.end();
  assert.equal(ahead.waiting, 0);
  // Ended, they give none: a count then starts its own (and ends it).
  assert.deepEqual(await countAcrossThreads(many, counter, 'o200k_base', 2, undefined, ahead), expected);
  assert.equal(ahead.waiting, 0, 'a worker the count started is not kept');
  // Never used nor ended, or used and given back and never ended: they do not keep the process
  // alive (this test file would not end).
  new CountWorkers('o200k_base', 1);
  const givenBack = new CountWorkers('o200k_base', 1);
  assert.deepEqual(await countAcrossThreads(many, counter, 'o200k_base', 2, undefined, givenBack), expected);
  assert.equal(givenBack.waiting, 1);
});

test('with work alongside and a worker there, this thread counts nothing (its counter is cold, the worker’s is not): a large count, a few texts, one; the same counts', async () => {
  const plain = loadCounter('o200k_base');
  let here = 0;
  const counter = {
    count: (text: string): number => {
      here++;
      return plain.count(text);
    },
  };
  const many = texts(600, Math.ceil((1.5 * PARALLEL_MIN_CHARS) / 600), 0x1ea);
  const expected = many.map((t) => plain.count(t));
  const ahead = new CountWorkers('o200k_base', 1);
  try {
    for (const count of [many.length, 5, 1]) {
      here = 0;
      let ran = 0;
      // Work alongside that ends at once: this thread would have the rest of the count to itself.
      const counts = await countAcrossThreads(
        many.slice(0, count),
        counter,
        'o200k_base',
        2,
        async () => {
          ran++;
        },
        ahead,
      );
      assert.deepEqual(counts, expected.slice(0, count), `${count} texts`);
      assert.equal(ran, 1);
      assert.equal(here, 0, `${count} texts: none counted on this thread`);
      assert.equal(ahead.waiting, 1, `${count} texts: the worker is back`);
    }
  } finally {
    await ahead.end();
  }
  // No worker (ended ones, none ahead and little text): this thread counts them, after its work.
  here = 0;
  assert.deepEqual(await countAcrossThreads(many.slice(0, 5), counter, 'o200k_base', 2, async () => {}, ahead), expected.slice(0, 5));
  assert.equal(here, 5);
  // A worker that fails leaves what it took to this thread.
  const failing = new CountWorkers('o200k_base', 1);
  const taken = failing.take(1);
  await taken[0]?.worker.terminate();
  failing.giveBack(taken);
  here = 0;
  assert.deepEqual(await countAcrossThreads(many.slice(0, 5), counter, 'o200k_base', 2, async () => {}, failing), expected.slice(0, 5));
  assert.equal(here, 5);
});

test('CountWorkers.end called again waits for the workers the first call is still ending (a command then ends at once, nothing left running)', async () => {
  const ahead = new CountWorkers('o200k_base', 1);
  const [started] = ahead.take(1);
  assert.ok(started);
  ahead.giveBack([started]);
  let exited = false;
  started.worker.once('exit', () => {
    exited = true;
  });
  void ahead.end();
  await ahead.end();
  assert.ok(exited, 'the worker had exited when the second end resolved');
});

test('threadsFor: a worker is started only for a large count; one already started counts from RUNNING_MIN_CHARS on', async () => {
  const { threadsFor } = await import('../src/cli/parallel-count.js');
  // None started: one thread per PARALLEL_MIN_CHARS / 2, up to the jobs.
  assert.equal(threadsFor(PARALLEL_MIN_CHARS / 2 - 1, 4, 0), 1);
  assert.equal(threadsFor(PARALLEL_MIN_CHARS, 4, 0), 2);
  assert.equal(threadsFor(10 * PARALLEL_MIN_CHARS, 4, 0), 4);
  assert.equal(threadsFor(10 * PARALLEL_MIN_CHARS, 1, 3), 1, '--jobs 1 stays on one thread');
  // Started and idle: each counts its share as soon as it has 50,000 characters, but none is started for it.
  assert.equal(threadsFor(49_999, 4, 1), 1);
  assert.equal(threadsFor(100_000, 4, 1), 2);
  assert.equal(threadsFor(300_000, 4, 1), 2, 'no worker started beside the one running');
  assert.equal(threadsFor(300_000, 4, 3), 4);
  assert.equal(threadsFor(300_000, 2, 3), 2);
});

test('analyze of a large transcript: --jobs 2 (count workers) prints exactly what --jobs 1 prints, cold and from the token cache', () => {
  const file = join(dir, 'large.jsonl');
  const lines = texts(900, Math.ceil((1.5 * PARALLEL_MIN_CHARS) / 900), 0xb16).map(devsLine);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const one = runCli(['analyze', file, '--json', '--no-cache', '--jobs', '1']);
  const two = runCli(['analyze', file, '--json', '--no-cache', '--jobs', '2']);
  assert.equal(two.stdout, one.stdout, two.stderr);
  assert.equal(two.exitCode, one.exitCode);
  const cache = join(dir, 'cache');
  assert.equal(runCli(['analyze', file, '--json', '--jobs', '2'], { env: { DEVS_CTX_CACHE_DIR: cache } }).stdout, one.stdout);
  assert.equal(runCli(['analyze', file, '--json', '--jobs', '2'], { env: { DEVS_CTX_CACHE_DIR: cache } }).stdout, one.stdout);
});

test('countPieces: a worker holds only its region of the texts; this thread takes what is left of it from the back end', async () => {
  const { countPieces } = await import('../src/cli/parallel-count.js');
  const counter = loadCounter('o200k_base');
  const all = texts(40, 200, 0xbe);
  const expected = all.map((t) => counter.count(t));
  // 8 pieces of 5 texts; region 0 = pieces 0-3 (texts 0-19), region 1 = pieces 4-7 (texts 20-39).
  const starts = Int32Array.from([0, 5, 10, 15, 20, 25, 30, 35, 40]);
  for (const order of ['worker first', 'this thread first', 'interleaved'] as const) {
    const shared = new SharedArrayBuffer(4 * (2 + all.length));
    const ends = new Int32Array(shared, 0, 2);
    ends[0] = (4 << 16) | 0;
    ends[1] = (8 << 16) | 4;
    // The worker's job: region 1's texts only (an index outside it would read undefined and throw).
    const worker = { texts: all.slice(20), first: 20, starts, shared, regions: 2, region: 1 };
    const mine = { texts: all, first: 0, starts, shared, regions: 2, region: 0 };
    if (order === 'worker first') countPieces(worker, counter);
    if (order === 'interleaved') {
      // The worker has taken piece 4 from its front and counted it; this thread then takes 7, 6, 5 from the back.
      Atomics.store(ends, 1, (8 << 16) | 5);
      const counts = new Int32Array(shared, 8);
      for (let i = 20; i < 25; i++) counts[i] = counter.count(all[i] as string);
    }
    countPieces(mine, counter);
    countPieces({ ...mine, region: 1 }, counter, 'back');
    countPieces(worker, counter);
    assert.deepEqual(Array.from(new Int32Array(shared, 8)), expected, order);
    assert.deepEqual(
      Array.from(ends, (both) => [both & 0xffff, both >>> 16]).map(([f, b]) => (f as number) >= (b as number)),
      [true, true],
      `${order}: nothing left`,
    );
  }
});

test('analyze of a folder with one very large transcript: its count is split across the threads; the rows are exactly those of --jobs 1, cold and from the caches', () => {
  const folder = join(dir, 'batch-large');
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'large.jsonl'),
    `${texts(900, Math.ceil((1.5 * PARALLEL_MIN_CHARS) / 900), 0xb17)
      .map(devsLine)
      .join('\n')}\n`,
  );
  // Small ones too: a batch of more than 16 to read goes to the worker pool, fewer stay on the main thread.
  for (let k = 0; k < 20; k++) writeFileSync(join(folder, `small-${String(k).padStart(2, '0')}.jsonl`), `${texts(6, 400, k).map(devsLine).join('\n')}\n`);
  const one = runCli(['analyze', folder, '--ndjson', '--no-cache', '--jobs', '1']);
  assert.ok([0, 10, 11].includes(one.exitCode), one.stderr);
  assert.equal(one.stdout.trimEnd().split('\n').length, 22);
  assert.equal(runCli(['analyze', folder, '--ndjson', '--no-cache', '--jobs', '2']).stdout, one.stdout, 'pool');
  const cache = join(dir, 'cache-batch');
  for (let run = 0; run < 2; run++) {
    const got = runCli(['analyze', folder, '--ndjson', '--jobs', '2'], { env: { DEVS_CTX_CACHE_DIR: cache } });
    assert.equal(got.stdout, one.stdout, `with the caches, run ${run + 1}`);
  }
  // Fewer than 17 files to read: the main thread analyses them, and still splits the large one's count.
  rmSync(join(folder, 'small-00.jsonl'));
  rmSync(join(folder, 'small-01.jsonl'));
  rmSync(join(folder, 'small-02.jsonl'));
  rmSync(join(folder, 'small-03.jsonl'));
  rmSync(join(folder, 'small-04.jsonl'));
  const few = runCli(['analyze', folder, '--ndjson', '--no-cache', '--jobs', '1']);
  assert.equal(runCli(['analyze', folder, '--ndjson', '--no-cache', '--jobs', '2']).stdout, few.stdout, 'main thread');
});

test('countAcrossThreads: fewer pieces than threads (one very long text) starts no worker that would have nothing to count', async () => {
  const counter = loadCounter('o200k_base');
  const one = texts(1, 1.2 * PARALLEL_MIN_CHARS, 0x0e);
  const ahead = new CountWorkers('o200k_base', 3);
  try {
    assert.deepEqual(await countAcrossThreads(one, counter, 'o200k_base', 4, undefined, ahead), [counter.count(one[0] as string)]);
    assert.equal(ahead.waiting, 3, 'no worker was taken for a single piece');
  } finally {
    await ahead.end();
  }
});

test("CachedCounter.countAlongside (a prune's excerpts): counted on the worker it was given while other work runs here; then count finds them", async () => {
  const { CachedCounter } = await import('../src/cli/shared.js');
  const { CountWorkers: Workers } = await import('../src/cli/parallel-count.js');
  const plain = loadCounter('o200k_base');
  const some = texts(60, 5000, 0xc0);
  const workers = new Workers('o200k_base', 1);
  try {
    const counter = new CachedCounter('o200k_base', undefined, workers);
    let busy: number | undefined;
    await counter.countAlongside(some, async () => {
      busy = workers.waiting;
    });
    assert.equal(busy, 0, 'the worker was counting while the work alongside ran');
    assert.equal(workers.waiting, 1, 'and is back');
    assert.deepEqual(
      some.map((t) => counter.count(t)),
      some.map((t) => plain.count(t)),
    );
  } finally {
    await workers.end();
  }
  // A worker that ended while it waited (it is still given out): the same counts, counted here,
  // and no error; work alongside that fails is the error.
  const gone = new Workers('o200k_base', 1);
  const taken = gone.take(1);
  await taken[0]?.worker.terminate();
  gone.giveBack(taken);
  const counter = new CachedCounter('o200k_base', undefined, gone);
  let ranAlongside = 0;
  await counter.countAlongside(some, async () => {
    ranAlongside++;
  });
  assert.equal(ranAlongside, 1);
  assert.deepEqual(
    some.map((t) => counter.count(t)),
    some.map((t) => plain.count(t)),
  );
  const again = new Workers('o200k_base', 1);
  try {
    await assert.rejects(
      new CachedCounter('o200k_base', undefined, again).countAlongside(texts(60, 5000, 0xc1), async () => {
        throw new Error('ranking failed');
      }),
      /ranking failed/,
    );
  } finally {
    await again.end();
  }
  // Without workers the work alongside runs, and count counts each text when asked.
  const alone = new CachedCounter('o200k_base', undefined);
  let ran = false;
  await alone.countAlongside(some, async () => {
    ran = true;
  });
  assert.ok(ran);
  assert.deepEqual(
    some.map((t) => alone.count(t)),
    some.map((t) => plain.count(t)),
  );
});

test('countPieces skips a text whose count is there already (found in a cache while the workers counted)', async () => {
  const { countPieces } = await import('../src/cli/parallel-count.js');
  const some = texts(6, 200, 0xd0);
  // One region of two pieces: texts 0–2 and 3–5; texts 1 and 4 have their counts.
  const shared = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * (1 + some.length));
  new Int32Array(shared, 0, 1)[0] = (2 << 16) | 0;
  const counts = new Int32Array(shared, Int32Array.BYTES_PER_ELEMENT);
  counts[1] = 77;
  counts[4] = 88;
  const counted: number[] = [];
  countPieces(
    { texts: some, first: 0, starts: Int32Array.from([0, 3, 6]), shared, regions: 1, region: 0 },
    {
      count: (text) => {
        counted.push(some.indexOf(text));
        return text.length;
      },
    },
  );
  assert.deepEqual(counted, [0, 2, 3, 5]);
  assert.deepEqual(Array.from(counts), [some[0]?.length, 77, some[2]?.length, some[3]?.length, 88, some[5]?.length]);
});

test("CachedCounter with a worker waiting and work alongside (a prune's): the worker has the texts before the cache is looked up; the counts are the cache's and the counter's", async () => {
  const { CachedCounter } = await import('../src/cli/shared.js');
  const { CountWorkers: Workers } = await import('../src/cli/parallel-count.js');
  const { TokenCountCache } = await import('../src/io/count-cache.js');
  const cacheDir = join(dir, 'lookup-cache');
  const plain = loadCounter('o200k_base');
  // Some texts twice (a repeated tool output): each is sent and counted once.
  const distinct = texts(70, 5000, 0xd1);
  const some = [...distinct, ...distinct.slice(30, 40)];
  // An earlier run left the counts of the first 20 texts in the cache.
  const earlier = new CachedCounter('o200k_base', cacheDir);
  for (const text of some.slice(0, 20)) earlier.count(text);
  earlier.save();
  const key = TokenCountCache.key;
  let waitingAtFirstLookup: number | undefined;
  const workers = new Workers('o200k_base', 1);
  TokenCountCache.key = (text: string): string => {
    waitingAtFirstLookup ??= workers.waiting;
    return key(text);
  };
  try {
    const counter = new CachedCounter('o200k_base', cacheDir, workers);
    let ran = 0;
    await counter.countAlongside(some, async () => {
      ran++;
    });
    assert.equal(ran, 1);
    assert.equal(waitingAtFirstLookup, 0, 'the worker was counting when the first text was looked up');
    assert.equal((counter as unknown as { counter?: unknown }).counter, undefined, 'this thread counted nothing, and made no counter');
    assert.equal(workers.waiting, 1, 'and is back');
    assert.deepEqual(
      some.map((t) => counter.count(t)),
      some.map((t) => plain.count(t)),
    );
    counter.save();
    // Every text in the cache now: a run that finds them all gives the same counts.
    const again = new CachedCounter('o200k_base', cacheDir, workers);
    await again.countAlongside(some, async () => {});
    assert.deepEqual(
      some.map((t) => again.count(t)),
      some.map((t) => plain.count(t)),
    );
  } finally {
    TokenCountCache.key = key;
    await workers.end();
  }
});

test('CachedCounter with a worker waiting and work alongside: a count found in the cache is the one given, also for a text the worker was counting when it was found', async () => {
  const { CachedCounter } = await import('../src/cli/shared.js');
  const { CountWorkers: Workers } = await import('../src/cli/parallel-count.js');
  const { TokenCountCache } = await import('../src/io/count-cache.js');
  const cacheDir = join(dir, 'found-cache');
  // A long text first (the worker counts it for a good while), then short ones.
  const some = [texts(1, 3_000_000, 0xd2)[0] as string, ...texts(40, 2000, 0xd3)];
  // A cache whose counts are not the counter's (1 for every text), as a cache looked up first would give them.
  const filled = TokenCountCache.open(cacheDir, 'o200k_base');
  for (const text of some) filled.set(TokenCountCache.key(text), 1);
  filled.save();
  const workers = new Workers('o200k_base', 1);
  try {
    // The worker started and idle (it counts a little first, with no cache).
    await new CachedCounter('o200k_base', undefined, workers).countAlongside(texts(40, 2000, 0xd4), async () => {});
    // The first lookup waits a little: the worker is by then counting the long text, which this
    // thread finds in the cache before the worker is done with it.
    const key = TokenCountCache.key;
    let first = true;
    TokenCountCache.key = (text: string): string => {
      if (first) {
        first = false;
        const until = Date.now() + 20;
        while (Date.now() < until) {
          // the worker counts meanwhile
        }
      }
      return key(text);
    };
    try {
      const counter = new CachedCounter('o200k_base', cacheDir, workers);
      await counter.countAlongside(some, async () => {});
      assert.deepEqual(
        some.map((t) => counter.count(t)),
        some.map(() => 1),
      );
    } finally {
      TokenCountCache.key = key;
    }
  } finally {
    await workers.end();
  }
});

test('countAcrossThreads tells the counter how much it is about to count (a counter that splits its first texts by hand leaves more to the regex)', async () => {
  const small = texts(20, 300, 0x5eed);
  const told: number[] = [];
  const counter = loadCounter('o200k_base');
  const recording = { count: (text: string) => counter.count(text), expect: (chars: number) => told.push(chars) };
  const counts = await countAcrossThreads(small, recording, 'o200k_base', 1);
  assert.deepEqual(
    counts,
    small.map((text) => counter.count(text)),
  );
  assert.deepEqual(told, [small.reduce((sum, text) => sum + text.length, 0)]);
});
