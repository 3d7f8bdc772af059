import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { InterruptedError } from '../src/core/errors.js';
import { Pacer } from '../src/core/pace.js';

test('settle() sees a Ctrl-C already sent, also when the code before it resumed from I/O (the loop poll phase)', async () => {
  for (let round = 0; round < 20; round++) {
    const controller = new AbortController();
    const onSignal = (): void => controller.abort();
    process.on('SIGINT', onSignal);
    try {
      const pacer = new Pacer(controller.signal);
      // Resumed from a file read: this runs in the poll phase, as after an archive's or a provider's reply.
      await readFile(new URL(import.meta.url));
      process.kill(process.pid, 'SIGINT');
      assert.equal(controller.signal.aborted, false, 'not seen yet: the loop has not polled');
      await assert.rejects(pacer.settle(), InterruptedError, `round ${round}`);
    } finally {
      process.off('SIGINT', onSignal);
    }
  }
});
