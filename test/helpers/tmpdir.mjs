/**
 * Preloaded into every test process (`npm test`: `node --import … --test`), on its main thread: the
 * process's temporary folder (TMPDIR, which `os.tmpdir()` reads) is a fresh folder of its own,
 * removed when it exits, so a test run leaves nothing behind in the system's. Tests make their
 * folders with `mkdtemp(tmpdir())` and many never removed them: each `npm test` left about 450, and
 * tens of thousands of them slowed every command that makes a temporary folder, `npm run bench`'s
 * measurements among them. Like /tmp, it is writable by all with the sticky bit (the tests that run
 * the CLI as another user write there). The CLI processes tests start with the test environment
 * (`cliEnv`) keep the system's TMPDIR; children started with a test's own environment use this
 * folder. JavaScript, not TypeScript: worker threads get the same
 * flags, and load it without tsx (it does nothing there).
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const own = mkdtempSync(join(tmpdir(), 'devs-ctx-test-'));
  chmodSync(own, 0o1777);
  process.env.TMPDIR = own;
  process.on('exit', () => {
    try {
      rmSync(own, { recursive: true, force: true });
    } catch {
      // Something a test left that cannot be removed: the folder stays, the run's result does not change.
    }
  });
}
