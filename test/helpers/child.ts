import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** How a child process ended, with everything it printed. */
export interface ChildExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Spawned {
  readonly child: ChildProcess;
  /** Settles when the child has exited and its streams are closed. Created at spawn time, so it cannot miss the event. */
  readonly exited: Promise<ChildExit>;
  /** What the child has printed so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves once stdout or stderr matches `pattern`; rejects if the child exits first. */
  printed(pattern: RegExp): Promise<void>;
}

/**
 * Spawns a child and, before anything can be awaited, attaches every listener a test needs: output
 * is collected and the promise for its exit exists from the start. A test that awaits something
 * else first (another child, a server) can never miss this one's exit.
 */
export function spawnChild(command: string, args: readonly string[], options: SpawnOptions & { input?: string | Buffer } = {}): Spawned {
  const { input, ...spawnOptions } = options;
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...spawnOptions });
  let stdout = '';
  let stderr = '';
  const watchers = new Set<() => void>();
  const changed = (): void => {
    for (const watch of [...watchers]) watch();
  };
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
    changed();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    changed();
  });
  let closed = false;
  const exited = new Promise<ChildExit>((resolve, reject) => {
    child.on('error', (error) => {
      closed = true;
      changed();
      reject(error);
    });
    child.on('close', (code, signal) => {
      closed = true;
      changed();
      resolve({ code, signal, stdout, stderr });
    });
  });
  // A test that only looks at the exit through `printed` must not leave an unhandled rejection.
  exited.catch(() => undefined);
  if (child.stdin) {
    // A child that exits without reading its input is not an error of the test.
    child.stdin.on('error', () => undefined);
    if (input !== undefined) child.stdin.end(input);
  }
  const printed = (pattern: RegExp): Promise<void> =>
    new Promise((resolve, reject) => {
      const watch = (): void => {
        if (pattern.test(stdout) || pattern.test(stderr)) {
          watchers.delete(watch);
          resolve();
        } else if (closed) {
          watchers.delete(watch);
          reject(new Error(`the child exited before printing ${String(pattern)}:\n${stdout}\n${stderr}`));
        }
      };
      watchers.add(watch);
      watch();
    });
  return { child, exited, output: () => ({ stdout, stderr }), printed };
}
