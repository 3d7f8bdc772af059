/**
 * The worker entry of `analyze` over many sessions: reads and counts one transcript at a time, as the
 * main thread hands them out (src/cli/batch/pool.ts). It never opens the token-count cache itself;
 * it asks the main thread, which is the cache's only reader and writer.
 */
import { Readable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import type { CliContext } from '../context.js';
import { countWithLookup, packCounts } from './counts.js';
import type { FromWorker, ToWorker, WorkerInit } from './protocol.js';
import { analyzeSession } from './session.js';
import { installPrebuiltRankTables } from '../../io/rank-tables.js';
import { loadedInGroup } from '../v8-flags.js';

const port = parentPort;
if (port === null) throw new Error('analyze-worker runs as a worker thread only');
const init = workerData as WorkerInit;
installPrebuiltRankTables({ encoding: init.encoding, table: init.rankTable });
const ctx: CliContext = { stdout: process.stdout, stderr: process.stderr, stdin: Readable.from([]), env: {}, cwd: init.run.cwd };
const pendingLookups = new Map<number, (counts: Int32Array) => void>();
const send = (message: FromWorker): void => port.postMessage(message);

port.on('message', (message: ToWorker) => {
  if (message.type === 'counts') {
    pendingLookups.get(message.id)?.(message.counts);
    pendingLookups.delete(message.id);
    return;
  }
  void runJob(message.id, message.path, message.grown);
});

async function runJob(id: number, path: string, grown: boolean): Promise<void> {
  let newCounts: [string, number][] = [];
  try {
    const lookup = init.lookup
      ? (keys: string) =>
          new Promise<Int32Array>((resolveCounts) => {
            pendingLookups.set(id, resolveCounts);
            send({ type: 'lookup', id, keys });
          })
      : undefined;
    const outcome = await analyzeSession(
      path,
      init.run,
      {
        ctx,
        countTokens: async (entries) => {
          // One thread of the pool already: a large transcript is counted here alone (count workers of
          // every batch worker would put jobs × jobs threads on jobs cores).
          // A batch worker counts many transcripts: its counter takes the faster path early (`bulk`).
          const counted = await countWithLookup(entries, init.encoding, lookup, init.cache, 1, true);
          newCounts = counted.newCounts;
          return counted.tokens;
        },
      },
      grown,
    );
    send({ type: 'done', id, outcome, newCounts: packCounts(newCounts) });
  } catch (error) {
    send({
      type: 'crash',
      id,
      message: `${path}: ${error instanceof Error ? error.message : String(error)}`,
      ...(error instanceof Error && error.stack ? { stack: error.stack } : {}),
    });
  }
}

// Last, once this worker has loaded what it needs: the last of the pool's workers to load sets its flags.
loadedInGroup(init.v8Flags);
