/**
 * A worker that counts tokens and nothing else (src/cli/parallel-count.ts): it loads the tokenizer
 * and its binary rank table, never the CLI, the format readers or zod, so it starts in a few tens of
 * milliseconds. It takes pieces of the texts it is given from the shared queue until none is left,
 * says so, and is ended.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadCounter } from '../core/tokens/encodings.js';
import { installPrebuiltRankTables } from '../io/rank-tables.js';
import { countPieces } from './parallel-count.js';
import { loadedInGroup } from './v8-flags.js';
import type { CountJob, CountWorkerData } from './parallel-count.js';

const port = parentPort;
if (port === null) throw new Error('count-worker runs as a worker thread only');
const { encoding, rankTable, v8Flags } = workerData as CountWorkerData;
installPrebuiltRankTables({ encoding, table: rankTable });
port.on('message', (job: CountJob) => {
  // Started only for a large count (megabytes of text): the faster path early.
  countPieces(job, loadCounter(encoding, { bulk: true }));
  port.postMessage('done');
});
// Last, once this worker has loaded what it needs: the last of its group to load sets its flags.
loadedInGroup(v8Flags);
