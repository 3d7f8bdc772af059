/**
 * How the process ends once the command has returned. Node ends a process whose event loop is empty
 * by tearing its environment down piece by piece (the heap, the threads, the native modules'
 * hooks): after a large prune that took about 35 ms, a tenth of what the command did. When nothing
 * is left open but standard output and error, there is nothing for that to wait for: the process
 * ends as soon as both have taken every byte written to them. Anything else still open (a timer, a
 * child, a socket, a pending file operation) is left to end as usual, and so is every exit code.
 */

/** What `endWhenFlushed` uses of the process (`process` itself in the CLI). */
export interface EndingProcess {
  getActiveResourcesInfo(): string[];
  readonly stdout: { write(chunk: string, callback: (error?: Error | null) => void): unknown };
  readonly stderr: { write(chunk: string, callback: (error?: Error | null) => void): unknown };
  exit(code: number): void;
}

/** The handles standard output and error are held by when they are a pipe or a terminal (a file holds none). */
const STDIO = new Set(['PipeWrap', 'TTYWrap']);

/**
 * Ends `proc` with `code` once standard output and error have flushed, when they are all that is
 * still open; otherwise does nothing (the process ends as Node ends it). Returns whether it will end it.
 */
export function endWhenFlushed(proc: EndingProcess, code: number): boolean {
  if (!proc.getActiveResourcesInfo().every((resource) => STDIO.has(resource))) return false;
  let waiting = 2;
  // A write's callback runs once what was written before it has gone out, or with the stream's error.
  const flushed = (): void => {
    waiting -= 1;
    if (waiting === 0) proc.exit(code);
  };
  proc.stdout.write('', flushed);
  proc.stderr.write('', flushed);
  return true;
}
