import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Archive } from '../../archive/archive.js';
import type { PruneEventSummary } from '../../archive/records.js';
import { ExitCode, InterruptedError, InvalidTranscriptError, UsageError } from '../../core/errors.js';
import type { ExitCodeValue } from '../../core/errors.js';
import { replaceKeepingAppends } from '../../io/atomic.js';
import type { FileLock } from '../../io/atomic.js';
import { readInputFile, STDIN } from '../../io/input.js';
import { testPause } from '../context.js';
import type { CliContext, InterruptTrap } from '../context.js';
import type { RestoreOptions } from '../flags/restore.js';
import { checkInPlaceFile, lockInPlace, outputIsInput, STDOUT, writeOutput } from '../transcript-output.js';
import { archiveDisplay, checkOutputIsNotArchive, damagedArchiveError, openArchive, resolveArchivePath } from '../archive.js';
import { reportError } from '../errors.js';

const RESTORE_SCHEMA_VERSION = 1;

/** Resolves and opens the archive a restore or recall reads (it must exist). */
export async function openArchiveFor(archive: string | undefined, ctx: CliContext, output?: string): Promise<{ path: string; store: Archive }> {
  const path = (await resolveArchivePath(archive, ctx)) as string;
  checkOutputIsNotArchive(output, path, ctx.cwd);
  // `path` is what reports print: a URL without its password. Both only read: read-only, so an
  // archive the user cannot write still works.
  return { path: archiveDisplay(path), store: await openArchive(path, { mustExist: true, named: archive !== undefined, readOnly: true }) };
}

/** `devs-ctx restore FILE`: the transcript as it was before its latest prune, byte for byte. */
export async function runRestore(file: string, options: RestoreOptions, ctx: CliContext): Promise<ExitCodeValue> {
  const json = options.json === true;
  let lock: FileLock | undefined;
  let trap: InterruptTrap | undefined;
  try {
    if (file === STDIN) throw new UsageError('restore needs the pruned file itself, not standard input');
    if (options.inPlace && options.output !== undefined) throw new UsageError('--in-place and -o cannot be used together');
    if (options.output === '') throw new UsageError('-o needs a file name', 'pass -o FILE, or -o - for standard output');
    // -o naming the pruned file itself (by any name) is --in-place: locked, and appended lines kept.
    const inPlace = options.inPlace === true || outputIsInput(file, options.output, ctx.cwd);
    if (inPlace) checkInPlaceFile(file, ctx.cwd);
    if (json && !inPlace && (options.output === undefined || options.output === STDOUT)) {
      throw new UsageError('--json prints the report on stdout, so the restored transcript needs somewhere else to go', 'add -o FILE or --in-place');
    }
    let path = resolve(ctx.cwd, file);
    // Ctrl-C (or SIGTERM) before the write: exit 130, nothing written; a second one ends the
    // process at once, removing the lock first. After the write: the run finishes and says so.
    trap = ctx.trapInterrupt?.();
    if (inPlace) {
      try {
        path = realpathSync(path); // restore the real file, not a symlink to it
      } catch {
        // missing: reading it says so
      }
      lock = lockInPlace(path, trap);
    }
    const current = readInputFile(path, file);
    const { path: archivePath, store } = await openArchiveFor(options.archive, ctx, options.output);
    let restored: Buffer;
    let event: PruneEventSummary | undefined;
    try {
      event = await store.findRestorable(current, options.event !== undefined ? { eventId: options.event } : {});
      if (!event) {
        throw new InvalidTranscriptError(
          options.event !== undefined
            ? `${file}: prune ${options.event} did not produce this file (or the file changed other than by appending)`
            : `${file}: no prune in ${archivePath} produced this file (or it changed other than by appending)`,
          'restore undoes the latest prune of a file; pass --archive if it was pruned with another archive',
        );
      }
      restored = await store.restore(event.id, current);
    } catch (error) {
      throw damagedArchiveError(archivePath, error) ?? error;
    } finally {
      await store.close();
    }
    const appended = current.length - event.output.length;
    await testPause(ctx, trap?.signal, 'restoring');
    if (trap?.signal.aborted) throw new InterruptedError();
    if (inPlace) replaceKeepingAppends(path, current, restored);
    else await writeOutput(options.output ?? STDOUT, restored, ctx, trap?.signal);
    await testPause(ctx, trap?.signal, 'restored');
    if (trap?.signal.aborted && !json) ctx.stderr.write('devs-ctx: interrupted after the restored transcript was written; the restore is complete\n');
    const target = inPlace ? file : (options.output ?? STDOUT);
    if (json) {
      ctx.stdout.write(
        `${JSON.stringify({ schemaVersion: RESTORE_SCHEMA_VERSION, file, eventId: event.id, prunedAt: event.createdAt, bytes: restored.length, appendedBytesKept: appended, output: target, archive: archivePath }, null, 2)}\n`,
      );
    } else {
      const out = target === STDOUT ? ctx.stderr : ctx.stdout;
      out.write(
        `${file}: restored as it was before prune ${event.id} (${event.createdAt})${appended > 0 ? `, with ${appended} bytes appended since kept at the end` : ''}${target === STDOUT ? '' : `; written to ${target}`}\n`,
      );
    }
    return ExitCode.ok;
  } catch (error) {
    return reportError(ctx, error, json);
  } finally {
    lock?.release();
    trap?.release();
  }
}
