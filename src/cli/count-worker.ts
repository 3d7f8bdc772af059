/**
 * A worker that counts tokens and nothing else (src/cli/parallel-count.ts): it loads the tokenizer
 * and its binary rank table, never the CLI, the format readers or zod, so it starts in a few tens of
 * milliseconds. It counts the texts it is given once, replies, and is ended.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadCounter } from '../core/tokens/encodings.js';
import type { EncodingName } from '../core/tokens/encodings.js';
import { installPrebuiltRankTables } from '../io/rank-tables.js';

const port = parentPort;
if (port === null) throw new Error('count-worker runs as a worker thread only');
installPrebuiltRankTables();
const { encoding } = workerData as { encoding: EncodingName };
port.on('message', (texts: readonly string[]) => {
  const counter = loadCounter(encoding);
  const counts = new Int32Array(texts.length);
  for (let i = 0; i < texts.length; i++) counts[i] = counter.count(texts[i] as string);
  port.postMessage(counts, [counts.buffer]);
});
