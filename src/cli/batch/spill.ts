import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { readFully } from '../../io/fd.js';

/** Where a spilled text is: byte offset and length in the spill file. */
export interface SpillRef {
  readonly offset: number;
  readonly length: number;
}

/**
 * A temporary file that holds full `--json` reports while `--sort` waits for the last session, so
 * memory holds only rows and offsets however many sessions there are. Its name is removed as soon
 * as it is open (the open descriptor keeps the data), so nothing is left behind on any exit, Ctrl-C
 * included; on Windows, where an open file cannot be removed, it is removed on close.
 */
export class Spill {
  private readonly dir: string;
  private readonly fd: number;
  private size = 0;

  constructor() {
    let dir: string | undefined;
    try {
      dir = mkdtempSync(join(tmpdir(), 'devs-ctx-analyze-'));
      this.fd = openSync(join(dir, 'reports.json'), 'w+', 0o600);
      this.dir = dir;
    } catch (error) {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      throw spillError('make', error);
    }
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch {
      // Windows: removed on close instead
    }
  }

  write(text: string | Uint8Array): SpillRef {
    const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    try {
      writeSync(this.fd, bytes, 0, bytes.length, this.size);
    } catch (error) {
      throw spillError('write', error);
    }
    const ref = { offset: this.size, length: bytes.length };
    this.size += bytes.length;
    return ref;
  }

  /** A text written, as its UTF-8 bytes. */
  read(ref: SpillRef): Buffer {
    const bytes = Buffer.allocUnsafe(ref.length);
    if (readFully(this.fd, bytes, ref.offset) < ref.length) throw new Error('the spill file of analyze --sort was cut short');
    return bytes;
  }

  private closed = false;

  /** Closes and removes the file; closing again does nothing (a batch that fails and is interrupted at once closes on both paths). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      closeSync(this.fd);
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** The temporary folder cannot take the spill file (missing, not a folder, full): exit 3, saying where it looked. */
function spillError(what: 'make' | 'write', error: unknown): InputError {
  return new InputError(
    `cannot ${what} the temporary file --sort keeps the reports in, in ${tmpdir()} (TMPDIR): ${error instanceof Error ? error.message : String(error)}`,
    'set TMPDIR to a writable folder with room, or leave out --sort',
  );
}
