import assert from 'node:assert/strict';
import { test } from 'node:test';
import { endWhenFlushed } from '../src/cli/process-end.js';
import type { EndingProcess } from '../src/cli/process-end.js';

/** A process whose streams hold their write callbacks until `flush` runs them, in order. */
function fakeProcess(open: string[]): EndingProcess & { exits: number[]; flush(stream: 'stdout' | 'stderr'): void } {
  const held: Record<'stdout' | 'stderr', (() => void)[]> = { stdout: [], stderr: [] };
  const stream = (name: 'stdout' | 'stderr') => ({
    write(_chunk: string, callback: () => void) {
      held[name].push(callback);
      return true;
    },
  });
  const exits: number[] = [];
  return {
    getActiveResourcesInfo: () => open,
    stdout: stream('stdout'),
    stderr: stream('stderr'),
    exit: (code) => exits.push(code),
    exits,
    flush: (name) => {
      for (const callback of held[name].splice(0)) callback();
    },
  };
}

test('with only standard output and error open, the process ends with the code once both have flushed', () => {
  for (const open of [[], ['PipeWrap'], ['TTYWrap', 'PipeWrap']]) {
    const proc = fakeProcess(open);
    assert.equal(endWhenFlushed(proc, 3), true);
    assert.deepEqual(proc.exits, [], 'not before the writes have gone out');
    proc.flush('stdout');
    assert.deepEqual(proc.exits, [], 'not before stderr has too');
    proc.flush('stderr');
    assert.deepEqual(proc.exits, [3], open.join(','));
  }
});

test('anything else still open (a timer, a child, a socket, a file operation) is left to end as Node ends it', () => {
  for (const other of ['Timeout', 'ProcessWrap', 'TCPSocketWrap', 'FSReqCallback', 'Immediate']) {
    const proc = fakeProcess(['PipeWrap', other]);
    assert.equal(endWhenFlushed(proc, 0), false, other);
    proc.flush('stdout');
    proc.flush('stderr');
    assert.deepEqual(proc.exits, [], other);
  }
});
