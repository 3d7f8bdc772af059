import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { endWhenFlushed } from '../src/cli/process-end.js';
import type { EndingProcess } from '../src/cli/process-end.js';
import { spawnChild } from './helpers/child.js';
import { repoRoot } from './helpers/realdata.js';

/** A process whose streams hold their write callbacks until `flush` runs them, in order. */
function fakeProcess(
  open: string[],
  handles: unknown[] | undefined,
): EndingProcess & { exits: number[]; written: string[]; flush(stream: 'stdout' | 'stderr', error?: Error): void } {
  const held: Record<'stdout' | 'stderr', ((error?: Error) => void)[]> = { stdout: [], stderr: [] };
  const written: string[] = [];
  const stream = (name: 'stdout' | 'stderr') => ({
    write(chunk: string, callback?: (error?: Error) => void) {
      if (chunk) written.push(`${name}: ${chunk}`);
      if (callback) held[name].push(callback);
      return true;
    },
  });
  const exits: number[] = [];
  return {
    getActiveResourcesInfo: () => open,
    ...(handles ? { _getActiveHandles: () => handles } : {}),
    stdout: stream('stdout'),
    stderr: stream('stderr'),
    exit: (code) => exits.push(code),
    exits,
    written,
    flush: (name, error) => {
      for (const callback of held[name].splice(0)) callback(error);
    },
  };
}

test('with only the standard streams open, the process ends with the code once stdout and stderr have flushed', () => {
  for (const [open, handles] of [
    [[], []],
    [['PipeWrap'], [{ fd: 1 }]],
    [
      ['TTYWrap', 'PipeWrap', 'PipeWrap'],
      [{ fd: 0 }, { fd: 1 }, { fd: 2 }],
    ],
  ] as const) {
    const proc = fakeProcess([...open], [...handles]);
    assert.equal(endWhenFlushed(proc, 3, 0), true);
    assert.deepEqual(proc.exits, [], 'not before the writes have gone out');
    proc.flush('stdout');
    assert.deepEqual(proc.exits, [], 'not before stderr has too');
    proc.flush('stderr');
    assert.deepEqual(proc.exits, [3], open.join(','));
  }
});

test('output that fails as it is flushed: a closed pipe ends quietly with the code, a full disk with exit 3 and a message', () => {
  const closed = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
  const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  const proc = fakeProcess(['PipeWrap'], [{ fd: 1 }]);
  assert.equal(endWhenFlushed(proc, 10, 0), true);
  proc.flush('stdout', closed);
  assert.deepEqual(proc.exits, [10], 'EPIPE: the exit code, at once');
  assert.deepEqual(proc.written, []);

  const disk = fakeProcess(['PipeWrap'], [{ fd: 1 }]);
  assert.equal(endWhenFlushed(disk, 0, 0), true);
  disk.flush('stderr');
  disk.flush('stdout', full);
  assert.deepEqual(disk.exits, [3], 'never 0: what was printed is lost');
  assert.deepEqual(disk.written, [
    'stderr: devs-ctx: standard output is not writable (ENOSPC: no space left on device, write); what it was to print is lost\n',
  ]);

  // Standard error itself failing: nothing to say it on, exit 3 all the same.
  const errors = fakeProcess(['PipeWrap'], [{ fd: 2 }]);
  assert.equal(endWhenFlushed(errors, 0, 0), true);
  errors.flush('stderr', full);
  assert.deepEqual(errors.exits, [3]);
  assert.deepEqual(errors.written, []);
});

test('anything else open, a running worker, or no list of handles to ask leaves the process to end as Node ends it', () => {
  const cases: [string, string[], unknown[] | undefined, number][] = [
    ...['Timeout', 'ProcessWrap', 'TCPSocketWrap', 'FSReqCallback', 'Immediate'].map((other): [string, string[], unknown[], number] => [
      other,
      ['PipeWrap', other],
      [{ fd: 1 }],
      0,
    ]),
    ['a pipe that is no standard stream (a Unix socket)', ['PipeWrap', 'PipeWrap'], [{ fd: 1 }, {}], 0],
    ['a worker thread running', ['PipeWrap'], [{ fd: 1 }], 1],
    ['a Node without _getActiveHandles', ['PipeWrap'], undefined, 0],
  ];
  for (const [label, open, handles, workers] of cases) {
    const proc = fakeProcess(open, handles);
    assert.equal(endWhenFlushed(proc, 0, workers), false, label);
    proc.flush('stdout');
    proc.flush('stderr');
    assert.deepEqual(proc.exits, [], label);
  }
});

/**
 * Runs `body` (an async function's body) in a child Node, once the built modules are loaded (tsx's
 * loader keeps a channel of its own open, as the CLI never does; `npm test` builds first): it ends
 * by `endWhenFlushed`, printing what that returned, or as Node ends it.
 */
function child(body: string) {
  const script = `
    Promise.all([import('./dist/cli/process-end.js'), import('./dist/cli/live-workers.js')]).then(
      ([{ endWhenFlushed }, { liveWorkers, startWorker }]) => setImmediate(async () => { ${body} }),
    );
  `;
  return spawnChild(process.execPath, ['-e', script], { cwd: repoRoot });
}

test('in a real process: with only the standard streams open it ends itself, with the exit code and all of its output', async () => {
  const run = child(`
    process.stdout.write('x'.repeat(50_000) + '\\n');
    process.stderr.write(String(endWhenFlushed(process, 7, liveWorkers())));
  `);
  const { code, stdout, stderr } = await run.exited;
  assert.equal(stderr, 'true');
  assert.equal(code, 7);
  assert.equal(stdout.length, 50_001);
});

test('in a real process: a Unix socket, a timer or a worker still open is waited for', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'devs-ctx-end-'));
  try {
    const socket = join(dir, 's.sock');
    const runs = [
      child(`
        const { createServer } = await import('node:net');
        const server = createServer().listen(${JSON.stringify(socket)});
        await new Promise((resolve) => server.once('listening', resolve));
        process.stderr.write(String(endWhenFlushed(process, 7, liveWorkers())));
        process.exitCode = 5;
        setImmediate(() => server.close());
      `),
      // A write to the pipe still going out (more than it holds) is waited for as Node waits for it.
      child(`
        process.stdout.write('y'.repeat(4_000_000));
        process.stderr.write(String(endWhenFlushed(process, 7, liveWorkers())));
        process.exitCode = 5;
      `),
      child(`
        const timer = setTimeout(() => { process.exitCode = 5; }, 1);
        process.stderr.write(String(endWhenFlushed(process, 7, liveWorkers())));
      `),
      child(`
        const worker = startWorker("import('node:worker_threads').then(({ parentPort }) => parentPort.once('message', () => process.exit(0)))", { eval: true });
        await new Promise((resolve) => worker.once('online', resolve));
        process.stderr.write(String(endWhenFlushed(process, 7, liveWorkers())));
        process.exitCode = 5;
        worker.postMessage('end');
      `),
    ];
    for (const run of runs) {
      const { code, stderr } = await run.exited;
      assert.equal(stderr, 'false');
      assert.equal(code, 5, 'ended by Node, with the code the process set');
    }
    assert.equal((await runs[1]?.exited)?.stdout.length, 4_000_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
