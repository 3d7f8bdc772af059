import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { TextTokenCounter } from '../core/accounting.js';

/**
 * Below this many characters to count, one thread: a worker costs more to start than it saves.
 * @public test/parallel-count.test.ts reads it from the built module.
 */
export const PARALLEL_MIN_CHARS = 2_000_000;

/**
 * Where the count worker is, relative to this module wherever it runs from: beside it in the tsc
 * output (dist/cli/) or the bundle (dist/cli-bundle/, an entry of its own), or the tsc output seen
 * from the bundle. (A worker thread does not get tsx's loader: tests use the built module.)
 */
const WORKER_CANDIDATES = ['./count-worker.js', '../cli/count-worker.js'];
function countWorkerUrl(): URL {
  for (const candidate of WORKER_CANDIDATES) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return url;
  }
  throw new Error(`the count worker is missing (looked for ${WORKER_CANDIDATES.join(', ')} beside ${import.meta.url}); reinstall devs-ctx`);
}

/**
 * Counts `texts` across `jobs` threads: consecutive ranges of about equal size, the first on this
 * thread (while the workers start), the others each in a small count worker. Exact: each text is
 * counted whole by the same counter as on one thread. Small work stays on this thread.
 */
export async function countAcrossThreads(texts: readonly string[], counter: TextTokenCounter, encoding: string, jobs: number): Promise<number[]> {
  let chars = 0;
  for (const text of texts) chars += text.length;
  const parts = Math.max(1, Math.min(jobs, Math.floor(chars / (PARALLEL_MIN_CHARS / 2))));
  if (parts === 1) return texts.map((text) => counter.count(text));
  // Split points: consecutive ranges of about chars / parts characters each.
  const ranges: [number, number][] = [];
  let start = 0;
  let acc = 0;
  for (let i = 0; i < texts.length && ranges.length < parts - 1; i++) {
    acc += (texts[i] as string).length;
    if (acc >= (chars * (ranges.length + 1)) / parts) {
      ranges.push([start, i + 1]);
      start = i + 1;
    }
  }
  ranges.push([start, texts.length]);
  const [mine, ...theirs] = ranges;
  const url = countWorkerUrl();
  const workers = theirs.map(([from, to]) => {
    const worker = new Worker(url, { workerData: { encoding } });
    // The reply (or a failure) is awaited from the moment the worker exists.
    const reply = Promise.race([
      once(worker, 'message').then(([counts]) => counts as Int32Array),
      once(worker, 'error').then(([error]) => Promise.reject(error instanceof Error ? error : new Error(String(error)))),
      once(worker, 'exit').then(([code]) => Promise.reject(new Error(`a count worker stopped (exit ${String(code)})`))),
    ]);
    worker.postMessage(texts.slice(from, to));
    return { worker, reply, from };
  });
  try {
    const counts = new Array<number>(texts.length);
    const [from, to] = mine ?? [0, 0];
    for (let i = from; i < to; i++) counts[i] = counter.count(texts[i] as string);
    for (const { reply, from: at } of workers) {
      const got = await reply;
      for (let i = 0; i < got.length; i++) counts[at + i] = got[i] as number;
    }
    return counts;
  } finally {
    await Promise.all(workers.map(({ worker }) => worker.terminate()));
  }
}
