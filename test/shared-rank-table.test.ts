import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import o200k from 'js-tiktoken/ranks/o200k_base';
import { BpeCounter } from '../src/core/tokens/bpe.js';
import { encodeRankTable, RankTable } from '../src/core/tokens/rank-table.js';
import type { CountJob, CountWorkers as CountWorkersClass } from '../src/cli/parallel-count.js';
import type { AnalyzePool as AnalyzePoolClass } from '../src/cli/batch/pool.js';
import type { BatchCounts as BatchCountsClass } from '../src/cli/batch/counts.js';
import type { resolveSettings as ResolveSettings } from '../src/core/config.js';
import { readShared } from '../src/io/rank-tables.js';
import type { installPrebuiltRankTables as InstallPrebuiltRankTables, sharedRankTable as SharedRankTable } from '../src/io/rank-tables.js';
import { repoRoot } from './helpers/realdata.js';

// The rank table is read once, into memory every thread can read, and handed to the worker threads
// (the count workers of a large transcript, the workers of a batch): they count with the table they
// are given and read no file of their own. The built modules, as the workers run built JavaScript.

const built = async <T>(path: string): Promise<T> => (await import(join(repoRoot, 'dist', path))) as T;
const { installPrebuiltRankTables, sharedRankTable } = await built<{
  installPrebuiltRankTables: typeof InstallPrebuiltRankTables;
  sharedRankTable: typeof SharedRankTable;
}>('io/rank-tables.js');
const { CountWorkers } = await built<{ CountWorkers: typeof CountWorkersClass }>('cli/parallel-count.js');
const { AnalyzePool } = await built<{ AnalyzePool: typeof AnalyzePoolClass }>('cli/batch/pool.js');
const { BatchCounts } = await built<{ BatchCounts: typeof BatchCountsClass }>('cli/batch/counts.js');
const { resolveSettings } = await built<{ resolveSettings: typeof ResolveSettings }>('core/config.js');

const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-shared-ranks-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A table with o200k's split pattern but only its 256 bytes and three merges: it counts far more tokens than o200k. */
function syntheticTable(): SharedArrayBuffer {
  const bytes: string[] = [];
  for (let b = 0; b < 256; b++) bytes.push(Buffer.from([b]).toString('base64'));
  const merges = ['in', 'vo', 'invo'].map((t) => Buffer.from(t, 'latin1').toString('base64'));
  const encoded = encodeRankTable({ pat_str: o200k.pat_str, bpe_ranks: `! 0 ${bytes.join(' ')}\n! 256 ${merges.join(' ')}\n` });
  const shared = new SharedArrayBuffer(encoded.byteLength);
  new Uint8Array(shared).set(encoded);
  return shared;
}

test('sharedRankTable: the shipped table read once into shared memory, byte for byte the file', () => {
  const table = sharedRankTable('cl100k_base');
  assert.ok(table instanceof SharedArrayBuffer);
  assert.deepEqual(Buffer.from(new Uint8Array(table)), readFileSync(join(repoRoot, 'dist', 'ranks', 'cl100k_base.bin')));
  assert.equal(sharedRankTable('cl100k_base'), table, 'the same memory each time');
});

test('readShared: a regular file whole; a directory, a FIFO with no writer, a missing file: none, at once', () => {
  const file = join(dir, 'table.bin');
  writeFileSync(file, Buffer.from([1, 2, 3, 250]));
  const read = readShared(file);
  assert.ok(read instanceof SharedArrayBuffer);
  assert.deepEqual([...new Uint8Array(read)], [1, 2, 3, 250]);
  const folder = join(dir, 'folder.bin');
  mkdirSync(folder);
  assert.equal(readShared(folder), undefined);
  assert.equal(readShared(join(dir, 'missing.bin')), undefined);
  const fifo = join(dir, 'fifo.bin');
  execFileSync('mkfifo', [fifo]);
  // Opened without blocking: this returns instead of waiting for a writer that never comes.
  assert.equal(readShared(fifo), undefined);
});

// From here on this thread's o200k_base table is the synthetic one: whatever a worker counts with
// another table (the shipped file) differs from what this thread counts.
const synthetic = syntheticTable();
installPrebuiltRankTables({ encoding: 'o200k_base', table: synthetic });
const counter = new BpeCounter(RankTable.decode(new Uint8Array(synthetic)));
const shipped = new BpeCounter(RankTable.decode(readFileSync(join(repoRoot, 'dist', 'ranks', 'o200k_base.bin'))));

test('a count worker counts with the table this thread hands it', async () => {
  assert.equal(sharedRankTable('o200k_base'), synthetic);
  const texts = Array.from({ length: 40 }, (_, i) => `invoice ${i} `.repeat(200));
  // The whole job is the worker's (one region, this thread takes none of it), so every count is its own.
  const shared = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT * (1 + texts.length));
  const starts = Int32Array.from({ length: texts.length + 1 }, (_, i) => i);
  new Int32Array(shared, 0, 1)[0] = texts.length << 16;
  const [started] = new CountWorkers('o200k_base', 1).take(1);
  assert.ok(started);
  try {
    const reply = once(started.worker, 'message');
    started.worker.postMessage({ texts, first: 0, starts, shared, regions: 1, region: 0 } satisfies CountJob);
    await Promise.race([reply, started.failed]);
  } finally {
    await started.worker.terminate();
  }
  const counts = Array.from(new Int32Array(shared, Int32Array.BYTES_PER_ELEMENT));
  assert.deepEqual(
    counts,
    texts.map((t) => counter.count(t)),
  );
  assert.notDeepEqual(
    counts,
    texts.map((t) => shipped.count(t)),
    'the synthetic table counts otherwise than the shipped one',
  );
});

test('the workers of a batch count with the table this thread hands them', async () => {
  const contents = ['an invoice to export', 'the invoices, exported', 'invoice 42 of 7 is overdue'];
  const file = join(dir, 'session.jsonl');
  writeFileSync(
    file,
    contents
      .map((content, i) =>
        JSON.stringify({ id: `t${i + 1}`, role: i % 2 ? 'assistant' : 'user', type: 'message', content, timestamp: `2026-01-01T00:0${i}:00.000Z` }),
      )
      .join('\n'),
  );
  const run = { settings: resolveSettings({ flags: {}, env: {} }), format: undefined, strict: false, range: undefined, full: false, cwd: dir, now: Date.now() };
  const pool = new AnalyzePool({
    size: 1,
    init: { run, encoding: 'o200k_base', cache: false, lookup: false },
    counts: new BatchCounts('o200k_base', undefined),
    // This is about what the worker counts with: a worker that fails must not pass on the main thread.
    onMainThread: () => Promise.reject(new Error('the analyze worker failed')),
  });
  try {
    const outcome = await pool.run(file);
    assert.equal(outcome.kind, 'session');
    if (outcome.kind !== 'session') return;
    const sum = (c: BpeCounter): number => contents.reduce((total, text) => total + c.count(text), 0);
    assert.equal(outcome.summary.totalTokens, sum(counter));
    assert.notEqual(sum(counter), sum(shipped));
  } finally {
    await pool.close();
  }
});
